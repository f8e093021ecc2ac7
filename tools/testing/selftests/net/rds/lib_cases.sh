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
#   self_roundtrip ADDR TEXT [TRANS]	# a datagram from a socket bound to
#				# ADDR to itself; TRANS: the transport
#				# SO_RDS_TRANSPORT must report
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

# One datagram, TEXT, from an RDS socket bound to ADDR to itself, byte
# for byte and named by the socket's own address; with TRANS, the socket's
# SO_RDS_TRANSPORT must be TRANS (0: IB).
self_roundtrip() {	# self_roundtrip ADDR TEXT [TRANS]
	run env RT_ADDR="$1" RT_TEXT="$2" RT_TRANS="${3:-}" python3 -c '
import os, socket
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET)
s.bind((os.environ["RT_ADDR"], 0))
want = os.environ["RT_TRANS"]
if want:
	trans = s.getsockopt(276, 8)	# SOL_RDS, SO_RDS_TRANSPORT
	assert trans == int(want), "transport %d, not %s" % (trans, want)
s.settimeout(10)
msg = os.environ["RT_TEXT"].encode()
assert s.sendto(msg, s.getsockname()) == len(msg)
data, frm = s.recvfrom(100)
assert (data, frm) == (msg, s.getsockname()), (data, frm)
s.close()
'
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
