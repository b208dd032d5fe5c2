"""The work loops, read from their machine code (`make asm`).

Nothing but the work, the timer read, a compare and a store: no call can hide
in them, and each starts on its own page. The detour loop's are its own
kernel's tests'."""
import json
import os
import subprocess

import pytest
from nbtest import WORK_KINDS
from nbtest.loops import inner_loop, measured_loops, timer_reads_fenced

pytestmark = pytest.mark.release


@pytest.fixture(scope="module")
def functions(build_dir):
    return measured_loops(build_dir, r"nb_fixed_(?:work|time)_\w+")


def test_every_kind_has_both_loops(functions):
    assert set(functions) == {f"nb_fixed_{k}_{w}" for k in ("work", "time") for w in WORK_KINDS}


def test_loops_call_nothing_and_fence_the_timer(functions):
    """The work loops fence every read: the work must not drift past it."""
    for name, (addr, body) in functions.items():
        assert "call" not in body, f"{name} calls out of its measured loop"
        if os.uname().machine == "x86_64":
            fenced = timer_reads_fenced(body)
            assert len(fenced) >= 2, name
            assert all(fenced), f"{name}: rdtsc without lfence"


def test_loops_are_page_aligned(functions):
    for name, (addr, _) in functions.items():
        assert addr % 4096 == 0, f"{name} at {addr:#x}"


def test_asm_loop_is_the_llnl_loop(functions):
    """The ASM work loop is the Sequoia/LLNL x86-64 loop: incq, 16 nops,
    cmpq $0 and js, one work loop an iteration."""
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
