"""From why to how, proven: a rival thread takes the measured CPU in slices
(noise-slowdown, at real-time priority, pinned to CPU 1); a kernel (any:
the advice is the report's) with --trace on CPU 1 names it in the
detours; the report's advice.csv gives the command that moves it to the
CPU not measured; the test runs that command, measures again, and the
rival is gone from CPU 1 while it still runs (on CPU 0). The rival is
stopped at the end, as the machine was. Without the advice (no row for the
rival, or no command in it) the test fails."""
import os
import shlex
import signal
import subprocess

import numpy as np
import pytest
from nbtest import ANY_KERNEL, REPORT_R
from nbtest.competitor import start_rival
from test_causes import needs_tracefs
from test_report import read_csv

MEASURED, HOUSEKEEPING = 1, 0


def traced_run(bin_dir, out):
    out.mkdir()
    done = subprocess.run([str(bin_dir / ANY_KERNEL), "-t", "1", "--cpus", str(MEASURED),
                           "--seconds", "3", "--trace", "-o", "traced"], cwd=out,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    report = subprocess.run(["Rscript", str(REPORT_R), str(out), "--no-pdf"],
                            capture_output=True, text=True, timeout=600)
    assert report.returncode == 0, report.stderr
    return out / "report"


def rival_detours(report, name):
    """The detours on the measured CPU that the trace put on the rival."""
    return sum(int(r["detours"]) for r in read_csv(report / "top_causes.csv")
               if r["class"] == "thread" and r["name"] == name and int(r["cpu"]) == MEASURED)


@needs_tracefs
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2 or
                    not {MEASURED, HOUSEKEEPING} <= os.sched_getaffinity(0),
                    reason="needs CPUs 0 and 1: one measured, one to move the rival to")
def test_the_reports_advice_moves_a_rival_thread_off_the_cpu(bin_dir, tmp_path):
    rival = start_rival(bin_dir, MEASURED, "100:1900", tmp_path / "slices.dat")
    name = f"noise-slowdown:{rival.pid}"
    try:
        before = traced_run(bin_dir, tmp_path / "before")
        assert rival_detours(before, name) >= 100, read_csv(before / "top_causes.csv")
        # the row of the rule the rival falls under: its name column shows
        # the three names that took most, which on a busy day may be other
        # threads that ran on the CPU; its commands are every thread's
        rows = [r for r in read_csv(before / "advice.csv") if r["class"] == "thread"]
        assert rows, f"the report gives no advice for {name}"
        commands = [c.strip() for r in rows for c in r["action"].split(";")]
        command = next((c for c in commands if c.endswith(f" {rival.pid}")), None)
        assert command, f"no command for {name} in {rows}"
        assert command == f"taskset -a -c -p {HOUSEKEEPING} {rival.pid}", command
        subprocess.run(shlex.split(command), check=True, capture_output=True, timeout=30)
        assert os.sched_getaffinity(rival.pid) == {HOUSEKEEPING}
        after = traced_run(bin_dir, tmp_path / "after")
        assert rival_detours(after, name) == 0, read_csv(after / "top_causes.csv")
        assert rival.poll() is None, "the rival must still run, on the other CPU"
    finally:
        rival.send_signal(signal.SIGTERM)
        _, err = rival.communicate(timeout=30)
    assert rival.returncode == 0, err
    # it took its slices all along: the cause was moved, not stopped
    slices = np.loadtxt(tmp_path / "slices.dat", dtype=np.int64, ndmin=2)
    assert len(slices) > 1000
