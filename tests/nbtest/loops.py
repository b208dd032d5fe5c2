"""The measured loops read from their machine code (`make asm`): each
function's address and body, and the innermost loop of a body."""
import os
import re
import subprocess

import pytest


def measured_loops(build_dir, names):
    """{function: (address, body)} of the functions of the work-loop objects
    whose names match the regular expression names. Skips under the
    sanitizers, which instrument the loops on purpose."""
    if os.environ.get("NB_SANITIZE"):
        pytest.skip("sanitizer builds instrument the loops on purpose")
    subprocess.run(["cmake", "--build", build_dir, "--target", "asm"], check=True,
                   capture_output=True)
    text = (build_dir / "asm" / "work-loops.s").read_text()
    found = {}
    loop = rf"^([0-9a-f]+) <({names})>:\n(.*?)(?=^[0-9a-f]+ <|\Z)"
    for m in re.finditer(loop, text, re.S | re.M):
        found[m.group(2)] = (int(m.group(1), 16), m.group(3))
    return found


def opcodes(body):
    return re.findall(r"^\s*[0-9a-f]+:\s+(\S+)", body, re.M)


def timer_reads_fenced(body):
    """For each timer read (rdtsc) of a body, whether an lfence comes just
    before it."""
    ops = opcodes(body)
    return [ops[i - 1] == "lfence" for i, op in enumerate(ops) if op == "rdtsc"]


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
