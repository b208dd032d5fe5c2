"""The OpenMP front ends run the same loops under the runtime's placement."""
import json
import os

import pytest
from nbtest import OPENMP, quick_args

NCPUS = len(os.sched_getaffinity(0))


@pytest.fixture
def omp(bin_dir):
    if not (bin_dir / OPENMP[0]).exists():
        pytest.skip("built without OpenMP")


@pytest.mark.parametrize("kernel", OPENMP)
def test_omp_threads_follow_omp_places(omp, run, tmp_path, kernel):
    env = {"OMP_NUM_THREADS": str(NCPUS), "OMP_PLACES": "cores", "OMP_PROC_BIND": "close"}
    res = run(kernel, *quick_args(kernel.removesuffix("_omp")), "-o", "o", env=env)
    assert res.returncode == 0, res.stderr
    meta = json.loads((tmp_path / "o.json").read_text())
    assert meta["frontend"] == "openmp"
    cpus = [t["cpu"] for t in meta["ranks"]]
    assert len(cpus) == NCPUS and len(set(cpus)) == NCPUS
    assert len(list(tmp_path.glob("o_*_times.dat"))) == NCPUS


@pytest.mark.parametrize("kernel", OPENMP)
def test_omp_without_binding_pins_itself(omp, run, tmp_path, kernel):
    env = {"OMP_NUM_THREADS": str(NCPUS), "OMP_PROC_BIND": "false"}
    res = run(kernel, *quick_args(kernel.removesuffix("_omp")), "-o", "u", env=env)
    assert res.returncode == 0, res.stderr
    meta = json.loads((tmp_path / "u.json").read_text())
    assert sorted(t["cpu"] for t in meta["ranks"]) == sorted(os.sched_getaffinity(0))
