"""How the tests launch kernels as MPI ranks."""
import os

LAUNCHERS = ["threads", "mpirun", "srun"]


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
