"""FWQ alone: its files and summary as the Sequoia tool writes them, its JSON,
and noise injected on purpose found event by event (tests/nbtest/ground_truth.py)."""
import json
import os

import pytest
from nbtest.ground_truth import check_injected_run, check_injections_stand_out, load_meta
from nbtest.kernel_files import load_run
from nbtest.lines import summaries

NCPUS = len(os.sched_getaffinity(0))


@pytest.mark.timing
def test_fwq_finds_each_injection(run, tmp_path):
    common = ["-t", 0, "-n", 20000, "-w", 12]
    quiet = run("fwq", *common, "-o", "quiet")
    noisy = run("fwq", *common, "--inject", "2000:100", "-o", "noisy")
    assert quiet.returncode == 0 and noisy.returncode == 0, quiet.stderr + noisy.stderr
    meta = load_meta(tmp_path / "noisy")
    tpn = meta["ticks_per_ns"]
    matched = check_injected_run(tmp_path / "noisy", tmp_path / "quiet", 2000)
    for row, m, _ in matched:
        seconds = (row["end_tick"] - row["start_tick"]) / tpn / 1e9
        periods = row["injections"] + row["injections_missed"]
        assert periods == pytest.approx(500 * seconds, rel=0.01)
    # every sample is at least the fastest, so the kernel's scaled noise
    # holds the injected 100 us every 2 ms
    for row in summaries(noisy.stdout):
        assert float(row["scaled_noise_mean"]) > 0.045, row
    check_injections_stand_out(matched)


def test_fwq_files_and_summary_match(run, tmp_path):
    res = run("fwq", "-t", 0, "-n", 2000, "-w", 8, "-o", "out/fwq")
    (tmp_path / "out").mkdir(exist_ok=True)
    assert res.returncode == 2  # the directory did not exist yet
    res = run("fwq", "-t", 0, "-n", 2000, "-w", 8, "-o", "out/fwq")
    assert res.returncode == 0, res.stderr
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == sorted([f"fwq_{t}_times.dat" for t in range(NCPUS)] + ["fwq.json"])
    meta, threads = load_run(tmp_path / "out" / "fwq")
    rows = summaries(res.stdout)
    assert len(rows) == NCPUS
    for t, (row, data) in enumerate(zip(rows, threads)):
        times = data["times"]
        assert len(times) == 2000 and (times > 0).all()
        # the printed figures are the data's, not something else
        assert int(row["min_ticks"]) == times.min()
        assert int(row["max_ticks"]) == times.max()
        assert float(row["mean_ticks"]) == pytest.approx(times.mean(), abs=0.006)
        assert float(row["std_ticks"]) == pytest.approx(times.std(ddof=1), abs=0.006)
        scaled = (times.mean() - times.min()) / times.min()
        # printed to 6 significant digits: a noisy run's mean of 3 keeps 5 decimals
        assert float(row["scaled_noise_mean"]) == pytest.approx(scaled, rel=6e-6, abs=2e-6)
        assert float(row["scaled_noise_sd"]) == pytest.approx(
            times.std(ddof=1) / times.min(), rel=1e-5)
        d = times - times.mean()
        m2 = (d ** 2).mean()
        assert float(row["kurtosis"]) == pytest.approx((d ** 4).mean() / m2 ** 2, rel=1e-5)
        assert float(row["skewness"]) == pytest.approx((d ** 3).mean() / m2 ** 1.5, rel=1e-5)
        assert meta["ranks"][t]["stats"]["kurtosis"] == pytest.approx(float(row["kurtosis"]),
                                                                         rel=1e-5)
        assert float(row["mean_ns"]) == pytest.approx(
            times.mean() / meta["ticks_per_ns"], rel=1e-3)
        assert meta["ranks"][t]["stats"]["unit"] == "ticks"
    assert "run kernel=fwq complete=true" in res.stdout


def test_fwq_json_describes_the_run(run, tmp_path):
    res = run("fwq", "-n", 500, "-w", 6, "--work", "daxpy", "--daxpy-len", 256, "-o", "r")
    assert res.returncode == 0, res.stderr
    meta = json.loads((tmp_path / "r.json").read_text())
    assert meta["kernel"] == "fwq" and meta["frontend"] == "pthreads"
    assert meta["complete"] is True and meta["interrupted_by"] is None
    assert meta["command_line"][-2:] == ["-o", "r"]
    assert meta["work"] == "daxpy" and meta["daxpy_len"] == 256
    assert meta["work_loops_per_sample"] == 64 and meta["sample_unit"] == "ticks"
    assert meta["ticks_per_work_loop_min"] > 0 and meta["ticks_per_ns"] > 0
    assert meta["ranks"][0]["samples"] == 500
    assert meta["ranks"][0]["cpu"] in os.sched_getaffinity(0)
    assert meta["start"]["monotonic_raw_ns"] < meta["end"]["monotonic_raw_ns"]
    assert meta["end"]["utc"].endswith("Z")
    cal = meta["calibration"]
    for key in ("timer_read_ns", "timer_resolution_ns", "loop_overhead_ns",
                "min_measurable_ns", "cpus_online", "cpus_allowed"):
        assert key in cal
    # each figure says what it is: a minimum, a median or a mean
    assert cal["timer_read_mean_ns"] == cal["timer_read_ns"]
    assert 0 < cal["timer_read_min_ns"] <= cal["timer_read_median_ns"]
    assert 0 < cal["unfenced_read_min_ns"] <= cal["unfenced_read_median_ns"]
    machine = meta["machine"]
    for key in ("cpu_model", "cores", "smt", "numa_nodes", "kernel_release",
                "kernel_cmdline", "isolcpus", "nohz_full", "clocksource", "tsc_flags",
                "cpufreq_governor", "turbo", "turbo_source", "cpufreq_limits_khz",
                "virtual_machine"):
        assert key in machine
    assert machine["kernel_release"] == os.uname().release
    # turbo or boost as the file that said it (intel_pstate's no_turbo reads
    # 1 for off, cpufreq's boost 1 for on), or null where no file says
    if machine["turbo"] is None:
        assert machine["turbo_source"] is None
    else:
        value = open(machine["turbo_source"]).read().strip()
        on = "0" if machine["turbo_source"].endswith("no_turbo") else "1"
        assert machine["turbo"] == ("on" if value == on else "off"), machine
    limits = machine["cpufreq_limits_khz"]
    assert not limits or 0 < limits["min"] <= limits["max"] <= limits["hardware_max"], limits
