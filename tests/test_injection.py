"""Noise injected on purpose is found at its period and size.

Each test also runs the same kernel without injection and asserts that the
same check fails there: the machine's own noise does not pass for ours.
"""
import numpy as np
import pytest
from conftest import summaries
from noise_checks import (dip_gaps_ns, ftq_missing, ftq_periodic_loss, fwq_periodic_excess,
                          load_run)


@pytest.mark.parametrize("kernel", ["ftq", "ftq_omp"])
def test_ftq_finds_5_percent_every_2ms(run, tmp_path, bin_dir, kernel):
    if not (bin_dir / kernel).exists():
        pytest.skip(f"{kernel} not built")
    env = {"OMP_NUM_THREADS": "2", "OMP_PLACES": "cores", "OMP_PROC_BIND": "close"}
    common = ["-t", 0, "-n", 20000, "--freq", 10000, "-o"]
    quiet = run(kernel, *common, "quiet", env=env)
    noisy = run(kernel, *common, "noisy", "--inject", "2000:100", env=env)
    assert quiet.returncode == 0 and noisy.returncode == 0, quiet.stderr + noisy.stderr
    (qmeta, qthreads), (meta, threads) = load_run(tmp_path / "quiet"), load_run(tmp_path / "noisy")
    tpn = meta["ticks_per_ns"]
    for q, n, row in zip(qthreads, threads, meta["threads"]):
        # 500 periods a second, each stealing 100 us of a 100 us quantum; those
        # that came while the thread was stalled are counted as missed
        seconds = len(n["counts"]) / 10000
        assert row["injections"] + row["injections_missed"] == pytest.approx(500 * seconds, rel=0.02)
        # 1 - mean count / quiet count (the median quantum of each 2 ms: 18 in
        # 20 are not hit). The machine only adds to it, so it bounds the
        # injected share from below; the fold below measures it.
        assert ftq_missing(n["counts"]) > 0.04
        # what comes every 2 ms (20 quanta): 5% with injection (and the
        # signal's delivery), ~0 without
        periodic = ftq_periodic_loss(n["counts"], 20)
        background = ftq_periodic_loss(q["counts"], 20)
        assert 0.045 < periodic < 0.06 and background < 0.025, (periodic, background)
        # the dips are 2 ms apart: most gaps, as the machine's own deep dips
        # (stalls) split some and hide a few of ours
        gaps = dip_gaps_ns(n["counts"], n["times"], tpn)
        assert np.sum(np.abs(gaps - 2e6) < 2e4) > 0.7 * row["injections"]
        assert np.median(gaps) == pytest.approx(2e6, rel=0.01)
        quiet_gaps = dip_gaps_ns(q["counts"], q["times"], tpn)
        assert np.sum(np.abs(quiet_gaps - 2e6) < 2e4) < 0.1 * row["injections"]


def test_fwq_finds_5_percent(run, tmp_path):
    common = ["-t", 0, "-n", 20000, "-w", 12]
    quiet = run("fwq", *common, "-o", "quiet")
    noisy = run("fwq", *common, "--inject", "2000:100", "-o", "noisy")
    assert quiet.returncode == 0 and noisy.returncode == 0, quiet.stderr + noisy.stderr
    (qmeta, qthreads), (meta, threads) = load_run(tmp_path / "quiet"), load_run(tmp_path / "noisy")
    tpn = meta["ticks_per_ns"]
    rows = summaries(noisy.stdout)
    for q, n, row, trow in zip(qthreads, threads, rows, meta["threads"]):
        seconds = n["times"].sum() / tpn / 1e9
        periods = trow["injections"] + trow["injections_missed"]
        assert periods == pytest.approx(500 * seconds, rel=0.03)
        # 100 us detours, 500 a second: 5% of the time (less the injections a
        # machine stall swallowed), in samples 80-200 us longer than usual,
        # 2 ms apart (the machine's own rarely line up so). Not 20 or 40 us:
        # in this VM's bursts the timer interrupt and the signal's delivery
        # alone take 20-70 us, which a shorter detour does not cover.
        hits = fwq_periodic_excess(n["times"], tpn, 2e6, 80, 200)
        injected = hits.sum() * 1e-6 / seconds
        served = trow["injections"] * 100e-6 / seconds
        assert 0.8 * served < injected < 1.5 * served, (injected, served)
        quiet_hits = fwq_periodic_excess(q["times"], tpn, 2e6, 80, 200)
        quiet_seconds = q["times"].sum() / tpn / 1e9
        assert quiet_hits.sum() * 1e-6 / quiet_seconds < 0.5 * served
        # the machine only adds to what the kernel reports
        assert float(row["scaled_noise_mean"]) > 0.04, row
        # hit samples are longer by the injected 100 us and the signal's return
        assert len(hits) > 0.8 * trow["injections"]
        assert np.median(hits) == pytest.approx(101, abs=5)
