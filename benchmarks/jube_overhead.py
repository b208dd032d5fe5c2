#!/usr/bin/env python3
"""JUBE's and Slurm's own cost for an 8-workpackage Slurm sweep.

Runs jube/ftq.xml with tag slurm on the project's localhost cluster
(tests/slurm/cluster.sh, started and stopped here) over 4 sampling
frequencies x 2 core counts, 1 s of FTQ each, `jube continue` every second
until every job ended, and prints the wall time, the time kernels ran (from
each job's job_status: any kernel running), and the difference: the
harness's overhead (parsing, sbatch, scheduling, job start, polling, the
report step).

    benchmarks/jube_overhead.py [BIN_DIR]      (default build/bin)

A benchmark, not a test: it prints figures and asserts nothing.
"""
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from nbtest.jube_runs import ROOT, project_copy, run_to_end, union_length, workpackage_dirs  # noqa: E402,E501

BIN = Path(sys.argv[1] if len(sys.argv) > 1 else "build/bin").resolve()
CLUSTER = ROOT / "tests" / "slurm" / "cluster.sh"


def kernel_intervals(handle):
    spans = []
    for work in workpackage_dirs(handle, "kernel"):
        status = (work / "job_status").read_text()
        started = float(re.search(r"started=([\d.]+)", status).group(1))
        ended = float(re.search(r"ended=([\d.]+)", status).group(1))
        spans.append((started, ended))
    return sorted(spans)


def main():
    subprocess.run([CLUSTER, "start"], check=True, capture_output=True)
    env = {"SLURM_CONF": str(ROOT / ".cache" / "slurm" / "slurm.conf"),
           "NOISEBENCH_BIN_DIR": str(BIN)}
    try:
        with tempfile.TemporaryDirectory() as d:
            jube_dir = project_copy(Path(d), cores=[1, 2], seconds=1,
                                    frequency_hz=[10000, 7000, 5000, 3000])
            t0 = time.time()
            handle = run_to_end(jube_dir, "ftq", env, "slurm", poll_s=1)
            wall = time.time() - t0
            spans = kernel_intervals(handle)
    finally:
        subprocess.run([CLUSTER, "stop"], capture_output=True)
    busy = union_length(spans)
    print(f"JUBE + Slurm sweep of {len(spans)} FTQ workpackages (1 s of samples each), "
          f"polled every 1 s")
    print(f"  wall time            {wall:7.1f} s")
    print(f"  kernels running      {busy:7.1f} s   (sum over jobs "
          f"{sum(b - a for a, b in spans):.1f} s)")
    print(f"  harness overhead     {wall - busy:7.1f} s   "
          f"({(wall - busy) / len(spans):.1f} s a workpackage)")


if __name__ == "__main__":
    main()
