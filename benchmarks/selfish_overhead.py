#!/usr/bin/env python3
"""How much the selfish-detour loop adds to the timer it reads.

Runs `noise-info --json` (the cost of one timer read) and a short `selfish`
run (its minimal loop iteration) back to back, and prints both and their
ratio. The loop reads the timer, subtracts, compares and, rarely, stores:
the target is a minimal iteration of at most 1.5x one timer read.

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
    info = json.loads(subprocess.run([BIN / "noise-info", "--json"], check=True,
                                     capture_output=True, text=True).stdout)
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([BIN / "selfish", "--seconds", "1", "-o", "s"], cwd=d, check=True,
                       capture_output=True)
        run = json.loads((Path(d) / "s.json").read_text())
    read_ns = info["timer_read_ns"]
    loop_ns = run["ranks"][0]["min_iteration_ns"]
    print(f"timer read (noise-info):        {read_ns:7.2f} ns ({info['timer_read_ticks']:.1f} ticks)")
    print(f"minimal selfish iteration:      {loop_ns:7.2f} ns "
          f"({run['ranks'][0]['min_iteration_ticks']} ticks)")
    print(f"ratio (target <= 1.5):          {loop_ns / read_ns:7.2f}")


if __name__ == "__main__":
    main()
