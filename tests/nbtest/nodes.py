"""The four named nodes of the test cluster (tests/slurm/cluster.sh --nodes
4, the slurm_nodes fixture) and jobs run across them by srun."""
import csv
import subprocess

import pytest

from nbtest.launch import mpi_env, once_more_after_foreign_crash

HOSTS = {f"nbnode{i}" for i in range(1, 5)}
# the two nodes that never share a CPU (cluster.sh)
APART = ["nbnode1", "nbnode2"]


def srun(env, tmp_path, *args, nodes=sorted(HOSTS), per_node=1, timeout=300):
    """per_node ranks on each of `nodes` (more than one: dealt round robin,
    rank r on the (r mod nodes)-th, and sharing the node's CPU)."""
    n = str(len(nodes))
    spread = ["-n", str(len(nodes) * per_node)]
    if per_node > 1:
        spread += ["--overcommit", "--distribution=cyclic"]
    # --kill-on-bad-exit: a rank that dies ends the job, rather than leaving
    # the others waiting in a collective until the timeout
    cmd = ["srun", "-N", n, *spread, "-w", ",".join(nodes), "--mpi=pmix", "--kill-on-bad-exit=1",
           "--chdir", str(tmp_path), *map(str, args)]
    try:
        return once_more_after_foreign_crash(lambda: subprocess.run(
            cmd, cwd=tmp_path, capture_output=True, text=True, timeout=timeout,
            env=mpi_env(env)), tmp_path)
    except subprocess.TimeoutExpired as e:
        # bytes even with text=True: what was read before the timeout
        err = e.stderr or b""
        err = err.decode(errors="replace") if isinstance(err, bytes) else err
        pytest.fail(f"srun {' '.join(map(str, args))}: still running after {timeout} s; its "
                    f"stderr:\n{err}")


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))
