"""How the tests launch kernels as MPI ranks."""
import os
import shutil
import subprocess
import time
import warnings

import pytest

LAUNCHERS = ["threads", "mpirun", "srun"]
# the ranks of the tests of what grows with them, oversubscribed here
MANY_RANKS = 128


def mpi_env(extra=None):
    """The environment for MPI launches: OpenMPI runs as root only when told
    to; under the sanitizer build, leak checking is left to the non-MPI
    binaries, as OpenMPI's own allocations (some in plugins it unloads, which
    no suppression can name) would be reported as ours."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               **(extra or {}))
    if os.environ.get("NB_SANITIZE"):
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    return env


# Open MPI 4.1 under ASan, on the 4-node Slurm cluster while the gate's
# first phase loads the machine: now and then a rank dies at address 0 in
# MPI_Init. Its core: MPI_Init -> opal_progress -> libevent -> the
# TCP BTL's receive handler calling the active-message callback of a
# fragment's tag, a NULL one (`call *(%rax)`, rax the callback table plus
# tag x 16): a peer already out of the start-up's fence sent before this
# rank had its callbacks, a race like the one open-mpi/ompi#13559
# describes in ob1. It can strike several launches of one test in a row,
# hence five, a second apart for the cluster to settle.
FOREIGN_CRASH = "SEGV on unknown address 0x000000000000 (pc 0x000000000000"
LAUNCHES = 5
PAUSE_S = 1
# where the sanitizer suite keeps such a rank's core (make test-sanitize asks
# ASan for one), to name the library it died in with gdb
CORES = os.environ.get("NB_FOREIGN_CRASH_CORES")


def once_more_after_foreign_crash(launch, workdir):
    """launch() (a CompletedProcess), again up to LAUNCHES in all while a
    sanitized rank dies of FOREIGN_CRASH, what each such launch left in
    workdir removed (its cores kept in CORES); a warning says so."""
    before = set(workdir.iterdir())
    for attempt in range(1, LAUNCHES):
        done = launch()
        if not (os.environ.get("NB_SANITIZE") and done.returncode != 0
                and FOREIGN_CRASH in done.stderr):
            return done
        warnings.warn(f"a rank jumped to address 0 outside noisebench (Open MPI under ASan); "
                      f"launch {attempt} of at most {LAUNCHES}: {done.args}")
        for child in set(workdir.iterdir()) - before:
            if CORES and child.name.startswith("core"):
                os.makedirs(CORES, exist_ok=True)
                shutil.move(child, os.path.join(CORES, f"{child.name}.{os.getpid()}.{attempt}"))
            else:
                shutil.rmtree(child) if child.is_dir() else child.unlink()
        time.sleep(PAUSE_S)
    return launch()


def wait_for_files(proc, directory, pattern, count, timeout=120):
    """Waits until `count` files match `pattern` in `directory`, the sign that
    a run has passed a step of its start (each kernel creates its temporary
    files before measuring, and its causes files once the trace records).
    A fixed sleep would not do: on a loaded machine under ASan, setting up
    the trace's buffers alone can take seconds."""
    deadline = time.monotonic() + timeout
    while len(list(directory.glob(pattern))) < count:
        assert proc.poll() is None, f"the run ended before creating {count} {pattern}"
        assert time.monotonic() < deadline, f"no {count} {pattern} after {timeout} s"
        time.sleep(0.01)


def run_ranks(bin_dir, directory, kernel, args, ranks):
    """The kernel's MPI binary on `ranks` ranks oversubscribed on this
    machine, unpinned and without a warm-up (128 ranks spinning 300 ms each
    on two CPUs would take 19 s), its prefix the kernel's name."""
    binary = bin_dir / f"{kernel}_mpi"
    if not binary.exists():
        pytest.skip("built without MPI")
    cmd = ["mpirun", "--oversubscribe", "-n", str(ranks), str(binary), "--no-pin",
           "--warmup-ms", "0", *map(str, args), "-o", kernel]
    return subprocess.run(cmd, cwd=directory, capture_output=True, text=True, timeout=600,
                          env=mpi_env())
