#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# selftest.sh - tests of the VM test bench itself.
#
# Usage: tools/testing/vm/selftest.sh [--vm] [--kernel SERIES]
#
# Without --vm (a few seconds, no guest booted): scan-kernel-log.sh on made-up
# logs, kmemleak_check.sh on made-up kmemleak reports, and vm-run.sh --judge
# on made-up results folders (failing script, plan mismatch, missing files,
# timeouts, kernel warnings, SKIP and TODO).
# With --vm, also boots guests (about a minute on 6.1): a passing smoke run,
# a guest script that exits 3, a kernel stack dump (sysrq t) and a kernel
# panic (sysrq c) must be reported as failures.
# Prints TAP; exit status 0 iff every test passed.

set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
vm=0
kernel=6.1
while [ $# -gt 0 ]; do
	case $1 in
	--vm) vm=1; shift ;;
	--kernel) kernel=${2:?}; shift 2 ;;
	*) echo "usage: $0 [--vm] [--kernel SERIES]" >&2; exit 2 ;;
	esac
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vm-selftest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

n=0
failures=0
result() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failures=$((failures + 1))
	fi
}

# --- scan-kernel-log.sh ----------------------------------------------------
scan() {
	"$here/scan-kernel-log.sh" "$@" > "$tmp/scan.out" 2>&1
}

# expect_scan WANT_STATUS DESCRIPTION LOG_LINE [SCAN_OPTIONS...]
expect_scan() {
	local want=$1 desc=$2 rc=0
	printf '[    1.000000] Linux version 6.1.0\n%s\n[    2.000000] done\n' "$3" > "$tmp/k.log"
	shift 3
	scan "$@" "$tmp/k.log" || rc=$?
	[ "$rc" -eq "$want" ]
	result $? "scan: $desc"
}

expect_scan 0 "clean log passes" '[    1.500000] rdma_rxe: loaded'
expect_scan 1 "WARN() found" '[    1.5] WARNING: CPU: 0 PID: 1 at net/rds/ib.c:12 rds_ib_add_one+0x1/0x2 [rds_zc_ib]'
expect_scan 1 "oops found" '[    1.5] Oops: 0000 [#1] PREEMPT SMP NOPTI'
expect_scan 1 "BUG: found" '[    1.5] BUG: kernel NULL pointer dereference, address: 0000000000000008'
expect_scan 1 "general protection fault found" '[    1.5] general protection fault, probably for non-canonical address'
expect_scan 1 "KASAN report found" '[    1.5] BUG: KASAN: slab-use-after-free in rds_recvmsg+0x1/0x2'
expect_scan 1 "UBSAN report found" '[    1.5] UBSAN: shift-out-of-bounds in net/rds/ib_recv.c:10:5'
expect_scan 1 "lockdep circular locking found" '[    1.5] WARNING: possible circular locking dependency detected'
expect_scan 1 "lockdep inconsistent state found" '[    1.5] inconsistent lock state'
expect_scan 1 "suspicious RCU usage found" '[    1.5] suspicious RCU usage.'
expect_scan 1 "RCU stall found" '[    1.5] rcu: INFO: rcu_preempt self-detected stall on CPU'
expect_scan 1 "hung task found" '[    1.5] INFO: task rds_test:123 blocked for more than 120 seconds.'
expect_scan 1 "panic found" '[    1.5] Kernel panic - not syncing: Fatal exception'
expect_scan 1 "kmemleak report found" '[    1.5] kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)'
expect_scan 0 "kmemleak start-up line ignored" '[    0.5] kmemleak: Kernel memory leak detector initialized (mem pool available: 15000)'
expect_scan 1 "Call Trace found" '[    1.5] Call Trace:'
expect_scan 0 "lockdep kernel's start-up line ignored" "[    0.000000] rcu: $(printf '\t')RCU lockdep checking is enabled."
expect_scan 0 "heartbeat record ignored" '[  900.5] rdsvm-heartbeat g2: 431/433 D rds_rdma_load wchan p9_client_rpc: p9_client_rpc lockdep_hardirqs_on_prepare'
expect_scan 1 "WARNING: found after a heartbeat record" '[  900.5] rdsvm-heartbeat g2: 431/431 S rds_rdma_load wchan 0:
[  900.6] WARNING: CPU: 0 PID: 431 at x'
# An allocation failure's report, as warn_alloc() prints it.
alloc_fail='[  358.2] kworker/u4:0: vmalloc error: size 262528, vm_struct allocation failed, mode:0xdc0(GFP_KERNEL|__GFP_ZERO)
[  358.2] CPU: 0 UID: 0 PID: 12 Comm: kworker/u4:0 Tainted: G           O
[  358.2] Call Trace:
[  358.2]  <TASK>
[  358.2]  ? lockdep_hardirqs_on_prepare+0x275/0x410
[  358.2]  rds_ib_setup+0x25b/0x780 [rds_zc_ib]
[  358.2]  </TASK>'
expect_scan 0 "an allocation failed on purpose (armed) ignored" "[  300.0] rdsvm-faults: armed failslab
$alloc_fail
[  370.0] rdsvm-faults: disarmed"
expect_scan 1 "an allocation failure found when nothing was armed" "$alloc_fail"
expect_scan 1 "an allocation failure found after disarmed" "[  300.0] rdsvm-faults: armed failslab
[  301.0] rdsvm-faults: disarmed
$alloc_fail"
expect_scan 1 "a WARN() while armed found" "[  300.0] rdsvm-faults: armed failslab
$alloc_fail
[  359.0] WARNING: CPU: 0 PID: 12 at net/rds/ib_cm.c:1 rds_ib_setup+0x1/0x2
[  370.0] rdsvm-faults: disarmed"
expect_scan 1 "lockdep turned off found" '[    1.5] INFO: lockdep is turned off.'

# --foreign: a report in the distribution's modules only is theirs.
lockdep_in() {	# lockdep_in MODULE: a lockdep report, one frame in MODULE
	printf '%s\n' '[  710.7] WARNING: possible recursive locking detected' \
		'[  710.7] kworker/0:2/42 is trying to acquire lock:' \
		'[  710.7] Call Trace:' '[  710.7]  <TASK>' \
		'[  710.7]  rdma_destroy_id+0x16/0x20 [rdma_cm]' \
		"[  710.7]  conn_create+0x33a/0x1030 [$1]" '[  710.7]  </TASK>'
}
expect_scan 3 "a report in a foreign module only: foreign (status 3)" \
	"$(lockdep_in rds_rdma)" --foreign rds,rds_rdma
expect_scan 1 "a report with a frame of ours is ours, foreign modules or not" \
	"$(lockdep_in rds_rdma; lockdep_in rds_zc_ib)" --foreign rds,rds_rdma
expect_scan 1 "a report in no module counts under --foreign" \
	"$(lockdep_in rdma_cm)" --foreign rds,rds_rdma
expect_scan 1 "without --foreign, a report in rds_rdma counts" "$(lockdep_in rds_rdma)"
expect_scan 1 "a foreign report does not hide a WARN() after it" \
	"$(lockdep_in rds)
[  720.0] WARNING: CPU: 0 PID: 1 at kernel/x.c:1 f+0x1/0x2" --foreign rds,rds_rdma
leak_rec() {	# leak_rec MODULE: one kmemleak record, allocated in MODULE
	printf '%s\n' 'unreferenced object 0xffff88800e12e000 (size 1880):' \
		'  backtrace (crc ad07df50):' '    sk_alloc+0x2b/0x910' \
		"    rds_create+0x6f/0x5a0 [$1]" '    __sock_create+0x25e/0x680'
}
leak_line='[ 1464.6] kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)'
leak_rec rds > "$tmp/leaks"
leak_rec rds_rdma >> "$tmp/leaks"
expect_scan 3 "leaks all in foreign modules (--kmemleak): foreign" "$leak_line" \
	--foreign rds,rds_rdma --kmemleak "$tmp/leaks"
leak_rec rds_zc >> "$tmp/leaks"
expect_scan 1 "leaks, one of them ours (--kmemleak): ours" "$leak_line" \
	--foreign rds,rds_rdma --kmemleak "$tmp/leaks"
expect_scan 1 "leaks without their report: counted" "$leak_line" --foreign rds,rds_rdma
# A known bug of the guest's kernel (KNOWN in scan-kernel-log.sh): status
# 4, on its kernel only, and never hiding anything of ours.
rxe_warn() {	# rxe_warn RELEASE [FRAME]: 6.1 rxe's completer WARN
	printf '%s\n' '[  367.8] ------------[ cut here ]------------' \
		'[  367.8] WARNING: CPU: 0 PID: 0 at drivers/infiniband/sw/rxe/rxe_comp.c:756 rxe_completer+0x86c/0xd60 [rdma_rxe]' \
		"[  367.8] CPU: 0 PID: 0 Comm: swapper/0 Tainted: G OE $1 #1  Debian 6.1.192-2" \
		'[  367.8] Call Trace:' '[  367.8]  <IRQ>' \
		'[  367.8]  rxe_do_task+0x86/0x110 [rdma_rxe]' ${2:+"[  367.8]  $2"} \
		'[  367.8]  </IRQ>' '[  367.8]  <TASK>' \
		'[  367.8]  do_idle+0x206/0x2b0' '[  367.8]  </TASK>'
}
expect_scan 4 "6.1's rxe completer WARN: a known bug (status 4)" \
	"$(rxe_warn 6.1.0-56-amd64)"
expect_scan 1 "the same WARN on another kernel counts" \
	"$(rxe_warn 6.12.57+deb13-amd64)"
expect_scan 1 "the known WARN with a frame of ours counts" \
	"$(rxe_warn 6.1.0-56-amd64 'rds_ib_send_cqe+0x1/0x2 [rds_zc_ib]')"
expect_scan 1 "a known bug does not hide a WARN() after it" \
	"$(rxe_warn 6.1.0-56-amd64)
[  720.0] WARNING: CPU: 0 PID: 1 at kernel/x.c:1 f+0x1/0x2"
expect_scan 4 "a known bug and a foreign report: status 4" \
	"$(rxe_warn 6.1.0-56-amd64; lockdep_in rds_rdma)" --foreign rds,rds_rdma
# The distribution's late release of a removed device (KNOWN 1): excused
# only where the guest runs its modules, never where it runs ours.
pool_warn() {	# pool_warn MODULES: 6.1 rxe's pool WARN at "rdma link del"
	printf '%s\n' '[  147.0] ------------[ cut here ]------------' \
		'[  147.0] WARNING: CPU: 0 PID: 527 at drivers/infiniband/sw/rxe/rxe_pool.c:116 rxe_pool_cleanup+0x11/0x20 [rdma_rxe]' \
		"[  147.0] Modules linked in: sch_netem $1 rdma_cm ib_cm rdma_rxe ib_core" \
		'[  147.0] CPU: 0 PID: 527 Comm: rdma Not tainted 6.1.0-56-amd64 #1  Debian 6.1.192-2' \
		'[  147.0] Call Trace:' '[  147.0]  <TASK>' \
		'[  147.0]  rxe_dealloc+0x21/0xa0 [rdma_rxe]' \
		'[  147.0]  nldev_dellink+0x92/0xe0 [ib_core]' '[  147.0]  </TASK>'
}
expect_scan 4 "rxe's pool WARN with the distribution's rds_rdma: known (status 4)" \
	"$(pool_warn 'rds_tcp rds_rdma rds')"
expect_scan 1 "the same WARN with our modules loaded counts" \
	"$(pool_warn 'rds_zc_tcp rds_zc_ib rds_zc')"
expect_scan 1 "the same WARN without a module line counts" \
	"$(pool_warn 'rds_tcp rds_rdma rds' | grep -v 'Modules linked')"
expect_scan 1 "user-space WARNING: counts without --timestamped" 'test: WARNING: just text'
expect_scan 0 "user-space WARNING: ignored with --timestamped" 'test: WARNING: just text' --timestamped
expect_scan 1 "kernel WARNING: counts with --timestamped" '[    1.5] WARNING: CPU: 0 PID: 1 at x' --timestamped
expect_scan 0 "--ignore drops a line" '[    1.5] WARNING: known and harmless' --ignore 'known and harmless'

rc=0
scan "$tmp/no-such-file" || rc=$?
[ "$rc" -eq 2 ]
result $? "scan: unreadable file gives status 2"

# Offending lines are printed with file and line number.
printf '[    1.5] WARNING: CPU: 0 PID: 1 at x\n' > "$tmp/w.log"
scan "$tmp/w.log" || true
grep -q "w.log:1:\[    1.5\] WARNING: CPU: 0" "$tmp/scan.out"
result $? "scan: prints FILE:LINE: text"

printf '[    1.5] WARNING: a\n[    1.6] WARNING: b\n' > "$tmp/w2.log"
scan --max 1 "$tmp/w2.log" || true
one=$(grep -c WARNING "$tmp/scan.out" || true)
scan --max 0 "$tmp/w2.log" || true
all=$(grep -c WARNING "$tmp/scan.out" || true)
[ "$one" = 1 ] && [ "$all" = 2 ]
result $? "scan: --max N limits the lines printed, --max 0 prints all"

# --- kmemleak_check.sh on made-up reports ----------------------------------
kmemleak_check=$here/../selftests/net/rds/kmemleak_check.sh
# leak_record BACKTRACE_LINE: one kmemleak record allocated from there.
leak_record() {
	printf 'unreferenced object 0xffff888005b4c000 (size 64):\n'
	printf '  comm "python3", pid 123, jiffies 4294893123\n'
	printf '  backtrace (crc 1234abcd):\n'
	printf '    __kmalloc_cache_noprof+0x2f3/0x3a0\n    %s\n' "$1"
	printf '    do_syscall_64+0x90/0x300\n'
}
# expect_leaks DESCRIPTION WANT_STATUS REGEX: judge $tmp/km.txt.
expect_leaks() {
	local rc=0 good=0
	KMEMLEAK_REPORT=$tmp/km.txt "$kmemleak_check" > "$tmp/km.out" 2>&1 || rc=$?
	[ "$rc" -eq "$2" ] || good=1
	grep -qE -- "$3" "$tmp/km.out" || good=1
	result "$good" "kmemleak_check: $1"
}
: > "$tmp/km.txt"
expect_leaks "no leak passes" 0 '^ok 2 - no_unloaded_module_leaks$'
leak_record 'acpi_ns_foo+0x12/0x40' > "$tmp/km.txt"
expect_leaks "a leak of other kernel code is only listed" 0 '^#   unreferenced object'
leak_record 'rds_conn_create+0x12/0x40 [rds_zc]' > "$tmp/km.txt"
expect_leaks "a leak of rds_zc fails" 1 '^not ok 1 - no_rds_zc_leaks # 1 leak'
leak_record 'rds_ib_add_one+0x12/0x40 [rds_zc_ib]' > "$tmp/km.txt"
expect_leaks "a leak of rds_zc_ib fails" 1 '^not ok 1 - no_rds_zc_leaks # 1 leak'
leak_record '0xffffffffc0123456' > "$tmp/km.txt"
expect_leaks "a leak of an unloaded module fails" 1 '^not ok 2 - no_unloaded_module_leaks # 1 leak'

# --- vm-run.sh --judge -----------------------------------------------------
# make_guest DIR OUTPUT EXIT_CODE QEMU_STATUS [DMESG_LINE]: a made-up guest
# results folder; "-" leaves a file out.
make_guest() {
	local d=$1
	mkdir -p "$d"
	[ "$2" = - ] || printf '%b' "$2" > "$d/output.txt"
	[ "$3" = - ] || echo "$3" > "$d/exit-code"
	[ "$4" = - ] || echo "$4" > "$d/qemu-status"
	printf '[    0.000000] Linux version 6.1.0\n%s\n' "${5:-}" > "$d/dmesg.txt"
	printf '[    0.000000] Linux version 6.1.0\nok 1 - WARNING: user text is not a kernel line\n' > "$d/console.log"
}

# expect_judge DESCRIPTION 'P passed, F failed' [REGEX_OF_A_LINE]: judge the
# folder $tmp/r (then remove it).
expect_judge() {
	local desc=$1 summary=$2 line=${3:-} rc=0
	"$here/vm-run.sh" --judge "$tmp/r" > "$tmp/judge.out" 2>&1 || rc=$?
	local good=0
	[ "$(tail -n 1 "$tmp/judge.out")" = "$summary" ] || good=1
	if [ "$summary" = "${summary%, 0 failed}" ]; then
		[ "$rc" -eq 1 ] || good=1
	else
		[ "$rc" -eq 0 ] || good=1
	fi
	if [ -n "$line" ]; then
		grep -qE -- "$line" "$tmp/judge.out" || good=1
	fi
	result "$good" "judge: $desc"
	[ "$good" -eq 0 ] || sed 's/^/# /' "$tmp/judge.out"
	rm -rf "$tmp/r"
}

make_guest "$tmp/r/guest1" '1..2\nok 1 - first\nok 2 - second\n' 0 0
make_guest "$tmp/r/guest2" '1..1\nok 1 - only\n' 0 0
expect_judge "two passing guests" "7 passed, 0 failed" '^ok - g2: only$'

make_guest "$tmp/r/guest1" '1..2\nok 1 - first\nok 2 - second\n' 3 0
expect_judge "exit code 3 without 'not ok' fails once" "4 passed, 1 failed" 'not ok - g1: guest script exit status 0 # it was 3'

make_guest "$tmp/r/guest1" '1..2\nok 1 - first\nnot ok 2 - second\n' 1 0
expect_judge "'not ok' counts, its exit code does not count again" "3 passed, 1 failed" '^not ok - g1: second$'

make_guest "$tmp/r/guest1" '1..3\nok 1 - first\n' 0 0
expect_judge "plan mismatch fails" "3 passed, 1 failed" 'TAP plan 1..3 matched # got 1'

make_guest "$tmp/r/guest1" 'ok 1 - first\n' 0 0
expect_judge "missing plan fails" "3 passed, 1 failed" 'TAP plan present'

make_guest "$tmp/r/guest1" - - 0
expect_judge "missing output and exit code fail" "1 passed, 2 failed" 'no exit-code file'

make_guest "$tmp/r/guest1" '1..1\n' - 124
expect_judge "qemu timeout fails" "1 passed, 2 failed" 'guest finished # timed out'

make_guest "$tmp/r/guest1" '1..1\n' 124 0
expect_judge "in-guest timeout fails" "2 passed, 2 failed" "killed by the guest's time limit"

make_guest "$tmp/r/guest1" '1..1\nok 1 - fine\n' 0 0 '[    5.0] WARNING: CPU: 0 PID: 9 at net/rds/x.c:1 f+0x0/0x1'
expect_judge "kernel WARNING fails 'kernel log clean'" "2 passed, 1 failed" 'guest1/dmesg.txt:2:.*WARNING: CPU: 0'

make_guest "$tmp/r/guest1" '1..1\nok 1 - fine\n' 0 0 "$(rxe_warn 6.1.0-56-amd64)"
expect_judge "a known kernel bug makes 'kernel log clean' a skip" "3 passed, 0 failed" \
	'^ok - g1: kernel log clean # SKIP a known bug of this kernel, not ours: 6\.1.s rdma_rxe'

make_guest "$tmp/r/guest1" '1..1\nBail out! guest 1: rxe0 did not become ACTIVE\n' 125 0
expect_judge "Bail out! fails" "2 passed, 1 failed" 'not ok - g1: Bail out!'

make_guest "$tmp/r/guest1" '1..3\nok 1 - a # SKIP no peer\nnot ok 2 - b # TODO later\nok 3\n' 0 0
expect_judge "SKIP passes, failing TODO does not fail" "4 passed, 0 failed" '^ok - g1: a # SKIP no peer$'

# --- Real guests -------------------------------------------------------------
# expect_run DESCRIPTION WANT_STATUS REGEX -- VM_RUN_ARGS...
expect_run() {
	local desc=$1 want=$2 line=$3 rc=0 good=0
	shift 4
	"$here/vm-run.sh" --kernel "$kernel" --timeout 300 "$@" > "$tmp/run.out" 2>&1 || rc=$?
	[ "$rc" -eq "$want" ] || good=1
	grep -qE -- "$line" "$tmp/run.out" || good=1
	tail -n 1 "$tmp/run.out" | grep -qE '^[0-9]+ passed, [0-9]+ failed$' || good=1
	result "$good" "vm: $desc"
	sed 's/^/# /' "$tmp/run.out"
}

if [ "$vm" -eq 1 ]; then
	expect_run "smoke test passes on one guest" 0 '^ok - g1: rxe0 is ACTIVE$' -- \
		--guests 1 --modules none -- "$here/smoke.sh"
	# shellcheck disable=SC2016 # expanded in the guest
	expect_run "exit 3 is a failure" 1 'not ok - g1: guest script exit status 0 # it was 3' -- \
		--guests 1 --modules none -- sh -c 'echo 1..1; echo ok 1 - x; exit 3'
	expect_run "kernel stack dump (sysrq t) is a failure" 1 'not ok - g1: kernel log clean' -- \
		--guests 1 --modules none -- sh -c 'echo 1..1; echo ok 1 - x; echo t > /proc/sysrq-trigger'
	# shellcheck disable=SC2016 # expanded in the guest
	expect_run "kernel panic of one guest is a failure" 1 'not ok - g2: guest finished' -- \
		--guests 2 --modules none -- sh -c 'echo 1..1; echo ok 1 - x; if [ "$RDS_NODE" = 2 ]; then echo c > /proc/sysrq-trigger; fi'
fi

echo "1..$n"
[ "$failures" -eq 0 ]
