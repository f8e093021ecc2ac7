#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# profile.sh - "make profile": count the guest instructions one operation
# costs, by class of code (RDS modules, RDMA stack, rxe, the rest of the
# kernel, user space), on the client and on the server, with our modules
# and with the distribution's, on the qemu bench (two 6.1 guests linked by
# soft-RoCE).  Deterministic where "make bench" is not: instructions do
# not depend on how busy the host is.
#
# Usage: tools/testing/bench/profile.sh [--ops N1,N2] [--reps N]
#		[--warmup N] [--points LIST] [--no-verbs] [--link hub|direct]
#		[--kernel SERIES] [--results DIR]
#
#   --ops N1,N2      operations of the two runs of each repetition
#                    (default 400,2000): a figure per operation is the
#                    difference of the two windows over N2 - N1, which
#                    cancels what does not grow with the operations
#   --reps N         repetitions of each point and module set (default 2):
#                    their spread is the measurement's noise
#   --warmup N       operations of the uncounted run before the first
#                    repetition of each point and module set (default
#                    N1 + N2): the distribution's MR pool grows by one MR
#                    a MAP cycle over its first 2,000 cycles, which made
#                    its first repetition differ from the second
#   --points LIST    rtt (64 B datagram round trip), map4k, read4k,
#                    map64k, read64k (4 or 64 KiB RDMA WRITE or READ by
#                    MAP, 1 in flight), map4k16, read4k16 (16 in flight),
#                    dgram64k, dgram1m (64 KiB or 1 MiB datagrams, one
#                    sender), dgram64kzc, dgram1mzc (the same with
#                    MSG_ZEROCOPY; ours only), tcprtt (the 64 B round
#                    trip over the TCP transport), tcp64, tcp4k, tcp64k,
#                    tcp1m (64 B to 1 MiB datagrams over the TCP
#                    transport, one sender; the distribution's rds_tcp
#                    against rds_zc_tcp: a TCP stream's batching makes
#                    it a timing, no more steady than wall time), tcp64kzc,
#                    tcp1mzc (the same with MSG_ZEROCOPY, both module
#                    sets: the distribution has it over TCP), getmr
#                    (RDS_GET_MR + RDS_FREE_MR of 4 KiB); default
#                    rtt,map4k; "all" for every one.  The datagram
#                    points are also reported in instructions per byte
#   --no-verbs       leave out the raw-verbs floor (verbs-floor doing
#                    the frames of each point that has some)
#   --link hub|direct  the guests' Ethernet: hub (default), UDP through
#                    udp-hub.py (vm-run.sh --hub); direct, vm-run.sh's
#                    own two-guest link (a unix stream socket)
#   --kernel SERIES  the guests' kernel (default 6.1)
#   --results DIR    results folder (default build/profile/TIMESTAMP)
#
# One vm-run.sh boot of two guests, qemu loading the TCG plugin
# tools/testing/bench/insn-profile/insn-profile.so (it counts the
# instructions of every translation block inside windows the guests open
# and close with insn-mark, and writes them to RESULTS/insn-K.txt); the
# guests run tools/testing/bench/bench-guest.sh profile, ours first, then
# they swap to the distribution's modules, then run the raw-verbs floor.
# Then
# tools/testing/bench/profile-report.py attributes the blocks to the
# guests' symbols and prints the table (RESULTS/profile.txt, .csv).  See
# Documentation/networking/rds_zc-bench.rst, "Counting instructions".
# Not part of "make check".  Exit status 0 when the table could be made.

set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../../.." && pwd)

ops=400,2000
reps=2
warmup=
points=rtt,map4k
kernel=6.1
link=hub
out=
sets=(ours distro verbs)
all_points=rtt,map4k,read4k,map64k,read64k,map4k16,read4k16,dgram64k,dgram1m,dgram64kzc,dgram1mzc,tcprtt,tcp64,tcp4k,tcp64k,tcp1m,tcp64kzc,tcp1mzc,getmr

usage() {
	awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--ops) ops=${2:?}; shift 2 ;;
	--reps) reps=${2:?}; shift 2 ;;
	--warmup) warmup=${2:?}; shift 2 ;;
	--points) points=${2:?}; shift 2 ;;
	--no-verbs) sets=(ours distro); shift ;;
	--link) link=${2:?}; shift 2 ;;
	--kernel) kernel=${2:?}; shift 2 ;;
	--results) out=${2:?}; shift 2 ;;
	-h|--help) usage ;;
	*) echo "profile: unexpected argument '$1'" >&2; usage ;;
	esac
done
[[ $ops =~ ^([1-9][0-9]*),([1-9][0-9]*)$ ]] && [ "${BASH_REMATCH[1]}" -lt "${BASH_REMATCH[2]}" ] ||
	{ echo "profile: --ops takes N1,N2 with N1 < N2" >&2; exit 2; }
[ -n "$warmup" ] || warmup=$((BASH_REMATCH[1] + BASH_REMATCH[2]))
[[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "profile: --reps takes a number >= 1" >&2; exit 2; }
[[ $warmup =~ ^[1-9][0-9]*$ ]] || { echo "profile: --warmup takes a number >= 1" >&2; exit 2; }
case $link in
hub) link_opts=(--hub) ;;
direct) link_opts=() ;;
*) echo "profile: --link takes hub or direct" >&2; exit 2 ;;
esac
[ "$points" != all ] || points=$all_points
pt="(${all_points//,/|})"
[[ $points =~ ^$pt(,$pt)*$ ]] ||
	{ echo "profile: --points takes some of $all_points, comma-separated, or all" >&2; exit 2; }

say() {
	echo "profile: $*"
}

for tool in qemu-system-x86_64 python3 make; do
	command -v "$tool" > /dev/null || { say "$tool not found: run 'make deps'"; exit 1; }
done

kdir=$(ls -d /usr/src/linux-headers-"$kernel".*-amd64 2>/dev/null | grep -v -- -rt- | sort -V | tail -n 1)
[ -n "$kdir" ] || { say "no $kernel headers: run 'make deps'"; exit 1; }
say "building the modules for $(basename "$kdir"), rds-zc-bench and the plugin"
mkdir -p "$top/build/profile"
log=$top/build/profile/build.log
"$top/tools/testing/build-modules.sh" "$kdir" > "$log" 2>&1 ||
	{ say "building the modules failed: see $log"; exit 1; }
make -s -C "$top/tools/rds-zc-bench" >> "$log" 2>&1 ||
	{ say "building rds-zc-bench failed: see $log"; exit 1; }
make -s -C "$here/insn-profile" >> "$log" 2>&1 ||
	{ say "building insn-profile failed: see $log"; exit 1; }

[ -n "$out" ] || out=$top/build/profile/$(date +%Y%m%d-%H%M%S)
out=$(realpath -m "$out")
if [ -d "$out" ] && [ -n "$(ls -A "$out")" ]; then
	say "results folder $out is not empty"
	exit 1
fi
case $out in
*,*|*:*|*@*) say "results folder path must not contain ',', ':' or '@'"; exit 1 ;;
esac
mkdir -p "$out"
{
	echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "commit=$(git -C "$top" describe --always --dirty 2>/dev/null || echo unknown)"
	echo "ops=$ops"
	echo "reps=$reps"
	echo "warmup=$warmup"
	echo "points=$points"
	echo "sets=${sets[*]}"
	echo "link=$link"
	echo "host_load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/env.txt"

# About a minute per run of 2000 round trips on an idle host, two boots'
# worth of margin; the warm-up counts as one repetition more.
npoints=$(tr ',' '\n' <<< "$points" | wc -l)
limit=$((300 + npoints * (reps + 1) * 3 * 240))
say "vm-run.sh, time limit ${limit}s; log in $out/vm.log"
start=$(date +%s)
VM_QEMU_OPTS="-plugin $here/insn-profile/insn-profile.so,out=$out/insn-@GUEST@.txt" \
	"$top/tools/testing/vm/vm-run.sh" --kernel "$kernel" --guests 2 \
	--modules ours "${link_opts[@]}" --timeout "$limit" --results "$out/vm" -- \
	"$here/bench-guest.sh" profile "$ops,$warmup" "$reps" "$points" "${sets[@]}" \
	> "$out/vm.log" 2>&1
st=$?
grep -E '^(not ok|# vm-run: (kernel|wall))|passed, ' "$out/vm.log" | sed 's/^/profile: /'
{
	echo "kernel=$(sed -n 's/^# vm-run: kernel \([^,]*\),.*/\1/p' "$out/vm.log" | head -n 1)"
	echo "vm_run_status=$st"
	echo "host_load_end=$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "wall_secs=$(($(date +%s) - start))"
} >> "$out/env.txt"

python3 "$here/profile-report.py" "$out"
