"""P-SNAP across four nodes of a real Slurm cluster (tests/slurm/cluster.sh
--nodes 4): its run's figures reduced node by node, and the report naming
the node given injected noise (on nbnode1 and nbnode2, which never share a
CPU). test_nodes.py has what every kernel does across nodes."""
import json
import subprocess

import pytest
from nbtest import REPORT_R
from nbtest.rank_lines import check_ranks_line
from nbtest.nodes import APART, HOSTS, read_csv, srun
from nbtest.verdicts import cannot_tell

# analysis/R/outliers.R's outlier_z: a node further than this many robust
# deviations above the others is an outlier
OUTLIER_Z = 3.5


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

