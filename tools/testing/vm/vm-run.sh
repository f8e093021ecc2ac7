#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm-run.sh - run a test script inside one or more qemu (TCG) guests that boot
# a Debian kernel, and judge the results.
#
# Usage:
#   tools/testing/vm/vm-run.sh [options] -- GUEST_SCRIPT [ARGS...]
#   tools/testing/vm/vm-run.sh --judge RESULTS_DIR
#
# Options:
#   --kernel SERIES|RELEASE  kernel to boot: a series (6.1, 6.12: the newest
#                        /boot/vmlinuz-SERIES.* with a /lib/modules tree,
#                        never the *-rdszc-debug sanitizer kernel) or an
#                        exact release found in /boot.  Default 6.1.
#   --guests N           number of guests, N >= 1 (default 2).  Guest K gets
#                        10.0.0.K/24 on eth0.  N = 2: one point-to-point link,
#                        a unix stream socket on the host.
#                        N > 2: all guests on one Ethernet segment through
#                        udp-hub.py (unicast UDP on the host's loopback).
#   --hub                two guests through udp-hub.py as well, like more
#                        (runs that compare guest counts).
#   --modules ours|distro|none[,...]
#                        RDS modules to load in each guest (default ours):
#                        ours = modprobe ib_core rdma_cm, then insmod
#                        MODULES_DIR/rds_zc.ko, rds_zc_ib.ko and
#                        rds_zc_tcp.ko; distro = modprobe rds_rdma
#                        rds_tcp; none = nothing.  A
#                        comma-separated list gives one choice per guest
#                        (ours,distro: guest 1 ours, guest 2 the
#                        distribution's), for interoperability runs.
#   --modules-dir DIR    where our modules are (default
#                        REPO/build/KERNEL_RELEASE/net/rds).
#   --results DIR        results folder (default
#                        REPO/build/vm-results/TIMESTAMP-PID); must be new or
#                        empty.
#   --timeout SECS       wall-clock limit of the run, per guest, boot included
#                        (default 600).  The guest script is killed inside the
#                        guest 25 s before, so that the guest still saves its
#                        kernel log when the script hangs.
#   --mem MB             guest memory (default 1024).
#   --nic virtio|e1000   the guests' network card model (default virtio:
#                        virtio-net-pci; e1000: the emulated Intel 82540EM,
#                        whose driver the guest loads after the switch to
#                        the real root).
#   --smp N              guest CPUs (default 1: with two guests on two host
#                        cores, -smp 1 boots and runs about twice as fast).
#   --boot-limit SECS    a guest whose init has not started the guest script
#                        SECS after qemu started (default 150) never will:
#                        the run stops there, all guests, and says so,
#                        rather than waiting out --timeout.
#   --heartbeat SECS     every SECS seconds each guest writes to its kernel
#                        log (not to 9p) its uptime and, for each thread
#                        that sleeps uninterruptibly or is a selftest
#                        program's, its state, wait channel and kernel stack
#                        (default 0: none).  Tells a guest that froze from
#                        one whose programs wait, and on what.
#   --judge DIR          boot nothing: judge an existing results folder again.
#   --prepare            boot nothing: build the kernel's initramfs if it is
#                        missing or stale, then exit (make check does this
#                        once per kernel before it starts runs side by side,
#                        which would otherwise race to build it).
#
# Environment: VM_QEMU_OPTS, extra qemu options (split on white space;
# @GUEST@ in them becomes the guest's number, e.g. a plugin's output file
# per guest: -plugin insn-profile.so,out=DIR/insn-@GUEST@.txt);
# VM_KERNEL_ARGS, extra kernel command line parameters.
# VM_CPU, the guests' -cpu (default max,-cx16,-la57; see the guest start
# below);
# VM_NOKASLR set empty boots the guests with KASLR.
#
# GUEST_SCRIPT runs in every guest, once all guests have set up their network,
# rxe0 and modules, from the repository root, as root, with:
#   RDS_NODE=K  RDS_NODES=N  RDS_ADDR=10.0.0.K  RDS_PEER_ADDR (the other
#   guest's address when N = 2, else empty)  RDS_ADDRS (all addresses)
#   RDS_ADDR6=fd00::K (K in hex)  RDS_PEER_ADDR6  RDS_LL6 (eth0's IPv6
#   link-local address)  RDS_PEER_LL6 (the other guest's; both peer
#   variables empty unless N = 2)  RDS_IFINDEX (eth0's, the scope id of
#   the link-local addresses)
#   RDS_MODULES (this guest's choice)  RDS_MODULES_ALL (the list)  RDS_MODULE_DIR  RDS_KREL  RDS_REPO  RDS_VM_TOOLS (this folder)
#   RESULTS=/results/guestK (its own writable results folder)
# It should print TAP.  tools/testing/vm/guest-barrier.sh NAME synchronises
# the guests.
#
# Results: RESULTS/guestK/{console.log,qemu.log,qemu-status,setup.log,
# output.txt,exit-code,dmesg.txt}.  The host prints, per guest, the script's
# TAP results prefixed with "gK:", then "kernel log clean" and "guest
# finished", and last the line "P passed, F failed".  Exit status 0 iff F = 0
# (2 on a usage error).

set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)

kernel=6.1
guests=2
modules=ours
modules_dir=
results=
timeout_s=600
boot_limit=150
mem=1024
smp=1
nic=virtio
hub=0
heartbeat=0
judge_dir=
prepare=0

usage() {
	awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0" >&2
	exit 2
}

die() {
	echo "vm-run: $*" >&2
	exit 2
}

# need_uint NAME VALUE MIN: VALUE must be a whole number >= MIN.
need_uint() {
	if [[ ! $2 =~ ^[0-9]+$ ]] || [ "$2" -lt "$3" ]; then
		die "$1 must be a number >= $3"
	fi
}

# --- Judging (also used alone by --judge) ----------------------------------
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

# judge_tap K FILE: re-print guest K's TAP results and count them.  A missing
# or wrong plan fails; so does a non-zero exit code without a "not ok" line.
judge_tap() {
	local k=$1 out=$2 line body desc directive code
	local plan='' count=0 notok=0 bailed=0
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
			if [[ $line != not* ]]; then
				pass "g$k: $desc$directive"
			elif [[ ${directive^^} == " # TODO"* ]]; then
				# A failing TODO test is expected to fail (TAP).
				echo "not ok - g$k: $desc$directive"
			else
				fail "g$k: $desc$directive"
				notok=$((notok + 1))
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

	if [ -f "$(dirname "$out")/exit-code" ]; then
		code=$(cat "$(dirname "$out")/exit-code")
		if [ "$code" != 0 ] && [ "$notok" -eq 0 ] && [ "$bailed" -eq 0 ]; then
			if [ "$code" = 124 ] || [ "$code" = 137 ]; then
				fail "g$k: guest script finished in time # killed by the guest's time limit"
			else
				fail "g$k: guest script exit status 0 # it was $code"
			fi
		fi
	fi
}

# judge_guest RESULTS K: all checks of guest K.
judge_guest() {
	local res=$1 k=$2 g=$1/guest$2 scan_out='' scan_rc=0 qstatus=''
	local scan_opts=() foreign_out='' known_out=''
	echo "# guest $k"
	if [ -f "$g/output.txt" ]; then
		judge_tap "$k" "$g/output.txt"
	else
		fail "g$k: guest script output # no guest$k/output.txt"
	fi

	# Kernel log: dmesg.txt is the pure kernel log, saved after the guest
	# script.  The console log also has what came later (or everything,
	# when the guest died before saving dmesg.txt), mixed with user-space
	# output, so only timestamped kernel lines count there; it is scanned
	# when dmesg.txt is missing or clean, to avoid reporting lines twice.
	# Paths are printed relative to the results folder.
	# VM_FOREIGN_MODULES: reports in those modules only (the
	# distribution's, in a run against it) are listed, not counted
	# (scan-kernel-log.sh --foreign, status 3).  A known bug of the guest's
	# kernel (status 4: its WARN, not ours; see KNOWN there) leaves the log
	# unproven: the check is a skip, with the bug named.
	if [ -n "${VM_FOREIGN_MODULES:-}" ]; then
		scan_opts=(--foreign "$VM_FOREIGN_MODULES")
		[ ! -f "$g/kmemleak.txt" ] ||
			scan_opts+=(--kmemleak "guest$k/kmemleak.txt")
	fi
	if [ -f "$g/dmesg.txt" ]; then
		scan_out=$(cd "$res" && "$here/scan-kernel-log.sh" "${scan_opts[@]}" "guest$k/dmesg.txt" 2>&1) || scan_rc=$?
	fi
	if [ "$scan_rc" -eq 3 ]; then
		foreign_out=$scan_out
		scan_rc=0
	elif [ "$scan_rc" -eq 4 ]; then
		known_out=$scan_out
		scan_rc=0
	fi
	if [ "$scan_rc" -eq 0 ] && [ -f "$g/console.log" ]; then
		scan_out=$(cd "$res" && "$here/scan-kernel-log.sh" --timestamped "${scan_opts[@]}" "guest$k/console.log" 2>&1) || scan_rc=$?
		if [ "$scan_rc" -eq 3 ]; then
			foreign_out=${foreign_out:-$scan_out}
			scan_rc=0
		elif [ "$scan_rc" -eq 4 ]; then
			known_out=${known_out:-$scan_out}
			scan_rc=0
		fi
	fi
	if [ ! -f "$g/dmesg.txt" ] && [ ! -f "$g/console.log" ]; then
		fail "g$k: kernel log clean # no dmesg.txt and no console.log"
	elif [ "$scan_rc" -eq 0 ] && [ -n "$known_out" ]; then
		pass "g$k: kernel log clean # SKIP a known bug of this kernel, not ours: $(sed -n 's/^known: //p' <<< "$known_out" | head -n 1)"
		echo "#   ${known_out//$'\n'/$'\n'#   }"
	elif [ "$scan_rc" -eq 0 ]; then
		pass "g$k: kernel log clean${foreign_out:+ of ours; reports in $VM_FOREIGN_MODULES only}"
		[ -z "$foreign_out" ] || echo "#   ${foreign_out//$'\n'/$'\n'#   }"
	else
		fail "g$k: kernel log clean"
		echo "#   ${scan_out//$'\n'/$'\n'#   }"
	fi

	# qemu-status: exit status of "timeout qemu"; 124/137: killed.
	[ ! -f "$g/qemu-status" ] || qstatus=$(cat "$g/qemu-status")
	if [ -f "$g/boot-timeout" ]; then
		fail "g$k: guest finished # never reached its init: stopped $(cat "$g/boot-timeout") s after qemu started (see guest$k/console.log)"
	elif [ -f "$g/stopped-for" ]; then
		fail "g$k: guest finished # stopped: guest $(cat "$g/stopped-for") never reached its init"
	elif [ "$qstatus" = 124 ] || [ "$qstatus" = 137 ]; then
		fail "g$k: guest finished # timed out: qemu killed at the run's time limit"
	elif [ ! -f "$g/exit-code" ]; then
		fail "g$k: guest finished # no exit-code file (qemu exit status ${qstatus:-unknown}; see guest$k/console.log)"
	else
		pass "g$k: guest finished"
	fi
}

# judge_all RESULTS N
judge_all() {
	local k
	for ((k = 1; k <= $2; k++)); do
		judge_guest "$1" "$k"
	done
}

# --- Options ---------------------------------------------------------------
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
	--boot-limit) boot_limit=${2:?}; shift 2 ;;
	--nic) nic=${2:?}; shift 2 ;;
	--hub) hub=1; shift ;;
	--heartbeat) heartbeat=${2:?}; shift 2 ;;
	--judge) judge_dir=${2:?}; shift 2 ;;
	--prepare) prepare=1; shift ;;
	-h|--help) usage ;;
	--) shift; break ;;
	*) echo "vm-run: unexpected argument '$1'" >&2; usage ;;
	esac
done

if [ -n "$judge_dir" ]; then
	[ -d "$judge_dir" ] || die "no folder $judge_dir"
	n=0
	while [ -d "$judge_dir/guest$((n + 1))" ]; do
		n=$((n + 1))
	done
	[ "$n" -ge 1 ] || die "$judge_dir has no guest1 folder"
	judge_all "$(realpath "$judge_dir")" "$n"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
fi

[ $# -ge 1 ] || [ "$prepare" = 1 ] || usage
need_uint --guests "$guests" 1
need_uint --timeout "$timeout_s" 30
need_uint --mem "$mem" 256
need_uint --smp "$smp" 1
need_uint --boot-limit "$boot_limit" 10
need_uint --heartbeat "$heartbeat" 0
case $nic in
virtio) nic_device=virtio-net-pci nic_driver=virtio_net ;;
e1000) nic_device=e1000 nic_driver=e1000 ;;
*) die "--nic takes virtio or e1000" ;;
esac
IFS=, read -ra module_choices <<< "$modules"
for m in "${module_choices[@]}"; do
	case $m in
	ours|distro|none) ;;
	*) die "--modules takes ours, distro or none, or one of them per guest" ;;
	esac
done
[ ${#module_choices[@]} -eq 1 ] || [ ${#module_choices[@]} -eq "$guests" ] ||
	die "--modules $modules: give one choice, or one per guest ($guests)"

# The guest script: make a path that exists on the host absolute (the guest
# sees the host's tree at the same paths and starts in the repository root).
if [ $# -ge 1 ] && [ -e "$1" ]; then
	script=$(realpath "$1")
	shift
	set -- "$script" "$@"
fi

for tool in qemu-system-x86_64 timeout python3; do
	command -v "$tool" > /dev/null || die "$tool not found"
done

# --- Kernel ----------------------------------------------------------------
# A series (6.1) picks the newest installed release of that series; the
# character after the series must be "." so that 6.1 does not match 6.12.
# The sanitizer kernel of "make check-debug" (release *-rdszc-debug, see
# tools/testing/debug-kernel.sh) is only booted when named exactly: it
# would otherwise sort after Debian's 6.12 of the same version.
find_kernel() {
	local want=$1 img rel
	if [ -f "/boot/vmlinuz-$want" ]; then
		echo "$want"
		return
	fi
	for img in /boot/vmlinuz-"$want".*; do
		[ -f "$img" ] || continue
		rel=${img#/boot/vmlinuz-}
		case $rel in *-rdszc-debug*) continue ;; esac
		[ -f "/lib/modules/$rel/modules.dep" ] && echo "$rel"
	done | sort -V | tail -n 1
}
krel=$(find_kernel "$kernel")
[ -n "$krel" ] || die "no kernel for '$kernel' in /boot (with modules in /lib/modules)"
kimage=/boot/vmlinuz-$krel
[ -r "$kimage" ] || die "cannot read $kimage"

# --- Our modules -----------------------------------------------------------
[ -n "$modules_dir" ] || modules_dir=$repo/build/$krel/net/rds
modules_dir=$(realpath -m "$modules_dir")
if [[ ,$modules, == *,ours,* ]]; then
	for m in rds_zc.ko rds_zc_ib.ko rds_zc_tcp.ko; do
		[ -f "$modules_dir/$m" ] ||
			die "--modules ours: $modules_dir/$m not found; build the module for $krel first (or use --modules distro|none)"
	done
fi

# --- Initramfs (cached per kernel release) ---------------------------------
initrd=$repo/build/vm/$krel/initramfs.cpio
rebuild=0
if [ ! -f "$initrd" ]; then
	rebuild=1
else
	for dep in "$here/build-initramfs.sh" "$here/initramfs-init.sh" \
		   "/lib/modules/$krel/modules.dep"; do
		[ "$dep" -nt "$initrd" ] && rebuild=1
	done
fi
if [ "$rebuild" -eq 1 ]; then
	"$here/build-initramfs.sh" "$krel" "$initrd" >&2 ||
		die "building the initramfs failed"
fi
[ "$prepare" = 0 ] || exit 0

# --- Results folder --------------------------------------------------------
if [ -z "$results" ]; then
	results=$repo/build/vm-results/$(date +%Y%m%d-%H%M%S)-$$
fi
results=$(realpath -m "$results")
case $results in
*,*|*:*) die "results folder path must not contain ',' or ':' (qemu option syntax)" ;;
esac
if [ -d "$results" ] && [ -n "$(ls -A "$results")" ]; then
	die "results folder $results is not empty"
fi
mkdir -p "$results"
for ((k = 1; k <= guests; k++)); do
	mkdir -p "$results/guest$k"
done

# guest_mac K: guest K's MAC address on eth0.
guest_mac() {
	printf '52:54:00:00:00:%02x' "$1"
}

{
	echo "# Written by vm-run.sh; read by guest-init.sh in every guest."
	printf 'RDS_REPO=%q\n' "$repo"
	printf 'RDS_NODES=%q\n' "$guests"
	printf 'RDS_MODULES=%q\n' "$modules"
	printf 'RDS_MODULE_DIR=%q\n' "$modules_dir"
	printf 'RDS_VM_TIMEOUT=%q\n' "$timeout_s"
	printf 'RDS_VM_NIC_DRIVER=%q\n' "$nic_driver"
	printf 'RDS_VM_HOST_PATH=%q\n' "$PATH"
	printf 'RDS_VM_HEARTBEAT=%q\n' "$heartbeat"
	# Each guest's MAC address: guest-init.sh derives the peers' IPv6
	# link-local addresses from them (EUI-64).
	printf 'RDS_VM_MACS=('
	for ((k = 1; k <= guests; k++)); do
		printf '%q ' "$(guest_mac "$k")"
	done
	printf ')\n'
	printf 'RDS_VM_CMD=('
	printf '%q ' "$@"
	printf ')\n'
} > "$results/run.env"

# --- Network ---------------------------------------------------------------
# Ask the kernel for free UDP ports on 127.0.0.1 (bind to port 0, keeping all
# sockets open until every port is known so that none is handed out twice).
# Another program could still take a port before qemu binds it; qemu then
# fails to start and the run fails, it does not hang.
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

# netdev[K] is the -netdev option of guest K; link_sock, when set, the unix
# socket guest 1 listens on for guest 2.
declare -a netdev
hub_pid=
link_sock=
if [ "$guests" -eq 1 ]; then
	# N = 1: the link leads to a port that nobody reads (eth0 still
	# exists, for rxe).
	read -r -a ports <<< "$(free_udp_ports 2)"
	netdev[1]="socket,id=n0,udp=127.0.0.1:${ports[1]},localaddr=127.0.0.1:${ports[0]}"
elif [ "$guests" -eq 2 ] && [ "$hub" = 0 ]; then
	# N = 2: one unix stream socket carries the frames both ways
	# (qemu's stream netdev, guest 1 listening).  A UDP link would
	# lose frames whenever a busy host let a qemu's socket buffer fill
	# (the host's UdpRcvbufErrors), and the distribution's QPs, which
	# retry a lost frame only once, would then give RDMAs up now and
	# then.  A stream holds the sender back instead: the link loses only
	# what a test's netem drops.  Not TCP: Nagle's algorithm against the
	# host's delayed ACKs made a 64-byte round trip take 16 to 44 ms.
	link_sock=$(mktemp -u /tmp/rdsvm-link.XXXXXXXX)
	netdev[1]="stream,id=n0,server=on,addr.type=unix,addr.path=$link_sock"
	netdev[2]="stream,id=n0,server=off,addr.type=unix,addr.path=$link_sock"
else
	# N > 2 (or --hub): a hub port and a guest port per guest; the hub
	# floods frames.
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
declare -a qemu_pid=()
cleanup() {
	local p
	for p in "${qemu_pid[@]}" $hub_pid; do
		if [ -n "$p" ]; then
			kill "$p" 2>/dev/null || true
		fi
	done
	[ -z "$link_sock" ] || rm -f "$link_sock"
}
trap cleanup EXIT
trap 'echo "vm-run: interrupted" >&2; exit 130' INT TERM

# Extra qemu options from the environment (split on white space).
read -r -a extra_qemu <<< "${VM_QEMU_OPTS:-}"

echo "# vm-run: kernel $krel, $guests guest(s), modules $modules, nic $nic, timeout ${timeout_s}s"
echo "# vm-run: results in $results"
start=$(date +%s)
for ((k = 1; k <= guests; k++)); do
	g=$results/guest$k
	mac=$(guest_mac "$k")
	# Console on the serial port, into console.log; nothing on stdio.
	# panic=-1 reboots at once on a panic, and -no-reboot turns that into
	# qemu exiting.  No oops=panic: an oops is found in the logs, and the
	# guest goes on to save its results.  nokaslr and no cx16: under qemu
	# 7.2's TCG, 6.12 double-faults now and then (more often with KASLR)
	# in SLUB's fast path after a cmpxchg16b, with impossible RFLAGS
	# (bits 16-31 set from a general register): qemu 7.2 computes that
	# instruction's flags from a stale condition-code state.  Without
	# cx16 SLUB runs no cmpxchg16b (Documentation/networking/
	# rds_zc-testing.rst, "Guest kernels").  VM_NOKASLR set empty boots
	# with KASLR.  No la57: with 5-level paging, an interrupt that comes
	# while identify_cpu() has cleared boot_cpu_data's feature bits (LA57
	# among them) makes the sanitizer kernel's KASAN take the 5-level
	# direct map for wild memory (same section).  init_on_alloc=0:
	# Debian's kernels zero every page they hand out, upstream's default
	# (and the sanitizer kernel) does not, and zeroing hides code that
	# sends or uses memory it never wrote (same section).
	timeout -k 10 "$timeout_s" qemu-system-x86_64 \
		-accel tcg -cpu "${VM_CPU:-max,-cx16,-la57}" -smp "$smp" -m "$mem" \
		-nodefaults -nographic -no-reboot -monitor none \
		-serial "file:$g/console.log" \
		-kernel "$kimage" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1${VM_NOKASLR- nokaslr} init_on_alloc=0 printk.time=1 rdsvm.node=$k${VM_KERNEL_ARGS:+ $VM_KERNEL_ARGS}" \
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs "local,path=$results,mount_tag=results,security_model=none,multidevs=remap" \
		-netdev "${netdev[k]}" \
		-device "$nic_device,netdev=n0,mac=$mac" \
		"${extra_qemu[@]//@GUEST@/$k}" \
		< /dev/null > "$g/qemu.log" 2>&1 &
	qemu_pid[k]=$!
	# Guest 2 connects to guest 1's link: once guest 1 listens.
	if [ "$k" = 1 ] && [ -n "$link_sock" ]; then
		for ((i = 0; i < 100; i++)); do
			ss -Hxl | grep -qF "$link_sock " && break
			kill -0 "${qemu_pid[1]}" 2>/dev/null || break
			sleep 0.1
		done
	fi
done

# Wait for the guests.  One whose init has not started the guest script
# within the boot limit is stuck in the kernel's start (a sanitizer report
# in early boot, a hang): stop every guest then, since the others would
# only wait for it at their first barrier until the time limit.
declare -a booted=()
stop_all=
while :; do
	alive=0
	for ((k = 1; k <= guests; k++)); do
		[ -n "${qemu_pid[k]}" ] || continue
		if ! kill -0 "${qemu_pid[k]}" 2>/dev/null; then
			rc=0
			wait "${qemu_pid[k]}" || rc=$?
			echo "$rc" > "$results/guest$k/qemu-status"
			qemu_pid[k]=
			continue
		fi
		alive=1
		[ -z "${booted[k]:-}" ] || continue
		if grep -q "^rdsvm-init: node $k: root ready" \
			"$results/guest$k/console.log" 2>/dev/null; then
			booted[k]=1
		elif [ $(($(date +%s) - start)) -ge "$boot_limit" ]; then
			echo "$boot_limit" > "$results/guest$k/boot-timeout"
			echo "# vm-run: guest $k did not reach its init within ${boot_limit}s; stopping the run" >&2
			stop_all=$k
		fi
	done
	if [ -n "$stop_all" ]; then
		for ((k = 1; k <= guests; k++)); do
			[ -n "${qemu_pid[k]}" ] || continue
			[ -f "$results/guest$k/boot-timeout" ] ||
				echo "$stop_all" > "$results/guest$k/stopped-for"
			kill "${qemu_pid[k]}" 2>/dev/null || true
		done
		stop_all=
	fi
	[ "$alive" = 1 ] || break
	sleep 2
done
if [ -n "$hub_pid" ]; then
	kill "$hub_pid" 2>/dev/null || true
	wait "$hub_pid" 2>/dev/null || true
	hub_pid=
fi
elapsed=$(($(date +%s) - start))

judge_all "$results" "$guests"
echo "# vm-run: wall time ${elapsed}s; results in $results"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
