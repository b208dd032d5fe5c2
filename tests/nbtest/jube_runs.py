"""Running the JUBE benchmarks from Python (tests and benchmarks): a copy of
jube/ with its sweep edited in include/parameters.xml, as a user would, run
by the real JUBE until every workpackage ended, and its csv tables read."""
import csv
import io
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from nbtest import CATALOGUE, ROOT


def project_copy(tmp_path, kernels=None, **params):
    """tmp_path/jube: a copy of jube/ with these parameters set (a list is
    a sweep), beside links to the rest of the checkout. kernels: those the
    benchmarks of every kernel (noise.xml, catalogue.xml) run, else all."""
    for entry in ROOT.iterdir():
        if entry.name not in ("jube", ".git"):
            (tmp_path / entry.name).symlink_to(entry)
    shutil.copytree(ROOT / "jube", tmp_path / "jube", ignore=shutil.ignore_patterns("runs"))
    # the keys of a kernel's sweep go into the one parameter "sweep"
    sweep = {k: params.pop(k) for k in list(params) if k in CATALOGUE["sweep_options"]}
    if sweep:
        params["sweep"] = " ".join(f"{k}={listed(v)}" for k, v in sweep.items())
    for name, value in params.items():
        set_parameter(tmp_path / "jube", name, value)
    for path in ((tmp_path / "jube" / name for name in ("noise.xml", "catalogue.xml"))
                 if kernels is not None else ()):
        path.write_text(re.sub(r'<parameter name="kernel_name"[^>]*>.*?</parameter>',
                               f'<parameter name="kernel_name">{",".join(kernels)}</parameter>',
                               path.read_text(), flags=re.S))
    return tmp_path / "jube"


def listed(value):
    return ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def set_parameter(jube_dir, name, value):
    value = listed(value)
    # the site values are the test cluster's, platforms/localhost
    for path in [*jube_dir.glob("include/*.xml"), jube_dir / "platforms/localhost/system.xml"]:
        text = path.read_text()
        pattern = re.compile(rf'<parameter name="{name}"([^>]*)>.*?</parameter>', re.S)
        found = pattern.search(text)
        if found:
            # the sweep keeps its separator (";"): its commas are the
            # kernels' sweeps, read by include/sweep.py
            kept = re.search(r' separator="[^"]*"', found[1])
            path.write_text(pattern.sub(
                f'<parameter name="{name}"{kept[0] if kept else ""}>{value}</parameter>', text, 1))
            return
    raise AssertionError(f"no parameter {name} in {jube_dir}")


def jube(*args, env=None, cwd=None, timeout=600):
    result = subprocess.run(["jube", *map(str, args)], capture_output=True, text=True,
                            timeout=timeout, env=dict(os.environ, **(env or {})), cwd=cwd)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def unfinished(out):
    """Workpackages open or waiting, from JUBE's step table
    (| step | all | open | wait | error | done |)."""
    rows = re.findall(r"^\s*\|\s*\w+\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|", out, re.M)
    assert rows, out
    return sum(int(open_) + int(wait) for _, open_, wait in rows)


def run_to_end(jube_dir, kernel, env, *tags, timeout=600, poll_s=3):
    """jube run, then jube continue until no workpackage is open or waits
    (done or error); the run's handle."""
    out = jube("run", jube_dir / f"{kernel}.xml", *(["-t", *tags] if tags else []), env=env)
    handle = jube_dir / "runs" / kernel
    deadline = time.monotonic() + timeout
    while unfinished(out):
        assert time.monotonic() < deadline, out + scheduler_state(handle, env)
        time.sleep(poll_s)
        out = jube("continue", handle, "-i", "last", env=env)
    return handle


def scheduler_state(handle, env):
    """What a run that did not end was waiting for: Slurm's queue and nodes
    (when the run went through Slurm) and the end of each workpackage's
    job output."""
    lines = []
    if "SLURM_CONF" in env:
        for cmd in (["squeue", "-a", "-o", "%i %j %T %r %M %N"],
                    ["sinfo", "-N", "-o", "%N %T %E"],
                    ["scontrol", "-o", "show", "job"]):
            got = subprocess.run(cmd, capture_output=True, text=True, timeout=60,
                                 env=dict(os.environ, **env))
            lines += [f"$ {' '.join(cmd)}", got.stdout + got.stderr]
        log = Path(env["SLURM_CONF"]).parent / "slurmctld.log"
        if log.exists():
            lines += [f"--- {log}", *log.read_text(errors="replace").splitlines()[-30:]]
    for work in sorted(handle.glob("*/*/work")):
        for name in ("job.out", "job.err", "job_status"):
            path = work / name
            if path.exists():
                tail = path.read_text(errors="replace").splitlines()[-15:]
                lines += [f"--- {path.relative_to(handle)}", *tail]
    return "\n" + "\n".join(lines)


def result_rows(handle, table, env=None):
    """The rows of one table of `jube result`, as csv (-s csv -o TABLE)."""
    out = jube("result", handle, "-i", "last", "-s", "csv", "-o", table, env=env)
    return list(csv.DictReader(io.StringIO(out.strip())))


def workpackage_dirs(handle, step, kernel=None):
    """The work directories of a step's workpackages (of one kernel's, where
    the step runs several: the run's prefix is the kernel's name)."""
    dirs = sorted((handle / "000000").glob(f"*_{step}/work"))
    return [d for d in dirs if kernel is None or (d / f"{kernel}.json").exists()]


def union_length(spans):
    """Seconds during which at least one of the sorted (start, end) spans ran."""
    total, end = 0.0, float("-inf")
    for a, b in spans:
        if b > end:
            total += b - max(a, end)
            end = b
    return total
