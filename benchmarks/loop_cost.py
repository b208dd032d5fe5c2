#!/usr/bin/env python3
"""What the measured loops cost, and what a sample costs in memory.

Prints, for each work kind compiled in:
  - ticks (and ns) per work loop, as the kernels measure it, and the ticks of
    one FWQ `-w 18` sample (the fastest of 50): 2^18 loops, as the Sequoia
    original's `fwq -w 18`;
  - the work loops of an FTQ count and the share of each quantum spent
    outside the work (timer reads, compare, store): 1 - best count * loops a
    count * ticks per loop / quantum, at 10 kHz (below 0 where FTQ's copy of
    the loop runs faster than FWQ's, which the cost is measured on: the same
    instructions at another alignment);
  - the spread over 5 FTQ runs (multiiter, 10 kHz) of brho's "Fraction"
    (mean / max count) and of the robust one (mean / 99.9th percentile):
    min, median, max (target: no wider than brho FTQ's in the same minutes);
    with REFERENCE_FTQ naming a build of brho's FTQ (github.com/brho/ftq,
    `make linux`), each run is followed by one of it on the same CPU, and
    its figures are printed alike;
and for FWQ and FTQ the resident memory per sample, from the peak RSS of two
runs of N and 2N samples in this same invocation (the baseline cancels); the
target is at most 16 bytes a sample.

    [REFERENCE_FTQ=.../ftq.linux] benchmarks/loop_cost.py [BIN_DIR]
                                           (default build/bin; `make bench`)

A benchmark, not a test: it prints figures and asserts nothing.
"""
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

BIN = Path(sys.argv[1] if len(sys.argv) > 1 else "build/bin").resolve()


def run(kernel, *args, cwd):
    """Runs a kernel; returns its peak resident set in bytes."""
    proc = subprocess.Popen([BIN / kernel, *map(str, args)], cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"loop_cost: {kernel} {' '.join(map(str, args))} failed: "
                 f"{proc.stderr.read().decode().strip()}")
    return usage.ru_maxrss * 1024


def brho_ftq(binary, cpu, name, cwd):
    """One run of brho's FTQ (one thread, pinned by taskset as ours is by
    --cpus); its counts, from the .dat file it writes (ns since the first
    sample, count)."""
    subprocess.run(["taskset", "-c", cpu, binary, "-f", "10000", "-n", "20000", "-o", name],
                   cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows = (Path(cwd) / f"{name}_0.dat").read_text().splitlines()
    return [int(line.split()[1]) for line in rows if line and not line.startswith("#")]


def p99_9(counts):
    """The 99.9th percentile as the kernels compute it: the order statistic
    at rank ceil(0.999 n)."""
    counts = sorted(counts)
    return counts[max(math.ceil(0.999 * len(counts)), 1) - 1]


def fraction_spread(d):
    """Brho's Fraction (mean / max) and the robust one (mean / p99.9) over
    5 runs of 2 s at 10 kHz; with REFERENCE_FTQ, brho's FTQ in turns."""
    cpu = str(os.cpu_count() - 1)
    reference = os.environ.get("REFERENCE_FTQ")
    figures = {"noisebench": ([], [])}
    if reference:
        figures["brho FTQ"] = ([], [])
    for i in range(5):
        run("ftq", "--cpus", cpu, "--freq", 10000, "-n", 20000, "-o", f"f{i}", cwd=d)
        rank = json.loads((Path(d) / f"f{i}.json").read_text())["ranks"][0]
        figures["noisebench"][0].append(rank["stats"]["mean"] / rank["stats"]["max"])
        figures["noisebench"][1].append(rank["stats"]["mean"] / rank["best_p99_9"])
        if reference:
            counts = brho_ftq(reference, cpu, f"b{i}", d)
            mean = sum(counts) / len(counts)
            figures["brho FTQ"][0].append(mean / max(counts))
            figures["brho FTQ"][1].append(mean / p99_9(counts))
    print(f"\nFTQ multiiter 10 kHz on CPU {cpu}, 5 runs of 2 s"
          f"{' each, in turns' if reference else ''}: min median max")
    for tool, (fraction, robust) in figures.items():
        for name, v in (("Fraction (mean / max)", fraction), ("robust (mean / p99.9)", robust)):
            v = sorted(v)
            print(f"  {tool:10} {name:24} {v[0]:.3f} {v[2]:.3f} {v[4]:.3f}  "
                  f"(spread {v[4] - v[0]:.3f})")


def main():
    info = json.loads(subprocess.run([BIN / "noise-info", "--json"], check=True,
                                     capture_output=True, text=True).stdout)
    tpn = info["ticks_per_ns"]
    print(f"timer read: {info['timer_read_ticks']:.1f} ticks = {info['timer_read_ns']:.1f} ns; "
          f"{tpn:.4f} ticks/ns")
    print(f"{'work':10} {'ticks/loop':>10} {'ns/loop':>8} {'-w 18 sample':>13} "
          f"{'loops/count':>11} {'counts/quantum':>14} {'outside work':>13}")
    with tempfile.TemporaryDirectory() as d:
        for work in info["ticks_per_work_loop"]:
            run("fwq", "--work", work, "-w", 18, "-n", 50, "-o", f"w{work}", cwd=d)
            fwq = json.loads((Path(d) / f"w{work}.json").read_text())
            run("ftq", "--work", work, "--freq", 10000, "-n", 5000, "-o", work, cwd=d)
            meta = json.loads((Path(d) / f"{work}.json").read_text())
            per_loop = meta["ticks_per_work_loop_min"]
            per_count = meta["work_loops_per_count"]
            best = meta["ranks"][0]["stats"]["max"]
            outside = 1 - best * per_count * per_loop / meta["quantum_ticks"]
            print(f"{work:10} {per_loop:10.1f} {per_loop / tpn:8.1f} "
                  f"{fwq['ranks'][0]['stats']['min']:13.0f} {per_count:11d} {best:14.0f} "
                  f"{100 * outside:12.1f}%")

        fraction_spread(d)

        n = 2_000_000
        print(f"\nmemory per sample (peak RSS of {2 * n} minus {n} samples, one thread):")
        # FTQ's 5 us quanta: short runs, still 10 counts of multiiter work each
        for kernel, args in (("fwq", ["-w", 0]), ("ftq", ["--freq", 200_000])):
            small = run(kernel, *args, "-n", n, "--warmup-ms", 0, "-o", "m1", cwd=d)
            large = run(kernel, *args, "-n", 2 * n, "--warmup-ms", 0, "-o", "m2", cwd=d)
            per = (large - small) / n
            print(f"{kernel:4} {per:6.2f} bytes/sample (target <= 16)")


if __name__ == "__main__":
    main()
