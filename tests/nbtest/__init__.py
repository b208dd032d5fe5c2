"""The tests' helpers, a module a job: lines (the kernels' result lines and
their reduction), launch (MPI's environment, the launchers), verdicts
(cannot tell today), kernel_files (a run's files), ground_truth (injections
matched to what a kernel measured), competitor (noise made on purpose),
jube_runs, browser (Chromium over DevTools); selfish (what only the selfish
detour's runs need). conftest.py holds the fixtures."""
import json
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
# the kernel catalogue: what each kernel is, for the tests that run them all
CATALOGUE = json.loads((ROOT / "src" / "kernels" / "kernels.json").read_text())
KERNELS = CATALOGUE["kernels"]
# the work kinds that build on this machine's processor, in the catalogue's order
WORK_KINDS = [kind for kind, info in CATALOGUE["work_kinds"].items()
              if os.uname().machine in info.get("arch", [os.uname().machine])]


def quick_args(kernel):
    """The catalogue's arguments for a short run of the kernel (under a second)."""
    return list(KERNELS[kernel]["quick_args"])


def kernels_where(**fields):
    """The kernels whose catalogue entry has these values."""
    return [k for k, info in KERNELS.items() if all(info.get(f) == v for f, v in fields.items())]


# the OpenMP front ends' binaries, of the kernels the catalogue builds with one
OPENMP = [f"{k}_omp" for k in kernels_where(openmp=True)]
# the R package's command lines
REPORT_R, PREDICT_R, ACCEPTANCE_R = (ROOT / "analysis" / "inst" / name
                                     for name in ("report.R", "predict.R", "acceptance.R"))
