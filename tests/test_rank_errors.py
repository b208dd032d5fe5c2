"""The ranks' errors under MPI, which the driver handles alike for every
kernel: bad input and a failure before the run give one line for the job,
and no file. Each kernel's own bad input and SIGTERM are in its test file."""
import os
import subprocess

import pytest
from nbtest import KERNELS, SAMPLING, quick_args
from nbtest.launch import mpi_env

NCPUS = len(os.sched_getaffinity(0))
# the kernel these run: one that takes -n samples (any would do else)
KERNEL = SAMPLING[0]


def mpirun(bin_dir, tmp_path, n, *args, extra=()):
    return subprocess.run(["mpirun", *extra, "-n", str(n), *map(str, args)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env=mpi_env())


@pytest.fixture
def mpi(bin_dir):
    if not (bin_dir / f"{KERNEL}_mpi").exists():
        pytest.skip("built without MPI")
    return bin_dir / f"{KERNEL}_mpi"


def our_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith(f"{KERNEL}_mpi: ")]


def test_mpi_bad_input_one_line(mpi, bin_dir, tmp_path):
    res = mpirun(bin_dir, tmp_path, NCPUS, mpi, "-n", "0")
    assert res.returncode != 0
    assert len(our_lines(res.stderr)) == 1, res.stderr
    assert "-n 0" in res.stderr
    assert list(tmp_path.iterdir()) == []


def test_mpi_more_ranks_than_cpus(mpi, bin_dir, tmp_path):
    res = mpirun(bin_dir, tmp_path, NCPUS + 1, mpi, "--seconds", 1,
                 extra=["--oversubscribe", "--bind-to", "none"])
    assert res.returncode != 0
    lines = our_lines(res.stderr)
    assert len(lines) == 1 and f"{NCPUS + 1} ranks on" in lines[0] and "--no-pin" in lines[0]
    assert list(tmp_path.iterdir()) == []


def test_mpi_unwritable_prefix(mpi, bin_dir, tmp_path):
    res = mpirun(bin_dir, tmp_path, NCPUS, mpi, *quick_args(KERNEL), "-o", "/nonexistent/x")
    assert res.returncode != 0
    lines = our_lines(res.stderr)
    first = KERNELS[KERNEL]["files"][0]["suffix"]
    assert len(lines) == 1 and f"/nonexistent/x_0_{first}" in lines[0], res.stderr


BLOCK_SIGRTMIN = ("import os, signal, sys; signal.pthread_sigmask(signal.SIG_BLOCK, "
                  "{signal.SIGRTMIN}); os.execv(sys.argv[1], sys.argv[1:])")


def test_mpi_injector_failing_on_every_rank_says_so_once(mpi, bin_dir, tmp_path):
    """Every rank's injector fails its check before the run alike (here its
    signal blocked: a mask survives exec): one line for the job, exit 1
    (a failure while running, not bad input), and no file."""
    res = mpirun(bin_dir, tmp_path, 4, "python3", "-c", BLOCK_SIGRTMIN, mpi, "--no-pin",
                 *quick_args(KERNEL), "--inject", "1000:10", "-o", "blocked",
                 extra=["--oversubscribe"])
    lines = our_lines(res.stderr)
    assert len(lines) == 1 and "--inject: the timer's signal did not arrive (0 of 64" in lines[0], \
        res.stderr
    assert res.returncode == 1, res.stderr
    assert list(tmp_path.iterdir()) == []
