"""The matching of tests/ground_truth.py tells an injection from other
detours, on synthetic time lines whose every detour is planted: those of
the schedule's length at its places are found exact, those of another
length or at other times are not. The timing tests compare an injected run
with the machine's own detours of the day; this is what holds whatever the
day (docs/testing.md)."""
import numpy as np
import pytest
from nbtest.ground_truth import fixed_time_timeline, fixed_work_timeline, match, timeline_of

PERIOD = 2_000_000  # ticks: a schedule of 2 ms at a tick a ns
LENGTH = 70_000  # ticks: about the busy wait a 100 us injection logs, exit less entry
PLACES = 60
OFFSET = 10_000  # the first place, into the run
TIMER_READ = 50
OVERHEAD = 2_000  # the injector's, as a run measures it


def schedule():
    due = OFFSET + PERIOD * np.arange(PLACES, dtype=float)
    return {"due": due, "entry": due, "exit": due + LENGTH, "cpu": np.full(PLACES, -1)}


def fixed_work(detours, rng):
    """Samples of 10 us, up to 1% slower, back to back; a sample a detour
    begins in is longer by it."""
    run, sample = OFFSET + PERIOD * PLACES, 10_000
    durations, t, pending = [], 0.0, sorted(detours)
    while t < run:
        d = sample + rng.uniform(0, 100)
        while pending and pending[0][0] < t + d:
            d += pending.pop(0)[1]
        durations.append(d)
        t += d
    return fixed_work_timeline(np.array(durations), {"start_tick": 0}, TIMER_READ)


def fixed_time(detours, rng):
    """Quanta of 100 us ending at the first timer read past the grid, a unit
    of work 100 ticks; a detour takes its length of work from the quantum it
    falls in."""
    quantum, unit = 100_000, 100.0
    n = (OFFSET + PERIOD * PLACES) // quantum + 1
    ends = quantum * np.arange(1, n + 1) + rng.uniform(0, unit + TIMER_READ, n)
    starts = np.concatenate(([0.0], ends[:-1]))
    lost = np.zeros(n)
    for at, length in detours:
        lost[int(at // quantum)] += length
    counts = np.floor((ends - starts - lost) / unit)
    return fixed_time_timeline(counts, ends.astype(np.int64), {"start_tick": 0}, TIMER_READ)


@pytest.mark.parametrize("timeline", [fixed_work, fixed_time])
@pytest.mark.parametrize("shift, length, found, exact, clean", [
    (0, LENGTH, 1, 1, 0),              # the injection's length at its time: exact
    (0, 2 * LENGTH, 1, 0, 0),          # twice as long: found, not exact
    (0, LENGTH // 2, 0, 0, 0),         # half as long: not found
    (PERIOD // 2, LENGTH, 0, 0, 1),    # the length half a period off: nothing there
    (0, 0, 0, 0, 1),                   # no detour
])
def test_only_the_length_at_the_time_is_exact(timeline, shift, length, found, exact, clean):
    rng = np.random.default_rng(7)
    places = schedule()
    planted = [(at + shift, length) for at in places["due"]] if length else []
    m = match(timeline(planted, rng), places, OVERHEAD, served=False)
    assert m.settled.all()
    assert m.recall == found and m.exact_share == exact, (m.recall, m.exact_share)
    assert m.clean_share == clean, m.clean_share


def test_a_kernel_the_ground_truth_does_not_know_fails(tmp_path):
    """A new kernel is never read as another's time line without a word."""
    meta = {"kernel": "nosuchkernel", "ticks_per_ns": 1.0, "calibration": {"timer_read_ns": 20}}
    with pytest.raises(AssertionError, match="knows no kernel 'nosuchkernel'"):
        timeline_of(tmp_path, meta, {"rank": 0})
