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
echo "1..2"

if [ "$RDS_NODE" = 1 ]; then
	"$ex/atomic_counter" serve "$RDS_ADDR" 4000 > "$out/counter" 2>&1 &
	counter=$!
	"$ex/bulk_reclaim" serve "$RDS_ADDR" 4001 > "$out/reclaim" 2>&1 &
	reclaim=$!
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
	sync_guests finished
fi
rm -rf "$out"
