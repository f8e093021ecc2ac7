#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rds_rdma_local.sh - rds_rdma between two sockets of ONE host, on local
# delivery: no RDMA device at all.  Node 1 runs on 127.0.0.1, node 2 on
# 127.0.0.2 (both on lo, so every send between them is local delivery,
# and every socket is bound where no RDMA transport claims the address:
# RDS_GET_MR gives local keys).  The two programs talk over their
# control connection as between two guests; every RDMA, atomic and ACK
# is a kernel copy between the two processes' pinned memory (loop.c).
#
# The cases are those of rds_rdma that need no link to break
# (link_dropped, loss_retried and op_barrier_drop cut eth0), each with
# the memory owned by node 1 (the _owner2 twins add nothing where both
# ends are one kernel), plus the MAP cycles both ways.  Both nodes'
# results are reported, node 1's then node 2's.
#
# Our modules only: the distribution's RDS refuses RDMA to a local
# address (its loopback transport has no RDMA: EOPNOTSUPP, and
# RDS_GET_MR on 127/8 fails), so run_guest.sh runs this with ours.
# Which is right: ours; the zero-copy API then works between two
# processes or containers of any Linux host, with the same key checks
# and statuses as over a device (rds-zerocopy.rst, "Local destinations").
#
# --device: the same over the device instead (as the distribution's RDS
# does it): a veth pair with 10.254.1.3 and 10.254.1.4 on its ends and an
# rxe device on each (rds_one_host's setup), every socket pinned to IB
# with SO_RDS_TRANSPORT (RDS_PIN_TRANSPORT), so that node 1 and node 2
# talk over an IB connection between the two addresses; a last result
# checks that both rxe devices sent packets.
#
# Usage: rds_rdma_local.sh [--device] [CASE...]  (default: the list below)

set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib_tap.sh
. "$here/lib_tap.sh"

CASES=(
	get_mr_after_bind get_mr_errors free_mr_errors
	rdma_write_map_owner1 rdma_write_map_owner2
	rdma_read_map_owner1 rdma_read_map_owner2
	rdma_write_dest_owner1 rdma_sizes_owner1 rdma_len_mismatch_owner1
	cmsg_conflicts use_once_owner1 pipeline_owner1 silent_owner1
	bogus_cookie_owner1 invalidate_owner1 recverr_owner1
	out_of_bounds_owner1 out_of_bounds_unaligned_owner1 client_killed_owner1
	atomic_errors atomic_forms_owner1 atomic_counter atomic_lock_owner1
	atomic_mixed_owner1 atomic_released_owner1 op_barrier_stream_owner1
)
device=0
if [ "${1:-}" = --device ]; then
	device=1
	shift
fi
[ $# -gt 0 ] && CASES=("$@")

A=127.0.0.1
B=127.0.0.2

# The veth pair and the two rxe devices of --device.
# shellcheck source=lib_rxe_pair.sh
. "$here/lib_rxe_pair.sh"
dev_down() { rxe_pair_down rdsrl; }
dev_up() { rxe_pair_up rdsrl "$A" "$B"; }

if [ "$device" = 1 ]; then
	A=10.254.1.3
	B=10.254.1.4
	if ! dev_up; then
		dev_down
		echo "1..0 # SKIP --device: no veth pair with rxe devices"
		exit 4
	fi
	export RDS_PIN_TRANSPORT=0	# RDS_TRANS_IB
fi
CTL=18633	# not rds_rdma's 18632, which a two-guest run's node 1 uses

modules=${RDS_MODULES:-ours}
export RDS_MODULES_ALL="$modules,$modules" RDS_NODES=2
export RDS_RDMA_LOCAL=$((1 - device))
unset RDS_IFINDEX

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; [ "$device" = 0 ] || dev_down' EXIT

RDS_NODE=2 timeout -k 10 "$(scaled 280)" "$here/rds_rdma" -n 2 -a "$B" \
	-p "$A" -c "$CTL" "${CASES[@]}" > "$tmp/node2" 2>&1 &
pid2=$!
run_prog node1 280 env RDS_NODE=1 "$here/rds_rdma" -n 1 -a "$A" -p "$B" \
	-c "$CTL" "${CASES[@]}"
wait "$pid2"
echo $? > "$tmp/rc2"
# shellcheck disable=SC2016 # expanded by the inner shell
run_prog node2 10 bash -c 'cat "$1"; exit "$(cat "$2")"' - \
	"$tmp/node2" "$tmp/rc2"
if [ "$device" = 1 ]; then
	# Over the device: both rxe devices sent packets.
	sent0=$(cat /sys/class/infiniband/rdsrl_rxe0/ports/1/hw_counters/sent_pkts 2> /dev/null)
	sent1=$(cat /sys/class/infiniband/rdsrl_rxe1/ports/1/hw_counters/sent_pkts 2> /dev/null)
	diag "sent_pkts: rdsrl_rxe0 ${sent0:-?}, rdsrl_rxe1 ${sent1:-?}"
	[ "${sent0:-0}" -gt 0 ] && [ "${sent1:-0}" -gt 0 ]
	result $? "the RDMA went over both rxe devices"
fi
tap_finish
