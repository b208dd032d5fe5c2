#!/usr/bin/env python3
"""ReFrame's own cost for the noise check set.

Runs every check of reframe/checks on the local partition of
reframe/config/generic.py (14 checks on a 2-CPU machine), and prints the
wall time, the build, the time kernels ran (each check's job script notes
when its kernel started and ended), and what is left: ReFrame's overhead
(loading, the pipeline, job scripts, polling, sanity and performance).

    benchmarks/reframe_overhead.py

A benchmark, not a test: it prints figures and asserts nothing.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from nbtest.jube_runs import union_length  # noqa: E402


def main():
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        t0 = time.time()
        subprocess.run([str(ROOT / ".venv" / "bin" / "reframe"),
                        "-C", str(ROOT / "reframe" / "config" / "generic.py"),
                        "-c", str(ROOT / "reframe" / "checks"), "--system", "anynode:local",
                        "--keep-stage-files", "--report-file", str(d / "report.json"), "-r"],
                       cwd=d, capture_output=True, text=True,
                       env=dict(os.environ, RFM_SQLITE_DB_FILE=str(d / "results.db")))
        wall = time.time() - t0
        cases = json.loads((d / "report.json").read_text())["runs"][-1]["testcases"]
        build = sum(tc["time_compile"] or 0 for tc in cases if tc["fixture"])
        spans = []
        for stage in (d / "stage").rglob("kernel_started"):
            started = float(stage.read_text())
            ended = float((stage.parent / "kernel_ended").read_text())
            spans.append((started, ended))
    busy = union_length(sorted(spans))
    print(f"ReFrame, {len(spans)} noise checks on the local partition, one at a time")
    print(f"  wall time            {wall:7.1f} s")
    print(f"  build (fixture)      {build:7.1f} s")
    print(f"  kernels running      {busy:7.1f} s")
    print(f"  ReFrame overhead     {wall - build - busy:7.1f} s   "
          f"({(wall - build - busy) / max(len(spans), 1):.2f} s a check)")


if __name__ == "__main__":
    main()
