#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run_guest.sh - the guest side of the RDS selftests, for
# tools/testing/vm/vm-run.sh:
#
#   tools/testing/vm/vm-run.sh --guests 1 --modules distro -- \
#	tools/testing/selftests/net/rds/run_guest.sh
#
# On node 1 it builds the test programs if needed and runs abi_check,
# rds_local, module_lifecycle.sh, ib_device.sh and, last, kmemleak_check.sh
# (skipped unless the kernel has kmemleak), in that order, merging
# their TAP into one stream: every result is renumbered and named after its program, and
# the plan comes last.  Other nodes have nothing to do.  Exit status 0 iff
# nothing failed.  Each program's own output is also kept in
# $RESULTS/<program>.tap when RESULTS is set.
#
# Environment (from vm-run.sh): RDS_NODE, RDS_NODES, RDS_ADDR, RDS_MODULES,
# RDS_MODULE_DIR, RDS_REPO, RESULTS.

set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ "${RDS_NODE:-1}" != 1 ]; then
	echo "1..0 # SKIP node ${RDS_NODE}: the selftests run on node 1"
	exit 0
fi

total=0
failed=0

emit() {	# ok|not ok, description
	total=$((total + 1))
	echo "$1 $total - $2"
	[ "$1" = ok ] || failed=$((failed + 1))
}

# run_prog NAME LIMIT CMD...: run a TAP program, renumbering its results.
run_prog() {
	local name=$1 limit=$2
	local line rest verdict planned='' ran=0 bad=0 rc log=/dev/null status
	shift 2

	if [ -n "${RESULTS:-}" ] && [ -d "$RESULTS" ]; then
		log=$RESULTS/$name.tap
		: > "$log"
	fi
	status=$(mktemp)
	echo "# $name: $*"
	while IFS= read -r line; do
		echo "$line" >> "$log"
		case $line in
		1..*)
			planned=${line#1..}
			planned=${planned%%[!0-9]*}
			if [ "$planned" = 0 ]; then
				rest=${line#*#}
				[ "$rest" = "$line" ] && rest=" SKIP no tests"
				emit ok "$name #$rest"
			fi
			;;
		"ok "* | "not ok "*)
			ran=$((ran + 1))
			[[ $line =~ ^(not ok|ok)\ +[0-9]*\ *(-\ *)?(.*)$ ]]
			verdict=${BASH_REMATCH[1]}
			emit "$verdict" "$name: ${BASH_REMATCH[3]}"
			[ "$verdict" = ok ] || bad=1
			;;
		"Bail out!"*)
			emit "not ok" "$name: ${line#Bail out!}"
			bad=1
			;;
		"#"*)
			echo "$line"
			;;
		*)
			echo "# $line"
			;;
		esac
	done < <(timeout -k 10 "$limit" "$@" 2>&1; echo $? > "$status")
	rc=$(cat "$status")
	rm -f "$status"

	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		emit "not ok" "$name: killed after $limit s"
	elif [ -z "$planned" ]; then
		emit "not ok" "$name: no TAP plan (exit status $rc)"
	elif [ "$planned" != 0 ] && [ "$ran" != "$planned" ]; then
		emit "not ok" "$name: planned $planned results, got $ran (exit status $rc)"
	elif [ "$rc" != 0 ] && [ "$rc" != 4 ] && [ "$bad" = 0 ]; then
		emit "not ok" "$name: exit status $rc"
	fi
}

echo "# RDS selftests on node ${RDS_NODE:-1} (${RDS_ADDR:-no address}), kernel $(uname -r), modules ${RDS_MODULES:-unset}"

# The programs come from the host's build; make only fills in what is missing.
if ! out=$(make -s -C "$here" 2>&1); then
	echo "# $out" | sed '2,$s/^/# /'
	emit "not ok" "build the selftests"
else
	export RDS_ADDR RDS_MODULES RDS_MODULE_DIR
	run_prog abi_check 120 "$here/abi_check"
	run_prog rds_local 480 "$here/rds_local"
	run_prog rds_fuzz 540 "$here/rds_fuzz"
	run_prog module_lifecycle 300 "$here/module_lifecycle.sh"
	run_prog ib_device 180 "$here/ib_device.sh"
	run_prog kmemleak 300 "$here/kmemleak_check.sh"
fi

echo "1..$total"
echo "# $((total - failed)) passed, $failed failed"
[ "$failed" = 0 ]
