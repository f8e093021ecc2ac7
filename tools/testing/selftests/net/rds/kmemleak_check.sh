#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kmemleak_check.sh - after the other selftests, ask kmemleak for leaks
# and fail on those of our modules.  Meant for the sanitizer kernel of
# "make check-debug" (tools/testing/debug-kernel.sh); on a kernel without
# kmemleak (Debian's) both tests are skipped.
#
# It scans twice (an object must stay unreferenced for 5 s and over more
# than one scan to be reported), then reads /sys/kernel/debug/kmemleak:
#   1. no leak whose allocation backtrace names rds_zc or rds_zc_ib;
#   2. no leak whose backtrace holds an address that no longer resolves
#      to a symbol: code of a module unloaded since, which in these tests
#      can only be ours or the distribution's rds (module_lifecycle.sh
#      loads and unloads both).
# Other leaks are listed as diagnostics; the bench's kernel-log check
# fails the run on them anyway ("N new suspected memory leaks").  The whole
# report goes to $RESULTS/kmemleak.txt when RESULTS is set.
#
# Environment: RESULTS (optional), KMEMLEAK_SCANS (default 2),
# KMEMLEAK_WAIT (seconds between scans, default 6), KMEMLEAK_REPORT=FILE
# (judge that saved report instead of scanning; to test this script).
# Prints TAP.
set -euo pipefail

km=/sys/kernel/debug/kmemleak
scans=${KMEMLEAK_SCANS:-2}
wait_s=${KMEMLEAK_WAIT:-6}
names=(no_rds_zc_leaks no_unloaded_module_leaks)

# shellcheck source=lib_tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_tap.sh"

echo "1..${#names[@]}"

report=$(mktemp)
trap 'rm -f "$report"' EXIT

if [ -n "${KMEMLEAK_REPORT:-}" ]; then
	cat "$KMEMLEAK_REPORT" > "$report"
else
	if [ ! -e "$km" ] && [ -d /sys/kernel/debug ] &&
	   ! mountpoint -q /sys/kernel/debug; then
		mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null || true
	fi
	if [ ! -e "$km" ]; then
		for i in "${!names[@]}"; do
			result 4 "${names[i]}" "no $km (kernel without kmemleak)"
		done
		exit 0
	fi

	# Give objects freed just now (RCU callbacks, work items) time to go.
	sleep "$wait_s"
	for ((i = 0; i < scans; i++)); do
		if ! echo scan > "$km" 2> "$report"; then
			# Writing fails once kmemleak has disabled itself (an
			# internal error, or kmemleak=off on the command line).
			echo "# kmemleak scan failed: $(cat "$report")"
			for j in "${!names[@]}"; do
				emit "not ok" "${names[j]} # kmemleak is not working"
			done
			exit 1
		fi
		[ "$i" -eq $((scans - 1)) ] || sleep "$wait_s"
	done
	cat "$km" > "$report"
fi
if [ -n "${RESULTS:-}" ] && [ -d "$RESULTS" ]; then
	cp "$report" "$RESULTS/kmemleak.txt"
fi

# Split the report into one record per object (a record starts with
# "unreferenced object") and sort each into ours, unloaded or other.
# A backtrace line of a symbol in a module reads "    fn+0x1/0x2 [mod]";
# one in code that is gone reads "    0xffffffffc0123456".
classify() {	# classify ours|unloaded|other
	awk -v want="$1" '
	function flush() {
		if (rec == "")
			return
		kind = ours ? "ours" : gone ? "unloaded" : "other"
		if (kind == want)
			printf "%s\n", rec
		rec = ""
	}
	/^unreferenced object/ { flush(); rec = $0; ours = 0; gone = 0; next }
	rec == "" { next }
	/\[rds_zc(_ib)?\]$/ { ours = 1 }
	/^    0x[0-9a-f]+$/ { gone = 1 }
	{ rec = rec "\n" $0 }
	END { flush() }' "$report"
}

count() {	# count TEXT: number of records in it
	grep -c '^unreferenced object' <<< "$1" || true
}

nobj=$(grep -c '^unreferenced object' "$report" || true)
echo "# kmemleak: $nobj unreferenced object(s) after $scans scan(s)"

check() {	# check NAME KIND WHAT
	local recs nrec
	recs=$(classify "$2")
	nrec=$(count "$recs")
	if [ "$nrec" -eq 0 ]; then
		emit ok "$1"
		return
	fi
	emit "not ok" "$1 # $nrec $3"
	echo "# ${recs//$'\n'/$'\n'# }"
}

check "${names[0]}" ours "leak(s) allocated by rds_zc or rds_zc_ib"
check "${names[1]}" unloaded "leak(s) allocated by code of a module unloaded since"

others=$(classify other)
if [ "$(count "$others")" -gt 0 ]; then
	echo "# $(count "$others") other unreferenced object(s), not ours (they fail the kernel-log check):"
	echo "#   ${others//$'\n'/$'\n'#   }"
fi
exit $((failed > 0))
