#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# smoke.sh - guest script that proves the test bench works end to end.
#
# Usage: tools/testing/vm/vm-run.sh [options] -- tools/testing/vm/smoke.sh
#
# Prints TAP:
#   - rxe0 is ACTIVE;
#   - every other guest answers ping;
#   - with RDS modules loaded (--modules ours or distro): python3 creates an
#     AF_RDS SOCK_SEQPACKET socket and binds it to RDS_ADDR port 4000+RDS_NODE;
#   - with RDS modules and two or more guests: once every guest is bound
#     (barrier smoke-bound), each guest sends one datagram to every other
#     guest's port and receives one datagram from each of them.

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
	if [ -n "$out" ]; then
		while IFS= read -r l; do
			echo "# $l"
		done <<< "$out"
	fi
}

rds=0
[ "$RDS_MODULES" = none ] || rds=1
peers=()
for a in $RDS_ADDRS; do
	[ "$a" = "$RDS_ADDR" ] || peers+=("$a")
done

plan=$((1 + ${#peers[@]}))
if [ "$rds" -eq 1 ]; then
	plan=$((plan + 1))
	[ "${#peers[@]}" -eq 0 ] || plan=$((plan + 1))
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
	# One python process does both steps, so that the bound socket lives on
	# across the barrier.  It prints "PASS desc", "FAIL desc" and other
	# lines, which become TAP results and TAP comments here.
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
addr = os.environ["RDS_ADDR"]
peers = [a for a in os.environ["RDS_ADDRS"].split() if a != addr]
port = 4000 + node
sys.stdout.reconfigure(line_buffering=True)


def port_of(a):
    return 4000 + int(a.rsplit(".", 1)[1])


def exchange_desc():
    return "RDS datagram exchange with " + ", ".join(peers)


try:
    s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET)
    s.bind((addr, port))
except OSError as e:
    print(f"FAIL AF_RDS socket bound to {addr}:{port}: {e}")
    if peers:
        # Still reach the barrier, so that the peers do not wait in vain.
        subprocess.run([barrier, "smoke-bound"])
        print(f"FAIL {exchange_desc()}: no socket")
    sys.exit(0)
print(f"PASS AF_RDS socket bound to {addr}:{port}")
if not peers:
    sys.exit(0)

try:
    if subprocess.run([barrier, "smoke-bound"]).returncode != 0:
        raise RuntimeError("barrier smoke-bound failed")
    for p in peers:
        s.sendto(f"hello from {addr}".encode(), (p, port_of(p)))
    s.settimeout(30)
    missing = {(p, port_of(p)) for p in peers}
    while missing:
        data, src = s.recvfrom(4096)
        print(f"received {data!r} from {src[0]}:{src[1]}")
        if src not in missing or data != f"hello from {src[0]}".encode():
            raise RuntimeError(f"unexpected datagram {data!r} from {src}")
        missing.remove(src)
    # Do not close the socket (and so reset connections) before every peer
    # has received its datagrams too.
    subprocess.run([barrier, "smoke-received"])
    print(f"PASS {exchange_desc()}")
except Exception as e:
    print(f"FAIL {exchange_desc()}: {e}")
PY
)
fi

[ "$n" -eq "$plan" ] || echo "# ran $n of $plan tests"
[ "$failures" -eq 0 ]
