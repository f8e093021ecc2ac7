#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# lib_cases.sh - what the one-guest case scripts (module_lifecycle.sh,
# install_check.sh) share.  Sourced after the script has set CASES, the
# names of its cases in order:
#
#   diag TEXT..., result STATUS NAME [WHY]	# from lib_tap.sh
#   skip_all WHY		# the plan, every case skipped, exit 0
#   loaded MODULE		# is MODULE loaded and live?
#   run CMD...			# CMD; on failure, it and its output as diag
#   note_as_found		# remember whether $CORE and $IB are loaded
#   as_found			# loaded as noted, and the distribution's rds not
#
# result counts the failures in failed, which the caller reads: it exits
# with $((failed > 0)).

# shellcheck source=lib_tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_tap.sh"

skip_all() {
	local c

	echo "1..${#CASES[@]}"
	for c in "${CASES[@]}"; do
		result 4 "$c" "$1"
	done
	exit 0
}

loaded() {	# MODULE: is it loaded and live?
	[ "$(cat "/sys/module/$1/initstate" 2>/dev/null)" = live ]
}

# Run a command; on failure print it and its output as diagnostics.
run() {
	local out

	if ! out=$("$@" 2>&1); then
		diag "'$*' failed: $out"
		return 1
	fi
	return 0
}

loaded01() {	# MODULE: 1 if loaded, else 0
	if loaded "$1"; then echo 1; else echo 0; fi
}

# Whether our two modules ($CORE, $IB) are loaded, for as_found.
note_as_found() {
	was_core=$(loaded01 "$CORE")
	was_ib=$(loaded01 "$IB")
}

# Ours loaded iff they were at note_as_found, the distribution's not.
as_found() {
	[ "$was_core" = "$(loaded01 "$CORE")" ] &&
		[ "$was_ib" = "$(loaded01 "$IB")" ] && ! loaded rds
}
