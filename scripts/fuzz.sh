#!/usr/bin/env bash
# scripts/fuzz.sh SECONDS: every fuzz target (tests/fuzz/) for SECONDS each,
# from its seed corpus in the repository, on a scratch copy so the seeds stay
# as committed. One line a target: its runs, new inputs and crashes. Exit 1
# on any crash, leak or sanitizer report; the input that caused it is kept in
# .cache/fuzz/<target>/. make fuzz runs each for 60 s, make test for 8 s.
#   FUZZ_BUILD  the build directory (default build-fuzz; configured here)
#   FUZZ_BIN    the targets' directory (default FUZZ_BUILD/bin, built here)
#   FUZZ_CORPUS the seed corpora (default tests/fuzz/corpus)
#   FUZZ_WORK   the scratch corpora and crash inputs (default .cache/fuzz)
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:?usage: scripts/fuzz.sh SECONDS}
build=${FUZZ_BUILD:-build-fuzz}
bin=${FUZZ_BIN:-}
corpus=${FUZZ_CORPUS:-tests/fuzz/corpus}
if [ -z "$bin" ]; then
    bin=$build/bin
    cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DNOISEBENCH_FUZZ=ON -DNOISEBENCH_MPI=OFF \
          -DNOISEBENCH_OPENMP=OFF -DNOISEBENCH_ANALYSIS=OFF -DNOISEBENCH_WERROR=ON >/dev/null \
        && cmake --build "$build" --target fuzz_targets -j "$(nproc)" >/dev/null \
        || { echo "fuzz: the targets did not build (clang and libclang-rt-*-dev: scripts/setup.sh test)"; exit 2; }
fi
failed=0 total=0
for target in "$bin"/fuzz_*; do
    name=$(basename "$target")
    # the command-line targets, one a kernel, share one corpus
    seeds=$corpus/${name#fuzz_}
    [[ $name == fuzz_options_* ]] && seeds=$corpus/options
    if [ ! -d "$seeds" ]; then
        echo "fuzz: $name has no seed corpus $seeds"; failed=1; continue
    fi
    work=${FUZZ_WORK:-.cache/fuzz}/$name
    rm -rf "$work" && mkdir -p "$work/corpus"
    cp "$seeds"/* "$work/corpus/"
    "$target" -max_total_time="$seconds" -close_fd_mask=3 -artifact_prefix="$work/" \
        "$work/corpus" >"$work/log" 2>&1
    rc=$?
    runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$work/log")
    found=$(( $(ls "$work/corpus" | wc -l) - $(ls "$seeds" | wc -l) ))
    crashes=$(ls "$work" | grep -c -E '^(crash|leak|timeout|oom)-')
    total=$((total + ${runs:-0}))
    if [ "$rc" -ne 0 ] || [ -z "$runs" ]; then
        failed=1
        echo "fuzz: $name FAILED (exit $rc, $crashes crash input(s) in $work/): $(grep -m1 -E 'ERROR|SUMMARY' "$work/log")"
    else
        echo "fuzz: $name: $runs runs in $seconds s, $found new inputs, 0 crashes"
    fi
done
echo "fuzz: $total runs in all; $([ $failed = 0 ] && echo "0 crashes" || echo FAILED)"
exit $failed
