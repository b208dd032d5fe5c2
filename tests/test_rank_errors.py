"""P-SNAP and selfish: bad input fails cleanly; SIGTERM keeps what was measured."""
import json
import os
import signal
import subprocess
import time

import numpy as np
import pytest
from nbtest.launch import mpi_env

NCPUS = len(os.sched_getaffinity(0))

BAD = [
    ("psnap", ["-n", "0"], "-n 0"),
    ("psnap", ["-n", "-5"], "-n -5"),
    ("psnap", ["-g", "0"], "-g 0"),
    ("psnap", ["-c", "0"], "-c 0"),
    ("psnap", ["-o", "/nonexistent/p"], "/nonexistent/p"),
    ("psnap", ["-t", str(NCPUS + 1)], f"-t {NCPUS + 1}"),
    ("psnap", ["--bogus"], "--bogus"),
    ("selfish", ["--detours", "0"], "--detours 0"),
    ("selfish", ["--seconds", "0"], "--seconds 0"),
    ("selfish", ["--threshold", "50"], "--threshold 50"),
    ("selfish", ["-o", "/proc/s"], "/proc/s"),
    ("selfish", ["--inject", "5:10"], "--inject 5:10"),
]


@pytest.mark.parametrize("kernel,args,mentions", BAD, ids=[f"{b[0]} {' '.join(b[1])}" for b in BAD])
def test_bad_input_threads(run, tmp_path, kernel, args, mentions):
    res = run(kernel, *args)
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{kernel}: error: ") and mentions in lines[0]
    assert list(tmp_path.iterdir()) == []


def mpirun(bin_dir, tmp_path, n, *args, extra=()):
    return subprocess.run(["mpirun", *extra, "-n", str(n), *map(str, args)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env=mpi_env())


@pytest.fixture
def mpi(bin_dir):
    if not (bin_dir / "psnap_mpi").exists():
        pytest.skip("built without MPI")


def our_lines(stderr, kernel):
    return [l for l in stderr.splitlines() if l.startswith(f"{kernel}_mpi: ")]


def test_mpi_bad_input_one_line(mpi, bin_dir, tmp_path):
    res = mpirun(bin_dir, tmp_path, NCPUS, bin_dir / "psnap_mpi", "-g", "0")
    assert res.returncode != 0
    assert len(our_lines(res.stderr, "psnap")) == 1, res.stderr
    assert "-g 0" in res.stderr
    assert list(tmp_path.iterdir()) == []


def test_mpi_more_ranks_than_cpus(mpi, bin_dir, tmp_path):
    res = mpirun(bin_dir, tmp_path, NCPUS + 1, bin_dir / "selfish_mpi", "--seconds", 1,
                 extra=["--oversubscribe", "--bind-to", "none"])
    assert res.returncode != 0
    lines = our_lines(res.stderr, "selfish")
    assert len(lines) == 1 and f"{NCPUS + 1} ranks on" in lines[0] and "--no-pin" in lines[0]
    assert list(tmp_path.iterdir()) == []


def test_mpi_unwritable_prefix(mpi, bin_dir, tmp_path):
    res = mpirun(bin_dir, tmp_path, NCPUS, bin_dir / "psnap_mpi", "-o", "/nonexistent/x")
    assert res.returncode != 0
    lines = our_lines(res.stderr, "psnap")
    assert len(lines) == 1 and "/nonexistent/x_0_times.dat" in lines[0]


BLOCK_SIGRTMIN = ("import os, signal, sys; signal.pthread_sigmask(signal.SIG_BLOCK, "
                  "{signal.SIGRTMIN}); os.execv(sys.argv[1], sys.argv[1:])")


def test_mpi_injector_failing_on_every_rank_says_so_once(mpi, bin_dir, tmp_path):
    """Every rank's injector fails its check before the run alike (here its
    signal blocked: a mask survives exec): one line for the job, exit 1
    (a failure while running, not bad input), and no file."""
    res = mpirun(bin_dir, tmp_path, 4, "python3", "-c", BLOCK_SIGRTMIN, bin_dir / "fwq_mpi",
                 "--no-pin", "-n", "100", "--inject", "1000:10", "-o", "blocked",
                 extra=["--oversubscribe"])
    lines = our_lines(res.stderr, "fwq")
    assert len(lines) == 1 and "--inject: the timer's signal did not arrive (0 of 64" in lines[0], \
        res.stderr
    assert res.returncode == 1, res.stderr
    assert list(tmp_path.iterdir()) == []


def test_mpmd_ranks_asking_for_node_files_apart_write_their_own(mpi, bin_dir, tmp_path):
    """One MPI job whose ranks were given different options (an MPMD job):
    rank 0 asks for node files, injects and traces, rank 1 does none of it.
    A node's files are written by all its ranks together, so none of the
    data is: each rank writes files of its own, as asked, and the run
    completes. P-SNAP's histograms file, which every run writes a node,
    is the only node file."""
    psnap = bin_dir / "psnap_mpi"
    common = ["--warmup-ms", "0", "-n", "300", "-o", "mp"]
    res = mpirun(bin_dir, tmp_path, 1, psnap, *common, "--node-files", "--inject", "5000:50",
                 "--trace", ":", "-n", "1", psnap, *common)
    assert res.returncode == 0, res.stderr
    meta = json.loads((tmp_path / "mp.json").read_text())
    assert "node_files" not in meta and len(meta["ranks"]) == 2
    assert [p.name for p in tmp_path.glob("mp_node*")] == ["mp_node0_histograms.txt"]
    assert (tmp_path / "mp_0_injections.dat").exists() and (tmp_path / "mp_1_times.dat").exists()
    assert not (tmp_path / "mp_1_injections.dat").exists()


@pytest.mark.parametrize("kernel,launcher", [("psnap", "threads"), ("selfish", "threads"),
                                             ("psnap", "mpirun"), ("selfish", "srun")])
def test_sigterm_keeps_samples(request, bin_dir, tmp_path, kernel, launcher):
    env = mpi_env()
    args = ["-n", "100000", "-w", "100"] if kernel == "psnap" else ["--seconds", "100", "--detours", "10000000"]
    # interrupted, no node file: PREFIX.json describes the root's ranks
    # itself, and every rank writes its samples into files of its own
    args.append("--node-files")
    if launcher == "threads":
        cmd = [bin_dir / kernel, "-t", "0", *args, "-o", "cut"]
    elif not (bin_dir / f"{kernel}_mpi").exists():
        pytest.skip("built without MPI")
    elif launcher == "mpirun":
        cmd = ["mpirun", "-n", str(NCPUS), bin_dir / f"{kernel}_mpi", *args, "-o", "cut"]
    else:
        env.update(request.getfixturevalue("slurm"))
        cmd = ["srun", "--mpi=pmix", "-n", str(NCPUS), "-J", "nb-sigterm",
               bin_dir / f"{kernel}_mpi", *args, "-o", "cut"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    time.sleep(4)
    if launcher == "srun":
        # what Slurm's time limit does: SIGTERM to every task, SIGKILL after KillWait
        subprocess.run(["scancel", "-n", "nb-sigterm"], env=env, check=True)
    else:
        proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode != 0
    if launcher == "threads":
        assert proc.returncode == 128 + signal.SIGTERM, err
    meta = json.loads((tmp_path / "cut.json").read_text())
    assert meta["complete"] is False and meta["interrupted_by"] == "SIGTERM"
    suffix = "times" if kernel == "psnap" else "detours"
    files = sorted(tmp_path.glob(f"cut_[0-9]*_{suffix}.dat"))
    assert len(files) == NCPUS, "every rank keeps its samples"
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob("cut_node*"))
    for f in files:
        data = np.loadtxt(f, dtype=np.int64, ndmin=1)
        assert len(data) > 10 and (data > 0).all()
    for r in meta["ranks"]:
        assert r["samples" if kernel == "psnap" else "detours"] > 10
