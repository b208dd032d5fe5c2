"""Every kernel across four nodes of a real Slurm cluster (tests/slurm/cluster.sh
--nodes 4: four slurmds on this machine, each with its own host name, sharing
its CPUs round robin): each rank's files and its host in the JSON, the hosts
kept apart in the report, the node given injected noise named as the outlier
(on nbnode1 and nbnode2, which never share a CPU), and JUBE's node_count
sweep."""
import csv
import json
import os
import subprocess

import pytest
from nbtest import KERNELS, REPORT_R, quick_args
from nbtest.ground_truth import load_injections
from nbtest.jube_runs import project_copy, result_rows, run_to_end, workpackage_dirs
from nbtest.kernel_files import check_node_data, check_node_parts, check_ranks_tables, load_description
from nbtest.launch import mpi_env, once_more_after_foreign_crash
from nbtest.lines import check_ranks_line, ranks_line
from nbtest.verdicts import cannot_tell

HOSTS = {f"nbnode{i}" for i in range(1, 5)}
# the two nodes that never share a CPU (cluster.sh)
APART = ["nbnode1", "nbnode2"]
# analysis/R/outliers.R's outlier_z: a node further than this many robust
# deviations above the others is an outlier
OUTLIER_Z = 3.5



def srun(env, tmp_path, *args, nodes=sorted(HOSTS), per_node=1, timeout=300):
    """per_node ranks on each of `nodes` (more than one: dealt round robin,
    rank r on the (r mod nodes)-th, and sharing the node's CPU)."""
    n = str(len(nodes))
    spread = ["-n", str(len(nodes) * per_node)]
    if per_node > 1:
        spread += ["--overcommit", "--distribution=cyclic"]
    # --kill-on-bad-exit: a rank that dies ends the job, rather than leaving
    # the others waiting in a collective until the timeout
    cmd = ["srun", "-N", n, *spread, "-w", ",".join(nodes), "--mpi=pmix", "--kill-on-bad-exit=1",
           "--chdir", str(tmp_path), *map(str, args)]
    try:
        return once_more_after_foreign_crash(lambda: subprocess.run(
            cmd, cwd=tmp_path, capture_output=True, text=True, timeout=timeout,
            env=mpi_env(env)), tmp_path)
    except subprocess.TimeoutExpired as e:
        # bytes even with text=True: what was read before the timeout
        err = e.stderr or b""
        err = err.decode(errors="replace") if isinstance(err, bytes) else err
        pytest.fail(f"srun {' '.join(map(str, args))}: still running after {timeout} s; its "
                    f"stderr:\n{err}")


@pytest.fixture
def mpi_bin(bin_dir):
    if not (bin_dir / "psnap_mpi").exists():
        pytest.skip("built without MPI")
    return bin_dir


@pytest.mark.parametrize("kernel", KERNELS)
def test_every_kernel_writes_its_files_on_every_node(kernel, slurm_nodes, mpi_bin, tmp_path):
    done = srun(slurm_nodes, tmp_path, mpi_bin / f"{kernel}_mpi", *quick_args(kernel),
                "-o", kernel)
    assert done.returncode == 0, done.stderr
    meta = json.loads((tmp_path / f"{kernel}.json").read_text())
    assert meta["frontend"] == "mpi" and meta["complete"] is True
    assert {r["host"] for r in meta["ranks"]} == HOSTS
    assert {m["hostname"] for m in meta["machines"]} == HOSTS
    for r in meta["ranks"]:
        assert r["ticks_per_ns"] > 0 and r["samples"] > 0
        assert [f.split("_")[1] for f in r["files"]] == [str(r["rank"])] * len(r["files"])
        for f in r["files"]:
            assert (tmp_path / f).stat().st_size > 0, f
    # each node's summary line names its host
    hosts = {line.split(" host=")[1].split()[0] for line in done.stdout.splitlines()
             if " host=" in line}
    assert hosts == HOSTS


def test_the_root_takes_the_ranks_node_by_node(slurm_nodes, mpi_bin, tmp_path):
    """Two ranks on each of four nodes, dealt round robin, so that no node's
    ranks follow each other: rank 0 receives the records one node's at a
    time, and the run's figures are reductions over the ranks
    (nb_ranks_each, the kernels' reduce). Each rank is in the JSON once,
    the nodes' ranks together, each with its own host as its result line
    says; the figures of the whole run are those of the ranks' entries."""
    done = srun(slurm_nodes, tmp_path, mpi_bin / "psnap_mpi", "--no-pin", "--warmup-ms", "0",
                "-n", "200", "-o", "psnap", per_node=2)
    assert done.returncode == 0, done.stderr
    meta = json.loads((tmp_path / "psnap.json").read_text())
    ranks = meta["ranks"]
    assert sorted(r["rank"] for r in ranks) == list(range(8))
    hosts = [r["host"] for r in ranks]
    runs = [h for i, h in enumerate(hosts) if i == 0 or h != hosts[i - 1]]
    assert sorted(runs) == sorted(HOSTS) and all(hosts.count(h) == 2 for h in HOSTS), hosts
    assert [r["rank"] % 4 for r in ranks[::2]] == [r["rank"] % 4 for r in ranks[1::2]], hosts
    printed = [line for line in done.stdout.splitlines() if line.startswith("rank kernel=psnap")]
    lines = [dict(kv.split("=", 1) for kv in line.split()[1:5]) for line in printed]
    assert [(int(x["rank"]), x["host"]) for x in lines] == [(r["rank"], r["host"]) for r in ranks]
    # the ranks line is their figures reduced, the nodes' merged in order
    check_ranks_line(done.stdout, "psnap", printed)

    seconds = [r["total_time_us"] / 1e6 for r in ranks]
    summary = meta["summary"]
    assert summary["ranks"] == 8
    assert summary["mean_run_time_s"] == pytest.approx(sum(seconds) / 8, rel=1e-12)
    mean = sum(seconds) / 8
    sd = (sum((x - mean) ** 2 for x in seconds) / 7) ** 0.5
    # the sd from shifted sums of squares: exact but for rounding, which
    # the run's nominal time (200 ms) bounds
    assert summary["sd_run_time_s"] == pytest.approx(sd, rel=1e-6, abs=1e-12)
    assert summary["max_correlation"] == max(abs(r["correlation"]) for r in ranks
                                             if r["rank"] != 0)
    loss = meta["loss_histogram"]
    assert loss["participants"] == 8
    each = [r["tails"]["histogram"]["samples"] for r in ranks]
    summed = [sum(h[b] for h in each if b < len(h)) for b in range(max(map(len, each)))]
    assert loss["samples"] == summed and sum(summed) == 8 * 200


def test_each_node_describes_its_own_ranks(slurm_nodes, mpi_bin, tmp_path):
    """--node-files (the default beyond 4096 ranks): each node's first rank
    writes its node's rank entries, and PREFIX.json lists those files
    instead of holding them. Two ranks on each of four nodes, dealt round
    robin: each file holds its own host's ranks, by rank; together, every
    rank once; the root prints no line a rank, only their figures reduced
    (the ranks line); each node's data file and
    injection log hold its own ranks', each in its range; and the report reads
    them as it reads a run described in one file, and with --hosts the
    ranks of the nodes asked for only."""
    done = srun(slurm_nodes, tmp_path, mpi_bin / "fwq_mpi", "--no-pin", "--warmup-ms", "0",
                "-n", "300", "--inject", "5000:20", "--node-files", "-o", "fwq", per_node=2)
    assert done.returncode == 0, done.stderr
    meta = json.loads((tmp_path / "fwq.json").read_text())
    assert "ranks" not in meta and meta["ranks_in_run"] == 8
    assert meta["node_files"] == [f"fwq_node{k}.json" for k in range(4)]
    for k, (name, machine) in enumerate(zip(meta["node_files"], meta["machines"])):
        node = json.loads((tmp_path / name).read_text())
        assert node["node"] == k and node["host"] == machine["hostname"]
        numbers = [r["rank"] for r in node["ranks"]]
        assert {r["host"] for r in node["ranks"]} == {node["host"]}
        assert numbers == sorted(numbers) and len(numbers) == 2, numbers
        assert numbers[0] % 4 == numbers[1] % 4, numbers
    # each node's ranks as a table beside them, written by its first rank
    check_ranks_tables(tmp_path / "fwq.json")
    ranks = load_description(tmp_path / "fwq.json")["ranks"]
    assert sorted(r["rank"] for r in ranks) == list(range(8))
    # the data files are the nodes' too, each written by its own ranks
    by_file = check_node_data(tmp_path, ranks, "fwq")
    assert {name: [rank for rank, _, _ in parts] for name, parts in by_file.items()} == \
        {f"fwq_node{k}_times.dat": [k, k + 4] for k in range(4)}
    # and so are the injection logs
    by_file = check_node_parts(tmp_path, ranks, "fwq",
                               lambda r: (r["injections_file"], r["injections_file_range"]))
    assert {name: [rank for rank, _, _ in parts] for name, parts in by_file.items()} == \
        {f"fwq_node{k}_injections.dat": [k, k + 4] for k in range(4)}
    for r in ranks:
        assert len(load_injections(tmp_path, r)["due"]) == r["injections_logged"], r["rank"]
    assert not list(tmp_path.glob("fwq_[0-9]*_*"))
    # no line a rank: what travelled to the root is each node's reduction of
    # its ranks' figures, merged into the ranks line
    assert "rank kernel=fwq" not in done.stdout
    got = ranks_line(done.stdout, "fwq")
    assert int(got["ranks"]) == 8
    assert int(got["min_ticks_min"]) == min(r["stats"]["min"] for r in ranks)
    assert int(got["max_ticks_max"]) == max(r["stats"]["max"] for r in ranks)
    assert int(got["injections_min"]) == min(r["injections"] for r in ranks)
    assert int(got["injections_max"]) == max(r["injections"] for r in ranks) > 0

    report = subprocess.run(["Rscript", REPORT_R, tmp_path, "--no-pdf"],
                            capture_output=True, text=True, timeout=300)
    assert report.returncode == 0, report.stderr
    summary = read_csv(tmp_path / "report" / "summary.csv")
    assert sorted((int(r["thread"]), r["host"]) for r in summary) == \
        sorted((r["rank"], r["host"]) for r in ranks)
    assert {r["host"] for r in read_csv(tmp_path / "report" / "nodes.csv")} == HOSTS
    # a report of two of the nodes: their ranks only, beside the whole one
    group = subprocess.run(["Rscript", REPORT_R, tmp_path, "--hosts",
                            "^nbnode[12]$", "--out", tmp_path / "group", "--no-pdf"],
                           capture_output=True, text=True, timeout=300)
    assert group.returncode == 0, group.stderr
    assert sorted((int(r["thread"]), r["host"]) for r in read_csv(tmp_path / "group" /
                                                                   "summary.csv")) == \
        sorted((r["rank"], r["host"]) for r in ranks if r["host"] in APART)


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


@pytest.mark.timing
def test_report_names_the_node_given_injected_noise(slurm_nodes, mpi_bin, tmp_path):
    # one MPI job, two programs: the rank on nbnode2 busy-waits 800 us of
    # every 1 ms; the loop keeps 200 us a ms there, so its iterations take
    # about 5 times as long (+400%), beyond what a quiet node's slowest
    # stretches show even running at 60% speed (+67%)
    psnap = mpi_bin / "psnap_mpi"
    (tmp_path / "mpmd.conf").write_text(f"0 {psnap} -n 300 -o psnap\n"
                                        f"1 {psnap} -n 300 --inject 1000:800 -o psnap\n")
    done = srun(slurm_nodes, tmp_path, "--multi-prog", tmp_path / "mpmd.conf", nodes=APART)
    assert done.returncode == 0, done.stderr
    meta = json.loads((tmp_path / "psnap.json").read_text())
    by_host = {r["host"]: r for r in meta["ranks"]}
    assert sorted(by_host) == APART
    assert "inject" not in by_host["nbnode1"] and by_host["nbnode2"]["injections"] > 0

    report = subprocess.run(["Rscript", REPORT_R, tmp_path, "--no-pdf"],
                            capture_output=True, text=True, timeout=300)
    assert report.returncode == 0, report.stderr
    nodes = {r["host"]: r for r in read_csv(tmp_path / "report" / "nodes.csv")}
    assert sorted(nodes) == APART
    assert nodes["nbnode2"]["inject"] == "1000:800" and nodes["nbnode1"]["inject"] == "none"
    summary = read_csv(tmp_path / "report" / "summary.csv")
    assert sorted({r["host"] for r in summary}) == APART
    assert (tmp_path / "report" / "psnap-psnap-nodes.png").exists()
    machines = read_csv(tmp_path / "report" / "machines.csv")
    assert sorted(m["host"] for m in machines) == APART
    # The injection took 800 us of each ms of nbnode2's stretches, give or
    # take one injection a stretch; the report can flag that only beyond
    # OUTLIER_Z robust deviations of nbnode1's stretches, which other work
    # on its CPU may spread that far.
    mine = by_host["nbnode2"]
    seconds = (mine["end_tick"] - mine["start_tick"]) / mine["ticks_per_ns"] / 1e9
    width = mine["stretches"]["width_s"]
    injected = 100 * mine["injections"] * 800e-6 / seconds * (1 - 1e-3 / width)
    reach = (float(nodes["nbnode2"]["others_median_percent"])
             + OUTLIER_Z * float(nodes["nbnode2"]["others_mad_percent"]))
    if injected <= reach:
        cannot_tell(f"nbnode1's stretches spread so that only {reach:.0f}% would stand out, "
                    f"the injection took {injected:.0f}% of nbnode2's")
    assert nodes["nbnode2"]["outlier"] == "TRUE", nodes
    assert nodes["nbnode1"]["outlier"] == "FALSE", nodes


@pytest.mark.harness
@pytest.mark.skipif(bool(os.environ.get("NB_SANITIZE")), reason="JUBE drives the release build")
def test_jube_sweeps_one_two_and_four_nodes(slurm_nodes, mpi_bin, tmp_path):
    jube_dir = project_copy(tmp_path, cores=1, node_count=[1, 2, 4], psnap_reps=200)
    env = dict(slurm_nodes, NOISEBENCH_BIN_DIR=str(mpi_bin))
    handle = run_to_end(jube_dir, "psnap", env, "slurm")
    rows = result_rows(handle, "psnap", env)
    assert sorted((int(r["nodes"]), int(r["tasks"])) for r in rows) == [(1, 1), (2, 2), (4, 4)], \
        rows
    hosts = []
    for work in workpackage_dirs(handle, "psnap"):
        meta = json.loads((work / "psnap.json").read_text())
        hosts.append(sorted(r["host"] for r in meta["ranks"]))
    hosts.sort(key=len)
    assert [len(set(h)) for h in hosts] == [1, 2, 4] and hosts[2] == sorted(HOSTS), hosts
    nodes = read_csv(handle / "000000" / "report" / "nodes.csv")
    assert {r["host"] for r in nodes} == HOSTS
