"""The measured loops, read from their machine code (`make asm`).

Nothing but the work, the timer read, a compare and a store: no call can hide
in them, and each starts on its own page."""
import os
import re
import subprocess

import pytest


@pytest.fixture(scope="module")
def functions(build_dir):
    if os.environ.get("NB_SANITIZE"):
        pytest.skip("sanitizer builds instrument the loops on purpose")
    subprocess.run(["cmake", "--build", build_dir, "--target", "asm"], check=True,
                   capture_output=True)
    text = (build_dir / "asm" / "work-loops.s").read_text()
    found = {}
    for m in re.finditer(r"^([0-9a-f]+) <(nb_f[wt]q_\w+|nb_selfish_\w+)>:\n(.*?)(?=^[0-9a-f]+ <|\Z)",
                         text,
                         re.S | re.M):
        found[m.group(2)] = (int(m.group(1), 16), m.group(3))
    return found


def test_every_kind_has_both_loops(functions):
    kinds = {"multiiter", "daxpy"} | ({"asm"} if os.uname().machine == "x86_64" else set())
    assert set(functions) == {f"nb_{k}_{w}" for k in ("fwq", "ftq") for w in kinds} | {
        "nb_selfish_min_iteration", "nb_selfish_ordinary_iteration", "nb_selfish_loop"}


def test_loops_call_nothing_and_fence_the_timer(functions):
    for name, (addr, body) in functions.items():
        assert "call" not in body, f"{name} calls out of its measured loop"
        if os.uname().machine == "x86_64":
            ops = re.findall(r"^\s*[0-9a-f]+:\s+(\S+)", body, re.M)
            reads = [i for i, op in enumerate(ops) if op == "rdtsc"]
            assert len(reads) >= 2, name
            assert all(ops[i - 1] == "lfence" for i in reads), f"{name}: rdtsc without lfence"


def test_loops_are_page_aligned(functions):
    for name, (addr, _) in functions.items():
        assert addr % 4096 == 0, f"{name} at {addr:#x}"


def test_asm_loop_counts_down_in_its_own_register(functions):
    if os.uname().machine != "x86_64":
        pytest.skip("x86-64 only")
    body = functions["nb_fwq_asm"][1]
    inc = re.search(r"inc\s+%(\w+)", body).group(1)
    dec = re.search(r"dec\s+%(\w+)", body).group(1)
    assert inc != dec, "the work and the loop counter share a register"
    assert re.search(r"dec\s+%\w+\s*\n\s*[0-9a-f]+:\s+jne", body)
