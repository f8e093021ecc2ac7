#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench-guest.sh - the guest half of "make bench" (tools/testing/bench/
# bench.sh), run in every guest of a tools/testing/vm/vm-run.sh boot (two
# guests, two to N for "scale", one for "onehost"):
#
#   bench-guest.sh rds SECS [--points OPTIONS] SET...
#	one rds-zc-bench run per SET (ours or distro), in that order:
#	node 1 runs the server, node 2 the client with -T SECS.  When the
#	client's --tests include tcp, node 1 also runs a second server on
#	port 18701 with --transport tcp (the TCP datagram points), and
#	after the client a plain TCP stream of SECS (rounded up) runs
#	between the same addresses with iperf3 (raw_tcp_tput, MiB/s, in
#	run-K-SET.txt with modules=tcp): the ceiling of the link for the
#	TCP streams, measured in every run, whatever modules are loaded.
#	Between
#	two runs of different sets both guests unload the RDS modules they
#	hold and load the other set (the two register PF_RDS, so a guest
#	holds one at a time); the first SET must be the one vm-run.sh
#	loaded (--modules).  If a swap fails, the runs left are not made
#	and the host runs them in a fresh boot.  OPTIONS, one argument,
#	are the client's point options; empty: all points (the client's
#	default tests, zc, the zero-copy datagram streams, and tcp, the
#	datagram points over RDS-over-TCP).
#   bench-guest.sh onehost SECS ROUNDS
#	RDMA between two sockets of ONE guest (vm-run.sh --guests 1),
#	ROUNDS rounds of both module sets, ours first (ours distro |
#	distro ours | ...; the guest swaps modules between sets).  Per set
#	two paths, a server and a client each, the x1 RDMA WRITE cycle by
#	MAP at 4 KiB and 64 KiB: "local", 127.0.0.1 <- 127.0.0.2, unpinned
#	(ours: local delivery, the RDMA a kernel copy; the distribution's
#	refuses it); "device", 10.254.3.3 <- 10.254.3.4 on a veth pair
#	with an rxe device on each end, both sockets pinned to IB
#	(--transport ib): over the device.  A device run of ours must move
#	both devices' sent_pkts.  Output run-K-SET-PATH.txt; a run
#	without a RESULT line (the client never reached its server) gets
#	value=error lines with the client's last words.
#   bench-guest.sh verbs SECS [ROUNDS]
#	the raw-verbs ceiling with Debian's perftest over the same rxe link:
#	ib_write_bw and ib_read_bw (-R, rdma_cm) for each size and depth of
#	the RDMA figures, ib_write_lat for 64 bytes; node 1 serves, node 2
#	connects.  Prints the same RESULT lines as rds-zc-bench (raw_write,
#	raw_read, raw_rtt_p50, raw_rtt_p99), ROUNDS times (default 1).
#   bench-guest.sh keys SECS ROUNDS LIVE POOL
#	our modules only: both guests reload rds_zc_ib with
#	fmr_pool_size=POOL, then ROUNDS rounds of two rds-zc-bench runs,
#	the x1 RDMA WRITE cycle by MAP at 4 KiB and 64 KiB, one with
#	--live-keys 0 and one with --live-keys LIVE (the client holds LIVE
#	keys of one page each on its device during the points), in the
#	order 0 LIVE | LIVE 0 | 0 LIVE ...  Output run-K-liveN.txt.
#   bench-guest.sh scale SECS SIZE DEPTH
#	all to all, on two or more guests with our modules: every guest
#	runs one server per peer (port 18700 + the peer's number), then
#	  1. samples its memory (mem-0.txt: /proc/meminfo, rdma resource
#	     counts), all servers up, no RDS connection yet;
#	  2. sets up its connections: guest K opens each connection to a
#	     guest J > K, one after the other, with rds-zc-bench --tests
#	     conn (the first round trip on the cold connection, then warm
#	     ones); conn-J.txt;
#	  3. samples again (mem-1.txt) once every guest is done;
#	  4. streams: a client towards every peer at once, RDMA WRITE by
#	     MAP of SIZE bytes, DEPTH in flight, SECS seconds; stream-J.txt;
#	  5. samples a last time (mem-2.txt) once every guest is done.
#	tools/testing/bench/bench-report.py computes the per-peer costs.
#   bench-guest.sh profile N1,N2[,WARM] REPS POINTS SET...
#	the instruction profile ("make profile", tools/testing/bench/
#	profile.sh; qemu runs with the plugin insn-profile.so): per SET
#	(ours or distro, the first the one vm-run.sh loaded, or verbs: the
#	raw-verbs floor, insn-profile/verbs-floor, with whatever modules
#	are loaded, idle), the guests swap modules if needed and save their
#	symbols (syms-SET/kallsyms.txt, syms-SET/modules.txt: MODULE
#	TEXT_ADDR CORESIZE); then, per point of POINTS (comma-separated, see
#	prof_opts: rtt, the 64 B round trip; map4k, read4k, map64k,
#	read64k, the RDMA WRITE or READ by MAP of 4 or 64 KiB, 1 in flight;
#	map4k16, read4k16, 16 in flight; dgram64k, dgram1m, 64 KiB or
#	1 MiB datagrams, one sender; dgram64kzc, dgram1mzc, the same with
#	MSG_ZEROCOPY, not for distro (its RDS over IB refuses it); getmr,
#	RDS_GET_MR + RDS_FREE_MR of 4 KiB, client only, not for distro;
#	the verbs set skips the datagrams and getmr), one run of WARM
#	operations (default N1 + N2) outside any window, which brings the
#	connection, the slab caches and the MR pools to the state they keep
#	(the distribution's pool of 4 KiB MRs grows by one MR a cycle over
#	its first 2,000 MAP cycles), and REPS repetitions of two runs, of
#	N1 and N2 operations (-n), each inside a counting window: the
#	client guest opens it (insn-mark on) right before the client starts
#	and closes it when the client exits, the server guest right after
#	the run's barrier and when its server (--once) exits.  Each guest
#	first makes its neighbour entry of the peer permanent (pin_neigh).
#	Each window is a line "WINDOW SET POINT REP OPS" of windows.txt;
#	tools/testing/bench/profile-report.py makes the table.
#
# The client's output of run K goes to $RESULTS/run-K-SET.txt (node 2),
# the server's to $RESULTS/server-K-SET.txt (node 1); perftest's to
# $RESULTS/verbs/.  Prints TAP: one result per run and per swap; a run
# is "ok" when the program ran to its end, whatever its points measured
# (failed points are in its RESULT lines and in the host's table).
#
# Environment (from vm-run.sh): RDS_NODE, RDS_NODES, RDS_ADDR,
# RDS_PEER_ADDR, RDS_MODULES, RDS_MODULE_DIR, RDS_VM_TOOLS, RDS_REPO,
# RESULTS.

set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
bench=$repo/tools/rds-zc-bench/rds-zc-bench
info=$repo/tools/rds-zc-info/rds-zc-info
barrier=$RDS_VM_TOOLS/guest-barrier.sh
peer_results=$(dirname "$RESULTS")/guest$((3 - RDS_NODE))

total=0
failed=0
emit() {	# ok|"not ok" DESCRIPTION
	total=$((total + 1))
	echo "$1 $total - $2"
	[ "$1" = ok ] || failed=$((failed + 1))
}

finish() {
	echo "1..$total"
	[ "$failed" -eq 0 ]
	exit
}

# meet NAME [SECS]: both guests reach NAME (guest-barrier.sh, names once).
meet() {
	"$barrier" "bench-$1" "${2:-300}"
}

# wait_file FILE PATTERN SECS: until FILE has a line matching PATTERN.
wait_file() {
	local i

	for ((i = 0; i < $3 * 5; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}

mode=${1:-}
secs=${2:-2}
shift 2 2>/dev/null || { echo "Bail out! usage: bench-guest.sh rds|verbs|onehost|keys|scale|profile SECS ..."; exit 2; }

if [ "$mode" = onehost ]; then
	:	# one guest is enough; node 1 runs it
elif [ "$mode" = scale ]; then
	if [ "${RDS_NODES:-0}" -lt 2 ]; then
		echo "1..0 # SKIP the all-to-all run needs vm-run.sh --guests 2 or more"
		exit 0
	fi
elif [ "${RDS_NODES:-0}" != 2 ] || [ -z "${RDS_PEER_ADDR:-}" ]; then
	echo "1..0 # SKIP the benchmark needs vm-run.sh --guests 2"
	exit 0
fi
[ -x "$bench" ] || { echo "Bail out! $bench not built (make -C tools/rds-zc-bench)"; exit 1; }

points=()
if [ "${1:-}" = --points ]; then
	read -r -a points <<< "${2:-}"
	shift 2
fi
# all points: the client's default tests, the zero-copy streams, TCP
[ "${#points[@]}" -gt 0 ] || points=(--tests "rdma,reg,dgram,reclaim,zc,tcp")

# Messages of 1 MiB need socket buffers over twice that size.
sysctl -q -w net.core.wmem_max=67108864 net.core.rmem_max=67108864

echo "# bench-guest.sh $mode on node $RDS_NODE ($RDS_ADDR) of $RDS_NODES (${RDS_ADDRS:-}), kernel $(uname -r), $(nproc) CPU(s)"

# ------------------------------------------------------------------ rds
# shellcheck source=../selftests/net/rds/rds_modules.sh
. "$repo/tools/testing/selftests/net/rds/rds_modules.sh"

# swap K FROM TO: both guests unload FROM and load TO; 0 when both did.
swap() {
	local k=$1 out st=ok

	meet "swap-$k-start" 600 || return 1
	out=$(RDS_MODULES=$2 rds_modules_unload 2>&1 &&
	      RDS_MODULES=$3 RDS_MODULE_DIR=$RDS_MODULE_DIR rds_modules_load 2>&1) || st=failed
	[ -z "$out" ] || echo "# $out"
	echo "$st" > "$RESULTS/swap-$k"
	meet "swap-$k-done" 120 || return 1
	[ "$st" = ok ] && [ "$(cat "$peer_results/swap-$k" 2>/dev/null)" = ok ]
}

# srv_start OUT [SERVER OPTIONS...]: a server on this guest's address,
# its output in OUT, its pid in srv.
srv_start() {
	local out=$1

	shift
	# --idle: gone by itself if the client dies without its BYE
	"$bench" server -a "$RDS_ADDR" "$@" --once --idle 300 > "$out" 2>&1 &
	srv=$!
	wait_file "$out" "rds-zc-bench server on" 60 ||
		echo "# server $k: not started: $(head -c 300 "$out")"
}

# srv_end K SET WHAT PID OUT: the end of a server of run K (the client's
# BYE ended it; if not, end it now), reported as WHAT.
srv_end() {
	local k=$1 set=$2 what=$3 pid=$4 out=$5 rc

	kill "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	sed "s/^/# $what: /" "$out" | head -n 20
	# status 1 after the BYE: some RDMAs failed, which the client's
	# points report; anything else is the server's own failure
	if grep -q "rds-zc-bench server: done" "$out" && [ "$rc" -le 1 ]; then
		emit ok "run $k ($set): $what # $(grep -c 'RDMA .* failed, status' "$out") RDMA(s) failed"
	else
		emit "not ok" "run $k ($set): $what # status $rc, no BYE from the client"
	fi
}

# raw_tcp K: a plain TCP stream of writes of 1 MiB from node 2 to node 1
# for SECS rounded up (iperf3 on port 18702), as a RESULT line on stdout.
# Node 1 starts the server, for one client, before the run's client
# starts; node 2 runs the stream once the client is done.  Nothing where
# iperf3 is not installed.
raw_tcp() {
	local k=$1 out=$RESULTS/iperf3-$1.json t=${secs%.*}

	command -v iperf3 > /dev/null || return 0
	[ "$t" != "$secs" ] && t=$((t + 1))
	[ "$t" -ge 1 ] || t=1
	if [ "$RDS_NODE" = 1 ]; then
		iperf3 -s -1 -B "$RDS_ADDR" -p 18702 > "$out" 2>&1 &
		iperf_srv=$!
		return 0
	fi
	iperf3 -c "$RDS_PEER_ADDR" -B "$RDS_ADDR" -p 18702 -t "$t" -l 1M -J \
		> "$out" 2>&1
	python3 - "$out" <<-'PY'
	import json, sys
	try:
	    bps = json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"]
	    print(f"RESULT name=raw_tcp_tput size=1048576 inflight=1 value={bps / 8 / (1 << 20):.3f} unit=MiB/s modules=tcp")
	except (OSError, ValueError, KeyError, TypeError) as e:
	    print(f'RESULT name=raw_tcp_tput size=1048576 inflight=1 value=error unit=MiB/s modules=tcp reason="iperf3: {e}"')
	PY
}

# run_rds K NAME TAG [CLIENT OPTIONS...]: one rds-zc-bench run, server on
# node 1 (and the TCP group's, over TCP on port 18701), client on node 2
# with those options and --tag TAG.
run_rds() {
	local k=$1 set=$2 tag=$3 srv msrv=0 tsrv=0 rc out i
	local main_group=1 tcp_group=0 iperf_srv=	# raw_tcp() sets it

	shift 3
	# The TCP group (--tests tcp) needs its own server on port 18700 + 1,
	# the other tests the one on 18700: the client says BYE to each it
	# used.
	for ((i = 1; i < $#; i++)); do
		[ "${!i}" = --tests ] || continue
		i=$((i + 1))
		[[ ,${!i}, == *,tcp,* ]] && tcp_group=1
		[[ ${!i} =~ ^tcp(,tcp)*$ ]] && main_group=0
	done

	if [ "$RDS_NODE" = 1 ]; then
		out=$RESULTS/server-$k-$set.txt
		if [ "$main_group" = 1 ]; then
			srv_start "$out"
			msrv=$srv
		fi
		if [ "$tcp_group" = 1 ]; then
			srv_start "$out.tcp" -p 18701 --transport tcp
			tsrv=$srv
		fi
		[ "$tcp_group" = 0 ] || raw_tcp "$k"
		meet "run-$k" 300
		meet "run-$k-done" 7200
		[ -z "$iperf_srv" ] || { kill "$iperf_srv" 2>/dev/null; wait "$iperf_srv"; }
		[ "$msrv" = 0 ] || srv_end "$k" "$set" server "$msrv" "$out"
		[ "$tsrv" = 0 ] || srv_end "$k" "$set" "TCP server" "$tsrv" "$out.tcp"
	else
		out=$RESULTS/run-$k-$set.txt
		meet "run-$k" 300
		"$bench" client -a "$RDS_ADDR" -s "$RDS_PEER_ADDR" -T "$secs" -t 15 \
			"$@" --tag "$tag" > "$out" 2>&1
		rc=$?
		[ "$tcp_group" = 0 ] || raw_tcp "$k" >> "$out"
		sed 's/^/# /' "$out"
		meet "run-$k-done" 600
		if [ "$rc" -le 1 ]; then
			emit ok "run $k ($set): client # $(grep -c 'value=error' "$out") point(s) failed, $(grep -c 'value=unsupported' "$out") unsupported"
		else
			emit "not ok" "run $k ($set): client # status $rc"
		fi
	fi
}

if [ "$mode" = rds ]; then
	current=${1:-}
	if [ "$current" != "$RDS_MODULES" ]; then
		emit "not ok" "the first set ($current) is the one loaded ($RDS_MODULES)"
		finish
	fi
	k=0
	for set in "$@"; do
		k=$((k + 1))
		if [ "$set" != "$current" ]; then
			if ! swap "$k" "$current" "$set"; then
				emit "not ok" "swap $current -> $set before run $k # the host runs the rest in a fresh boot"
				finish
			fi
			emit ok "swap $current -> $set before run $k"
			current=$set
		fi
		run_rds "$k" "$set" "modules=$set run=$k" "${points[@]}"
	done
	finish
fi

# -------------------------------------------------------------- onehost
OH_A=10.254.3.3		# the server's end of the veth pair
OH_B=10.254.3.4		# the client's

# oh_dev_down, oh_dev_up: the veth pair bhoh0 (OH_A) - bhoh1 (OH_B) with
# an rxe device on each end, bhoh_rxe0 and bhoh_rxe1 (lib_rxe_pair.sh).
# shellcheck source=../selftests/net/rds/lib_rxe_pair.sh
. "$repo/tools/testing/selftests/net/rds/lib_rxe_pair.sh"
oh_dev_down() { rxe_pair_down bhoh; }
oh_dev_up() { rxe_pair_up bhoh "$OH_A" "$OH_B"; }

# oh_sent: both devices' sent_pkts, "N0 N1".
oh_sent() {
	echo "$(cat /sys/class/infiniband/bhoh_rxe0/ports/1/hw_counters/sent_pkts 2> /dev/null || echo 0)" \
		"$(cat /sys/class/infiniband/bhoh_rxe1/ports/1/hw_counters/sent_pkts 2> /dev/null || echo 0)"
}

# oh_run K SET PATH ROUND: one server and one client in this guest.
oh_run() {
	local k=$1 set=$2 path=$3 round=$4 sa ca srv rc out sout why
	local pin=() s0 s1 d0 d1 size

	case $path in
	local) sa=127.0.0.1 ca=127.0.0.2 ;;
	device) sa=$OH_A ca=$OH_B pin=(--transport ib) ;;
	esac
	out=$RESULTS/run-$k-$set-$path.txt
	sout=$RESULTS/server-$k-$set-$path.txt
	read -r s0 s1 <<< "$(oh_sent)"
	"$bench" server -a "$sa" "${pin[@]}" --once --idle 300 > "$sout" 2>&1 &
	srv=$!
	wait_file "$sout" "rds-zc-bench server on" 60 ||
		echo "# server $k: not started: $(head -c 300 "$sout")"
	"$bench" client -a "$ca" -s "$sa" "${pin[@]}" -T "$secs" -t 15 \
		--tests rdma --dirs write --keys map --sizes 4K,64K --inflight 1 \
		--tag "modules=$set path=$path run=$k round=$round" > "$out" 2>&1
	rc=$?
	kill "$srv" 2> /dev/null
	wait "$srv" 2> /dev/null
	read -r d0 d1 <<< "$(oh_sent)"
	d0=$((d0 - s0))
	d1=$((d1 - s1))
	if ! grep -q '^RESULT ' "$out"; then
		why=$(grep -v '^#' "$out" | tail -n 1 | tr -d '"')
		for size in 4096 65536; do
			echo "RESULT name=rdma_write_map size=$size inflight=1 value=error unit=MiB/s reason=\"${why:-no output, status $rc}\" modules=$set path=$path run=$k round=$round"
		done >> "$out"
	fi
	sed 's/^/# /' "$out"
	if [ "$rc" -gt 1 ]; then
		emit "not ok" "run $k ($set, $path): client # status $rc"
	elif [ "$set" = ours ] && [ "$path" = device ] &&
	     { [ "$d0" -le 0 ] || [ "$d1" -le 0 ]; }; then
		emit "not ok" "run $k ($set, $path): the RDMA went over both rxe devices # sent_pkts +$d0, +$d1"
	else
		emit ok "run $k ($set, $path): $(grep -c 'value=error' "$out") point(s) failed, $(grep -c 'value=unsupported' "$out") unsupported; sent_pkts +$d0, +$d1"
	fi
}

# oh_swap FROM TO: this guest unloads FROM and loads TO.
oh_swap() {
	local out

	out=$(RDS_MODULES=$1 rds_modules_unload 2>&1 &&
	      RDS_MODULES=$2 RDS_MODULE_DIR=$RDS_MODULE_DIR rds_modules_load 2>&1)
	local st=$?
	[ -z "$out" ] || echo "# $out"
	return $st
}

if [ "$mode" = onehost ]; then
	rounds=${1:-3}
	if [ "$RDS_NODE" != 1 ]; then
		echo "1..0 # SKIP the one-host runs are node 1's"
		exit 0
	fi
	if ! oh_dev_up; then
		oh_dev_down
		emit "not ok" "a veth pair with an rxe device on each end"
		finish
	fi
	emit ok "veth pair bhoh0 ($OH_A) - bhoh1 ($OH_B), rxe devices bhoh_rxe0 and bhoh_rxe1"
	current=$RDS_MODULES
	k=0
	for ((r = 1; r <= rounds; r++)); do
		if ((r % 2)); then sets="ours distro"; else sets="distro ours"; fi
		for set in $sets; do
			if [ "$set" != "$current" ]; then
				if ! oh_swap "$current" "$set"; then
					emit "not ok" "swap $current -> $set in round $r"
					oh_dev_down
					finish
				fi
				emit ok "swap $current -> $set in round $r"
				current=$set
			fi
			for path in local device; do
				k=$((k + 1))
				oh_run "$k" "$set" "$path" "$r"
			done
		done
	done
	oh_dev_down
	finish
fi

# -------------------------------------------------------------- profile
# save_syms SET: this guest's kernel symbols and module text, SET loaded.
save_syms() {
	local d=$RESULTS/syms-$1 m

	mkdir -p "$d"
	cat /proc/kallsyms > "$d/kallsyms.txt"
	for m in /sys/module/*/sections/.text; do
		m=${m%/sections/.text}
		echo "${m##*/} $(cat "$m/sections/.text") $(cat "$m/coresize" 2>/dev/null || echo 0)"
	done > "$d/modules.txt"
}

# prof_opts SET POINT: the client's command line of POINT for SET (rds-zc-
# bench for ours and distro, verbs-floor for verbs) in popts; fails for a
# point SET does not measure.
prof_opts() {
	local rdma=(--tests rdma --keys map --inflight 1) size

	if [ "$1" = verbs ]; then
		case $2 in
		rtt) popts=(--cycle rtt) ;;
		map4k) popts=(--cycle write --size 4096) ;;
		read4k) popts=(--cycle read --size 4096) ;;
		map64k) popts=(--cycle write --size 65536) ;;
		read64k) popts=(--cycle read --size 65536) ;;
		map4k16) popts=(--cycle write --size 4096 --inflight 16) ;;
		read4k16) popts=(--cycle read --size 4096 --inflight 16) ;;
		*) return 1 ;;
		esac
		return 0
	fi
	case $2 in
	rtt) popts=(--tests rtt) ;;
	map4k) popts=("${rdma[@]}" --dirs write --sizes 4K) ;;
	read4k) popts=("${rdma[@]}" --dirs read --sizes 4K) ;;
	map64k) popts=("${rdma[@]}" --dirs write --sizes 64K) ;;
	read64k) popts=("${rdma[@]}" --dirs read --sizes 64K) ;;
	map4k16) popts=("${rdma[@]}" --dirs write --sizes 4K --inflight 16) ;;
	read4k16) popts=("${rdma[@]}" --dirs read --sizes 4K --inflight 16) ;;
	dgram64k) popts=(--tests stream --dgram-sizes 64K --senders 1) ;;
	dgram1m) popts=(--tests stream --dgram-sizes 1M --senders 1) ;;
	tcprtt) popts=(--tests rtt --transport tcp) ;;
	tcp64 | tcp4k | tcp64k | tcp1m | tcp64kzc | tcp1mzc)
		# tcpSIZE[zc]: SIZE datagrams over TCP, one sender
		size=${2#tcp}
		popts=(--tests stream --dgram-sizes "${size%zc}" --senders 1 --transport tcp)
		[ "$size" = "${size%zc}" ] || popts+=(--zerocopy) ;;
	dgram64kzc|dgram1mzc)
		# the distribution has MSG_ZEROCOPY on its TCP transport only
		[ "$1" != distro ] || return 1
		popts=(--tests stream --dgram-sizes 64K --senders 1 --zerocopy)
		[ "$2" = dgram64kzc ] || popts[3]=1M ;;
	getmr)
		# the distribution's RDS_GET_MR fails on rxe (EOPNOTSUPP)
		[ "$1" != distro ] || return 1
		popts=(--tests reg --reg-kinds pair --reg-threads 1 --reg-size 4096) ;;
	*) return 1 ;;
	esac
}

# prof_run K SET POINT REP OPS [mark]: one run of OPS operations of
# POINT; with "mark", inside a counting window on both guests.  getmr
# needs no server: the server guest's window is open while the client
# runs.
prof_run() {
	local k=$1 set=$2 point=$3 rep=$4 ops=$5 mark=${6:-} srv=0 rc=0 out
	local popts=() sopts=() prog=$bench

	# a TCP point's server takes the TCP transport too
	[[ $point != tcp* ]] || sopts=(--transport tcp)
	prof_opts "$set" "$point" || { emit "not ok" "unknown profile point '$point' for $set"; return 1; }
	[ "$set" != verbs ] || prog=$verbs_prog
	if [ "$RDS_NODE" = 1 ]; then
		out=$RESULTS/server-$k-$set-$point.txt
		if [ "$point" = getmr ]; then
			echo "no server for getmr" > "$out"
		elif [ "$set" = verbs ]; then
			"$prog" server -a "$RDS_ADDR" > "$out" 2>&1 &
			srv=$!
			wait_file "$out" "verbs-floor server on" 60 ||
				echo "# server $k: not started: $(head -c 300 "$out")"
		else
			"$prog" server -a "$RDS_ADDR" --once --idle 300 \
				"${sopts[@]}" > "$out" 2>&1 &
			srv=$!
			wait_file "$out" "rds-zc-bench server on" 60 ||
				echo "# server $k: not started: $(head -c 300 "$out")"
		fi
		meet "prof-$k" 300
		[ -z "$mark" ] || "$mark_prog" on
		if [ "$srv" != 0 ]; then
			wait "$srv"
			rc=$?
		else
			meet "prof-$k-client" 900
		fi
		[ -z "$mark" ] || "$mark_prog" off
	else
		out=$RESULTS/run-$k-$set-$point.txt
		meet "prof-$k" 300
		# the server's window is open: let its guest settle first
		sleep 1
		[ -z "$mark" ] || "$mark_prog" on
		if [ "$set" = verbs ]; then
			"$prog" client -a "$RDS_ADDR" -s "$RDS_PEER_ADDR" -n "$ops" \
				"${popts[@]}" > "$out" 2>&1
		else
			"$prog" client -a "$RDS_ADDR" -s "$RDS_PEER_ADDR" -T 3600 -t 30 \
				-n "$ops" "${popts[@]}" --tag "modules=$set point=$point rep=$rep ops=$ops" > "$out" 2>&1
		fi
		rc=$?
		[ -z "$mark" ] || "$mark_prog" off
		[ "$point" != getmr ] || meet "prof-$k-client" 900
	fi
	if [ -n "$mark" ]; then
		windows=$((windows + 1))
		echo "$windows $set $point $rep $ops" >> "$RESULTS/windows.txt"
	fi
	meet "prof-$k-done" 900
	if [ "$rc" = 0 ] && { [ "$RDS_NODE" = 1 ] || ! grep -q 'value=error\|value=unsupported' "$out"; }; then
		emit ok "profile run $k: $set $point rep $rep, $ops ops${mark:+, window $windows}"
	else
		sed 's/^/# /' "$out" | tail -n 5
		emit "not ok" "profile run $k: $set $point rep $rep, $ops ops # status $rc"
	fi
}

# pin_neigh: the peer's neighbour entry made permanent.  rxe sends its
# frames through the kernel's IP output, and an entry that the neighbour
# timers took out of REACHABLE sends them through neigh_resolve_output()
# until it is confirmed again: 160 instructions per round trip and side
# (1.49 calls) in one run, none in the next, as the timers fell.
pin_neigh() {
	local dev lladdr

	dev=$(ip -o route get "$RDS_PEER_ADDR" 2>/dev/null |
	      sed -n 's/.* dev \([^ ]*\).*/\1/p')
	ping -c 1 -W 5 "$RDS_PEER_ADDR" > /dev/null 2>&1
	lladdr=$(ip neigh show "$RDS_PEER_ADDR" dev "$dev" 2>/dev/null |
		 sed -n 's/.* lladdr \([^ ]*\).*/\1/p')
	if [ -n "$dev" ] && [ -n "$lladdr" ] &&
	   ip neigh replace "$RDS_PEER_ADDR" lladdr "$lladdr" dev "$dev" \
		nud permanent; then
		emit ok "neighbour $RDS_PEER_ADDR ($lladdr on $dev) made permanent"
	else
		emit "not ok" "neighbour $RDS_PEER_ADDR made permanent # dev '$dev', lladdr '$lladdr'"
	fi
}

if [ "$mode" = profile ]; then
	pin_neigh
	mark_prog=$repo/tools/testing/bench/insn-profile/insn-mark
	verbs_prog=$repo/tools/testing/bench/insn-profile/verbs-floor
	IFS=, read -r n1 n2 warm <<< "$secs"
	warm=${warm:-$((n1 + n2))}
	reps=${1:-2}
	IFS=, read -r -a prof_points <<< "${2:-rtt}"
	shift 2
	windows=0
	[ -x "$mark_prog" ] || { echo "Bail out! $mark_prog not built"; exit 1; }
	current=${1:-}
	if [ "$current" != "$RDS_MODULES" ]; then
		emit "not ok" "the first set ($current) is the one loaded ($RDS_MODULES)"
		finish
	fi
	k=0
	for set in "$@"; do
		if [ "$set" != verbs ] && [ "$set" != "$current" ]; then
			k=$((k + 1))
			if ! swap "$k" "$current" "$set"; then
				emit "not ok" "swap $current -> $set"
				finish
			fi
			emit ok "swap $current -> $set"
			current=$set
		fi
		save_syms "$set"
		for point in "${prof_points[@]}"; do
			# the floor of what verbs-floor has no cycle for: none
			prof_opts "$set" "$point" || continue
			k=$((k + 1))
			prof_run "$k" "$set" "$point" 0 "$warm"
			for ((rep = 1; rep <= reps; rep++)); do
				for ops in "$n1" "$n2"; do
					k=$((k + 1))
					prof_run "$k" "$set" "$point" "$rep" "$ops" mark
				done
			done
		done
	done
	finish
fi

# ----------------------------------------------------------------- keys
if [ "$mode" = keys ]; then
	rounds=${1:-3}
	live=${2:-10000}
	pool=${3:-16384}
	if [ "$RDS_MODULES" != ours ]; then
		emit "not ok" "the live-keys runs need our modules (vm-run.sh --modules ours)"
		finish
	fi
	# fmr_pool_size is read when the device is added: load again
	meet keys-reload 300 || { emit "not ok" "both guests reach the reload"; finish; }
	out=$(RDS_MODULES=ours rds_modules_unload 2>&1 &&
	      RDS_MODULES=ours RDS_MODULE_DIR=$RDS_MODULE_DIR \
	      RDS_ZC_IB_PARAMS="fmr_pool_size=$pool" rds_modules_load 2>&1)
	st=$?
	[ -z "$out" ] || echo "# $out"
	got=$(cat /sys/module/rds_zc_ib/parameters/fmr_pool_size 2>/dev/null)
	[ "$st" = 0 ] && [ "$got" = "$pool" ] && echo ok > "$RESULTS/keys-reload" ||
		echo failed > "$RESULTS/keys-reload"
	meet keys-reloaded 120
	if [ "$(cat "$RESULTS/keys-reload")" != ok ] ||
	   [ "$(cat "$peer_results/keys-reload" 2>/dev/null)" != ok ]; then
		emit "not ok" "rds_zc_ib loaded again with fmr_pool_size=$pool on both guests # here: status $st, fmr_pool_size ${got:-none}"
		finish
	fi
	emit ok "rds_zc_ib loaded again with fmr_pool_size=$pool on both guests"
	command -v ibv_devinfo > /dev/null &&
		echo "# rxe0 $(ibv_devinfo -v -d rxe0 2>/dev/null | grep -E '^[[:space:]]*max_mr:' | tr -s ' \t' ' ')"
	k=0
	for ((r = 1; r <= rounds; r++)); do
		if ((r % 2)); then order="0 $live"; else order="$live 0"; fi
		for n in $order; do
			k=$((k + 1))
			run_rds "$k" "live$n" "modules=ours run=$k round=$r" \
				--tests rdma --dirs write --keys map --sizes 4K,64K \
				--inflight 1 --live-keys "$n"
		done
	done
	finish
fi

# ---------------------------------------------------------------- scale
# sample NAME: this guest's memory and RDMA resources, into mem-NAME.txt.
sample() {
	local f=$RESULTS/mem-$1.txt

	sync
	{
		echo "# sample $1 at $(cut -d' ' -f1 /proc/uptime) s of uptime"
		cat /proc/meminfo
		# free pages on the per-CPU lists, which MemFree leaves out
		awk '$1 == "count:" { n += $2 } END { print "PcpFree: " n * 4 " kB" }' /proc/zoneinfo
		echo "rdma_summary: $(rdma resource show 2>/dev/null | grep -m 1 rxe0)"
		echo "rdma_qp: $(rdma resource show qp 2>/dev/null | grep -c lqpn)"
		echo "rdma_mr: $(rdma resource show mr 2>/dev/null | grep -c mrn)"
		echo "rdma_cq: $(rdma resource show cq 2>/dev/null | grep -c cqn)"
		echo "rdma_cm_connected: $(rdma resource show cm_id 2>/dev/null | grep -c 'state CONNECT')"
		[ ! -x "$info" ] || "$info" -n -z 2>&1 | sed 's/^/# /'
	} > "$f"
	echo "# mem-$1: $(grep -E '^rdma_(qp|mr|cq|cm)' "$f" | tr '\n' ' ')"
}

if [ "$mode" = scale ]; then
	size=${1:-4096}
	depth=${2:-4}
	me=$RDS_NODE
	peers=()
	for a in $RDS_ADDRS; do
		[ "$a" = "$RDS_ADDR" ] || peers+=("${a##*.}")
	done
	tag="guests=$RDS_NODES node=$me modules=$RDS_MODULES"
	if [ "$RDS_MODULES" != ours ]; then
		emit "not ok" "the all-to-all run needs our modules (vm-run.sh --modules ours)"
		finish
	fi

	# one server per peer: port 18700 + the peer's number
	srvs=()
	for j in "${peers[@]}"; do
		out=$RESULTS/server-$j.txt
		"$bench" server -a "$RDS_ADDR" -p $((18700 + j)) --idle 900 > "$out" 2>&1 &
		srvs+=($!)
		wait_file "$out" "rds-zc-bench server on" 60 ||
			echo "# server for guest $j: not started: $(head -c 300 "$out")"
	done
	meet scale-servers 300 || { emit "not ok" "every guest started its servers"; finish; }
	emit ok "${#peers[@]} server(s) up, one per peer"
	sleep 2
	sample 0

	# 2. connection setup: K opens its connections to J > K, in turn
	meet scale-conn 120 || { emit "not ok" "every guest reached the connection setup"; finish; }
	for j in "${peers[@]}"; do
		[ "$j" -gt "$me" ] || continue
		out=$RESULTS/conn-$j.txt
		"$bench" client -a "$RDS_ADDR" -s "10.0.0.$j" -p $((18700 + me)) -t 30 \
			--tests conn --tag "$tag peer=$j" > "$out" 2>&1
		rc=$?
		sed 's/^/# /' "$out"
		if [ "$rc" = 0 ]; then
			emit ok "connection to guest $j set up: $(sed -n 's/^RESULT .* value=\([^ ]*\) unit=ms.*/\1 ms/p' "$out")"
		else
			emit "not ok" "connection to guest $j # status $rc"
		fi
	done
	meet scale-conn-done 300 || emit "not ok" "every guest set up its connections"
	sleep 2
	sample 1

	# 4. every guest streams to every other at once
	meet scale-stream 120 || { emit "not ok" "every guest reached the stream"; finish; }
	clients=()
	for j in "${peers[@]}"; do
		"$bench" client -a "$RDS_ADDR" -s "10.0.0.$j" -p $((18700 + me)) \
			-T "$secs" -t 30 --tests rdma --dirs write --keys map \
			--sizes "$size" --inflight "$depth" --tag "$tag peer=$j" \
			> "$RESULTS/stream-$j.txt" 2>&1 &
		clients+=($!)
	done
	i=0
	for j in "${peers[@]}"; do
		wait "${clients[i]}"
		rc=$?
		i=$((i + 1))
		sed 's/^/# /' "$RESULTS/stream-$j.txt"
		if [ "$rc" = 0 ]; then
			emit ok "stream to guest $j: $(sed -n 's/^RESULT .* value=\([^ ]*\) unit=\([^ ]*\).*/\1 \2/p' "$RESULTS/stream-$j.txt")"
		else
			emit "not ok" "stream to guest $j # status $rc"
		fi
	done
	meet scale-stream-done 300 || emit "not ok" "every guest finished its streams"
	sleep 2
	sample 2
	for p in "${srvs[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	finish
fi

# ---------------------------------------------------------------- verbs
[ "$mode" = verbs ] || { echo "Bail out! unknown mode '$mode'"; exit 2; }

mkdir -p "$RESULTS/verbs"
dur=$(printf '%.0f' "$secs")
[ "$dur" -ge 2 ] || dur=2
n=0

# listening PORT SECS: an rdma_cm ID listens on PORT (rdma resource show).
listening() {
	local i

	for ((i = 0; i < $2 * 5; i++)); do
		rdma resource show cm_id 2>/dev/null |
			grep -Eq "LISTEN.* src-addr [^ ]*:$1( |\$)" && return 0
		sleep 0.2
	done
	return 1
}

# perftest FIGURE SIZE DEPTH PROG ARGS...: one perftest measurement, up
# to 3 attempts.  perftest times with the TSC, calibrated at start against
# gettimeofday(); under TCG the calibration sometimes fails (it prints
# "Correlation coefficient r^2 < 0.9" and a bandwidth of 0.00 for a
# non-zero count): such a run is made again, and so is one that printed no
# result (its client found no listener).  A run that moved nothing (0
# iterations: the RDMA failed) is not.
perftest() {
	local fig=$1 size=$2 depth=$3 prog=$4 a out srv port verdict line
	shift 4
	n=$((n + 1))
	for a in 1 2 3; do
		port=$((19100 + 3 * n + a))
		out=$RESULTS/verbs/$n-$a-$prog
		if [ "$RDS_NODE" = 1 ]; then
			timeout 120 "$prog" -R -F -d rxe0 -p "$port" "$@" > "$out.server" 2>&1 &
			srv=$!
			# a client that finds no listener crashes (librdmacm, on
			# the REJECTED event): wait for the rdma_cm listener
			listening "$port" 60 ||
				echo "# $prog on port $port: no rdma_cm listener after 60 s"
			meet "v$n-$a" 300
			meet "v$n-$a-done" 300
			kill "$srv" 2>/dev/null
			wait "$srv" 2>/dev/null
			verdict=$(cat "$peer_results/verbs/$n-$a.verdict" 2>/dev/null)
		else
			meet "v$n-$a" 300
			timeout 120 "$prog" -R -F -d rxe0 -p "$port" "$@" "$RDS_PEER_ADDR" > "$out.client" 2>&1
			line=$(awk -v s="$size" '$1 == s && NF >= 4 { print; exit }' "$out.client")
			verdict=retry
			if [ -z "$line" ]; then
				verdict=retry
			elif [[ $prog == *_lat ]]; then
				verdict=ok
			else
				verdict=$(awk '{ print ($2 == 0 ? "failed" : ($4 > 0 ? "ok" : "retry")) }' <<< "$line")
			fi
			echo "$verdict" > "$RESULTS/verbs/$n-$a.verdict"
			meet "v$n-$a-done" 300
			if [ "$verdict" = ok ]; then
				case $prog in
				*_lat)
					# one-way latency (half a round trip): double it
					awk -v s="$size" '{
						printf "RESULT name=raw_rtt_p50 size=%s inflight=1 value=%.3f unit=us t_typical=%s\n", s, 2 * $5, $5
						printf "RESULT name=raw_rtt_p99 size=%s inflight=1 value=%.3f unit=us p99=%s\n", s, 2 * $8, $8
					}' <<< "$line"
					;;
				*)
					awk -v f="$fig" -v s="$size" -v d="$depth" '{
						printf "RESULT name=%s size=%s inflight=%s value=%.3f unit=MiB/s iters=%s\n", f, s, d, $4, $2
					}' <<< "$line"
					;;
				esac
				emit ok "$prog $* (attempt $a)"
				return 0
			fi
			echo "# $prog $* attempt $a: $verdict: $(tail -n 3 "$out.client" | tr '\n' ' ')"
		fi
		[ "$verdict" = ok ] && return 0
		[ "$verdict" = failed ] && break
	done
	[ "$RDS_NODE" = 1 ] && return 0
	if [ "$verdict" = failed ]; then
		echo "RESULT name=$fig size=$size inflight=$depth value=error unit=MiB/s reason=\"0 iterations: the RDMA failed\""
		emit "not ok" "$prog $* # it moved nothing: the RDMA failed"
	else
		emit "not ok" "$prog $* # no result in $a attempts"
	fi
}

for ((round = 1; round <= ${1:-1}; round++)); do
	echo "# raw verbs, round $round"
	for size in 4096 65536 1048576; do
		for depth in 1 16; do
			perftest raw_write "$size" "$depth" ib_write_bw -s "$size" -t "$depth" -D "$dur"
		done
	done
	for size in 4096 65536 1048576; do
		for depth in 1 16; do
			perftest raw_read "$size" "$depth" ib_read_bw -s "$size" -t "$depth" -o "$depth" -D "$dur"
		done
	done
	perftest raw_rtt 64 1 ib_write_lat -s 64 -n 1000
done
[ "$RDS_NODE" = 1 ] && emit ok "perftest servers"
finish
