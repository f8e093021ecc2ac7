/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Congestion: which ports of an address cannot take more messages.
 *
 * A congestion map covers the 65536 ports of one address in one network
 * namespace.  A port's bit is set while the socket bound to it holds more
 * than half its receive buffer in queued messages, and cleared once it is
 * back under a quarter.  Senders to a congested port get ENOBUFS (non-
 * blocking) or sleep until the bit clears.  Maps of local addresses are
 * written by the receiving sockets; maps of remote addresses will be
 * written by transports from the peer's congestion updates.
 *
 * A congestion monitor (RDS_CONG_MONITOR) is the part of a socket that
 * remembers the ports it was refused on and is told when they clear.
 */
#ifndef _RDS_ZC_CONG_H
#define _RDS_ZC_CONG_H

#include <linux/list.h>
#include <linux/poll.h>
#include <linux/types.h>

struct in6_addr;
struct net;
struct page;
struct rds_cong_map;

struct rds_cong_monitor {
	struct list_head item;	/* on the monitor list, under its lock */
	struct net	*net;	/* the owning socket's namespace */
	u64		mask;	/* ports refused with ENOBUFS, by bit */
	u64		notify;	/* of those, the ports now uncongested */
	bool		active;	/* RDS_CONG_MONITOR is on */
	/* Called, under the monitor lock, when @notify gains bits. */
	void		(*wake)(struct rds_cong_monitor *mon);
};

struct rds_cong_map *rds_cong_map_get(struct net *net,
				      const struct in6_addr *addr);
void rds_cong_map_put(struct rds_cong_map *map);
void rds_cong_set_port(struct rds_cong_map *map, __be16 port);
void rds_cong_clear_port(struct rds_cong_map *map, __be16 port);
bool rds_cong_test(struct rds_cong_map *map, __be16 port);
bool rds_cong_map_any(struct rds_cong_map *map);
void rds_cong_map_copy_le(struct rds_cong_map *map, struct page **pages,
			  unsigned int nr_pages);
void rds_cong_map_update_le(struct rds_cong_map *map, struct page **pages,
			    unsigned int nr_pages);
int rds_cong_map_wait(struct rds_cong_map *map, __be16 port, bool nonblock,
		      long *timeo, struct rds_cong_monitor *mon);
int rds_cong_wait(struct net *net, const struct in6_addr *addr, __be16 port,
		  bool nonblock, long *timeo, struct rds_cong_monitor *mon);

void rds_cong_monitor_init(struct rds_cong_monitor *mon, struct net *net,
			   void (*wake)(struct rds_cong_monitor *mon));
void rds_cong_monitor_enable(struct rds_cong_monitor *mon, bool on);
u64 rds_cong_monitor_peek(struct rds_cong_monitor *mon);
void rds_cong_monitor_ack(struct rds_cong_monitor *mon, u64 mask);

/**
 * rds_cong_monitor_pending() - is a notification waiting to be read?
 * @mon: the monitor
 *
 * Inline: recvmsg() and poll() ask on every call.
 *
 * Return: true if rds_cong_monitor_peek() would return a nonzero mask.
 */
static inline bool rds_cong_monitor_pending(const struct rds_cong_monitor *mon)
{
	return READ_ONCE(mon->notify) != 0;
}

unsigned int rds_cong_generation(void);
void rds_cong_poll_wait(struct file *file, poll_table *wait);

void rds_cong_exit(void);

#endif /* _RDS_ZC_CONG_H */
