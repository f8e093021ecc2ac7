// SPDX-License-Identifier: GPL-2.0
/*
 * rds_remote_flow.c - rds_remote's cases of flow control and of the
 * connection's life: credits, the connect race, ping, idle ACKs,
 * messages held back.
 */
#include "rds_remote.h"

#include <net/if.h>
#include <stdbool.h>
#include <sys/ioctl.h>

/* ------------------------------------------------------- flow control */

/*
 * Run after the traffic cases, on the counters they left.  Our module
 * offers credits, and returns them (ib_tx_credit_updates) to every peer;
 * it spends credits only when the peer offered some, which only our module
 * does.  With RDS_CREDITS set (run_remote.sh --credits N: our receive ring
 * is N buffers, the distribution's net.rds.ib.flow_control is 1), the
 * cases above had to stop for credits many times: our sender then counts
 * ib_tx_credit_stall, the distribution's ib_tx_throttle.  That they all
 * passed shows the credits were returned; that these count shows they
 * were enforced.
 */
void test_flow_control(void)
{
	const char *me = modules_of(node), *peer = modules_of(peer_node);
	int credits = getenv("RDS_CREDITS") ? atoi(getenv("RDS_CREDITS")) : 0;
	int fd = rds_socket();

	if (!strcmp(me, "ours")) {
		long long fc = rds_counter(fd, "ib_conn_flow_control");
		long long upd = rds_counter(fd, "ib_tx_credit_updates");
		long long stall = rds_counter(fd, "ib_tx_credit_stall");

		rt_diag("ib_conn_flow_control %lld", fc);
		rt_diag("ib_tx_credit_updates %lld", upd);
		rt_diag("ib_tx_credit_stall %lld", stall);
		EXPECT_TRUE(upd > 0, "no credits returned to the peer (%lld)", upd);
		if (!strcmp(peer, "ours")) {
			EXPECT_TRUE(fc > 0, "no connection with flow control (%lld)", fc);
			if (credits)
				EXPECT_TRUE(stall > 0, "no credit stall, ring %d",
					    credits);
		} else {
			EXPECT_EQ(fc, 0);	/* the distribution offers none */
		}
	} else if (!strcmp(me, "distro") && credits && !strcmp(peer, "ours")) {
		long long thr = rds_counter(fd, "ib_tx_throttle");

		rt_diag("distribution: ib_tx_throttle %lld", thr);
		EXPECT_TRUE(thr > 0, "the distribution never waited for our credits (%lld)", thr);
	} else {
		close(fd);
		sync_peer("done");
		rt_skip("the distribution (%s against %s%s) counts nothing of flow control",
			me, peer, credits ? " with credits" : "");
	}
	close(fd);
	sync_peer("done");
}

/* Whether this node's address is the lower one, which yields a race. */
static bool self_is_lower(void)
{
	return ntohl(addr_self.s_addr) < ntohl(addr_peer.s_addr);
}

/*
 * Both ends open a connection at the same moment over a slow link: each
 * sends a message to the other on a TOS no case used before (fresh_tos()),
 * so that on both sides the connection is new and down, with a one-way
 * delay of DUEL_DELAY_MS on both links (tc netem), so that each request
 * arrives while its receiver is still connecting: a connect race, every
 * time: the two sends are as far apart as the control connection's
 * jitter, milliseconds (run_duel()).  The messages must arrive.
 */
#define DUEL_DELAY_MS	400
#define DUEL_WAIT_MS	90000

/*
 * Set the delay of a netem on this node's link to the peer.  The first
 * call, made while the link is quiet, installs the netem; later calls
 * change it in place, because adding or deleting a root qdisc under RDS
 * traffic can move an rxe QP to the error state on 6.12 (lib_faults.sh,
 * netem_arm).  run_remote.sh removes the netem once rds_remote is done.
 */
static int duel_delay(int ms)
{
	const char *idx = getenv("RDS_IFINDEX");
	char dev[IF_NAMESIZE], cmd[160];

	if (!idx || !if_indextoname(atoi(idx), dev))
		snprintf(dev, sizeof(dev), "eth0");
	snprintf(cmd, sizeof(cmd),
		 "modprobe sch_netem 2>/dev/null; tc qdisc replace dev %s root netem limit 100000 delay %dms",
		 dev, ms);
	return system(cmd);
}

/* What a duel took, and the races it counted on this node. */
struct duel {
	long long ms;		/* until the peer's message came */
	long long yield;	/* ours: conn_race_yield during the duel */
	long long refuse;	/* ours: conn_race_refuse */
	long long refused;	/* ours: conn_race_refused */
	long long raced;	/* the distribution's ib_connect_raced */
};

/* Counter @name now, less @before; -1 where the module has no such counter. */
static long long counter_since(int fd, const char *name, long long before)
{
	long long now = rds_counter(fd, name);

	return now < 0 || before < 0 ? -1 : now - before;
}

/* A duel on a new connection of TOS @tos, from the sockets on port @k. */
static void run_duel(int k, rds_tos_t tos, struct duel *d)
{
	struct sockaddr_in to = peer_port(k);
	char mine[32], theirs[32], got[64];
	int fd = rds_bound(k, NULL), armed, delayed;
	long long y0, r0, d0, c0, t0;
	long n;

	ASSERT_SYS_OK(ioctl(fd, SIOCRDSSETTOS, &tos));
	y0 = rds_counter(fd, "conn_race_yield");
	r0 = rds_counter(fd, "conn_race_refuse");
	d0 = rds_counter(fd, "conn_race_refused");
	c0 = rds_counter(fd, "ib_connect_raced");
	snprintf(mine, sizeof(mine), "duel from node %d", node);
	snprintf(theirs, sizeof(theirs), "duel from node %d", peer_node);
	set_rcvtimeo(fd, DUEL_WAIT_MS);
	armed = duel_delay(0);
	sync_peer("bound");
	/* From here to the delay's end nothing may end the case. */
	delayed = armed ? armed : duel_delay(DUEL_DELAY_MS);
	/*
	 * The start, under the delay: node 1 tells node 2 to go and waits
	 * one delay itself, the time its word takes to node 2.  Each node's
	 * tc above takes its own time (seconds apart on a loaded host), so a
	 * start right after it let one request arrive before the other
	 * node connected: no race.
	 */
	sync_peer("armed");
	if (node == 1) {
		tell_peer(1);
		rt_sleep_ms(DUEL_DELAY_MS);
	} else {
		hear_peer();
	}
	t0 = rt_now_ms();
	EXPECT_EQ(sendto(fd, mine, strlen(mine), 0, (struct sockaddr *)&to,
			 sizeof(to)), (long)strlen(mine));
	n = recv(fd, got, sizeof(got), 0);
	d->ms = rt_now_ms() - t0;
	if (!delayed)
		duel_delay(0);
	sync_peer("received");
	EXPECT_EQ(delayed, 0);
	ASSERT_TRUE(n >= 0, "no message from node %d in %lld ms: %s",
		    peer_node, d->ms, rt_errname(errno));
	EXPECT_TRUE(n == (long)strlen(theirs) && !memcmp(got, theirs, n),
		    "%ld bytes, not \"%s\"", n, theirs);
	d->yield = counter_since(fd, "conn_race_yield", y0);
	d->refuse = counter_since(fd, "conn_race_refuse", r0);
	d->refused = counter_since(fd, "conn_race_refused", d0);
	d->raced = counter_since(fd, "ib_connect_raced", c0);
	rt_diag("%s (%s) against %s, TOS %u: the peer's message after %lld ms",
		modules_of(node), self_is_lower() ? "lower" : "higher",
		modules_of(peer_node), tos, d->ms);
	if (d->yield >= 0)
		rt_diag("races: yielded %lld, refused %lld, refused by the peer %lld",
			d->yield, d->refuse, d->refused);
	if (d->raced >= 0)
		rt_diag("races: ib_connect_raced %lld", d->raced);
	close(fd);
}

/*
 * When both ends connect at once, our module decides by address: the
 * lower end yields and accepts, the higher end refuses (the peer's
 * attempt gives way to its own).  The distribution refuses whenever it
 * connects: where it is the lower end, each refusal of ours that it
 * answers with its own (conn_race_refused) lets us yield once, in the
 * next race, and at no other time.
 *
 * The case makes a race (a duel on a new connection) and checks that it
 * was one, and was decided by the rule: where our module runs, the
 * lower end yielded and the higher one refused; where the distribution
 * runs, it counted the race (ib_connect_raced: it met the peer's request
 * while connecting, and refused it).  Then, on our module, over every
 * race since it was loaded (run_remote.sh runs the case again after the
 * fault cases, which race most): against our own module the lower end
 * never refused and the higher never yielded; against the distribution
 * we yielded no more often than it refused us, and it refused us no
 * more often than we refused it.
 */
void test_connect_race_rule(void)
{
	bool ours = !strcmp(modules_of(node), "ours");
	bool lower = self_is_lower();
	long long yield, refuse, refused;
	struct duel d;
	int fd;

	run_duel(0, (rds_tos_t)fresh_tos(), &d);
	if (!ours) {
		EXPECT_TRUE(d.raced > 0,
			    "no connect race counted (ib_connect_raced %lld): the peer's request did not meet ours",
			    d.raced);
		return;
	}
	ASSERT_TRUE(d.yield + d.refuse > 0,
		    "no connect race: the peer's request did not meet ours (yielded %lld, refused %lld)",
		    d.yield, d.refuse);
	if (lower)
		EXPECT_TRUE(d.yield > 0 && !d.refuse,
			    "the lower end refused %lld races and yielded in %lld",
			    d.refuse, d.yield);
	else
		EXPECT_TRUE(d.refuse > 0, "the higher end refused no race (yielded %lld)",
			    d.yield);

	fd = rds_socket();
	yield = rds_counter(fd, "conn_race_yield");
	refuse = rds_counter(fd, "conn_race_refuse");
	refused = rds_counter(fd, "conn_race_refused");
	close(fd);
	rt_diag("since loaded: conn_race_yield %lld, conn_race_refuse %lld, conn_race_refused %lld",
		yield, refuse, refused);
	ASSERT_TRUE(yield >= 0 && refuse >= 0 && refused >= 0,
		    "no conn_race_* counters");
	if (lower) {
		EXPECT_EQ(refuse, 0);
		EXPECT_EQ(refused, 0);
	} else if (!strcmp(modules_of(peer_node), "ours")) {
		EXPECT_EQ(yield, 0);
		EXPECT_EQ(refused, 0);
	} else {
		EXPECT_TRUE(yield <= refused,
			    "yielded %lld times, the peer refused only %lld",
			    yield, refused);
		EXPECT_TRUE(refused <= refuse,
			    "%lld refusals of the peer's, %lld of ours",
			    refuse, refused);
	}
}

/*
 * A duel (above) on a new connection, against the connect duel that
 * never ends: a new connection reconnects at once or after a few
 * milliseconds for its first ten attempts (the random back-off starts at
 * 1 ms on both modules), so without the address rule every round is a
 * race: the distribution refuses whenever it connects, and as the lower
 * end it kept refusing our module, higher and refusing too, round after
 * round (make check-debug's distro,ours lane, 2026-11-27).  Our module,
 * where it runs, may refuse once before it yields: never twice without
 * a yield between (conn_race_refuse at most conn_race_yield + 1); as the
 * lower end it never refuses, and against our own module the higher end
 * never yields.
 */
void test_connect_duel(void)
{
	struct duel d;

	run_duel(0, (rds_tos_t)fresh_tos(), &d);
	if (strcmp(modules_of(node), "ours"))
		return;
	if (self_is_lower())
		EXPECT_EQ(d.refuse, 0);
	else if (!strcmp(modules_of(peer_node), "ours"))
		EXPECT_EQ(d.yield, 0);
	EXPECT_TRUE(d.refuse <= d.yield + 1, "refused %lld races, yielded in %lld",
		    d.refuse, d.yield);
}

/* The next message on fd must be a pong: empty, from the peer's port 0. */
static void expect_pong(int fd)
{
	struct sockaddr_in from, want;
	char c;
	long n;

	sin_set(&want, addr_peer, 0);
	n = recv_msg(fd, &c, 1, MSG_TRUNC, &from, NULL);
	if (n < 0) {
		rt_fail("no pong: recvmsg: %s", rt_errname(errno));
		return;
	}
	EXPECT_EQ(n, 0);
	EXPECT_TRUE(same_sin(&from, &want), "pong from %s, expected %s",
		    sin_str(&from), sin_str(&want));
}

/*
 * The next message on fd must be @text from the peer's port 0 of the case:
 * a marker that the peer sent after something that must not have made it
 * send anything else.  Whatever comes before it is a message too many.
 */
static void expect_marker(int fd, const char *text)
{
	struct sockaddr_in from, want = peer_port(0);
	char buf[64];
	long n;

	n = recv_msg(fd, buf, sizeof(buf), 0, &from, NULL);
	ASSERT_TRUE(n >= 0, "no marker \"%s\": recvmsg: %s", text,
		    rt_errname(errno));
	ASSERT_TRUE(same_sin(&from, &want) && n == (long)strlen(text) &&
		    !memcmp(buf, text, n),
		    "%ld bytes from %s before the marker \"%s\" from %s",
		    n, sin_str(&from), text, sin_str(&want));
}

/*
 * The RDS ping protocol (wire 10.1), both ways at once: an empty message
 * to the peer's port 0 is answered by the peer's kernel with an empty
 * message from its port 0, three times.  Where the peer runs our module,
 * net.rds.ping_enable=0 there silences it (the ping is then dropped as
 * a message for an unbound port); the distribution's has no such switch
 * on every kernel, so the check is ours only.
 *
 * The silence is checked with markers, not by waiting: node 1 sends the
 * ping, then a marker to node 2's socket; node 2 answers the marker with
 * one of its own.  One connection carries all of them in order: node 2
 * took the ping before it read node 1's marker, and would have queued
 * the pong before its own marker (our module queues it in the receive
 * path, rds_conn_pong()).  So a pong would reach node 1 first.
 */
void test_ping(void)
{
	struct sockaddr_in zero, to = peer_port(0);
	int fd = rds_bound(0, NULL), i;

	sin_set(&zero, addr_peer, 0);
	sync_peer("bound");
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(sendto(fd, "", 0, 0, (struct sockaddr *)&zero,
				 sizeof(zero)), 0);
		expect_pong(fd);
	}
	sync_peer("pinged");
	if (strcmp(modules_of(1), "ours") || strcmp(modules_of(2), "ours")) {
		close(fd);
		return;
	}
	/* node 2 stops answering; node 1 pings it once */
	if (node == 2)
		set_rds_sysctl("ping_enable", 0);
	sync_peer("disabled");
	if (node == 1) {
		EXPECT_EQ(sendto(fd, "", 0, 0, (struct sockaddr *)&zero,
				 sizeof(zero)), 0);
		EXPECT_EQ(sendto(fd, "after the ping", 14, 0,
				 (struct sockaddr *)&to, sizeof(to)), 14);
		expect_marker(fd, "answer");
	} else {
		expect_marker(fd, "after the ping");
		EXPECT_EQ(sendto(fd, "answer", 6, 0, (struct sockaddr *)&to,
				 sizeof(to)), 6);
	}
	sync_peer("silence");
	if (node == 2)
		set_rds_sysctl("ping_enable", 1);
	sync_peer("enabled");
	/* one pong again, and only one: the marker comes right after it */
	if (node == 1) {
		EXPECT_EQ(sendto(fd, "", 0, 0, (struct sockaddr *)&zero,
				 sizeof(zero)), 0);
		expect_pong(fd);
		EXPECT_EQ(sendto(fd, "after the pong", 14, 0,
				 (struct sockaddr *)&to, sizeof(to)), 14);
		expect_marker(fd, "answered");
	} else {
		expect_marker(fd, "after the pong");
		EXPECT_EQ(sendto(fd, "answered", 8, 0, (struct sockaddr *)&to,
				 sizeof(to)), 8);
	}
	close(fd);
}

/* Rows of info table name from our port lport to fport. */
static int msg_rows(int fd, int name, in_port_t lport, in_port_t fport)
{
	socklen_t len;
	void *buf;
	int n;

	EXPECT_EQ(EXPECT_SYS_OK(rds_info_read(fd, name, &buf, &len)),
		  sizeof(struct rds_info_message));
	n = rds_info_msg_rows(buf, len, lport, fport, NULL, 0);
	free(buf);
	return n;
}

/* Messages from lport to fport not yet acknowledged: queued or sent. */
static int unacked_rows(int fd, in_port_t lport, in_port_t fport)
{
	return msg_rows(fd, RDS_INFO_SEND_MESSAGES, lport, fport) +
	       msg_rows(fd, RDS_INFO_RETRANS_MESSAGES, lport, fport);
}

/* Send n small messages from fd to *to. */
static void send_small(int fd, const struct sockaddr_in *to, int n)
{
	char buf[64] = "idle";

	while (n--)
		EXPECT_EQ(sendto(fd, buf, sizeof(buf), 0,
				 (const struct sockaddr *)to, sizeof(*to)),
			  (long)sizeof(buf));
}

/* Wait up to 2 s until no message from @me to @to is unacknowledged. */
static void wait_acked(int fd, const struct sockaddr_in *me,
		       const struct sockaddr_in *to, const char *what)
{
	long long t0 = rt_now_ms();
	int left;

	while ((left = unacked_rows(fd, me->sin_port, to->sin_port)) &&
	       rt_now_ms() - t0 < 2000)
		rt_sleep_ms(20);
	EXPECT_EQ(left, 0);
	rt_diag("%s acknowledged after %lld ms", what, rt_now_ms() - t0);
}

/*
 * A sender that goes idle is acknowledged without sending again (wire
 * 5.3): node 2 sends three small messages that do not ask for an ACK to
 * node 1, which reads them and never answers.  Within 2 s they leave
 * node 2's queues: our module asks for the ACK with one ACK probe, which
 * node 1 acknowledges and drops, so node 1's socket gets the messages
 * and nothing else.
 *
 * The cases before this one leave the connection's ACK budget anywhere,
 * so one of three messages could ask for an ACK by that rule.  On our
 * module node 2 first raises net.rds.max_unacked_packets and sends ten
 * messages: the budget runs out within nine of them, and the message
 * that asks for an ACK refills it with the raised value.
 *
 * The distribution keeps an idle sender's last messages until its budget
 * of 8 messages asks for an ACK (their buffer stays charged meanwhile):
 * on a distribution sender only the delivery is checked.
 */
void test_idle_ack(void)
{
	int ours = !strcmp(modules_of(2), "ours"), flush = ours ? 10 : 0;
	struct sockaddr_in me, to = peer_port(0);
	long long probes = 0;
	long budget = 0;
	int fd, i;

	fd = rds_bound(0, &me);
	sync_peer("bound");
	if (node == 2 && ours) {
		budget = get_rds_sysctl("max_unacked_packets");
		set_rds_sysctl("max_unacked_packets", 1000000);
		send_small(fd, &to, flush);
		wait_acked(fd, &me, &to, "the first ten");
		probes = rds_counter(fd, "send_ack_probe");
	}
	if (node == 2) {
		send_small(fd, &to, 3);
	} else {
		struct sockaddr_in from;
		char buf[64];

		for (i = 0; i < flush + 3; i++)
			EXPECT_EQ(recv_msg(fd, buf, sizeof(buf), 0, &from,
					   NULL), (long)sizeof(buf));
	}
	sync_peer("sent");
	if (node == 2 && ours) {
		wait_acked(fd, &me, &to, "the last three");
		EXPECT_TRUE(rds_counter(fd, "send_ack_probe") > probes,
			    "no ACK probe counted");
		set_rds_sysctl("max_unacked_packets", budget);
	}
	sync_peer("acked");
	if (node == 1)
		expect_empty(fd);
	close(fd);
}

/*
 * A receiver whose queue holds more than twice the memory that congests
 * it (SO_RCVBUF, at least 1 MiB) holds its peer back, and loses nothing.
 * Node 1 binds a socket with a large SO_RCVBUF; node 2 sends HB_FIRST
 * messages of HB_LEN bytes (2.5 MiB in all), which all queue there.
 * Node 1 then shrinks SO_RCVBUF to 4096: its queue is over the limit, but
 * its port never became congested, so node 2 sends HB_MORE more without
 * being told to stop, as a peer that ignores congestion would (a
 * distribution receiver congests its port when the first arrives, and
 * node 2 stops at ENOBUFS).  Our module refuses them (recv_held_back
 * counts each refusal) and takes nothing more from node 2 until node 1
 * has read; then every message arrives, in order, once.  The distribution
 * queues without limit: on a distribution receiver only the delivery is
 * checked.
 */
#define HB_LEN		65000
#define HB_FIRST	40
#define HB_MORE		8

void test_held_back(void)
{
	int ours = !strcmp(modules_of(1), "ours"), big = 4 << 20, i, n, more;
	static unsigned char buf[HB_LEN + 64];
	struct sockaddr_in me, from, to = peer_port(0);
	long long held = 0, t0;
	uint32_t seq;
	int fd = rds_bound(0, &me);

	ASSERT_SYS_OK(set_int_opt(fd, SOL_SOCKET, node == 1 ? SO_RCVBUFFORCE :
				  SO_SNDBUFFORCE, big));
	if (node == 1 && ours)
		held = rds_counter(fd, "recv_held_back");
	sync_peer("bound");
	if (node == 2) {
		for (i = 0; i < HB_FIRST; i++) {
			build_msg(buf, HB_LEN, 2, i);
			EXPECT_EQ(sendto(fd, buf, HB_LEN, 0,
					 (struct sockaddr *)&to, sizeof(to)),
				  HB_LEN);
		}
	} else {
		t0 = rt_now_ms();
		while ((n = msg_rows(fd, RDS_INFO_RECV_MESSAGES, me.sin_port,
				     to.sin_port)) < HB_FIRST &&
		       rt_now_ms() - t0 < 20000)
			rt_sleep_ms(20);
		ASSERT_EQ(n, HB_FIRST);
		ASSERT_SYS_OK(set_int_opt(fd, SOL_SOCKET, SO_RCVBUF, 4096));
	}
	sync_peer("first queued");
	if (node == 2) {
		/*
		 * A distribution receiver marks its port congested when the
		 * first of these arrives: the rest get ENOBUFS.
		 */
		for (more = 0; more < HB_MORE; more++) {
			build_msg(buf, HB_LEN, 2, HB_FIRST + more);
			if (sendto(fd, buf, HB_LEN, MSG_DONTWAIT,
				   (struct sockaddr *)&to, sizeof(to)) < 0) {
				EXPECT_EQ(errno, ENOBUFS);
				break;
			}
		}
		tell_peer(more);
	} else {
		more = hear_peer();
		if (ours)	/* refused, not queued: no congestion */
			EXPECT_EQ(more, HB_MORE);
	}
	if (node == 1 && ours) {
		t0 = rt_now_ms();
		while (rds_counter(fd, "recv_held_back") == held &&
		       rt_now_ms() - t0 < 20000)
			rt_sleep_ms(20);
		EXPECT_TRUE(rds_counter(fd, "recv_held_back") > held,
			    "no message held back with %d queued", HB_FIRST);
		/* Held back, not queued: the queue is what it was. */
		EXPECT_EQ(msg_rows(fd, RDS_INFO_RECV_MESSAGES, me.sin_port,
				   to.sin_port), HB_FIRST);
		rt_diag("held back after %lld ms: recv_held_back %lld, %s %lld, %s %lld",
			rt_now_ms() - t0, rds_counter(fd, "recv_held_back") - held,
			"ib_rx_held_back", rds_counter(fd, "ib_rx_held_back"),
			"ib_rx_frames_held",
			rds_counter(fd, "ib_rx_frames_held"));
	}
	if (node == 1) {
		for (i = 0; i < HB_FIRST + more; i++) {
			long got = recv_msg(fd, buf, sizeof(buf), 0, &from,
					    NULL);

			if (!check_msg(buf, got, 2, &seq, "held_back"))
				break;
			if (seq != (uint32_t)i) {
				rt_fail("message %u arrived as number %d", seq,
					i);
				break;
			}
		}
		expect_empty(fd);
	}
	sync_peer("read");
	close(fd);
}

/*
 * Allocations that fail on the receive path do not drop the connection.
 * Node 1 (ours) makes every RX_FAIL_EVERY-th allocation of its receive
 * path that may not sleep fail (rds_zc_ib's inject_rx_nomem: the
 * messages of first fragments and the pages that replace those handed
 * to a message), and node 2 sends 1 MiB in messages of 64 KiB: every
 * byte arrives, in order, the connection is never dropped, and the
 * failures were met (ib_rx_nomem_deferred) and the ring refilled
 * (ib_rx_refilled).  Debian's kernels have no fault injection
 * (fail_page_alloc), hence the module's own knob; rds_storm.sh's
 * slab_storm aims the kernel's at our modules on the sanitizer kernel.
 * Skipped where node 1 runs the distribution: its rds_rdma has no such
 * knob (and drops the connection on such a failure).
 */
#define RX_FAIL_KNOB	"/sys/module/rds_zc_ib/parameters/inject_rx_nomem"
#define RX_FAIL_EVERY	7
#define RX_MSG_LEN	65536
#define RX_MSGS		16

/* Node 1: write @every to inject_rx_nomem; 0 if it could. */
static int rx_fail_set(int every)
{
	FILE *f = fopen(RX_FAIL_KNOB, "w");

	if (!f)
		return -1;
	if (fprintf(f, "%d\n", every) < 0) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}

void test_rx_nomem(void)
{
	long long drops = 0, nomem = 0, refilled = 0;
	struct sockaddr_in me, from, to = peer_port(0);
	static unsigned char buf[RX_MSG_LEN + 64];
	int fd, i, armed = 0, big = 4 << 20;
	uint32_t seq;

	if (distro(1))
		rt_skip("the distribution's rds_rdma has no %s",
			"inject_rx_nomem to fail its receive allocations");
	fd = rds_bound(0, &me);
	ASSERT_SYS_OK(set_int_opt(fd, SOL_SOCKET, node == 1 ? SO_RCVBUFFORCE :
				  SO_SNDBUFFORCE, big));
	if (node == 1) {
		drops = rds_counter(fd, "conn_drop");
		nomem = rds_counter(fd, "ib_rx_nomem_deferred");
		refilled = rds_counter(fd, "ib_rx_refilled");
		armed = !rx_fail_set(RX_FAIL_EVERY);
		EXPECT_TRUE(armed, "%s: %s", RX_FAIL_KNOB, rt_errname(errno));
	}
	sync_peer("armed");
	if (node == 2) {
		for (i = 0; i < RX_MSGS; i++) {
			build_msg(buf, RX_MSG_LEN, 2, i);
			EXPECT_EQ(sendto(fd, buf, RX_MSG_LEN, 0,
					 (struct sockaddr *)&to, sizeof(to)),
				  RX_MSG_LEN);
		}
	} else {
		for (i = 0; i < RX_MSGS; i++) {
			long got = recv_msg(fd, buf, sizeof(buf), 0, &from,
					    NULL);

			if (!check_msg(buf, got, 2, &seq, "rx_nomem"))
				break;
			if (seq != (uint32_t)i) {
				rt_fail("message %u arrived as number %d", seq,
					i);
				break;
			}
		}
		if (armed)
			EXPECT_TRUE(!rx_fail_set(0), "%s: %s", RX_FAIL_KNOB,
				    rt_errname(errno));
		EXPECT_EQ(i, RX_MSGS);
		expect_empty(fd);
		EXPECT_TRUE(rds_counter(fd, "conn_drop") == drops,
			    "%lld connection drops under the failures",
			    rds_counter(fd, "conn_drop") - drops);
		nomem = rds_counter(fd, "ib_rx_nomem_deferred") - nomem;
		refilled = rds_counter(fd, "ib_rx_refilled") - refilled;
		rt_diag("%lld receive allocations failed and deferred, %lld slots refilled",
			nomem, refilled);
		EXPECT_TRUE(nomem > 0, "no allocation failed (every %d)",
			    RX_FAIL_EVERY);
		EXPECT_TRUE(refilled > 0, "no slot refilled");
	}
	sync_peer("read");
	close(fd);
}
