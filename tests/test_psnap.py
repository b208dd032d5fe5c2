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
from nbtest import quick_args
from nbtest.bad_input import bad_input_test
from nbtest.ground_truth import check_injected_run, check_injections_stand_out
from nbtest.kernel_files import check_ranks_tables, json_histogram, load_run
from nbtest.launch import LAUNCHERS, mpi_env
from nbtest.sigterm import check_sigterm_keeps_samples
from nbtest.speed import check_running_slow

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


@pytest.mark.timing
def test_a_preemption_finer_than_a_sample_is_the_works_slowdown(bin_dir, tmp_path):
    """1 ms iterations against 50 us slices taken 50 us apart: too fine for
    the samples, so the work's slowdown, none of it lost in silence
    (nbtest/speed.py)."""
    check_running_slow(bin_dir, tmp_path, [bin_dir / "psnap", "-t", 0, "-n", 4000])


def test_seconds_sets_the_repetitions(run, tmp_path):
    """--seconds 2 of 1 ms iterations: 2,000 repetitions."""
    done = run("psnap", "-g", "1000", "--seconds", 2, "-o", "s")
    assert done.returncode == 0, done.stderr
    meta = json.loads((tmp_path / "s.json").read_text())
    assert [r["samples"] for r in meta["ranks"]] == [2000]


def test_psnap_stats_are_its_files(run, tmp_path):
    """P-SNAP measures ticks and writes ns: its stats, scaled to ns, are
    those of its files (each iteration rounded to the ns there)."""
    res = run("psnap", "-t", 0, "-n", 1000, "-g", 100, "-o", "p")
    assert res.returncode == 0, res.stderr
    meta, threads = load_run(tmp_path / "p")
    for entry, data in zip(meta["ranks"], threads):
        ns = data["times"].astype(float)
        s = entry["stats"]
        assert s["unit"] == "ns"
        assert s["min"] == pytest.approx(ns.min(), abs=0.5)
        assert s["max"] == pytest.approx(ns.max(), abs=0.5)
        assert s["mean"] == pytest.approx(ns.mean(), abs=0.5)
        assert s["std"] == pytest.approx(ns.std(ddof=1), rel=1e-3, abs=0.5)
        d = ns - ns.mean()
        m2 = (d ** 2).mean()
        assert s["kurtosis"] == pytest.approx((d ** 4).mean() / m2 ** 2, rel=1e-3)
        assert s["scaled_noise_mean"] == pytest.approx((ns.mean() - ns.min()) / ns.min(),
                                                       rel=1e-3, abs=1e-6)


@pytest.mark.scale
def test_many_ranks_print_one_histogram_of_every_iteration(many_ranks):
    """Beyond 64 ranks, one histogram of every rank's iterations, summed
    where the ranks ran: every iteration in it once, no block a rank, and
    the JSON's, which the report draws, the same one (test_many_ranks.py's
    run of the catalogue's quick arguments)."""
    done, directory = many_ranks("psnap", quick_args("psnap"))
    assert done.returncode == 0, done.stderr[-2000:]
    meta = json.loads((directory / "psnap.json").read_text())
    ranks = len(meta["ranks"])
    assert ranks > 64
    assert not re.search(r"(?m)^(#rank|# \d+ )", done.stdout)
    block = done.stdout.split(f"#all ranks={ranks}\n")[1].split("rank kernel=psnap ")[0]
    bins = [line for line in block.splitlines() if not line.startswith("#")]
    assert sum(int(line.split()[1]) for line in bins) == sum(r["samples"] for r in meta["ranks"])
    lines = dict(line.split() for line in bins)
    overflow = int(lines.pop("overflow", 0))
    assert json_histogram(meta) == ({float(t): int(n) for t, n in lines.items() if int(n)},
                                    overflow)


# its own options, bad: one clear line, a non-zero exit, no files
BAD = [
    (["-n", "0"], "-n 0"),
    (["-n", "-5"], "-n -5"),
    (["-g", "0"], "-g 0"),
    (["-c", "0"], "-c 0"),
    (["-o", "/nonexistent/p"], "/nonexistent/p"),
    (["-t", str(NCPUS + 1)], f"-t {NCPUS + 1}"),
    (["--bogus"], "--bogus"),
]

test_bad_input_fails_cleanly = bad_input_test("psnap", BAD)


@pytest.mark.parametrize("launcher", ["threads", "mpirun"])
def test_sigterm_keeps_samples(request, bin_dir, tmp_path, launcher):
    """100 warm-up repetitions, then 100 s of them cut 4 s in."""
    check_sigterm_keeps_samples(request, bin_dir, tmp_path, "psnap", launcher,
                                ["-n", "100000", "-w", "100"], "times", "samples")


def test_mpmd_ranks_asking_for_node_files_apart_write_their_own(bin_dir, tmp_path):
    """One MPI job whose ranks were given different options (an MPMD job):
    rank 0 asks for node files, injects and traces, rank 1 does none of it.
    A node's files are written by all its ranks together, so none of the
    data is: each rank writes files of its own, as asked, and the run
    completes. P-SNAP's histograms file, which every run writes a node,
    is the only node file."""
    psnap = bin_dir / "psnap_mpi"
    if not psnap.exists():
        pytest.skip("built without MPI")
    common = ["--warmup-ms", "0", "-n", "300", "-o", "mp"]
    res = subprocess.run(["mpirun", "-n", "1", psnap, *common, "--node-files", "--inject",
                          "5000:50", "--trace", ":", "-n", "1", psnap, *common], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120, env=mpi_env())
    assert res.returncode == 0, res.stderr
    meta = json.loads((tmp_path / "mp.json").read_text())
    assert "node_files" not in meta and len(meta["ranks"]) == 2
    assert [p.name for p in tmp_path.glob("mp_node*")] == ["mp_node0_histograms.txt"]
    assert (tmp_path / "mp_0_injections.dat").exists() and (tmp_path / "mp_1_times.dat").exists()
    assert not (tmp_path / "mp_1_injections.dat").exists()
