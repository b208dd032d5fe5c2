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


CANNOT_TELL = "cannot tell today: "
# `make test` prints this file's lines at its end, so that a test that
# always skips is seen
CANNOT_TELL_LOG = ROOT / ".cache" / "cannot-tell.log"


def cannot_tell(reason):
    """Skip a timing test whose measurement cannot decide on this machine
    now, saying what was measured (counted and printed by make test)."""
    pytest.skip(CANNOT_TELL + reason)


def pytest_runtest_logreport(report):
    if report.skipped and isinstance(report.longrepr, tuple):
        reason = report.longrepr[2].removeprefix("Skipped: ")
        if reason.startswith(CANNOT_TELL):
            CANNOT_TELL_LOG.parent.mkdir(exist_ok=True)
            with CANNOT_TELL_LOG.open("a") as log:
                log.write(f"{report.nodeid}: {reason[len(CANNOT_TELL):]}\n")


def pytest_terminal_summary(terminalreporter):
    told = [r for r in terminalreporter.stats.get("skipped", [])
            if isinstance(r.longrepr, tuple) and CANNOT_TELL in r.longrepr[2]]
    terminalreporter.write_line(f"cannot tell today: {len(told)} timing test(s) skipped "
                                f"for what this machine showed")
    for r in told:
        terminalreporter.write_line(f"  {r.nodeid}: {r.longrepr[2]}")


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


def rank_lines(stdout):
    """The result lines a kernel prints, one a thread or rank."""
    return [line for line in stdout.splitlines() if line.startswith("rank kernel=")]


def summaries(stdout):
    """The key=value result lines a kernel prints, one dict per rank."""
    return [dict(f.split("=", 1) for f in line.split()[1:]) for line in rank_lines(stdout)]


RANK_LINE_PREFIX = ("kernel", "rank", "host", "cpu")


def _number(text):
    """A figure's number as the kernels' reduction reads it, or None."""
    try:
        return float(text[:-1] if text.endswith("%") else text)
    except ValueError:
        return None


def reduce_rank_lines(lines):
    """What src/lib/base/figures.c makes of result lines, computed here from
    the lines: {figure: text} of the ranks line, but the means as numbers."""
    numbers, words = {}, {}
    for line in lines:
        for token in line.split()[1:]:
            key, _, value = token.partition("=")
            if key in RANK_LINE_PREFIX:
                continue
            items = [item.partition(":") for item in value.split(",")]
            if _number(value) is not None:
                items = [(key, None, value)]
            elif all(name[:1].isalpha() and _number(v) is not None for name, _, v in items):
                items = [(f"{key}_{name}", None, v.rstrip("%")) for name, _, v in items]
            else:
                words.setdefault(key, value)
                numbers.setdefault(key, None)
                continue
            for name, _, text in items:
                x = _number(text)
                seen = numbers.setdefault(name, [])
                if x is not None and abs(x) != float("inf") and x == x:
                    seen.append((x, text.rstrip("%")))
    out = {}
    for key, seen in numbers.items():
        if seen is None:
            out[f"{key}_first"] = words[key]
        elif not seen:
            out.update({f"{key}_min": "nan", f"{key}_avg": float("nan"), f"{key}_max": "nan"})
        else:
            # the first of equal ones, as the line printed it
            out[f"{key}_min"] = min(seen, key=lambda s: s[0])[1]
            out[f"{key}_avg"] = sum(x for x, _ in seen) / len(seen)
            out[f"{key}_max"] = max(seen, key=lambda s: s[0])[1]
    return out


def ranks_line(stdout, kernel):
    """The run's ranks line (the catalogue's ranks_line) as {key: text}."""
    found = [line for line in stdout.splitlines() if line.startswith(f"ranks kernel={kernel} ")]
    assert len(found) == 1, f"{len(found)} ranks lines"
    return dict(token.split("=", 1) for token in found[0].split()[1:])


def check_ranks_line(stdout, kernel, lines):
    """The ranks line is the reduction of `lines`, figure by figure, in the
    order they came; returns it."""
    got = ranks_line(stdout, kernel)
    want = reduce_rank_lines(lines)
    assert int(got.pop("ranks")) == len(lines)
    assert got.pop("kernel") == kernel
    assert list(got) == list(want)
    for key, value in want.items():
        if key.endswith("_avg"):
            assert float(got[key]) == pytest.approx(value, rel=1e-5, abs=1e-12, nan_ok=True), key
        else:
            assert got[key] == value, key
    return got


def mpi_env(extra=None):
    """The environment for MPI launches: OpenMPI runs as root only when told
    to; under the sanitizer build, leak checking is left to the non-MPI
    binaries, as OpenMPI's own allocations (some in plugins it unloads, which
    no suppression can name) would be reported as ours."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               **(extra or {}))
    if os.environ.get("NB_SANITIZE"):
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    return env


@pytest.fixture(scope="session")
def slurm():
    """A real Slurm cluster on localhost, started by the project's script and
    stopped after the session; yields the environment clients need. With
    accounting (slurmdbd, MariaDB): ReFrame's Slurm scheduler asks sacct."""
    script = ROOT / "tests" / "slurm" / "cluster.sh"
    subprocess.run([script, "start", "--with-db"], check=True, capture_output=True, text=True,
                   timeout=300)
    env = {"SLURM_CONF": str(ROOT / ".cache" / "slurm" / "slurm.conf")}
    try:
        yield env
    finally:
        subprocess.run([script, "stop"], capture_output=True, timeout=300)


@pytest.fixture(scope="session")
def slurm_nodes():
    """A Slurm cluster of four named nodes on this machine (nbnode1..4: a
    slurmd each, in a UTS namespace of its own, on its share of the CPUs,
    round robin when there are fewer CPUs than nodes), beside the one-node
    cluster; yields the environment clients need."""
    script = ROOT / "tests" / "slurm" / "cluster.sh"
    subprocess.run([script, "start", "--nodes", "4"], check=True, capture_output=True, text=True,
                   timeout=300)
    env = {"SLURM_CONF": str(ROOT / ".cache" / "slurm-4nodes" / "slurm.conf")}
    try:
        yield env
    finally:
        subprocess.run([script, "stop", "--nodes", "4"], capture_output=True, timeout=300)


LAUNCHERS = ["threads", "mpirun", "srun"]


@pytest.fixture
def launch(request, bin_dir, tmp_path):
    """launch(how, kernel, *args): the kernel on every CPU of this machine,
    as threads of one process, as MPI ranks under mpirun, or under Slurm's
    srun with PMIx."""

    def _launch(how, kernel, *args, timeout=300):
        ncpus = len(os.sched_getaffinity(0))
        args = [str(a) for a in args]
        env = mpi_env()
        if how == "threads":
            cmd = [str(bin_dir / kernel), "-t", "0", *args]
        elif how == "mpirun":
            cmd = ["mpirun", "-n", str(ncpus), str(bin_dir / f"{kernel}_mpi"), *args]
        else:
            env.update(request.getfixturevalue("slurm"))
            cmd = ["srun", "--mpi=pmix", "-n", str(ncpus), "--chdir", str(tmp_path),
                   str(bin_dir / f"{kernel}_mpi"), *args]
        if how != "threads" and not (bin_dir / f"{kernel}_mpi").exists():
            pytest.skip("built without MPI")
        return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True,
                              timeout=timeout, env=env)

    return _launch
