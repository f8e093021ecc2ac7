// SPDX-License-Identifier: GPL-2.0
/*
 * insn-mark - open or close the counting window of insn-profile.so.
 *
 *   insn-mark on|off
 *
 * Executes one marker instruction (insn-mark.h): a no-op on any x86-64
 * CPU, which the qemu plugin insn-profile.so recognises.  Outside such a
 * qemu it does nothing.  Exit status 0, or 2 on bad usage.
 */
#include <stdio.h>
#include <string.h>

#include "insn-mark.h"

static void mark_on(void)
{
	asm volatile(INSN_MARK_ON_ASM ::: "memory");
}

static void mark_off(void)
{
	asm volatile(INSN_MARK_OFF_ASM ::: "memory");
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "on")) {
		mark_on();
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "off")) {
		mark_off();
		return 0;
	}
	fprintf(stderr, "usage: insn-mark on|off\n");
	return 2;
}
