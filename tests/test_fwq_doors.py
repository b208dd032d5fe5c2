"""FWQ's figures through every door (test_one_truth.py reads every
kernel's through the kernels' own): the first screen of its report, which
quotes it, recomputed from the CSVs; JUBE's FWQ table and ReFrame's FWQ
performance log, each figure the worst rank's of the run's own JSON; and
both following a requirements file (test_requirements.py's two)."""
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from nbtest import ROOT
from nbtest.jube_runs import project_copy, result_rows, run_to_end, workpackage_dirs
from nbtest.rank_lines import rank_lines
from test_one_truth import (NCPUS, check_every_door, check_tails, median_cpu, number,
                            page_words, read_csv, report, sig3, traced_run)
from test_requirements import RULES, rule_files


def test_an_fwq_run_gives_one_number_a_figure_everywhere(run, tmp_path):
    stdout, meta, lines, prom, summary, tails, out = traced_run(run, tmp_path, "fwq", "-n", 4000,
                                                                "-w", 12)
    assert len(rank_lines(stdout)) == NCPUS
    for entry in meta["ranks"]:
        cpu = entry["cpu"]
        line, row, tail = lines[cpu], summary[cpu], tails[cpu]
        check_every_door(cpu, line, entry, row, prom)
        # the figure every table ranks by is the headline
        assert float(row["noise_percent"]) == pytest.approx(entry["stolen_percent"], rel=1e-9)
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
    mid = median_cpu(rows, "stolen_percent")
    worst = max(rows, key=lambda r: float(r["stolen_percent"]))
    words = page_words(out / "index.html")
    said = re.search(r"The system takes ([\d.]+)% of each CPU \(the median of the (\d+) CPUs? "
                     r"measured(?:, 95% interval ([\d.]+)% to ([\d.]+)%)?\), ([\d.]+)% "
                     r"of the worst, (\S+):(\d+)\. "
                     # where a CPU's probe was coarse this run, the page says so
                     r"(?:On \S+ of the \S+ CPUs the probe cannot see every loss of [^(]+ "
                     r"\(its resolution is up to [^)]+\): what it gives there may be low\. )?"
                     r"On this machine the work also runs below its "
                     r"best speed, the work's, not the system's: [A-Z]+ ([\d.]+)%\.", words)
    assert said, words[:2000]
    assert number(said[1]) == sig3(float(mid["stolen_percent"]))
    assert int(said[2]) == len(rows)
    if said[3] is not None:
        assert number(said[3]) == sig3(float(mid["stolen_ci95_low"]))
        assert number(said[4]) == sig3(float(mid["stolen_ci95_high"]))
    assert number(said[5]) == sig3(float(worst["stolen_percent"]))
    assert int(said[7]) == int(worst["cpu"])
    # the work's slowdown on its own median CPU, apart from the headline's
    assert number(said[8]) == sig3(float(median_cpu(rows, "slowdown_percent")
                                         ["slowdown_percent"]))
    tail_rows = list(tails.values())
    hour = re.search(r"Per CPU-hour, ([\d,]+) losses last longer than 10 µs and ([\d,]+) longer "
                     r"than 1 ms", words)
    assert hour, words[:3000]
    assert number(hour[1]) == sig3(float(median_cpu(tail_rows, "above_10us_per_hour")
                                         ["above_10us_per_hour"]))
    assert number(hour[2]) == sig3(float(median_cpu(tail_rows, "above_1000us_per_hour")
                                         ["above_1000us_per_hour"]))
    # the key figures' row holds the sentence's numbers; the work's own
    # variation is what the loss holds beyond the other parts, and below
    # zero where the samples ran faster than their usual time
    key = re.search(r"FWQ multiiter, \d+ CPUs? \d+ ([\d.,]+) (-?[\d.,]+) ([\d.,]+) ", words)
    assert key, words[:3000]
    assert [number(key[i]) for i in (1, 2, 3)] == [
        number(said[1]), sig3(float(mid["variation_percent"])), sig3(float(mid["lost_percent"]))]


def worst(meta, get):
    return max(get(e) for e in meta["ranks"])


def fwq_worst(meta):
    """An FWQ run's figures over its ranks, as JUBE's and ReFrame's rows give them
    (the ranks line's maxima), from the run's own JSON."""
    return {
        "stolen_percent": worst(meta, lambda e: e["stolen_percent"]),
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
    jube_dir = project_copy(tmp_path, cores=[NCPUS], work=["multiiter"], samples=4000)
    handle = run_to_end(jube_dir, "fwq", env={})
    (row,) = result_rows(handle, "fwq")
    (work,) = workpackage_dirs(handle, "kernel")
    meta = json.loads((work / "fwq.json").read_text())
    assert len(meta["ranks"]) == NCPUS
    w = fwq_worst(meta)
    assert float(row["system took of the worst CPU (%)"]) == pytest.approx(
        w["stolen_percent"], rel=5e-3, abs=5e-5)
    for key in ("scaled_noise_mean", "scaled_noise_sd", "kurtosis"):
        assert float(row[f"{key}_max"]) == pytest.approx(w[key], rel=1e-3), key
    assert float(row["p99.9 loss (us)"]) == pytest.approx(w["p99_9_loss_us"], abs=0.051)
    # judged by the kernels' default rules: the table says so
    assert row["requirements"] == ("met" if w["rules_unmet"] == 0 else "not met") + " by default"
    summary = read_csv(report(work) / "summary.csv")
    assert max(float(r["stolen_percent"]) for r in summary) == pytest.approx(
        w["stolen_percent"], rel=1e-9)
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
    # a line a check: time|result|name|system:partition|jobid|rules=FILE|var=value unit
    # (ref ..)|... (the file's first line names the fields)
    for log in (tmp_path / "perflogs" / "anynode" / "local").glob("*.log"):
        for line in log.read_text().splitlines():
            fields = line.split("|")
            if len(fields) > 6 and fields[2] in names:
                # judged by the generic partitions' rules, and the line says so
                assert fields[5] == f"rules={ROOT / 'reframe/config/commodity.requirements'}", line
                logged[fields[2]] = dict(re.findall(r"(\w+)=(\S+) ", "|".join(fields[6:])))
    assert cases and set(logged) == names
    for tc in cases:
        meta = json.loads((Path(tc["stagedir"]) / "fwq.json").read_text())
        w, got = fwq_worst(meta), logged[tc["display_name"]]
        assert len(meta["ranks"]) == tc["num_cpus_per_task"]
        assert float(got["max_stolen_percent"]) == pytest.approx(w["stolen_percent"], abs=5e-5)
        assert float(got["max_scaled_noise_mean"]) == pytest.approx(w["scaled_noise_mean"],
                                                                    rel=1e-5)
        assert float(got["max_scaled_noise_sd"]) == pytest.approx(w["scaled_noise_sd"], rel=1e-5)
        assert float(got["max_kurtosis"]) == pytest.approx(w["kurtosis"], rel=1e-5)
        assert float(got["max_p99_9_loss_us"]) == pytest.approx(w["p99_9_loss_us"], abs=5e-4)
        assert float(got["rules_unmet"]) == w["rules_unmet"]
        # the check's verdict is the kernel's: its reference is rules_unmet's 0
        assert (tc["result"] == "pass") == (w["rules_unmet"] == 0), tc["result"]


@pytest.mark.harness
@pytest.mark.skipif(bool(os.environ.get("NB_SANITIZE")), reason="ReFrame builds the release kernels")
def test_reframe_takes_its_verdict_from_the_requirements_file(bin_dir, tmp_path):
    """FWQ's ReFrame check: the file's verdict is its only reference
    (test_requirements.py's two files)."""
    rules = rule_files(tmp_path)
    verdicts = {}
    for name in RULES:
        report_file = tmp_path / f"{name}.json"
        cmd = [ROOT / ".venv" / "bin" / "reframe", "-C", ROOT / "reframe" / "config" / "generic.py",
               "-c", ROOT / "reframe" / "checks", "--system", "anynode:local",
               "-n", "^fwq_noise_check", "-x", "asm|daxpy|increment", "-S", "samples=2000",
               "-S", f"requirements={rules[name]}", "--report-file", report_file, "-r"]
        env = dict(os.environ, NOISEBENCH_BIN_DIR=str(bin_dir),
                   RFM_SQLITE_DB_FILE=str(tmp_path / "results.db"))
        subprocess.run([str(c) for c in cmd], cwd=tmp_path, capture_output=True, text=True,
                       timeout=900, env=env)
        cases = [tc for tc in json.loads(report_file.read_text())["runs"][-1]["testcases"]
                 if not tc["fixture"]]
        assert cases
        for tc in cases:
            values = {k.split(":")[-1]: v for k, v in tc["perfvalues"].items()}
            verdicts.setdefault(name, set()).add((tc["result"], values["rules_unmet"][0]))
            # the file's verdict is the check's only reference
            assert [k for k, v in values.items() if v[3] is not None] == ["rules_unmet"], values
    assert verdicts == {"lenient": {("pass", 0)}, "strict": {("fail", 1)}}


@pytest.mark.harness
@pytest.mark.skipif(bool(os.environ.get("NB_SANITIZE")), reason="JUBE drives the release build")
def test_jube_gives_the_requirements_files_verdict_in_its_table(tmp_path):
    """FWQ's JUBE table: the file's verdict in its requirements column."""
    rules = rule_files(tmp_path)
    for name, met in (("lenient", "met"), ("strict", "not met")):
        (tmp_path / name).mkdir()
        jube_dir = project_copy(tmp_path / name, cores=[1, 2], work=["multiiter"],
                                samples=2000, requirements=rules[name])
        rows = result_rows(run_to_end(jube_dir, "fwq", env={}), "fwq")
        assert len(rows) == 2, rows
        assert {r["requirements"] for r in rows} == {f"{met} by {Path(rules[name]).name}"}, rows
