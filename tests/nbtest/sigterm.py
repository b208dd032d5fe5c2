"""A kernel's ranks stopped by SIGTERM mid-run, as Slurm's time limit
stops them, under each launcher: what each measured is kept."""
import json
import os
import signal
import subprocess
import time

import numpy as np
import pytest
from nbtest.launch import mpi_env

NCPUS = len(os.sched_getaffinity(0))


def check_sigterm_keeps_samples(request, bin_dir, tmp_path, kernel, launcher, args, suffix,
                                count_key):
    """kernel with args (long enough to be cut 4 s in) on every CPU, as
    threads, under mpirun or under srun (scancel, as Slurm's time limit):
    each rank kept more than 10 of its records, in its own PREFIX_<rank>_
    <suffix> file, and the JSON's count_key of each says so."""
    env = mpi_env()
    # interrupted, no node file: PREFIX.json describes the root's ranks
    # itself, and every rank writes its samples into files of its own
    args = [*args, "--node-files"]
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
    files = sorted(tmp_path.glob(f"cut_[0-9]*_{suffix}.dat"))
    assert len(files) == NCPUS, "every rank keeps its samples"
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob("cut_node*"))
    for f in files:
        data = np.loadtxt(f, dtype=np.int64, ndmin=1)
        assert len(data) > 10 and (data > 0).all()
    for r in meta["ranks"]:
        assert r[count_key] > 10
