"""--metrics on every kernel and on noise-check: a node_exporter textfile of
the catalogue's metrics (kernels.json's "metrics"), one series a rank,
each the sum of its keys in that rank's line times its scale; written by
each node's first rank, renamed into place when whole; accepted by
promtool, and read back through a real prometheus-node-exporter started
on 127.0.0.1."""
import json
import math
import re
import shutil
import subprocess
import time

import pytest
from nbtest import KERNELS, ROOT, quick_args
from nbtest import prometheus
from nbtest.rank_lines import rank_lines

CATALOGUE = json.loads((ROOT / "src" / "kernels" / "kernels.json").read_text())["metrics"]
SERIES = re.compile(r'^(noisebench_cpu_\w+)\{([^}]*)\} (\S+)$', re.M)


def series(text):
    """{(metric, kernel, rank): value} of the per-rank series in a textfile
    or a scrape (which orders the labels by name)."""
    got = {}
    for metric, labels, value in SERIES.findall(text):
        label = dict(re.findall(r'(\w+)="([^"]*)"', labels))
        assert label.keys() == {"kernel", "rank", "cpu"}, labels
        got[(metric, label["kernel"], int(label["rank"]))] = float(value)
    return got


def expected(stdout, kernel=None):
    """{(metric, kernel, rank): value} as the catalogue makes them of the
    rank lines; kernel: the label a program's own series carry instead."""
    want = {}
    for line in rank_lines(stdout):
        fields = dict(f.split("=", 1) for f in line.split()[1:])
        for m in CATALOGUE:
            try:
                value = sum(float(fields[k]) for k in m["keys"]) * m["scale"]
            except (KeyError, ValueError):
                continue
            want[(m["name"], kernel or fields["kernel"], int(fields["rank"]))] = value
    return want


def promtool_accepts(text):
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("no promtool: scripts/setup.sh test installs Debian's prometheus")
    lint = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                          text=True, timeout=60)
    assert lint.returncode == 0, lint.stdout + lint.stderr


def same_values(got, want):
    assert got.keys() == want.keys()
    for key, value in want.items():
        assert got[key] == pytest.approx(value, rel=1e-6, abs=1e-12, nan_ok=True), key


@pytest.mark.parametrize("how", ["threads", "mpirun"])
@pytest.mark.parametrize("kernel", KERNELS)
def test_every_kernel_writes_its_ranks_figures(launch, tmp_path, kernel, how):
    done = launch(how, kernel, "--seconds", "0.3", "--warmup-ms", "0", "--metrics",
                  tmp_path / "m-{host}.prom")
    assert done.returncode == 0, done.stderr
    files = list(tmp_path.glob("m-*.prom"))
    assert len(files) == 1 and not list(tmp_path.glob("*.tmp")), files
    host = rank_lines(done.stdout)[0].split()[3].split("=")[1]
    assert files[0].name == f"m-{host}.prom", "{host} is the node's name"
    text = files[0].read_text()
    want = expected(done.stdout)
    assert {rank for _, _, rank in want} == set(range(len(rank_lines(done.stdout))))
    same_values(series(text), want)
    assert re.search(r'^noisebench_info\{version="[^"]+",kernel_release="[^"]+",host="%s"\} 1$'
                     % re.escape(host), text, re.M)
    promtool_accepts(text)


@pytest.mark.parametrize("kernel", KERNELS)
def test_a_metrics_file_it_cannot_create_stops_the_run_before_it_measures(run, tmp_path, kernel):
    started = time.monotonic()
    done = run(kernel, "--seconds", "30", "--metrics", tmp_path / "no" / "such" / "m.prom")
    assert done.returncode != 0
    assert "--metrics: cannot create" in done.stderr and len(done.stderr.splitlines()) == 1, \
        done.stderr
    assert time.monotonic() - started < 25, "it stopped before measuring"


@pytest.fixture
def node_exporter(tmp_path):
    """A real prometheus-node-exporter over a textfile directory of its own:
    (the directory, scrape())."""
    textfiles = tmp_path / "textfile"
    textfiles.mkdir()
    with prometheus.node_exporter(textfiles) as (_, scrape):
        yield textfiles, scrape


def test_node_exporter_serves_what_the_kernel_and_the_check_wrote(bin_dir, run, tmp_path,
                                                                 node_exporter):
    textfiles, scrape = node_exporter
    # any kernel: the catalogue's first
    kernel = next(iter(KERNELS))
    done = run(kernel, "-t", "0", *quick_args(kernel), "--metrics", textfiles / "kernel.prom")
    assert done.returncode == 0, done.stderr
    check = subprocess.run([str(bin_dir / "noise-check"), "--seconds", "0.5",
                            "--max-stolen-percent", "100", "--max-detour-us", "1e9", "--metrics",
                            textfiles / "check.prom"], capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stderr
    page = scrape()
    # the collector read both files without an error
    assert re.search(r'^node_textfile_scrape_error 0$', page, re.M), page[-2000:]
    # one family a metric over both files; the check's series labelled
    # kernel="noise-check", told apart from the kernel's
    served = series(page)
    same_values({k: v for k, v in served.items() if k[1] == kernel}, expected(done.stdout))
    checked = {k: v for k, v in served.items() if k[1] == "noise-check"}
    same_values(checked, series((textfiles / "check.prom").read_text()))
    lost = [v for (m, _, _), v in checked.items() if m == "noisebench_cpu_lost_ratio"]
    assert lost and all(0 <= v <= 1 for v in lost)
    outside = re.search(r"^noisebench_check_cpus_outside (\S+)$", page, re.M)
    assert outside and float(outside[1]) == 0
    took = float(re.search(r"^noisebench_check_duration_seconds (\S+)$", page, re.M)[1])
    assert 0.5 <= took < 60 and not math.isnan(took)
