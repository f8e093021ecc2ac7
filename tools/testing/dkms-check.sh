#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dkms-check.sh - dkms.conf at work: "dkms add", "build" and "install" of
# the project for Debian's 6.1 and 6.12 kernels, then, in a guest booting
# each kernel, the modules DKMS built loaded and used.  As root.  Prints
# TAP: a plan first, then one result per step.
#
#   tools/testing/dkms-check.sh [--kernel SERIES]... [--no-guests] [--keep]
#
#   --kernel SERIES  a series to test (6.1, 6.12; the newest Debian amd64
#		     headers of that series); repeat for several.  Default:
#		     6.1 and 6.12.
#   --no-guests	     boot nothing: the guest steps skip.
#   --keep	     keep the scratch folder, build/dkms-check/, even when
#		     every step passed (it is always kept after a failure).
#
# Nothing of the system is touched.  DKMS works in scratch trees under
# build/dkms-check/ (which the guests see at the same path): its source
# tree (--sourcetree), its own tree (--dkmstree), the install tree
# (--installtree root/lib/modules), its temporary files (TMPDIR) and its
# module signing key (mok_signing_key and mok_certificate in the
# environment; by default DKMS makes /var/lib/dkms/mok.key).  "dkms
# install" and "remove" get --no-depmod: without it they run
# "depmod -a <release>" on the real /lib/modules/<release>, whatever the
# install tree.  A depmod of our own, first in DKMS's PATH, records any
# call instead of running.  The source DKMS adds is a copy of the files
# git knows (tracked, or untracked and not ignored), as in a clean
# checkout: "dkms add" copies the whole folder, build/ included.
#
# Steps, in order:
#   dkms add			the source is registered in the scratch trees
# and for each kernel release REL:
#   SERIES: dkms build	"dkms build -k REL --kernelsourcedir HEADERS":
#				both modules in the DKMS tree
#   SERIES: dkms install	both in root/lib/modules/REL/updates/dkms/,
#				for REL (vermagic), signed with the scratch
#				key; "dkms status" says installed
#   SERIES: depmod		"depmod -b root REL", the distribution's
#				kernel/ tree linked in: rds_zc_ib needs
#				rds_zc, rdma_cm and ib_core
#   SERIES: g1: ...		a guest booting REL (vm-run.sh --modules
#				none) runs selftests/net/rds/dkms_guest.sh
#				root: one result per case of it (modprobe
#				from root, build IDs, a datagram over the IB
#				transport, unload), then vm-run.sh's "kernel
#				log clean" and "guest finished"
#   SERIES: vm-run.sh		the run as a whole passed (no other failure)
# then:
#   dkms remove --all		no module left in the install tree
#   system untouched		nothing under /var/lib/dkms, /usr/src and
#				/lib/modules changed since the start (find
#				-newer, and the checksums of every
#				modules.dep*), and DKMS ran no depmod
#
# A step that cannot run (no dkms, no headers for a series, no kernel to
# boot, --no-guests) is "ok ... # SKIP why"; steps after a failed build
# or install skip, naming it.  Exit status 0 iff nothing failed.  Logs
# are in build/dkms-check/logs/.

set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
st_dir=$top/tools/testing/selftests/net/rds
guest_script=$st_dir/dkms_guest.sh

series_list=()
guests=1
keep=0
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) series_list+=("${2:?--kernel takes a series}"); shift 2 ;;
	--no-guests) guests=0; shift ;;
	--keep) keep=1; shift ;;
	*) echo "usage: $0 [--kernel SERIES]... [--no-guests] [--keep]" >&2; exit 2 ;;
	esac
done
[ ${#series_list[@]} -gt 0 ] || series_list=(6.1 6.12)

# shellcheck source=selftests/net/rds/lib_tap.sh
. "$st_dir/lib_tap.sh"

mapfile -t guest_cases < <("$guest_script" --list)
guest_lines=("${guest_cases[@]}" "kernel log clean" "guest finished")
per_kernel=$((3 + ${#guest_lines[@]} + 1))
plan=$((1 + ${#series_list[@]} * per_kernel + 2))

work=$top/build/dkms-check
root=$work/root
logs=$work/logs
start=$(date +%s)

skip_all() {
	local i

	echo "1..$plan"
	for ((i = 0; i < plan; i++)); do
		result 4 "dkms-check step $((i + 1))" "$1"
	done
	exit 0
}

skip_n() {	# N WHY DESC...: the next N steps skip
	local n=$1 why=$2 d

	shift 2
	for d in "$@"; do
		[ "$n" -gt 0 ] || break
		result 4 "$d" "$why"
		n=$((n - 1))
	done
}

tail_diag() {	# FILE [N]: its last N (30) lines as diagnostics
	[ -f "$1" ] && diag "$(tail -n "${2:-30}" "$1")"
}

[ "$(id -u)" -eq 0 ] || skip_all "needs root (dkms insists)"
command -v dkms > /dev/null || skip_all "no dkms: run make deps"
real_depmod=$(command -v depmod) || skip_all "no depmod"

headers_for() {	# SERIES: the newest Debian amd64 headers of it
	local d

	for d in /usr/src/linux-headers-"$1".*-amd64; do
		[ -d "$d" ] && [[ $d != *-rt-* ]] && echo "$d"
	done | sort -V | tail -n 1
}

release_of() {	# HEADERS: the kernel release they are for
	sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' "$1/include/generated/utsrelease.h" 2>/dev/null
}

# vm-run.sh stops its qemu when it is stopped.
trap '[ -n "${guest_pid:-}" ] && kill "$guest_pid" 2> /dev/null' EXIT

rm -rf "$work"
mkdir -p "$work/in" "$work/src" "$work/dkms" "$work/tmp" "$work/bin" \
	"$root/lib/modules" "$logs" || exit 1

# What was there before: the stamp for find -newer, and the checksums.
stamp=$work/stamp
touch "$stamp"
sleep 1		# a change in the same second as the stamp still counts
sums() {
	md5sum /lib/modules/*/modules.dep* 2>/dev/null
}
sums > "$work/modules.dep.md5"

cat > "$work/bin/depmod" << EOF
#!/bin/sh
echo "depmod \$*" >> "$work/depmod-calls"
EOF
chmod +x "$work/bin/depmod"

dk() {	# dkms ACTION ARGS... on the scratch trees
	env PATH="$work/bin:$PATH" TMPDIR="$work/tmp" \
		mok_signing_key="$work/mok.key" mok_certificate="$work/mok.pub" \
		dkms "$@" --sourcetree "$work/src" --dkmstree "$work/dkms" \
		--installtree "$root/lib/modules"
}

# The source, as a clean checkout has it.
copy_source() {
	if git -C "$top" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
		git -C "$top" ls-files -z --cached --others --exclude-standard |
			while IFS= read -r -d '' f; do
				[ -e "$top/$f" ] && printf '%s\0' "$f"
			done |
			tar -C "$top" --null -T - -cf - | tar -C "$work/in" -xf -
	else
		tar -C "$top" --exclude=./build --exclude=./.git -cf - . |
			tar -C "$work/in" -xf -
	fi
}

pkg=$(sed -n 's/^PACKAGE_NAME="\(.*\)"/\1/p' "$top/dkms.conf")
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
arch=$(uname -m)

echo "1..$plan"
echo "# dkms-check: $(dkms --version 2>&1), package ${pkg:-?}/${ver:-?}, scratch $work"

# ------------------------------------------------------------------ add

added=0
log=$logs/add.log
if ! copy_source > "$log" 2>&1; then
	diag "copying the source failed:"
	tail_diag "$log"
	emit "not ok" "dkms add"
elif ! dk add "$work/in" >> "$log" 2>&1; then
	tail_diag "$log"
	emit "not ok" "dkms add"
elif ! [ -f "$work/src/$pkg-$ver/dkms.conf" ] ||
     ! dk status "$pkg/$ver" 2>&1 | grep -q "^$pkg/$ver: added"; then
	diag "not registered: $(dk status 2>&1)"
	emit "not ok" "dkms add"
else
	added=1
	emit ok "dkms add"
fi

# ------------------------------------------------------------------ kernels

built_dir() {	# REL: where DKMS keeps the modules it built
	echo "$work/dkms/$pkg/$ver/$1/$arch/module"
}

# DKMS compresses the modules as the kernel's own are: rds_zc.ko for
# Debian's 6.1, rds_zc.ko.xz for its 6.12.
ko() {	# DIR MODULE: the module's file in DIR
	local f

	for f in "$1/$2".ko "$1/$2".ko.xz "$1/$2".ko.zst "$1/$2".ko.gz; do
		[ -f "$f" ] && echo "$f" && return 0
	done
	return 1
}

step_build() {	# SERIES HEADERS REL
	local rel=$3 m rc=0 log=$logs/build-$1.log

	dk build "$pkg/$ver" -k "$rel" --kernelsourcedir "$2" > "$log" 2>&1 || rc=$?
	if [ "$rc" -ne 0 ]; then
		diag "dkms build exited with $rc:"
		tail_diag "$log" 15
		# DKMS keeps make's output in its build folder on failure.
		diag "the end of $work/dkms/$pkg/$ver/build/make.log:"
		tail_diag "$work/dkms/$pkg/$ver/build/make.log" 15
		return 1
	fi
	for m in rds_zc rds_zc_ib rds_zc_tcp; do
		if ! ko "$(built_dir "$rel")" "$m" > /dev/null; then
			diag "no $m.ko* in $(built_dir "$rel"):"
			diag "$(ls -l "$(built_dir "$rel")" 2>&1)"
			rc=1
		fi
	done
	return "$rc"
}

step_install() {	# SERIES HEADERS REL
	local rel=$3 m rc=0 b f v s log=$logs/install-$1.log
	local dest=$root/lib/modules/$rel/updates/dkms

	mkdir -p "$root/lib/modules/$rel"	# dkms install wants it
	if ! dk install "$pkg/$ver" -k "$rel" --kernelsourcedir "$2" \
	     --no-depmod > "$log" 2>&1; then
		tail_diag "$log"
		return 1
	fi
	for m in rds_zc rds_zc_ib rds_zc_tcp; do
		b=$(ko "$(built_dir "$rel")" "$m")
		f=$dest/${b##*/}
		if ! cmp -s "$b" "$f"; then
			diag "$f is missing or not the module DKMS built"
			rc=1
			continue
		fi
		v=$(modinfo -F vermagic "$f")
		if [ "${v%% *}" != "$rel" ]; then
			diag "$f: vermagic '$v', not for $rel"
			rc=1
		fi
		s=$(modinfo -F signer "$f")
		if grep -q "modules won't be signed" "$logs/build-$1.log"; then
			diag "DKMS did not sign: $(grep "won't be signed" "$logs/build-$1.log")"
		elif [ "$s" != "DKMS module signing key" ]; then
			diag "$f: signer '$s', not DKMS's scratch key"
			rc=1
		fi
	done
	s=$(dk status "$pkg/$ver" -k "$rel" 2>&1)
	if ! grep -q "^$pkg/$ver, $rel, $arch: installed" <<< "$s"; then
		diag "dkms status: $s"
		rc=1
	fi
	return "$rc"
}

# The distribution's modules linked in, so that modules.dep resolves
# rds_zc_ib's needs as on a real system and "modprobe -d" in the guest
# loads them too.  depmod only reads the links.
step_depmod() {	# SERIES HEADERS REL
	local rel=$3 f mrel=$root/lib/modules/$3 dep log=$logs/depmod-$1.log

	for f in kernel modules.order modules.builtin modules.builtin.modinfo; do
		[ -e "/lib/modules/$rel/$f" ] && ln -sfn "/lib/modules/$rel/$f" "$mrel/$f"
	done
	if ! "$real_depmod" -b "$root" "$rel" > "$log" 2>&1; then
		tail_diag "$log"
		return 1
	fi
	dep=$(grep -E '^updates/dkms/rds_zc_ib\.ko(\.[a-z]+)?:' "$mrel/modules.dep")
	for f in " updates/dkms/rds_zc.ko" /rdma_cm.ko /ib_core.ko; do
		if ! [[ "$dep " == *"$f"[.\ ]* ]]; then
			diag "modules.dep of rds_zc_ib does not name $f: '$dep'"
			return 1
		fi
	done
	grep -Eq '^updates/dkms/rds_zc\.ko(\.[a-z]+)?:' "$mrel/modules.dep" || {
		diag "modules.dep has no rds_zc"
		return 1
	}
}

# One guest booting REL runs dkms_guest.sh, in the background: the next
# kernel's DKMS build goes on meanwhile (one guest at a time, though).
guest_pid=
guest_series=
guest_start() {	# SERIES REL
	tools/testing/vm/vm-run.sh --kernel "$2" --guests 1 --modules none \
		--timeout 300 -- "$guest_script" "$root" > "$logs/vm-$1.log" 2>&1 &
	guest_pid=$!
	guest_series=$1
}

# The guest's results become ours, by name, so that a case the guest
# never reported fails here.
guest_report() {
	local s=$guest_series log=$logs/vm-$guest_series.log line name st=0 bad

	[ -n "$guest_pid" ] || return 0
	wait "$guest_pid" || st=$?
	guest_pid=
	for name in "${guest_lines[@]}"; do
		line=$(grep -E "^(not )?ok - g1: $name( #.*)?\$" "$log" | head -n 1)
		case $line in
		"ok - g1: "*)
			if [[ $line == *" # SKIP"* ]]; then
				result 4 "$s: g1: $name" "${line#* # SKIP }"
			else
				emit ok "$s: g1: $name"
			fi
			;;
		"not ok - g1: "*)
			# The guest's diagnostics of that case: the "#" lines
			# between the previous result and this one.
			awk -v want="$name" '
				/^(not )?ok / {
					if ($0 ~ ("^not ok [0-9]+ - " want "$"))
						printf "%s", d
					d = ""; next
				}
				/^#/ { d = d $0 "\n" }
			' "$(sed -n 's/^# vm-run: results in //p' "$log")/guest1/output.txt" \
				2>/dev/null | head -n 40
			emit "not ok" "$s: g1: $name"
			;;
		*)
			emit "not ok" "$s: g1: $name # no result from the guest"
			;;
		esac
	done
	bad=$(grep '^not ok' "$log")
	if [ "$st" -ne 0 ] || ! tail -n 1 "$log" | grep -q '^[0-9]* passed, 0 failed$'; then
		diag "vm-run.sh exited with $st${bad:+; its failures:}"
		[ -n "$bad" ] && diag "$bad"
		tail_diag "$log"
		emit "not ok" "$s: vm-run.sh"
	else
		diag "$(sed -n 's/^# \(vm-run: wall time\)/\1/p' "$log")"
		emit ok "$s: vm-run.sh"
	fi
}

guest_descs() {	# SERIES: the names of the guest steps
	local n

	for n in "${guest_lines[@]}"; do
		echo "$1: g1: $n"
	done
	echo "$1: vm-run.sh"
}

for s in "${series_list[@]}"; do
	kdir=$(headers_for "$s")
	rel=
	[ -n "$kdir" ] && rel=$(release_of "$kdir")
	mapfile -t gd < <(guest_descs "$s")
	descs=("$s: dkms build" "$s: dkms install" "$s: depmod" "${gd[@]}")
	if [ -z "$rel" ]; then
		skip_n "$per_kernel" "no linux-headers-$s.*-amd64: run make deps" "${descs[@]}"
		continue
	fi
	if [ "$added" -ne 1 ]; then
		skip_n "$per_kernel" "dkms add failed" "${descs[@]}"
		continue
	fi
	echo "# $s: $rel, headers $kdir"

	t0=$SECONDS
	step_build "$s" "$kdir" "$rel"
	rc=$?
	diag "$s: dkms build took $((SECONDS - t0)) s"
	result "$rc" "$s: dkms build"
	if [ "$rc" -ne 0 ]; then
		skip_n $((per_kernel - 1)) "dkms build failed" "${descs[@]:1}"
		continue
	fi
	step_install "$s" "$kdir" "$rel"
	rc=$?
	result "$rc" "$s: dkms install"
	if [ "$rc" -ne 0 ]; then
		skip_n $((per_kernel - 2)) "dkms install failed" "${descs[@]:2}"
		continue
	fi
	step_depmod "$s" "$kdir" "$rel"
	rc=$?
	result "$rc" "$s: depmod"

	why=
	if [ "$guests" -eq 0 ]; then
		why="--no-guests"
	elif [ "$rc" -ne 0 ]; then
		why="depmod failed"
	elif ! [ -f "/boot/vmlinuz-$rel" ] || ! [ -f "/lib/modules/$rel/modules.dep" ]; then
		why="no /boot/vmlinuz-$rel with its /lib/modules tree: run make deps"
	elif ! command -v qemu-system-x86_64 > /dev/null; then
		why="no qemu-system-x86_64: run make deps"
	fi
	guest_report
	if [ -n "$why" ]; then
		skip_n $((per_kernel - 3)) "$why" "${gd[@]}"
	else
		guest_start "$s" "$rel"
	fi
done
guest_report

# ------------------------------------------------------------------ end

step_remove() {
	local left log=$logs/remove.log

	if ! dk remove "$pkg/$ver" --all --no-depmod > "$log" 2>&1; then
		tail_diag "$log"
		return 1
	fi
	left=$(find "$root/lib/modules" -path '*/updates/*' -name '*.ko*')
	if [ -n "$left" ]; then
		diag "left in the install tree: $left"
		return 1
	fi
	if [ -n "$(dk status "$pkg" 2>&1)" ]; then
		diag "dkms status after remove: $(dk status "$pkg" 2>&1)"
		return 1
	fi
}

step_untouched() {
	local changed rc=0

	changed=$(find /var/lib/dkms /usr/src /lib/modules -newer "$stamp" 2>/dev/null | head -n 20)
	if [ -n "$changed" ]; then
		diag "changed since the start:"
		diag "$changed"
		rc=1
	fi
	if ! sums | cmp -s - "$work/modules.dep.md5"; then
		diag "modules.dep checksums changed:"
		diag "$(sums | diff "$work/modules.dep.md5" -)"
		rc=1
	fi
	if [ -s "$work/depmod-calls" ]; then
		diag "DKMS ran depmod:"
		diag "$(cat "$work/depmod-calls")"
		rc=1
	fi
	return "$rc"
}

if [ "$added" -eq 1 ]; then
	step_remove
	result $? "dkms remove --all"
else
	result 4 "dkms remove --all" "dkms add failed"
fi
step_untouched
result $? "system untouched: /var/lib/dkms, /usr/src, /lib/modules; no depmod"

echo "# dkms-check: wall time $(($(date +%s) - start))s"
if [ "$total" -ne "$plan" ]; then
	echo "not ok - dkms-check: $total results for a plan of $plan"
	failed=$((failed + 1))
fi
if [ "$failed" -eq 0 ] && [ "$keep" -eq 0 ]; then
	rm -rf "$work"
else
	echo "# dkms-check: scratch folder and logs kept in $work"
fi
exit $((failed > 0))
