"""One set of acceptance rules (docs/analysis.md, "Requirements"): the
kernels judge every rank by a requirements file once, in C, and the report,
ReFrame, JUBE and noise-check read that verdict. Two files judge the same
kind of run: one no figure can fail (a share of a CPU is at most 100%) and
one no figure can meet (a share is never below 0), so the verdicts do not
depend on the day; each door must give both, and the default (the Sequoia
criteria) must be what the rank lines say. FWQ's ReFrame check and JUBE
table read the two files in test_fwq.py."""
import csv
import html
import json
import operator
import os
import re
import subprocess

import pytest
from nbtest import CATALOGUE, KERNELS, REPORT_R, ROOT, quick_args
from nbtest.rank_lines import rank_lines, ranks_line

RULES = {"lenient": "# no share exceeds 100%\nstolen_percent <= 100\n",
         "strict": "# no share is below 0%\nstolen_percent < 0\n"}
# the default rules (the catalogue's: Sequoia's diminutive noise), each as
# its words, and the one kernel they judge
DEFAULT = [rule.split() for rule in CATALOGUE["requirements"]]
(JUDGED,) = {word.split("=", 1)[1] for rule in DEFAULT for word in rule
             if word.startswith("kernel=")}
OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def rule_files(directory):
    """RULES, each in a requirements file of its name in directory."""
    paths = {}
    for name, text in RULES.items():
        paths[name] = directory / f"{name}.requirements"
        paths[name].write_text(text)
    return paths


@pytest.fixture
def rules(tmp_path):
    return rule_files(tmp_path)


def judged_run(bin_dir, directory, *args):
    """A short run of the kernel the default rules judge, on every CPU."""
    directory.mkdir()
    done = subprocess.run([str(bin_dir / JUDGED), "-t", "0", *quick_args(JUDGED),
                           *map(str, args), "-o", JUDGED],
                          cwd=directory, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def report(directory):
    done = subprocess.run(["Rscript", str(REPORT_R), str(directory), "--no-pdf"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    out = directory / "report"
    with open(out / "summary.csv", newline="") as f:
        return list(csv.DictReader(f)), html.unescape((out / "index.html").read_text())


def normal(rule):
    """A rule's words with its bound as a number: 1e-6 is 1e-06."""
    return [rule[0], rule[1], float(rule[2]), *rule[3:]]


def unmet(rule, figures):
    """Whether a rank line's figures fail a rule, as the catalogue states it."""
    value = figures[rule[0]]
    if value == "nan":
        return "nan=pass" not in rule
    return not OPS[rule[1]](float(value), float(rule[2]))


def test_the_default_is_sequoia_and_every_door_reads_the_kernels_verdict(bin_dir, tmp_path):
    out = judged_run(bin_dir, tmp_path / "run")
    meta = json.loads((tmp_path / "run" / f"{JUDGED}.json").read_text())
    assert meta["requirements"]["source"] == "default"
    assert [normal(r.split()) for r in meta["requirements"]["rules"]] == \
        [normal(r) for r in DEFAULT]
    lines = {int(re.search(r" cpu=(\d+)", line)[1]): line for line in rank_lines(out)}
    rows, page = report(tmp_path / "run")
    for entry in meta["ranks"]:
        line = lines[entry["cpu"]]
        fig = dict(kv.split("=", 1) for kv in line.split()[1:])
        # the rank line's figures, judged as the catalogue states the criteria
        want = [unmet(rule, fig) for rule in DEFAULT]
        assert int(fig["rules_judged"]) == len(DEFAULT), line
        assert int(fig["rules_unmet"]) == sum(want), line
        assert entry["requirements"]["unmet"] == sum(want)
        (row,) = [r for r in rows if int(r["cpu"]) == entry["cpu"]]
        assert row["meets"] == str(sum(want) == 0).upper(), row
    assert "the default requirements (Sequoia's diminutive noise)" in page
    # the ranks line's worst is the worst rank's
    ranks = ranks_line(out, JUDGED)
    assert int(ranks["rules_unmet_max"]) == max(e["requirements"]["unmet"] for e in meta["ranks"])


def test_the_file_changes_the_verdict_of_the_kernels_report_and_noise_check(bin_dir, tmp_path,
                                                                           rules):
    for name, met in (("lenient", True), ("strict", False)):
        out = judged_run(bin_dir, tmp_path / name, "--requirements", rules[name])
        for line in rank_lines(out):
            assert f"rules_judged=1 rules_unmet={0 if met else 1}" in line, line
        rows, page = report(tmp_path / name)
        assert {r["meets"] for r in rows} == {"TRUE" if met else "FALSE"}
        words = f"the requirements of {rules[name]}"
        assert (f"The runs meet {words}" if met else f"The runs do not meet {words}") in page
        check = subprocess.run([str(bin_dir / "noise-check"), "--seconds", "0.5",
                                "--requirements", rules[name]],
                               capture_output=True, text=True, timeout=120)
        assert check.returncode == (0 if met else 1), check.stdout + check.stderr
        last = check.stdout.splitlines()[-1]
        if met:
            assert re.match(r"noise: \d+ CPUs within the limits \(took at most [\d.e+-]+% <= 100%\)",
                            last), last
        else:
            cpus = len(os.sched_getaffinity(0))
            assert len(re.findall(r"^noise: cpu\d+ took [\d.e+-]+% >= 0% ", check.stdout,
                                  re.M)) == cpus, check.stdout
            assert last.startswith(f"noise: {cpus} of {cpus} CPUs outside the limits (took < 0%)")


def test_a_bad_file_stops_every_door_before_it_measures(bin_dir, tmp_path):
    bad = tmp_path / "bad"
    bad.write_text("stolen_percent <= 1\np99_9_loss_us <= fifty\n")
    for cmd in ([bin_dir / JUDGED, *quick_args(JUDGED)], [bin_dir / "noise-check"],
                [bin_dir / "noise-info"]):
        done = subprocess.run([str(c) for c in cmd] + ["--requirements", str(bad)], cwd=tmp_path,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, done
        assert done.stderr.strip().endswith(f"--requirements {bad}:2: after the operator comes "
                                            "the bound, a number (e.g. 1e-6)"), done.stderr
        assert len(done.stderr.splitlines()) == 1
    assert not list(tmp_path.glob(f"{JUDGED}*"))


def test_the_commitments_template_judges_every_rule_on_its_kernel(run):
    """site/acceptance/commitments.requirements, the file DESCRIPTION.md
    asks a vendor to fill in: the kernels read it, and every rule of a
    kernel's is judged on each of its ranks (its figure is on the rank
    line: none is silently left out)."""
    template = ROOT / "site" / "acceptance" / "commitments.requirements"
    rules = [line.split() for line in template.read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    for kernel in KERNELS:
        # its own rules and those of every kernel (no kernel=): the headline's
        mine = [r for r in rules if f"kernel={kernel}" in r
                or not any(word.startswith("kernel=") for word in r)]
        assert mine, kernel
        done = run(kernel, *quick_args(kernel), "--requirements", template, "-o", kernel)
        assert done.returncode == 0, done.stderr
        lines = rank_lines(done.stdout)
        assert lines and all(f" rules_judged={len(mine)} " in line + " " for line in lines), (
            kernel, lines[:1])
