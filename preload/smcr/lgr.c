/*
 * A link group between this process and a peer process: its links, their
 * set-up, and what a failed link does to the group's connections
 * (doc/soft-roce.md sections 4 and 5).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/random.h>

#include "smcr_int.h"

/*
 * Queue pairs of a link: work requests in flight for all its connections, the
 * peer's message slots.  A message may be as long as the longest LLC
 * message: an ADD LINK carries an rkey for each of the group's connections,
 * and a group that could not send it could never add a link again.  A slot
 * holds a CDC with bytes inside; an ADD LINK's rest, one at a time each way
 * (its flow waits for the answer), goes through the queue pair's few long
 * buffers (doc/soft-roce.md section 4).
 */
#define LINK_MSG_SIZE  SMCR_LLC_ENC_MAX_LEN
#define LINK_SLOT_SIZE (SMCR_CDC_LEN + SMCR_CDC_DATA_MAX)
_Static_assert(LINK_SLOT_SIZE >= SMCR_LLC_LEN, "a slot holds every LLC message but ADD LINK's rkeys");
_Static_assert(LINK_MSG_SIZE <= RDMA_MSG_MAX, "a queue pair takes messages of that size");
static const struct rdma_qp_size link_size = {
	.send_wr = 64, .recv_slots = 64, .msg_size = LINK_MSG_SIZE, .slot_size = LINK_SLOT_SIZE,
};

/* Keys name groups within the process: a count, never 0. */
static uint32_t next_key(void)
{
	static _Atomic uint32_t keys;
	uint32_t k;

	while (!(k = atomic_fetch_add(&keys, 1) + 1)) {
	}
	return k;
}

static void bell_close(int fd)
{
	if (fd >= 0) {
		rdma_fd_drop(fd);
		smcr_env.syscall(SYS_close, fd);
	}
}

int smcr_lgr_new(bool server, struct smcr_lgr **out)
{
	struct smcr_lgr *g = calloc(1, sizeof(*g));
	int rc;

	if (!g)
		return -ENOMEM;
	rc = rdma_lib_load();
	if (rc) {
		free(g);
		return rc;
	}
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	g->server = server;
	g->key = next_key();
	g->refs = 1;
	if (getrandom(&g->next_token, sizeof(g->next_token), 0) != sizeof(g->next_token))
		g->next_token = 0x5e000000u;
	rc = smcr_engine_add(g);
	if (rc) {
		pthread_cond_destroy(&g->cv);
		pthread_mutex_destroy(&g->mu);
		free(g);
		return rc;
	}
	*out = g;
	return 0;
}

void smcr_lgr_hold(struct smcr_lgr *g)
{
	pthread_mutex_lock(&g->mu);
	g->refs++;
	pthread_mutex_unlock(&g->mu);
}

void smcr_lgr_put(struct smcr_lgr *g)
{
	pthread_mutex_lock(&g->mu);
	g->refs--;
	pthread_mutex_unlock(&g->mu);
	smcr_engine_kick();
}

/* By the progress thread, once nothing holds the group. */
void smcr_lgr_free(struct smcr_lgr *g)
{
	for (unsigned li = 0; li < g->nlinks; li++) {
		struct smcr_link *l = &g->link[li];
		uint64_t posted, completed;

		rdma_qp_counts(l->qp, &posted, &completed);
		/* a link that failed, or left work outstanding, may have packets stuck in its device */
		if (!l->dev_gone && (l->dead || posted != completed))
			rdma_retire(l->qp);
		else
			rdma_qp_destroy(l->qp);
		rdma_dev_close(l->dev);
		bell_close(l->bell);
	}
	pthread_cond_destroy(&g->cv);
	pthread_mutex_destroy(&g->mu);
	free(g);
}

/* A new queue pair of a link on device d (the port's MTU until the peer's is known: connecting may lower it). */
static int link_qp_create(struct rdma_dev *d, struct rdma_qp **out)
{
	struct rdma_qp_size size = link_size;

	if (rdma_dev_port(d)->soft)
		size.max_inflight = rdma_soft_inflight(rdma_dev_port(d)->mtu);
	return rdma_qp_create(d, &size, out);
}

int smcr_link_open(struct smcr_lgr *g, const char *dev, uint8_t port, const uint8_t gid[16])
{
	struct smcr_link l = { 0 };
	int rc, li;

	rc = rdma_dev_open(dev, port, gid, &l.dev);
	if (rc)
		return rc;
	rc = link_qp_create(l.dev, &l.qp);
	if (rc) {
		rdma_dev_close(l.dev);
		return rc;
	}
	l.bell = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	rdma_fd_keep(l.bell);
	pthread_mutex_lock(&g->mu);
	if (g->nlinks == SMCR_LINKS_MAX) {
		pthread_mutex_unlock(&g->mu);
		rdma_qp_destroy(l.qp);
		rdma_dev_close(l.dev);
		bell_close(l.bell);
		return -EMLINK;
	}
	li = (int)g->nlinks;
	snprintf(l.dev_name, sizeof(l.dev_name), "%s", dev);
	l.port = port;
	g->link[li] = l;
	g->nlinks++;
	smcr_lgr_write_max(g);
	for (struct smcr_sock *s = g->socks; s && !rc; s = s->next)
		rc = smcr_sock_reg(s, li);
	pthread_mutex_unlock(&g->mu);
	smcr_engine_kick();
	return rc ? rc : li;
}

/* Link li's queue pair is q from now on, not connected yet; the old one is the caller's to retire. */
static void link_take_qp(struct smcr_lgr *g, int li, struct rdma_qp *q)
{
	struct smcr_link *l = &g->link[li];

	l->qp = q;
	l->gen++;
	l->connected = false;
	/* the new queue pair's channel is watched by the progress thread */
	l->lent_idle = false;
	/* a thread asleep on the old channel lets go of it before it goes */
	if (l->driven) {
		l->driven = false;
		smcr_link_bell(g, li);
	}
}

/*
 * A link starts again on queue pair q: nothing of the old one's state
 * holds, nor the peer's rkeys unless keep_rkeys (the peer's registrations
 * on its device stay).
 */
static void link_new_qp(struct smcr_lgr *g, int li, struct rdma_qp *q, bool keep_rkeys)
{
	struct smcr_link *l = &g->link[li];

	link_take_qp(g, li, q);
	l->up = false;
	l->post_err = 0;
	l->num = 0;
	l->seen_done = l->heard = l->seen_heard = 0;
	l->since_ns = l->kicked_ns = l->alive_ns = 0;
	for (struct smcr_sock *s = g->socks; s && !keep_rkeys; s = s->next)
		s->peer_rkey_ok[li] = false;
}

void smcr_lgr_write_max(struct smcr_lgr *g)
{
	uint32_t max = 0;

	for (unsigned li = 0; li < g->nlinks; li++) {
		uint32_t in = rdma_qp_inflight(g->link[li].qp);

		if (in && (!max || in / 2 < max))
			max = in / 2;
	}
	g->write_max = max;
	for (struct smcr_sock *s = g->socks; s; s = s->next)
		s->c.write_max = max;
}

int smcr_link_reopen(struct smcr_lgr *g, int li, bool keep_rkeys)
{
	struct smcr_link *l = &g->link[li];
	struct rdma_qp *q, *old;
	int rc;

	pthread_mutex_lock(&g->mu);
	rc = !l->dead || l->dev_gone ? -ENODEV : 0;
	pthread_mutex_unlock(&g->mu);
	if (rc)
		return rc;
	/* the device and the connections' registrations on it stay: only the queue pair is new */
	rc = link_qp_create(l->dev, &q);
	if (rc)
		return rc;
	pthread_mutex_lock(&g->mu);
	old = l->qp;
	link_new_qp(g, li, q, keep_rkeys);
	l->dead = false;
	pthread_mutex_unlock(&g->mu);
	/*
	 * The progress thread may still poll its channel: it looks again at
	 * the new one.  Packets of the old one may still wait in the network
	 * device, the reason it failed: it goes once they cannot.
	 */
	rdma_retire(old);
	smcr_engine_kick();
	return 0;
}

int smcr_link_dev_back(struct smcr_lgr *g, int li)
{
	struct smcr_link *l = &g->link[li];
	struct rdma_qp_size size = link_size;
	struct rdma_dev *d;
	struct rdma_qp *q;
	uint8_t gid[16];
	int rc;

	/* the same port and GID: the interface's address, which the peer knows */
	memcpy(gid, rdma_dev_port(l->dev)->gid, sizeof(gid));
	rc = rdma_dev_open(l->dev_name, l->port, gid, &d);
	if (rc)
		return rc;
	if (rdma_dev_port(d)->soft)
		size.max_inflight = rdma_soft_inflight(rdma_dev_port(d)->mtu);
	rc = rdma_qp_create(d, &size, &q);
	if (rc) {
		rdma_dev_close(d);
		return rc;
	}
	/* a thread asleep on the old channel lets go of it before it closes */
	if (l->driven)
		smcr_link_bell(g, li);
	/* the old device's objects go before it does */
	for (struct smcr_sock *s = g->socks; s; s = s->next)
		smcr_sock_unreg(s, li);
	rdma_qp_destroy(l->qp);
	rdma_dev_close(l->dev);
	l->dev = d;
	link_new_qp(g, li, q, false);
	for (struct smcr_sock *s = g->socks; s && !rc; s = s->next)
		rc = smcr_sock_reg(s, li);
	smcr_view_changed();
	if (rc)
		return rc;      /* the device stays gone: the next look opens it again */
	l->dev_gone = false;
	return 0;
}

int smcr_link_of_gid(struct smcr_lgr *g, const uint8_t gid[16], bool dead)
{
	for (unsigned li = 0; li < g->nlinks; li++) {
		const struct smcr_link *l = &g->link[li];
		struct rdma_qp_addr a;

		if (dead ? !l->dead || l->dev_gone : l->dead || l->connected)
			continue;
		rdma_qp_local(g->link[li].qp, &a);
		if (!memcmp(a.gid, gid, 16))
			return (int)li;
	}
	return -1;
}

void smcr_link_local(struct smcr_lgr *g, int li, struct rdma_qp_addr *a)
{
	pthread_mutex_lock(&g->mu);
	rdma_qp_local(g->link[li].qp, a);
	pthread_mutex_unlock(&g->mu);
}

int smcr_link_connect(struct smcr_lgr *g, int li, const struct rdma_qp_addr *peer)
{
	int rc;

	pthread_mutex_lock(&g->mu);
	rc = rdma_qp_connect(g->link[li].qp, peer);
	if (!rc) {
		g->link[li].peer = *peer;
		g->link[li].connected = true;
		smcr_lgr_write_max(g);
	}
	pthread_mutex_unlock(&g->mu);
	return rc;
}

unsigned smcr_lgr_links_up(struct smcr_lgr *g)
{
	unsigned n = 0;

	pthread_mutex_lock(&g->mu);
	for (unsigned li = 0; li < g->nlinks; li++)
		n += g->link[li].up && !g->link[li].dead;
	pthread_mutex_unlock(&g->mu);
	return n;
}

unsigned smcr_lgr_socks_locked(struct smcr_lgr *g)
{
	unsigned n = 0;

	for (struct smcr_sock *s = g->socks; s; s = s->next)
		n++;
	return n;
}

bool smcr_lgr_full(struct smcr_lgr *g)
{
	bool full;

	pthread_mutex_lock(&g->mu);
	full = smcr_lgr_socks_locked(g) >= SMCR_LGR_CONNS_MAX;
	pthread_mutex_unlock(&g->mu);
	return full;
}

bool smcr_lgr_unused(struct smcr_lgr *g)
{
	bool unused;

	pthread_mutex_lock(&g->mu);
	unused = !g->socks && g->refs == 1 && !g->adding && !g->rebuild.on;
	pthread_mutex_unlock(&g->mu);
	return unused;
}

bool smcr_lgr_ended(struct smcr_lgr *g)
{
	bool ended;

	pthread_mutex_lock(&g->mu);
	ended = !g->adding && !g->rebuild.on;
	for (unsigned li = 0; li < g->nlinks && ended; li++)
		ended = !g->link[li].up || g->link[li].dead;
	pthread_mutex_unlock(&g->mu);
	return ended;
}

bool smcr_lgr_links_to(struct smcr_lgr *g, const struct rdma_qp_addr *p)
{
	bool to = false;

	pthread_mutex_lock(&g->mu);
	for (unsigned li = 0; li < g->nlinks && !to; li++)
		to = g->link[li].connected && !g->link[li].dead && g->link[li].peer.qpn == p->qpn &&
		     !memcmp(g->link[li].peer.gid, p->gid, 16);
	pthread_mutex_unlock(&g->mu);
	return to;
}

void smcr_lgr_set_peer_host(struct smcr_lgr *g, const char *host)
{
	pthread_mutex_lock(&g->mu);
	snprintf(g->peer_host, sizeof(g->peer_host), "%s", host);
	pthread_mutex_unlock(&g->mu);
}

unsigned smcr_lgr_failovers(struct smcr_lgr *g)
{
	unsigned n;

	pthread_mutex_lock(&g->mu);
	n = g->failovers;
	pthread_mutex_unlock(&g->mu);
	return n;
}

struct smcr_sock *smcr_lgr_sock_of_token(struct smcr_lgr *g, uint32_t token)
{
	for (struct smcr_sock *s = g->socks; s; s = s->next)
		if (s->token == token)
			return s;
	return NULL;
}

int smcr_link_of_num(struct smcr_lgr *g, uint8_t num)
{
	for (unsigned li = 0; li < g->nlinks; li++)
		if ((g->link[li].up || g->link[li].connected) && !g->link[li].dead && g->link[li].num == num)
			return (int)li;
	return -1;
}

/* A live link a connection can move to: confirmed, and the peer's RMB reachable over it. */
static int other_link(struct smcr_lgr *g, const struct smcr_sock *s, int from)
{
	for (unsigned li = 0; li < g->nlinks; li++)
		if ((int)li != from && g->link[li].up && !g->link[li].dead && s->peer_rkey_ok[li])
			return (int)li;
	return -1;
}

/*
 * Nothing more may land through a dead link's queue pair.  rxe empties a
 * queue pair's received packets under its lock when it is reset or put
 * in the error state, and a freed packet may run the network's softirq,
 * whose next packet for that queue pair takes the same lock: the guest
 * freezes (doc/kernels.md).  Where the port is active (the peer may still
 * send, or a port-down event was read after the port came back), the
 * link takes a new queue pair, not connected, and the old one is
 * destroyed (rdma_retire(): rxe takes it out of its table first, so that
 * no packet finds it).  Where the port is down nothing arrives: a reset,
 * as when no queue pair can be made.
 */
static bool swap_qp(struct smcr_lgr *g, int li)
{
	struct smcr_link *l = &g->link[li];
	struct rdma_qp *q, *old = l->qp;

	if (l->dev_gone || rdma_dev_port_active(l->dev) != 1 || link_qp_create(l->dev, &q))
		return false;
	link_take_qp(g, li, q);
	rdma_retire(old);
	smcr_engine_kick();
	return true;
}

bool smcr_link_die(struct smcr_lgr *g, int li)
{
	struct smcr_link *l = &g->link[li];

	if (l->dead)
		return false;
	l->dead = true;
	l->doubt_ns = 0;
	if (!swap_qp(g, li))
		rdma_qp_stop(l->qp);
	/* a reader asleep on its channel gives it back and goes on as its connection does */
	if (l->driven)
		smcr_link_bell(g, li);
	return true;
}

void smcr_link_fail(struct smcr_lgr *g, int li, bool by_peer)
{
	struct smcr_link *l = &g->link[li];
	unsigned moved = 0, reset = 0, waiting = 0;
	bool told = false, only = true;

	if (!smcr_link_die(g, li) || !l->up)
		return;
	g->failovers++;
	smcr_view_changed();
	for (unsigned o = 0; o < g->nlinks; o++)
		only &= (int)o == li || !g->link[o].up || g->link[o].dead;
	if (only && !by_peer && !g->peer_gone && smcr_rebuild_start(g, li)) {
		for (struct smcr_sock *s = g->socks; s; s = s->next) {
			waiting += s->li == li && s->live;
			smcr_sock_wake(s, false);
			smcr_sock_wake(s, true);
		}
		smcr_log("libsmc-preload: soft SMC-R: link %u (%s) failed%s: rebuilt on new queue pairs, %u connections wait\n",
			 l->num, l->dev_name, l->port_down ? " (its port is down)" : "", waiting);
		pthread_cond_broadcast(&g->cv);
		return;
	}
	for (struct smcr_sock *s = g->socks; s; s = s->next) {
		int to;

		if (s->li != li || !s->live)
			continue;
		to = other_link(g, s, li);
		if (to < 0) {
			smcr_sock_fail(s, -ECONNRESET);
			reset++;
			continue;
		}
		moved++;
		s->li = to;
		if (smcr_conn_switch(&s->c, &s->path[to])) {
			smcr_log("libsmc-preload: soft SMC-R: connection %u: no move to link %d: %s\n",
				 s->token, to, strerror(-smcr_conn_error(&s->c)));
			smcr_sock_fail(s, smcr_conn_error(&s->c));
		}
		smcr_sock_wake(s, false);
		smcr_sock_wake(s, true);
	}
	/*
	 * The peer's queue pair may not notice for long (rxe retries to a
	 * silent peer), so the end that saw it tells the other over a link
	 * left, as the kernel's LLC DELETE LINK does.
	 */
	for (unsigned o = 0; o < g->nlinks && !told; o++)
		told = !smcr_llc_delete_link(g, (int)o, l->num, by_peer ? SMCR_LLC_FLAG_RESP : 0,
					     SMCR_LLC_DEL_LOST_PATH);
	smcr_log("libsmc-preload: soft SMC-R: link %u (%s) failed%s: %u connections moved, %u reset\n", l->num,
		 l->dev_name, by_peer ? " (the peer said so)" : g->peer_gone ? " (its peer's process is gone)" : "",
		 moved, reset);
	pthread_cond_broadcast(&g->cv);
}

int smcr_lgr_describe(struct smcr_lgr *g, char *buf, size_t size)
{
	char qp[96];
	size_t n = 0;

	if (!size)
		return 0;
	buf[0] = 0;
	pthread_mutex_lock(&g->mu);
	for (unsigned li = 0; li < g->nlinks; li++) {
		const struct smcr_link *l = &g->link[li];
		int k;

		rdma_qp_describe(l->qp, qp, sizeof(qp));
		k = snprintf(buf + n, size - n, "link %u (number %u)%s%s%s: %s\n", li, l->num,
			     l->connected ? " connected" : "", l->up ? " up" : "", l->dead ? " dead" : "", qp);
		if (k < 0 || (size_t)k >= size - n)
			break;
		n += (size_t)k;
	}
	if (n < size)
		snprintf(buf + n, size - n, "%u in the inbox\n", g->nin);
	pthread_mutex_unlock(&g->mu);
	return (int)strlen(buf);
}
