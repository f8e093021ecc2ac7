// SPDX-License-Identifier: GPL-2.0
/*
 * rds-zc-info - print the RDS_INFO_* tables of the loaded RDS module, as
 * rds-info of rds-tools does, and this project's own counters grouped.
 *
 *   rds-zc-info [-6v] [-cknrstITz]
 *
 * Each option selects a table; none selects them all.  The tables are read
 * through any AF_RDS socket with getsockopt(SOL_RDS, RDS_INFO_*): a first
 * call with no room fails with ENOSPC and says how many bytes the table
 * needs; the call is repeated with that much room until the table fits
 * (it may grow between the calls).  A successful call returns the size of
 * one row, which may differ from this program's struct: rows are copied
 * field by field up to the smaller of the two sizes.
 *
 * Works against the distribution's rds module too: a table that module
 * lacks (ENOPROTOOPT) and project counters it does not export are reported
 * as "not provided by this module", which is no error.
 *
 * Exit status: 0 when every selected table was read (or is not provided),
 * 1 when no RDS socket could be opened or a table could not be read, 2 on
 * bad usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/rds.h>

#ifndef AF_RDS
#define AF_RDS		21
#endif
#ifndef SOL_RDS
#define SOL_RDS		276
#endif

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))
#define READ_TRIES	16	/* a table that grows this often is given up */

static int verbose;
static bool six;	/* -6: the RDS6_INFO_* tables, IPv6 rows too */

/* ---------------------------------------------------------- table reading */

struct table {
	void		*buf;
	socklen_t	len;	/* bytes of rows at buf */
	size_t		each;	/* the kernel's row size */
	bool		v6;	/* rows of an RDS6_INFO_* table */
};

/*
 * Read the whole table @name into @t.  Return: 0, -ENOPROTOOPT for a table
 * the module does not have, or another negative errno.
 */
static int table_read(int fd, int name, struct table *t)
{
	socklen_t len = 0;
	void *buf = NULL, *nbuf;
	int tries, ret;

	memset(t, 0, sizeof(*t));
	for (tries = 0; tries < READ_TRIES; tries++) {
		ret = getsockopt(fd, SOL_RDS, name, buf, &len);
		if (ret >= 0) {
			if (len && ret <= 0) {
				free(buf);
				return -EPROTO;	/* rows of no size */
			}
			t->buf = buf;
			t->len = len;
			t->each = ret;
			return 0;
		}
		ret = -errno;
		if (ret != -ENOSPC || !len)
			break;
		/* len is what the table needs now; ask again with that. */
		nbuf = realloc(buf, len);
		if (!nbuf) {
			ret = -ENOMEM;
			break;
		}
		buf = nbuf;
	}
	if (tries == READ_TRIES)
		ret = -EAGAIN;
	free(buf);
	return ret;
}

static size_t table_rows(const struct table *t)
{
	return t->each ? t->len / t->each : 0;
}

/* Row @i of @t into @row, @size bytes: the rest zeroed if the kernel's is
 * shorter, the kernel's extra bytes dropped if it is longer.
 */
static void table_row(const struct table *t, size_t i, void *row, size_t size)
{
	size_t n = t->each < size ? t->each : size;

	memset(row, 0, size);
	memcpy(row, (const char *)t->buf + i * t->each, n);
}

/* ------------------------------------------------------------- formatting */

/* The width of an address column: IPv4, or any with -6. */
#define ADDR_W		(six ? INET6_ADDRSTRLEN - 1 : INET_ADDRSTRLEN - 1)

/*
 * An address as text: an IPv4-mapped one (as RDS6_INFO_* rows carry IPv4
 * addresses) in the dotted form, :: as 0.0.0.0 in the IPv4 tables.  A
 * ring of buffers, so that one printf() may use several.
 */
static const char *ip(const struct in6_addr *a)
{
	static char ring[8][INET6_ADDRSTRLEN];
	static unsigned int next;
	char *s = ring[next++ % ARRAY_LEN(ring)];
	const char *ok;

	if (IN6_IS_ADDR_V4MAPPED(a) || (!six && IN6_IS_ADDR_UNSPECIFIED(a)))
		ok = inet_ntop(AF_INET, &a->s6_addr[12], s, INET6_ADDRSTRLEN);
	else
		ok = inet_ntop(AF_INET6, a, s, INET6_ADDRSTRLEN);
	if (!ok)
		snprintf(s, INET6_ADDRSTRLEN, "?");
	return s;
}

/* An IPv4 address of an RDS_INFO_* row as the RDS6_INFO_* row has it. */
static struct in6_addr map4(uint32_t addr)
{
	struct in6_addr a;

	memset(&a, 0, sizeof(a));
	if (addr) {
		a.s6_addr[10] = 0xff;
		a.s6_addr[11] = 0xff;
		memcpy(&a.s6_addr[12], &addr, sizeof(addr));
	}
	return a;
}

/* A 16-byte IB GID in the colon form of IPv6 addresses. */
static const char *gid(const uint8_t *g)
{
	static char ring[4][INET6_ADDRSTRLEN];
	static unsigned int next;
	char *s = ring[next++ % ARRAY_LEN(ring)];

	if (!inet_ntop(AF_INET6, g, s, INET6_ADDRSTRLEN))
		snprintf(s, INET6_ADDRSTRLEN, "?");
	return s;
}

/* A NUL-terminated copy of a fixed-size name field. */
static void name_copy(char *dst, size_t size, const uint8_t *src, size_t n)
{
	size_t len = strnlen((const char *)src, n);

	if (len >= size)
		len = size - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

/* ---------------------------------------------------------------- tables */

static void print_counters(const struct table *t)
{
	struct rds_info_counter c;
	char name[sizeof(c.name) + 1];
	size_t i;

	printf("%-32s %20s\n", "CounterName", "Value");
	for (i = 0; i < table_rows(t); i++) {
		table_row(t, i, &c, sizeof(c));
		name_copy(name, sizeof(name), c.name, sizeof(c.name));
		printf("%-32s %20llu\n", name, (unsigned long long)c.value);
	}
}

/* Row @i of a socket table, in the RDS6_INFO_SOCKETS form. */
static void socket_row(const struct table *t, size_t i,
		       struct rds6_info_socket *s6)
{
	struct rds_info_socket s;

	if (t->v6) {
		table_row(t, i, s6, sizeof(*s6));
		return;
	}
	table_row(t, i, &s, sizeof(s));
	s6->sndbuf = s.sndbuf;
	s6->bound_addr = map4(s.bound_addr);
	s6->connected_addr = map4(s.connected_addr);
	s6->bound_port = s.bound_port;
	s6->connected_port = s.connected_port;
	s6->rcvbuf = s.rcvbuf;
	s6->inum = s.inum;
}

static void print_sockets(const struct table *t)
{
	struct rds6_info_socket s;
	struct in6_addr b, c;
	size_t i;

	printf("%*s %5s %*s %5s %10s %10s %10s\n", ADDR_W, "BoundAddr",
	       "BPort", ADDR_W, "ConnAddr", "CPort", "SndBuf", "RcvBuf",
	       "Inode");
	for (i = 0; i < table_rows(t); i++) {
		socket_row(t, i, &s);
		b = s.bound_addr;
		c = s.connected_addr;
		printf("%*s %5u %*s %5u %10u %10u %10llu\n",
		       ADDR_W, ip(&b), ntohs(s.bound_port),
		       ADDR_W, ip(&c), ntohs(s.connected_port),
		       (unsigned int)s.sndbuf, (unsigned int)s.rcvbuf,
		       (unsigned long long)s.inum);
	}
}

/*
 * Row @i of a connection table, in the RDS6_INFO_CONNECTIONS form, with
 * its type of service in *@tos (the IPv6 row has none: 0).
 */
static void connection_row(const struct table *t, size_t i,
			   struct rds6_info_connection *c6, unsigned int *tos)
{
	struct rds_info_connection c;

	*tos = 0;
	if (t->v6) {
		table_row(t, i, c6, sizeof(*c6));
		return;
	}
	table_row(t, i, &c, sizeof(c));
	c6->next_tx_seq = c.next_tx_seq;
	c6->next_rx_seq = c.next_rx_seq;
	c6->laddr = map4(c.laddr);
	c6->faddr = map4(c.faddr);
	memcpy(c6->transport, c.transport, sizeof(c6->transport));
	c6->flags = c.flags;
	*tos = c.tos;
}

static void print_connections(const struct table *t)
{
	struct rds6_info_connection c;
	char tname[TRANSNAMSIZ + 1];
	struct in6_addr l, f;
	unsigned int tos;
	size_t i;

	printf("%*s %*s %4s %16s %16s %4s%s\n", ADDR_W, "LocalAddr", ADDR_W,
	       "RemoteAddr", "Tos", "NextTX", "NextRX", "Flgs",
	       verbose ? " Transport" : "");
	for (i = 0; i < table_rows(t); i++) {
		connection_row(t, i, &c, &tos);
		name_copy(tname, sizeof(tname), c.transport,
			  sizeof(c.transport));
		l = c.laddr;
		f = c.faddr;
		printf("%*s %*s %4u %16llu %16llu %c%c%c%s%s\n",
		       ADDR_W, ip(&l), ADDR_W, ip(&f), tos,
		       (unsigned long long)c.next_tx_seq, (unsigned long long)c.next_rx_seq,
		       c.flags & RDS_INFO_CONNECTION_FLAG_SENDING ? 's' : '-',
		       c.flags & RDS_INFO_CONNECTION_FLAG_CONNECTING ? 'c' : '-',
		       c.flags & RDS_INFO_CONNECTION_FLAG_CONNECTED ? 'C' : '-',
		       verbose ? "  " : "", verbose ? tname : "");
	}
}

/* Row @i of a message table, in the RDS6_INFO_*_MESSAGES form. */
static void message_row(const struct table *t, size_t i,
			struct rds6_info_message *m6)
{
	struct rds_info_message m;

	if (t->v6) {
		table_row(t, i, m6, sizeof(*m6));
		return;
	}
	table_row(t, i, &m, sizeof(m));
	m6->seq = m.seq;
	m6->len = m.len;
	m6->laddr = map4(m.laddr);
	m6->faddr = map4(m.faddr);
	m6->lport = m.lport;
	m6->fport = m.fport;
	m6->flags = m.flags;
	m6->tos = m.tos;
}

static void print_messages(const struct table *t)
{
	struct rds6_info_message m;
	struct in6_addr l, f;
	size_t i;

	printf("%*s %5s %*s %5s %4s %16s %10s\n", ADDR_W, "LocalAddr",
	       "LPort", ADDR_W, "RemoteAddr", "RPort", "Tos", "Seq", "Bytes");
	for (i = 0; i < table_rows(t); i++) {
		message_row(t, i, &m);
		l = m.laddr;
		f = m.faddr;
		printf("%*s %5u %*s %5u %4u %16llu %10u",
		       ADDR_W, ip(&l), ntohs(m.lport), ADDR_W, ip(&f),
		       ntohs(m.fport), m.tos, (unsigned long long)m.seq,
		       (unsigned int)m.len);
		if (verbose && m.flags)
			printf(" %s%s",
			       m.flags & RDS_INFO_MESSAGE_FLAG_ACK ? "ack " : "",
			       m.flags & RDS_INFO_MESSAGE_FLAG_FAST_ACK ?
			       "fast-ack" : "");
		putchar('\n');
	}
}

/* Row @i of a TCP socket table, in the RDS6_INFO_TCP_SOCKETS form. */
static void tcp_socket_row(const struct table *t, size_t i,
			   struct rds6_info_tcp_socket *s6)
{
	struct rds_info_tcp_socket s;

	if (t->v6) {
		table_row(t, i, s6, sizeof(*s6));
		return;
	}
	table_row(t, i, &s, sizeof(s));
	s6->local_addr = map4(s.local_addr);
	s6->local_port = s.local_port;
	s6->peer_addr = map4(s.peer_addr);
	s6->peer_port = s.peer_port;
	s6->hdr_rem = s.hdr_rem;
	s6->data_rem = s.data_rem;
	s6->last_sent_nxt = s.last_sent_nxt;
	s6->last_expected_una = s.last_expected_una;
	s6->last_seen_una = s.last_seen_una;
}

static void print_tcp_sockets(const struct table *t)
{
	struct rds6_info_tcp_socket s;
	struct in6_addr l, p;
	size_t i;

	printf("%*s %5s %*s %5s %10s %10s %10s %10s %10s\n",
	       ADDR_W, "LocalAddr", "LPort", ADDR_W, "RemoteAddr", "RPort",
	       "HdrRemain", "DataRemain", "SentNxt", "ExpectUna", "SeenUna");
	for (i = 0; i < table_rows(t); i++) {
		tcp_socket_row(t, i, &s);
		l = s.local_addr;
		p = s.peer_addr;
		printf("%*s %5u %*s %5u %10llu %10llu %10u %10u %10u\n",
		       ADDR_W, ip(&l), ntohs(s.local_port),
		       ADDR_W, ip(&p), ntohs(s.peer_port),
		       (unsigned long long)s.hdr_rem, (unsigned long long)s.data_rem,
		       (unsigned int)s.last_sent_nxt,
		       (unsigned int)s.last_expected_una,
		       (unsigned int)s.last_seen_una);
	}
}

/* Row @i of an IB connection table, in the RDS6_INFO_IB_CONNECTIONS form. */
static void ib_connection_row(const struct table *t, size_t i,
			      struct rds6_info_rdma_connection *c6)
{
	struct rds_info_rdma_connection c;

	if (t->v6) {
		table_row(t, i, c6, sizeof(*c6));
		return;
	}
	table_row(t, i, &c, sizeof(c));
	c6->src_addr = map4(c.src_addr);
	c6->dst_addr = map4(c.dst_addr);
	memcpy(c6->src_gid, c.src_gid, sizeof(c6->src_gid));
	memcpy(c6->dst_gid, c.dst_gid, sizeof(c6->dst_gid));
	c6->max_send_wr = c.max_send_wr;
	c6->max_recv_wr = c.max_recv_wr;
	c6->max_send_sge = c.max_send_sge;
	c6->rdma_mr_max = c.rdma_mr_max;
	c6->rdma_mr_size = c.rdma_mr_size;
	c6->tos = c.tos;
	c6->sl = c.sl;
	c6->cache_allocs = c.cache_allocs;
}

static void print_ib_connections(const struct table *t)
{
	struct rds6_info_rdma_connection c;
	size_t i;

	printf("%*s %*s %4s %3s %32s %32s\n", ADDR_W, "LocalAddr", ADDR_W,
	       "RemoteAddr", "Tos", "SL", "LocalGID", "RemoteGID");
	for (i = 0; i < table_rows(t); i++) {
		ib_connection_row(t, i, &c);
		printf("%*s %*s %4u %3u %32s %32s\n",
		       ADDR_W, ip(&c.src_addr), ADDR_W, ip(&c.dst_addr), c.tos,
		       c.sl,
		       gid(c.src_gid), gid(c.dst_gid));
		if (!verbose)
			continue;
		printf("    send_wr %u recv_wr %u send_sge %u",
		       c.max_send_wr, c.max_recv_wr, c.max_send_sge);
		printf(" rdma_mr_max %u rdma_mr_size %u cache_allocs %u\n",
		       c.rdma_mr_max, c.rdma_mr_size, c.cache_allocs);
	}
}

/* ------------------------------------------------------ project counters */

struct counter_desc {
	const char *name;	/* as RDS_INFO_COUNTERS names it */
	const char *what;
};

struct counter_group {
	const char *title;
	const struct counter_desc *counters;
	size_t nr;
};

static const struct counter_desc mr_pool_counters[] = {
	{ "rdma_mr_created", "MRs registered for users" },
	{ "rdma_mr_released", "MRs released by users" },
	{ "ib_mr_pool_alloc", "pool MRs allocated anew" },
	{ "ib_mr_pool_reuse", "pool MRs reused" },
	{ "ib_mr_pool_wait", "waits for a free pool MR" },
	{ "ib_mr_pool_exhausted", "registrations failed: pool empty" },
	{ "ib_mr_registered", "fast registrations posted" },
	{ "ib_mr_reg_chained", "registrations chained to a send" },
	{ "ib_mr_reg_unchained", "MAP registrations waited for (device cannot chain)" },
	{ "ib_mr_invalidate_posted", "invalidations posted" },
	{ "ib_mr_invalidate_nowait", "of those, posted with no worker" },
	{ "ib_mr_invalidated", "invalidations completed" },
	{ "release_run_by_owner", "unpin batches run by the owner" },
	{ "release_run_by_worker", "unpin batches left to a worker" },
	{ "ib_mr_reg_qp_full", "registration QP full" },
	{ "ib_mr_reg_qp_recovered", "registration QP recovered" },
	{ "ib_mr_reg_bounced", "registrations refused: bounce buffers" },
};

static const struct counter_desc rdma_op_counters[] = {
	{ "rdma_ops", "RDMA operations submitted" },
	{ "atomic_ops", "atomic operations submitted" },
	{ "ib_tx_rdma_wrs", "RDMA work requests posted" },
	{ "ib_tx_atomic_wrs", "atomic work requests posted" },
	{ "rdma_done_success", "ended: success" },
	{ "rdma_done_remote_error", "ended: remote access error" },
	{ "rdma_done_canceled", "ended: canceled before it went out" },
	{ "rdma_ops_dropped", "ended: dropped with the connection" },
	{ "rdma_done_other_error", "ended: other error" },
	{ "rdma_notify_queued", "statuses queued to the socket" },
	{ "rdma_note_refused", "sends refused: notes over SO_RCVBUF" },
};

static const struct counter_desc reconnect_counters[] = {
	{ "conn_created", "connections created" },
	{ "conn_connect", "connects started" },
	{ "conn_accept", "connects accepted" },
	{ "conn_up", "connections up" },
	{ "conn_drop", "connections dropped" },
	{ "conn_ack_timeout", "dropped: no ACK in time" },
	{ "conn_reconnect_queued", "reconnects queued" },
	{ "conn_race_yield", "connect races yielded" },
	{ "conn_race_refuse", "connect races refused" },
	{ "conn_race_refused", "connect races the peer refused too" },
	{ "ib_conn_refused_addr", "IB connects refused: address" },
	{ "ib_conn_refused_gid", "IB connects refused: GID" },
	{ "conn_refused_live", "connects refused: connection up" },
	{ "conn_refused_limit", "connections refused: conn_max*" },
	{ "conn_reaped", "connections reaped" },
	{ "conn_reaped_idle", "of those, idle ones that had been used" },
};

static const struct counter_group groups[] = {
	{ "MR pool", mr_pool_counters, ARRAY_LEN(mr_pool_counters) },
	{ "RDMA operations by status", rdma_op_counters,
	  ARRAY_LEN(rdma_op_counters) },
	{ "Reconnects", reconnect_counters, ARRAY_LEN(reconnect_counters) },
};

/* Look up counter @name in @t.  Return: whether it is there. */
static bool counter_find(const struct table *t, const char *name,
			 unsigned long long *value)
{
	struct rds_info_counter c;
	char cname[sizeof(c.name) + 1];
	size_t i;

	for (i = 0; i < table_rows(t); i++) {
		table_row(t, i, &c, sizeof(c));
		name_copy(cname, sizeof(cname), c.name, sizeof(c.name));
		if (!strcmp(cname, name)) {
			*value = c.value;
			return true;
		}
	}
	return false;
}

/* Which RDS module is loaded, from sysfs; NULL if neither is known. */
static const char *module_name(void)
{
	if (!access("/sys/module/rds_zc", F_OK))
		return "rds_zc";
	if (!access("/sys/module/rds", F_OK))
		return "rds";
	return NULL;
}

static void print_group(const struct table *t, const struct counter_group *g)
{
	unsigned long long v, created, released;
	bool have_created, have_released;
	size_t i, found = 0;

	printf("%s:\n", g->title);
	for (i = 0; i < g->nr; i++) {
		if (counter_find(t, g->counters[i].name, &v)) {
			printf("  %-26s %20llu  %s\n",
			       g->counters[i].name, v, g->counters[i].what);
			found++;
		} else if (verbose) {
			printf("  %-26s %20s  not provided by this module\n",
			       g->counters[i].name, "-");
		}
	}
	if (!found) {
		printf("  not provided by this module\n");
		return;
	}
	if (g->counters != mr_pool_counters)
		return;
	have_created = counter_find(t, "rdma_mr_created", &created);
	have_released = counter_find(t, "rdma_mr_released", &released);
	if (have_created && have_released)
		printf("  %-26s %20llu  %s\n", "mr_in_use",
		       created - released, "rdma_mr_created - rdma_mr_released");
}

/* The project's counters, grouped; @t is RDS_INFO_COUNTERS. */
static void print_project(const struct table *t)
{
	const char *mod = module_name();
	size_t i;

	if (!mod)
		printf("Module: unknown (neither rds_zc nor rds in /sys/module)\n");
	else if (!strcmp(mod, "rds_zc"))
		printf("Module: rds_zc (this project's)\n");
	else
		printf("Module: %s (not this project's: its counters are in -c)\n",
		       mod);
	for (i = 0; i < ARRAY_LEN(groups); i++)
		print_group(t, &groups[i]);
}

/* --------------------------------------------------------------- sources */

struct source {
	char		opt;
	int		name;		/* RDS_INFO_* */
	int		name6;		/* its RDS6_INFO_* twin, 0 if none */
	const char	*title;
	const char	*help;
	void		(*print)(const struct table *t);
	bool		selected;
};

static struct source sources[] = {
	{ 'c', RDS_INFO_COUNTERS, 0, "Counters", "global counters",
	  print_counters, false },
	{ 'k', RDS_INFO_SOCKETS, RDS6_INFO_SOCKETS, "RDS Sockets", "sockets",
	  print_sockets, false },
	{ 'n', RDS_INFO_CONNECTIONS, RDS6_INFO_CONNECTIONS,
	  "RDS Connections", "connections",
	  print_connections, false },
	{ 'r', RDS_INFO_RECV_MESSAGES, RDS6_INFO_RECV_MESSAGES,
	  "Receive Message Queue",
	  "messages in the sockets' receive queues", print_messages, false },
	{ 's', RDS_INFO_SEND_MESSAGES, RDS6_INFO_SEND_MESSAGES,
	  "Send Message Queue",
	  "messages in the connections' send queues", print_messages, false },
	{ 't', RDS_INFO_RETRANS_MESSAGES, RDS6_INFO_RETRANS_MESSAGES,
	  "Retransmit Message Queue",
	  "messages sent but not yet acknowledged", print_messages, false },
	{ 'T', RDS_INFO_TCP_SOCKETS, RDS6_INFO_TCP_SOCKETS, "TCP Connections",
	  "TCP transport sockets", print_tcp_sockets, false },
	{ 'I', RDS_INFO_IB_CONNECTIONS, RDS6_INFO_IB_CONNECTIONS,
	  "RDS IB Connections",
	  "IB transport connections", print_ib_connections, false },
	{ 'z', RDS_INFO_COUNTERS, 0, "RDS ZC Project Counters",
	  "this project's counters: MR pool, RDMA operations, reconnects",
	  print_project, false },
};

/* Print one source.  Return: 0, or 1 if its table could not be read. */
static int show(int fd, const struct source *src, bool first)
{
	struct table t;
	int ret;

	bool v6 = six && src->name6;

	printf("%s%s%s:\n", first ? "" : "\n", src->title,
	       v6 ? " (IPv4 and IPv6)" : "");
	ret = table_read(fd, v6 ? src->name6 : src->name, &t);
	if (ret == -ENOPROTOOPT) {
		printf("not provided by this module\n");
		return 0;
	}
	if (ret) {
		fprintf(stderr, "rds-zc-info: %s: %s\n", src->title,
			strerror(-ret));
		return 1;
	}
	t.v6 = v6;
	src->print(&t);
	free(t.buf);
	return 0;
}

static void print_usage(FILE *f)
{
	size_t i;

	fprintf(f,
		"NAME\n"
		"    rds-zc-info - print what the RDS module knows: counters,\n"
		"    sockets, connections, message queues, IB connections\n"
		"\n"
		"SYNOPSIS\n"
		"    rds-zc-info [-6v] [-cknrstITz]\n"
		"    rds-zc-info --help\n"
		"\n"
		"DESCRIPTION\n"
		"    Reads the RDS_INFO_* tables of the loaded RDS module (this\n"
		"    project's rds_zc or the distribution's rds) through an AF_RDS\n"
		"    socket, as rds-info of rds-tools does, and prints each as a\n"
		"    table.  The options choose the tables; with none, all are\n"
		"    printed.  A table the module lacks prints \"not provided by\n"
		"    this module\".  Addresses are IPv4 (the RDS_INFO_* tables);\n"
		"    with -6 the RDS6_INFO_* tables are read, which list IPv6\n"
		"    sockets, connections and messages too (without a type of\n"
		"    service for connections: 0).  GIDs are in the colon form of\n"
		"    IPv6 addresses.  Connection flags: s sending, c connecting,\n"
		"    C connected.\n"
		"\n"
		"OPTIONS\n");
	for (i = 0; i < ARRAY_LEN(sources); i++)
		fprintf(f, "    -%c  %s\n", sources[i].opt, sources[i].help);
	fprintf(f,
		"    -6  the RDS6_INFO_* tables: IPv6 rows as well as IPv4 ones\n"
		"    -v  verbose: transport names, message flags, IB queue sizes,\n"
		"        project counters the module does not provide\n"
		"    -h, --help  this text\n"
		"\n"
		"EXIT STATUS\n"
		"    0 when every chosen table was printed or is not provided by\n"
		"    the module, 1 when no RDS socket could be opened or a table\n"
		"    could not be read, 2 on bad usage.\n");
}

int main(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char optstring[ARRAY_LEN(sources) + 4] = "6vh";
	bool any = false, first = true;
	size_t i, n = strlen(optstring);
	int c, fd, bad = 0;

	for (i = 0; i < ARRAY_LEN(sources); i++)
		optstring[n++] = sources[i].opt;
	optstring[n] = '\0';

	while ((c = getopt_long(argc, argv, optstring, long_opts, NULL)) != -1) {
		if (c == 'v') {
			verbose++;
			continue;
		}
		if (c == '6') {
			six = true;
			continue;
		}
		if (c == 'h') {
			print_usage(stdout);
			return 0;
		}
		for (i = 0; i < ARRAY_LEN(sources); i++)
			if (sources[i].opt == c)
				break;
		if (i == ARRAY_LEN(sources)) {
			fprintf(stderr, "(rds-zc-info --help for usage)\n");
			return 2;
		}
		sources[i].selected = true;
		any = true;
	}
	if (optind < argc) {
		fprintf(stderr, "rds-zc-info: unexpected argument '%s'\n",
			argv[optind]);
		fprintf(stderr, "(rds-zc-info --help for usage)\n");
		return 2;
	}

	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (fd < 0) {
		fprintf(stderr, "rds-zc-info: no RDS socket: %s%s\n",
			strerror(errno), errno == EAFNOSUPPORT ?
			" (is an RDS module loaded?)" : "");
		return 1;
	}
	for (i = 0; i < ARRAY_LEN(sources); i++) {
		if (any && !sources[i].selected)
			continue;
		bad |= show(fd, &sources[i], first);
		first = false;
	}
	close(fd);
	return bad;
}
