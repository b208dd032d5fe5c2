"""What a run leaves: Sequoia-format data files, the JSON, honest summaries."""
import json
import os
import subprocess

import numpy as np
import pytest
from nbtest import ANY_KERNEL, KERNELS, REPORT_R, SAMPLING, WORK_KINDS, quick_args
from nbtest.kernel_files import load_run

NCPUS = len(os.sched_getaffinity(0))


def test_a_single_threaded_run_names_its_files_as_the_sequoia_tools(run, tmp_path):
    """A run without -t writes PREFIX_<suffix> of each of its kernel's
    files, as the Sequoia tools do; with -t, even -t 1, each thread's files
    carry its number. The JSON names what was written (a run's histograms
    of each rank too, where it writes them), and the report reads it."""
    want = []
    for kernel in KERNELS:
        for prefix, threads in ((kernel, []), (f"{kernel}_t1", ["-t", 1])):
            done = run(kernel, *threads, *quick_args(kernel), "-o", prefix)
            assert done.returncode == 0, done.stderr
            files = [f"{prefix}{'_0' if threads else ''}_{f['suffix']}"
                     for f in KERNELS[kernel]["files"]]
            meta = json.loads((tmp_path / f"{prefix}.json").read_text())
            assert meta["ranks"][0]["files"] == files
            want += [f"{prefix}.json", *files]
            if "rank_histograms" in meta:
                named = meta["rank_histograms"]
                want += [named["file_name"].replace("{node}", str(n))
                         for n in range(named["nodes"])]
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(want), names
    done = subprocess.run(["Rscript", REPORT_R, tmp_path], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]


def test_cpus_option_pins(run, tmp_path):
    last = max(os.sched_getaffinity(0))
    res = run(ANY_KERNEL, "--cpus", last, *quick_args(ANY_KERNEL), "-o", "p")
    assert res.returncode == 0, res.stderr
    meta = json.loads((tmp_path / "p.json").read_text())
    assert [t["cpu"] for t in meta["ranks"]] == [last]


@pytest.mark.parametrize("work", WORK_KINDS)
def test_every_work_kind_runs(run, tmp_path, work):
    for kernel in SAMPLING:
        res = run(kernel, "--work", work, *quick_args(kernel), "-o", f"{kernel}_{work}")
        assert res.returncode == 0, res.stderr
        meta = json.loads((tmp_path / f"{kernel}_{work}.json").read_text())
        assert meta["work"] == work and all(r["samples"] > 0 for r in meta["ranks"])
        if "ideal" in KERNELS[kernel]:
            # calibrated to its ideal (P-SNAP): a count of loops each rank
            assert all(r["count"] > 0 for r in meta["ranks"]), kernel
        else:
            # one increment and its loop take less than a tick on a fast core
            assert meta["ticks_per_work_loop_min"] > 0.1, kernel


def test_noise_info(bin_dir):
    res = subprocess.run([bin_dir / "noise-info", "--json"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    info = json.loads(res.stdout)
    assert info["ticks_per_ns"] > 0 and info["timer_read_ns"] > 0
    assert info["timer_resolution_ns"] > 0 and info["min_measurable_ns"] > info["timer_read_ns"]
    # the timer read as minimum and median, fenced and as selfish reads it
    assert 0 < info["timer_read_min_ticks"] <= info["timer_read_median_ticks"]
    assert 0 < info["unfenced_read_min_ticks"] <= info["unfenced_read_median_ticks"]
    assert info["timer_read_mean_ticks"] == info["timer_read_ticks"]
    assert info["cpus_allowed"] == len(os.sched_getaffinity(0))
    assert "multiiter" in info["ticks_per_work_loop"]
    res = subprocess.run([bin_dir / "noise-info"], capture_output=True, text=True)
    assert res.returncode == 0 and "timer read:" in res.stdout and "ns" in res.stdout
    res = subprocess.run([bin_dir / "noise-info", "--ticks-per-ns", "2.5", "--json"],
                         capture_output=True, text=True)
    info = json.loads(res.stdout)
    assert info["ticks_per_ns"] == 2.5 and info["ticks_per_ns_source"] == "option"


@pytest.mark.parametrize("kernel", KERNELS)
def test_stretches_are_the_data_files(kernel, run, tmp_path):
    """Each participant's stretches (stretches.h): one width for the whole
    run that holds its longest participant's measurement, and each stretch
    the samples of the data files that ended in it (selfish: detours that
    began in it, with their time beyond an ordinary iteration)."""
    info = KERNELS[kernel]
    # a kernel that records detours records nearly every iteration at 101%:
    # many detours, on any machine, to place in the stretches
    many = ["--threshold", 101] if info["loss"] == "detours" else []
    res = run(kernel, "-t", 0, *quick_args(kernel), *many, "-o", kernel)
    assert res.returncode == 0, res.stderr
    meta, threads = load_run(tmp_path / kernel)
    widths = {e["stretches"]["width_s"] for e in meta["ranks"]}
    assert len(widths) == 1, widths
    width = widths.pop()
    longest = max((e["end_tick"] - e["start_tick"]) / e["ticks_per_ns"] / 1e9
                  for e in meta["ranks"])
    assert width * 100 == pytest.approx(longest, rel=1e-9)
    for entry, data in zip(meta["ranks"], threads):
        tpn = entry["ticks_per_ns"]
        kinds = [f["suffix"].removesuffix(".dat") for f in info["files"]]
        if info["loss"] == "detours":
            d = data[kinds[0]].reshape(-1, 2)
            value = (d[:, 1] - entry["min_iteration_ns"]).astype(float)
            end_s = d[:, 0] / 1e9
        elif info["fixed"] == "time":
            value = data[kinds[0]].astype(float)
            end_s = (data[kinds[1]] - meta["start_tick"]) / tpn / 1e9
        else:
            value = data[kinds[0]].astype(float)
            end_s = np.cumsum(value) / (tpn if info["value_unit"] == "ticks" else 1) / 1e9
        got = entry["stretches"]
        k = np.clip(np.ceil(end_s / width) - 1, 0, 99).astype(int)
        n = np.bincount(k, minlength=100)
        total = np.bincount(k, weights=value, minlength=100)
        used = len(got["n"])
        assert sum(got["n"]) == len(value)
        # the files round P-SNAP's and selfish's ticks to ns: a sample within
        # that rounding of a stretch's edge may fall either side, and moves
        # one count from a stretch to its neighbour (P-SNAP's times are a
        # running sum of rounded iterations: half a ns each)
        moved = np.abs(np.array(got["n"]) - n[:used]).sum()
        in_ns = info["value_unit"] == "ns"
        tiled_ns = in_ns and info["loss"] != "detours"
        rounding_s = 1e-9 * (1 + 0.5 * np.arange(1, len(value) + 1) if tiled_ns else 1)
        near_edge = np.abs(end_s - np.round(end_s / width) * width) <= rounding_s
        assert moved <= (2 * near_edge.sum() if in_ns else 0), \
            (moved, near_edge.sum(), got["n"], n.tolist())
        if moved == 0:
            assert got["sum"] == pytest.approx(total[:used].tolist(), rel=1e-6, abs=len(value)), \
                (got["sum"], total.tolist())
        assert n[used:].sum() == 0


