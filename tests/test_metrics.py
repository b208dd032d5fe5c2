"""--metrics on every kernel and on noise-check: a node_exporter textfile of
the catalogue's metrics (kernels.json's "metrics"), each the sum of its
keys in a rank's line times its scale. A node's series: its worst and
median CPU, its CPUs measured and breaking a rule; then one series a rank
that broke a rule (every rank with --metrics-every-cpu). Written by each
node's first rank, renamed into place when whole; accepted by promtool,
and read back through a real prometheus-node-exporter started on
127.0.0.1."""
import json
import math
import re
import shutil
import statistics
import subprocess
import time

import pytest
from nbtest import KERNELS, ROOT, quick_args
from nbtest import prometheus
from nbtest.rank_lines import rank_lines

CATALOGUE = json.loads((ROOT / "src" / "kernels" / "kernels.json").read_text())["metrics"]
SERIES = re.compile(r'^(noisebench_cpu_\w+)\{([^}]*)\} (\S+)$', re.M)
NODE_SERIES = re.compile(r'^noisebench_node_(\w+)\{([^}]*)\} (\S+)$', re.M)


def series(text):
    """{(metric, kernel, rank): value} of the per-rank series in a textfile
    or a scrape (which orders the labels by name)."""
    got = {}
    for metric, labels, value in SERIES.findall(text):
        label = dict(re.findall(r'(\w+)="([^"]*)"', labels))
        assert label.keys() == {"kernel", "rank", "cpu"}, labels
        got[(metric, label["kernel"], int(label["rank"]))] = float(value)
    return got


def node_series(text):
    """{(name after noisebench_node_, kernel, stat or None): value}."""
    got = {}
    for name, labels, value in NODE_SERIES.findall(text):
        label = dict(re.findall(r'(\w+)="([^"]*)"', labels))
        assert label.keys() <= {"kernel", "stat"}, labels
        got[(name, label["kernel"], label.get("stat"))] = float(value)
    return got


def broke_a_rule(fields):
    return int(fields.get("rules_unmet", 0)) > 0


def expected(stdout, kernel=None, every_cpu=False):
    """{(metric, kernel, rank): value} as the catalogue makes them of the
    rank lines, of the ranks that broke a rule (of every one with
    every_cpu); kernel: the label a program's own series carry instead."""
    want = {}
    for line in rank_lines(stdout):
        fields = dict(f.split("=", 1) for f in line.split()[1:])
        if not (every_cpu or broke_a_rule(fields)):
            continue
        for m in CATALOGUE:
            try:
                value = sum(float(fields[k]) for k in m["keys"]) * m["scale"]
            except (KeyError, ValueError):
                continue
            want[(m["name"], kernel or fields["kernel"], int(fields["rank"]))] = value
    return want


def node_expected(stdout):
    """The node's series as the catalogue makes them of all its rank lines:
    each metric's worst and median CPU, and the counts."""
    lines = [dict(f.split("=", 1) for f in line.split()[1:]) for line in rank_lines(stdout)]
    kernel = lines[0]["kernel"]
    want = {("cpus", kernel, None): len(lines),
            ("cpus_breaking", kernel, None): sum(map(broke_a_rule, lines))}
    for m in CATALOGUE:
        values = []
        for fields in lines:
            try:
                value = sum(float(fields[k]) for k in m["keys"]) * m["scale"]
            except (KeyError, ValueError):
                continue
            if not math.isnan(value):  # a CPU without the figure is in no order
                values.append(value)
        if values:
            name = m["name"].removeprefix("noisebench_cpu_")
            # a counter's twin is a gauge, without the counter's _total
            if m["type"] == "counter":
                name = name.removesuffix("_total")
            want[(name, kernel, "max")] = max(values)
            want[(name, kernel, "median")] = statistics.median(values)
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
def test_every_kernel_writes_its_nodes_figures_and_its_bad_cpus(launch, tmp_path, kernel, how):
    # every rank breaks the first rule, the other kernels' figures are judged
    # by none: a CPU's own series for each, the node's beside them
    rules = tmp_path / "rules"
    rules.write_text(f"stolen_percent < 0 kernel={kernel}\n")
    done = launch(how, kernel, "--seconds", "0.3", "--warmup-ms", "0", "--requirements", rules,
                  "--metrics", tmp_path / "m-{host}.prom")
    assert done.returncode == 0, done.stderr
    files = list(tmp_path.glob("m-*.prom"))
    assert len(files) == 1 and not list(tmp_path.glob("*.tmp")), files
    host = rank_lines(done.stdout)[0].split()[3].split("=")[1]
    assert files[0].name == f"m-{host}.prom", "{host} is the node's name"
    text = files[0].read_text()
    want = expected(done.stdout)
    assert {rank for _, _, rank in want} == set(range(len(rank_lines(done.stdout))))
    same_values(series(text), want)
    same_values(node_series(text), node_expected(done.stdout))
    assert re.search(r'^noisebench_info\{version="[^"]+",kernel_release="[^"]+",host="%s"\} 1$'
                     % re.escape(host), text, re.M)
    promtool_accepts(text)


@pytest.mark.parametrize("every_cpu", [False, True])
def test_a_cpu_within_the_rules_has_no_series_of_its_own_unless_asked(run, tmp_path, every_cpu):
    """The series budget: a node of CPUs that met every rule writes its own
    series only; --metrics-every-cpu adds every CPU's."""
    kernel = next(iter(KERNELS))
    rules = tmp_path / "rules"
    rules.write_text("stolen_percent <= 100\n")
    done = run(kernel, "-t", "0", *quick_args(kernel), "--requirements", rules, "--metrics",
               tmp_path / "m.prom", *(["--metrics-every-cpu"] if every_cpu else []))
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "m.prom").read_text()
    same_values(series(text), expected(done.stdout, every_cpu=every_cpu))
    assert bool(series(text)) == every_cpu
    same_values(node_series(text), node_expected(done.stdout))
    assert node_series(text)[("cpus_breaking", kernel, None)] == 0
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
    # the check's CPUs all within its limits: its node's series only
    assert not any(k[1] == "noise-check" for k in served)
    nodes = node_series(page)
    same_values({k: v for k, v in nodes.items() if k[1] == kernel}, node_expected(done.stdout))
    checked = {k: v for k, v in nodes.items() if k[1] == "noise-check"}
    same_values(checked, node_series((textfiles / "check.prom").read_text()))
    lost = [v for (m, _, _), v in checked.items() if m == "lost_ratio"]
    assert len(lost) == 2 and all(0 <= v <= 1 for v in lost)
    outside = re.search(r"^noisebench_check_cpus_outside (\S+)$", page, re.M)
    assert outside and float(outside[1]) == 0
    took = float(re.search(r"^noisebench_check_duration_seconds (\S+)$", page, re.M)[1])
    assert 0.5 <= took < 60 and not math.isnan(took)
