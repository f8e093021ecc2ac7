#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kernel_selftest.sh - the kernel's own RDS selftest, run as the kernel
# ships it (Debian's linux-source-6.12: tools/testing/selftests/net/rds/
# test.py with its helpers net/lib/py and tools/net/ynl/lib), against the
# RDS modules this guest loaded.  Nothing of it is in this tree: the files
# come from the distribution's tarball, unpacked on the host into
# build/kselftest/ (install-deps.sh, i.e. make deps, runs
# "kernel_selftest.sh --unpack"), or into a temporary folder here when
# that was not done (slow under TCG: the whole tarball is decompressed).
#
# test.py (transport tcp, the only one of 6.12's copy) makes two network
# namespaces net0 and net1 joined by a veth pair (10.0.0.1 and .2, the
# only transport that reaches another namespace is TCP), puts netem on
# both ends, sends 50,000 datagrams between the two sockets (half of them
# across, half to the sender's own address), writes
# net.rds.tcp.rds_tcp_rcvbuf and _sndbuf after every batch (each write
# resets the namespace's connections), compares hashes of what was sent
# and received per pair of sockets, and reads RDS_INFO 10000..10017.
# Two runs: "clean" (no netem loss) and "lossy" (-l 5 -c 5 -u 5: 5 %
# loss, 5 % corruption and 5 % duplication on both ends).  Each gives two
# results: test.py passed (exit status 0, its "done 50000 50000" line, no
# "FAIL" line, "Success"), and the datagrams went over TCP on the veth
# pair, not on local delivery (test.py leaves its namespaces behind: each
# veth end sent at least the payload of the datagrams that crossed to
# the other side, and each namespace's TCP sent segments).  On failure
# the tail of test.py's output is printed; all of it is kept in
# $RESULTS/kernel_selftest-RUN.log when RESULTS is a folder.
#
# Debian installs tcpdump as /usr/bin/tcpdump, test.py runs
# /usr/sbin/tcpdump (and its final "killall -q tcpdump" fails when no
# capture runs): in a vm-run.sh guest, whose root is a throw-away
# overlay, the link is made; elsewhere /usr/sbin/tcpdump must exist.
#
# Every result is skipped, saying so, when the distribution's kernel
# source package is not installed.  Copied into a kernel tree beside the
# kernel's own test.py, the script runs that one instead.
#
# Usage:
#   kernel_selftest.sh [--timeout SECS] [RUN...]   RUN: clean, lossy
#						  (default both); SECS:
#						  test.py's --timeout per
#						  run (default 250)
#   kernel_selftest.sh --unpack                    on the host: unpack the
#						  files into build/kselftest
#
# Environment: KSELFTEST_TARBALL (default
# /usr/src/linux-source-6.12.tar.xz), RESULTS, RDS_MODULES.

set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../../../../.." && pwd)
tarball=${KSELFTEST_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
unpacked=$top/build/kselftest
# What test.py needs of the tarball, below its top folder.
members=(tools/testing/selftests/net/rds tools/testing/selftests/net/lib/py
	 tools/net/ynl/lib)

# stamp: which tarball, its size and time: what DIR/.unpacked holds.
stamp() {
	stat -c '%n %s %Y' "$tarball"
}

# fresh DIR: did unpack() fill DIR from the tarball as it is now?
fresh() {
	[ "$(cat "$1/.unpacked" 2>/dev/null)" = "$(stamp)" ]
}

# unpack DIR: the members of the tarball into DIR (its top folder
# stripped), with the stamp.
unpack() {
	local dir=$1 top_dir

	top_dir=$(basename "$tarball" .tar.xz)
	mkdir -p "$dir" &&
	tar -xJf "$tarball" -C "$dir" --strip-components=1 \
		"${members[@]/#/$top_dir/}" &&
	stamp > "$dir/.unpacked"
}

if [ "${1:-}" = --unpack ]; then
	[ -f "$tarball" ] || { echo "kernel_selftest: no $tarball"; exit 0; }
	fresh "$unpacked" && exit 0
	rm -rf "$unpacked"
	echo "kernel_selftest: unpacking the kernel's RDS selftest from $tarball"
	unpack "$unpacked"
	exit
fi

timeout=250
if [ "${1:-}" = --timeout ]; then
	timeout=${2:?--timeout takes seconds}
	shift 2
fi
runs=("$@")
[ ${#runs[@]} -gt 0 ] || runs=(clean lossy)

# shellcheck source=lib_tap.sh
. "$here/lib_tap.sh"

# The two results of each run.
T_PY="test.py: 50000 datagrams sent and received, hashes match"
T_TCP="the datagrams crossed the veth pair over TCP"

# Copied into a kernel tree, this script finds test.py beside it.
[ -f "$here/test.py" ] && tarball=

echo "# the kernel's RDS selftest (transport tcp) from ${tarball:-$here}, modules ${RDS_MODULES:-unset}"
if [ -n "$tarball" ] && [ ! -f "$tarball" ]; then
	echo "1..$((2 * ${#runs[@]}))"
	for run in "${runs[@]}"; do
		for what in "$T_PY" "$T_TCP"; do
			emit ok "$run: $what # SKIP the kernel's source ($tarball, Debian's linux-source-6.12) is not installed"
		done
	done
	exit 0
fi
echo "1..$((2 * ${#runs[@]}))"

tmp=$(mktemp -d /tmp/kernel_selftest.XXXXXX)
made_link=
cleanup_ns() {
	killall -q tcpdump 2>/dev/null
	ip netns del net0 2>/dev/null
	ip netns del net1 2>/dev/null
	ip link del veth0 2>/dev/null
}
# shellcheck disable=SC2317 # called by the EXIT trap
on_exit() {
	cleanup_ns
	[ -z "$made_link" ] || rm -f "$made_link"
	rm -rf "$tmp"
}
trap on_exit EXIT

if [ -z "$tarball" ]; then
	test_py=$here/test.py
else
	src=$unpacked
	if ! fresh "$src"; then
		echo "# $src is missing or stale (make deps unpacks it): unpacking here"
		src=$tmp/src
		unpack "$src" > /dev/null
	fi
	test_py=$src/tools/testing/selftests/net/rds/test.py
fi

setup_err=
if [ ! -f "$test_py" ]; then
	setup_err="no test.py in $tarball"
elif [ ! -x /usr/sbin/tcpdump ]; then
	if [ -n "${RDS_VM_TOOLS:-}" ] && command -v tcpdump > /dev/null &&
	   ln -s "$(command -v tcpdump)" /usr/sbin/tcpdump; then
		made_link=/usr/sbin/tcpdump
	else
		setup_err="test.py runs /usr/sbin/tcpdump, which is missing"
	fi
fi
command -v killall > /dev/null || setup_err="test.py needs killall (psmisc)"
command -v ping > /dev/null || setup_err="test.py needs ping (iputils-ping)"

# ns_stat NS: "VETH_TX_BYTES TCP_OUT_SEGS" of namespace NS's veth end.
ns_stat() {
	local ns=$1 dev=veth${1#net} tx segs

	tx=$(ip netns exec "$ns" cat "/sys/class/net/$dev/statistics/tx_bytes" 2>/dev/null)
	# shellcheck disable=SC2016 # awk's own variables
	segs=$(ip netns exec "$ns" awk '
		/^Tcp:/ { if (!h) { for (i = 1; i <= NF; i++) col[$i] = i; h = 1 }
			  else print $col["OutSegs"] }' /proc/net/snmp 2>/dev/null)
	echo "${tx:-0} ${segs:-0}"
}

# ns_state: what each namespace's RDS and TCP hold, for a stalled run.
ns_state() {
	local ns info=$top/tools/rds-zc-info/rds-zc-info

	for ns in net0 net1; do
		echo "== $ns: ss -tnmi"
		ip netns exec "$ns" ss -tnmi 2>&1
		[ -x "$info" ] || continue
		echo "== $ns: rds-zc-info -v -nsktT"
		ip netns exec "$ns" "$info" -v -nsktT 2>&1 | head -n 120
		echo "== $ns: rds-zc-info -cz"
		ip netns exec "$ns" "$info" -cz 2>&1 | awk '$NF != 0'
	done
	echo "== kernel log, last lines"
	dmesg 2>/dev/null | tail -n 40
}

# watch_stall LOG OUT: when test.py's progress line ("sending... N M")
# stays the same for 30 s, write the namespaces' state to OUT, once,
# and again 30 s later: what a run that stops moving left behind, while
# it is there (test.py's sockets go when it exits).
watch_stall() {
	local log=$1 out=$2 last= same=0 dumps=0 line

	while sleep 5; do
		line=$(grep -E '^sending' "$log" 2>/dev/null | tail -n 1)
		if [ "$line" != "$last" ]; then
			last=$line
			same=0
			continue
		fi
		same=$((same + 5))
		if [ "$same" -ge 30 ] && [ "$dumps" -lt 2 ]; then
			{
				echo "=== stalled at \"$line\" for $same s"
				ns_state
			} >> "$out" 2>&1
			dumps=$((dumps + 1))
			same=0
		fi
	done
}

for run in "${runs[@]}"; do
	args=(--timeout "$timeout" -d "$tmp/logs-$run")
	[ "$run" = lossy ] && args+=(-l 5 -c 5 -u 5)
	if [ -n "$setup_err" ]; then
		diag "$setup_err"
		emit "not ok" "$run: $T_PY"
		emit "not ok" "$run: $T_TCP"
		continue
	fi
	log=$tmp/$run.log
	cleanup_ns
	mkdir -p "$tmp/logs-$run"
	echo "# $run: python3 test.py ${args[*]}"
	t0=$SECONDS
	(cd "$(dirname "$test_py")" &&
	 PYTHONUNBUFFERED=1 python3 ./test.py "${args[@]}") > "$log" 2>&1 &
	py=$!
	watch_stall "$log" "$tmp/stall-$run.txt" &
	watcher=$!
	wait "$py"
	rc=$?
	kill "$watcher" 2>/dev/null
	wait "$watcher" 2>/dev/null
	echo "# $run: test.py exit status $rc after $((SECONDS - t0)) s"
	if [ -n "${RESULTS:-}" ] && [ -d "$RESULTS" ]; then
		cp "$log" "$RESULTS/kernel_selftest-$run.log"
	fi

	done_line=$(grep -E '^done [0-9]+ [0-9]+$' "$log" | tail -n 1)
	read -r _ sent recvd <<< "$done_line"
	summary=$(grep -E '^getsockopt\(\)|: ok$' "$log")
	[ -z "$summary" ] || diag "$summary"
	if [ "$rc" = 0 ] && [ "${sent:-0}" = 50000 ] && [ "${recvd:-}" = 50000 ] &&
	   ! grep -q '^FAIL' "$log" && grep -qx Success "$log"; then
		emit ok "$run: $T_PY"
	else
		diag "test.py: exit status $rc, ${done_line:-no \"done\" line}; its last lines:"
		diag "$(tail -n 30 "$log")"
		if [ -s "$tmp/stall-$run.txt" ]; then
			diag "what the namespaces held while test.py did not move:"
			diag "$(cat "$tmp/stall-$run.txt")"
		fi
		emit "not ok" "$run: $T_PY"
	fi

	# Half the datagrams cross (test.py's pattern: of every six, two
	# go from net0 to net1, one back, three to the sender itself), 64
	# bytes of payload each: each veth end must have sent at least its
	# share of that payload, and TCP in each namespace must have sent.
	read -r tx0 segs0 <<< "$(ns_stat net0)"
	read -r tx1 segs1 <<< "$(ns_stat net1)"
	diag "veth0 (net0) sent $tx0 bytes, TCP $segs0 segments; veth1 (net1) sent $tx1 bytes, TCP $segs1 segments"
	if [ "$tx0" -ge $((50000 * 64 / 3)) ] && [ "$tx1" -ge $((50000 * 64 / 6)) ] &&
	   [ "$segs0" -gt 0 ] && [ "$segs1" -gt 0 ]; then
		emit ok "$run: $T_TCP"
	else
		emit "not ok" "$run: $T_TCP"
	fi
	cleanup_ns
done

echo "# $((total - failed)) passed, $failed failed"
exit $((failed > 0))
