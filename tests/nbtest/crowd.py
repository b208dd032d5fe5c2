"""A crowd of threads of another process on one CPU: each runs for a while
and sleeps for a while, at random, until stopped. Each thread is a cause of
its own in a trace (its name holds its thread id), so that a crowd of many
fills a long detour with more causes than any fixed table holds, and a crowd
of a few switching every few hundred microseconds writes more trace events
than a small buffer keeps (tests/test_causes.py)."""
import os
import random
import subprocess
import sys
import threading
import time


def crowd(cpu, threads, run_us, sleep_us, seconds):
    """Runs the crowd in this process: `threads` threads pinned to `cpu`,
    each busy for a time drawn from run_us (lo, hi) and asleep for one from
    sleep_us, for `seconds`."""
    os.sched_setaffinity(0, {cpu})
    stop_at = time.monotonic() + seconds

    def member(seed):
        rnd = random.Random(seed)
        while time.monotonic() < stop_at:
            end = time.perf_counter() + rnd.uniform(*run_us) / 1e6
            while time.perf_counter() < end:
                pass
            time.sleep(rnd.uniform(*sleep_us) / 1e6)

    members = [threading.Thread(target=member, args=(k,), daemon=True) for k in range(threads)]
    for m in members:
        m.start()
    for m in members:
        m.join()


def start_crowd(cpu, threads, run_us, sleep_us, seconds=60):
    """The crowd as a process of its own; stop it with terminate(). It ends
    by itself after `seconds`, should a test not get to stop it."""
    return subprocess.Popen([sys.executable, __file__, str(cpu), str(threads),
                             f"{run_us[0]}:{run_us[1]}", f"{sleep_us[0]}:{sleep_us[1]}",
                             str(seconds)], stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    pair = lambda s: tuple(float(v) for v in s.split(":"))  # noqa: E731
    crowd(int(sys.argv[1]), int(sys.argv[2]), pair(sys.argv[3]), pair(sys.argv[4]),
          float(sys.argv[5]))
