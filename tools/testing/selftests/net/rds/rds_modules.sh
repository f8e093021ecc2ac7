#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rds_modules.sh - unload and load again the RDS modules a bench guest was
# set up with (RDS_MODULES: ours or distro), with the same commands as
# tools/testing/vm/guest-init.sh.  Sourced:
#
#   rds_modules_unload	# every RDS socket must be closed first
#   rds_modules_load
#
# ours: rds_zc_tcp, rds_zc_ib and rds_zc from RDS_MODULE_DIR, rds_zc_ib with the
# parameters RDS_ZC_IB_PARAMS holds, if any (e.g. "fmr_pool_size=16384");
# distro: rds_rdma (and rds_tcp, if something loaded it) and rds.  Both
# print what went wrong and return non-zero on failure.

rds_modules_list() {
	case ${RDS_MODULES:-} in
	ours) echo rds_zc_tcp rds_zc_ib rds_zc ;;
	distro) echo rds_rdma rds_tcp rds ;;
	*) return 1 ;;
	esac
}

rds_modules_loaded() {	# any of them still there?
	local m

	for m in $(rds_modules_list); do
		[ -e "/sys/module/$m" ] && return 0
	done
	return 1
}

# A connection that is still being torn down may hold a module for a
# moment after the last socket closed: retry for up to 10 s.
rds_modules_unload() {
	local i m mods

	mods=$(rds_modules_list) || {
		echo "RDS_MODULES='${RDS_MODULES:-}': nothing to unload"
		return 1
	}
	for ((i = 0; i < 50; i++)); do
		for m in $mods; do
			[ -e "/sys/module/$m" ] && rmmod "$m" 2>/dev/null
		done
		rds_modules_loaded || return 0
		sleep 0.2
	done
	for m in $mods; do
		[ -e "/sys/module/$m" ] && rmmod "$m"
	done
	echo "still loaded after 10 s: $(for m in $mods; do [ -e "/sys/module/$m" ] && echo "$m (refcnt $(cat "/sys/module/$m/refcnt"))"; done)"
	return 1
}

rds_modules_load() {
	local params

	case ${RDS_MODULES:-} in
	ours)
		read -r -a params <<< "${RDS_ZC_IB_PARAMS:-}"
		modprobe ib_core && modprobe rdma_cm || return 1
		[ -e /sys/module/rds_zc ] || insmod "$RDS_MODULE_DIR/rds_zc.ko" || return 1
		[ -e /sys/module/rds_zc_ib ] ||
			insmod "$RDS_MODULE_DIR/rds_zc_ib.ko" "${params[@]}" || return 1
		[ -e /sys/module/rds_zc_tcp ] ||
			insmod "$RDS_MODULE_DIR/rds_zc_tcp.ko" || return 1
		;;
	distro)
		modprobe rds_rdma && modprobe rds_tcp || return 1
		;;
	*)
		echo "RDS_MODULES='${RDS_MODULES:-}': nothing to load"
		return 1
		;;
	esac
}
