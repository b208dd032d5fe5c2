"""The R report on real runs: bad input is named, in one line, and leaves no
report behind. FTQ's spectra are test_ftq_report.py's."""
import csv
import re
import subprocess

import pytest
from nbtest import KERNELS, REPORT_R, quick_args


def report(results_dir):
    return subprocess.run(["Rscript", str(REPORT_R),
                           str(results_dir), "--no-pdf"],
                          capture_output=True, text=True, timeout=600)


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


# a kernel whose first data file has one column: a line of its is one number
ONE_COLUMN = next(k for k, info in KERNELS.items() if len(info["files"][0]["columns"]) == 1)


@pytest.mark.parametrize("damage, message", [
    (lambda f: f.write_text(f.read_text()[:-3]), r"cut short|lines, the JSON says"),
    (lambda f: f.write_text(""), r"empty, the JSON says"),
    (lambda f: f.write_text("12\nx7\n" + f.read_text()), r":2: 'x7' is not a number"),
])
def test_bad_input_is_named_and_writes_nothing(run, tmp_path, damage, message):
    assert run(ONE_COLUMN, "-t", 1, *quick_args(ONE_COLUMN), "-o", "run").returncode == 0
    damaged = f"run_0_{KERNELS[ONE_COLUMN]['files'][0]['suffix']}"
    damage(tmp_path / damaged)
    done = report(tmp_path)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and damaged in lines[0], done.stderr
    assert re.search(message, lines[0]), lines[0]
    assert not (tmp_path / "report").exists()
    assert not list(tmp_path.glob(".report*"))
