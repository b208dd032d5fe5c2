#!/bin/sh
# Runs one kernel command and leaves how it ended in job_status, for the
# result table: "status=ok", "status=failed exit=N" or "status=killed" (the
# kernel keeps what it measured; Slurm's time limit and scancel send TERM).
# A killed Slurm job also touches JUBE's error file (NB_ERROR_FILE), which the
# job script itself can no longer reach.
#   run_kernel.sh COMMAND [ARGS...]
trap 'echo "status=killed signal=TERM" > job_status
      [ -n "${NB_ERROR_FILE:-}" ] && touch "$NB_ERROR_FILE"
      exit 143' TERM INT
"$@"
rc=$?
if [ "$rc" -eq 0 ]; then
  echo "status=ok" > job_status
else
  echo "status=failed exit=$rc" > job_status
fi
exit "$rc"
