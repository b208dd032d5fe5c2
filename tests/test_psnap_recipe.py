"""P-SNAP's PRACE workflow at any size: the notes' grep/awk recipe, as
docs/psnap-selfish.md prints it, run on the files a run writes (each
node's histograms file), gives each node's slowdown as the report's
psnap_nodes.csv does. The ranks share this machine's CPUs, so the figures
are mostly time sharing: what is checked is that every rank's '#' line is
there once and that the two sums agree."""
import csv
import json
import os
import re
import subprocess

import pytest
from nbtest import REPORT_R, ROOT
from nbtest.launch import mpi_env

pytestmark = pytest.mark.scale

REPS, GRANULARITY_US = 20, 100


def recipe():
    """The docs' recipe: its grep and awk lines, without the run before them,
    the constant (2 ranks x 10000 reps x 1000 us) still to be replaced by
    the run's."""
    text = (ROOT / "docs" / "psnap-selfish.md").read_text()
    block = re.search(r"```sh\n([^`]*?# per node:.*?)```", text, re.S)[1]
    lines = block.splitlines()
    lines = lines[next(i for i, line in enumerate(lines) if line.startswith("grep")):]
    assert "20000000" in " ".join(lines), lines
    return "\n".join(lines)


def spin_count(bin_dir, tmp_path):
    """The count one calibration gives for the granularity, so that the
    oversubscribed run need not calibrate each rank."""
    done = subprocess.run([bin_dir / "psnap", "-t", "1", "-n", "10", "-g", str(GRANULARITY_US),
                           "-o", "calibration"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.returncode == 0
    count = json.loads((tmp_path / "calibration.json").read_text())["ranks"][0]["count"]
    for path in tmp_path.glob("calibration*"):
        path.unlink()
    return count


def check_recipe_against_report(run_dir, ranks, ranks_per_node, hosts):
    meta = json.loads((run_dir / "psnap.json").read_text())
    assert meta["complete"] is True and meta["reps"] == REPS
    histograms = meta["rank_histograms"]
    assert histograms["nodes"] == len(hosts)
    names = [histograms["file_name"].replace("{node}", str(n)) for n in range(len(hosts))]
    blocks = [line for name in names for line in (run_dir / name).read_text().splitlines()
              if line.startswith("# ")]
    # every rank's '#' line once, in its node's file
    assert sorted(int(line.split()[1]) for line in blocks) == list(range(ranks))
    nominal_us = ranks_per_node * REPS * GRANULARITY_US
    script = recipe().replace("20000000", str(nominal_us))
    out = subprocess.run(["bash", "-c", script], cwd=run_dir, capture_output=True, text=True,
                         timeout=60, check=True).stdout
    awk = {host: (float(total), float(slowdown))
           for host, total, slowdown in (line.split() for line in out.splitlines())}
    assert sorted(awk) == sorted(hosts), out
    report = subprocess.run(["Rscript", REPORT_R, run_dir], capture_output=True, text=True,
                            timeout=600)
    assert report.returncode == 0, report.stderr[-2000:]
    with open(run_dir / "report" / "psnap_nodes.csv", newline="") as f:
        rows = {r["host"]: r for r in csv.DictReader(f)}
    assert sorted(rows) == sorted(hosts)
    for host, (awk_total_us, awk_slowdown) in awk.items():
        row = rows[host]
        assert int(row["ranks"]) == ranks_per_node
        total_us = float(row["total_time_s"]) * 1e6
        # the '#' lines print each rank's total to the microsecond
        assert abs(awk_total_us - total_us) <= 0.5 * ranks_per_node + 1e-6, (host, out, row)
        assert float(row["nominal_time_s"]) * 1e6 == pytest.approx(nominal_us)
        assert float(row["slowdown_percent"]) == pytest.approx(
            100 * (1 - nominal_us / total_us), rel=1e-9)
        # awk prints 6 digits; the totals differ by their rounding at most
        bound = 100 * nominal_us * 0.5 * ranks_per_node / min(awk_total_us, total_us) ** 2
        assert abs(awk_slowdown - float(row["slowdown_percent"])) <= (
            bound + 1e-5 * abs(awk_slowdown) + 1e-4), (host, awk_slowdown, row)


def test_the_recipe_on_1024_ranks_gives_the_reports_slowdown(bin_dir, tmp_path):
    """1,024 unpinned threads of one process, beyond the 64 whose histograms
    stdout shows: stdout has none of their '#' lines, the node's file has
    each, and the recipe's node slowdown is the report's."""
    count = spin_count(bin_dir, tmp_path)
    done = subprocess.run([bin_dir / "psnap", "-t", "1024", "--no-pin", "--warmup-ms", "0",
                           "-n", str(REPS), "-g", str(GRANULARITY_US), "-c", str(count),
                           "-o", "psnap"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "1024 threads share" in done.stderr
    (tmp_path / "psnap.out").write_text(done.stdout)
    assert not [line for line in done.stdout.splitlines() if line.startswith("# ")]
    assert "#all ranks=1024" in done.stdout
    assert re.search(r"(?m)^#histograms of each rank: .*psnap_node\{node\}_histograms\.txt",
                     done.stdout)
    check_recipe_against_report(tmp_path, 1024, 1024, [os.uname().nodename.split(".")[0]])


def test_the_recipe_sums_each_node_of_a_slurm_job(bin_dir, tmp_path, slurm_nodes):
    """MPI ranks on the four namespaced nodes: the recipe sums them by host
    name, each node's from its own file, as the report does."""
    if not (bin_dir / "psnap_mpi").exists():
        pytest.skip("built without MPI")
    count = spin_count(bin_dir, tmp_path)
    per_node = 16
    done = subprocess.run(["srun", "--mpi=pmix", "-N", "4", "-n", str(4 * per_node),
                           "--overcommit", "--chdir", str(tmp_path), bin_dir / "psnap_mpi",
                           "--no-pin", "--warmup-ms", "0", "-n", str(REPS),
                           "-g", str(GRANULARITY_US), "-c", str(count), "-o", "psnap"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env=mpi_env(slurm_nodes))
    assert done.returncode == 0, done.stderr[-2000:]
    (tmp_path / "psnap.out").write_text(done.stdout)
    check_recipe_against_report(tmp_path, 4 * per_node, per_node,
                                [f"nbnode{i}" for i in range(1, 5)])
