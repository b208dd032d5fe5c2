"""Bad input to the driver's options, which every kernel shares: one clear
line, a non-zero exit, and no files left behind. A kernel's own options are
tried in its test file."""
import json
import os

import pytest
from nbtest import KERNELS, SAMPLING, kernels_where
from nbtest.bad_input import check_bad_input

NCPUS = len(os.sched_getaffinity(0))
# a kernel that takes -n and --work, and one that takes --stream
SAMPLED = SAMPLING[0]
STREAMED = kernels_where(stream=True)[0]

BAD = [
    (SAMPLED, ["-n", "0"], "-n 0"),
    (SAMPLED, ["-n", "-5"], "-n -5"),
    (SAMPLED, ["-n", "12x"], "-n 12x"),
    (SAMPLED, ["-t", "999"], "-t 999"),
    (SAMPLED, ["--cpus", "99"], "--cpus 99"),
    (SAMPLED, ["--cpus", "0,0"], "listed twice"),
    (SAMPLED, ["--cpus", "0-x"], "--cpus 0-x"),
    (SAMPLED, ["--housekeeping", "x"], "--housekeeping: 'x'"),
    (SAMPLED, ["--work", "bogus"], "--work bogus"),
    (SAMPLED, ["--inject", "100:200"], "--inject 100:200"),
    (SAMPLED, ["--inject", "1000"], "--inject 1000"),
    (SAMPLED, ["--inject", "1000:20:random"], "--inject 1000:20:random"),
    (STREAMED, ["--stream", "-n", "100"], "-n has no meaning"),
    (SAMPLED, ["-n", "100", "--seconds", "1"], "-n and --seconds"),
    (STREAMED, ["--checkpoint", "5"], "go with --stream"),
    (STREAMED, ["--stream", "-s"], "not with -s"),
    (SAMPLED, ["--seconds", "0"], "--seconds 0"),
    (SAMPLED, ["-n", "1099511627776", "-t", "1"], "available"),
    (SAMPLED, ["-o", "/nonexistent/dir/run"], "/nonexistent/dir/run"),
    (SAMPLED, ["-o", "/proc/noisebench"], "/proc/noisebench"),
    (SAMPLED, ["--bogus"], "--bogus"),
    (SAMPLED, ["-x"], "unknown option -x"),
    (SAMPLED, ["-n"], "-n needs a value"),
]


@pytest.mark.parametrize("kernel,args,mentions", BAD, ids=[" ".join(b[1]) for b in BAD])
def test_bad_input_fails_cleanly(run, tmp_path, kernel, args, mentions):
    check_bad_input(run, tmp_path, kernel, args, mentions)


def test_more_threads_than_cpus_names_the_limit(run):
    res = run(SAMPLED, "-t", NCPUS + 1)
    assert res.returncode == 2
    assert f"only {NCPUS} CPUs" in res.stderr


@pytest.mark.parametrize("kernel", KERNELS)
def test_help_and_version(run, kernel):
    res = run(kernel, "-h")
    assert res.returncode == 0 and "usage:" in res.stdout and "--inject" in res.stdout
    res = run(kernel, "--version")
    assert res.returncode == 0 and "noisebench" in res.stdout


def test_housekeeping_cpus_are_recorded(run, tmp_path):
    res = run(SAMPLED, "--warmup-ms", "0", "--seconds", "0.1", "--housekeeping", "0,2-3",
              "-o", "hk")
    assert res.returncode == 0, res.stderr
    assert json.loads((tmp_path / "hk.json").read_text())["housekeeping_cpus"] == [0, 2, 3]
