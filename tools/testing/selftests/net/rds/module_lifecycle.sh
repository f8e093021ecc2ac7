#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# module_lifecycle.sh - load, unload and conflict tests of OUR modules, as
# root inside a test guest.  Prints TAP.
#
# Environment:
#   RDS_MODULES	  only "ours" runs the cases; anything else skips them
#   RDS_MODULE_DIR  holds rds_zc.ko (the core, "rds_zc" in lsmod) and
#		  rds_zc_ib.ko (the IB transport)
#   RDS_ADDR	  optional: an address an IB-bound socket can use
#
# The system is left as it was found: both modules loaded if they were.

# The case_* functions are called through "case_$c".
# shellcheck disable=SC2317

set -u

CORE=rds_zc
IB=rds_zc_ib
TCP=rds_zc_tcp
CASES=(modules_loaded socket_holds_core rmmod_core_busy rmmod_core_after_close
       reload ib_pinned_by_bound_socket tracepoints rdma_tracepoints
       distro_conflict
       load_unload_loop kernel_log_clean left_as_found)

holder_pid=
holder_out=
log_start=0

# shellcheck source=lib_cases.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_cases.sh"

refcnt() {
	cat "/sys/module/$1/refcnt" 2>/dev/null || echo -1
}

load_ours() {
	loaded "$CORE" || run insmod "$RDS_MODULE_DIR/$CORE.ko" || return 1
	loaded "$IB" || run insmod "$RDS_MODULE_DIR/$IB.ko" || return 1
	loaded "$TCP" || run insmod "$RDS_MODULE_DIR/$TCP.ko" || return 1
}

unload_ours() {
	if loaded "$TCP"; then run rmmod "$TCP" || return 1; fi
	if loaded "$IB"; then run rmmod "$IB" || return 1; fi
	if loaded "$CORE"; then run rmmod "$CORE" || return 1; fi
}

# A process that opens an RDS socket (bound to $1 if given) and sleeps.
holder_start() {
	local i

	holder_out=$(mktemp)
	python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET)
if len(sys.argv) > 1:
    s.bind((sys.argv[1], 0))
print("ready transport", s.getsockopt(276, 8), flush=True)
time.sleep(120)
' "$@" > "$holder_out" 2>&1 &
	holder_pid=$!
	for ((i = 0; i < 100; i++)); do
		grep -q ready "$holder_out" && return 0
		kill -0 "$holder_pid" 2>/dev/null || break
		sleep 0.1
	done
	diag "socket holder did not start: $(cat "$holder_out")"
	holder_stop
	return 1
}

holder_stop() {
	if [ -n "$holder_pid" ]; then
		kill "$holder_pid" 2>/dev/null
		wait "$holder_pid" 2>/dev/null
	fi
	holder_pid=
	rm -f "$holder_out"
}

# Can a new process create an RDS socket?
socket_works() {
	python3 -c 'import socket; socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET).close()' 2>/dev/null
}

kernel_log_since_start() {
	dmesg 2>/dev/null | tail -n "+$((log_start + 1))"
}

oops_pattern='Oops|BUG:|WARNING:|general protection|Call Trace|kernel panic|refcount_t:|list_(add|del) corruption'

cleanup() {
	holder_stop
	if [ "${was_core:-0}" = 1 ] || [ "${was_ib:-0}" = 1 ]; then
		loaded rds && rmmod rds 2>/dev/null
		load_ours > /dev/null 2>&1
	fi
}

# ------------------------------------------------------------------ cases

case_modules_loaded() {
	load_ours || return 1
	loaded "$CORE" && loaded "$IB" && loaded "$TCP" && socket_works
}

# An open socket holds references on the core module, and gives them back.
case_socket_holds_core() {
	local before after closed

	before=$(refcnt "$CORE")
	holder_start || return 1
	after=$(refcnt "$CORE")
	holder_stop
	closed=$(refcnt "$CORE")
	diag "$CORE refcnt: $before, $after with a socket open, $closed after"
	[ "$after" -gt "$before" ] && [ "$closed" -eq "$before" ]
}

# With only a socket keeping it, the core refuses to go.
case_rmmod_core_busy() {
	local rc=0

	run rmmod "$TCP" || return 1
	run rmmod "$IB" || return 1
	holder_start || return 1
	if rmmod "$CORE" 2>/dev/null; then
		diag "rmmod $CORE succeeded with a socket open"
		rc=1
	elif ! loaded "$CORE"; then
		diag "rmmod $CORE failed but the module is not live"
		rc=1
	elif ! socket_works; then
		diag "the family stopped working after the refused rmmod"
		rc=1
	fi
	holder_stop
	return "$rc"
}

# Once the socket is gone, both go (the transport first: it uses the core).
case_rmmod_core_after_close() {
	unload_ours || return 1
	! loaded "$CORE" && ! loaded "$IB" && ! socket_works
}

case_reload() {
	load_ours && socket_works
}

# A socket bound to an IB address keeps the IB transport module.
case_ib_pinned_by_bound_socket() {
	local rc=0

	[ -n "${RDS_ADDR:-}" ] || return 4
	holder_start "$RDS_ADDR" || return 1
	# Only a socket the IB transport serves (SO_RDS_TRANSPORT 0) pins it;
	# one served by local delivery does not.
	if ! grep -q 'ready transport 0$' "$holder_out"; then
		diag "$RDS_ADDR is not served by the IB transport: $(cat "$holder_out")"
		holder_stop
		return 1
	fi
	if rmmod "$IB" 2>/dev/null; then
		diag "rmmod $IB succeeded with a socket bound to $RDS_ADDR"
		rc=1
	fi
	holder_stop
	load_ours || rc=1
	return "$rc"
}

# Only one PF_RDS: ours must refuse to load beside the distribution's.
case_distro_conflict() {
	local rc=0 before new

	unload_ours || return 1
	if ! run modprobe rds; then
		load_ours
		return 4
	fi
	before=$(dmesg 2>/dev/null | wc -l)
	if insmod "$RDS_MODULE_DIR/$CORE.ko" 2>/dev/null; then
		diag "insmod $CORE.ko succeeded beside the distribution's rds"
		rc=1
		rmmod "$CORE"
	fi
	new=$(dmesg 2>/dev/null | tail -n "+$((before + 1))")
	if ! grep -Eiq "$CORE.*(PF_RDS|already)" <<< "$new"; then
		diag "no kernel message from $CORE about PF_RDS being taken; new lines:"
		diag "$new"
		rc=1
	fi
	if grep -Eq "$oops_pattern" <<< "$new"; then
		diag "kernel trouble:"
		diag "$(grep -E "$oops_pattern" <<< "$new")"
		rc=1
	fi
	run rmmod rds || rc=1
	load_ours || rc=1
	socket_works || rc=1
	return "$rc"
}

# One message between two local sockets fires the bind, send, queue and
# read tracepoints, with the addresses and length of that message.
case_tracepoints() {
	local tr=/sys/kernel/tracing rc=0 ev out

	[ -d "$tr/events" ] || tr=/sys/kernel/debug/tracing
	[ -d "$tr/events/rds_zc" ] || { diag "no rds_zc events in $tr"; return 1; }
	echo > "$tr/trace"
	echo 1 > "$tr/events/rds_zc/enable" || return 1
	python3 -c '
import socket
a = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET)
b = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET)
a.bind(("127.0.0.1", 4242))
b.bind(("127.0.0.1", 4243))
b.sendto(b"x" * 77, ("127.0.0.1", 4242))
assert len(a.recv(100)) == 77
' || rc=1
	echo 0 > "$tr/events/rds_zc/enable"
	out=$(cat "$tr/trace")
	for ev in "rds_sock_bind:.*127.0.0.1:4242 transport=loopback ret=0" \
		  "rds_send: 127.0.0.1:4243 -> 127.0.0.1:4242 len=77 ret=77" \
		  "rds_recv_queue: 127.0.0.1:4243 -> 127.0.0.1:4242 len=77 ret=0" \
		  "rds_recv_read: 127.0.0.1:4243 -> 127.0.0.1:4242 len=77 ret=77" \
		  "rds_sock_release:.*127.0.0.1:4242"; do
		if ! grep -q -- "$ev" <<< "$out"; then
			diag "no trace line matching: $ev"
			rc=1
		fi
	done
	[ "$rc" = 0 ] || diag "$out"
	return "$rc"
}

# One MR's life and one RDMA operation's on the IB address: RDS_GET_MR
# and RDS_FREE_MR with RDS_RDMA_INVALIDATE fire register, release,
# invalidated and unpinned with its key, length and pages; an RDMA WRITE
# to a host that never answers, cancelled by RDS_CANCEL_SENT_TO, fires
# rds_rdma_op and rds_rdma_notify with its token and RDS_RDMA_CANCELED.
case_rdma_tracepoints() {
	local tr=/sys/kernel/tracing rc=0 ev out key

	[ -n "${RDS_ADDR:-}" ] || return 4
	[ -d "$tr/events" ] || tr=/sys/kernel/debug/tracing
	[ -d "$tr/events/rds_zc" ] || { diag "no rds_zc events in $tr"; return 1; }
	echo > "$tr/trace"
	echo 1 > "$tr/events/rds_zc/enable" || return 1
	key=$(RDS_ADDR=$RDS_ADDR python3 -c '
import ctypes, mmap, os, socket, struct
SOL_RDS, CANCEL, GET_MR, FREE_MR = 276, 1, 2, 3
ARGS, STATUS, INVALIDATE, WRITE, NOTIFY = 1, 4, 4, 1, 0x20
addr = os.environ["RDS_ADDR"]
silent = addr.rsplit(".", 1)[0] + ".250"
buf = mmap.mmap(-1, 8192)
base = ctypes.addressof(ctypes.c_char.from_buffer(buf))
cookie = ctypes.c_uint64(0)
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET)
s.bind((addr, 0))
s.setsockopt(SOL_RDS, GET_MR, struct.pack("QQQQ", base, 8192,
             ctypes.addressof(cookie), 0))
s.setsockopt(SOL_RDS, FREE_MR, struct.pack("QQ", cookie.value, INVALIDATE))
local = struct.pack("QQ", base, 4096)
lbuf = ctypes.create_string_buffer(local, len(local))
args = struct.pack("QQQQQQQ", 0x1234, 0, 4096, ctypes.addressof(lbuf), 1,
                   WRITE | NOTIFY, 0x7ace)
s.sendmsg([b""], [(SOL_RDS, ARGS, args)], 0, (silent, 4000))
s.setsockopt(SOL_RDS, CANCEL, struct.pack("HH4s8x", socket.AF_INET,
             socket.htons(4000), socket.inet_aton(silent)))
s.settimeout(5)
data, anc, flags, frm = s.recvmsg(16, 64)
st = [struct.unpack("Qi", d[:12]) for l, t, d in anc if l == SOL_RDS and t == STATUS]
assert st == [(0x7ace, 2)], (data, anc)
s.close()
print("%#x" % (cookie.value & 0xffffffff))
') || rc=1
	echo 0 > "$tr/events/rds_zc/enable"
	out=$(cat "$tr/trace")
	for ev in "rds_mr_register: rkey=$key len=8192 pages=2" \
		  "rds_mr_release: rkey=$key len=8192 pages=2" \
		  "rds_mr_invalidated: rkey=$key len=8192 pages=2" \
		  "rds_mr_unpinned: rkey=$key len=8192 pages=2" \
		  "rds_rdma_op: id=[0-9]* write rkey=0x1234 remote_addr=0x0 len=4096 token=0x7ace" \
		  "rds_rdma_notify: id=[0-9]* token=0x7ace status=2 queued=1"; do
		if [ -z "$key" ] || ! grep -q -- "$ev" <<< "$out"; then
			diag "no trace line matching: $ev"
			rc=1
		fi
	done
	[ "$rc" = 0 ] || diag "$out"
	return "$rc"
}

case_load_unload_loop() {
	local i

	for ((i = 1; i <= 3; i++)); do
		unload_ours || return 1
		if loaded "$CORE" || loaded "$IB" || loaded "$TCP"; then
			diag "round $i: still loaded after rmmod"
			return 1
		fi
		load_ours || return 1
		if ! socket_works; then
			diag "round $i: no RDS socket after loading"
			return 1
		fi
	done
}

case_kernel_log_clean() {
	local bad

	bad=$(kernel_log_since_start | grep -E "$oops_pattern")
	[ -z "$bad" ] && return 0
	diag "$bad"
	return 1
}

# As found: each of ours loaded iff it was, the distribution's not.
case_left_as_found() {
	if [ "$was_ib" = 0 ] && loaded "$TCP"; then run rmmod "$TCP"; fi
	if [ "$was_ib" = 0 ] && loaded "$IB"; then run rmmod "$IB"; fi
	if [ "$was_core" = 0 ] && loaded "$CORE"; then run rmmod "$CORE"; fi
	as_found
}

# ------------------------------------------------------------------ main

[ "${RDS_MODULES:-}" = ours ] ||
	skip_all "RDS_MODULES=${RDS_MODULES:-unset}: these cases test our modules"
[ "$(id -u)" -eq 0 ] || skip_all "needs root"
if [ ! -f "${RDS_MODULE_DIR:-}/$CORE.ko" ] || [ ! -f "$RDS_MODULE_DIR/$IB.ko" ]; then
	skip_all "no $CORE.ko and $IB.ko in RDS_MODULE_DIR '${RDS_MODULE_DIR:-}'"
fi
command -v python3 > /dev/null || skip_all "needs python3"

note_as_found
log_start=$(dmesg 2>/dev/null | wc -l)
trap cleanup EXIT

echo "1..${#CASES[@]}"
for c in "${CASES[@]}"; do
	"case_$c"
	rc=$?
	case $c in
	ib_pinned_by_bound_socket) reason="RDS_ADDR unset" ;;
	rdma_tracepoints) reason="RDS_ADDR unset" ;;
	distro_conflict) reason="the distribution's rds module cannot be loaded" ;;
	*) reason= ;;
	esac
	result "$rc" "$c" "$reason"
	# Every case starts with both of ours loaded.
	[ "$c" = left_as_found ] || load_ours > /dev/null 2>&1
done
exit $((failed > 0))
