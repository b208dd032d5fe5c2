"""P-SNAP on every CPU, as threads, under mpirun and under srun."""
import json
import os

import numpy as np
import pytest
from conftest import LAUNCHERS
from noise_checks import periodic_detours

NCPUS = len(os.sched_getaffinity(0))


def parse(stdout):
    """Per-rank histograms (header fields and bins) and the key=value lines."""
    hists, rows, summary = {}, [], None
    current = None
    for line in stdout.splitlines():
        if line.startswith("# "):
            rank, corr, total, host = line[2:].split()
            current = hists[int(rank)] = {"corr": float(corr), "total_us": float(total),
                                          "host": host, "bins": {}, "overflow": 0}
        elif line.startswith("overflow "):
            current["overflow"] = int(line.split()[1])
        elif line[:1].isdigit() and current is not None:
            t, n = line.split()
            current["bins"][float(t)] = int(n)
        elif line.startswith("psnap rank="):
            rows.append(dict(f.split("=", 1) for f in line.split()[1:]))
        elif line.startswith("psnap summary "):
            summary = dict(f.split("=", 1) for f in line.split()[2:])
    return hists, rows, summary


def injected_share(times_ns, period_ns, low_us, high_us):
    """Share of the run's time, and of the iterations, in iterations
    lengthened by low..high us that have another such one a period (+- an
    iteration) before or after them: the injected detours. The machine's own
    come at random; taking every iteration in the window, less what a run
    without injection had there, failed when a burst of them came in one
    run and not the other."""
    t = times_ns.astype(float)
    excess = t - t.min()
    _, lengths = periodic_detours(np.cumsum(t) - t, excess, period_ns, low_us * 1e3,
                                  high_us * 1e3, tolerance_ns=np.median(t))
    return lengths.sum() / t.sum(), len(lengths) / len(t)


@pytest.mark.parametrize("how", LAUNCHERS)
def test_psnap_finds_injected_noise(launch, tmp_path, how):
    quiet = launch(how, "psnap", "-n", 3000, "-o", "quiet")
    noisy = launch(how, "psnap", "-n", 3000, "--inject", "10000:500", "-o", "noisy")
    assert quiet.returncode == 0, quiet.stderr
    assert noisy.returncode == 0, noisy.stderr
    qhist, _, qsum = parse(quiet.stdout)
    hist, rows, summary = parse(noisy.stdout)
    assert int(summary["ranks"]) == NCPUS == len(rows) == len(hist)
    assert quiet.stdout.startswith("count = ") and ", time = " in quiet.stdout
    meta = json.loads((tmp_path / "noisy.json").read_text())
    assert meta["frontend"] == ("pthreads" if how == "threads" else "mpi")
    assert sorted(r["cpu"] for r in meta["ranks"]) == sorted(os.sched_getaffinity(0))
    for rank in range(NCPUS):
        # every iteration is in the histogram, the long tail in the overflow bin
        assert sum(hist[rank]["bins"].values()) + hist[rank]["overflow"] == 3000
        times = np.loadtxt(tmp_path / f"noisy_{rank}_times.dat", dtype=np.int64)
        qtimes = np.loadtxt(tmp_path / f"quiet_{rank}_times.dat", dtype=np.int64)
        assert len(times) == len(qtimes) == 3000
        assert hist[rank]["total_us"] == pytest.approx(times.sum() / 1e3, rel=1e-6)
        # about one iteration in ten is 0.5 ms longer, every 10 ms...
        share, hit = injected_share(times, 10e6, 400, 700)
        assert 0.08 < hit < 0.12, hit
        # ...and they make 5% of noise; the machine's own do not line up so
        assert 0.04 < share < 0.06, share
        assert injected_share(qtimes, 10e6, 400, 700)[1] < 0.04
        # the rank's reported noise holds at least what was injected: its ideal
        # iteration is no longer than any, so the injected excess is in it
        row = next(r for r in rows if int(r["rank"]) == rank)
        assert float(row["noise_percent"]) >= 100 * share - 0.01, (row, share)
    # the reported noise: the machine can only add to the injected 5 points
    # (not compared with the quiet run's: this VM's own noise moves by more)
    assert float(summary["os_noise_percent"]) > 4.5
    for h in qhist.values():
        assert -1 <= h["corr"] <= 1
    assert qhist[0]["corr"] == 1.0
    # the noise is measured against the fastest iteration, before or during the run
    ranks = json.loads((tmp_path / "quiet.json").read_text())["ranks"]
    for r in ranks:
        assert r["ideal_us"] == min(r["calibrated_us"], r["min_us"])
    ideal_s = np.mean([r["ideal_us"] for r in ranks]) * 3000 / 1e6
    assert float(qsum["calibration_time_s"]) == pytest.approx(ideal_s, abs=1e-3)
    assert float(qsum["mean_run_time_s"]) >= float(qsum["calibration_time_s"])
