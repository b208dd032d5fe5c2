"""Shared fixtures: where the kernels are and how to run them.

NB_BIN_DIR selects the binaries under test (make test runs the suite once on
the release build and once on the ASan/UBSan build); NB_BUILD_DIR is the
build tree whose `asm` target the disassembly test reads.
"""
import os
import subprocess

import pytest

from nbtest import ANY_KERNEL, KERNELS, ROOT
from nbtest.launch import MANY_RANKS, mpi_env, run_ranks
from nbtest.verdicts import CANNOT_TELL, CANNOT_TELL_LOG


def pytest_runtest_logreport(report):
    if report.skipped and isinstance(report.longrepr, tuple):
        reason = report.longrepr[2].removeprefix("Skipped: ")
        if reason.startswith(CANNOT_TELL):
            CANNOT_TELL_LOG.parent.mkdir(exist_ok=True)
            with CANNOT_TELL_LOG.open("a") as log:
                log.write(f"{report.nodeid}: {reason[len(CANNOT_TELL):]}\n")


def pytest_terminal_summary(terminalreporter):
    told = [r for r in terminalreporter.stats.get("skipped", [])
            if isinstance(r.longrepr, tuple) and CANNOT_TELL in r.longrepr[2]]
    terminalreporter.write_line(f"cannot tell today: {len(told)} timing test(s) skipped "
                                f"for what this machine showed")
    for r in told:
        terminalreporter.write_line(f"  {r.nodeid}: {r.longrepr[2]}")


def pytest_collection_modifyitems(items):
    """The tests that need a Slurm cluster: those that ask for one, and
    those launched by srun."""
    for item in items:
        params = getattr(item, "callspec", None)
        if {"slurm", "slurm_nodes"} & set(item.fixturenames) or \
                (params and "srun" in params.params.values()):
            item.add_marker(pytest.mark.slurm)


@pytest.fixture(scope="session")
def bin_dir():
    path = (ROOT / os.environ.get("NB_BIN_DIR", "build/bin")).resolve()
    if not (path / next(iter(KERNELS))).exists():
        pytest.fail(f"no kernels in {path}: run `make` first (or set NB_BIN_DIR)")
    return path


@pytest.fixture
def mpi_bin(bin_dir):
    """bin_dir, where the kernels were built with MPI."""
    if not (bin_dir / f"{ANY_KERNEL}_mpi").exists():
        pytest.skip("built without MPI")
    return bin_dir


@pytest.fixture(scope="session")
def build_dir(bin_dir):
    return (ROOT / os.environ.get("NB_BUILD_DIR", bin_dir.parent)).resolve()


@pytest.fixture(scope="session")
def many_ranks(bin_dir, tmp_path_factory):
    """many_ranks(kernel, args) -> (CompletedProcess, its directory): the
    kernel's MPI binary on MANY_RANKS oversubscribed ranks, run once a
    session for each kernel and arguments, so that test_many_ranks.py's
    checks of every kernel and a kernel's own checks read the same run."""
    runs = {}

    def _many_ranks(kernel, args):
        key = (kernel, tuple(map(str, args)))
        if key not in runs:
            directory = tmp_path_factory.mktemp(f"{kernel}-ranks")
            runs[key] = (run_ranks(bin_dir, directory, kernel, args, MANY_RANKS), directory)
        return runs[key]

    return _many_ranks


@pytest.fixture
def run(bin_dir, tmp_path):
    """run(kernel, *args) -> CompletedProcess, in a fresh directory."""

    def _run(kernel, *args, timeout=300, env=None, cwd=None):
        full_env = dict(os.environ, **(env or {}))
        return subprocess.run(
            [str(bin_dir / kernel), *map(str, args)],
            cwd=cwd or tmp_path,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=full_env,
        )

    return _run


@pytest.fixture(scope="session")
def slurm():
    """A real Slurm cluster on localhost, started by the project's script and
    stopped after the session; yields the environment clients need. With
    accounting (slurmdbd, MariaDB): ReFrame's Slurm scheduler asks sacct."""
    script = ROOT / "tests" / "slurm" / "cluster.sh"
    subprocess.run([script, "start", "--with-db"], check=True, capture_output=True, text=True,
                   timeout=300)
    env = {"SLURM_CONF": str(ROOT / ".cache" / "slurm" / "slurm.conf")}
    try:
        yield env
    finally:
        subprocess.run([script, "stop"], capture_output=True, timeout=300)


@pytest.fixture(scope="session")
def slurm_nodes():
    """A Slurm cluster of four named nodes on this machine (nbnode1..4: a
    slurmd each, in a UTS namespace of its own, on its share of the CPUs,
    round robin when there are fewer CPUs than nodes), beside the one-node
    cluster; yields the environment clients need."""
    script = ROOT / "tests" / "slurm" / "cluster.sh"
    subprocess.run([script, "start", "--nodes", "4"], check=True, capture_output=True, text=True,
                   timeout=300)
    env = {"SLURM_CONF": str(ROOT / ".cache" / "slurm-4nodes" / "slurm.conf")}
    try:
        yield env
    finally:
        subprocess.run([script, "stop", "--nodes", "4"], capture_output=True, timeout=300)



@pytest.fixture
def launch(request, bin_dir, tmp_path):
    """launch(how, kernel, *args): the kernel on every CPU of this machine,
    as threads of one process, as MPI ranks under mpirun, or under Slurm's
    srun with PMIx."""

    def _launch(how, kernel, *args, timeout=300):
        ncpus = len(os.sched_getaffinity(0))
        args = [str(a) for a in args]
        env = mpi_env()
        if how == "threads":
            cmd = [str(bin_dir / kernel), "-t", "0", *args]
        elif how == "mpirun":
            cmd = ["mpirun", "-n", str(ncpus), str(bin_dir / f"{kernel}_mpi"), *args]
        else:
            env.update(request.getfixturevalue("slurm"))
            cmd = ["srun", "--mpi=pmix", "-n", str(ncpus), "--chdir", str(tmp_path),
                   str(bin_dir / f"{kernel}_mpi"), *args]
        if how != "threads" and not (bin_dir / f"{kernel}_mpi").exists():
            pytest.skip("built without MPI")
        return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True,
                              timeout=timeout, env=env)

    return _launch
