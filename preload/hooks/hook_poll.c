/*
 * poll, ppoll, select, pselect with paired sockets among the descriptors.
 * The rings are looked at first (no system call), spun on while the peer
 * runs elsewhere, then the wait sleeps in the kernel with a doorbell asked
 * for on each paired socket.  Without paired sockets: the next function.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hooks.h"

#define EXPORT __attribute__((visibility("default")))
#define STACK_FDS 64

extern void __chk_fail(void) __attribute__((noreturn));

struct pwait {
	struct pollfd *fds;
	nfds_t n;
	struct sconn **sc;       /* paired sockets, else NULL */
	int paired;
	bool nap;                /* a writer waits on a socket readable for good (its peer's FIN) */
	/* the wait takes a link's completions itself (drive_begin()) */
	struct sconn *driver;
	struct tp_drive drive;
	int chan;
	bool woken;
};

/* The kernel's wait while w->nap: short, as wait_space()'s. */
#define NAP_NS 1000000
#define DEL_RETRY_NS 100000000   /* ns: see ctl_backlog() */

#define KERNEL_BITS (POLLERR | POLLHUP | POLLNVAL)

/* The ring's answer for fds[i], in the bits it decides. */
static short ring_revents(struct pwait *w, nfds_t i, unsigned *mode)
{
	unsigned ev = soft_ready(w->fds[i].fd, w->sc[i], mode);

	return (short)(ev & ((unsigned)w->fds[i].events | POLLERR | POLLHUP));
}

static bool any_ring_ready(void *arg)
{
	struct pwait *w = arg;
	unsigned mode;

	for (nfds_t i = 0; i < w->n; i++)
		if (w->sc[i] && ring_revents(w, i, &mode))
			return true;
	return false;
}

/* What the kernel is asked for a paired socket. */
static short kernel_events(struct pwait *w, nfds_t i)
{
	unsigned mode;
	short want = w->fds[i].events, k;

	soft_ready(w->fds[i].fd, w->sc[i], &mode);
	k = want & ~(POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM);
	if (want & (POLLIN | POLLRDNORM))
		k |= POLLIN;           /* data before the fence, or a doorbell */
	if (((want & (POLLOUT | POLLWRNORM)) && !(mode & SOFT_OUT_RING)) ||
	    conn_back_waits_room(w->sc[i]))
		k |= POLLOUT;
	if ((want & (POLLOUT | POLLWRNORM)) && (mode & SOFT_OUT_RING)) {
		/* the doorbell comes as POLLIN, which the peer's FIN makes true for good */
		if (!atomic_load(&w->sc[i]->rx_eof))
			k |= POLLIN;
		else
			w->nap = true;
	}
	return k;
}

/* Merge the kernel's answer k for a paired socket with its rings'. */
static short merged(struct pwait *w, nfds_t i, int fd, short k)
{
	unsigned mode;
	short r, want = w->fds[i].events;

	/* a doorbell woke us: take it now, not in one more wait */
	if (atomic_load(&w->sc[i]->rx_cut) && (k & POLLIN) &&
	    soft_may_drain(w->sc[i], want & (POLLIN | POLLRDNORM)))
		soft_drain(fd, w->sc[i]);
	r = ring_revents(w, i, &mode);
	/*
	 * A reset the kernel has is kept, and a writer without room learns of
	 * a dead peer (its FIN).
	 */
	if ((mode & SOFT_OUT_RING) &&
	    ((k & (POLLERR | POLLHUP)) ||
	     ((want & (POLLOUT | POLLWRNORM)) && !(r & POLLOUT) &&
	      ((k & POLLIN) || atomic_load(&w->sc[i]->rx_eof)))) &&
	    soft_tx_peer_check(fd, w->sc[i], (short)(k & (POLLERR | POLLHUP))))
		r |= want & (POLLOUT | POLLWRNORM);
	if (!(mode & SOFT_IN_RING))
		r |= k & want & (POLLIN | POLLRDNORM | POLLPRI);
	if (!(mode & SOFT_OUT_RING))
		r |= k & want & (POLLOUT | POLLWRNORM);
	r |= k & (KERNEL_BITS | (want & POLLRDHUP));
	return r;
}

/*
 * The kernel's answer for everything; timeout_ns < 0 waits for ever.  k has
 * room for two more entries: our bell (efd >= 0), whose answer is *rang,
 * and a channel lent to the wait (w->chan >= 0, its answer w->woken).
 */
static int kernel_poll(struct pwait *w, struct pollfd *k, int64_t timeout_ns, const sigset_t *mask,
		       int efd, bool *rang)
{
	int chan = efd >= 0 ? w->chan : -1;
	struct timespec ts, *tp = NULL;
	int r;

	w->nap = false;
	for (nfds_t i = 0; i < w->n; i++) {
		k[i] = w->fds[i];
		k[i].revents = 0;
		if (w->sc[i])
			k[i].events = kernel_events(w, i);
	}
	if (w->nap && (timeout_ns < 0 || timeout_ns > NAP_NS))
		timeout_ns = NAP_NS;
	k[w->n] = (struct pollfd){ .fd = efd, .events = POLLIN };
	k[w->n + 1] = (struct pollfd){ .fd = chan, .events = POLLIN };
	if (timeout_ns >= 0) {
		ts.tv_sec = timeout_ns / 1000000000;
		ts.tv_nsec = timeout_ns % 1000000000;
		tp = &ts;
	}
	r = next.ppoll(k, w->n + (efd >= 0) + (chan >= 0), tp, mask);
	if (r < 0)
		return -1;
	if (rang)
		*rang = efd >= 0 && (k[w->n].revents & POLLIN);
	w->woken |= chan >= 0 && k[w->n + 1].revents;
	r = 0;
	for (nfds_t i = 0; i < w->n; i++) {
		w->fds[i].revents = w->sc[i] ? merged(w, i, w->fds[i].fd, k[i].revents) : k[i].revents;
		r += w->fds[i].revents != 0;
	}
	return r;
}

static bool spin_allowed(struct pwait *w)
{
	for (nfds_t i = 0; i < w->n; i++)
		if (w->sc[i] && soft_peer_elsewhere(w->sc[i]))
			return true;
	return false;
}

/*
 * The wait takes the completions of one of its connections' links itself,
 * as a blocking receive does (doc/soft-roce.md section 4): the first one
 * polled for input whose transport lends it a channel, taken from (and the
 * channel armed) before the sockets are armed.
 */
static void drive_begin(struct pwait *w, uint32_t bell)
{
	w->driver = NULL;
	w->chan = -1;
	w->woken = false;
	for (nfds_t i = 0; i < w->n && soft_cfg.drive; i++)
		if (w->sc[i] && (w->fds[i].events & POLLIN) && TP(w->sc[i], drive_begin, true, bell, &w->drive)) {
			w->driver = w->sc[i];
			w->chan = w->drive.fd;
			TP(w->driver, drive_take, &w->drive, false);
			return;
		}
}

static void drive_end(struct pwait *w)
{
	if (!w->driver)
		return;
	TP(w->driver, drive_take, &w->drive, w->woken);
	TP(w->driver, drive_end, &w->drive);
	w->driver = NULL;
	w->chan = -1;
}

static int wait_loop(struct pwait *w, struct pollfd *k, int64_t timeout_ns, const sigset_t *mask)
{
	int64_t end = timeout_ns >= 0 ? soft_now_ns() + timeout_ns : -1;
	bool spun = false;
	int r;

	bool looked = false;       /* the last turn found a "look again" and nothing on the rings */

	for (;;) {
		int64_t left = end < 0 ? -1 : end - soft_now_ns();
		bool ready = false, blind, bell_only, rang;
		uint32_t bell;
		int efd;

		if (any_ring_ready(w) || left == 0 || (end >= 0 && left < 0))
			return kernel_poll(w, k, 0, mask, -1, NULL);
		if (!spun && spin_allowed(w)) {
			spun = true;
			if (soft_spin_until(any_ring_ready, w))
				continue;
		}
		ctl_poll();            /* our bell's id, or a peer's, may have come */
		bell = bell_wait_begin(&efd);
		if (efd >= 0)
			drive_begin(w, bell);
		blind = bell_only = false;
		for (nfds_t i = 0; i < w->n; i++)
			if (w->sc[i]) {
				bool rdma = sconn_mapped(w->sc[i]) && !w->sc[i]->tp.ops->tcp_doorbells;

				blind |= bell == TP_BELL_TCP && rdma;
				bell_only |= rdma;
				ready |= soft_arm(w->fds[i].fd, w->sc[i], (unsigned)w->fds[i].events,
						  bell);
			}
		rang = false;
		/* only a wait that sleeps on its bell keeps the channel */
		if (ready)
			drive_end(w);
		if (ready && (blind || looked) && !any_ring_ready(w)) {
			/*
			 * No bell of ours yet, and none comes over TCP; or a
			 * second "look again" in a row that shows nothing: look
			 * again soon, not at once (conn.h).
			 */
			if (left < 0 || left > SETTLE_LOOK_MS * 1000000LL)
				left = SETTLE_LOOK_MS * 1000000LL;
			r = kernel_poll(w, k, left, mask, -1, NULL);
		} else if (!ready) {
			atomic_fetch_add_explicit(&pstats->sleeps, 1, memory_order_relaxed);
			/* replies or ends of registrations due: look again within DEL_RETRY_NS */
			if (ctl_backlog() && (left < 0 || left > DEL_RETRY_NS))
				left = DEL_RETRY_NS;
			/* a transport that rings nothing over TCP: its state looked at now and then too */
			if (bell_only && (left < 0 || left > QUIET_LOOK_NS))
				left = QUIET_LOOK_NS;
			r = kernel_poll(w, k, left, mask, efd, &rang);
		} else {
			r = kernel_poll(w, k, 0, mask, -1, NULL);
		}
		looked = ready && !r;
		drive_end(w);
		for (nfds_t i = 0; i < w->n; i++)
			if (w->sc[i])
				soft_disarm(w->sc[i]);
		bell_wait_end(efd, rang);
		if (r != 0)
			return r;
		if (end >= 0 && soft_now_ns() >= end)
			return 0;
	}
}

/* -2: no paired socket among fds (use the next function). */
static int soft_ppoll(struct pollfd *fds, nfds_t n, int64_t timeout_ns, const sigset_t *mask)
{
	struct sconn *sc_stack[STACK_FDS];
	struct pollfd k_stack[STACK_FDS + 2];
	struct pwait w = { .fds = fds, .n = n, .sc = sc_stack, .chan = -1 };
	struct pollfd *k = k_stack;
	int r, saved;

	if (!atomic_load_explicit(&fd_tracked, memory_order_relaxed) || n == 0)
		return -2;
	if (n > STACK_FDS) {
		w.sc = calloc(n, sizeof(*w.sc));
		k = calloc(n + 2, sizeof(*k));
		if (!w.sc || !k) {
			free(w.sc);
			free(k);
			return -2;
		}
	}
	for (nfds_t i = 0; i < n; i++) {
		struct sconn *sc = fds[i].fd >= 0 ? fd_get(fds[i].fd) : NULL;

		if (sc && !sconn_mapped(sc)) {
			sconn_put(sc);
			sc = NULL;
		}
		w.sc[i] = sc;
		w.paired += sc != NULL;
	}
	r = w.paired ? wait_loop(&w, k, timeout_ns, mask) : -2;
	saved = errno;
	for (nfds_t i = 0; i < n; i++)
		if (w.sc[i])
			sconn_put(w.sc[i]);
	if (n > STACK_FDS) {
		free(w.sc);
		free(k);
	}
	errno = saved;
	return r;
}

struct poll_call {
	struct pollfd *fds;
	nfds_t n;
	const sigset_t *mask;
	bool ppoll;                /* else poll(): its wait in milliseconds */
};

/* One wait of poll() or ppoll(), maybe cut for an offer (offer.c). */
static int poll_step(void *arg, int64_t timeout_ns)
{
	struct poll_call *c = arg;
	struct timespec ts = { timeout_ns / 1000000000, timeout_ns % 1000000000 };
	int r = soft_ppoll(c->fds, c->n, timeout_ns, c->mask);

	if (r != -2)
		return r;
	if (!c->ppoll)
		return next.poll(c->fds, c->n, offer_ns_to_ms(timeout_ns));
	return next.ppoll(c->fds, c->n, timeout_ns < 0 ? NULL : &ts, c->mask);
}

EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	struct poll_call c = { .fds = fds, .n = n };

	PRELOAD_INIT();
	return offer_wait(poll_step, &c, timeout < 0 ? -1 : (int64_t)timeout * 1000000);
}

EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n)
		__chk_fail();
	return poll(fds, n, timeout);
}

static int64_t ts_ns(const struct timespec *ts)
{
	if (!ts)
		return -1;
	if (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000)
		return -3;
	if (ts->tv_sec > INT64_MAX / 1000000000 - 1)
		return -1;
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask)
{
	struct poll_call c = { .fds = fds, .n = n, .mask = mask, .ppoll = true };
	int64_t t;

	PRELOAD_INIT();
	t = ts_ns(ts);
	if (t == -3) {
		errno = EINVAL;
		return -1;
	}
	return offer_wait(poll_step, &c, t);
}

EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		       const sigset_t *mask, size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n)
		__chk_fail();
	return ppoll(fds, n, ts, mask);
}

/*
 * select through poll; -2 when no paired socket is among the sets and no
 * pairing may move to RDMA (then the kernel's select, as it is).
 */
static int soft_select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex, int64_t t,
		       const sigset_t *mask)
{
	struct pollfd stack[STACK_FDS], *p = stack;
	nfds_t n = 0;
	int r, hits = 0;

	if (!atomic_load_explicit(&fd_tracked, memory_order_relaxed) || nfds <= 0 ||
	    nfds > FD_SETSIZE)
		return -2;
	for (int fd = 0; fd < nfds; fd++)
		n += (rd && FD_ISSET(fd, rd)) || (wr && FD_ISSET(fd, wr)) || (ex && FD_ISSET(fd, ex));
	if (n > STACK_FDS && !(p = calloc(n, sizeof(*p))))
		return -2;
	n = 0;
	for (int fd = 0; fd < nfds; fd++) {
		short ev = (short)((rd && FD_ISSET(fd, rd) ? POLLIN : 0) |
				   (wr && FD_ISSET(fd, wr) ? POLLOUT : 0) |
				   (ex && FD_ISSET(fd, ex) ? POLLPRI : 0));

		if (ev) {
			p[n].fd = fd;
			p[n].events = ev;
			p[n].revents = 0;
			n++;
		}
	}
	if (ctl_rdma_settling()) {
		/* cut while a pairing may move to RDMA, as poll() is (offer.c) */
		struct poll_call c = { .fds = p, .n = n, .mask = mask, .ppoll = true };

		r = offer_wait(poll_step, &c, t);
	} else {
		r = soft_ppoll(p, n, t, mask);
	}
	if (r >= 0) {
		for (nfds_t i = 0; i < n; i++) {
			short re = p[i].revents;
			int fd = p[i].fd;

			if (re & POLLNVAL) {
				r = -1;
				errno = EBADF;
				break;
			}
			if (rd && FD_ISSET(fd, rd) && !(re & (POLLIN | POLLHUP | POLLERR)))
				FD_CLR(fd, rd);
			if (wr && FD_ISSET(fd, wr) && !(re & (POLLOUT | POLLERR)))
				FD_CLR(fd, wr);
			if (ex && FD_ISSET(fd, ex) && !(re & POLLPRI))
				FD_CLR(fd, ex);
			hits += (rd && FD_ISSET(fd, rd)) + (wr && FD_ISSET(fd, wr)) +
				(ex && FD_ISSET(fd, ex));
		}
		if (r >= 0)
			r = hits;
	}
	if (p != stack)
		free(p);
	return r;
}

EXPORT int select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex, struct timeval *tv)
{
	int64_t t = -1, start = 0;
	int r;

	PRELOAD_INIT();
	if (tv) {
		if (tv->tv_sec < 0 || tv->tv_usec < 0) {
			errno = EINVAL;
			return -1;
		}
		t = (int64_t)tv->tv_sec * 1000000000 + (int64_t)tv->tv_usec * 1000;
		start = soft_now_ns();
	}
	offer_before_sleep(t);
	r = soft_select(nfds, rd, wr, ex, t, NULL);
	if (r == -2)
		return next.select(nfds, rd, wr, ex, tv);
	if (tv) {
		/* Linux leaves the time not slept */
		int64_t left = t - (soft_now_ns() - start);

		if (left < 0)
			left = 0;
		tv->tv_sec = left / 1000000000;
		tv->tv_usec = (left % 1000000000) / 1000;
	}
	return r;
}

EXPORT int pselect(int nfds, fd_set *rd, fd_set *wr, fd_set *ex, const struct timespec *ts,
		   const sigset_t *mask)
{
	int64_t t;
	int r;

	PRELOAD_INIT();
	t = ts_ns(ts);
	if (t == -3) {
		errno = EINVAL;
		return -1;
	}
	offer_before_sleep(t);
	r = soft_select(nfds, rd, wr, ex, t, mask);
	return r == -2 ? next.pselect(nfds, rd, wr, ex, ts, mask) : r;
}
