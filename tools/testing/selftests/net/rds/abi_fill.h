/* SPDX-License-Identifier: GPL-2.0 */
/*
 * abi_fill.h - the body of abi_fill_system() and abi_fill_ours().
 *
 * Include it after <linux/rds.h>, with ABI_FILL_FN defined to the name of
 * the function to define.  It expands abi_list.h into calls that append
 * records to the table.
 */
#include <stddef.h>
#include "abi_table.h"

static void abi_add(struct abi_table *t, const char *group, const char *name,
		    long long value)
{
	if (t->n < ABI_MAX_RECORDS)
		t->rec[t->n] = (struct abi_record){ group, name, value };
	t->n++;		/* an overflow shows up as a count mismatch */
}

/* Nonzero if an integer type is signed (written so -Wextra stays quiet). */
#define ABI_SIGNED(type)	((long long)((type)-1 < (type)1))
#define ABI_MEMBER(tag, m)	(((struct tag *)0)->m)

#define ABI_GROUP(title)	group = (title);
#define ABI_CONST(c)							\
	abi_add(t, group, #c, (long long)(c));				\
	abi_add(t, group, "sizeof(" #c ")", sizeof(c));
#define ABI_EXPR(e)							\
	abi_add(t, group, #e, (long long)(e));				\
	abi_add(t, group, "sizeof(" #e ")", sizeof(e));
#define ABI_TYPE(type)							\
	abi_add(t, group, "sizeof(" #type ")", sizeof(type));		\
	abi_add(t, group, "alignof(" #type ")", __alignof__(type));	\
	abi_add(t, group, "signed(" #type ")", ABI_SIGNED(type));
#define ABI_STRUCT(tag)							\
	group = "struct " #tag;						\
	abi_add(t, group, "sizeof", sizeof(struct tag));		\
	abi_add(t, group, "alignof", __alignof__(struct tag));
#define ABI_FIELD(tag, m)						\
	abi_add(t, group, #m " offsetof", offsetof(struct tag, m));	\
	abi_add(t, group, #m " sizeof", sizeof(ABI_MEMBER(tag, m)));
#define ABI_SCALAR(tag, m)						\
	ABI_FIELD(tag, m)						\
	abi_add(t, group, #m " signed",					\
		ABI_SIGNED(__typeof__(ABI_MEMBER(tag, m))));
#define ABI_ARRAY(tag, m)						\
	ABI_FIELD(tag, m)						\
	abi_add(t, group, #m "[0] sizeof", sizeof(ABI_MEMBER(tag, m)[0]));

void ABI_FILL_FN(struct abi_table *t)
{
	const char *group = "";

	t->n = 0;
#include "abi_list.h"
}
