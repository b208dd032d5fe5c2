"""noise-slowdown beside a kernel: a competitor of known name on every CPU,
at real-time priority, that logs each slice it took the CPU (due, start and
end tick): the ground truth of a slowdown (tests/nbtest/speed.py) and of a
thread's detours (tests/test_causes.py)."""
import os
import signal
import subprocess

import numpy as np

CPUS = sorted(os.sched_getaffinity(0))


def beside_competitors(bin_dir, tmp_path, kernel_cmd, stretch, slice_):
    """Runs kernel_cmd while noise-slowdown takes every CPU in slices
    (--stretch EVERY_MS:LENGTH_MS, --slice ON_US:OFF_US); returns the
    kernel's CompletedProcess and each CPU's slices (an (n, 3) array)."""
    competitors = [subprocess.Popen([bin_dir / "noise-slowdown", "--cpu", str(cpu),
                                     "--seconds", "600", "--stretch", stretch,
                                     "--slice", slice_, "-o", f"slices_{cpu}.dat"],
                                    cwd=tmp_path, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, text=True)
                   for cpu in CPUS]
    try:
        done = subprocess.run([str(c) for c in kernel_cmd], cwd=tmp_path, capture_output=True,
                              text=True, timeout=300)
    finally:
        for c in competitors:
            c.send_signal(signal.SIGTERM)
        errors = [c.communicate(timeout=30)[1] for c in competitors]
    assert all(c.returncode == 0 for c in competitors), errors
    slices = {cpu: np.loadtxt(tmp_path / f"slices_{cpu}.dat", dtype=np.int64, ndmin=2)
              for cpu in CPUS}
    return done, slices


def start_rival(bin_dir, cpu, slice_, log, poisson=False):
    """noise-slowdown on one CPU at real-time priority, busy then asleep by
    slice_ ("ON_US:OFF_US"; poisson: asleep OFF_US on average, at random)
    for as long as it runs, each slice logged to log: a thread of known name
    and share, put there from outside what it disturbs. Stop it with
    SIGTERM."""
    return subprocess.Popen([str(bin_dir / "noise-slowdown"), "--cpu", str(cpu), "--seconds",
                             "600", "--stretch", "1000:1000", "--slice", slice_, "-o", str(log),
                             *(["--random"] if poisson else [])],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
