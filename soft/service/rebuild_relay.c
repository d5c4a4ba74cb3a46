/*
 * The messages that rebuild a link group's only link (doc/soft-roce.md
 * section 5, "The only link"), relayed between the libraries of a
 * connection's two ends once both run over RDMA: a library hands its
 * message for a link group to SMC_SOFT_CMD_REBUILD, this daemon relays it
 * through one of the group's connections with the peer host: it
 * sends it to the peer's daemon on the control port under both ends'
 * nonces, again until that daemon says it keeps it, and the peer's daemon
 * keeps it until its library takes it (a library that holds link groups
 * asks about once a second).  The daemons neither read nor change the
 * bytes.  A newer message of the same end replaces an older one: only the
 * last is of use.
 */
#include "service.h"
#include "peer_msg.h"
#include "regidx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <libmnl/libmnl.h>

#include "smc_uapi.h"

/*
 * A message not kept yet is sent again after 200 ms, then 400, 800, then
 * every 1.6 s: a rebuild starts when a link's packets stopped, and the
 * control port's may stop as long (seconds, in a starved guest).
 */
#define REBUILD_AGAIN_MS 200
#define REBUILD_DOUBLINGS 3
/* not kept by then: given up, about when the library gives up (SMCR_REBUILD_MS, 10 s from the failure) */
#define REBUILD_MS       9000

_Static_assert(SMC_SOFT_REBUILD_MAX == SOFT_PEER_REBUILD_MAX, "one rebuild message fits the control port's datagram");

struct soft_rebuild_relay {
	/* ours: the last given, sent until kept */
	uint8_t tx[SOFT_PEER_REBUILD_MAX];
	uint8_t tx_len;
	uint8_t tx_index;        /* the last given's number, 1 to 255 */
	bool tx_kept;
	uint8_t sends;
	int64_t next_ms, deadline_ms;
	/* the peer's last, and whether our library took it */
	uint8_t rx[SOFT_PEER_REBUILD_MAX];
	uint8_t rx_len;
	uint8_t rx_index;
	bool rx_taken;
};

void soft_rebuild_free(struct soft_sock *s)
{
	free(s->ask.rebuild);
	s->ask.rebuild = NULL;
}

bool soft_relays(const struct soft_sock *s)
{
	return s->ask.remote && s->pair_status == SOFT_PAIR_RDMA && s->ask.peer_nonce;
}

static void send_msg(struct soft_state *st, struct soft_sock *s, uint8_t type, uint8_t index)
{
	if (type == SOFT_PEER_REBUILD)
		soft_relay_send(st, s, type, index, s->ask.rebuild->tx, s->ask.rebuild->tx_len);
	else
		soft_relay_send(st, s, type, index, NULL, 0);
}

int soft_rebuild_give(struct soft_state *st, struct soft_sock *s, const void *msg, size_t len, int64_t now)
{
	struct soft_rebuild_relay *b;

	if (!soft_relays(s))
		return -EAGAIN;
	if (!len || len > SOFT_PEER_REBUILD_MAX)
		return -EINVAL;
	if (!s->ask.rebuild && !(s->ask.rebuild = calloc(1, sizeof(*s->ask.rebuild))))
		return -ENOMEM;
	b = s->ask.rebuild;
	memcpy(b->tx, msg, len);
	b->tx_len = (uint8_t)len;
	b->tx_index = (uint8_t)(b->tx_index == 255 ? 1 : b->tx_index + 1);
	b->tx_kept = false;
	b->sends = 1;
	b->next_ms = now + REBUILD_AGAIN_MS;
	b->deadline_ms = now + REBUILD_MS;
	send_msg(st, s, SOFT_PEER_REBUILD, b->tx_index);
	soft_peer_due(st, s, b->next_ms);
	return 0;
}

bool soft_rebuild_input(struct soft_state *st, struct soft_sock *s, const struct soft_peer_msg *m)
{
	struct soft_rebuild_relay *b;

	if (!soft_relays(s) || !soft_clc_from_other_end(s, m))
		return false;
	if (m->type == SOFT_PEER_REBUILD_SEEN) {
		b = s->ask.rebuild;
		if (b && b->tx_len && m->index == b->tx_index)
			b->tx_kept = true;
		return false;
	}
	if (!s->ask.rebuild && !(s->ask.rebuild = calloc(1, sizeof(*s->ask.rebuild))))
		return false;
	b = s->ask.rebuild;
	send_msg(st, s, SOFT_PEER_REBUILD_SEEN, m->index);
	/* a repeat is answered again, its bytes not taken twice */
	if (b->rx_len && m->index == b->rx_index)
		return false;
	memcpy(b->rx, m->clc, m->clc_len);
	b->rx_len = (uint8_t)m->clc_len;
	b->rx_index = m->index;
	b->rx_taken = false;
	return true;
}

int64_t soft_rebuild_tick(struct soft_state *st, struct soft_sock *s, int64_t now)
{
	struct soft_rebuild_relay *b = s->ask.rebuild;

	if (!b || !soft_relays(s) || b->tx_kept || !b->sends || now >= b->deadline_ms) {
		if (b)
			b->sends = 0;
		soft_peer_unlink(s);
		return 0;
	}
	if (now >= b->next_ms) {
		int shift = b->sends < REBUILD_DOUBLINGS ? b->sends : REBUILD_DOUBLINGS;

		send_msg(st, s, SOFT_PEER_REBUILD, b->tx_index);
		b->next_ms = now + ((int64_t)REBUILD_AGAIN_MS << shift);
		if (b->sends < 255)
			b->sends++;
	}
	return b->next_ms < b->deadline_ms ? b->next_ms : b->deadline_ms;
}

bool soft_rebuild_kept(const struct soft_sock *s)
{
	return s->ask.rebuild && s->ask.rebuild->tx_kept;
}

const uint8_t *soft_rebuild_take(struct soft_state *st, uint64_t conn_id, struct soft_sock **from, size_t *len)
{
	for (struct soft_sock *s = soft_idx_conn_first(st, conn_id); s; s = s->conn_next) {
		struct soft_rebuild_relay *b = s->ask.rebuild;

		if (!b || !b->rx_len || b->rx_taken)
			continue;
		b->rx_taken = true;
		*from = s;
		*len = b->rx_len;
		return b->rx;
	}
	return NULL;
}

struct soft_sock *soft_rebuild_carrier(struct soft_state *st, uint64_t conn_id, uint32_t key)
{
	/* the newest first: the likeliest to have its other end still */
	for (struct soft_sock *s = soft_idx_conn_first(st, conn_id); s; s = s->conn_next)
		if (key && s->lgr_key == key && soft_relays(s))
			return s;
	return NULL;
}

static int give(struct soft_req *r, const struct nlattr *key, const struct nlattr *msg)
{
	struct soft_sock *s;
	size_t len = mnl_attr_get_payload_len(msg);

	if (!key || mnl_attr_get_payload_len(key) != sizeof(uint32_t)) {
		r->ext_ack = "LGR_KEY (u32) required with REBUILD";
		return -EINVAL;
	}
	if (!len || len > SOFT_PEER_REBUILD_MAX) {
		r->ext_ack = "REBUILD is 1 to 64 bytes";
		return -EINVAL;
	}
	s = soft_rebuild_carrier(r->st, r->peer->conn_id, mnl_attr_get_u32(key));
	if (!s) {
		r->ext_ack = "no SMC-R connection of that link group with another host";
		return -ENOENT;
	}
	return soft_rebuild_give(r->st, s, mnl_attr_get_payload(msg), len, soft_now_ms());
}

int soft_rebuild(struct soft_req *r)
{
	const struct nlattr *tb[SMC_SOFT_A_MAX + 1];
	struct nlmsghdr *nlh;
	struct soft_sock *s = NULL;
	const uint8_t *msg = NULL;
	size_t len = 0;
	int rc;

	if (soft_genl_attrs(r, tb, SMC_SOFT_A_MAX))
		return -EINVAL;
	if (tb[SMC_SOFT_A_REBUILD] && (rc = give(r, tb[SMC_SOFT_A_LGR_KEY], tb[SMC_SOFT_A_REBUILD])))
		return rc;
	if (!tb[SMC_SOFT_A_REBUILD])
		msg = soft_rebuild_take(r->st, r->peer->conn_id, &s, &len);
	if (!tb[SMC_SOFT_A_REBUILD] && !msg)
		s = soft_gone_take(r->st, r->peer->conn_id);
	nlh = soft_genl_msg(r->out, r->nlh, SOFT_ID_SOFT, SMC_SOFT_CMD_REBUILD, 0);
	if (!nlh)
		return -ENOMEM;
	if (s) {
		mnl_attr_put_u64(nlh, SMC_SOFT_A_TOKEN, s->token);
		mnl_attr_put_u32(nlh, SMC_SOFT_A_LGR_KEY, s->lgr_key);
	}
	if (msg)
		mnl_attr_put(nlh, SMC_SOFT_A_REBUILD, len, msg);
	else if (s)
		mnl_attr_put_u8(nlh, SMC_SOFT_A_PEER_GONE, 1);
	soft_msg_end(r->out, nlh);
	return r->out->failed ? -ENOMEM : 0;
}
