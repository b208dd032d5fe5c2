#!/usr/bin/env python3
"""The predicted slowdown at scale against a real bulk-synchronous
application, on this machine today.

bsp_mpi (compute T = 1 ms, then a barrier or an allreduce, 6000 phases) on
two MPI ranks, rank 1 with injected noise (500 us at random times, 2.5 ms
apart on average: --inject 2500:500:poisson) and then without; selfish
traces on the same two ranks, both ways, in the same round. What the
injection added to the application's phases is compared with what the
traces predict it adds (analysis/inst/predict.R, co-scheduled: rank i's trace for
process i, as the two ranks ran). Each round runs the traces one way round
and the applications the other (ABBA), and the next round starts with the
other way, so a drift of the machine's own noise weighs on both alike.

Prints, per collective, the measured and the predicted added slowdown with
95% t-intervals over the rounds, their ratio with its interval, and a
verdict: "agrees" (the ratio's interval inside [0.8, 1.25]), "disagrees"
(outside it altogether), or "cannot tell on this machine today" with the
reason (the interval straddles a bound, or the machine's own noise slows the
quiet application by more than 10%: noise that competes for the CPU is
outside the model, docs/analysis.md).

    benchmarks/bsp_validate.py [BIN_DIR] [ROUNDS]     (default build/bin, 4)

A benchmark, not a test: its outcome depends on the day.
"""
import csv
import io
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.argv[1] if len(sys.argv) > 1 else "build/bin").resolve()
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 4
INJECT = "2500:500:poisson"
PHASES = 6000
TRACE_SECONDS = 3
# the most the machine's own noise may slow the quiet application for the
# model's assumptions to be checked
MODEL_LIMIT = 0.1
AGREE = (0.8, 1.25)
# Student's t at 97.5% for 1 to 9 degrees of freedom; more rounds take the
# last, an interval a little wider than it need be
T975 = [12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26]


def mpmd(d, program, args, name, inject):
    """Two MPI ranks of one job; rank 1 with INJECT if inject."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    extra = ["--inject", INJECT] if inject else []
    cmd = ["mpirun", "--oversubscribe", "-n", "1", str(BIN / program), *args, "-o", name, ":",
           "-n", "1", str(BIN / program), *args, *extra, "-o", name]
    subprocess.run(cmd, cwd=d, env=env, check=True, capture_output=True, text=True,
                   timeout=600)
    return Path(d) / f"{name}.json"


def predicted(trace_json, phase_us):
    out = subprocess.run(["Rscript", str(ROOT / "analysis" / "inst" / "predict.R"),
                          str(trace_json),
                          "--phase-us", str(phase_us), "--processes", "2"],
                         check=True, capture_output=True, text=True).stdout
    rows = {r["mode"]: r for r in csv.DictReader(io.StringIO(out))}
    return float(rows["co-scheduled"]["slowdown"])


def interval(values):
    m = statistics.mean(values)
    if len(values) < 2:
        return m, math.nan, math.nan
    h = T975[min(len(values) - 2, len(T975) - 1)] * statistics.stdev(values) / math.sqrt(
        len(values))
    return m, m - h, m + h


def one_round(d, collective, r, flip):
    extra = ["--allreduce"] if collective == "allreduce" else []

    def app(name, inject):
        return json.loads(mpmd(d, "bsp_mpi", ["-n", str(PHASES), *extra], name,
                               inject).read_text())

    def trace(name, inject):
        return mpmd(d, "selfish_mpi", ["--seconds", str(TRACE_SECONDS), "--detours",
                                       "1000000"], name, inject)

    order = [False, True] if not flip else [True, False]
    runs, traces = {}, {}
    for inject in order:
        traces[inject] = trace(f"{collective}{r}_trace_{inject}", inject)
    for inject in reversed(order):
        runs[inject] = app(f"{collective}{r}_app_{inject}", inject)
    phase_us = runs[True]["calibrated_us"]
    measured = runs[True]["slowdown"] - runs[False]["slowdown"]
    expected = predicted(traces[True], phase_us) - predicted(traces[False], phase_us)
    return measured, expected, runs[False]["slowdown"] - 1


def verdict(ratio_lo, ratio_hi, quiet):
    if quiet > MODEL_LIMIT:
        return (f"cannot tell on this machine today: its own noise slowed the quiet "
                f"application by {100 * quiet:.0f}% (above {100 * MODEL_LIMIT:.0f}%), noise "
                f"that competes for the CPU, outside the model")
    if math.isnan(ratio_lo):
        return "cannot tell on this machine today: one round gives no interval"
    if AGREE[0] <= ratio_lo and ratio_hi <= AGREE[1]:
        return "agrees"
    if ratio_hi < AGREE[0] or ratio_lo > AGREE[1]:
        return "disagrees"
    return (f"cannot tell on this machine today: the ratio's interval "
            f"[{ratio_lo:.2f}, {ratio_hi:.2f}] straddles [{AGREE[0]}, {AGREE[1]}] (more "
            f"rounds, or a quieter machine)")


def main():
    if not (BIN / "bsp_mpi").exists():
        print("bsp_validate: no bsp_mpi (built without MPI): nothing to compare")
        return
    print(f"bsp against the prediction: 2 ranks, T = 1 ms, {PHASES} phases, rank 1 "
          f"--inject {INJECT}, selfish traces of {TRACE_SECONDS} s; {ROUNDS} rounds")
    for collective in ("barrier", "allreduce"):
        with tempfile.TemporaryDirectory() as d:
            rounds = [one_round(d, collective, r, r % 2 == 1) for r in range(ROUNDS)]
        measured = [m for m, _, _ in rounds]
        expected = [e for _, e, _ in rounds]
        ratios = [m / e for m, e, _ in rounds if e > 0]
        quiet = statistics.mean(q for _, _, q in rounds)
        m, m_lo, m_hi = interval(measured)
        e, e_lo, e_hi = interval(expected)
        r, r_lo, r_hi = interval(ratios) if ratios else (math.nan,) * 3
        print(f"  {collective:9}: added slowdown measured {m:.3f} [{m_lo:.3f}, {m_hi:.3f}], "
              f"predicted {e:.3f} [{e_lo:.3f}, {e_hi:.3f}]; ratio {r:.2f} "
              f"[{r_lo:.2f}, {r_hi:.2f}] (95%, {len(ratios)} rounds); quiet application "
              f"{100 * quiet:.1f}% slowed by the machine: {verdict(r_lo, r_hi, quiet)}")


if __name__ == "__main__":
    main()
