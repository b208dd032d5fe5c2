#!/usr/bin/env bash
# A short noise survey of this machine (`make run`): FWQ with every work kind
# compiled in, FTQ at two sampling frequencies that are not multiples of each
# other (10 kHz and 7 kHz, seed 003), P-SNAP and the selfish detour, on every
# CPU this process may use (threads: no MPI needed). About a minute. Writes
# results/<host>-<date>/ and its report (analysis/report.R), and prints where.
#   scripts/survey.sh BIN_DIR [OUT_DIR]
set -euo pipefail
bin=$(cd "${1:?usage: survey.sh BIN_DIR [OUT_DIR]}" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
out=${2:-results/$(hostname -s)-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
cd "$out"

"$bin/noise-info" > machine.txt
"$bin/noise-info" --json > machine.json
echo "noisebench survey of $(hostname -s): $(grep -c ^processor /proc/cpuinfo) CPUs, results in $out"

# Work per FWQ sample: about 70-100 us for each kind on a ~3 GHz core.
declare -A bits=([multiiter]=12 [asm]=12 [daxpy]=9)
for work in $(awk '/^work loop/ {print $3}' machine.txt); do
  "$bin/fwq" -t 0 --work "$work" -w "${bits[$work]:-12}" -n 80000 -o "fwq_$work" | tee -a survey.log
done
"$bin/ftq" -t 0 --freq 10000 -n 100000 -o ftq_10khz | tee -a survey.log
"$bin/ftq" -t 0 --freq 7000 -n 70000 -o ftq_7khz | tee -a survey.log
"$bin/psnap" -t 0 -n 5000 -w 500 -o psnap | grep -v '^[0-9]' | tee -a survey.log
"$bin/selfish" -t 0 --seconds 5 --detours 1000000 -o selfish | tee -a survey.log

# One table of what the summaries said, per kernel run and thread.
awk '/^summary /{
  for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
  printf "%-5s %-9s thread %-3s cpu %-3s samples %-7s scaled noise mean %.4f%%\n",
         f["kernel"], f["work"], f["thread"], f["cpu"], f["samples"],
         100 * f["scaled_noise_mean"]
}' survey.log > summary.txt
grep -E '^(psnap|selfish) summary ' survey.log >> summary.txt
echo
echo "== noise survey: $out"
cat summary.txt
echo "(FWQ: mean of (t - min)/min; FTQ: mean share of work missing against the best quantum;"
echo " P-SNAP: os_noise_percent of a 1 ms spin; selfish: cpu_overhead_percent in detours)"
cd - >/dev/null
Rscript "$here/analysis/report.R" "$out"
