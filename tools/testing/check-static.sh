#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-static.sh - the checks of make check that boot nothing and that the
# guests do not wait for, so that check.sh runs them beside the first
# guests:
#
#   1. sparse (C=2) on the 6.1 and 6.12 builds: no warning
#   2. the modules' files only call down (tools/testing/layers.py)
#   3. checkpatch.pl --strict on every C file and header: clean
#   4. rds-rdma(7) renders without a warning
#   5. on the host: the ABI check, the bench's own tests (its kernel-log
#      scanner and judge) and make reliability's parser
#
# check.sh has built the modules with W=1 (build/<release>/), the selftests
# and the tools before it starts this: sparse re-reads those sources and
# rebuilds nothing, so guests loading the modules meanwhile are safe.
#
# Prints "ok - DESC" or "not ok - DESC" per check, each failure followed by
# up to 40 "#   " lines saying why; check.sh counts them.  Logs go to the
# folder given as the only argument.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
logs=${1:?usage: check-static.sh LOG_FOLDER}
mkdir -p "$logs"

result() {	# result STATUS DESCRIPTION [LOG]
	if [ "$1" -eq 0 ]; then
		echo "ok - $2"
	else
		echo "not ok - $2"
		[ -z "${3:-}" ] || sed 's/^/#   /' "$3" | tail -n 40
	fi
}

# 2 first: layers.py reads the objects that the W=1 build made.
log=$logs/layers.log
objdir=$(tail -n 1 "$logs/build-6.1.log")
tools/testing/layers.py "$objdir" > "$log" 2>&1
result $? "the modules' files only call down: $(tail -n 1 "$log")" "$log"

# 1: sparse over every file (C=2 checks all files whether or not they are
# rebuilt), against the headers check.sh built with W=1 for each series,
# and with W=1 too: the same flags leave the objects as they are, so
# only sparse runs.  Without it, kbuild saw new flags and compiled every
# object again (3 of the 4 minutes of each series), and wrote the
# modules anew while the guest lanes were loading them.
for series in 6.1 6.12; do
	kdir=$(cat "$logs/build-$series.log.kdir" 2>/dev/null)
	log=$logs/sparse-$series.log
	if [ -z "$kdir" ]; then
		echo "no $series headers installed" > "$log.bad"
		result 1 "sparse (C=2) clean for $series" "$log.bad"
		continue
	fi
	tools/testing/build-modules.sh "$kdir" C=2 W=1 > "$log" 2>&1
	st=$?
	grep -E 'warning:|error:' "$log" | grep -v 'Skipping BTF' > "$log.bad"
	[ -s "$log.bad" ] && st=1
	result $st "sparse (C=2) clean for $series" "$log.bad"
done

# 3: checkpatch on every C source and header of the project.  Kernel
# code and the uapi header get every rule.  User-space programs (tools/)
# get every rule but those about kernel-internal helpers they cannot use
# (BIT(), u32, __printf, __noreturn), "volatile" (a signal flag must be
# volatile sig_atomic_t), and macro-argument checks that cannot hold for
# the ABI table macros, whose arguments are member designators.
checkpatch() {	# checkpatch LOG FILE... [-- OPTIONS]
	perl build/tools/scripts/checkpatch.pl --no-tree --strict --terse \
		--show-types "${@:2}" >> "$1" 2>&1
}
log=$logs/checkpatch.log
: > "$log"
mapfile -t ksrc < <(git ls-files '*.c' '*.h' | grep -v '^tools/')
mapfile -t usrc < <(git ls-files '*.c' '*.h' | grep '^tools/')
checkpatch "$log" -f "${ksrc[@]}"
checkpatch "$log" --ignore PREFER_DEFINED_ATTRIBUTE_MACRO,PREFER_KERNEL_TYPES,BIT_MACRO,VOLATILE,MACRO_ARG_REUSE,MACRO_ARG_PRECEDENCE \
	-f "${usrc[@]}"
grep -v -E '^total: 0 errors, 0 warnings, 0 checks' "$log" | grep . > "$log.bad"
if [ -s "$log.bad" ]; then st=1; else st=0; fi
result $st "checkpatch --strict clean (${#ksrc[@]} kernel, ${#usrc[@]} user-space files)" "$log.bad"

# 4
log=$logs/man-page.log
groff -man -Tutf8 -ww -z Documentation/man/rds-rdma.7 > "$log" 2>&1 &&
	! [ -s "$log" ]
result $? "rds-rdma(7) renders without a warning" "$log"

# 5: TAP programs on the host; each result is passed on, named after the
# program; the program must report at least MIN results.
run_tap() {	# run_tap NAME MIN COMMAND...
	local line log=$logs/$1.log n=0 st ctx=() from
	"${@:3}" > "$log" 2>&1
	st=$?
	# A failure is followed by the diagnostics printed since the result
	# before it, 40 at most.
	while IFS= read -r line; do
		case $line in
		"ok "*) echo "ok - $1: ${line#ok }"; n=$((n + 1)); ctx=() ;;
		"not ok "*)
			echo "not ok - $1: ${line#not ok }"
			from=$((${#ctx[@]} > 40 ? ${#ctx[@]} - 40 : 0))
			printf '#   %s\n' "${ctx[@]:from}"
			n=$((n + 1)); ctx=() ;;
		"#"*) ctx+=("${line#\# }") ;;
		esac
	done < "$log"
	if [ "$st" -ne 0 ] && ! grep -q '^not ok' "$log"; then
		result 1 "$1 exited with status $st" "$log"
	elif [ "$n" -lt "$2" ]; then
		result 1 "$1: $n results, fewer than the $2 expected" "$log"
	fi
}

# The floors are each program's whole plan today: a case that vanishes
# fails here.
run_tap host-abi 30 tools/testing/selftests/net/rds/abi_check
run_tap bench 64 tools/testing/vm/selftest.sh
run_tap reliability-parser 11 tools/testing/reliability.sh --self-test
