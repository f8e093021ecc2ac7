#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: every check the project promises, each counted as a test.
#
#   1. builds for Debian's 6.1 and 6.12 kernels with W=1: no warning
#   2. sparse (C=2) on both: no warning
#   2b. the modules' files only call down (tools/testing/layers.py)
#   3. checkpatch.pl --strict on every C file and header: clean
#   4. the selftests, the demo, tools/rds-zc-bench, tools/rds-zc-info and
#      the examples build with -Werror;
#      the ABI check, the bench's own tests (its kernel-log scanner and
#      judge) and make reliability's parser (reliability.sh --self-test)
#      run on the host
#   5. the selftests in qemu guests: our modules and the distribution's rds,
#      each on 6.1 and 6.12 (the same tests must pass on both); and the
#      two-guest tests (run_remote.sh) on 6.1 for each pairing of module
#      sets in REMOTE_PAIRINGS below, and on 6.12 for REMOTE_PAIRINGS_6_12
#   6. DKMS (tools/testing/dkms-check.sh, after the one-guest runs and
#      before the two-guest ones, 3 to 5 minutes): dkms.conf builds and
#      installs the modules for 6.1 and 6.12 into scratch trees, and a
#      guest booting each kernel loads and uses what DKMS built
#
# Prints one TAP-style line per test and ends with
# "N passed, M failed, K skipped": a result with a SKIP directive counts
# as skipped, never as passed.  Each guest run must report at least the
# number of results MIN_RESULTS gives it (so must the DKMS check), so a
# case that vanished or a program that stopped early fails.  Exits
# non-zero if anything failed.
# Logs are kept in build/check/.
#
# Environment: CHECK_GUESTS=0 skips the guest runs (static checks only);
# CHECK_REMOTE_PAIRINGS overrides REMOTE_PAIRINGS, CHECK_REMOTE_PAIRINGS_6_12
# REMOTE_PAIRINGS_6_12 (empty: none).
set -uo pipefail

# The two-guest runs: "guest1,guest2" module sets, ours or distro, each run
# once on 6.1 (about 2 minutes each).  distro,distro is the reference that
# proves the tests themselves; the other three are the interoperability bar.
REMOTE_PAIRINGS="distro,distro ours,ours ours,distro distro,ours"
# ":credits": the same with flow control that runs out all the time (our
# receive rings of CREDITS_RING buffers, the distribution's
# net.rds.ib.flow_control on; run_remote.sh --credits).
REMOTE_PAIRINGS+=" ours,ours:credits ours,distro:credits"
CREDITS_RING=32
# On 6.12 as well: ours on both guests (about 4.5 minutes), and ours
# against the distribution's (about 4 minutes).  The latter once failed
# to reconnect after rds_rdma's link_dropped: the cut used to add and
# delete a qdisc under traffic, which kills rxe's GSI QP on 6.12
# (lib_faults.sh, netem_arm); the cuts now change a netem's loss instead.
REMOTE_PAIRINGS_6_12="ours,ours ours,distro"

# The fewest results each guest run may report (vm-run.sh's lines: every
# case of every program, skips included, and the two about the guest
# itself).  Runs not listed must report at least one.
# rds_ipv6 adds 15 results to a one-guest run, 8 per guest to a two-guest
# run; rds_examples.sh's IPv6 run 3 per guest where both run ours (it is
# one skip elsewhere).
declare -A MIN_RESULTS=(
	[ours-6.1]=161
	[distro-6.1]=161
	[ours-6.12]=161
	[distro-6.12]=161
	[remote-distro-distro-6.1]=221
	[remote-ours-ours-6.1]=279
	[remote-ours-distro-6.1]=225
	[remote-distro-ours-6.1]=225
	[remote-ours-ours-credits-6.1]=279
	[remote-ours-distro-credits-6.1]=225
	[remote-ours-ours-6.12]=279
	[remote-ours-distro-6.12]=225
	# tools/testing/dkms-check.sh, its whole plan: 1 + 2 x 10 + 2
	[dkms]=23
)

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
logs=$top/build/check
rm -rf "$logs"
mkdir -p "$logs"

pass=0
fail=0
skip=0

# Every failure again at the end, right before the totals: a CI summary
# that keeps only the head and the tail of this output still shows them.
recap=$logs/recap.txt
: > "$recap"

# count_ok LINE: an "ok" result passed, or was skipped.
count_ok() {
	if [[ $1 =~ \#[[:space:]]*(SKIP|skip) ]]; then
		skip=$((skip + 1))
	else
		pass=$((pass + 1))
	fi
}

result() {	# result STATUS DESCRIPTION [LOG]
	if [ "$1" -eq 0 ]; then
		echo "ok - $2"
		pass=$((pass + 1))
	else
		echo "not ok - $2" | tee -a "$recap"
		fail=$((fail + 1))
		[ -n "${3:-}" ] && sed 's/^/#   /' "$3" | tail -n 40
		[ -n "${3:-}" ] && sed 's/^/#   /' "$3" | tail -n 3 >> "$recap"
	fi
}

newest_headers() {
	ls -d /usr/src/linux-headers-"$1".*-amd64 2>/dev/null | grep -v -- -rt- |
		sort -V | tail -n 1
}

tools/testing/install-deps.sh > "$logs/deps.log" 2>&1
result $? "dependencies installed" "$logs/deps.log"

declare -A kdir
for series in 6.1 6.12; do
	kdir[$series]=$(newest_headers "$series")
done

# 1 and 2: W=1 builds, then sparse over every file (C=2 checks all files
# whether or not they are rebuilt).
for series in 6.1 6.12; do
	log=$logs/build-$series.log
	if [ -z "${kdir[$series]}" ]; then
		echo "no $series headers installed" > "$log"
		result 1 "build for $series with W=1, no warnings" "$log"
		continue
	fi
	tools/testing/build-modules.sh "${kdir[$series]}" W=1 > "$log" 2>&1
	st=$?
	grep -E 'warning:|error:' "$log" > "$log.bad"
	[ -s "$log.bad" ] && st=1
	result $st "build for $(basename "${kdir[$series]}") with W=1, no warnings" "$log"

	log=$logs/sparse-$series.log
	tools/testing/build-modules.sh "${kdir[$series]}" C=2 > "$log" 2>&1
	st=$?
	grep -E 'warning:|error:' "$log" | grep -v 'Skipping BTF' > "$log.bad"
	[ -s "$log.bad" ] && st=1
	result $st "sparse (C=2) clean for $series" "$log.bad"
done

# 2b: the modules' files only call down, by the symbols their objects use
# (tools/testing/layers.py, on the 6.1 build).
log=$logs/layers.log
objdir=$(tail -n 1 "$logs/build-6.1.log")
tools/testing/layers.py "$objdir" > "$log" 2>&1
result $? "the modules' files only call down: $(tail -n 1 "$log")" "$log"

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

# 4: selftests build, and the ABI check, which needs no module.
st_dir=tools/testing/selftests/net/rds
log=$logs/selftests-build.log
make -C "$st_dir" > "$log" 2>&1 && make -C tools/testing/demo >> "$log" 2>&1
result $? "selftests and demo build with -Werror" "$log"
log=$logs/tools-build.log
make -C tools/rds-zc-bench -B > "$log" 2>&1 && tools/rds-zc-bench/rds-zc-bench --help >> "$log" 2>&1
result $? "rds-zc-bench builds with -Werror and answers --help" "$log"
log=$logs/info-build.log
make -C tools/rds-zc-info -B > "$log" 2>&1 && tools/rds-zc-info/rds-zc-info --help >> "$log" 2>&1
result $? "rds-zc-info builds with -Werror and answers --help" "$log"
log=$logs/examples-build.log
make -C tools/rds-zc-examples -B > "$log" 2>&1
result $? "the user guide's examples build with -Werror" "$log"
log=$logs/man-page.log
groff -man -Tutf8 -ww -z Documentation/man/rds-rdma.7 > "$log" 2>&1 &&
	! [ -s "$log" ]
result $? "rds-rdma(7) renders without a warning" "$log"

# run_tap PREFIX COMMAND...: count a TAP stream's results, at least
# MIN_RESULTS[PREFIX] of them (default 1).  A failure is preceded by the
# diagnostics ("#" lines) printed since the result before it, 40 at most.
run_tap() {
	local line log=$logs/$1.log min=${MIN_RESULTS[$1]:-1}
	"${@:2}" > "$log" 2>&1
	local st=$?
	local n=0 ctx=() c from
	while IFS= read -r line; do
		case $line in
		"ok "*) echo "ok - $1: ${line#ok }"; count_ok "$line"; n=$((n + 1)); ctx=() ;;
		"not ok "*)
			from=$((${#ctx[@]} > 40 ? ${#ctx[@]} - 40 : 0))
			for c in "${ctx[@]:from}"; do
				echo "# $1: $c"
			done
			echo "not ok - $1: ${line#not ok }" | tee -a "$recap"
			fail=$((fail + 1)); n=$((n + 1)); ctx=() ;;
		"#"*) ctx+=("${line#\# }") ;;
		esac
	done < "$log"
	if [ "$st" -ne 0 ] && ! grep -q '^not ok' "$log"; then
		result 1 "$1 exited with status $st" "$log"
	elif [ "$n" -eq 0 ]; then
		result 1 "$1 reported no result" "$log"
	elif [ "$n" -lt "$min" ]; then
		result 1 "$1: $n results, fewer than the $min expected" "$log"
	fi
}

run_tap host-abi "$st_dir/abi_check"
run_tap bench tools/testing/vm/selftest.sh
run_tap reliability-parser tools/testing/reliability.sh --self-test

# 5: the selftests in guests.
run_vm() {	# run_vm NAME GUEST_SCRIPT [vm-run.sh options] [-- script args]
	local name=$1 log=$logs/$1.log line script=$st_dir/$2 opts=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	tools/testing/vm/vm-run.sh "${opts[@]}" -- "$script" "$@" > "$log" 2>&1
	local st=$? n=0 min=${MIN_RESULTS[$name]:-1} why=0 rwhy=0
	# vm-run.sh's own failures ("kernel log clean") are followed by
	# "#   " lines that say why (the offending kernel lines): keep 40.
	while IFS= read -r line; do
		case $line in
		"ok - "*) echo "ok - $name: ${line#ok - }"; count_ok "$line"; n=$((n + 1)); why=0; rwhy=0 ;;
		"not ok - "*) echo "not ok - $name: ${line#not ok - }" | tee -a "$recap"
			fail=$((fail + 1)); n=$((n + 1)); why=40; rwhy=2 ;;
		"#   "*)
			[ "$why" -gt 0 ] && echo "# $name: ${line#\#   }" && why=$((why - 1))
			[ "$rwhy" -gt 0 ] && echo "# $name: ${line#\#   }" >> "$recap" && rwhy=$((rwhy - 1))
			;;
		*) why=0; rwhy=0 ;;
		esac
	done < "$log"
	[ "$n" -ge "$min" ] ||
		result 1 "$name: $n results, fewer than the $min expected" "$log"
	grep -q '^[0-9]* passed, [0-9]* failed$' "$log" ||
		result 1 "$name: the bench printed no summary (status $st)" "$log"
	[ "$st" -eq 0 ] || failure_context "$name" "$log"
	grep '^# vm-run: wall time' "$log" | sed "s/^# vm-run:/# $name:/"
}

# What the guests said around their failures, so that a CI log tells why:
# for each "not ok" of a guest's script, the 8 lines before it and the
# diagnostics right after it (rds_faults.sh's state dump), 200 lines at
# most per guest.
failure_context() {	# failure_context NAME VM_RUN_LOG
	local res out k

	res=$(sed -n 's/^# vm-run: results in //p' "$2" | head -n 1)
	[ -d "$res" ] || return 0
	for out in "$res"/guest*/output.txt; do
		[ -f "$out" ] || continue
		k=$(basename "$(dirname "$out")")
		awk -v p="# $1 $k: " '
			/^not ok/ {
				for (i = NR - 8; i < NR; i++)
					if (i in last) print p last[i]
				print p $0; after = 80; next
			}
			after > 0 && /^#/ { print p $0; after--; next }
			{ after = 0 }
			{ last[NR] = $0; delete last[NR - 8] }
		' "$out" | head -n 200
	done
}

if [ "${CHECK_GUESTS:-1}" != 0 ]; then
	run_vm ours-6.1 run_guest.sh --kernel 6.1 --guests 1 --modules ours
	run_vm distro-6.1 run_guest.sh --kernel 6.1 --guests 1 --modules distro
	run_vm ours-6.12 run_guest.sh --kernel 6.12 --guests 1 --modules ours
	run_vm distro-6.12 run_guest.sh --kernel 6.12 --guests 1 --modules distro
	# 6: DKMS, one guest at a time.
	run_tap dkms tools/testing/dkms-check.sh
	grep '^# dkms-check: wall time' "$logs/dkms.log" | sed 's/^# dkms-check:/# dkms:/'
	for pairing in ${CHECK_REMOTE_PAIRINGS:-$REMOTE_PAIRINGS}; do
		args=()
		case $pairing in
		*:credits) args=(--credits "$CREDITS_RING") ;;
		esac
		name=${pairing/,/-}
		run_vm "remote-${name/:/-}-6.1" run_remote.sh --kernel 6.1 \
			--guests 2 --modules "${pairing%:*}" --nic e1000 \
			--timeout 600 \
			-- "${args[@]}"
	done
	# 6.12's guests are slower: about 510 s before rds_storm.sh,
	# which adds about 120 s (its lossy case 20 s of that).
	for pairing in ${CHECK_REMOTE_PAIRINGS_6_12-$REMOTE_PAIRINGS_6_12}; do
		run_vm "remote-${pairing/,/-}-6.12" run_remote.sh --kernel 6.12 \
			--guests 2 --modules "$pairing" --nic e1000 \
			--timeout 900
	done
fi

if [ -s "$recap" ]; then
	echo "# the failures again (their diagnostics are above):"
	head -n 24 "$recap" | sed 's/^/#   /'
	n=$(wc -l < "$recap")
	[ "$n" -le 24 ] || echo "#   ... and $((n - 24)) more lines in $recap"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
