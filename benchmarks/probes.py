#!/usr/bin/env python3
"""Whether every probe gives the machine's headline: what the system stole
of one CPU (stolen_percent, src/lib/system/speed.h), the same by FWQ of
each work kind, FTQ, P-SNAP and selfish.

Rounds of one short run of each probe, interleaved on the last CPU, in
four conditions, tests/test_stolen.py's over longer runs: quiet; two rivals
at real-time priority on that CPU (noise-slowdown) taking 40 us every 1 ms
and 1 ms every 20 ms, periodic, then at random; a memory-bandwidth hog on
the other CPU (dd of 256 MiB blocks), beside which DAXPY on 32 MiB vectors
also runs. The
reference is selfish at the one threshold, a clock-read loop in the manner
of osnoise. For each probe and condition: the median stolen share, the
paired difference from the reference's in the same round with its 95%
bootstrap interval, the median slowdown (the work's) and whether the probe
said it is coarse. A probe is equivalent where the interval lies within
+-max(0.2 points, 10% of the reference's). A benchmark, not a test: the
day decides; it prints and asserts nothing.

    benchmarks/probes.py [BIN_DIR] [ROUNDS]     (default build/bin, 5)
"""
import json
import os
import platform
import random
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BIN = Path(sys.argv[1] if len(sys.argv) > 1 else "build/bin").resolve()
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 5
CPUS = sorted(os.sched_getaffinity(0))
CPU = CPUS[-1]
SECONDS = "1"
PROBES = {
    "selfish": ["selfish"],
    "fwq multiiter": ["fwq", "--work", "multiiter"],
    "fwq increment": ["fwq", "--work", "increment"],
    "fwq daxpy": ["fwq", "--work", "daxpy"],
    "fwq daxpy -w 9": ["fwq", "--work", "daxpy", "-w", "9"],
    "fwq daxpy 32 MiB": ["fwq", "--work", "daxpy", "--daxpy-len", "4194304", "-w", "0"],
    "ftq": ["ftq"],
    "psnap 100 us": ["psnap", "-g", "100"],
    "psnap 1 ms": ["psnap", "-g", "1000"],
}
if platform.machine() == "x86_64":
    PROBES["fwq asm"] = ["fwq", "--work", "asm"]
REFERENCE = "selfish"


def one_run(name, where):
    binary, *args = PROBES[name]
    prefix = where / name.replace(" ", "_")
    subprocess.run([str(BIN / binary), "--cpus", str(CPU), *args, "--seconds", SECONDS, "-o",
                    str(prefix)], capture_output=True, text=True, check=True, timeout=120)
    (entry,) = json.loads(prefix.with_suffix(".json").read_text())["ranks"]
    return entry


class Rivals:
    """Two rivals, 40 us every 1 ms and 1 ms every 20 ms, at random times
    or not; their logs in the run's directory (-o writes atomically, by a
    rename onto the name given, so never a device's name)."""

    def __init__(self, where, random_times):
        self.procs = [subprocess.Popen([str(BIN / "noise-slowdown"), "--cpu", str(CPU),
                                        "--seconds", "600", "--stretch", "1000:1000",
                                        "--slice", slice_, "-o", str(where / f"rival{k}.dat"),
                                        *(["--random"] if random_times else [])],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                      for k, slice_ in enumerate(("40:960", "1000:19000"))]

    def send_signal(self, sig):
        for p in self.procs:
            p.send_signal(sig)

    def wait(self, timeout):
        for p in self.procs:
            p.wait(timeout=timeout)


def hog(where):
    del where  # nothing to log
    other = CPUS[0] if len(CPUS) > 1 else CPU
    return subprocess.Popen(["taskset", "-c", str(other), "dd", "if=/dev/zero", "of=/dev/null",
                             "bs=256M", "count=1000000"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


CONDITIONS = {"quiet": None, "periodic rivals": lambda where: Rivals(where, False),
              "random rivals": lambda where: Rivals(where, True), "memory hog": hog}


def interval(diffs, resamples=10000):
    rng = random.Random(1)
    means = sorted(statistics.fmean(rng.choices(diffs, k=len(diffs))) for _ in range(resamples))
    return means[int(0.025 * resamples)], means[int(0.975 * resamples) - 1]


def main():
    print(f"Probes on cpu{CPU}, {ROUNDS} rounds of a {SECONDS}-s run of each, interleaved;"
          f" reference {REFERENCE}")
    print(f"{'condition':>24} {'probe':>16} {'stolen %':>9} {'minus ref':>10} "
          f"{'95% interval':>17} {'slowdown %':>11} {'coarse':>7} verdict")
    for condition, start in CONDITIONS.items():
        got = {name: [] for name in PROBES}
        with tempfile.TemporaryDirectory() as tmp:
            other = start(Path(tmp)) if start else None
            try:
                for _ in range(ROUNDS):
                    for name in PROBES:
                        got[name].append(one_run(name, Path(tmp)))
            finally:
                if other:
                    other.send_signal(signal.SIGTERM)
                    other.wait(timeout=30)
        ref = [e["stolen_percent"] for e in got[REFERENCE]]
        for name, runs in got.items():
            stolen = [e["stolen_percent"] for e in runs]
            diffs = [a - b for a, b in zip(stolen, ref)]
            lo, hi = interval(diffs)
            bound = max(0.2, 0.1 * statistics.median(ref))
            verdict = ("reference" if name == REFERENCE else "equivalent"
                       if -bound <= lo and hi <= bound else "differs"
                       if hi < -bound or lo > bound else "cannot tell")
            print(f"{condition:>24} {name:>16} {statistics.median(stolen):>9.3g} "
                  f"{statistics.median(diffs):>+10.3g} {lo:>+8.3g} {hi:>+8.3g} "
                  f"{statistics.median(e['slowdown_percent'] for e in runs):>11.3g} "
                  f"{sum(bool(e['coarse']) for e in runs):>4}/{len(runs)} {verdict}")


if __name__ == "__main__":
    main()
