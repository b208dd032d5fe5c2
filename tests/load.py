#!/usr/bin/env python3
"""Noise of our own on every CPU, for running the timing tests on a noisy
machine on purpose (tests/under_load.sh).

One process per CPU, pinned, at normal priority, so the scheduler lets it
preempt whatever is measured there: bursts of busy spinning from 10 us to
5 ms (log-uniform, so short ones are the most frequent), at random times,
taking a share of the core that changes every second, drawn from 10-40%;
and now and then a sustained stretch of 100-300 ms in which the CPU is taken
half the time in 0.7 ms slices, which a kernel sees as running at half speed.
The slices repeat at 714 Hz, away from the tests' injections (100 and 500 Hz)
and their harmonics, where a line of the load's would pass for theirs.

--bad-day: the day every timing test holds on (make test-load): in half the seconds the CPU taken 40% of the time in
0.56 ms slices 1.4 ms apart (a kernel sees 60% speed), in the others the
bursts; and once every 30 s on average a stall of 100 ms, a spin at
real-time priority (as root) that nothing else on the CPU runs through, as
a hypervisor's stall of a vCPU.
Stops after --seconds, or on SIGTERM/SIGINT.
"""
import argparse
import ctypes
import math
import os
import random
import signal
import sys
import time

PR_SET_TIMERSLACK = 29
PERIOD = 0.0014  # seconds, a slice of a slow stretch and the pause after it
STALL = 0.1  # seconds, on a bad day
STALLS_PER_SECOND = 1 / 30


def spin(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def stall():
    """STALL at real-time priority where allowed: nothing else on the CPU
    runs meanwhile."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
    except PermissionError:
        pass
    spin(STALL)
    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


def slow(until, speed):
    """The CPU taken in slices, leaving `speed` of it, until `until`."""
    while time.monotonic() < until:
        spin((1 - speed) * PERIOD)
        time.sleep(speed * PERIOD)


def generate(cpu, until, low, high, seed, bad_day):
    os.sched_setaffinity(0, {cpu})
    # wake when asked: the default 50 us of timer slack would blur the bursts
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0)
    rng = random.Random(seed)
    while time.monotonic() < until:
        second_end = min(until, time.monotonic() + 1.0)
        if bad_day:
            if rng.random() < STALLS_PER_SECOND:
                stall()
            if rng.random() < 0.5:
                slow(second_end, 0.6)
                continue
        elif rng.random() < 0.2:
            slow(min(second_end, time.monotonic() + rng.uniform(0.1, 0.3)), 0.5)
        share = rng.uniform(low, high)
        while time.monotonic() < second_end:
            burst = math.exp(rng.uniform(math.log(10e-6), math.log(5e-3)))
            spin(burst)
            # idle for as long as keeps the share, on average, at `share`
            time.sleep(rng.expovariate(share / (burst * (1 - share))))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=3600, help="stop after this long")
    p.add_argument("--low", type=float, default=0.10, help="least share of a core per second")
    p.add_argument("--high", type=float, default=0.40, help="largest share of a core per second")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--bad-day", action="store_true",
                   help="60%% speed half the time and a 100 ms stall every 30 s")
    a = p.parse_args()
    if not 0 <= a.low <= a.high < 1:
        p.error(f"--low {a.low} --high {a.high}: need 0 <= low <= high < 1")
    until = time.monotonic() + a.seconds
    seed = a.seed if a.seed is not None else random.randrange(1 << 30)
    children = []
    for cpu in sorted(os.sched_getaffinity(0)):
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            try:
                generate(cpu, until, a.low, a.high, seed + cpu, a.bad_day)
            except KeyboardInterrupt:
                pass
            os._exit(0)
        children.append(pid)

    def stop(signo, frame):
        for pid in children:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"load: {len(children)} CPUs, {a.low:.0%}-{a.high:.0%} of each, seed {seed}",
          flush=True)
    for pid in children:
        os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
