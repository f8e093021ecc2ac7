#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dkms_guest.sh - the guest side of tools/testing/dkms-check.sh: load the
# modules that DKMS built and installed, use them, unload them.  Runs as
# root in a guest that vm-run.sh booted with --modules none.  Prints TAP.
#
#   dkms_guest.sh ROOT	# the cases
#   dkms_guest.sh --list	# their names, one a line (for the host)
#
# ROOT is the scratch root of dkms-check.sh: ROOT/lib/modules/<release>/
# holds, for the running kernel, updates/dkms/rds_zc.ko and rds_zc_ib.ko
# (.ko.xz where the kernel's own modules are compressed)
# as "dkms install --installtree ROOT/lib/modules" put them there, links
# to the distribution's kernel/ tree and its modules.order and
# modules.builtin*, and the modules.dep that "depmod -b ROOT" made.
#
# Cases:
#   modprobe_from_dkms_tree  "modprobe -d ROOT rds_zc_ib" loads rds_zc,
#			    then rds_zc_ib, both from updates/dkms/
#   loaded_are_dkms_built    the GNU build ID of each loaded module
#			    (/sys/module/M/notes) is the DKMS-built file's,
#			    not that of the tree's build/<release>/ copy
#   ib_socket_roundtrip	    a socket bound to RDS_ADDR is served by the IB
#			    transport (SO_RDS_TRANSPORT 0, rds_zc_ib) and a
#			    datagram it sends itself comes back
#   modprobe_remove	    "modprobe -d ROOT -r rds_zc_ib" removes both;
#			    no RDS module is left loaded
#
# Environment (from vm-run.sh): RDS_ADDR, RDS_REPO.

# The case_* functions are called through "case_$c".
# shellcheck disable=SC2317

set -u

CORE=rds_zc
IB=rds_zc_ib
CASES=(modprobe_from_dkms_tree loaded_are_dkms_built ib_socket_roundtrip
       modprobe_remove)

if [ "${1:-}" = --list ]; then
	printf '%s\n' "${CASES[@]}"
	exit 0
fi

# shellcheck source=lib_cases.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_cases.sh"

root=${1:-}
rel=$(uname -r)
dest=$root/lib/modules/$rel/updates/dkms
repo=${RDS_REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../../../.." && pwd)}

cleanup() {
	loaded "$IB" && rmmod "$IB"
	loaded "$CORE" && rmmod "$CORE"
}

mp() {	# modprobe on ROOT's module tree
	run modprobe -d "$root" -S "$rel" "$@"
}

# DKMS compresses the modules as the kernel's own are: rds_zc.ko for
# Debian's 6.1, rds_zc.ko.xz for its 6.12.
ko() {	# MODULE: its file in ROOT's updates/dkms/
	local f

	for f in "$dest/$1".ko "$dest/$1".ko.xz "$dest/$1".ko.zst "$dest/$1".ko.gz; do
		[ -f "$f" ] && echo "$f" && return 0
	done
	return 1
}

file_build_id() {	# FILE: its GNU build ID, in hex
	local f=$1 tmp=

	case $f in
	*.xz|*.zst|*.gz)
		tmp=$(mktemp) || return 1
		case $f in
		*.xz) xz -dc "$f" ;;
		*.zst) zstd -qdc "$f" ;;
		*.gz) gzip -dc "$f" ;;
		esac > "$tmp" || { rm -f "$tmp"; return 1; }
		f=$tmp
		;;
	esac
	readelf -n "$f" 2>/dev/null | sed -n 's/^ *Build ID: *//p' | head -n 1
	[ -z "$tmp" ] || rm -f "$tmp"
}

loaded_note() {	# MODULE: its loaded .note.gnu.build-id, in hex
	od -An -tx1 -v "/sys/module/$1/notes/.note.gnu.build-id" 2>/dev/null |
		tr -d ' \n'
}

# ------------------------------------------------------------------ cases

case_modprobe_from_dkms_tree() {
	local deps m

	for m in "$CORE" "$IB" rds; do
		if loaded "$m"; then
			diag "$m is already loaded: vm-run.sh --modules none expected"
			return 1
		fi
	done
	deps=$(modprobe -d "$root" -S "$rel" --show-depends "$IB" 2>&1)
	if ! grep -q "^insmod $(ko "$CORE") " <<< "$deps" ||
	   ! grep -q "^insmod $(ko "$IB") " <<< "$deps"; then
		diag "modprobe --show-depends $IB does not name both files of $dest:"
		diag "$deps"
		return 1
	fi
	mp "$IB" || return 1
	if ! loaded "$CORE" || ! loaded "$IB"; then
		diag "after modprobe $IB: $(grep -E "^($CORE|$IB) " /proc/modules)"
		return 1
	fi
}

case_loaded_are_dkms_built() {
	local m want tree note rc=0

	for m in "$CORE" "$IB"; do
		loaded "$m" || { diag "$m is not loaded"; return 1; }
		want=$(file_build_id "$(ko "$m")")
		tree=$(file_build_id "$repo/build/$rel/net/rds/$m.ko")
		note=$(loaded_note "$m")
		if [ -z "$want" ] || [ -z "$note" ]; then
			diag "$m: no build ID (file '$want', loaded '$note')"
			rc=1
		elif [[ $note != *"$want" ]]; then
			diag "$m: loaded build ID note $note is not $(ko "$m")'s $want"
			rc=1
		elif [ "$want" = "$tree" ]; then
			diag "$m: the DKMS build and build/$rel/ have the same build ID $want"
			rc=1
		else
			diag "$m: build ID $want (build/$rel/: ${tree:-no such file})"
		fi
	done
	return "$rc"
}

case_ib_socket_roundtrip() {
	[ -n "${RDS_ADDR:-}" ] || { diag "RDS_ADDR is not set"; return 1; }
	loaded "$IB" || { diag "$IB is not loaded"; return 1; }
	self_roundtrip "$RDS_ADDR" "built and installed by DKMS" 0
}

case_modprobe_remove() {
	mp -r "$IB" || return 1
	if loaded "$CORE" || loaded "$IB" || loaded rds; then
		diag "still loaded: $(grep -E "^($CORE|$IB|rds) " /proc/modules)"
		return 1
	fi
}

# ------------------------------------------------------------------ main

[ -n "$root" ] || skip_all "usage: dkms_guest.sh ROOT"
[ "$(id -u)" -eq 0 ] || skip_all "needs root"
for m in "$CORE" "$IB"; do
	ko "$m" > /dev/null || skip_all "no $m.ko* in $dest"
done
[ -f "$root/lib/modules/$rel/modules.dep" ] ||
	skip_all "no modules.dep in $root/lib/modules/$rel"
command -v python3 > /dev/null || skip_all "needs python3"
command -v readelf > /dev/null || skip_all "needs readelf"

trap cleanup EXIT

echo "1..${#CASES[@]}"
for c in "${CASES[@]}"; do
	"case_$c"
	rc=$?
	result "$rc" "$c"
done
exit $((failed > 0))
