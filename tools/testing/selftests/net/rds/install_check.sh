#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# install_check.sh - "make install", the modprobe file and "make uninstall",
# as root inside a test guest.  Prints TAP.
#
# It installs the modules the host built for the running kernel
# (build/<release>/net/rds/, the ones the bench loads) into a scratch root:
#
#   make install DESTDIR=SCRATCH KDIR=/usr/src/linux-headers-$(uname -r) \
#	INSTALL_HDR=1 MODPROBE_CONF=1
#
# and loads them from there with modprobe -d SCRATCH -C SCRATCH/etc/modprobe.d,
# as "modprobe rds_zc_ib" would from /.  make install also installs
# tools/rds-zc-info/rds-zc-info as SCRATCH/usr/local/bin/rds-zc-info, which
# must then answer --help, and the rds-rdma(7) manual page as
# SCRATCH/usr/local/share/man/man7/rds-rdma.7; make uninstall removes
# both.  It never compiles the modules: make install rebuilds only objects
# older than their sources,
# and building them under TCG takes minutes, so every case skips when the
# objects are stale (make -q).  The tool, one small C file, is built if
# missing.  Nothing outside the scratch root is installed.
#
# Environment:
#   RDS_MODULES	  only "ours" runs the cases; anything else skips them
#   RDS_MODULE_DIR  holds rds_zc.ko and rds_zc_ib.ko, to restore them
#
# The system is left as it was found: ours loaded iff they were.

# The case_* functions are called through "case_$c".
# shellcheck disable=SC2317

set -u

CORE=rds_zc
IB=rds_zc_ib
TCP=rds_zc_tcp	# loaded with IB, by the bench
CASES=(make_install modprobe_loads_installed socket_roundtrip
       net_pf_21_alias modprobe_remove make_uninstall left_as_found)

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../../../../.." && pwd)
rel=$(uname -r)
kdir=/usr/src/linux-headers-$rel
built=$top/build/$rel/net/rds
root=
alt=

# shellcheck source=lib_cases.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_cases.sh"

unload_ours() {
	if loaded "$TCP"; then run rmmod "$TCP" || return 1; fi
	if loaded "$IB"; then run rmmod "$IB" || return 1; fi
	if loaded "$CORE"; then run rmmod "$CORE" || return 1; fi
}

restore() {
	if [ "$was_core" = 1 ] && ! loaded "$CORE"; then
		run insmod "$RDS_MODULE_DIR/$CORE.ko" || return 1
	fi
	if [ "$was_ib" = 1 ] && ! loaded "$IB"; then
		run insmod "$RDS_MODULE_DIR/$IB.ko" || return 1
	fi
	if [ "$was_ib" = 1 ] && ! loaded "$TCP"; then
		run insmod "$RDS_MODULE_DIR/$TCP.ko" || return 1
	fi
	if [ "$was_ib" = 0 ] && loaded "$TCP"; then run rmmod "$TCP" || return 1; fi
	if [ "$was_ib" = 0 ] && loaded "$IB"; then run rmmod "$IB" || return 1; fi
	if [ "$was_core" = 0 ] && loaded "$CORE"; then run rmmod "$CORE" || return 1; fi
	return 0
}

cleanup() {
	restore > /dev/null 2>&1
	[ -n "$root" ] && rm -rf "$root"
	[ -n "$alt" ] && rm -rf "$alt"
}

# make in the repository, quietly; its output becomes diagnostics on failure.
mk() {
	run make -s -C "$top" KDIR="$kdir" "$@"
}

dest() {	# the installed module folder of ROOT
	echo "$1/lib/modules/$rel/updates"
}

# ------------------------------------------------------------------ cases

case_make_install() {
	local m f rc=0

	mk install DESTDIR="$root" INSTALL_HDR=1 MODPROBE_CONF=1 || return 1
	for m in "$CORE" "$IB" "$TCP"; do
		if ! cmp -s "$built/$m.ko" "$(dest "$root")/$m.ko"; then
			diag "$(dest "$root")/$m.ko is not $built/$m.ko"
			rc=1
		fi
	done
	for f in usr/local/include/linux/rds.h:include/uapi/linux/rds.h \
		 etc/modprobe.d/rds_zc.conf:tools/modprobe.d/rds_zc.conf \
		 usr/local/bin/rds-zc-info:tools/rds-zc-info/rds-zc-info \
		 usr/local/share/man/man7/rds-rdma.7:Documentation/man/rds-rdma.7; do
		if ! cmp -s "$root/${f%%:*}" "$top/${f#*:}"; then
			diag "$root/${f%%:*} is not ${f#*:}"
			rc=1
		fi
	done
	if ! grep -qx "updates/$IB.ko: updates/$CORE.ko" \
	     "$root/lib/modules/$rel/modules.dep"; then
		diag "modules.dep does not say that $IB needs $CORE:"
		diag "$(cat "$root/lib/modules/$rel/modules.dep" 2>&1)"
		rc=1
	fi
	if ! [ -x "$root/usr/local/bin/rds-zc-info" ] ||
	   ! "$root/usr/local/bin/rds-zc-info" --help | grep -q '^SYNOPSIS'; then
		diag "the installed rds-zc-info is not executable or does not answer --help"
		rc=1
	fi
	return "$rc"
}

# "modprobe rds_zc_ib" from the installed tree, with the installed
# modprobe file: the core (its dependency in modules.dep), then the
# transport, both from updates/.
case_modprobe_loads_installed() {
	local conf=$root/etc/modprobe.d deps

	deps=$(modprobe -S "$rel" -d "$root" -C "$conf" --show-depends "$IB" 2>&1)
	if ! grep -q "^insmod $(dest "$root")/$CORE.ko" <<< "$deps" ||
	   ! grep -q "^insmod $(dest "$root")/$IB.ko" <<< "$deps"; then
		diag "modprobe --show-depends $IB does not load both installed files:"
		diag "$deps"
		return 1
	fi
	unload_ours || return 1
	run modprobe -S "$rel" -d "$root" -C "$conf" "$IB" || return 1
	if ! loaded "$CORE" || ! loaded "$IB"; then
		diag "after modprobe $IB: $CORE $(loaded "$CORE" && echo loaded || echo absent), $IB $(loaded "$IB" && echo loaded || echo absent)"
		return 1
	fi
}

# One datagram from a socket to itself through the installed modules.
case_socket_roundtrip() {
	loaded "$CORE" || { diag "$CORE is not loaded"; return 1; }
	self_roundtrip 127.0.0.1 "installed rds_zc"
}

# The modprobe file's commented "alias net-pf-21 rds_zc" and "softdep"
# lines, in a tree that also holds the distribution's rds when the kernel
# has one: as shipped, net-pf-21 (what socket(AF_RDS) asks for) does not
# name rds_zc; uncommented, it loads rds_zc, then rds_zc_ib.
case_net_pf_21_alias() {
	local distro deps conf=$root/etc/modprobe.d/rds_zc.conf rc=0

	mkdir -p "$alt/lib/modules/$rel/kernel/net/rds" "$alt/conf" || return 1
	cp -a "$(dest "$root")" "$alt/lib/modules/$rel/" || return 1
	distro=$(find "/lib/modules/$rel/kernel/net/rds" -name 'rds.ko*' 2>/dev/null | head -n 1)
	if [ -n "$distro" ]; then
		cp "$distro" "$alt/lib/modules/$rel/kernel/net/rds/" || return 1
	fi
	run depmod -a -b "$alt" "$rel" || return 1

	deps=$(modprobe -S "$rel" -d "$alt" -C "$conf" --show-depends net-pf-21 2>&1)
	if grep -q "/$CORE\.ko" <<< "$deps"; then
		diag "as shipped, net-pf-21 loads $CORE:"
		diag "$deps"
		rc=1
	fi

	if ! grep -qx '#alias net-pf-21 rds_zc' "$conf" ||
	   ! grep -qx '#softdep rds_zc post: rds_zc_ib' "$conf"; then
		diag "no '#alias net-pf-21 rds_zc' and '#softdep rds_zc post: rds_zc_ib' lines in $conf"
		return 1
	fi
	sed -e 's/^#alias net-pf-21 rds_zc$/alias net-pf-21 rds_zc/' \
	    -e 's/^#softdep rds_zc post: rds_zc_ib$/softdep rds_zc post: rds_zc_ib/' \
		"$conf" > "$alt/conf/rds_zc.conf"
	deps=$(modprobe -S "$rel" -d "$alt" -C "$alt/conf/rds_zc.conf" --show-depends net-pf-21 2>&1)
	if ! grep -q "^insmod $(dest "$alt")/$CORE.ko" <<< "$deps" ||
	   ! grep -q "^insmod $(dest "$alt")/$IB.ko" <<< "$deps" ||
	   grep -q "/kernel/net/rds/rds\.ko" <<< "$deps"; then
		diag "with the alias and softdep lines, net-pf-21 is not $CORE then $IB:"
		diag "$deps"
		rc=1
	fi
	return "$rc"
}

# "modprobe -r rds_zc_ib" takes the core, now unused, with it.
case_modprobe_remove() {
	run modprobe -S "$rel" -d "$root" -C "$root/etc/modprobe.d" -r "$IB" || return 1
	if loaded "$CORE" || loaded "$IB"; then
		diag "still loaded after modprobe -r $IB: $(grep -E "^($CORE|$IB) " /proc/modules)"
		return 1
	fi
}

case_make_uninstall() {
	local left

	mk uninstall DESTDIR="$root" || return 1
	left=$(find "$root" -type f \( -name '*.ko' -o -name rds.h -o -name rds_zc.conf \
		-o -name rds-zc-info -o -name rds-rdma.7 \))
	if [ -n "$left" ]; then
		diag "left after make uninstall: $left"
		return 1
	fi
	if grep -q "/$CORE\.ko" "$root/lib/modules/$rel/modules.dep"; then
		diag "modules.dep still names $CORE after make uninstall"
		return 1
	fi
}

# As found: each of ours loaded iff it was, the distribution's not.
case_left_as_found() {
	restore || return 1
	as_found
}

# ------------------------------------------------------------------ main

[ "${RDS_MODULES:-}" = ours ] ||
	skip_all "RDS_MODULES=${RDS_MODULES:-unset}: these cases install our modules"
[ "$(id -u)" -eq 0 ] || skip_all "needs root"
for m in "$CORE" "$IB"; do
	[ -f "$built/$m.ko" ] || skip_all "no $built/$m.ko: build for $rel first"
	[ -f "${RDS_MODULE_DIR:-}/$m.ko" ] ||
		skip_all "no $m.ko in RDS_MODULE_DIR '${RDS_MODULE_DIR:-}'"
done
[ -d "$kdir" ] || skip_all "no $kdir"
command -v python3 > /dev/null || skip_all "needs python3"
command -v make > /dev/null || skip_all "needs make"
make -s -q -C "$top" KDIR="$kdir" "$built/$CORE.ko" "$built/$IB.ko" > /dev/null 2>&1 ||
	skip_all "$built is older than the sources: make install would compile under TCG"

note_as_found
root=$(mktemp -d /tmp/rds_zc-install.XXXXXX) || exit 1
alt=$(mktemp -d /tmp/rds_zc-alias.XXXXXX) || exit 1
trap cleanup EXIT

echo "1..${#CASES[@]}"
for c in "${CASES[@]}"; do
	"case_$c"
	rc=$?
	result "$rc" "$c"
done
exit $((failed > 0))
