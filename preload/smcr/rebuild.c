/*
 * A group's only link rebuilt on new queue pairs (doc/soft-roce.md section
 * 5, "The only link"): rxe can park a queue pair for good, and a second
 * link would carry the LLC ADD LINK that makes a new one; with none, the
 * two ends give each other their new queue pairs' addresses through the
 * caller (smcr_env.rebuild, smcr_rebuild_in()), then connect them and confirm
 * the link with LLC CONFIRM LINK, as for a group's first link.  The
 * connections keep their RMBs, registrations and rkeys (the devices stay)
 * and go on from their last delivered CDC (smcr_conn_switch()).
 *
 * Either end may start: the one whose link failed first offers, the other
 * fails its end of that link and answers; two offers that cross need no
 * answer.  The server numbers the new link.  A link that failed because its
 * port went down (an interface flap) waits for the port first, as long as
 * for the peer's answer afterwards.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "base.h"
#include "smcr_int.h"
#include "smcr_rebuild.h"

#define PORT_LOOK_MS 500

/*
 * With g->mu held: waits SMCR_REBUILD_MS at most for link li's port to be
 * back.  The device is asked, not only its events: the peer's offer may
 * start the rebuild before our port's event was read.
 */
static int wait_port(struct smcr_lgr *g, int li)
{
	struct smcr_link *l = &g->link[li];
	int64_t until = soft_now_ns() + SMCR_REBUILD_MS * 1000000LL;

	for (;;) {
		struct timespec look;
		int active = l->dev_gone ? -ENODEV : rdma_dev_port_active(l->dev);

		if (active < 0)
			return active;
		l->port_down = !active;
		if (active)
			return 0;
		if (soft_now_ns() >= until)
			return -ETIMEDOUT;
		smcr_lgr_unlend(g);
		/* its event wakes us (engine.c); a look now and then if none comes */
		smcr_realtime_in(&look, PORT_LOOK_MS);
		pthread_cond_timedwait(&g->cv, &g->mu, &look);
	}
}

/* With g->mu held: waits for the peer's message until end. */
static int wait_peer(struct smcr_lgr *g, const struct timespec *end)
{
	while (!g->rebuild.have_peer) {
		smcr_lgr_unlend(g);
		if (pthread_cond_timedwait(&g->cv, &g->mu, end) == ETIMEDOUT)
			return g->rebuild.have_peer ? 0 : -ETIMEDOUT;
	}
	return 0;
}

/*
 * With g->mu held: the rebuilt link li carries its connections again, or
 * they end (rc, at step: what did not come in time when -ETIMEDOUT).
 */
static void finish(struct smcr_lgr *g, int li, int rc, const char *step)
{
	struct smcr_link *l = &g->link[li];
	unsigned n = 0;

	l->rebuilding = false;
	if (rc && !l->dead) {
		l->dead = true;
		l->up = false;
	}
	for (struct smcr_sock *s = g->socks; s; s = s->next) {
		if (s->li != li || !s->live)
			continue;
		n++;
		if (rc)
			smcr_sock_fail(s, -ECONNRESET);
		else if (smcr_conn_switch(&s->c, &s->path[li]))
			smcr_sock_fail(s, smcr_conn_error(&s->c));
		smcr_sock_wake(s, false);
		smcr_sock_wake(s, true);
	}
	if (rc)
		smcr_log("libsmc-preload: soft SMC-R: link on %s not rebuilt: %s: %u connections reset\n",
			 l->dev_name, rc == -ETIMEDOUT ? step : strerror(-rc), n);
	else
		smcr_log("libsmc-preload: soft SMC-R: link on %s rebuilt (number %u): %u connections go on\n",
			 l->dev_name, l->num, n);
	smcr_view_changed();
}

static void *rebuild_run(void *arg)
{
	struct smcr_lgr *g = arg;
	struct smcr_rebuild_msg ours = { 0 }, peer;
	struct timespec end;
	uint32_t key;
	uint8_t num = 0;
	int li, rc;
	const char *step = "its port did not come back";

	pthread_mutex_lock(&g->mu);
	li = g->rebuild.li;
	rc = wait_port(g, li);
	pthread_mutex_unlock(&g->mu);
	if (!rc) {
		step = "no answer from the peer";
		smcr_realtime_in(&end, SMCR_REBUILD_MS);
		rc = smcr_link_reopen(g, li, true);
	}
	pthread_mutex_lock(&g->mu);
	if (!rc) {
		rdma_qp_local(g->link[li].qp, &ours.qp);
		/* a number no link of the group had: a late message of the old link names nothing */
		if (g->server)
			num = (uint8_t)(g->last_num == 255 ? 1 : g->last_num + 1);
		ours.num = num;
		ours.answer = g->rebuild.answer;
		key = g->key;
		pthread_mutex_unlock(&g->mu);
		smcr_env.rebuild(key, &ours);
		pthread_mutex_lock(&g->mu);
		rc = wait_peer(g, &end);
	}
	peer = g->rebuild.peer;
	pthread_mutex_unlock(&g->mu);
	if (!rc)
		rc = smcr_link_connect(g, li, &peer.qp);
	if (!rc) {
		step = "no CONFIRM LINK on the new queue pairs";
		rc = smcr_link_confirm(g, li, g->server ? num : peer.num);
	}
	pthread_mutex_lock(&g->mu);
	finish(g, li, rc, step);
	g->rebuild.on = g->rebuild.answer = g->rebuild.have_peer = false;
	g->adding = false;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
	smcr_engine_kick();
	smcr_lgr_put(g);
	return NULL;
}

/* With g->mu held; the peer's message in g->rebuild when it offered first. */
bool smcr_rebuild_start(struct smcr_lgr *g, int li)
{
	struct smcr_link *l = &g->link[li];

	if (!smcr_env.rebuild || g->rebuild.on || g->adding || l->dev_gone)
		return false;
	g->rebuild.on = true;
	g->rebuild.li = li;
	g->adding = true;
	g->refs++;
	l->rebuilding = true;
	if (lib_thread_start(rebuild_run, g)) {
		g->rebuild.on = false;
		g->adding = false;
		g->refs--;
		l->rebuilding = false;
		return false;
	}
	return true;
}

/* With g->mu held: our link to the peer's GID gid, or -1. */
static int link_to(struct smcr_lgr *g, const uint8_t gid[16])
{
	for (unsigned li = 0; li < g->nlinks; li++)
		if (!memcmp(g->link[li].peer.gid, gid, 16))
			return (int)li;
	return -1;
}

int smcr_rebuild_in(uint32_t key, const struct smcr_rebuild_msg *msg)
{
	struct smcr_lgr *g = smcr_lgr_of_key(key);
	int li, rc = 0;

	if (!g)
		return -ENOENT;
	pthread_mutex_lock(&g->mu);
	li = link_to(g, msg->qp.gid);
	if (g->rebuild.on) {
		/* the answer to our offer, or the peer's that crossed it */
		if (li != g->rebuild.li) {
			rc = -ENOENT;
		} else {
			g->rebuild.peer = *msg;
			g->rebuild.have_peer = true;
			pthread_cond_broadcast(&g->cv);
		}
	} else if (msg->answer) {
		rc = -ENOENT;           /* an answer to an offer of ours that gave up */
	} else if (li < 0) {
		rc = -ENOENT;
	} else if (smcr_lgr_carrier(g, li) >= 0 || g->adding || !g->link[li].up) {
		rc = -EBUSY;
	} else {
		/* our end of the link goes too: the new one replaces it */
		g->rebuild.peer = *msg;
		g->rebuild.have_peer = true;
		g->rebuild.answer = true;
		smcr_link_fail(g, li, false);
		if (!g->rebuild.on) {
			g->rebuild.have_peer = g->rebuild.answer = false;
			rc = -EBUSY;
		}
	}
	pthread_mutex_unlock(&g->mu);
	smcr_lgr_put(g);
	return rc;
}

int smcr_rebuild_msg_encode(const struct smcr_rebuild_msg *msg, uint8_t *out, size_t size)
{
	struct smcr_rebuild_wire w = { .qpn = msg->qp.qpn, .psn = msg->qp.psn, .mtu = msg->qp.mtu,
				       .num = msg->num, .answer = msg->answer };

	if (size < SMCR_REBUILD_LEN)
		return -EINVAL;
	memcpy(w.gid, msg->qp.gid, sizeof(w.gid));
	return smcr_rebuild_encode(&w, out);
}

int smcr_rebuild_msg_decode(const uint8_t *buf, size_t len, struct smcr_rebuild_msg *msg)
{
	struct smcr_rebuild_wire w;

	if (smcr_rebuild_decode(buf, len, &w))
		return -EBADMSG;
	*msg = (struct smcr_rebuild_msg){ .qp = { .qpn = w.qpn, .psn = w.psn, .mtu = w.mtu }, .num = w.num,
					  .answer = w.answer };
	memcpy(msg->qp.gid, w.gid, sizeof(w.gid));
	return 0;
}
