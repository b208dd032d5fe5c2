#!/usr/bin/env python3
"""Whether the three FWQ work kinds agree on what the system took of one CPU.

The headline is what the system took (system_percent: detours and running
slow), not the work's own variation (docs/analysis.md, "The figures"). If
that split is right, a latency-bound loop (multiiter), a register-only one
(asm, x86-64) and a throughput-bound one (daxpy) on the same CPU in the
same minutes should give the same share, within what the measurement can
know: the spread of one kind's share from one run to the next.

Rounds of one 2-s run of each kind, interleaved on the last CPU (so each
round's kinds face the same minute), each kind at its catalogue size. For
each kind: the median over the rounds of system_percent, detour_percent,
slow_percent and variation_percent, and the interquartile range of
system_percent. Two kinds agree when their medians differ by less than the
larger of their ranges. A benchmark, not a test: the day decides; it prints
and asserts nothing.

    benchmarks/work_kinds.py [BIN_DIR] [ROUNDS]     (default build/bin, 7)
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BIN = Path(sys.argv[1] if len(sys.argv) > 1 else "build/bin").resolve()
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 7
CPU = sorted(os.sched_getaffinity(0))[-1]
CATALOGUE = json.loads((Path(__file__).resolve().parent.parent / "src" / "kernels" /
                        "kernels.json").read_text())
BITS = CATALOGUE["kernels"]["fwq"]["work_bits"]
FIGURES = ("system_percent", "detour_percent", "slow_percent", "variation_percent")


def kinds():
    """The work kinds this build has (its --help lists them)."""
    text = subprocess.run([str(BIN / "fwq"), "--help"], capture_output=True, text=True).stdout
    return re.search(r"--work KIND\s+work loop: ([\w ]+?) \(default", text)[1].split()


def one_run(kind, where):
    out = subprocess.run([str(BIN / "fwq"), "--cpus", str(CPU), "--work", kind,
                          "-w", str(BITS.get(kind, BITS["default"])), "--seconds", "2",
                          "--warmup-ms", "300", "-o", str(where / kind)],
                         capture_output=True, text=True, check=True, timeout=120).stdout
    line = next(x for x in out.splitlines() if x.startswith("rank kernel=fwq "))
    fig = dict(kv.split("=", 1) for kv in line.split()[1:])
    return {k: float(fig[k]) for k in FIGURES}


def quartiles(v):
    q = statistics.quantiles(v, n=4, method="inclusive")
    return q[0], q[2]


def main():
    got = {k: [] for k in kinds()}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(ROUNDS):
            for kind in got:
                got[kind].append(one_run(kind, Path(tmp)))
    print(f"FWQ on cpu{CPU}, {ROUNDS} rounds of a 2-s run of each kind, interleaved")
    print(f"{'kind':>10} {'system %':>9} {'IQR':>15} {'detours %':>10} {'slow %':>7} "
          f"{'variation %':>12}")
    summary = {}
    for kind, runs in got.items():
        med = {f: statistics.median(r[f] for r in runs) for f in FIGURES}
        lo, hi = quartiles([r["system_percent"] for r in runs])
        summary[kind] = (med["system_percent"], hi - lo)
        print(f"{kind:>10} {med['system_percent']:>9.3g} {lo:>7.3g}-{hi:<7.3g} "
              f"{med['detour_percent']:>10.3g} {med['slow_percent']:>7.3g} "
              f"{med['variation_percent']:>12.3g}")
    names = list(summary)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            diff = abs(summary[a][0] - summary[b][0])
            spread = max(summary[a][1], summary[b][1])
            print(f"{a} and {b}: system's share differs by {diff:.3g} points, "
                  f"{'within' if diff < spread else 'beyond'} the larger IQR ({spread:.3g}): "
                  f"{'agree' if diff < spread else 'differ'}")


if __name__ == "__main__":
    main()
