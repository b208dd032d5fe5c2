"""noise-report --validate checks a survey against DESCRIPTION.md's
Verification list, on real runs: a good survey of every kernel is valid; a
job killed by run_kernel.sh's trap, a rank lost from a node's ranks table,
a rank left unpinned, noise injected and rules other than the signed ones
are each a line of their own, and the command exits 1. JUBE's own killed
and failed Slurm jobs: test_jube.py."""
import os
import shutil
import signal
import subprocess
import time

import pytest
from nbtest import ANY_KERNEL, KERNELS, REPORT_R, ROOT, quick_args

RUN_KERNEL = ROOT / "jube" / "include" / "run_kernel.sh"
COMMITMENTS = ROOT / "site" / "acceptance" / "commitments.requirements"


def validate(results, *args):
    done = subprocess.run(["Rscript", str(REPORT_R), "--validate", str(results), *map(str, args)],
                          capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout.splitlines(), done.stderr


def kernel(bin_dir, where, name, *args, prefix=None):
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([str(bin_dir / name), "-t", "2", *quick_args(name), *map(str, args),
                           "-o", prefix or name], cwd=where, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def good(tmp_path_factory, bin_dir):
    """A survey of every kernel on two CPUs, each run as run_kernel.sh runs it
    in a JUBE job, judged by the commitments."""
    top = tmp_path_factory.mktemp("validate") / "good"
    for name in KERNELS:
        work = top / name / "work"
        work.mkdir(parents=True)
        shutil.copy(RUN_KERNEL, work)
        done = subprocess.run(["./run_kernel.sh", str(bin_dir / name), "-t", "2",
                               *quick_args(name), "--requirements", COMMITMENTS, "-o", name],
                              cwd=work, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    return top


def test_a_good_survey_is_valid_and_judged_by_the_rules_given(good):
    code, out, err = validate(good, "--requirements", COMMITMENTS)
    assert code == 0, (out, err)
    assert out[-1].startswith(f"valid: 0 faults in {len(KERNELS)} runs and {len(KERNELS)} jobs, "
                              f"judged by {COMMITMENTS} (md5 "), out


def test_runs_judged_by_other_rules_are_named(good, tmp_path):
    other = tmp_path / "other.requirements"
    other.write_text("stolen_percent <= 5\n")
    code, out, _ = validate(good, "--requirements", other)
    assert code == 1
    judged = [line for line in out if "not by the rules given" in line]
    assert len(judged) == len(KERNELS), out
    assert all(str(COMMITMENTS) in line for line in judged), judged


def test_a_bad_rules_file_is_one_line_and_exit_2(good, tmp_path):
    bad = tmp_path / "bad.requirements"
    bad.write_text("stolen_percent <= lots\n")
    code, out, err = validate(good, "--requirements", bad)
    assert code == 2 and out == [], out
    assert len(err.strip().splitlines()) == 1 and "bad.requirements:1" in err, err


def test_each_fault_is_a_line_and_the_survey_invalid(good, tmp_path, bin_dir):
    survey = tmp_path / "survey"
    shutil.copytree(good, survey)
    # a job the scheduler killed (SIGTERM, as Slurm's time limit and scancel
    # send): run_kernel.sh's trap says so, the kernel keeps what it measured
    killed = survey / "killed" / "work"
    killed.mkdir(parents=True)
    shutil.copy(RUN_KERNEL, killed)
    job = subprocess.Popen(["./run_kernel.sh", str(bin_dir / ANY_KERNEL), "-t", "1",
                            "--seconds", "60", "--warmup-ms", "0", "-o", "k"], cwd=killed,
                           start_new_session=True)
    time.sleep(2)
    # Slurm signals every process of the job, not its shell alone
    os.killpg(job.pid, signal.SIGTERM)
    assert job.wait(timeout=60) == 143
    # a job that never started: its work directory, no job_status
    (survey / "queued" / "work").mkdir(parents=True)
    shutil.copy(RUN_KERNEL, survey / "queued" / "work")
    # a node's ranks table cut short: its last rank lost
    kernel(bin_dir, survey / "lost", ANY_KERNEL, "--node-files")
    table = next((survey / "lost").glob("*_ranks.csv"))
    table.write_text("".join(table.read_text().splitlines(keepends=True)[:-1]))
    # placement left to the OS; noise injected
    kernel(bin_dir, survey / "unpinned", ANY_KERNEL, "--no-pin")
    kernel(bin_dir, survey / "injected", ANY_KERNEL, "--inject", "1000:10")
    # a data file deleted
    kernel(bin_dir, survey / "deleted", ANY_KERNEL)
    deleted = sorted((survey / "deleted").glob("*_1_*.dat"))[0]
    deleted.unlink()

    code, out, _ = validate(survey)
    assert code == 1, out
    faults, summary = out[:-1], out[-1]
    expected = {
        f"{killed}: job killed signal=TERM",
        f"{survey / 'queued' / 'work'}: job unfinished",
        f"{killed / 'k.json'}: incomplete (interrupted by SIGTERM)",
        f"{survey / 'lost' / ANY_KERNEL}.json: 1 of 2 ranks missing (1)",
        f"{survey / 'unpinned' / ANY_KERNEL}.json: not pinned to CPUs (--no-pin)",
        f"{survey / 'injected' / ANY_KERNEL}.json: noise injected (--inject): rank 0-1",
        f"{deleted}: missing (the run's JSON lists it)",
    }
    assert set(faults) == expected, out
    assert summary == f"invalid: {len(expected)} faults in {len(KERNELS) + 5} runs and " \
                      f"{len(KERNELS) + 2} jobs", out
