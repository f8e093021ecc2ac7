#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install, idempotently, every Debian package the build, the checks and
# the qemu bench need, then unpack checkpatch.pl from Debian's kernel
# source into build/tools/.  Run as root (or with sudo available).
# Does nothing, quickly, when everything is already there.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)

pkgs=(
	# compilers and the kernel build trees of both supported series
	gcc make libc6-dev perl python3 bc kmod
	linux-headers-amd64 linux-headers-6.12-amd64
	# the kernels the guests boot, with their module trees (ib_core,
	# rdma_cm, rdma_rxe and the distribution's rds, rds_rdma)
	linux-image-amd64 linux-image-6.12-amd64
	# make check's DKMS test (tools/testing/dkms-check.sh) runs dkms.conf
	dkms
	# checkpatch.pl and the kernel's own RDS selftest
	# (kernel_selftest.sh) come from Debian's kernel source package
	linux-source-6.12
	sparse
	# make check renders the rds-rdma(7) manual page
	groff-base
	# the bench
	qemu-system-x86 busybox-static cpio gzip xz-utils iproute2 procps
	rdma-core ibverbs-utils
	# the kernel's RDS selftest pings, captures its links and stops the
	# captures with killall; its helpers import PyYAML (kernel_selftest.sh)
	tcpdump psmisc python3-yaml iputils-ping
	# rds_hostile forges rdma_cm connect requests
	librdmacm-dev libibverbs-dev
	# make bench: the raw-verbs ceiling (ib_write_bw, ib_read_bw,
	# ib_write_lat), the plain TCP stream's (iperf3) and the chart
	perftest iperf3 gnuplot-nox
)

missing=()
for p in "${pkgs[@]}"; do
	case $p in \#*) continue ;; esac
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
	     grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done

sudo=
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null || { echo "install-deps: run as root" >&2; exit 1; }
	sudo=sudo
fi

if [ ${#missing[@]} -gt 0 ]; then
	echo "install-deps: installing ${missing[*]}"
	$sudo apt-get update -qq
	$sudo env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# checkpatch.pl and its data files, from the newest linux-source tarball,
# and the kernel's own RDS selftest, from the same package, into
# build/kselftest/ (tools/testing/selftests/net/rds/kernel_selftest.sh).
# Each unpack decompresses the whole tarball: side by side, they take
# the time of one (some 25 s).
tools=$top/build/tools/scripts
unpack_pid=
if [ ! -x "$tools/checkpatch.pl" ]; then
	tarball=$(ls /usr/src/linux-source-*.tar.xz | sort -V | tail -n 1)
	dir=$(basename "$tarball" .tar.xz)
	mkdir -p "$top/build/tools"
	echo "install-deps: unpacking checkpatch.pl from $tarball"
	tar -xJf "$tarball" -C "$top/build/tools" --strip-components=1 \
		"$dir/scripts/checkpatch.pl" "$dir/scripts/spelling.txt" \
		"$dir/scripts/const_structs.checkpatch" &
	unpack_pid=$!
fi
"$top/tools/testing/selftests/net/rds/kernel_selftest.sh" --unpack
if [ -n "$unpack_pid" ]; then
	wait "$unpack_pid" || exit 1
	chmod +x "$tools/checkpatch.pl"
fi
echo "install-deps: all dependencies present"
