#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the modules against one kernel build tree, out of the source tree:
#   build-modules.sh KDIR [make arguments, e.g. W=1 C=2]
# The objects land in build/<kernel release>/net/rds/, next to links to
# the sources, so that builds for several kernels coexist.  Prints the
# folder of the .ko files on its last line.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
kdir=${1:?usage: build-modules.sh KDIR [make args]}
shift

rel=$(sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' "$kdir/include/generated/utsrelease.h")
[ -n "$rel" ] || { echo "build-modules: cannot read the release of $kdir" >&2; exit 1; }

out=$top/build/$rel
mkdir -p "$out/net/rds"
ln -sfn "$top/include" "$out/include"
ln -sf "$top/Kbuild" "$out/Kbuild"
# Refresh the links: sources may have been added or removed.
find "$out/net/rds" -maxdepth 1 -type l -delete
for f in "$top"/net/rds/*.[ch] "$top/net/rds/Kbuild"; do
	ln -s "$f" "$out/net/rds/"
done

make -C "$kdir" M="$out" "$@" modules >&2
echo "$out/net/rds"
