// SPDX-License-Identifier: GPL-2.0
/*
 * abi_check - prove that the project's <linux/rds.h> is binary-identical to
 * the distribution's.
 *
 * abi_system.c and abi_ours.c expand the same list (abi_list.h) against
 * the two headers into tables of numbers: every constant's value and size,
 * every struct's size and alignment, every member's offset, size and
 * signedness.  This program compares the tables and prints one TAP test per
 * struct and one per group of constants, with every differing number.
 * It needs no RDS module and runs anywhere.
 *
 * Usage: abi_check [-v]	(-v: print every record compared)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "abi_table.h"

static struct abi_table sys_tab, our_tab;

/* Records of one group are contiguous: the list is expanded in order. */
static int group_end(const struct abi_table *t, int start)
{
	int i = start;

	while (i < t->n && !strcmp(t->rec[i].group, t->rec[start].group))
		i++;
	return i;
}

int main(int argc, char **argv)
{
	int verbose = 0, ngroups = 0, failed = 0, num = 0;
	int opt, i, end;

	while ((opt = getopt(argc, argv, "v")) != -1) {
		if (opt != 'v') {
			fprintf(stderr, "usage: %s [-v]\n", argv[0]);
			return 2;
		}
		verbose = 1;
	}

	abi_fill_system(&sys_tab);
	abi_fill_ours(&our_tab);

	/* Both tables come from one list, so they must line up. */
	if (sys_tab.n != our_tab.n || sys_tab.n > ABI_MAX_RECORDS) {
		printf("Bail out! tables differ in length: %d and %d (max %d)\n",
		       sys_tab.n, our_tab.n, ABI_MAX_RECORDS);
		return 1;
	}
	for (i = 0; i < sys_tab.n; i++) {
		if (strcmp(sys_tab.rec[i].group, our_tab.rec[i].group) ||
		    strcmp(sys_tab.rec[i].name, our_tab.rec[i].name)) {
			printf("Bail out! record %d: '%s: %s' against '%s: %s'\n",
			       i, sys_tab.rec[i].group, sys_tab.rec[i].name,
			       our_tab.rec[i].group, our_tab.rec[i].name);
			return 1;
		}
	}

	for (i = 0; i < sys_tab.n; i = group_end(&sys_tab, i))
		ngroups++;
	printf("1..%d\n", ngroups);

	for (i = 0; i < sys_tab.n; i = end) {
		int bad = 0, j;

		end = group_end(&sys_tab, i);
		for (j = i; j < end; j++) {
			const struct abi_record *s = &sys_tab.rec[j];
			const struct abi_record *o = &our_tab.rec[j];

			if (s->value != o->value) {
				printf("# %s: %s: distribution %lld (%#llx), ours %lld (%#llx)\n",
				       s->group, s->name, s->value,
				       (unsigned long long)s->value, o->value,
				       (unsigned long long)o->value);
				bad++;
			} else if (verbose) {
				printf("# %s: %s = %lld\n", s->group, s->name,
				       s->value);
			}
		}
		printf("%sok %d - %s (%d values)\n", bad ? "not " : "", ++num,
		       sys_tab.rec[i].group, end - i);
		failed += !!bad;
	}
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n",
	       ngroups - failed, failed);
	return failed ? 1 : 0;
}
