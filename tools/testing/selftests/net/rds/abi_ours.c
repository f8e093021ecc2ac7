// SPDX-License-Identifier: GPL-2.0
/*
 * The project's include/uapi/linux/rds.h, named by path (RDS_UAPI_HEADER,
 * set by the Makefile) so that nothing else can stand in for it.  It comes
 * first, which also proves that it needs no other header before it.
 */
#include RDS_UAPI_HEADER

#define ABI_FILL_FN abi_fill_ours
#include "abi_fill.h"
