"""Noise injected on purpose is found by FWQ and FTQ, event by event.

Each injection the kernel's handler served is logged with its due, entry and
exit ticks (PREFIX_<thread>_injections.dat); tests/ground_truth.py matches
them to what the kernel measured, and a run without injection to the same
schedule (docs/testing.md).
"""
import math

import numpy as np
import pytest
from nbtest.ground_truth import check_injected_run, load_injections, load_meta, participants
from nbtest.lines import summaries


@pytest.mark.timing
@pytest.mark.parametrize("kernel", ["ftq", "ftq_omp"])
def test_ftq_finds_each_injection(run, tmp_path, bin_dir, kernel):
    if not (bin_dir / kernel).exists():
        pytest.skip(f"{kernel} not built")
    env = {"OMP_NUM_THREADS": "2", "OMP_PLACES": "cores", "OMP_PROC_BIND": "close"}
    common = ["-t", 0, "-n", 20000, "--freq", 10000, "-o"]
    quiet = run(kernel, *common, "quiet", env=env)
    noisy = run(kernel, *common, "noisy", "--inject", "2000:100", env=env)
    assert quiet.returncode == 0 and noisy.returncode == 0, quiet.stderr + noisy.stderr
    for row, m, _ in check_injected_run(tmp_path / "noisy", tmp_path / "quiet", 2000):
        # 500 periods a second of the thread's measurement, those that came
        # while it was stalled counted as missed: the 2 s grid, and longer
        # when a stall holds its last quantum past the grid's end
        seconds = (row["end_tick"] - row["start_tick"]) / row["ticks_per_ns"] / 1e9
        assert row["injections"] + row["injections_missed"] == \
            pytest.approx(500 * seconds, rel=0.01)
    # the kernel's own figure holds what was injected: the share of work
    # missing against the best quantum is at least the 5% taken (less the
    # share a quantum's count varies by, here the timer's)
    for row in summaries(noisy.stdout):
        assert float(row["scaled_noise_mean"]) > 0.045, row


@pytest.mark.timing
def test_fwq_finds_each_injection(run, tmp_path):
    common = ["-t", 0, "-n", 20000, "-w", 12]
    quiet = run("fwq", *common, "-o", "quiet")
    noisy = run("fwq", *common, "--inject", "2000:100", "-o", "noisy")
    assert quiet.returncode == 0 and noisy.returncode == 0, quiet.stderr + noisy.stderr
    meta = load_meta(tmp_path / "noisy")
    tpn = meta["ticks_per_ns"]
    for row, m, _ in check_injected_run(tmp_path / "noisy", tmp_path / "quiet", 2000):
        seconds = (row["end_tick"] - row["start_tick"]) / tpn / 1e9
        periods = row["injections"] + row["injections_missed"]
        assert periods == pytest.approx(500 * seconds, rel=0.01)
    # every sample is at least the fastest, so the kernel's scaled noise
    # holds the injected 100 us every 2 ms
    for row in summaries(noisy.stdout):
        assert float(row["scaled_noise_mean"]) > 0.045, row


def test_poisson_injections_come_at_random_a_period_apart_on_average(run, tmp_path):
    """`--inject P:D:poisson`: each injection due D plus an exponential wait
    of mean P - D after the last was due (the handler draws it; this checks
    the stream it drew, not the machine's timing): no two closer than D, the
    mean period P and the waits' median (P - D) ln 2, each within 5 standard
    errors of what so many draws give; periods that came while the thread
    did not run are counted as missed, and each of them can lengthen one
    gap."""
    period, duration = 1000, 100
    done = run("selfish", "--seconds", 2, "--detours", 1000000, "--inject",
               f"{period}:{duration}:poisson", "-o", "p")
    assert done.returncode == 0, done.stderr
    meta = load_meta(tmp_path / "p")
    assert meta["inject"]["pattern"] == "poisson"
    row = participants(meta)[0]
    due = load_injections(tmp_path, row)["due"]
    n, missed = len(due) - 1, row["injections_missed"]
    assert n > 500, row
    gaps_us = np.diff(due) / meta["ticks_per_ns"] / 1e3
    # the ticks of two dues come from two clock reads each: within 1 us
    assert gaps_us.min() >= duration - 1, gaps_us.min()
    wait = period - duration
    mean = (due[-1] - due[0]) / meta["ticks_per_ns"] / 1e3 / (n + missed)
    assert abs(mean - period) <= 5 * wait / math.sqrt(n), (mean, n, missed)
    above = np.mean(gaps_us - duration > wait * math.log(2))
    assert abs(above - 0.5) <= 5 * 0.5 / math.sqrt(n) + missed / n, (above, n, missed)
