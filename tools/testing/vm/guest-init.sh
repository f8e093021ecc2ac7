#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# guest-init.sh - second-stage init of a test guest.
#
# Usage (by initramfs-init.sh only): guest-init.sh NODE
#
# Runs inside the guest, as the child of PID 1, with the writable overlay of
# the host's root file system as its root and the run's results folder on
# /results.  It reads /results/run.env (written by vm-run.sh), then:
#   1. brings up lo and eth0 (10.0.0.NODE/24, and for IPv6 fd00::NODE/64
#      and the kernel's EUI-64 link-local address, both without duplicate
#      address detection, so usable at once) and waits for the link,
#   2. creates the soft-RoCE device rxe0 on eth0, waits until it is ACTIVE
#      and until its GID table holds both IPv6 addresses (rdma_cm needs
#      them to bind and connect over IPv6),
#   3. loads the RDS modules asked for (ours, distro or none), and waits
#      (barrier "rdsvm-setup") until every guest has done steps 1-3,
#   4. runs the guest script with its arguments from the repository root,
#      its stdout and stderr going to /results/guestNODE/output.txt and to the
#      console, under a time limit that ends before the qemu one,
#   5. records the exit code in /results/guestNODE/exit-code and the kernel
#      log in /results/guestNODE/dmesg.txt.
# If a setup step fails, output.txt gets a TAP "Bail out!" line and
# exit-code gets 125.  Returning ends the guest: initramfs-init.sh powers off.

set -euo pipefail

node=${1:?usage: guest-init.sh NODE}

# shellcheck source=/dev/null
. /results/run.env

R=/results/guest$node
mkdir -p "$R"
addr=10.0.0.$node
peer=
if [ "$RDS_NODES" -eq 2 ]; then
	peer=10.0.0.$((3 - node))
fi
addrs=
for ((j = 1; j <= RDS_NODES; j++)); do
	addrs="$addrs${addrs:+ }10.0.0.$j"
done

# IPv6: a ULA address fd00::NODE (NODE in hex) and the kernel's link-local
# address, derived from the MAC address vm-run.sh gave each guest.
# ll6_of MAC: the EUI-64 link-local address of MAC, as ip(8) prints it.
ll6_of() {
	local -a b
	IFS=: read -ra b <<< "$1"
	printf 'fe80::%x:%x:%x:%x\n' \
		$(((0x${b[0]} ^ 2) << 8 | 0x${b[1]})) $((0x${b[2]} << 8 | 0xff)) \
		$((0xfe << 8 | 0x${b[3]})) $((0x${b[4]} << 8 | 0x${b[5]}))
}
# full6 ADDR: ADDR with all eight groups of four digits, as sysfs shows GIDs.
# shellcheck disable=SC2317 # called through wait_for (rxe_gids6)
full6() {
	local head=${1%%::*} tail='' g out='' i
	local -a hg tg all
	[[ $1 == *::* ]] && tail=${1#*::}
	IFS=: read -ra hg <<< "$head"
	IFS=: read -ra tg <<< "$tail"
	all=("${hg[@]}")
	for ((i = ${#hg[@]} + ${#tg[@]}; i < 8; i++)); do
		all+=(0)
	done
	all+=("${tg[@]}")
	for g in "${all[@]}"; do
		out+=$(printf '%04x:' "0x$g")
	done
	echo "${out%:}"
}
addr6=$(printf 'fd00::%x' "$node")
ll6=$(ll6_of "${RDS_VM_MACS[node - 1]}")
peer6=
peer_ll6=
if [ "$RDS_NODES" -eq 2 ]; then
	peer6=$(printf 'fd00::%x' $((3 - node)))
	peer_ll6=$(ll6_of "${RDS_VM_MACS[2 - node]}")
fi

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

exec 3>>"$R/setup.log"
# Setup messages go to the console and to setup.log, with the guest's uptime.
say() {
	local up
	up=$(cut -d' ' -f1 /proc/uptime)
	echo "rdsvm[g$node] ${up}s: $*" >&3
	echo "rdsvm[g$node] ${up}s: $*" > /dev/console
}

finished=0
hb_pid=
finish() {
	local rc=$1
	finished=1
	[ -z "$hb_pid" ] || kill "$hb_pid" 2>/dev/null || true
	dmesg > "$R/dmesg.txt" 2>&1 || true
	echo "$rc" > "$R/exit-code"
	sync
	say "done, exit code $rc"
	exit 0
}

bail() {
	say "setup failed: $*"
	echo "Bail out! guest $node: $*" >> "$R/output.txt"
	finish 125
}

# Any unexpected exit (a bug here, set -e) still leaves a verdict behind.
# shellcheck disable=SC2317 # called by the EXIT trap
on_exit() {
	local rc=$?
	[ "$finished" -eq 1 ] || bail "guest-init.sh stopped unexpectedly (status $rc)"
}
trap on_exit EXIT

# Run a setup command; on failure, bail out naming it.
step() {
	local out
	if ! out=$("$@" 2>&1); then
		bail "'$*' failed: $(echo "$out" | tr '\n' ' ')"
	fi
	[ -z "$out" ] || echo "$out" >&3
}

# wait_for SECONDS COMMAND...: retry COMMAND every 0.2 s until it succeeds.
wait_for() {
	local limit=$1 i
	shift
	for ((i = 0; i < limit * 5; i++)); do
		if "$@" > /dev/null 2>&1; then
			return 0
		fi
		sleep 0.2
	done
	return 1
}

# shellcheck disable=SC2317 # called through wait_for
link_up() {
	[ "$(cat /sys/class/net/eth0/operstate)" = up ]
}

# shellcheck disable=SC2317 # called through wait_for
rxe_active() {
	rdma link show rxe0/1 | grep -q 'state ACTIVE'
}

# The link-local address is there, and not tentative.
# shellcheck disable=SC2317 # called through wait_for
ll6_ready() {
	local out
	out=$(ip -6 -o addr show dev eth0 scope link) &&
		[[ $out == *" $ll6/64 "* && $out != *tentative* ]]
}

# rxe0's GID table holds both IPv6 addresses.
# shellcheck disable=SC2317 # called through wait_for
rxe_gids6() {
	local gids
	gids=$(cat /sys/class/infiniband/rxe0/ports/1/gids/* 2>/dev/null)
	grep -qxF "$(full6 "$addr6")" <<< "$gids" &&
		grep -qxF "$(full6 "$ll6")" <<< "$gids"
}

# One choice for every guest, or one per guest (vm-run --modules a,b).
RDS_MODULES_ALL=$RDS_MODULES
IFS=, read -ra choices <<< "$RDS_MODULES_ALL"
[ ${#choices[@]} -gt 1 ] && RDS_MODULES=${choices[node - 1]}

say "kernel $(uname -r), node $node of $RDS_NODES, address $addr, modules $RDS_MODULES"
hostname "rds-g$node" || true

# 1. Network.  The initramfs loaded virtio_net; another card's driver
# (vm-run.sh --nic) comes from the real root.
if [ ! -e /sys/class/net/eth0 ] && [ -n "${RDS_VM_NIC_DRIVER:-}" ]; then
	step modprobe "$RDS_VM_NIC_DRIVER"
	wait_for 10 test -e /sys/class/net/eth0 || true
fi
[ -e /sys/class/net/eth0 ] || bail "no eth0"
step ip link set lo up
step ip addr add "$addr/24" dev eth0
# No duplicate address detection on eth0: the link-local address the
# kernel adds when the link comes up is usable at once, as is fd00::NODE.
step sysctl -q -w net.ipv6.conf.eth0.accept_dad=0
# Keep the IPv6 addresses when eth0 goes down (rds_faults.sh link_down):
# by default the kernel drops them, fd00::NODE for good, and the IPv6
# tests that run after the faults would find no address.
step sysctl -q -w net.ipv6.conf.eth0.keep_addr_on_down=1
step ip -6 addr add "$addr6/64" dev eth0 nodad
step ip link set eth0 up
wait_for 20 link_up || bail "eth0 did not come up"
wait_for 10 ll6_ready ||
	bail "no usable link-local address $ll6 on eth0: $(ip -6 -o addr show dev eth0 | tr '\n' ' ')"
ifindex=$(cat /sys/class/net/eth0/ifindex)

# 2. Soft-RoCE.
step modprobe rdma_rxe
step rdma link add rxe0 type rxe netdev eth0
wait_for 30 rxe_active || bail "rxe0 did not become ACTIVE: $(rdma link show 2>&1 | tr '\n' ' ')"
say "$(rdma link show rxe0/1)"
wait_for 10 rxe_gids6 ||
	bail "rxe0 has no GID for $addr6 and $ll6: $(cat /sys/class/infiniband/rxe0/ports/1/gids/* 2>/dev/null | sort -u | tr '\n' ' ')"
say "IPv6: $addr6 and $ll6 on eth0 (ifindex $ifindex), both GIDs of rxe0"

# 3. RDS modules.
case $RDS_MODULES in
ours)
	for m in rds_zc.ko rds_zc_ib.ko rds_zc_tcp.ko; do
		[ -f "$RDS_MODULE_DIR/$m" ] || bail "$RDS_MODULE_DIR/$m not found (build the module for $(uname -r) first)"
	done
	step modprobe ib_core
	step modprobe rdma_cm
	step insmod "$RDS_MODULE_DIR/rds_zc.ko"
	step insmod "$RDS_MODULE_DIR/rds_zc_ib.ko"
	step insmod "$RDS_MODULE_DIR/rds_zc_tcp.ko"
	;;
distro)
	# Both transports, as a host that loads RDS gets them: a bind()
	# prefers IB where the address has an RDMA device, TCP elsewhere.
	step modprobe rds_rdma
	step modprobe rds_tcp
	;;
none)
	;;
*)
	bail "unknown module choice '$RDS_MODULES'"
	;;
esac
say "setup complete"

# Wait until every guest is set up, so that a guest script may talk to its
# peers from its first line.  A guest that bailed out ends this at once.
if ! RESULTS=$R RDS_NODE=$node RDS_NODES=$RDS_NODES \
	"$RDS_REPO/tools/testing/vm/guest-barrier.sh" rdsvm-setup 240 >&3 2>&1; then
	bail "not all guests completed their setup (see setup.log of each guest)"
fi
say "all guests ready; running: ${RDS_VM_CMD[*]}"

# heartbeat PERIOD: every PERIOD seconds one kernel log record with the
# uptime and the number of threads, after one record for each thread that
# sleeps uninterruptibly (state D) or runs a selftest (a command name
# rds_*): its pid/tid, state, command, wait channel and kernel stack.  Shell
# builtins only, reading /proc and writing /dev/kmsg: it adds no 9p
# traffic, so it shows a guest whose 9p stopped as it is, and its records
# stop only when the guest's kernel does.
heartbeat() {
	local period=$1 d tid stat comm state wchan stack l up n
	mkfifo /run/rdsvm-heartbeat.fifo
	exec 8<> /run/rdsvm-heartbeat.fifo
	while :; do
		# Nothing ever writes to the FIFO: read only waits.
		read -r -t "$period" -u 8 _ || true
		n=0
		for d in /proc/[0-9]*/task/[0-9]*; do
			tid=${d#/proc/}
			tid=${tid/\/task\//\/}
			read -r stat 2> /dev/null < "$d/stat" || continue
			n=$((n + 1))
			comm=${stat#*(}
			comm=${comm%)*}
			state=${stat##*) }
			state=${state%% *}
			case $state:$comm in
			D:* | *:rds_*) ;;
			*) continue ;;
			esac
			wchan=
			read -r wchan 2> /dev/null < "$d/wchan" || true
			stack=
			while read -r l; do
				l=${l#*] }
				l=${l%%+*}
				case $l in *lockdep*) continue ;; esac
				stack+=" $l"
			done 2> /dev/null < "$d/stack"
			echo "rdsvm-heartbeat g$node: $tid $state $comm wchan ${wchan:-0}:${stack:0:700}" > /dev/kmsg
		done
		read -r up _ < /proc/uptime
		echo "rdsvm-heartbeat g$node: ${up}s, $n threads" > /dev/kmsg
	done
}
if [ "${RDS_VM_HEARTBEAT:-0}" -gt 0 ]; then
	heartbeat "$RDS_VM_HEARTBEAT" > /dev/null 2>&1 &
	hb_pid=$!
fi

# The guest script gets what is left of the run's time limit (counted from
# boot; the guest's clock started a few seconds after qemu did), less a
# reserve for saving the results and powering off, so that a script that
# hangs is killed here and the guest still saves its kernel log.
up=$(cut -d. -f1 /proc/uptime)
script_timeout=$((RDS_VM_TIMEOUT - up - 25))
[ "$script_timeout" -ge 10 ] || script_timeout=10

# 4. The guest script, with a clean environment.  Its output goes through a
# FIFO to a background tee rather than through a pipe, so that a background
# process the script leaves behind (holding the FIFO open) cannot keep us
# waiting for end-of-file: we wait for tee a few seconds at most.
cd "$RDS_REPO"
fifo=/run/rdsvm-output.fifo
mkfifo "$fifo"
tee -a "$R/output.txt" < "$fifo" > /dev/console &
tee_pid=$!
set +e
env -i \
	PATH="$PATH${RDS_VM_HOST_PATH:+:$RDS_VM_HOST_PATH}" \
	HOME=/root TERM=dumb LANG=C.UTF-8 \
	RDS_NODE="$node" RDS_NODES="$RDS_NODES" \
	RDS_ADDR="$addr" RDS_PEER_ADDR="$peer" RDS_ADDRS="$addrs" \
	RDS_ADDR6="$addr6" RDS_PEER_ADDR6="$peer6" \
	RDS_LL6="$ll6" RDS_PEER_LL6="$peer_ll6" RDS_IFINDEX="$ifindex" \
	RDS_MODULES="$RDS_MODULES" RDS_MODULES_ALL="$RDS_MODULES_ALL" \
	RDS_MODULE_DIR="$RDS_MODULE_DIR" \
	RDS_KREL="$(uname -r)" RDS_REPO="$RDS_REPO" RESULTS="$R" \
	RDS_VM_TOOLS="$RDS_REPO/tools/testing/vm" \
	timeout -k 5 "$script_timeout" "${RDS_VM_CMD[@]}" \
	< /dev/null > "$fifo" 2>&1
rc=$?
set -e
for ((i = 0; i < 50; i++)); do
	kill -0 "$tee_pid" 2>/dev/null || break
	sleep 0.1
done
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
	say "guest script killed after ${script_timeout}s"
fi

# 5. Results.
finish "$rc"
