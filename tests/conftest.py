"""Shared fixtures: where the kernels are and how to run them.

NB_BIN_DIR selects the binaries under test (make test runs the suite once on
the release build and once on the ASan/UBSan build); NB_BUILD_DIR is the
build tree whose `asm` target the disassembly test reads.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(scope="session")
def bin_dir():
    path = (ROOT / os.environ.get("NB_BIN_DIR", "build/bin")).resolve()
    if not (path / "fwq").exists():
        pytest.fail(f"no kernels in {path}: run `make` first (or set NB_BIN_DIR)")
    return path


@pytest.fixture(scope="session")
def build_dir(bin_dir):
    return (ROOT / os.environ.get("NB_BUILD_DIR", bin_dir.parent)).resolve()


@pytest.fixture
def run(bin_dir, tmp_path):
    """run(kernel, *args) -> CompletedProcess, in a fresh directory."""

    def _run(kernel, *args, timeout=300, env=None, cwd=None):
        full_env = dict(os.environ, **(env or {}))
        return subprocess.run(
            [str(bin_dir / kernel), *map(str, args)],
            cwd=cwd or tmp_path,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=full_env,
        )

    return _run


def summaries(stdout):
    """The key=value summary lines a kernel prints, one dict per thread."""
    rows = []
    for line in stdout.splitlines():
        if line.startswith("summary "):
            rows.append(dict(f.split("=", 1) for f in line.split()[1:]))
    return rows
