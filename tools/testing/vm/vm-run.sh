#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm-run.sh - run a test script inside one or more qemu (TCG) guests that boot
# a Debian kernel, and judge the results.
#
# Usage:
#   tools/testing/vm/vm-run.sh [options] -- GUEST_SCRIPT [ARGS...]
#
# Options:
#   --kernel SERIES|RELEASE  kernel to boot: a series (6.1, 6.12: the newest
#                        /boot/vmlinuz-SERIES.* with a /lib/modules tree) or
#                        an exact release found in /boot.  Default 6.1.
#   --guests N           number of guests, N >= 1 (default 2).  Guest K gets
#                        10.0.0.K/24 on eth0.  N = 2: one point-to-point link.
#                        N > 2: all guests on one segment through udp-hub.py.
#   --modules ours|distro|none
#                        RDS modules to load in each guest (default ours):
#                        ours = insmod MODULES_DIR/rds_zc.ko and rds_zc_ib.ko,
#                        distro = modprobe rds_rdma, none = nothing.
#   --modules-dir DIR    where our modules are (default
#                        REPO/build/KERNEL_RELEASE/net/rds).
#   --results DIR        results folder (default
#                        REPO/build/vm-results/TIMESTAMP-PID); must be new or
#                        empty.
#   --timeout SECS       wall-clock limit per guest (default 600).  The guest
#                        script itself gets a little less, so that the guest
#                        still saves its kernel log when the script hangs.
#   --mem MB             guest memory (default 1024).
#   --smp N              guest CPUs (default 2).
#
# GUEST_SCRIPT runs in every guest, from the repository root, as root, with:
#   RDS_NODE=K  RDS_NODES=N  RDS_ADDR=10.0.0.K  RDS_PEER_ADDR (the other
#   guest's address when N = 2, else empty)  RDS_ADDRS (all addresses)
#   RDS_MODULES  RDS_MODULE_DIR  RDS_KREL  RDS_REPO  RDS_VM_TOOLS (this folder)
#   RESULTS=/results/guestK (its own writable results folder)
# It should print TAP.  tools/testing/vm/guest-barrier.sh NAME synchronises
# the guests.
#
# Results: RESULTS/guestK/{console.log,qemu.log,setup.log,output.txt,
# exit-code,dmesg.txt}.  The host prints, per guest, the script's TAP results
# prefixed with "gK:", then "kernel log clean" and "guest finished", and last
# the line "P passed, F failed".  Exit status 0 iff F = 0.

set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)

kernel=6.1
guests=2
modules=ours
modules_dir=
results=
timeout_s=600
mem=1024
smp=2

usage() {
	awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0" >&2
	exit 2
}

die() {
	echo "vm-run: $*" >&2
	exit 2
}

is_uint() {
	[[ $1 =~ ^[0-9]+$ ]]
}

while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=${2:?}; shift 2 ;;
	--guests) guests=${2:?}; shift 2 ;;
	--modules) modules=${2:?}; shift 2 ;;
	--modules-dir) modules_dir=${2:?}; shift 2 ;;
	--results) results=${2:?}; shift 2 ;;
	--timeout) timeout_s=${2:?}; shift 2 ;;
	--mem) mem=${2:?}; shift 2 ;;
	--smp) smp=${2:?}; shift 2 ;;
	-h|--help) usage ;;
	--) shift; break ;;
	*) echo "vm-run: unexpected argument '$1'" >&2; usage ;;
	esac
done
[ $# -ge 1 ] || usage
is_uint "$guests" && [ "$guests" -ge 1 ] || die "--guests must be a number >= 1"
is_uint "$timeout_s" && [ "$timeout_s" -ge 30 ] || die "--timeout must be a number >= 30"
is_uint "$mem" && [ "$mem" -ge 256 ] || die "--mem must be a number >= 256"
is_uint "$smp" && [ "$smp" -ge 1 ] || die "--smp must be a number >= 1"
case $modules in
ours|distro|none) ;;
*) die "--modules must be ours, distro or none" ;;
esac

# The guest script: make a path that exists on the host absolute (the guest
# sees the host's tree at the same paths and starts in the repository root).
if [ -e "$1" ]; then
	script=$(realpath "$1")
	shift
	set -- "$script" "$@"
fi

for tool in qemu-system-x86_64 timeout python3; do
	command -v "$tool" > /dev/null || die "$tool not found"
done

# --- Kernel ---------------------------------------------------------------
# A series (6.1) picks the newest installed release of that series; the
# character after the series must be "." so that 6.1 does not match 6.12.
find_kernel() {
	local want=$1 img rel best=
	if [ -f "/boot/vmlinuz-$want" ]; then
		echo "$want"
		return
	fi
	for img in /boot/vmlinuz-"$want".*; do
		[ -f "$img" ] || continue
		rel=${img#/boot/vmlinuz-}
		[ -f "/lib/modules/$rel/modules.dep" ] || continue
		best=$(printf '%s\n%s\n' "$best" "$rel" | sed '/^$/d' | sort -V | tail -n 1)
	done
	echo "$best"
}
krel=$(find_kernel "$kernel")
[ -n "$krel" ] || die "no kernel for '$kernel' in /boot (with modules in /lib/modules)"
kimage=/boot/vmlinuz-$krel
[ -r "$kimage" ] || die "cannot read $kimage"

# --- Our modules ------------------------------------------------------------
[ -n "$modules_dir" ] || modules_dir=$repo/build/$krel/net/rds
modules_dir=$(realpath -m "$modules_dir")
if [ "$modules" = ours ]; then
	for m in rds_zc.ko rds_zc_ib.ko; do
		[ -f "$modules_dir/$m" ] ||
			die "--modules ours: $modules_dir/$m not found; build the module for $krel first (or use --modules distro|none)"
	done
fi

# --- Initramfs (cached per kernel release) --------------------------------
initrd=$repo/build/vm/$krel/initramfs.cpio
rebuild=0
if [ ! -f "$initrd" ]; then
	rebuild=1
else
	for dep in "$here/vm-run.sh" "$here/build-initramfs.sh" \
		   "$here/initramfs-init.sh" "/lib/modules/$krel/modules.dep"; do
		[ "$dep" -nt "$initrd" ] && rebuild=1
	done
fi
if [ "$rebuild" -eq 1 ]; then
	"$here/build-initramfs.sh" "$krel" "$initrd" >&2 ||
		die "building the initramfs failed"
fi

# --- Results folder -------------------------------------------------------
if [ -z "$results" ]; then
	results=$repo/build/vm-results/$(date +%Y%m%d-%H%M%S)-$$
fi
results=$(realpath -m "$results")
if [ -d "$results" ] && [ -n "$(ls -A "$results")" ]; then
	die "results folder $results is not empty"
fi
case $results in
*,*|*:*) die "results folder path must not contain ',' or ':' (qemu option syntax)" ;;
esac
mkdir -p "$results"
for ((k = 1; k <= guests; k++)); do
	mkdir -p "$results/guest$k"
done

# Give the guest script a little less time than qemu gets, so that the
# guest can still save its kernel log when the script hangs.  Booting and
# setting up rxe takes well under a minute on 6.1 under TCG.
margin=$((timeout_s / 4))
[ "$margin" -le 90 ] || margin=90
script_timeout=$((timeout_s - margin))

{
	echo "# Written by vm-run.sh; read by guest-init.sh in every guest."
	printf 'RDS_REPO=%q\n' "$repo"
	printf 'RDS_NODES=%q\n' "$guests"
	printf 'RDS_MODULES=%q\n' "$modules"
	printf 'RDS_MODULE_DIR=%q\n' "$modules_dir"
	printf 'RDS_VM_SCRIPT_TIMEOUT=%q\n' "$script_timeout"
	printf 'RDS_VM_HOST_PATH=%q\n' "$PATH"
	printf 'RDS_VM_CMD=('
	printf '%q ' "$@"
	printf ')\n'
} > "$results/run.env"

# --- Network ports ---------------------------------------------------------
# Ask the kernel for free UDP ports on 127.0.0.1 (bind to port 0, keeping all
# sockets open until every port is known so that none is handed out twice).
free_udp_ports() {
	python3 - "$1" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

# netdev[K] is the -netdev option of guest K.
declare -a netdev
hub_pid=
if [ "$guests" -le 2 ]; then
	# N = 2: guest 1 and 2 send to each other's port.  N = 1: the link
	# leads to a port that nobody reads (eth0 still exists, for rxe).
	read -r -a ports <<< "$(free_udp_ports 2)"
	netdev[1]="socket,id=n0,udp=127.0.0.1:${ports[1]},localaddr=127.0.0.1:${ports[0]}"
	netdev[2]="socket,id=n0,udp=127.0.0.1:${ports[0]},localaddr=127.0.0.1:${ports[1]}"
else
	# N > 2: hub port K and guest port K per guest, frames flooded by the hub.
	read -r -a ports <<< "$(free_udp_ports $((2 * guests)))"
	hub_args=()
	for ((k = 1; k <= guests; k++)); do
		hport=${ports[2 * k - 2]}
		gport=${ports[2 * k - 1]}
		hub_args+=("$hport:$gport")
		netdev[k]="socket,id=n0,udp=127.0.0.1:$hport,localaddr=127.0.0.1:$gport"
	done
	python3 "$here/udp-hub.py" "${hub_args[@]}" > "$results/hub.log" 2>&1 &
	hub_pid=$!
fi

# --- Boot the guests -------------------------------------------------------
declare -a qemu_pid
cleanup() {
	local p
	for p in "${qemu_pid[@]}" $hub_pid; do
		[ -n "$p" ] && kill "$p" 2>/dev/null || true
	done
}
trap cleanup EXIT
trap 'echo "vm-run: interrupted" >&2; exit 130' INT TERM

echo "# vm-run: kernel $krel, $guests guest(s), modules $modules, timeout ${timeout_s}s"
echo "# vm-run: results in $results"
start=$(date +%s)
for ((k = 1; k <= guests; k++)); do
	g=$results/guest$k
	mac=$(printf '52:54:00:00:00:%02x' "$k")
	timeout -k 10 "$timeout_s" qemu-system-x86_64 \
		-accel tcg -cpu max -smp "$smp" -m "$mem" \
		-nodefaults -nographic -no-reboot -monitor none \
		-serial "file:$g/console.log" \
		-kernel "$kimage" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 printk.time=1 rdsvm.node=$k" \
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs "local,path=$results,mount_tag=results,security_model=none,multidevs=remap" \
		-netdev "${netdev[k]}" \
		-device "virtio-net-pci,netdev=n0,mac=$mac" \
		< /dev/null > "$g/qemu.log" 2>&1 &
	qemu_pid[k]=$!
done

declare -a qemu_rc
for ((k = 1; k <= guests; k++)); do
	rc=0
	wait "${qemu_pid[k]}" || rc=$?
	qemu_rc[k]=$rc
	qemu_pid[k]=
done
if [ -n "$hub_pid" ]; then
	kill "$hub_pid" 2>/dev/null || true
	wait "$hub_pid" 2>/dev/null || true
	hub_pid=
fi
elapsed=$(($(date +%s) - start))

# --- Judge -----------------------------------------------------------------
passed=0
failed=0

pass() {
	echo "ok - $*"
	passed=$((passed + 1))
}

fail() {
	echo "not ok - $*"
	failed=$((failed + 1))
}

# Re-print guest K's TAP output and count it.
judge_tap() {
	local k=$1 out=$2 line body desc directive plan= count=0 notok=0 bailed=0 code
	while IFS= read -r line; do
		line=${line%$'\r'}
		if [[ $line =~ ^(not\ )?ok([[:space:]]|$) ]]; then
			count=$((count + 1))
			# "ok 3 - desc # SKIP why": drop "ok", the number and the dash.
			body=$(sed -E 's/^(not )?ok[[:space:]]*[0-9]*[[:space:]]*(-[[:space:]]*)?//' <<< "$line")
			desc=$body
			directive=
			if [[ $body =~ ^(.*[^[:space:]]|)[[:space:]]*#[[:space:]]*((SKIP|TODO|skip|todo).*)$ ]]; then
				desc=${BASH_REMATCH[1]}
				directive=" # ${BASH_REMATCH[2]}"
			fi
			[ -n "$desc" ] || desc="test $count"
			if [[ $line == not* ]]; then
				if [[ ${directive^^} == " # TODO"* ]]; then
					# A failing TODO test is expected to fail.
					echo "not ok - g$k: $desc$directive"
				else
					fail "g$k: $desc$directive"
					notok=$((notok + 1))
				fi
			else
				pass "g$k: $desc$directive"
			fi
		elif [[ $line =~ ^1\.\.([0-9]+) ]]; then
			plan=${BASH_REMATCH[1]}
		elif [[ $line == "Bail out!"* ]]; then
			fail "g$k: $line"
			bailed=1
		fi
	done < "$out"

	if [ "$bailed" -eq 0 ]; then
		if [ -z "$plan" ]; then
			fail "g$k: TAP plan present # no 1..N line, $count result(s)"
		elif [ "$plan" -ne "$count" ]; then
			fail "g$k: TAP plan 1..$plan matched # got $count result(s)"
		fi
	fi

	if [ -f "$results/guest$k/exit-code" ]; then
		code=$(cat "$results/guest$k/exit-code")
		if [ "$code" != 0 ] && [ "$notok" -eq 0 ] && [ "$bailed" -eq 0 ]; then
			if [ "$code" = 124 ]; then
				fail "g$k: guest script finished in time # killed after ${script_timeout}s"
			else
				fail "g$k: guest script exit status 0 # it was $code"
			fi
		fi
	fi
}

for ((k = 1; k <= guests; k++)); do
	g=$results/guest$k
	echo "# guest $k"
	if [ -f "$g/output.txt" ]; then
		judge_tap "$k" "$g/output.txt"
	else
		fail "g$k: guest script output # no $g/output.txt"
	fi

	# Kernel log: dmesg.txt is pure kernel log; the console log mixes in
	# user-space output, so only timestamped kernel lines count there.
	scan_out=
	scan_rc=0
	if [ -f "$g/dmesg.txt" ]; then
		scan_out=$("$here/scan-kernel-log.sh" "$g/dmesg.txt" 2>&1) || scan_rc=$?
	fi
	if [ -f "$g/console.log" ]; then
		c_rc=0
		c_out=$("$here/scan-kernel-log.sh" --timestamped "$g/console.log" 2>&1) || c_rc=$?
		[ "$c_rc" -le "$scan_rc" ] || scan_rc=$c_rc
		scan_out=$scan_out${scan_out:+${c_out:+$'\n'}}$c_out
	fi
	if [ ! -f "$g/dmesg.txt" ] && [ ! -f "$g/console.log" ]; then
		fail "g$k: kernel log clean # no dmesg.txt and no console.log"
	elif [ "$scan_rc" -eq 0 ]; then
		pass "g$k: kernel log clean"
	else
		fail "g$k: kernel log clean"
		head -n 40 <<< "$scan_out" | sed 's/^/#   /'
	fi

	if [ "${qemu_rc[k]}" -eq 124 ] || [ "${qemu_rc[k]}" -eq 137 ]; then
		fail "g$k: guest finished # timed out after ${timeout_s}s"
	elif [ ! -f "$g/exit-code" ]; then
		fail "g$k: guest finished # no exit-code file (qemu exit status ${qemu_rc[k]}; see console.log)"
	else
		pass "g$k: guest finished"
	fi
done

echo "# vm-run: wall time ${elapsed}s; results in $results"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
