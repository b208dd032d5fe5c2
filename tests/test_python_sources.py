"""Every Python file of the project passes pyflakes' checks (ruff's F
rules): a name used and never defined fails here, in `make check`, rather
than in the timing phase of the gate twenty minutes in."""
import subprocess
import sys

from nbtest import ROOT

SOURCES = ["tests", "benchmarks", "reframe", "scripts", "jube"]


def test_python_sources_pass_pyflakes_checks():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "F",
                             *[str(ROOT / d) for d in SOURCES]], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
