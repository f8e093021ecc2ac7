// SPDX-License-Identifier: GPL-2.0
/*
 * insn-profile.c - a qemu TCG plugin that counts the guest's instructions
 * per translation block inside windows the guest opens and closes.
 *
 *   qemu-system-x86_64 ... -plugin PATH/insn-profile.so,out=FILE
 *
 * Every translation block gets a counter that qemu increments inline each
 * time the block runs (no callback per instruction or per block).  Blocks
 * are merged by (guest virtual address, instruction count), so a block
 * translated again counts in the same place.  The guest opens a window by
 * executing the marker "on" and closes it with "off" (insn-mark.h, the
 * program insn-mark): when qemu translates a marker, the plugin asks for a
 * callback on that one instruction.  "on" zeroes every counter; "off"
 * appends every block that ran since to FILE:
 *
 *   # window K
 *   VADDR INSNS COUNT          (hex address, instructions, executions)
 *   ...
 *   # end K blocks B insns I
 *
 * A window still open when qemu exits is written then, its end line saying
 * "open".  A block is counted whole when it starts, so a block left early
 * (an exception, an interrupt) counts a few instructions too many.  The
 * markers are no-ops: the guest behaves as without the plugin.
 *
 * qemu 7.2 (Debian 12) installs no qemu-plugin.h: qemu-plugin-api.h
 * declares the part of it that this plugin uses.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "insn-mark.h"
#include "qemu-plugin-api.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

/* --- the counters -------------------------------------------------------- */
struct block {
	uint64_t count;		/* executions, incremented inline by qemu */
	uint64_t vaddr;
	uint64_t insns;
};

#define CHUNK_BLOCKS 4096

struct chunk {
	struct chunk *next;
	unsigned int used;
	struct block b[CHUNK_BLOCKS];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct chunk *chunks;	/* newest first; blocks never move */
static struct block **table;	/* open addressing by (vaddr, insns) */
static size_t table_size, table_used;
static FILE *out;
static const char *out_name;
static bool window_open;
static unsigned long windows;

static size_t slot_of(uint64_t vaddr, uint64_t insns, size_t size)
{
	uint64_t h = (vaddr ^ (insns << 48)) * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> 20) & (size - 1);
}

static void table_put(struct block **t, size_t size, struct block *b)
{
	size_t i = slot_of(b->vaddr, b->insns, size);

	while (t[i])
		i = (i + 1) & (size - 1);
	t[i] = b;
}

static int table_grow(void)
{
	size_t size = table_size ? table_size * 2 : 1 << 16, i;
	struct block **t = calloc(size, sizeof(*t));

	if (!t)
		return -1;
	for (i = 0; i < table_size; i++)
		if (table[i])
			table_put(t, size, table[i]);
	free(table);
	table = t;
	table_size = size;
	return 0;
}

/* The block of (vaddr, insns), made if new; NULL when out of memory. */
static struct block *block_get(uint64_t vaddr, uint64_t insns)
{
	struct block *b;
	struct chunk *c;
	size_t i;

	if (table_size) {
		for (i = slot_of(vaddr, insns, table_size); table[i];
		     i = (i + 1) & (table_size - 1))
			if (table[i]->vaddr == vaddr && table[i]->insns == insns)
				return table[i];
	}
	if ((table_used + 1) * 2 > table_size && table_grow())
		return NULL;
	if (!chunks || chunks->used == CHUNK_BLOCKS) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return NULL;
		c->next = chunks;
		chunks = c;
	}
	b = &chunks->b[chunks->used++];
	b->vaddr = vaddr;
	b->insns = insns;
	table_put(table, table_size, b);
	table_used++;
	return b;
}

static void zero_counts(void)
{
	struct chunk *c;
	unsigned int i;

	for (c = chunks; c; c = c->next)
		for (i = 0; i < c->used; i++)
			c->b[i].count = 0;
}

static void dump_window(const char *state)
{
	uint64_t total = 0, n = 0;
	struct chunk *c;
	unsigned int i;

	if (!out)
		return;
	fprintf(out, "# window %lu\n", windows);
	for (c = chunks; c; c = c->next)
		for (i = 0; i < c->used; i++) {
			struct block *b = &c->b[i];

			if (!b->count)
				continue;
			fprintf(out, "%llx %llu %llu\n",
				(unsigned long long)b->vaddr,
				(unsigned long long)b->insns,
				(unsigned long long)b->count);
			total += b->insns * b->count;
			n++;
		}
	fprintf(out, "# end %lu blocks %llu insns %llu %s\n", windows,
		(unsigned long long)n, (unsigned long long)total, state);
	fflush(out);
}

static void mark_on(unsigned int vcpu_index, void *udata)
{
	pthread_mutex_lock(&lock);
	zero_counts();
	windows++;
	window_open = true;
	pthread_mutex_unlock(&lock);
}

static void mark_off(unsigned int vcpu_index, void *udata)
{
	pthread_mutex_lock(&lock);
	if (window_open)
		dump_window("closed");
	window_open = false;
	pthread_mutex_unlock(&lock);
}

static void tb_trans(uint64_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	struct block *b;

	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		const void *data = qemu_plugin_insn_data(insn);

		if (qemu_plugin_insn_size(insn) != INSN_MARK_LEN)
			continue;
		if (!memcmp(data, INSN_MARK_ON, INSN_MARK_LEN))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, mark_on,
							       QEMU_PLUGIN_CB_NO_REGS,
							       NULL);
		else if (!memcmp(data, INSN_MARK_OFF, INSN_MARK_LEN))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, mark_off,
							       QEMU_PLUGIN_CB_NO_REGS,
							       NULL);
	}

	pthread_mutex_lock(&lock);
	b = block_get(qemu_plugin_tb_vaddr(tb), n);
	pthread_mutex_unlock(&lock);
	if (b)
		qemu_plugin_register_vcpu_tb_exec_inline(tb,
							 QEMU_PLUGIN_INLINE_ADD_U64,
							 &b->count, 1);
}

static void at_exit(uint64_t id, void *udata)
{
	pthread_mutex_lock(&lock);
	if (window_open)
		dump_window("open");
	window_open = false;
	if (out) {
		fprintf(out, "# exit windows %lu blocks %zu\n", windows,
			table_used);
		fclose(out);
		out = NULL;
	}
	pthread_mutex_unlock(&lock);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(uint64_t id,
					   const struct qemu_info_t *info,
					   int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4)) {
			out_name = argv[i] + 4;
		} else {
			fprintf(stderr, "insn-profile: unknown argument '%s' (out=FILE)\n",
				argv[i]);
			return -1;
		}
	}
	if (!out_name || !*out_name) {
		fprintf(stderr, "insn-profile: no out=FILE\n");
		return -1;
	}
	out = fopen(out_name, "w");
	if (!out) {
		fprintf(stderr, "insn-profile: cannot write %s\n", out_name);
		return -1;
	}
	fprintf(out, "# insn-profile: instructions per translation block, per window\n");
	fflush(out);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
