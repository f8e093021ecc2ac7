/* SPDX-License-Identifier: GPL-2.0 */
/*
 * the body of abi_fill_system() and abi_fill_ours().
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

static void abi_add2(struct abi_table *t, const char *group,
		     const char *name1, long long value1,
		     const char *name2, long long value2)
{
	abi_add(t, group, name1, value1);
	abi_add(t, group, name2, value2);
}

/* Nonzero if an integer type is signed (written so -Wextra stays quiet). */
#define ABI_SIGNED(type)	((long long)((type)~0 < (type)1))
#define ABI_MEMBER(type, m)	(((struct type *)0)->m)

#define ABI_GROUP(title)	(group = (title))
#define ABI_CONST(c)							\
	abi_add2(t, group, #c, (long long)(c), "sizeof(" #c ")", sizeof(c))
#define ABI_EXPR(e)							\
	abi_add2(t, group, #e, (long long)(e), "sizeof(" #e ")", sizeof(e))
#define ABI_TYPE(type)							\
	do {								\
		abi_add2(t, group, "sizeof(" #type ")", sizeof(type),	\
			 "alignof(" #type ")", __alignof__(type));	\
		abi_add(t, group, "signed(" #type ")", ABI_SIGNED(type)); \
	} while (0)
#define ABI_STRUCT(type)						\
	do {								\
		group = "struct " #type;				\
		abi_add2(t, group, "sizeof", sizeof(struct type),	\
			 "alignof", __alignof__(struct type));		\
	} while (0)
#define ABI_FIELD(type, m)						\
	abi_add2(t, group, #m " offsetof", offsetof(struct type, m),	\
		 #m " sizeof", sizeof(ABI_MEMBER(type, m)))
#define ABI_SCALAR(type, m)						\
	do {								\
		ABI_FIELD(type, m);					\
		abi_add(t, group, #m " signed",				\
			ABI_SIGNED(__typeof__(ABI_MEMBER(type, m))));	\
	} while (0)
#define ABI_ARRAY(type, m)						\
	do {								\
		ABI_FIELD(type, m);					\
		abi_add(t, group, #m "[0] sizeof",			\
			sizeof(ABI_MEMBER(type, m)[0]));		\
	} while (0)

void ABI_FILL_FN(struct abi_table *t)
{
	const char *group = "";

	t->n = 0;
#include "abi_list.h"
}
