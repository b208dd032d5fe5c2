"""What the tests check of the selfish detour's runs alone."""
import numpy as np


# selfish reads the time limit once a chunk of this many iterations
# (src/work/selfish_loop.c)
SELFISH_CHUNK = 4096


def check_selfish_span(rank, detours, seconds, threshold_percent):
    """A selfish rank stopped by its time limit measured from the run's start
    to its loop's last read: at least `seconds`, every detour (`start_ns
    length_ns` rows) within it, so that they never add up to more than it,
    and past the limit by no more than the loop can go before it reads the
    limit again: two chunks of iterations no longer than the threshold (one,
    and one more after a growth of the store), the detours that ended past
    the limit, and the growth."""
    span_ns = rank["period_s"] * 1e9 + rank["unmeasured_ms"] * 1e6
    ends = detours[:, 0] + detours[:, 1] if len(detours) else np.zeros(0)
    # the files' ns are rounded to the nearest
    assert span_ns >= seconds * 1e9 - 1, rank
    assert ends.max(initial=0) <= span_ns + 1, (ends.max(), rank)
    assert rank["cpu_overhead_percent"] <= 100, rank
    threshold_ns = rank["min_iteration_ns"] * threshold_percent / 100
    past = detours[ends > seconds * 1e9, 1].sum() if len(detours) else 0
    assert span_ns - seconds * 1e9 <= 2 * SELFISH_CHUNK * threshold_ns + past + \
        rank["unmeasured_ms"] * 1e6 + len(detours) + 1, rank
