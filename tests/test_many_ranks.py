"""Every MPI kernel at 128 ranks, oversubscribed on this machine: a functional
test of what grows with the ranks (the launch, the reductions and the
records rank 0 receives node by node, the JSON, a file set per rank, the
report's figures), not of noise. The ranks share two CPUs, so every figure
they measure is mostly time-sharing; only counts and structure are checked.
Tier-0 nodes run 48-288 ranks each."""
import csv
import json
import re
import subprocess

import pytest
from nbtest import ANY_KERNEL, CATALOGUE, KERNELS, REPORT_R, ROOT, quick_args
from nbtest.browser import CHROMIUM, check_pdf, check_report_page, open_page, screenshot
from nbtest.kernel_files import check_node_data, check_ranks_tables, load_description
from nbtest.launch import MANY_RANKS, run_ranks
from nbtest.rank_lines import check_ranks_line, ranks_line

RANKS = MANY_RANKS
# small runs: a rank's measurement is short beside its share of two CPUs
ARGS = {**{kernel: quick_args(kernel) for kernel in KERNELS},
        "bsp": ["-n", "50", "--phase-us", "100"]}
# every kernel's per-rank stdout line, bsp's too (an application, not in the catalogue)
RANK_LINE = CATALOGUE["rank_line"]
# the kernel of the node files' test: the one with the most data files
NODE_FILES_KERNEL = max(KERNELS, key=lambda k: len(KERNELS[k]["files"]))

pytestmark = pytest.mark.scale


@pytest.mark.parametrize("kernel", sorted(ARGS))
def test_every_rank_reports_and_writes_its_files(kernel, many_ranks):
    """Each kernel's own checks of the same run are in its test file (the
    detours' spans, P-SNAP's summed histogram)."""
    done, tmp_path = many_ranks(kernel, ARGS[kernel])
    assert done.returncode == 0, done.stderr[-2000:]
    meta = json.loads((tmp_path / f"{kernel}.json").read_text())
    assert meta["complete"] is True and meta["frontend"] == "mpi"
    assert sorted(r["rank"] for r in meta["ranks"]) == list(range(RANKS))
    # a kernel that records detours may have none on a rank
    sampled = KERNELS.get(kernel, {}).get("samples_per_rank", "samples") == "samples"
    for r in meta["ranks"]:
        assert r["samples"] > 0 or not sampled, r["rank"]
        for name in r["files"]:
            assert name.split("_")[1] == str(r["rank"])
            assert (tmp_path / name).exists(), name
    lines = [line for line in done.stdout.splitlines()
             if re.match(RANK_LINE.replace("{kernel}", kernel), line)]
    assert sorted(int(re.search(r"rank=(\d+)", line)[1]) for line in lines) == list(range(RANKS))
    # and the one line of their figures, reduced node by node in the job
    check_ranks_line(done.stdout, kernel, lines)
    # the run's loss by length, summed where the ranks are, is their sum
    tails = [r["tails"]["histogram"]["samples"] for r in meta["ranks"] if "tails" in r]
    if tails:
        loss = meta["loss_histogram"]
        assert loss["participants"] == len(tails)
        assert loss["samples"] == [sum(h[b] for h in tails if b < len(h))
                                   for b in range(max(map(len, tails)))]


def test_node_files_of_128_ranks(bin_dir, tmp_path):
    """--node-files, the layout beyond 4096 ranks: one file of the node's
    entries, their table, and one data file a kind, written by the 128 ranks at once, each
    into its own range; the report reads every rank from them."""
    kernel = NODE_FILES_KERNEL
    done = run_ranks(bin_dir, tmp_path, kernel, [*ARGS[kernel], "--node-files"], RANKS)
    assert done.returncode == 0, done.stderr[-2000:]
    meta = load_description(tmp_path / f"{kernel}.json")
    assert sorted(r["rank"] for r in meta["ranks"]) == list(range(RANKS))
    by_file = check_node_data(tmp_path, meta["ranks"], kernel)
    pattern = CATALOGUE["node_files"]["data_file_name"]
    assert {name: len(parts) for name, parts in by_file.items()} == \
        {pattern.format(prefix=kernel, node=0, suffix=f["suffix"]): RANKS
         for f in KERNELS[kernel]["files"]}
    # and beside the node's entries, the same as a table of a row a rank,
    # which the analysis reads with fread
    check_ranks_tables(tmp_path / f"{kernel}.json")
    table = subprocess.run(["Rscript", "-e", f".libPaths(c('{ROOT}/build/lib/R', .libPaths())); "
                            "d <- noisebench::read_ranks_table(commandArgs(TRUE)[1]); "
                            "data.table::fwrite(d[, .(rank, stats.max)], \"\")",
                            str(tmp_path / f"{kernel}.json")], capture_output=True, text=True,
                           timeout=120)
    assert table.returncode == 0, table.stderr[-2000:]
    read = {int(rank): float(top) for rank, top in
            (line.split(",") for line in table.stdout.splitlines()[1:])}
    assert read == {r["rank"]: r["stats"]["max"] for r in meta["ranks"]}
    # the root printed no line a rank, but the reduction of their figures
    assert not re.search(RANK_LINE.replace("{kernel}", kernel), done.stdout, re.M)
    got = ranks_line(done.stdout, kernel)
    assert int(got["ranks"]) == RANKS
    unit = KERNELS[kernel]["value_unit"]
    assert int(got[f"max_{unit}_max"]) == max(r["stats"]["max"] for r in meta["ranks"])
    assert float(got["p99_9_loss_us_max"]) == \
        pytest.approx(max(r["tails"]["p99_9_us"] for r in meta["ranks"]), abs=1e-3)
    report = subprocess.run(["Rscript", REPORT_R, tmp_path, "--no-pdf"],
                            capture_output=True, text=True, timeout=600)
    assert report.returncode == 0, report.stderr[-2000:]
    with open(tmp_path / "report" / "summary.csv") as f:
        assert sorted(int(r["thread"]) for r in csv.DictReader(f)) == list(range(RANKS))


@pytest.mark.browser
def test_report_of_128_ranks_keeps_its_figures_to_a_page(many_ranks, tmp_path):
    """The report of the first test's run of the kernel, in its directory."""
    done, run_dir = many_ranks(ANY_KERNEL, ARGS[ANY_KERNEL])
    assert done.returncode == 0, done.stderr[-2000:]
    report = subprocess.run(["Rscript", REPORT_R, run_dir],
                            capture_output=True, text=True, timeout=600)
    assert report.returncode == 0, report.stderr[-2000:]
    out = run_dir / "report"
    with open(out / "summary.csv") as f:
        rows = list(csv.DictReader(f))
    assert sorted(int(r["thread"]) for r in rows) == list(range(RANKS))
    assert (out / f"{ANY_KERNEL}-ranking.png").exists()
    page = (out / "index.html").read_text()
    # the figures of a panel a CPU show the 7 noisiest ranks and the quietest, and say so
    assert "of a run of more than 8 CPUs, the 7 noisiest and the quietest" in page
    # read in a browser as the other reports are (test_report_browser.py)
    if CHROMIUM is None:
        pytest.fail("no chromium: scripts/setup.sh test installs it")
    with open_page(out / "index.html", 1200, 900) as p:
        words = check_report_page(p, 1200, 900)
        screenshot(p, ROOT / ".cache" / "report-first-screen-128-ranks.png")
    assert "128 CPUs measured" in words, words
    check_pdf(out / "report.pdf", tmp_path)
