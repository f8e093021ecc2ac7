#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-debug: the selftests in a guest that boots the sanitizer
# kernel (KASAN, lockdep, kmemleak, KFENCE, UBSAN, DEBUG_LIST; see
# tools/testing/debug-kernel.sh, which this runs first: it builds the
# kernel once, then returns at once).
#
#   1. builds our modules against /lib/modules/RELEASE/build (with -g, so
#      that scripts/faddr2line can turn a report's rds_zc+0x.. into a line);
#   2. runs, each in its own boot of the bench:
#      one          run_guest.sh --fuzz-seconds 120 in one guest with
#                   our modules;
#      ours,ours    run_remote.sh --debug in two guests, both ours: every
#                   time limit six times longer, rds_fuzz 60 s a seed,
#                   rds_storm.sh's slab_storm (allocation failures aimed
#                   at our modules' code while RDMA load runs and the link
#                   breaks);
#      ours,distro  and distro,ours: run_remote.sh --debug against the
#                   distribution's RDS built into the same kernel;
#      each ends with kmemleak_check.sh, and the bench fails a run on any
#      KASAN, lockdep, UBSAN, KFENCE or kmemleak report in a kernel log
#      (in the runs against the distribution, one in its rds or rds_rdma
#      alone is listed as the distribution's, not counted),
#      and on a guest that does not reach its init within 6 minutes (it
#      takes about 2.5);
#   3. copies each guest's kernel log, kmemleak report and the report
#      blocks the log scanner found into build/debug-findings/RUN/LANE-gK/,
#      with our modules' frames in them turned into source lines
#      (our-frames.txt).
#
# Ends with "N passed, M failed, K skipped" over all runs (each run must
# also give as many results as its floor below); exit status 0 iff M = 0.
# Not part of "make check": the kernel takes most of an hour to build,
# and the runs take about two hours together.
#
# Environment: CHECK_DEBUG_RUNS (the runs, default "one ours,ours
# ours,distro distro,ours"), CHECK_DEBUG_ONLY (PROG,...: each run runs
# only those programs of run_guest.sh or run_remote.sh, "--only"; the
# floors below then do not apply, any result does), CHECK_DEBUG_TIMEOUT
# (seconds for one run, default 1500 for one guest, 4500 for two),
# CHECK_DEBUG_MEM (guest MB, default 2048), and those of debug-kernel.sh.
# For example, the device-removal cases alone:
#   CHECK_DEBUG_RUNS=one CHECK_DEBUG_ONLY=ib_device make check-debug
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
mem=${CHECK_DEBUG_MEM:-2048}
runs=${CHECK_DEBUG_RUNS:-one ours,ours ours,distro distro,ours}
# The fewest results a run may give (vm-run.sh's lines, all guests), as
# tools/testing/check.sh asks of the same suites on Debian's kernels.
declare -A FLOOR=([one]=171 [ours,ours]=287 [ours,distro]=233 [distro,ours]=231)

rel=$(tools/testing/debug-kernel.sh | tail -n 1)
if [ -z "$rel" ] || [ ! -d "/lib/modules/$rel/build" ]; then
	echo "check-debug: no debug kernel installed" >&2
	exit 1
fi
echo "# check-debug: kernel $rel"

mkdir -p build/check-debug
log=build/check-debug/modules-build.log
if ! tools/testing/build-modules.sh "/lib/modules/$rel/build" KCFLAGS=-g > "$log" 2>&1; then
	tail -n 40 "$log" >&2
	echo "check-debug: building the modules for $rel failed (see $log)" >&2
	exit 1
fi
moddir=$(tail -n 1 "$log")

stamp=$(date +%Y%m%d-%H%M%S)-$$
passed=0
failed=0
skipped=0

# findings RESULTS LANE K: guest K's logs and reports, our frames as lines.
findings() {
	local g=$1/guest$3 dir=$top/build/debug-findings/$stamp/$2-g$3 f hits
	local faddr2line=/lib/modules/$rel/build/source/scripts/faddr2line

	mkdir -p "$dir"
	for f in dmesg.txt console.log output.txt kmemleak.txt; do
		[ ! -f "$g/$f" ] || cp "$g/$f" "$dir/"
	done
	for f in "$g/dmesg.txt" "$g/console.log"; do
		[ -f "$f" ] || continue
		# Each line the scanner flags, with the report around it: from
		# 5 lines before to 60 after, overlapping windows merged.
		hits=$(tools/testing/vm/scan-kernel-log.sh --max 0 "$f" 2>/dev/null |
			sed -n 's/^[^:]*:\([0-9]*\):.*/\1/p') || true
		[ -n "$hits" ] || continue
		awk -v hits="$(tr '\n' ' ' <<< "$hits")" '
			BEGIN { n = split(hits, h, " "); for (i = 1; i <= n; i++)
				for (l = h[i] - 5; l <= h[i] + 60; l++) keep[l] = 1 }
			keep[NR] { if (NR != last + 1 && last) print "--"; print; last = NR }
		' "$f" > "$dir/reports-$(basename "$f" .txt).txt"
		break	# dmesg.txt when there is one; the console only without it
	done
	cat "$dir"/reports-*.txt "$dir"/kmemleak.txt 2>/dev/null |
		grep -oE '[A-Za-z0-9_.]+\+0x[0-9a-f]+/0x[0-9a-f]+ \[rds_zc(_ib)?\]' |
		sort -u | while read -r frame mod; do
			mod=${mod#[}
			"$faddr2line" "$moddir/${mod%]}.ko" "$frame" 2>&1 || true
		done > "$dir/our-frames.txt" || true
	[ -s "$dir/our-frames.txt" ] || rm -f "$dir/our-frames.txt"
}

for lane in $runs; do
	case $lane in
	one)
		opts=(--guests 1 --modules ours
		      --timeout "${CHECK_DEBUG_TIMEOUT:-1500}")
		# the fuzzer's long budget: 120 s for each of its 4 seeds;
		# limits scaled for this kernel (rds_local's netns_limits ran
		# past its 60 s unscaled)
		script=(tools/testing/selftests/net/rds/run_guest.sh --debug
			${CHECK_DEBUG_ONLY:+--only "$CHECK_DEBUG_ONLY"}
			--fuzz-seconds 120)
		;;
	ours,ours | ours,distro | distro,ours)
		opts=(--guests 2 --modules "$lane" --nic e1000
		      --timeout "${CHECK_DEBUG_TIMEOUT:-4500}")
		script=(tools/testing/selftests/net/rds/run_remote.sh --debug
			${CHECK_DEBUG_ONLY:+--only "$CHECK_DEBUG_ONLY"})
		;;
	*)
		echo "check-debug: unknown run '$lane' in CHECK_DEBUG_RUNS" >&2
		exit 2
		;;
	esac
	name=${lane/,/-}
	results=$top/build/vm-results/debug-$stamp-$name
	vmlog=build/check-debug/vm-run-$name.log
	echo "# check-debug: $lane"
	# kasan_multi_shot: every KASAN report, not only the first one.
	# acpi=noirq: PCI interrupts routed by the BIOS's table, not by
	# ACPI's _PRT, whose AML loop this kernel under TCG runs past ACPI's
	# 30 s loop timeout: each device then had no legacy interrupt (e1000
	# never came up) and the boot lost a minute.
	# --heartbeat 60: a run that stops making progress shows in the
	# console log whether the guest's kernel still ran, and where each
	# selftest program waited.
	# A node running the distribution's RDS: its modules' own reports
	# are listed, not counted (the lane judges ours).
	foreign=
	case $lane in *distro*) foreign=rds,rds_rdma ;; esac
	VM_FOREIGN_MODULES=$foreign \
	VM_KERNEL_ARGS="kasan_multi_shot acpi=noirq${VM_KERNEL_ARGS:+ $VM_KERNEL_ARGS}" \
	tools/testing/vm/vm-run.sh --kernel "$rel" "${opts[@]}" --mem "$mem" \
		--boot-limit 360 --heartbeat 60 --results "$results" \
		-- "${script[@]}" \
		> "$vmlog" 2>&1 || true
	# vm-run.sh's result lines, named after the run.
	sed -n 's/^\(ok\|not ok\) - /\1 - '"$name"': /p' "$vmlog"
	p=$(grep -c '^ok - ' "$vmlog") || true
	f=$(grep -c '^not ok - ' "$vmlog") || true
	k=$(grep -c '^ok - .*# SKIP' "$vmlog") || true
	floor=${FLOOR[$lane]}
	[ -z "${CHECK_DEBUG_ONLY:-}" ] || floor=1
	if [ $((p + f)) -lt "$floor" ]; then
		echo "not ok - $name: $((p + f)) results, fewer than the $floor expected (see $vmlog)"
		f=$((f + 1))
	fi
	passed=$((passed + p - k))
	failed=$((failed + f))
	skipped=$((skipped + k))
	grep '^# vm-run: wall time' "$vmlog" | sed "s/^# vm-run:/# $name:/" || true
	# The distribution's findings, for its maintainers: not ours to fail.
	grep ':foreign:' "$vmlog" | sed "s/^#  */# $name: the distribution's: /" || true
	for g in "$results"/guest*; do
		[ -d "$g" ] && findings "$results" "$name" "${g##*guest}"
	done
done

echo "# check-debug: kernel logs, kmemleak reports and report excerpts in build/debug-findings/$stamp"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
