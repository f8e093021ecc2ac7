#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# smoke.sh - guest script that proves the test bench works end to end.
#
# Usage: tools/testing/vm/vm-run.sh [options] -- tools/testing/vm/smoke.sh
#
# Prints TAP:
#   - rxe0 is ACTIVE;
#   - with two or more guests: the peer (or every other guest) answers ping;
#   - with RDS modules loaded (ours or distro): python3 creates an AF_RDS
#     SOCK_SEQPACKET socket and binds it to RDS_ADDR port 4000+RDS_NODE;
#   - with exactly two guests and RDS modules loaded: after a barrier (both
#     bound), each guest sends one datagram to the peer's port and receives
#     the peer's datagram.

set -euo pipefail

tools=$(dirname "$(readlink -f "$0")")
n=0
failures=0

ok() {
	n=$((n + 1))
	echo "ok $n - $*"
}

not_ok() {
	n=$((n + 1))
	failures=$((failures + 1))
	echo "not ok $n - $*"
}

# check DESCRIPTION COMMAND...: one TAP result from COMMAND's exit status;
# its output is shown as TAP comments.
check() {
	local desc=$1 out
	shift
	if out=$("$@" 2>&1); then
		ok "$desc"
	else
		not_ok "$desc"
	fi
	[ -z "$out" ] || sed 's/^/# /' <<< "$out"
}

rds=0
[ "$RDS_MODULES" = none ] || rds=1
peers=()
for a in $RDS_ADDRS; do
	[ "$a" = "$RDS_ADDR" ] || peers+=("$a")
done

plan=1
plan=$((plan + ${#peers[@]}))
if [ "$rds" -eq 1 ]; then
	plan=$((plan + 1))
	[ "$RDS_NODES" -ne 2 ] || plan=$((plan + 1))
fi
echo "1..$plan"
echo "# node $RDS_NODE of $RDS_NODES, $RDS_ADDR, kernel $RDS_KREL, modules $RDS_MODULES"

rxe_active() {
	rdma link show rxe0/1 | grep 'state ACTIVE'
}
check "rxe0 is ACTIVE" rxe_active

# iputils ping if the host has it, else busybox's (same options here).
ping=(ping)
command -v ping > /dev/null || ping=(busybox ping)
for p in "${peers[@]}"; do
	check "ping $p" "${ping[@]}" -c 3 -i 0.2 -w 10 "$p"
done

if [ "$rds" -eq 1 ]; then
	# One python process does both steps so that the bound socket lives on
	# across the barrier.  It prints "PASS desc" / "FAIL desc" / "# text"
	# lines, which become TAP results here.
	while IFS= read -r line; do
		case $line in
		"PASS "*) ok "${line#PASS }" ;;
		"FAIL "*) not_ok "${line#FAIL }" ;;
		*) echo "# $line" ;;
		esac
	done < <(python3 - "$tools/guest-barrier.sh" 2>&1 <<'PY'
import os, socket, subprocess, sys

barrier = sys.argv[1]
node = int(os.environ["RDS_NODE"])
nodes = int(os.environ["RDS_NODES"])
addr = os.environ["RDS_ADDR"]
peer = os.environ["RDS_PEER_ADDR"]
port = 4000 + node
sys.stdout.reconfigure(line_buffering=True)

try:
    s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET)
    s.bind((addr, port))
except OSError as e:
    print(f"FAIL AF_RDS socket bound to {addr}:{port}: {e}")
    # Still reach the barrier so that the peer does not wait in vain.
    if nodes == 2:
        subprocess.run([barrier, "smoke-bound"])
        print(f"FAIL RDS datagram exchange with {peer}: no socket")
    sys.exit(0)
print(f"PASS AF_RDS socket bound to {addr}:{port}")

if nodes != 2:
    sys.exit(0)
try:
    if subprocess.run([barrier, "smoke-bound"]).returncode != 0:
        raise RuntimeError("barrier smoke-bound failed")
    peer_port = 4000 + 3 - node
    msg = f"hello from node {node}".encode()
    s.settimeout(30)
    s.sendto(msg, (peer, peer_port))
    data, src = s.recvfrom(4096)
    want = f"hello from node {3 - node}".encode()
    if data != want or src != (peer, peer_port):
        raise RuntimeError(f"got {data!r} from {src}, wanted {want!r} from {(peer, peer_port)}")
    print(f"received {data!r} from {src[0]}:{src[1]}")
    # Do not close (and so reset the connection) before the peer has its
    # datagram too.
    subprocess.run([barrier, "smoke-received"])
    print(f"PASS RDS datagram exchange with {peer}")
except Exception as e:
    print(f"FAIL RDS datagram exchange with {peer}: {e}")
PY
)
fi

[ "$n" -eq "$plan" ] || echo "# ran $n of $plan tests"
[ "$failures" -eq 0 ]
