#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# initramfs-init.sh - first-stage init of a test guest (runs as /init, PID 1,
# under busybox sh; build-initramfs.sh installs it).
#
# It loads the virtio/9p/overlay modules shipped in the initramfs, mounts the
# host's root file system (9p tag "hostroot", read-only) as the lower layer
# of an overlayfs whose upper layer is a tmpfs, so that the whole tree --
# /etc included -- is writable inside the guest while the host's files never
# change.  It mounts the run's results folder (9p tag "results", writable,
# uncached so that all guests see each other's files at once) on /results,
# the usual pseudo file systems, then switches root to the overlay and runs
# the repository's guest-init.sh with the host's bash.  Whatever happens, the
# guest powers off at the end; qemu runs with -no-reboot, so it exits.
#
# Kernel command line parameters it reads:
#   rdsvm.node=K       number of this guest (1..N)
#   rdsvm.rootcache=M  9p cache mode of the read-only host root (default
#                      loose: the host's files must not change during a run)

# shellcheck disable=SC3040 # busybox ash has pipefail
set -euo pipefail

/bin/busybox --install -s /bin
export PATH=/bin

log() {
	echo "rdsvm-init: $*" > /dev/console
}

halt_guest() {
	sync
	poweroff -f
	# Not reached unless poweroff failed; PID 1 exiting panics the kernel,
	# and panic=-1 plus qemu's -no-reboot then end the guest too.
	exit 1
}

fatal() {
	log "FATAL: $*"
	halt_guest
}

# must COMMAND...: run a required setup command; give up if it fails.
must() {
	"$@" || fatal "'$*' failed"
}

must mount -t proc proc /proc
must mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null || true	# may be automounted

node=
rootcache=loose
read -r cmdline < /proc/cmdline
for arg in $cmdline; do
	case $arg in
	rdsvm.node=*) node=${arg#rdsvm.node=} ;;
	rdsvm.rootcache=*) rootcache=${arg#rdsvm.rootcache=} ;;
	esac
done
[ -n "$node" ] || fatal "no rdsvm.node= on the kernel command line"

while read -r m; do
	insmod "/modules/$m" || fatal "insmod $m failed"
done < /modules/load-order

opts9p="trans=virtio,version=9p2000.L,msize=262144"
mount -t 9p -o "$opts9p,ro,cache=$rootcache" hostroot /lower ||
	fatal "cannot mount the host root over 9p"

# Writable root: overlayfs, tmpfs upper layer over the read-only 9p lower.
mkdir -p /rw
must mount -t tmpfs -o mode=755 tmpfs /rw
mkdir -p /rw/upper /rw/work
mount -t overlay overlay \
	-o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot ||
	fatal "cannot mount the overlay root"

nr=/newroot
mkdir -p $nr/results $nr/proc $nr/sys $nr/dev $nr/run $nr/tmp $nr/var/tmp
mount -t 9p -o "$opts9p,cache=none" results $nr/results ||
	fatal "cannot mount the results folder over 9p"
must mount -t proc proc $nr/proc
must mount -t sysfs sysfs $nr/sys
must mount -t devtmpfs devtmpfs $nr/dev
mkdir -p $nr/dev/pts $nr/dev/shm
must mount -t devpts -o newinstance,ptmxmode=0666 devpts $nr/dev/pts
must mount -t tmpfs -o mode=1777 tmpfs $nr/dev/shm
# devtmpfs lacks the links that udev would make; bash needs /dev/fd for
# process substitution.
ln -sf /proc/self/fd $nr/dev/fd
ln -sf /proc/self/fd/0 $nr/dev/stdin
ln -sf /proc/self/fd/1 $nr/dev/stdout
ln -sf /proc/self/fd/2 $nr/dev/stderr
mount -t debugfs debugfs $nr/sys/kernel/debug 2>/dev/null || true
mount -t configfs configfs $nr/sys/kernel/config 2>/dev/null || true
[ -f $nr/results/run.env ] || fatal "no run.env in the results folder"

# Fresh, empty runtime folders: the host's own /run and /tmp contents
# (pid files, sockets) mean nothing in the guest.  Not over the
# repository, though, which may live in /tmp (a CI clone): there the
# overlay alone keeps the folder writable.
repo=$(sed -n 's/^RDS_REPO=//p' $nr/results/run.env)
for d in run:755 tmp:1777 var/tmp:1777; do
	case "$repo/" in
	/"${d%%:*}"/*) log "node $node: /${d%%:*} holds the repository: not hidden" ;;
	*) must mount -t tmpfs -o mode="${d#*:}" tmpfs "$nr/${d%%:*}" ;;
	esac
done

log "node $node: root ready, starting guest-init.sh"
# Make the overlay the real root (switch_root: PID 1's root changes too, so
# the kernel's usermode helpers -- request_module() running /sbin/modprobe,
# firmware loading -- find the host's tools; a mere chroot would leave them
# looking in the initramfs).  run.env (written by vm-run.sh with bash's
# printf %q) names the repository; guest-init.sh does everything else.  The
# new PID 1 powers the guest off when guest-init.sh returns.
# shellcheck disable=SC2016 # expanded by the new root's bash
exec switch_root $nr /bin/bash -c '
	. /results/run.env &&
		/bin/bash "$RDS_REPO/tools/testing/vm/guest-init.sh" "$0"
	echo "rdsvm-init: node $0: guest-init.sh exited with status $?, powering off"
	sync
	echo o > /proc/sysrq-trigger
	# PID 1 must not exit while the power-off runs, and the host root may
	# already be gone (its 9p transport shuts down): wait with a builtin.
	while :; do read -r -t 30 _; done' "$node" < /dev/console > /dev/console 2>&1
fatal "switch_root failed"
