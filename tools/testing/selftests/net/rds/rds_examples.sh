#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rds_examples.sh - the user guide's example programs
# (tools/rds-zc-examples) between the two guests of run_remote.sh: node 1
# serves, node 2 is the client.
#
#   atomic_counter: two clients add 100 each at once, a third adds none;
#	the server must then show 200.
#   bulk_reclaim: the client fetches 256 pages, which the server writes
#	from a ring of 4 buffers reused by barrier; every byte is checked.
#   zc_cycle: 20 zero-copy cycles of 100000 bytes (RDS_GET_MR, the server
#	READs the client's buffer and WRITEs its own bytes into it with the
#	ACK, RDS_FREE_MR), each byte checked on both sides, then a WRITE
#	with the released key must fail with REMOTE_ERROR.
#
# They use this implementation's own calls (and atomics that rxe has),
# so both guests must run our modules; TAP on stdout.
# Environment (from vm-run.sh): RDS_NODE, RDS_ADDR, RDS_PEER_ADDR,
# RDS_MODULES_ALL, RDS_VM_TOOLS.

set -u
ex=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../../../rds-zc-examples" && pwd)
sync_guests() { "$RDS_VM_TOOLS/guest-barrier.sh" "examples-$1" 120; }

case ${RDS_MODULES_ALL:-} in
ours | ours,ours) ;;
*)	echo "1..0 # SKIP the examples need our modules on both guests (${RDS_MODULES_ALL:-unset})"
	exit 0 ;;
esac
if ! make -s -C "$ex" > /dev/null 2>&1; then
	echo "1..1"
	echo "not ok 1 - build tools/rds-zc-examples"
	exit 1
fi
out=$(mktemp -d)
echo "1..3"

if [ "$RDS_NODE" = 1 ]; then
	"$ex/atomic_counter" serve "$RDS_ADDR" 4000 > "$out/counter" 2>&1 &
	counter=$!
	"$ex/bulk_reclaim" serve "$RDS_ADDR" 4001 > "$out/reclaim" 2>&1 &
	reclaim=$!
	timeout 170 "$ex/zc_cycle" serve "$RDS_ADDR" 4002 > "$out/cycle" 2>&1 &
	cycle=$!
	sleep 1
	sync_guests serving
	sync_guests finished
	if grep -qx "counter 200" "$out/counter"; then
		echo "ok 1 - atomic_counter: the server counted 200 adds"
	else
		sed 's/^/# /' "$out/counter"
		echo "not ok 1 - atomic_counter: the server did not count 200 adds"
	fi
	if kill -0 "$reclaim" 2> /dev/null; then
		echo "ok 2 - bulk_reclaim: the server served and is still up"
	else
		sed 's/^/# /' "$out/reclaim"
		echo "not ok 2 - bulk_reclaim: the server died"
	fi
	# The client's "bye" ends the server (a client that died leaves it
	# waiting: 10 s, then it is stopped); its status says whether every
	# READ found the client's bytes and every operation succeeded.
	for _ in $(seq 20); do
		kill -0 "$cycle" 2> /dev/null || break
		sleep 0.5
	done
	kill "$cycle" 2> /dev/null
	if wait "$cycle" && grep -q "^server: 20 cycles, 0 failed, 4000000 bytes by RDMA, 0 wrong" "$out/cycle" &&
	   grep -q "^server: probe: status REMOTE_ERROR" "$out/cycle"; then
		echo "ok 3 - zc_cycle: the server read 20 buffers intact, the released key failed"
	else
		sed 's/^/# /' "$out/cycle"
		echo "not ok 3 - zc_cycle: the server saw a failure"
	fi
	kill "$counter" "$reclaim" 2> /dev/null
	wait
else
	sync_guests serving
	st=0
	"$ex/atomic_counter" add "$RDS_ADDR" 4010 "$RDS_PEER_ADDR" 4000 100 > "$out/a1" 2>&1 &
	a1=$!
	"$ex/atomic_counter" add "$RDS_ADDR" 4011 "$RDS_PEER_ADDR" 4000 100 > "$out/a2" 2>&1 || st=1
	wait "$a1" || st=1
	timeout 30 "$ex/atomic_counter" add "$RDS_ADDR" 4012 "$RDS_PEER_ADDR" 4000 0 > "$out/a3" 2>&1 || st=1
	if [ $st = 0 ]; then
		echo "ok 1 - atomic_counter: three clients"
	else
		cat "$out"/a? | sed 's/^/# /'
		echo "not ok 1 - atomic_counter: a client failed"
	fi
	if timeout 60 "$ex/bulk_reclaim" fetch "$RDS_ADDR" 4013 "$RDS_PEER_ADDR" 4001 256 > "$out/fetch" 2>&1 &&
	   grep -qx "256 pages fetched" "$out/fetch"; then
		echo "ok 2 - bulk_reclaim: 256 pages fetched and checked"
	else
		sed 's/^/# /' "$out/fetch"
		echo "not ok 2 - bulk_reclaim: fetch failed"
	fi
	if timeout 150 "$ex/zc_cycle" client "$RDS_ADDR" 4014 "$RDS_PEER_ADDR" 4002 100000 20 > "$out/cycle" 2>&1 &&
	   grep -q "^client: 20 cycles, 20 right" "$out/cycle" &&
	   grep -q "^client: the released key is dead" "$out/cycle"; then
		echo "ok 3 - zc_cycle: 20 cycles, the buffer held the server's bytes each time"
	else
		sed 's/^/# /' "$out/cycle"
		echo "not ok 3 - zc_cycle: the client saw a failure"
	fi
	sync_guests finished
fi
rm -rf "$out"
