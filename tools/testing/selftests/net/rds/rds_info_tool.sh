#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rds_info_tool.sh - tools/rds-zc-info against live RDS state, on both
# guests of run_remote.sh, with whichever modules each guest runs (ours or
# the distribution's).  Each node binds two sockets, PORT and PORT+1, and
# sends the other node a datagram from PORT to PORT and one of $HELD bytes
# from PORT to PORT+1, which is never read; once each node has received
# its datagram, it checks what the tool prints:
#
#   help		--help prints the synopsis and exits 0
#   exchange		the datagram from the peer arrived (the rest needs it)
#   counters		-c: send_queued and recv_queued grew by at least 2
#			and 1 over the exchange, and ib_ counters are listed
#   connections	-n: a row from this node to the peer flagged C
#   sockets		-k: a row bound to this node's address and PORT
#   recv_queue		-r: the held datagram, from the peer's PORT to
#			PORT+1, $HELD bytes, with its sequence number (not 0)
#   queue_headers	-s, -t and -T print their titles and exit 0 (-T
#			with a column header or "not provided by this module")
#   ib_connections	-I: a row to the peer whose GIDs are the IPv4-mapped
#			GIDs of the two addresses (rxe, RoCE v2)
#   project_counters	-z: ours: the module named and the MR pool,
#			RDMA and reconnect groups with conn_up > 0; the
#			distribution's: the module named and every group
#			"not provided by this module"
#   all_tables		no option: every table's title, exit 0
#   six			-6 -k -n: the RDS6_INFO_* tables, titled so, with the
#			socket bound to PORT and the connection to the peer
#			in the dotted form of IPv4 addresses
#
# TAP on stdout; what the tool printed is kept in $RESULTS/rds_info_tool/.
# Environment (from vm-run.sh): RDS_NODE, RDS_ADDR,
# RDS_PEER_ADDR, RDS_MODULES, RDS_VM_TOOLS.

set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tooldir=$(cd "$here/../../../../rds-zc-info" && pwd)
tool=$tooldir/rds-zc-info
PORT=18300
HELD=77
CASES=(help exchange counters connections sockets recv_queue queue_headers
       ib_connections project_counters all_tables six)

# shellcheck source=lib_cases.sh
. "$here/lib_cases.sh"

sync_guests() { "$RDS_VM_TOOLS/guest-barrier.sh" "info-$1" "$2"; }

# counter NAME FILE: the value of counter NAME in rds-zc-info -c output
counter() {
	awk -v n="$1" '$1 == n && NF == 2 { print $2; f = 1 } END { if (!f) print -1 }' "$2"
}

[ -n "${RDS_PEER_ADDR:-}" ] || skip_all "needs the two guests of run_remote.sh"
command -v python3 > /dev/null || skip_all "needs python3"
if ! out=$(make -s -C "$tooldir" 2>&1); then
	echo "1..1"
	diag "$out"
	result 1 "build tools/rds-zc-info"
	exit 1
fi

work=$(mktemp -d) || exit 1
peer_pid=
# shellcheck disable=SC2317	# called by the trap
cleanup() {
	[ -n "$peer_pid" ] && kill "$peer_pid" 2> /dev/null
	rm -rf "$work"
}
trap cleanup EXIT

# The sockets: bind both, say so, wait for "go", send, receive, then keep
# both open (the held datagram in PORT+1's queue) until killed.
python3 - "$RDS_ADDR" "$RDS_PEER_ADDR" "$PORT" "$HELD" "$work" \
	> "$work/py.log" 2>&1 <<'EOF' &
import os, socket, sys, time
addr, peer, port, held, work = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET)
s.bind((addr, port))
h = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET)
h.bind((addr, port + 1))
open(work + "/bound", "w").close()
while not os.path.exists(work + "/go"):
    time.sleep(0.1)
s.sendto(b"x" * held, (peer, port + 1))
s.sendto(b"hello from " + addr.encode(), (peer, port))
s.settimeout(90)
data, frm = s.recvfrom(100)
with open(work + "/received", "w") as f:
    f.write("%s %s:%d\n" % (data.decode(), frm[0], frm[1]))
while True:
    time.sleep(10)
EOF
peer_pid=$!

echo "1..${#CASES[@]}"

if "$tool" --help > "$work/help" 2>&1 && grep -q '^SYNOPSIS' "$work/help" &&
   grep -q -- '-z' "$work/help"; then
	result 0 help
else
	diag "$(cat "$work/help")"
	result 1 help
fi

for _ in $(seq 100); do
	[ -e "$work/bound" ] && break
	sleep 0.1
done
"$tool" -c > "$work/c0" 2>&1
sync_guests bound 120
touch "$work/go"
for _ in $(seq 120); do
	[ -e "$work/received" ] && break
	sleep 1
done
if grep -qx "hello from $RDS_PEER_ADDR $RDS_PEER_ADDR:$PORT" "$work/received" 2> /dev/null; then
	result 0 exchange
	ok=1
else
	diag "no datagram from $RDS_PEER_ADDR:$PORT: $(cat "$work/py.log" 2>&1)"
	result 1 exchange
	ok=0
fi

if [ "$ok" = 1 ]; then
	# counters
	"$tool" -c > "$work/c1" 2>&1
	st=$?
	sq0=$(counter send_queued "$work/c0")
	sq1=$(counter send_queued "$work/c1")
	rq0=$(counter recv_queued "$work/c0")
	rq1=$(counter recv_queued "$work/c1")
	nib=$(grep -c '^ib_[a-z0-9_]* *[0-9][0-9]*$' "$work/c1")
	if [ "$st" = 0 ] && [ "$sq0" -ge 0 ] && [ "$sq1" -ge $((sq0 + 2)) ] &&
	   [ "$rq0" -ge 0 ] && [ "$rq1" -ge $((rq0 + 1)) ] && [ "$nib" -gt 0 ]; then
		result 0 counters
	else
		diag "status $st, send_queued $sq0 -> $sq1, recv_queued $rq0 -> $rq1, $nib ib_ counters"
		diag "$(cat "$work/c1")"
		result 1 counters
	fi

	# connections: LocalAddr RemoteAddr Tos NextTX NextRX Flags
	"$tool" -n > "$work/n" 2>&1
	st=$?
	if [ "$st" = 0 ] && awk -v l="$RDS_ADDR" -v r="$RDS_PEER_ADDR" \
		'$1 == l && $2 == r && $3 == 0 && $6 ~ /C/ { f = 1 } END { exit !f }' "$work/n"; then
		result 0 connections
	else
		diag "status $st, no row $RDS_ADDR -> $RDS_PEER_ADDR flagged C:"
		diag "$(cat "$work/n")"
		result 1 connections
	fi

	# sockets: BoundAddr BPort ConnAddr CPort SndBuf RcvBuf Inode
	"$tool" -k > "$work/k" 2>&1
	st=$?
	if [ "$st" = 0 ] && awk -v a="$RDS_ADDR" -v p="$PORT" \
		'$1 == a && $2 == p && $7 > 0 { f = 1 } END { exit !f }' "$work/k"; then
		result 0 sockets
	else
		diag "status $st, no socket bound to $RDS_ADDR:$PORT:"
		diag "$(cat "$work/k")"
		result 1 sockets
	fi

	# receive queue: LocalAddr LPort RemoteAddr RPort Tos Seq Bytes
	"$tool" -r > "$work/r" 2>&1
	st=$?
	if [ "$st" = 0 ] && awk -v l="$RDS_ADDR" -v lp=$((PORT + 1)) \
		-v r="$RDS_PEER_ADDR" -v rp="$PORT" -v b="$HELD" \
		'$1 == l && $2 == lp && $3 == r && $4 == rp && $6 > 0 && $7 == b { f = 1 }
		 END { exit !f }' "$work/r"; then
		result 0 recv_queue
	else
		diag "status $st, no $HELD-byte datagram with a sequence number from $RDS_PEER_ADDR:$PORT queued to $RDS_ADDR:$((PORT + 1)):"
		diag "$(cat "$work/r")"
		result 1 recv_queue
	fi

	# send, retransmit, TCP
	"$tool" -s -t -T > "$work/stT" 2>&1
	st=$?
	if [ "$st" = 0 ] && grep -qx 'Send Message Queue:' "$work/stT" &&
	   grep -qx 'Retransmit Message Queue:' "$work/stT" &&
	   grep -A1 -x 'TCP Connections:' "$work/stT" |
		grep -qE '^(not provided by this module| *LocalAddr +LPort .*SeenUna)$'; then
		result 0 queue_headers
	else
		diag "status $st:"
		diag "$(cat "$work/stT")"
		result 1 queue_headers
	fi

	# IB connections: LocalAddr RemoteAddr Tos SL LocalGID RemoteGID
	"$tool" -I > "$work/I" 2>&1
	st=$?
	if [ "$st" = 0 ] && awk -v l="$RDS_ADDR" -v r="$RDS_PEER_ADDR" \
		'$1 == l && $2 == r && $5 == "::ffff:" l && $6 == "::ffff:" r { f = 1 }
		 END { exit !f }' "$work/I"; then
		result 0 ib_connections
	else
		diag "status $st, no row $RDS_ADDR -> $RDS_PEER_ADDR with GIDs ::ffff:$RDS_ADDR and ::ffff:$RDS_PEER_ADDR:"
		diag "$(cat "$work/I")"
		result 1 ib_connections
	fi

	# the project's counters
	"$tool" -z > "$work/z" 2>&1
	st=$?
	case ${RDS_MODULES:-} in
	ours)
		grep -qx 'Module: rds_zc (this project.s)' "$work/z" &&
		grep -qx 'MR pool:' "$work/z" &&
		grep -qE '^  rdma_mr_created +[0-9]+ ' "$work/z" &&
		grep -qE '^  ib_mr_pool_alloc +[0-9]+ ' "$work/z" &&
		grep -qx 'RDMA operations by status:' "$work/z" &&
		grep -qE '^  rdma_ops +[0-9]+ ' "$work/z" &&
		grep -qx 'Reconnects:' "$work/z" &&
		grep -qE '^  conn_up +[1-9][0-9]* ' "$work/z" &&
		! grep -q 'not provided' "$work/z"
		;;
	*)
		grep -qE '^Module: rds \(not this project' "$work/z" &&
		[ "$(grep -cx '  not provided by this module' "$work/z")" = 3 ]
		;;
	esac
	zst=$?
	if [ "$st" = 0 ] && [ "$zst" = 0 ]; then
		result 0 project_counters
	else
		diag "status $st, modules ${RDS_MODULES:-unset}:"
		diag "$(cat "$work/z")"
		result 1 project_counters
	fi

	# everything
	"$tool" > "$work/all" 2>&1
	st=$?
	miss=
	for t in 'Counters' 'RDS Sockets' 'RDS Connections' \
		 'Receive Message Queue' 'Send Message Queue' \
		 'Retransmit Message Queue' 'TCP Connections' \
		 'RDS IB Connections' 'RDS ZC Project Counters'; do
		grep -qx "$t:" "$work/all" || miss+=" '$t'"
	done
	if [ "$st" = 0 ] && [ -z "$miss" ]; then
		result 0 all_tables
	else
		diag "status $st, missing:$miss"
		result 1 all_tables
	fi

	# the RDS6_INFO_* tables: the same IPv4 rows
	"$tool" -6 -k -n > "$work/six" 2>&1
	st=$?
	if [ "$st" = 0 ] &&
	   grep -qx 'RDS Sockets (IPv4 and IPv6):' "$work/six" &&
	   grep -qx 'RDS Connections (IPv4 and IPv6):' "$work/six" &&
	   awk -v a="$RDS_ADDR" -v p="$PORT" -v r="$RDS_PEER_ADDR" \
		'$1 == a && $2 == p && $7 > 0 { k = 1 }
		 $1 == a && $2 == r && $6 ~ /C/ { n = 1 }
		 END { exit !(k && n) }' "$work/six"; then
		result 0 six
	else
		diag "status $st, no socket bound to $RDS_ADDR:$PORT or no connection to $RDS_PEER_ADDR flagged C:"
		diag "$(cat "$work/six")"
		result 1 six
	fi
else
	for c in "${CASES[@]:2}"; do
		result 4 "$c" "no exchange with the peer"
	done
fi

# What the tool printed, for the record.
if [ -n "${RESULTS:-}" ] && [ -d "$RESULTS" ]; then
	mkdir -p "$RESULTS/rds_info_tool" && cp "$work"/* "$RESULTS/rds_info_tool/"
fi
# The peer checks its own view meanwhile: keep the sockets until it is done.
sync_guests checked 240 || diag "the peer did not reach the end"
exit $((failed > 0))
