#!/usr/bin/env bash
# What `make` (build only) needs, checked without installing anything: a
# compiler site may build on RHEL or SLES, where apt means nothing. Says in
# one line what is missing; MPI is optional (without it psnap_mpi and
# selfish_mpi are not built). `make run` and `make test` install on Debian
# first (scripts/setup.sh).
set -uo pipefail

missing=()
cc=${CC:-cc}
command -v "$cc" >/dev/null 2>&1 || missing+=("a C compiler ($cc)")
if command -v cmake >/dev/null 2>&1; then
  have=$(cmake --version | head -n 1 | grep -o '[0-9][0-9.]*' | head -n 1)
  [ "$(printf '%s\n3.19\n' "$have" | sort -V | head -n 1)" = 3.19 ] ||
    missing+=("CMake 3.19 or later (found $have)")
else
  missing+=("CMake 3.19 or later")
fi
command -v make >/dev/null 2>&1 || missing+=("make")
if [ ${#missing[@]} -gt 0 ]; then
  printf 'make: missing: %s; install them (on Debian: scripts/setup.sh build)\n' \
    "$(IFS=,; echo "${missing[*]}" | sed 's/,/, /g')" >&2
  exit 2
fi
command -v mpicc >/dev/null 2>&1 ||
  echo "make: no MPI compiler (mpicc): building without the kernels' MPI front ends (*_mpi)" >&2
exit 0
