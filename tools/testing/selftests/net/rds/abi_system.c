// SPDX-License-Identifier: GPL-2.0
/*
 * The distribution's <linux/rds.h>, as applications are compiled against it.
 * This file is built without the project's include directory on the path.
 * That header uses SIOCPROTOPRIVATE without including <linux/sockios.h>.
 */
#include <linux/sockios.h>
#include <linux/rds.h>

#define ABI_FILL_FN abi_fill_system
#include "abi_fill.h"
