"""The JUBE benchmarks, run by the real JUBE: here without a scheduler, and
as Slurm jobs on the project's localhost cluster, failures included.

Each test runs a copy of jube/ whose sweep is made small by editing
include/parameters.xml (what a user does); the copy sits beside links to the
rest of the checkout, so its build step and report find the project. JUBE
drives the release build: the sanitizer suite checks the kernels. The tests
choose their kernels from the catalogue; a kernel's own table is tested in
its own file (test_fwq_doors.py, test_ftq_doors.py)."""
import json
import os
import re
import subprocess

import pytest
from nbtest import ANY_KERNEL, CATALOGUE, KERNELS, REPORT_R, ROOT, kernels_where, sweep_points
from nbtest.jube_runs import jube, project_copy, result_rows, run_to_end, workpackage_dirs

pytestmark = [pytest.mark.harness,
              pytest.mark.skipif(bool(os.environ.get("NB_SANITIZE")),
                                 reason="JUBE drives the release build")]

# each kernel at its quick arguments on one and two cores: a job each
SMALL = dict(cores=[1, 2], preset="quick")
# the rules the acceptance tag judges by unless a site sets its own
COMMITMENTS = "site/acceptance/commitments.requirements"
# the option each key of a sweep sets (kernels.json, sweep_options)
OPTIONS = CATALOGUE["sweep_options"]


def sweep_of(kernel):
    return KERNELS[kernel].get("sweep", {})


def option(args, key):
    """KEY's value in a workpackage's options (the catalogue table's)."""
    return re.search(rf"(?:^| ){OPTIONS[key]} (\S+)", args)[1]


def test_slurm_runs_every_workpackage_as_a_job(tmp_path, slurm, bin_dir):
    # the whole survey, noise.xml, as `make run` sweeps it, a job a workpackage
    jube_dir = project_copy(tmp_path, **SMALL)
    env = dict(slurm, NOISEBENCH_BIN_DIR=str(bin_dir))
    handle = run_to_end(jube_dir, "noise", env, "slurm")
    rows = result_rows(handle, "catalogue", env)
    assert sorted((r["kernel"], int(r["cores"])) for r in rows) == sorted(
        (k, c) for k in KERNELS for c in SMALL["cores"]), rows
    for r in rows:
        assert r["status"] == "ok", r
        assert r["options"] == " ".join(KERNELS[r["kernel"]]["quick_args"])
        assert float(r["value"]) >= 0
    # each kernel's own table has its rows too
    for kernel in KERNELS:
        assert len(result_rows(handle, kernel, env)) == len(SMALL["cores"]), kernel
        # each job ran its kernel under srun, in its own workpackage
        # (a workpackage of a kernel is one that wrote the kernel's JSON)
        works = workpackage_dirs(handle, "kernel", kernel)
        assert len(works) == len(SMALL["cores"]), (kernel, works)
        for work in works:
            assert "srun" in (work / "submit.job").read_text()
    job_ids = [int(r["job_id"]) for r in rows]
    assert len(set(job_ids)) == len(job_ids) == len(SMALL["cores"]) * len(KERNELS)


def test_the_catalogue_sweeps_every_kernel_it_lists(tmp_path, bin_dir):
    """jube/catalogue.xml reads the kernels, their quick arguments and their
    headline figures from the catalogue: a row a kernel, its headline the
    value its own line printed."""
    jube_dir = project_copy(tmp_path, cores=1, preset="quick")
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


def test_a_value_set_replaces_the_catalogues_for_the_kernels_that_take_it(tmp_path, bin_dir):
    """Each kernel sweeps its catalogue entry's values, a workpackage a
    point, each key by its option. A value set in parameters.xml replaces
    the catalogue's for the kernels that take it, and leaves the others'
    workpackages as they were: no kernel runs twice for another's sweep."""
    swept = next(k for k in KERNELS if any(isinstance(v, list) for v in sweep_of(k).values()))
    key = next(key for key, v in sweep_of(swept).items() if isinstance(v, list))
    other = next(k for k in KERNELS if key not in sweep_of(k))
    # two values of the key that the catalogue does not give
    chosen = [str(v // 2) for v in sweep_of(swept)[key][:2]]
    jube_dir = project_copy(tmp_path, kernels=[swept, other], cores=1, **{key: chosen})
    handle = run_to_end(jube_dir, "catalogue", env={"NOISEBENCH_BIN_DIR": str(bin_dir)})
    rows = result_rows(handle, "catalogue")
    assert all(r["status"] == "ok" for r in rows), rows
    mine = [r["options"] for r in rows if r["kernel"] == swept]
    assert sorted(option(args, key) for args in mine) == sorted(chosen), mine
    for args in mine:
        for other_key, value in sweep_of(swept).items():
            if other_key != key and not isinstance(value, list) and value is not None:
                assert option(args, other_key) == str(value), (other_key, args)
    theirs = [r["options"] for r in rows if r["kernel"] == other]
    assert len(set(theirs)) == len(theirs) == sweep_points(other), theirs
    assert not any(f"{OPTIONS[key]} " in f" {args}" for args in theirs), theirs


def test_the_sweep_of_a_kernel_the_catalogue_lacks_is_an_error_of_one_line():
    """include/sweep.py, which the kernel step runs: bad input (a kernel or
    key the catalogue lacks, a sweep not of KEY=VALUES) is one line that
    says what, and exit 2."""
    script = ROOT / "jube" / "include" / "sweep.py"
    catalogue = ROOT / "src" / "kernels" / "kernels.json"
    for args, said in ((["points", catalogue, "nosuch", "survey", "x86_64"],
                        f"sweep.py: {catalogue} has no kernel nosuch\n"),
                       (["points", catalogue, ANY_KERNEL, "survey", "x86_64", "nosuch=1"],
                        "sweep.py: no kernel sweeps nosuch (kernels.json, sweep_options)\n"),
                       (["points", catalogue, ANY_KERNEL, "survey", "x86_64", "seconds"],
                        "sweep.py: not KEY=VALUES in the sweep: seconds\n"),
                       (["points", catalogue], None)):
        done = subprocess.run([script, *map(str, args)], capture_output=True, text=True)
        assert done.returncode == 2 and done.stdout == "", done
        assert (done.stderr == said) if said else done.stderr.startswith("usage: sweep.py"), done


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
    working = [k for k in KERNELS if "work" in sweep_of(k)]
    assert working, "no kernel of the catalogue sweeps the work kinds"
    jube_dir = project_copy(tmp_path, kernels=working, samples=2000, site_arch="aarch64")
    env = dict(slurm_nodes, NOISEBENCH_BIN_DIR=str(bin_dir))
    handle = run_to_end(jube_dir, "catalogue", env, "slurm")
    rows = result_rows(handle, "catalogue", env)
    sweep = [2 ** i for i in range(cpus.bit_length()) if 2 ** i < cpus] + [cpus]
    arm_kinds = [k for k, info in CATALOGUE["work_kinds"].items()
                 if "aarch64" in info.get("arch", ["aarch64"])]
    assert "asm" not in arm_kinds
    assert sorted((r["kernel"], option(r["options"], "work"), int(r["cores"])) for r in rows) == \
        sorted((k, w, c) for k in working for w in arm_kinds for c in sweep), (cpus, rows)
    for r in rows:
        assert r["status"] == "ok" and int(r["job_id"]) > 0, r
    for kernel in working:
        for work in workpackage_dirs(handle, "kernel", kernel):
            meta = json.loads((work / f"{kernel}.json").read_text())
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


# short lengths for the acceptance preset, by the key it sets
SHORT = {"samples": 3000, "reps": 300, "granularity_us": 500, "seconds": 1}


def test_the_acceptance_tag_runs_every_core_at_the_catalogues_lengths(tmp_path, bin_dir):
    """-t acceptance reads the catalogue's acceptance entry (kernels.json):
    every CPU of the node, each kernel at the entry's values, the rest of
    its sweep the catalogue's (a workpackage a point). The entry is made
    short here, in a copy of the catalogue the benchmark's source_dir
    points to; nothing else of the project is changed."""
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
    for preset in catalogue["acceptance"].values():
        preset.update({key: value for key, value in SHORT.items() if key in preset})
    (alt / "src" / "kernels" / "kernels.json").write_text(json.dumps(catalogue))
    (tmp_path / "copy").mkdir()
    jube_dir = project_copy(tmp_path / "copy", source_dir=alt)
    handle = run_to_end(jube_dir, "noise", {"NOISEBENCH_BIN_DIR": str(bin_dir)}, "acceptance")
    ncpus = len(os.sched_getaffinity(0))
    for kernel in KERNELS:
        preset, sweep = catalogue["acceptance"][kernel], sweep_of(kernel)
        works = workpackage_dirs(handle, "kernel", kernel)
        assert len(works) == sweep_points(kernel, fixed=preset), (kernel, works)
        for work in works:
            meta = json.loads((work / f"{kernel}.json").read_text())
            assert meta["complete"] is True and len(meta["ranks"]) == ncpus
            # judged by the signed commitments, the preset's rules
            assert meta["requirements"]["source"].endswith(COMMITMENTS), meta["requirements"]
            line = " ".join(meta["command_line"]) + " "
            for key, value in preset.items():
                if key in sweep:
                    assert re.search(rf" {OPTIONS[key]} {value}(\.0)? ", line), (key, line)


# a kernel that records detours for as long as asked: its run ends at its
# time, not at a count of samples
TIMED = kernels_where(samples_per_rank="detours")[0]


def test_failed_and_killed_jobs_show_as_such(tmp_path, slurm, bin_dir):
    # a kernel given bad input, and one the job's time limit (1 minute) kills:
    # room for 10 million detours, as a full buffer ends a run (this VM makes
    # 10-60 thousand a second, so 3 minutes at least; a million ended one in
    # 50 s, before its time limit). Both end in error: a job that ends well
    # waits for the other at the step's shared report (see docs/jube.md)
    jube_dir = project_copy(tmp_path, kernels=[TIMED], cores=1, inject=["bogus", ""],
                            seconds=600, detours=10000000, site_timelimit=1)
    env = dict(slurm, NOISEBENCH_BIN_DIR=str(bin_dir))
    handle = run_to_end(jube_dir, "catalogue", env, "slurm", timeout=300)
    rows = {r["status"]: r for r in result_rows(handle, "catalogue", env)}
    assert set(rows) == {"failed", "killed"}, rows
    assert int(rows["failed"]["job_id"]) > 0 and rows["killed"]["job_id"] != "local"
    # nothing measured is passed off as a figure
    assert rows["failed"]["value"] == ""
    status = jube("status", handle, "-i", "last", env=env)
    assert "ERROR" in status.upper()
    # the killed kernel kept what it measured
    killed = [w for w in workpackage_dirs(handle, "kernel")
              if "killed" in (w / "job_status").read_text()]
    assert len(killed) == 1
    assert (killed[0] / f"{TIMED}.json").exists()
    assert "TIME LIMIT" in (killed[0] / "job.err").read_text()
    assert rows["killed"]["cancelled"] == "TIME LIMIT"
    assert rows["failed"]["exit_code"] == "2"
    # and the survey is not valid, for each job's own reason
    done = subprocess.run(["Rscript", str(REPORT_R), "--validate", str(handle)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    failed = next(w for w in workpackage_dirs(handle, "kernel") if w != killed[0])
    assert {f"{killed[0]}: job killed signal=TERM", f"{failed}: job failed exit=2",
            f"{killed[0] / TIMED}.json: incomplete (interrupted by SIGTERM)"} \
        <= set(done.stdout.splitlines()), done.stdout


def test_soak_streams_each_kernel_in_a_job_as_long_as_it_asks(tmp_path, slurm, bin_dir):
    # the soak's time limit comes from its length (plus 15 minutes), not the
    # site's 1 minute
    streamed = kernels_where(stream=True)
    jube_dir = project_copy(tmp_path, soak_seconds=5, soak_checkpoint_s=1, site_timelimit=1)
    env = dict(slurm, NOISEBENCH_BIN_DIR=str(bin_dir))
    # an acceptance soak: judged by the signed commitments, whose rules on
    # the headline and the tail speak of a soak's lines
    handle = run_to_end(jube_dir, "soak", env, "slurm", "acceptance", timeout=300)
    rows = result_rows(handle, "soak", env)
    assert sorted(r["kernel"] for r in rows) == sorted(streamed)
    for r in rows:
        assert r["status"] == "ok" and int(r["job_id"]) > 0, r
        assert r["time limit"] == "0-00:16:00"
        assert 5 <= float(r["seconds_min"]) < 6 and int(r["checkpoints_min"]) >= 5, r
        assert int(r["memory_bytes_max"]) > 0
        assert 0 <= float(r["system took of the worst CPU (%)"]) < 100
        assert r["requirements"] in {f"{v} by {COMMITMENTS.split('/')[-1]}"
                                     for v in ("met", "not met")}, r
    for kernel in streamed:
        (work,) = workpackage_dirs(handle, f"{kernel}_soak")
        assert "--time=0-00:16:00" in (work / "submit.job").read_text()
        meta = json.loads((work / f"{kernel}.json").read_text())
        assert meta["complete"] is True and meta["stream"]["seconds_requested"] == 5
    assert (handle / "000000" / "report" / "streams.csv").exists()
