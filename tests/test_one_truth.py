"""One run read through every door: each CPU's figures are the same number
in the rank line, the JSON, the report's CSVs, the metrics file and
noise-check's line, to the precision each prints; the loss's parts add up
to the whole (docs/analysis.md, "The figures"). FWQ's first screen, JUBE
table and ReFrame performance log are test_fwq_doors.py's."""
import csv
import html
import json
import os
import re
import subprocess

import pytest
from nbtest import KERNELS, REPORT_R, quick_args
from nbtest.rank_lines import summaries

NCPUS = len(os.sched_getaffinity(0))

PARTS = ("stolen_percent", "slowdown_percent", "variation_percent")


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def report(directory):
    done = subprocess.run(["Rscript", str(REPORT_R), str(directory), "--no-pdf"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return directory / "report"


def metrics(path):
    """{(metric, cpu): value} of a node_exporter textfile."""
    return {(m, int(cpu)): float(v) for m, cpu, v in re.findall(
        r'^(noisebench_cpu_\w+)\{[^}]*cpu="(\d+)"\} (\S+)$', path.read_text(), re.M)}


def sig3(x):
    """x as the page gives it: 3 significant digits."""
    return float(f"{x:.3g}")


def median_cpu(rows, key):
    """The median CPU by key: the lower middle one (analysis/R/noise.R)."""
    ordered = sorted(rows, key=lambda r: float(r[key]))
    return ordered[(len(ordered) + 1) // 2 - 1]


def page_words(index):
    text = html.unescape(re.sub(r"<[^>]+>", " ", index.read_text()))
    return re.sub(r"\s+", " ", text)


def number(text):
    return float(text.replace(",", ""))


def check_every_door(cpu, line, entry, row, prom):
    """One CPU's loss and its parts: the rank line (4 decimals), the JSON
    (full precision), summary.csv (the JSON's) and the metrics (the rank
    line's times 0.01)."""
    for key in ("lost_percent",) + PARTS:
        assert float(line[key]) == pytest.approx(entry[key], abs=5e-5), (cpu, key)
        assert float(row[key]) == pytest.approx(entry[key], rel=1e-9, abs=1e-12), (cpu, key)
    assert entry["lost_percent"] == pytest.approx(sum(entry[k] for k in PARTS), abs=1e-9)
    # the headline ranks every table: summary.csv's noise_percent is it
    assert float(row["noise_percent"]) == pytest.approx(entry["stolen_percent"], rel=1e-9)
    for metric, key in (("system", "stolen_percent"), ("lost", "lost_percent"),
                        ("variation", "variation_percent"), ("slowdown", "slowdown_percent")):
        assert prom[(f"noisebench_cpu_{metric}_ratio", cpu)] == pytest.approx(
            float(line[key]) / 100, abs=1e-9), (cpu, metric)


def traced_run(run, tmp_path, kernel, *args):
    """A traced run of the kernel on every CPU with --metrics, and its report:
    (stdout, JSON, {cpu: rank line}, metrics, {cpu: summary.csv row},
    {cpu: tails.csv row}, the report's directory)."""
    # every CPU's series, not only those of CPUs that broke a rule
    done = run(kernel, "-t", 0, *args, "--trace", "--metrics", tmp_path / "m.prom",
               "--metrics-every-cpu", "-o", "one")
    assert done.returncode == 0, done.stderr
    meta = json.loads((tmp_path / "one.json").read_text())
    lines = {int(r["cpu"]): r for r in summaries(done.stdout)}
    out = report(tmp_path)
    summary = {int(r["cpu"]): r for r in read_csv(out / "summary.csv")}
    tails = {int(r["cpu"]): r for r in read_csv(out / "tails.csv")}
    assert len(meta["ranks"]) == len(lines) == len(summary) == len(tails) == NCPUS
    return done.stdout, meta, lines, metrics(tmp_path / "m.prom"), summary, tails, out


def check_tails(cpu, line, entry, tail, prom):
    """One CPU's tails: the JSON's (full precision), tails.csv's (the
    JSON's), the rank line's (3 decimals) and the metrics' (the line's)."""
    t = entry["tails"]
    for key in ("p99_9_us", "max_us"):
        assert float(tail[key]) == pytest.approx(t[key], rel=1e-9), (cpu, key)
    assert float(line["p99_9_loss_us"]) == pytest.approx(t["p99_9_us"], abs=5e-4), cpu
    assert float(line["max_loss_us"]) == pytest.approx(t["max_us"], abs=5e-4), cpu
    for us in (10, 100, 1000):
        assert float(tail[f"above_{us}us_per_hour"]) == pytest.approx(
            t[f"above_{us}us_per_hour"], rel=1e-9), (cpu, us)
    assert prom[("noisebench_cpu_loss_p99_9_seconds", cpu)] == pytest.approx(
        float(line["p99_9_loss_us"]) * 1e-6, rel=1e-6)
    assert prom[("noisebench_cpu_longest_loss_seconds", cpu)] == pytest.approx(
        float(line["max_loss_us"]) * 1e-6, rel=1e-6)


@pytest.mark.parametrize("kernel", KERNELS)
def test_every_kernel_gives_one_number_a_figure_everywhere(run, tmp_path, kernel):
    """Every kernel's traced run on every CPU, with --metrics: each
    CPU's tails, and where the kernel splits its loss (all but FTQ, whose
    quanta are not times) the loss and its parts, are one number in the
    rank line, the JSON, summary.csv, tails.csv and the metrics; each
    traced CPU's causes add up to its loss."""
    _, meta, lines, prom, summary, tails, _ = traced_run(run, tmp_path, kernel,
                                                         *quick_args(kernel))
    for entry in meta["ranks"]:
        cpu = entry["cpu"]
        check_tails(cpu, lines[cpu], entry, tails[cpu], prom)
        if "lost_percent" in entry:
            check_every_door(cpu, lines[cpu], entry, summary[cpu], prom)
        c = entry["causes"]
        if c["attributed"]:
            assert sum(v["total_ns"] for v in c["classes"].values()) == pytest.approx(
                c["noise_ns"], rel=1e-6, abs=1)


def test_noise_check_says_what_the_report_and_the_metrics_say(bin_dir, tmp_path):
    """noise-check's selfish run, kept (-o) and reported: every CPU outside
    a limit of 1e-6%, its line's share is the JSON's, the metrics' and
    summary.csv's stolen_percent."""
    kept, prom_path = tmp_path / "kept", tmp_path / "check.prom"
    done = subprocess.run([str(bin_dir / "noise-check"), "--seconds", "0.5",
                           "--max-stolen-percent", "0.000001", "--max-detour-us", "1e9", "-o",
                           str(kept), "--metrics", str(prom_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    took = {int(c): float(v) for c, v in
            re.findall(r"^noise: cpu(\d+) took ([\d.e+-]+)% > ", done.stdout, re.M)}
    (described,) = kept.glob("*.json")
    meta = json.loads(described.read_text())
    prom = metrics(prom_path)
    summary = {int(r["cpu"]): r for r in read_csv(report(kept) / "summary.csv")}
    assert sorted(took) == sorted(e["cpu"] for e in meta["ranks"]) == sorted(summary)
    for e in meta["ranks"]:
        cpu = e["cpu"]
        assert took[cpu] == sig3(round(e["stolen_percent"], 4)), (cpu, took[cpu])
        assert prom[("noisebench_cpu_system_ratio", cpu)] == pytest.approx(
            e["stolen_percent"] / 100, abs=5e-7)
        assert float(summary[cpu]["stolen_percent"]) == pytest.approx(e["stolen_percent"],
                                                                      rel=1e-9)
