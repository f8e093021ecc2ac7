#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# lib_rxe_pair.sh - two RDMA devices in one host: a veth pair NAME0 -
# NAME1 with address A on NAME0 and B on NAME1 (both /32), routes and
# permanent neighbours to each other, accept_local and no reverse-path
# filter (frames between two local addresses must be taken), and an rxe
# device on each end, NAME_rxe0 and NAME_rxe1.  Sourced:
#
#   rxe_pair_up NAME A B	# 0 once both rxe ports are ACTIVE
#   rxe_pair_down NAME		# whatever of it exists goes

rxe_pair_down() {
	rdma link del "$1_rxe0" 2> /dev/null
	rdma link del "$1_rxe1" 2> /dev/null
	ip link del "${1}0" 2> /dev/null
	return 0
}

rxe_pair_up() {
	local n=$1 a=$2 b=$3 i

	rxe_pair_down "$n"
	modprobe veth && modprobe rdma_rxe &&
		ip link add "${n}0" type veth peer name "${n}1" &&
		ip link set "${n}0" up && ip link set "${n}1" up &&
		sysctl -qw "net.ipv4.conf.${n}0.accept_local=1" \
			"net.ipv4.conf.${n}1.accept_local=1" \
			"net.ipv4.conf.${n}0.rp_filter=0" \
			"net.ipv4.conf.${n}1.rp_filter=0" \
			net.ipv4.conf.all.rp_filter=0 &&
		ip addr add "$a/32" dev "${n}0" && ip addr add "$b/32" dev "${n}1" &&
		ip route add "$b/32" dev "${n}0" && ip route add "$a/32" dev "${n}1" &&
		ip neigh add "$b" lladdr "$(cat "/sys/class/net/${n}1/address")" \
			dev "${n}0" nud permanent &&
		ip neigh add "$a" lladdr "$(cat "/sys/class/net/${n}0/address")" \
			dev "${n}1" nud permanent &&
		rdma link add "${n}_rxe0" type rxe netdev "${n}0" &&
		rdma link add "${n}_rxe1" type rxe netdev "${n}1" || return 1
	for ((i = 0; i < 100; i++)); do
		rdma link show "${n}_rxe0/1" 2> /dev/null | grep -q ACTIVE &&
			rdma link show "${n}_rxe1/1" 2> /dev/null | grep -q ACTIVE &&
			return 0
		sleep 0.1
	done
	return 1
}
