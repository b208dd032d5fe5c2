"""Selfish detour on every CPU, as threads, under mpirun and under srun."""
import json
import os

import numpy as np
import pytest
from conftest import LAUNCHERS
from noise_checks import distinct_periods, periodic_detours

NCPUS = len(os.sched_getaffinity(0))


def summary(stdout):
    for line in stdout.splitlines():
        if line.startswith("selfish summary "):
            return dict(f.split("=", 1) for f in line.split()[2:])
    raise AssertionError(f"no summary in {stdout!r}")


@pytest.mark.parametrize("how", LAUNCHERS)
def test_selfish_records_injected_detours(launch, tmp_path, how):
    seconds = 3
    # room for every detour of the run: the VM has had 10-60 thousand a
    # second of its own, and a full buffer ends the run before `seconds`
    args = ["--seconds", seconds, "--detours", 2000000]
    quiet = launch(how, "selfish", *args, "-o", "quiet")
    noisy = launch(how, "selfish", *args, "--inject", "1000:50", "-o", "noisy")
    assert quiet.returncode == 0, quiet.stderr
    assert noisy.returncode == 0, noisy.stderr
    for out in (quiet.stdout, noisy.stdout):
        assert "# Minimal iteration length [ns]:" in out
        assert "# CPU overhead due to noise:" in out
        assert float(summary(out)["min_iteration_ns"]) > 0
    meta = json.loads((tmp_path / "noisy.json").read_text())
    assert len(meta["ranks"]) == NCPUS
    for r in meta["ranks"]:
        d = np.loadtxt(tmp_path / r["file"], dtype=np.int64, ndmin=2)
        q = np.loadtxt(tmp_path / r["file"].replace("noisy", "quiet"), dtype=np.int64, ndmin=2)
        assert len(d) == r["detours"] and r["iterations"] > r["detours"]
        assert (np.diff(d[:, 0]) > 0).all() and (d[:, 1] > 0).all()
        # detours of about the injected length, 1 ms after or before another:
        # 1000 a second, median 50 us
        starts, injected = periodic_detours(d[:, 0], d[:, 1], 1e6, 20e3, 200e3)
        found = distinct_periods(starts + injected, 1e6)
        periods = r["injections"] + r["injections_missed"]
        assert periods / r["period_s"] == pytest.approx(1000, rel=0.05)
        # each injection served is found (those a machine stall swallowed are
        # counted as missed, and are not there to find), except where the
        # machine's own long detour (preemption, a host's steal) swallows it:
        # one per such detour (its neighbours still have partners, as
        # detours are matched by either edge); the bound allows two, and 1%
        machine = np.sum(d[:, 1] >= 200e3)
        served = r["injections"]
        assert served - 2 * machine - 0.01 * served <= found <= 1.02 * served
        assert np.median(injected) / 1e3 == pytest.approx(50, rel=0.15)
        # the machine alone makes few of them: a tenth as many, give or take
        # a burst of its own
        quiet_starts, quiet_lengths = periodic_detours(q[:, 0], q[:, 1], 1e6, 20e3, 200e3)
        assert distinct_periods(quiet_starts + quiet_lengths, 1e6) < 0.25 * found
        assert r["period_s"] == pytest.approx(seconds, rel=0.05)
    assert float(summary(noisy.stdout)["cpu_overhead_percent"]) > 4.5
