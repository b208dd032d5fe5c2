"""The tests' helpers, a module a job: lines (the kernels' result lines and
their reduction), launch (MPI's environment, the launchers), verdicts
(cannot tell today), kernel_files (a run's files), ground_truth (injections
matched to what a kernel measured), competitor (noise made on purpose),
jube_runs, browser (Chromium over DevTools). conftest.py holds the fixtures."""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
# the R package's command lines
REPORT_R, PREDICT_R, ACCEPTANCE_R = (ROOT / "analysis" / "inst" / name
                                     for name in ("report.R", "predict.R", "acceptance.R"))
