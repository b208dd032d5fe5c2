#!/bin/sh
# scripts/dist.sh [DIR]: the release tarball of the commit checked out,
# DIR/noisebench-VERSION.tar.gz (default dist/), and its sha256 beside it.
# It is git archive's: what is committed, src/COMMIT naming the commit. A
# checkout with changes is refused, since they would not be in it.
set -eu
cd "$(dirname "$0")/.."
out=${1:-dist}
version=$(cat VERSION)
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
    echo "dist: the checkout has uncommitted changes, which the tarball would lack" >&2
    exit 1
fi
mkdir -p "$out"
tarball="$out/noisebench-$version.tar.gz"
git archive --format=tar.gz --prefix="noisebench-$version/" -o "$tarball" HEAD
(cd "$out" && sha256sum "noisebench-$version.tar.gz" > "noisebench-$version.tar.gz.sha256")
echo "dist: $tarball (sha256 $(cut -d' ' -f1 "$tarball.sha256"))"
