"""Running slow told apart from detours, each reported as what it is, for
a kernel of fixed work whose samples are on record (test_fwq.py,
test_psnap.py call these with their own lengths).

A slowdown on record: noise-slowdown takes each measured CPU in 50 us slices
(50 us apart) for 250 ms of every second, at real-time priority, and logs
when each slice took the CPU and gave it back. Samples of a millisecond or
two must see those stretches as running slow, not as detours. A detour on
record: --inject, logged by the handler, must be seen as a detour. The
kernel's totals are checked against the same split done here sample by
sample (nbtest/ground_truth.py), which says where each logged event fell:
the machine's own noise elsewhere in the run then changes nothing that is
asserted.
"""
import json

import numpy as np
import pytest
from nbtest import KERNELS, kernels_where
from nbtest.competitor import beside_competitors
from nbtest.ground_truth import back_to_back, covered_by, load_injections, speed_split

# what a slice costs is measured with the loop that records every detour
YARDSTICK = kernels_where(loss="detours")[0]


def slowed(bin_dir, tmp_path, kernel_cmd):
    """kernel_cmd beside 50 us slices 50 us apart, 250 ms of every second."""
    return beside_competitors(bin_dir, tmp_path, kernel_cmd, "1000:250", "50:50")


def slice_cost(bin_dir, tmp_path):
    """Per CPU, what a slice costs a loop that reads the timer, over what the
    competitor logged (due to end): the switch back to the loop comes after
    a slice's end. Measured in the same session with the selfish detour
    loop: the median, over the slices that are a detour of their own (it
    starts after the slice before ended and ends before the next one is due:
    no other slice ran into it), of the detour's length over the slice's."""
    done, slices = slowed(bin_dir, tmp_path, [bin_dir / YARDSTICK, "-t", 0, "--seconds", 2,
                                              "--detours", 2000000, "-o", "cost"])
    assert done.returncode == 0, done.stderr
    meta = json.loads((tmp_path / "cost.json").read_text())
    tpn, cost = meta["ticks_per_ns"], {}
    for r in meta["ranks"]:
        d = np.loadtxt(tmp_path / r["files"][0], ndmin=2)
        start = r["start_tick"] + d[:, 0] * tpn
        end = start + d[:, 1] * tpn
        sl = slices[r["cpu"]]
        sl = sl[(sl[:, 0] >= r["start_tick"]) & (sl[:, 2] <= r["end_tick"])]
        next_due = np.append(sl[1:, 0], np.inf)
        last_end = np.insert(sl[:-1, 2], 0, 0)
        i = np.searchsorted(start, sl[:, 2]) - 1  # the detour holding the slice's end
        i = np.maximum(i, 0)
        alone = (start[i] > last_end) & (end[i] >= sl[:, 2]) & (end[i] < next_due)
        ratio = (end[i] - start[i])[alone] / (sl[alone, 2] - sl[alone, 0])
        assert alone.sum() > 0.2 * len(sl), (r["cpu"], alone.sum(), len(sl))
        cost[r["cpu"]] = float(np.median(ratio))
        assert 1 <= cost[r["cpu"]] < 2, cost
    return cost


def check_split(entry, x, ideal):
    """The kernel's figures are the split of its samples; returns it."""
    usual, detour, slow, figures = speed_split(x, ideal)
    for key, value in figures.items():
        assert entry[key] == pytest.approx(value, abs=0.05), (key, entry, figures)
    return usual, detour, slow


def samples_of(tmp_path, meta, entry):
    """The entry's samples in ticks, and their ideal: the catalogue's ideal
    figure where the kernel has one, else the fastest sample."""
    described = KERNELS[meta["kernel"]]
    tpn = meta["ticks_per_ns"]
    x = np.loadtxt(tmp_path / entry["files"][0])
    if described["value_unit"] == "ns":
        x = x * tpn
    if "ideal" in described:
        return x, entry[described["ideal"]] * 1e3 * tpn
    return x, x.min()


def check_running_slow(bin_dir, tmp_path, kernel_args):
    """kernel_args: the binary and its arguments for samples of a
    millisecond or two on every CPU."""
    cost = slice_cost(bin_dir, tmp_path)
    done, slices = slowed(bin_dir, tmp_path, [*kernel_args, "-o", "slow"])
    assert done.returncode == 0, done.stderr
    meta = json.loads((tmp_path / "slow.json").read_text())
    for e in meta["ranks"]:
        x, ideal = samples_of(tmp_path, meta, e)
        usual, detour, slow = check_split(e, x, ideal)
        start, end = back_to_back(x, e)
        taken = covered_by(start, end, slices[e["cpu"]][:, [0, 2]])
        as_detours = (x - usual)[detour & (taken > 0)].sum()
        report = (e["cpu"], taken.sum() / (end[-1] - start[0]), cost[e["cpu"]],
                  taken[slow].sum() / taken.sum(), as_detours / taken.sum())
        assert taken.sum() > 0.04 * (end[-1] - start[0]), report
        # the competitor's time is in samples that ran slow...
        assert taken[slow].sum() >= 0.9 * taken.sum(), report
        # ...and what the kernel counts as slow there is what the competitor
        # took, and what switching to it and back cost: none of it went to
        # detours (a slice more or less in a sample, or the machine's own
        # detour there, is one: as_detours in the report). The machine's own
        # noise short of a detour runs on in the stretches as it does outside
        # them: its rate there, in the same run, is allowed on top.
        kept = np.where(detour, usual, x) - ideal
        outside = taken == 0
        rate = kept[outside].sum() / x[outside].sum()
        lost = kept[slow & (taken > 0)].sum()
        at_most = 1.1 * cost[e["cpu"]] * taken.sum() + rate * x[taken > 0].sum()
        # at least the competitor's time, but in a sample the machine's own
        # detour made one, only up to that sample's usual level: its excess
        # over it is the detour's, slices and all
        shown = np.where(detour, np.minimum(taken, np.maximum(usual - ideal, 0)), taken).sum()
        assert 0.9 * shown <= lost <= at_most, (report, lost / taken.sum(), shown / taken.sum(),
                                                rate)
        assert e["slow_factor"] > 1.25, report


def check_detours_as_detours(done, tmp_path):
    """done: a run on every CPU with 1 ms injected every 10 ms, prefix
    noisy, of samples well under a millisecond."""
    assert done.returncode == 0, done.stderr
    meta = json.loads((tmp_path / "noisy.json").read_text())
    over = meta["inject"]["overhead_ns"] * meta["ticks_per_ns"]
    for e in meta["ranks"]:
        x, ideal = samples_of(tmp_path, meta, e)
        usual, detour, slow = check_split(e, x, ideal)
        start, end = back_to_back(x, e)
        inj = load_injections(tmp_path, e)
        # the sample each injection's exit fell in
        hit = np.searchsorted(start, inj["exit"], side="right") - 1
        length = (inj["exit"] - inj["due"]).astype(float)
        report = (e["cpu"], detour[hit].mean(), e["detour_percent"], e["slow_percent"])
        # 1 ms every 10 ms in samples of well under 1 ms: a detour each
        assert detour[hit].mean() >= 0.9, report
        # the kernel counts its length as detour, not as running slow: the
        # excess of the hit samples over their usual level, against what the
        # injections took (and up to the injector's overhead each); the
        # machine's own detours come on top at the rate they have elsewhere
        # in the run
        others = np.ones(len(x), dtype=bool)
        others[hit] = False
        rate = (x - usual)[others & detour].sum() / x[others].sum()
        seen = (x - usual)[hit][detour[hit]].sum()
        wanted = length[detour[hit]].sum()
        at_most = 1.1 * (wanted + over * detour[hit].sum()) + rate * x[hit].sum()
        assert 0.9 * wanted <= seen <= at_most, (report, seen / wanted, rate)
        assert e["steal_ms"] is None or e["steal_ms"] >= 0
