#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# lib_tap.sh - merge the TAP of several test programs into one stream, for
# the guest entry points (run_guest.sh, run_remote.sh).  Sourced:
#
#   . lib_tap.sh
#   run_prog NAME LIMIT CMD...	# run CMD under a time limit; each of its
#				# results is renumbered and named "NAME: ..."
#   emit "ok"|"not ok" DESC	# one result of the caller's own
#   result STATUS NAME [WHY]	# the same from a status: 0 ok, 4 ok # SKIP
#				# WHY, anything else not ok
#   diag TEXT...		# TEXT as TAP diagnostics, a "# " line each
#   tap_finish			# the plan and the totals; status 0 iff
#				# nothing failed
#
# A program's own output is also kept in $RESULTS/NAME.tap when RESULTS is
# a folder.  A program that is killed at its limit, prints no plan, prints
# fewer or more results than planned, or exits non-zero (but 4, kselftest's
# "skip") without a failed result adds a failed result of its own.
#
# The results so far are counted in total, the failed ones in failed: a
# script that prints its own plan exits with $((failed > 0)).

total=0
failed=0

emit() {	# ok|not ok, description
	total=$((total + 1))
	echo "$1 $total - $2"
	[ "$1" = ok ] || failed=$((failed + 1))
}

result() {	# STATUS NAME [SKIP-REASON]: STATUS 0 pass, 4 skip, else fail
	case $1 in
	0) emit ok "$2" ;;
	4) emit ok "$2 # SKIP $3" ;;
	*) emit "not ok" "$2" ;;
	esac
}

diag() {
	local line

	while IFS= read -r line; do
		echo "# $line"
	done <<< "$*"
}

# The sanitizer kernel's scales (run_guest.sh and run_remote.sh --debug),
# unless the environment gives others: time limits 6 times longer, bounds
# on the kernel's memory 4 times larger (rds_test.h).
sanitizer_scales() {
	export RDS_TIME_SCALE=${RDS_TIME_SCALE:-6} RDS_MEM_SCALE=${RDS_MEM_SCALE:-4}
}

# A time limit in seconds, RDS_TIME_SCALE (default 1) times longer: a
# slower kernel, the sanitizer one, gets more time.
scaled() {	# scaled SECS
	echo $(($1 * ${RDS_TIME_SCALE:-1}))
}

# run_prog NAME LIMIT CMD...: run a TAP program, renumbering its results.
# LIMIT (seconds) is scaled (above).
run_prog() {
	local name=$1 limit
	limit=$(scaled "$2")
	local line rest verdict planned='' ran=0 bad=0 rc log=/dev/null status
	local t0=$SECONDS t_last=$SECONDS
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
			# where a run's time goes: a result that took 5 s or more
			[ $((SECONDS - t_last)) -lt 5 ] ||
				echo "# $name: $((SECONDS - t_last)) s to the next result"
			t_last=$SECONDS
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
	echo "# $name: wall time $((SECONDS - t0)) s"

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

tap_finish() {
	echo "1..$total"
	echo "# $((total - failed)) passed, $failed failed"
	[ "$failed" = 0 ]
}
