"""Every kernel across four nodes of a real Slurm cluster (tests/slurm/cluster.sh
--nodes 4: four slurmds on this machine, each with its own host name, sharing
its CPUs round robin): each rank's files and its host in the JSON, each
node's own description (--node-files), and JUBE's node_count sweep. The
kernels come from the catalogue; test_psnap_nodes.py has P-SNAP's figures
over nodes and the noisy node named."""
import json
import os
import subprocess

import pytest
from nbtest import ANY_KERNEL, KERNELS, REPORT_R, ROOT, SAMPLING, quick_args, shape_args
from nbtest.ground_truth import load_injections
from nbtest.jube_runs import project_copy, result_rows, run_to_end, workpackage_dirs
from nbtest.kernel_files import check_node_data, check_node_parts, check_ranks_tables, load_description
from nbtest.rank_lines import ranks_line
from nbtest.nodes import APART, HOSTS, read_csv, srun

# a kernel that times samples: --inject and its log are its
NODE_FILES_KERNEL = SAMPLING[0]


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
    kernel = NODE_FILES_KERNEL
    done = srun(slurm_nodes, tmp_path, mpi_bin / f"{kernel}_mpi", "--no-pin", "--warmup-ms", "0",
                # 50 ms: ten periods of the injection, however fast the
                # build's loop (the quick 500 samples can end within one)
                *shape_args(kernel), "--seconds", "0.05", "--inject", "5000:20",
                "--node-files", "-o", kernel,
                per_node=2)
    assert done.returncode == 0, done.stderr
    meta = json.loads((tmp_path / f"{kernel}.json").read_text())
    assert "ranks" not in meta and meta["ranks_in_run"] == 8
    assert meta["node_files"] == [f"{kernel}_node{k}.json" for k in range(4)]
    for k, (name, machine) in enumerate(zip(meta["node_files"], meta["machines"])):
        node = json.loads((tmp_path / name).read_text())
        assert node["node"] == k and node["host"] == machine["hostname"]
        numbers = [r["rank"] for r in node["ranks"]]
        assert {r["host"] for r in node["ranks"]} == {node["host"]}
        assert numbers == sorted(numbers) and len(numbers) == 2, numbers
        assert numbers[0] % 4 == numbers[1] % 4, numbers
    # each node's ranks as a table beside them, written by its first rank
    check_ranks_tables(tmp_path / f"{kernel}.json")
    ranks = load_description(tmp_path / f"{kernel}.json")["ranks"]
    assert sorted(r["rank"] for r in ranks) == list(range(8))
    # the data files are the nodes' too, each written by its own ranks
    by_file = check_node_data(tmp_path, ranks, kernel)
    assert {name: [rank for rank, _, _ in parts] for name, parts in by_file.items()} == \
        {f"{kernel}_node{k}_{f['suffix']}": [k, k + 4] for k in range(4)
         for f in KERNELS[kernel]["files"]}
    # and so are the injection logs
    by_file = check_node_parts(tmp_path, ranks, kernel,
                               lambda r: (r["injections_file"], r["injections_file_range"]))
    assert {name: [rank for rank, _, _ in parts] for name, parts in by_file.items()} == \
        {f"{kernel}_node{k}_injections.dat": [k, k + 4] for k in range(4)}
    for r in ranks:
        assert len(load_injections(tmp_path, r)["due"]) == r["injections_logged"], r["rank"]
    assert not list(tmp_path.glob(f"{kernel}_[0-9]*_*"))
    # no line a rank: what travelled to the root is each node's reduction of
    # its ranks' figures, merged into the ranks line
    assert f"rank kernel={kernel}" not in done.stdout
    got = ranks_line(done.stdout, kernel)
    assert int(got["ranks"]) == 8
    # the value's extremes (min_ticks_min for FWQ), the ranks' own
    unit = KERNELS[kernel]["value_unit"]
    assert float(got[f"min_{unit}_min"]) == min(r["stats"]["min"] for r in ranks)
    assert float(got[f"max_{unit}_max"]) == max(r["stats"]["max"] for r in ranks)
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



@pytest.mark.harness
@pytest.mark.skipif(bool(os.environ.get("NB_SANITIZE")), reason="JUBE drives the release build")
def test_jube_sweeps_one_two_and_four_nodes(slurm_nodes, mpi_bin, tmp_path):
    kernel = ANY_KERNEL
    jube_dir = project_copy(tmp_path, kernels=[kernel], cores=1, node_count=[1, 2, 4],
                            preset="quick")
    env = dict(slurm_nodes, NOISEBENCH_BIN_DIR=str(mpi_bin))
    handle = run_to_end(jube_dir, "catalogue", env, "slurm")
    rows = result_rows(handle, "catalogue", env)
    assert sorted(int(r["nodes"]) for r in rows) == [1, 2, 4], rows
    assert all(r["status"] == "ok" for r in rows), rows
    hosts = []
    for work in workpackage_dirs(handle, "kernel"):
        meta = json.loads((work / f"{kernel}.json").read_text())
        hosts.append(sorted(r["host"] for r in meta["ranks"]))
    hosts.sort(key=len)
    assert [len(set(h)) for h in hosts] == [1, 2, 4] and hosts[2] == sorted(HOSTS), hosts
    nodes = read_csv(handle / "000000" / "report" / "nodes.csv")
    assert {r["host"] for r in nodes} == HOSTS


def test_jube_surveys_the_nodes_named_and_no_other(slurm_nodes, mpi_bin, tmp_path):
    """The guide's survey of bad nodes again: node_list (Slurm's notation)
    sends the job to those nodes, and node_shape.sh counts and sizes them
    only (the acceptance tag's every node). A node the partition lacks is
    one line and exit 2."""
    kernel = ANY_KERNEL
    shape = ROOT / "jube" / "include" / "node_shape.sh"
    env = dict(os.environ, **slurm_nodes)
    counted = subprocess.run([shape, "nodes", "slurm", "debug", "", "", "", "nbnode[2-3]"],
                             capture_output=True, text=True, env=env, timeout=60)
    assert (counted.returncode, counted.stdout) == (0, "2"), counted.stderr
    wrong = subprocess.run([shape, "nodes", "slurm", "debug", "", "", "", "nbnode[4-5]"],
                           capture_output=True, text=True, env=env, timeout=60)
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1, wrong.stderr
    assert "nbnode5" in wrong.stderr, wrong.stderr
    jube_dir = project_copy(tmp_path, kernels=[kernel], cores=1, node_count=2,
                            node_list="nbnode[2-3]", preset="quick")
    handle = run_to_end(jube_dir, "catalogue", dict(slurm_nodes, NOISEBENCH_BIN_DIR=str(mpi_bin)),
                        "slurm")
    (work,) = workpackage_dirs(handle, "kernel")
    assert "#SBATCH --nodelist=nbnode[2-3]" in (work / "submit.job").read_text()
    meta = json.loads((work / f"{kernel}.json").read_text())
    assert sorted(r["host"] for r in meta["ranks"]) == ["nbnode2", "nbnode3"]
