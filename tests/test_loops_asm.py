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
    """The work loops fence every read (the work must not drift past it);
    the selfish loops read unfenced on purpose (selfish_loop.c says why) and
    compare signed, so that two reads out of order are no detour."""
    for name, (addr, body) in functions.items():
        assert "call" not in body, f"{name} calls out of its measured loop"
        if os.uname().machine == "x86_64":
            ops = re.findall(r"^\s*[0-9a-f]+:\s+(\S+)", body, re.M)
            reads = [i for i, op in enumerate(ops) if op == "rdtsc"]
            assert len(reads) >= 2, name
            fenced = [ops[i - 1] == "lfence" for i in reads]
            if name.startswith("nb_selfish_"):
                assert not any(fenced), f"{name}: a fenced read in the selfish loop"
            else:
                assert all(fenced), f"{name}: rdtsc without lfence"


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


def test_selfish_loop_is_the_read_a_compare_and_rarely_a_store(functions):
    """The fast path of nb_selfish_loop: from one read to the next, at most a
    few instructions (the subtraction, the signed compare and its branch,
    the chunk counter), and the compare signed (jg/jle, not ja/jbe)."""
    if os.uname().machine != "x86_64":
        pytest.skip("x86-64 only")
    body = functions["nb_selfish_loop"][1]
    ops = re.findall(r"^\s*[0-9a-f]+:\s+(\S+)", body, re.M)
    reads = [i for i, op in enumerate(ops) if op == "rdtsc"]
    # the read inside the loop: the last one
    i = reads[-1]
    after = ops[i + 1:i + 12]
    jumps = [op for op in after if op.startswith("j")]
    assert jumps and jumps[0] in ("jg", "jle", "jge", "jl"), (jumps, after)
