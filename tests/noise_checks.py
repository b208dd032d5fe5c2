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


def fwq_excess_us(times, ticks_per_ns, window=50):
    """How much longer each sample took than the usual sample near it (the
    median of its window), in us. Not against the run's minimum: this VM's
    sample time steps by a few % over a run, which would add microseconds to
    every sample of the slower stretch."""
    n = len(times) // window * window
    blocks = times[:n].reshape(-1, window).astype(float)
    usual = np.repeat(np.median(blocks, axis=1), window)
    return (times[:n] - usual) / ticks_per_ns / 1e3


def fwq_periodic_excess(times, ticks_per_ns, period_ns, low_us, high_us):
    """The excesses (us) in [low_us, high_us) of the samples that have another
    one period later or earlier: the injected detours.

    A sample's start is known, not where in it the detour fell, so two hits
    one period apart start one period apart give or take a sample's length,
    the tolerance. Taking every excess in the window instead (and what a run
    without injection had there off its sum) failed whenever a burst of the
    machine's own 16-45 us detours came in one run and not the other."""
    excess_us = fwq_excess_us(times, ticks_per_ns)
    n = len(excess_us)
    start_ns = (np.cumsum(times[:n]) - times[:n]) / ticks_per_ns
    _, lengths = periodic_detours(start_ns, excess_us * 1e3, period_ns, low_us * 1e3,
                                  high_us * 1e3, tolerance_ns=np.median(times) / ticks_per_ns)
    return lengths / 1e3


def ftq_periodic_loss(counts, period_quanta):
    """Share of work lost to noise that comes every period_quanta quanta.

    Folds the counts at twice the period and takes each phase's loss against
    the median count; a phase's loss counts as far as it repeats in both
    halves (the smaller of the two), and the median over phases is
    subtracted. Noise that is not periodic falls on every phase alike and
    cancels; the machine's 4 ms timer tick, which folding at 2 ms alone would
    take for 0.5-1.5% of periodic loss, hits only every other 2 ms period.
    """
    span = 2 * period_quanta
    n = len(counts) // span * span
    quiet = float(np.median(counts))
    loss = 1.0 - counts[:n].reshape(-1, span).mean(axis=0) / quiet
    repeated = np.minimum(loss[:period_quanta], loss[period_quanta:])
    return float(np.mean(repeated - np.median(repeated)))


def outages(counts, quiet_count, min_quanta=3):
    """Mask of quanta inside runs of min_quanta or more starved quanta.

    A detour no longer than a quantum starves at most two quanta in a row;
    longer runs are machine stalls (this VM has some of 50-150 ms).
    """
    starved = np.concatenate(([False], counts < 0.5 * quiet_count, [False]))
    edges = np.flatnonzero(np.diff(starved.astype(int)))
    mask = np.zeros(len(counts), dtype=bool)
    for start, end in zip(edges[::2], edges[1::2]):
        if end - start >= min_quanta:
            mask[start:end] = True
    return mask


def ftq_missing(counts, window=20):
    """Share of work missing against the quiet count, over the quanta outside
    machine stalls. The quiet count is the median of each window of quanta,
    not of the whole run: this VM's quiet count steps by 2-3% over a run, and
    one run-wide median would count such a step as noise or hide the noise
    under it."""
    n = len(counts) // window * window
    blocks = counts[:n].reshape(-1, window).astype(float)
    quiet = np.repeat(np.median(blocks, axis=1), window)
    kept = ~outages(counts[:n], quiet)
    return 1.0 - float(np.sum(counts[:n][kept]) / np.sum(quiet[kept]))


def dip_gaps_ns(counts, times, ticks_per_ns, depth=0.75):
    """Times between successive dips: quanta that lost more than depth of a
    quantum's length, a run of such quanta counting once, at its first end.

    A quantum's loss is its length less the time its count takes at the
    median rate, not its count's shortfall: the kernel reads the clock after
    each unit of work, so a detour that starts before a quantum's end makes it
    end late (the next one is short, to keep the grid). Half its work may then
    be done, and all of the detour lost, in one quantum."""
    ends = np.asarray(times, dtype=float) / ticks_per_ns
    quantum = np.median(np.diff(ends))
    lengths = np.diff(ends, prepend=ends[0] - quantum)
    loss = lengths - counts * (quantum / np.median(counts))
    low = loss > depth * quantum
    first = low & ~np.concatenate(([False], low[:-1]))
    return np.diff(ends[first])


def periodic_detours(starts_ns, lengths_ns, period_ns, low_ns, high_ns, tolerance_ns=20e3):
    """(starts, lengths) of the detours of length in [low_ns, high_ns) whose
    start or end lies one period (+- tolerance_ns) from another such detour's
    start or end: the injected ones, in time order. The machine's own detours
    of that length come at random, or (its timer tick) every 4 ms; folding at
    a fixed phase would not do, as the injection timer's clock and the
    tick-derived ns drift apart by microseconds a run.

    Either edge, as the machine's noise merges into an injection on one side:
    an interrupt or a stall just before the timer is due starts the detour
    early (by up to 150 us here) but not its end, which the handler fixes at
    due + duration; a tick just after the handler returns moves the end but
    not the start. The tolerance is one timer tick (15-20 us here)."""
    keep = (lengths_ns >= low_ns) & (lengths_ns < high_ns)
    starts = np.asarray(starts_ns[keep], dtype=float)
    lengths = np.asarray(lengths_ns[keep], dtype=float)
    order = np.argsort(starts)
    starts, lengths = starts[order], lengths[order]
    if len(starts) == 0:
        return starts, lengths

    def has_partner(edges, offset):
        j = np.searchsorted(edges, edges + offset - tolerance_ns)
        j = np.minimum(j, len(edges) - 1)
        return np.abs(edges[j] - (edges + offset)) <= tolerance_ns

    kept = np.zeros(len(starts), dtype=bool)
    for edges in (starts, starts + lengths):
        kept |= has_partner(edges, period_ns) | has_partner(edges, -period_ns)
    return starts[kept], lengths[kept]


def distinct_periods(ends_ns, period_ns):
    """How many periods the detour ends fall in, the periods placed on the
    run's own phase (the circular mean of the ends modulo the period, which
    the injected detours dominate). By the end, not the start: an injection
    that a machine detour ran into starts early, by up to a third of a
    period here, and counting starts less than half a period apart once
    merged such a period with its neighbour's."""
    if len(ends_ns) == 0:
        return 0
    angle = 2 * np.pi * (np.asarray(ends_ns, dtype=float) % period_ns) / period_ns
    phase = np.angle(np.mean(np.exp(1j * angle))) / (2 * np.pi) * period_ns
    return len(np.unique(np.round((ends_ns - phase) / period_ns)))
