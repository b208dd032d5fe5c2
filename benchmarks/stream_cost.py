#!/usr/bin/env python3
"""What a streamed run (fwq --stream) costs: memory over its length, and
what its checkpoints do to the noise it measures.

1. Memory: one stream of LONG seconds on one CPU (the writer on another),
   its resident set (VmRSS) read every second; printed after 1 minute and
   at the end, per measuring thread, and their ratio (target: equal within
   a few %).
2. Checkpoints: runs of 20 s checkpointing every second, and runs whose only
   checkpoint is the last, in turns (ABAB...); the share of the time lost
   (the JSON's lost_percent) of each, the medians and their difference, and
   that difference at the default interval (60 s: each checkpoint costs
   alike, so a sixtieth; target: under 0.1 percentage point), and the
   longest checkpoint write.

    benchmarks/stream_cost.py [BIN_DIR] [LONG_SECONDS]   (build/bin, 600)

A benchmark, not a test: it prints figures and asserts nothing. It takes
LONG_SECONDS plus about 3 minutes; 3600 gives the hour of the issue.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.argv[1] if len(sys.argv) > 1 else "build/bin").resolve()
LONG = float(sys.argv[2]) if len(sys.argv) > 2 else 600
# one measured CPU, the last; the writer takes another
CPU = str(os.cpu_count() - 1)


def rss_kib(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return None


def memory(directory):
    proc = subprocess.Popen([BIN / "fwq", "--cpus", CPU, "--stream", "--seconds", str(LONG),
                             "-o", "long"], cwd=directory, stdout=subprocess.DEVNULL)
    start, samples = time.monotonic(), []
    while proc.poll() is None:
        time.sleep(1)
        try:
            samples.append((time.monotonic() - start, rss_kib(proc.pid)))
        except (FileNotFoundError, ProcessLookupError):
            break
    samples = [(t, kib) for t, kib in samples if kib]
    at_minute = min(samples, key=lambda s: abs(s[0] - 60))
    last = samples[-1]
    peak = max(kib for _, kib in samples)
    run = json.loads((Path(directory) / "long.json").read_text())["ranks"][0]
    print(f"stream memory (fwq -w 12, one thread, {LONG:.0f} s): the stream's own "
          f"{run['memory_bytes'] / 2**20:.1f} MiB")
    print(f"  RSS after {at_minute[0]:5.0f} s: {at_minute[1] / 1024:7.1f} MiB")
    print(f"  RSS after {last[0]:5.0f} s: {last[1] / 1024:7.1f} MiB   (peak {peak / 1024:.1f} MiB)")
    print(f"  ratio end / 1 minute: {last[1] / at_minute[1]:.3f} (target: within a few %)")


def checkpoints(directory):
    lost = {"every 1 s": [], "at the end only": []}
    longest = []
    for i in range(6):
        for name, every in (("every 1 s", "1"), ("at the end only", "3600")):
            out = f"c{i}_{every}"
            subprocess.run([BIN / "fwq", "--cpus", CPU, "--stream", "--seconds", "20",
                            "--checkpoint", every, "-o", out], cwd=directory, check=True,
                           stdout=subprocess.DEVNULL)
            rank = json.loads((Path(directory) / f"{out}.json").read_text())["ranks"][0]
            lost[name].append(rank["lost_percent"])
            if every == "1":
                longest.append(rank["checkpoint_ms_max"])
    med = {k: statistics.median(v) for k, v in lost.items()}
    print("checkpoints' cost on the noise (fwq -w 12 --stream, 20 s runs, 6 of each, in turns):")
    for k, v in lost.items():
        print(f"  {k:16s} lost_percent median {med[k]:.3f} (runs {min(v):.3f}-{max(v):.3f})")
    diff = med['every 1 s'] - med['at the end only']
    # each checkpoint costs the same: at the default interval, 1/60 as many
    print(f"  difference {diff:+.3f} percentage points with one a second; at the default "
          f"--checkpoint 60, {diff / 60:+.4f} (target: under 0.1); longest checkpoint "
          f"{max(longest):.1f} ms")


def main():
    with tempfile.TemporaryDirectory() as d:
        memory(d)
        checkpoints(d)


if __name__ == "__main__":
    main()
