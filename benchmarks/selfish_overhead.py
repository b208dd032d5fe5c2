#!/usr/bin/env python3
"""How close the selfish-detour loop comes to the timer it reads.

Runs a short `selfish` (its minimal iteration) and reads, from the same
process's calibration in its JSON, what one timer read costs a loop: the
unfenced read (the loop's own, over 16 in a row) and the fenced one (the
work loops'), minimum and median. The loop reads the timer, subtracts,
compares and, rarely, stores: the target is a minimal iteration of at most
1.05x the minimal unfenced read, the physical limit.

With REFERENCE_NETGAUGE naming a build of Netgauge (github.com/spcl/netgauge,
`./configure && make`; an MPI build runs as a singleton), its selfish
benchmark (`netgauge -m mpi -x noise -e selfish`) runs next, on the same
CPU, and its own figures are printed beside ours: minimal iteration,
threshold, CPU overhead and how long it measured.

    [REFERENCE_NETGAUGE=.../netgauge] benchmarks/selfish_overhead.py [BIN_DIR]
                                                   (default build/bin)

A benchmark, not a test: it prints figures and asserts nothing.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

BIN = Path(sys.argv[1] if len(sys.argv) > 1 else "build/bin").resolve()
CPU = os.cpu_count() - 1
# Netgauge stores two words a detour and stops when they are full
NETGAUGE_RESULTS = 2_000_000


def on_cpu():
    os.sched_setaffinity(0, {CPU})


def netgauge(binary, d):
    """Netgauge's own summary lines, as figures."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    out = subprocess.run([binary, "-m", "mpi", "-x", "noise", "-e", "selfish", "-s",
                          str(NETGAUGE_RESULTS)], cwd=d, env=env, preexec_fn=on_cpu,
                         check=True, capture_output=True, text=True).stdout

    def figure(pattern):
        m = re.search(pattern + r"\s*([0-9.]+)", out)
        return float(m.group(1)) if m else float("nan")

    return {"min_ns": figure(r"Minimal cycle length \[ns\]:"),
            "min_ticks": figure(r"# min clock cycles per rank:"),
            "threshold": figure(r"Threshold: \[% minimal cycle length\]:"),
            "overhead": figure(r"CPU overhead due to noise:"),
            "period_s": figure(r"Measurement period:")}


def main():
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([BIN / "selfish", "--cpus", str(CPU), "--seconds", "1", "-o", "s"],
                       cwd=d, check=True, capture_output=True)
        run = json.loads((Path(d) / "s.json").read_text())
        reference = os.environ.get("REFERENCE_NETGAUGE")
        theirs = netgauge(reference, d) if reference else None
    cal = run["calibration"]
    rank = run["ranks"][0]
    loop_ns = rank["min_iteration_ns"]
    print(f"unfenced timer read (min, median): {cal['unfenced_read_min_ns']:6.2f} "
          f"{cal['unfenced_read_median_ns']:6.2f} ns")
    print(f"fenced timer read (min, median):   {cal['timer_read_min_ns']:6.2f} "
          f"{cal['timer_read_median_ns']:6.2f} ns")
    print(f"minimal selfish iteration:         {loop_ns:6.2f} ns "
          f"({rank['min_iteration_ticks']} ticks)")
    print(f"ratio to the minimal unfenced read (target <= 1.05): "
          f"{loop_ns / cal['unfenced_read_min_ns']:5.2f}")
    if theirs:
        print(f"\nselfish on CPU {CPU}, then Netgauge's: minimal iteration, threshold, "
              f"CPU overhead, period measured")
        threshold = run["threshold_percent"] / 100
        print(f"  noisebench {loop_ns:8.2f} ns ({rank['min_iteration_ticks']} ticks) "
              f"{threshold * loop_ns:8.1f} ns {rank['cpu_overhead_percent']:7.2f}% "
              f"{rank['period_s']:8.3f} s")
        print(f"  Netgauge   {theirs['min_ns']:8.2f} ns ({theirs['min_ticks']:.0f} ticks) "
              f"{theirs['threshold'] / 100 * theirs['min_ns']:8.1f} ns "
              f"{theirs['overhead']:7.2f}% {theirs['period_s']:8.3f} s")


if __name__ == "__main__":
    main()
