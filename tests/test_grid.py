"""FTQ quanta end on a fixed grid measured from the start: no drift."""
import pytest
from noise_checks import load_run


def test_last_quantum_ends_on_the_grid(run, tmp_path):
    n, freq = 20000, 10000
    res = run("ftq", "-n", n, "--freq", freq, "-o", "grid")
    assert res.returncode == 0, res.stderr
    meta, threads = load_run(tmp_path / "grid")
    tpn, start = meta["ticks_per_ns"], meta["start_tick"]
    grid_span_ns = n * 1e9 / freq
    for data in threads:
        last = int(data["times"][-1])
        span_ns = (last - start) / tpn
        assert abs(span_ns - grid_span_ns) / grid_span_ns < 10e-6
        # every quantum ends at or after its grid point, never a quantum late
        k = (data["times"] - start) // meta["quantum_ticks"]
        assert (k >= range(1, n + 1)).all()


def test_tick_rate_agrees_with_the_reference_clock(run, tmp_path):
    """The ticks-to-ns rate holds over the run (seed 003's sampling drift)."""
    res = run("ftq", "-n", 20000, "--freq", 10000, "-o", "rate")
    assert res.returncode == 0, res.stderr
    meta, _ = load_run(tmp_path / "rate")
    ticks = meta["end"]["ticks"] - meta["start"]["ticks"]
    ns = meta["end"]["monotonic_raw_ns"] - meta["start"]["monotonic_raw_ns"]
    assert ticks / ns == pytest.approx(meta["ticks_per_ns"], rel=10e-6)
