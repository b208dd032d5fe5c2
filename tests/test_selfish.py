"""Selfish detour on every CPU, as threads, under mpirun and under srun."""
import json
import os

import numpy as np
import pytest
from conftest import LAUNCHERS
from ground_truth import check_injected_run

NCPUS = len(os.sched_getaffinity(0))


def summary(stdout):
    for line in stdout.splitlines():
        if line.startswith("selfish summary "):
            return dict(f.split("=", 1) for f in line.split()[2:])
    raise AssertionError(f"no summary in {stdout!r}")


@pytest.mark.timing
@pytest.mark.parametrize("how", LAUNCHERS)
def test_selfish_records_injected_detours(launch, tmp_path, how):
    seconds = 3
    # room for every detour of the run: a full buffer ends the run early
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
    tpn = meta["ticks_per_ns"]
    for r in meta["ranks"]:
        d = np.loadtxt(tmp_path / r["files"][0], dtype=np.int64, ndmin=2)
        assert len(d) == r["detours"] and r["iterations"] > r["detours"]
        assert (np.diff(d[:, 0]) > 0).all() and (d[:, 1] > 0).all()
        assert r["period_s"] == pytest.approx(seconds, rel=0.01)
        periods = r["injections"] + r["injections_missed"]
        assert periods == pytest.approx(1000 * seconds, rel=0.01)
    for r, m, _ in check_injected_run(tmp_path / "noisy", tmp_path / "quiet", 1000):
        # the overhead reported holds the busy waits the handler logged
        busy_s = (m.injections["exit"] - m.injections["entry"]).sum() / tpn / 1e9
        assert r["cpu_overhead_percent"] >= 100 * busy_s / r["period_s"], r
