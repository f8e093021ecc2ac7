#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The IB transport and RDMA devices, on one node, for our modules only:
# a socket bound to the address of an RDMA device is served by the IB
# transport; one on 127.0.0.1 is not; removing the device while a socket
# is bound is safe and local delivery keeps working; after removal the
# address is served by local delivery; a device added back is used again;
# keys a socket got from the device that went do not clash with the new
# device's; a key of a device that went, named to a peer with
# RDS_CMSG_RDMA_DEST, is refused with ENODEV (the kernel used to read the
# freed device then: the sanitizer lane runs this too).
#
# Environment (from the bench): RDS_MODULES, RDS_ADDR.  Prints TAP.
set -u

RDS_TRANS_IB=0
RDS_TRANS_TCP=2
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
       removed_address_not_ib device_added_back keys_across_readd
       dest_after_removal)
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

# Without its device the address is an ordinary one: RDS over TCP serves
# it where rds_zc_tcp is loaded (as the distribution's rds_tcp would),
# local delivery otherwise.
if [ -d /sys/module/rds_zc_tcp ]; then
	expect_transport removed_address_not_ib "$RDS_ADDR" $RDS_TRANS_TCP
else
	expect_transport removed_address_not_ib "$RDS_ADDR" $RDS_TRANS_LOOP
fi

rdma link add "$DEV" type rxe netdev "$netdev" || echo "# rdma link add failed"
expect_transport device_added_back "$RDS_ADDR" $RDS_TRANS_IB

# A socket holds 1500 keys (RDS_GET_MR) while its device goes and comes
# back, then asks for 1500 more.  A key is unique on its device only: the
# new device numbers its MRs from the same indexes, and with the random
# key byte 1 new key in 256 equals an old one the socket still holds.
# Every registration must succeed all the same (before the fix, about 6
# of them failed with EBUSY), every cookie be distinct, and RDS_FREE_MR
# free all 3000, the old device's too.
timeout 120 python3 -c '
import ctypes, errno, mmap, socket, struct, subprocess, sys, time
addr, dev, netdev, n = sys.argv[1], sys.argv[2], sys.argv[3], 1500
SOL_RDS, RDS_GET_MR, RDS_FREE_MR = 276, 2, 3
buf = mmap.mmap(-1, n * 4096)
base = ctypes.addressof(ctypes.c_char.from_buffer(buf))
out = ctypes.c_uint64()
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET)
s.bind((addr, 0))
def get_mr(i):
    args = struct.pack("QQQQ", base + i * 4096, 4096, ctypes.addressof(out), 0)
    s.setsockopt(SOL_RDS, RDS_GET_MR, args)
    return out.value
def register(what):
    keys, errs = [], {}
    for i in range(n):
        try:
            keys.append(get_mr(i))
        except OSError as e:
            errs[errno.errorcode[e.errno]] = errs.get(errno.errorcode[e.errno], 0) + 1
    if errs:
        print("# %s: RDS_GET_MR failed: %s" % (what, errs))
    return keys, not errs
old, ok1 = register("before the device went")
subprocess.run(["rdma", "link", "del", dev], check=True)
subprocess.run(["rdma", "link", "add", dev, "type", "rxe", "netdev", netdev], check=True)
for _ in range(300):
    t = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET)
    t.bind((addr, 0))
    if t.getsockopt(SOL_RDS, 8) == 0:
        break
    t.close()
    time.sleep(0.1)
new, ok2 = register("on the device added back")
same = len(old) + len(new) - len(set(old) | set(new))
if same:
    print("# %d cookies twice" % same)
freed = 0
for c in old + new:
    try:
        s.setsockopt(SOL_RDS, RDS_FREE_MR, struct.pack("QQ", c, 0))
        freed += 1
    except OSError as e:
        print("# RDS_FREE_MR of %#x: %s" % (c, e))
print("# %d keys before, %d after, %d freed" % (len(old), len(new), freed))
sys.exit(0 if ok1 and ok2 and not same and freed == 2 * n else 1)
' "$RDS_ADDR" "$DEV" "$netdev"
result $? keys_across_readd

# RDS_GET_MR, the device goes, then a message to another host names the
# key with RDS_CMSG_RDMA_DEST: the send fails with ENODEV (the key died
# with the device), and nothing touches the device that went.  The
# device comes back for whatever runs next.
timeout 60 python3 -c '
import ctypes, errno, mmap, socket, struct, subprocess, sys
addr, dev = sys.argv[1], sys.argv[2]
SOL_RDS, RDS_GET_MR, RDS_CMSG_RDMA_DEST = 276, 2, 2
other = ".".join(addr.split(".")[:3] + ["250"])
buf = mmap.mmap(-1, 4096)
out = ctypes.c_uint64()
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET)
s.bind((addr, 0))
assert s.getsockopt(SOL_RDS, 8) == 0, "not on the IB transport"
args = struct.pack("QQQQ", ctypes.addressof(ctypes.c_char.from_buffer(buf)),
                   4096, ctypes.addressof(out), 0)
s.setsockopt(SOL_RDS, RDS_GET_MR, args)
subprocess.run(["rdma", "link", "del", dev], check=True)
try:
    s.sendmsg([b"the key"], [(SOL_RDS, RDS_CMSG_RDMA_DEST,
                              struct.pack("Q", out.value))], 0, (other, 4000))
    print("# RDMA_DEST with a key of a removed device was sent")
    sys.exit(1)
except OSError as e:
    if e.errno != errno.ENODEV:
        print("# RDMA_DEST with a key of a removed device: %s, not ENODEV" %
              errno.errorcode.get(e.errno, e.errno))
        sys.exit(1)
s.close()
' "$RDS_ADDR" "$DEV"
result $? dest_after_removal
rdma link add "$DEV" type rxe netdev "$netdev" 2>/dev/null ||
	echo "# rdma link add failed"

exit $((failed > 0))
