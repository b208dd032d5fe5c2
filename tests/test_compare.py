"""report.R --compare on real runs: quiet against quiet finds no difference
in at least 90% of the figures (a rate, judged by a binomial test); quiet
against 5% injected finds it in every kernel's headline (the share the
system took) and share of time lost, each interval meeting the share the injection took (from the injection logs of
the same runs: at least the handlers' busy waits, at most from each timer's
due time to the handler's return), and significant wherever the interval is
well inside that share. Both within how far two quiet sides of the same
runs differed (quiet against quiet): what the machine's own noise, falling
more on one side than the other, moved a difference by that day."""
import csv
import json
import math
import os
import subprocess

import numpy as np
import pytest
from nbtest import KERNELS, REPORT_R
from nbtest.ground_truth import load_injections

CPUS = sorted(os.sched_getaffinity(0))
REPEATS = 3
PERIOD_US = 1000
INJECT = f"{PERIOD_US}:50"  # 5% of a CPU
# every kernel measures for this long: about 10,000 samples of FWQ and FTQ
SECONDS = ["--seconds", "1"]


def on_cpu(cpu):
    return lambda: os.sched_setaffinity(0, {cpu})


def side_by_side(bin_dir, out, sides, rep):
    """Each kernel once on each side, the sides at the same time on CPUs of
    their own, then swapped: this VM's noise moves from one second to the
    next, and each CPU has noise of its own."""
    cpus = [(CPUS[0], CPUS[-1]), (CPUS[-1], CPUS[0])]
    for kernel in KERNELS:
        for half, pair in enumerate(cpus):
            procs = []
            for (side, extra), cpu in zip(sides, pair):
                (out / side).mkdir(exist_ok=True)
                cmd = [str(bin_dir / kernel), "-t", "1", *SECONDS, *extra,
                       "-o", f"{kernel}_{rep}{half}"]
                procs.append(subprocess.Popen(cmd, cwd=out / side, stdout=subprocess.DEVNULL,
                                              preexec_fn=on_cpu(cpu)))
                if len(CPUS) == 1:
                    assert procs[-1].wait(timeout=120) == 0
            assert all(p.wait(timeout=120) == 0 for p in procs)


def compare(a, b, out):
    done = subprocess.run(["Rscript", str(REPORT_R), "--compare",
                           str(a), str(b), str(out)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    with open(out / "compare.csv", newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def runs(bin_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("compare")
    for rep in range(REPEATS):
        side_by_side(bin_dir, out, [("quiet_a", []), ("quiet_b", [])], rep)
        side_by_side(bin_dir, out, [("quiet_c", []), ("injected", ["--inject", INJECT])], rep)
    return out


def injected_share(directory):
    """Per kernel, the share of the runs' time (%) the injection handlers
    certainly took (their busy waits, entry to exit) and can have taken at
    most (from the timer's due time, the delivery latency too: the thread may
    have gone on working until the handler began), over the runs of that kernel."""
    shares = {}
    for kernel in KERNELS:
        busy = held = total = 0.0
        for path in sorted(directory.glob(f"{kernel}_*.json")):
            meta = json.loads(path.read_text())
            for rank in meta["ranks"]:
                inj = load_injections(directory, rank)
                busy += float(np.sum(inj["exit"] - inj["entry"]))
                held += float(np.sum(inj["exit"] - inj["due"]))
                total += rank["end_tick"] - rank["start_tick"]
        shares[kernel] = (100 * busy / total, 100 * held / total)
    return shares


def sample_us(directory, kernel):
    """A kernel's mean sample (us) in the runs of `directory`; 0 for one
    that records only its detours (its iterations are a few ns)."""
    time = samples = 0
    for path in sorted(directory.glob(f"{kernel}_*.json")):
        meta = json.loads(path.read_text())
        for rank in meta["ranks"]:
            time += (rank["end_tick"] - rank["start_tick"]) / meta["ticks_per_ns"] / 1e3
            samples += rank.get("samples", 0)
    return time / samples if samples and KERNELS[kernel]["loss"] != "detours" else 0


def most_by_chance(figures, rate=0.10, level=0.01):
    """The most significant figures of `figures` that a rate of `rate` (90%
    of the figures without a difference) gives with probability `level` or more:
    each figure is a draw (95% intervals are significant 5% of the time where
    nothing differs), and of 16 figures 2 or more come with probability 0.19
    even at 5%. A count above it says the rate is above `rate`."""
    def at_least(k):
        return sum(math.comb(figures, i) * rate**i * (1 - rate)**(figures - i)
                   for i in range(k, figures + 1))
    return max(k for k in range(figures + 1) if at_least(k) >= level)


@pytest.fixture(scope="module")
def quiet_against_quiet(runs):
    return compare(runs / "quiet_a", runs / "quiet_b", runs / "ab")


def rows_of(rows, figure):
    """{kernel: its row of `figure`}"""
    return {r["kernel"]: r for r in rows if r["figure"] == figure}


@pytest.fixture(scope="module")
def quiet_against_injected(runs):
    return compare(runs / "quiet_c", runs / "injected", runs / "ci")


@pytest.mark.timing
def test_quiet_against_quiet_finds_no_difference(runs, quiet_against_quiet):
    figures = [r for r in quiet_against_quiet if r["ci_low"] != ""]
    assert {r["kernel"] for r in figures} == set(KERNELS)
    assert all(r["runs_a"] == r["runs_b"] == str(2 * REPEATS) for r in figures)
    significant = [f"{r['what']} {r['figure']}: {float(r['difference']):.3g} "
                   f"[{float(r['ci_low']):.3g}, {float(r['ci_high']):.3g}]"
                   for r in figures if r["significant"] == "TRUE"]
    assert len(significant) <= most_by_chance(len(figures)), significant
    page = (runs / "ab" / "index.html").read_text()
    assert "<h2>Manifests</h2>" in page and 'src="compare-1-losses.png"' in page


@pytest.mark.timing
@pytest.mark.parametrize("figure", ["stolen_percent", "lost_percent"])
def test_injected_noise_is_found_with_its_share(runs, quiet_against_quiet,
                                               quiet_against_injected, figure):
    found = rows_of(quiet_against_injected, figure)
    truth = injected_share(runs / "injected")
    assert set(found) == set(KERNELS)
    for kernel, r in found.items():
        if figure == "stolen_percent" and sample_us(runs / "injected", kernel) > PERIOD_US / 2:
            # samples as long as the period (P-SNAP's 1 ms iterations) each
            # hold an injection: that is their usual time, the work's
            # slowdown, not a detour (kernels.md)
            continue
        low, high = float(r["ci_low"]), float(r["ci_high"])
        least, most = truth[kernel]
        ab = rows_of(quiet_against_quiet, figure)[kernel]
        # how far two quiet sides differed: the machine's own share of a difference
        apart = max(abs(float(ab["ci_low"])), abs(float(ab["ci_high"])))
        # found wherever the runs can tell it: when the interval and the
        # quiet sides' difference leave the injection's share a margin of
        # two half-widths (a noisier machine widens both)
        if 3 * (high - low) / 2 + apart < least:
            assert r["significant"] == "TRUE", (kernel, r["difference"], low, high, apart)
        # the interval meets what the injection took, between certainly and
        # at most, give or take what the quiet sides differed by
        assert low - apart <= most and least <= high + apart, (kernel, least, most, low, high,
                                                               apart)
        assert "injected 50 us every 1000 us" in r["what"]
    if figure == "stolen_percent":
        page = (runs / "ci" / "index.html").read_text()
        assert page.count("the system took") >= len(KERNELS), page[:2000]
