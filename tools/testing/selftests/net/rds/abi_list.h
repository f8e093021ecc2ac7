/* SPDX-License-Identifier: GPL-2.0 */
/*
 * every number and layout of <linux/rds.h>, as a list.
 *
 * No include guard: abi_fill.h includes this list inside a function body,
 * once in a file compiled against the distribution's header and once in a
 * file compiled against ours, with these macros defined:
 *
 *   ABI_GROUP(title)	the constants that follow form one TAP test
 *   ABI_CONST(name)	a constant: its value and its sizeof
 *   ABI_EXPR(expr)	a function-like macro applied: value and sizeof
 *   ABI_TYPE(type)	a typedef or enum: sizeof, alignof, signedness
 *   ABI_STRUCT(tag)	struct tag: sizeof and alignof; one TAP test with
 *			the fields that follow
 *   ABI_FIELD(tag, m)	a member (struct, union or nested member path):
 *			offsetof and sizeof
 *   ABI_SCALAR(tag, m)	an integer member: as ABI_FIELD, plus signedness
 *   ABI_ARRAY(tag, m)	an array member: as ABI_FIELD, plus element size
 *
 * A name present in one header and missing in the other breaks the build,
 * which is a failure too.  Keep this list complete when the header grows.
 */

ABI_GROUP("constants: ABI version and option names");
ABI_CONST(RDS_IB_ABI_VERSION);
ABI_CONST(SOL_RDS);
ABI_CONST(RDS_CANCEL_SENT_TO);
ABI_CONST(RDS_GET_MR);
ABI_CONST(RDS_FREE_MR);
ABI_CONST(RDS_RECVERR);
ABI_CONST(RDS_CONG_MONITOR);
ABI_CONST(RDS_GET_MR_FOR_DEST);
ABI_CONST(SO_RDS_TRANSPORT);
ABI_CONST(SO_RDS_MSG_RXPATH_LATENCY);

ABI_GROUP("constants: transports");
ABI_CONST(RDS_TRANS_IB);
ABI_CONST(RDS_TRANS_GAP);
ABI_CONST(RDS_TRANS_TCP);
ABI_CONST(RDS_TRANS_COUNT);
ABI_CONST(RDS_TRANS_NONE);
ABI_CONST(RDS_TRANS_IWARP);

ABI_GROUP("constants: ioctls");
ABI_CONST(SIOCRDSSETTOS);
ABI_CONST(SIOCRDSGETTOS);
ABI_TYPE(rds_tos_t);

ABI_GROUP("constants: control message types");
ABI_CONST(RDS_CMSG_RDMA_ARGS);
ABI_CONST(RDS_CMSG_RDMA_DEST);
ABI_CONST(RDS_CMSG_RDMA_MAP);
ABI_CONST(RDS_CMSG_RDMA_STATUS);
ABI_CONST(RDS_CMSG_CONG_UPDATE);
ABI_CONST(RDS_CMSG_ATOMIC_FADD);
ABI_CONST(RDS_CMSG_ATOMIC_CSWP);
ABI_CONST(RDS_CMSG_MASKED_ATOMIC_FADD);
ABI_CONST(RDS_CMSG_MASKED_ATOMIC_CSWP);
ABI_CONST(RDS_CMSG_RXPATH_LATENCY);
ABI_CONST(RDS_CMSG_ZCOPY_COOKIE);
ABI_CONST(RDS_CMSG_ZCOPY_COMPLETION);

ABI_GROUP("constants: info tables");
ABI_CONST(RDS_INFO_FIRST);
ABI_CONST(RDS_INFO_COUNTERS);
ABI_CONST(RDS_INFO_CONNECTIONS);
ABI_CONST(RDS_INFO_SEND_MESSAGES);
ABI_CONST(RDS_INFO_RETRANS_MESSAGES);
ABI_CONST(RDS_INFO_RECV_MESSAGES);
ABI_CONST(RDS_INFO_SOCKETS);
ABI_CONST(RDS_INFO_TCP_SOCKETS);
ABI_CONST(RDS_INFO_IB_CONNECTIONS);
ABI_CONST(RDS_INFO_CONNECTION_STATS);
ABI_CONST(RDS_INFO_IWARP_CONNECTIONS);
ABI_CONST(RDS6_INFO_CONNECTIONS);
ABI_CONST(RDS6_INFO_SEND_MESSAGES);
ABI_CONST(RDS6_INFO_RETRANS_MESSAGES);
ABI_CONST(RDS6_INFO_RECV_MESSAGES);
ABI_CONST(RDS6_INFO_SOCKETS);
ABI_CONST(RDS6_INFO_TCP_SOCKETS);
ABI_CONST(RDS6_INFO_IB_CONNECTIONS);
ABI_CONST(RDS_INFO_LAST);

ABI_GROUP("constants: info flags and name lengths");
ABI_CONST(RDS_INFO_CONNECTION_FLAG_SENDING);
ABI_CONST(RDS_INFO_CONNECTION_FLAG_CONNECTING);
ABI_CONST(RDS_INFO_CONNECTION_FLAG_CONNECTED);
ABI_CONST(TRANSNAMSIZ);
ABI_CONST(RDS_INFO_MESSAGE_FLAG_ACK);
ABI_CONST(RDS_INFO_MESSAGE_FLAG_FAST_ACK);
ABI_CONST(RDS_IB_GID_LEN);

ABI_GROUP("constants: receive path latency points");
ABI_CONST(RDS_MSG_RX_HDR_TO_DGRAM_START);
ABI_CONST(RDS_MSG_RX_DGRAM_REASSEMBLE);
ABI_CONST(RDS_MSG_RX_DGRAM_DELIVERED);
ABI_CONST(RDS_MSG_RX_DGRAM_TRACE_MAX);
ABI_TYPE(enum rds_message_rxpath_latency);

ABI_GROUP("constants: congestion monitor");
ABI_CONST(RDS_CONG_MONITOR_SIZE);
ABI_EXPR(RDS_CONG_MONITOR_BIT(0));
ABI_EXPR(RDS_CONG_MONITOR_BIT(63));
ABI_EXPR(RDS_CONG_MONITOR_BIT(64));
ABI_EXPR(RDS_CONG_MONITOR_BIT(65535));
ABI_EXPR(RDS_CONG_MONITOR_BIT(-1));
ABI_EXPR(RDS_CONG_MONITOR_BIT(1 + 127));
ABI_EXPR(RDS_CONG_MONITOR_MASK(0));
ABI_EXPR(RDS_CONG_MONITOR_MASK(63));
ABI_EXPR(RDS_CONG_MONITOR_MASK(64));
ABI_EXPR(RDS_CONG_MONITOR_MASK(65535));
ABI_EXPR(RDS_CONG_MONITOR_MASK(127));

ABI_GROUP("constants: RDMA");
ABI_TYPE(rds_rdma_cookie_t);
ABI_CONST(RDS_RDMA_SUCCESS);
ABI_CONST(RDS_RDMA_REMOTE_ERROR);
ABI_CONST(RDS_RDMA_CANCELED);
ABI_CONST(RDS_RDMA_DROPPED);
ABI_CONST(RDS_RDMA_OTHER_ERROR);
ABI_CONST(RDS_MAX_ZCOOKIES);
ABI_CONST(RDS_RDMA_READWRITE);
ABI_CONST(RDS_RDMA_FENCE);
ABI_CONST(RDS_RDMA_INVALIDATE);
ABI_CONST(RDS_RDMA_USE_ONCE);
ABI_CONST(RDS_RDMA_DONTWAIT);
ABI_CONST(RDS_RDMA_NOTIFY_ME);
ABI_CONST(RDS_RDMA_SILENT);

ABI_STRUCT(rds_info_counter);
ABI_ARRAY(rds_info_counter, name);
ABI_SCALAR(rds_info_counter, value);

ABI_STRUCT(rds_info_connection);
ABI_SCALAR(rds_info_connection, next_tx_seq);
ABI_SCALAR(rds_info_connection, next_rx_seq);
ABI_SCALAR(rds_info_connection, laddr);
ABI_SCALAR(rds_info_connection, faddr);
ABI_ARRAY(rds_info_connection, transport);
ABI_SCALAR(rds_info_connection, flags);
ABI_SCALAR(rds_info_connection, tos);

ABI_STRUCT(rds6_info_connection);
ABI_SCALAR(rds6_info_connection, next_tx_seq);
ABI_SCALAR(rds6_info_connection, next_rx_seq);
ABI_FIELD(rds6_info_connection, laddr);
ABI_FIELD(rds6_info_connection, faddr);
ABI_ARRAY(rds6_info_connection, transport);
ABI_SCALAR(rds6_info_connection, flags);

ABI_STRUCT(rds_info_message);
ABI_SCALAR(rds_info_message, seq);
ABI_SCALAR(rds_info_message, len);
ABI_SCALAR(rds_info_message, laddr);
ABI_SCALAR(rds_info_message, faddr);
ABI_SCALAR(rds_info_message, lport);
ABI_SCALAR(rds_info_message, fport);
ABI_SCALAR(rds_info_message, flags);
ABI_SCALAR(rds_info_message, tos);

ABI_STRUCT(rds6_info_message);
ABI_SCALAR(rds6_info_message, seq);
ABI_SCALAR(rds6_info_message, len);
ABI_FIELD(rds6_info_message, laddr);
ABI_FIELD(rds6_info_message, faddr);
ABI_SCALAR(rds6_info_message, lport);
ABI_SCALAR(rds6_info_message, fport);
ABI_SCALAR(rds6_info_message, flags);
ABI_SCALAR(rds6_info_message, tos);

ABI_STRUCT(rds_info_socket);
ABI_SCALAR(rds_info_socket, sndbuf);
ABI_SCALAR(rds_info_socket, bound_addr);
ABI_SCALAR(rds_info_socket, connected_addr);
ABI_SCALAR(rds_info_socket, bound_port);
ABI_SCALAR(rds_info_socket, connected_port);
ABI_SCALAR(rds_info_socket, rcvbuf);
ABI_SCALAR(rds_info_socket, inum);

ABI_STRUCT(rds6_info_socket);
ABI_SCALAR(rds6_info_socket, sndbuf);
ABI_FIELD(rds6_info_socket, bound_addr);
ABI_FIELD(rds6_info_socket, connected_addr);
ABI_SCALAR(rds6_info_socket, bound_port);
ABI_SCALAR(rds6_info_socket, connected_port);
ABI_SCALAR(rds6_info_socket, rcvbuf);
ABI_SCALAR(rds6_info_socket, inum);

ABI_STRUCT(rds_info_tcp_socket);
ABI_SCALAR(rds_info_tcp_socket, local_addr);
ABI_SCALAR(rds_info_tcp_socket, local_port);
ABI_SCALAR(rds_info_tcp_socket, peer_addr);
ABI_SCALAR(rds_info_tcp_socket, peer_port);
ABI_SCALAR(rds_info_tcp_socket, hdr_rem);
ABI_SCALAR(rds_info_tcp_socket, data_rem);
ABI_SCALAR(rds_info_tcp_socket, last_sent_nxt);
ABI_SCALAR(rds_info_tcp_socket, last_expected_una);
ABI_SCALAR(rds_info_tcp_socket, last_seen_una);
ABI_SCALAR(rds_info_tcp_socket, tos);

ABI_STRUCT(rds6_info_tcp_socket);
ABI_FIELD(rds6_info_tcp_socket, local_addr);
ABI_SCALAR(rds6_info_tcp_socket, local_port);
ABI_FIELD(rds6_info_tcp_socket, peer_addr);
ABI_SCALAR(rds6_info_tcp_socket, peer_port);
ABI_SCALAR(rds6_info_tcp_socket, hdr_rem);
ABI_SCALAR(rds6_info_tcp_socket, data_rem);
ABI_SCALAR(rds6_info_tcp_socket, last_sent_nxt);
ABI_SCALAR(rds6_info_tcp_socket, last_expected_una);
ABI_SCALAR(rds6_info_tcp_socket, last_seen_una);

ABI_STRUCT(rds_info_rdma_connection);
ABI_SCALAR(rds_info_rdma_connection, src_addr);
ABI_SCALAR(rds_info_rdma_connection, dst_addr);
ABI_ARRAY(rds_info_rdma_connection, src_gid);
ABI_ARRAY(rds_info_rdma_connection, dst_gid);
ABI_SCALAR(rds_info_rdma_connection, max_send_wr);
ABI_SCALAR(rds_info_rdma_connection, max_recv_wr);
ABI_SCALAR(rds_info_rdma_connection, max_send_sge);
ABI_SCALAR(rds_info_rdma_connection, rdma_mr_max);
ABI_SCALAR(rds_info_rdma_connection, rdma_mr_size);
ABI_SCALAR(rds_info_rdma_connection, tos);
ABI_SCALAR(rds_info_rdma_connection, sl);
ABI_SCALAR(rds_info_rdma_connection, cache_allocs);

ABI_STRUCT(rds6_info_rdma_connection);
ABI_FIELD(rds6_info_rdma_connection, src_addr);
ABI_FIELD(rds6_info_rdma_connection, dst_addr);
ABI_ARRAY(rds6_info_rdma_connection, src_gid);
ABI_ARRAY(rds6_info_rdma_connection, dst_gid);
ABI_SCALAR(rds6_info_rdma_connection, max_send_wr);
ABI_SCALAR(rds6_info_rdma_connection, max_recv_wr);
ABI_SCALAR(rds6_info_rdma_connection, max_send_sge);
ABI_SCALAR(rds6_info_rdma_connection, rdma_mr_max);
ABI_SCALAR(rds6_info_rdma_connection, rdma_mr_size);
ABI_SCALAR(rds6_info_rdma_connection, tos);
ABI_SCALAR(rds6_info_rdma_connection, sl);
ABI_SCALAR(rds6_info_rdma_connection, cache_allocs);

ABI_STRUCT(rds_rx_trace_so);
ABI_SCALAR(rds_rx_trace_so, rx_traces);
ABI_ARRAY(rds_rx_trace_so, rx_trace_pos);

ABI_STRUCT(rds_cmsg_rx_trace);
ABI_SCALAR(rds_cmsg_rx_trace, rx_traces);
ABI_ARRAY(rds_cmsg_rx_trace, rx_trace_pos);
ABI_ARRAY(rds_cmsg_rx_trace, rx_trace);

ABI_STRUCT(rds_iovec);
ABI_SCALAR(rds_iovec, addr);
ABI_SCALAR(rds_iovec, bytes);

ABI_STRUCT(rds_get_mr_args);
ABI_FIELD(rds_get_mr_args, vec);
ABI_SCALAR(rds_get_mr_args, vec.addr);
ABI_SCALAR(rds_get_mr_args, vec.bytes);
ABI_SCALAR(rds_get_mr_args, cookie_addr);
ABI_SCALAR(rds_get_mr_args, flags);

ABI_STRUCT(rds_get_mr_for_dest_args);
ABI_FIELD(rds_get_mr_for_dest_args, dest_addr);
ABI_FIELD(rds_get_mr_for_dest_args, vec);
ABI_SCALAR(rds_get_mr_for_dest_args, vec.addr);
ABI_SCALAR(rds_get_mr_for_dest_args, vec.bytes);
ABI_SCALAR(rds_get_mr_for_dest_args, cookie_addr);
ABI_SCALAR(rds_get_mr_for_dest_args, flags);

ABI_STRUCT(rds_free_mr_args);
ABI_SCALAR(rds_free_mr_args, cookie);
ABI_SCALAR(rds_free_mr_args, flags);

ABI_STRUCT(rds_rdma_args);
ABI_SCALAR(rds_rdma_args, cookie);
ABI_FIELD(rds_rdma_args, remote_vec);
ABI_SCALAR(rds_rdma_args, remote_vec.addr);
ABI_SCALAR(rds_rdma_args, remote_vec.bytes);
ABI_SCALAR(rds_rdma_args, local_vec_addr);
ABI_SCALAR(rds_rdma_args, nr_local);
ABI_SCALAR(rds_rdma_args, flags);
ABI_SCALAR(rds_rdma_args, user_token);

ABI_STRUCT(rds_atomic_args);
ABI_SCALAR(rds_atomic_args, cookie);
ABI_SCALAR(rds_atomic_args, local_addr);
ABI_SCALAR(rds_atomic_args, remote_addr);
ABI_FIELD(rds_atomic_args, cswp);
ABI_SCALAR(rds_atomic_args, cswp.compare);
ABI_SCALAR(rds_atomic_args, cswp.swap);
ABI_FIELD(rds_atomic_args, fadd);
ABI_SCALAR(rds_atomic_args, fadd.add);
ABI_FIELD(rds_atomic_args, m_cswp);
ABI_SCALAR(rds_atomic_args, m_cswp.compare);
ABI_SCALAR(rds_atomic_args, m_cswp.swap);
ABI_SCALAR(rds_atomic_args, m_cswp.compare_mask);
ABI_SCALAR(rds_atomic_args, m_cswp.swap_mask);
ABI_FIELD(rds_atomic_args, m_fadd);
ABI_SCALAR(rds_atomic_args, m_fadd.add);
ABI_SCALAR(rds_atomic_args, m_fadd.nocarry_mask);
ABI_SCALAR(rds_atomic_args, flags);
ABI_SCALAR(rds_atomic_args, user_token);

ABI_STRUCT(rds_rdma_notify);
ABI_SCALAR(rds_rdma_notify, user_token);
ABI_SCALAR(rds_rdma_notify, status);

ABI_STRUCT(rds_zcopy_cookies);
ABI_SCALAR(rds_zcopy_cookies, num);
ABI_ARRAY(rds_zcopy_cookies, cookies);
