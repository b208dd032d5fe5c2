"""noise-check, a node in seconds: every CPU against the site's limits, one
NHC-style line a CPU outside them and a summary line; exit 0 within, 1
outside, 2 when it cannot measure. A rival thread put on one CPU from
outside the check (noise-slowdown, real-time, a known share of the CPU)
must be named, with its cause under --trace; the metrics file must be what
node_exporter's textfile collector reads (promtool check metrics)."""
import json
import os
import re
import shutil
import signal
import subprocess

import pytest
from nbtest.competitor import start_rival
from test_causes import needs_tracefs
from test_metrics import promtool_accepts

CPUS = sorted(os.sched_getaffinity(0))
# what any CPU passes: no share of the time and no detour is beyond these
LOOSE = ["--max-stolen-percent", "100", "--max-detour-us", "1e9"]


def check(bin_dir, *args, timeout=120):
    return subprocess.run([str(bin_dir / "noise-check"), *map(str, args)], capture_output=True,
                          text=True, timeout=timeout)


def summary(done):
    lines = done.stdout.strip().splitlines()
    assert lines and lines[-1].startswith("noise: "), done.stdout
    return lines


def test_within_the_limits_it_passes_in_one_line(bin_dir):
    done = check(bin_dir, "--seconds", 1, *LOOSE)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = summary(done)
    assert len(lines) == 1
    assert re.match(rf"noise: {len(CPUS)} CPUs within the limits "
                    r"\(took at most [\d.e+-]+% <= 100%, "
                    r"longest detour \d+ us <= 1000000000 us\); [\d.]+ s$", lines[0]), lines[0]


@pytest.mark.parametrize("args, message", [
    (["--seconds", "0"], "--seconds 0"),
    (["--max-stolen-percent", "x"], "--max-stolen-percent x"),
    (["--max-lost-percent", "x"], "--max-lost-percent x"),  # the old name, still read
    (["--bogus"], "unknown option --bogus"),
])
def test_bad_options_are_named_in_one_line(bin_dir, args, message):
    done = check(bin_dir, *args)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and message in done.stderr, done.stderr


def test_a_bad_limits_file_is_named_with_its_line(bin_dir, tmp_path):
    limits = tmp_path / "limits"
    limits.write_text("# from the acceptance survey\nmax_lost_percent 2\nmax_detour_ms 3\n")
    done = check(bin_dir, "--limits", limits)
    assert done.returncode == 2
    assert done.stderr.strip().endswith(
        f"--requirements {limits}:3: after the figure comes < or <= (e.g. kurtosis < 100)"), \
        done.stderr


def test_it_cannot_measure_without_its_kernel(bin_dir, tmp_path):
    shutil.copy(bin_dir / "noise-check", tmp_path)
    done = subprocess.run([str(tmp_path / "noise-check"), "--seconds", "1"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2
    assert re.search(r"cannot measure: .*/selfish: No such file", done.stderr), done.stderr


def rival(bin_dir, tmp_path, cpu, slice_="200:800"):
    """A rival on cpu, by default 200 us of every 1 ms."""
    return start_rival(bin_dir, cpu, slice_, tmp_path / "slices.dat")


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)


def test_a_cpu_with_noise_is_named(bin_dir, tmp_path):
    noisy = CPUS[-1]
    r = rival(bin_dir, tmp_path, noisy)
    try:
        # each slice is a detour of 200 us: over the 100 us limit whatever the day
        done = check(bin_dir, "--seconds", 2, "--max-stolen-percent", 100, "--max-detour-us", 100)
    finally:
        stop(r)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = summary(done)
    assert any(re.match(rf"noise: cpu{noisy} detour of \d+ us > 100 us \(took [\d.]+%\)$", line)
               for line in lines), lines
    assert re.match(r"noise: \d+ of \d+ CPUs outside the limits", lines[-1]), lines[-1]


@needs_tracefs
def test_with_trace_the_reason_names_the_cause(bin_dir, tmp_path):
    noisy = CPUS[-1]
    # half of the CPU: more than any other work can take of what is left, so
    # the rival is what took most, whatever else runs there
    r = rival(bin_dir, tmp_path, noisy, "500:500")
    try:
        done = check(bin_dir, "--seconds", 2, "--trace", "--max-stolen-percent", 100,
                     "--max-detour-us", 100)
    finally:
        stop(r)
    assert done.returncode == 1, done.stdout + done.stderr
    line = next((x for x in summary(done) if x.startswith(f"noise: cpu{noisy} ")), "")
    assert re.search(rf"; thread:noise-slowdown:{r.pid}\)$", line), done.stdout


def test_the_metrics_are_a_textfile_node_exporter_reads(bin_dir, tmp_path):
    prom = tmp_path / "noise.prom"
    done = check(bin_dir, "--seconds", 1, *LOOSE, "--metrics", prom)
    assert done.returncode == 0, done.stderr
    text = prom.read_text()
    assert not list(tmp_path.glob("*.tmp*")), "the file is renamed into place when whole"
    # every CPU within the limits: the node's series, none of a CPU's own
    assert not re.search(r"^noisebench_cpu_", text, re.M), text
    values = dict(re.findall(r'^noisebench_node_lost_ratio\{kernel="noise-check",'
                             r'stat="(\w+)"\} (\S+)$', text, re.M))
    assert sorted(values) == ["max", "median"]
    assert 0 <= float(values["median"]) <= float(values["max"]) <= 1, values
    assert re.search(rf'^noisebench_node_cpus\{{kernel="noise-check"\}} {len(CPUS)}$', text, re.M)
    assert re.search(r"^noisebench_check_limit_detour_ratio 1$", text, re.M)
    promtool_accepts(text)


def survey_run(bin_dir, where, *args):
    """A selfish run of every CPU into where/, as an acceptance survey's."""
    where.mkdir(parents=True)
    done = subprocess.run([str(bin_dir / "selfish"), "-t", "0", "--seconds", "0.5", "-o",
                           where / "selfish", *map(str, args)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads((where / "selfish.json").read_text())


def ranks_of(run, where):
    """A run's rank entries, from PREFIX.json or its node files."""
    if "ranks" in run:
        return run["ranks"]
    return [r for name in run["node_files"]
            for r in json.loads((where / name).read_text())["ranks"]]


def test_limits_from_a_survey_are_its_nodes_worst_cpus_with_a_margin(bin_dir, tmp_path):
    survey = tmp_path / "survey"
    runs = [(survey / "day1", survey_run(bin_dir, survey / "day1")),
            (survey / "day2" / "jube", survey_run(bin_dir, survey / "day2" / "jube",
                                                  "--node-files"))]
    # noise injected on purpose is not the machine's: that run is left out
    survey_run(bin_dir, survey / "injected", "--inject", "1000:300")
    done = check(bin_dir, "--limits-from", survey, "--margin", 3)
    assert done.returncode == 0, done.stderr
    # one node: each run's worst CPU; two of them, the 99th percentile is the larger
    worst_lost = max(max(r["stolen_percent"] for r in ranks_of(run, where))
                     for where, run in runs)
    worst_detour = max(max(r["tails"]["max_us"] for r in ranks_of(run, where))
                       for where, run in runs)
    # a requirements file's rules, "FIGURE <= BOUND"
    limits = {figure: bound for figure, op, bound in
              (line.split() for line in done.stdout.splitlines() if not line.startswith("#"))
              if op == "<="}
    # no more than all of the CPU, on a day it lost over a third
    assert float(limits["stolen_percent"]) == pytest.approx(
        min(100, max(0.01, 3 * worst_lost)), rel=5e-3)
    assert float(limits["max_loss_us"]) == pytest.approx(max(10, 3 * worst_detour), abs=1)
    assert "2 run(s) of the selfish detour" in done.stdout, done.stdout
    # what it printed is a limits file the check reads
    (tmp_path / "limits").write_text(done.stdout)
    held = check(bin_dir, "--seconds", 0.5, "--limits", tmp_path / "limits")
    assert held.returncode in (0, 1), held.stderr
    assert f"<= {limits['max_loss_us']} us" in held.stdout.splitlines()[-1], held.stdout


def test_limits_from_a_survey_of_other_nodes_say_so(bin_dir, tmp_path):
    where = tmp_path / "survey"
    survey_run(bin_dir, where)
    path = where / "selfish.json"
    path.write_text(re.sub(r'"cpu_model": "[^"]*"', '"cpu_model": "Another CPU"',
                           path.read_text()))
    done = check(bin_dir, "--limits-from", where)
    assert done.returncode == 2 and not done.stdout
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert "no complete run measured a node like this one" in done.stderr
    assert "it has nodes of Another CPU" in done.stderr, done.stderr
