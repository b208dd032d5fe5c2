"""The layers that serve every kernel name none (docs/kernels.md): what a
kernel is, they read from the catalogue, src/kernels/kernels.json. A kernel's
name may be written in its own files only: those whose name carries it
(src/kernels/psnap.c, analysis/R/psnap.R, jube/psnap.xml,
tests/nbtest/selfish.py), and the few places an original tool's format or a
place outside the project demands it (ALLOWED). The name is looked for in
any case and inside identifiers (NB_STREAM_FWQ, ftq_spectrum), outside
comments."""
import re

from nbtest import KERNELS, ROOT

# the shared layers: the R package, JUBE, ReFrame, the C library, driver and
# tools, the scripts, and the tests' helpers and fixtures
SHARED = ["analysis/R/*.R", "analysis/inst/*.R", "jube/**/*.xml", "jube/**/*.py", "jube/**/*.sh",
          "reframe/noisebench_reframe/*.py", "reframe/checks/**/*.py", "src/driver/*",
          "src/lib/**/*.[ch]", "src/tools/*", "src/work/*", "scripts/*", "tests/nbtest/*.py",
          "tests/conftest.py"]
# file: why a kernel's name is written there
ALLOWED = {
    "jube/noise.xml": "JUBE includes files by name: the survey names each kernel's",
    "jube/include/soak.xml": "JUBE names steps and parameter sets literally: one a streamed kernel",
    "src/tools/noise_check.c": "noise-check is the selfish detour run as a node health check",
    "src/tools/check_limits.c": "limits from a survey take noise-check's own kernel's runs apart",
    "tests/test_check.py": "noise-check is the selfish detour run as a node health check",
    "tests/test_kernel_names.py": "the reasons above name the kernel a tool is",
    "tests/test_psnap_recipe.py": "the recipe it runs is docs/psnap-selfish.md's",
    "tests/test_docs.py": "it lists the docs' pages by name, docs/psnap-selfish.md among them",
    "tests/test_report_browser.py": "its 8,192-rank page is benchmarks/survey.R's synthetic "
                                    "survey, which writes FWQ's runs only (nbtest/fwq_survey.py)",
}
# the tests: a test of one kernel's behaviour goes in that kernel's file
# (tests/test_fwq.py), one of a shared layer takes its kernels from the
# catalogue (nbtest.KERNELS, quick_args, kernels_where). R's unit tests
# (analysis/tests/testthat) are not read: they build runs in each kernel's
# own format, 341 names in 26 files, and stay to be sorted the same way.
TESTS = ["tests/test_*.py"]
LINE, C = r"#[^\n]*", r"//[^\n]*|/\*.*?\*/"
# docstrings are comments too
COMMENT = {".R": LINE, ".py": LINE + r'|""".*?"""', ".sh": LINE, ".xml": r"<!--.*?-->",
           ".c": C, ".h": C}


def code_of(path):
    """The file without its comments: they may say which kernels do what."""
    text = path.read_text()
    rule = COMMENT.get(path.suffix, LINE if text.startswith("#!") else None)
    if rule:
        text = re.sub(rule, lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return text


def own(path, kernel):
    return re.search(rf"(^|[^a-z]){kernel}([^a-z]|$)", path.name) is not None


def named(root=ROOT, patterns=SHARED):
    word = re.compile("|".join(KERNELS), re.I)
    found = []
    for pattern in patterns:
        for path in sorted(root.glob(pattern)):
            rel = path.relative_to(root).as_posix()
            if not path.is_file() or rel in ALLOWED or "__pycache__" in rel:
                continue
            for number, line in enumerate(code_of(path).splitlines(), 1):
                for name in {m.lower() for m in word.findall(line)}:
                    if not own(path, name):
                        found.append(f"{rel}:{number}: {name}: {line.strip()}")
    return found


def test_no_kernel_named_outside_its_files():
    found = named()
    assert not found, f"{len(found)} kernel names outside their kernels' files " \
        "(read the catalogue instead):\n" + "\n".join(found)


def test_no_test_names_a_kernel_outside_its_file():
    found = named(patterns=TESTS)
    assert not found, f"{len(found)} kernel names in tests outside their kernels' files " \
        "(read the catalogue, or move the test into its kernel's file):\n" + "\n".join(found)


def test_the_check_sees_a_kernel_named(tmp_path):
    """The rule can fail: a branch on a kernel's name in the R package, and
    not in the kernel's own R file nor in a comment."""
    (tmp_path / "analysis/R").mkdir(parents=True)
    k = next(iter(KERNELS))
    (tmp_path / "analysis/R/noise.R").write_text(f'# {k} is fine here\nx <- y == "{k}"\n')
    (tmp_path / f"analysis/R/{k}.R").write_text(f'x <- y == "{k}"\n')
    assert named(tmp_path) == [f'analysis/R/noise.R:2: {k}: x <- y == "{k}"']


def test_the_check_sees_a_name_in_any_case_and_inside_an_identifier(tmp_path):
    """NB_STREAM_<KERNEL> in the C library and <kernel>_sweep in JUBE's XML."""
    (tmp_path / "src/lib/output").mkdir(parents=True)
    (tmp_path / "jube/include").mkdir(parents=True)
    k = next(iter(KERNELS))
    (tmp_path / "src/lib/output/stream.h").write_text(f"enum {{ NB_STREAM_{k.upper()} }};\n")
    (tmp_path / "jube/include/parameters.xml").write_text(
        f'<!-- {k} -->\n<parameterset name="{k}_sweep"/>\n')
    assert named(tmp_path) == [
        f'jube/include/parameters.xml:2: {k}: <parameterset name="{k}_sweep"/>',
        f"src/lib/output/stream.h:1: {k}: enum {{ NB_STREAM_{k.upper()} }};"]
