/*
 * The progress thread of soft SMC-R (doc/soft-roce.md section 4): one per
 * process, started with its first link group.  It sleeps on every live
 * link's completion channel and device events and on a wake descriptor,
 * takes the completions under their group's mutex, feeds the peer's CDCs
 * and the delivered sends into the connections, answers or keeps the LLC
 * messages, fails links over, and wakes the connections' sleepers.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>

#include "base.h"
#include "smcr_int.h"

struct smcr_env smcr_env;

static pthread_mutex_t eng_mu = PTHREAD_MUTEX_INITIALIZER;
static struct smcr_lgr *groups;
static _Atomic unsigned ngroups;  /* groups' length, read without eng_mu (smcr_groups_any()) */
static int wake_fd = -1;
static bool started;
static _Atomic pid_t eng_pid;   /* the process the progress thread runs in */

void smcr_env_set(const struct smcr_env *env)
{
	smcr_env = *env;
}

void smcr_log(const char *fmt, ...)
{
	char line[256];
	va_list ap;

	if (!smcr_env.log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	smcr_env.log("%s", line);
}

static _Atomic unsigned view_gen;

void smcr_view_changed(void)
{
	atomic_fetch_add(&view_gen, 1);
}

unsigned smcr_lgr_changes(void)
{
	return atomic_load(&view_gen);
}

static _Atomic unsigned lgrs_freed;
static _Atomic unsigned links_watched;

unsigned smcr_lgrs_freed(void)
{
	return atomic_load(&lgrs_freed);
}

/* One group's view (g->mu held). */
static void view_of(const struct smcr_lgr *g, struct smcr_lgr_view *v)
{
	memset(v, 0, sizeof(*v));
	v->key = g->key;
	v->server = g->server;
	memcpy(v->peer_host, g->peer_host, sizeof(v->peer_host));
	for (unsigned li = 0; li < g->nlinks; li++) {
		const struct smcr_link *l = &g->link[li];
		struct smcr_link_view *lv = &v->link[v->nlinks];
		struct rdma_qp_addr a;

		if (!l->up || l->dead)
			continue;
		lv->num = l->num;
		memcpy(lv->dev, l->dev_name, sizeof(lv->dev));
		lv->port = l->port;
		rdma_qp_local(l->qp, &a);
		memcpy(lv->gid, a.gid, 16);
		memcpy(lv->peer_gid, l->peer.gid, 16);
		for (const struct smcr_sock *s = g->socks; s; s = s->next)
			lv->conns += s->live && !s->released && s->li == (int)li;
		v->nlinks++;
	}
	for (const struct smcr_sock *s = g->socks; s; s = s->next)
		v->conns += s->live && !s->released;
}

struct smcr_lgr *smcr_lgr_of_key(uint32_t key)
{
	struct smcr_lgr *found = NULL;

	pthread_mutex_lock(&eng_mu);
	for (struct smcr_lgr *g = groups; g && !found; g = g->next) {
		pthread_mutex_lock(&g->mu);
		if (g->key == key && g->refs > 0) {
			g->refs++;
			found = g;
		}
		pthread_mutex_unlock(&g->mu);
	}
	pthread_mutex_unlock(&eng_mu);
	return found;
}

int smcr_lgr_views(struct smcr_lgr_view *v, int max)
{
	int n = 0;

	pthread_mutex_lock(&eng_mu);
	for (struct smcr_lgr *g = groups; g && n < max; g = g->next) {
		pthread_mutex_lock(&g->mu);
		/* a group nobody holds is on its way out */
		if (g->refs > 0)
			view_of(g, &v[n++]);
		pthread_mutex_unlock(&g->mu);
	}
	pthread_mutex_unlock(&eng_mu);
	return n;
}

void smcr_link_bell(struct smcr_lgr *g, int li)
{
	/* the link's bell lives as long as the group */
	if (g->link[li].bell >= 0 && eventfd_write(g->link[li].bell, 1) < 0) {
		/* a full counter wakes it as well */
	}
}

/*
 * A vfork() child's descriptors are its own: it may have closed ours, or
 * opened another file under its number.
 */
static bool wake_fd_still_ours(void)
{
	char path[40], what[32];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", wake_fd);
	n = readlink(path, what, sizeof(what) - 1);
	if (n < 0)
		return false;
	what[n] = '\0';
	return !strcmp(what, "anon_inode:[eventfd]");
}

void smcr_engine_kick(void)
{
	if (wake_fd < 0 || (smcr_engine_foreign() && !wake_fd_still_ours()))
		return;
	/* eventfd_write(), not write(): the library's own calls stay off its hooks */
	if (eventfd_write(wake_fd, 1) < 0) {
		/* a full counter wakes the thread as well */
	}
}

bool smcr_engine_foreign(void)
{
	pid_t pid = atomic_load(&eng_pid);

	return pid && getpid() != pid;
}

/* The connection and direction this thread drives (smcr_engine_drive()): its own wakes ring nothing. */
static __thread const struct smcr_sock *drive_sock;
static __thread bool drive_rx;
static __thread uint32_t drive_own_bell;

static void wake_now(struct smcr_sock *s, bool rx)
{
	int dl = atomic_load(&s->drive_li[rx]);

	/* a sleeper counted after this load saw the new seq: its FUTEX_WAIT returns at once */
	if (atomic_load(&s->sleepers[rx]))
		smcr_env.syscall(SYS_futex, &s->seq[rx], FUTEX_WAKE, 0x7fffffff, NULL, NULL, 0);
	if (dl && !(s == drive_sock && rx == drive_rx))
		smcr_link_bell(s->g, dl - 1);
	for (int i = 0; i < SMCR_BELLS; i++) {
		uint32_t bell = atomic_load(&s->bell[rx][i]);

		/*
		 * A driver's own bell (on any of its connections: a poll or
		 * epoll wait's): it is awake already and looks at them all, and
		 * the bell stays for its next sleep (emptied, link_wants_sent()
		 * would see no writer asleep and leave the send queue unarmed).
		 */
		if (!bell || (drive_sock && bell == drive_own_bell))
			continue;
		if ((bell = atomic_exchange(&s->bell[rx][i], 0)) && smcr_env.ring)
			smcr_env.ring(bell);
	}
}

/*
 * The progress thread wakes sleepers once it let go of their group's
 * mutex: a woken reader that found it held would sleep on it at once, and
 * wake the progress thread again (two more switches of the CPU per message).
 */
#define WAKES_MAX 64

struct wakes {
	unsigned n;
	struct { struct smcr_sock *s; bool rx; } w[WAKES_MAX];
};

static __thread struct wakes *deferred;

void smcr_sock_wake(struct smcr_sock *s, bool rx)
{
	struct wakes *d = deferred;

	atomic_fetch_add(&s->seq[rx], 1);
	if (d) {
		for (unsigned i = 0; i < d->n; i++)
			if (d->w[i].s == s && d->w[i].rx == rx)
				return;
		if (d->n < WAKES_MAX) {
			d->w[d->n].s = s;
			d->w[d->n++].rx = rx;
			return;
		}
	}
	wake_now(s, rx);
}

/*
 * The wakes put off, without any group's mutex but with eng_mu: a
 * connection its owner frees meanwhile waits for eng_mu first
 * (smcr_engine_quiesce()), and the progress thread frees none before this.
 */
static void wakes_flush(struct wakes *d)
{
	for (unsigned i = 0; i < d->n; i++)
		wake_now(d->w[i].s, d->w[i].rx);
	d->n = 0;
}

void smcr_engine_quiesce(void)
{
	pthread_mutex_lock(&eng_mu);
	pthread_mutex_unlock(&eng_mu);
}

/*
 * Link li, probed because the peer's daemon said its process is gone,
 * failed: the peer is gone indeed.  Nobody would answer a rebuild, and
 * the connections it resets end as a close of the peer's would
 * (smcr_conn_peer_vanished()); a connection that moves to another link,
 * or a later failure, is none of it.
 */
static void fail_gone(struct smcr_lgr *g, int li)
{
	smcr_log("libsmc-preload: soft SMC-R: link %u: the peer's process is gone (its daemon said so, the link does not answer)\n",
		 g->link[li].num);
	g->peer_gone = true;
	smcr_link_fail(g, li, false);
	g->peer_gone = false;
}

/* One completion of link li, or a message of the peer over it. */
static void take(struct smcr_lgr *g, int li, const struct rdma_event *ev)
{
	if (ev->kind == RDMA_EV_ERROR) {
		if (!g->link[li].dead)
			smcr_log("libsmc-preload: soft SMC-R: link %u: a work request failed (status %d)\n",
				 g->link[li].num, ev->status);
		if (g->link[li].doubt_ns)
			fail_gone(g, li);
		else
			smcr_link_fail(g, li, false);
	} else if (ev->kind == RDMA_EV_SENT) {
		struct smcr_sock *s = ev->wr_id >> 32 ? smcr_lgr_sock_of_token(g, (uint32_t)(ev->wr_id >> 32))
						      : NULL;

		if (s)
			smcr_sock_sent(s, ev->wr_id);
	} else if (ev->kind == RDMA_EV_MSG) {
		struct smcr_cdc cdc;
		struct smcr_sock *s;
		int rc;

		g->link[li].heard++;
		if (!ev->len || ev->msg[0] != SMCR_CDC_TYPE) {
			smcr_llc_in(g, li, ev->msg, ev->len);
		} else if ((rc = smcr_cdc_decode(ev->msg, ev->len, &cdc)) == 0 || rc == -EBADMSG) {
			/* bytes inside it that the message does not hold fail the connection */
			s = smcr_lgr_sock_of_token(g, cdc.token);
			if (s)
				smcr_sock_rx(s, ev->msg, ev->len);
		}
	}
}

/* Everything a group's links completed, and what waited for room in a send queue. */
static void drain(struct smcr_lgr *g)
{
	bool freed = false;

	for (unsigned li = 0; li < g->nlinks; li++) {
		struct rdma_event ev[16];
		uint64_t posted, before, after;
		int n;

		/* completions that no event reports free the send queue as well */
		rdma_qp_counts(g->link[li].qp, &posted, &before);
		do {
			n = rdma_qp_poll(g->link[li].qp, ev, 16);
			for (int i = 0; i < n; i++)
				take(g, (int)li, &ev[i]);
		} while (n == 16);
		if (n < 0)
			smcr_link_fail(g, (int)li, false);
		rdma_qp_counts(g->link[li].qp, &posted, &after);
		freed |= after != before;
	}
	if (!freed)
		return;
	for (struct smcr_sock *s = g->socks; s; s = s->next) {
		if (!s->starved || !s->live)
			continue;
		s->starved = false;
		if (smcr_conn_push(&s->c))
			smcr_sock_fail(s, smcr_conn_error(&s->c));
		smcr_sock_wake(s, false);
	}
}

void smcr_link_again(struct smcr_lgr *g, int li)
{
	struct smcr_link *l = &g->link[li];

	l->again = g->adding || l->rebuilding || smcr_lgr_carrier(g, li) < 0;
	if (l->again)
		return;
	if (g->server)
		smcr_lgr_relink(g, li, 0);
	else
		smcr_link_request(g, li);
}

static void device_event(struct smcr_lgr *g, int li)
{
	struct smcr_link *l = &g->link[li];
	enum rdma_dev_event ev = rdma_dev_event(l->dev);

	if (ev == RDMA_DEV_FATAL)
		l->dev_gone = true;
	if (ev == RDMA_DEV_PORT_DOWN || ev == RDMA_DEV_PORT_UP)
		l->port_down = ev == RDMA_DEV_PORT_DOWN;
	if (l->rebuilding) {
		/*
		 * the only link's rebuild waits for its port, asking the device
		 * (rebuild.c): an event read late must not fail its new queue pair
		 */
		pthread_cond_broadcast(&g->cv);
		return;
	}
	if (ev == RDMA_DEV_PORT_DOWN || ev == RDMA_DEV_FATAL)
		smcr_link_fail(g, li, false);
	/* a failed link's port is back */
	if (ev == RDMA_DEV_PORT_UP && l->dead && !l->dev_gone)
		smcr_link_again(g, li);
}

/*
 * The watchdog: a link with work outstanding and no completion for
 * KICK_NS gets a probe, a zero-byte RDMA WRITE (rdma_post_probe()) whose
 * doorbell and packet restart a send queue that rxe parked (a lost
 * wake-up, a lost last packet that no later one reveals); still no
 * completion after DEAD_NS, the link has failed.  The probe takes nothing
 * of the peer's: a peer whose program is stopped (SIGSTOP, a debugger)
 * while our writer waits for room acknowledges it for as long as it is
 * stopped, where an LLC message a probe would use up its receive slots,
 * which only its program gives back (64 of them: the link failed about
 * half a minute into such a stop).  A link that heard nothing and sent
 * nothing for KEEPALIVE_NS (the kernel's net.smc.smcr_testlink_time,
 * 30 s) gets an LLC TEST LINK, as the kernel's: a pure receiver of a peer
 * that went silent learns it.
 */
#define KICK_NS (500 * 1000000LL)
/*
 * A probe sent because the peer's daemon saw the peer's process hang up
 * its control connection: a live peer's device acknowledges it at once
 * (unless work before it waits for the peer's receive slots); unanswered
 * this long (rxe's own retries give up later, about 4 s), the link has
 * failed.
 */
#define GONE_NS (3 * 1000000000LL)
#define DEAD_NS (10 * 1000000000LL)
#define KEEPALIVE_NS (30 * 1000000000LL)
#define WATCH_MS 200
/*
 * A watchdog that did not look for this long was not running: the process
 * was stopped (SIGSTOP, Ctrl-Z, a debugger), so its links' clocks start
 * again rather than count the stop (the progress thread looks at least once
 * a second while it runs).
 */
#define WATCH_GAP_NS (3 * 1000000000LL)
/* How often a link whose device was deleted looks for it again (rdma link add). */
#define DEV_LOOK_NS (2 * 1000000000LL)
/*
 * A channel a sleeper gave back stays lent while its link is busy
 * (lent_idle): the next sleeper takes it without an epoll_ctl() each way.
 * Nobody watches it meanwhile, so a thread that sleeps without driving
 * takes it back first (smcr_link_unlend()), and the progress thread looks
 * every LEND_LOOK_MS and takes back one left for LEND_IDLE_NS: an LLC
 * request or a failure that comes while nobody sleeps waits that long.  It
 * looks that often while a channel was left lent in the last LEND_BUSY_NS,
 * lent or not now (a sleeper that leaves it then need not wake the thread).
 */
#define LEND_IDLE_NS (10 * 1000000LL)
#define LEND_LOOK_MS 10
#define LEND_BUSY_NS (1000 * 1000000LL)
/* the progress thread sleeps at most LEND_LOOK_MS (a channel left lent needs no kick) */
static atomic_bool lend_watch;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void test_link(struct smcr_lgr *g, int li)
{
	struct smcr_llc_msg m;
	int rc;

	memset(&m, 0, sizeof(m));
	m.hd.type = SMCR_LLC_TEST_LINK;
	m.hd.version = SMCR_LLC_VERSION_V2;
	rc = smcr_llc_send(g, li, &m);
	if (rc)
		smcr_log("libsmc-preload: soft SMC-R: link %u: TEST LINK not sent: %s\n", g->link[li].num,
			 strerror(-rc));
}

/* A probe the queue pair refuses (not for want of room) fails the link as a refused data post does. */
static void kick(struct smcr_lgr *g, int li)
{
	struct smcr_link *l = &g->link[li];
	int rc = rdma_post_probe(l->qp);

	if (!rc)
		return;
	smcr_log("libsmc-preload: soft SMC-R: link %u: probe not sent: %s\n", l->num, strerror(-rc));
	if (rc != -ENOBUFS && !l->post_err)
		l->post_err = rc;
}

int smcr_lgr_peer_gone(uint32_t key)
{
	struct smcr_lgr *g = smcr_lgr_of_key(key);
	unsigned probed = 0;

	if (!g)
		return -ENOENT;
	pthread_mutex_lock(&g->mu);
	for (unsigned li = 0; li < g->nlinks; li++) {
		struct smcr_link *l = &g->link[li];
		uint64_t done;

		if (!l->up || l->dead || l->doubt_ns)
			continue;
		kick(g, (int)li);
		rdma_qp_counts(l->qp, &l->doubt_posted, &done);
		l->doubt_ns = now_ns();
		probed++;
	}
	pthread_mutex_unlock(&g->mu);
	if (probed) {
		smcr_log("libsmc-preload: soft SMC-R: link group %u: the peer's daemon says its process is gone: %u links probed\n",
			 key, probed);
		smcr_engine_kick();
	}
	smcr_lgr_put(g);
	return 0;
}

/*
 * A connection on link li has bytes that wait for room in the peer's RMB:
 * a peer that died leaves no work outstanding to time out, so the link is
 * watched as if it had some (the probe tells a live peer from a dead one).
 */
static bool link_waits_for_peer(const struct smcr_lgr *g, int li)
{
	for (const struct smcr_sock *s = g->socks; s; s = s->next)
		if (s->li == li && s->live && !s->c.err && s->c.tx_prep != s->c.tx_sent)
			return true;
	return false;
}

/*
 * A link whose device was deleted, once a device of that name is back with
 * the link's GID (rdma link add): added again as when its port comes back.
 */
static void dev_back(struct smcr_lgr *g, int li)
{
	uint8_t num = g->link[li].num;

	if (smcr_link_dev_back(g, li))
		return;
	smcr_log("libsmc-preload: soft SMC-R: link %u: its device %s is back\n", num,
		 g->link[li].dev_name);
	smcr_link_again(g, li);
}

/*
 * A link that failed while its port stayed up (rxe parked its queue pair
 * for good, a post failed) comes back at once on a new queue pair, when
 * another link of the group is up to carry the exchange: its connections
 * went over to that one meanwhile.  Alone, the link's failure reset them.
 */
static void fail_and_again(struct smcr_lgr *g, int li)
{
	smcr_link_fail(g, li, false);
	if (smcr_lgr_carrier(g, li) >= 0 && !g->link[li].dev_gone) {
		smcr_log("libsmc-preload: soft SMC-R: link %u: its port is up: added again\n", g->link[li].num);
		smcr_link_again(g, li);
	}
}

void smcr_link_unlend(struct smcr_lgr *g, int li)
{
	struct smcr_link *l = &g->link[li];

	if (!l->lent_idle)
		return;
	if (rdma_qp_lend(l->qp, false)) {
		/* the progress thread's next poll set tries again */
		smcr_engine_kick();
		return;
	}
	l->lent_idle = false;
}

void smcr_lgr_unlend(struct smcr_lgr *g)
{
	for (unsigned li = 0; li < g->nlinks; li++)
		smcr_link_unlend(g, (int)li);
}

/*
 * Whether a thread sleeps, or may, for a connection on link li without
 * driving it: all but the driver itself (its bell, on any connection: a
 * poll or epoll wait's).
 */
static bool link_has_sleepers(const struct smcr_lgr *g, int li, uint32_t own_bell)
{
	for (const struct smcr_sock *s = g->socks; s; s = s->next) {
		if (s->li != li)
			continue;
		for (int dir = 0; dir < 2; dir++) {
			if (atomic_load(&s->sleepers[dir]))
				return true;
			for (int i = 0; i < SMCR_BELLS; i++) {
				uint32_t b = atomic_load(&s->bell[dir][i]);

				if (b && !(own_bell && b == own_bell))
					return true;
			}
		}
	}
	return false;
}

/* The group's links with work outstanding: true when one has (the progress thread looks again soon). */
static bool watchdog(struct smcr_lgr *g)
{
	int64_t now = now_ns();
	bool pending = false, gap = g->watched_ns && now - g->watched_ns >= WATCH_GAP_NS;

	g->watched_ns = now;
	for (unsigned li = 0; li < g->nlinks; li++) {
		struct smcr_link *l = &g->link[li];
		uint64_t posted, done;
		bool waiting;

		if (gap) {
			l->since_ns = l->since_ns ? now : 0;
			l->alive_ns = l->alive_ns ? now : 0;
		}

		if (l->dev_gone && now - l->since_ns >= DEV_LOOK_NS) {
			l->since_ns = now;
			dev_back(g, (int)li);
		}
		if (l->again && (!l->dead || l->dev_gone || l->port_down))
			l->again = false;
		else if (l->again)
			smcr_link_again(g, (int)li);
		if (l->post_err && !l->dead && l->up) {
			smcr_log("libsmc-preload: soft SMC-R: link %u: a post failed (%s)\n", l->num,
				 strerror(-l->post_err));
			fail_and_again(g, (int)li);
		}
		if (l->dead || !l->up)
			continue;
		/* a lent channel wakes this thread no more: its watch goes on at WATCH_MS */
		pending |= l->driven || l->lent_idle;
		rdma_qp_counts(l->qp, &posted, &done);
		if (l->doubt_ns && done >= l->doubt_posted) {
			smcr_log("libsmc-preload: soft SMC-R: link %u: the peer answered the probe: it lives\n",
				 l->num);
			l->doubt_ns = 0;
		} else if (l->doubt_ns && now - l->doubt_ns >= GONE_NS) {
			fail_gone(g, (int)li);
			continue;
		} else if (l->doubt_ns) {
			pending = true;
		}
		if (l->heard != l->seen_heard || done != l->seen_done || !l->alive_ns) {
			l->seen_heard = l->heard;
			l->alive_ns = now;
		} else if (now - l->alive_ns >= KEEPALIVE_NS && posted == done) {
			l->alive_ns = now;
			smcr_log("libsmc-preload: soft SMC-R: link %u: nothing heard for 30 s: TEST LINK\n", l->num);
			test_link(g, (int)li);
			rdma_qp_counts(l->qp, &posted, &done);
		}
		waiting = posted != done || link_waits_for_peer(g, (int)li);
		if (!waiting || done != l->seen_done || !l->since_ns) {
			l->seen_done = done;
			l->since_ns = now;
			pending |= waiting;
			continue;
		}
		pending = true;
		if (now - l->since_ns >= DEAD_NS) {
			char qd[96];

			rdma_qp_describe(l->qp, qd, sizeof(qd));
			smcr_log("libsmc-preload: soft SMC-R: link %u: nothing completed for %lld ms (%s)\n", l->num,
				 (long long)((now - l->since_ns) / 1000000), qd);
			fail_and_again(g, (int)li);
		} else if (now - l->since_ns >= KICK_NS && now - l->kicked_ns >= KICK_NS) {
			l->kicked_ns = now;
			smcr_log("libsmc-preload: soft SMC-R: link %u: work outstanding, nothing completed for %lld ms: a probe\n",
				 l->num, (long long)((now - l->since_ns) / 1000000));
			kick(g, (int)li);
		}
	}
	return pending;
}

struct watch {
	struct smcr_lgr *g;
	int li;
	unsigned gen;           /* the link's queue pair when the set was made */
	bool dev;
};

/*
 * The poll set: the wake descriptor, then two entries per link, as many
 * as the process has links (a server with a group per client process has
 * many), grown as they come, never shrunk.
 */
struct watch_room {
	struct pollfd *pfd;
	struct watch *w;
	size_t cap;
};

/* Room for n entries: false when memory is short (the set keeps what fits, drain() takes the rest). */
static bool room_for(struct watch_room *r, size_t n)
{
	size_t cap = r->cap ? r->cap : 64;
	struct pollfd *pfd;
	struct watch *w;

	if (n <= r->cap)
		return true;
	while (cap < n)
		cap *= 2;
	pfd = realloc(r->pfd, cap * sizeof(*pfd));
	if (!pfd)
		return false;
	r->pfd = pfd;
	w = realloc(r->w, cap * sizeof(*w));
	if (!w)
		return false;
	r->w = w;
	r->cap = cap;
	return true;
}

/*
 * Whether a connection on link li waits for its sends to complete: one
 * whose send queue was full, or a writer asleep for room that their
 * delivery frees (a bell, and less than half the buffer free: a bell left
 * behind by a sleeper that woke otherwise does not count; with BACK_OK
 * only the peer's CDC frees room, and it wakes the thread anyway).
 * Otherwise the completions of our sends wake nobody (drain() takes them
 * as it passes; a writer that goes to sleep asks for the next one itself,
 * smcr_sock_want_room()).
 */
static bool link_wants_sent(const struct smcr_lgr *g, int li)
{
	for (const struct smcr_sock *s = g->socks; s; s = s->next) {
		if (s->li != li || !s->live)
			continue;
		if (s->starved)
			return true;
		if (!smcr_conn_room_on_delivery(&s->c) || smcr_conn_space(&s->c) >= s->snd_size / 2)
			continue;
		for (int i = 0; i < SMCR_BELLS; i++)
			if (atomic_load(&s->bell[0][i]))
				return true;
	}
	return false;
}

void smcr_link_want_sent(struct smcr_lgr *g, int li)
{
	struct smcr_link *l = &g->link[li];

	/* what completed already is taken by the progress thread at once */
	if (!l->dead && rdma_qp_arm(l->qp, true) > 0)
		smcr_engine_kick();
}

/* The poll set: the wake descriptor, then each live link's channel and device. */
static int watch_set(struct watch_room *r, bool *now, bool *lent)
{
	int n = 1;

	if (!room_for(r, 1))
		return 0;
	r->pfd[0] = (struct pollfd){ .fd = wake_fd, .events = POLLIN };
	for (struct smcr_lgr *g = groups; g; g = g->next) {
		pthread_mutex_lock(&g->mu);
		for (unsigned li = 0; li < g->nlinks && room_for(r, (size_t)n + 2); li++) {
			struct smcr_link *l = &g->link[li];
			int64_t lent_for = now_ns() - l->lent_ns;

			/* a device that went: nothing of it to watch (the watchdog looks for its return) */
			if (l->dev_gone)
				continue;
			if (l->lent_ns && (l->driven || l->lent_idle) && lent_for < LEND_BUSY_NS)
				*lent = true;
			/* a channel a sleeper could not give back, or left lent for long enough, comes back here */
			if (!l->driven && !(l->lent_idle && lent_for < LEND_IDLE_NS) && !rdma_qp_lend(l->qp, false))
				l->lent_idle = false;
			if (rdma_qp_arm(l->qp, link_wants_sent(g, (int)li)))
				*now = true;
			r->w[n] = (struct watch){ g, (int)li, l->gen, false };
			r->pfd[n++] = (struct pollfd){ .fd = rdma_qp_fd(l->qp), .events = POLLIN };
			/* a failed link's device too: its port may come back */
			r->w[n] = (struct watch){ g, (int)li, l->gen, true };
			r->pfd[n++] = (struct pollfd){ .fd = rdma_dev_event_fd(l->dev), .events = POLLIN };
		}
		pthread_mutex_unlock(&g->mu);
	}
	atomic_store(&links_watched, (unsigned)(n - 1) / 2);
	return n;
}

unsigned smcr_engine_links_watched(void)
{
	return atomic_load(&links_watched);
}

/* Groups nobody holds any more go, with their links. */
static void reap(void)
{
	/* and queue pairs retired long enough ago (rdma_retire()) */
	rdma_retired_reap(now_ns());
	for (struct smcr_lgr **p = &groups; *p;) {
		struct smcr_lgr *g = *p;
		bool gone;

		pthread_mutex_lock(&g->mu);
		gone = g->refs == 0;
		pthread_mutex_unlock(&g->mu);
		if (gone) {
			*p = g->next;
			atomic_fetch_sub(&ngroups, 1);
			smcr_lgr_free(g);
			atomic_fetch_add(&lgrs_freed, 1);
		} else {
			p = &g->next;
		}
	}
}

/*
 * The poll set is made again only when something but a completion
 * happened (a kick, a device event, a timeout, a view that changed): a
 * completion's wake-up touches no group's mutex after its wakes.
 */
static void *progress(void *arg)
{
	struct watch_room room = { 0 };
	struct pollfd *pfd = NULL;
	struct watch *w = NULL;
	struct wakes wakes = { 0 };
	bool pending = false, again = true, now = false, lent = false;
	unsigned built = 0;
	int n = 0;

	(void)arg;
	for (;;) {
		int r;

		pthread_mutex_lock(&eng_mu);
		if (again || built != atomic_load(&view_gen)) {
			built = atomic_load(&view_gen);
			now = lent = false;
			reap();
			/* a sleeper that leaves a channel lent while the set is made kicks */
			atomic_store(&lend_watch, false);
			n = watch_set(&room, &now, &lent);
			pfd = room.pfd;
			w = room.w;
		}
		atomic_store(&lend_watch, lent);
		pthread_mutex_unlock(&eng_mu);
		r = smcr_env.poll(pfd, (nfds_t)n, now ? 0 : lent ? LEND_LOOK_MS : pending ? WATCH_MS : 1000);
		if (r < 0 && errno != EINTR)
			continue;
		again = r <= 0 || now;
		if (r > 0 && (pfd[0].revents & POLLIN)) {
			eventfd_t v;

			again = true;
			if (eventfd_read(wake_fd, &v) < 0) {
				/* another reader took it: nothing is lost */
			}
		}
		pthread_mutex_lock(&eng_mu);
		deferred = &wakes;
		for (int i = 1; i < n && r > 0; i++) {
			struct smcr_lgr *g = w[i].g;

			if (!pfd[i].revents)
				continue;
			pthread_mutex_lock(&g->mu);
			/* a queue pair replaced meanwhile (grow.c) has no event of the one polled */
			if (!(pfd[i].revents & POLLIN) || w[i].gen != g->link[w[i].li].gen || w[i].dev) {
				again = true;
				if ((pfd[i].revents & POLLIN) && w[i].gen == g->link[w[i].li].gen)
					device_event(g, w[i].li);
			} else if (rdma_qp_woken(g->link[w[i].li].qp) != -EAGAIN) {
				/*
				 * Armed again before the wakes: no sleeper woken finds the
				 * mutex held for it.  An event not read (-EIO) left both
				 * queues unarmed: both are armed again too.
				 */
				rdma_qp_arm(g->link[w[i].li].qp, link_wants_sent(g, w[i].li));
			}
			pthread_mutex_unlock(&g->mu);
		}
		pending = false;
		for (struct smcr_lgr *g = groups; g; g = g->next) {
			pthread_mutex_lock(&g->mu);
			drain(g);
			smcr_lgr_answer_asks(g);
			pending |= watchdog(g);
			pthread_mutex_unlock(&g->mu);
		}
		deferred = NULL;
		wakes_flush(&wakes);
		for (struct smcr_lgr *g = groups; g && smcr_socks_released(); g = g->next) {
			struct smcr_sock *done;

			pthread_mutex_lock(&g->mu);
			while ((done = smcr_lgr_take_released(g))) {
				/* it holds a reference of g: the group outlives it */
				pthread_mutex_unlock(&g->mu);
				smcr_sock_destroy(done);
				pthread_mutex_lock(&g->mu);
			}
			pthread_mutex_unlock(&g->mu);
		}
		pthread_mutex_unlock(&eng_mu);
	}
	return NULL;
}

/*
 * A reader that takes its link's completions itself (doc/soft-roce.md
 * section 4): while it sleeps, the link's channel is lent to it, so that a
 * message wakes one thread, not the progress thread and then the reader.
 * What it takes, it takes as the progress thread does (eng_mu, the group's
 * mutex, wakes put off until both are let go); other connections' news
 * wake them as usual.  Once it wakes, the channel goes back armed.
 */
static bool drivable(const struct smcr_lgr *g, const struct smcr_sock *s)
{
	const struct smcr_link *l;

	if (!s->live || s->released || s->li < 0)
		return false;
	l = &g->link[s->li];
	return l->bell >= 0 && l->up && l->connected && !l->dead && !l->dev_gone && !l->driven;
}

int smcr_drive_begin(struct smcr_sock *s, bool rx, uint32_t bell, struct smcr_drive *d)
{
	struct smcr_lgr *g = s->g;

	if (!smcr_env.drive)
		return -EAGAIN;         /* turned off: no mutex for it */
	pthread_mutex_lock(&g->mu);
	d->li = s->li;
	if (!drivable(g, s) || rdma_qp_lend(g->link[d->li].qp, true)) {
		pthread_mutex_unlock(&g->mu);
		return -EAGAIN;
	}
	g->link[d->li].driven = true;
	g->link[d->li].lent_idle = false;
	d->gen = g->link[d->li].gen;
	d->fd = rdma_qp_chan_fd(g->link[d->li].qp);
	d->rx = rx;
	d->bell = bell;
	d->bell_fd = g->link[d->li].bell;
	/* a sleeper with a bell of its own is woken by it (wake_now()) */
	if (!bell)
		atomic_store(&s->drive_li[rx], d->li + 1);
	pthread_mutex_unlock(&g->mu);
	return 0;
}

bool smcr_drive_take(struct smcr_sock *s, const struct smcr_drive *d, bool woken)
{
	struct smcr_lgr *g = s->g;
	struct wakes wakes = { 0 };
	bool same;

	pthread_mutex_lock(&eng_mu);
	/* this thread's own wakes ring no bell of its own, also those made at once (WAKES_MAX) */
	drive_sock = s;
	drive_rx = d->rx;
	drive_own_bell = d->bell;
	pthread_mutex_lock(&g->mu);
	same = g->link[d->li].gen == d->gen && !g->link[d->li].dead && s->live && s->li == d->li;
	if (same) {
		struct rdma_qp *q = g->link[d->li].qp;

		deferred = &wakes;
		if (woken)
			rdma_qp_woken(q);       /* -EAGAIN: the progress thread took it first */
		do
			drain(g);
		while (!g->link[d->li].dead && rdma_qp_arm(q, link_wants_sent(g, d->li)) > 0);
		deferred = NULL;
	}
	pthread_mutex_unlock(&g->mu);
	wakes_flush(&wakes);
	drive_sock = NULL;
	pthread_mutex_unlock(&eng_mu);
	/* connections released meanwhile are the progress thread's to free */
	if (smcr_socks_released())
		smcr_engine_kick();
	return same;
}

void smcr_drive_end(struct smcr_sock *s, const struct smcr_drive *d)
{
	struct smcr_lgr *g = s->g;
	bool back = true;
	int mine = d->li + 1;

	pthread_mutex_lock(&g->mu);
	/* another sleeper's (on the link the connection moved to) stays */
	if (!d->bell)
		atomic_compare_exchange_strong(&s->drive_li[d->rx], &mine, 0);
	if (g->link[d->li].gen == d->gen) {
		struct smcr_link *l = &g->link[d->li];

		l->driven = false;
		if (!l->dead && !link_has_sleepers(g, d->li, d->bell)) {
			/* kept for the next sleeper; armed (smcr_drive_take()) for whoever takes it */
			l->lent_idle = true;
			l->lent_ns = now_ns();
			back = atomic_load(&lend_watch);
		} else {
			/* armed: what completes next wakes the progress thread */
			back = !rdma_qp_lend(l->qp, false);
		}
	}
	pthread_mutex_unlock(&g->mu);
	/* not given back, or left lent: the progress thread's next poll set sees to it */
	if (!back)
		smcr_engine_kick();
}

int smcr_engine_drive(struct smcr_sock *s, bool rx, uint32_t seq, const struct timespec *timeout)
{
	int64_t end = timeout ? now_ns() + timeout->tv_sec * 1000000000LL + timeout->tv_nsec : -1;
	struct pollfd p[2] = { { .events = POLLIN }, { .events = POLLIN } };
	struct smcr_drive d;
	bool woken = false;
	int rc;

	if (smcr_drive_begin(s, rx, 0, &d))
		return -EAGAIN;
	p[0].fd = d.fd;
	p[1].fd = d.bell_fd;
	for (;;) {
		struct timespec ts, *tsp = NULL;

		if (!smcr_drive_take(s, &d, woken) || atomic_load(&s->seq[rx]) != seq) {
			rc = 0;
			break;
		}
		if (end >= 0) {
			int64_t left = end - now_ns();

			if (left <= 0) {
				rc = -ETIMEDOUT;
				break;
			}
			ts = (struct timespec){ left / 1000000000LL, left % 1000000000LL };
			tsp = &ts;
		}
		/* a failed link or a replaced queue pair rings the link's bell (lgr.c) */
		if (smcr_env.syscall(SYS_ppoll, p, 2, tsp, NULL, 0) < 0) {
			rc = -errno;
			break;
		}
		woken = p[0].revents != 0;
		if (p[1].revents) {
			eventfd_t v;

			if (eventfd_read(d.bell_fd, &v) < 0) {
				/* nothing to take: it looks again all the same */
			}
		}
	}
	smcr_drive_end(s, &d);
	return rc;
}

/* Whether every connection gave the peer all of its bytes; *progress moves while it takes them. */
static bool all_sent(uint64_t *progress)
{
	bool done = true;

	*progress = 0;
	pthread_mutex_lock(&eng_mu);
	for (struct smcr_lgr *g = groups; g; g = g->next) {
		pthread_mutex_lock(&g->mu);
		drain(g);       /* our sends' completions wake nobody */
		for (struct smcr_sock *s = g->socks; s; s = s->next) {
			const struct smcr_conn *c = &s->c;

			/* back to TCP, the bytes go there (the library's, back.c): only the CDCs are ours */
			bool data = !(c->back & SMCR_BACK_SAID) &&
				    (c->tx_sent != c->tx_prep || c->tx_fin != c->tx_prep);
			/*
			 * a peer that closed or aborted reads nothing more, and
			 * our own abort drops them: as TCP's reset does
			 */
			bool reads = !(c->peer_cflags & (CDC_CF_CLOSED | CDC_CF_ABORT)) &&
				     !(c->own_cflags & CDC_CF_ABORT);

			if (s->live && !c->err && reads && (data || c->cdc_due))
				done = false;
			*progress += c->tx_fin + c->peer_cons;
		}
		pthread_mutex_unlock(&g->mu);
	}
	pthread_mutex_unlock(&eng_mu);
	return done;
}

void smcr_linger_all(int64_t idle_ns)
{
	int64_t idle = 0;
	uint64_t before = 0, progress;

	while (!all_sent(&progress)) {
		struct timespec ts = { 0, 20000000 };

		if (progress != before) {
			before = progress;
			idle = 0;
		} else if ((idle += ts.tv_nsec) > idle_ns) {
			return;
		}
		smcr_env.poll(NULL, 0, (int)(ts.tv_nsec / 1000000));   /* not the preload's nanosleep() */
	}
}

/* With g->mu held: every connection of g was let go by its owner (or g has none). */
static bool nothing_held(const struct smcr_lgr *g)
{
	for (const struct smcr_sock *s = g->socks; s; s = s->next)
		if (!s->released)
			return false;
	return true;
}

/*
 * With g->mu held: an LLC DELETE LINK, orderly, for each of g's links
 * (reason: the program ends), each behind the last CDC on its own link,
 * where the kernel sends one for all links; the number of links told.
 */
static unsigned say_goodbye(struct smcr_lgr *g)
{
	unsigned told = 0;

	for (unsigned li = 0; li < g->nlinks; li++)
		told += !smcr_llc_delete_link(g, (int)li, g->link[li].num, SMCR_LLC_FLAG_DEL_LINK_ORDERLY,
					      SMCR_LLC_DEL_PROG_INIT_TERM);
	return told;
}

/* With g->mu held: every send of g's links completed (or failed). */
static bool all_delivered(struct smcr_lgr *g)
{
	drain(g);
	for (unsigned li = 0; li < g->nlinks; li++) {
		uint64_t posted, done;

		if (g->link[li].dead)
			continue;
		rdma_qp_counts(g->link[li].qp, &posted, &done);
		if (posted != done)
			return false;
	}
	return true;
}

unsigned smcr_lgr_goodbye(struct smcr_lgr *g)
{
	unsigned told = 0;

	pthread_mutex_lock(&g->mu);
	if (nothing_held(g))
		told = say_goodbye(g);
	pthread_mutex_unlock(&g->mu);
	return told;
}

void smcr_goodbye_all(int wait_ms)
{
	bool delivered = false;
	unsigned told = 0;

	pthread_mutex_lock(&eng_mu);
	if (atomic_load(&eng_pid) == getpid())
		for (struct smcr_lgr *g = groups; g; g = g->next)
			told += smcr_lgr_goodbye(g);
	pthread_mutex_unlock(&eng_mu);
	for (int ms = 0; told && !delivered && ms < wait_ms; ms += 5) {
		delivered = true;
		pthread_mutex_lock(&eng_mu);
		for (struct smcr_lgr *g = groups; g; g = g->next) {
			pthread_mutex_lock(&g->mu);
			delivered &= all_delivered(g);
			pthread_mutex_unlock(&g->mu);
		}
		pthread_mutex_unlock(&eng_mu);
		if (!delivered)
			smcr_nap_ms(5);
	}
}

bool smcr_groups_any(void)
{
	return atomic_load(&eng_pid) == getpid() && atomic_load(&ngroups);
}

void smcr_nap_ms(int ms)
{
	smcr_env.poll(NULL, 0, ms);     /* not the preload's nanosleep() */
}

void smcr_after_fork_child(void)
{
	/* the parent's groups and thread stay the parent's: queue pairs do not cross fork() */
	pthread_mutex_init(&eng_mu, NULL);
	groups = NULL;
	atomic_store(&ngroups, 0);
	started = false;
	eng_pid = 0;
	wake_fd = -1;
	rdma_fds_after_fork_child();
	rdma_retired_after_fork_child();
	smcr_socks_after_fork_child();
}

int smcr_engine_add(struct smcr_lgr *g)
{
	int rc = 0;

	pthread_mutex_lock(&eng_mu);
	if (!started) {
		if (wake_fd < 0 && (wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) >= 0)
			rdma_fd_keep(wake_fd);
		rc = wake_fd < 0 ? -errno : lib_thread_start(progress, NULL);
		started = !rc;
		if (started)
			eng_pid = getpid();
	}
	if (!rc) {
		g->next = groups;
		groups = g;
		atomic_fetch_add(&ngroups, 1);
	}
	pthread_mutex_unlock(&eng_mu);
	smcr_engine_kick();
	return rc;
}
