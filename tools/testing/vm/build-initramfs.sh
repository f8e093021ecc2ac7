#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-initramfs.sh - build the small initramfs that the test guests boot.
#
# Usage: tools/testing/vm/build-initramfs.sh KERNEL_RELEASE OUTPUT_CPIO
#
# The archive holds busybox-static, the guest's first-stage init
# (initramfs-init.sh, installed as /init) and the kernel modules that stage
# needs to reach the host's root file system over virtio-9p and to make it
# writable: virtio_pci, virtio_net, 9pnet_virtio, 9p, overlay and their
# dependencies, resolved with the kernel's modules.dep.  Modules that the
# kernel has built in (modules.builtin) are skipped.  Compressed modules
# (.ko.xz, .ko.zst, .ko.gz, as Debian 6.12 ships them) are decompressed,
# because busybox insmod only loads plain ELF objects.
#
# The archive is written to a temporary file and renamed into place, so two
# runs that build the same archive at the same time do not see a half-written
# one.  The archive (about 4 MB) is left uncompressed: nothing to unpack at
# boot, and no dependency on a compressor the kernel may lack.

set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# Modules the first stage loads, in this order (dependencies come first).
WANTED_MODULES=(virtio_pci virtio_net 9pnet_virtio 9p overlay)

die() {
	echo "build-initramfs: $*" >&2
	exit 1
}

[ $# -eq 2 ] || die "usage: $0 KERNEL_RELEASE OUTPUT_CPIO"
krel=$1
out=$2
moddir=/lib/modules/$krel

[ -f "$moddir/modules.dep" ] || die "no $moddir/modules.dep (kernel $krel not installed?)"

busybox=
for b in /bin/busybox /usr/bin/busybox; do
	if [ -x "$b" ] && file -L "$b" 2>/dev/null | grep -q 'statically linked'; then
		busybox=$b
		break
	fi
done
# 'file' may be missing; fall back to any busybox and trust that it is static.
if [ -z "$busybox" ]; then
	for b in /bin/busybox /usr/bin/busybox; do
		if [ -x "$b" ]; then
			busybox=$b
			break
		fi
	done
fi
[ -n "$busybox" ] || die "busybox not found (apt-get install busybox-static)"

work=$(mktemp -d "${TMPDIR:-/tmp}/rds-initramfs.XXXXXX")
trap 'rm -rf "$work"' EXIT

root=$work/root
mkdir -p "$root"/{bin,dev,proc,sys,mnt,newroot,lower,results,modules}
cp "$busybox" "$root/bin/busybox"
cp "$here/initramfs-init.sh" "$root/init"
chmod 755 "$root/init" "$root/bin/busybox"
echo "$krel" > "$root/kernel-release"

# modules.dep line format: "kernel/x/y.ko[.xz]: dep1.ko[.xz] dep2.ko[.xz] ..."
# The dependency list is already transitive; modprobe loads it from the last
# entry to the first, then the module itself.  We do the same.
declare -A added=()
order=()

# Path (relative to $moddir) of module NAME, or empty if it is not a module.
module_path() {
	local name=$1 alt
	alt=${name//_/-}
	awk -F: -v a="$name" -v b="$alt" '{
		n = $1; sub(/.*\//, "", n); sub(/\.ko(\.(xz|zst|gz))?$/, "", n)
		if (n == a || n == b) { print $1; exit }
	}' "$moddir/modules.dep"
}

add_module_path() {
	local rel=$1
	[ -n "${added[$rel]:-}" ] && return 0
	added[$rel]=1
	order+=("$rel")
}

for name in "${WANTED_MODULES[@]}"; do
	rel=$(module_path "$name")
	if [ -z "$rel" ]; then
		if grep -qE "/${name}\.ko(\.(xz|zst|gz))?\$" "$moddir/modules.builtin" 2>/dev/null; then
			continue	# built into the kernel
		fi
		die "module $name not found in $moddir"
	fi
	line=$(grep -m1 -E "^${rel//./\\.}:" "$moddir/modules.dep")
	read -r -a deps <<< "${line#*:}"
	for ((i = ${#deps[@]} - 1; i >= 0; i--)); do
		add_module_path "${deps[i]}"
	done
	add_module_path "$rel"
done

# Copy (and decompress) the modules; /modules/load-order lists them.
: > "$root/modules/load-order"
for rel in "${order[@]}"; do
	src=$moddir/$rel
	base=$(basename "$rel")
	case $base in
	*.ko.xz)  xz -dc "$src" > "$root/modules/${base%.xz}"; base=${base%.xz} ;;
	*.ko.zst) zstd -qdc "$src" > "$root/modules/${base%.zst}"; base=${base%.zst} ;;
	*.ko.gz)  gzip -dc "$src" > "$root/modules/${base%.gz}"; base=${base%.gz} ;;
	*.ko)     cp "$src" "$root/modules/$base" ;;
	*)        die "unexpected module file $src" ;;
	esac
	echo "$base" >> "$root/modules/load-order"
done

mkdir -p "$(dirname "$out")"
tmp_out=$(mktemp "$out.tmp.XXXXXX")
(cd "$root" && find . | sort | "$root/bin/busybox" cpio -o -H newc -R 0:0 2>/dev/null) > "$tmp_out"
mv -f "$tmp_out" "$out"
echo "build-initramfs: wrote $out ($(wc -c < "$out") bytes; modules: $(tr '\n' ' ' < "$root/modules/load-order"))"
