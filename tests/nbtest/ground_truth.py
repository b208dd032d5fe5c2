"""Matching what a kernel found to what was injected, event by event.

With --inject, every kernel writes PREFIX_<thread>_injections.dat: for each
injection its handler served, the tick its timer was due, the tick the
handler began and the tick it returned (docs/kernels.md). That is the ground
truth. For each injection, the time the kernel saw lost inside
[due, exit] (give or take what its samples can resolve) is compared with what
the handler certainly took (exit - entry: the busy wait) and what it can have
taken at most (exit - due: the delivery latency too).

Background noise then only adds: it can make the kernel see more than the
injection took (a detour of the machine's own in the same sample), never
less. So a found injection is one whose loss reaches the busy wait, less the
kernel's own resolution; its length is right when the loss also stays within
exit - due plus that resolution. A run without injection gets a schedule of
the same period and length laid on its own time line; what matches there is
what the machine alone makes look like our injections.

Where the machine runs below its best for a while (a vCPU at 60% speed: the
core taken in slices shorter than a sample), every sample there holds some
of its noise, and the level a sample's loss is read against holds it too:
that background can fall inside an injection's busy wait instead of beside
it, so the loss seen falls short of the busy wait by up to the background
of the samples around it. Such stretches are also where the machine alone
makes detours of any length; what it makes look like our injections is
counted where it ran at its best.
"""
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from nbtest import KERNELS, ROOT
from nbtest.kernel_files import data_bytes, part_bytes
from nbtest.verdicts import cannot_tell


@dataclass
class Timeline:
    """What a kernel measured, laid on the tick time line: intervals [start,
    end), the time (ticks) each lost to noise, the kernel's resolution in
    ticks (how far off a loss or an interval's edge can be read); beyond the
    run's best neighbourhood, the background (the time each interval's
    neighbourhood loses in every sample) and the usual loss (in the median
    sample): 0 where the machine ran at its best."""
    start: np.ndarray
    end: np.ndarray
    lost: np.ndarray
    resolution: float
    background: np.ndarray
    usual: np.ndarray


@dataclass
class Match:
    found: np.ndarray       # bool per injection: its busy wait is in the kernel's data
    exact: np.ndarray       # bool per injection: and its whole length, no more
    clean: np.ndarray       # bool per injection: no loss seen there beyond the slack
    settled: np.ndarray     # bool per injection: the machine ran at its best around it
    lost: np.ndarray        # ticks the kernel saw lost around each injection
    injections: dict

    @property
    def recall(self):
        return float(np.mean(self.found)) if len(self.found) else 0.0

    @property
    def exact_share(self):
        return float(np.mean(self.exact)) if len(self.exact) else 0.0

    @property
    def clean_share(self):
        return float(np.mean(self.clean)) if len(self.clean) else 0.0

    def _settled_share(self, which):
        """Of the injections where the machine ran at its best, the share
        `which` holds."""
        return float(np.mean(which[self.settled])) if self.settled.any() else 0.0

    @property
    def settled_exact_share(self):
        """Seen exact, where the machine ran at its best."""
        return self._settled_share(self.exact)

    @property
    def settled_clean_share(self):
        """Seen with no loss beyond the slack, where the machine ran at its best."""
        return self._settled_share(self.clean)

    def length_error(self, ticks_per_ns):
        """Median, over the found injections, of the loss seen less the
        injection's whole length (due to exit), in us."""
        inj = self.injections
        err = (self.lost - (inj["exit"] - inj["due"]))[self.found]
        return float(np.median(err)) / ticks_per_ns / 1e3 if len(err) else float("nan")


def load_meta(prefix):
    prefix = Path(prefix)
    return json.loads(prefix.with_suffix(".json").read_text())


def participants(meta):
    """The per-thread (FWQ, FTQ) or per-rank (P-SNAP, selfish) rows."""
    return meta["ranks"]


def overhead_ticks(meta):
    """How much longer than due..exit an injection looks to the interrupted
    code (the interrupt a little ahead of the due time, the return after the
    exit), as the injector measured it in the run."""
    return meta["inject"]["overhead_ns"] * meta["ticks_per_ns"]


def load_injections(directory, row):
    text = part_bytes(directory, row["injections_file"], row.get("injections_file_range"))
    # a rank that ended before its first injection was due logged none
    d = (np.loadtxt(io.BytesIO(text), dtype=np.int64, ndmin=2) if text.strip()
         else np.empty((0, 4), dtype=np.int64))
    return {"due": d[:, 0], "entry": d[:, 1], "exit": d[:, 2], "cpu": d[:, 3]}


def schedule_like(injections, injected_row, row):
    """The period, phase and length of injections (from a run described by
    injected_row), laid on another run's time line (row): what a run without
    injection is matched against. Each event as if served the moment it was
    due, for the median busy wait: an injection due while other work held
    the CPU is served late, and on a machine busy half the time the median
    due-to-exit would be that work's length, not the injection's."""
    due = injections["due"]
    period = float(np.median(np.diff(due)))
    length = float(np.median(injections["exit"] - injections["entry"]))
    first = row["start_tick"] + (due[0] - injected_row["start_tick"]) % period
    times = np.arange(first, row["end_tick"] - length, period)
    return {"due": times, "entry": times, "exit": times + length,
            "cpu": np.full(len(times), -1)}


def local_quantile(values, window=51, q=0.5):
    """Each value's level among its neighbours: the q-quantile of the window
    around it (slid in from the ends), so a change of speed that lasts is
    not read as noise. NaN values are left out; a window of nothing else
    gets the run's level."""
    v = np.asarray(values, dtype=float)
    n, w = len(v), min(window, len(v))
    lo = np.clip(np.arange(n) - window // 2, 0, n - w)
    windows = np.lib.stride_tricks.sliding_window_view(v, w)[lo]
    if not np.isnan(v).any():
        # the same as nanquantile's, forty times as fast
        return np.quantile(windows, q, axis=1)
    empty = np.isnan(windows).all(axis=1)
    if empty.any():
        windows[empty] = np.nanquantile(v, q)
    return np.nanquantile(windows, q, axis=1)


def local_median(values, window=51):
    return local_quantile(values, window, 0.5)


def above(levels, best):
    """How far each local level lies above the machine's best."""
    return np.clip(levels - best, 0, None)


# The share of a window's samples that the noise may hit and still leave the
# level of an undisturbed sample readable (fixed_work_timeline).
UNDISTURBED = 0.1


def back_to_back(durations, row):
    """Intervals of samples that tile the run (one timer read ends a sample
    and starts the next) from the thread's start tick, the loop's first
    timer read."""
    d = np.asarray(durations, dtype=float)
    start = row["start_tick"] + np.cumsum(d) - d
    return start, start + d


def fixed_work_timeline(times, row, timer_read_ticks):
    """A fixed work's samples (FWQ's, P-SNAP's), in ticks: a sample's loss is what it took beyond an undisturbed sample near
    it: the low decile of its neighbours, not their median, which noise in
    most of them would lift (and so hide part of a detour; noise must only
    ever add). Resolution: the spread of the undisturbed samples (low decile
    to low quartile) on each side, and a timer read at each edge."""
    start, end = back_to_back(times, row)
    floor = local_quantile(times, q=UNDISTURBED)
    spread = np.median(local_quantile(times, q=0.25) - floor)
    # the fastest sample is what the machine can do (noise only adds): a
    # stretch slowed down, or a whole run, lies above it
    best = times.min()
    return Timeline(start, end, times - floor, 4 * spread + 2 * timer_read_ticks,
                    above(floor, best), above(local_median(times), best))


def fixed_time_timeline(counts, ends, row, timer_read_ticks):
    """The work counted in a fixed time (FTQ's quanta): a quantum's loss is its length less the time its count of work
    takes at the usual rate (the quantum ends at the first timer read past
    the grid, so a detour over the edge makes it long and the next short).
    Resolution: one unit of work and its timer read at each end."""
    ends = np.asarray(ends, dtype=float)
    start = np.concatenate(([row["start_tick"]], ends[:-1]))
    length = ends - start
    counts = np.asarray(counts, dtype=float)
    # quanta without work (a stall, and the run catching up with the grid
    # after it, a timer read each) say nothing of the rate
    raw = np.where(counts > 0, length / np.maximum(counts, 1), np.nan)
    rate = local_median(raw)
    unit = float(np.median(rate))
    # a quantum holds each unit it counted whole, so no quantum is faster
    # than the work: the fastest one bounds what the usual rate can hide
    # of an injection, where the core is taken in slices shorter than a
    # quantum all run long (a rate's low quantile would then hold them)
    hidden = counts * above(rate, np.nanmin(raw))
    usual = counts * above(rate, np.quantile(rate, 0.05))
    return Timeline(start, ends, length - counts * rate, 2 * (unit + timer_read_ticks),
                    hidden, usual)


def detours_timeline(detours_ns, row, ticks_per_ns, min_iteration_ticks):
    """Recorded detours (the selfish detour's): each detour is an interval; its loss is its length less one
    iteration. Resolution: the threshold a detour must pass (9 iterations)."""
    d = np.asarray(detours_ns, dtype=float).reshape(-1, 2)
    start = row["start_tick"] + d[:, 0] * ticks_per_ns
    length = d[:, 1] * ticks_per_ns
    return Timeline(start, start + length, length - min_iteration_ticks,
                    10 * min_iteration_ticks, np.zeros(len(start)), np.zeros(len(start)))


def match(timeline, injections, overhead_ticks, accuracy=0.1, served=True):
    """Per injection, the loss the kernel saw in the intervals that overlap
    [due, exit], widened by the resolution; found when it reaches the busy
    wait (exit - entry) less the resolution and the background of the
    intervals the busy wait overlaps; exact when it is also within
    `accuracy` (relative) of exit - due, beyond the resolution and the
    injector's overhead around it (overhead_ticks, measured in each run, or
    the injection's own delivery time where that was longer),
    short of it by at most that background (for injections served: laid on
    a run without them, nothing was there for it to fall in). Settled where
    the usual loss around it is within that slack."""
    res = timeline.resolution
    order = np.argsort(timeline.start)
    start, end = timeline.start[order], timeline.end[order]

    def summed(values, a, b):
        # intervals are disjoint and ordered, so those overlapping [a, b] are a range
        cum = np.concatenate(([0.0], np.cumsum(values[order])))
        first = np.searchsorted(end, a, side="right")
        return cum[np.maximum(np.searchsorted(start, b, side="left"), first)] - cum[first]

    seen = summed(np.clip(timeline.lost, 0, None), injections["due"] - res,
                  injections["exit"] + res)
    hidden = summed(timeline.background, injections["entry"], injections["exit"]) * served
    around = summed(timeline.usual, injections["due"] - res, injections["exit"] + res)
    busy = injections["exit"] - injections["entry"]
    whole = injections["exit"] - injections["due"]
    found = seen >= busy - res - hidden
    # the return to the interrupted code, after the exit tick, costs about
    # what this injection's own delivery did (entry - due, in the log), a
    # kernel entry and exit each, where that is more than the overhead
    # measured at a quiet moment of the start; a delivery held up by other
    # work on the CPU says nothing of the return, hence at most half the
    # busy wait
    back = np.maximum(np.minimum(injections["entry"] - injections["due"], busy / 2),
                      overhead_ticks)
    slack = accuracy * whole + back + res
    exact = found & (seen <= whole + slack) & (seen >= whole - slack - hidden)
    return Match(found, exact, seen <= slack, around <= slack, seen, injections)


def timeline_of(directory, meta, row):
    """The time line of one thread or rank of a run, by its kernel."""
    directory = Path(directory)
    tpn = meta["ticks_per_ns"]
    read = meta["calibration"]["timer_read_ns"] * tpn
    # its data files' text by kind: files of its own, or its ranges of its node's
    info = KERNELS.get(meta["kernel"])
    assert info is not None, \
        f"the ground truth knows no kernel {meta['kernel']!r} (kernels.json: {sorted(KERNELS)})"
    text = [io.BytesIO(t) for t in data_bytes(directory, row).values()]
    if info["loss"] == "detours":
        return detours_timeline(np.loadtxt(text[0], ndmin=2), row, tpn, row["min_iteration_ticks"])
    if info["fixed"] == "time":
        return fixed_time_timeline(np.loadtxt(text[0], ndmin=1),
                                   np.loadtxt(text[1], dtype=np.int64, ndmin=1), row, read)
    per_tick = {"ticks": 1.0, "ns": tpn}.get(info["value_unit"])
    assert info["fixed"] == "work" and per_tick is not None, \
        f"{meta['kernel']}: the ground truth has no time line for fixed={info['fixed']!r}, " \
        f"loss={info['loss']!r}, value_unit={info['value_unit']!r}"
    return fixed_work_timeline(np.loadtxt(text[0], ndmin=1) * per_tick, row, read)


# The fewest places of the schedule, where the machine ran at its best in a
# run without injection, that "under a tenth" is read from: a tenth of
# fewer is a handful of detours, which a burst of the machine's own makes.
SETTLED_PLACES = 50

# How many times as many of the schedule's settled places an injected run
# must show exact as a run without injection, where only the machine's own
# detours can be of just that length at just that time. How rarely the
# matching is fooled by detours of other lengths and times is asserted on
# synthetic time lines (test_ground_truth.py), not on this day's machine.
APART = 5


def check_injected_run(noisy_prefix, quiet_prefix, period_us):
    """Matches each participant of an injected run to its injections and a
    run without injection to the same schedule; returns (row, match,
    quiet match) per participant, after the checks every kernel shares:
    every injection served is logged, on the participant's CPU, once a
    period; the busy wait of 95% is found in the kernel's data at its time;
    their whole length, no more, in at least half as many as the run without
    injection shows nothing at the same places (the machine's own noise in
    the same sample can only add to an injection: it makes fewer exact,
    never fewer found, and how many it spoils is what the quiet run sees);
    without injection, where the machine ran at its best, under 1/APART as
    many places look like it (a detour of the machine's own of just that
    length at just that time) as with it: that last check, which can say
    "cannot tell today", is check_injections_stand_out's, for the test to
    call once it has asserted everything else."""
    noisy, quiet = Path(noisy_prefix), Path(quiet_prefix)
    meta, qmeta = load_meta(noisy), load_meta(quiet)
    over = overhead_ticks(meta)
    out = []
    for row, qrow in zip(participants(meta), participants(qmeta)):
        inj = load_injections(noisy.parent, row)
        assert row["injections_logged"] == row["injections"] == len(inj["due"]), row
        assert (inj["cpu"] == row["cpu"]).all(), (row["cpu"], np.unique(inj["cpu"]))
        assert (inj["due"] <= inj["entry"]).all() and (inj["entry"] <= inj["exit"]).all()
        gaps_us = np.diff(inj["due"]) / meta["ticks_per_ns"] / 1e3
        assert np.median(gaps_us) == pytest.approx(period_us, rel=1e-3)
        m = match(timeline_of(noisy.parent, meta, row), inj, over)
        q = match(timeline_of(quiet.parent, qmeta, qrow), schedule_like(inj, row, qrow), over,
                  served=False)
        report = (row["rank"], m.recall, m.exact_share, q.clean_share,
                  q.settled_exact_share, m.length_error(meta["ticks_per_ns"]))
        assert m.recall >= 0.95, report
        assert m.exact_share >= 0.5 * q.clean_share, report
        out.append((row, m, q))
    return out


def check_injections_stand_out(out):
    """The day-dependent end of check_injected_run's checks, for a test to
    call after everything else it asserts: without injection, where the
    machine ran at its best, under 1/APART as many places look like an
    injection as with it, or the test cannot tell today."""
    for row, m, q in out:
        if q.settled.sum() < SETTLED_PLACES:
            cannot_tell(f"rank {row['rank']}: the machine ran at its best at {q.settled.sum()} "
                        f"of the {len(q.settled)} places of the injections' schedule in the "
                        f"run without them, under {SETTLED_PLACES}: what it alone makes look "
                        f"like an injection cannot be told from what it makes everywhere")
        alone, clean = q.settled_exact_share, q.settled_clean_share
        if APART * alone >= clean:
            cannot_tell(f"rank {row['rank']}: without injection, the machine alone made "
                        f"{alone:.1%} of the {q.settled.sum()} places of the schedule where "
                        f"it ran at its best look like an injection and left {clean:.1%} "
                        f"clean, about where an injected run can show one exact: not "
                        f"{APART} times as many")
        assert alone < m.exact_share / APART, (
            row["rank"], alone, clean, m.exact_share, q.settled.mean())



def speed_constants():
    """The split's constants, read from their one definition,
    src/lib/system/speed.h's #defines."""
    text = (ROOT / "src" / "lib" / "system" / "speed.h").read_text()
    return {name: float(value) for name, value in
            re.findall(r"^#define (NB_\w+) ([0-9.e]+)", text, flags=re.M)}


SPEED = speed_constants()
THRESHOLD_NS, WINDOW_NS = SPEED["NB_STOLEN_THRESHOLD_NS"], SPEED["NB_USUAL_WINDOW_NS"]
BLOCKS, NEIGHBOURS = int(SPEED["NB_USUAL_BLOCKS"]), int(SPEED["NB_NEIGHBOURS"])
BEST_QUANTILE = SPEED["NB_BEST_QUANTILE"]
HIDDEN = SPEED["NB_RESOLUTION_SDS"] * SPEED["NB_SD_PER_MAD"]  # a spread's sds, in MADs


def speed_split(x, ideal, ticks_per_ns):
    """The kernels' split of fixed-work samples (ticks, in time order) into
    what the system stole and the work's slowdown (src/lib/system/speed.c),
    sample by sample, so that a test can both check the kernel's totals and
    see which samples the injected events fell in. Returns (usual time,
    stolen mask, totals as the kernel's JSON names them)."""
    x = np.asarray(x, dtype=float)
    block = WINDOW_NS / BLOCKS * ticks_per_ns
    ends, t = [], 0.0
    for i, v in enumerate(x):
        t += v
        if t >= block:
            ends.append(i + 1)
            t = 0.0
    if not ends or ends[-1] < len(x):
        if ends and t < block / 2:
            ends[-1] = len(x)
        else:
            ends.append(len(x))
    starts = [0] + ends[:-1]
    medians = np.array([np.median(x[a:b]) for a, b in zip(starts, ends)])
    k, half = len(medians), BLOCKS // 2
    usual_of_block = np.empty(k)
    for j in range(k):
        w = min(k, BLOCKS)
        lo = min(max(j - half, 0), k - w)
        usual_of_block[j] = np.median(medians[lo:lo + w])
    best = np.sort(usual_of_block)[max(int(np.ceil(BEST_QUANTILE * k)), 1) - 1]
    window = np.repeat(usual_of_block, np.diff([0] + ends))
    # the resolution: three robust sds of the blocks' typical distance
    # from the window's usual time; a coarse probe counts only past it
    mad = np.median([np.median(np.abs(x[a:b] - u))
                     for a, b, u in zip(starts, ends, usual_of_block)])
    counted = max(THRESHOLD_NS * ticks_per_ns, HIDDEN * mad)
    # the NEIGHBOURS samples either side, itself left out: their median
    # where slower is the usual time, their spread the least that counts
    padded = np.concatenate([np.full(NEIGHBOURS, np.nan), x, np.full(NEIGHBOURS, np.nan)])
    near = np.delete(np.lib.stride_tricks.sliding_window_view(padded, 2 * NEIGHBOURS + 1),
                     NEIGHBOURS, axis=1)
    near_median = np.nanmedian(near, axis=1)
    spread = np.nanmedian(np.abs(near - near_median[:, None]), axis=1)
    usual = np.maximum(window, near_median)
    excess = x - usual
    stolen = excess > np.maximum(counted, HIDDEN * spread)
    total = x.sum()
    figures = {
        "stolen_percent": 100 * excess[stolen].sum() / total,
        "slowdown_percent": 100 * np.clip(usual - best, 0, None).sum() / total,
        "lost_percent": 100 * (x - ideal).sum() / total,
    }
    return usual, stolen, figures


def covered_by(start, end, intervals):
    """Per interval [start[i], end[i]), the time the given intervals (an
    (n, 2) array of start and end, in ticks) cover of it."""
    out = np.zeros(len(start))
    for a, b in intervals:
        i0 = np.searchsorted(end, a, side="right")
        i1 = np.searchsorted(start, b, side="left")
        for i in range(i0, i1):
            out[i] += max(0.0, min(b, end[i]) - max(a, start[i]))
    return out
