#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run_remote.sh - the two-guest RDS selftests, for
# tools/testing/vm/vm-run.sh:
#
#   tools/testing/vm/vm-run.sh --kernel 6.1 --guests 2 --modules distro -- \
#	tools/testing/selftests/net/rds/run_remote.sh
#
# --modules ours,distro (or distro,ours, ours,ours) pairs our modules with
# the distribution's: each guest runs the same tests with the modules it
# loaded (RDS_MODULES), against the other guest.
#
# Arguments, if any, name the fault cases to run (rds_faults.sh; both guests
# get the same arguments), e.g. "link_down" to run that one alone.  They
# may start with "--debug" (the sanitizer kernel of "make check-debug":
# every program's time limit RDS_TIME_SCALE times longer, default 6;
# bounds on the kernel's memory RDS_MEM_SCALE times larger, default 4
# (rds_hostile's floods measured 1300 to 1500 bytes a message there,
# against 220 to 320 on Debian's kernels: KASAN's redzones and quarantine
# and kmemleak's record of every object);
# rds_storm's slab_storm case, allocation failures aimed at our modules;
# rds_fuzz 60 s a seed instead of 15; and kmemleak_check.sh last), then with "--only PROG,...": run only the programs named (their
# names below, e.g. rds_faults,rds_storm,rds_hostile,rds_fuzz for "make
# reliability"), and then with "--credits N": before anything connects,
# our module gets a receive ring of N buffers (so the peer runs out of
# credits all the time) and the distribution's net.rds.ib.flow_control is
# set to 1 (so it spends the credits we give it); rds_remote's flow_control
# case then checks that both sides waited for credits.
#
# On both nodes it builds the test programs if needed, then runs rds_remote,
# rds_rdma, rds_ipv6 -r and rds_tcp_peer (the two programs of each pair
# talk to each other; rds_ipv6 over the guests' IPv6 addresses,
# rds_tcp_peer over TCP),
# rds_faults.sh (both guests together, synchronised by guest-barrier.sh),
# rds_storm.sh (RDMA load through faults, then leak checks), rds_remote's
# connect_race_rule once more, rds_hostile (node 2 a hostile
# RDS/IB peer of node 1, through verbs), the user guide's examples
# (rds_examples.sh), tools/rds-zc-info against live state on both nodes
# (rds_info_tool.sh) and rds_fuzz (both nodes fuzzing each other, with live
# connections and RDMA), merging their TAP into one
# stream per guest like run_guest.sh: every result renumbered and named
# after its program, the plan last.  Exit status 0 iff nothing failed.  Each
# program's own output is also kept in $RESULTS/<program>.tap, the fault
# streams' summaries in $RESULTS/faults/.
#
# Environment (from vm-run.sh): RDS_NODE, RDS_NODES, RDS_ADDR,
# RDS_PEER_ADDR, RDS_ADDR6, RDS_PEER_ADDR6, RDS_LL6, RDS_PEER_LL6,
# RDS_IFINDEX, RDS_MODULES, RDS_MODULES_ALL, RDS_MODULE_DIR, RDS_VM_TOOLS,
# RESULTS.

set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ "${RDS_NODES:-0}" != 2 ] || [ -z "${RDS_PEER_ADDR:-}" ]; then
	echo "1..0 # SKIP the two-guest selftests need vm-run.sh --guests 2"
	exit 0
fi

# shellcheck source=lib_tap.sh
. "$here/lib_tap.sh"

debug=0
if [ "${1:-}" = --debug ]; then
	debug=1
	sanitizer_scales
	export RDS_STORM_FAILSLAB=1
	shift
fi

only=
if [ "${1:-}" = --only ]; then
	only=,${2:?--only takes program names},
	shift 2
fi

# wanted NAME: is program NAME to run?
wanted() {
	[ -z "$only" ] || [[ $only == *,$1,* ]]
}

credits=
if [ "${1:-}" = --credits ]; then
	credits=${2:?--credits takes a number of receive buffers}
	shift 2
	case ${RDS_MODULES:-} in
	ours)	echo "$credits" > /sys/module/rds_zc_ib/parameters/recv_wr ;;
	distro)	sysctl -q -w net.rds.ib.flow_control=1 ;;
	esac || echo "# --credits $credits: could not set up flow control"
fi
export RDS_CREDITS=$credits

echo "# two-guest RDS selftests on node $RDS_NODE ($RDS_ADDR, modules ${RDS_MODULES:-unset} of ${RDS_MODULES_ALL:-unset}${credits:+, credits $credits}), peer $RDS_PEER_ADDR, kernel $(uname -r)"

# A qdisc that a case left on the bench's link (a netem).
drop_netem() {
	local dev

	for dev in /sys/class/net/*; do
		[ "$(cat "$dev/ifindex")" = "${RDS_IFINDEX:-}" ] &&
			tc qdisc del dev "${dev##*/}" root 2> /dev/null
	done
	return 0
}

# The programs come from the host's build; make only fills in what is missing.
if ! out=$(make -s -C "$here" 2>&1); then
	echo "# $out" | sed '2,$s/^/# /'
	emit "not ok" "build the selftests"
else
	export RDS_NODE RDS_NODES RDS_ADDR RDS_PEER_ADDR RDS_MODULES RDS_MODULES_ALL RDS_MODULE_DIR RESULTS
	export RDS_ADDR6 RDS_PEER_ADDR6 RDS_LL6 RDS_PEER_LL6 RDS_IFINDEX
	wanted rds_remote && run_prog rds_remote 390 "$here/rds_remote"
	# The duels' netem (left at 0 ms), or one a case died with.
	drop_netem
	wanted rds_rdma && run_prog rds_rdma 300 "$here/rds_rdma"
	# The lossless netem of link_arm(), should a case have died with it.
	drop_netem
	wanted rds_ipv6 && run_prog rds_ipv6 120 "$here/rds_ipv6" -r
	wanted rds_tcp_peer && run_prog rds_tcp_peer 300 "$here/rds_tcp_peer"
	wanted rds_faults && run_prog rds_faults 480 "$here/rds_faults.sh" "$@"
	# RDMA load through faults, then leak checks (ours on both nodes).
	wanted rds_storm && run_prog rds_storm 300 "$here/rds_storm.sh"
	# The faults' reconnects race most: check the rule once more (it
	# makes a race of its own, over a netem it leaves at 0 ms).
	wanted race_rule &&
		run_prog race_rule 180 "$here/rds_remote" connect_race_rule
	drop_netem
	# A hostile peer: node 2 forges requests and frames to node 1.
	wanted rds_hostile && run_prog rds_hostile 400 "$here/rds_hostile"
	# make reliability's notifications bound (rds_local's case, which
	# one-guest lanes run): only when named.
	[ -n "$only" ] && wanted note_bound &&
		run_prog note_bound 120 "$here/rds_local" rdma_note_bound
	# The user guide's examples, node 1 serving node 2, IPv4 then IPv6.
	wanted rds_examples && run_prog rds_examples 180 "$here/rds_examples.sh"
	# rds-zc-info's tables on both nodes, each after an exchange.
	wanted rds_info_tool &&
		run_prog rds_info_tool 300 "$here/rds_info_tool.sh"
	# Both nodes fuzz each other, 15 s a seed, last: it leaves odd state.
	# --debug: a long budget, 60 s a seed.
	wanted rds_fuzz && run_prog rds_fuzz $((240 + 90 * debug)) \
		"$here/rds_fuzz" -t $((15 + 45 * debug))
	# The sanitizer kernel: leaks of our modules, after everything.
	[ "$debug" = 1 ] && wanted kmemleak &&
		run_prog kmemleak 300 "$here/kmemleak_check.sh"
fi

tap_finish
