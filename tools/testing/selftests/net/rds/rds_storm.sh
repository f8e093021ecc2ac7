#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rds_storm.sh - RDMA and message load between two bench guests through
# fault storms, then leak checks; run on both guests at once
# (tools/testing/vm/vm-run.sh --guests 2; run by run_remote.sh).  Prints
# TAP, the plan last.  Node 2 owns the memory (rds_rdma_load owner), node 1
# initiates the RDMAs (rds_rdma_load init); see rds_rdma_load.c for what
# every load process checks by itself: every plain message once and in
# order, exactly one notification per RDMA (SUCCESS, REMOTE_ERROR,
# CANCELED, DROPPED or OTHER_ERROR), at most one ACK message per RDMA, the
# bytes of every RDMA that succeeded, one RDMA that succeeds after the
# faults, VmPin back to 0 at the end.
#
# Only where both nodes run our modules: the distribution's RDS over rxe
# does not recover from a link that goes down (see rds_faults.sh), and its
# RDS_GET_MR needs a connection.  Elsewhere: one result, skipped.
#
#   baseline	  both nodes unload their modules and count the RDMA
#		  resources left (rdma res show mr, qp, cq, pd, cm_id),
#		  load them again, and one pair runs 2 s of RDMA cycles
#		  without faults: every RDMA must succeed.  Then each node
#		  counts its QPs (its connection to the peer is up).
#   read_once	  node 2 READs node 1's buffers (rds-zc-bench, 64 KiB,
#		  16 in flight, keys by MAP with USE_ONCE and by
#		  RDS_GET_MR) without RDS_RDMA_FENCE, while node 1's keys
#		  die on the ACKs: every READ must end SUCCESS (a READ that
#		  rxe repeats after a lost response must not find its key
#		  released by the ACK that overtook it).
#   lossy	  both nodes lose 3 % of the frames they send (tc netem) for
#		  12 s, while two pairs cycle RDMAs, one registering with
#		  RDS_CMSG_RDMA_MAP, one with RDS_GET_MR: every RDMA must
#		  succeed (a lost frame costs a retransmission, never an
#		  operation or the connection), and rxe must never have
#		  run a REG_MR twice ("rxe_reg_fast_mr: ... not free" in
#		  the kernel log).  rxe runs again every local operation
#		  behind the WR it retransmits, so a MAP's REG_MR chained
#		  on the connection's QP broke it within seconds (our
#		  module registers on its registration QP there; the
#		  distribution's RDS, which posts its REG_MR on the
#		  connection's QP, failed the same way in a run with 2 %
#		  loss: "not free", then EINVAL for every MAP).  Then the
#		  counts as after storm_link.
#   storm_link	  4 sockets a node: each of node 1 RDMA-cycles against its
#		  own owner socket on node 2 (two owners register with
#		  RDS_GET_MR, two with RDS_CMSG_RDMA_MAP) for 15 s, while a
#		  counted stream (rds_stream) runs each way and the link
#		  breaks: node 1 loses every frame it sends for 2 s (tc netem,
#		  100 % loss) at 3 s and 13 s, node 2 deletes its rxe device
#		  at 6 s and adds it again 2 s later.  Every load process
#		  must end clean, both streams arrive whole, once, in order;
#		  after everything closed the module's counters must show
#		  as many MRs released as created since the baseline's
#		  reload (rdma_mr_created, rdma_mr_released), and the node
#		  as many QPs as at the baseline (within 30 s: a reconnect
#		  may be under way).
#   storm_kill	  two rounds of 2 pairs under load: node 1 SIGKILLs its
#		  initiators 4 s in (node 2's owners must then release every
#		  MR, VmPin 0), then node 2 SIGKILLs its owners 4 s in (node
#		  1's initiators must see each RDMA in flight end with one
#		  notification, VmPin 0).  After each round a new pair must
#		  cycle clean (1 s of load and one more success), and after
#		  both the MR counters and the QP count must be as in
#		  storm_link.
#   storm_reload  a third round like storm_kill's second, but node 2
#		  unloads and loads its modules right after it killed its
#		  owners, while node 1's initiators still wait for the
#		  notifications and send their DONEs; they must end
#		  clean, and a new pair cycle clean.
#   slab_storm	  only where the kernel can aim allocation failures at our
#		  modules (fault injection with its stack filter: the
#		  sanitizer kernel of "make check-debug", which passes
#		  RDS_STORM_FAILSLAB=1): two pairs cycle RDMAs for 18 s
#		  (one registering with RDS_CMSG_RDMA_MAP, one with
#		  RDS_GET_MR) while, on both nodes, 3 % of the slab
#		  and page allocations whose call chain passes through our
#		  modules' code fail (failslab and fail_page_alloc,
#		  sleeping ones and single pages too), and node 1 cuts
#		  the link for 2 s at 5 s so that connects, too, run under
#		  the faults.  The load runs with -F: a call that failed
#		  with ENOMEM is made again and must have had no effect.
#		  At 15 s the faults stop.  Each node must have injected
#		  failures, each load process must end clean, a new pair
#		  cycle clean, and the counts be as after storm_link.  The
#		  failures reach allocations of the code we call too (rxe's
#		  queues when a connect creates a QP), whose reports
#		  (warn_alloc()) the log check ignores between the
#		  "rdsvm-faults: armed" and "disarmed" lines this case
#		  writes to the kernel log; every other report counts.
#   leaks	  both nodes unload their modules again: the RDMA
#		  resources must be back to the baseline's (an MR, QP, CQ,
#		  PD or cm_id that our module lost track of survives the
#		  unload), and the modules load again.
#
# Environment (from vm-run.sh): RDS_NODE, RDS_NODES, RDS_ADDR,
# RDS_PEER_ADDR, RDS_MODULES, RDS_MODULES_ALL, RDS_MODULE_DIR, RESULTS,
# RDS_VM_TOOLS; RDS_CREDITS (run_remote.sh --credits: the receive ring
# our modules get again when the script loads them).
# Usage: rds_storm.sh [CASE...]	(default: all, in the order above; the
# later cases need baseline first)

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

LOAD=$here/rds_rdma_load
STREAM=$here/rds_stream
STATE=$here/rds_state
BENCH=$here/../../../../../tools/rds-zc-bench/rds-zc-bench
BENCH_PORT=18790
BARRIER=${RDS_VM_TOOLS:-$here/../../../vm}/guest-barrier.sh
DEV=rxe0
NLOAD=4			# load pairs of storm_link
DURATION=15		# s of load
PORT=26000		# owner k: PORT + k, initiator k: PORT + 100 + k
TRACING=/sys/kernel/tracing
RDMA_DROPPED=3		# RDS_RDMA_DROPPED
CONN_UP=3		# our module's connection states (connection.h)
CONN_ERROR=5

pids=()

cleanup() {
	local p

	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	tc qdisc del dev "$netdev" root 2>/dev/null
	failslab_off
}

barrier() {	# barrier NAME
	sync_guests "storm-$1" 240
}

res_counts() {	# one line: the number of each RDMA resource
	local r

	for r in mr qp cq pd cm_id; do
		echo -n "$r $(rdma resource show "$r" 2>/dev/null | grep -c .) "
	done
	echo
}

qp_count() {
	rdma resource show qp 2>/dev/null | grep -c .
}

qp_back() {	# qp_back COUNT
	[ "$(qp_count)" = "$1" ]
}

counter() {	# counter NAME: its value (0 when rds_state omits it)
	local v

	v=$("$STATE" "$1" | sed -n "s/^# counter $1 //p")
	echo "${v:-0}"
}

mr_in_use() {	# created - released, module-wide
	echo $(($(counter rdma_mr_created) - $(counter rdma_mr_released)))
}

mr_none() {
	[ "$(mr_in_use)" = 0 ]
}

# Load the modules again; run_remote.sh --credits set a small ring.
modules_load() {
	rds_modules_load || return 1
	[ -n "${RDS_CREDITS:-}" ] || return 0
	echo "$RDS_CREDITS" > /sys/module/rds_zc_ib/parameters/recv_wr
}

# After a case: no MR left registered (the counters began at 0 with the
# baseline's reload, and nothing else registers any meanwhile), the QPs as
# at the baseline.
check_counts() {	# check_counts NAME
	local rc=0

	if ! wait_for 15 mr_none; then
		diag "MRs in use: $(mr_in_use)"
		"$STATE" rdma_ 2>&1
		rc=1
	fi
	result "$rc" "$1: as many MRs released as registered (module counters)"
	rc=0
	if ! wait_for 30 qp_back "$qp_base"; then
		diag "$(qp_count) QPs, $qp_base at the baseline:"
		diag "$(rdma resource show qp 2>&1)"
		rc=1
	fi
	result "$rc" "$1: as many QPs as at the baseline"
	leak_note "$1" mr "$(mr_in_use)" qp $(($(qp_count) - qp_base))
}

# One line for "make reliability" (tools/testing/reliability.sh): what a
# case left behind, "# leak_diag case=NAME KIND=N...".
leak_note() {	# leak_note NAME KIND N [KIND N]...
	local line="# leak_diag case=$1"

	shift
	while [ $# -ge 2 ]; do
		line+=" $1=$2"
		shift 2
	done
	echo "$line"
}

# res_diff NOW BASE: res_counts' pairs, NOW's count less BASE's.
res_diff() {
	local now base out=() i

	read -ra now <<< "$1"
	read -ra base <<< "$2"
	for ((i = 0; i + 1 < ${#now[@]}; i += 2)); do
		out+=("${now[i]}" $((now[i + 1] - ${base[i + 1]:-0})))
	done
	echo "${out[*]}"
}

# Start a program in the background, its output in FILE; its pid in $!.

judge() {	# judge PID OUTFILE NAME
	local rc=0

	wait "$1" || rc=$?
	diag "$(tail -n 12 "$2")"
	[ "$rc" -ne 0 ] && diag "exit status $rc"
	result "$rc" "$3"
}

# judge_all NAME PID:FILE...: one result for several programs.
judge_all() {
	local name=$1 rc=0 p

	shift
	for p in "$@"; do
		wait "${p%%:*}" || rc=1
		diag "$(tail -n 12 "${p#*:}")"
	done
	result "$rc" "$name"
}

load() {	# load FILE ROLE K [OPTIONS...]: one load process for pair K
	local file=$1 role=$2 k=$3 mine theirs

	shift 3
	if [ "$role" = owner ]; then
		mine=$((PORT + k))
		theirs=$((PORT + 100 + k))
	else
		mine=$((PORT + 100 + k))
		theirs=$((PORT + k))
	fi
	bg "$file" "$LOAD" "$role" -b "$RDS_ADDR:$mine" \
		-t "$RDS_PEER_ADDR:$theirs" "$@"
}

# A pair that must cycle clean: every RDMA a success.
clean_pair() {	# clean_pair NAME K SECS
	local name=$1 k=$2 p out

	out=$work/$(echo "$1" | tr -c 'a-z0-9_\n' _).k$2
	if [ "$me" = 2 ]; then
		load "$out" owner "$k" -m -T "$(scaled 90)"
	else
		load "$out" init "$k" -d "$3" -T "$(scaled 90)"
	fi
	p=$!
	if wait "$p" && grep -q '^load: .* (success [1-9][0-9]*, remote_error 0, canceled 0, dropped 0, other_error 0, invalid 0).* 0 errors$' "$out"; then
		result 0 "$name: a new pair cycles, every RDMA a success"
	else
		diag "$(tail -n 12 "$out")"
		result 1 "$name: a new pair cycles, every RDMA a success"
	fi
}

unload_count() {	# unload, count what is left
	local out

	if ! out=$(rds_modules_unload 2>&1); then
		diag "$out"
		return 1
	fi
	sleep 1
	res_counts
}

case_baseline() {
	local out rc=0

	barrier baseline-start || { result 1 "baseline: both guests ready"; return; }
	if ! res_base=$(unload_count) || ! out=$(modules_load 2>&1); then
		diag "${out:-}"
		rc=1
	fi
	diag "without RDS: $res_base"
	result "$rc" "baseline: modules unloaded and loaded again, RDMA resources counted"
	barrier baseline-loaded || { result 1 "baseline: both guests ready"; return; }
	clean_pair baseline 90 2
	qp_base=$(qp_count)
	barrier baseline-done
}

# read_once: node 2 READs node 1's buffers of 64 KiB, 16 in flight (the
# 1 MiB ones add nothing here, and on the sanitizer kernel they stall
# rxe's go-back-N retransmissions past the ACK watchdog), and sends each
# READ's ACK in the same sendmsg() without RDS_RDMA_FENCE; node 1's key
# dies on the ACK (RDS_RDMA_USE_ONCE, or RDS_FREE_MR on receipt).  When a
# READ's response is lost, node 2's device sends the READ again, and
# until 2026-11-27 the ACK could arrive first: the repeated READ found
# the key released, node 2's QP failed with a remote access error, and
# every operation of the connection ended DROPPED (rds-zc-bench's READ
# 64 KiB x16 points, on 6.1, 3 rounds of 3).  Our module now fences the
# ACK of every READ; the distribution's works in practice because it
# releases a key about 10 jiffies late, which leaves it open meanwhile.
case_read_once() {
	local name=read_once out=$work/read_once rc=0 srv

	if [ ! -x "$BENCH" ] && ! make -s -C "${BENCH%/*}" > "$out.build" 2>&1; then
		diag "$(cat "$out.build")"
		result 1 "$name: rds-zc-bench built"
	fi
	barrier "$name-start" || { result 1 "$name: both guests ready"; return; }
	if [ "$me" = 2 ]; then
		"$BENCH" server -a "$RDS_ADDR" -p "$BENCH_PORT" --once --no-fence \
			--idle "$(scaled 60)" > "$out.server" 2>&1 &
		srv=$!
		wait_for 30 grep -q "rds-zc-bench server on" "$out.server" || rc=1
		result "$rc" "$name: rds-zc-bench server up, READs without RDS_RDMA_FENCE"
	fi
	barrier "$name-up" || { result 1 "$name: both guests ready"; return; }
	if [ "$me" = 1 ]; then
		"$BENCH" client -a "$RDS_ADDR" -s "$RDS_PEER_ADDR" -p "$BENCH_PORT" \
			-T 3 -t "$(scaled 30)" --tests rdma --dirs read \
			--keys map,getmr --sizes 64K --inflight 16 \
			> "$out.client" 2>&1
		rc=$?
		diag "$(grep -v '^RESULT' "$out.client")"
		result "$rc" "$name: every READ of 64 KiB, 16 in flight, by MAP and RDS_GET_MR keys, ended SUCCESS"
	else
		wait "$srv"
		rc=$?
		[ "$rc" = 0 ] || diag "$(grep -v ' failed, status' "$out.server"; grep -c ' failed, status' "$out.server") failed"
		result "$rc" "$name: the server's every READ notification SUCCESS, and the client's BYE"
	fi
	barrier "$name-done" || result 1 "$name: both guests done"
	check_counts "$name"
}

not_free() {	# REG_MRs rxe refused because it ran them already
	dmesg | grep -c 'rxe_reg_fast_mr: .* not free'
}

# What a lossy pair that failed saw, and what the connection and rxe did:
# drops and their causes, retransmissions, rxe's retry counters.
lossy_diag() {	# lossy_diag LOADFILE
	diag "$(tail -n 12 "$1")"
	diag "$("$STATE" 2>&1 | awk '$2 != "counter" || $3 ~ /^(conn|send)_/')"
	diag "$(rdma statistic show link "$DEV/1" 2>&1)"
}

# The ACK watchdog's kernel log line (net/rds/conn_state.c), and the
# one of a connection going down while its QP sat on posted work.
WD_REPORT='rds_zc: .* not acknowledged in [0-9]* ms; [0-9]* work requests posted, last send completion [0-9]* ms ago'
WD_STUCK='rds_zc: .* going down with [0-9]* work requests posted and none completed for [0-9]* ms'

# lossy's record, on node 1 (the initiator), of what ended RDMAs
# DROPPED: our module's tracepoints rds_conn_state (each state change of
# the connection to the peer, with the reason of a drop) and
# rds_rdma_notify, only the DROPPED ones queued for a socket.
lossy_trace_start() {
	local ev=$TRACING/events/rds_zc

	[ -d "$TRACING/events" ] || mount -t tracefs nodev "$TRACING" 2>/dev/null
	[ -e "$ev/rds_rdma_notify/enable" ] || return 1
	echo "status == $RDMA_DROPPED" > "$ev/rds_rdma_notify/filter" &&
	echo 1 > "$ev/rds_rdma_notify/enable" &&
	echo 1 > "$ev/rds_conn_state/enable" &&
	: > "$TRACING/trace"
}

lossy_trace_stop() {	# lossy_trace_stop FILE
	local ev=$TRACING/events/rds_zc

	[ -e "$ev/rds_rdma_notify/enable" ] || return 1
	cp "$TRACING/trace" "$1"
	echo 0 > "$ev/rds_rdma_notify/enable"
	echo 0 > "$ev/rds_rdma_notify/filter"
	echo 0 > "$ev/rds_conn_state/enable"
}

# lossy_drops TRACE: each drop of the connection to the peer (the
# change to ERROR, with its reason) that ended RDMAs DROPPED, in order,
# as "drop N COUNT K REASON" (K: for a drop by node 1's watchdog, "no
# ACK progress", which of them it is, so which of node 1's reports on
# the connection; else 0), then "unexplained COUNT": the DROPPED ended
# while the connection was up, with no drop since it came up, and
# "total COUNT".  A drop's DROPPED come after it (the shutdown work ends
# them, or flushes the QP) and before the connection is up again.
lossy_drops() {
	awk -v peer="$RDS_PEER_ADDR" -v up="$CONN_UP" -v err="$CONN_ERROR" -v st="$RDMA_DROPPED" '
	/ rds_conn_state: / && index($0, peer) {
		if ($0 ~ ("state -?[0-9]+->" err " ")) {
			n++
			why = substr($0, index($0, " rds_conn_state: "))
			sub(/^[^(]*\(/, "", why)
			sub(/\)[[:space:]]*$/, "", why)
			reason[n] = why
			own[n] = why == "no ACK progress" ? ++k : 0
			cur = n
		} else if ($0 ~ ("state -?[0-9]+->" up " ")) {
			cur = 0
		}
		next
	}
	/ rds_rdma_notify: / && $0 ~ ("status=" st " queued=1") {
		total++
		if (cur)
			cnt[cur]++
		else
			un++
	}
	END {
		for (i = 1; i <= n; i++)
			if (cnt[i])
				print "drop", i, cnt[i], own[i], reason[i]
		print "unexplained", un + 0
		print "total", total + 0
	}' "$1"
}

# wd_reports FILE [stuck]: the watchdog reports in FILE on the
# connection between the two nodes (either direction), in order, one a
# line: "stall" for a QP that stopped (work requests posted, and no send
# completion for 2 s or more, about four of rxe's retransmission
# timeouts), else "acks" (the peer did not acknowledge).  With "stuck",
# the reports of the connection going down instead (WD_STUCK), each a
# stall: its QP sat on posted work for 2 s or more.
wd_reports() {
	local a=$RDS_ADDR b=$RDS_PEER_ADDR
	local re='message .* \([0-9]*\) work requests posted, last send completion \([0-9]*\) ms ago'

	[ "${2:-}" = stuck ] &&
		re='going down with \([0-9]*\) work requests posted and none completed for \([0-9]*\) ms'
	sed -n "s/.*rds_zc: \\([^ ]*\\) to \\([^ ]*\\): $re.*/\\1 \\2 \\3 \\4/p" "$1" 2>/dev/null |
		awk -v a="$a" -v b="$b" '
		function is(x, y) { return x == y || x == "::ffff:" y }
		(is($1, a) && is($2, b)) || (is($1, b) && is($2, a)) {
			print (($3 > 0 && $4 >= 2000) ? "stall" : "acks")
		}'
}

# lossy_judge LOADFILE DROPS NODE1_REPORTS NODE2_REPORTS: every RDMA of
# the pair succeeded, or those that did not ended DROPPED because a QP of
# the pair's connection stopped moving.  6.12's soft-RoCE, under loss and
# a busy host, sometimes leaves its work requests posted and sends
# nothing more (rds_zc-testing.rst); the ACK watchdog then resets the
# connection, and the RDMAs in flight end DROPPED, as the distribution's
# RDS ends them on a reconnect.  Each DROPPED is tied to its drop of the
# connection in node 1's trace (DROPS, lossy_drops): none may have ended
# outside a drop, the trace must hold every DROPPED the pairs counted
# (TOTAL_DROPPED, both pairs), a drop may end no more than both pairs
# had in flight (2 x 4), and each drop that ended any must be a
# watchdog's drop of a stalled QP: node 1's own ("no ACK progress"),
# whose report (node 1's K-th on the connection: the watchdog prints it
# right before the drop) must be a stall, or, when node 1 saw the peer
# tear the connection down, one of node 2's reports of a stall on it or
# one of node 1's that its own QP sat on posted work as the connection
# went down (WD_STUCK: node 2's watchdog then reports only that node 1
# did not acknowledge, which node 1's ACKs, stuck behind that work, could
# not do), each used once.  The pair may have no more DROPPED than 4 per such
# drop.  Anything else, or any other status or error, fails.
lossy_judge() {
	local file=$1 drops=$2 wd1=$3 wd2=$4 line dropped n2 n1s stalls=0 peer_torn=0
	local k cnt own why un total r1=()

	line=$(grep '^load: ' "$file") || return 1
	grep -q '^exit status' "$file" && return 1
	echo "$line" | grep -q ' (success [1-9][0-9]*, remote_error 0, canceled 0, dropped [0-9]*, other_error 0, invalid 0).* 0 errors$' || return 1
	dropped=$(echo "$line" | sed 's/.*, dropped \([0-9]*\),.*/\1/')
	[ "$dropped" = 0 ] && return 0
	if [ ! -s "$drops" ]; then
		diag "$dropped RDMA(s) DROPPED, and no trace of node 1 to tie them to a stall"
		return 1
	fi
	mapfile -t r1 < <(wd_reports "$wd1")
	n2=$(wd_reports "$wd2" | grep -c stall)
	n1s=$(wd_reports "$wd1" stuck | grep -c stall)
	un=$(sed -n 's/^unexplained //p' "$drops")
	total=$(sed -n 's/^total //p' "$drops")
	diag "$dropped RDMA(s) DROPPED; node 1's trace: $(tr '\n' ';' < "$drops") watchdog reports: node 1 ${r1[*]:-none}, node 2 $n2 of a stall; node 1 went down stuck $n1s times"
	if [ "${un:-1}" != 0 ] || [ "${total:-0}" != "$TOTAL_DROPPED" ]; then
		diag "DROPPED outside a drop of the connection: ${un:-?}; traced ${total:-?}, counted by the pairs $TOTAL_DROPPED"
		return 1
	fi
	while read -r k _ cnt own why; do
		[ "$k" = drop ] || continue
		if [ "$cnt" -gt 8 ]; then
			diag "one drop ($why) ended $cnt RDMAs DROPPED, more than the pairs had in flight"
			return 1
		fi
		if [ "$own" -gt 0 ]; then
			if [ "${r1[own - 1]:-none}" != stall ]; then
				diag "node 1's watchdog drop $own ended RDMAs, and its report is not of a stalled QP: ${r1[own - 1]:-none}"
				return 1
			fi
		else
			peer_torn=$((peer_torn + 1))
		fi
		stalls=$((stalls + 1))
	done < "$drops"
	if [ "$peer_torn" -gt $((n2 + n1s)) ]; then
		diag "$peer_torn drops by the peer ended RDMAs; node 2 reported $n2 stalls, node 1 went down stuck $n1s times"
		return 1
	fi
	[ "$dropped" -le $((4 * stalls)) ] || return 1
	diag "$(cat "$wd1" "$wd2" 2>/dev/null)"
}

case_lossy() {
	local name=lossy k out rc=0 n0 w0 twice p all=() m=() traced=0
	local d0 d1 t0 t1 lost sent wd1 wd2

	netem_arm || rc=1
	barrier "$name-start" || { result 1 "$name: both guests ready"; return; }
	n0=$(not_free)
	w0=$(dmesg | wc -l)
	[ "$me" = 1 ] && lossy_trace_start && traced=1
	d0=$(netem_dropped)
	t0=$(tx_packets)
	netem_loss 3 || rc=1
	for k in 0 1; do
		m=()
		[ "$k" = 0 ] && m=(-m)
		out=$work/$name.k$k
		if [ "$me" = 2 ]; then
			load "$out" owner $((80 + k)) "${m[@]}" -T "$(scaled 120)"
		else
			load "$out" init $((80 + k)) -d 12 -T "$(scaled 120)"
		fi
		all+=("$!:$out")
	done
	for p in "${all[@]}"; do
		wait "${p%%:*}" || echo "exit status $?" >> "${p#*:}"
	done
	d1=$(netem_dropped)
	t1=$(tx_packets)
	netem_loss 0
	# The loss was real: the netem dropped frames, and the device still
	# sent nine in ten or more (a loss, not a cut).
	lost=$((${d1:-0} - ${d0:-0}))
	sent=$((t1 - t0))
	diag "under the loss the netem dropped $lost frames, $netdev sent $sent"
	[ -n "$d0" ] && [ -n "$d1" ] && [ "$lost" -gt 0 ] &&
		[ $((10 * lost)) -le $((lost + sent)) ] || rc=1
	result "$rc" "$name: $netdev loses 3 % of the frames it sends"
	# The watchdog's reports of this case, on both nodes; node 1's
	# drops of the connection and the RDMAs each ended DROPPED.
	dmesg | tail -n +$((w0 + 1)) | grep -e "$WD_REPORT" -e "$WD_STUCK" > "$work/$name.watchdog"
	if [ "$traced" = 1 ] && lossy_trace_stop "$work/$name.trace"; then
		lossy_drops "$work/$name.trace" > "$work/$name.drops"
	fi
	barrier "$name-loaded" || result 1 "$name: both guests done with the load"
	netem_disarm
	TOTAL_DROPPED=0
	for p in "${all[@]}"; do
		k=$(sed -n 's/^load: .*, dropped \([0-9]*\),.*/\1/p' "${p#*:}")
		TOTAL_DROPPED=$((TOTAL_DROPPED + ${k:-0}))
	done
	if [ "$me" = 1 ]; then
		wd1=$work/$name.watchdog
		wd2=$peer_work/$name.watchdog
		drops=$work/$name.drops
	else
		wd1=$peer_work/$name.watchdog
		wd2=$work/$name.watchdog
		drops=$peer_work/$name.drops
	fi
	for p in "${all[@]}"; do
		rc=0
		lossy_judge "${p#*:}" "$drops" "$wd1" "$wd2" || rc=1
		[ "$rc" = 0 ] || lossy_diag "${p#*:}"
		result "$rc" "$name: a pair registering by $([ "${p#*.k}" = 0 ] && echo MAP || echo RDS_GET_MR) cycles through the losses, every RDMA a success but those a stalled QP held"
	done
	twice=$(($(not_free) - n0))
	[ "$twice" = 0 ] || diag "$twice REG_MR(s) run twice: $(dmesg | grep 'rxe_' | tail -n 4)"
	result $((twice != 0)) "$name: no REG_MR run twice by rxe"
	barrier "$name-done" || result 1 "$name: both guests done"
	check_counts "$name"
}

# Frames sent vanish for 2 s: the loss of a netem armed before the load
# (netem_arm in lib_faults.sh), and seen lost (netem_cut).
fault_cut() {
	netem_cut 2
}

case_storm_link() {
	local name=storm_link k rpid spid rc=0 all=() m=()
	local rport=$((PORT + 200 + me)) sport=$((PORT + 210 + me))

	[ "$me" = 1 ] && netem_arm
	bg "$work/$name.recv" "$STREAM" recv -b "$RDS_ADDR:$rport" \
		-f "$RDS_PEER_ADDR:$((PORT + 210 + peer))" -T "$(scaled 120)"
	rpid=$!
	if [ "$me" = 2 ]; then
		for ((k = 0; k < NLOAD; k++)); do
			m=()
			[ $((k % 2)) = 1 ] && m=(-m)
			load "$work/$name.k$k" owner "$k" "${m[@]}" -T "$(scaled 150)"
			all+=("$!:$work/$name.k$k")
		done
	fi
	barrier "$name-bound" || { result 1 "$name: both guests ready"; return; }
	if [ "$me" = 1 ]; then
		for ((k = 0; k < NLOAD; k++)); do
			load "$work/$name.k$k" init "$k" -d "$DURATION" -T "$(scaled 150)"
			all+=("$!:$work/$name.k$k")
		done
	fi
	bg "$work/$name.send" "$STREAM" send -b "$RDS_ADDR:$sport" \
		-t "$RDS_PEER_ADDR:$((PORT + 200 + peer))" -n 1000 -i 10 \
		-T "$(scaled 200)" -w "$peer_work/$name.received"
	spid=$!
	if [ "$me" = 1 ]; then
		sleep 3
		if fault_cut; then fault_note link_cut; else rc=1; fi
		sleep 8
		if fault_cut; then fault_note link_cut; else rc=1; fi
		result "$rc" "$name: every frame $netdev sends lost for 2 s, twice"
	else
		sleep 6
		if fault_rdma_link; then fault_note rdma_link; else rc=1; fi
		result "$rc" "$name: rdma link del $DEV, 2 s, add again"
	fi
	for ((k = 0; k < NLOAD; k++)); do
		judge "${all[$k]%%:*}" "${all[$k]#*:}" \
			"$name: load pair $k ended clean"
	done
	judge "$rpid" "$work/$name.recv" "$name: stream from node $peer arrived whole, in order, once"
	touch "$work/$name.received"
	judge "$spid" "$work/$name.send" "$name: stream to node $peer sent without error"
	[ "$me" = 1 ] && netem_disarm
	barrier "$name-done" || result 1 "$name: both guests done"
	check_counts "$name"
}

# One kill round: node KILLER kills its side of 2 pairs after 4 s, and
# with "reload" unloads and loads its modules right after.
kill_round() {	# kill_round NAME ROUND KILLER [reload]
	local name=$1 r=$2 killer=$3 reload=${4:-} k role all=() p m=() out rc=0
	local stop=$work/$name.$r.killed peer_stop=$peer_work/$name.$r.killed

	role=init
	[ "$me" = 2 ] && role=owner
	barrier "$name-$r-start" || { result 1 "$name: both guests ready"; return; }
	for k in 0 1; do
		m=()
		[ "$role" = owner ] && [ "$k" = 1 ] && m=(-m)
		if [ "$me" = "$killer" ]; then
			load "$work/$name.$r.k$k" "$role" $((10 + k)) "${m[@]}" -d 60 -T "$(scaled 90)"
		else
			load "$work/$name.$r.k$k" "$role" $((10 + k)) "${m[@]}" -d 60 \
				-T "$(scaled 90)" -s "$peer_stop"
		fi
		all+=("$!:$work/$name.$r.k$k")
	done
	if [ "$me" = "$killer" ]; then
		sleep 4
		for p in "${all[@]}"; do
			kill -KILL "${p%%:*}"
		done
		fault_note sigkill ${#all[@]}
		for p in "${all[@]}"; do
			wait "${p%%:*}" 2>/dev/null
		done
		if [ -n "$reload" ]; then
			out=$( (rds_modules_unload && modules_load) 2>&1) || rc=1
			[ -n "$out" ] && diag "$out"
			[ "$rc" = 0 ] && fault_note module_reload
		fi
		touch "$stop"
		result "$rc" "$name: round $r: SIGKILLed the ${role}s with RDMAs in flight${reload:+, modules reloaded}"
	else
		judge_all "$name: round $r: the surviving ${role}s ended clean" "${all[@]}"
	fi
	barrier "$name-$r-after" || { result 1 "$name: both guests ready"; return; }
	clean_pair "$name: round $r" $((20 + 10 * r)) 1
}

case_storm_kill() {
	kill_round storm_kill 1 1
	kill_round storm_kill 2 2
	barrier storm_kill-done || result 1 "storm_kill: both guests done"
	check_counts storm_kill
}

# The MR counters start again at 0 with the reload on node 2; what the
# old modules leaked, the leaks case finds.
case_storm_reload() {
	kill_round storm_reload 3 2 reload
	barrier storm_reload-done || result 1 "storm_reload: both guests done"
	check_counts storm_reload
}

FI=/sys/kernel/debug/failslab
FP=/sys/kernel/debug/fail_page_alloc
FI_TIMES=1000000	# failures allowed; what is left tells how many ran

# Can failslab and fail_page_alloc be aimed at our modules' code?
failslab_ready() {
	[ -e "$FI/require-start" ] ||
		mount -t debugfs none /sys/kernel/debug 2>/dev/null
	[ -e "$FI/require-start" ] && [ -e "$FP/require-start" ]
}

# The first and last text symbol of our two modules, as 0x... numbers
# (/proc/kallsyms: ADDRESS TYPE NAME [MODULE]).
our_text() {
	awk '($4 == "[rds_zc]" || $4 == "[rds_zc_ib]") && $2 ~ /^[tT]$/ { print $1 }' \
		/proc/kallsyms | sort | sed -n '1p;$p'
}

# Our modules' text range, in fs_range: before the loads start, as
# reading /proc/kallsyms takes as long as the loads' whole run on the
# sanitizer kernel (a range read after starting them armed failslab once
# they had ended, and nothing failed).
failslab_range() {
	mapfile -t fs_range < <(our_text)
	if [ ${#fs_range[@]} != 2 ] || [ "${fs_range[0]}" = 0000000000000000 ]; then
		diag "no text symbols of rds_zc and rds_zc_ib in /proc/kallsyms"
		fs_range=()
		return 1
	fi
}

# fault_aim DIR PERCENT: PERCENT % of the allocations DIR (failslab or
# fail_page_alloc) sees whose call chain passes through fs_range fail,
# sleeping ones and single pages too.
fault_aim() {
	local d=$1

	# The last symbol's function is shorter than 64 KiB.
	echo "0x${fs_range[0]}" > "$d/require-start" &&
	printf '0x%x\n' $((0x${fs_range[1]} + 0x10000)) > "$d/require-end" &&
	echo 32 > "$d/stacktrace-depth" &&
	echo N > "$d/ignore-gfp-wait" &&
	{ [ ! -e "$d/min-order" ] || echo 0 > "$d/min-order"; } &&
	{ [ ! -e "$d/ignore-gfp-highmem" ] || echo N > "$d/ignore-gfp-highmem"; } &&
	echo N > "$d/task-filter" &&
	echo "${RDS_STORM_FI_VERBOSE:-0}" > "$d/verbose" &&
	echo 0 > "$d/space" &&
	echo 1 > "$d/interval" &&
	echo "$FI_TIMES" > "$d/times" &&
	echo "$2" > "$d/probability"
}

failslab_on() {	# failslab_on PERCENT: failslab and fail_page_alloc on fs_range
	[ ${#fs_range[@]} = 2 ] || return 1
	echo "rdsvm-faults: armed failslab and fail_page_alloc $1 %" > /dev/kmsg &&
	fault_aim "$FI" "$1" && fault_aim "$FP" "$1" ||
		return 1
	diag "failslab, fail_page_alloc: $1 % of the allocations from 0x${fs_range[0]} to $(cat "$FI/require-end")"
}

fault_settings() {	# fault_settings DIR: its every setting, as diagnostics
	local k

	for k in "$1"/*; do
		diag "${1##*/}: ${k##*/} $(cat "$k")"
	done
}

# The reports of allocations failed on purpose, up to the kernel log's
# "disarmed" line, do not count in the log check (scan-kernel-log.sh).
failslab_off() {
	[ -e "$FI/probability" ] || return 0
	echo 0 > "$FI/probability"
	echo 0 > "$FP/probability"
	echo "rdsvm-faults: disarmed" > /dev/kmsg
}

case_slab_storm() {
	local name=slab_storm k rc=0 all=() m=() n np armed

	[ "$me" = 1 ] && netem_arm
	failslab_range
	if [ "$me" = 2 ]; then
		for k in 70 71; do
			m=()
			[ "$k" = 71 ] && m=(-m)
			load "$work/$name.k$k" owner "$k" "${m[@]}" -F -T "$(scaled 200)"
			all+=("$!:$work/$name.k$k")
		done
	fi
	barrier "$name-bound" || { result 1 "$name: both guests ready"; return; }
	if [ "$me" = 1 ]; then
		for k in 70 71; do
			load "$work/$name.k$k" init "$k" -d 18 -F -T "$(scaled 200)"
			all+=("$!:$work/$name.k$k")
		done
	fi
	sleep 1
	armed=1
	failslab_on 3 || { rc=1; armed=0; }
	result "$rc" "$name: 3 % of our modules' slab and page allocations fail"
	if [ "$me" = 1 ]; then
		sleep 5
		rc=0
		if fault_cut; then fault_note link_cut; else rc=1; fi
		result "$rc" "$name: every frame $netdev sends lost for 2 s, under the faults"
		sleep 7
	else
		sleep 14
	fi
	failslab_off
	# Each counts "times" down from FI_TIMES; unarmed, nothing failed.
	n=0
	np=0
	if [ "$armed" = 1 ]; then
		n=$((FI_TIMES - $(cat "$FI/times")))
		np=$((FI_TIMES - $(cat "$FP/times")))
	fi
	fault_note failslab "$n"
	fault_note fail_page_alloc "$np"
	[ "$n" = 0 ] && fault_settings "$FI"
	result $((n == 0)) "$name: $n slab allocations failed on purpose in 14 s"
	# Every message page and receive buffer is a page of its own
	# (message.c, ib_recv.c), and the loads send and receive throughout.
	[ "$np" = 0 ] && fault_settings "$FP"
	result $((np == 0)) "$name: $np page allocations failed on purpose in 14 s"
	for k in "${!all[@]}"; do
		judge "${all[$k]%%:*}" "${all[$k]#*:}" \
			"$name: load pair $((70 + k)) ended clean through the failures"
	done
	[ "$me" = 1 ] && netem_disarm
	barrier "$name-done" || { result 1 "$name: both guests done"; return; }
	clean_pair "$name" 72 2
	check_counts "$name"
}

case_leaks() {
	local now out rc=0

	barrier leaks-start || { result 1 "leaks: both guests ready"; return; }
	if ! now=$(unload_count); then
		rc=1
	elif [ "$now" != "$res_base" ]; then
		diag "without RDS now: $now; at the baseline: $res_base"
		rdma resource show 2>&1 | sed 's/^/# /'
		rc=1
	fi
	result "$rc" "leaks: after an unload, the RDMA resources are as at the baseline"
	if [ -n "$now" ] && [ -n "$res_base" ]; then
		# shellcheck disable=SC2046
		leak_note leaks $(res_diff "$now" "$res_base")
	fi
	out=$(modules_load 2>&1)
	rc=$?
	[ -n "$out" ] && diag "$out"
	result "$rc" "leaks: modules ($RDS_MODULES) loaded again"
	barrier leaks-done || result 1 "leaks: both guests done"
}

# ------------------------------------------------------------------ main

if [ "${RDS_NODES:-0}" != 2 ] || [ -z "${RDS_PEER_ADDR:-}" ] ||
   [ -z "${RESULTS:-}" ]; then
	echo "1..0 # SKIP needs two bench guests (RDS_NODES=2, RDS_PEER_ADDR, RESULTS)"
	exit 0
fi
if [ "${RDS_MODULES_ALL:-}" != ours,ours ]; then
	echo "1..0 # SKIP both nodes must run our modules (${RDS_MODULES_ALL:-unset}): the distribution's RDS does not recover from a link that goes down over rxe"
	exit 0
fi
me=$RDS_NODE
peer=$((3 - me))
work=$RESULTS/storm
peer_work=$(dirname "$RESULTS")/guest$peer/storm
mkdir -p "$work"
netdev=$(rdma link show "$DEV/1" 2>/dev/null | sed -n 's/.*netdev \([^ ]*\).*/\1/p')
netdev=${netdev:-eth0}
trap cleanup EXIT
res_base=
qp_base=0

cases=("$@")
if [ ${#cases[@]} = 0 ]; then
	cases=(baseline read_once lossy storm_link storm_kill storm_reload)
	if [ "${RDS_STORM_FAILSLAB:-0}" = 1 ]; then
		if failslab_ready; then
			cases+=(slab_storm)
		else
			result 1 "slab_storm: RDS_STORM_FAILSLAB=1, but the kernel has no failslab and fail_page_alloc stack filter"
		fi
	fi
	cases+=(leaks)
fi
echo "# node $me ($RDS_ADDR), peer $RDS_PEER_ADDR, $DEV on $netdev"
for c in "${cases[@]}"; do
	echo "# $c"
	SECONDS=0
	"case_$c"
	echo "# $c took $SECONDS s"
done
echo "1..$total"
exit $((failed > 0))
