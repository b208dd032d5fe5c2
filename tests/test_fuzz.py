"""The fuzz smoke (scripts/fuzz.sh, tests/fuzz/): every C parser has a fuzz
target, and the smoke fails on a crash and on a leak, keeping the input
that caused it. make test runs the smoke itself (test-fuzz)."""
import re
import shutil
import subprocess

import pytest
from nbtest import ROOT

FUZZ = ROOT / "tests" / "fuzz"
# the functions that read text from outside: options, lists, files, lines
PARSERS = ["nb_driver_parse", "nb_inject_parse", "nb_cpu_list_parse", "nb_rule_parse",
           "nb_requirements_read", "nb_requirements_judge", "nb_trace_parse_line",
           # noise-simulate's trace files
           "read_trace"]


def test_every_parser_has_a_target():
    declared = set()
    for header in (ROOT / "src").rglob("*.h"):
        declared |= set(re.findall(r"\b(nb_\w*parse\w*)\(", header.read_text()))
    # nb_parse_u64 and nb_parse_double are the options' numbers
    assert declared - {"nb_parse_u64", "nb_parse_double"} <= set(PARSERS), declared
    called = " ".join(p.read_text() for p in FUZZ.glob("fuzz_*.c"))
    assert [p for p in PARSERS if p not in called] == []
    # and each target has its seeds
    targets = re.findall(r"foreach\(parser ([\w ]+)\)", (FUZZ / "targets.cmake").read_text())[0]
    for name in targets.split() + ["options", "simulate_trace"]:
        assert list((FUZZ / "corpus" / name).iterdir()), name


PROOF = r"""
#include <stdlib.h>
#include <string.h>
int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)
{
	if (n >= 3 && !memcmp(d, "%s", 3)) {
%s
	}
	return 0;
}
"""


def test_a_crash_or_a_leak_fails_the_smoke(tmp_path):
    clang = shutil.which("clang")
    if clang is None:
        pytest.fail("no clang: scripts/setup.sh test installs it")
    bin_dir, corpus = tmp_path / "bin", tmp_path / "corpus"
    bin_dir.mkdir()
    bodies = {"overflow": ("BUG", "\t\tvolatile char b[4]; b[n + 8] = 1;"),
              "leak": ("LEK", "\t\tvolatile char *p = malloc(64); p[0] = 1;"),
              "quiet": ("NOP", "\t\t(void)n;")}
    for name, (trigger, body) in bodies.items():
        (tmp_path / f"{name}.c").write_text(PROOF % (trigger, body))
        subprocess.run([clang, "-g", "-fsanitize=fuzzer,address", str(tmp_path / f"{name}.c"),
                        "-o", str(bin_dir / f"fuzz_{name}")], check=True)
        (corpus / name).mkdir(parents=True)
        # the seed itself sets it off: no luck needed
        (corpus / name / "seed").write_text(trigger)
    done = subprocess.run([str(ROOT / "scripts" / "fuzz.sh"), "2"], capture_output=True,
                          text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "FUZZ_BIN": str(bin_dir),
                               "FUZZ_CORPUS": str(corpus), "FUZZ_WORK": str(tmp_path / "work")})
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert any(re.match(r"fuzz: fuzz_overflow FAILED .*AddressSanitizer", x) for x in lines), lines
    assert any(re.match(r"fuzz: fuzz_leak FAILED .*LeakSanitizer", x) for x in lines), lines
    assert any(re.match(r"fuzz: fuzz_quiet: \d+ runs in 2 s, \d+ new inputs, 0 crashes$", x)
               for x in lines), lines
    assert lines[-1].endswith("FAILED")
    for name in ("overflow", "leak"):
        kept = list((tmp_path / "work" / f"fuzz_{name}").glob("*-*"))
        assert [p.read_bytes()[:3] for p in kept if p.name != "log"] == \
            [bodies[name][0].encode()], kept
