/* SPDX-License-Identifier: GPL-2.0 */
/*
 * insn-mark.h - the two marker instructions of the instruction profile.
 *
 * Each is a "nopl disp32(%rax,%rax,1)" (0f 1f 84 00 + a 32-bit
 * displacement): a no-op for the CPU that touches no memory and no flag,
 * so it does not change what a guest does.  The displacement "RDZ+" opens
 * the counting window of insn-profile.so, "RDZ-" closes it; the plugin
 * recognises these eight bytes when qemu translates them.  Nothing else
 * emits such a displacement (compilers pad with a zero one).
 */
#ifndef INSN_MARK_H
#define INSN_MARK_H

#define INSN_MARK_LEN 8
/* the bytes, for the plugin; then the same as assembly, for insn-mark */
#define INSN_MARK_ON	"\x0f\x1f\x84\x00RDZ+"
#define INSN_MARK_OFF	"\x0f\x1f\x84\x00RDZ-"
#define INSN_MARK_ON_ASM	".byte 0x0f, 0x1f, 0x84, 0x00, 0x52, 0x44, 0x5a, 0x2b"
#define INSN_MARK_OFF_ASM	".byte 0x0f, 0x1f, 0x84, 0x00, 0x52, 0x44, 0x5a, 0x2d"

#endif
