#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rds_examples.sh - the user guide's example programs
# (tools/rds-zc-examples) between the two guests of run_remote.sh: node 1
# serves, node 2 is the client; over IPv4 (results 1 to 3), then over
# the guests' global IPv6 addresses (4 to 6), each asserting the same.
#
#   atomic_counter: two clients add 100 each at once, a third adds none;
#	the server must then show 200.
#   bulk_reclaim: the client fetches 256 pages, which the server writes
#	from a ring of 4 buffers reused by barrier; every byte is checked.
#	The server must print that it served the client 256 pages and
#	nothing else, and still be serving when it is stopped (SIGTERM).
#   zc_cycle: 20 zero-copy cycles of 100000 bytes (RDS_GET_MR, the server
#	READs the client's buffer and WRITEs its own bytes into it with the
#	ACK, RDS_FREE_MR), each byte checked on both sides, then a WRITE
#	with the released key must fail with REMOTE_ERROR; the server must
#	name the client by its address of the run's family.
#
# They use this implementation's own calls (and atomics that rxe has),
# so both guests must run our modules; TAP on stdout.  Without IPv6
# addresses (RDS_ADDR6 unset) results 4 to 6 are skipped.
# Environment (from vm-run.sh): RDS_NODE, RDS_ADDR, RDS_PEER_ADDR,
# RDS_ADDR6, RDS_PEER_ADDR6, RDS_MODULES_ALL, RDS_VM_TOOLS.

set -u
ex=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../../../rds-zc-examples" && pwd)
sync_guests() { "$RDS_VM_TOOLS/guest-barrier.sh" "examples-$1" 120; }

case ${RDS_MODULES_ALL:-} in
ours | ours,ours) ;;
*)	echo "1..0 # SKIP the examples use what the distribution's modules lack: they need ours on both guests (${RDS_MODULES_ALL:-unset})"
	exit 0 ;;
esac
if ! make -s -C "$ex" > /dev/null 2>&1; then
	echo "1..1"
	echo "not ok 1 - build tools/rds-zc-examples"
	exit 1
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
failed=0
echo "1..6"

# report N STATUS PASSED FAILED [LOG...]: result N, named PASSED if
# STATUS is 0, else FAILED and preceded by the logs.
report() {
	local n=$1 st=$2 passed=$3 failed_as=$4

	shift 4
	if [ "$st" = 0 ]; then
		echo "ok $n - $passed"
	else
		cat "$@" | sed 's/^/# /'
		echo "not ok $n - $failed_as"
		failed=1
	fi
}

# serve N TAG ADDR PEER PORT: node 1's side of one run of the three
# examples, its servers on ports PORT to PORT+2, its results N to N+2;
# TAG ("" or " over IPv6") is in their names, PEER is how zc_cycle must
# name the client ("10.0.0.2:", "[fd00::2]:").
serve() {
	local n=$1 tag=$2 addr=$3 peer=$4 port=$5 counter reclaim cycle st why

	"$ex/atomic_counter" serve "$addr" "$port" > "$out/counter" 2>&1 &
	counter=$!
	"$ex/bulk_reclaim" serve "$addr" $((port + 1)) > "$out/reclaim" 2>&1 &
	reclaim=$!
	timeout 170 "$ex/zc_cycle" serve "$addr" $((port + 2)) > "$out/cycle" 2>&1 &
	cycle=$!
	sleep 1
	sync_guests "serving-$n"
	sync_guests "finished-$n"
	grep -qx "counter 200" "$out/counter"
	st=$?
	report "$n" $st "atomic_counter$tag: the server counted 200 adds" \
		"atomic_counter$tag: the server did not count 200 adds" "$out/counter"
	# The server says whom it served, and nothing else (an error it
	# survived, such as a failed answer, says something too); it
	# serves until stopped, so it must still be there for SIGTERM to
	# end it (status 143), not have ended on an error of its own.
	for _ in $(seq 10); do
		grep -q "^served" "$out/reclaim" && break
		sleep 0.5
	done
	kill -TERM "$reclaim" 2> /dev/null
	wait "$reclaim"
	st=$?
	[ "$st" = 143 ] || echo "bulk_reclaim server: exit status $st, not 143 (stopped by SIGTERM)" >> "$out/reclaim"
	[ "$st" = 143 ] && [ "$(cat "$out/reclaim")" = "served 256 pages to $peer$((port + 13))" ]
	st=$?
	report $((n + 1)) $st "bulk_reclaim$tag: the server wrote 256 pages to the client, served on until stopped" \
		"bulk_reclaim$tag: the server did not serve the client, or did not serve on" "$out/reclaim"
	# The client's "bye" ends the server (a client that died leaves it
	# waiting: 10 s, then it is stopped); its status says whether every
	# READ found the client's bytes and every operation succeeded.
	for _ in $(seq 20); do
		kill -0 "$cycle" 2> /dev/null || break
		sleep 0.5
	done
	kill "$cycle" 2> /dev/null
	wait "$cycle" && grep -q "^server: 20 cycles, 0 failed, 4000000 bytes by RDMA, 0 wrong" "$out/cycle" &&
		grep -q "^server: probe: status REMOTE_ERROR" "$out/cycle" &&
		grep -qF "server: cycle 1 from $peer" "$out/cycle"
	st=$?
	# A failure names its first sign in the result itself, which the
	# summary of make check keeps where it drops the log: a status other
	# than the one due, wrong bytes, or the server's last word.  A
	# DROPPED adds rxe's counters, which tell a lost NAK (the completer's
	# retries) from a connection torn down first.
	why=
	if [ "$st" != 0 ]; then
		why=$(grep -v "the key is dead as it must be" "$out/cycle" |
			grep -m1 -E "DROPPED|_ERROR|CANCELED|[1-9][0-9]* (wrong|failed)|expected|was due|: [A-Z][a-z]")
		grep -q "^server: bye from the client" "$out/cycle" ||
			why=${why:-"no bye from the client, the server was stopped"}
		why=": ${why:-$(tail -n 1 "$out/cycle")}"
		grep -q "DROPPED" "$out/cycle" &&
			why+="; rxe: $(rdma statistic show 2>&1 | tr -s ' \n' ' ')"
	fi
	report $((n + 2)) $st "zc_cycle$tag: the server read 20 buffers intact, the released key failed" \
		"zc_cycle$tag: the server saw a failure$why" "$out/cycle"
	kill "$counter" 2> /dev/null
	wait
}

# ask N TAG ADDR SERVER PORT: node 2's side, its clients on ports PORT+10
# to PORT+14, the servers' on SERVER at PORT to PORT+2.
ask() {
	local n=$1 tag=$2 addr=$3 server=$4 port=$5 a1 st=0 why

	sync_guests "serving-$n"
	"$ex/atomic_counter" add "$addr" $((port + 10)) "$server" "$port" 100 > "$out/a1" 2>&1 &
	a1=$!
	"$ex/atomic_counter" add "$addr" $((port + 11)) "$server" "$port" 100 > "$out/a2" 2>&1 || st=1
	wait "$a1" || st=1
	timeout 30 "$ex/atomic_counter" add "$addr" $((port + 12)) "$server" "$port" 0 > "$out/a3" 2>&1 || st=1
	report "$n" $st "atomic_counter$tag: three clients" \
		"atomic_counter$tag: a client failed" "$out"/a?
	timeout 60 "$ex/bulk_reclaim" fetch "$addr" $((port + 13)) "$server" $((port + 1)) 256 > "$out/fetch" 2>&1 &&
		grep -qx "256 pages fetched" "$out/fetch"
	st=$?
	report $((n + 1)) $st "bulk_reclaim$tag: 256 pages fetched and checked" \
		"bulk_reclaim$tag: fetch failed" "$out/fetch"
	timeout 150 "$ex/zc_cycle" client "$addr" $((port + 14)) "$server" $((port + 2)) 100000 20 > "$out/cycle" 2>&1 &&
		grep -q "^client: 20 cycles, 20 right" "$out/cycle" &&
		grep -q "^client: the released key is dead" "$out/cycle"
	st=$?
	why=
	[ "$st" = 0 ] || why=": $(grep -m1 -E "still worked|not REMOTE_ERROR|unexpected|wrote 0x|: [A-Z][a-z]" "$out/cycle" ||
		tail -n 1 "$out/cycle")"
	report $((n + 2)) $st "zc_cycle$tag: 20 cycles, the buffer held the server's bytes each time" \
		"zc_cycle$tag: the client saw a failure$why" "$out/cycle"
	sync_guests "finished-$n"
}

if [ "$RDS_NODE" = 1 ]; then
	serve 1 "" "${RDS_ADDR:?}" "${RDS_PEER_ADDR:?}:" 4000
else
	ask 1 "" "${RDS_ADDR:?}" "${RDS_PEER_ADDR:?}" 4000
fi
if [ -z "${RDS_ADDR6:-}" ] || [ -z "${RDS_PEER_ADDR6:-}" ]; then
	n=4
	for prog in atomic_counter bulk_reclaim zc_cycle; do
		echo "ok $n - $prog over IPv6 # SKIP no IPv6 address on the guests (RDS_ADDR6 or RDS_PEER_ADDR6 unset)"
		n=$((n + 1))
	done
elif [ "$RDS_NODE" = 1 ]; then
	serve 4 " over IPv6" "$RDS_ADDR6" "[$RDS_PEER_ADDR6]:" 4100
else
	ask 4 " over IPv6" "$RDS_ADDR6" "$RDS_PEER_ADDR6" 4100
fi
exit $failed
