/*
 * The CLC messages of a connection between hosts, relayed between the two
 * ends' libraries by their daemons (doc/soft-roce.md section 2.2): a
 * library hands its next message to SMC_SOFT_CMD_CLC, this daemon sends it
 * to the peer's daemon on the control port under both ends' nonces, again
 * until that daemon says it keeps it, and keeps the peer's messages until
 * its own library takes them.  The daemons neither read nor change the
 * bytes: the libraries check them as the kernel's CLC receiver does (a
 * capture decodes them for its records only, soft_dump_clc_msg()).
 */
#include "service.h"
#include "devices.h"
#include "peer_msg.h"
#include "regidx.h"
#include "stats.h"
#include "dump.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libmnl/libmnl.h>

#include "smc_uapi.h"

#define CLC_AGAIN_MS 250        /* a message not kept yet, sent again; then CLC_AGAIN_MS * 4 */
#define CLC_SENDS    3
#define CLC_MS       2000       /* not kept by then: the connection stays TCP */

_Static_assert(SMC_SOFT_CLC_MAX == SOFT_PEER_CLC_MAX && SMC_SOFT_CLC_MSGS == SOFT_PEER_CLC_INDEX_MAX,
	       "one CLC message fits the control port's datagram");

struct soft_clc_relay {
	char ibdev[SOFT_IBNAME_MAX];
	uint8_t ibport;
	/* a second port in the same PNET for a second link, ibport2 0: none */
	char ibdev2[SOFT_IBNAME_MAX];
	uint8_t ibport2;
	uint8_t gid2[SOFT_GID_SIZE];
	/* ours: the last given, sent until kept */
	uint8_t tx[SOFT_PEER_CLC_MAX];
	uint16_t tx_len;
	uint32_t tx_reason;      /* it is our library's DECLINE with this code; 0: not */
	uint8_t tx_index;        /* how many of ours were given */
	uint8_t tx_seen;         /* how many the peer's daemon keeps */
	uint8_t sends;
	int64_t next_ms, deadline_ms;
	bool failed;             /* one not kept in time */
	/* the peer's, by index */
	uint8_t rx[SOFT_PEER_CLC_INDEX_MAX][SOFT_PEER_CLC_MAX];
	uint16_t rx_len[SOFT_PEER_CLC_INDEX_MAX];
};

int soft_clc_relay_new(struct soft_sock *s, const struct soft_dev *dev, int port, const struct soft_dev *alt,
		       int alt_port)
{
	struct soft_clc_relay *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	snprintf(c->ibdev, sizeof(c->ibdev), "%s", dev->name);
	c->ibport = (uint8_t)port;
	if (alt) {
		snprintf(c->ibdev2, sizeof(c->ibdev2), "%s", alt->name);
		c->ibport2 = (uint8_t)alt_port;
		memcpy(c->gid2, alt->gid_v2[alt_port - 1], SOFT_GID_SIZE);
	}
	free(s->ask.clc);
	s->ask.clc = c;
	return 0;
}

bool soft_clc_from_other_end(const struct soft_sock *s, const struct soft_peer_msg *m)
{
	return s->ask.peer_nonce && m->nonce == s->ask.peer_nonce && m->echo == s->ask.nonce &&
	       m->role != s->role;
}

void soft_relay_msg(const struct soft_sock *s, uint8_t type, uint8_t index, const uint8_t *bytes,
		    uint16_t len, struct soft_peer_msg *m)
{
	soft_peer_msg_of(s, type, m);
	m->verdict = 0;
	m->echo = s->ask.peer_nonce;
	m->index = index;
	m->clc = bytes;
	m->clc_len = len;
}

void soft_relay_send(struct soft_state *st, const struct soft_sock *s, uint8_t type, uint8_t index,
		     const uint8_t *bytes, uint16_t len)
{
	struct soft_peer_msg m;

	soft_relay_msg(s, type, index, bytes, len, &m);
	soft_peer_send(st, &m, 0, s->ask.ifindex);
}

static void send_clc(struct soft_state *st, struct soft_sock *s, uint8_t type, uint8_t index)
{
	if (type == SOFT_PEER_CLC)
		soft_relay_send(st, s, type, index, s->ask.clc->tx, s->ask.clc->tx_len);
	else
		soft_relay_send(st, s, type, index, NULL, 0);
}

/*
 * The peer's message number index answers ours: the server's n the
 * client's n, the client's n + 1 the server's n.  It was kept then, though
 * its CLC_SEEN was lost or late (a busy host), and a server whose client
 * CONFIRMed must not be declined for its ACCEPT's CLC_SEEN.
 */
static void kept_by_answer(struct soft_sock *s, uint8_t index)
{
	struct soft_clc_relay *c = s->ask.clc;
	unsigned answered = s->role == 0 ? index : index - 1u;

	if (answered && answered == c->tx_index && c->tx_seen < answered) {
		c->tx_seen = c->tx_index;
		c->failed = false;
		soft_peer_unlink(s);
	}
}

void soft_clc_input(struct soft_state *st, struct soft_sock *s, const struct soft_peer_msg *m)
{
	struct soft_clc_relay *c = s->ask.clc;
	unsigned i = m->index - 1u;

	if (!c || s->pair_status != SOFT_PAIR_NEGOTIATE || !soft_clc_from_other_end(s, m))
		return;
	if (m->type == SOFT_PEER_CLC_SEEN) {
		/* late is kept too: our library has not been told it failed (still NEGOTIATE) */
		if (m->index == c->tx_index && c->tx_seen < m->index) {
			c->tx_seen = m->index;
			c->failed = false;
			soft_peer_unlink(s);
		}
		return;
	}
	/* the first copy is the one: a repeat is answered again, its bytes not taken */
	if (!c->rx_len[i]) {
		memcpy(c->rx[i], m->clc, m->clc_len);
		c->rx_len[i] = m->clc_len;
		if (st->dumps)
			soft_dump_clc_msg(st, s, c->rx[i], c->rx_len[i], true);
	}
	kept_by_answer(s, m->index);
	send_clc(st, s, SOFT_PEER_CLC_SEEN, m->index);
}

int64_t soft_clc_tick(struct soft_state *st, struct soft_sock *s, int64_t now)
{
	struct soft_clc_relay *c = s->ask.clc;

	if (!c || c->failed || c->tx_seen == c->tx_index) {
		soft_peer_unlink(s);
		return 0;
	}
	if (now >= c->deadline_ms) {
		c->failed = true;
		soft_peer_unlink(s);
		return 0;
	}
	if (c->sends < CLC_SENDS && now >= c->next_ms) {
		send_clc(st, s, SOFT_PEER_CLC, c->tx_index);
		c->sends++;
		c->next_ms = now + ((int64_t)CLC_AGAIN_MS << (2 * (c->sends - 1)));
	}
	return c->sends < CLC_SENDS && c->next_ms < c->deadline_ms ? c->next_ms : c->deadline_ms;
}

int soft_clc_give(struct soft_state *st, struct soft_sock *s, const void *msg, size_t len, uint32_t reason,
		  int64_t now)
{
	struct soft_clc_relay *c = s->ask.clc;

	if (!c || s->pair_status != SOFT_PAIR_NEGOTIATE)
		return -EAGAIN;
	if (!len || len > SOFT_PEER_CLC_MAX || c->tx_index >= SOFT_PEER_CLC_INDEX_MAX)
		return -EINVAL;
	if (c->tx_seen != c->tx_index)
		return -EBUSY;
	memcpy(c->tx, msg, len);
	c->tx_len = (uint16_t)len;
	c->tx_reason = reason;
	c->tx_index++;
	if (st->dumps)
		soft_dump_clc_msg(st, s, c->tx, c->tx_len, false);
	c->sends = 1;
	c->next_ms = now + CLC_AGAIN_MS;
	c->deadline_ms = now + CLC_MS;
	send_clc(st, s, SOFT_PEER_CLC, c->tx_index);
	soft_peer_due(st, s, c->next_ms);
	return 0;
}

const uint8_t *soft_clc_peer_msg(const struct soft_sock *s, unsigned index, size_t *len)
{
	const struct soft_clc_relay *c = s->ask.clc;

	if (!c || index < 1 || index > SOFT_PEER_CLC_INDEX_MAX || !c->rx_len[index - 1])
		return NULL;
	*len = c->rx_len[index - 1];
	return c->rx[index - 1];
}

unsigned soft_clc_seen(const struct soft_sock *s)
{
	return s->ask.clc ? s->ask.clc->tx_seen : 0;
}

bool soft_clc_failed(const struct soft_sock *s)
{
	return s->ask.clc && s->ask.clc->failed;
}

uint32_t soft_clc_undecided_reason(const struct soft_sock *s)
{
	return s->ask.clc && s->ask.clc->tx_reason ? s->ask.clc->tx_reason : SOFT_DECL_PEERNOSMC;
}

struct clc_attrs {
	uint64_t token;
	const void *clc;
	size_t clc_len;
	uint8_t taken;
	uint32_t reason;         /* with clc: our library's DECLINE, its code */
	bool connected;          /* PAIR_STATUS PAIRED: our library's end runs over RDMA */
	uint32_t lgr_key;        /* with it: its link group and link (lgr_report.c) */
	uint8_t link_id;
	uint32_t rmb_size, sndbuf_size;  /* with it: its buffers, 0 not said */
};

static int parse(struct soft_req *r, struct clc_attrs *a)
{
	const struct nlattr *tb[SMC_SOFT_A_MAX + 1];

	memset(a, 0, sizeof(*a));
	if (soft_genl_attrs(r, tb, SMC_SOFT_A_MAX))
		return -EINVAL;
	if (!tb[SMC_SOFT_A_TOKEN] || mnl_attr_get_payload_len(tb[SMC_SOFT_A_TOKEN]) != sizeof(uint64_t)) {
		r->ext_ack = "TOKEN (u64) required";
		return -EINVAL;
	}
	memcpy(&a->token, mnl_attr_get_payload(tb[SMC_SOFT_A_TOKEN]), sizeof(a->token));
	if (tb[SMC_SOFT_A_CLC]) {
		a->clc = mnl_attr_get_payload(tb[SMC_SOFT_A_CLC]);
		a->clc_len = mnl_attr_get_payload_len(tb[SMC_SOFT_A_CLC]);
		if (!a->clc_len || a->clc_len > SMC_SOFT_CLC_MAX) {
			r->ext_ack = "CLC is 1 to 1024 bytes";
			return -EINVAL;
		}
	}
	if (tb[SMC_SOFT_A_REASON]) {
		if (!a->clc || mnl_attr_get_payload_len(tb[SMC_SOFT_A_REASON]) != 4 ||
		    !mnl_attr_get_u32(tb[SMC_SOFT_A_REASON])) {
			r->ext_ack = "REASON is a code not 0, with the DECLINE in CLC";
			return -EINVAL;
		}
		a->reason = mnl_attr_get_u32(tb[SMC_SOFT_A_REASON]);
	}
	if (tb[SMC_SOFT_A_PAIR_STATUS]) {
		if (mnl_attr_get_payload_len(tb[SMC_SOFT_A_PAIR_STATUS]) != 1 ||
		    *(const uint8_t *)mnl_attr_get_payload(tb[SMC_SOFT_A_PAIR_STATUS]) != SMC_SOFT_PAIR_PAIRED) {
			r->ext_ack = "PAIR_STATUS is PAIRED or absent";
			return -EINVAL;
		}
		a->connected = true;
	}
	if (tb[SMC_SOFT_A_LGR_KEY] && tb[SMC_SOFT_A_LINK_ID]) {
		if (mnl_attr_get_payload_len(tb[SMC_SOFT_A_LGR_KEY]) != 4 ||
		    mnl_attr_get_payload_len(tb[SMC_SOFT_A_LINK_ID]) != 1) {
			r->ext_ack = "LGR_KEY is a u32, LINK_ID a u8";
			return -EINVAL;
		}
		memcpy(&a->lgr_key, mnl_attr_get_payload(tb[SMC_SOFT_A_LGR_KEY]), 4);
		a->link_id = *(const uint8_t *)mnl_attr_get_payload(tb[SMC_SOFT_A_LINK_ID]);
	}
	if (tb[SMC_SOFT_A_RCVBUF] || tb[SMC_SOFT_A_SNDBUF]) {
		if (!a->connected || !tb[SMC_SOFT_A_RCVBUF] || !tb[SMC_SOFT_A_SNDBUF]) {
			r->ext_ack = "RCVBUF and SNDBUF come both, with PAIRED";
			return -EINVAL;
		}
		if (mnl_attr_get_payload_len(tb[SMC_SOFT_A_RCVBUF]) != 4 ||
		    mnl_attr_get_payload_len(tb[SMC_SOFT_A_SNDBUF]) != 4) {
			r->ext_ack = "RCVBUF and SNDBUF are u32";
			return -EINVAL;
		}
		a->rmb_size = mnl_attr_get_u32(tb[SMC_SOFT_A_RCVBUF]);
		a->sndbuf_size = mnl_attr_get_u32(tb[SMC_SOFT_A_SNDBUF]);
		if (a->rmb_size < SMC_SOFT_SMCR_BUF_MIN || a->rmb_size > SMC_SOFT_SMCR_BUF ||
		    a->sndbuf_size < SMC_SOFT_SMCR_BUF_MIN || a->sndbuf_size > SMC_SOFT_SMCR_SNDBUF) {
			r->ext_ack = "RCVBUF or SNDBUF out of soft SMC-R's sizes";
			return -EINVAL;
		}
	}
	if (tb[SMC_SOFT_A_CLC_INDEX]) {
		if (mnl_attr_get_payload_len(tb[SMC_SOFT_A_CLC_INDEX]) != 1)
			return -EINVAL;
		a->taken = *(const uint8_t *)mnl_attr_get_payload(tb[SMC_SOFT_A_CLC_INDEX]);
		if (a->taken > SMC_SOFT_CLC_MSGS) {
			r->ext_ack = "CLC_INDEX is 0 to 2";
			return -EINVAL;
		}
	}
	return 0;
}

static int reply(struct soft_req *r, const struct soft_sock *s, uint8_t taken)
{
	struct nlmsghdr *nlh = soft_genl_msg(r->out, r->nlh, SOFT_ID_SOFT, SMC_SOFT_CMD_CLC, 0);
	const struct soft_clc_relay *c = s->ask.clc;

	if (!nlh)
		return -ENOMEM;
	mnl_attr_put_u64(nlh, SMC_SOFT_A_TOKEN, s->token);
	if (s->pair_status == SOFT_PAIR_RDMA) {
		mnl_attr_put_u8(nlh, SMC_SOFT_A_PAIR_STATUS, SMC_SOFT_PAIR_PAIRED);
	} else if (s->pair_status == SOFT_PAIR_NEGOTIATE) {
		mnl_attr_put_u8(nlh, SMC_SOFT_A_PAIR_STATUS, SMC_SOFT_PAIR_NEGOTIATE);
		mnl_attr_put_u8(nlh, SMC_SOFT_A_ROLE, s->role);
		mnl_attr_put_strz(nlh, SMC_SOFT_A_IBDEV, c->ibdev);
		mnl_attr_put_u8(nlh, SMC_SOFT_A_IBPORT, c->ibport);
		if (c->ibport2) {
			mnl_attr_put_strz(nlh, SMC_SOFT_A_IBDEV2, c->ibdev2);
			mnl_attr_put_u8(nlh, SMC_SOFT_A_IBPORT2, c->ibport2);
			mnl_attr_put(nlh, SMC_SOFT_A_GID2, SOFT_GID_SIZE, c->gid2);
		}
		mnl_attr_put_u8(nlh, SMC_SOFT_A_CLC_SEEN, c->tx_seen);
		if (taken < SOFT_PEER_CLC_INDEX_MAX && c->rx_len[taken]) {
			mnl_attr_put_u8(nlh, SMC_SOFT_A_CLC_INDEX, (uint8_t)(taken + 1));
			mnl_attr_put(nlh, SMC_SOFT_A_CLC, c->rx_len[taken], c->rx[taken]);
		}
	} else if (s->pair_status == SOFT_PAIR_ASKING) {
		mnl_attr_put_u8(nlh, SMC_SOFT_A_PAIR_STATUS, SMC_SOFT_PAIR_ASKING);
	} else {
		mnl_attr_put_u8(nlh, SMC_SOFT_A_PAIR_STATUS, SMC_SOFT_PAIR_DECLINED);
		mnl_attr_put_u32(nlh, SMC_SOFT_A_REASON, s->fallback_reason);
		mnl_attr_put_u32(nlh, SMC_SOFT_A_PEER_DIAGNOSIS, s->peer_diagnosis);
	}
	soft_msg_end(r->out, nlh);
	return r->out->failed ? -ENOMEM : 0;
}

/*
 * An SMC-R connection in the namespace's statistics, with its buffers: a
 * smaller one than soft SMC-R's size is a downgrade, as the kernel counts
 * one (a library that did not say its sizes: the full ones).
 */
static void count_connected(struct soft_ns *ns, const struct soft_sock *s)
{
	uint32_t full[2] = { SMC_SOFT_SMCR_BUF, SMC_SOFT_SMCR_SNDBUF };
	uint32_t size[2] = { s->smcr_rmb, s->smcr_sndbuf };

	soft_stats_conn(ns, false, s->role == 1, true);
	for (int tx = 0; tx < 2; tx++) {
		soft_stats_rmb(ns, false, tx, SOFT_RMB_ALLOC);
		if (size[tx] < full[tx])
			soft_stats_rmb(ns, false, tx, SOFT_RMB_DGRADE);
		soft_stats_rmb_size(ns, false, tx, size[tx]);
	}
}

int soft_clc(struct soft_req *r)
{
	struct clc_attrs a;
	struct soft_sock *s;
	int rc = parse(r, &a);

	if (rc)
		return rc;
	s = soft_idx_token(r->st, a.token);
	if (!s || s->conn_id != r->peer->conn_id)
		return -ENOENT;
	if (!s->ask.remote || !s->ask.clc) {
		r->ext_ack = "not an end that negotiates with another host";
		return -EINVAL;
	}
	/*
	 * Its message could not get through: as when no daemon answers; but a
	 * DECLINE of its own lists its own code, as the kernel's sender does.
	 * Not an end its library says is PAIRED (unless it had DECLINEd): its
	 * link was confirmed over RDMA with the peer, so every message of ours
	 * got there.
	 */
	if (s->pair_status == SOFT_PAIR_NEGOTIATE && s->ask.clc->failed &&
	    (!a.connected || s->ask.clc->tx_reason))
		soft_pair_decline(r->st, s, soft_clc_undecided_reason(s), 0);
	if (a.clc) {
		rc = soft_clc_give(r->st, s, a.clc, a.clc_len, a.reason, soft_now_ms());
		if (rc == -EAGAIN)
			r->ext_ack = "the ends do not negotiate (yet)";
		else if (rc == -EBUSY)
			r->ext_ack = "the last CLC message is not kept by the peer's daemon yet";
		else if (rc)
			r->ext_ack = "an end sends two CLC messages";
		if (rc)
			return rc;
	}
	if (a.connected) {
		if (s->pair_status != SOFT_PAIR_NEGOTIATE) {
			r->ext_ack = "the ends do not negotiate";
			return -EINVAL;
		}
		soft_peer_unlink(s);
		s->ask.clc->failed = false;
		s->pair_status = SOFT_PAIR_RDMA;
		s->mode = SMC_DIAG_MODE_SMCR;
		s->lgr_key = a.lgr_key;
		s->lgr_link = a.link_id;
		s->smcr_rmb = a.rmb_size ? a.rmb_size : SMC_SOFT_SMCR_BUF;
		s->smcr_sndbuf = a.sndbuf_size ? a.sndbuf_size : SMC_SOFT_SMCR_SNDBUF;
		count_connected(r->ns, s);
	}
	return reply(r, s, a.taken);
}
