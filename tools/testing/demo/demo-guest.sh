#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The demonstration, guest side (run by tools/testing/demo.sh through the
# bench in two guests, 10.0.0.1 and 10.0.0.2, linked by soft-RoCE).
#
# Act 1: the distribution's rds_rdma carries datagrams between the two
#        guests over RDMA: this is the reference the project replaces.
# Act 2: the project's modules replace it in guest 1 and deliver
#        datagrams between two programs of that guest, byte for byte.
#
# Prints TAP: a "# " line tells what happens, an "ok" line what was shown.
set -uo pipefail

chat=$RDS_REPO/tools/testing/demo/rds_chat
barrier=$RDS_VM_TOOLS/guest-barrier.sh
n=0
failed=0

say() { echo "# $*"; }
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
	report $st "$1"
}
serve_until_done() {	# serve_until_done PID DESCRIPTION: a background server's verdict
	local st
	wait "$1"
	st=$?
	sed 's/^/# /' "$RESULTS/server.txt"
	report $st "$2"
}

say "guest $RDS_NODE: address $RDS_ADDR, RDMA device rxe0 on eth0 (soft-RoCE)"

# Act 1.
check "the distribution's rds_rdma loads" modprobe rds_rdma
"$barrier" act1-loaded || failed=1
if [ "$RDS_NODE" = 2 ]; then
	say "guest 2 runs a server that answers each datagram with its bytes reversed"
	"$chat" serve 10.0.0.2 4000 20 > "$RESULTS/server.txt" 2>&1 &
	srv=$!
	sleep 1
	"$barrier" act1-serving || failed=1
	serve_until_done $srv "server on 10.0.0.2 answered 20 datagrams (distribution's RDS)"
else
	"$barrier" act1-serving || failed=1
	say "guest 1 sends 20 datagrams of 8000 bytes to 10.0.0.2 port 4000 over RDMA"
	check "all answers from guest 2 intact (distribution's RDS over rxe)" \
		"$chat" ask 10.0.0.1 4001 10.0.0.2 4000 20 8000
fi
"$barrier" act1-done || failed=1
rmmod rds_rdma rds 2>/dev/null

# Act 2.
if [ "$RDS_NODE" = 1 ]; then
	say "guest 1 now loads the project's modules: rds_zc (sockets, local delivery) and rds_zc_ib"
	check "rds_zc.ko loads" insmod "$RDS_MODULE_DIR/rds_zc.ko"
	check "rds_zc_ib.ko loads" insmod "$RDS_MODULE_DIR/rds_zc_ib.ko"
	say "two programs of guest 1 talk through the project's RDS, inside the kernel"
	"$chat" serve 10.0.0.1 5000 30 > "$RESULTS/server.txt" 2>&1 &
	srv=$!
	sleep 1
	check "30 datagrams of 1 MiB answered intact (project's RDS, local delivery)" \
		"$chat" ask 10.0.0.1 5001 10.0.0.1 5000 30 1048576
	serve_until_done $srv "the local server answered every datagram"
	check "the project's modules unload cleanly" rmmod rds_zc_ib rds_zc
	say "messages between guests through the project's own IB transport come with the transport work"
fi
echo "1..$n"
exit $failed
