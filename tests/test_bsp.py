"""The predicted slowdown at scale against a real bulk-synchronous
application: bsp_mpi (compute T, then a barrier or an allreduce) on two MPI
ranks under Slurm, one rank with injected noise, against the prediction
from selfish traces measured the same way just before and just after
(analysis/predict.R)."""
import csv
import io
import json
import subprocess

import pytest
from conftest import ROOT, mpi_env

INJECT = "5000:1000"  # 1 ms every 5 ms on rank 1: far above this machine's own noise
PHASES = 3000


def srun_mpmd(env, tmp_path, program, args, name):
    conf = tmp_path / f"{name}.conf"
    conf.write_text(f"0 {program} {args} -o {name}\n"
                    f"1 {program} {args} --inject {INJECT} -o {name}\n")
    done = subprocess.run(["srun", "-n", "2", "--mpi=pmix", "--chdir", str(tmp_path),
                           "--multi-prog", str(conf)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env=mpi_env(env))
    assert done.returncode == 0, done.stderr
    return json.loads((tmp_path / f"{name}.json").read_text())


def predict(run_json, phase_us, processes):
    done = subprocess.run(["Rscript", str(ROOT / "analysis" / "predict.R"), str(run_json),
                           "--phase-us", str(phase_us), "--processes", str(processes)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return {r["mode"]: r for r in csv.DictReader(io.StringIO(done.stdout))}


@pytest.mark.timing
@pytest.mark.parametrize("collective", ["barrier", "allreduce"])
def test_bsp_slowdown_is_the_prediction_from_traces(collective, slurm, bin_dir, tmp_path):
    if not (bin_dir / "bsp_mpi").exists():
        pytest.skip("built without MPI")
    # the traces: selfish on the same ranks with the same injection (enough
    # detours for the whole duration), just before and just after the
    # application, as the machine's own noise moves from one minute to the next
    def traces(name):
        run = srun_mpmd(slurm, tmp_path, bin_dir / "selfish_mpi",
                        "--seconds 3 --detours 1000000", name)
        assert run["ranks"][1]["injections"] > 0
        return tmp_path / f"{name}.json"

    before = traces("before")
    extra = " --allreduce" if collective == "allreduce" else ""
    bsp = srun_mpmd(slurm, tmp_path, bin_dir / "bsp_mpi", f"-n {PHASES}{extra}", "bsp")
    after = traces("after")
    assert bsp["collective"] == collective and bsp["complete"] is True
    assert [r["samples"] for r in bsp["ranks"]] == [PHASES, PHASES]
    assert "inject" not in bsp["ranks"][0] and bsp["ranks"][1]["injections"] > 0
    # the phase data: a line per phase, each phase at least its compute
    lines = (tmp_path / bsp["ranks"][0]["files"][0]).read_text().splitlines()
    assert len(lines) == PHASES
    assert all(float(p) >= float(w) for w, p in (line.split() for line in lines))

    # two ranks measured together, replayed at the same offset: rank i's trace for process i
    expected = sum(float(predict(t, bsp["calibrated_us"], 2)["co-scheduled"]["slowdown"])
                   for t in (before, after)) / 2
    measured = bsp["slowdown"]
    # what noise added, within 20% of what the traces predict
    assert abs((measured - 1) - (expected - 1)) <= 0.2 * (expected - 1), (measured, expected)
