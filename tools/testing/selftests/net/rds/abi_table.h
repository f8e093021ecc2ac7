/* SPDX-License-Identifier: GPL-2.0 */
/*
 * abi_table.h - the table abi_check compares: one record per number that
 * <linux/rds.h> fixes (a constant's value, a struct's size, a member's
 * offset...).  abi_sys.c fills one from the distribution's header and
 * abi_ours.c one from ours; abi_check.c, which includes no RDS header at
 * all, compares them.
 */
#ifndef RDS_ABI_TABLE_H
#define RDS_ABI_TABLE_H

#define ABI_MAX_RECORDS	2048

struct abi_record {
	const char *group;	/* the TAP test it belongs to */
	const char *name;	/* e.g. "cswp.swap offsetof" */
	long long value;
};

struct abi_table {
	int n;
	struct abi_record rec[ABI_MAX_RECORDS];
};

void abi_fill_system(struct abi_table *t);
void abi_fill_ours(struct abi_table *t);

#endif /* RDS_ABI_TABLE_H */
