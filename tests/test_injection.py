"""The injector's own schedule, whatever the kernel: `--inject P:D:poisson`
comes at random times, P apart on average. Each kernel's own test finds its
injections event by event (tests/test_fwq.py, test_ftq.py, ...).

Each injection the kernel's handler served is logged with its due, entry and
exit ticks (PREFIX_<thread>_injections.dat); tests/ground_truth.py matches
them to what the kernel measured, and a run without injection to the same
schedule (docs/testing.md).
"""
import math

import numpy as np
from nbtest import KERNELS
from nbtest.ground_truth import load_injections, load_meta, participants


def test_poisson_injections_come_at_random_a_period_apart_on_average(run, tmp_path):
    """`--inject P:D:poisson`: each injection due D plus an exponential wait
    of mean P - D after the last was due (the handler draws it; this checks
    the stream it drew, not the machine's timing): no two closer than D, the
    mean period P and the waits' median (P - D) ln 2, each within 5 standard
    errors of what so many draws give; periods that came while the thread
    did not run are counted as missed, and each of them can lengthen one
    gap."""
    period, duration = 1000, 100
    # any kernel: the catalogue's first
    done = run(next(iter(KERNELS)), "--seconds", 2, "--inject",
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
