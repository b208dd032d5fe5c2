#!/usr/bin/env bash
# Installs what noisebench needs, and nothing twice.
#   scripts/setup.sh build   compiler, CMake, binutils, OpenMPI (for the *_mpi
#                            kernels; without it they are not built)
#   scripts/setup.sh run     the above and R with data.table, jsonlite, ggplot2, htmltools
#                            and scales (the report, analysis/), Chromium (its PDF)
#   scripts/setup.sh test    the above, testthat, Slurm, munge, slurmdbd and MariaDB (the tests
#                            start a cluster on localhost), the aarch64 cross compiler (portability
#                            check), Chromium (the report is loaded in a headless browser),
#                            poppler-utils (its PDF's pages rendered), prometheus (promtool
#                            checks the metrics files), prometheus-node-exporter (scrapes them)
#                            clang and its libFuzzer runtime (make fuzz), and the Python
#                            venv .venv/ with the test tools
# Debian packages come from apt (as root, or with sudo); Python packages go into
# .venv/ in the repository, never into the system.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=${1:-build}
packages=(build-essential cmake binutils python3 python3-venv openmpi-bin libopenmpi-dev)
run_packages=(jube r-base-core r-cran-data.table r-cran-jsonlite r-cran-ggplot2 r-cran-fftw
              r-cran-htmltools r-cran-scales chromium)
case "$profile" in
  build) ;;
  run) packages+=("${run_packages[@]}") ;;
  test) packages+=("${run_packages[@]}" r-cran-testthat r-cran-roxygen2
        gcc-aarch64-linux-gnu libc6-dev-arm64-cross slurmctld slurmd slurm-client munge
        slurmdbd mariadb-server poppler-utils prometheus prometheus-node-exporter clang
        libclang-rt-14-dev) ;;
  *) echo "setup.sh: unknown profile '$profile' (build, run or test)" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

apt_install() {
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq && "${sudo[@]}" apt-get install -y -qq --no-install-recommends "$@"
}

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  # apt now and then trips over a temporary directory that vanished: try twice
  apt_install "${missing[@]}" >/dev/null || { sleep 2; apt_install "${missing[@]}" >/dev/null; }
fi

if [ "$profile" = test ]; then
  req=tests/requirements.txt
  stamp=.venv/.requirements.sha256
  want=$(sha256sum "$req" | cut -d' ' -f1)
  if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "setup: preparing .venv"
    /usr/bin/python3 -m venv .venv
    .venv/bin/python -m pip install -q --disable-pip-version-check -r "$req"
    echo "$want" > "$stamp"
  fi
fi
