#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The demonstration, guest side (run by tools/testing/demo.sh through the
# bench, vm-run.sh --modules none, in two guests, 10.0.0.1 and 10.0.0.2,
# linked by soft-RoCE).
#
# Act 1: both guests load the project's modules, rds_zc and rds_zc_ib;
#        guest 1 sends datagrams to guest 2 over the project's IB
#        transport and checks every answer byte for byte.
# Act 2: the zero-copy cycle (tools/rds-zc-examples/zc_cycle): guest 2
#        registers a buffer (RDS_GET_MR), guest 1 RDMA-READs it and
#        RDMA-WRITEs its own bytes into it with an ACK, the statuses come
#        as RDS_CMSG_RDMA_STATUS, guest 2 checks its buffer and releases
#        the key (RDS_FREE_MR); a WRITE with the released key then fails.
# Act 3: guest 2 swaps to the distribution's rds_rdma; the datagrams of
#        act 1 go between the project's module and the distribution's,
#        both ways.
#
# Prints TAP: a "# " line tells what happens, an "ok" line what was shown;
# "# @act N TITLE" lines mark the acts for demo.sh.  Any failed step is a
# "not ok" line naming it, and the exit status is then 1.
set -uo pipefail

chat=$RDS_REPO/tools/testing/demo/rds_chat
zc=$RDS_REPO/tools/rds-zc-examples/zc_cycle
state=$RDS_REPO/tools/testing/selftests/net/rds/rds_state
barrier=$RDS_VM_TOOLS/guest-barrier.sh
me=$RDS_ADDR
n=0
failed=0

say() { echo "# $*"; }
act() { echo "# @act $*"; }
report() {	# report STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=1
	fi
}
check() {	# check DESCRIPTION COMMAND...: the command's words become "# " lines
	local out st
	out=$("${@:2}" 2>&1)
	st=$?
	[ -n "$out" ] && printf '%s\n' "$out" | sed 's/^/# /'
	[ "$st" = 124 ] && say "(stopped: it ran past its time limit)"
	report $st "$1"
}
# serve_until_done PID BARRIER DESCRIPTION: a background server's verdict,
# once its client, on the other guest, is done (BARRIER): a server still
# waiting 10 s later is stopped, as one whose client failed would wait.
serve_until_done() {
	local st

	meet "$2"
	for _ in $(seq 20); do
		kill -0 "$1" 2> /dev/null || break
		sleep 0.5
	done
	kill "$1" 2> /dev/null
	wait "$1"
	st=$?
	sed 's/^/# /' "$RESULTS/server.txt"
	case $st in
	124) say "(stopped: it ran past its time limit)" ;;
	143) say "(stopped: its client was done, it was still waiting)" ;;
	esac
	report $st "$3"
}
meet() {	# meet NAME: wait for the other guest; a result only if it fails
	"$barrier" "$1" 200 > /dev/null 2>&1 ||
		report 1 "guest $RDS_NODE waited for the other guest at \"$1\" (it never came)"
}
modules() {	# modules: the RDS modules now loaded
	lsmod | awk '$1 ~ /^rds/ { printf "%s ", $1 } END { print "" }'
}
connections() {	# connections: RDS's own view of its connections
	[ -x "$state" ] && "$state" none | sed -n 's/^# connection /#   /p'
}
counters() {	# counters PREFIX...: RDS's counters (RDS_INFO_COUNTERS) that are not 0
	local p

	[ -x "$state" ] || return 0
	for p in "$@"; do
		"$state" "$p" | sed -n 's/^# counter /#   /p'
	done
}

say "guest $RDS_NODE: address $me, RDMA device rxe0 on eth0 (soft-RoCE: RDMA in software over Ethernet)"

act 1 "datagrams between the guests over the project's IB transport"
say "guest $RDS_NODE loads the project's modules: rds_zc (the AF_RDS socket family) and rds_zc_ib (the transport over RDMA devices)"
check "guest $RDS_NODE: the kernel's RDMA connection manager loads" modprobe rdma_cm
check "guest $RDS_NODE: rds_zc.ko loads" insmod "$RDS_MODULE_DIR/rds_zc.ko"
check "guest $RDS_NODE: rds_zc_ib.ko loads" insmod "$RDS_MODULE_DIR/rds_zc_ib.ko"
say "RDS modules now loaded: $(modules)"
meet act1-loaded
if [ "$RDS_NODE" = 2 ]; then
	say "guest 2 runs a server on port 4000 that answers each datagram with its bytes reversed"
	timeout 120 "$chat" serve "$me" 4000 50 > "$RESULTS/server.txt" 2>&1 &
	srv=$!
	sleep 1
	meet act1-serving
	serve_until_done $srv act1-asked "guest 2 answered 50 datagrams (project's RDS on both guests)"
else
	meet act1-serving
	say "guest 1 sends 50 datagrams of 65536 bytes to 10.0.0.2 port 4000, one at a time, and checks each answer"
	check "guest 1 got every answer from guest 2 intact, over the project's IB transport" \
		timeout 120 "$chat" ask "$me" 4001 10.0.0.2 4000 50 65536
	meet act1-asked
	say "RDS's connection to guest 2 (RDS_INFO_CONNECTIONS: addresses, transport, state, next sequence numbers):"
	connections
	say "the RDMA queue pairs on rxe0 (rdma resource show qp): the one made through rdma_cm carries the"
	say "connection (its packet sequence numbers moved); rds_zc_ib's own, connected to itself and idle"
	say "so far, registers and invalidates memory keys for act 2"
	rdma resource show qp 2> /dev/null | grep -w RC |
		sed 's/^link \([^ ]*\) lqpn \([0-9]*\) .*type RC state \([A-Z]*\) rq-psn \([0-9]*\) sq-psn \([0-9]*\) .*comm \([^ ]*\).*/#   QP \2 on \1, \3, owner \6, rq-psn \4 sq-psn \5/'
fi
meet act1-done

act 2 "the zero-copy cycle: guest 1's RDMA device reads and writes guest 2's memory"
if [ "$RDS_NODE" = 1 ]; then
	say "guest 1 is the server: for each request it RDMA-READs the client's buffer,"
	say "checks the bytes, then RDMA-WRITEs its own bytes into the buffer with a message, the ACK;"
	say "each operation reports its end as an RDS_CMSG_RDMA_STATUS notification"
	timeout 150 "$zc" serve "$me" 5000 > "$RESULTS/server.txt" 2>&1 &
	srv=$!
	sleep 1
	meet act2-serving
	serve_until_done $srv act2-asked "guest 1 read every buffer intact, every operation ended with SUCCESS, the released key failed"
	say "guest 1's counters: RDMA operations (10 READs, 10 WRITEs, the probe), the RDMA work requests"
	say "posted for them, how each ended (20 successes, the probe's remote access error) and the"
	say "notifications queued"
	counters rdma_ops rdma_done ib_tx_rdma rdma_notify
else
	meet act2-serving
	say "guest 2 is the client: 10 times it fills 262144 bytes, registers them with RDS_GET_MR"
	say "(the cookie names them to the peer), sends the cookie in a request, waits for the ACK,"
	say "checks that the buffer now holds guest 1's bytes, and releases the key with RDS_FREE_MR."
	say "Then it asks guest 1 to write with the released key, which must fail."
	check "guest 2's buffer held guest 1's bytes after each cycle; the released key was dead" \
		timeout 150 "$zc" client "$me" 5001 10.0.0.1 5000 262144 10
	meet act2-asked
	say "guest 2's counters: memory regions created and released, keys registered and invalidated"
	counters rdma_mr ib_mr_registered ib_mr_invalidated
fi
meet act2-done

act 3 "the project's module and the distribution's, between the guests"
if [ "$RDS_NODE" = 2 ]; then
	say "guest 2 unloads the project's modules and loads the distribution's rds_rdma (and rds)"
	check "guest 2: the project's modules unload" rmmod rds_zc_ib rds_zc
	check "guest 2: the distribution's rds_rdma loads" modprobe rds_rdma
	say "RDS modules now loaded on guest 2: $(modules)"
	timeout 120 "$chat" serve "$me" 4000 50 > "$RESULTS/server.txt" 2>&1 &
	srv=$!
	sleep 1
	meet act3-serving
	serve_until_done $srv act3-asked "guest 2 (distribution's RDS) answered 50 datagrams from guest 1 (project's RDS)"
	meet act3-reverse
	say "now the other way: guest 2 (distribution's RDS) asks guest 1 (project's RDS)"
	check "guest 2 got every answer from guest 1 intact, distribution's RDS to the project's" \
		timeout 120 "$chat" ask "$me" 4003 10.0.0.1 4002 50 65536
	meet act3-asked-back
	meet act3-done
	check "guest 2: the distribution's modules unload" rmmod rds_rdma rds
else
	say "guest 1 keeps the project's modules; its connection to guest 2 broke when guest 2 unloaded, and comes back"
	say "guest 1 sends the same 50 datagrams of 65536 bytes to guest 2, which now runs the distribution's RDS"
	meet act3-serving
	check "guest 1 got every answer intact, project's RDS to the distribution's" \
		timeout 120 "$chat" ask "$me" 4001 10.0.0.2 4000 50 65536
	meet act3-asked
	timeout 120 "$chat" serve "$me" 4002 50 > "$RESULTS/server.txt" 2>&1 &
	srv=$!
	sleep 1
	meet act3-reverse
	serve_until_done $srv act3-asked-back "guest 1 (project's RDS) answered 50 datagrams from guest 2 (distribution's RDS)"
	meet act3-done
	check "guest 1: the project's modules unload" rmmod rds_zc_ib rds_zc
fi
echo "1..$n"
exit $failed
