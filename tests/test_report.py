"""The R report on real runs: injected noise is named at its frequency and
size, and bad input leaves no report behind."""
import csv
import re
import subprocess

import pytest
from conftest import ROOT


def report(results_dir):
    return subprocess.run(["Rscript", str(ROOT / "analysis" / "report.R"), str(results_dir)],
                          capture_output=True, text=True, timeout=600)


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


REPEATS = 3


@pytest.fixture(scope="module")
def ftq_pairs(bin_dir, tmp_path_factory):
    """FTQ at 10 kHz and 7 kHz (seed 003's two independent rates), without
    and with 100 us of noise every 2 ms, on every CPU, each run REPEATS
    times, alternating; and their report."""
    out = tmp_path_factory.mktemp("ftq-pairs")
    for rep in range(REPEATS):
        for name, extra in (("quiet", []), ("noisy", ["--inject", "2000:100"])):
            for freq in (10000, 7000):
                cmd = [str(bin_dir / "ftq"), "-t", "0", "--freq", str(freq), "-n",
                       str(3 * freq // 2), "-o", f"{name}_{freq // 1000}khz_{rep}", *extra]
                subprocess.run(cmd, cwd=out, check=True, capture_output=True, timeout=120)
    done = report(out)
    assert done.returncode == 0, done.stderr
    return out


def test_injected_500hz_is_named_external(ftq_pairs):
    peaks = read_csv(ftq_pairs / "report" / "peaks.csv")
    noisy = {p["run"] for p in peaks if p["run"].startswith("noisy_")}
    assert len(noisy) == 2 * REPEATS
    for run in noisy:
        for thread in {p["thread"] for p in peaks if p["run"] == run}:
            at_500 = [p for p in peaks if p["run"] == run and p["thread"] == thread
                      and abs(float(p["frequency_hz"]) - 500) <= 5]
            assert at_500, (run, thread)
            assert at_500[0]["origin"] == "external", at_500


def test_injected_noise_is_5_points_above_quiet(ftq_pairs):
    rows = read_csv(ftq_pairs / "report" / "summary.csv")
    # the machine's own noise only adds to a run, by several points in a
    # burst on this VM: compare the quietest of the repeats of each kind
    lowest = {}
    for r in rows:
        kind, freq, _ = r["run"].split("_")
        key = (kind, freq, r["thread"])
        lowest[key] = min(lowest.get(key, 100.0), float(r["noise_percent"]))
    for (kind, freq, thread), quiet in lowest.items():
        if kind != "quiet":
            continue
        added = lowest[("noisy", freq, thread)] - quiet
        # 100 us in 2 ms is 5% of the work, plus the handler's return; less
        # the injections a machine stall swallowed and the machine's noise
        # that fell inside an injection (counted once): 3.5-6.5 seen, 3.47 once
        assert 2.5 < added < 7.5, (freq, thread, added, lowest)


def test_page_and_figures_are_written(ftq_pairs):
    page = (ftq_pairs / "report" / "index.html").read_text()
    for figure in ("noisy_10khz_0-spectrum.png", "quiet_7khz_2-heatmap.png"):
        assert (ftq_pairs / "report" / figure).stat().st_size > 5000
        assert figure in page


@pytest.mark.parametrize("damage, message", [
    (lambda f: f.write_text(f.read_text()[:-3]), r"cut short|lines, the JSON says"),
    (lambda f: f.write_text(""), r"empty, the JSON says"),
    (lambda f: f.write_text("12\nx7\n" + f.read_text()), r":2: 'x7' is not a number"),
])
def test_bad_input_is_named_and_writes_nothing(run, tmp_path, damage, message):
    assert run("fwq", "-t", 1, "-n", 2000, "-w", 10, "-o", "fwq").returncode == 0
    damage(tmp_path / "fwq_0_times.dat")
    done = report(tmp_path)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "fwq_0_times.dat" in lines[0], done.stderr
    assert re.search(message, lines[0]), lines[0]
    assert not (tmp_path / "report").exists()
    assert not list(tmp_path.glob(".report*"))
