#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# scan-kernel-log.sh - look for signs of kernel trouble in kernel logs.
#
# Usage: tools/testing/vm/scan-kernel-log.sh [--timestamped] [--ignore ERE]...
#                                            [--max N] [--foreign MODS
#                                            [--kmemleak FILE]] FILE...
#
#   --timestamped  only count a match that follows a printk timestamp
#                  ("[   12.345678] ") on its line.  Use it for serial console
#                  logs, where user-space output (a test printing the word
#                  "WARNING:") is mixed with the kernel's messages.
#   --ignore ERE   do not count lines that match this extended regular
#                  expression (may be given more than once).
#   --max N        print at most N offending lines (default 40; 0: all).
#   --foreign MODS a report whose lines name a frame of one of these
#                  modules (comma-separated: the distribution's rds,rds_rdma
#                  in a run that pits ours against it) and none of ours
#                  (rds_zc, rds_zc_ib) is that module's finding, not ours:
#                  its lines are printed as "FILE:LINE:foreign: text" and
#                  do not count.  A report runs from its first line to the
#                  end of its stack ("</TASK>" or "<EOI>", 200 lines at
#                  most).
#   --kmemleak FILE with --foreign: kmemleak's report (kmemleak_check.sh's
#                  kmemleak.txt); when it lists leaks and each has a frame
#                  of those modules and none of ours, the kernel log's
#                  "suspected memory leaks" line is foreign too.
#
# Exit status: 0 if no file shows trouble, 1 if one does (the offending lines,
# the first 40 at most, are printed as "FILE:LINE: text"), 2 on a usage error
# or an unreadable file, 3 if the only reports are foreign ones, 4 if the
# only reports are known bugs of the guest's kernel (KNOWN below), foreign
# ones besides or not.
#
# What counts as trouble: oopses and BUG()s, WARN()s, general protection
# faults, KASAN/UBSAN/KFENCE reports, lockdep reports, suspicious RCU usage,
# RCU stalls, soft and hard lockups, hung tasks, panics, kmemleak leak
# reports ("unreferenced object", "suspected memory leak"; the bare word
# kmemleak is not used because a kmemleak kernel names itself at boot),
# list corruption, SLUB debug reports and any "Call Trace:".  Start-up lines
# of a debug kernel that merely name a checker (BENIGN below) never count.
#
# Failures injected on purpose: a test that arms fault injection writes
# "rdsvm-faults: armed ..." to /dev/kmsg, and "rdsvm-faults: disarmed"
# after.  In between, the report of an allocation that failed (the
# kernel's warn_alloc(): "page allocation failure:" or "vmalloc error:",
# and fault injection's own "FAULT_INJECTION: forcing a failure.") with
# its stack, up to the end of the stack ("</TASK>" or "<EOI>"), never
# counts: the caller did not ask for silence, and the failure was meant.
# Anything else in that window, a WARN() in an error path included,
# still counts.

set -euo pipefail

PATTERNS=(
	'BUG:'
	'BUG [A-Za-z0-9_:-]+ \('		# SLUB debug: "BUG kmalloc-64 (Tainted..."
	'kernel BUG at'
	'WARNING:'
	'Oops'
	'general protection fault'
	'Unable to handle kernel'
	'KASAN'
	'UBSAN'
	'KFENCE'
	'possible circular locking'
	'possible recursive locking'
	'inconsistent lock state'
	'suspicious RCU usage'
	'lockdep'
	'rcu_sched detected stall'
	'rcu_preempt detected stall'
	'detected stalls on CPU'
	'rcu: INFO'
	'self-detected stall'
	'soft lockup'
	'hard LOCKUP'
	'blocked for more than'
	'Kernel panic'
	'unreferenced object 0x'
	'suspected memory leak'
	'list_add corruption'
	'list_del corruption'
	'refcount_t:'
	'Call Trace:'
)
MAX_LINES=40

# Known bugs of the kernels the bench boots, in code that is not ours and
# fixed upstream: a report whose first line matches KNOWN_WHERE[i], whose
# "CPU: N PID: ..." line names a kernel release matching KNOWN_KERNEL[i],
# and which has no frame of ours is listed as "FILE:LINE:known: text" and
# does not count; "known: KNOWN_WHY[i]" follows the lines.  Where
# KNOWN_MODULES[i] is not empty, the report's "Modules linked in:" line must
# match it too and name no module of ours: a bug of the distribution's
# modules that shows in code of the kernel's.  The entries are as narrow as
# the bug: one kernel series, one source line.
#
# 0: Debian's 6.1 soft-RoCE lacks "RDMA/rxe: Handle remote errors in the
#    midst of a Read reply sequence" (6.2).  When the owner of an MR
#    invalidates it while a multi-packet RDMA READ of it is being answered,
#    the responder NAKs the next packet; the requester's completer takes
#    that NAK for a packet out of sequence, enters its error state with the
#    work request's status still IB_WC_SUCCESS and WARNs there.  rds_fuzz
#    does exactly that on purpose (a peer frees the MRs whose cookies it
#    sent), rarely inside the window.
#
# 1: the distribution's rds_rdma frees what it holds of a removed device (its
#    MR pools, its PD) from a work item that its ib_client remove callback
#    only queues (rds_ib_remove_one() -> rds_ib_dev_put() -> free_work).
#    "rdma link del" then races it: when rxe frees the device first, its
#    pools are not empty and rxe_pool_cleanup() WARNs, once for each
#    (rds_faults zcopy_cut, distribution on both nodes, 6.1, once in some
#    twenty runs).  Ours releases everything before its remove callback
#    returns, so a guest that runs ours is never excused.
KNOWN_KERNEL=(
	'6\.1\.0-[0-9]+-amd64'
	'6\.1\.0-[0-9]+-amd64'
)
KNOWN_WHERE=(
	'WARNING: CPU: [0-9]+ PID: [0-9]+ at drivers/infiniband/sw/rxe/rxe_comp\.c:756 rxe_completer\+'
	'WARNING: CPU: [0-9]+ PID: [0-9]+ at drivers/infiniband/sw/rxe/rxe_pool\.c:116 rxe_pool_cleanup\+'
)
KNOWN_MODULES=(
	''
	' rds_rdma '
)
KNOWN_WHY=(
	"6.1's rdma_rxe WARNs on a NAK in the middle of an RDMA READ response (fixed in 6.2 by 'RDMA/rxe: Handle remote errors in the midst of a Read reply sequence')"
	"the distribution's rds_rdma frees its MRs and PD of a removed device from a work item after its remove callback returned; rxe, freed first, WARNs that its pools are not empty"
)

# Lines that match a pattern above but report nothing: a lockdep kernel
# announces "rcu: RCU lockdep checking is enabled." at boot, and the
# heartbeat of guest-init.sh (vm-run.sh --heartbeat) writes kernel stacks.
BENIGN=(
	'rcu:[[:space:]]+RCU lockdep checking is enabled\.'
	'rdsvm-heartbeat g[0-9]+: '
)

usage() {
	# Print the comment block at the top of this file.
	awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0" >&2
	exit 2
}

timestamped=0
foreign=
kmemleak=
ignores=("${BENIGN[@]}")
while [ $# -gt 0 ]; do
	case $1 in
	--timestamped) timestamped=1; shift ;;
	--ignore) [ $# -ge 2 ] || usage; ignores+=("$2"); shift 2 ;;
	--foreign)
		if [ $# -lt 2 ] || [[ ! $2 =~ ^[A-Za-z0-9_]+(,[A-Za-z0-9_]+)*$ ]]; then
			usage
		fi
		foreign=$2
		shift 2
		;;
	--kmemleak) [ $# -ge 2 ] || usage; kmemleak=$2; shift 2 ;;
	--max)
		if [ $# -lt 2 ] || [[ ! $2 =~ ^[0-9]+$ ]]; then
			usage
		fi
		MAX_LINES=$2
		[ "$MAX_LINES" -gt 0 ] || MAX_LINES=999999999
		shift 2
		;;
	--help|-h) usage ;;
	--) shift; break ;;
	-*) echo "scan-kernel-log: unknown option $1" >&2; usage ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || usage

regex=$(IFS='|'; echo "${PATTERNS[*]}")
regex="($regex)"
if [ "$timestamped" -eq 1 ]; then
	regex="\\[ *[0-9]+\\.[0-9]+\\].*$regex"
fi

# injected FILE: the numbers of the lines that belong to the report of
# an allocation failed on purpose (see the comment at the top), one a line.
injected() {
	awk '
	/rdsvm-faults: armed/ { armed = 1; next }
	/rdsvm-faults: disarmed/ { armed = 0; next }
	armed && !in_rep && /(page allocation failure:|vmalloc error:|FAULT_INJECTION: forcing a failure)/ {
		in_rep = 1; left = 200
	}
	in_rep {
		print NR
		if (/<\/TASK>|<EOI>/ || --left == 0)
			in_rep = 0
	}' "$1"
}

# A frame of a foreign module, and one of ours ("func+0x../0x.. [mod]").
foreign_re="\\[(${foreign//,/|})\\]"
ours_mods='rds_zc|rds_zc_ib|rds_zc_tcp'
ours_re="\\\\[($ours_mods)\\\\]"
[ -n "$foreign" ] || foreign_re=

# The KNOWN table for awk, one entry a line: KERNEL, tab, WHERE, tab,
# MODULES.
known_spec=
for i in "${!KNOWN_WHERE[@]}"; do
	known_spec+="${KNOWN_KERNEL[$i]}"$'\t'"${KNOWN_WHERE[$i]}"$'\t'"${KNOWN_MODULES[$i]}"$'\n'
done

# classify FILE: "N CLASS" for each line N of a report that does not count:
# CLASS "foreign" for a report in foreign modules only (see --foreign),
# "known:I" for the known bug KNOWN_*[I].  A report with a frame of ours is
# neither.
classify() {
	KNOWN_SPEC=$known_spec awk -v re="$regex" -v fre="$foreign_re" -v ore="$ours_re" \
		-v omods=" ($ours_mods) " '
	BEGIN {
		nk = split(ENVIRON["KNOWN_SPEC"], ents, "\n")
		for (i = 1; i <= nk; i++) {
			split(ents[i], kv, "\t")
			kkern[i] = kv[1]
			kwhere[i] = kv[2]
			kmods[i] = kv[3]
		}
	}
	function mods_ok(i) {
		return kmods[i] == "" ||
		       (mods ~ kmods[i] && mods !~ omods)
	}
	function flush(  i, cls) {
		cls = ""
		if (!o && f)
			cls = "foreign"
		for (i = 1; i <= nk && !o && cls == ""; i++)
			if (kwhere[i] != "" && first ~ kwhere[i] && kern[i] &&
			    mods_ok(i))
				cls = "known:" (i - 1)
		if (cls != "")
			for (i = 1; i <= n; i++)
				print nums[i], cls
		n = 0; f = 0; o = 0; in_rep = 0; mods = ""
		for (i = 1; i <= nk; i++)
			kern[i] = 0
	}
	!in_rep && $0 ~ re { in_rep = 1; left = 200; first = $0 }
	in_rep {
		nums[++n] = NR
		if ($0 ~ ore) o = 1
		if ($0 ~ /Modules linked in:/) mods = $0 " "
		if (fre != "" && $0 ~ fre) f = 1
		if ($0 ~ /CPU: [0-9]+ PID: /)
			for (i = 1; i <= nk; i++)
				if (kkern[i] != "" && $0 ~ (" " kkern[i] " "))
					kern[i] = 1
		if (/<\/TASK>|<EOI>/ || --left == 0)
			flush()
	}
	END { flush() }' "$1"
}

# Does kmemleak's report hold leaks, each of them in foreign modules only?
foreign_leaks() {
	[ -n "$foreign" ] && [ -n "$kmemleak" ] && [ -r "$kmemleak" ] || return 1
	awk -v fre="$foreign_re" -v ore="$ours_re" '
	function close_rec() { if (recs && !(f && !o)) bad = 1; f = 0; o = 0 }
	/^unreferenced object/ { close_rec(); recs++ }
	recs && $0 ~ ore { o = 1 }
	recs && $0 ~ fre { f = 1 }
	END { close_rec(); exit !(recs && !bad) }' "$kmemleak"
}
leaks_foreign=0
if foreign_leaks; then
	leaks_foreign=1
fi

found=0
foreign_found=0
declare -A known_seen=()
printed=0
for f in "$@"; do
	if [ ! -r "$f" ]; then
		echo "scan-kernel-log: cannot read $f" >&2
		exit 2
	fi
	declare -A meant=() other=()
	while read -r n; do
		meant[$n]=1
	done < <(injected "$f")
	while read -r n cls; do
		other[$n]=$cls
	done < <(classify "$f")
	# -a: console logs may hold stray control bytes; treat them as text.
	while IFS= read -r line; do
		[ -z "${meant[${line%%:*}]:-}" ] || continue
		if [ ${#ignores[@]} -gt 0 ]; then
			text=${line#*:}
			skip=0
			for ig in "${ignores[@]}"; do
				if [[ $text =~ $ig ]]; then
					skip=1
					break
				fi
			done
			[ "$skip" -eq 0 ] || continue
		fi
		tag=
		cls=${other[${line%%:*}]:-}
		if [[ $cls == known:* ]]; then
			known_seen[${cls#known:}]=1
			tag=known:
		elif [ -n "$cls" ] ||
		   { [ "$leaks_foreign" = 1 ] &&
		     [[ ${line#*:} =~ suspected\ memory\ leak ]]; }; then
			foreign_found=1
			tag=foreign:
		else
			found=1
		fi
		if [ "$printed" -lt "$MAX_LINES" ]; then
			# Strip carriage returns that serial consoles add.
			line=${line//$'\r'/}
			echo "$f:${line%%:*}:$tag${line#*:}"
			printed=$((printed + 1))
		fi
	done < <(grep -a -n -E -- "$regex" "$f" || true)
	unset meant other
done

if [ "$found" -eq 1 ] && [ "$printed" -ge "$MAX_LINES" ]; then
	echo "(more lines not shown)"
fi
for i in "${!known_seen[@]}"; do
	echo "known: ${KNOWN_WHY[$i]}"
done
if [ "$found" -eq 0 ] && [ ${#known_seen[@]} -gt 0 ]; then
	exit 4
fi
if [ "$found" -eq 0 ] && [ "$foreign_found" -eq 1 ]; then
	exit 3
fi
exit "$found"
