"""Running slow is told apart from detours, each reported as what it is.

A slowdown on record: noise-slowdown takes each measured CPU in 50 us slices
(50 us apart) for 250 ms of every second, at real-time priority, and logs
when each slice took the CPU and gave it back. FWQ with samples of about two
milliseconds, and P-SNAP's 1 ms iterations, must see those stretches as
running slow, not as detours. A detour on record: --inject, logged by the
handler, must be seen as a detour. The kernel's totals are checked against
the same split done here sample by sample (tests/ground_truth.py), which
says where each logged event fell: the machine's own noise elsewhere in the
run then changes nothing that is asserted.
"""
import json

import numpy as np
import pytest
from nbtest.competitor import beside_competitors
from nbtest.ground_truth import back_to_back, covered_by, load_injections, speed_split

pytestmark = pytest.mark.timing


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
    done, slices = slowed(bin_dir, tmp_path, [bin_dir / "selfish", "-t", 0, "--seconds", 2,
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
    """The entry's samples in ticks, and their ideal."""
    tpn = meta["ticks_per_ns"]
    if meta["kernel"] == "fwq":
        x = np.loadtxt(tmp_path / entry["files"][0])
        return x, x.min()
    x = np.loadtxt(tmp_path / entry["files"][0]) * tpn
    return x, entry["ideal_us"] * 1e3 * tpn


@pytest.mark.parametrize("kernel", ["fwq", "psnap"])
def test_slowdown_is_reported_as_running_slow(bin_dir, tmp_path, kernel):
    args = ["-t", 0, "-w", 17, "-n", 2000] if kernel == "fwq" else ["-t", 0, "-n", 4000]
    cost = slice_cost(bin_dir, tmp_path)
    done, slices = slowed(bin_dir, tmp_path, [bin_dir / kernel, *args, "-o", "slow"])
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


def test_detours_are_reported_as_detours(run, tmp_path):
    done = run("fwq", "-t", 0, "-w", 14, "-n", 50000, "--inject", "10000:1000", "-o", "noisy")
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
