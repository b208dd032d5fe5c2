#!/usr/bin/env python3
"""The report's time, as a person waits for it (`Rscript analysis/inst/report.R
DIR`, R's start, the slowdown model and the PDF included), on:

- make run's results: the survey of this machine (scripts/survey.sh, JUBE
  here, 14 runs of 1 and 2 CPUs), target 15 s;
- a synthetic survey of 8,192 ranks on 64 nodes (benchmarks/survey.R,
  1,000 samples a rank, from an FWQ run of this machine).

Each three times, with and without the PDF; the median and the range,
beside a baseline measured in the same run: an R process that starts and
reads every data file of the results with data.table::fread.

    benchmarks/report_time.py [BIN_DIR]      (default build/bin)

A benchmark, not a test: it prints figures and asserts nothing.
"""
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.argv[1] if len(sys.argv) > 1 else "build/bin").resolve()
OUT = ROOT / ".cache" / "bench" / "report"
REPEATS = 3
FREAD = ("suppressPackageStartupMessages(library(data.table)); "
         "for (f in list.files(commandArgs(TRUE)[1], '[.]dat$', recursive = TRUE, "
         "full.names = TRUE)) if (file.size(f) > 0) fread(f, header = FALSE, "
         "showProgress = FALSE)")


def seconds(cmd):
    start = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - start


def timed(cmd):
    runs = [seconds(cmd) for _ in range(REPEATS)]
    return statistics.median(runs), min(runs), max(runs)


def line(what, results, target=None):
    report = ["Rscript", str(ROOT / "analysis" / "inst" / "report.R"), str(results)]
    fread = timed(["Rscript", "-e", FREAD, str(results)])
    with_pdf = timed(report)
    without = timed(report + ["--no-pdf"])
    print(f"{what}: report {with_pdf[0]:.1f} s ({with_pdf[1]:.1f} to {with_pdf[2]:.1f}), "
          f"without the PDF {without[0]:.1f} s ({without[1]:.1f} to {without[2]:.1f}); "
          f"R reading every data file with fread {fread[0]:.1f} s: "
          f"{with_pdf[0] / fread[0]:.1f}x"
          + (f"; target {target} s: {'met' if with_pdf[0] <= target else 'NOT met'}"
             if target else ""))


def main():
    subprocess.run(["rm", "-rf", str(OUT)], check=True)
    survey = OUT / "survey"
    subprocess.run([str(ROOT / "scripts" / "survey.sh"), str(BIN), str(survey)], check=True,
                   stdout=subprocess.DEVNULL)
    line("make run's survey (14 runs, 1 and 2 CPUs)", survey, target=15)
    source = OUT / "source"
    source.mkdir(parents=True)
    subprocess.run([str(BIN / "fwq"), "-t", "1", "-n", "2000", "-o", "fwq"], cwd=source,
                   check=True, stdout=subprocess.DEVNULL)
    ranks = OUT / "ranks8192"
    subprocess.run(["Rscript", str(ROOT / "benchmarks" / "survey.R"), str(source / "fwq.json"),
                    str(ranks), "64", "128", "1000"], check=True, stdout=subprocess.DEVNULL)
    line("8,192 synthetic ranks on 64 nodes, 1,000 samples a rank", ranks)


if __name__ == "__main__":
    main()
