#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# guest-barrier.sh - wait until every guest of the run has reached a barrier.
#
# Usage (inside a guest script): tools/testing/vm/guest-barrier.sh NAME [TIMEOUT_SECS]
#
# Guest K marks its arrival by creating /results/guestK/barrier.NAME, then
# waits until the same file exists for every guest 1..RDS_NODES.  The results
# folder is shared by all guests over 9p without caching (cache=none), so a
# file one guest creates is seen by the others at their next look-up.
#
# Each NAME may be used once per run (the files stay); guest-init.sh uses
# "rdsvm-setup" before it starts the guest script.  Default timeout:
# $RDS_BARRIER_TIMEOUT or 120 s.  Exit status: 0 when all guests arrived,
# 1 on timeout or when another guest has already finished (its exit-code
# file exists) without reaching the barrier, 2 on a usage error.

set -euo pipefail

name=${1:-}
limit=${2:-${RDS_BARRIER_TIMEOUT:-120}}
if [[ ! $name =~ ^[A-Za-z0-9._-]+$ ]] || [[ ! $limit =~ ^[0-9]+$ ]]; then
	echo "usage: guest-barrier.sh NAME [TIMEOUT_SECS] (NAME: letters, digits, . _ -)" >&2
	exit 2
fi
: "${RESULTS:?not inside a vm-run.sh guest}" "${RDS_NODE:?}" "${RDS_NODES:?}"
root=$(dirname "$RESULTS")

touch "$RESULTS/barrier.$name"
deadline=$(($(date +%s) + limit))
while :; do
	waiting=
	for ((j = 1; j <= RDS_NODES; j++)); do
		[ "$j" -eq "$RDS_NODE" ] && continue
		if [ ! -e "$root/guest$j/barrier.$name" ]; then
			if [ -e "$root/guest$j/exit-code" ]; then
				echo "guest-barrier: guest $j finished without reaching barrier $name" >&2
				exit 1
			fi
			waiting="$waiting $j"
		fi
	done
	[ -n "$waiting" ] || exit 0
	if [ "$(date +%s)" -ge "$deadline" ]; then
		echo "guest-barrier: timeout after ${limit}s at barrier $name; waiting for guest(s)$waiting" >&2
		exit 1
	fi
	sleep 0.1
done
