"""SIGTERM or SIGINT mid-run (Slurm's time limit) keeps what was measured."""
import json
import signal
import subprocess
import time

import numpy as np
import pytest
from nbtest.ground_truth import load_injections
from nbtest.launch import wait_for_files


@pytest.mark.parametrize("kernel,sig", [("fwq", signal.SIGTERM), ("ftq", signal.SIGINT)])
def test_signal_keeps_samples_so_far(bin_dir, tmp_path, kernel, sig):
    # interrupted, no node file (--node-files): PREFIX.json describes the
    # ranks itself, and each wrote its samples and injections into files of
    # its own
    args = (["-w", "12", "--node-files", "--inject", "10000:20"] if kernel == "fwq"
            else ["--freq", "10000"])
    proc = subprocess.Popen([bin_dir / kernel, "-t", "0", "-n", "10000000", *args, "-o", "cut"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    wait_for_files(proc, tmp_path, "cut.json.*.tmp", 1)
    time.sleep(2.5)  # past the calibration and the 300 ms warm-up
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + sig, err
    meta = json.loads((tmp_path / "cut.json").read_text())
    assert meta["complete"] is False
    assert meta["interrupted_by"] == sig.name
    assert "complete=false" in out
    assert not list(tmp_path.glob("*.tmp")), "temporary files left behind"
    assert not list(tmp_path.glob("cut_node*"))
    for t in meta["ranks"]:
        taken = t["samples"]
        assert 1000 < taken < 10000000
        for name in t["files"]:
            values = np.loadtxt(tmp_path / name, dtype=np.uint64, ndmin=1)
            assert len(values) == taken
            assert (values != np.iinfo(np.uint64).max).all(), "an unset sample was written"
        if kernel == "ftq":
            times = np.loadtxt(tmp_path / t["files"][1], dtype=np.int64)
            assert (np.diff(times) > 0).all()
        stats = t["stats"]
        assert stats["max"] > 0 and stats["min"] <= stats["mean"] <= stats["max"]
        if kernel == "fwq":
            assert "injections_file_range" not in t
            injections = load_injections(tmp_path, t)["due"]
            assert len(injections) == t["injections_logged"] > 0


def start_and_wait_for_files(bin_dir, tmp_path):
    """fwq with a 5 s warm-up, once it has created its files (the JSON's
    temporary file is the last): it then calibrates for at least 100 ms
    (the tick rate) before it measures anything."""
    proc = subprocess.Popen([bin_dir / "fwq", "-n", "1000", "--warmup-ms", "5000", "-o", "x"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 30
    while not list(tmp_path.glob("x.json.*.tmp")):
        assert time.monotonic() < deadline and proc.poll() is None, "no files created"
        time.sleep(0.001)
    return proc


def test_signal_before_measuring_writes_nothing(bin_dir, tmp_path):
    proc = start_and_wait_for_files(bin_dir, tmp_path)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM
    assert list(tmp_path.iterdir()) == []
    assert "before measuring; nothing written" in err, err


def test_signal_in_the_warm_up_writes_empty_files(bin_dir, tmp_path):
    proc = start_and_wait_for_files(bin_dir, tmp_path)
    time.sleep(2)  # calibrated by now, and warming up until 5 s
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.json", "x_times.dat"]
    assert (tmp_path / "x_times.dat").read_text() == ""
    meta = json.loads((tmp_path / "x.json").read_text())
    assert meta["complete"] is False and meta["ranks"][0]["samples"] == 0
