#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run_guest.sh - the guest side of the RDS selftests, for
# tools/testing/vm/vm-run.sh:
#
#   tools/testing/vm/vm-run.sh --guests 1 --modules distro -- \
#	tools/testing/selftests/net/rds/run_guest.sh
#
# On node 1 it builds the test programs if needed and runs rds_local,
# rds_ipv6, rds_fuzz, rds_mr, rds_one_host, rds_rdma_local.sh (rds_rdma
# between two processes of this guest on local delivery, no device; then
# with --device, as rds_rdma_device, over two rxe devices of this guest),
# rds_tcp, rds_mr_pool.sh (which reloads our IB module
# with a small MR pool), module_lifecycle.sh, install_check.sh (make
# install into a scratch root, modprobe from it), ib_device.sh,
# kernel_selftest.sh (the kernel's own RDS selftest, test.py from Debian's
# linux-source-6.12: clean on 6.1, lossy on other kernels, both when
# named with --only) and, last, kmemleak_check.sh
# (skipped unless the kernel has kmemleak), in that order; the six that
# test our modules alone only where ours are loaded, kernel_selftest.sh
# (about two minutes under TCG) by default only there too and not with
# --debug (name it to run it there, or beside the distribution's
# modules),
# abi_check (compile-time tables, which make check compares on the host)
# only when named.  Their TAP is merged into one stream: every result is
# renumbered and named after its program, and the plan comes last.  Other
# nodes have nothing to do.  Exit status 0 iff nothing failed.  Each
# program's own output is also kept in $RESULTS/<program>.tap when
# RESULTS is set.
#
# Environment (from vm-run.sh): RDS_NODE, RDS_NODES, RDS_ADDR, RDS_ADDR6,
# RDS_LL6, RDS_IFINDEX, RDS_MODULES, RDS_MODULE_DIR, RDS_REPO, RESULTS.
#
# Arguments: "--debug" first, for the sanitizer kernel of make
# check-debug: every time limit RDS_TIME_SCALE times longer (default 6)
# and every bound on the kernel's memory RDS_MEM_SCALE times larger
# (default 4), as run_remote.sh --debug gives them; then "--only
# PROG,..." runs only the programs named (their names below, e.g.
# rds_ipv6); --fuzz-seconds N gives each seed of rds_fuzz N seconds and
# no limit on its calls, instead of its short default (the long run of
# make check-debug).

set -u

debug=0
if [ "${1:-}" = --debug ]; then
	debug=1
	shift
fi

only=
if [ "${1:-}" = --only ]; then
	only=,${2:?--only takes program names},
	shift 2
fi

# wanted NAME: is program NAME to run?  The programs that test our modules
# alone (loading, installing, unplugging the device under them, a pool
# size of theirs) do not run beside the distribution's: they would only
# report skips.
wanted() {
	case $1 in
	rds_mr_pool | module_lifecycle | install_check | ib_device | \
	rds_rdma_local | rds_rdma_device)
		[ "${RDS_MODULES:-}" = ours ] || return 1 ;;
	kernel_selftest)
		[ -n "$only" ] ||
			{ [ "$debug" = 0 ] && [ "${RDS_MODULES:-}" = ours ]; } ||
			return 1 ;;
	esac
	[ -z "$only" ] || [[ $only == *,$1,* ]]
}

fuzz_args=()
fuzz_limit=540
if [ "${1:-}" = --fuzz-seconds ]; then
	fuzz_args=(-t "${2:?--fuzz-seconds takes a number of seconds}" -n 0)
	fuzz_limit=$((4 * $2 + 300))
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ "${RDS_NODE:-1}" != 1 ]; then
	echo "1..0 # SKIP node ${RDS_NODE}: the selftests run on node 1"
	exit 0
fi

# shellcheck source=lib_tap.sh
. "$here/lib_tap.sh"
[ "$debug" = 0 ] || sanitizer_scales

echo "# RDS selftests on node ${RDS_NODE:-1} (${RDS_ADDR:-no address}), kernel $(uname -r), modules ${RDS_MODULES:-unset}"

# The programs come from the host's build; make only fills in what is missing.
if ! out=$(make -s -C "$here" 2>&1); then
	echo "# $out" | sed '2,$s/^/# /'
	emit "not ok" "build the selftests"
else
	export RDS_ADDR RDS_ADDR6 RDS_LL6 RDS_IFINDEX RDS_MODULES RDS_MODULE_DIR
	# abi_check compares two compile-time tables: make check runs it on
	# the host, once; here only when named.
	[ -n "$only" ] && wanted abi_check &&
		run_prog abi_check 120 "$here/abi_check"
	wanted rds_local && run_prog rds_local 480 "$here/rds_local"
	wanted rds_ipv6 && run_prog rds_ipv6 120 "$here/rds_ipv6"
	# Half of the fuzzer's seeds a kernel (make check's CI time): 1 and
	# 2 on 6.1, 3 and 4 on any other, the option sweep on both; every
	# seed when named with --only, or with --fuzz-seconds.
	fuzz_cases=()
	if [ -z "$only" ] && [ ${#fuzz_args[@]} -eq 0 ]; then
		fuzz_cases=(sockopt_sweep seed_3 seed_4)
		case $(uname -r) in 6.1.*) fuzz_cases=(sockopt_sweep seed_1 seed_2) ;; esac
	fi
	wanted rds_fuzz &&
		run_prog rds_fuzz "$fuzz_limit" "$here/rds_fuzz" "${fuzz_args[@]}" \
			"${fuzz_cases[@]}"
	wanted rds_mr && run_prog rds_mr 120 "$here/rds_mr"
	wanted rds_one_host && run_prog rds_one_host 420 "$here/rds_one_host"
	wanted rds_rdma_local &&
		run_prog rds_rdma_local 320 "$here/rds_rdma_local.sh"
	wanted rds_rdma_device &&
		run_prog rds_rdma_device 320 "$here/rds_rdma_local.sh" --device
	wanted rds_tcp && run_prog rds_tcp 420 "$here/rds_tcp"
	wanted rds_mr_pool && run_prog rds_mr_pool 120 "$here/rds_mr_pool.sh"
	wanted module_lifecycle &&
		run_prog module_lifecycle 300 "$here/module_lifecycle.sh"
	wanted install_check &&
		run_prog install_check 180 "$here/install_check.sh"
	wanted ib_device && run_prog ib_device 180 "$here/ib_device.sh"
	# One run a kernel (make check's CI time): clean on 6.1, lossy (5 %
	# loss, corruption and duplication) on any other; both when named
	# with --only.
	ks_runs=(lossy)
	case $(uname -r) in 6.1.*) ks_runs=(clean) ;; esac
	[ -z "$only" ] || ks_runs=(clean lossy)
	wanted kernel_selftest && run_prog kernel_selftest 540 \
		"$here/kernel_selftest.sh" --timeout "$(scaled 250)" \
		"${ks_runs[@]}"
	wanted kmemleak && run_prog kmemleak 300 "$here/kmemleak_check.sh"
fi

tap_finish
