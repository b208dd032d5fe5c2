"""The ReFrame checks, run by the real ReFrame with reframe/config/generic.py:
on the local partition, on the localhost Slurm cluster, and with injected
noise, when every check must fail its references. ReFrame builds the
release kernels itself: the sanitizer suite checks the kernels."""
import json
import os
import re
import subprocess

import pytest
from conftest import ROOT

pytestmark = pytest.mark.skipif(bool(os.environ.get("NB_SANITIZE")),
                                reason="ReFrame builds the release kernels")
CHECKS = 14  # FWQ 3 work kinds, FTQ 2 frequencies, P-SNAP, selfish; on 1 and 2 cores
NCPUS = len(os.sched_getaffinity(0))


def reframe(tmp_path, system, *options, env=None):
    """reframe on the checks, in tmp_path; its result and JSON report."""
    report = tmp_path / "report.json"
    cmd = [ROOT / ".venv" / "bin" / "reframe", "-C", ROOT / "reframe" / "config" / "generic.py",
           "-c", ROOT / "reframe" / "checks", "--system", system, "--report-file", report,
           *options, "-r"]
    result = subprocess.run([str(c) for c in cmd], cwd=tmp_path, capture_output=True, text=True,
                            timeout=900, env=dict(os.environ, **(env or {})))
    cases = [tc for tc in json.loads(report.read_text())["runs"][-1]["testcases"]
             if not tc["fixture"]]
    return result, cases


@pytest.fixture(autouse=True)
def two_cpus():
    if NCPUS != 2:
        pytest.skip("the check count assumes core counts 1 and 2")


def test_checks_pass_on_the_local_partition(tmp_path):
    result, cases = reframe(tmp_path, "anynode:local")
    assert result.returncode == 0, result.stdout[-3000:]
    assert len(cases) == CHECKS and all(tc["result"] == "pass" for tc in cases)
    fwq = [tc for tc in cases if tc["display_name"].startswith("fwq")]
    # Sequoia's three figures, each held to a bound
    for tc in fwq:
        assert {k.split(":")[-1] for k in tc["perfvalues"]} == {
            "max_scaled_noise_mean", "max_scaled_noise_sd", "max_kurtosis"}
    # the acceptance summary reads the same report
    summary = subprocess.run(["Rscript", ROOT / "analysis" / "acceptance.R",
                              tmp_path / "report.json", tmp_path / "acceptance"],
                             capture_output=True, text=True, timeout=120)
    assert summary.returncode == 0, summary.stderr
    assert summary.stdout.strip().endswith(f"anynode:local: {CHECKS} of {CHECKS} checks met "
                                           "every bound")
    assert (tmp_path / "acceptance" / "acceptance.csv").exists()


def test_checks_pass_as_slurm_jobs(tmp_path, slurm):
    result, cases = reframe(tmp_path, "anynode:slurm", env=slurm)
    assert result.returncode == 0, result.stdout[-3000:]
    assert len(cases) == CHECKS and all(tc["result"] == "pass" for tc in cases)
    # each check was a Slurm job: its id in the perflog, and sacct knows it
    logged = set()
    for log in (tmp_path / "perflogs" / "anynode" / "slurm").glob("*_noise_check.log"):
        logged |= set(re.findall(r"\|jobid=(\d+)\|", log.read_text()))
    assert logged == {tc["jobid"] for tc in cases}
    sacct = subprocess.run(["sacct", "-n", "-X", "-o", "JobID,State", "-j", ",".join(logged)],
                           capture_output=True, text=True, env=dict(os.environ, **slurm))
    assert sacct.stdout.count("COMPLETED") == CHECKS, sacct.stdout
    # the MPI kernels ran as ranks under srun
    psnap = [tc for tc in cases if tc["display_name"].startswith("psnap")]
    assert {tc["num_tasks"] for tc in psnap} == {1, 2}
    assert all(tc["executable"].endswith("psnap_mpi") for tc in psnap)


def test_checks_fail_with_injected_noise(tmp_path):
    # 70% of every millisecond stolen: an acceptance check that passes this
    # is no check
    result, cases = reframe(tmp_path, "anynode:local", "-S", "inject=1000:700")
    assert result.returncode != 0
    assert len(cases) == CHECKS
    for tc in cases:
        assert tc["result"] == "fail" and tc["fail_phase"] == "performance", tc["display_name"]
        failed = [k for k, v in tc["perfvalues"].items() if v[5] == "fail"]
        assert failed, tc["display_name"]
