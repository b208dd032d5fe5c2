#!/usr/bin/env python3
"""noise-check's false alarms and detections on this machine, the day it runs.

1. Limits, as a site derives them from its survey: 10 quiet checks of 2 s
   with no limit, their runs kept (-o), and `noise-check --limits-from` of
   them: twice the 99th percentile, over the checks, of the node's worst
   CPU's share lost and longest detour (twice: this machine's quiet 99th
   percentile moves by less than that from one day to the next, and a noisy
   CPU worth draining loses many times it).
2. False alarms: 50 quiet checks against those limits.
3. Detections: 50 checks with a rival on the last CPU (noise-slowdown,
   real-time, 200 us of every 1 ms: 20% of it), counted where that CPU is
   named; and 10 checks at each of 1, 2, 5 and 10% (10, 20, 50, 100 us of
   every 1 ms): the smallest share named in 9 of 10 or more.

Each rate with its 95% Wilson interval. A benchmark, not a test: the rates
are the day's; it prints them and asserts nothing.

    benchmarks/check_rates.py [BIN_DIR]      (default build/bin)
"""
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from nbtest.competitor import start_rival  # noqa: E402

BIN = Path(sys.argv[1] if len(sys.argv) > 1 else "build/bin").resolve()
CPUS = sorted(os.sched_getaffinity(0))
SECONDS = 2


def check(*args, metrics=None):
    cmd = [str(BIN / "noise-check"), "--seconds", str(SECONDS), *map(str, args)]
    if metrics:
        cmd += ["--metrics", str(metrics)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def wilson(k, n):
    z = 1.96
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def rate(what, k, n):
    lo, hi = wilson(k, n)
    print(f"{what}: {k} of {n} ({100 * k / n:.0f}%, 95% interval {100 * lo:.0f}% to {100 * hi:.0f}%)")


def with_rival(on_us, limits, checks):
    off_us = 1000 - on_us
    with tempfile.TemporaryDirectory() as tmp:
        rival = start_rival(BIN, CPUS[-1], f"{on_us}:{off_us}", Path(tmp) / "slices.dat")
        try:
            named = sum(f"noise: cpu{CPUS[-1]} " in check(*limits).stdout for _ in range(checks))
        finally:
            rival.send_signal(signal.SIGTERM)
            rival.wait(timeout=30)
    return named


def main():
    with tempfile.TemporaryDirectory() as tmp:
        walls = []
        for i in range(10):
            prom = Path(tmp) / f"{i}.prom"
            check("--max-stolen-percent", 100, "--max-detour-us", 1e9, "-o", Path(tmp) / str(i),
                  metrics=prom)
            walls.append(float(re.search(r"^noisebench_check_duration_seconds (\S+)$",
                                         prom.read_text(), re.M)[1]))
        derived = subprocess.run([str(BIN / "noise-check"), "--limits-from", tmp],
                                 capture_output=True, text=True, check=True, timeout=120).stdout
    # a requirements file's rules: "stolen_percent <= P", "max_loss_us <= U"
    limit = {f: b for f, _, b in (line.split() for line in derived.splitlines()
                                  if not line.startswith("#"))}
    max_lost, max_detour = float(limit["stolen_percent"]), float(limit["max_loss_us"])
    limits = ["--max-stolen-percent", limit["stolen_percent"], "--max-detour-us",
              limit["max_loss_us"]]
    print(f"noise-check --seconds {SECONDS} on {len(CPUS)} CPUs: wall time "
          f"{min(walls):.2f} to {max(walls):.2f} s; limits from 10 quiet checks: lost <= "
          f"{max_lost:.3g}%, detours <= {max_detour:.0f} us")
    alarms = sum(check(*limits).returncode != 0 for _ in range(50))
    rate("false alarms, quiet checks", alarms, 50)
    rate(f"detections, 20% of cpu{CPUS[-1]} taken in 200 us slices", with_rival(200, limits, 50), 50)
    smallest = None
    for on_us in (10, 20, 50, 100):
        named = with_rival(on_us, limits, 10)
        rate(f"detections, {on_us / 10:g}% of cpu{CPUS[-1]} in {on_us} us slices", named, 10)
        if smallest is None and named >= 9:
            smallest = on_us / 10
    print(f"smallest noise named in 9 of 10 checks: "
          f"{f'{smallest:g}% of a CPU' if smallest else 'none of 1 to 10%'}")


if __name__ == "__main__":
    main()
