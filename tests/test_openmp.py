"""The OpenMP front ends run the same loops under the runtime's placement."""
import json
import os

import pytest

NCPUS = len(os.sched_getaffinity(0))


@pytest.fixture
def omp(bin_dir):
    if not (bin_dir / "fwq_omp").exists():
        pytest.skip("built without OpenMP")


@pytest.mark.parametrize("kernel", ["fwq_omp", "ftq_omp"])
def test_omp_threads_follow_omp_places(omp, run, tmp_path, kernel):
    env = {"OMP_NUM_THREADS": str(NCPUS), "OMP_PLACES": "cores", "OMP_PROC_BIND": "close"}
    res = run(kernel, "-n", 500, "-o", "o", env=env)
    assert res.returncode == 0, res.stderr
    meta = json.loads((tmp_path / "o.json").read_text())
    assert meta["frontend"] == "openmp"
    cpus = [t["cpu"] for t in meta["ranks"]]
    assert len(cpus) == NCPUS and len(set(cpus)) == NCPUS
    assert len(list(tmp_path.glob("o_*_times.dat"))) == NCPUS


def test_omp_without_binding_pins_itself(omp, run, tmp_path):
    env = {"OMP_NUM_THREADS": str(NCPUS), "OMP_PROC_BIND": "false"}
    res = run("fwq_omp", "-n", 200, "-o", "u", env=env)
    assert res.returncode == 0, res.stderr
    meta = json.loads((tmp_path / "u.json").read_text())
    assert sorted(t["cpu"] for t in meta["ranks"]) == sorted(os.sched_getaffinity(0))
