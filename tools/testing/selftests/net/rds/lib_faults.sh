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
#   netem_arm             put a lossless netem on $netdev, while the link
#                         is quiet; netem_loss PCT then changes its loss
#                         in place; netem_disarm removes it, while quiet
#   netem_dropped         the frames the netem dropped so far
#   tx_packets            the frames $netdev sent so far
#   netem_cut SECS        every frame $netdev sends lost for SECS s, and
#                         seen lost (the qdisc loses 100 %, the device
#                         sent none): its exit status says so
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

# A cut while RDS traffic flows must not add or delete a qdisc then.
# Grafting a root qdisc deactivates the device for a moment, and a frame
# sent meanwhile meets the noop qdisc, which answers NET_XMIT_CN.  rxe
# on 6.12 takes that for a failed transmit and moves the sending QP to
# the error state.  For the GSI QP (QP1, every CM message) nothing brings
# it back: rxe completes the failed send as flushed, so ib_mad never
# runs its recovery (SQE to RTS), and that node answers no connect
# request again until rxe is re-added.  A real link cut loses frames on
# the wire; so the cut changes the loss of a netem armed beforehand.
NETEM_LIMIT=100000	# packets; above any burst of the bench

netem_arm() {
	local out

	modprobe sch_netem 2>/dev/null
	if ! out=$(tc qdisc replace dev "$netdev" root netem loss 0% \
		   limit "$NETEM_LIMIT" 2>&1); then
		diag "tc qdisc replace dev $netdev root netem loss 0%: $out"
		return 1
	fi
}

netem_loss() {	# netem_loss PERCENT
	local out

	if ! out=$(tc qdisc change dev "$netdev" root netem loss "$1%" \
		   limit "$NETEM_LIMIT" 2>&1); then
		diag "tc qdisc change dev $netdev root netem loss $1%: $out"
		return 1
	fi
}

netem_disarm() {
	tc qdisc del dev "$netdev" root 2>/dev/null
	return 0
}

# The netem's count of the frames it dropped ("tc -s": "(dropped N, ...").
netem_dropped() {
	tc -s qdisc show dev "$netdev" root 2>/dev/null |
		sed -n 's/.*(dropped \([0-9]*\),.*/\1/p' | head -n 1
}

tx_packets() {
	cat "/sys/class/net/$netdev/statistics/tx_packets"
}

# netem_cut SECS (2 or more): every frame $netdev sends is lost for SECS
# s, and that must be seen, not only tc's exit status: during the cut
# the qdisc says it loses 100 %, and the device sent none from 0.5 s
# into the cut (what it had taken before may leave then) to its end.
# The frames the netem dropped are reported, not required: a node whose
# connections wait out a reconnect back-off longer than the cut has
# nothing to send then (seen in rds_storm's storm_link, second cut).
netem_cut() {
	local d0 d1 t0 t1 q

	d0=$(netem_dropped)
	netem_loss 100 || return 1
	sleep 0.5
	t0=$(tx_packets)
	q=$(tc qdisc show dev "$netdev" 2>&1)
	sleep "$(($1 - 1)).5"
	t1=$(tx_packets)
	d1=$(netem_dropped)
	netem_loss 0 || return 1
	if [ -z "$d0" ] || [ -z "$d1" ]; then
		diag "no netem statistics on $netdev: $(tc -s qdisc show dev "$netdev" 2>&1)"
		return 1
	fi
	diag "cut of $1 s: the netem dropped $((d1 - d0)) frames; $netdev sent $((t1 - t0)) from 0.5 s into it to its end"
	case $q in
	*"loss 100%"*) ;;
	*) diag "during the cut the qdisc was: $q"; return 1 ;;
	esac
	[ "$t1" = "$t0" ]
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
