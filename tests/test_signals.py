"""SIGTERM or SIGINT mid-run (Slurm's time limit) keeps what was measured,
for every kernel of the catalogue: the signal is the driver's, whatever
the kernel measures."""
import json
import signal
import subprocess
import time

import numpy as np
import pytest
from nbtest import ANY_KERNEL, KERNELS
from nbtest.ground_truth import load_injections
from nbtest.launch import wait_for_files

# every kernel, the two signals Slurm sends in turn
CASES = [(kernel, (signal.SIGTERM, signal.SIGINT)[i % 2]) for i, kernel in enumerate(KERNELS)]


def interrupt(bin_dir, directory, kernel, sig, after_s):
    """The kernel on every CPU, asked for 20 s (P-SNAP warms up for a tenth
    of that), and sig after_s seconds after it created its files. No node
    file (--node-files): PREFIX.json describes the ranks itself, and each
    wrote its samples and injections into files of its own."""
    proc = subprocess.Popen([bin_dir / kernel, "-t", "0", "--seconds", "20", "--node-files",
                             "--inject", "10000:20", "-o", "cut"],
                            cwd=directory, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    wait_for_files(proc, directory, "cut.json.*.tmp", 1)
    time.sleep(after_s)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


@pytest.mark.parametrize("kernel,sig", CASES)
def test_signal_keeps_samples_so_far(bin_dir, tmp_path, kernel, sig):
    # past the calibration and the 300 ms warm-up: 2.5 s on a quiet
    # machine, longer on a loaded one, where a signal that came before the
    # measurement writes nothing or empty files (the next two tests): then
    # it is sent later again
    for after_s in (2.5, 5, 10):
        rc, out, err = interrupt(bin_dir, tmp_path, kernel, sig, after_s)
        assert rc == 128 + sig, err
        if "before measuring; nothing written" in err:
            assert not list(tmp_path.iterdir())
            continue
        meta = json.loads((tmp_path / "cut.json").read_text())
        if all(t["samples"] > 0 for t in meta["ranks"]):
            break
        for path in tmp_path.iterdir():
            path.unlink()
    else:
        pytest.fail(f"{kernel} measured nothing on some CPU in {after_s} s, three times")
    assert meta["complete"] is False
    assert meta["interrupted_by"] == sig.name
    assert "complete=false" in out
    assert not list(tmp_path.glob("*.tmp")), "temporary files left behind"
    assert not list(tmp_path.glob("cut_node*"))
    entry = KERNELS[kernel]
    for t in meta["ranks"]:
        taken = t["samples"]
        assert taken > 0, t
        for name, described in zip(t["files"], entry["files"], strict=True):
            values = np.loadtxt(tmp_path / name, dtype=np.uint64, ndmin=2)
            assert values.shape == (taken, len(described["columns"])), name
            assert (values != np.iinfo(np.uint64).max).all(), "an unset sample was written"
            if entry.get("end_tick") in described["columns"]:
                ends = values[:, described["columns"].index(entry["end_tick"])]
                assert (np.diff(ends.astype(np.int64)) > 0).all()
        if entry["samples_per_rank"] == "samples":
            stats = t["stats"]
            assert stats["unit"] == entry["value_unit"]
            assert stats["max"] > 0 and stats["min"] <= stats["mean"] <= stats["max"]
        assert "injections_file_range" not in t
        injections = load_injections(tmp_path, t)["due"]
        assert len(injections) == t["injections_logged"] > 0


def start_and_wait_for_files(bin_dir, tmp_path):
    """A kernel with a 5 s warm-up, once it has created its files (the
    JSON's temporary file is the last): it then calibrates for at least
    100 ms (the tick rate) before it measures anything."""
    proc = subprocess.Popen([bin_dir / ANY_KERNEL, "--seconds", "1", "--warmup-ms", "5000",
                             "-o", "x"], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
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
    files = [f"x_{described['suffix']}" for described in KERNELS[ANY_KERNEL]["files"]]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["x.json", *files])
    for name in files:
        assert (tmp_path / name).read_text() == ""
    meta = json.loads((tmp_path / "x.json").read_text())
    assert meta["complete"] is False and meta["ranks"][0]["samples"] == 0
