#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# lib_faults.sh - what the two-guest fault scripts share (rds_faults.sh,
# rds_storm.sh): sourced after lib_tap.sh, it defines
#
#   sync_guests TAG SECS  wait until both guests reach TAG (guest-barrier.sh)
#   wait_for SECS CMD...  retry CMD every 0.2 s until it succeeds
#   rxe_active            $DEV's port 1 is ACTIVE
#   bg FILE CMD...        run CMD in the background, output to FILE, its
#                         pid added to pids[]
#   fault_rdma_link       "rdma link del $DEV", 2 s, "rdma link add" on
#                         $netdev, then wait for the port
#   fault_note KIND [N]   one line for "make reliability": N (1) faults of
#                         KIND were injected and done, "# fault_diag
#                         kind=KIND n=N" (tools/testing/reliability.sh)
#
# The sourcing script sets DEV (the rxe device), netdev (its interface),
# pids=() and BARRIER (the path of guest-barrier.sh).

# netdev comes from the sourcing script.
# shellcheck disable=SC2154

sync_guests() {	# sync_guests TAG SECS
	local out

	if ! out=$("$BARRIER" "$1" "$2" 2>&1); then
		diag "$out"
		return 1
	fi
}

wait_for() {	# wait_for SECS COMMAND...
	local limit=$1 i

	shift
	for ((i = 0; i < limit * 5; i++)); do
		"$@" > /dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}

fault_note() {	# fault_note KIND [N]
	echo "# fault_diag kind=$1 n=${2:-1}"
}

rxe_active() {
	rdma link show "$DEV/1" | grep -q 'state ACTIVE'
}

bg() {	# bg FILE CMD...
	local out=$1

	shift
	"$@" > "$out" 2>&1 &
	pids+=($!)
}

fault_rdma_link() {
	local out

	if ! out=$(rdma link del "$DEV" 2>&1); then
		diag "rdma link del $DEV: $out"
		return 1
	fi
	sleep 2
	if ! out=$(rdma link add "$DEV" type rxe netdev "$netdev" 2>&1); then
		diag "rdma link add $DEV: $out"
		return 1
	fi
	if ! wait_for 30 rxe_active; then
		diag "$DEV not ACTIVE 30 s after 'rdma link add': $(rdma link show 2>&1)"
		return 1
	fi
}
