"""The predicted slowdown at scale against a real bulk-synchronous
application: bsp_mpi (compute T, then a barrier or an allreduce) on two MPI
ranks under Slurm, one rank with injected noise and then none: what the
injection added to its phases against what selfish traces measured the same
ways, just before and just after, predict it adds (analysis/predict.R)."""
import csv
import io
import json
import subprocess

import pytest
from conftest import ROOT, mpi_env

# 500 us every 2.5 ms on average on rank 1, far above a machine's own noise,
# at random times: a periodic injector phase-locks with the synchronisations
# (the phases re-align to the end of each hit), where the model draws a random
# offset for every phase. With T = 1 ms and P = 2 ms + D the model's two
# first-order errors cancel (docs/analysis.md): the rest of a detour it counts
# at a phase's start, and the hits during the compute a detour lengthened.
INJECT = "2500:500:poisson"
PHASES = 6000
# the most the machine's own noise may slow the quiet application (a share of
# the compute) for the model's assumptions to be checked here
MODEL_LIMIT = 0.1
# How close the application's added slowdown must come to the prediction (the
# issue's 20%). The counting error of the random stream is far inside it:
# about 3000 injections in each application run and 1200 in each trace, a
# few percent each; the machine's own noise, which differs from run to run,
# is averaged over 6000 phases a run.
TOLERANCE = 0.2


def srun_mpmd(env, tmp_path, program, args, name, inject):
    """Two MPI ranks of one job under Slurm; rank 1 with INJECT if inject."""
    conf = tmp_path / f"{name}.conf"
    extra = f" --inject {INJECT}" if inject else ""
    conf.write_text(f"0 {program} {args} -o {name}\n1 {program} {args}{extra} -o {name}\n")
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
    # the traces: selfish on the same ranks, with and without the injection
    # (enough detours for the whole duration), just before and just after the
    # application, as the machine's own noise moves from one minute to the next
    def traces(name, inject):
        run = srun_mpmd(slurm, tmp_path, bin_dir / "selfish_mpi",
                        "--seconds 3 --detours 1000000", name, inject)
        assert (run["ranks"][1]["injections"] > 0) == inject
        return tmp_path / f"{name}.json"

    def application(name, inject):
        extra = " --allreduce" if collective == "allreduce" else ""
        run = srun_mpmd(slurm, tmp_path, bin_dir / "bsp_mpi", f"-n {PHASES}{extra}", name,
                        inject)
        assert run["collective"] == collective and run["complete"] is True
        assert [r["samples"] for r in run["ranks"]] == [PHASES, PHASES]
        return run

    # in mirrored order (ABBA): a drift of the machine's own noise over the
    # test (a cluster that has just started settles) weighs on both ways alike
    before = traces("noisy_before", True), traces("quiet_before", False)
    quiet = application("quiet", False)
    bsp = application("bsp", True)
    bsp_again = application("bsp_again", True)
    quiet_again = application("quiet_again", False)
    after = traces("quiet_after", False), traces("noisy_after", True)
    assert "inject" not in bsp["ranks"][0] and bsp["ranks"][1]["injections"] > 0
    # the phase data: a line per phase, each phase at least its compute
    lines = (tmp_path / bsp["ranks"][0]["files"][0]).read_text().splitlines()
    assert len(lines) == PHASES
    assert all(float(p) >= float(w) for w, p in (line.split() for line in lines))

    # two ranks measured together, replayed at the same offset: rank i's trace
    # for process i; the mean of the traces before and after
    def predicted(noisy, quiet_):
        return sum(float(predict(t, bsp["calibrated_us"], 2)["co-scheduled"]["slowdown"])
                   for t in (noisy, quiet_)) / 2

    expected = predicted(before[0], after[1])
    expected_quiet = predicted(before[1], after[0])
    measured = (bsp["slowdown"] + bsp_again["slowdown"]) / 2
    measured_quiet = (quiet["slowdown"] + quiet_again["slowdown"]) / 2
    # what the injected noise added to the phases, within TOLERANCE of what
    # the traces predict it adds; the machine's own noise is in both (and the
    # model's assumptions hold for it only where it does not compete with the
    # application for the CPU: docs/analysis.md)
    added, expected_added = measured - measured_quiet, expected - expected_quiet
    # A machine whose own noise takes more than a tenth of the compute is
    # being shared with other work, which takes a share of the time the
    # application waits in its collectives too: the model does not hold there,
    # and this test cannot tell whether the prediction does (docs/analysis.md).
    if measured_quiet - 1 > MODEL_LIMIT:
        pytest.skip(f"the machine's own noise slowed the application by "
                    f"{100 * (measured_quiet - 1):.0f}% (above {100 * MODEL_LIMIT:.0f}%): "
                    f"noise that competes for the CPU is outside the model")
    assert abs(added - expected_added) <= TOLERANCE * expected_added, \
        (measured, measured_quiet, expected, expected_quiet)
