/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rds_info_util.h - read a whole RDS_INFO_* table.  Needs nothing but the
 * C library and <linux/rds.h>, so that tools outside the test frame
 * (rds_state) share it with the tests (through rds_sock_util.h).
 */
#ifndef RDS_INFO_UTIL_H
#define RDS_INFO_UTIL_H

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>

#ifndef SOL_RDS
#define SOL_RDS 276
#endif

/*
 * Read table @name through @fd (any RDS socket).  The kernel answers a
 * buffer that is too small with ENOSPC and the length it needs; ask again
 * with that much and room for a few rows that may come meanwhile, up to 5
 * times.  An ENOSPC that names no length ends the attempts.
 *
 * Return: getsockopt()'s result (the size of one row), or -1 with errno
 * set.  *out gets a malloc()ed buffer or NULL (an empty table read with
 * no buffer), for free(); *len the bytes the kernel filled or asked for.
 */
static inline long rds_info_read(int fd, int name, void **out, socklen_t *len)
{
	void *buf = NULL;
	long ret = -1;
	int tries;

	*len = 0;
	for (tries = 0; tries < 5; tries++) {
		ret = getsockopt(fd, SOL_RDS, name, buf, len);
		if (ret >= 0 || errno != ENOSPC || !*len)
			break;
		*len += 4096;	/* rows that come meanwhile */
		free(buf);
		buf = malloc(*len);
		if (!buf) {
			errno = ENOMEM;
			ret = -1;
			break;
		}
	}
	*out = buf;
	return ret;
}

/*
 * The rows of a message table (RDS_INFO_SEND_MESSAGES,
 * RDS_INFO_RETRANS_MESSAGES, ...) read into @buf, @len bytes, that go
 * from local port @lport to @fport: the first @max are copied to @rows
 * (NULL with @max 0 counts only).  Return: how many there are.
 */
static inline int rds_info_msg_rows(const void *buf, socklen_t len,
				    in_port_t lport, in_port_t fport,
				    struct rds_info_message *rows, int max)
{
	const struct rds_info_message *mi = buf;
	int i, n = 0;

	for (i = 0; i < (int)(len / sizeof(*mi)); i++) {
		if (mi[i].lport != lport || mi[i].fport != fport)
			continue;
		if (n < max)
			rows[n] = mi[i];
		n++;
	}
	return n;
}

#endif /* RDS_INFO_UTIL_H */
