"""P-SNAP on every CPU, as threads, under mpirun and under srun."""
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from nbtest.ground_truth import check_injected_run, check_injections_stand_out
from nbtest.kernel_files import check_ranks_tables, json_histogram
from nbtest.launch import LAUNCHERS

NCPUS = len(os.sched_getaffinity(0))


def parse(stdout):
    """Per-rank histograms (header fields and bins) and the key=value lines."""
    hists, rows, summary = {}, [], None
    current = None
    for line in stdout.splitlines():
        if line.startswith("# "):
            rank, corr, total, host = line[2:].split()
            current = hists[int(rank)] = {"corr": float(corr), "total_us": float(total),
                                          "host": host, "bins": {}, "overflow": 0}
        elif line.startswith("overflow "):
            current["overflow"] = int(line.split()[1])
        elif line[:1].isdigit() and current is not None:
            t, n = line.split()
            current["bins"][float(t)] = int(n)
        elif line.startswith("rank kernel=psnap "):
            rows.append(dict(f.split("=", 1) for f in line.split()[1:]))
        elif line.startswith("psnap summary "):
            summary = dict(f.split("=", 1) for f in line.split()[2:])
    return hists, rows, summary


def test_the_json_histogram_is_the_sum_of_the_ranks(bin_dir, tmp_path):
    """The all-rank histogram the report draws is what the ranks counted:
    the sum of stdout's per-rank histograms, every iteration once, each in
    the bucket of its time in the rank's file."""
    cmd = [bin_dir / "psnap", "-t", "0", "-n", "400", "-g", "100", "--warmup-ms", "0", "-o", "p"]
    done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    hists, _, _ = parse(done.stdout)
    meta = json.loads((tmp_path / "p.json").read_text())
    bins, overflow = json_histogram(meta)
    summed = {}
    for h in hists.values():
        for t, n in h["bins"].items():
            summed[t] = summed.get(t, 0) + n
    assert bins == {t: n for t, n in summed.items() if n}
    assert overflow == sum(h["overflow"] for h in hists.values())
    assert sum(bins.values()) + overflow == 400 * NCPUS
    # the files' ns, binned here: the same counts but for iterations within a
    # ns of a bucket's edge, which the kernel binned from ticks
    h = meta["iteration_histogram"]
    us = np.concatenate([np.loadtxt(tmp_path / f"p_{r}_times.dat") for r in hists]) / 1e3
    inside = us[us < h["overflow_from_us"]]
    mine = np.bincount(((inside - h["first_us"]) // h["bucket_us"]).astype(int))
    theirs = np.array(h["counts"])
    n = max(len(mine), len(theirs))
    diff = np.abs(np.pad(mine, (0, n - len(mine))) - np.pad(theirs, (0, n - len(theirs)))).sum()
    near_edge = np.sum(np.abs(us / h["bucket_us"] - np.round(us / h["bucket_us"])) * h["bucket_us"] < 1e-3)
    assert diff <= 2 * near_edge and abs(len(us) - len(inside) - overflow) <= near_edge


def test_node_files_print_one_histogram_of_all_ranks(run, tmp_path):
    """With node files (beyond 4,096 ranks) the root prints no block a rank,
    however few: the histogram of every rank's iterations, as beyond 64."""
    done = run("psnap", "-t", "0", "-n", "200", "-g", "100", "--warmup-ms", "0", "--node-files",
               "-o", "p")
    assert done.returncode == 0, done.stderr
    assert not re.search(r"(?m)^(#rank|# \d+ |rank kernel=)", done.stdout)
    block = done.stdout.split(f"#all ranks={NCPUS}\n")[1].split("ranks kernel=psnap ")[0]
    assert sum(int(line.split()[1]) for line in block.splitlines()
               if not line.startswith("#")) == 200 * NCPUS
    check_ranks_tables(tmp_path / "p.json")


@pytest.mark.timing
@pytest.mark.parametrize("how", LAUNCHERS)
def test_psnap_finds_injected_noise(launch, tmp_path, how):
    quiet = launch(how, "psnap", "-n", 3000, "-o", "quiet")
    noisy = launch(how, "psnap", "-n", 3000, "--inject", "10000:500", "-o", "noisy")
    assert quiet.returncode == 0, quiet.stderr
    assert noisy.returncode == 0, noisy.stderr
    qhist, _, qsum = parse(quiet.stdout)
    hist, rows, summary = parse(noisy.stdout)
    assert int(summary["ranks"]) == NCPUS == len(rows) == len(hist)
    assert quiet.stdout.startswith("count = ") and ", time = " in quiet.stdout
    meta = json.loads((tmp_path / "noisy.json").read_text())
    assert meta["frontend"] == ("pthreads" if how == "threads" else "mpi")
    # what launched it: the MPI library, and under srun the Slurm job
    assert bool(meta["tuning"]["mpi_library"]) == (how != "threads")
    assert meta["tuning"]["slurm_job_id"].isdigit() == (how == "srun")
    assert sorted(r["cpu"] for r in meta["ranks"]) == sorted(os.sched_getaffinity(0))
    for rank in range(NCPUS):
        # every iteration is in the histogram, the long tail in the overflow bin
        assert sum(hist[rank]["bins"].values()) + hist[rank]["overflow"] == 3000
        times = np.loadtxt(tmp_path / f"noisy_{rank}_times.dat", dtype=np.int64)
        assert len(times) == 3000
        assert hist[rank]["total_us"] == pytest.approx(times.sum() / 1e3, rel=1e-6)
    tpn = meta["ticks_per_ns"]
    matched = check_injected_run(tmp_path / "noisy", tmp_path / "quiet", 10000)
    for row, m, _ in matched:
        # the rank's reported noise holds the busy waits its handler logged:
        # its ideal iteration is no longer than any, so their excess is in it
        busy_us = (m.injections["exit"] - m.injections["entry"]).sum() / tpn / 1e3
        reported = next(r for r in rows if int(r["rank"]) == row["rank"])
        assert float(reported["noise_percent"]) >= 100 * busy_us / row["total_time_us"], reported
    # the summary: the machine can only add to the injected 5 points
    assert float(summary["os_noise_percent"]) > 4.5
    # each rank's correlation with rank 0 is that of their iteration times
    rank0 = np.loadtxt(tmp_path / "quiet_0_times.dat")
    for rank, h in qhist.items():
        mine = np.loadtxt(tmp_path / f"quiet_{rank}_times.dat")
        assert h["corr"] == pytest.approx(np.corrcoef(mine, rank0)[0, 1], abs=1e-3), rank
    # the noise is measured against the fastest iteration, before or during the run
    ranks = json.loads((tmp_path / "quiet.json").read_text())["ranks"]
    for r in ranks:
        assert r["ideal_us"] == min(r["calibrated_us"], r["min_us"])
    ideal_s = np.mean([r["ideal_us"] for r in ranks]) * 3000 / 1e6
    assert float(qsum["calibration_time_s"]) == pytest.approx(ideal_s, abs=1e-3)
    assert float(qsum["mean_run_time_s"]) >= float(qsum["calibration_time_s"])
    check_injections_stand_out(matched)


@pytest.mark.skipif(NCPUS < 2, reason="pinned or not, one CPU is one CPU")
@pytest.mark.parametrize("pin", [True, False])
def test_no_pin_leaves_the_threads_to_the_os(bin_dir, tmp_path, pin):
    """Without MPI too: pinned, each measuring thread may run on its CPU
    only; with --no-pin, on every CPU the process may use."""
    cmd = [bin_dir / "psnap", "-t", "0", "-n", "100000", "-o", "p"] + ([] if pin else ["--no-pin"])
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(3)  # past the calibration: the threads are measuring
        allowed = [re.search(r"Cpus_allowed_list:\s*(\S+)", t.read_text()).group(1)
                   for t in Path(f"/proc/{proc.pid}/task").glob("*/status")]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
    mine = re.search(r"Cpus_allowed_list:\s*(\S+)", Path("/proc/self/status").read_text()).group(1)
    single = [a for a in allowed if re.fullmatch(r"\d+", a)]
    if pin:
        assert len(single) >= NCPUS, allowed
    else:
        assert not single and all(a == mine for a in allowed), allowed
    meta = json.loads((tmp_path / "p.json").read_text())
    assert all(r["cpu"] >= 0 for r in meta["ranks"]), meta["ranks"]
