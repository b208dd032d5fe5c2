#!/bin/sh
# Runs one kernel command and leaves how it ended in job_status, for the
# result table: "status=ok", "status=failed exit=N" or "status=killed" (the
# kernel keeps what it measured; Slurm's time limit and scancel send TERM),
# and when it started and ended (s since the epoch), for the harness's own
# overhead. A killed Slurm job also touches JUBE's error file
# (NB_ERROR_FILE), which the job script itself no longer reaches.
#   run_kernel.sh COMMAND [ARGS...]
started=$(date +%s.%N)
killed() {
  echo "status=killed signal=$1 started=$started ended=$(date +%s.%N)" > job_status
  [ -n "${NB_ERROR_FILE:-}" ] && touch "$NB_ERROR_FILE"
  exit "$2"
}
trap 'killed TERM 143' TERM
trap 'killed INT 130' INT
"$@"
rc=$?
if [ "$rc" -eq 0 ]; then
  outcome="status=ok"
else
  outcome="status=failed exit=$rc"
fi
echo "$outcome started=$started ended=$(date +%s.%N)" > job_status
exit "$rc"
