"""--stream: runs of any length in fixed memory, written out at every
checkpoint (docs/kernels.md#streamed-runs---stream).

Each rank's figures are in PREFIX_<rank>_stream.json (the loss histogram,
the longest losses), PREFIX_<rank>_seconds.dat (a line a second) and
PREFIX_<rank>_events_<generation>.dat (the samples around each longest
loss, each event's in its byte range of the rank's one file).
"""
import json
import math
import os
import signal
import subprocess
import time

import numpy as np
import pytest
from nbtest import KERNELS, REPORT_R, kernels_where, shape_args
from nbtest.rank_lines import summaries

GROWTH = 1.01
# the kernels that take --stream; the first, for the tests that need one
STREAMED = kernels_where(stream=True)


def seconds_lines(path):
    """The whole lines of a per-second file (a kill can cut the last)."""
    text = path.read_text()
    lines = [line for line in text.splitlines(keepends=True) if not line.startswith("#")]
    if lines and not lines[-1].endswith("\n"):
        lines = lines[:-1]
    return np.array([[float(x) for x in line.split()] for line in lines]).reshape(-1, 7)


def histogram_total(stream):
    return sum(count for _, count in stream["histogram"]["buckets"])


def samples_above(stream, loss):
    """Samples whose bucket lies wholly at or above `loss` (the unit's)."""
    return sum(count for b, count in stream["histogram"]["buckets"]
               if b > 0 and GROWTH ** (b - 1) >= loss)


def check_stream_files(directory, stream):
    """What every rank's files must hold, whole or cut by a checkpoint."""
    seconds = seconds_lines(directory / stream["seconds_file"])
    assert histogram_total(stream) == stream["samples"]
    files = {e["file"] for e in stream["events"] if e["file"]}
    # a rank's events share one file (a file an event would be millions on
    # a whole machine)
    assert len(files) <= 1
    for e in stream["events"]:
        assert e["loss"] > 0
        if e["file"]:
            with open(directory / e["file"], "rb") as f:
                f.seek(e["offset"])
                text = f.read(e["bytes"]).decode()
            assert len(text) == e["bytes"] and text.endswith("\n")
            raw = np.loadtxt(text.splitlines(), dtype=np.uint64, ndmin=2)
            assert len(raw) == e["samples"] > 0
            # the event's own sample is among them, where its index says
            assert raw[e["index"] - e["first"], 0] == e["value"]
            assert (np.diff(raw[:, 1].astype(np.int64)) > 0).all()
    return seconds


@pytest.mark.parametrize("kernel", STREAMED)
def test_a_stream_folds_every_sample_into_its_figures(run, tmp_path, kernel):
    done = run(kernel, "-t", 0, *shape_args(kernel), "--stream", "--seconds", 3,
               "--checkpoint", 1, "--stream-top", 5, "-o", "s")
    assert done.returncode == 0, done.stderr
    meta = json.loads((tmp_path / "s.json").read_text())
    assert meta["complete"] is True
    assert meta["stream"]["seconds_requested"] == 3 and meta["stream"]["top"] == 5
    for rank in meta["ranks"]:
        assert rank["files"] == []
        stream = json.loads((tmp_path / rank["stream_file"]).read_text())
        assert stream["complete"] is True and stream["stream_of"] == kernel
        assert stream["samples"] == rank["samples"] > 0
        # the best sample of the first second, as folded in
        assert stream["min"] <= stream["reference"] <= stream["max"]
        if KERNELS[kernel]["fixed"] == "work":
            # the loops of its fixed work, given or calibrated (how long they
            # take depends on the CPU's speed while it calibrated and while
            # it ran, which a vCPU changes: not asked here)
            assert stream["work_loops_per_sample"] > 1
        # as long as asked, and stopped within a chunk and the writer's poll
        assert 3 <= stream["seconds"] < 3.5, stream["seconds"]
        seconds = check_stream_files(tmp_path, stream)
        # every sample is in some second's line, the last one's included
        assert seconds[:, 1].sum() == stream["samples"]
        assert (np.diff(seconds[:, 0]) > 0).all()
        assert len(stream["events"]) <= 5
        assert rank["memory_bytes"] == stream["memory_bytes"] > 0
        # the headline, the same on the rank's line, its entry and its stream
        assert 0 <= rank["stolen_percent"] == stream["stolen_percent"] < 100
        # three files a rank: an events file of an earlier generation is gone
        own = {p.name for p in tmp_path.glob(f"s_{rank['rank']}_*")}
        events_files = {e["file"] for e in stream["events"] if e["file"]}
        assert own == {rank["stream_file"], stream["seconds_file"]} | events_files


@pytest.mark.parametrize("kernel", STREAMED)
def test_a_stream_counts_injected_noise_as_stolen(run, tmp_path, kernel):
    """1 ms injected every 10 ms into a stream: at least 90% of the
    injected time is stolen (the machine's own noise only adds to it)."""
    done = run(kernel, "-t", 0, *shape_args(kernel), "--stream", "--seconds", 2,
               "--inject", "10000:1000", "-o", "s")
    assert done.returncode == 0, done.stderr
    meta = json.loads((tmp_path / "s.json").read_text())
    for rank in meta["ranks"]:
        injected = 100 * rank["injections"] * 1e-3 / rank["seconds"]
        assert rank["injections"] > 0
        assert 0.9 * injected <= rank["stolen_percent"] < 100, (rank["stolen_percent"], injected)
        # a second at a time too: each whole second's line holds its tenth
        # (seconds count from the start: the last is partial, and a second
        # no chunk ended in says nan)
        stream = json.loads((tmp_path / rank["stream_file"]).read_text())
        stolen = seconds_lines(tmp_path / stream["seconds_file"])[:, 6]
        inside = stolen[:-1]
        assert len(inside) >= 1 and not np.isnan(inside).any(), stolen
        assert (inside >= 0.9 * 10).all() and (inside <= 100).all(), stolen


@pytest.mark.parametrize("kernel", STREAMED)
def test_a_sites_rules_on_the_headline_and_tail_judge_a_stream(run, tmp_path, kernel):
    """A soak's line carries the headline and the tail by the names a
    whole run's line gives them, so the rules that bound them judge it: all
    three rules judge each line, and it breaks exactly those its own figures
    break (1 ms injected every 10 ms makes breaking them likely, but what a
    loaded or sanitized build shows of it is the day's)."""
    rules = tmp_path / "soak.requirements"
    bounds = {"stolen_percent": 5, "p99_9_loss_us": 50, "max_loss_us": 1e9}
    rules.write_text("".join(f"{k} <= {v}\n" for k, v in bounds.items()))
    done = run(kernel, "-t", 0, *shape_args(kernel), "--stream", "--seconds", 2,
               "--inject", "10000:1000", "--requirements", rules, "-o", "s")
    assert done.returncode == 0, done.stderr
    for line in summaries(done.stdout):
        assert line["rules_judged"] == "3", line
        broken = sum(float(line[k]) > v for k, v in bounds.items())
        assert int(line["rules_unmet"]) == broken, line


def test_a_streams_memory_does_not_grow_with_its_length(run, tmp_path):
    """Fixed by construction: the ring, the histogram, K events, sized by
    the sample's length alone (a fixed-time kernel's quantum, the same in
    both runs with the tick rate given)."""
    kernel = kernels_where(stream=True, fixed="time")[0]
    sizes = []
    for seconds in (1, 4):
        done = run(kernel, *shape_args(kernel), "--ticks-per-ns", "2", "--stream",
                   "--seconds", seconds, "-o", f"s{seconds}")
        assert done.returncode == 0, done.stderr
        sizes.append(json.loads((tmp_path / f"s{seconds}.json").read_text())
                     ["ranks"][0]["memory_bytes"])
    assert sizes[0] == sizes[1]


def test_sigterm_leaves_nothing_of_a_stream_unwritten(bin_dir, tmp_path):
    proc = subprocess.Popen([bin_dir / STREAMED[0], *shape_args(STREAMED[0]), "--stream",
                             "-o", "s"], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    time.sleep(3)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err
    meta = json.loads((tmp_path / "s.json").read_text())
    assert meta["complete"] is False and "complete=false" in out
    rank = meta["ranks"][0]
    stream = json.loads((tmp_path / rank["stream_file"]).read_text())
    assert stream["samples"] == rank["samples"] > 0
    seconds = check_stream_files(tmp_path, stream)
    assert seconds[:, 1].sum() == stream["samples"]
    assert not list(tmp_path.glob("*.tmp"))


@pytest.mark.timing
def test_a_stream_killed_outright_keeps_the_injections_to_its_last_checkpoint(bin_dir, tmp_path):
    """kill -9 in the middle of a stream with 200 us injected every 2 ms:
    what the last checkpoint wrote holds them, every second of it, and the
    analysis reads it. A kernel of fixed work: its losses are in ticks."""
    kernel = kernels_where(stream=True, fixed="work")[0]
    # 12 s: at least 5 s written, 2,500 periods, whatever the start-up took
    period_us, duration_us, checkpoint_s, kill_after = 2000, 200, 2, 12
    proc = subprocess.Popen([bin_dir / kernel, *shape_args(kernel), "--stream",
                             "--seconds", "120", "--checkpoint", str(checkpoint_s), "--inject",
                             f"{period_us}:{duration_us}", "-o", "soak"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(kill_after)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    assert not (tmp_path / "soak.json").exists()  # the run's JSON is written at its end
    stream = json.loads((tmp_path / "soak_0_stream.json").read_text())
    assert stream["complete"] is False
    # at most the last interval is missing (and the start-up before the
    # measurement: calibration and warm-up, a few seconds)
    assert stream["seconds"] >= kill_after - checkpoint_s - 5, stream["seconds"]
    seconds = check_stream_files(tmp_path, stream)
    assert len(seconds) >= int(stream["seconds"])
    # every second lost at least the injected share (the machine only adds);
    # a little under it for the reference sample, the best of the first second
    share = 100 * duration_us / period_us
    assert (seconds[:, 5] >= 0.95 * share).all(), seconds[seconds[:, 5] < 0.95 * share]
    # and the system took it, each second (a line is written once its
    # second is over: every one kept is whole)
    assert (seconds[:, 6] >= 0.9 * share).all(), seconds[:, 6]
    # each injection lengthened one sample by its whole length: as many
    # such samples as periods, less the few a stall folds into one
    per_tick = stream["ticks_per_ns"] * 1e3
    injected = samples_above(stream, 0.95 * duration_us * per_tick)
    periods = stream["seconds"] * 1e6 / period_us
    assert injected >= 0.8 * periods, (injected, periods)
    assert all(e["loss"] >= 0.95 * duration_us * per_tick for e in stream["events"])
    # the analysis reads the run as far as it was written
    done = subprocess.run(["Rscript", str(REPORT_R), str(tmp_path), "--no-pdf"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    table = (tmp_path / "report" / "streams.csv").read_text().splitlines()
    assert len(table) == 2
    row = dict(zip(table[0].split(","), table[1].split(",")))
    # killed: no run JSON says what stopped it; its figures are the last
    # checkpoint's
    assert row["complete"] == "FALSE" and row["stopped_by"] == "killed", row
    assert math.isclose(float(row["seconds"]), stream["seconds"], rel_tol=1e-9)
    assert math.isclose(float(row["stolen_percent"]), stream["stolen_percent"], rel_tol=1e-9)
