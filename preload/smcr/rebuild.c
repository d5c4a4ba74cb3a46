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
 *
 * The two ends of a group of several links may each see a different one
 * fail last (both interfaces flapping at once): an offer says the peer has
 * no other link, so the end that takes it gives up its other links too and
 * rebuilds the offered one with every connection; and when both offered,
 * for different links, the client follows the server's.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "base.h"
#include "smcr_int.h"
#include "smcr_rebuild.h"

#define PORT_LOOK_MS 500

/* With g->mu held: our link to the peer's GID gid, or -1. */
static int link_to(struct smcr_lgr *g, const uint8_t gid[16])
{
	for (unsigned li = 0; li < g->nlinks; li++)
		if (!memcmp(g->link[li].peer.gid, gid, 16))
			return (int)li;
	return -1;
}

/*
 * With g->mu held: connection s waits on link li, being rebuilt, to go on
 * there; one whose peer's RMB key is not known on li cannot and ends.
 */
static bool wait_on(struct smcr_sock *s, int li)
{
	if (!s->peer_rkey_ok[li]) {
		smcr_sock_fail(s, -ECONNRESET);
		smcr_sock_wake(s, false);
		smcr_sock_wake(s, true);
		return false;
	}
	s->li = li;
	return true;
}

/*
 * With g->mu held: the link the server's offer names when it is not li,
 * the one we rebuild (two offers crossed: the client follows), else li.
 */
static int offered_link(struct smcr_lgr *g, int li)
{
	int to;

	if (g->server || !g->rebuild.have_peer || g->rebuild.answer)
		return li;
	to = link_to(g, g->rebuild.peer.qp.gid);
	return to < 0 || g->link[to].dev_gone ? li : to;
}

/* With g->mu held: link from's waiting connections wait on link to, rebuilt instead; our message answers. */
static void follow(struct smcr_lgr *g, int from, int to)
{
	struct smcr_link *l = &g->link[to];

	g->link[from].rebuilding = false;
	/* the queue pair from's rebuild made, if any, carries nothing: dead, to be added again as any */
	smcr_link_die(g, from);
	l->rebuilding = true;
	smcr_link_die(g, to);
	for (struct smcr_sock *s = g->socks; s; s = s->next)
		if (s->li == from && s->live)
			wait_on(s, to);
	g->rebuild.li = to;
	g->rebuild.answer = true;
	smcr_log("libsmc-preload: soft SMC-R: link on %s: the server rebuilds the link on %s: its connections wait there\n",
		 g->link[from].dev_name, l->dev_name);
	smcr_view_changed();
}

/*
 * With g->mu held: waits SMCR_REBUILD_MS at most for link li's port to be
 * back: 0, or 1 when the server's offer names another link meanwhile.
 * The device is asked, not only its events: the peer's offer may start
 * the rebuild before our port's event was read.
 */
static int wait_port(struct smcr_lgr *g, int li)
{
	struct smcr_link *l = &g->link[li];
	int64_t until = soft_now_ns() + SMCR_REBUILD_MS * 1000000LL;

	for (;;) {
		struct timespec look;
		int active = l->dev_gone ? -ENODEV : rdma_dev_port_active(l->dev);

		if (offered_link(g, li) != li)
			return 1;
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
	if (rc && smcr_link_die(g, li))
		l->up = false;
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
	/* the group's other links that failed meanwhile, their ports up: added again now it can (engine.c) */
	for (unsigned o = 0; o < g->nlinks && !rc; o++)
		g->link[o].again |= (int)o != li && g->link[o].dead && !g->link[o].dev_gone && !g->link[o].port_down;
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
	const char *step;

	pthread_mutex_lock(&g->mu);
	li = g->rebuild.li;
	for (;;) {
		step = "its port did not come back";
		while ((rc = wait_port(g, li)) == 1) {
			follow(g, li, offered_link(g, li));
			li = g->rebuild.li;
		}
		pthread_mutex_unlock(&g->mu);
		if (!rc) {
			step = "no answer from the peer";
			smcr_realtime_in(&end, SMCR_REBUILD_MS);
			rc = smcr_link_reopen(g, li, true);
		}
		pthread_mutex_lock(&g->mu);
		if (rc)
			break;
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
		if (rc || offered_link(g, li) == li)
			break;
		/* the server's offer for another link crossed ours: that one, and our answer */
		follow(g, li, offered_link(g, li));
		li = g->rebuild.li;
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

/*
 * With g->mu held: whether a connection of g still needs a link, one not
 * set up yet or whose peer may still read or write; one whose peer closed
 * or aborted needs none (a client process that closed and ended: its
 * bytes are all in our RMB, smcr_conn_lost_after_end()).
 */
static bool carries(const struct smcr_lgr *g)
{
	for (const struct smcr_sock *s = g->socks; s; s = s->next)
		if (!s->live || (!s->c.err && !(s->c.peer_cflags & (CDC_CF_CLOSED | CDC_CF_ABORT))))
			return true;
	return false;
}

/* With g->mu held; the peer's message in g->rebuild when it offered first. */
bool smcr_rebuild_start(struct smcr_lgr *g, int li)
{
	struct smcr_link *l = &g->link[li];

	/*
	 * a group without a connection to carry over ends with its link,
	 * unless a negotiation holds it for the connection to come (a hold
	 * beside its owner's and its connections')
	 */
	if (!smcr_env.rebuild || (!carries(g) && g->refs <= 1 + (int)smcr_lgr_socks_locked(g)) || g->rebuild.on ||
	    g->adding || l->dev_gone)
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

/*
 * With g->mu held: the peer offers link li, its only one.  Our other links
 * are gone at its end, so they fail here too, their connections waiting
 * on li, whose new queue pairs carry them all.
 */
static int take_offer(struct smcr_lgr *g, int li, const struct smcr_rebuild_msg *msg)
{
	struct smcr_link *l = &g->link[li];

	for (unsigned o = 0; o < g->nlinks; o++) {
		struct smcr_link *ol = &g->link[o];
		unsigned moved = 0;

		if ((int)o == li || !smcr_link_die(g, (int)o))
			continue;
		g->failovers++;
		for (struct smcr_sock *s = g->socks; s; s = s->next)
			if (s->li == (int)o && s->live)
				moved += wait_on(s, li);
		smcr_log("libsmc-preload: soft SMC-R: link %u (%s) failed (the peer rebuilds link %u): %u connections wait there\n",
			 ol->num, ol->dev_name, l->num, moved);
	}
	g->rebuild.peer = *msg;
	g->rebuild.have_peer = true;
	g->rebuild.answer = true;
	if (!l->dead)
		smcr_link_fail(g, li, false);
	else if (smcr_rebuild_start(g, li))
		smcr_log("libsmc-preload: soft SMC-R: link %u (%s) rebuilt on new queue pairs for the peer\n", l->num,
			 l->dev_name);
	smcr_view_changed();
	if (g->rebuild.on)
		return 0;
	g->rebuild.have_peer = g->rebuild.answer = false;
	/* a dead link's connections, none rebuilt to carry them: they end as its failure would have ended them */
	for (struct smcr_sock *s = g->socks; s; s = s->next) {
		if (s->li != li || !s->live || !l->dead)
			continue;
		smcr_sock_fail(s, -ECONNRESET);
		smcr_sock_wake(s, false);
		smcr_sock_wake(s, true);
	}
	return -EBUSY;
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
		/*
		 * the answer to our offer, the peer's offer that crossed it, or
		 * (the client) the server's for another link, which we follow
		 */
		if (li == g->rebuild.li ||
		    (!g->server && li >= 0 && !msg->answer && !g->rebuild.have_peer && !g->link[li].dev_gone)) {
			g->rebuild.peer = *msg;
			g->rebuild.have_peer = true;
			pthread_cond_broadcast(&g->cv);
		} else {
			rc = -ENOENT;
		}
	} else if (msg->answer) {
		rc = -ENOENT;           /* an answer to an offer of ours that gave up */
	} else if (li < 0) {
		rc = -ENOENT;
	} else if (g->adding || !g->link[li].up || g->link[li].dev_gone) {
		rc = -EBUSY;
	} else {
		rc = take_offer(g, li, msg);
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
