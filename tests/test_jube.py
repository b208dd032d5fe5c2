"""The JUBE benchmarks, run by the real JUBE: here without a scheduler, and
as Slurm jobs on the project's localhost cluster, failures included.

Each test runs a copy of jube/ whose sweep is made small by editing
include/parameters.xml (what a user does); the copy sits beside links to the
rest of the checkout, so its build step and report find the project. JUBE
drives the release build: the sanitizer suite checks the kernels."""
import json
import os
import re
import subprocess

import pytest
from nbtest import CATALOGUE, KERNELS, ROOT
from nbtest.jube_runs import jube, project_copy, result_rows, run_to_end, workpackage_dirs

pytestmark = [pytest.mark.harness,
              pytest.mark.skipif(bool(os.environ.get("NB_SANITIZE")),
                                 reason="JUBE drives the release build")]


def test_local_ftq_sweep_reports_each_workpackage(tmp_path):
    jube_dir = project_copy(tmp_path, cores=[1, 2], frequency_hz=[10000, 7000], ftq_seconds=1)
    handle = run_to_end(jube_dir, "ftq", env={})
    rows = result_rows(handle, "ftq")
    assert sorted((int(r["frequency_hz"]), int(r["cores"])) for r in rows) == [
        (7000, 1), (7000, 2), (10000, 1), (10000, 2)]
    worst, line = {}, {}
    for work in workpackage_dirs(handle, "ftq"):
        meta = json.loads((work / "ftq.json").read_text())
        key = (round(meta["frequency_hz"]), len(meta["ranks"]))
        worst[key] = max(rank["stats"]["scaled_noise_mean"] for rank in meta["ranks"])
        line[key] = max((rank["spectrum"]["share_percent"] or [0])[0] for rank in meta["ranks"])
    for r in rows:
        assert r["job_id"] == "local" and r["status"] == "ok"
        # the table's figures are the run's: as many samples as its files
        # hold, its worst thread's noise (whatever the machine's own is)
        assert int(r["samples"]) == int(r["frequency_hz"]) * int(r["cores"])
        measured = worst[(int(r["frequency_hz"]), int(r["cores"]))]
        assert 0 <= measured < 1
        assert float(r["scaled_noise_mean_max"]) == pytest.approx(measured, rel=1e-3)
        # and the strongest of the threads' own spectral lines
        strongest = line[(int(r["frequency_hz"]), int(r["cores"]))]
        assert float(r["strongest line (%)"]) == pytest.approx(strongest, rel=1e-2, abs=1e-3)
        assert float(r["mean_counts_avg"]) > 0
    lines = {}
    for work in workpackage_dirs(handle, "ftq"):
        files = list(work.glob("ftq_*_counts.dat"))
        lines[work] = sum(len(f.read_text().splitlines()) for f in files)
    assert sorted(lines.values()) == sorted(int(r["samples"]) for r in rows)
    # the build step compiled this checkout, and the report covers the run
    assert (handle / "000000" / "000000_build" / "work" / "out" / "bin" / "ftq").exists()
    assert (handle / "000000" / "report" / "index.html").exists()


# a point of each kernel's sweep on one and two cores: a job each
SMALL = dict(cores=[1, 2], work=["multiiter"], fwq_samples=4000,
             frequency_hz=[10000], ftq_seconds=1, psnap_reps=500, selfish_seconds=1)
# each kernel's table column of its headline figure
COLUMNS = {kernel: info["headline"]["key"] for kernel, info in KERNELS.items()}


def test_slurm_runs_every_workpackage_as_a_job(tmp_path, slurm, bin_dir):
    # the whole survey, noise.xml, as `make run` sweeps it, a job a workpackage
    jube_dir = project_copy(tmp_path, **SMALL)
    env = dict(slurm, NOISEBENCH_BIN_DIR=str(bin_dir))
    job_ids = []
    handle = run_to_end(jube_dir, "noise", env, "slurm")
    for kernel, column in COLUMNS.items():
        rows = result_rows(handle, kernel, env)
        assert len(rows) == len(SMALL["cores"]), rows
        for r in rows:
            assert r["status"] == "ok", r
            assert float(r[column]) >= 0
            job_ids.append(int(r["job_id"]))
        if "tasks" in rows[0]:
            assert sorted(int(r["tasks"]) for r in rows) == SMALL["cores"]
        # each job ran its kernel under srun, in its own workpackage
        for work in workpackage_dirs(handle, kernel):
            assert "srun" in (work / "submit.job").read_text()
            assert (work / f"{kernel}.json").exists()
    assert len(set(job_ids)) == len(job_ids) == len(SMALL["cores"]) * len(COLUMNS)


def test_the_catalogue_sweeps_every_kernel_it_lists(tmp_path, bin_dir):
    """jube/catalogue.xml reads the kernels, their quick arguments and their
    headline figures from the catalogue: a row a kernel, its headline the
    value its own line printed."""
    jube_dir = project_copy(tmp_path, cores=1, kernel_size="quick")
    handle = run_to_end(jube_dir, "catalogue", env={"NOISEBENCH_BIN_DIR": str(bin_dir)})
    rows = result_rows(handle, "catalogue")
    assert sorted(r["kernel"] for r in rows) == sorted(KERNELS)
    for r in rows:
        assert r["status"] == "ok", r
        headline = KERNELS[r["kernel"]]["headline"]
        assert r["headline"] == headline["name"] and r["unit"] == headline["unit"]
        (work,) = workpackage_dirs(handle, "kernel", r["kernel"])
        out = (work / "stdout").read_text()
        line = (f"ranks kernel={r['kernel']} " if headline["line"] == "ranks"
                else f"{r['kernel']} summary ")
        printed = re.search(rf"(?m)^{line}.*\b{headline['key']}=(\S+)", out)[1]
        assert float(r["value"]) == pytest.approx(float(printed), rel=1e-3), (r, printed)


def test_slurm_sweeps_the_cpus_and_work_of_the_nodes_not_the_host(tmp_path, slurm_nodes, bin_dir):
    """Under tag slurm the core counts swept are those of the partition's
    nodes as Slurm gives them (here one CPU each, on a host of more), and
    the work kinds those that build on the nodes' processor: a system file
    that says aarch64 gets no asm. The jobs ran where the sweep said."""
    nodes = subprocess.run(["scontrol", "-o", "show", "node"], capture_output=True, text=True,
                           check=True, env=dict(os.environ, **slurm_nodes)).stdout
    node_cpus = {int(c) for c in re.findall(r"\bCPUEfctv=(\d+)", nodes)}
    assert len(node_cpus) == 1, nodes
    (cpus,) = node_cpus
    jube_dir = project_copy(tmp_path, fwq_samples=2000, site_arch="aarch64")
    env = dict(slurm_nodes, NOISEBENCH_BIN_DIR=str(bin_dir))
    handle = run_to_end(jube_dir, "fwq", env, "slurm")
    rows = result_rows(handle, "fwq", env)
    sweep = [2 ** i for i in range(cpus.bit_length()) if 2 ** i < cpus] + [cpus]
    arm_kinds = [k for k, info in CATALOGUE["work_kinds"].items()
                 if "aarch64" in info.get("arch", ["aarch64"])]
    assert "asm" not in arm_kinds
    assert sorted((r["work"], int(r["cores"])) for r in rows) == sorted(
        (k, c) for k in arm_kinds for c in sweep), (cpus, os.cpu_count(), rows)
    for r in rows:
        assert r["status"] == "ok" and int(r["job_id"]) > 0, r
    for work in workpackage_dirs(handle, "fwq"):
        meta = json.loads((work / "fwq.json").read_text())
        assert len(meta["ranks"]) <= cpus


def test_the_node_shape_takes_the_system_files_values_and_the_core_spec(slurm_nodes):
    """include/node_shape.sh: a system file's CPUs win over Slurm's; cores
    the jobs keep for the system (--core-spec) come off every node's, and a
    partition that would leave a job none, or that does not exist, is an
    error of one line that names it."""
    script = ROOT / "jube" / "include" / "node_shape.sh"
    env = dict(os.environ, **slurm_nodes)

    def shape(*args):
        return subprocess.run([script, *args], capture_output=True, text=True, env=env)

    assert shape("cpus", "slurm", "debug", "288").stdout == "288"
    assert shape("arch", "slurm", "debug").stdout == os.uname().machine
    none_left = shape("cpus", "slurm", "debug", "", "1")
    assert none_left.returncode == 2 and none_left.stdout == ""
    assert none_left.stderr == "node_shape.sh: partition debug leaves no CPU to a job\n"
    missing = shape("cpus", "slurm", "nosuch")
    assert missing.returncode == 2 and "no node of partition nosuch" in missing.stderr


def test_the_acceptance_tag_runs_every_core_at_the_catalogues_lengths(tmp_path, bin_dir):
    """-t acceptance reads the catalogue's acceptance entry (kernels.json):
    one workpackage a kernel (FTQ's two frequencies), every CPU of the node,
    FWQ's preset work kind, each kernel at the entry's lengths. The entry
    is made short here, in a copy of the catalogue the benchmark's
    source_dir points to; nothing else of the project is changed."""
    alt = tmp_path / "alt"
    (alt / "src" / "kernels").mkdir(parents=True)
    for entry in ROOT.iterdir():
        if entry.name not in ("src", ".git"):
            (alt / entry.name).symlink_to(entry)
    for entry in (ROOT / "src").iterdir():
        if entry.name != "kernels":
            (alt / "src" / entry.name).symlink_to(entry)
    for entry in (ROOT / "src" / "kernels").iterdir():
        if entry.name != "kernels.json":
            (alt / "src" / "kernels" / entry.name).symlink_to(entry)
    catalogue = json.loads((ROOT / "src" / "kernels" / "kernels.json").read_text())
    short = {"fwq": {"samples": 3000}, "ftq": {"seconds": 1},
             "psnap": {"reps": 300, "granularity_us": 500}, "selfish": {"seconds": 1}}
    for kernel, values in short.items():
        catalogue["acceptance"][kernel].update(values)
    (alt / "src" / "kernels" / "kernels.json").write_text(json.dumps(catalogue))
    (tmp_path / "copy").mkdir()
    jube_dir = project_copy(tmp_path / "copy", source_dir=alt)
    handle = run_to_end(jube_dir, "noise", {"NOISEBENCH_BIN_DIR": str(bin_dir)}, "acceptance")
    preset = catalogue["acceptance"]
    ncpus = len(os.sched_getaffinity(0))
    flags = {"samples": "-n", "reps": "-n", "granularity_us": "-g", "seconds": "--seconds",
             "work": "--work"}
    for kernel in KERNELS:
        works = workpackage_dirs(handle, kernel)
        assert len(works) == (2 if kernel == "ftq" else 1), (kernel, works)
        for work in works:
            meta = json.loads((work / f"{kernel}.json").read_text())
            assert meta["complete"] is True and len(meta["ranks"]) == ncpus
            line = " ".join(meta["command_line"]) + " "
            for key, value in preset[kernel].items():
                if key in flags:
                    assert re.search(rf" {flags[key]} {value}(\.0)? ", line), (key, line)


def test_failed_and_killed_jobs_show_as_such(tmp_path, slurm, bin_dir):
    # a kernel given bad input, and one the job's time limit (1 minute) kills:
    # room for 10 million detours, as a full buffer ends a run (this VM makes
    # 10-60 thousand a second, so 3 minutes at least; a million ended one in
    # 50 s, before its time limit). Both end in error: a job that ends well
    # waits for the other at the step's shared report (see docs/jube.md)
    jube_dir = project_copy(tmp_path, cores=1, inject=["bogus", ""], selfish_seconds=600,
                            selfish_detours=10000000, site_timelimit=1)
    env = dict(slurm, NOISEBENCH_BIN_DIR=str(bin_dir))
    handle = run_to_end(jube_dir, "selfish", env, "slurm", timeout=300)
    rows = {r["status"]: r for r in result_rows(handle, "selfish", env)}
    assert set(rows) == {"failed", "killed"}, rows
    assert int(rows["failed"]["job_id"]) > 0 and rows["killed"]["job_id"] != "local"
    # nothing measured is passed off as a figure
    assert rows["failed"]["cpu_overhead_percent"] == ""
    status = jube("status", handle, "-i", "last", env=env)
    assert "ERROR" in status.upper()
    # the killed kernel kept what it measured
    killed = [w for w in workpackage_dirs(handle, "selfish")
              if "killed" in (w / "job_status").read_text()]
    assert len(killed) == 1
    assert (killed[0] / "selfish.json").exists()
    assert "TIME LIMIT" in (killed[0] / "job.err").read_text()
    assert rows["killed"]["cancelled"] == "TIME LIMIT"
    assert rows["failed"]["exit_code"] == "2"


def test_soak_streams_each_kernel_in_a_job_as_long_as_it_asks(tmp_path, slurm, bin_dir):
    # the soak's time limit comes from its length (plus 15 minutes), not the
    # site's 1 minute
    jube_dir = project_copy(tmp_path, soak_seconds=5, soak_checkpoint_s=1, site_timelimit=1)
    env = dict(slurm, NOISEBENCH_BIN_DIR=str(bin_dir))
    handle = run_to_end(jube_dir, "soak", env, "slurm", timeout=300)
    rows = result_rows(handle, "soak", env)
    assert sorted(r["kernel"] for r in rows) == ["ftq", "fwq", "psnap"]
    for r in rows:
        assert r["status"] == "ok" and int(r["job_id"]) > 0, r
        assert r["time limit"] == "0-00:16:00"
        assert 5 <= float(r["seconds_min"]) < 6 and int(r["checkpoints_min"]) >= 5, r
        assert int(r["memory_bytes_max"]) > 0
    for kernel in ("fwq", "ftq", "psnap"):
        (work,) = workpackage_dirs(handle, f"{kernel}_soak")
        assert "--time=0-00:16:00" in (work / "submit.job").read_text()
        meta = json.loads((work / f"{kernel}.json").read_text())
        assert meta["complete"] is True and meta["stream"]["seconds_requested"] == 5
    assert (handle / "000000" / "report" / "streams.csv").exists()
