#!/usr/bin/env python3
"""scripts/commands_doc.py BIN_DIR [OUT]: writes docs/commands.md, the
reference of every command noisebench installs, from each one's --help.
The options are the binaries' own words, so the page cannot drift from
them: tests/test_docs.py fails when the page differs from what this
script writes now."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KERNELS = json.loads((ROOT / "src" / "kernels" / "kernels.json").read_text())["kernels"]

HEAD = """# Commands

Every command `make` builds into `build/bin/` and `cmake --install` puts in
`PREFIX/bin/`. Each section is the command's `--help`, written here by
`scripts/commands_doc.py`; do not edit it by hand.

The kernels share one driver, so they share most options. Each kernel also
comes as `<kernel>_mpi`, one MPI rank per core, with the same options. FWQ
and FTQ also come as `<kernel>_omp` (OpenMP) and as `t_fwq` and `t_ftq`,
the names of Sequoia's threaded binaries. [kernels.md](kernels.md) and
[psnap-selfish.md](psnap-selfish.md) say what they write.
"""
# the commands beside the kernels: what each is for, in a sentence
TOOLS = {
    "noise-info": "Calibrates the timer and describes the machine.",
    "noise-check": "Checks every CPU of a node against the site's limits "
                   "([site.md](site.md)).",
    "noise-report": "Writes the report, compares two surveys, predicts the slowdown at "
                    "scale ([analysis.md](analysis.md)).",
    "bsp": "A bulk-synchronous application, to check the predicted slowdown against.",
    "noise-slowdown": "Makes a CPU run slow on record, to check that a kernel reports it.",
    "noise-simulate": "The slowdown at scale, event by event, where the model does not hold.",
}


def help_text(bin_dir, name):
    done = subprocess.run([str(bin_dir / name), "--help"], capture_output=True, text=True,
                          timeout=60)
    if done.returncode != 0:
        sys.exit(f"commands_doc.py: {name} --help exited {done.returncode}")
    return done.stdout.rstrip("\n")


def page(bin_dir):
    parts = [HEAD]
    for kernel, info in KERNELS.items():
        parts.append(f"## {kernel}\n\n{info['title'][0].upper() + info['title'][1:]}.\n\n```text\n"
                     f"{help_text(bin_dir, kernel)}\n```\n")
    for tool, what in TOOLS.items():
        parts.append(f"## {tool}\n\n{what}\n\n```text\n{help_text(bin_dir, tool)}\n```\n")
    return "\n".join(parts)


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: scripts/commands_doc.py BIN_DIR [OUT]")
    out = Path(sys.argv[2]) if len(sys.argv) == 3 else ROOT / "docs" / "commands.md"
    out.write_text(page(Path(sys.argv[1])))
