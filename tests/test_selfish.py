"""Selfish detour on every CPU, as threads, under mpirun and under srun."""
import json
import os
import re

import numpy as np
import pytest
from nbtest import quick_args
from nbtest.bad_input import bad_input_test
from nbtest.ground_truth import check_injected_run, check_injections_stand_out, load_injections
from nbtest.kernel_files import check_ranks_tables, detours_of
from nbtest.launch import LAUNCHERS, MANY_RANKS
from nbtest.loops import measured_loops, opcodes, timer_reads_fenced
from nbtest.selfish import check_selfish_span
from nbtest.sigterm import check_sigterm_keeps_samples
from nbtest.verdicts import cannot_tell

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
    args = ["--seconds", seconds]
    quiet = launch(how, "selfish", *args, "-o", "quiet")
    noisy = launch(how, "selfish", *args, "--inject", "1000:50", "-o", "noisy")
    assert quiet.returncode == 0, quiet.stderr
    assert noisy.returncode == 0, noisy.stderr
    for out in (quiet.stdout, noisy.stdout):
        # Netgauge's lines as Netgauge words them
        assert re.search(r"^# min clock cycles per rank:( \d+)+ $", out, re.M), out
        assert re.search(r"^# Minimal cycle length \[ns\]: \d+\.\d{6} $", out, re.M), out
        assert re.search(r"^# Threshold: \[% minimal cycle length\]: 900 $", out, re.M), out
        assert "# CPU overhead due to noise:" in out
        assert float(summary(out)["min_iteration_ns"]) > 0
    meta = json.loads((tmp_path / "noisy.json").read_text())
    assert len(meta["ranks"]) == NCPUS
    tpn = meta["ticks_per_ns"]
    for r in meta["ranks"]:
        d = detours_of(tmp_path, r)
        assert len(d) == r["detours"] and r["iterations"] > r["detours"]
        assert (np.diff(d[:, 0]) > 0).all() and (d[:, 1] > 0).all()
        check_selfish_span(r, d, seconds, meta["threshold_percent"])
        # every expiry of the 1 ms timer counted once, served or missed: as
        # many as lie between its arming (1 ms before the start) and the last
        # one served, whatever a stall added to the time it was armed
        periods = r["injections"] + r["injections_missed"]
        last_due = load_injections(tmp_path, r)["due"][-1]
        expiries = (last_due - r["start_tick"]) / (1e6 * tpn)
        assert expiries - 1 <= periods <= expiries + 3, (periods, expiries)
        assert periods >= 0.99 * 1000 * seconds
    matched = check_injected_run(tmp_path / "noisy", tmp_path / "quiet", 1000)
    for r, m, _ in matched:
        # the overhead reported holds the busy waits the handler logged
        busy_s = (m.injections["exit"] - m.injections["entry"]).sum() / tpn / 1e9
        assert r["cpu_overhead_percent"] >= 100 * busy_s / r["period_s"], r
    check_injections_stand_out(matched)


def test_selfish_runs_as_long_as_asked_whatever_the_detours(run, tmp_path):
    """A threshold of 101% of the minimal iteration makes every iteration a
    tick longer than the fastest a detour: millions a second, more than the
    store's first room (2^18). The store grows (outside the loop: that time
    is counted as unmeasured, and no detour spans it) and the run lasts the
    time asked."""
    seconds = 0.05
    done = run("selfish", "--seconds", seconds, "--threshold", 101, "-o", "s")
    assert done.returncode == 0, done.stderr
    meta = json.loads((tmp_path / "s.json").read_text())
    rank = meta["ranks"][0]
    assert rank["stopped_by"] == "seconds", rank
    assert "stopped=seconds" in done.stdout
    d = detours_of(tmp_path, rank)
    assert len(d) == rank["detours"]
    assert (np.diff(d[:, 0]) > 0).all()
    # the measured time and the unmeasured growth make up the time asked,
    # and no more than the loop takes to read the limit again
    check_selfish_span(rank, d, seconds, meta["threshold_percent"])
    if rank["detours"] <= 1 << 18:
        cannot_tell(f"{rank['detours']} detours: this machine's iterations are too even")
    assert rank["store_growths"] > 0, rank


def test_the_headline_is_the_osnoise_sum_of_its_own_file(run, tmp_path):
    """selfish is the clock-read reference the other probes are held to:
    its stolen_percent (src/lib/system/speed.c) is the sum osnoise makes of
    its gaps, from its own file: each detour's length beyond the minimal
    iteration, past 1 us, over the measurement period. 30 us injected every
    2 ms make gaps past the threshold whatever the day."""
    done = run("selfish", "--seconds", 0.5, "--inject", "2000:30", "-o", "s")
    assert done.returncode == 0, done.stderr
    (rank,) = json.loads((tmp_path / "s.json").read_text())["ranks"]
    d = detours_of(tmp_path, rank)
    excess = d[:, 1] - rank["min_iteration_ns"]
    past = excess[excess > 1000]
    assert len(past) >= rank["injections"] > 0
    # the file's ns are rounded: a gap within a ns of the threshold may fall
    # either side
    assert rank["stolen_events"] == pytest.approx(len(past), abs=2)
    assert rank["stolen_percent"] == pytest.approx(
        100 * past.sum() / (rank["period_s"] * 1e9), abs=0.01, rel=1e-3)


def test_node_files_keep_netgauge_head_line_to_a_range(run, tmp_path):
    """With node files (beyond 4,096 ranks) no line lists every rank:
    Netgauge's head line gives the smallest and largest of the ranks'
    minimal iterations, which the node files hold each."""
    done = run("selfish", "-t", 0, "--seconds", 0.1, "--node-files", "-o", "s")
    assert done.returncode == 0, done.stderr
    ranks = json.loads((tmp_path / "s_node0.json").read_text())["ranks"]
    ticks = [r["min_iteration_ticks"] for r in ranks]
    assert len(ticks) == NCPUS
    assert f"# min clock cycles per rank: {min(ticks)} to {max(ticks)} over the {NCPUS} ranks " \
        in done.stdout
    # the range, not a list of every rank's
    assert not re.search(r"per rank:( \d+)+ $", done.stdout, re.M) and \
        "rank kernel=" not in done.stdout
    check_ranks_tables(tmp_path / "s.json")


def test_detours_without_seconds_run_until_each_rank_has_them(run, tmp_path):
    """Netgauge's end: --detours N alone runs until every rank recorded N.
    A busy-wait of 100 us every 1 ms is a detour each millisecond, so 300
    come within about 0.3 s whatever else the machine does."""
    done = run("selfish", "-t", 0, "--detours", 300, "--inject", "1000:100", "-o", "s")
    assert done.returncode == 0, done.stderr
    ranks = json.loads((tmp_path / "s.json").read_text())["ranks"]
    assert len(ranks) == NCPUS
    for rank in ranks:
        assert rank["stopped_by"] == "detours" and rank["detours"] == 300, rank
        # not the default 60 s, nor the hour it may take
        assert rank["period_s"] < 30, rank
    # the end asked for is no warning
    assert "stored --detours" not in done.stderr and done.stderr == "", done.stderr
    assert done.stdout.count("stopped=detours_full") == NCPUS


def test_a_full_detour_store_stops_the_run_and_says_so(run, tmp_path):
    done = run("selfish", "--seconds", 5, "--threshold", 150, "--detours", 1000, "-o", "s")
    assert done.returncode == 0, done.stderr
    rank = json.loads((tmp_path / "s.json").read_text())["ranks"][0]
    assert rank["stopped_by"] == "detours" and rank["detours"] == 1000
    assert rank["period_s"] < 5
    assert "stopped=detours_full" in done.stdout
    assert "stored --detours 1000 detours after" in done.stderr


@pytest.fixture(scope="module")
def detour_loops(build_dir):
    return measured_loops(build_dir, r"nb_selfish_\w+")


@pytest.mark.release
def test_machine_code_of_the_detour_loops_calls_nothing_reads_unfenced(detour_loops):
    """Its three loops, each on its own page, calling nothing; they read
    the timer unfenced on purpose (selfish_loop.c says why)."""
    assert set(detour_loops) == {"nb_selfish_min_iteration", "nb_selfish_ordinary_iteration",
                                 "nb_selfish_loop"}
    for name, (addr, body) in detour_loops.items():
        assert "call" not in body, f"{name} calls out of its measured loop"
        assert addr % 4096 == 0, f"{name} at {addr:#x}"
        if os.uname().machine == "x86_64":
            fenced = timer_reads_fenced(body)
            assert len(fenced) >= 2, name
            assert not any(fenced), f"{name}: a fenced read in the detour loop"


@pytest.mark.release
def test_machine_code_of_the_loop_is_a_read_a_compare_rarely_a_store(detour_loops):
    """The fast path of nb_selfish_loop: from one read to the next, at most a
    few instructions (the subtraction, the signed compare and its branch,
    the chunk counter), and the compare signed (jg/jle, not ja/jbe), so
    that two reads out of order are no detour."""
    if os.uname().machine != "x86_64":
        pytest.skip("x86-64 only")
    ops = opcodes(detour_loops["nb_selfish_loop"][1])
    reads = [i for i, op in enumerate(ops) if op == "rdtsc"]
    # the read inside the loop: the last one
    i = reads[-1]
    after = ops[i + 1:i + 12]
    jumps = [op for op in after if op.startswith("j")]
    assert jumps and jumps[0] in ("jg", "jle", "jge", "jl"), (jumps, after)


@pytest.mark.scale
def test_many_ranks_each_measure_as_long_as_asked(many_ranks):
    """A rank whose CPU is shared is often waiting when its time is up: its
    last detour ends past the limit, and the run measured until then
    (test_many_ranks.py's run of the catalogue's quick arguments)."""
    args = quick_args("selfish")
    seconds = float(args[args.index("--seconds") + 1])
    done, directory = many_ranks("selfish", args)
    assert done.returncode == 0, done.stderr[-2000:]
    meta = json.loads((directory / "selfish.json").read_text())
    assert len(meta["ranks"]) == MANY_RANKS
    for r in meta["ranks"]:
        check_selfish_span(r, detours_of(directory, r), seconds, meta["threshold_percent"])


# its own options, bad: one clear line, a non-zero exit, no files
BAD = [
    (["--detours", "0"], "--detours 0"),
    (["--seconds", "0"], "--seconds 0"),
    (["--threshold", "50"], "--threshold 50"),
    (["-o", "/proc/s"], "/proc/s"),
    (["--inject", "5:10"], "--inject 5:10"),
]

test_bad_input_fails_cleanly = bad_input_test("selfish", BAD)


@pytest.mark.parametrize("launcher", ["threads", "srun"])
def test_sigterm_keeps_detours(request, bin_dir, tmp_path, launcher):
    check_sigterm_keeps_samples(request, bin_dir, tmp_path, "selfish", launcher,
                                ["--seconds", "100", "--detours", "10000000"], "detours",
                                "detours")
