/*
 * A connection of a link group: its RMB and send buffer registered on
 * every link, the rkeys of the peer's RMB on each, wire/smcr_conn.h's data
 * path over the link it uses, and its sleepers (doc/soft-roce.md section 4).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/futex.h>

#include "smcr_int.h"

static int ask_progress(struct smcr_sock *s, uint8_t op, uint8_t flags, uint64_t fence);

/* The send queue of link li is full: its completions are to wake the progress thread, which posts the rest. */
static void starve(struct smcr_sock *s, int li)
{
	s->starved = true;
	smcr_link_want_sent(s->g, li);
}

/*
 * A post that failed for another reason than room (a device that went, say:
 * EIO) is the link's failure, not the connection's: the progress thread
 * fails the link and the connection goes on over another (smcr_conn_switch()
 * sends again what no delivered CDC covered); meanwhile it waits.
 */
static int post_failed(struct smcr_sock *s, int li, int rc)
{
	if (rc == 0 || rc == -ENOBUFS)
		return rc;
	if (!s->g->link[li].post_err) {
		s->g->link[li].post_err = rc;
		smcr_engine_kick();
	}
	return -ENOLINK;
}

static int path_write(void *link, uint32_t off, uint32_t len, uint32_t rmb_off)
{
	struct smcr_path *p = link;
	struct smcr_sock *s = p->s;
	int rc;

	if (s->g->link[p->li].dead || s->g->link[p->li].rebuilding || !s->peer_rkey_ok[p->li])
		return -ENOLINK;
	/* the CDC that follows (or path_flush()) rings for both */
	rdma_qp_hold(s->g->link[p->li].qp);
	rc = rdma_post_write(s->g->link[p->li].qp, &s->snd_mr[p->li], off, len, s->peer_rmb_addr + rmb_off,
			     s->peer_rkey[p->li], 0, false);
	if (rc == -ENOBUFS)
		starve(s, p->li);
	return post_failed(s, p->li, rc);
}

static int path_send(void *link, const uint8_t *msg, size_t len, uint64_t id)
{
	struct smcr_path *p = link;
	struct smcr_sock *s = p->s;
	int rc;

	if (s->g->link[p->li].dead || s->g->link[p->li].rebuilding)
		return -ENOLINK;
	rc = rdma_post_msg(s->g->link[p->li].qp, msg, len, SMCR_WR_ID(s->token, id));
	if (rc == -ENOBUFS)
		starve(s, p->li);
	/* with the writes held before it */
	if (!rc)
		rc = rdma_qp_flush(s->g->link[p->li].qp);
	return post_failed(s, p->li, rc);
}

static int path_flush(void *link)
{
	struct smcr_path *p = link;

	if (p->s->g->link[p->li].rebuilding)
		return -ENOLINK;
	return post_failed(p->s, p->li, rdma_qp_flush(p->s->g->link[p->li].qp));
}

static const struct smcr_link_ops path_ops = { .write = path_write, .send = path_send, .flush = path_flush };

int smcr_sock_reg(struct smcr_sock *s, int li)
{
	struct rdma_dev *d = s->g->link[li].dev;
	int rc = rdma_mr_reg(d, s->rmb, s->rmb_size, true, &s->rmb_mr[li]);

	if (rc)
		return rc;
	rc = rdma_mr_reg(d, s->snd, s->snd_size, false, &s->snd_mr[li]);
	if (rc) {
		rdma_mr_dereg(&s->rmb_mr[li]);
		return rc;
	}
	s->mr_ok[li] = true;
	return 0;
}

void smcr_sock_unreg(struct smcr_sock *s, int li)
{
	if (!s->mr_ok[li])
		return;
	rdma_mr_dereg(&s->rmb_mr[li]);
	rdma_mr_dereg(&s->snd_mr[li]);
	s->mr_ok[li] = false;
}

static void unreg(struct smcr_sock *s)
{
	for (int li = 0; li < SMCR_LINKS_MAX; li++)
		smcr_sock_unreg(s, li);
}

/* Of the links up, the one fewest of the group's connections use (the kernel's choice); the first on a tie. */
static int least_used(const struct smcr_lgr *g, const int *up, int n)
{
	unsigned best_uses = ~0u;
	int best = up[0];

	for (int i = 0; i < n; i++) {
		unsigned uses = 0;

		for (const struct smcr_sock *s = g->socks; s; s = s->next)
			uses += s->li == up[i] && !s->released;
		if (uses < best_uses) {
			best_uses = uses;
			best = up[i];
		}
	}
	return best;
}

/*
 * The link a new connection uses: the server's choice, the live link that
 * carries fewest connections; the client's is the server's, by its queue
 * pair's GID and number (two devices number their queue pairs alike).
 */
static int pick_link(struct smcr_lgr *g, const struct rdma_qp_addr *peer)
{
	int up[SMCR_LINKS_MAX], n = 0;

	for (unsigned li = 0; li < g->nlinks; li++) {
		const struct smcr_link *l = &g->link[li];

		if (l->dead)
			continue;
		if (peer && l->connected && l->peer.qpn == peer->qpn && !memcmp(l->peer.gid, peer->gid, 16))
			return (int)li;
		if (!peer && l->up)
			up[n++] = (int)li;
	}
	if (peer)
		return -ENOLINK;
	if (n)
		return least_used(g, up, n);
	/* the first contact: the group's first link, before it is confirmed */
	return g->nlinks && !g->link[0].dead ? 0 : -ENOLINK;
}

static uint32_t new_token(struct smcr_lgr *g)
{
	uint32_t t;

	do
		t = g->next_token++;
	while (!t || smcr_lgr_sock_of_token(g, t));
	return t;
}

/*
 * A buffer of the connection, named in /proc/PID/maps (memfd:smc-rmb,
 * memfd:smc-sndbuf) as soft SMC-D's regions are (smc-dmb).
 */
static void *map(const char *name, uint32_t size)
{
	int fd = memfd_create(name, MFD_CLOEXEC);
	void *p = MAP_FAILED;

	if (fd >= 0 && ftruncate(fd, size) == 0)
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (fd >= 0)
		smcr_env.syscall(SYS_close, fd);    /* not the preload's close() */
	if (p == MAP_FAILED)
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static _Atomic unsigned socks;

unsigned smcr_socks(void)
{
	return atomic_load(&socks);
}

void smcr_socks_after_fork_child(void)
{
	/* the parent's stay its own (transport_after_fork_child()) */
	atomic_store(&socks, 0);
}

int smcr_sock_new(struct smcr_lgr *g, const struct rdma_qp_addr *peer, uint32_t rmb_size, uint32_t snd_size,
		  struct smcr_sock **out)
{
	struct smcr_sock *s = calloc(1, sizeof(*s));
	int rc = 0;

	if (!s)
		return -ENOMEM;
	s->g = g;
	s->rmb_size = rmb_size;
	s->snd_size = snd_size;
	s->rmb = map("smc-rmb", rmb_size);
	s->snd = map("smc-sndbuf", snd_size);
	if (!s->rmb || !s->snd)
		rc = -ENOMEM;
	pthread_mutex_lock(&g->mu);
	if (!rc && smcr_lgr_socks_locked(g) >= SMCR_LGR_CONNS_MAX)
		rc = -ENOSPC;
	if (!rc)
		rc = s->li = pick_link(g, peer);
	for (unsigned li = 0; li < g->nlinks && rc >= 0; li++)
		if ((rc = smcr_sock_reg(s, (int)li)) < 0) {
			smcr_log("libsmc-preload: soft SMC-R: a connection's buffers not registered on %s: %s\n",
				 g->link[li].dev_name, strerror(-rc));
			rc = -EKEYREJECTED;
		}
	if (rc >= 0) {
		for (int li = 0; li < SMCR_LINKS_MAX; li++)
			s->path[li] = (struct smcr_path){ s, li };
		s->token = new_token(g);
		s->next = g->socks;
		g->socks = s;
		g->refs++;
	}
	pthread_mutex_unlock(&g->mu);
	if (rc < 0) {
		unreg(s);
		if (s->rmb)
			munmap(s->rmb, rmb_size);
		if (s->snd)
			munmap(s->snd, snd_size);
		free(s);
		return rc;
	}
	atomic_fetch_add(&socks, 1);
	*out = s;
	return 0;
}

void smcr_sock_local(struct smcr_sock *s, struct smcr_sock_local *l)
{
	pthread_mutex_lock(&s->g->mu);
	rdma_qp_local(s->g->link[s->li].qp, &l->qp);
	l->rkey = s->rmb_mr[s->li].rkey;
	l->rmb_addr = (uintptr_t)s->rmb;
	l->rmb_size = s->rmb_size;
	l->snd_size = s->snd_size;
	l->token = s->token;
	pthread_mutex_unlock(&s->g->mu);
}

/* Our RMB's rkeys on the group's other live links, over the connection's own link; then its answer. */
static bool is_rkey_answer(struct smcr_lgr *g, int li, const struct smcr_llc_msg *m, const void *arg)
{
	const struct smcr_sock *s = arg;

	(void)g;
	return m->hd.type == SMCR_LLC_CONFIRM_RKEY && (m->hd.flags & SMCR_LLC_FLAG_RESP) &&
	       li == s->li && m->confirm_rkey.rt[0].rmb_key == s->rmb_mr[li].rkey;
}

static int confirm_rkey(struct smcr_sock *s)
{
	struct smcr_lgr *g = s->g;
	struct smcr_llc_msg m = { 0 };
	unsigned n = 0;
	int rc;

	m.hd.type = SMCR_LLC_CONFIRM_RKEY;
	m.hd.version = SMCR_LLC_VERSION_V2;
	m.confirm_rkey.rt[0].rmb_key = s->rmb_mr[s->li].rkey;
	m.confirm_rkey.rt[0].rmb_vaddr = (uintptr_t)s->rmb;
	for (unsigned li = 0; li < g->nlinks; li++) {
		if ((int)li == s->li || !g->link[li].up || g->link[li].dead || !s->mr_ok[li])
			continue;
		n++;
		m.confirm_rkey.rt[n].link_id = g->link[li].num;
		m.confirm_rkey.rt[n].rmb_key = s->rmb_mr[li].rkey;
		m.confirm_rkey.rt[n].rmb_vaddr = (uintptr_t)s->rmb;
	}
	if (!n)
		return 0;
	m.confirm_rkey.rt[0].link_id = (uint8_t)n;
	rc = smcr_llc_send(g, s->li, &m);
	if (!rc)
		rc = smcr_llc_wait(g, is_rkey_answer, s, &m, LLC_WAIT_MS);
	if (!rc && (m.hd.flags & (SMCR_LLC_FLAG_RKEY_NEG | SMCR_LLC_FLAG_RKEY_RETRY)))
		rc = -EPROTO;
	return rc;
}

/* Whether the peer's RMB is reachable over every live link of the group. */
static bool peer_rkeys_known(const struct smcr_sock *s)
{
	for (unsigned li = 0; li < s->g->nlinks; li++)
		if (s->g->link[li].up && !s->g->link[li].dead && !s->peer_rkey_ok[li])
			return false;
	return true;
}

/* The peer's CONFIRM RKEY for its RMB: kept before we knew it, or on its way. */
static int peer_rkeys(struct smcr_sock *s)
{
	struct smcr_lgr *g = s->g;
	struct timespec end;

	smcr_realtime_in(&end, LLC_WAIT_MS);
	while (!peer_rkeys_known(s)) {
		for (unsigned i = 0; i < g->nin; i++) {
			struct smcr_llc_msg m;
			uint32_t key[SMCR_LINKS_MAX];
			bool ok[SMCR_LINKS_MAX];

			if (smcr_llc_decode_in(g, g->inbox[i].li, g->inbox[i].msg, g->inbox[i].len, &m) ||
			    m.hd.type != SMCR_LLC_CONFIRM_RKEY || (m.hd.flags & SMCR_LLC_FLAG_RESP) ||
			    smcr_rkeys_of(g, g->inbox[i].li, &m.confirm_rkey, key, ok) ||
			    !smcr_rkeys_match(s, key, ok))
				continue;
			for (int li = 0; li < SMCR_LINKS_MAX; li++) {
				if (ok[li]) {
					s->peer_rkey[li] = key[li];
					s->peer_rkey_ok[li] = true;
				}
			}
			memmove(&g->inbox[i], &g->inbox[i + 1], sizeof(g->inbox[0]) * (g->nin - i - 1));
			g->nin--;
			break;
		}
		if (peer_rkeys_known(s))
			break;
		smcr_lgr_unlend(g);
		if (pthread_cond_timedwait(&g->cv, &g->mu, &end) == ETIMEDOUT)
			return -ETIMEDOUT;
	}
	return 0;
}

/*
 * A link being added: its ADD LINK named the rkeys of the connections that
 * had started, so a connection waits until the link is up (its CONFIRM
 * RKEY then names it) or given up.
 */
static int adding_over(struct smcr_lgr *g)
{
	struct timespec end;

	smcr_realtime_in(&end, 2 * LLC_WAIT_MS);
	while (g->adding) {
		smcr_lgr_unlend(g);
		if (pthread_cond_timedwait(&g->cv, &g->mu, &end) == ETIMEDOUT)
			return -ETIMEDOUT;
	}
	return 0;
}

void smcr_sock_where(struct smcr_sock *s, uint32_t *key, uint8_t *num)
{
	pthread_mutex_lock(&s->g->mu);
	*key = s->g->key;
	*num = s->g->link[s->li].num;
	pthread_mutex_unlock(&s->g->mu);
}

struct smcr_lgr *smcr_sock_lgr(struct smcr_sock *s)
{
	return s->g;
}

int smcr_sock_connect(struct smcr_sock *s, const struct smcr_sock_peer *p)
{
	struct smcr_lgr *g = s->g;
	int rc;

	pthread_mutex_lock(&g->mu);
	s->peer_rkey[s->li] = p->rkey;
	s->peer_rkey_ok[s->li] = true;
	s->peer_rmb_addr = p->rmb_addr;
	rc = adding_over(g);
	if (!rc)
		rc = confirm_rkey(s);
	if (!rc)
		rc = peer_rkeys(s);
	if (!rc) {
		smcr_conn_init(&s->c, &path_ops, &s->path[s->li], s->snd, s->snd_size, s->rmb, s->rmb_size,
			       p->rmb_size, s->token, p->token);
		s->c.write_max = g->write_max;
		rc = smcr_conn_error(&s->c);
	}
	if (!rc) {
		s->live = true;
		smcr_view_changed();
		if (s->early_len)
			smcr_sock_rx(s, s->early, s->early_len);
	}
	pthread_mutex_unlock(&g->mu);
	return rc;
}

static void unlink_sock(struct smcr_sock *s)
{
	for (struct smcr_sock **p = &s->g->socks; *p; p = &(*p)->next) {
		if (*p == s) {
			*p = s->next;
			break;
		}
	}
	unreg(s);
}

static void destroy(struct smcr_sock *s)
{
	struct smcr_lgr *g = s->g;

	atomic_fetch_sub(&socks, 1);
	smcr_view_changed();
	munmap(s->rmb, s->rmb_size);
	munmap(s->snd, s->snd_size);
	free(s);
	smcr_lgr_put(g);
}

void smcr_sock_free(struct smcr_sock *s)
{
	pthread_mutex_lock(&s->g->mu);
	unlink_sock(s);
	pthread_mutex_unlock(&s->g->mu);
	smcr_engine_quiesce();
	destroy(s);
}

/*
 * The peer can no longer write into the RMB: it said CLOSED or ABORT, or
 * BACK (after its last write), or the connection failed (no link left, or
 * a peer that lied).  A connection never started was named to no peer
 * that could reach it.
 */
static bool peer_done(const struct smcr_sock *s)
{
	return !s->live || s->c.err || (s->c.peer_cflags & (CDC_CF_CLOSED | CDC_CF_ABORT)) ||
	       (smcr_conn_back_state(&s->c) & SMCR_BACK_HEARD);
}

static _Atomic unsigned released_socks;

bool smcr_socks_released(void)
{
	return atomic_load(&released_socks) > 0;
}

void smcr_sock_release(struct smcr_sock *s)
{
	bool now;

	pthread_mutex_lock(&s->g->mu);
	now = peer_done(s);
	if (now) {
		unlink_sock(s);
	} else {
		s->released = true;
		atomic_fetch_add(&released_socks, 1);
	}
	pthread_mutex_unlock(&s->g->mu);
	smcr_view_changed();
	if (now) {
		smcr_engine_quiesce();
		destroy(s);
	} else {
		smcr_engine_kick();
	}
}

struct smcr_sock *smcr_lgr_take_released(struct smcr_lgr *g)
{
	for (struct smcr_sock *s = g->socks; s; s = s->next) {
		if (s->released && peer_done(s)) {
			unlink_sock(s);
			atomic_fetch_sub(&released_socks, 1);
			return s;
		}
	}
	return NULL;
}

void smcr_sock_destroy(struct smcr_sock *s)
{
	destroy(s);
}

/* The connection's error, once, in the debug log: what ended it (g->mu held). */
static void err_note(struct smcr_sock *s, const char *by)
{
	if (!s->c.err || s->err_told)
		return;
	s->err_told = true;
	smcr_log("libsmc-preload: soft SMC-R: connection %u on link %d: %s (%s)\n", s->token, s->li,
		 strerror(-s->c.err), by);
}

/* ---- from the progress thread, g->mu held ---- */

void smcr_sock_fail(struct smcr_sock *s, int err)
{
	/*
	 * Both directions went back to TCP: the links carry nothing of it
	 * (an error of the connection's own, its abort, still ends it).
	 */
	if (!s->c.err && smcr_conn_back_state(&s->c) == (SMCR_BACK_SAID | SMCR_BACK_HEARD))
		return;
	/* the links lost because the peer's process is gone: as its close would end it */
	if (!s->c.err && err == -ECONNRESET && s->g->peer_gone)
		smcr_conn_peer_vanished(&s->c);
	if (!s->c.err)
		s->c.err = err;
	err_note(s, s->g->peer_gone ? "its peer's process is gone" : "its link group failed it");
	smcr_sock_wake(s, true);
	smcr_sock_wake(s, false);
}

void smcr_sock_rx(struct smcr_sock *s, const uint8_t *msg, uint32_t len)
{
	int rc;

	if (!s->live) {
		/* a CDC before our end knew its peer: its cursors are absolute, the last one says all */
		if (len <= sizeof(s->early)) {
			memcpy(s->early, msg, len);
			s->early_len = len;
		}
		return;
	}
	rc = smcr_conn_rx(&s->c, msg, len);
	if (rc < 0) {
		err_note(s, "a CDC it received");
		smcr_sock_fail(s, rc);
		return;
	}
	/* the peer's soft words: its fence matters to our reader, its attaching to our writer */
	if (rc & (SMCR_RX_DATA | SMCR_RX_STATE | SMCR_RX_SOFT | SMCR_RX_BACK))
		smcr_sock_wake(s, true);
	if (rc & (SMCR_RX_ROOM | SMCR_RX_STATE | SMCR_RX_SOFT | SMCR_RX_BACK))
		smcr_sock_wake(s, false);
}

void smcr_sock_sent(struct smcr_sock *s, uint64_t wr_id)
{
	uint64_t id;

	if (!s->live)
		return;
	id = s->c.tx_hi - (uint32_t)((uint32_t)s->c.tx_hi - (uint32_t)wr_id);
	if (smcr_conn_sent(&s->c, id)) {
		err_note(s, "what came after a CDC's delivery");
		smcr_sock_fail(s, smcr_conn_error(&s->c));
	}
	else
		smcr_sock_wake(s, false);
}

/* ---- the application's calls ---- */

ssize_t smcr_sock_send(struct smcr_sock *s, const struct iovec *iov, int cnt)
{
	ssize_t n;

	pthread_mutex_lock(&s->g->mu);
	n = s->live ? smcr_conn_send(&s->c, iov, cnt) : -ENOTCONN;
	err_note(s, "a send");
	pthread_mutex_unlock(&s->g->mu);
	return n;
}

ssize_t smcr_sock_recv(struct smcr_sock *s, const struct iovec *iov, int cnt, bool peek)
{
	ssize_t n;

	pthread_mutex_lock(&s->g->mu);
	n = s->live ? smcr_conn_recv(&s->c, iov, cnt, peek) : -ENOTCONN;
	pthread_mutex_unlock(&s->g->mu);
	return n;
}

ssize_t smcr_sock_recv_seen(struct smcr_sock *s, const struct iovec *iov, int cnt, bool peek,
			   struct smcr_recv_seen *seen)
{
	ssize_t n = -ENOTCONN;

	memset(seen, 0, sizeof(*seen));
	pthread_mutex_lock(&s->g->mu);
	if (s->live) {
		seen->peer_state = smcr_conn_peer_state(&s->c);
		seen->error = smcr_conn_error(&s->c);
		seen->lost_after_end = smcr_conn_lost_after_end(&s->c);
		n = smcr_conn_recv(&s->c, iov, cnt, peek);
		seen->left = (long)smcr_conn_readable(&s->c);
	}
	pthread_mutex_unlock(&s->g->mu);
	return n;
}

long smcr_sock_readable(struct smcr_sock *s)
{
	long n;

	pthread_mutex_lock(&s->g->mu);
	n = s->live ? (long)smcr_conn_readable(&s->c) : 0;
	pthread_mutex_unlock(&s->g->mu);
	return n;
}

long smcr_sock_space(struct smcr_sock *s)
{
	long n;

	pthread_mutex_lock(&s->g->mu);
	n = s->live ? (long)smcr_conn_space(&s->c) : 0;
	pthread_mutex_unlock(&s->g->mu);
	return n;
}

long smcr_sock_unread(struct smcr_sock *s)
{
	long n;

	pthread_mutex_lock(&s->g->mu);
	n = s->live ? (long)smcr_conn_unread(&s->c) : 0;
	pthread_mutex_unlock(&s->g->mu);
	return n;
}

int smcr_sock_set_state(struct smcr_sock *s, uint8_t cflags)
{
	int rc;

	if (smcr_engine_foreign())
		return ask_progress(s, SMCR_ASK_STATE, cflags, 0);
	pthread_mutex_lock(&s->g->mu);
	rc = s->live ? smcr_conn_set_state(&s->c, cflags) : -ENOTCONN;
	pthread_mutex_unlock(&s->g->mu);
	return rc;
}

uint8_t smcr_sock_peer_state(struct smcr_sock *s)
{
	uint8_t f;

	pthread_mutex_lock(&s->g->mu);
	f = s->live ? smcr_conn_peer_state(&s->c) : 0;
	pthread_mutex_unlock(&s->g->mu);
	return f;
}

int smcr_sock_set_soft(struct smcr_sock *s, uint8_t flags, uint64_t fence)
{
	int rc;

	if (smcr_engine_foreign())
		return ask_progress(s, SMCR_ASK_SOFT, flags, fence);
	pthread_mutex_lock(&s->g->mu);
	rc = s->live ? smcr_conn_set_soft(&s->c, flags, fence) : -ENOTCONN;
	pthread_mutex_unlock(&s->g->mu);
	return rc;
}

uint8_t smcr_sock_own_soft(struct smcr_sock *s, uint64_t *fence)
{
	uint8_t f;

	pthread_mutex_lock(&s->g->mu);
	f = s->c.own_soft;
	*fence = s->c.own_fence;
	pthread_mutex_unlock(&s->g->mu);
	return f;
}

uint8_t smcr_sock_own_state(struct smcr_sock *s)
{
	uint8_t f;

	pthread_mutex_lock(&s->g->mu);
	f = s->live ? s->c.own_cflags : 0;
	pthread_mutex_unlock(&s->g->mu);
	return f;
}

uint8_t smcr_sock_peer_soft(struct smcr_sock *s, uint64_t *fence)
{
	uint8_t f = 0;

	*fence = 0;
	pthread_mutex_lock(&s->g->mu);
	if (s->live)
		f = smcr_conn_peer_soft(&s->c, fence);
	pthread_mutex_unlock(&s->g->mu);
	return f;
}

/* How long a vfork() child waits for the progress thread to post for it. */
#define ASK_MS 5000

/* What only the progress thread's process may post (each a CDC). */
static int ask_run(struct smcr_sock *s)
{
	struct smcr_ask *a = &s->ask;

	if (!s->live)
		return -ENOTCONN;
	switch (a->op) {
	case SMCR_ASK_BACK:
		return smcr_conn_back(&s->c);
	case SMCR_ASK_STATE:
		return smcr_conn_set_state(&s->c, a->flags);
	default:
		return smcr_conn_set_soft(&s->c, a->flags, a->fence);
	}
}

/*
 * A vfork() child shares our memory but not our credentials, and the
 * kernel refuses its posts on our queue pairs (EACCES: the uverbs file was
 * opened with the parent's): the progress thread posts for it, one
 * request of a connection at a time (s->ask, under g->mu).
 */
static int ask_progress(struct smcr_sock *s, uint8_t op, uint8_t flags, uint64_t fence)
{
	uint32_t ticket = 0;
	int rc = 1;

	for (int waited = 0; rc > 0; waited++) {
		pthread_mutex_lock(&s->g->mu);
		if (!ticket && !s->live) {
			rc = -ENOTCONN;
		} else if (!ticket && s->ask.asked == s->ask.done) {
			s->ask.op = op;
			s->ask.flags = flags;
			s->ask.fence = fence;
			ticket = ++s->ask.asked;
		} else if (ticket && s->ask.done == ticket) {
			rc = s->ask.rc;
		} else if (waited >= ASK_MS) {
			rc = -ETIMEDOUT;
		}
		pthread_mutex_unlock(&s->g->mu);
		if (rc <= 0)
			break;
		if (ticket && waited % 100 == 0)
			smcr_engine_kick();
		smcr_env.poll(NULL, 0, 1);
	}
	return rc;
}

void smcr_lgr_answer_asks(struct smcr_lgr *g)
{
	for (struct smcr_sock *s = g->socks; s; s = s->next) {
		if (s->ask.asked == s->ask.done)
			continue;
		s->ask.rc = ask_run(s);
		s->ask.done = s->ask.asked;
		/* our readers asleep for the RMB read the TCP stream from now on */
		if (s->ask.op == SMCR_ASK_BACK && !s->ask.rc)
			smcr_sock_wake(s, true);
	}
}

int smcr_sock_back(struct smcr_sock *s)
{
	int rc;

	if (smcr_engine_foreign())
		return ask_progress(s, SMCR_ASK_BACK, 0, 0);
	pthread_mutex_lock(&s->g->mu);
	rc = s->live ? smcr_conn_back(&s->c) : -ENOTCONN;
	if (rc == -EOPNOTSUPP)
		smcr_log("libsmc-preload: soft SMC-R: connection %u: no BACK: soft flags ours 0x%02x, the peer's 0x%02x%s\n",
			 s->token, s->c.own_soft, s->c.peer_soft, s->c.peer_seq_seen ? "" : " (no CDC of its yet)");
	pthread_mutex_unlock(&s->g->mu);
	/* our readers asleep for the RMB read the TCP stream from now on */
	if (!rc)
		smcr_sock_wake(s, true);
	return rc;
}

unsigned smcr_sock_back_state(struct smcr_sock *s)
{
	unsigned f;

	pthread_mutex_lock(&s->g->mu);
	f = s->live ? smcr_conn_back_state(&s->c) : 0;
	pthread_mutex_unlock(&s->g->mu);
	return f;
}

ssize_t smcr_sock_back_pending(struct smcr_sock *s, void *buf, size_t size)
{
	struct iovec p[2];
	ssize_t n = -ENOTCONN;

	pthread_mutex_lock(&s->g->mu);
	if (s->live)
		n = smcr_conn_back_pending(&s->c, p);
	pthread_mutex_unlock(&s->g->mu);
	if (n <= 0)
		return n;
	/* the send buffer no longer changes: nothing is sent after BACK */
	if ((size_t)n > size)
		n = (ssize_t)size;
	if ((size_t)n <= p[0].iov_len) {
		memcpy(buf, p[0].iov_base, (size_t)n);
	} else {
		memcpy(buf, p[0].iov_base, p[0].iov_len);
		memcpy((uint8_t *)buf + p[0].iov_len, p[1].iov_base, (size_t)n - p[0].iov_len);
	}
	return n;
}

void smcr_sock_back_sent(struct smcr_sock *s, size_t n)
{
	pthread_mutex_lock(&s->g->mu);
	if (s->live)
		smcr_conn_back_sent(&s->c, n);
	pthread_mutex_unlock(&s->g->mu);
}

int smcr_sock_error(struct smcr_sock *s)
{
	int rc;

	pthread_mutex_lock(&s->g->mu);
	rc = s->live ? smcr_conn_error(&s->c) : 0;
	pthread_mutex_unlock(&s->g->mu);
	return rc;
}

void smcr_sock_view(struct smcr_sock *s, struct smcr_sock_view *v)
{
	*v = (struct smcr_sock_view){ 0 };
	pthread_mutex_lock(&s->g->mu);
	if (s->live) {
		v->readable = (long)smcr_conn_readable(&s->c);
		v->space = (long)smcr_conn_space(&s->c);
		v->peer_state = smcr_conn_peer_state(&s->c);
		v->error = smcr_conn_error(&s->c);
		v->back = smcr_conn_back_state(&s->c);
		v->lost_after_end = smcr_conn_lost_after_end(&s->c);
	}
	pthread_mutex_unlock(&s->g->mu);
}

uint32_t smcr_sock_seq(struct smcr_sock *s, bool rx)
{
	return atomic_load(&s->seq[rx]);
}

int smcr_sock_wait(struct smcr_sock *s, bool rx, uint32_t seq, const struct timespec *timeout)
{
	long r;
	int err;

	if (!rx)
		smcr_sock_want_room(s);
	else if ((r = smcr_engine_drive(s, rx, seq, timeout)) != -EAGAIN)
		return (int)r;
	atomic_fetch_add(&s->sleepers[rx], 1);
	smcr_sock_unlend(s);
	r = smcr_env.syscall(SYS_futex, &s->seq[rx], FUTEX_WAIT, seq, timeout, NULL, 0);
	err = errno;
	atomic_fetch_sub(&s->sleepers[rx], 1);
	if (r == 0 || err == EAGAIN)
		return 0;
	return -err;
}

void smcr_sock_want_room(struct smcr_sock *s)
{
	pthread_mutex_lock(&s->g->mu);
	/* room comes with the peer's CDC, or (without BACK_OK) as our writes complete */
	if (s->live && s->c.tx_fin < s->c.tx_sent && smcr_conn_room_on_delivery(&s->c))
		smcr_link_want_sent(s->g, s->li);
	pthread_mutex_unlock(&s->g->mu);
}

void smcr_sock_bell(struct smcr_sock *s, bool rx, uint32_t bell)
{
	_Atomic uint32_t *slot = s->bell[rx];

	if (!bell)
		return;
	for (int i = 0; i < SMCR_BELLS; i++)
		if (atomic_load(&slot[i]) == bell)
			return;
	for (int i = 0; i < SMCR_BELLS; i++) {
		uint32_t none = 0;

		if (atomic_compare_exchange_strong(&slot[i], &none, bell))
			return;
	}
	/* more sleepers than a process has bells: one of them had gone */
	atomic_store(&slot[bell % SMCR_BELLS], bell);
}

/* After the sleeper counted itself or set its bell: smcr_drive_end() sees it, or this does. */
void smcr_sock_unlend(struct smcr_sock *s)
{
	if (!smcr_env.drive)
		return;
	pthread_mutex_lock(&s->g->mu);
	if (s->li >= 0)
		smcr_link_unlend(s->g, s->li);
	pthread_mutex_unlock(&s->g->mu);
}

int smcr_sock_describe(struct smcr_sock *s, char *buf, size_t size)
{
	const struct smcr_conn *c = &s->c;
	int n;

	pthread_mutex_lock(&s->g->mu);
	n = snprintf(buf, size,
		     "link %d%s, tx given %llu posted %llu delivered %llu peer read %llu, rx read %llu told %llu "
		     "peer wrote %llu, seq %u, cdc due %d, starved %d, error %d, peer flags 0x%02x",
		     s->li, s->g->link[s->li].dead ? " (dead)" : "", (unsigned long long)c->tx_prep,
		     (unsigned long long)c->tx_sent, (unsigned long long)c->tx_fin,
		     (unsigned long long)c->peer_cons, (unsigned long long)c->rx_cons,
		     (unsigned long long)c->rx_told, (unsigned long long)c->peer_prod, c->seq, c->cdc_due,
		     s->starved, c->err, c->peer_cflags);
	pthread_mutex_unlock(&s->g->mu);
	return n;
}
