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
#   2. runs run_guest.sh in one guest with our modules; it ends with
#      kmemleak_check.sh, and the bench fails the run on any KASAN,
#      lockdep, UBSAN, KFENCE or kmemleak report in the kernel log;
#   3. copies the guest's kernel log, kmemleak report and the report blocks
#      the log scanner found into build/debug-findings/RUN/, with our
#      modules' frames in them turned into source lines (our-frames.txt).
#
# Ends with the bench's "N passed, M failed"; exit status 0 iff M = 0.
# Not part of "make check": the kernel takes most of an hour to build.
#
# Environment: CHECK_DEBUG_TIMEOUT (seconds for the guest, default 1500),
# CHECK_DEBUG_MEM (guest MB, default 2048), and those of debug-kernel.sh.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
timeout_s=${CHECK_DEBUG_TIMEOUT:-1500}
mem=${CHECK_DEBUG_MEM:-2048}

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

run=$(date +%Y%m%d-%H%M%S)-$$
results=$top/build/vm-results/debug-$run
vmlog=build/check-debug/vm-run.log
rc=0
# kasan_multi_shot: every KASAN report, not only the first one.
VM_KERNEL_ARGS="kasan_multi_shot${VM_KERNEL_ARGS:+ $VM_KERNEL_ARGS}" \
tools/testing/vm/vm-run.sh --kernel "$rel" --guests 1 --modules ours \
	--timeout "$timeout_s" --mem "$mem" --results "$results" \
	-- tools/testing/selftests/net/rds/run_guest.sh 2>&1 | tee "$vmlog" ||
	rc=${PIPESTATUS[0]}

# Keep what a developer needs to read the findings in one place.
findings=$top/build/debug-findings/$run
mkdir -p "$findings"
g=$results/guest1
for f in dmesg.txt console.log output.txt kmemleak.txt; do
	[ ! -f "$g/$f" ] || cp "$g/$f" "$findings/"
done
for f in "$g/dmesg.txt" "$g/console.log"; do
	[ -f "$f" ] || continue
	# Each line the scanner flags, with the report around it: from 5 lines
	# before to 60 after, overlapping windows merged.
	hits=$(tools/testing/vm/scan-kernel-log.sh --max 0 "$f" 2>/dev/null |
		sed -n 's/^[^:]*:\([0-9]*\):.*/\1/p') || true
	[ -n "$hits" ] || continue
	awk -v hits="$(tr '\n' ' ' <<< "$hits")" '
		BEGIN { n = split(hits, h, " "); for (i = 1; i <= n; i++)
			for (l = h[i] - 5; l <= h[i] + 60; l++) keep[l] = 1 }
		keep[NR] { if (NR != last + 1 && last) print "--"; print; last = NR }
	' "$f" > "$findings/reports-$(basename "$f" .txt).txt"
	break	# dmesg.txt when there is one; the console only without it
done
# Our modules' frames in those reports, as source lines.
faddr2line=/lib/modules/$rel/build/source/scripts/faddr2line
cat "$findings"/reports-*.txt "$findings"/kmemleak.txt 2>/dev/null |
	grep -oE '[A-Za-z0-9_.]+\+0x[0-9a-f]+/0x[0-9a-f]+ \[rds_zc(_ib)?\]' |
	sort -u | while read -r frame mod; do
		mod=${mod#[}
		"$faddr2line" "$moddir/${mod%]}.ko" "$frame" 2>&1 || true
	done > "$findings/our-frames.txt" || true
[ -s "$findings/our-frames.txt" ] || rm -f "$findings/our-frames.txt"
echo "# check-debug: kernel log, kmemleak report and report excerpts in $findings"
# The bench's summary, last, as "make check" ends.
summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$vmlog" | tail -n 1) ||
	summary="0 passed, 1 failed"
echo "$summary"
[ "$rc" -eq 0 ] || exit "$rc"
