#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rds_faults.sh - RDS streams between two bench guests through faults, run
# on both guests at once (tools/testing/vm/vm-run.sh --guests 2; run by
# run_remote.sh).  Prints TAP, the plan last.
#
# Every case runs a counted stream (rds_stream) each way, 600 messages, one
# every 10 ms, sizes from 100 bytes to 20 kB (one to five 4 KiB fragments),
# and once 100 messages have arrived one guest breaks something:
#
#   link_cut	  node 1: every frame eth0 sends is dropped for 3 s (tc
#		  netem, 100 % loss), the link stays up.  Both streams must
#		  arrive whole: every message, intact, once, in order.  RDS
#		  queues what is sent while the path is broken and sends it
#		  once the QP has retransmitted or the connection is back;
#		  the sender sees no error (at most a sendto() that blocks
#		  while its send buffer is full).
#   module_reload node 2: the receiving socket closes, the RDS modules of
#		  node 2 (RDS_MODULES: ours or distro) are unloaded and
#		  loaded again, and a new socket binds the same port, while
#		  node 1 goes on sending.  What had to arrive: before the
#		  unload, every message from the first up to the last one
#		  received, in order; after the re-bind, every message that
#		  node 1 sent after it learnt of the re-bind (the gate file),
#		  in order and once; messages sent while no socket was bound
#		  may be dropped (RDS drops what arrives for a port nobody is
#		  bound to), and those the new socket gets must still come in
#		  order, once each.  Then node 2 (its modules fresh) sends a
#		  whole stream to node 1, which must arrive whole.
#   rdma_link	  node 2: "rdma link del rxe0", 2 s, "rdma link add rxe0
#		  type rxe netdev eth0".  Both streams must arrive whole.
#   link_down	  the first node that runs our modules (node 1, or node 2
#		  in distro,ours): "ip link set eth0 down", 3 s, "up"
#		  again.  Both streams must arrive whole.  Our modules'
#		  ACK watchdog (net.rds.unacked_timeout_ms) reconnects a
#		  QP that stalled, their new request also tears a stalled
#		  distribution peer's connection down, and their teardown
#		  waits for the port to come back before it sends a DREQ:
#		  a MAD posted while the netdev is down leaves 6.1 rxe's
#		  QP1 deaf to every later CM message
#		  (rds_zc-ib-design.rst).  Skipped when no node runs our
#		  modules: over rxe the distribution's RDS does not
#		  recover (on 6.1 a QP that sent while its netdev was down
#		  stays in RTS and never retransmits; on 6.12 it errors
#		  out and the distribution never reconnects).  Skipped on
#		  virtio-net too, whose transmit queue once stayed stuck
#		  after "up" (NETDEV WATCHDOG, a kernel warning), which no
#		  RDS survives: make check runs the pairs with e1000
#		  (vm-run.sh --nic e1000).
#   unload_connecting
#		  a stress, not a stream: the first node that runs our
#		  modules loads them, in every other round sends one
#		  message to the peer (its connection starts coming up),
#		  waits a little (0 to 1 s, longer every other round) and
#		  unloads them, 12 times, while the peer sends to it every
#		  20 ms, so that the peer's connection requests arrive at
#		  any moment of the load, connect and unload too.  No kernel
#		  warning may appear, also 2 s after the last unload: a
#		  watchdog left armed on a connection freed at unload
#		  fires 1 s after the connection came up.  Then the
#		  modules are loaded again.  The race it hunts (an
#		  ESTABLISHED between the unload's first cancel of a
#		  connection's work and its transport shutdown) is a few
#		  instructions wide, so a pass proves little; a failure
#		  is real.  Skipped when no node runs our modules.
#   zcopy_cut	  300 messages a stream, with zero-copy senders
#		  (rds_stream send -z) on the nodes that run our modules:
#		  each message from one of 8 buffers in turn, reused and
#		  written over only when its completion comes, which our
#		  RDS reports once the peer acknowledged it.  Node 1 cuts
#		  its frames for 3 s (as link_cut), then deletes its rxe
#		  device for 2 s (as rdma_link): messages wait, pinned, and
#		  go again over a new connection.  The streams must arrive
#		  whole and intact, and every completion come once, in
#		  order.
#
# When a stream of a case fails, the node prints what it knows (state_dump): RDS's
# connections and non-zero counters (rds_state), the rdma_cm ids and QPs,
# the connection state changes and rdma_cm events traced since the case
# began, and the end of the kernel log.
#
# The end of a stream is a marker message that carries the count; the
# receiver waits for it (120 s at most).  A sender keeps its socket open
# until the receiving guest has written that it is done (a file in its
# results folder), because closing the socket would drop what it still has
# queued.  The guests synchronise with tools/testing/vm/guest-barrier.sh.
#
# Environment (from vm-run.sh): RDS_NODE, RDS_NODES, RDS_ADDR, RDS_PEER_ADDR,
# RDS_MODULES, RDS_MODULES_ALL, RDS_MODULE_DIR, RESULTS, RDS_VM_TOOLS.
# Usage: rds_faults.sh [CASE...]	(default: all five, in the order above)

# The case_* functions are called through "case_$c".
# shellcheck disable=SC2317

set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=rds_modules.sh
. "$here/rds_modules.sh"
# shellcheck source=lib_tap.sh
. "$here/lib_tap.sh"
# shellcheck source=lib_faults.sh
. "$here/lib_faults.sh"

STREAM=$here/rds_stream
STATE=$here/rds_state
TRACING=/sys/kernel/tracing
BARRIER=${RDS_VM_TOOLS:-$here/../../../vm}/guest-barrier.sh
DEFAULT_CASES=(link_cut module_reload rdma_link link_down unload_connecting zcopy_cut)
send_opts=()	# rds_stream send's extra options, per case
COUNT=600		# messages per stream
INTERVAL=10		# ms between two messages
TRIGGER=100		# messages received before the fault
RECV_LIMIT=120		# s for a stream's end marker to arrive
SEND_LIMIT=200		# s for a sender, its wait for the receiver included
DEV=rxe0

dumped=
pids=()

# Trace connection states (ours) and rdma_cm events (both), if tracefs is
# there: state_dump shows them.
trace_start() {
	local e

	[ -d "$TRACING/events" ] || mount -t tracefs nodev "$TRACING" 2>/dev/null
	[ -w "$TRACING/trace" ] || return 0
	echo 4096 > "$TRACING/buffer_size_kb" 2>/dev/null
	for e in rds_zc/rds_conn_state rdma_cma/cm_event_handler; do
		[ -e "$TRACING/events/$e/enable" ] &&
			echo 1 > "$TRACING/events/$e/enable"
	done
	: > "$TRACING/trace"
}

state_dump() {	# state_dump WHY
	diag "state of node $me after $1:"
	"$STATE" 2>&1 | sed 's/^# /#   /'
	diag "$(rdma resource show cm_id 2>&1 | sed 's/^/  /')"
	diag "$(rdma resource show qp 2>&1 | sed 's/^/  /')"
	if [ -r "$TRACING/trace" ]; then
		diag "  traced (the last 40 events):"
		grep -v '^#' "$TRACING/trace" | tail -n 40 | sed 's/^/#     /'
	fi
	diag "  kernel log (the last 15 lines):"
	dmesg | tail -n 15 | sed 's/^/#     /'
}

cleanup() {
	local p

	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
}

barrier() {	# barrier NAME
	sync_guests "fault-$1" 180
}

wait_file() {	# wait_file FILE SECS
	local i

	for ((i = 0; i < $2 * 10; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

wait_progress() {	# wait_progress RECV_OUTPUT SECS
	local i

	for ((i = 0; i < $2 * 10; i++)); do
		grep -q '^progress:' "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

link_up() {
	[ "$(cat "/sys/class/net/$netdev/operstate")" = up ]
}

# Start a program in the background, its output in FILE; its pid in $!.

# Wait for a background program; one result from its exit status, its
# summary as diagnostics.
judge() {	# judge PID OUTFILE NAME
	local rc=0

	wait "$1" || rc=$?
	diag "$(cat "$2")"
	[ "$rc" -ne 0 ] && diag "exit status $rc"
	result "$rc" "$3"
	if [ "$rc" -ne 0 ] && [ -z "$dumped" ]; then
		dumped=1	# once per case, as soon as it goes wrong
		state_dump "$3"
	fi
	return "$rc"
}

# Ports of case number c: node K receives on base + K, sends from
# base + 10 + K; the reverse stream of module_reload uses base + 20 + K and
# base + 30 + K.
port() {	# port CASE_NO OFFSET NODE
	echo $((22000 + 100 * $1 + $2 + $3))
}

# Both ways at once, one node breaks something: start both streams, call
# FAULT on the faulting node once the streams flow, judge both ends.
two_streams() {	# two_streams NAME CASE_NO FAULT_NODE FAULT_FN
	local name=$1 c=$2 fnode=$3 fault=$4 rpid spid rc

	bg "$work/$name.recv" "$STREAM" recv \
		-b "$RDS_ADDR:$(port "$c" 0 "$me")" \
		-f "$RDS_PEER_ADDR:$(port "$c" 10 "$peer")" \
		-T "$RECV_LIMIT" -r "$work/$name.ready" -P "$TRIGGER"
	rpid=$!
	wait_file "$work/$name.ready" 10 || diag "the receiver did not bind in 10 s"
	if ! barrier "$name-bound"; then
		result 1 "$name: both guests ready"
		kill "$rpid" 2>/dev/null
		return
	fi
	bg "$work/$name.send" "$STREAM" send \
		-b "$RDS_ADDR:$(port "$c" 10 "$me")" \
		-t "$RDS_PEER_ADDR:$(port "$c" 0 "$peer")" \
		-n "$COUNT" -i "$INTERVAL" -T "$SEND_LIMIT" \
		-w "$peer_work/$name.received" "${send_opts[@]}"
	spid=$!
	if [ "$me" = "$fnode" ]; then
		# Both streams flow (this one has, and both began together).
		wait_progress "$work/$name.recv" 30 ||
			diag "no $TRIGGER messages from node $peer in 30 s; breaking things anyway"
		"$fault"
		rc=$?
		result "$rc" "$name: $fault_desc"
	fi
	judge "$rpid" "$work/$name.recv" "$name: stream from node $peer arrived whole, in order, once"
	touch "$work/$name.received"
	judge "$spid" "$work/$name.send" "$name: stream to node $peer sent without error"
	barrier "$name-done" || result 1 "$name: both guests done"
}

fault_link_down() {
	local t0

	t0=$(date +%s%N)
	ip link set "$netdev" down || return 1
	sleep 3
	ip link set "$netdev" up || return 1
	if ! wait_for 20 link_up; then
		diag "$netdev not up 20 s after 'ip link set up'"
		return 1
	fi
	if ! wait_for 30 rxe_active; then
		diag "$DEV not ACTIVE 30 s after $netdev came up: $(rdma link show 2>&1)"
		return 1
	fi
	diag "$netdev down, then up and $DEV ACTIVE after $((($(date +%s%N) - t0) / 1000000)) ms"
	fault_note link_down
}

# Frames that eth0 sends vanish for 3 s (netem, 100 % loss), while the
# link stays up: a cut the local stack does not see, like a cable pulled at
# a switch.  The peer's frames still arrive, but every ACK is lost too.
# Its result holds only if the frames were really lost (netem_cut).
# The netem is armed before the streams and removed after them
# (netem_arm in lib_faults.sh says why).
fault_link_cut() {
	netem_cut 3 || return 1
	fault_note link_cut
}

case_link_cut() {
	fault_desc="every frame $netdev sends lost for 3 s"
	netem_arm
	two_streams link_cut 4 1 fault_link_cut
	netem_disarm
}

# A cut, then the device gone and back: what was sent meanwhile waits
# on the connection, pinned, and goes again over a new one.
fault_zcopy() {
	netem_cut 3 || return 1
	fault_note link_cut
	fault_rdma_link || return 1
	fault_note rdma_link
}

# Zero-copy senders where our modules run (the distribution's have
# zero-copy on TCP only: its node sends plainly, and receives ours).
case_zcopy_cut() {
	local COUNT=300

	fault_desc="every frame $netdev sends lost for 3 s, then rdma link del $DEV for 2 s; zero-copy senders"
	[ "${RDS_MODULES:-}" = ours ] && send_opts=(-z)
	netem_arm
	two_streams zcopy_cut 6 1 fault_zcopy
	netem_disarm
	send_opts=()
}

# The node whose link goes down: the first that runs our modules (the
# distribution's do not recover from it, see the top of this file).
ours_node() {
	local k=1 m mods

	IFS=, read -ra mods <<< "${RDS_MODULES_ALL:-ours}"
	[ ${#mods[@]} -gt 1 ] || { echo 1; return; }
	for m in "${mods[@]}"; do
		[ "$m" = ours ] && { echo "$k"; return; }
		k=$((k + 1))
	done
	echo 0
}

case_link_down() {
	local fnode driver why=

	fnode=$(ours_node)
	driver=$(basename "$(readlink "/sys/class/net/$netdev/device/driver")")
	fault_desc="$netdev down for 3 s, up again"
	[ "$fnode" = 0 ] && why="the distribution's modules on both nodes: the fault is aimed at ours"
	[ "$driver" = virtio_net ] &&
		why="virtio-net's transmit queue can stall for good after the flap (vm-run.sh --nic e1000)"
	if [ -n "$why" ]; then
		result 4 link_down "$why"
		return
	fi
	two_streams link_down 1 "$fnode" fault_link_down
}

fault_rdma_link_noted() {
	fault_rdma_link && fault_note rdma_link
}

case_rdma_link() {
	fault_desc="rdma link del $DEV for 2 s, add again"
	two_streams rdma_link 3 2 fault_rdma_link_noted
}

# Node 2 reloads its modules under node 1's stream, then sends a stream of
# its own.
case_module_reload() {
	local name=module_reload c=2 r1 r2 s rr rs out first last rc

	if [ "$me" = 2 ]; then
		bg "$work/$name.recv1" "$STREAM" recv \
			-b "$RDS_ADDR:$(port "$c" 0 "$me")" \
			-f "$RDS_PEER_ADDR:$(port "$c" 10 "$peer")" \
			-T "$RECV_LIMIT" -d 2 -r "$work/$name.ready1"
		r1=$!
		wait_file "$work/$name.ready1" 10 || diag "the receiver did not bind in 10 s"
		barrier "$name-bound" || { result 1 "$name: both guests ready"; return; }
		judge "$r1" "$work/$name.recv1" "$name: before the unload, every message arrived, in order, once"

		# The socket is closed: unload, load again, bind again.
		out=$(rds_modules_unload 2>&1)
		rc=$?
		[ -n "$out" ] && diag "$out"
		result "$rc" "$name: modules ($RDS_MODULES) unloaded with traffic coming in"
		[ "$rc" = 0 ] && fault_note module_reload
		sleep 1
		out=$(rds_modules_load 2>&1)
		rc=$?
		[ -n "$out" ] && diag "$out"
		result "$rc" "$name: modules ($RDS_MODULES) loaded again"

		bg "$work/$name.recv2" "$STREAM" recv \
			-b "$RDS_ADDR:$(port "$c" 0 "$me")" \
			-f "$RDS_PEER_ADDR:$(port "$c" 10 "$peer")" \
			-T "$RECV_LIMIT" -r "$work/$name.ready2"
		r2=$!
		wait_file "$work/$name.ready2" 10 || diag "the new receiver did not bind in 10 s"
		touch "$work/$name.rebound"
		bg "$work/$name.rsend" "$STREAM" send \
			-b "$RDS_ADDR:$(port "$c" 30 "$me")" \
			-t "$RDS_PEER_ADDR:$(port "$c" 20 "$peer")" \
			-n "$COUNT" -i "$INTERVAL" -T "$SEND_LIMIT" \
			-w "$peer_work/$name.rreceived"
		rs=$!
		judge "$r2" "$work/$name.recv2" "$name: after the re-bind, every message due arrived, in order, once"
		touch "$work/$name.received"
		# Not required, but worth knowing: a message that reached both
		# the old and the new socket.
		last=$(sed -n 's/^recv: [0-9]* messages from [^ ]* ([0-9]* \.\. \([0-9]*\)).*/\1/p' "$work/$name.recv1")
		first=$(sed -n 's/^recv: [0-9]* messages from [^ ]* (\([0-9]*\) \.\. .*/\1/p' "$work/$name.recv2")
		if [ -n "$last" ] && [ -n "$first" ] && [ "$first" -le "$last" ]; then
			diag "messages $first .. $last reached both the old and the new socket"
		fi
		judge "$rs" "$work/$name.rsend" "$name: stream to node $peer sent without error after the reload"
	else
		bg "$work/$name.rrecv" "$STREAM" recv \
			-b "$RDS_ADDR:$(port "$c" 20 "$me")" \
			-f "$RDS_PEER_ADDR:$(port "$c" 30 "$peer")" \
			-T "$((RECV_LIMIT + 60))" -r "$work/$name.rready"
		rr=$!
		wait_file "$work/$name.rready" 10 || diag "the receiver did not bind in 10 s"
		barrier "$name-bound" || { result 1 "$name: both guests ready"; return; }
		bg "$work/$name.send" "$STREAM" send \
			-b "$RDS_ADDR:$(port "$c" 10 "$me")" \
			-t "$RDS_PEER_ADDR:$(port "$c" 0 "$peer")" \
			-g "$peer_work/$name.rebound" -m 200 -i "$INTERVAL" \
			-T "$SEND_LIMIT" -w "$peer_work/$name.received"
		s=$!
		judge "$s" "$work/$name.send" "$name: stream to node $peer sent without error through its reload"
		judge "$rr" "$work/$name.rrecv" "$name: stream from node $peer after its reload arrived whole, in order, once"
		touch "$work/$name.rreceived"
	fi
	barrier "$name-done" || result 1 "$name: both guests done"
}

oops_pattern='Oops|BUG:|WARNING:|general protection|Call Trace|kernel panic|refcount_t:|list_(add|del) corruption'

# Our modules go while connections come up; the peer keeps connecting.
case_unload_connecting() {
	local name=unload_connecting c=5 fnode d i log_start rc=0 out bad est up=
	local delays=(0 0 0.01 0.01 0.03 0.03 0.1 0.1 0.3 0.3 1 1)

	fnode=$(ours_node)
	if [ "$fnode" = 0 ]; then
		result 4 "$name" "the distribution's modules on both nodes: the fault is aimed at ours"
		return
	fi
	barrier "$name-start" || { result 1 "$name: both guests ready"; return; }
	if [ "$me" != "$fnode" ]; then
		# Every 20 ms a message to an unbound port of the node that
		# unloads.  Two refusals are its due, and counted: EAGAIN,
		# the send buffer full of what that node cannot take while
		# its modules are gone or its connection is not up again;
		# ENOBUFS, the port marked congested in the last congestion
		# map it sent.  Any other error fails, and so does a run in
		# which no message was taken at all.
		python3 -c '
import errno, os, socket, sys, time
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET)
s.bind((sys.argv[1], int(sys.argv[2])))
s.setblocking(False)
due = (errno.EAGAIN, errno.ENOBUFS)
sent, refused, other = 0, {}, {}
end = time.time() + 150
while time.time() < end and not os.path.exists(sys.argv[5]):
    try:
        s.sendto(b"x" * 100, (sys.argv[3], int(sys.argv[4])))
        sent += 1
    except OSError as e:
        name = errno.errorcode.get(e.errno, str(e.errno))
        seen = refused if e.errno in due else other
        seen[name] = seen.get(name, 0) + 1
    time.sleep(0.02)
print("# sent %d; refused as due: %s; other errors: %s" % (sent,
      refused or "none", other or "none"))
sys.exit(1 if other or not sent else 0)
' "$RDS_ADDR" "$(port "$c" 10 "$me")" "$RDS_PEER_ADDR" \
			"$(port "$c" 0 "$peer")" "$peer_work/$name.done"
		result $? "$name: kept sending to node $peer while it reloaded, refused only with EAGAIN or ENOBUFS"
		barrier "$name-done" || result 1 "$name: both guests done"
		return
	fi

	log_start=$(dmesg | wc -l)
	for ((i = 0; i < ${#delays[@]}; i++)); do
		d=${delays[$i]}
		if ! out=$(rds_modules_load 2>&1); then
			diag "round $i: $out"
			rc=1
			break
		fi
		# Every other round, one message and an end marker: our own
		# connect starts; the socket closes as soon as they are
		# queued.  In the others only the peer connects.
		if [ $((i % 2)) = 0 ]; then
			"$STREAM" send -b "$RDS_ADDR:$(port "$c" 10 "$me")" \
				-t "$RDS_PEER_ADDR:$(port "$c" 0 "$peer")" \
				-n 1 -i 0 -T 10 > /dev/null 2>&1
		fi
		sleep "$d"
		# How far the connections got (rdma_cm's trace, if there).
		if [ -r "$TRACING/trace" ]; then
			est=$(grep -c 'ESTABLISHED' "$TRACING/trace")
			up+=" $est"
			: > "$TRACING/trace"
		fi
		if ! out=$(rds_modules_unload 2>&1); then
			diag "round $i (after ${d} s): $out"
			rc=1
			break
		fi
	done
	[ -n "$up" ] && diag "rdma_cm ESTABLISHED events before each unload:$up"
	sleep 2
	bad=$(dmesg | tail -n "+$((log_start + 1))" | grep -E "$oops_pattern")
	if [ -n "$bad" ]; then
		diag "$bad"
		rc=1
	fi
	result "$rc" "$name: $i unloads while connections came up, no kernel warning"
	fault_note module_reload "$i"
	out=$(rds_modules_load 2>&1)
	rc=$?
	[ -n "$out" ] && diag "$out"
	result "$rc" "$name: modules ($RDS_MODULES) loaded again"
	touch "$work/$name.done"
	barrier "$name-done" || result 1 "$name: both guests done"
}

# ------------------------------------------------------------------ main

if [ "${RDS_NODES:-0}" != 2 ] || [ -z "${RDS_PEER_ADDR:-}" ] ||
   [ -z "${RESULTS:-}" ]; then
	echo "1..0 # SKIP needs two bench guests (RDS_NODES=2, RDS_PEER_ADDR, RESULTS)"
	exit 0
fi
me=$RDS_NODE
peer=$((3 - me))
work=$RESULTS/faults
peer_work=$(dirname "$RESULTS")/guest$peer/faults
mkdir -p "$work"
netdev=$(rdma link show "$DEV/1" 2>/dev/null | sed -n 's/.*netdev \([^ ]*\).*/\1/p')
netdev=${netdev:-eth0}
trap cleanup EXIT

cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=("${DEFAULT_CASES[@]}")
for c in "${cases[@]}"; do
	if [ "$(type -t "case_$c")" != function ]; then
		echo "Bail out! no case $c"
		exit 1
	fi
done
echo "# node $me ($RDS_ADDR, modules ${RDS_MODULES:-unset}), peer $RDS_PEER_ADDR, $DEV on $netdev"
trace_start
for c in "${cases[@]}"; do
	echo "# $c"
	dumped=
	"case_$c"
	[ ! -w "$TRACING/trace" ] || : > "$TRACING/trace"
done
echo "1..$total"
exit $((failed > 0))
