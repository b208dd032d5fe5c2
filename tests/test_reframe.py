"""The ReFrame checks, run by the real ReFrame with reframe/config/generic.py:
with injected noise, when every check must fail the generic requirements;
then, with requirements taken from that run (NOISEBENCH_REQUIREMENTS), without injection on
the local partition and on the localhost Slurm cluster, when every check must
pass whatever this machine's own noise: ReFrame's logic is tested, not the
machine. ReFrame builds the release kernels itself in the first session; the
others take the release build's (NOISEBENCH_BIN_DIR, as on a Spack
install). The sanitizer suite checks the kernels."""
import json
import math
import os
import re
import subprocess
from pathlib import Path

import pytest
from nbtest import (ACCEPTANCE_R, ANY_KERNEL, CATALOGUE, KERNELS, REPORT_R, ROOT, kernels_where,
                    sweep_points)

pytestmark = [pytest.mark.harness,
              pytest.mark.skipif(bool(os.environ.get("NB_SANITIZE")),
                                 reason="ReFrame builds the release kernels")]
NCPUS = len(os.sched_getaffinity(0))


def core_counts(n):
    """1, 2, 4, ... and n: the core counts every check runs on."""
    counts, c = [], 1
    while c < n:
        counts.append(c)
        c *= 2
    return counts + [n]


# every kernel's checks on every core count: the work kinds that build here
CHECKS = sum(map(sweep_points, KERNELS)) * len(core_counts(NCPUS))
# the checks' measurements a second or so each, not their default 2-3 s: a
# noise of 70% needs no more to be seen
SHORT = ["-S", "samples=5000", "-S", "seconds=1", "-S", "reps=500"]
# the figures that say how much of a core was taken (each kernel's headline);
# a noise injected on purpose can only add to them
LEVELS = {kernel: info["headline"]["name"] for kernel, info in KERNELS.items()}
# the rank line's figure a rule bounds for each headline (the catalogue's
# rank_key): the ranks line's KEY_max is KEY's worst rank, a summary's
# figure is its ranks' over the run
RANK_KEYS = {kernel: info["headline"]["rank_key"] for kernel, info in KERNELS.items()}
# what every check logs of the system's share and the work's slowdown
# (noise_check.py)
SPEED = {"max_stolen_percent", "max_slowdown_percent"}
# the checks' own figures, whatever the kernel
EVERY = {"max_p99_9_loss_us", "rules_unmet"}


def kernel_of(tc):
    return tc["display_name"].split("_noise_check")[0]


def logged(kernel, cores):
    """The performance variables a kernel's check logs (its catalogue
    entry's headline and logged figures)."""
    info = KERNELS[kernel]
    return {info["headline"]["name"], *EVERY, *SPEED,
            *(f["name"] for f in info.get("logged", []) if cores >= f.get("ranks_min", 1))}


def reframe(tmp_path, system, *options, env=None, checks=ROOT / "reframe" / "checks"):
    """reframe on the checks, in tmp_path; its result and its test cases."""
    report = tmp_path / "report.json"
    cmd = [ROOT / ".venv" / "bin" / "reframe", "-C", ROOT / "reframe" / "config" / "generic.py",
           "-c", checks, "--system", system, "--report-file", report, *options, "-r"]
    # the sessions go into a results database of the test's own
    env = {"RFM_SQLITE_DB_FILE": str(tmp_path / "results.db"), **(env or {})}
    result = subprocess.run([str(c) for c in cmd], cwd=tmp_path, capture_output=True, text=True,
                            timeout=900, env=dict(os.environ, **env))
    cases = [tc for tc in json.loads(report.read_text())["runs"][-1]["testcases"]
             if not tc["fixture"]]
    return result, cases


def session(result):
    """The session's UUID in ReFrame's results database."""
    return re.search(r"Current session stored with UUID: (\S+)", result.stdout)[1]


@pytest.fixture(scope="module")
def results_db(tmp_path_factory):
    """The results database the module's sessions on the local partition share."""
    return {"RFM_SQLITE_DB_FILE": str(tmp_path_factory.mktemp("results") / "results.db")}


@pytest.fixture(scope="module")
def injected(tmp_path_factory, results_db):
    """The checks with 70% of every millisecond taken on each core, against
    the generic requirements, ReFrame building the kernels; and requirements
    a run of this machine without injection meets whatever its own noise,
    short of 70%: each kernel's level figure, on every rank, no higher than
    the injected run's lowest."""
    tmp_path = tmp_path_factory.mktemp("injected")
    result, cases = reframe(tmp_path, "anynode:local", "-S", "inject=1000:700", *SHORT,
                            env=results_db)
    bounds = {}
    for tc in cases:
        kernel = kernel_of(tc)
        for name, v in tc["perfvalues"].items():
            if name.split(":")[-1] == LEVELS[kernel]:
                bounds[kernel] = min(v[0], bounds.get(kernel, v[0]))
    path = tmp_path / "injected.requirements"
    path.write_text("".join(f"{RANK_KEYS[k]} <= {b!r} kernel={k}\n" for k, b in bounds.items()))
    return result, cases, {"NOISEBENCH_REQUIREMENTS": str(path)}


@pytest.fixture(scope="module")
def built(bin_dir):
    """The release build's kernels, for the sessions after the first."""
    return {"NOISEBENCH_BIN_DIR": str(bin_dir)}


@pytest.fixture(scope="module")
def quiet(tmp_path_factory, injected, built, results_db):
    """The checks without injection on the local partition, against the
    bounds the injected run gave."""
    tmp_path = tmp_path_factory.mktemp("quiet")
    result, cases = reframe(tmp_path, "anynode:local", *SHORT,
                            env={**injected[2], **built, **results_db})
    return result, cases, tmp_path


def test_checks_fail_with_injected_noise(injected):
    # an acceptance check that passes 70% taken is no check
    result, cases, _ = injected
    assert result.returncode != 0
    assert len(cases) == CHECKS
    for tc in cases:
        assert tc["result"] == "fail" and tc["fail_phase"] == "performance", tc["display_name"]
        # the kernel's verdict by the generic requirements, the one reference
        failed = [k.split(":")[-1] for k, v in tc["perfvalues"].items() if v[5] == "fail"]
        assert failed == ["rules_unmet"], tc["display_name"]
        # every figure a number: the acceptance summary reads them as JSON
        assert all(math.isfinite(v[0]) for v in tc["perfvalues"].values()), tc["perfvalues"]
        # a spectrum's strongest line, as the R analysis finds it: the
        # injection's 1 kHz, to the resolution (fs / n: 1 Hz in a 1 s run)
        line = [v[0] for k, v in tc["perfvalues"].items() if k.endswith(":largest_peak_hz")]
        assert not line or abs(line[0] - 1000) <= 1.0, (tc["display_name"], line)


def test_checks_pass_on_the_local_partition(quiet):
    result, cases, tmp_path = quiet
    assert result.returncode == 0, result.stdout[-3000:]
    assert len(cases) == CHECKS and all(tc["result"] == "pass" for tc in cases)
    # each kernel's figures (FWQ: Sequoia's three) and every kernel's
    # headline and the work's slowdown, each reported (only the level is
    # bounded here)
    for tc in cases:
        assert {k.split(":")[-1] for k in tc["perfvalues"]} == \
            logged(kernel_of(tc), tc["num_cpus_per_task"]), tc["display_name"]
    # the acceptance summary reads the same report
    summary = subprocess.run(["Rscript", ACCEPTANCE_R,
                              tmp_path / "report.json", tmp_path / "acceptance"],
                             capture_output=True, text=True, timeout=120)
    assert summary.returncode == 0, summary.stderr
    assert summary.stdout.strip().endswith(f"anynode:local: {CHECKS} of {CHECKS} checks met "
                                           "every bound")
    assert (tmp_path / "acceptance" / "acceptance.csv").exists()


def test_a_run_no_rule_judged_is_not_judged_and_fails_where_a_verdict_is_required(tmp_path,
                                                                                  built):
    """Requirements that speak of another kernel only: the detour recorder's
    check logs rules_judged 0 in place of a verdict (the acceptance summary
    says "not judged", not met). With require_verdict, which the acceptance
    preset sets, the check fails: an acceptance check must be judged."""
    kernel = kernels_where(samples_per_rank="detours")[0]
    other = next(k for k in KERNELS if k != kernel)
    rules = tmp_path / "other.requirements"
    rules.write_text(f"{RANK_KEYS[other]} <= 1e9 kernel={other}\n")
    env = {**built, "NOISEBENCH_REQUIREMENTS": str(rules)}
    for required in (False, True):
        where = tmp_path / ("required" if required else "survey")
        where.mkdir()
        asked = ["-S", "require_verdict=true"] if required else []
        result, cases = reframe(where, "anynode:local", "-n", f"^{kernel}_noise_check",
                                "-S", "seconds=1", *asked, env=env)
        ran = [tc for tc in cases if tc["result"] != "skip"]
        assert ran, result.stdout[-3000:]
        for tc in ran:
            values = {k.split(":")[-1]: v[0] for k, v in tc["perfvalues"].items()}
            if required:
                assert tc["result"] == "fail" and tc["fail_phase"] == "performance", tc
                assert math.isnan(values["rules_unmet"]), values
            else:
                assert tc["result"] == "pass", tc.get("fail_reason")
                assert values["rules_judged"] == 0 and "rules_unmet" not in values, values
        summary = subprocess.run(["Rscript", ACCEPTANCE_R, where / "report.json"],
                                 capture_output=True, text=True, timeout=120)
        assert summary.returncode == 0, summary.stderr
        assert "not judged" in summary.stdout and f": 0 of {len(ran)} checks met" in \
            summary.stdout, summary.stdout


def test_checks_pass_as_slurm_jobs(tmp_path, slurm, injected, built):
    result, cases = reframe(tmp_path, "anynode:slurm", *SHORT,
                            env={**slurm, **injected[2], **built})
    assert result.returncode == 0, result.stdout[-3000:]
    assert len(cases) == CHECKS and all(tc["result"] == "pass" for tc in cases)
    # each check was a Slurm job: its id in the perflog, and sacct knows it
    logged = set()
    for log in (tmp_path / "perflogs" / "anynode" / "slurm").glob("*_noise_check.log"):
        logged |= set(re.findall(r"\|jobid=(\d+)\|", log.read_text()))
    assert logged == {tc["jobid"] for tc in cases}
    sacct = subprocess.run(["sacct", "-n", "-X", "-o", "JobID,State", "-j", ",".join(logged)],
                           capture_output=True, text=True, env=dict(os.environ, **slurm))
    assert sacct.stdout.count("COMPLETED") == CHECKS, sacct.stdout
    # the MPI kernels ran as ranks under srun
    for kernel in KERNELS:
        mine = [tc for tc in cases if kernel_of(tc) == kernel]
        assert {tc["num_tasks"] for tc in mine} == set(core_counts(NCPUS)), kernel
        assert all(tc["executable"].endswith(f"{kernel}_mpi") for tc in mine), kernel


@pytest.mark.skipif(os.geteuid() != 0, reason="--trace needs root (tracefs)")
def test_trace_gives_each_cause_class_a_figure(tmp_path, built):
    """-S trace=true: every class of cause is a performance variable, a share
    of the losses' time; with 70% of every millisecond injected, the run's
    own injections have a share (how large depends on what else the machine
    lost: a vCPU running slow adds to "hardware")."""
    # one kernel's checks, of the first work kind where it sweeps them
    # (-n's "%" is ReFrame's parameter syntax, so the others are excluded)
    others = list(CATALOGUE["work_kinds"])[1:] if "work" in KERNELS[ANY_KERNEL]["sweep"] else []
    result, cases = reframe(tmp_path, "anynode:local", "-n", f"^{ANY_KERNEL}_noise_check",
                            *(["-x", "|".join(others)] if others else []), "-S", "trace=true",
                            "-S", "inject=1000:700", *SHORT, env=built)
    assert cases, result.stdout[-3000:]
    classes = CATALOGUE["cause_classes"]
    for tc in cases:
        figures = {k.split(":")[-1]: v[0] for k, v in tc["perfvalues"].items()}
        assert {f"max_{c}_percent" for c in classes} <= set(figures), tc["display_name"]
        assert all(0 <= figures[f"max_{c}_percent"] <= 100 for c in classes), figures
        assert figures["max_injection_percent"] > 0, (tc["display_name"], figures)


def test_the_example_system_file_runs_the_checks(tmp_path):
    """reframe/config/systems/example_cluster.py, a site's template, offers
    an environment the checks accept: listed on its partitions, every check
    is there (its modules and its login host's name are the site's: here
    they are left out, nothing else is changed)."""
    text = (ROOT / "reframe" / "config" / "systems" / "example_cluster.py").read_text()
    text = text.replace("'modules_system': 'lmod'", "'modules_system': 'nomod'")
    text = text.replace("'modules': ['GCC', 'OpenMPI'], ", "")
    config = tmp_path / "example.py"
    config.write_text(text)
    listed = subprocess.run([str(ROOT / ".venv" / "bin" / "reframe"), "-C", str(config),
                             "-c", str(ROOT / "reframe" / "checks"), "--system", "example:login",
                             "-l"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert listed.returncode == 0, listed.stdout[-2000:] + listed.stderr[-2000:]
    found = re.search(r"Found (\d+) check\(s\)", listed.stdout)
    # each check on 1, 2, 4, ... and every core of the login partition (its
    # processor is not configured: this host's)
    counts = core_counts(os.cpu_count())
    # every work kind of the catalogue is listed (those that do not build
    # here are skipped once set up)
    listed_checks = sum(sweep_points(k, CATALOGUE["work_kinds"]) for k in KERNELS) * len(counts)
    assert found and int(found.group(1)) == listed_checks, \
        listed.stdout[-2000:]


def test_soak_checks_stream_as_slurm_jobs_as_long_as_asked(tmp_path, slurm, built):
    """The soak variant: every kernel with a stream mode streamed on every
    core, the job's time limit from the soak's length (plus 15 minutes)."""
    result, cases = reframe(tmp_path, "anynode:slurm", "-S", "soak_seconds=5", "-S",
                            "checkpoint_s=1", env={**slurm, **built},
                            checks=ROOT / "reframe" / "checks" / "soak")
    assert result.returncode == 0, result.stdout[-3000:]
    assert sorted(tc["display_name"].split()[0] for tc in cases) == sorted(
        f"{k}_soak_check" for k in kernels_where(stream=True))
    for tc in cases:
        assert tc["result"] == "pass"
        values = {k.split(":")[-1]: v[0] for k, v in tc["perfvalues"].items()}
        assert values["lost_samples"] == 0 and values["max_memory_mib"] > 0
        assert 0 <= values["max_stolen_percent"] < 100 and 0 <= values["max_lost_percent"] < 100
        assert 0 < values["max_p99_9_loss_us"] <= values["max_loss_us"]
        (script,) = (tmp_path / "output" / "anynode" / "slurm" / "builtin").glob(
            f"{tc['display_name'].split()[0]}_*/rfm_job.sh")
        assert "#SBATCH --time=0:15:5" in script.read_text(), script.read_text()


# a kernel with one check a core count
SINGLE = next(k for k in KERNELS if sweep_points(k) == 1)


def test_distribute_runs_one_check_per_node(tmp_path, slurm_nodes, built):
    """ReFrame's per-node convention on the four-node cluster (no accounting:
    the generic config polls with squeue): --distribute makes one check per
    node (of a kernel with one check a core count), each a job on its node;
    the report reads them together. Only the functions are checked: nodes
    sharing a CPU are no noise figure."""
    result, cases = reframe(tmp_path, "anynode:slurm", "-n", f"^{SINGLE}_noise_check",
                            "--distribute=idle", "--skip-performance-check",
                            "--keep-stage-files", env={**slurm_nodes, **built})
    assert result.returncode == 0, result.stdout[-3000:]
    checks = [tc for tc in cases if kernel_of(tc) == SINGLE]
    # the generic config sized the checks by the nodes' CPUs (Slurm's), not this host's
    nodes = {f"nbnode{i}" for i in range(1, 5)}
    assert sorted(re.search(r"%\.nid=(\S+)", tc["display_name"])[1] for tc in checks) == \
        sorted(nodes)
    for tc in checks:
        meta = json.loads((Path(tc["stagedir"]) / f"{SINGLE}.json").read_text())
        nid = re.search(r"%\.nid=(\S+)", tc["display_name"])[1]
        assert [r["host"] for r in meta["ranks"]] == [nid] * tc["num_tasks"]
    report = subprocess.run(["Rscript", REPORT_R, tmp_path / "stage",
                             "--no-pdf"],
                            capture_output=True, text=True, timeout=300)
    assert report.returncode == 0, report.stderr
    summary = (tmp_path / "stage" / "report" / "summary.csv").read_text()
    assert {h for h in nodes if h in summary} == nodes


def test_a_node_list_surveys_those_nodes_only(tmp_path, slurm_nodes, built):
    """The guide's survey of bad nodes again: -J nodelist=LIST (Slurm's
    notation) restricts ReFrame's node-sized checks (--distribute, and the
    acceptance preset's flexible allocation) to those nodes."""
    result, cases = reframe(tmp_path, "anynode:slurm", "-n", f"^{SINGLE}_noise_check",
                            "--distribute=idle", "-J", "nodelist=nbnode[2-3]",
                            "--skip-performance-check", "--keep-stage-files",
                            env={**slurm_nodes, **built})
    assert result.returncode == 0, result.stdout[-3000:]
    checks = [tc for tc in cases if kernel_of(tc) == SINGLE]
    assert sorted(re.search(r"%\.nid=(\S+)", tc["display_name"])[1] for tc in checks) == \
        ["nbnode2", "nbnode3"]
    for tc in checks:
        meta = json.loads((Path(tc["stagedir"]) / f"{SINGLE}.json").read_text())
        assert {r["host"] for r in meta["ranks"]} <= {"nbnode2", "nbnode3"}


def test_the_results_database_shows_what_added_noise_changed(tmp_path, injected, quiet,
                                                            results_db):
    """The history that catches a regression: generic.py stores every
    session in ReFrame's results database; `reframe --performance-compare`
    of the session with 70% of every millisecond taken on each core
    (--inject, logged by the kernel) and the one without shows the level of
    a kernel that records detours (its share of the time in them) on every
    core count at least the 70% added (less 5 points for the injector's
    latency), above the quiet run's, whatever the day's own noise short of
    65%."""
    noisy, calm = session(injected[0]), session(quiet[0])
    compared = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "reframe"), "-C",
         str(ROOT / "reframe" / "config" / "generic.py"),
         f"--performance-compare={noisy}/{calm}/mean:/", "--table-format=csv"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env=dict(os.environ, **results_db))
    assert compared.returncode == 0, compared.stdout[-3000:] + compared.stderr[-3000:]
    rows = [dict(zip(["name", "sysenv", "pvar", "punit", "noisy", "quiet", "pdiff"],
                     line.split(","))) for line in compared.stdout.strip().splitlines()[1:]]
    detours = kernels_where(samples_per_rank="detours")[0]
    levels = [r for r in rows if r["pvar"] == LEVELS[detours]]
    assert len(levels) == len(core_counts(NCPUS)), compared.stdout
    for r in levels:
        assert float(r["noisy"]) >= 65, r
        assert float(r["pdiff"]) > 0 or float(r["quiet"]) >= 65, r


def test_the_acceptance_preset_runs_every_core_at_the_catalogues_lengths(tmp_path, built):
    """-S acceptance=true (a dry run: the jobs are written, not run): one
    check a kernel and point of its sweep the preset leaves (FTQ's two
    frequencies), on every core only, the preset's work kind only, each
    with the catalogue's lengths, judged by the commitments."""
    cmd = [ROOT / ".venv" / "bin" / "reframe", "-C", ROOT / "reframe" / "config" / "generic.py",
           "-c", ROOT / "reframe" / "checks", "--system", "anynode:local",
           "-S", "acceptance=true", "--dry-run"]
    result = subprocess.run([str(c) for c in cmd], cwd=tmp_path, capture_output=True, text=True,
                            timeout=300, env=dict(os.environ, RFM_SQLITE_DB_FILE=str(
                                tmp_path / "results.db"), **built))
    assert result.returncode == 0, result.stdout[-3000:]
    scripts = {p.parent.name: p.read_text() for p in tmp_path.glob("stage/**/rfm_job.sh")
               if "noisebench_build" not in str(p)}
    ncpus = os.cpu_count()
    preset = CATALOGUE["acceptance"]
    commands = {}
    for name, text in scripts.items():
        (command,) = [line for line in text.splitlines()
                      if "/bin/" in line and not line.startswith("#")]
        commands.setdefault(name.split("_noise_check")[0], []).append(command)
    assert sorted(commands) == sorted(KERNELS), commands
    for kernel, lines in commands.items():
        assert len(lines) == sweep_points(kernel, fixed=preset[kernel]), (kernel, lines)
        for line in lines:
            assert f" -t {ncpus} " in line, line
            # judged by the signed commitments unless the site names a file
            assert f" --requirements {ROOT / 'site/acceptance/commitments.requirements'} " \
                in line, line
            for key, value in preset[kernel].items():
                if key in KERNELS[kernel]["sweep"]:
                    flag = CATALOGUE["sweep_options"][key]
                    assert re.search(rf" {flag} {value}(\.0)? ", line), (key, line)
