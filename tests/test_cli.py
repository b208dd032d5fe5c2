"""Bad input: one clear line, a non-zero exit, and no files left behind."""
import json
import os

import pytest

NCPUS = len(os.sched_getaffinity(0))

BAD = [
    ("fwq", ["-n", "0"], "-n 0"),
    ("fwq", ["-n", "-5"], "-n -5"),
    ("fwq", ["-n", "12x"], "-n 12x"),
    ("fwq", ["-w", "80"], "-w 80"),
    ("ftq", ["--freq", "0"], "--freq 0"),
    ("ftq", ["--freq", "-3"], "--freq -3"),
    ("ftq", ["-i", "80"], "-i 80"),
    ("ftq", ["-i", "20", "--freq", "1000"], "-i and --freq"),
    ("ftq", ["--freq", "100000", "--work", "daxpy", "--daxpy-len", "65536"], "quantum"),
    ("fwq", ["-t", "999"], "-t 999"),
    ("fwq", ["--cpus", "99"], "--cpus 99"),
    ("fwq", ["--cpus", "0,0"], "listed twice"),
    ("fwq", ["--cpus", "0-x"], "--cpus 0-x"),
    ("fwq", ["--housekeeping", "x"], "--housekeeping: 'x'"),
    ("fwq", ["--work", "bogus"], "--work bogus"),
    ("fwq", ["--inject", "100:200"], "--inject 100:200"),
    ("fwq", ["--inject", "1000"], "--inject 1000"),
    ("fwq", ["--inject", "1000:20:random"], "--inject 1000:20:random"),
    ("fwq", ["--stream", "-n", "100"], "-n has no meaning"),
    ("fwq", ["-n", "100", "--seconds", "1"], "-n and --seconds"),
    ("ftq", ["--checkpoint", "5"], "go with --stream"),
    ("fwq", ["--stream", "-s"], "not with -s"),
    ("psnap", ["--seconds", "0"], "--seconds 0"),
    ("fwq", ["-n", "1099511627776", "-t", "1"], "available"),
    ("fwq", ["-o", "/nonexistent/dir/run"], "/nonexistent/dir/run"),
    ("ftq", ["-o", "/proc/noisebench"], "/proc/noisebench"),
    ("fwq", ["--bogus"], "--bogus"),
    ("fwq", ["-x"], "unknown option -x"),
    ("ftq", ["--freq"], "--freq needs a value"),
    ("fwq", ["-n"], "-n needs a value"),
    ("fwq", ["-i", "20"], "-i"),
    ("fwq", ["--freq", "100"], "--freq"),
]


@pytest.mark.parametrize("kernel,args,mentions", BAD, ids=[" ".join(b[1]) for b in BAD])
def test_bad_input_fails_cleanly(run, tmp_path, kernel, args, mentions):
    res = run(kernel, "--warmup-ms", "0", *args)
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith(f"{kernel}: error: ")
    assert mentions in lines[0]
    assert list(tmp_path.iterdir()) == [], "a failed run left files behind"


def test_more_threads_than_cpus_names_the_limit(run):
    res = run("ftq", "-t", NCPUS + 1)
    assert res.returncode == 2
    assert f"only {NCPUS} CPUs" in res.stderr


def test_help_and_version(run):
    for kernel in ("fwq", "ftq"):
        res = run(kernel, "-h")
        assert res.returncode == 0 and "usage:" in res.stdout and "--inject" in res.stdout
        res = run(kernel, "--version")
        assert res.returncode == 0 and "noisebench" in res.stdout


def test_housekeeping_cpus_are_recorded(run, tmp_path):
    res = run("fwq", "--warmup-ms", "0", "-n", "200", "--housekeeping", "0,2-3", "-o", "fwq")
    assert res.returncode == 0, res.stderr
    assert json.loads((tmp_path / "fwq.json").read_text())["housekeeping_cpus"] == [0, 2, 3]
