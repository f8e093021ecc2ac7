#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# reliability.sh - make reliability: one table of the project's reliability
# evidence, from one run of the two-guest suites that carry it.
#
# Usage: tools/testing/reliability.sh [--timeout SECS]
#        tools/testing/reliability.sh --from DIR
#        tools/testing/reliability.sh --self-test
#
# Builds our modules for Debian's 6.1 and the selftests if needed, boots two
# 6.1 guests with our modules and e1000 NICs (tools/testing/vm/vm-run.sh,
# as make check does for the two-guest suites) and runs run_remote.sh --only
# rds_faults,rds_storm,rds_hostile,note_bound,rds_fuzz in them: streams
# through link cuts, rdma link del/add, link down, module reloads
# (rds_faults.sh), RDMA load through fault storms and SIGKILLs, then leak
# checks (rds_storm.sh), a hostile RDS/IB peer (rds_hostile), a socket
# that never reads its RDMA notifications (rds_local's rdma_note_bound),
# both nodes fuzzing each other (rds_fuzz).  About 5 minutes on two cores; --timeout bounds the guests
# (default 780 s).
#
# The table is read from what the programs print anyway: the "# *_diag"
# lines (rds_stream's stream_diag and rds_rdma_load's load_diag in the
# guests' faults/ and storm/ folders; fault_diag, leak_diag, hostile_diag,
# bound_diag (rds_hostile's ping_flood, src_gid and live_conn_kept: the
# pongs node 1 dropped and the connect requests it refused; rds_local's
# rdma_note_bound: the operations refused at the notifications' bound),
# connlimit_diag (rds_hostile's conn_limit: the connect
# requests and sends node 1 refused at net.rds.conn_max*) and fuzz_diag
# in their output.txt), the TAP results as vm-run.sh --judge
# counts them, and the guests' kernel logs (scan-kernel-log.sh: every
# oops, BUG, WARNING, KASAN, lockdep, RCU stall or hung task report; lines
# less than 30 lines apart in one log count as one report).  Each row says
# what its value must be; a row that breaks it, or a failed result, fails
# the run.
#
# Results go to build/reliability/TIMESTAMP/: vm/ (vm-run.sh's results),
# vm-run.log, meta.env (kernel, commit, date), table.txt and
# reliability.csv.  The table is printed on stdout too.
#
# --from DIR parses such a folder again and prints its table, booting
# nothing and writing nothing.  --self-test checks the parser on the canned
# results in tools/testing/reliability/canned/ and on copies of them
# spoilt on purpose; it prints TAP.
#
# Exit status: 0 iff every row holds and no result failed; 2 on a usage
# error.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
vm=$top/tools/testing/vm
st_dir=$top/tools/testing/selftests/net/rds
canned=$top/tools/testing/reliability/canned
PROGS=rds_faults,rds_storm,rds_hostile,note_bound,rds_fuzz
REPORT_GAP=30		# kernel-log matches closer than this: one report
# What the canned results hold (tools/testing/reliability/canned/).
CANNED_SENT=6575
CANNED_CALLS=105666

timeout_s=780
from=
self_test=0

usage() {
	awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--timeout) timeout_s=${2:?}; shift 2 ;;
	--from) from=${2:?}; shift 2 ;;
	--self-test) self_test=1; shift ;;
	-h|--help) usage ;;
	*) echo "reliability: unexpected argument '$1'" >&2; usage ;;
	esac
done
[[ $timeout_s =~ ^[0-9]+$ ]] || usage

# --- Reading the results ---------------------------------------------------

# diag TAG OP FIELD [KEY=VALUE] < LINES: over the lines that hold
# "TAG_diag " (and KEY=VALUE, if given), OP (sum, abs: the sum of absolute
# values, max, count) of FIELD's values; 0 when there is none.
diag() {
	awk -v tag="$1_diag " -v op="$2" -v field="$3" -v want="${4:-}" '
		function add(v) {
			v += 0
			if (op == "abs" && v < 0)
				v = -v
			if (op == "max") {
				if (!n || v > acc)
					acc = v
			} else {
				acc += v
			}
			n++
		}
		{
			i = index($0, tag)
			if (!i)
				next
			rest = " " substr($0, i + length(tag)) " "
			if (want != "" && index(rest, " " want " ") == 0)
				next
			if (op == "count") {
				acc++
				next
			}
			if (match(rest, " " field "=-?[0-9]+ ")) {
				v = substr(rest, RSTART + length(field) + 2,
					   RLENGTH - length(field) - 3)
				add(v)
			}
		}
		END { print acc + 0 }
	'
}

# The kernel-log reports of one guest, as vm-run.sh judges its logs:
# dmesg.txt, else (missing or clean) the console log's timestamped lines.
# Prints two counts: the crash reports, then those of known bugs of the
# guest's kernel (not ours, see KNOWN in scan-kernel-log.sh).
crash_reports() {	# crash_reports GUEST_DIR
	local g=$1 out=

	if [ -f "$g/dmesg.txt" ]; then
		out=$("$vm/scan-kernel-log.sh" --max 0 "$g/dmesg.txt" 2>&1)
	fi
	if [ -z "$out" ] && [ -f "$g/console.log" ]; then
		out=$("$vm/scan-kernel-log.sh" --max 0 --timestamped \
			"$g/console.log" 2>&1)
	fi
	# "FILE:LINE:text": a match more than REPORT_GAP lines after the
	# one before of its kind starts a new report.
	awk -F: -v gap="$REPORT_GAP" '
		$2 ~ /^[0-9]+$/ {
			k = $3 == "known"
			if (!(k in last) || $2 - last[k] > gap)
				n[k]++
			last[k] = $2
		}
		END { print n[0] + 0, n[1] + 0 }
	' <<< "$out"
}

# TAP results of a program in the guests' output.txt: passed, skipped,
# failed.
prog_results() {	# prog_results PROG OUTPUT...
	awk -v p="$1: " '
		/^(not )?ok [0-9]+ - / {
			desc = $0
			sub(/^(not )?ok [0-9]+ - /, "", desc)
			if (index(desc, p) != 1)
				next
			if (/^not ok/)
				f++
			else if (desc ~ /#[ \t]*(SKIP|skip)/)
				s++
			else
				o++
		}
		END { printf "%d %d %d\n", o, s, f }
	' "${@:2}"
}

rows=()
bad=0

# row SECTION NAME VALUE BOUND: BOUND is "= 0", "> 0" or "".
row() {
	local verdict=
	case $4 in
	"= 0") if [ "$3" = 0 ]; then verdict=ok; else verdict=FAIL; fi ;;
	"> 0") if [ "$3" -gt 0 ] 2>/dev/null; then verdict=ok; else verdict=FAIL; fi ;;
	esac
	[ "$verdict" = FAIL ] && bad=$((bad + 1))
	rows+=("$1|$2|$3|$4|$verdict")
}

# parse DIR: fill rows[] and meta_* from a results folder.
parse() {
	local dir=$1 res=$1/vm outs=() side=() g line passed=0 failed=-1
	local crashes=0 known=0 c k n p o s f sent recv

	rows=()
	bad=0
	meta_kernel=unknown meta_commit=unknown meta_date=unknown
	meta_modules=unknown
	if [ -f "$dir/meta.env" ]; then
		while IFS='=' read -r k v; do
			case $k in
			KERNEL) meta_kernel=$v ;;
			COMMIT) meta_commit=$v ;;
			DATE) meta_date=$v ;;
			MODULES) meta_modules=$v ;;
			esac
		done < "$dir/meta.env"
	fi
	for g in "$res"/guest*; do
		[ -d "$g" ] || continue
		[ -f "$g/output.txt" ] && outs+=("$g/output.txt")
		[ -d "$g/faults" ] && side+=("$g/faults")
		[ -d "$g/storm" ] && side+=("$g/storm")
	done
	all_out() { [ ${#outs[@]} -eq 0 ] || cat "${outs[@]}"; }
	all_side() {
		[ ${#side[@]} -eq 0 ] || find "${side[@]}" -type f -exec cat {} +
	}

	# Load held: the counted streams, the RDMA load.
	sent=$(all_side | diag stream sum sent role=send)
	recv=$(all_side | diag stream sum received role=recv)
	row load "stream messages sent" "$sent" "> 0"
	row load "stream messages received" "$recv" "> 0"
	row load "stream messages lost" "$(all_side | diag stream sum missing role=recv)" "= 0"
	row load "stream messages duplicated" "$(all_side | diag stream sum duplicates role=recv)" "= 0"
	row load "stream messages out of order" "$(all_side | diag stream sum out_of_order role=recv)" "= 0"
	row load "stream messages damaged" \
		"$(($(all_side | diag stream sum damaged role=recv) + $(all_side | diag stream sum foreign role=recv)))" "= 0"
	n=$(all_side | diag load sum rdmas role=init)
	row load "RDMAs submitted under faults" "$n" "> 0"
	row load "RDMAs succeeded" "$(all_side | diag load sum success role=init)" "> 0"
	p=$(all_side | diag load sum notes role=init)
	row load "RDMA notifications missing" "$((n > p ? n - p : 0))" "= 0"
	row load "RDMA control messages sent" "$(all_side | diag load sum msgs_sent)" "> 0"
	row load "RDMA control messages lost" "$(all_side | diag load sum msgs_lost)" "= 0"
	row load "RDMA control messages duplicated" "$(all_side | diag load sum msgs_reordered)" "= 0"

	# Faults injected, and survived (the results say whether).
	row faults "link cuts (netem 100 % loss)" "$(all_out | diag fault sum n kind=link_cut)" "> 0"
	row faults "rdma link del/add" "$(all_out | diag fault sum n kind=rdma_link)" "> 0"
	row faults "link down/up" "$(all_out | diag fault sum n kind=link_down)" "> 0"
	row faults "module reloads under traffic" "$(all_out | diag fault sum n kind=module_reload)" "> 0"
	row faults "SIGKILLs with RDMAs in flight" "$(all_out | diag fault sum n kind=sigkill)" "> 0"
	row faults "hostile-peer connect requests" "$(all_out | diag hostile count n)" "> 0"
	row faults "hostile-peer frames" "$(all_out | diag hostile sum frames)" "> 0"
	row faults "hostile-peer connections refused (conn_max*)" \
		"$(all_out | diag connlimit sum refused)" "> 0"
	row faults "hostile-peer connects refused: GID not the address's" \
		"$(all_out | diag bound sum n kind=refused_gid)" "> 0"
	row faults "hostile-peer connects refused: connection live" \
		"$(all_out | diag bound sum n kind=refused_live)" "> 0"
	read -r o s f < <(prog_results rds_hostile "${res}/guest1/output.txt" 2>/dev/null || echo "0 0 0")
	row faults "hostile-peer cases passed" "$o" "> 0"

	# What a hostile peer tried to make us hold, and was refused.
	row bounds "pongs dropped (64 held at most)" "$(all_out | diag bound sum n kind=pongs_dropped)" "> 0"
	row bounds "RDMA notifications refused (SO_RCVBUF/2 charged)" \
		"$(all_out | diag bound sum n kind=notes_refused)" "> 0"

	# The fuzzer.
	row fuzz "fuzz seeds" "$(all_out | diag fuzz count seed)" "> 0"
	row fuzz "fuzz calls" "$(all_out | diag fuzz sum calls)" "> 0"
	row fuzz "fuzz distinct paths (most in a seed)" "$(all_out | diag fuzz max paths)" "> 0"
	row fuzz "fuzz children SIGKILLed" "$(all_out | diag fuzz sum forks)" ""
	row fuzz "fuzz unexpected errnos" "$(all_out | diag fuzz sum unexpected)" "= 0"

	# Crashes and leaks.
	for g in "$res"/guest*; do
		[ -d "$g" ] || continue
		read -r c k < <(crash_reports "$g")
		crashes=$((crashes + c))
		known=$((known + k))
	done
	row health "kernel crash reports (oops/WARN/BUG/KASAN/lockdep)" "$crashes" "= 0"
	row health "known bugs of the kernel hit (not ours)" "$known" ""
	row health "leak checks run" "$(all_out | diag leak count case)" "> 0"
	row health "MRs leaked" "$(all_out | diag leak abs mr)" "= 0"
	row health "QPs leaked" "$(all_out | diag leak abs qp)" "= 0"
	row health "CQs/PDs/cm_ids leaked" \
		"$(($(all_out | diag leak abs cq) + $(all_out | diag leak abs pd) + $(all_out | diag leak abs cm_id)))" "= 0"
	row health "pinned memory left (VmPin kB)" \
		"$(all_side | awk '/load_diag / && match($0, / vmpin_kb=[0-9]+/) { s += substr($0, RSTART + 10, RLENGTH - 10) } END { print s + 0 }')" "= 0"

	# The results, as vm-run.sh judges them (TAP of every program, kernel
	# logs, guests that finished).
	if [ -d "$res/guest1" ]; then
		line=$("$vm/vm-run.sh" --judge "$res" 2>&1 | tail -n 1)
		if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
			passed=${BASH_REMATCH[1]}
			failed=${BASH_REMATCH[2]}
		fi
	fi
	[ "$failed" -ge 0 ] || failed=1
	for p in ${PROGS//,/ }; do
		read -r o s f < <(prog_results "$p" "${outs[@]}" /dev/null)
		row suites "$p results passed/skipped/failed" "$o/$s/$f" ""
	done
	row suites "results passed (vm-run.sh --judge)" "$passed" "> 0"
	row suites "results failed (vm-run.sh --judge)" "$failed" "= 0"
	if [ -z "$meta_kernel" ] || [ "$meta_kernel" = unknown ]; then
		meta_kernel=$(sed -n 's/.*, kernel \([^ ]*\)$/\1/p' "$res/guest1/output.txt" 2>/dev/null | head -n 1)
		meta_kernel=${meta_kernel:-unknown}
	fi
}

# table: the table of rows[], for people.
table() {
	local r sec name value bound verdict last='' line

	echo "reliability: kernel $meta_kernel, modules $meta_modules, commit $meta_commit, $meta_date"
	printf '  %-52s %12s  %-7s %s\n' evidence value "must be" verdict
	for r in "${rows[@]}"; do
		IFS='|' read -r sec name value bound verdict <<< "$r"
		if [ "$sec" != "$last" ]; then
			echo "  $sec"
			last=$sec
		fi
		printf -v line '    %-50s %12s  %-7s %s' "$name" "$value" "$bound" "$verdict"
		echo "${line%"${line##*[! ]}"}"
	done
	if [ "$bad" -eq 0 ]; then
		echo "reliability: every row holds"
	else
		echo "reliability: $bad row(s) FAIL"
	fi
}

csv() {
	local r sec name value bound verdict

	echo "kernel,commit,date,section,evidence,value,bound,verdict"
	for r in "${rows[@]}"; do
		IFS='|' read -r sec name value bound verdict <<< "$r"
		echo "$meta_kernel,$meta_commit,$meta_date,$sec,\"$name\",$value,$bound,$verdict"
	done
}

# --- Self-test ---------------------------------------------------------------

# The value of row NAME in the last table printed (the table on stdin).
value_of() {	# value_of NAME < TABLE
	awk -v n="$1" '{ l = $0; sub(/^ +/, "", l) } index(l, n " ") == 1 {
		rest = substr(l, length(n) + 1); split(rest, f, " "); print f[1]; exit }'
}

self_test() {
	local tmp t=0 failed_tests=0 out rc l

	check() {	# check DESCRIPTION CONDITION...
		t=$((t + 1))
		if "${@:2}"; then
			echo "ok $t - $1"
		else
			echo "not ok $t - $1"
			failed_tests=$((failed_tests + 1))
		fi
	}
	spoil() {	# spoil NAME: a fresh copy of the canned results
		rm -rf "${tmp:?}/$1"
		cp -a "$canned" "$tmp/$1"
	}
	run_from() {	# run_from NAME: its table in out, its status in rc
		out=$("$0" --from "$tmp/$1" 2>&1)
		rc=$?
	}
	# shellcheck disable=SC2317 # called through check
	is() {	# is ROW VALUE
		[ "$(value_of "$1" <<< "$out")" = "$2" ]
	}
	# shellcheck disable=SC2317 # called through check
	fails_with() {	# fails_with ROW VALUE: is, and the run failed
		is "$1" "$2" && [ "$rc" != 0 ]
	}
	# shellcheck disable=SC2317 # called through check
	clean_values() {
		is "kernel crash reports (oops/WARN/BUG/KASAN/lockdep)" 0 &&
			is "stream messages sent" "$CANNED_SENT" &&
			is "fuzz calls" "$CANNED_CALLS"
	}
	# shellcheck disable=SC2317 # called through check
	known_values() {
		is "known bugs of the kernel hit (not ours)" 1 &&
			is "kernel crash reports (oops/WARN/BUG/KASAN/lockdep)" 0
	}

	[ -d "$canned/vm/guest1" ] || { echo "Bail out! no canned results in $canned"; return 1; }
	tmp=$(mktemp -d) || return 1
	echo "1..11"

	spoil clean
	run_from clean
	check "canned results: every row holds, exit status 0" [ "$rc" = 0 ]
	check "canned results: no crash, the counts read" clean_values
	[ "$rc" = 0 ] || while IFS= read -r l; do echo "# $l"; done <<< "$out"

	spoil warn
	printf '[  100.000001] WARNING: CPU: 0 PID: 1 at net/rds/x.c:1 f+0x1/0x2 [rds_zc]\n[  100.000002] Call Trace:\n' \
		>> "$tmp/warn/vm/guest1/dmesg.txt"
	run_from warn
	check "a WARN in a guest's log: crashes=1" \
		is "kernel crash reports (oops/WARN/BUG/KASAN/lockdep)" 1
	check "a WARN in a guest's log: exit status non-zero" [ "$rc" != 0 ]

	spoil known
	printf '%s\n' '[  100.000001] WARNING: CPU: 0 PID: 0 at drivers/infiniband/sw/rxe/rxe_comp.c:756 rxe_completer+0x86c/0xd60 [rdma_rxe]' \
		'[  100.000002] CPU: 0 PID: 0 Comm: swapper/0 Tainted: G OE 6.1.0-56-amd64 #1  Debian 6.1.192-2' \
		'[  100.000003] Call Trace:' '[  100.000004]  <TASK>' '[  100.000005]  </TASK>' \
		>> "$tmp/known/vm/guest1/dmesg.txt"
	run_from known
	check "6.1's known rxe WARN: listed apart, crashes=0" known_values
	check "6.1's known rxe WARN: exit status 0" [ "$rc" = 0 ]

	spoil lost
	sed -i '0,/missing=0 /s//missing=3 /' "$tmp"/lost/vm/guest2/faults/link_cut.recv
	run_from lost
	check "3 messages missing from a stream: lost=3, exit status non-zero" \
		fails_with "stream messages lost" 3

	spoil dup
	sed -i '0,/duplicates=0 /s//duplicates=1 /' "$tmp"/dup/vm/guest1/storm/storm_link.recv
	run_from dup
	check "a duplicate in a stream: duplicated=1, exit status non-zero" \
		fails_with "stream messages duplicated" 1

	spoil leak
	sed -i '0,/leak_diag case=leaks mr=0 qp=0/s//leak_diag case=leaks mr=0 qp=2/' \
		"$tmp/leak/vm/guest2/output.txt"
	run_from leak
	check "2 QPs left after the unload: QPs leaked=2, exit status non-zero" \
		fails_with "QPs leaked" 2

	spoil notok
	sed -i '0,/^ok \([0-9]*\) - rds_hostile: /s//not ok \1 - rds_hostile: /' \
		"$tmp/notok/vm/guest1/output.txt"
	run_from notok
	check "a failed result: exit status non-zero" [ "$rc" != 0 ]

	spoil nofuzz
	sed -i '/fuzz_diag /d' "$tmp"/nofuzz/vm/guest*/output.txt
	run_from nofuzz
	check "no fuzz_diag line: no fuzz evidence, exit status non-zero" \
		fails_with "fuzz calls" 0

	rm -rf "$tmp"
	[ "$failed_tests" = 0 ]
}

# --- Main ------------------------------------------------------------------

if [ "$self_test" = 1 ]; then
	self_test
	exit
fi

if [ -n "$from" ]; then
	[ -d "$from/vm" ] || { echo "reliability: $from has no vm/ folder" >&2; exit 2; }
	parse "$from"
	table
	[ "$bad" -eq 0 ]
	exit
fi

# The modules for 6.1 and the selftests, built if needed.
kdir=$(for d in /usr/src/linux-headers-6.1.*-amd64; do
		[[ -d $d && $d != *-rt-* ]] && echo "$d"
	done | sort -V | tail -n 1)
[ -n "$kdir" ] || { echo "reliability: no 6.1 headers: run 'make deps'" >&2; exit 2; }
dir=$top/build/reliability/$(date +%Y%m%d-%H%M%S)
mkdir -p "$dir" || exit 2
if ! "$top/tools/testing/build-modules.sh" "$kdir" > "$dir/build.log" 2>&1 ||
   ! make -C "$st_dir" >> "$dir/build.log" 2>&1; then
	tail -n 40 "$dir/build.log" >&2
	echo "reliability: the build failed (see $dir/build.log)" >&2
	exit 1
fi
krel=$(sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' "$kdir/include/generated/utsrelease.h")
commit=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -z "$(git -C "$top" status --porcelain --untracked-files=no 2>/dev/null)" ] ||
	commit+=-dirty
{
	echo "KERNEL=$krel"
	echo "COMMIT=$commit"
	echo "DATE=$(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "MODULES=ours,ours"
} > "$dir/meta.env"

echo "reliability: two 6.1 guests, $PROGS; results in $dir" >&2
timeout -k 30 $((timeout_s + 120)) "$vm/vm-run.sh" --kernel 6.1 --guests 2 \
	--modules ours,ours --nic e1000 --timeout "$timeout_s" \
	--results "$dir/vm" \
	-- "$st_dir/run_remote.sh" --only "$PROGS" > "$dir/vm-run.log" 2>&1
echo "reliability: vm-run.sh exit status $? ($(sed -n 's/^# vm-run: wall time \([0-9]*s\).*/\1/p' "$dir/vm-run.log"))" >&2

parse "$dir"
table | tee "$dir/table.txt"
csv > "$dir/reliability.csv"
echo "reliability: table in $dir/table.txt, CSV in $dir/reliability.csv" >&2
[ "$bad" -eq 0 ]
