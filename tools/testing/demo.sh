#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: install what is missing, build, boot two qemu guests linked
# by soft-RoCE, and show RDS traffic between them, telling what happens.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"

step() { printf '\n== %s\n' "$*"; }

step "Checking the Debian packages the build and the guests need"
tools/testing/install-deps.sh

step "Building the modules for Debian's 6.1 kernel"
kdir=$(ls -d /usr/src/linux-headers-6.1.*-amd64 | grep -v -- -rt- | sort -V | tail -n 1)
mods=$(tools/testing/build-modules.sh "$kdir" 2>/dev/null | tail -n 1)
echo "modules: $(ls "$mods"/*.ko | xargs -n1 basename | xargs)"
make -s -C tools/testing/demo

step "Booting two guests (qemu, software emulation: this takes a minute)"
echo "guest 1 = 10.0.0.1, guest 2 = 10.0.0.2, one Ethernet link, rxe0 on each"
results=$top/build/demo-results
rm -rf "$results"
st=0
tools/testing/vm/vm-run.sh --kernel 6.1 --guests 2 --modules none \
	--results "$results" --timeout 400 -- tools/testing/demo/demo-guest.sh \
	> "$results.log" 2>&1 || st=$?

for g in 1 2; do
	step "What guest $g did"
	sed -n 's/^# \{0,1\}//p; s/^\(not ok\|ok\) [0-9]* - /\1: /p' \
		"$results/guest$g/output.txt" 2>/dev/null | grep -v '^1\.\.' ||
		echo "(no output: see $results/guest$g/console.log)"
done

step "Verdict"
grep -E '^(ok|not ok) - g[0-9]: (kernel log clean|guest finished)' "$results.log" || true
tail -n 1 "$results.log"
echo "console logs: $results/guest*/console.log"
exit "$st"
