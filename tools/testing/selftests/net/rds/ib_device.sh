#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The IB transport and RDMA devices, on one node, for our modules only:
# a socket bound to the address of an RDMA device is served by the IB
# transport; one on 127.0.0.1 is not; removing the device while a socket
# is bound is safe and local delivery keeps working; after removal the
# address is served by local delivery; a device added back is used again.
#
# Environment (from the bench): RDS_MODULES, RDS_ADDR.  Prints TAP.
set -u

RDS_TRANS_IB=0
RDS_TRANS_LOOP=3
DEV=rxe0

# shellcheck source=lib_tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_tap.sh"

# transport_of ADDR: what SO_RDS_TRANSPORT reads on a socket bound there.
transport_of() {
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET)
s.bind((sys.argv[1], 0))
print(s.getsockopt(276, 8))
' "$1" 2>&1
}

expect_transport() {	# expect_transport NAME ADDR WANT
	local got

	got=$(transport_of "$2")
	[ "$got" = "$3" ] || echo "# $2: SO_RDS_TRANSPORT is '$got', expected $3"
	[ "$got" = "$3" ]
	result $? "$1"
}

netdev_of() {	# the netdev under an RDMA link, e.g. eth0
	rdma link show "$DEV/1" 2>/dev/null | sed -n 's/.*netdev \([^ ]*\).*/\1/p'
}

cases=(ib_serves_device_address loopback_not_ib remove_device_with_bound_socket
       removed_address_served_locally device_added_back)
if [ "${RDS_MODULES:-}" != ours ] || [ -z "${RDS_ADDR:-}" ]; then
	echo "1..${#cases[@]}"
	for c in "${cases[@]}"; do
		result 4 "$c" "our modules and RDS_ADDR are needed"
	done
	exit 0
fi
netdev=$(netdev_of)
if [ -z "$netdev" ]; then
	echo "Bail out! no RDMA link $DEV"
	exit 1
fi
echo "1..${#cases[@]}"

expect_transport ib_serves_device_address "$RDS_ADDR" $RDS_TRANS_IB
expect_transport loopback_not_ib 127.0.0.1 $RDS_TRANS_LOOP

# Two sockets on the device's address; the device goes away between two
# messages; both messages arrive.
timeout 60 python3 -c '
import socket, subprocess, sys
addr, dev = sys.argv[1], sys.argv[2]
a = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET)
b = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET)
a.bind((addr, 0))
b.bind((addr, 0))
assert a.getsockopt(276, 8) == 0, "not on the IB transport"
b.sendto(b"before", a.getsockname())
subprocess.run(["rdma", "link", "del", dev], check=True)
b.sendto(b"after", a.getsockname())
got = [a.recv(100), a.recv(100)]
assert got == [b"before", b"after"], got
' "$RDS_ADDR" "$DEV"
result $? remove_device_with_bound_socket

expect_transport removed_address_served_locally "$RDS_ADDR" $RDS_TRANS_LOOP

rdma link add "$DEV" type rxe netdev "$netdev" || echo "# rdma link add failed"
expect_transport device_added_back "$RDS_ADDR" $RDS_TRANS_IB

exit $((failed > 0))
