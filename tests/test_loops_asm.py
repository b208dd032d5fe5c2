"""The measured loops, read from their machine code (`make asm`).

Nothing but the work, the timer read, a compare and a store: no call can hide
in them, and each starts on its own page."""
import json
import os
import re
import subprocess

import pytest
from nbtest import WORK_KINDS

pytestmark = pytest.mark.release


@pytest.fixture(scope="module")
def functions(build_dir):
    if os.environ.get("NB_SANITIZE"):
        pytest.skip("sanitizer builds instrument the loops on purpose")
    subprocess.run(["cmake", "--build", build_dir, "--target", "asm"], check=True,
                   capture_output=True)
    text = (build_dir / "asm" / "work-loops.s").read_text()
    found = {}
    loop = r"^([0-9a-f]+) <(nb_fixed_(?:work|time)_\w+|nb_selfish_\w+)>:\n(.*?)(?=^[0-9a-f]+ <|\Z)"
    for m in re.finditer(loop, text, re.S | re.M):
        found[m.group(2)] = (int(m.group(1), 16), m.group(3))
    return found


def test_every_kind_has_both_loops(functions):
    assert set(functions) == {f"nb_fixed_{k}_{w}" for k in ("work", "time") for w in WORK_KINDS} | {
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


def inner_loop(body):
    """The instructions of a function's innermost loop: those from the
    target of its shortest backward branch to the branch."""
    lines = re.findall(r"^\s*([0-9a-f]+):\s+(\S+)[ \t]*([^\s<]*)", body, re.M)
    ops = [(int(a, 16), op, arg) for a, op, arg in lines]
    best = None
    for i, (addr, op, arg) in enumerate(ops):
        target = re.match(r"([0-9a-f]+)", arg)
        if op.startswith("j") and target and int(target.group(1), 16) < addr:
            start = int(target.group(1), 16)
            loop = [o for a, o, _ in ops[:i + 1] if a >= start]
            if best is None or len(loop) < len(best):
                best = loop
    return best


def test_asm_loop_is_llnl_fwq_loop(functions):
    """The ASM work loop is the Sequoia/LLNL FWQ's x86-64 loop: incq, 16
    nops, cmpq $0 and js, one work loop an iteration."""
    if os.uname().machine != "x86_64":
        pytest.skip("x86-64 only")
    for name in ("nb_fixed_work_asm", "nb_fixed_time_asm"):
        loop = inner_loop(functions[name][1])
        assert loop == ["inc"] + ["nop"] * 16 + ["cmp", "js"], (name, loop)


def test_increment_loop_is_one_increment_and_its_loop(functions):
    """MULTIITER unset, as the Sequoia code has it: a work loop is one
    increment of a register counter, beside the loop's own count, compare
    and branch, and no memory reference."""
    if os.uname().machine != "x86_64":
        pytest.skip("x86-64 only")
    for name in ("nb_fixed_work_increment", "nb_fixed_time_increment"):
        loop = inner_loop(functions[name][1])
        assert len(loop) <= 4 and loop[-1].startswith("j"), (name, loop)
        assert sum(op in ("add", "inc") for op in loop) == 2, (name, loop)


def test_a_work_loop_takes_ticks_its_instructions_can_take(functions, bin_dir):
    """Each work loop's cost (noise-info, the fastest of its FWQ samples)
    against its instruction count from the machine code: between an issue
    width of 6 at a core clock 2.5 times the timer's and an IPC of 1/4 at
    the timer's clock. The ASM loop as its 19 instructions, MULTIITER as its
    63 steps and their loop (a unit of 64 ASM iterations, as before, is
    60 times off and fails)."""
    if os.uname().machine != "x86_64":
        pytest.skip("x86-64 only")
    info = json.loads(subprocess.run([bin_dir / "noise-info", "--json"], check=True,
                                     capture_output=True, text=True).stdout)
    for kind in ("asm", "multiiter", "increment"):
        instructions = len(inner_loop(functions[f"nb_fixed_work_{kind}"][1]))
        ticks = info["ticks_per_work_loop"][kind]
        assert instructions / 6 / 2.5 <= ticks <= instructions * 4, (kind, instructions, ticks)


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
