#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rds_mr_pool.sh - the MR pool limit: with our IB module loaded with
# fmr_pool_size=4, the fifth registration gets EAGAIN until one of the
# four is released (rds_mr pool_exhausted).  The module is loaded again
# with its defaults afterwards.  Prints TAP.  The distribution's module
# has no such parameter that works before a connection: skipped.
#
# Environment (from vm-run.sh): RDS_ADDR, RDS_MODULES, RDS_MODULE_DIR.

set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
POOL=4

if [ "${RDS_MODULES:-}" != ours ]; then
	echo "1..0 # SKIP our modules only (RDS_MODULES=${RDS_MODULES:-unset})"
	exit 0
fi
ko=$RDS_MODULE_DIR/rds_zc_ib.ko
if ! rmmod rds_zc_ib || ! insmod "$ko" fmr_pool_size=$POOL; then
	echo "1..1"
	echo "not ok 1 - reload rds_zc_ib with fmr_pool_size=$POOL"
	exit 1
fi
RDS_MR_POOL=$POOL "$here/rds_mr" pool_exhausted
rc=$?
if ! rmmod rds_zc_ib || ! insmod "$ko"; then
	echo "# could not load rds_zc_ib again"
	rc=1
fi
exit $rc
