#!/usr/bin/env bash
# A short noise survey of this machine (`make run`): jube/noise.xml run here,
# without a scheduler, on the kernels in BIN_DIR: FWQ with each work kind,
# FTQ at 10 and 7 kHz (not multiples of each other: brho's FTQ notes' two-frequency
# test), P-SNAP and the selfish detour, each on 1, 2, 4, ... and every CPU.
# A few minutes. Writes results/<host>-YYYYMMDD-HHMMSS/ (the machine, JUBE's run, its
# tables) and the report of it all (analysis/inst/report.R), and prints where.
#   scripts/survey.sh BIN_DIR [OUT_DIR]
set -euo pipefail
bin=$(cd "${1:?usage: survey.sh BIN_DIR [OUT_DIR]}" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
out=${2:-results/$(hostname -s)-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(cd "$out" && pwd)

"$bin/noise-info" > "$out/machine.txt"
"$bin/noise-info" --json > "$out/machine.json"
echo "noisebench survey of $(hostname -s): $(nproc) CPUs, results in $out"

NOISEBENCH_BIN_DIR=$bin jube run "$here/jube/noise.xml" --outpath "$out/jube" > "$out/jube.log"
grep -A 7 'stepname' "$out/jube.log"
jube result "$out/jube" --id last > "$out/tables.txt"
jube result "$out/jube" --id last -s csv > "$out/tables.csv"
echo
echo "== noise survey: $out"
# the tables (tables.csv holds them as csv)
grep -v '^$' "$out/tables.txt"
# what each kernel's headline figure is, from the catalogue
python3 -c 'import json, sys
for k in json.load(open(sys.argv[1]))["kernels"].values():
    print("%s: %s, %s" % (k["label"], k["headline"]["name"], k["headline"]["about"]))' \
    "$here/src/kernels/kernels.json"
Rscript "$here/analysis/inst/report.R" "$out"
