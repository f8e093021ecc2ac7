# SPDX-License-Identifier: GPL-2.0
#
# Out-of-tree build of the RDS zero-copy modules, and the project's entry
# points.  See README.
#
#   make              build the modules for KDIR into build/<release>/
#   make modules-all  build for the newest installed 6.1 and 6.12 headers
#   make deps         install every Debian package the build and bench need
#   make demo         two guests running our modules: datagrams, the
#                     zero-copy cycle, then against the distribution's
#                     module; explained step by step (a few minutes)
#   make check        static checks, then the selftests in guests;
#                     ends with "N passed, M failed, K skipped"
#   make debug-kernel build and install, once, a 6.12 kernel with KASAN,
#                     lockdep, kmemleak, KFENCE and UBSAN (most of an hour)
#   make check-debug  the selftests on that kernel, one guest, then two
#                     (ours with ours, with the distribution's, and
#                     allocation failures aimed at our modules); fails on
#                     any sanitizer report (about two hours; not part of
#                     "make check")
#   make bench        our modules against the distribution's and raw verbs,
#                     in qemu guests: table, CSV and chart in build/bench/
#                     (about 35 minutes; BENCH_ARGS="--rounds 1" is quicker;
#                     not part of "make check")
#   make profile      guest instructions per operation, by class of code
#                     (RDS, RDMA stack, rxe, kernel, user), ours against
#                     the distribution's, counted by a qemu plugin: table
#                     in build/profile/ (about 5 minutes;
#                     PROFILE_ARGS="--points rtt --reps 3"; not part of
#                     "make check")
#   make reliability  two 6.1 guests through fault storms, a hostile peer
#                     and the fuzzer: one table of the load held, faults
#                     survived, fuzz calls, crashes, messages lost and
#                     leaks, in build/reliability/ (about 5 minutes;
#                     RELIABILITY_ARGS="--from DIR" re-reads a run;
#                     not part of "make check")
#   make tools        the benchmark tool, tools/rds-zc-bench/rds-zc-bench,
#                     the information tool, tools/rds-zc-info/rds-zc-info,
#                     and the user guide's examples, tools/rds-zc-examples/
#   make install      the modules built for KDIR into
#                     /lib/modules/<release>/updates/, then depmod, and
#                     rds-zc-info into /usr/local/bin/; with
#                     INSTALL_HDR=1 the uapi header too, with
#                     MODPROBE_CONF=1 /etc/modprobe.d/rds_zc.conf too
#   make uninstall    undoes make install
#   make headers_install  include/uapi/linux/rds.h into
#                     /usr/local/include/linux/
#   make clean

SHELL := /bin/bash
TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))

# The running kernel's build tree if it has one, else the newest Debian
# amd64 headers installed.
KDIR ?= $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) \
	$(lastword $(shell ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V)))

# Newest installed headers of each kernel series the project supports.
headers_for = $(lastword $(shell ls -d /usr/src/linux-headers-$(1).*-amd64 2>/dev/null | grep -v -- '-rt-' | sort -V))
KDIR_6_1 := $(call headers_for,6.1)
KDIR_6_12 := $(call headers_for,6.12)

krelease = $(shell sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' $(1)/include/generated/utsrelease.h 2>/dev/null)

SELFTESTS := tools/testing/selftests/net/rds

.PHONY: all modules modules-all deps demo check debug-kernel check-debug \
	selftests tools bench profile reliability clean help install uninstall \
	headers_install install-release

all: modules

# Build in build/<release>/, a tree of links to the sources, so builds for
# several kernels coexist and the source tree stays clean.
modules:
	@test -n "$(KDIR)" -a -d "$(KDIR)" || { echo "no kernel build tree: run 'make deps' or set KDIR" >&2; exit 1; }
	@$(TOP)/tools/testing/build-modules.sh "$(KDIR)" $(if $(W),W=$(W)) $(if $(C),C=$(C))

modules-all:
	@test -n "$(KDIR_6_1)" -a -n "$(KDIR_6_12)" || { echo "6.1 and 6.12 headers needed: run 'make deps'" >&2; exit 1; }
	@$(TOP)/tools/testing/build-modules.sh "$(KDIR_6_1)" $(if $(W),W=$(W)) $(if $(C),C=$(C))
	@$(TOP)/tools/testing/build-modules.sh "$(KDIR_6_12)" $(if $(W),W=$(W)) $(if $(C),C=$(C))

deps:
	@$(TOP)/tools/testing/install-deps.sh

selftests:
	@$(MAKE) -s -C $(SELFTESTS)

tools:
	@$(MAKE) -s -C tools/rds-zc-bench
	@$(MAKE) -s -C tools/rds-zc-info
	@$(MAKE) -s -C tools/rds-zc-examples

bench:
	@$(TOP)/tools/testing/bench/bench.sh $(BENCH_ARGS)

profile:
	@$(TOP)/tools/testing/bench/profile.sh $(PROFILE_ARGS)

reliability:
	@$(TOP)/tools/testing/reliability.sh $(RELIABILITY_ARGS)

demo:
	@$(TOP)/tools/testing/demo.sh

check:
	@$(TOP)/tools/testing/check.sh

debug-kernel:
	@$(TOP)/tools/testing/debug-kernel.sh

check-debug:
	@$(TOP)/tools/testing/check-debug.sh

# Installation.  DESTDIR and INSTALL_MOD_PATH (Kbuild's name) both prefix
# the module tree, DESTDIR outermost; INSTALL_MOD_DIR is the folder under
# /lib/modules/<release>/ (Kbuild's name too; "updates" wins over the
# distribution's kernel/ tree in depmod's default search order).  The
# header goes to INSTALL_HDR_PATH/linux/, by default under /usr/local,
# where the compiler looks before /usr/include: the distribution's
# /usr/include/linux/rds.h belongs to linux-libc-dev and is never
# overwritten.  rds-zc-info goes to INSTALL_BIN_PATH, /usr/local/bin by
# default, the rds-rdma(7) manual page to INSTALL_MAN_PATH/man7,
# /usr/local/share/man/man7 by default.  install builds only what is missing or older than its
# sources; DEPMOD=true skips depmod.  See
# Documentation/networking/rds_zc-install.rst.
INSTALL_MOD_DIR ?= updates
INSTALL_HDR_PATH ?= /usr/local/include
INSTALL_BIN_PATH ?= /usr/local/bin
INSTALL_MAN_PATH ?= /usr/local/share/man
DEPMOD ?= depmod
KRELEASE = $(call krelease,$(KDIR))
BUILT = $(TOP)/build/$(KRELEASE)/net/rds
KO_FILES = $(BUILT)/rds_zc.ko $(BUILT)/rds_zc_ib.ko $(BUILT)/rds_zc_tcp.ko
MODROOT = $(DESTDIR)$(INSTALL_MOD_PATH)
MODDEST = $(MODROOT)/lib/modules/$(KRELEASE)/$(INSTALL_MOD_DIR)
HDRDEST = $(DESTDIR)$(INSTALL_HDR_PATH)/linux
CONFDEST = $(DESTDIR)/etc/modprobe.d
BINDEST = $(DESTDIR)$(INSTALL_BIN_PATH)
MANDEST = $(DESTDIR)$(INSTALL_MAN_PATH)/man7
INFO_TOOL := $(TOP)/tools/rds-zc-info/rds-zc-info
MODULE_SOURCES := $(wildcard $(TOP)/Kbuild $(TOP)/net/rds/Kbuild \
	$(TOP)/net/rds/*.[ch] $(TOP)/include/uapi/linux/*.h)

install-release:
	@test -n "$(KRELEASE)" || { echo "no kernel release in KDIR '$(KDIR)': run 'make deps' or set KDIR" >&2; exit 1; }

$(KO_FILES) &: $(MODULE_SOURCES)
	@$(MAKE) -s modules KDIR="$(KDIR)"

$(INFO_TOOL): $(INFO_TOOL).c $(TOP)/include/uapi/linux/rds.h
	@$(MAKE) -s -C $(TOP)/tools/rds-zc-info

install: install-release $(KO_FILES) $(INFO_TOOL)
	install -d "$(MODDEST)"
	install -m 644 $(KO_FILES) "$(MODDEST)/"
	install -D -m 755 $(INFO_TOOL) "$(BINDEST)/rds-zc-info"
	install -D -m 644 $(TOP)/Documentation/man/rds-rdma.7 "$(MANDEST)/rds-rdma.7"
ifeq ($(INSTALL_HDR),1)
	install -D -m 644 $(TOP)/include/uapi/linux/rds.h "$(HDRDEST)/rds.h"
endif
ifeq ($(MODPROBE_CONF),1)
	install -D -m 644 $(TOP)/tools/modprobe.d/rds_zc.conf "$(CONFDEST)/rds_zc.conf"
endif
	$(DEPMOD) -a $(if $(MODROOT),-b "$(MODROOT)") $(KRELEASE)

# The header and the modprobe file go only if they are still ours, byte for
# byte: an administrator's edited copy stays.
uninstall: install-release
	rm -f "$(MODDEST)/rds_zc.ko" "$(MODDEST)/rds_zc_ib.ko" \
	      "$(MODDEST)/rds_zc_tcp.ko"
	-rmdir --ignore-fail-on-non-empty "$(MODDEST)" 2>/dev/null
	rm -f "$(BINDEST)/rds-zc-info" "$(MANDEST)/rds-rdma.7"
	@for f in "$(HDRDEST)/rds.h:include/uapi/linux/rds.h" \
		  "$(CONFDEST)/rds_zc.conf:tools/modprobe.d/rds_zc.conf"; do \
		if cmp -s "$${f%%:*}" "$(TOP)/$${f#*:}"; then \
			echo "rm -f $${f%%:*}"; rm -f "$${f%%:*}"; \
		elif [ -e "$${f%%:*}" ]; then \
			echo "uninstall: $${f%%:*} differs from $${f#*:}, kept" >&2; \
		fi; \
	done
	if [ -d "$(MODROOT)/lib/modules/$(KRELEASE)" ]; then \
		$(DEPMOD) -a $(if $(MODROOT),-b "$(MODROOT)") $(KRELEASE); fi

headers_install:
	install -D -m 644 $(TOP)/include/uapi/linux/rds.h "$(HDRDEST)/rds.h"

clean:
	rm -rf $(TOP)/build
	@$(MAKE) -s -C $(SELFTESTS) clean 2>/dev/null || true
	@$(MAKE) -s -C tools/rds-zc-bench clean 2>/dev/null || true
	@$(MAKE) -s -C tools/rds-zc-info clean 2>/dev/null || true
	@$(MAKE) -s -C tools/rds-zc-examples clean 2>/dev/null || true
	@$(MAKE) -s -C tools/testing/bench/insn-profile clean 2>/dev/null || true

help:
	@echo "targets: all modules modules-all deps demo check debug-kernel check-debug selftests tools bench profile reliability install uninstall headers_install clean"
