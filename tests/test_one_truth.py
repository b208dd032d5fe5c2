"""One run read through every door: each CPU's figures are the same number
in the rank line, the JSON, the report's CSVs, the metrics file,
noise-check's line, JUBE's table and ReFrame's performance log, to the
precision each prints; the loss's parts add up
to the whole; the first screen's sentence and key figures are recomputed
from the CSVs (docs/analysis.md, "The figures")."""
import csv
import html
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from nbtest import KERNELS, REPORT_R, ROOT, quick_args
from nbtest.jube_runs import project_copy, result_rows, run_to_end, workpackage_dirs
from nbtest.lines import rank_lines, summaries

NCPUS = len(os.sched_getaffinity(0))

PARTS = ("detour_percent", "slow_percent", "variation_percent")


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
    for key in ("lost_percent", "system_percent") + PARTS:
        assert float(line[key]) == pytest.approx(entry[key], abs=5e-5), (cpu, key)
        assert float(row[key]) == pytest.approx(entry[key], rel=1e-9, abs=1e-12), (cpu, key)
    assert entry["lost_percent"] == pytest.approx(sum(entry[k] for k in PARTS), abs=1e-9)
    assert entry["system_percent"] == pytest.approx(
        entry["detour_percent"] + entry["slow_percent"], abs=1e-9)
    for metric, key in (("system", "system_percent"), ("lost", "lost_percent"),
                        ("variation", "variation_percent"), ("detour", "detour_percent"),
                        ("slow", "slow_percent")):
        assert prom[(f"noisebench_cpu_{metric}_ratio", cpu)] == pytest.approx(
            float(line[key]) / 100, abs=1e-9), (cpu, metric)


def traced_run(run, tmp_path, kernel, *args):
    """A traced run of the kernel on every CPU with --metrics, and its report:
    (stdout, JSON, {cpu: rank line}, metrics, {cpu: summary.csv row},
    {cpu: tails.csv row}, the report's directory)."""
    done = run(kernel, "-t", 0, *args, "--trace", "--metrics", tmp_path / "m.prom", "-o", "one")
    assert done.returncode == 0, done.stderr
    meta = json.loads((tmp_path / "one.json").read_text())
    lines = {int(r["cpu"]): r for r in summaries(done.stdout)}
    out = report(tmp_path)
    summary = {int(r["cpu"]): r for r in read_csv(out / "summary.csv")}
    tails = {int(r["cpu"]): r for r in read_csv(out / "tails.csv")}
    assert len(meta["ranks"]) == len(lines) == len(summary) == len(tails) == NCPUS
    return done.stdout, meta, lines, metrics(tmp_path / "m.prom"), summary, tails, out


def test_an_fwq_run_gives_one_number_a_figure_everywhere(run, tmp_path):
    stdout, meta, lines, prom, summary, tails, out = traced_run(run, tmp_path, "fwq", "-n", 4000,
                                                                "-w", 12)
    assert len(rank_lines(stdout)) == NCPUS
    for entry in meta["ranks"]:
        cpu = entry["cpu"]
        line, row, tail = lines[cpu], summary[cpu], tails[cpu]
        check_every_door(cpu, line, entry, row, prom)
        # FWQ's own figure is the whole
        assert float(row["noise_percent"]) == pytest.approx(entry["lost_percent"], rel=1e-9)
        # the tails: the JSON's, the CSV's, the rank line's and the metrics'
        check_tails(cpu, line, entry, tail, prom)
        assert float(line["above_100us_per_hour"]) == pytest.approx(
            entry["tails"]["above_100us_per_hour"], abs=0.05)
        # a traced detour's causes add up to the loss the kernel counted
        c = entry["causes"]
        if c["attributed"]:
            assert sum(v["total_ns"] for v in c["classes"].values()) == pytest.approx(
                c["noise_ns"], rel=1e-6, abs=1)

    # the first screen, recomputed from the CSVs
    rows = list(summary.values())
    mid = median_cpu(rows, "system_percent")
    worst = max(rows, key=lambda r: float(r["system_percent"]))
    words = page_words(out / "index.html")
    said = re.search(r"The system takes ([\d.]+)% of each CPU \(the median of the (\d+) CPUs? "
                     r"measured: ([\d.]+)% in detours and ([\d.]+)% running slow\), ([\d.]+)% "
                     r"of the worst, (\S+):(\d+)\. The work's own variation adds ([\d.]+)% more "
                     r"on the median CPU \(([\d.]+)% lost in all\)", words)
    assert said, words[:2000]
    assert number(said[1]) == sig3(float(mid["system_percent"]))
    assert int(said[2]) == len(rows)
    assert number(said[3]) == sig3(float(mid["detour_percent"]))
    assert number(said[4]) == sig3(float(mid["slow_percent"]))
    assert number(said[5]) == sig3(float(worst["system_percent"]))
    assert int(said[7]) == int(worst["cpu"])
    assert number(said[8]) == sig3(float(mid["variation_percent"]))
    assert number(said[9]) == sig3(float(mid["lost_percent"]))
    tail_rows = list(tails.values())
    hour = re.search(r"Per CPU-hour, ([\d,]+) losses last longer than 10 µs and ([\d,]+) longer "
                     r"than 1 ms", words)
    assert hour, words[:3000]
    assert number(hour[1]) == sig3(float(median_cpu(tail_rows, "above_10us_per_hour")
                                         ["above_10us_per_hour"]))
    assert number(hour[2]) == sig3(float(median_cpu(tail_rows, "above_1000us_per_hour")
                                         ["above_1000us_per_hour"]))
    # the key figures' row holds the sentence's numbers
    key = re.search(r"FWQ multiiter, \d+ CPUs? \d+ ([\d.,]+) ([\d.,]+) ([\d.,]+) ", words)
    assert key, words[:3000]
    assert [number(key[i]) for i in (1, 2, 3)] == [number(said[1]), number(said[8]),
                                                    number(said[9])]


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


@pytest.mark.parametrize("kernel", [k for k in KERNELS if k != "fwq"])
def test_every_kernel_gives_one_number_a_figure_everywhere(run, tmp_path, kernel):
    """The other kernels' traced runs on every CPU, with --metrics: each
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
    summary.csv's system_percent."""
    kept, prom_path = tmp_path / "kept", tmp_path / "check.prom"
    done = subprocess.run([str(bin_dir / "noise-check"), "--seconds", "0.5",
                           "--max-lost-percent", "0.000001", "--max-detour-us", "1e9", "-o",
                           str(kept), "--metrics", str(prom_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    took = {int(c): float(v) for c, v in
            re.findall(r"^noise: cpu(\d+) took ([\d.e+-]+)% > ", done.stdout, re.M)}
    meta = json.loads((kept / "selfish.json").read_text())
    prom = metrics(prom_path)
    summary = {int(r["cpu"]): r for r in read_csv(report(kept) / "summary.csv")}
    assert sorted(took) == sorted(e["cpu"] for e in meta["ranks"]) == sorted(summary)
    for e in meta["ranks"]:
        cpu = e["cpu"]
        assert took[cpu] == sig3(round(e["system_percent"], 4)), (cpu, took[cpu])
        assert prom[("noisebench_cpu_system_ratio", cpu)] == pytest.approx(
            e["system_percent"] / 100, abs=5e-7)
        assert float(summary[cpu]["system_percent"]) == pytest.approx(e["system_percent"],
                                                                      rel=1e-9)


def worst(meta, get):
    return max(get(e) for e in meta["ranks"])


def fwq_worst(meta):
    """An FWQ run's figures over its ranks, as JUBE's and ReFrame's rows give them
    (the ranks line's maxima), from the run's own JSON."""
    return {
        "system_percent": worst(meta, lambda e: e["system_percent"]),
        "scaled_noise_mean": worst(meta, lambda e: e["stats"]["scaled_noise_mean"]),
        "scaled_noise_sd": worst(meta, lambda e: e["stats"]["std"] / e["stats"]["min"]),
        "kurtosis": worst(meta, lambda e: e["stats"]["kurtosis"]),
        "p99_9_loss_us": worst(meta, lambda e: e["tails"]["p99_9_us"]),
        "rules_unmet": worst(meta, lambda e: e["requirements"]["unmet"]),
    }


@pytest.mark.harness
@pytest.mark.skipif(bool(os.environ.get("NB_SANITIZE")), reason="JUBE drives the release build")
def test_jubes_table_is_its_runs_own(tmp_path):
    """JUBE's FWQ row of a run on every CPU: each figure is the worst rank's
    of the workpackage's own JSON, to the table's precision, and the
    report of that workpackage says the same."""
    jube_dir = project_copy(tmp_path, cores=[NCPUS], work=["multiiter"], fwq_samples=4000)
    handle = run_to_end(jube_dir, "fwq", env={})
    (row,) = result_rows(handle, "fwq")
    (work,) = workpackage_dirs(handle, "fwq")
    meta = json.loads((work / "fwq.json").read_text())
    assert len(meta["ranks"]) == NCPUS
    w = fwq_worst(meta)
    assert float(row["system took of the worst CPU (%)"]) == pytest.approx(
        w["system_percent"], rel=5e-3, abs=5e-5)
    for key in ("scaled_noise_mean", "scaled_noise_sd", "kurtosis"):
        assert float(row[f"{key}_max"]) == pytest.approx(w[key], rel=1e-3), key
    assert float(row["p99.9 loss (us)"]) == pytest.approx(w["p99_9_loss_us"], abs=0.051)
    assert row["requirements"] == ("met" if w["rules_unmet"] == 0 else "not met")
    summary = read_csv(report(work) / "summary.csv")
    assert max(float(r["system_percent"]) for r in summary) == pytest.approx(
        w["system_percent"], rel=1e-9)
    assert {r["meets"] for r in summary} <= {"TRUE", "FALSE"}
    assert (w["rules_unmet"] == 0) == all(r["meets"] == "TRUE" for r in summary)


@pytest.mark.harness
@pytest.mark.skipif(bool(os.environ.get("NB_SANITIZE")), reason="ReFrame builds the release kernels")
def test_reframes_performance_log_is_its_runs_own(tmp_path, bin_dir):
    """ReFrame's FWQ checks (multiiter, each core count): each performance
    variable in the perflog is the worst rank's of the check's own JSON."""
    cmd = [ROOT / ".venv" / "bin" / "reframe", "-C", ROOT / "reframe" / "config" / "generic.py",
           "-c", ROOT / "reframe" / "checks", "--system", "anynode:local",
           "-n", "^fwq_noise_check", "-x", "asm|daxpy|increment", "-S", "samples=4000",
           "--keep-stage-files", "--report-file", tmp_path / "report.json", "-r"]
    env = dict(os.environ, NOISEBENCH_BIN_DIR=str(bin_dir),
               RFM_SQLITE_DB_FILE=str(tmp_path / "results.db"))
    subprocess.run([str(c) for c in cmd], cwd=tmp_path, capture_output=True, text=True,
                   timeout=900, env=env)
    cases = [tc for tc in json.loads((tmp_path / "report.json").read_text())["runs"][-1]
             ["testcases"] if not tc["fixture"]]
    names = {tc["display_name"] for tc in cases}
    logged = {}
    # a line a check: time|result|name|system:partition|jobid|var=value unit (ref ..)|...
    # (the file's first line names the fields)
    for log in (tmp_path / "perflogs" / "anynode" / "local").glob("*.log"):
        for line in log.read_text().splitlines():
            fields = line.split("|")
            if len(fields) > 5 and fields[2] in names:
                logged[fields[2]] = dict(re.findall(r"(\w+)=(\S+) ", "|".join(fields[5:])))
    assert cases and set(logged) == names
    for tc in cases:
        meta = json.loads((Path(tc["stagedir"]) / "fwq.json").read_text())
        w, got = fwq_worst(meta), logged[tc["display_name"]]
        assert len(meta["ranks"]) == tc["num_cpus_per_task"]
        assert float(got["max_system_percent"]) == pytest.approx(w["system_percent"], abs=5e-5)
        assert float(got["max_scaled_noise_mean"]) == pytest.approx(w["scaled_noise_mean"],
                                                                    rel=1e-5)
        assert float(got["max_scaled_noise_sd"]) == pytest.approx(w["scaled_noise_sd"], rel=1e-5)
        assert float(got["max_kurtosis"]) == pytest.approx(w["kurtosis"], rel=1e-5)
        assert float(got["max_p99_9_loss_us"]) == pytest.approx(w["p99_9_loss_us"], abs=5e-4)
        assert float(got["rules_unmet"]) == w["rules_unmet"]
        # the check's verdict is the kernel's: its reference is rules_unmet's 0
        assert (tc["result"] == "pass") == (w["rules_unmet"] == 0), tc["result"]
