"""What the system stole told apart from the work's slowdown, for a kernel
of fixed work whose samples are on record (test_fwq.py, test_psnap.py call
these with their own lengths).

A preemption finer than a sample: noise-slowdown takes each measured CPU in
50 us slices (50 us apart) for 250 ms of every second, at real-time
priority, and logs when each slice took the CPU and gave it back. Samples
of a millisecond or two hold many slices each: no median can tell them
from the work running slower, so the kernel counts them as slowdown, and
none of their time is lost in silence. A detour on record: --inject,
logged by the handler, must be seen as stolen. The kernel's totals are
checked against the same split done here sample by sample
(nbtest/ground_truth.py), which says where each logged event fell: the
machine's own noise elsewhere in the run then changes nothing that is
asserted.
"""
import json

import numpy as np
import pytest
from nbtest import KERNELS
from nbtest.competitor import beside_competitors
from nbtest.ground_truth import (BEST_QUANTILE, back_to_back, covered_by, load_injections,
                                 speed_split)


def slowed(bin_dir, tmp_path, kernel_cmd):
    """kernel_cmd beside 50 us slices 50 us apart, 250 ms of every second."""
    return beside_competitors(bin_dir, tmp_path, kernel_cmd, "1000:250", "50:50")


def check_split(entry, x, ideal, tpn):
    """The kernel's figures are the split of its samples; returns it."""
    usual, stolen, figures = speed_split(x, ideal, tpn)
    for key, value in figures.items():
        assert entry[key] == pytest.approx(value, abs=0.05), (key, entry, figures)
    # its parts add up to its whole
    assert entry["lost_percent"] == pytest.approx(
        entry["stolen_percent"] + entry["slowdown_percent"] + entry["variation_percent"],
        abs=1e-6)
    return usual, stolen


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
    done, slices = slowed(bin_dir, tmp_path, [*kernel_args, "-o", "slow"])
    assert done.returncode == 0, done.stderr
    meta = json.loads((tmp_path / "slow.json").read_text())
    tpn = meta["ticks_per_ns"]
    for e in meta["ranks"]:
        x, ideal = samples_of(tmp_path, meta, e)
        usual, stolen = check_split(e, x, ideal, tpn)
        start, end = back_to_back(x, e)
        taken = covered_by(start, end, slices[e["cpu"]][:, [0, 2]])
        hit = taken > 0
        report = (e["cpu"], taken.sum() / (end[-1] - start[0]), e["stolen_percent"],
                  e["slowdown_percent"])
        assert taken.sum() > 0.04 * (end[-1] - start[0]), report
        # the slices' time is in the samples they hit, beyond the work's
        # best: as slowdown (their usual time follows them) or stolen, at
        # least 90% of what the competitor logged; none lost in silence
        best = np.sort(usual)[max(int(np.ceil(BEST_QUANTILE * len(usual))), 1) - 1]
        seen = (np.clip(usual - best, 0, None) + np.where(stolen, x - usual, 0))[hit].sum()
        assert seen >= 0.9 * taken.sum(), (report, seen / taken.sum())
        assert e["slowdown_percent"] > 0.5 * 100 * taken.sum() / x.sum(), report


def check_detours_as_detours(done, tmp_path):
    """done: a run on every CPU with 1 ms injected every 10 ms, prefix
    noisy, of samples well under a millisecond."""
    assert done.returncode == 0, done.stderr
    meta = json.loads((tmp_path / "noisy.json").read_text())
    tpn = meta["ticks_per_ns"]
    over = meta["inject"]["overhead_ns"] * tpn
    for e in meta["ranks"]:
        x, ideal = samples_of(tmp_path, meta, e)
        usual, detour = check_split(e, x, ideal, tpn)
        start, end = back_to_back(x, e)
        inj = load_injections(tmp_path, e)
        # the sample each injection's exit fell in
        hit = np.searchsorted(start, inj["exit"], side="right") - 1
        length = (inj["exit"] - inj["due"]).astype(float)
        report = (e["cpu"], detour[hit].mean(), e["stolen_percent"], e["slowdown_percent"])
        # 1 ms every 10 ms in samples of well under 1 ms: stolen each
        assert detour[hit].mean() >= 0.9, report
        # the kernel counts its length as stolen, not as slowdown: the
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
