"""The report's readers fed damaged runs, generated: a real run of every
kernel of the catalogue, and each of its files damaged in every way a file
can come to be (its JSON cut short at several places, empty or not an
object; a data file empty, short of lines, cut inside a line, with a word
or a field too many among its numbers). Each case stops the report with
one line naming the file, and writes no report. The cases run in one R
process (the package's own write_report); two of them also through
noise-report's script, for its exit code and its one line on stderr."""
import json
import random
import shutil
import subprocess

import pytest
from nbtest import KERNELS, REPORT_R, ROOT, quick_args

SEED = 68


def json_damages(text, rng):
    cuts = sorted(rng.sample(range(1, len(text) - 1), 3))
    return {**{f"cut-at-{c}": text[:c] for c in cuts}, "empty": "", "not-an-object": "[1, 2]\n"}


def data_damages(text, rng):
    lines = text.splitlines(keepends=True)
    at = rng.randrange(1, len(lines) - 1)
    row = lines[at].split()
    return {
        "empty": "",
        "short": "".join(lines[:len(lines) // 2]),
        "cut-in-a-line": "".join(lines[:at]) + lines[at][:max(1, len(lines[at]) // 2)].rstrip(),
        "a-word": "".join(lines[:at]) + " ".join(["7q"] + row[1:]) + "\n" + "".join(lines[at + 1:]),
        "a-field-too-many": "".join(lines[:at]) + " ".join(row + ["5"]) + "\n"
                            + "".join(lines[at + 1:]),
    }


@pytest.fixture(scope="module")
def cases(tmp_path_factory, bin_dir):
    """{case directory: the damaged file's name}, from a good run of each kernel."""
    top = tmp_path_factory.mktemp("bad_input")
    rng = random.Random(SEED)
    found = {}
    for kernel in KERNELS:
        good = top / "good" / kernel
        good.mkdir(parents=True)
        done = subprocess.run([str(bin_dir / kernel), "-t", "1", *quick_args(kernel), "-o",
                               kernel], cwd=good, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        files = [(f"{kernel}.json", None)] + [(f"{kernel}_0_{f['suffix']}", f["columns"])
                                             for f in KERNELS[kernel]["files"]]
        for name, columns in files:
            text = (good / name).read_text()
            damages = json_damages(text, rng) if columns is None else \
                data_damages(text, rng)
            for damage, damaged in damages.items():
                case = top / "cases" / f"{kernel}-{name}-{damage}"
                shutil.copytree(good, case)
                (case / name).write_text(damaged)
                found[case] = name
    return found


def test_every_damage_is_named_in_one_line_and_writes_nothing(cases, tmp_path):
    """One R process: each case's error message, or "no error"."""
    listing = tmp_path / "cases.json"
    listing.write_text(json.dumps([str(c) for c in cases]))
    script = (
        "library(noisebench); cases <- jsonlite::fromJSON(commandArgs(TRUE)[1]);"
        "for (d in cases) cat(d, '\\t', tryCatch({write_report(d, pdf = FALSE); 'no error'},"
        " error = function(e) gsub('\\n', ' | ', conditionMessage(e))), '\\n', sep = '')")
    # the package the release build installed, as report.R loads it
    r_libs = ROOT / "build" / "lib" / "R"
    done = subprocess.run(["Rscript", "-e", f".libPaths('{r_libs}'); {script}", str(listing)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    said = dict(line.split("\t", 1) for line in done.stdout.splitlines())
    assert len(said) == len(cases) >= 4 * 8
    wrong = []
    for case, name in cases.items():
        message = said[str(case)]
        # a JSON that is no run is left out (a build tree's catalogue is
        # one), so a directory of no other run has none
        where = f"{case}: no kernel runs" if case.name.endswith("-not-an-object") else \
            f"{case / name}"
        if not message.startswith(where) or " | " in message:
            wrong.append(f"{case.name}: {message}")
        if (case / "report").exists():
            wrong.append(f"{case.name}: a report was written")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("pick", ["json-cut-at", "dat-a-word"])
def test_the_command_exits_1_with_one_line(cases, pick):
    kind, damage = pick.split("-", 1)
    case, name = next((c, n) for c, n in cases.items()
                      if n.endswith(f".{kind}") and f"-{damage}" in c.name)
    done = subprocess.run(["Rscript", str(REPORT_R), str(case), "--no-pdf"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("report.R: ") and name in lines[0], \
        done.stderr
