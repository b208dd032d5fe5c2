#!/usr/bin/env python3
"""What --trace costs the measurement: each kernel's noise and its best
sample, with and without tracing, side by side in one run.

Per kernel, ROUNDS pairs of runs on every CPU, the traced and the untraced
run of a pair back to back (in alternating order, so that the machine's
drift falls on both alike); printed: the median over the rounds of the
kernel's own noise figure and of its best sample, and the differences.
Targets: tracing adds under 0.5 percentage point of noise and nothing to the
best sample (docs/kernels.md, "Causes").

    benchmarks/trace_cost.py [BIN_DIR] [ROUNDS]     (as root; default build/bin, 5)

A benchmark, not a test: it prints figures and asserts nothing.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BIN = Path(sys.argv[1] if len(sys.argv) > 1 else "build/bin").resolve()
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 5

# kernel: (its arguments, its noise in %, its best sample and unit)
KERNELS = {
    "fwq": (["-n", "20000", "-w", "12"],
            lambda m: 100 * statistics.mean(t["stats"]["scaled_noise_mean"] for t in m["ranks"]),
            lambda m: (min(t["stats"]["min"] for t in m["ranks"]) / m["ticks_per_ns"], "ns")),
    "ftq": (["-n", "20000"],
            lambda m: 100 * statistics.mean(t["stats"]["scaled_noise_mean"] for t in m["ranks"]),
            lambda m: (max(t["stats"]["max"] for t in m["ranks"]), "loops")),
    "psnap": (["-n", "2000"],
              lambda m: m["summary"]["os_noise_percent"],
              lambda m: (min(r["min_us"] for r in m["ranks"]) * 1e3, "ns")),
    "selfish": (["--seconds", "2"],
                lambda m: statistics.mean(r["cpu_overhead_percent"] for r in m["ranks"]),
                lambda m: (min(r["min_iteration_ns"] for r in m["ranks"]), "ns")),
}


def run(kernel, args, trace, directory):
    cmd = [BIN / kernel, "-t", "0", *args, "-o", "run"] + (["--trace"] if trace else [])
    subprocess.run(cmd, cwd=directory, check=True, capture_output=True)
    meta = json.loads((Path(directory) / "run.json").read_text())
    if trace and not meta["trace"]["attributed"]:
        sys.exit(f"trace_cost: --trace could not record: {meta['trace']['why']}")
    return meta


def main():
    if os.geteuid() != 0:
        print("trace_cost: skipped: --trace needs root (tracefs)")
        return
    print(f"{'kernel':8} {'noise %':>9} {'traced':>9} {'+pp':>7}   {'best':>10} {'traced':>10}")
    for kernel, (args, noise, best) in KERNELS.items():
        figures = {False: [], True: []}
        with tempfile.TemporaryDirectory() as d:
            for i in range(ROUNDS):
                for trace in ((False, True) if i % 2 == 0 else (True, False)):
                    m = run(kernel, args, trace, d)
                    figures[trace].append((noise(m), best(m)[0]))
        unit = best(m)[1]
        n0 = statistics.median(f[0] for f in figures[False])
        n1 = statistics.median(f[0] for f in figures[True])
        b0 = statistics.median(f[1] for f in figures[False])
        b1 = statistics.median(f[1] for f in figures[True])
        print(f"{kernel:8} {n0:9.3f} {n1:9.3f} {n1 - n0:+7.3f}   {b0:8.1f} {unit:>2}"
              f" {b1:8.1f} {unit:>2}")


if __name__ == "__main__":
    main()
