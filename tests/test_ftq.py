"""FTQ alone: its files and quanta as the Sequoia tool writes them, the
quantum set by -i BITS, the quanta ending on a fixed grid with no drift,
and noise injected on purpose found event by event, under pthreads and
OpenMP (tests/nbtest/ground_truth.py)."""
import json
import os
import subprocess

import numpy as np
import pytest
from nbtest.bad_input import bad_input_test
from nbtest.ground_truth import check_injected_run, check_injections_stand_out
from nbtest.kernel_files import check_node_data, load_run
from nbtest.rank_lines import check_ranks_line, ranks_line, summaries
from nbtest.tails import check_tails_are_the_data_files

NCPUS = len(os.sched_getaffinity(0))


@pytest.mark.timing
@pytest.mark.parametrize("kernel", ["ftq", "ftq_omp"])
def test_ftq_finds_each_injection(run, tmp_path, bin_dir, kernel):
    if not (bin_dir / kernel).exists():
        pytest.skip(f"{kernel} not built")
    env = {"OMP_NUM_THREADS": "2", "OMP_PLACES": "cores", "OMP_PROC_BIND": "close"}
    common = ["-t", 0, "-n", 20000, "--freq", 10000, "-o"]
    quiet = run(kernel, *common, "quiet", env=env)
    noisy = run(kernel, *common, "noisy", "--inject", "2000:100", env=env)
    assert quiet.returncode == 0 and noisy.returncode == 0, quiet.stderr + noisy.stderr
    matched = check_injected_run(tmp_path / "noisy", tmp_path / "quiet", 2000)
    for row, m, _ in matched:
        # 500 periods a second of the thread's measurement, those that came
        # while it was stalled counted as missed: the 2 s grid, and longer
        # when a stall holds its last quantum past the grid's end
        seconds = (row["end_tick"] - row["start_tick"]) / row["ticks_per_ns"] / 1e9
        assert row["injections"] + row["injections_missed"] == \
            pytest.approx(500 * seconds, rel=0.01)
    # the kernel's own figure holds what was injected: the share of work
    # missing against the best quantum is at least the 5% taken (less the
    # share a quantum's count varies by, here the timer's)
    for row in summaries(noisy.stdout):
        assert float(row["scaled_noise_mean"]) > 0.045, row
    check_injections_stand_out(matched)


# --node-files: the threads' data in ranges of one file a kind (the layout
# beyond 4096 ranks), which must read as the files of their own do
@pytest.mark.parametrize("layout", [[], ["--node-files"]], ids=["own files", "node files"])
def test_ftq_files_and_quanta(run, tmp_path, layout):
    res = run("ftq", "-t", 0, "-n", 3000, "--freq", 5000, *layout, "-o", "q")
    assert res.returncode == 0, res.stderr
    meta, threads = load_run(tmp_path / "q")
    if layout:
        by_file = check_node_data(tmp_path, meta["ranks"], "ftq", "q")
        assert sorted(by_file) == ["q_node0_counts.dat", "q_node0_times.dat"]
    assert meta["frequency_hz"] == 5000
    assert meta["quantum_ns"] == pytest.approx(200000, rel=1e-5)
    rows = summaries(res.stdout)
    if layout:
        # with node files the threads print no line of their own: the ranks
        # line reduces them in the job
        assert not rows
        got = ranks_line(res.stdout, "ftq")
        assert int(got["max_counts_max"]) == max(t["counts"].max() for t in threads)
        assert int(got["samples_min"]) == int(got["samples_max"]) == 3000
        # the mean of the means as printed (2 decimals), to 6 digits
        assert float(got["mean_counts_avg"]) == pytest.approx(
            np.mean([t["counts"].mean() for t in threads]), rel=1e-5, abs=0.006)
    else:
        check_ranks_line(res.stdout, "ftq", [line for line in res.stdout.splitlines()
                                             if line.startswith("rank kernel=ftq ")])
        # the run's strongest line: the largest share of any thread's, at
        # its frequency
        run_line = dict(kv.split("=") for kv in res.stdout.split("ftq summary ")[1]
                        .splitlines()[0].split())
        share = max(float(row["line_share_percent"]) for row in rows)
        assert int(run_line["ranks"]) == len(rows) == NCPUS
        assert float(run_line["line_share_percent"]) == pytest.approx(share, rel=1e-3)
        # (threads whose shares print alike may differ in the digits cut)
        assert run_line["line_hz"] in {row["line_hz"] for row in rows
                                       if float(row["line_share_percent"]) == share}
    for row, data in zip(rows, threads):
        counts, times = data["counts"], data["times"]
        assert len(counts) == len(times) == 3000
        assert (np.diff(times) > 0).all()
        assert int(row["max_counts"]) == counts.max()
        assert float(row["mean_counts"]) == pytest.approx(counts.mean(), abs=0.006)
        scaled = (counts.max() - counts.mean()) / counts.max()
        assert float(row["scaled_noise_mean"]) == pytest.approx(scaled, abs=2e-6)
        # a count is at least 10 timer reads' worth of work (the work loop's
        # cost is FWQ's copy of it: FTQ's copy, at another alignment, can run
        # a little faster, so counts * cost is no bound on the quantum)
        per_count = meta["work_loops_per_count"]
        read = meta["calibration"]["timer_read_mean_ns"] * meta["ticks_per_ns"]
        assert per_count * meta["ticks_per_work_loop_min"] >= 10 * read


def test_ftq_interval_bits(run, tmp_path):
    res = run("ftq", "-i", 18, "-n", 200, "-o", "b")
    assert res.returncode == 0, res.stderr
    meta, threads = load_run(tmp_path / "b")
    assert meta["quantum_ticks"] == 1 << 18 and meta["interval_bits"] == 18
    assert (np.diff(threads[0]["times"]) >= 0).all()


@pytest.mark.timing
def test_quanta_end_on_the_grid(run, tmp_path):
    n, freq = 20000, 10000
    res = run("ftq", "-n", n, "--freq", freq, "-o", "grid")
    assert res.returncode == 0, res.stderr
    meta, threads = load_run(tmp_path / "grid")
    start, quantum = meta["start_tick"], meta["quantum_ticks"]
    # a quantum ends at the first timer read past its grid point: one count
    # of work and a read late, unless a detour held that read up
    unit = (meta["work_loops_per_count"] * meta["ticks_per_work_loop_min"] +
            meta["calibration"]["timer_read_ns"] * meta["ticks_per_ns"])
    grid = start + quantum * np.arange(1, n + 1)
    for data in threads:
        late = data["times"] - grid
        assert (late >= 0).all()
        # no drift: the quanta at the end are as close to their grid points
        # as at the start. Detours hold up some reads, so the least late
        # tenth of the first and of the last 5,000 quanta (0.5 s): a stall
        # of 100 ms holds up the 1,000 it covers and other work taking a
        # quarter of the CPU a quarter more, so half stay on the grid, where
        # a drift would hold up every quantum after it
        for part in (late[:5000], late[-5000:]):
            assert np.quantile(part, 0.1) <= 2 * unit, (np.quantile(part, 0.1), unit)


def test_tick_rate_agrees_with_the_reference_clock(run, tmp_path):
    """The ticks-to-ns rate holds over the run (the sampling drift of brho's FTQ notes)."""
    res = run("ftq", "-n", 20000, "--freq", 10000, "-o", "rate")
    assert res.returncode == 0, res.stderr
    meta, _ = load_run(tmp_path / "rate")
    ticks = meta["end"]["ticks"] - meta["start"]["ticks"]
    ns = meta["end"]["monotonic_raw_ns"] - meta["start"]["monotonic_raw_ns"]
    assert ticks / ns == pytest.approx(meta["ticks_per_ns"], rel=10e-6)


def test_seconds_sets_the_quanta(run, tmp_path):
    """--seconds 2 at 10 kHz: exactly the quanta of 2 s."""
    done = run("ftq", "--freq", "10000", "--seconds", 2, "-o", "s")
    assert done.returncode == 0, done.stderr
    meta = json.loads((tmp_path / "s.json").read_text())
    assert [r["samples"] for r in meta["ranks"]] == [20000]


def test_stdout_mode(run, tmp_path):
    """-s: stdout holds the samples alone, as the original's did; the
    result lines go to stderr."""
    res = run("ftq", "-s", "-n", 100, "-o", "s")
    assert res.returncode == 0, res.stderr
    lines = [l for l in res.stdout.splitlines() if not l.startswith("# rank ")]
    assert len(lines) == 100 and all(len(l.split()) == 2 for l in lines), res.stdout[-500:]
    assert all(x.isdigit() for l in lines for x in l.split())
    assert "rank kernel=ftq" in res.stderr and "ranks kernel=ftq" in res.stderr
    assert not list(tmp_path.glob("*.dat"))
    assert (tmp_path / "s.json").exists()


def test_the_sequoia_documents_run_names_its_files_as_the_tool(run, tmp_path):
    """The Sequoia document's run, `ftq -o testrun -n 1000`, writes
    testrun_counts.dat and testrun_times.dat of 1000 lines each."""
    assert run("ftq", "-o", "testrun", "-n", 1000).returncode == 0
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["testrun.json", "testrun_counts.dat", "testrun_times.dat"], names
    for suffix in ("counts", "times"):
        assert len((tmp_path / f"testrun_{suffix}.dat").read_text().splitlines()) == 1000


def test_the_threaded_sequoia_name_runs(bin_dir, tmp_path):
    res = subprocess.run([bin_dir / "t_ftq", "-n", "50", "-t", "1", "-o", "t_ftq"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "t_ftq_0_times.dat").exists()


def test_tails_are_the_data_files(run, tmp_path):
    """300 us of every 2 ms busy, in quanta of 100 us: two quanta whole."""
    res = run("ftq", "-t", 0, "-n", 5000, "--freq", 10000, "--inject", "2000:300", "-o", "ftq")
    assert res.returncode == 0, res.stderr

    def loss(meta, entry, counts):
        quantum_ns = meta["quantum_ticks"] / entry["ticks_per_ns"]
        return ((counts.max() - counts) / counts.max() * quantum_ns,
                len(counts) * quantum_ns / 1e9)

    check_tails_are_the_data_files(*load_run(tmp_path / "ftq"), "counts", loss, 99)


# its own options, bad: one clear line, a non-zero exit, no files
BAD = [
    (["--freq", "0"], "--freq 0"),
    (["--freq", "-3"], "--freq -3"),
    (["-i", "80"], "-i 80"),
    (["-i", "20", "--freq", "1000"], "-i and --freq"),
    (["--freq", "100000", "--work", "daxpy", "--daxpy-len", "65536"], "quantum"),
    (["--freq"], "--freq needs a value"),
]

test_bad_input_fails_cleanly = bad_input_test("ftq", BAD)
