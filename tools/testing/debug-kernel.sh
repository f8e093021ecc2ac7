#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# debug-kernel.sh - build and install, once, the sanitizer kernel that
# "make check-debug" boots: Debian's Linux 6.12 source with KASAN (generic,
# inline), lockdep (PROVE_LOCKING), DEBUG_ATOMIC_SLEEP, kmemleak, KFENCE,
# UBSAN, DEBUG_LIST and DEBUG_OBJECTS, plus everything the qemu bench needs
# (virtio, 9p, overlay built in; ib_core, rdma_cm, rdma_rxe and the
# distribution's rds, rds_rdma as modules).
#
# Usage: tools/testing/debug-kernel.sh [--config-only] [--print-release]
#   --config-only    unpack and configure, check the configuration, stop
#   --print-release  print the installed debug kernel's release and exit
#                    (non-zero when it is not installed or out of date)
#
# The source (/usr/src/linux-source-6.12.tar.xz, package linux-source-6.12)
# is unpacked and built in a cache folder outside the repository,
# ${RDS_DEBUG_KERNEL_CACHE:-/var/cache/rds_zc/debug-kernel}: src/ and the
# object tree build/.  The result is installed as /boot/vmlinuz-RELEASE
# (RELEASE = 6.12.N-rdszc-debug) with its modules in /lib/modules/RELEASE,
# whose "build" link points at the object tree so that our modules build
# against it; the guests see the host's / and find both there.
#
# Idempotent: when the installed kernel was built from the same tarball
# with the same configuration (a hash kept in the cache folder), it does
# nothing.  A changed configuration rebuilds incrementally.  Expect 40 to
# 60 minutes on two cores the first time.  Needs root (it writes /boot and
# /lib/modules); installs flex, bison and libelf-dev if they are missing.
#
# Environment: RDS_DEBUG_KERNEL_CACHE (cache folder), RDS_DEBUG_KERNEL_JOBS
# (make -j, default the number of CPUs), RDS_DEBUG_KERNEL_TARBALL.

set -euo pipefail

cache=${RDS_DEBUG_KERNEL_CACHE:-/var/cache/rds_zc/debug-kernel}
tarball=${RDS_DEBUG_KERNEL_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
jobs=${RDS_DEBUG_KERNEL_JOBS:-$(nproc)}
localversion=-rdszc-debug

config_only=0
print_release=0
for arg; do
	case $arg in
	--config-only) config_only=1 ;;
	--print-release) print_release=1 ;;
	*) echo "usage: $0 [--config-only] [--print-release]" >&2; exit 2 ;;
	esac
done

log() {
	echo "debug-kernel: $*" >&2
}

die() {
	log "$*"
	exit 1
}

# The configuration, applied with scripts/config on top of
# "x86_64_defconfig kvm_guest.config": NAME=y, NAME=m, NAME=n or
# NAME="string" / NAME=number.  Every line is checked in the final .config.
OPTIONS=(
	# modules: ours, and the distribution's RDS for the conflict test
	MODULES=y
	MODULE_UNLOAD=y
	MODULE_FORCE_UNLOAD=n
	LOCALVERSION="\"$localversion\""
	LOCALVERSION_AUTO=n

	# sanitizers
	KASAN=y
	KASAN_GENERIC=y
	KASAN_INLINE=y
	KASAN_OUTLINE=n
	PROVE_LOCKING=y
	LOCKDEP_BITS=16		# room for RDMA's many lock classes
	LOCKDEP_CHAINS_BITS=17
	DEBUG_ATOMIC_SLEEP=y
	DEBUG_KMEMLEAK=y
	DEBUG_KMEMLEAK_DEFAULT_OFF=n
	DEBUG_KMEMLEAK_AUTO_SCAN=n	# the tests scan explicitly
	DEBUG_KMEMLEAK_MEM_POOL_SIZE=32000
	KFENCE=y
	UBSAN=y
	UBSAN_BOUNDS=y
	UBSAN_SHIFT=y
	UBSAN_ALIGNMENT=n
	UBSAN_TRAP=n
	DEBUG_LIST=y
	DEBUG_OBJECTS=y
	DEBUG_OBJECTS_FREE=y
	DEBUG_OBJECTS_TIMERS=y
	DEBUG_OBJECTS_WORK=y
	DEBUG_OBJECTS_RCU_HEAD=y
	FAULT_INJECTION=y
	FAILSLAB=y
	FAIL_PAGE_ALLOC=y
	FAULT_INJECTION_DEBUG_FS=y
	# rds_failslab.sh aims failures at our modules' code: a stack filter
	FAULT_INJECTION_STACKTRACE_FILTER=y
	DETECT_HUNG_TASK=y
	# TCG with KASAN on shared cores is slow: no stall report for that
	RCU_CPU_STALL_TIMEOUT=60
	PANIC_ON_OOPS=n
	BUG_ON_DATA_CORRUPTION=n

	# the bench: host root over virtio-9p with a tmpfs overlay, built in
	VIRTIO=y
	VIRTIO_PCI=y
	VIRTIO_NET=y
	NET_9P=y
	NET_9P_VIRTIO=y
	9P_FS=y
	OVERLAY_FS=y
	TMPFS=y
	DEVTMPFS=y
	BLK_DEV_INITRD=y
	SERIAL_8250_CONSOLE=y
	MAGIC_SYSRQ=y
	DEBUG_FS=y
	CONFIGFS_FS=y

	# networking the tests use
	INET=y
	IPV6=y
	VETH=m
	NET_NS=y
	NET_UDP_TUNNEL=m
	CRC32=y
	# rds_storm's lossy link and link cuts (tc qdisc ... netem)
	NET_SCHED=y
	NET_SCH_NETEM=m

	# RDMA: soft-RoCE, the rdma tool (RDMA netlink lives in ib_core),
	# user verbs for ibv_* tools, the CM for RDS over IB
	INFINIBAND=m
	INFINIBAND_USER_ACCESS=m
	INFINIBAND_ADDR_TRANS=y
	RDMA_RXE=m

	# the distribution's RDS (module_lifecycle distro_conflict)
	RDS=m
	RDS_RDMA=m
	RDS_TCP=m

	# tracepoints: the tests enable events under /sys/kernel/tracing
	FTRACE=y
	TRACING=y
	EVENT_TRACING=y
	TRACEPOINTS=y
)

# Everything that decides what gets built: the option list, this script's
# version of it, the tarball and the compiler.
config_hash() {
	{
		printf '%s\n' "${OPTIONS[@]}"
		stat -c '%n %s %Y' "$tarball"
		gcc --version | head -n 1
	} | sha256sum | cut -d' ' -f1
}

src=$cache/src
obj=$cache/build
state=$cache/installed	# "HASH RELEASE" of the installed kernel

installed_release() {	# prints the release if installed and current
	local hash rel
	[ -f "$state" ] || return 1
	read -r hash rel < "$state" || return 1
	[ "$hash" = "$(config_hash)" ] || return 1
	[ -f "/boot/vmlinuz-$rel" ] || return 1
	[ -f "/lib/modules/$rel/modules.dep" ] || return 1
	[ -e "/lib/modules/$rel/build/include/generated/utsrelease.h" ] || return 1
	echo "$rel"
}

[ -r "$tarball" ] || die "no $tarball (apt-get install linux-source-6.12)"

if [ "$print_release" -eq 1 ]; then
	installed_release
	exit
fi

if [ "$config_only" -eq 0 ] && rel=$(installed_release); then
	log "$rel is installed and up to date (/boot/vmlinuz-$rel)"
	echo "$rel"
	exit 0
fi

[ "$(id -u)" = 0 ] || die "run as root: it installs into /boot and /lib/modules"
# What a kernel build needs beyond "make deps" (objtool needs libelf).
missing=()
for p in make gcc bc perl xz-utils flex bison libelf-dev libssl-dev; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	log "installing ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "${missing[@]}" >&2
fi

mkdir -p "$cache"
# One build at a time per cache folder.
exec 9> "$cache/.lock"
flock -n 9 || { log "another build holds $cache/.lock; waiting"; flock 9; }

# --- Source ----------------------------------------------------------------
tar_id=$(stat -c '%s %Y' "$tarball")
if [ ! -f "$src/.unpacked" ] || [ "$(cat "$src/.unpacked")" != "$tar_id" ]; then
	log "unpacking $tarball into $src"
	rm -rf "$src" "$obj"
	mkdir -p "$src"
	tar -xJf "$tarball" -C "$src" --strip-components=1
	echo "$tar_id" > "$src/.unpacked"
fi

# --- Configuration ---------------------------------------------------------
mkdir -p "$obj"
kmake() {
	make -C "$src" O="$obj" "$@"
}

hash=$(config_hash)
if [ ! -f "$obj/.config" ] || [ "$(cat "$obj/.rdszc-config-hash" 2>/dev/null)" != "$hash" ]; then
	log "configuring in $obj"
	kmake -s x86_64_defconfig kvm_guest.config > /dev/null
	args=()
	for opt in "${OPTIONS[@]}"; do
		name=${opt%%=*}
		val=${opt#*=}
		case $val in
		y) args+=(--enable "$name") ;;
		m) args+=(--module "$name") ;;
		n) args+=(--disable "$name") ;;
		\"*) val=${val#\"}; args+=(--set-str "$name" "${val%\"}") ;;
		*) args+=(--set-val "$name" "$val") ;;
		esac
	done
	"$src/scripts/config" --file "$obj/.config" "${args[@]}"
	# Twice: an option enabled by the first pass may make others visible.
	kmake -s olddefconfig > /dev/null
	"$src/scripts/config" --file "$obj/.config" "${args[@]}"
	kmake -s olddefconfig > /dev/null
	# include/config/auto.conf, which "make kernelrelease" reads.
	kmake -s syncconfig > /dev/null
	echo "$hash" > "$obj/.rdszc-config-hash"
fi

# Every option must have come out as asked; a missing dependency would
# silently drop it otherwise.
bad=0
for opt in "${OPTIONS[@]}"; do
	name=${opt%%=*}
	val=${opt#*=}
	if [ "$val" = n ]; then
		if grep -q "^CONFIG_$name=" "$obj/.config"; then
			log "CONFIG_$name should be off but is $(grep "^CONFIG_$name=" "$obj/.config")"
			bad=1
		fi
	elif ! grep -qx "CONFIG_$name=$val" "$obj/.config"; then
		log "CONFIG_$name=$val wanted, got: $(grep -E "(^CONFIG_$name=|^# CONFIG_$name is not set)" "$obj/.config" || echo absent)"
		bad=1
	fi
done
[ "$bad" -eq 0 ] || die "the configuration did not come out as asked (see above)"

rel=$(kmake -s kernelrelease)
log "configuration checked; release $rel"
if [ "$config_only" -eq 1 ]; then
	echo "$rel"
	exit 0
fi

# --- Build -----------------------------------------------------------------
start=$(date +%s)
log "building bzImage and modules with -j$jobs (log: $obj/build.log)"
if ! kmake -j"$jobs" bzImage modules > "$obj/build.log" 2>&1; then
	tail -n 40 "$obj/build.log" >&2
	die "the kernel build failed; full log in $obj/build.log"
fi
log "built in $(($(date +%s) - start)) s"

# --- Install ---------------------------------------------------------------
[ "$(cat "$obj/include/config/kernel.release")" = "$rel" ] ||
	die "built release $(cat "$obj/include/config/kernel.release") is not $rel"
# A module that an earlier configuration built must not linger.
rm -rf "/lib/modules/$rel/kernel"
kmake -s INSTALL_MOD_PATH=/ modules_install > "$obj/modules_install.log" 2>&1 ||
	die "modules_install failed; see $obj/modules_install.log"
ln -sfn "$obj" "/lib/modules/$rel/build"
for f in "arch/x86/boot/bzImage:vmlinuz" "System.map:System.map" ".config:config"; do
	cp "$obj/${f%%:*}" "/boot/${f#*:}-$rel.tmp"
	mv -f "/boot/${f#*:}-$rel.tmp" "/boot/${f#*:}-$rel"
done
echo "$hash $rel" > "$state"
log "installed /boot/vmlinuz-$rel and /lib/modules/$rel (build -> $obj)"
echo "$rel"
