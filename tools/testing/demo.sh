#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: install what is missing, build, boot two qemu guests linked
# by soft-RoCE, and show what the project is for, telling what happens:
#   act 1: datagrams between two guests running our modules, over our IB
#          transport;
#   act 2: the zero-copy cycle (RDS_GET_MR, RDMA READ and WRITE into the
#          other guest's memory, the ACK, RDS_CMSG_RDMA_STATUS, RDS_FREE_MR);
#   act 3: our module against the distribution's rds_rdma, both ways.
# The guests run tools/testing/demo/demo-guest.sh.  Bounded in time (the
# guests are stopped after 7 minutes); exit status 0 only if every step
# passed, else the failed steps are listed at the end.
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
echo "programs: tools/testing/demo/rds_chat (datagrams), tools/rds-zc-examples/zc_cycle (zero-copy)"
make -s -C tools/testing/demo
make -s -C tools/testing/selftests/net/rds	# rds_state: RDS's counters
make -s -C tools/rds-zc-examples

step "Booting two guests (qemu, software emulation: this takes a minute or two)"
echo "guest 1 = 10.0.0.1, guest 2 = 10.0.0.2, one Ethernet link, soft-RoCE device rxe0 on each"
results=$top/build/demo-results
rm -rf "$results"
st=0
tools/testing/vm/vm-run.sh --kernel 6.1 --guests 2 --modules none --nic e1000 \
	--results "$results" --timeout 420 -- tools/testing/demo/demo-guest.sh \
	> "$results.log" 2>&1 || st=$?

# Each guest marks its acts with "# @act N TITLE": show them act by act,
# guest 1 then guest 2; "# " lines are what happens, "ok"/"not ok" lines
# the steps' verdicts.
section() {	# section GUEST ACT: that guest's lines of that act
	awk -v want="$2" '/^# @act / { cur = $3; next } cur == want' \
		"$results/guest$1/output.txt" 2>/dev/null |
		sed -n 's/^# \{0,1\}//p; s/^\(not ok\|ok\) [0-9]* - /\1: /p' |
		grep -v '^1\.\.' | sed 's/^/  /'
}
for a in 0 1 2 3; do
	if [ "$a" = 0 ]; then
		step "The guests"
	else
		title=$(sed -n "s/^# @act $a //p" "$results"/guest*/output.txt 2>/dev/null | head -n 1)
		step "Act $a: ${title:-(not reached)}"
	fi
	for g in 1 2; do
		if [ -f "$results/guest$g/output.txt" ]; then
			echo " guest $g:"
			section "$g" "$a" || true
		elif [ "$a" = 0 ]; then
			echo " guest $g: no output: see $results/guest$g/console.log"
		fi
	done
done

echo
echo "(The guests run under software emulation, RDMA included: the times are"
echo "those of emulated machines, far slower than real RDMA hardware.)"

step "Verdict"
grep -E '^(ok|not ok) - g[0-9]: (kernel log clean|guest finished)' "$results.log" || true
if [ "$st" -ne 0 ]; then
	echo "FAILED: these steps did not do what they must:"
	grep '^not ok' "$results.log" | sed 's/^/  /' || true
fi
tail -n 1 "$results.log"
echo "console logs: $results/guest*/console.log; the bench's log: $results.log"
exit "$st"
