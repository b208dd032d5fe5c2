#!/usr/bin/env python3
"""How close the selfish-detour loop comes to the timer it reads.

Runs a short `selfish` (its minimal iteration) and reads, from the same
process's calibration in its JSON, what one timer read costs a loop: the
unfenced read (the loop's own, over 16 in a row) and the fenced one (the
work loops'), minimum and median. The loop reads the timer, subtracts,
compares and, rarely, stores: the target is a minimal iteration of at most
1.05x the minimal unfenced read, the physical limit.

    benchmarks/selfish_overhead.py [BIN_DIR]      (default build/bin)

A benchmark, not a test: it prints figures and asserts nothing.
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

BIN = Path(sys.argv[1] if len(sys.argv) > 1 else "build/bin").resolve()


def main():
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([BIN / "selfish", "--seconds", "1", "-o", "s"], cwd=d, check=True,
                       capture_output=True)
        run = json.loads((Path(d) / "s.json").read_text())
    cal = run["calibration"]
    loop_ns = run["ranks"][0]["min_iteration_ns"]
    print(f"unfenced timer read (min, median): {cal['unfenced_read_min_ns']:6.2f} "
          f"{cal['unfenced_read_median_ns']:6.2f} ns")
    print(f"fenced timer read (min, median):   {cal['timer_read_min_ns']:6.2f} "
          f"{cal['timer_read_median_ns']:6.2f} ns")
    print(f"minimal selfish iteration:         {loop_ns:6.2f} ns "
          f"({run['ranks'][0]['min_iteration_ticks']} ticks)")
    print(f"ratio to the minimal unfenced read (target <= 1.05): "
          f"{loop_ns / cal['unfenced_read_min_ns']:5.2f}")


if __name__ == "__main__":
    main()
