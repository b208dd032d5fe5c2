"""The headline is the machine's, not the probe's: every probe (FWQ of each
work kind, FTQ, P-SNAP, selfish) counts a known preemption as stolen time.

One CPU. A rival at real-time priority (noise-slowdown, logged slice by
slice) takes it for 1 ms every 20 ms: 5% of the time in events far above
the 1 us threshold and every probe's resolution. The probes run one after
the other, the same order each round, each with the rival and then without
it. What holds on any day:
- each run's figures are whole: the interval holds the headline, the parts
  add up to the whole, the threshold is the one threshold;
- with the rival, every probe's stolen share is at least 90% of what the
  rival's log says it took during that probe's run (the machine's own
  noise only adds to it);
- what a probe counts beyond the rival's share is the machine's own noise:
  at most what the same probe counted without the rival in its worst
  round, plus the switches' cost (a rival's slice costs up to twice its
  length on a VM) and 2 points. A probe that passes this only on a quiet
  day cannot tell; one that fails it on a quiet day double-counts.
The equivalence of the probes on a quiet machine is a day-dependent
experiment: benchmarks/probes.py, its figures in benchmarks/RESULTS.md.
"""
import json
import os
import signal

import numpy as np
import pytest
from nbtest import KERNELS, WORK_KINDS, shape_args
from nbtest.competitor import start_rival

CPU = sorted(os.sched_getaffinity(0))[-1]
SECONDS = 0.5
ROUNDS = 2
SLICE = "1000:19000"  # 1 ms busy, 19 ms asleep


def probes():
    """Every probe of the catalogue: a kernel that sweeps its work once a
    work kind that builds here (at the kind's work bits), every other one
    at its quick shape, each for SECONDS."""
    out = {}
    for kernel, info in KERNELS.items():
        if "work" in info.get("sweep", {}):
            bits = info["work_bits"]
            for kind in WORK_KINDS:
                out[f"{kernel}-{kind}"] = [kernel, "--work", kind, "-w",
                                           bits.get(kind, bits["default"])]
        else:
            out[kernel] = [kernel, *shape_args(kernel)]
    return {name: [*args, "--seconds", SECONDS] for name, args in out.items()}


PROBES = probes()


def whole(entry):
    """Asserts what holds of any run; returns its stolen share."""
    stolen = entry["stolen_percent"]
    assert 0 <= stolen <= 100, entry
    assert entry["threshold_us"] == pytest.approx(1.0)
    assert entry["resolution_us"] > 0
    if entry["stolen_ci95_low"] is not None:
        assert entry["stolen_ci95_low"] <= stolen <= entry["stolen_ci95_high"], entry
    assert entry["lost_percent"] == pytest.approx(
        stolen + entry["slowdown_percent"] + entry["variation_percent"], abs=1e-6)
    return stolen


def run_probe(run, tmp_path, name, prefix):
    binary, *args = PROBES[name]
    done = run(binary, "--cpus", CPU, *args, "-o", prefix)
    assert done.returncode == 0, done.stderr
    meta = json.loads((tmp_path / f"{prefix}.json").read_text())
    (entry,) = meta["ranks"]
    return meta, entry


def rival_share(log, meta, entry):
    """The share of the probe's run the rival's slices took, from their due
    tick (the switch away starts there) to their end."""
    s = np.loadtxt(log, dtype=np.int64, ndmin=2)
    start, end = entry["start_tick"], entry["end_tick"]
    due, stop = np.clip(s[:, 0], start, end), np.clip(s[:, 2], start, end)
    return 100 * (stop - due).sum() / (end - start)


@pytest.mark.timing
def test_every_probe_counts_a_known_preemption_as_stolen(bin_dir, run, tmp_path):
    quiet = {name: [] for name in PROBES}
    rows = []
    for r in range(ROUNDS):
        for name in PROBES:
            _, entry = run_probe(run, tmp_path, name, f"{name}_quiet_{r}")
            quiet[name].append(whole(entry))
            log = tmp_path / f"rival_{name}_{r}.dat"
            rival = start_rival(bin_dir, CPU, SLICE, log)
            try:
                meta, entry = run_probe(run, tmp_path, name, f"{name}_rival_{r}")
            finally:
                rival.send_signal(signal.SIGTERM)
                assert rival.wait(timeout=30) == 0, rival.stderr.read()
            rows.append((name, whole(entry), rival_share(log, meta, entry)))
    report = [(n, round(s, 3), round(w, 3)) for n, s, w in rows]
    for name, stolen, wanted in rows:
        # the rival took what its log says: 5% give or take its wake-ups
        assert 3 <= wanted <= 10, report
        # every probe counts it, whatever its work and its resolution
        assert stolen >= 0.9 * wanted, (name, report)
        # and nothing more than the machine's own noise besides: the same
        # probe's worst quiet round, the switches and 2 points
        assert stolen <= 2 * wanted + max(quiet[name]) + 2, (name, report, quiet[name])
