"""scripts/cannot_tell.py: each timing test's cannot-tells counted, and with
--rounds N a test that could not tell in all N rounds fails make test-load."""
import subprocess

from nbtest import ROOT

SCRIPT = ROOT / "scripts" / "cannot_tell.py"


def summarise(log, *args):
    return subprocess.run([str(SCRIPT), "--log", str(log), *args], capture_output=True,
                          text=True, timeout=30)


def test_each_tests_cannot_tells_are_counted_and_one_that_never_answered_fails(tmp_path):
    log = tmp_path / "cannot-tell.log"
    log.write_text("tests/test_a.py::test_x[1]: spread: 3 us\n"
                   "tests/test_b.py::test_y: too even\n"
                   "tests/test_a.py::test_x[1]: spread: 5 us\n")
    shown = summarise(log)
    assert shown.returncode == 0, shown.stderr
    assert "3 time(s), 2 timing test(s)" in shown.stdout
    assert "tests/test_a.py::test_x[1]: 2; last: spread: 5 us" in shown.stdout
    judged = summarise(log, "--rounds", "2")
    assert judged.returncode == 1
    assert "test_x[1]: 2 of 2 rounds" in judged.stdout
    assert judged.stderr.strip() == "cannot tell: tests/test_a.py::test_x[1] never answered in 2 rounds"
    assert summarise(log, "--rounds", "3").returncode == 0


def test_no_log_is_no_cannot_tell(tmp_path):
    shown = summarise(tmp_path / "absent.log", "--rounds", "3")
    assert shown.returncode == 0 and "0 time(s), 0 timing test(s)" in shown.stdout
