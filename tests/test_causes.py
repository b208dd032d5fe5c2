"""--trace: every detour joined to what the kernel's trace saw on its CPU.

Checked with causes of known identity, event by event: a competitor of a
known name (noise-slowdown, real-time, logging each slice it took the CPU)
must be named in the detours at its slices, with their length; the run's own
injections (logged by their handler) must be named as injections, behind a
timer interrupt; every run must account for every detour's loss exactly,
the part nothing in the kernel explains as "hardware", the part the trace
lost as "unseen", also when a crowd of another process's threads fills
detours with more causes than a table holds, or switches so fast that a
small buffer overwrites its events. Skipped, with the reason, only where
tracefs cannot be had (not root, no tracefs). The competitor's and the
crowd's tests need FWQ's sample lengths, and are in test_fwq.py.
"""
import json
import os
import signal
import subprocess
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from nbtest import ANY_KERNEL, CATALOGUE, KERNELS, ROOT, kernels_where, quick_args, shape_args
from nbtest.crowd import start_crowd
from nbtest.ground_truth import load_injections
from nbtest.kernel_files import check_node_data, check_node_parts, load_description, part_bytes
from nbtest.launch import wait_for_files
from nbtest.rank_lines import check_ranks_line, rank_lines, summaries

CLASSES = set(CATALOGUE["cause_classes"])


def tracefs_reason():
    """Why --trace cannot record here, or None."""
    if os.geteuid() != 0:
        return "--trace needs root (or tracefs access) and this is not root"
    root = Path("/sys/kernel/tracing")
    if not (root / "instances").is_dir():
        subprocess.run(["mount", "-t", "tracefs", "nodev", str(root)], capture_output=True)
    if not (root / "instances").is_dir():
        return "no tracefs at /sys/kernel/tracing"
    return None


needs_tracefs = pytest.mark.skipif(tracefs_reason() is not None, reason=str(tracefs_reason()))


def load_causes(directory, causes):
    """A participant's causes file (its entry's causes: its own file or its
    range of its node's) as a list of (start_ns, span_ns, lost_ns, class,
    name, time_ns)."""
    rows = []
    for line in part_bytes(directory, causes["file"], causes.get("file_range")).decode().splitlines():
        start, span, lost, cls, name, took = line.split()
        rows.append((float(start), float(span), float(lost), cls, name, float(took)))
    return rows


def by_detour(rows):
    """{(start_ns, span_ns, lost_ns): {(class, name): time_ns}}"""
    out = defaultdict(dict)
    for start, span, lost, cls, name, took in rows:
        out[(start, span, lost)][(cls, name)] = took
    return out


def credited(rows, begin_ns, end_ns, accept):
    """Time credited to causes that `accept` (class, name) in the detours
    overlapping [begin_ns, end_ns)."""
    return sum(time for start, span, _, cls, name, time in rows
               if start < end_ns and start + span > begin_ns and accept(cls, name))


def check_accounts(directory, meta):
    """Every participant: the causes object adds up to its file, its classes
    to the detours' loss, and each detour's causes to its loss (each line's
    time rounded to 1 ns)."""
    assert meta["trace"]["attributed"] is True, meta["trace"]
    assert meta["trace"]["clock"] in ("x86-tsc", "mono_raw")
    rows_of = {}
    for p in meta["ranks"]:
        c = p["causes"]
        assert c["attributed"] is True and c["trace_events"] > 0, c
        rows = load_causes(directory, c)
        detours = by_detour(rows)
        assert c["detours"] >= len(detours)
        assert set(c["classes"]) == CLASSES
        assert sum(v["share"] for v in c["classes"].values()) == pytest.approx(1, abs=1e-6)
        for cls, v in c["classes"].items():
            total = sum(r[5] for r in rows if r[3] == cls)
            assert v["total_ns"] == pytest.approx(total, rel=1e-3, abs=len(rows) + 1), cls
        classes_ns = sum(v["total_ns"] for v in c["classes"].values())
        assert classes_ns == pytest.approx(c["noise_ns"], rel=1e-6, abs=1), c
        for (start, span, lost), causes in detours.items():
            assert abs(sum(causes.values()) - lost) <= len(causes) + 1, (start, lost, causes)
            assert 0 < lost <= span + 1
        rows_of[p["rank"]] = rows
    return rows_of


@needs_tracefs
@pytest.mark.parametrize("kernel", KERNELS)
def test_a_quiet_run_accounts_for_every_detour(run, tmp_path, kernel):
    done = run(kernel, "-t", 0, *shape_args(kernel), "--seconds", 1, "--trace", "-o", "quiet")
    assert done.returncode == 0, done.stderr
    meta = json.loads((tmp_path / "quiet.json").read_text())
    check_accounts(tmp_path, meta)
    # every thread says it was traced, and the ranks line that all were
    assert [r["traced"] for r in summaries(done.stdout)] == ["1"] * len(meta["ranks"])
    assert check_ranks_line(done.stdout, kernel, rank_lines(done.stdout))["traced_min"] == "1"
    assert not list(Path("/sys/kernel/tracing/instances").glob("noisebench-*"))


CROWDED = max(os.sched_getaffinity(0))
# the kernel that records detours: its loss is its detours and nothing else
DETOURS = kernels_where(loss="detours")[0]


@needs_tracefs
@pytest.mark.parametrize("buffer_kb, lost", [(256, True), (None, False)])
def test_a_trace_that_lost_events_says_how_long_it_did_not_see(run, tmp_path, buffer_kb, lost):
    """Six threads of another process on one CPU, each running 20-60 us and
    sleeping 100-300 us: they preempt the measured thread in short slices
    and write tens of thousands of trace events a second. A 256 KB buffer
    (about 11,000 events) overwrites most of them: the run says so, and the
    time of the detours it could not see is "unseen", in the JSON and on
    the rank line, never hardware nor another class. The default buffer
    holds them all. (Sleeps of 15-45 us can stall a VM for minutes: these
    sleeps keep the crowd one the machine survives.)"""
    crowd = start_crowd(CROWDED, 6, (20, 60), (100, 300))
    env = {"NOISEBENCH_TRACE_BUFFER_KB": str(buffer_kb)} if buffer_kb else {}
    try:
        time.sleep(0.5)
        done = run(DETOURS, "-t", 0, "--seconds", 2, "--trace", "-o", "crowd", env=env)
    finally:
        crowd.terminate()
        crowd.wait(timeout=30)
    assert done.returncode == 0, done.stderr
    meta = json.loads((tmp_path / "crowd.json").read_text())
    check_accounts(tmp_path, meta)
    lines = {int(r["cpu"]): r for r in summaries(done.stdout)}
    assert (meta["trace"]["lost_events"] > 0) == lost, meta["trace"]
    for p in meta["ranks"]:
        unseen_ns = p["causes"]["classes"]["unseen"]["total_ns"]
        line = lines[p["cpu"]]
        if not lost:
            assert unseen_ns == 0 and "trace_unseen_us" not in line, (p["cpu"], line)
            continue
        assert int(line["trace_lost_events"]) == meta["trace"]["lost_events"]
        assert float(line["trace_unseen_us"]) == pytest.approx(unseen_ns / 1e3, abs=1)
        if p["cpu"] == CROWDED:
            # most of what the crowd took was in the events overwritten
            assert unseen_ns > 0.2 * p["causes"]["noise_ns"], p["causes"]["classes"]


@needs_tracefs
@pytest.mark.timing
@pytest.mark.parametrize("kernel", KERNELS)
def test_injections_are_named_behind_their_timer(run, tmp_path, kernel):
    """--inject 2000:100: at least 90% of the injections logged are credited
    as injections for at least 90% of their busy wait, in the detours at that
    time, each such detour also holding the timer interrupt that fired it."""
    done = run(kernel, "-t", 0, *shape_args(kernel), "--seconds", 2, "--inject", "2000:100",
               "--trace", "-o", "noisy")
    assert done.returncode == 0, done.stderr
    meta = json.loads((tmp_path / "noisy.json").read_text())
    rows_of = check_accounts(tmp_path, meta)
    tpn = meta["ticks_per_ns"]
    for p in meta["ranks"]:
        rows = rows_of[p["rank"]]
        inj = load_injections(tmp_path, p)
        entry = (inj["entry"] - p["start_tick"]) / tpn
        exit_ = (inj["exit"] - p["start_tick"]) / tpn
        due = (inj["due"] - p["start_tick"]) / tpn
        named = np.array([credited(rows, b, e, lambda cls, name: cls == "injection") / (e - b)
                          for b, e in zip(entry, exit_)])
        # the timer fires when due; its handler may run much later, when
        # other work on the CPU lets it (each delivery's own latency, logged)
        timed = np.array([credited(rows, min(d, b) - 50e3, e,
                                   lambda cls, name: cls == "timer") > 0
                          for d, b, e in zip(due, entry, exit_)])
        assert np.mean(named >= 0.9) >= 0.9, (kernel, np.percentile(named, [5, 50]))
        assert np.mean(timed) >= 0.9, (kernel, np.mean(timed))
        assert any(c["class"] == "injection" for c in p["causes"]["top"]), p["causes"]["top"]


@needs_tracefs
def test_node_files_hold_each_ranks_causes_and_injections(run, tmp_path):
    """--node-files: the node's causes and injection logs are a file each,
    each rank's part in its own range; read through the ranges, the causes
    account for every detour and each log holds the injections its rank
    logged, on its rank's CPU; no rank has a file of its own."""
    done = run(ANY_KERNEL, "-t", 0, *shape_args(ANY_KERNEL), "--seconds", 2, "--inject",
               "2000:100", "--trace", "--node-files", "-o", "nf")
    assert done.returncode == 0, done.stderr
    meta = load_description(tmp_path / "nf.json")
    assert len(meta["ranks"]) >= 2
    check_node_data(tmp_path, meta["ranks"], ANY_KERNEL, "nf")
    check_accounts(tmp_path, meta)
    causes = check_node_parts(tmp_path, meta["ranks"], "nf",
                              lambda r: (r["causes"]["file"], r["causes"]["file_range"]))
    injections = check_node_parts(tmp_path, meta["ranks"], "nf",
                                  lambda r: (r["injections_file"], r["injections_file_range"]))
    node_file = CATALOGUE["node_files"]["data_file_name"]
    assert list(causes) == [node_file.format(prefix="nf", node=0, suffix="causes.dat")]
    assert list(injections) == [node_file.format(prefix="nf", node=0, suffix="injections.dat")]
    for r in meta["ranks"]:
        inj = load_injections(tmp_path, r)
        assert len(inj["due"]) == r["injections_logged"] > 0, r["rank"]
        assert (inj["cpu"] == r["cpu"]).all(), (r["cpu"], np.unique(inj["cpu"]))
    assert not list(tmp_path.glob("nf_[0-9]*_*"))


def test_a_node_where_nothing_was_attributed_keeps_no_causes_file(run, tmp_path):
    """Unpinned, no detour can be attributed (the trace is per CPU): the
    entries say so and name no file, and the node's causes file is removed,
    not left empty."""
    done = run(ANY_KERNEL, "-t", 0, "--no-pin", *quick_args(ANY_KERNEL), "--trace",
               "--node-files", "-o", "np")
    assert done.returncode == 0, done.stderr
    assert "not pinned" in done.stderr
    for r in load_description(tmp_path / "np.json")["ranks"]:
        assert r["causes"] == {"attributed": False}, r["causes"]
    node_file = CATALOGUE["node_files"]["data_file_name"]
    for described in KERNELS[ANY_KERNEL]["files"]:
        assert (tmp_path / node_file.format(prefix="np", node=0,
                                            suffix=described["suffix"])).exists()
    assert not list(tmp_path.glob("np_*causes*"))


@pytest.mark.parametrize("kernel", KERNELS)
def test_every_run_counts_its_interrupts_without_a_trace(run, tmp_path, kernel):
    """Each injection's timer interrupts the thread's own CPU (the POSIX
    timer is armed there), so its local timer interrupts ("irq:LOC" on x86)
    count at least the injections served; and the JSON says the detours were
    not attributed, and why."""
    done = run(kernel, "-t", 0, *shape_args(kernel), "--seconds", 1, "--inject", "2000:100",
               "-o", "run")
    assert done.returncode == 0, done.stderr
    meta = json.loads((tmp_path / "run.json").read_text())
    assert meta["trace"] == {"attributed": False, "why": "not asked for (--trace)"}
    for p in meta["ranks"]:
        k = p["kernel_counts"]
        assert "causes" not in p
        assert k["interrupts"] >= p["injections"] > 0, k
        assert k["voluntary_switches"] >= 0 and k["involuntary_switches"] >= 0, k
        assert sum(k["top"].values()) <= k["interrupts"] + k["softirqs"]
        if "irq:LOC" in k["top"] or os.uname().machine == "x86_64":
            assert k["top"]["irq:LOC"] >= p["injections"], k


@needs_tracefs
def test_sigterm_writes_the_samples_first_and_removes_the_instance(bin_dir, tmp_path):
    """A traced run stopped by SIGTERM (a job's time limit, with SIGKILL to
    follow) writes what it measured at once: the trace, whose reading takes
    longer, is left unread, the JSON says so, and no tracefs instance is
    left recording, nor any file half written."""
    proc = subprocess.Popen([bin_dir / ANY_KERNEL, "-t", "0", *shape_args(ANY_KERNEL),
                             "--seconds", "100", "--trace", "-o", "cut"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # the trace records once each thread's causes file exists; then come
    # the calibration (100 ms) and the warm-up (300 ms), and then samples
    wait_for_files(proc, tmp_path, "cut_*_causes.dat.*.tmp",
                   len(os.sched_getaffinity(0)))
    time.sleep(2)
    instances = list(Path("/sys/kernel/tracing/instances").glob(f"noisebench-{proc.pid}"))
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert instances, "the run recorded in an instance of its own"
    assert not instances[0].exists()
    meta = json.loads((tmp_path / "cut.json").read_text())
    assert meta["complete"] is False
    assert meta["trace"]["attributed"] is False
    assert meta["trace"]["why"].startswith("interrupted by SIGTERM"), meta["trace"]
    assert all(t["causes"] == {"attributed": False} and t["samples"] > 0
               for t in meta["ranks"]), meta["ranks"]
    written = ["cut.json"] + [f"cut_{t['rank']}_{f['suffix']}" for t in meta["ranks"]
                              for f in KERNELS[ANY_KERNEL]["files"]]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(written)


def test_a_run_that_cannot_trace_says_so_rank_by_rank_and_fails_its_check(run, tmp_path):
    """Unpinned threads cannot be traced (a CPU's trace is the CPU's, not
    the thread's): each thread's line says traced=0, stderr says why, and
    the ReFrame checks' reading of the ranks line fails, counting them."""
    done = run(ANY_KERNEL, "-t", 0, *quick_args(ANY_KERNEL), "--no-pin", "--trace",
               "-o", "unpinned")
    assert done.returncode == 0, done.stderr
    assert "not pinned to CPUs" in done.stderr
    lines = rank_lines(done.stdout)
    assert lines and all(" traced=0" in line and "causes=" not in line for line in lines)
    figures = check_ranks_line(done.stdout, ANY_KERNEL, lines)
    assert figures["traced_max"] == "0"
    stdout = tmp_path / "stdout.txt"
    stdout.write_text(done.stdout)
    reading = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-c", (
        "import sys, reframe.utility.sanity as sn\n"
        "from noisebench_reframe.catalogue import cause_share, ranks_line\n"
        "sn.evaluate(cause_share(sys.argv[1], ranks_line(sys.argv[2]), 'irq'))"), str(stdout),
        ANY_KERNEL],
        capture_output=True, text=True, timeout=60, check=False)
    assert reading.returncode != 0
    assert f"{len(lines)} of the {len(lines)} threads or ranks could not trace" in reading.stderr

