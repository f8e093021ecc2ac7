#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh - "make bench": the project's RDS modules against the
# distribution's, side by side, and the raw-verbs ceiling, on the qemu
# bench (two guests booting Debian's 6.1 kernel, linked by soft-RoCE);
# RDMA between two sockets of one guest, ours and the distribution's;
# then ours alone with 10,000 live keys, and all to all on 2 to 4 guests.
#
# Usage: tools/testing/bench/bench.sh [--rounds N] [--time SECS]
#		[--kernel SERIES] [--verbs-smp LIST] [--verbs-rounds N]
#		[--no-verbs] [--no-onehost] [--no-keys] [--no-scale]
#		[--only PHASES]
#		[--points OPTIONS] [--live-keys N] [--keys-pool N]
#		[--keys-time SECS] [--scale-guests LIST] [--scale-time SECS]
#		[--scale-size BYTES] [--scale-depth N] [--results DIR]
#
#   --rounds N       rounds of each module set (default 3); each figure
#                    is reported as the median and the spread (min-max)
#   --time SECS      length of each rds-zc-bench point (default 1.5)
#   --kernel SERIES  the guests' kernel (default 6.1)
#   --verbs-smp LIST CPUs per guest of the raw-verbs phases, one boot each
#                    (default 1,2: the ceiling is the better of the two;
#                    see Documentation/networking/rds_zc-bench.rst)
#   --verbs-rounds N rounds of each raw-verbs phase (default 2)
#   --no-verbs       leave the raw-verbs phase out
#   --no-onehost     leave the one-host phase out
#   --no-keys        leave the live-keys phase out
#   --no-scale       leave the all-to-all phase out
#   --only PHASES    run only these phases, comma-separated: rds, verbs,
#                    onehost, keys, scale (e.g. --only scale)
#   --points OPTIONS rds-zc-bench client options that choose the points,
#                    in one argument (e.g. --points "--tests rdma --keys
#                    map"): a focused comparison of ours and distro; the
#                    table has those rows only.  The datagram streams with
#                    and without MSG_ZEROCOPY: --only rds --points "--tests
#                    stream,zc --dgram-sizes 64K,1M --senders 1"; the
#                    datagram points over RDS-over-TCP alone: --only rds
#                    --points "--tests tcp".  Default: the client's
#                    default tests, zc and tcp
#   --live-keys N    keys the live-keys phase holds (default 10000)
#   --keys-pool N    rds_zc_ib fmr_pool_size in that phase (default 16384)
#   --keys-time SECS length of its points (default 3); --rounds rounds
#   --scale-guests LIST  guest counts of the all-to-all phase, one boot
#                    each (default 2,3,4)
#   --scale-time SECS    length of its streams (default 4)
#   --scale-size BYTES, --scale-depth N  its RDMA WRITE cycle (default
#                    4096 bytes, 4 in flight)
#   --results DIR    results folder (default build/bench/TIMESTAMP)
#
# Phases, each one vm-run.sh boot of two guests:
#   1. rds: rds-zc-bench (tools/rds-zc-bench) in the guests, node 1 the
#      server, node 2 the client, once per round and module set, in the
#      order ours, distro, distro, ours, ours, distro, ... so that a slow
#      drift of the host's load weighs on both sets alike.  The guests swap
#      modules between runs (tools/testing/bench/bench-guest.sh); if a swap
#      fails, the runs left are made in a fresh boot per module set.  A
#      run with the TCP points ends with a plain TCP stream between the
#      same guests (iperf3): the TCP streams' ceiling, in every round.
#   2. verbs-smpN: perftest's ib_write_bw, ib_read_bw and ib_write_lat
#      over the same kind of link, with N CPUs per guest, for each N of
#      --verbs-smp.  perftest busy-polls its completion queue, which on a
#      one-CPU guest competes with rxe's own work; the ceiling of a figure
#      is the best any of these phases measured.
#   3. onehost: one guest (vm-run.sh --guests 1), --rounds rounds of
#      ours and the distribution's, alternating, the guest swapping
#      modules: the x1 RDMA WRITE cycle by MAP at 4 KiB and 64 KiB
#      between a server and a client of that guest, on 127.0.0.1 and
#      127.0.0.2 (ours: local delivery, a kernel copy) and between the
#      two ends of a veth pair with an rxe device each, both sockets
#      pinned to IB (over the device) (bench-guest.sh onehost).
#   4. keys: ours only; both guests load rds_zc_ib again with a larger
#      fmr_pool_size, then --rounds rounds of the x1 RDMA WRITE cycle by
#      MAP at 4 KiB and 64 KiB with 0 and with --live-keys keys held by
#      the client (rds-zc-bench --live-keys), alternating.
#   5. scale-gN: ours, N guests on one udp-hub segment (vm-run.sh --hub),
#      for each N of --scale-guests: every guest sets up a connection to
#      every other (timing the first round trip), samples its memory and
#      RDMA resources before and after, then streams RDMA WRITEs to every
#      other at once (bench-guest.sh scale).
# Then tools/testing/bench/bench-report.py prints the table (median
# [min-max] per figure: ours, distro, raw (verbs, or the plain TCP stream
# for the TCP streams), ours/distro, ours/raw; the TCP datagram points
# among them), the one-host, live-keys and all-to-all
# sections, and writes results.csv, table.txt, chart.png (gnuplot) and
# env.txt into the results folder.
#
# Absolute figures are emulation figures (qemu TCG on the host's CPUs); the
# ratios measured in one run are the result.  Not part of "make check".
# Exit status: 0 when the table could be made, 1 otherwise.

set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../../.." && pwd)

rounds=3
secs=1.5
kernel=6.1
verbs_smp=1,2
verbs_rounds=2
verbs=1
onehost=1
keys=1
scale=1
rds=1
only=
points=
live_keys=10000
keys_pool=16384
keys_secs=3
scale_guests=2,3,4
scale_secs=4
scale_size=4096
scale_depth=4
out=

usage() {
	awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--rounds) rounds=${2:?}; shift 2 ;;
	--time) secs=${2:?}; shift 2 ;;
	--kernel) kernel=${2:?}; shift 2 ;;
	--verbs-smp) verbs_smp=${2:?}; shift 2 ;;
	--verbs-rounds) verbs_rounds=${2:?}; shift 2 ;;
	--no-verbs) verbs=0; shift ;;
	--no-onehost) onehost=0; shift ;;
	--no-keys) keys=0; shift ;;
	--no-scale) scale=0; shift ;;
	--only) only=${2:?}; shift 2 ;;
	--live-keys) live_keys=${2:?}; shift 2 ;;
	--keys-pool) keys_pool=${2:?}; shift 2 ;;
	--keys-time) keys_secs=${2:?}; shift 2 ;;
	--scale-guests) scale_guests=${2:?}; shift 2 ;;
	--scale-time) scale_secs=${2:?}; shift 2 ;;
	--scale-size) scale_size=${2:?}; shift 2 ;;
	--scale-depth) scale_depth=${2:?}; shift 2 ;;
	--points) points=${2:?}; shift 2 ;;
	--results) out=${2:?}; shift 2 ;;
	-h|--help) usage ;;
	*) echo "bench: unexpected argument '$1'" >&2; usage ;;
	esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "bench: --rounds takes a number >= 1" >&2; exit 2; }
[[ $secs =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "bench: --time takes seconds" >&2; exit 2; }
[[ $verbs_smp =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || { echo "bench: --verbs-smp takes numbers >= 1, comma-separated" >&2; exit 2; }
[[ $verbs_rounds =~ ^[1-9][0-9]*$ ]] || { echo "bench: --verbs-rounds takes a number >= 1" >&2; exit 2; }
[[ $live_keys =~ ^[1-9][0-9]*$ ]] || { echo "bench: --live-keys takes a number >= 1" >&2; exit 2; }
[[ $keys_pool =~ ^[1-9][0-9]*$ ]] || { echo "bench: --keys-pool takes a number >= 1" >&2; exit 2; }
[[ $keys_secs =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "bench: --keys-time takes seconds" >&2; exit 2; }
[[ $scale_guests =~ ^[2-9](,[2-9])*$ ]] || { echo "bench: --scale-guests takes numbers 2 to 9, comma-separated" >&2; exit 2; }
[[ $scale_secs =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "bench: --scale-time takes seconds" >&2; exit 2; }
[[ $scale_size =~ ^[1-9][0-9]*$ ]] || { echo "bench: --scale-size takes bytes" >&2; exit 2; }
[[ $scale_depth =~ ^[1-9][0-9]*$ ]] || { echo "bench: --scale-depth takes a number >= 1" >&2; exit 2; }
if [ -n "$only" ]; then
	[[ $only =~ ^(rds|verbs|onehost|keys|scale)(,(rds|verbs|onehost|keys|scale))*$ ]] ||
		{ echo "bench: --only takes rds, verbs, onehost, keys, scale, comma-separated" >&2; exit 2; }
	rds=0 verbs=0 onehost=0 keys=0 scale=0
	[[ ,$only, == *,rds,* ]] && rds=1
	[[ ,$only, == *,verbs,* ]] && verbs=1
	[[ ,$only, == *,onehost,* ]] && onehost=1
	[[ ,$only, == *,keys,* ]] && keys=1
	[[ ,$only, == *,scale,* ]] && scale=1
fi

say() {
	echo "bench: $*"
}

for tool in qemu-system-x86_64 python3 make; do
	command -v "$tool" > /dev/null || { say "$tool not found: run 'make deps'"; exit 1; }
done
if [ "$verbs" = 1 ] && ! command -v ib_write_bw > /dev/null; then
	say "perftest (ib_write_bw) not installed: no raw-verbs phase (run 'make deps')"
	verbs=0
fi

# --- Build -------------------------------------------------------------------
kdir=$(ls -d /usr/src/linux-headers-"$kernel".*-amd64 2>/dev/null | grep -v -- -rt- | sort -V | tail -n 1)
[ -n "$kdir" ] || { say "no $kernel headers: run 'make deps'"; exit 1; }
say "building the modules for $(basename "$kdir") and rds-zc-bench"
mkdir -p "$top/build/bench"
"$top/tools/testing/build-modules.sh" "$kdir" > "$top/build/bench/build.log" 2>&1 ||
	{ say "building the modules failed: see build/bench/build.log"; exit 1; }
make -s -C "$top/tools/rds-zc-bench" >> "$top/build/bench/build.log" 2>&1 ||
	{ say "building rds-zc-bench failed: see build/bench/build.log"; exit 1; }
# only for the record of the all-to-all phase's connections
make -s -C "$top/tools/rds-zc-info" >> "$top/build/bench/build.log" 2>&1 ||
	say "building rds-zc-info failed (the all-to-all phase runs without it)"

[ -n "$out" ] || out=$top/build/bench/$(date +%Y%m%d-%H%M%S)
out=$(realpath -m "$out")
if [ -d "$out" ] && [ -n "$(ls -A "$out")" ]; then
	say "results folder $out is not empty"
	exit 1
fi
mkdir -p "$out"
start=$(date +%s)
{
	echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "commit=$(git -C "$top" describe --always --dirty 2>/dev/null || echo unknown)"
	echo "host_cpus=$(nproc)"
	echo "host_load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "rounds=$rounds"
	echo "point_secs=$secs"
	g=
	[ "$rds$verbs$keys" = 000 ] || g="2"
	[ "$onehost" = 0 ] || g+="${g:+, }1 (one host)"
	[ "$scale" = 0 ] || g+="${g:+, }$scale_guests (scale)"
	echo "guests=$g"
	echo "guest_smp=1"
	echo "guest_mem_mb=1024"
	echo "guest_nic=virtio-net"
	echo "link=soft-RoCE (rdma_rxe) over qemu netdevs (two guests: -netdev stream on a unix socket; more: -netdev socket to a UDP hub on the host's loopback)"
	echo "accel=qemu TCG"
	phases=
	for ph in rds verbs onehost keys scale; do
		[ "${!ph}" = 1 ] && phases+="${phases:+,}$ph"
	done
	echo "phases=$phases"
} > "$out/env.txt"

# The order of the runs: ours distro | distro ours | ours distro ...
order=()
for ((r = 1; r <= rounds; r++)); do
	if ((r % 2)); then order+=(ours distro); else order+=(distro ours); fi
done

# A generous bound per boot: about 4 minutes per run of ours, 3 of the
# distribution's (much of it "unsupported"), and half a minute each for
# the TCP points, more than twice what an idle host needs.
vm() {	# vm NAME TIMEOUT VM-RUN-OPTIONS... -- GUEST ARGS
	local name=$1 limit=$2 st
	shift 2
	say "phase $name: vm-run.sh $* (time limit ${limit}s); log in $out/$name.log"
	"$top/tools/testing/vm/vm-run.sh" --kernel "$kernel" --guests 2 \
		--timeout "$limit" --results "$out/$name" "$@" > "$out/$name.log" 2>&1
	st=$?
	grep -E '^(not ok|# vm-run: (kernel|wall))' "$out/$name.log" | sed "s/^/bench: $name: /"
	return $st
}

if [ "$rds" = 1 ]; then
	vm rds $((120 + rounds * 480)) --modules "${order[0]}" -- \
		"$here/bench-guest.sh" rds "$secs" --points "$points" "${order[@]}"
fi

# Runs the swaps left out: one boot per module set.
for set in ours distro; do
	[ "$rds" = 1 ] || break
	done_runs=$(grep -l '^# rds-zc-bench: ' "$out"/rds/guest2/run-*-"$set".txt 2>/dev/null | wc -l)
	missing=$((rounds - done_runs))
	[ "$missing" -gt 0 ] || continue
	say "$missing run(s) of '$set' missing after the swapping boot: one more boot for them"
	sets=()
	for ((r = 0; r < missing; r++)); do sets+=("$set"); done
	vm "rds-$set" $((120 + missing * 330)) --modules "$set" -- \
		"$here/bench-guest.sh" rds "$secs" --points "$points" "${sets[@]}"
done

if [ "$verbs" = 1 ]; then
	echo "verbs_smp=$verbs_smp" >> "$out/env.txt"
	echo "verbs_rounds=$verbs_rounds" >> "$out/env.txt"
	for n in ${verbs_smp//,/ }; do
		vm "verbs-smp$n" $((120 + verbs_rounds * 360)) --modules none --smp "$n" -- \
			"$here/bench-guest.sh" verbs "$secs" "$verbs_rounds"
	done
fi

# One host: a server and a client in one guest, --rounds rounds of both
# module sets; about a minute and a half per round.
if [ "$onehost" = 1 ]; then
	vm onehost $((120 + rounds * 300)) --modules ours --guests 1 -- \
		"$here/bench-guest.sh" onehost "$secs" "$rounds"
fi

# Live keys: rds-zc-bench registers and holds them, which the default
# pool of 2048 MRs per device cannot: the guests load rds_zc_ib again
# with fmr_pool_size=--keys-pool.  Under half a minute per round.
if [ "$keys" = 1 ]; then
	{
		echo "live_keys=$live_keys"
		echo "keys_pool=$keys_pool"
		echo "keys_secs=$keys_secs"
	} >> "$out/env.txt"
	vm keys $((180 + rounds * 300)) --modules ours -- \
		"$here/bench-guest.sh" keys "$keys_secs" "$rounds" "$live_keys" "$keys_pool"
fi

# All to all: one boot per guest count, all through the hub so that the
# counts compare.  With 4 guests on 2 host cores a boot takes 1 to 2
# minutes and each guest runs 2 (N - 1) rds-zc-bench processes at once.
if [ "$scale" = 1 ]; then
	{
		echo "scale_guests=$scale_guests"
		echo "scale_secs=$scale_secs"
		echo "scale_size=$scale_size"
		echo "scale_depth=$scale_depth"
	} >> "$out/env.txt"
	for n in ${scale_guests//,/ }; do
		vm "scale-g$n" $((300 + n * 90)) --modules ours --guests "$n" --hub -- \
			"$here/bench-guest.sh" scale "$scale_secs" "$scale_size" "$scale_depth"
	done
fi

{
	echo "kernel=$(sed -n 's/^# vm-run: kernel \([^,]*\),.*/\1/p' "$out"/*.log 2>/dev/null | head -n 1)"
	echo "host_load_end=$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "wall_secs=$(($(date +%s) - start))"
} >> "$out/env.txt"

python3 "$here/bench-report.py" "$out"
