// SPDX-License-Identifier: GPL-2.0
/*
 * rds_hostile_qp.c - node 2's hostile QP: a verbs peer that speaks the
 * RDS/IB wire protocol itself (librdmacm, libibverbs), its frames, the
 * messages it takes and the ACKs it sends.
 */
#include "rds_hostile.h"

/* ------------------------------------------------------ the hostile QP */

static unsigned char *hp_send_slot(struct hp *h, unsigned int i)
{
	return h->mem + (size_t)i * RDS_WIRE_SEND_MAX;
}

static unsigned char *hp_recv_slot(struct hp *h, unsigned int i)
{
	return h->mem + (size_t)(HP_SEND_SLOTS + i) * RDS_WIRE_SEND_MAX;
}

unsigned char *hp_read_buf(struct hp *h)
{
	return hp_recv_slot(h, HP_RECV_SLOTS);
}

static int hp_post_recv(struct hp *h, unsigned int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)hp_recv_slot(h, i),
		.length = RDS_WIRE_SEND_MAX,
		.lkey = h->mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = WR_RECV | i,
		.sg_list = &sge,
		.num_sge = 1,
	}, *bad;

	return ibv_post_recv(h->id->qp, &wr, &bad);
}

/*
 * One frame of a congestion map from node 1 (two frames make a map: the
 * first holds ports 0 to 32767).  A port of node 1 can be congested only
 * if a socket is bound to it, and node 1 binds only the cases' ports: a
 * bit set anywhere else is memory node 1 sent without writing it.
 */
static void hp_rx_cong(struct hp *h, const unsigned char *map, uint32_t len)
{
	unsigned int first = (h->rx_cong % 2) * RDS_WIRE_FRAG * 8;
	unsigned int byte, bit, port;

	for (byte = 0; byte < len; byte++) {
		if (!map[byte])
			continue;
		for (bit = 0; bit < 8; bit++) {
			if (!(map[byte] & (1U << bit)))
				continue;
			port = first + byte * 8 + bit;
			/* case_port(): cases 1 to n_cases, 32 ports each */
			if (port >= port_base + 32U &&
			    port < port_base + 32U * (n_cases + 1))
				continue;
			if (!h->rx_cong_stray++)
				h->rx_cong_stray_port = (int)port;
		}
	}
}

/* A frame node 1 sent: count it, remember its data messages. */
static void hp_rx_frame(struct hp *h, unsigned int i, uint32_t byte_len)
{
	struct rds_wire_hdr hdr;
	struct hp_rx *r;
	uint64_t ack;

	h->rx_frames++;
	if (byte_len < RDS_WIRE_HDR_LEN) {
		h->rx_bad++;
		return;
	}
	memcpy(&hdr, hp_recv_slot(h, i), sizeof(hdr));
	if (!rds_wire_csum_ok(&hdr)) {
		h->rx_bad++;
		return;
	}
	ack = be64toh(hdr.ack);
	if (ack)
		h->rx_ack = ack;
	h->rx_credit += hdr.credit;
	if (!hdr.sport && !hdr.dport && byte_len == RDS_WIRE_HDR_LEN) {
		h->rx_acks++;
		return;
	}
	if (hdr.flags == RDS_WIRE_F_CONG) {
		hp_rx_cong(h, hp_recv_slot(h, i) + RDS_WIRE_HDR_LEN,
			   byte_len - RDS_WIRE_HDR_LEN);
		h->rx_cong++;
		return;
	}
	if (h->nrx && h->rx[(h->nrx - 1) % HP_LOG].seq == be64toh(hdr.seq))
		return;	/* a later fragment */
	if (!hdr.sport && hdr.dport)
		h->rx_pongs++;
	r = &h->rx[h->nrx++ % HP_LOG];
	r->seq = be64toh(hdr.seq);
	r->sport = ntohs(hdr.sport);
	r->dport = ntohs(hdr.dport);
	r->len = ntohl(hdr.len);
	r->flags = hdr.flags;
}

static int hp_drain_cq(struct hp *h)
{
	struct ibv_wc wc[32];
	int n, i, total = 0;

	while ((n = ibv_poll_cq(h->cq, 32, wc)) > 0) {
		for (i = 0; i < n; i++) {
			if (wc[i].wr_id & WR_RECV) {
				unsigned int slot = wc[i].wr_id & 0xffff;

				if (wc[i].status != IBV_WC_SUCCESS)
					continue;
				hp_rx_frame(h, slot, wc[i].byte_len);
				hp_post_recv(h, slot);
			} else if (wc[i].wr_id & WR_READ) {
				h->read_status = wc[i].status;
			} else {
				h->busy--;
				if (wc[i].status == IBV_WC_SUCCESS)
					h->done++;
				else if (!h->err)
					h->err = wc[i].status;
			}
		}
		total += n;
	}
	return total;
}

/* Take the connection manager's events: DISCONNECTED ends the QP. */
static void hp_cm_events(struct hp *h)
{
	struct pollfd p = { .fd = h->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	while (poll(&p, 1, 0) == 1 && !rdma_get_cm_event(h->ch, &ev)) {
		if (ev->event == RDMA_CM_EVENT_DISCONNECTED ||
		    ev->event == RDMA_CM_EVENT_TIMEWAIT_EXIT ||
		    ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
			h->up = 0;
		rdma_ack_cm_event(ev);
	}
}

/*
 * Take the completions there are; if none, wait up to @ms for one (or an
 * event).  Return: the completions taken.
 */
int hp_progress(struct hp *h, int ms)
{
	struct pollfd p[2] = {
		{ .fd = h->cc->fd, .events = POLLIN },
		{ .fd = h->ch->fd, .events = POLLIN },
	};
	struct ibv_cq *cq;
	void *ctx;
	int n;

	n = hp_drain_cq(h);
	hp_cm_events(h);
	if (n || ms <= 0)
		return n;
	ibv_req_notify_cq(h->cq, 0);
	n = hp_drain_cq(h);
	if (n)
		return n;
	if (poll(p, 2, ms) > 0 && (p[0].revents & POLLIN) &&
	    !ibv_get_cq_event(h->cc, &cq, &ctx))
		ibv_ack_cq_events(cq, 1);
	hp_cm_events(h);
	return hp_drain_cq(h);
}

/* Let node 1's frames in for @ms. */
void hp_listen(struct hp *h, int ms)
{
	long long end = rt_now_ms() + ms;

	while (rt_now_ms() < end)
		hp_progress(h, (int)(end - rt_now_ms()));
}

/*
 * Free a hostile QP.  Each one was a connect request, and its frames were
 * hostile or honest-looking ones: a line for "make reliability"
 * (tools/testing/reliability.sh), "# hostile_diag tos=N frames=N".
 */
static void hp_free(struct hp *h)
{
	if (h->id)
		rt_diag("hostile_diag tos=%u frames=%llu", h->tos, h->posted);
	if (h->id && h->id->qp)
		rdma_destroy_qp(h->id);
	if (h->cq)
		ibv_destroy_cq(h->cq);
	if (h->cc)
		ibv_destroy_comp_channel(h->cc);
	if (h->mr)
		ibv_dereg_mr(h->mr);
	if (h->pd)
		ibv_dealloc_pd(h->pd);
	if (h->id)
		rdma_destroy_id(h->id);
	if (h->ch)
		rdma_destroy_event_channel(h->ch);
	free(h->mem);
	h->id = NULL;
	h->cq = NULL;
	h->cc = NULL;
	h->mr = NULL;
	h->pd = NULL;
	h->ch = NULL;
	h->mem = NULL;
	h->up = 0;
}

/*
 * The next event on @ch within @ms; its type and status, and (@conn)
 * its connection parameters and (@reason) the int a consumer's REJ
 * carries (wire 1.6), or HP_REJ_NONE.
 */
static int cm_wait(struct rdma_event_channel *ch, int ms,
		   enum rdma_cm_event_type *type, int *status,
		   struct rdma_conn_param *conn, int *reason)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pfd, 1, ms) != 1)
		return -1;
	if (rdma_get_cm_event(ch, &ev))
		return -1;
	*type = ev->event;
	*status = ev->status;
	if (conn)
		*conn = ev->param.conn;
	if (reason) {
		*reason = HP_REJ_NONE;
		/* the consumer's data is 148 bytes, padded with zeros */
		if (ev->event == RDMA_CM_EVENT_REJECTED &&
		    ev->status == HP_REJ_CONSUMER &&
		    ev->param.conn.private_data &&
		    ev->param.conn.private_data_len >= sizeof(*reason))
			memcpy(reason, ev->param.conn.private_data,
			       sizeof(*reason));
	}
	rdma_ack_cm_event(ev);
	return 0;
}

/* Step the setup of an id until @want, or fail the case. */
static void cm_expect(struct rdma_event_channel *ch,
		      enum rdma_cm_event_type want, const char *what)
{
	enum rdma_cm_event_type type;
	int status;

	ASSERT_TRUE(!cm_wait(ch, CM_WAIT_MS, &type, &status, NULL, NULL),
		    "%s: no event within %d ms", what, CM_WAIT_MS);
	ASSERT_TRUE(type == want, "%s: %s (status %d), not %s", what,
		    rdma_event_str(type), status, rdma_event_str(want));
}

/*
 * One connect request from our real address to node 1's listener with
 * @priv, on a QP whose receive slots are posted first (node 1's map
 * comes at once).  Return: the event that answered it; on ESTABLISHED
 * @h is up, else it is freed.
 */
enum rdma_cm_event_type hp_try_open(struct hp *h,
				    const struct rds_wire_priv *priv,
				    int *status)
{
	struct sockaddr_in src, dst;

	sin_set(&src, addr_self, 0);
	sin_set(&dst, addr_peer, RDS_WIRE_PORT);
	return hp_try_open_sa(h, priv, sizeof(*priv), (struct sockaddr *)&src,
			      (struct sockaddr *)&dst, status);
}

/*
 * The path of @scratch's resolved route in the wire form that
 * RDMA_OPTION_IB_PATH takes, naming @sgid as our port's GID: the CM REQ
 * carries it as the requester's GID (its primary local port GID), and
 * the responder's QP sends to it.  The request itself still leaves from
 * our bound address.
 */
static void hp_forged_path(struct rdma_cm_id *scratch,
			   const union ibv_gid *sgid, struct ibv_path_data *pd)
{
	const struct ibv_sa_path_rec *r = scratch->route.path_rec;
	struct ibv_path_record *p = &pd->path;

	ASSERT_TRUE(r && scratch->route.num_paths >= 1,
		    "rdma_cm gave no path record for the route");
	memset(pd, 0, sizeof(*pd));
	pd->flags = IBV_PATH_FLAG_GMP | IBV_PATH_FLAG_PRIMARY |
		    IBV_PATH_FLAG_BIDIRECTIONAL;
	p->dgid = r->dgid;
	p->sgid = *sgid;
	p->dlid = r->dlid;
	p->slid = r->slid;
	p->flowlabel_hoplimit = htonl((ntohl(r->flow_label) & 0xfffff) << 8 |
				      (r->hop_limit > 1 ? r->hop_limit : 64));
	p->tclass = r->traffic_class;
	p->reversible_numpath = 0x80 | 1;
	p->pkey = r->pkey ? r->pkey : htons(0xffff);
	p->qosclass_sl = htons(r->sl & 0xf);
	p->mtu = 2 << 6 | (r->mtu ? r->mtu : IBV_MTU_1024);
	p->rate = 2 << 6 | (r->rate ? r->rate : 3);
	p->packetlifetime = 2 << 6 | (r->packet_life_time ?
				      r->packet_life_time : 16);
}

static enum rdma_cm_event_type hp_try_open_path(struct hp *h,
						const void *priv, size_t len,
						struct sockaddr *src,
						struct sockaddr *dst,
						const union ibv_gid *sgid,
						int wait_ms, int *status);

/*
 * As hp_try_open(), from @src to @dst (a listener's address and port),
 * with @len bytes of private data at @priv, in either form.
 */
enum rdma_cm_event_type hp_try_open_sa(struct hp *h, const void *priv,
				       size_t len, struct sockaddr *src,
				       struct sockaddr *dst, int *status)
{
	return hp_try_open_path(h, priv, len, src, dst, NULL, 0, status);
}

/*
 * As hp_try_open(), but the CM REQ names @sgid as our port's GID
 * (hp_forged_path()); the private data and rdma_cm's header name our
 * real address.  Node 1's CM answers to that GID, REP or REJ alike
 * (ib_cm builds its replies' address from the request's path), so
 * another host's GID gets no answer here: none within @ms reads as
 * UNREACHABLE with *@status -ETIMEDOUT.
 */
enum rdma_cm_event_type hp_try_open_gid(struct hp *h,
					const struct rds_wire_priv *priv,
					const union ibv_gid *sgid, int ms,
					int *status)
{
	struct sockaddr_in src, dst;

	sin_set(&src, addr_self, 0);
	sin_set(&dst, addr_peer, RDS_WIRE_PORT);
	return hp_try_open_path(h, priv, sizeof(*priv),
				(struct sockaddr *)&src,
				(struct sockaddr *)&dst, sgid, ms, status);
}

static enum rdma_cm_event_type hp_try_open_path(struct hp *h,
						const void *priv, size_t len,
						struct sockaddr *src,
						struct sockaddr *dst,
						const union ibv_gid *sgid,
						int wait_ms, int *status)
{
	struct ibv_qp_init_attr qpa = {
		.cap = { .max_send_wr = HP_SEND_SLOTS + 1,
			 .max_recv_wr = HP_RECV_SLOTS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct rdma_conn_param param = {
		.private_data = priv,
		.private_data_len = len,
		.responder_resources = HP_RD_RESP,
		.initiator_depth = HP_RD_INIT,
		.retry_count = 7,
		.rnr_retry_count = 7,	/* RNR: retry for ever (wire 1.4) */
	};
	struct rdma_conn_param reply = {};
	enum rdma_cm_event_type type;
	unsigned int i;
	int reason;

	h->mem_len = (size_t)(HP_SEND_SLOTS + HP_RECV_SLOTS) *
		     RDS_WIRE_SEND_MAX + HP_READ_LEN;
	h->mem = xmalloc(h->mem_len);
	memset(h->mem, 0, h->mem_len);
	h->ch = rdma_create_event_channel();
	ASSERT_TRUE(h->ch, "rdma_create_event_channel: %s", rt_errname(errno));
	ASSERT_SYS_OK(rdma_create_id(h->ch, &h->id, NULL, RDMA_PS_TCP));
	if (sgid) {
		struct rdma_event_channel *sch = rdma_create_event_channel();
		struct rdma_cm_id *scratch;
		struct ibv_path_data pd;

		/* a path rdma_cm resolved, as a template */
		ASSERT_TRUE(sch, "rdma_create_event_channel: %s",
			    rt_errname(errno));
		ASSERT_SYS_OK(rdma_create_id(sch, &scratch, NULL,
					     RDMA_PS_TCP));
		ASSERT_SYS_OK(rdma_resolve_addr(scratch, src, dst,
						CM_WAIT_MS));
		cm_expect(sch, RDMA_CM_EVENT_ADDR_RESOLVED, "resolve address");
		ASSERT_SYS_OK(rdma_resolve_route(scratch, CM_WAIT_MS));
		cm_expect(sch, RDMA_CM_EVENT_ROUTE_RESOLVED, "resolve route");
		hp_forged_path(scratch, sgid, &pd);
		rdma_destroy_id(scratch);
		rdma_destroy_event_channel(sch);

		ASSERT_SYS_OK(rdma_resolve_addr(h->id, src, dst, CM_WAIT_MS));
		cm_expect(h->ch, RDMA_CM_EVENT_ADDR_RESOLVED,
			  "resolve address");
		ASSERT_SYS_OK(rdma_set_option(h->id, RDMA_OPTION_IB,
					      RDMA_OPTION_IB_PATH, &pd,
					      sizeof(pd)));
		cm_expect(h->ch, RDMA_CM_EVENT_ROUTE_RESOLVED, "set the path");
	} else {
		ASSERT_SYS_OK(rdma_resolve_addr(h->id, src, dst, CM_WAIT_MS));
		cm_expect(h->ch, RDMA_CM_EVENT_ADDR_RESOLVED,
			  "resolve address");
		ASSERT_SYS_OK(rdma_resolve_route(h->id, CM_WAIT_MS));
		cm_expect(h->ch, RDMA_CM_EVENT_ROUTE_RESOLVED,
			  "resolve route");
	}
	h->pd = ibv_alloc_pd(h->id->verbs);
	ASSERT_TRUE(h->pd, "ibv_alloc_pd: %s", rt_errname(errno));
	h->cc = ibv_create_comp_channel(h->id->verbs);
	ASSERT_TRUE(h->cc, "ibv_create_comp_channel: %s", rt_errname(errno));
	h->cq = ibv_create_cq(h->id->verbs, HP_SEND_SLOTS + HP_RECV_SLOTS + 8,
			      NULL, h->cc, 0);
	ASSERT_TRUE(h->cq, "ibv_create_cq: %s", rt_errname(errno));
	h->mr = ibv_reg_mr(h->pd, h->mem, h->mem_len, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_TRUE(h->mr, "ibv_reg_mr: %s", rt_errname(errno));
	qpa.send_cq = h->cq;
	qpa.recv_cq = h->cq;
	ASSERT_SYS_OK(rdma_create_qp(h->id, h->pd, &qpa));
	for (i = 0; i < HP_RECV_SLOTS; i++)
		ASSERT_TRUE(!hp_post_recv(h, i), "ibv_post_recv: %s",
			    rt_errname(errno));
	ASSERT_SYS_OK(rdma_connect(h->id, &param));
	if (wait_ms &&
	    cm_wait(h->ch, wait_ms, &type, status, &reply, &reason)) {
		*status = -ETIMEDOUT;
		hp_free(h);
		return RDMA_CM_EVENT_UNREACHABLE;
	}
	if (!wait_ms)
		ASSERT_TRUE(!cm_wait(h->ch, CM_WAIT_MS, &type, status, &reply,
				     &reason),
			    "no answer to the request within %d ms",
			    CM_WAIT_MS);
	h->rej_reason = reason;
	if (type == RDMA_CM_EVENT_ESTABLISHED) {
		/* The CM names them as we see them: READs at us, for us. */
		h->peer_rd_init = reply.responder_resources;
		h->peer_rd_resp = reply.initiator_depth;
		h->up = 1;
		return type;
	}
	hp_free(h);
	return type;
}

/*
 * Connect a hostile QP with TOS @tos, initial @credit and @ack_seq in its
 * private data, honest addresses.  A refusal (node 1 still tearing down
 * an earlier QP of this TOS) is retried for OPEN_MS.
 */
void hp_open(struct hp *h, uint8_t tos, uint32_t credit,
	     uint64_t ack_seq)
{
	long long deadline = rt_now_ms() + OPEN_MS;
	enum rdma_cm_event_type type;
	struct rds_wire_priv priv;
	int status, tries = 0;

	memset(h, 0, sizeof(*h));
	h->tos = tos;
	h->read_status = -1;
	rds_wire_priv_fill(&priv, addr_self.s_addr, addr_peer.s_addr, tos,
			   ack_seq, credit);
	for (;;) {
		tries++;
		type = hp_try_open(h, &priv, &status);
		if (type == RDMA_CM_EVENT_ESTABLISHED)
			break;
		ASSERT_TRUE(type == RDMA_CM_EVENT_REJECTED &&
			    rt_now_ms() < deadline,
			    "TOS %u: connect request %d got %s (status %d)",
			    tos, tries, rdma_event_str(type), status);
		memset(h, 0, sizeof(*h));
		h->tos = tos;
		h->read_status = -1;
		rt_sleep_ms(200);
	}
	/*
	 * Node 1 is up once its congestion map comes (its first message on
	 * a new connection, wire 7.2).  Not before: a frame that makes it
	 * drop a connection it has not seen established may leave this QP
	 * without the DISCONNECTED the cases wait for.
	 */
	while (h->rx_cong < 2 && h->up && rt_now_ms() < deadline + DOWN_MS)
		hp_progress(h, 100);
	ASSERT_TRUE(h->rx_cong >= 2, "TOS %u: no congestion map from node 1",
		    tos);
}

/* Wait until node 1 has dropped the QP; 0 if it did within @ms. */
int hp_wait_down(struct hp *h, int ms)
{
	long long end = rt_now_ms() + ms;

	while (h->up && rt_now_ms() < end)
		hp_progress(h, (int)(end - rt_now_ms()));
	return h->up ? -1 : 0;
}

/* Disconnect (if node 1 did not) and free everything. */
void hp_close(struct hp *h)
{
	if (!h->id)
		return;
	if (h->up && !rdma_disconnect(h->id))
		hp_wait_down(h, DOWN_MS);
	hp_free(h);
}

/*
 * Post one frame: @hdr as it is (checksum included) and @len payload
 * bytes, waiting at most @ms for a send slot.  Return: 0, or -1 if none
 * came free, a send failed or the QP is down.
 */
int hp_frame(struct hp *h, const struct rds_wire_hdr *hdr,
	     const void *payload, uint32_t len, int solicited, int ms)
{
	long long end = rt_now_ms() + ms;
	unsigned char *slot;
	struct ibv_sge sge;
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED |
			      (solicited ? IBV_SEND_SOLICITED : 0),
	}, *bad;

	while (h->busy >= HP_SEND_SLOTS && h->up && !h->err &&
	       rt_now_ms() < end)
		hp_progress(h, (int)(end - rt_now_ms()));
	if (h->busy >= HP_SEND_SLOTS || !h->up || h->err)
		return -1;
	slot = hp_send_slot(h, h->slot);
	memcpy(slot, hdr, sizeof(*hdr));
	if (len)
		memcpy(slot + sizeof(*hdr), payload, len);
	sge.addr = (uintptr_t)slot;
	sge.length = sizeof(*hdr) + len;
	sge.lkey = h->mr->lkey;
	wr.wr_id = h->slot;
	if (ibv_post_send(h->id->qp, &wr, &bad))
		return -1;
	h->slot = (h->slot + 1) % HP_SEND_SLOTS;
	h->busy++;
	h->posted++;
	return 0;
}

/* Wait until every send completed; 0 if all did, and well, within @ms. */
int hp_flush(struct hp *h, int ms)
{
	long long end = rt_now_ms() + ms;

	while (h->busy && h->up && rt_now_ms() < end)
		hp_progress(h, (int)(end - rt_now_ms()));
	return h->busy || h->err ? -1 : 0;
}

/*
 * A header for message @seq of @len bytes from the hostile port to node
 * 1's port @k of the case, with @ext (16 bytes, or NULL), checksummed.
 */
void hp_hdr(struct hp *h, struct rds_wire_hdr *hdr, uint64_t seq,
	    uint32_t len, int k, uint8_t flags, const uint8_t *ext)
{
	rds_wire_hdr_init(hdr, seq, h->ack, len, HOSTILE_SPORT, case_port(k),
			  flags);
	if (ext)
		memcpy(hdr->ext, ext, sizeof(hdr->ext));
	rds_wire_csum_set(hdr);
}

/* The payload of hostile message @idx of a case. */
unsigned char *hostile_payload(uint32_t idx, size_t len)
{
	unsigned char *p = xmalloc(len);

	fill_pattern(p, len, msg_seed(2, idx));
	return p;
}

/*
 * Send message @idx of @len bytes to port @k as the rules say: the next
 * sequence number, full fragments, SE on the last one.  Return: its
 * sequence number (the send completions not awaited).
 */
uint64_t hp_msg(struct hp *h, uint32_t idx, uint32_t len, int k,
		uint8_t flags, const uint8_t *ext)
{
	unsigned char *data = hostile_payload(idx, len);
	struct rds_wire_hdr hdr;
	uint32_t off = 0, n;

	hp_hdr(h, &hdr, ++h->seq, len, k, flags, ext);
	do {
		n = len - off < RDS_WIRE_FRAG ? len - off : RDS_WIRE_FRAG;
		ASSERT_TRUE(!hp_frame(h, &hdr, data + off, n, off + n == len,
				      DOWN_MS),
			    "message %u: fragment at %u not sent (status %d)",
			    idx, off, h->err);
		off += n;
	} while (off < len);
	free(data);
	return h->seq;
}

void hp_ack(struct hp *h, uint64_t ack, uint8_t credit)
{
	struct rds_wire_hdr hdr;

	rds_wire_ack_init(&hdr, ack, credit);
	ASSERT_TRUE(!hp_frame(h, &hdr, NULL, 0, 1, DOWN_MS),
		    "ACK frame not sent (status %d)", h->err);
}

/* Node 1 must drop the QP for what was just sent. */
void hp_expect_drop(struct hp *h, const char *what)
{
	EXPECT_TRUE(!hp_wait_down(h, DOWN_MS),
		    "%s: node 1 did not drop the connection in %d ms", what,
		    DOWN_MS);
	hp_free(h);
}

/* The data messages from node 1's port @sport the QP saw: their count. */
static int hp_seen(struct hp *h, uint16_t sport, uint64_t *seqs, int max)
{
	unsigned int i, first = h->nrx > HP_LOG ? h->nrx - HP_LOG : 0;
	int n = 0;

	for (i = first; i < h->nrx; i++) {
		if (h->rx[i % HP_LOG].sport != sport)
			continue;
		if (n < max)
			seqs[n] = h->rx[i % HP_LOG].seq;
		n++;
	}
	return n;
}

/* Wait up to @ms until the QP saw @want messages from @sport. */
int hp_wait_seen(struct hp *h, uint16_t sport, int want,
		 uint64_t *seqs, int ms)
{
	long long end = rt_now_ms() + ms;
	int n;

	while ((n = hp_seen(h, sport, seqs, want)) < want && rt_now_ms() < end)
		hp_progress(h, 100);
	return n;
}

/*
 * Acknowledge, honestly, everything node 1 sent (its ACK probes too,
 * which come 10 ms after its last message): nothing of it stays queued
 * for a reconnect once the QP is gone.
 */
void hp_ack_all(struct hp *h)
{
	hp_listen(h, 200);
	if (h->nrx)
		hp_ack(h, h->rx[(h->nrx - 1) % HP_LOG].seq, 0);
	EXPECT_TRUE(!hp_flush(h, DOWN_MS), "ACK: status %d", h->err);
}
