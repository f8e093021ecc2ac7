#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: every check the project promises, each counted as a test.
#
# First, one after another (the guests need what they make):
#   - the Debian packages (install-deps.sh);
#   - the modules for Debian's 6.1 and 6.12 with W=1, side by side: no
#     warning;
#   - the selftests, the demo, tools/rds-zc-bench, tools/rds-zc-info and
#     the examples, with -Werror;
#   - each kernel's initramfs (vm-run.sh --prepare).
# Then the lanes, side by side as far as the host's CPUs allow (LANES
# below, longest first):
#   - static: sparse, the layering, checkpatch, the manual page and the
#     host-side TAP programs (tools/testing/check-static.sh);
#   - the selftests in one guest (run_guest.sh): our modules on 6.1 and
#     6.12, the distribution's on 6.1 (the reference: the same tests
#     passing with both modules shows that they test RDS, not our
#     quirks; its 6.12 modules meet ours in the 6.12 ours,distro lane);
#     with ours also the kernel's own RDS selftest (kernel_selftest.sh,
#     clean on 6.1, lossy on 6.12: hence the longer --timeout of those
#     two lanes);
#   - DKMS (tools/testing/dkms-check.sh --kernel 6.1): dkms.conf builds
#     and installs the modules into scratch trees, and a guest booting
#     that kernel loads and uses what DKMS built.  Only 6.1: nothing of
#     what dkms.conf does changes with the kernel, and the W=1 build
#     above builds for 6.12 (make dkms-check does both);
#   - the two-guest selftests (run_remote.sh) for each pairing of module
#     sets on 6.1 and 6.12, each with the programs whose outcome depends
#     on that pairing (see LANES).
#
# Prints one TAP-style line per test, each lane's results when it ends,
# and at the end each lane's wall time, the total, and
# "N passed, M failed, K skipped": a result with a SKIP directive counts
# as skipped, never as passed.  Each lane must report at least the
# number of results MIN_RESULTS gives it, so a case that vanished or a
# program that stopped early fails.  Exits non-zero if anything failed.
# Logs are kept in build/check/.
#
# Environment: CHECK_GUESTS=0 runs the static lane only (no guest);
# CHECK_LANES="NAME ..." runs only the lanes named; CHECK_SLOTS, how many
# guest CPUs may run at once (default twice the host's CPUs: a guest under
# TCG is busy about 40 % of the time in these tests; a two-guest lane
# takes 2 slots, any other lane 1).
set -uo pipefail

# The lanes: NAME SLOTS KIND ARGS..., the static checks first (the host's
# CPUs alone), then the longest first (as measured at 4b52b0b: the
# two-guest lanes 744, 604, 353, 303, 254 and 204 s), so that the short
# ones fill the gaps at the end.  KIND vm is a vm-run.sh run of a guest
# script, tap a TAP program on the host, static check-static.sh.
#
# Which programs each two-guest pairing runs (run_remote.sh --only), and
# why: each lane runs what its configuration (the kernel, which module
# each node runs, the receive rings) can change, and no more (make
# check's CI time).
# - ours,ours on 6.1 runs everything.
# - ours,ours on 6.12 runs the programs whose outcome the kernel can
#   change: what goes through ib_core, rxe, rdma_cm and TCP (data, RDMA,
#   IPv6, the TCP peer, faults, link storms, the connect race) and the
#   forged frames of rds_hostile (rxe brings them to node 1's module).
#   Not rds_examples, rds_info_tool (user-space programs over the
#   socket calls and RDS_INFO, which the kernel does not change) nor
#   rds_fuzz (the one-guest lanes fuzz each kernel, half of the seeds
#   on each: run_guest.sh).
#   With --credits 32: our receive rings 32 buffers, so that senders run
#   out of credits all the time; rds_remote's flow_control case asserts
#   both sides waited.  6.1 keeps the default rings: the two kernels
#   cover both.
# - distro,distro (6.1) is the reference that proves the tests
#   themselves: everything but rds_storm and rds_examples, which need our
#   modules on both nodes (the distribution's RDS does not come back from
#   a link that goes down over rxe; the user guide's examples use what
#   it lacks), and rds_fuzz, whose errno table the distribution's
#   one-guest lane and ours,distro prove.
# - ours,distro (6.1): our node 1 against the distribution's node 2:
#   everything but rds_storm, rds_examples and rds_hostile: its forged
#   frames go to node 1, ours, as in ours,ours (the module of node 2
#   plays no part).  On 6.12 it leaves rds_fuzz and rds_faults out too
#   (a mixed pair's faults run on 6.1 in both roles, ours' recovery on
#   6.12 in ours,ours), and runs with --credits 32: the distribution's
#   net.rds.ib.flow_control on, so that it spends the credits we grant
#   and grants its own (the RDMA and its ACK behind a credit stall).
# - distro,ours (6.1) swaps the roles: the programs where node 1 and node
#   2 do different things with the modules they run: rds_remote,
#   rds_ipv6, rds_tcp_peer (node 1, the lower address, makes the TCP
#   connection), rds_faults (node 1 cuts the link, node 2 reloads), the
#   connect race rule (the lower address wins) and rds_info_tool.  Not
#   rds_rdma (every case already runs with each node as the owner of the
#   memory in ours,distro), not rds_hostile (its victim would be the
#   distribution's node 1), not rds_fuzz (ours,distro fuzzes both ways).
REMOTE_ALL=rds_remote,rds_rdma,rds_ipv6,rds_tcp_peer,rds_faults,rds_storm,race_rule,rds_hostile,rds_examples,rds_info_tool,rds_fuzz
REMOTE_KERNEL=rds_remote,rds_rdma,rds_ipv6,rds_tcp_peer,rds_faults,rds_storm,race_rule,rds_hostile
REMOTE_REFERENCE=rds_remote,rds_rdma,rds_ipv6,rds_tcp_peer,rds_faults,race_rule,rds_hostile,rds_info_tool
REMOTE_MIXED_OURS=rds_remote,rds_rdma,rds_ipv6,rds_tcp_peer,rds_faults,race_rule,rds_info_tool,rds_fuzz
REMOTE_MIXED_6_12=rds_remote,rds_rdma,rds_ipv6,rds_tcp_peer,race_rule,rds_info_tool
REMOTE_ROLES=rds_remote,rds_ipv6,rds_tcp_peer,rds_faults,race_rule,rds_info_tool
CREDITS_RING=32
remote() {	# remote KERNEL PAIRING PROGRAMS [run_remote.sh args]
	echo "vm run_remote.sh --kernel $1 --guests 2 --modules $2 --nic e1000 --timeout 900 -- --only $3 ${*:4}"
}
LANES=(
	"static 1 static"
	"ours-6.12 1 vm run_guest.sh --kernel 6.12 --guests 1 --modules ours --timeout 1200"
	"ours-6.1 1 vm run_guest.sh --kernel 6.1 --guests 1 --modules ours --timeout 1200"
	"remote-ours-ours-6.1 2 $(remote 6.1 ours,ours $REMOTE_ALL)"
	"remote-ours-ours-credits-6.12 2 $(remote 6.12 ours,ours $REMOTE_KERNEL --credits $CREDITS_RING)"
	"remote-ours-distro-6.1 2 $(remote 6.1 ours,distro $REMOTE_MIXED_OURS)"
	"remote-distro-distro-6.1 2 $(remote 6.1 distro,distro $REMOTE_REFERENCE)"
	"remote-distro-ours-6.1 2 $(remote 6.1 distro,ours $REMOTE_ROLES)"
	"remote-ours-distro-credits-6.12 2 $(remote 6.12 ours,distro $REMOTE_MIXED_6_12 --credits $CREDITS_RING)"
	"dkms 1 tap tools/testing/dkms-check.sh --kernel 6.1"
	"distro-6.1 1 vm run_guest.sh --kernel 6.1 --guests 1 --modules distro"
)

# The results each lane must report at least: its whole plan at the last
# change of a program's cases (for a guest run, vm-run.sh's lines: every
# case of every program, skips included, and the two about each guest
# itself; for the static lane its checks and the host programs' results).
# A case that vanished, or a program that stopped early, fails the lane;
# a change that adds or removes cases updates its lanes here.  A lane not
# listed must report at least one.
declare -A MIN_RESULTS=(
	[static]=110
	[ours-6.1]=283
	[ours-6.12]=283
	[distro-6.1]=145
	[remote-ours-ours-6.1]=360
	[remote-ours-ours-credits-6.12]=325
	[remote-distro-distro-6.1]=275
	[remote-ours-distro-6.1]=223
	[remote-ours-distro-credits-6.12]=192
	[remote-distro-ours-6.1]=126
	# tools/testing/dkms-check.sh --kernel 6.1: 1 + 10 + 2
	[dkms]=13
)

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
logs=$top/build/check
rm -rf "$logs"
mkdir -p "$logs"
st_dir=tools/testing/selftests/net/rds
t_start=$SECONDS

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

# The host's programs, which the guests run (the selftests, the demo,
# the tools, the examples), build beside the modules: one make at a
# time, as a third job on the two CPUs, which the modules' two builds
# leave idle in their serial parts.  Each writes its status to LOG.st.
build_selftests() { make -C "$st_dir" && make -C tools/testing/demo; }
build_tools() {
	make -C tools/rds-zc-bench -B && tools/rds-zc-bench/rds-zc-bench --help &&
		make -C tools/testing/bench/insn-profile -B
}
build_info() { make -C tools/rds-zc-info -B && tools/rds-zc-info/rds-zc-info --help; }
build_examples() { make -C tools/rds-zc-examples -B; }
host_builds=(selftests tools info examples)
(
	for b in "${host_builds[@]}"; do
		"build_$b" > "$logs/$b-build.log" 2>&1
		echo $? > "$logs/$b-build.log.st"
	done
) &
host_pid=$!

# The W=1 builds, both kernels at once.
declare -A build_pid
for series in 6.1 6.12; do
	log=$logs/build-$series.log
	kdir=$(newest_headers "$series")
	if [ -z "$kdir" ]; then
		echo "no $series headers installed" > "$log"
		build_pid[$series]=
		continue
	fi
	echo "$kdir" > "$log.kdir"
	tools/testing/build-modules.sh "$kdir" W=1 > "$log" 2>&1 &
	build_pid[$series]=$!
done
for series in 6.1 6.12; do
	log=$logs/build-$series.log
	st=1
	[ -z "${build_pid[$series]}" ] || { wait "${build_pid[$series]}"; st=$?; }
	grep -E 'warning:|error:' "$log" > "$log.bad"
	[ -s "$log.bad" ] && st=1
	kdir=$(cat "$log.kdir" 2>/dev/null)
	result $st "build for $(basename "${kdir:-$series}") with W=1, no warnings" "$log"
done

wait "$host_pid"
declare -A host_build_what=(
	[selftests]="selftests and demo build with -Werror"
	[tools]="rds-zc-bench and make profile's qemu plugin build with -Werror; rds-zc-bench answers --help"
	[info]="rds-zc-info builds with -Werror and answers --help"
	[examples]="the user guide's examples build with -Werror"
)
for b in "${host_builds[@]}"; do
	log=$logs/$b-build.log
	result "$(cat "$log.st" 2>/dev/null || echo 1)" "${host_build_what[$b]}" "$log"
done

# Each kernel's initramfs, once, before runs side by side would race to
# build it.  The kernel's own RDS selftest unpacked from Debian's kernel
# source on the host (seconds), where make deps has not done it: a guest
# would decompress the whole tarball under TCG (kernel_selftest.sh).
if [ "${CHECK_GUESTS:-1}" != 0 ]; then
	"$st_dir/kernel_selftest.sh" --unpack > "$logs/kselftest-unpack.log" 2>&1
	log=$logs/initramfs.log
	: > "$log"
	st=0
	for series in 6.1 6.12; do
		tools/testing/vm/vm-run.sh --prepare --kernel "$series" \
			--modules none >> "$log" 2>&1 || st=1
	done
	result $st "the guests' initramfs built" "$log"
fi

# --- Reading a lane's output --------------------------------------------

# skip_ok NAME LINE: may lane NAME skip the result LINE?  A skip must name
# a limitation of the distribution's module or of the kernel, in its
# reason: which module runs decides it, never what happened.  In a lane
# that runs none of the distribution's modules, only the kernel's.  Our
# module never skips a case that its feature list promises: a skip of any
# other kind fails the run.
skip_ok() {
	local reason=${2,,}

	reason=${reason#*\# skip}
	case ${lane_modules[$1]:-none} in
	*distro*) [[ $reason == *distribution* || $reason == *kernel* ]] ;;
	*) [[ $reason == *kernel* ]] ;;
	esac
}

# count_result NAME LINE: count an "ok" result, or fail a skip that
# skip_ok() refuses.
count_result() {
	if [[ $2 =~ \#[[:space:]]*(SKIP|skip) ]] && ! skip_ok "$1" "$2"; then
		echo "not ok - $1: ${2#ok } (a skip that names no limitation of the distribution's module or of the kernel)" | tee -a "$recap"
		fail=$((fail + 1))
		return
	fi
	echo "ok - $1: ${2#ok }"
	count_ok "$2"
}

# parse_lines NAME LOG: count a lane's "ok - " and "not ok - " lines (what
# vm-run.sh and check-static.sh print); a failure is followed by the
# "#   " lines that say why (the offending kernel lines, a program's
# diagnostics): 40 kept here, 2 in the recap.  Sets n to the count.
parse_lines() {
	local name=$1 line why=0 rwhy=0

	n=0
	while IFS= read -r line; do
		case $line in
		"ok - "*) count_result "$name" "ok ${line#ok - }"; n=$((n + 1)); why=0; rwhy=0 ;;
		"not ok - "*) echo "not ok - $name: ${line#not ok - }" | tee -a "$recap"
			fail=$((fail + 1)); n=$((n + 1)); why=40; rwhy=2 ;;
		"#   "*)
			[ "$why" -gt 0 ] && echo "# $name: ${line#\#   }" && why=$((why - 1))
			[ "$rwhy" -gt 0 ] && echo "# $name: ${line#\#   }" >> "$recap" && rwhy=$((rwhy - 1))
			;;
		*) why=0; rwhy=0 ;;
		esac
	done < "$2"
}

# parse_tap NAME LOG: count a TAP stream's results ("ok N - ...").  A
# failure is preceded by the diagnostics ("#" lines) printed since the
# result before it, 40 at most.  Sets n to the count.
parse_tap() {
	local name=$1 line ctx=() c from

	n=0
	while IFS= read -r line; do
		case $line in
		"ok "*) count_result "$name" "$line"; n=$((n + 1)); ctx=() ;;
		"not ok "*)
			from=$((${#ctx[@]} > 40 ? ${#ctx[@]} - 40 : 0))
			for c in "${ctx[@]:from}"; do
				echo "# $name: $c"
			done
			echo "not ok - $name: ${line#not ok }" | tee -a "$recap"
			fail=$((fail + 1)); n=$((n + 1)); ctx=() ;;
		"#"*) ctx+=("${line#\# }") ;;
		esac
	done < "$2"
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

# finish_lane NAME KIND STATUS: count what a lane printed, and check it
# reported enough.
finish_lane() {
	local name=$1 kind=$2 st=$3 log=$logs/$1.log min=${MIN_RESULTS[$1]:-1}

	echo "# lane $name ended after ${lane_wall[$name]} s (status $st)"
	case $kind in
	tap) parse_tap "$name" "$log" ;;
	*) parse_lines "$name" "$log" ;;
	esac
	if [ "$kind" = vm ]; then
		grep -q '^[0-9]* passed, [0-9]* failed$' "$log" ||
			result 1 "$name: the bench printed no summary (status $st)" "$log"
		[ "$st" -eq 0 ] || failure_context "$name" "$log"
	elif [ "$st" -ne 0 ] && ! grep -q '^not ok' "$log"; then
		result 1 "$name exited with status $st" "$log"
	fi
	if [ "$n" -eq 0 ]; then
		result 1 "$name reported no result" "$log"
	elif [ "$n" -lt "$min" ]; then
		result 1 "$name: $n results, fewer than the $min expected" "$log"
	fi
}

# run_lane NAME KIND ARGS...: the lane's command, its output into its log.
run_lane() {
	local name=$1 kind=$2 script opts=()

	shift 2
	case $kind in
	static) tools/testing/check-static.sh "$logs" ;;
	tap) "$@" ;;
	vm)
		script=$st_dir/$1
		shift
		while [ $# -gt 0 ] && [ "$1" != -- ]; do
			opts+=("$1")
			shift
		done
		[ $# -gt 0 ] && shift
		tools/testing/vm/vm-run.sh "${opts[@]}" -- "$script" "$@"
		;;
	esac > "$logs/$name.log" 2>&1
}

# --- The lanes, side by side ----------------------------------------------
slots=${CHECK_SLOTS:-$((2 * $(nproc)))}
declare -A lane_wall=() lane_start=() lane_kind=() lane_slots=() lane_of_pid=()
declare -A lane_modules=([dkms]=ours)
queue=()
for lane in "${LANES[@]}"; do
	read -r name _ kind _ <<< "$lane"
	[[ $lane =~ --modules\ ([^ ]*) ]] && lane_modules[$name]=${BASH_REMATCH[1]}
	if [ -n "${CHECK_LANES:-}" ]; then
		[[ " $CHECK_LANES " == *" $name "* ]] || continue
	elif [ "${CHECK_GUESTS:-1}" = 0 ]; then
		[ "$kind" = static ] || continue
	fi
	queue+=("$lane")
done

# How busy the host's CPUs were while the lanes ran (idle and iowait
# against the rest, /proc/stat): near 100 % the lanes wait for CPUs, and
# more slots would not make make check shorter.
cpu_ticks() {	# prints "busy total" in jiffies since boot
	awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i;
		print t - $5 - $6, t }' /proc/stat
}
read -r cpu_busy0 cpu_total0 <<< "$(cpu_ticks)"
t_lanes=$SECONDS

free=$slots
running=0
while [ ${#queue[@]} -gt 0 ] || [ "$running" -gt 0 ]; do
	# Start every queued lane that fits, in order; a lane larger than
	# all the slots starts alone.
	rest=()
	for lane in "${queue[@]}"; do
		read -r name need kind args <<< "$lane"
		if [ "$need" -le "$free" ] || [ "$running" -eq 0 ]; then
			read -r -a argv <<< "$args"
			run_lane "$name" "$kind" "${argv[@]}" &
			lane_of_pid[$!]=$name
			lane_start[$name]=$SECONDS
			lane_kind[$name]=$kind
			lane_slots[$name]=$need
			free=$((free - need))
			running=$((running + 1))
			echo "# lane $name started ($need of $slots slots)"
		else
			rest+=("$lane")
		fi
	done
	queue=("${rest[@]}")
	[ "$running" -gt 0 ] || break
	pid=
	wait -n -p pid
	st=$?
	name=${lane_of_pid[$pid]}
	lane_wall[$name]=$((SECONDS - lane_start[$name]))
	free=$((free + lane_slots[$name]))
	running=$((running - 1))
	finish_lane "$name" "${lane_kind[$name]}" "$st"
done

if [ -s "$recap" ]; then
	echo "# the failures again (their diagnostics are above):"
	head -n 24 "$recap" | sed 's/^/#   /'
	n=$(wc -l < "$recap")
	[ "$n" -le 24 ] || echo "#   ... and $((n - 24)) more lines in $recap"
fi
echo "# wall time of each lane (side by side, $slots slots):"
for lane in "${LANES[@]}"; do
	read -r name _ <<< "$lane"
	[ -z "${lane_wall[$name]:-}" ] || printf '#   %-32s %5d s\n' "$name" "${lane_wall[$name]}"
done
read -r cpu_busy1 cpu_total1 <<< "$(cpu_ticks)"
echo "# the lanes: $((SECONDS - t_lanes)) s, the host's $(nproc) CPUs busy $(( (cpu_busy1 - cpu_busy0) * 100 / (cpu_total1 - cpu_total0 + 1) )) % of it"
echo "# make check's wall time: $((SECONDS - t_start)) s"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
