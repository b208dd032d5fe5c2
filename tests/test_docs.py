"""The user docs hold up (docs/testing.md, "The docs' examples"): every shell
example runs as pasted in a fresh clone, the command reference is the
binaries' own --help, sentences average 25 words or fewer, dated figures
live in benchmarks/RESULTS.md only, and nothing advised could harm a
production node."""
import os
import re
import subprocess
import sys

import pytest
from nbtest import ROOT

DOCS = sorted([ROOT / "README.md", ROOT / "DESCRIPTION.md", *(ROOT / "docs").rglob("*.md")])
# an example that needs what a test machine lacks, each followed by its
# local equivalent (marked "here"), which runs instead
ELSEWHERE = {"cluster": "a real cluster", "long": "hours or days", "spack": "Spack"}
# pages whose examples change the checkout (a version, a tag): each runs in
# a clone of the built one of its own
OWN_CLONE = {"docs/releasing.md"}

FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>\w*)\s*$")
MARK = re.compile(r"^\s*<!-- example: (\w+) -->\s*$")


def shell_blocks(path):
    """[(line number, marker or None, text)] of each ```sh block."""
    lines, blocks, i = path.read_text().splitlines(), [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, body = i, []
        i += 1
        while i < len(lines) and not FENCE.match(lines[i]):
            body.append(lines[i][len(m.group("indent")):])
            i += 1
        i += 1
        if m.group("lang") == "sh":
            before = next((x for x in reversed(lines[:start]) if x.strip()), "")
            mark = MARK.match(before)
            blocks.append((start + 1, mark.group(1) if mark else None, "\n".join(body)))
    return blocks


def test_every_example_is_marked_as_the_rules_say():
    wrong = []
    for path in DOCS:
        blocks = shell_blocks(path)
        for k, (line, mark, text) in enumerate(blocks):
            where = f"{path.relative_to(ROOT)}:{line}"
            if mark not in (None, "here", "ci", *ELSEWHERE):
                wrong.append(f"{where}: unknown marker {mark}")
            if mark in ELSEWHERE and (k + 1 == len(blocks) or blocks[k + 1][1] != "here"):
                wrong.append(f"{where}: a {mark} example with no local one after it")
            if mark == "here" and (k == 0 or blocks[k - 1][1] not in ELSEWHERE):
                wrong.append(f"{where}: a local example of no cluster example")
            if mark == "ci" and "make test" not in text:
                wrong.append(f"{where}: only make test is left to CI")
    assert not wrong, "\n".join(wrong)


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    """A fresh clone of this commit, built by `make`, as a new user has it."""
    top = tmp_path_factory.mktemp("docs") / "noisebench"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(top)], check=True)
    # the test tools scripts/setup.sh test made, as the docs assume
    (top / ".venv").symlink_to(ROOT / ".venv")
    done = subprocess.run(["make"], cwd=top, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return top


@pytest.mark.harness
@pytest.mark.skipif(bool(os.environ.get("NB_SANITIZE")), reason="the clone builds its own")
@pytest.mark.parametrize("page", [p.relative_to(ROOT).as_posix()
                                  for p in DOCS if shell_blocks(p)])
def test_the_examples_run_as_pasted(clone, page, tmp_path):
    where = clone
    if page in OWN_CLONE:
        where = tmp_path / "noisebench"
        subprocess.run(["git", "clone", "-q", str(clone), str(where)], check=True)
        (where / ".venv").symlink_to(ROOT / ".venv")
    # the clone's own ReFrame results database and a committer, so that
    # nothing lands in the home directory and a commit needs no git config;
    # JUBE and ReFrame take the kernels `make` built, as they take an
    # installed noisebench's (their own builds: test_fwq_doors.py,
    # test_ftq_doors.py, test_reframe.py)
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "NOISEBENCH_BIN_DIR": str(clone / "build" / "bin"),
           "RFM_SQLITE_DB_FILE": str(where / ".reframe-results.db"),
           "GIT_AUTHOR_NAME": "docs test", "GIT_AUTHOR_EMAIL": "docs@test.invalid",
           "GIT_COMMITTER_NAME": "docs test", "GIT_COMMITTER_EMAIL": "docs@test.invalid"}
    for line, mark, text in shell_blocks(ROOT / page):
        if mark in ("ci", *ELSEWHERE):
            continue
        done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", text], cwd=where, env=env,
                              capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, f"{page}:{line}: exit {done.returncode}\n{text}\n" \
            f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}"


def test_the_command_reference_is_the_binaries_help(bin_dir, tmp_path):
    if os.environ.get("NB_SANITIZE"):
        pytest.skip("the reference is the release build's help")
    out = tmp_path / "commands.md"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "commands_doc.py"), str(bin_dir),
                    str(out)], check=True, timeout=300)
    assert out.read_text() == (ROOT / "docs" / "commands.md").read_text(), \
        "docs/commands.md is out of date: scripts/commands_doc.py build/bin"


def sentences(text):
    """The word counts of a page's sentences: prose only, not code,
    tables, headings or list markers."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    units, unit = [], []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(("|", "#", "![")):
            units.append(" ".join(unit))
            unit = []
            continue
        item = re.match(r"^(?:[-*]|\d+\.)\s+(.*)$", stripped)
        if item:
            units.append(" ".join(unit))
            unit = [item.group(1)]
        else:
            unit.append(stripped)
    units.append(" ".join(unit))
    counts = []
    for u in units:
        u = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", u)
        # a code span counts as one word, and may begin a sentence
        u = re.sub(r"`[^`]*`", "X", u)
        for s in re.split(r"(?<=[.!?])\s+(?=[A-Z`*(\"'])", u):
            if len(s.split()) >= 2:
                counts.append(len(s.split()))
    return counts


def test_sentences_average_25_words_or_fewer():
    pages = DOCS
    averages = {p.relative_to(ROOT).as_posix(): sum(c) / len(c)
                for p in pages if (c := sentences(p.read_text()))}
    long = {p: round(a, 1) for p, a in averages.items() if a > 25}
    assert not long, long
    every = [n for p in pages for n in sentences(p.read_text())]
    assert sum(every) / len(every) <= 25


def test_no_page_has_a_sentence_over_40_words():
    long = [f"{p.relative_to(ROOT)}: {n} words" for p in DOCS
            for n in sentences(p.read_text()) if n > 40]
    assert not long, "\n".join(long)


def test_the_sentence_counter_can_fail():
    assert sentences("One two three. Four five.\n\n- six seven eight\n") == [3, 2, 3]
    assert sentences(" ".join(["word"] * 40) + ".") == [40]
    assert sentences("One two. `code` three four.") == [2, 3]


def anchors(page):
    """The sections a link can point to in a page: its headings as GitHub
    makes them anchors, and its explicit <a id="...">."""
    text = page.read_text()
    found = set(re.findall(r'<a id="([^"]+)"', text))
    for heading in re.findall(r"^#{1,6}\s+(.*)$", re.sub(r"```.*?```", "", text, flags=re.S),
                              flags=re.M):
        found.add(re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-"))
    return found


# paths the pages name that their own examples make
MADE = ("jube/runs/", "jube/platforms/mysystem", "results/")


def broken_links(pages):
    """What the pages point at that is not there: a link's file or section,
    or a file of the checkout a page names in code."""
    wrong = []
    for page in pages:
        text = page.read_text()
        for target in re.findall(r"\]\(([^)\s]+)\)", re.sub(r"```.*?```", "", text, flags=re.S)):
            if re.match(r"^[a-z]+:", target):
                continue
            name, _, section = target.partition("#")
            dest = (page.parent / name).resolve() if name else page
            if not dest.exists():
                wrong.append(f"{page.name}: a link to {target}, which is missing")
            elif section and dest.suffix == ".md" and section not in anchors(dest):
                wrong.append(f"{page.name}: a link to {target}, a section that is missing")
        for named in re.findall(r"`((?:tests|benchmarks|scripts|src|analysis|jube|reframe|site|"
                                r"spack-repo)/[\w./-]+)`", text):
            if not named.startswith(MADE) and not any(
                    (base / named).exists() for base in (ROOT, ROOT / "analysis")):
                wrong.append(f"{page.name}: names {named}, which is missing")
    return wrong


def test_every_link_and_named_file_is_there():
    """A page cannot point at a test, a file or a section that is gone."""
    wrong = broken_links([*DOCS, ROOT / "benchmarks" / "RESULTS.md"])
    assert not wrong, "\n".join(wrong)


def test_the_link_checker_can_fail(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# A page\n\n## Its part (`--x`)\n\n[ok](#its-part---x) [gone](#nowhere) "
                    "[none](none.md) `tests/test_docs.py` `tests/test_gone.py`\n")
    assert anchors(page) == {"a-page", "its-part---x"}
    assert broken_links([page]) == ["page.md: a link to #nowhere, a section that is missing",
                                    "page.md: a link to none.md, which is missing",
                                    "page.md: names tests/test_gone.py, which is missing"]


def test_dated_figures_are_in_results_only():
    date = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b|\b\d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|"
                      r"Sep|Oct|Nov|Dec)[a-z]* 20\d\d\b")
    found = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
             for p in DOCS for n, line in enumerate(p.read_text().splitlines(), 1)
             if date.search(re.sub(r"results/[\w.-]+", "", line))]
    assert not found, "\n".join(found)


# what must never be pasted onto a production node
HARMFUL = [r"\bpkill\b", r"\bkillall\b", r"rm -rf /(\s|$)", r"\breboot\b", r"systemctl stop",
           r"echo \S+ > /proc/sys", r"\bscancel -u\b"]


def test_nothing_advised_could_harm_a_production_node():
    # a comment runs nothing
    found = [f"{p.relative_to(ROOT)}:{line}" for p in DOCS for line, _, text in shell_blocks(p)
             if any(re.search(h, re.sub(r"(^|\s)#.*", "", text, flags=re.M)) for h in HARMFUL)]
    prose = [f"{p.relative_to(ROOT)}: {h}" for p in DOCS for h in (r"\bpkill\b", r"\bkillall\b")
             if re.search(h, p.read_text())]
    assert not found and not prose, found + prose
