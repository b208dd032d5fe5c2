#!/usr/bin/env bash
# The timing tests on a machine made noisy on purpose: tests/load.py takes
# 10-40% of every CPU in bursts of 10 us to 5 ms, and stretches at half speed,
# while the tests marked `timing` run REPEATS times in a row (default 3).
#   tests/under_load.sh [REPEATS] [--bad-day]   after `make` (release build in build/)
# Exits non-zero if any round failed; prints one line per round.
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${1:-3}
shift || true
mkdir -p .cache
export NB_BIN_DIR=${NB_BIN_DIR:-build/bin}
python3 tests/load.py --seconds 86400 "$@" &
load=$!
trap 'kill "$load" 2>/dev/null; wait "$load" 2>/dev/null || true' EXIT
failed=0
for round in $(seq 1 "$repeats"); do
  if .venv/bin/python -m pytest -q -p no:cacheprovider -m timing tests >".cache/under_load_$round.log" 2>&1; then
    echo "under load, round $round: $(tail -1 ".cache/under_load_$round.log")"
  else
    failed=1
    echo "under load, round $round FAILED: $(tail -1 ".cache/under_load_$round.log") (.cache/under_load_$round.log)"
  fi
done
exit $failed
