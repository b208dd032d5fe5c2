"""The tests' helpers, a module a job: lines (the kernels' result lines and
their reduction), launch (MPI's environment, the launchers), verdicts
(cannot tell today), kernel_files (a run's files), ground_truth (injections
matched to what a kernel measured), competitor (noise made on purpose),
speed (running slow told from detours), tails (a run's tails against its
files), loops (the measured loops' machine code), bad_input and sigterm
(a kernel's bad options, a kernel cut by SIGTERM), jube_runs, browser
(Chromium over DevTools); selfish (what only the selfish detour's runs
need). Each takes its kernels from the catalogue or from its caller: a test
of one kernel lives in that kernel's test file. conftest.py holds the
fixtures."""
import json
import math
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
# the kernel catalogue: what each kernel is, for the tests that run them all
CATALOGUE = json.loads((ROOT / "src" / "kernels" / "kernels.json").read_text())
KERNELS = CATALOGUE["kernels"]
# the work kinds that build on this machine's processor, in the catalogue's order
WORK_KINDS = [kind for kind, info in CATALOGUE["work_kinds"].items()
              if os.uname().machine in info.get("arch", [os.uname().machine])]


def sweep_points(kernel, kinds=WORK_KINDS, fixed=()):
    """The points of a kernel's catalogue sweep on one core count (JUBE's
    workpackages, ReFrame's checks): the product of its lists, `kinds` for
    a work of null (every work kind that builds here), less the keys a
    preset fixes."""
    return math.prod(len(kinds) if key == "work" and v is None else
                     len(v) if isinstance(v, list) else 1
                     for key, v in KERNELS[kernel].get("sweep", {}).items() if key not in fixed)


def quick_args(kernel):
    """The catalogue's arguments for a short run of the kernel (under a second)."""
    return list(KERNELS[kernel]["quick_args"])


def shape_args(kernel):
    """The catalogue's arguments for a short run without its length (-n or
    --seconds): the shape of a sample, for a run whose length --seconds
    gives."""
    args, shape = quick_args(kernel), []
    while args:
        flag = args.pop(0)
        if flag in ("-n", "--seconds"):
            args.pop(0)
        else:
            shape.append(flag)
    return shape


def kernels_where(**fields):
    """The kernels whose catalogue entry has these values."""
    return [k for k, info in KERNELS.items() if all(info.get(f) == v for f, v in fields.items())]


# the kernel of the tests of a shared layer that need a run of one kernel,
# any: the catalogue's first
ANY_KERNEL = next(iter(KERNELS))
# the kernels that time samples of a work loop (-n samples, --work), not
# one that records detours
SAMPLING = kernels_where(samples_per_rank="samples")
# the OpenMP front ends' binaries, of the kernels the catalogue builds with one
OPENMP = [f"{k}_omp" for k in kernels_where(openmp=True)]
# the R package's command lines
REPORT_R, PREDICT_R, ACCEPTANCE_R = (ROOT / "analysis" / "inst" / name
                                     for name in ("report.R", "predict.R", "acceptance.R"))
