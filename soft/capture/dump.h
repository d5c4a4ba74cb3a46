/*
 * The SMC dump: records of the soft backend's SMC traffic (CLC-equivalent
 * negotiation records, CDC cursor updates, data blocks) sent as UDP
 * datagrams out of a capture device for tcpdump and Wireshark.  The wire
 * format is doc/smc-dump-header.md, its constants wire/dump_fmt.h (shared
 * with the preload); the encoder (dump_enc.c) is pure, the sessions and
 * SMC_SOFT DUMP_SET live in dump.c.
 */
#ifndef SOFT_DUMP_H
#define SOFT_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dump_fmt.h"
#include "state.h"
#include "soft_nl.h"

/* What every record says about its connection. */
struct soft_dump_rec {
	uint8_t type;            /* SOFT_DUMP_T_* */
	uint8_t flags;           /* SOFT_DUMP_F_* */
	uint64_t ts_ns;          /* CLOCK_REALTIME */
	uint64_t token;          /* the registration's token */
	uint8_t local[16], peer[16];   /* IPv4 in the first 4 bytes */
	uint16_t lport, pport;   /* host order */
};

/* The CLC-equivalent body: one layout for the four negotiation records. */
struct soft_dump_clc {
	uint8_t role;            /* 0 client, 1 server */
	uint8_t smc_type;        /* 0 SMC-R, 1 SMC-D */
	uint8_t status;          /* SMC_SOFT_PAIR_* after this step */
	uint32_t reason, peer_diagnosis;
	uint32_t lgr_id;
	uint64_t gid, dmb_token, peer_dmb_token;
	uint32_t rmbe_size, sndbuf_size;
	uint64_t peer_token;
};

/* What an SMC-R CLC message says of its sender's RoCE port and RMB (after the CLC body). */
struct soft_dump_clc_r {
	uint8_t system_id[8];
	uint8_t gid[16];
	uint8_t mac[6];
	uint8_t qp_mtu;          /* IB MTU enum */
	uint8_t first_contact;
	uint32_t qpn, rmb_rkey;
	uint64_t rmb_addr;
	uint32_t psn;
	uint8_t version;         /* of the CLC message */
};

struct soft_dump_cdc {
	uint16_t prod_wrap, cons_wrap;
	uint32_t prod_count, cons_count;
	uint8_t prod_flags, conn_state_flags;
};

/* What a process's records lost since the last LOST record of it. */
struct soft_dump_lost {
	uint32_t pid;
	uint64_t full;           /* dropped by the process: its ring was full */
	uint64_t stalled;        /* slots skipped: reserved, never published */
	uint64_t rejected;       /* slots refused: malformed, or about no connection of its own */
};

/*
 * The record's addresses from a socket's (diag layout, family AF_INET or
 * AF_INET6).  IPv4-mapped IPv6 addresses become IPv4, as the peer of a
 * dual-stack socket sees them: both ends' records then match one filter.
 */
void soft_dump_rec_addrs(struct soft_dump_rec *r, int family, const uint8_t src[16],
			 const uint8_t dst[16]);
/* Header (v2, or v1 when legacy) then body into buf: the length, or -ENOSPC. */
ssize_t soft_dump_encode(const struct soft_dump_rec *r, bool legacy, const void *body,
			 size_t body_len, uint8_t *buf, size_t len);
void soft_dump_clc_body(const struct soft_dump_clc *c, uint8_t out[SOFT_DUMP_CLC_LEN]);
/* The body of an SMC-R CLC record: c's, then r's. */
void soft_dump_clc_r_body(const struct soft_dump_clc *c, const struct soft_dump_clc_r *r,
			  uint8_t out[SOFT_DUMP_CLC_R_LEN]);
void soft_dump_cdc_body(const struct soft_dump_cdc *c, uint8_t out[SOFT_DUMP_CDC_LEN]);
/* The fixed part of a data record; the bytes follow it. */
void soft_dump_data_body(uint64_t offset, uint32_t len, uint32_t caplen,
			 uint8_t out[SOFT_DUMP_DATA_LEN]);
void soft_dump_lost_body(const struct soft_dump_lost *l, uint8_t out[SOFT_DUMP_LOST_LEN]);
/* An LLC record's body: the group's id (0: not known yet), the link's number, then the message. */
void soft_dump_llc_body(uint32_t lgr_id, uint8_t link_id, const uint8_t *msg, size_t len,
			uint8_t *out);
/*
 * An IPv4 (or IPv6 with SOFT_DUMP_F_IPV6) packet with a UDP datagram from
 * the record's local address and port to its peer's (swapped for
 * SOFT_DUMP_F_RX) around payload: the length, or -ENOSPC.
 */
ssize_t soft_dump_packet(const struct soft_dump_rec *r, const uint8_t *payload, size_t plen,
			 uint8_t *buf, size_t len);

/* SMC_SOFT DUMP_SET (reg.h). */
int soft_dump_set(struct soft_req *r);
/*
 * A session of conn_id sending on fd (which it owns from here on, also on
 * failure) to ifindex, for the connections of namespace netns, without
 * DUMP_SET's checks of fd: 0 or -ENOMEM.  An older session of conn_id ends.
 */
int soft_dump_session_add(struct soft_state *st, uint64_t conn_id, uint64_t netns, int fd,
			  uint32_t ifindex, uint8_t mode, uint8_t types, bool legacy);

/*
 * What the processes of netns are to record for its sessions: the
 * SOFT_DUMP_TYPE_CDC and _DATA bits of its SMC-D sessions (0: none), and
 * in *snaplen the data bytes the largest DATA record can carry.
 */
uint8_t soft_dump_ns_types(const struct soft_state *st, uint64_t netns, uint32_t *snaplen);

struct soft_sock;
/* The record header of a connection's record, stamped now. */
void soft_dump_rec_of(const struct soft_sock *s, uint8_t type, struct soft_dump_rec *rec);
/*
 * rec and its body to every SMC-D session of netns that captures one of
 * types (SOFT_DUMP_TYPE_*).
 */
void soft_dump_send(const struct soft_state *st, uint64_t netns, uint8_t types,
		    const struct soft_dump_rec *rec, const void *body, size_t body_len);
/*
 * A DATA record of the block at offset of len bytes, whose first caplen
 * bytes are data: to every SMC-D session of netns that captures data, each
 * cut to what fits its packet (SOFT_DUMP_F_TRUNC when fewer than len).
 */
void soft_dump_send_data(const struct soft_state *st, uint64_t netns,
			 const struct soft_dump_rec *rec, uint64_t offset, uint32_t len,
			 const uint8_t *data, uint32_t caplen);
/*
 * The CLC-equivalent record of a PAIR step of s, to every session of s's
 * namespace.  Callers test st->dumps first: no dump, no call.
 */
void soft_dump_clc(struct soft_state *st, const struct soft_sock *s, uint8_t type);
/*
 * The record of an SMC-R CLC message of s's negotiation between hosts
 * (msg, as its library gave it, or with rx the peer's as it came), decoded
 * for the record: to every SMC-R session of s's namespace.  Callers test
 * st->dumps first.
 */
void soft_dump_clc_msg(struct soft_state *st, const struct soft_sock *s, const uint8_t *msg,
		       size_t len, bool rx);
/* The control connection's session ends with it. */
void soft_dump_conn_gone(struct soft_state *st, uint64_t conn_id);

/* Every capture session freed (soft_state_free). */
void soft_dumps_free(struct soft_state *st);

#endif
