/*
 * The LLC messages of a link group (wire/smcr_llc.h, doc/smcr-wire.md):
 * what the progress thread answers itself (DELETE LINK, TEST LINK,
 * CONFIRM RKEY) and what it keeps for a caller that waits (CONFIRM LINK,
 * ADD LINK, the answers to our requests), and the exchanges that bring a
 * link up.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "smcr_int.h"

static const uint8_t link_uid[SMCR_LGR_ID_SIZE] = { 0x53, 0x4d, 0x43, 0x52 };

enum smcr_llc_ho smcr_own_ho(void)
{
	return __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? SMCR_LLC_HO_BE : SMCR_LLC_HO_LE;
}

/*
 * Linux writes a v2 LLC length (and ADD LINK's rkey count) in its own CPU's
 * byte order and reads them in it: a link's messages are written, and read,
 * in the order of the peer's, which its messages of 44 bytes show (a
 * CONFIRM LINK); a new link takes what another link of the group learned;
 * until one came, ours.  Two soft ends of other byte orders thus settle on
 * the server's, and a Linux peer reads what it would write.
 */
static enum smcr_llc_ho link_ho(const struct smcr_lgr *g, int li)
{
	if (g->link[li].peer_ho_known)
		return g->link[li].peer_ho;
	for (unsigned o = 0; o < g->nlinks; o++)
		if (g->link[o].peer_ho_known)
			return g->link[o].peer_ho;
	return smcr_own_ho();
}

int smcr_llc_decode_in(struct smcr_lgr *g, int li, const uint8_t *msg, size_t len, struct smcr_llc_msg *m)
{
	int ho = smcr_llc_v2_peer_ho(msg, len);

	if (ho >= 0) {
		g->link[li].peer_ho = (enum smcr_llc_ho)ho;
		g->link[li].peer_ho_known = true;
	}
	return smcr_llc_decode(msg, len, link_ho(g, li), m);
}

/* An LLC message for smcdump-ex (smcr_env.llc), if it listens. */
static void seen(struct smcr_lgr *g, int li, bool rx, const uint8_t *msg, size_t len)
{
	struct rdma_qp_addr own;
	struct smcr_llc_seen m = {
		.key = g->key, .link_id = g->link[li].num, .rx = rx,
		.gid = own.gid, .peer_gid = g->link[li].peer.gid, .msg = msg, .len = len,
	};

	if (!smcr_env.llc)
		return;
	rdma_qp_local(g->link[li].qp, &own);
	smcr_env.llc(&m);
}

int smcr_llc_send(struct smcr_lgr *g, int li, const struct smcr_llc_msg *m)
{
	uint8_t buf[RDMA_MSG_MAX];
	int n = smcr_llc_encode(m, link_ho(g, li), buf, sizeof(buf)), rc;

	if (n < 0)
		return n;
	if (g->link[li].dead)
		return -ENOLINK;
	rc = rdma_post_ctl(g->link[li].qp, buf, (size_t)n, 0);
	if (!rc)
		seen(g, li, false, buf, (size_t)n);
	return rc;
}

static void keep(struct smcr_lgr *g, int li, const uint8_t *msg, uint32_t len)
{
	if (g->nin == SMCR_INBOX) {
		memmove(&g->inbox[0], &g->inbox[1], sizeof(g->inbox[0]) * (SMCR_INBOX - 1));
		g->nin--;
	}
	g->inbox[g->nin].li = li;
	g->inbox[g->nin].len = len;
	memcpy(g->inbox[g->nin].msg, msg, len);
	g->nin++;
	pthread_cond_broadcast(&g->cv);
}

/*
 * The rkeys of one of the peer's RMBs by our link index, from its CONFIRM
 * RKEY that came over link li: rt[0] is the rkey on li, rt[1..] name the
 * others by link number.  -EPROTO for a count that does not fit.
 */
int smcr_rkeys_of(struct smcr_lgr *g, int li, const struct smcr_llc_confirm_rkey *c,
		  uint32_t key[SMCR_LINKS_MAX], bool ok[SMCR_LINKS_MAX])
{
	unsigned n = c->rt[0].link_id;

	if (n > SMCR_LLC_RKEYS_PER_MSG - 1)
		return -EPROTO;
	memset(ok, 0, sizeof(bool) * SMCR_LINKS_MAX);
	key[li] = c->rt[0].rmb_key;
	ok[li] = true;
	for (unsigned i = 1; i <= n; i++) {
		int o = smcr_link_of_num(g, c->rt[i].link_id);

		if (o >= 0) {
			key[o] = c->rt[i].rmb_key;
			ok[o] = true;
		}
	}
	return 0;
}

/* Whether s's peer RMB is the one of these keys: one rkey in common. */
bool smcr_rkeys_match(const struct smcr_sock *s, const uint32_t key[SMCR_LINKS_MAX],
		      const bool ok[SMCR_LINKS_MAX])
{
	for (int i = 0; i < SMCR_LINKS_MAX; i++)
		if (ok[i] && s->peer_rkey_ok[i] && s->peer_rkey[i] == key[i])
			return true;
	return false;
}

/*
 * Kept in the connection that has one of those rkeys: 1; 0 when none has
 * (the kernel's client sends its CONFIRM RKEY before its CLC CONFIRM);
 * -EPROTO.
 */
static int confirm_rkey(struct smcr_lgr *g, int li, const struct smcr_llc_confirm_rkey *c)
{
	uint32_t key[SMCR_LINKS_MAX];
	bool ok[SMCR_LINKS_MAX];

	if (smcr_rkeys_of(g, li, c, key, ok))
		return -EPROTO;
	for (struct smcr_sock *s = g->socks; s; s = s->next) {
		if (!smcr_rkeys_match(s, key, ok))
			continue;
		for (int i = 0; i < SMCR_LINKS_MAX; i++) {
			if (ok[i]) {
				s->peer_rkey[i] = key[i];
				s->peer_rkey_ok[i] = true;
			}
		}
		pthread_cond_broadcast(&g->cv);
		return 1;
	}
	return 0;
}

int smcr_lgr_carrier(struct smcr_lgr *g, int li)
{
	for (unsigned o = 0; o < g->nlinks; o++)
		if ((int)o != li && g->link[o].up && !g->link[o].dead)
			return (int)o;
	return -1;
}

/* The server: the client asks for a link of the group again: its dead one to a GID the client names. */
static void relink_asked(struct smcr_lgr *g, const struct smcr_llc_req_add_link *r)
{
	for (unsigned li = 0; li < g->nlinks; li++) {
		const struct smcr_link *l = &g->link[li];

		for (unsigned k = 0; k < r->gid_cnt; k++) {
			if (l->dead && !l->dev_gone && !memcmp(l->peer.gid, r->gid[k], 16)) {
				smcr_link_again(g, (int)li);
				return;
			}
		}
	}
}

/*
 * The client: the server offers a link again: true when our dead link to
 * its target GID takes it (the offer is kept for it), else it is rejected.
 */
static bool relink_offered(struct smcr_lgr *g, const struct smcr_llc_add_link *a)
{
	int li = smcr_link_of_gid(g, a->client_target_gid, true);
	struct smcr_llc_msg m = { 0 };
	int o;

	if (li >= 0) {
		smcr_lgr_relink(g, li, a->link_num);
		return true;
	}
	/* nothing here for it: the server stops waiting */
	m.hd.type = SMCR_LLC_ADD_LINK;
	m.hd.version = SMCR_LLC_VERSION_V2;
	m.hd.flags = SMCR_LLC_FLAG_RESP | SMCR_LLC_FLAG_ADD_LNK_REJ;
	m.add_link.link_num = a->link_num;
	m.add_link.has_ext = true;
	m.add_link.v2_direct = true;
	o = smcr_lgr_carrier(g, -1);
	if (o >= 0)
		smcr_llc_send(g, o, &m);
	return false;
}

int smcr_link_request(struct smcr_lgr *g, int li)
{
	struct smcr_llc_msg m = { 0 };
	struct rdma_qp_addr a;
	int o = smcr_lgr_carrier(g, li);

	if (o < 0)
		return -ENOLINK;
	rdma_qp_local(g->link[li].qp, &a);
	m.hd.type = SMCR_LLC_REQ_ADD_LINK;
	m.hd.version = SMCR_LLC_VERSION_V2;
	m.req_add_link.gid_cnt = 1;
	memcpy(m.req_add_link.gid[0], a.gid, 16);
	return smcr_llc_send(g, o, &m);
}

int smcr_llc_delete_link(struct smcr_lgr *g, int li, uint8_t num, uint8_t flags, uint32_t reason)
{
	struct smcr_llc_msg m = { 0 };

	if (g->link[li].dead || !g->link[li].up)
		return -ENOLINK;
	m.hd.type = SMCR_LLC_DELETE_LINK;
	m.hd.version = SMCR_LLC_VERSION_V2;
	m.hd.flags = flags;
	m.delete_link.link_num = num;
	m.delete_link.reason = reason;
	return smcr_llc_send(g, li, &m);
}

void smcr_llc_in(struct smcr_lgr *g, int li, const uint8_t *msg, uint32_t len)
{
	struct smcr_llc_msg m;
	bool resp;

	seen(g, li, true, msg, len);
	if (smcr_llc_decode_in(g, li, msg, len, &m))
		return;         /* a malformed message does nothing */
	resp = m.hd.flags & SMCR_LLC_FLAG_RESP;
	if (m.hd.type == SMCR_LLC_DELETE_LINK && !resp) {
		if (m.hd.flags & SMCR_LLC_FLAG_DEL_LINK_ALL) {
			for (unsigned o = 0; o < g->nlinks; o++)
				smcr_link_fail(g, (int)o, true);
		} else {
			int o = smcr_link_of_num(g, m.delete_link.link_num);

			if (o >= 0)
				smcr_link_fail(g, o, true);
		}
	} else if (m.hd.type == SMCR_LLC_TEST_LINK) {
		/* an answer did its work by coming: the link moves (engine.c) */
		if (!resp) {
			m.hd.flags |= SMCR_LLC_FLAG_RESP;
			smcr_llc_send(g, li, &m);
		}
	} else if (m.hd.type == SMCR_LLC_CONFIRM_RKEY && !resp) {
		int found = confirm_rkey(g, li, &m.confirm_rkey);

		m.hd.flags |= SMCR_LLC_FLAG_RESP | (found < 0 ? SMCR_LLC_FLAG_RKEY_NEG : 0);
		smcr_llc_send(g, li, &m);
		/* for a connection that does not know its peer yet (smcr_sock_connect()) */
		if (found == 0)
			keep(g, li, msg, len);
	} else if (m.hd.type == SMCR_LLC_REQ_ADD_LINK && !resp) {
		/* the client's device is back: the server adds its dead link again */
		if (g->server)
			relink_asked(g, &m.req_add_link);
	} else if (m.hd.type == SMCR_LLC_ADD_LINK && !resp && !g->server && !g->adding &&
		   smcr_link_of_gid(g, m.add_link.client_target_gid, false) < 0) {
		/* an ADD LINK for no end awaiting one: the server adds a link of ours again */
		if (relink_offered(g, &m.add_link))
			keep(g, li, msg, len);
	} else if (m.hd.type != SMCR_LLC_DELETE_LINK) {
		keep(g, li, msg, len);
	}
}

void smcr_realtime_in(struct timespec *end, int ms)
{
	clock_gettime(CLOCK_REALTIME, end);
	end->tv_sec += ms / 1000;
	end->tv_nsec += (long)(ms % 1000) * 1000000;
	if (end->tv_nsec >= 1000000000) {
		end->tv_sec++;
		end->tv_nsec -= 1000000000;
	}
}

int smcr_llc_wait(struct smcr_lgr *g, bool (*match)(struct smcr_lgr *g, int li, const struct smcr_llc_msg *m, const void *arg),
		  const void *arg, struct smcr_llc_msg *m, int ms)
{
	struct timespec end;

	smcr_realtime_in(&end, ms);
	for (;;) {
		for (unsigned i = 0; i < g->nin; i++) {
			if (smcr_llc_decode_in(g, g->inbox[i].li, g->inbox[i].msg, g->inbox[i].len, m) ||
			    !match(g, g->inbox[i].li, m, arg))
				continue;
			memmove(&g->inbox[i], &g->inbox[i + 1], sizeof(g->inbox[0]) * (g->nin - i - 1));
			g->nin--;
			return 0;
		}
		smcr_lgr_unlend(g);
		if (pthread_cond_timedwait(&g->cv, &g->mu, &end) == ETIMEDOUT)
			return -ETIMEDOUT;
	}
}

/* ---- CONFIRM LINK ---- */

struct want {
	uint8_t type;
	bool resp;
};

static bool is(struct smcr_lgr *g, int li, const struct smcr_llc_msg *m, const void *arg)
{
	(void)g;
	(void)li;
	const struct want *w = arg;

	return m->hd.type == w->type && !(m->hd.flags & SMCR_LLC_FLAG_RESP) == !w->resp;
}

static void confirm_link_msg(struct smcr_lgr *g, int li, uint8_t num, bool resp, struct smcr_llc_msg *m)
{
	struct rdma_qp_addr a;

	rdma_qp_local(g->link[li].qp, &a);
	memset(m, 0, sizeof(*m));
	m->hd.type = SMCR_LLC_CONFIRM_LINK;
	m->hd.version = SMCR_LLC_VERSION_V2;
	m->hd.flags = SMCR_LLC_FLAG_NO_RMBE_EYEC | (resp ? SMCR_LLC_FLAG_RESP : 0);
	memcpy(m->confirm_link.sender_gid, a.gid, 16);
	m->confirm_link.sender_qp_num = a.qpn;
	m->confirm_link.link_num = num;
	memcpy(m->confirm_link.link_uid, link_uid, sizeof(link_uid));
	m->confirm_link.max_links = SMCR_LINKS_MAX;
	m->confirm_link.max_conns = 255;
}

int smcr_link_confirm(struct smcr_lgr *g, int li, uint8_t num)
{
	struct want w = { SMCR_LLC_CONFIRM_LINK, g->server };
	struct smcr_llc_msg m;
	int rc = 0;

	pthread_mutex_lock(&g->mu);
	if (g->server) {
		confirm_link_msg(g, li, num, false, &m);
		rc = smcr_llc_send(g, li, &m);
	}
	if (!rc)
		rc = smcr_llc_wait(g, is, &w, &m, LLC_WAIT_MS);
	if (!rc && (!(m.hd.flags & SMCR_LLC_FLAG_NO_RMBE_EYEC) || m.confirm_link.link_num != num ||
		    m.confirm_link.sender_qp_num != g->link[li].peer.qpn))
		rc = -EPROTO;
	if (!rc && !g->server) {
		confirm_link_msg(g, li, num, true, &m);
		rc = smcr_llc_send(g, li, &m);
	}
	if (!rc) {
		g->link[li].num = num;
		g->link[li].up = true;
		smcr_view_changed();
		if (num > g->last_num)
			g->last_num = num;
	}
	pthread_mutex_unlock(&g->mu);
	return rc;
}

/* ---- ADD LINK ---- */


/* Our ADD LINK (or its answer) for link li over link o, with every started connection's rkeys. */
static int add_link_msg(struct smcr_lgr *g, int li, int o, uint8_t num, const uint8_t target[16], bool resp,
			struct smcr_llc_msg *m)
{
	struct rdma_qp_addr a;
	uint16_t n = 0;

	rdma_qp_local(g->link[li].qp, &a);
	memset(m, 0, sizeof(*m));
	m->hd.type = SMCR_LLC_ADD_LINK;
	m->hd.version = SMCR_LLC_VERSION_V2;
	m->hd.flags = resp ? SMCR_LLC_FLAG_RESP : 0;
	memcpy(m->add_link.sender_gid, a.gid, 16);
	m->add_link.sender_qp_num = a.qpn;
	m->add_link.link_num = num;
	m->add_link.qp_mtu = a.mtu;
	m->add_link.initial_psn = a.psn;
	m->add_link.has_ext = true;
	m->add_link.v2_direct = true;
	memcpy(m->add_link.client_target_gid, target, 16);
	for (struct smcr_sock *s = g->socks; s; s = s->next) {
		if (!s->mr_ok[o] || !s->mr_ok[li])
			continue;
		if (n == SMCR_LLC_RKEYS_V2_MAX)
			return -E2BIG;
		m->add_link.rt[n].rmb_key = s->rmb_mr[o].rkey;
		m->add_link.rt[n].rmb_key_new = s->rmb_mr[li].rkey;
		m->add_link.rt[n].rmb_vaddr_new = (uintptr_t)s->rmb;
		n++;
	}
	m->add_link.num_rkeys = n;
	return 0;
}

/* The peer's rkeys on the new link li, each found by its rkey on link o. */
static void add_link_rkeys(struct smcr_lgr *g, int li, int o, const struct smcr_llc_add_link *a)
{
	for (unsigned i = 0; i < a->num_rkeys; i++)
		for (struct smcr_sock *s = g->socks; s; s = s->next)
			if (s->peer_rkey_ok[o] && s->peer_rkey[o] == a->rt[i].rmb_key) {
				s->peer_rkey[li] = a->rt[i].rmb_key_new;
				s->peer_rkey_ok[li] = true;
			}
}

static struct rdma_qp_addr add_link_peer(const struct smcr_llc_add_link *a)
{
	struct rdma_qp_addr p = { .qpn = a->sender_qp_num, .psn = a->initial_psn, .mtu = a->qp_mtu };

	memcpy(p.gid, a->sender_gid, 16);
	return p;
}

static int add_link_locked(struct smcr_lgr *g, int li, uint8_t num, const uint8_t peer_gid[16])
{
	struct want w = { SMCR_LLC_ADD_LINK, g->server };
	struct smcr_llc_msg *m = &(struct smcr_llc_msg){ 0 };
	struct rdma_qp_addr own, peer;
	int o = smcr_lgr_carrier(g, li), rc;

	if (o < 0)
		return -ENOLINK;
	rdma_qp_local(g->link[li].qp, &own);
	if (g->server) {
		rc = add_link_msg(g, li, o, num, peer_gid, false, m);
		if (!rc)
			rc = smcr_llc_send(g, o, m);
		if (rc)
			return rc;
	}
	rc = smcr_llc_wait(g, is, &w, m, LLC_WAIT_MS);
	if (rc)
		return rc;
	if (!g->server && (m->hd.flags & SMCR_LLC_FLAG_ADD_LNK_REJ))
		return -ECONNREFUSED;   /* the server has no port for our second GID */
	if ((m->hd.flags & SMCR_LLC_FLAG_ADD_LNK_REJ) || !m->add_link.has_ext || m->add_link.link_num != num ||
	    (g->server && memcmp(m->add_link.sender_gid, peer_gid, 16)) ||
	    (!g->server && memcmp(m->add_link.client_target_gid, own.gid, 16)))
		return -EPROTO;
	peer = add_link_peer(&m->add_link);
	add_link_rkeys(g, li, o, &m->add_link);
	rc = rdma_qp_connect(g->link[li].qp, &peer);
	if (rc)
		return rc;
	g->link[li].peer = peer;
	g->link[li].connected = true;
	smcr_lgr_write_max(g);
	/* named from now on: the peer's CONFIRM RKEY for it may come before its CONFIRM LINK is done */
	g->link[li].num = num;
	if (num > g->last_num)
		g->last_num = num;
	if (!g->server) {
		rc = add_link_msg(g, li, o, num, peer.gid, true, m);
		if (!rc)
			rc = smcr_llc_send(g, o, m);
	}
	return rc;
}

int smcr_link_refuse(struct smcr_lgr *g, uint8_t num)
{
	struct smcr_llc_msg m = { 0 };
	int o, rc;

	m.hd.type = SMCR_LLC_ADD_LINK;
	m.hd.version = SMCR_LLC_VERSION_V2;
	m.hd.flags = SMCR_LLC_FLAG_ADD_LNK_REJ;
	m.add_link.link_num = num;
	m.add_link.has_ext = true;
	m.add_link.v2_direct = true;
	pthread_mutex_lock(&g->mu);
	o = smcr_lgr_carrier(g, -1);
	rc = o < 0 ? -ENOLINK : smcr_llc_send(g, o, &m);
	pthread_mutex_unlock(&g->mu);
	return rc;
}

int smcr_link_add(struct smcr_lgr *g, int li, uint8_t num, const uint8_t peer_gid[16])
{
	int rc;

	pthread_mutex_lock(&g->mu);
	rc = add_link_locked(g, li, num, peer_gid);
	pthread_mutex_unlock(&g->mu);
	return rc ? rc : smcr_link_confirm(g, li, num);
}
