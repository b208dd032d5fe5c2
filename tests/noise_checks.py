"""Separating injected noise from the machine's own, for the timing tests.

The VM these tests run on steals several % of a core in bursts of its own.
The estimators here keep what is periodic at the injection period, or what is
no longer than an injected detour, and drop the rest, so a test can assert the
size of what it injected without assuming a quiet machine.
"""
import json
from pathlib import Path

import numpy as np


def load_run(prefix):
    """The JSON description and per-thread arrays of a kernel run."""
    prefix = Path(prefix)
    meta = json.loads(prefix.with_suffix(".json").read_text())
    threads = []
    for t in meta["threads"]:
        data = {}
        for name in t["files"]:
            kind = name.rsplit("_", 1)[1].removesuffix(".dat")
            data[kind] = np.loadtxt(prefix.parent / name, dtype=np.int64, ndmin=1)
        threads.append(data)
    return meta, threads


def fwq_capped_noise(times, cap_ticks):
    """Mean scaled noise with every sample's excess capped at cap_ticks.

    An injected detour adds the same excess to every sample it hits; a
    machine burst of milliseconds adds far more to a few. Capping keeps the
    first whole and bounds the second.
    """
    t = times.astype(float)
    low = t.min()
    return float(np.minimum(t - low, cap_ticks).mean() / low)


def ftq_periodic_loss(counts, period_quanta):
    """Share of work lost to noise periodic at period_quanta quanta.

    Folds the counts at the period, takes each phase's loss against the
    median count, and subtracts the median loss over phases: noise that is
    not periodic at this period falls on every phase alike and cancels.
    """
    n = len(counts) // period_quanta * period_quanta
    quiet = float(np.median(counts))
    folded = counts[:n].reshape(-1, period_quanta).mean(axis=0)
    loss = 1.0 - folded / quiet
    return float(np.mean(loss - np.median(loss)))


def ftq_missing(counts, quiet_count):
    """1 - mean count / quiet count: the share of work missing."""
    return 1.0 - float(np.mean(counts)) / quiet_count


def dip_gaps_ns(counts, times, ticks_per_ns, depth=0.5):
    """Times between successive quanta that lost more than depth of the median."""
    dips = times[counts < depth * np.median(counts)]
    return np.diff(dips) / ticks_per_ns

