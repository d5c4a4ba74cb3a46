/*
 * epoll with paired sockets.  The epoll fd stays the kernel's (nesting,
 * sharing after fork and close work as always) and every registration keeps
 * the application's data; a side table (epoll_sets.c) remembers, per epoll
 * fd, the tracked sockets in it, so epoll_wait can report ring readiness
 * with their data without a system call, spin on the rings, and sleep in
 * the kernel on doorbells.  Edge-triggered entries report a direction again only when its
 * ring cursor moved; one-shot entries wait for EPOLL_CTL_MOD.
 *
 * An epoll set inside another (its fd registered in the outer one) is an
 * entry of the outer set too: the outer reports it readable when one of
 * the inner set's entries is ring-ready, and its waits arm the inner
 * entries with their bell, for a transport that rings nothing over TCP
 * (soft SMC-R) leaves the kernel nothing to see.  Every set is known from
 * its creation (epoll_create), so that the order of the calls does not
 * matter; the kernel refuses loops (ELOOP), so locks go outer to inner.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>

#include "hooks.h"
#include "epoll_int.h"

#define EXPORT __attribute__((visibility("default")))
#define DEL_RETRY_NS 100000000   /* ns: see ctl_backlog() */

/* Every epoll set has its table from birth: one registered in another is then known as a set. */
static int set_born(int epfd)
{
	if (epfd >= 0)
		epset_get(epfd, true);
	return epfd;
}

EXPORT int epoll_create(int size)
{
	PRELOAD_INIT();
	return set_born(next.epoll_create(size));
}

EXPORT int epoll_create1(int flags)
{
	PRELOAD_INIT();
	return set_born(next.epoll_create1(flags));
}

/*
 * The kernel's registration: a direction on the ring waits for doorbells
 * (not back on TCP); back on TCP, bytes the peer did not consume wait for
 * room (conn_back_waits_room()).
 */
static uint32_t kernel_mask(struct sconn *sc, uint32_t events)
{
	if (!sconn_mapped(sc))
		return events;
	if (conn_back_reads(sc))
		return conn_back_waits_room(sc) ? events | EPOLLOUT : events;
	if ((events & EPOLLOUT) && atomic_load(&sc->tx_cut))
		return (events & ~EPOLLOUT) | EPOLLIN;
	return events;
}

EXPORT int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	struct epoll_event kev;
	struct sconn *sc;
	struct ep_set *s;
	struct ep_entry *e;
	int r;

	PRELOAD_INIT();
	sc = fd_get(fd);
	if (!sc) {
		r = next.epoll_ctl(epfd, op, fd, ev);
		if (r == 0 || op == EPOLL_CTL_DEL)
			epset_nest(epfd, op, fd, ev);
		return r;
	}
	if (ev && op != EPOLL_CTL_DEL) {
		kev = *ev;
		kev.events = kernel_mask(sc, ev->events);
	}
	r = next.epoll_ctl(epfd, op, fd, ev && op != EPOLL_CTL_DEL ? &kev : ev);
	if (r == 0 && (s = epset_get(epfd, op != EPOLL_CTL_DEL))) {
		pthread_mutex_lock(&s->lock);
		if (op == EPOLL_CTL_DEL) {
			if ((e = epset_find(s, fd)))
				epset_drop(s, e);
		} else if ((e = epset_put(s, fd))) {
			e->sc = sc;
			e->events = ev->events;
			e->kevents = kev.events;
			e->data = ev->data;
		}
		pthread_mutex_unlock(&s->lock);
	}
	sconn_put(sc);
	return r;
}

/* Ring events of e now, as epoll reports them, given its edge state. */
static uint32_t entry_ready(struct ep_entry *e, struct sconn *sc, unsigned *mode, bool commit)
{
	uint32_t r = soft_ready(e->fd, sc, mode) & (e->events | EPOLLERR | EPOLLHUP);
	uint64_t in_word, out_word;

	if (e->disarmed)
		return 0;
	if (!(*mode & SOFT_IN_RING))
		r &= ~(uint32_t)(EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP);
	if (!(*mode & SOFT_OUT_RING))
		r &= ~(uint32_t)EPOLLOUT;
	if (!r)
		return 0;
	if (e->events & EPOLLET) {
		in_word = TP(sc, rx_mark);
		out_word = TP(sc, tx_mark);
		if (in_word == e->last_in)
			r &= ~(uint32_t)(EPOLLIN | EPOLLRDHUP);
		if (out_word == e->last_out)
			r &= ~(uint32_t)EPOLLOUT;
		if (r && commit) {
			if (r & EPOLLIN)
				e->last_in = in_word;
			if (r & EPOLLOUT)
				e->last_out = out_word;
		}
	}
	if (r && commit && (e->events & EPOLLONESHOT))
		e->disarmed = true;
	return r;
}

struct ewait {
	int epfd;
	struct ep_set *s;
	struct epoll_event *ev;
	int max;
	/*
	 * An armed entry cannot be woken by this wait: no bell of ours yet,
	 * and its transport rings none over TCP.  The wait looks again soon.
	 */
	bool blind;
	/* An armed entry's transport rings nothing over TCP: only our bell wakes it. */
	bool bell_only;
};

/*
 * The entry's socket if it is paired (a reference), else NULL; an entry
 * whose fd went away or names another socket now is dropped (*i steps back).
 */
static struct sconn *entry_sc(struct ewait *w, int *i)
{
	struct ep_entry *e = &w->s->e[*i];
	struct sconn *sc;
	uint32_t km;

	if (e->nested)
		return NULL;
	sc = fd_get(e->fd);
	if (sc != e->sc) {
		if (sc)
			sconn_put(sc);
		epset_drop(w->s, e);
		(*i)--;
		return NULL;
	}
	if (!sconn_mapped(sc)) {
		sconn_put(sc);
		/* on TCP for good now (a fork's child): the kernel is asked what the program asked */
		if (e->kevents != e->events && !e->disarmed) {
			struct epoll_event kev = { .events = e->events, .data = e->data };

			if (!next.epoll_ctl(w->epfd, EPOLL_CTL_MOD, e->fd, &kev))
				e->kevents = e->events;
		}
		return NULL;
	}
	/*
	 * A direction went to the ring after registration: tell the kernel,
	 * but not for a one-shot entry the program has not armed again (a
	 * MOD would arm it).
	 */
	km = kernel_mask(sc, e->events);
	if (km != e->kevents && !e->disarmed) {
		struct epoll_event kev = { .events = km, .data = e->data };

		if (!next.epoll_ctl(w->epfd, EPOLL_CTL_MOD, e->fd, &kev))
			e->kevents = km;
	}
	return sc;
}

static int ring_scan(struct ewait *w, bool commit);

/* The wait of a nested entry's set, in which w's wait looks. */
static struct ewait inner_wait(const struct ep_entry *e, struct ep_set *in)
{
	return (struct ewait){ .epfd = e->fd, .s = in, .max = 1 };
}

/* The ring cursors of a set's sockets, summed: an edge of a nested entry is a change of it. */
static uint64_t set_marks(struct ep_set *s)
{
	uint64_t sum = 0;

	pthread_mutex_lock(&s->lock);
	for (int i = 0; i < s->n; i++) {
		struct sconn *sc = s->e[i].nested ? NULL : fd_get(s->e[i].fd);

		if (!sc)
			continue;
		if (sc == s->e[i].sc && sconn_mapped(sc))
			sum += TP(sc, rx_mark) + TP(sc, tx_mark);
		sconn_put(sc);
	}
	pthread_mutex_unlock(&s->lock);
	return sum;
}

/* EPOLLIN if the nested entry e (its set in) has a ring-ready entry, given e's edge state. */
static uint32_t nested_ready(struct ep_entry *e, struct ep_set *in, bool commit)
{
	struct ewait iw = inner_wait(e, in);
	uint64_t marks;

	if (e->disarmed || !(e->events & EPOLLIN) || !ring_scan(&iw, false))
		return 0;
	if (e->events & EPOLLET) {
		marks = set_marks(in);
		if (marks == e->last_in)
			return 0;
		if (commit)
			e->last_in = marks;
	}
	if (commit && (e->events & EPOLLONESHOT))
		e->disarmed = true;
	return EPOLLIN;
}

/* Entry *i's ring events as epoll reports them (*i steps back if it was dropped). */
static uint32_t entry_scan(struct ewait *w, int *i, bool commit)
{
	struct sconn *sc;
	struct ep_set *in;
	unsigned mode;
	uint32_t r;

	if (w->s->e[*i].nested)
		return (in = epset_of(w->s, i)) ? nested_ready(&w->s->e[*i], in, commit) : 0;
	if (!(sc = entry_sc(w, i)))
		return 0;
	r = entry_ready(&w->s->e[*i], sc, &mode, commit);
	sconn_put(sc);
	return r;
}

/* Ring-ready entries into w->ev (commit), or whether there is one. */
static int ring_scan(struct ewait *w, bool commit)
{
	int n = 0;

	pthread_mutex_lock(&w->s->lock);
	for (int i = 0; i < w->s->n && n < w->max; i++) {
		uint32_t r = entry_scan(w, &i, commit);

		if (!r)
			continue;
		if (!commit) {
			n = 1;
			break;
		}
		w->ev[n].events = r;
		w->ev[n].data = w->s->e[i].data;
		n++;
	}
	pthread_mutex_unlock(&w->s->lock);
	return n;
}

static bool ring_ready(void *arg)
{
	return ring_scan(arg, false) > 0;
}

/*
 * Quiet entries.  A connection on shared memory with neither direction cut
 * over (its peer has not come yet, or never will: a client without the
 * library) has nothing on the ring to report, and its producer rings over
 * TCP once it cuts over if the want-bell flag is left set (TP_BELL_TCP in
 * cons_sleeping).  Armed so once, such an entry stays armed: while every
 * entry of the set is quiet or not on shared memory, a wait is the
 * kernel's epoll_pwait alone (set_quiet()), and a connection kept on TCP
 * costs no scan, bell or ppoll per wait.  It stops being quiet when a
 * direction cuts over, when the producer took the bell (merge_kernel), or
 * when something else disarmed it (another set, poll).
 */
static void entry_quiet_begin(struct ep_entry *e, struct sconn *sc)
{
	if (!sconn_mapped(sc) || atomic_load(&sc->rx_cut) || atomic_load(&sc->tx_cut) ||
	    e->disarmed || !TP(sc, rx_bell_asked))
		return;
	e->quiet_disarms = atomic_load_explicit(&sc->disarms, memory_order_relaxed);
	e->quiet = true;
}

/* Whether the whole set can wait in the kernel alone. */
static bool set_quiet(struct ewait *w)
{
	bool yes = true;

	pthread_mutex_lock(&w->s->lock);
	for (int i = 0; i < w->s->n && yes; i++) {
		struct ep_entry *e = &w->s->e[i];
		struct sconn *sc = e->sc;
		struct ep_set *in;

		if (e->nested) {
			struct ewait iw;

			in = epset_inner(w->s, e);
			if (!in) {
				yes = false;
			} else {
				iw = inner_wait(e, in);
				yes = set_quiet(&iw);
			}
			continue;
		}
		/* an entry whose descriptor changed is dropped by the full path */
		if (!fd_is(e->fd, sc))
			yes = false;
		else if (!sconn_mapped(sc))
			continue;
		else if (!e->quiet || atomic_load(&sc->rx_cut) || atomic_load(&sc->tx_cut) ||
			 atomic_load_explicit(&sc->disarms, memory_order_relaxed) != e->quiet_disarms)
			yes = e->quiet = false;
	}
	pthread_mutex_unlock(&w->s->lock);
	return yes;
}

static bool arm_all(struct ewait *w, bool arm, uint32_t bell);

/* arm_all() for the entries of nested entry *i's set: true if it is ready meanwhile. */
static bool arm_nested(struct ewait *w, int *i, bool arm, uint32_t bell)
{
	struct ep_set *in = epset_of(w->s, i);
	struct ep_entry *e;
	struct ewait iw;
	bool ready;

	if (!in)
		return false;
	e = &w->s->e[*i];
	if (arm && (e->disarmed || !(e->events & EPOLLIN)))
		return false;
	iw = inner_wait(e, in);
	ready = arm_all(&iw, arm, bell) && nested_ready(e, in, false);
	w->blind |= iw.blind;
	w->bell_only |= iw.bell_only;
	return ready;
}

/* Arm (with bell, bell_wait_begin()) or disarm every paired entry; true if one is ready meanwhile. */
static bool arm_all(struct ewait *w, bool arm, uint32_t bell)
{
	bool ready = false;

	pthread_mutex_lock(&w->s->lock);
	for (int i = 0; i < w->s->n; i++) {
		struct sconn *sc;

		if (w->s->e[i].nested) {
			if (arm_nested(w, &i, arm, bell))
				ready = true;
			continue;
		}
		if (!(sc = entry_sc(w, &i)))
			continue;
		if (arm && !sc->tp.ops->tcp_doorbells) {
			w->bell_only = true;
			w->blind |= bell == TP_BELL_TCP;
		}
		if (arm && !w->s->e[i].disarmed) {
			struct ep_entry *e = &w->s->e[i];
			unsigned mode;

			/*
			 * Ready as epoll reports it: an edge-triggered entry whose
			 * ring stays as it was reported (room to send, say) must
			 * not keep us from the kernel's events of the other way.
			 */
			if (e->quiet)
				;
			else if (soft_arm(e->fd, sc, e->events & (EPOLLIN | EPOLLOUT), bell) &&
				 entry_ready(e, sc, &mode, false))
				ready = true;
			else
				entry_quiet_begin(e, sc);
		} else if (!arm && !w->s->e[i].quiet) {
			soft_disarm(sc);
		}
		sconn_put(sc);
	}
	pthread_mutex_unlock(&w->s->lock);
	return ready;
}

static bool spin_allowed(struct ewait *w)
{
	bool yes = false;

	pthread_mutex_lock(&w->s->lock);
	for (int i = 0; i < w->s->n && !yes; i++) {
		struct sconn *sc;
		struct ep_set *in;

		if (w->s->e[i].nested) {
			if ((in = epset_of(w->s, &i))) {
				struct ewait iw = inner_wait(&w->s->e[i], in);

				yes = spin_allowed(&iw);
			}
		} else if ((sc = entry_sc(w, &i))) {
			yes = soft_peer_elsewhere(sc);
			sconn_put(sc);
		}
	}
	pthread_mutex_unlock(&w->s->lock);
	return yes;
}

/* The doorbells waiting in the TCP streams of set s's sockets (and its nested sets'), taken. */
static void set_drain(struct ep_set *s)
{
	pthread_mutex_lock(&s->lock);
	for (int i = 0; i < s->n; i++) {
		const struct ep_entry *e = &s->e[i];
		struct ep_set *in;
		struct sconn *sc;

		if (e->nested) {
			if ((in = epset_inner(s, e)))
				set_drain(in);
			continue;
		}
		if (!(sc = fd_get(e->fd)))
			continue;
		if (sc == e->sc && sconn_mapped(sc) && atomic_load(&sc->rx_cut) && (e->events & EPOLLIN) &&
		    soft_may_drain(sc, true))
			soft_drain(e->fd, sc);
		sconn_put(sc);
	}
	pthread_mutex_unlock(&s->lock);
}

/*
 * The kernel says nested entry e's set is readable: its rings say so, or
 * the kernel still does once the doorbells (bytes in the TCP streams of
 * its sockets, which the program never reads) are taken.
 */
static bool nested_in(const struct ep_set *s, struct ep_entry *e)
{
	struct ep_set *in = epset_inner(s, e);
	struct pollfd p = { .fd = e->fd, .events = POLLIN };

	if (!in)
		return true;
	if (nested_ready(e, in, true))
		return true;
	set_drain(in);
	return next.poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

/* Whether ev[0..have) has k's entry already (k's events are added to it). */
static bool merge_dup(struct ewait *w, int have, struct epoll_event k)
{
	for (int i = 0; i < have; i++)
		if (w->ev[i].data.u64 == k.data.u64) {
			w->ev[i].events |= k.events;
			return true;
		}
	return false;
}

/*
 * The kernel's events ev[have..have+m) merged with the rings: events of
 * paired sockets are recomputed (doorbells drained), duplicates of events
 * already reported in ev[0..have) merged into them.  The new count.
 */
static int merge_kernel(struct ewait *w, int have, int m)
{
	int out = have;

	pthread_mutex_lock(&w->s->lock);
	for (int j = have; j < have + m; j++) {
		struct epoll_event k = w->ev[j];
		struct ep_entry *e = NULL;
		struct sconn *sc = NULL;
		uint32_t r, asked = ~0u;
		int nested = -1;
		unsigned mode;

		for (int i = 0; i < w->s->n && !sc && nested < 0; i++) {
			int n = w->s->n;

			if (w->s->e[i].data.u64 != k.data.u64)
				continue;
			if ((sc = entry_sc(w, &i))) {
				e = &w->s->e[i];
			} else if (w->s->n == n) {
				/*
				 * Its socket is on TCP now: what kernel_mask() asked
				 * the kernel for the ring's sake is not the program's,
				 * nor anything after a one-shot report of ours.
				 */
				const struct ep_entry *tcp = &w->s->e[i];

				asked = tcp->disarmed ? 0 : tcp->events | EPOLLERR | EPOLLHUP;
				if (tcp->nested)
					nested = i;
			}
		}
		if (!sc) {
			k.events &= asked;
			if (nested >= 0 && (k.events & EPOLLIN) && !nested_in(w->s, &w->s->e[nested]))
				k.events &= ~(uint32_t)EPOLLIN;
			/* a nested set the rings reported already is one event */
			if (k.events && !(nested >= 0 && merge_dup(w, have, k)))
				w->ev[out++] = k;
			continue;
		}
		if (e->quiet && !TP(sc, rx_bell_asked))
			e->quiet = false;
		/* a doorbell woke us: take it now, not in one more wait */
		if (sconn_mapped(sc) && atomic_load(&sc->rx_cut) && (k.events & EPOLLIN) &&
		    soft_may_drain(sc, e->events & EPOLLIN))
			soft_drain(e->fd, sc);
		r = entry_ready(e, sc, &mode, true);
		/*
		 * A reset the kernel has is kept (an edge comes once), and a
		 * writer without room learns of a dead peer (its FIN).
		 */
		if ((mode & SOFT_OUT_RING) &&
		    ((k.events & (EPOLLERR | EPOLLHUP)) ||
		     ((e->events & EPOLLOUT) && !(r & EPOLLOUT) && (k.events & EPOLLIN))) &&
		    soft_tx_peer_check(e->fd, sc, (short)(k.events & (EPOLLERR | EPOLLHUP))) &&
		    (e->events & EPOLLOUT))
			r |= EPOLLOUT;
		if (!e->disarmed || r) {
			uint32_t kb = 0;

			if (!(mode & SOFT_IN_RING))
				kb |= k.events & (EPOLLIN | EPOLLPRI | EPOLLRDHUP);
			if (!(mode & SOFT_OUT_RING))
				kb |= k.events & EPOLLOUT;
			kb |= k.events & (EPOLLERR | EPOLLHUP);
			kb &= e->events | EPOLLERR | EPOLLHUP;
			if (kb && (e->events & EPOLLONESHOT))
				e->disarmed = true;
			r |= kb;
		}
		sconn_put(sc);
		if (!r && !e->disarmed && (e->kevents & EPOLLONESHOT)) {
			/* the kernel fired for a doorbell we swallowed: arm it again */
			struct epoll_event kev = { .events = e->kevents, .data = e->data };

			next.epoll_ctl(w->epfd, EPOLL_CTL_MOD, e->fd, &kev);
		}
		if (!r)
			continue;
		k.events = r;
		if (!merge_dup(w, have, k))
			w->ev[out++] = k;
	}
	pthread_mutex_unlock(&w->s->lock);
	return out;
}

static int kernel_wait(struct ewait *w, int have, int64_t timeout_ns, const sigset_t *mask)
{
	int ms = timeout_ns < 0 ? -1 : (int)((timeout_ns + 999999) / 1000000);
	int m = next.epoll_pwait(w->epfd, w->ev + have, w->max - have, ms, mask);

	if (m < 0)
		return have ? have : -1;
	return merge_kernel(w, have, m);
}

/*
 * The wait takes the completions of one of its connections' links itself,
 * as a blocking receive does (doc/soft-roce.md section 4): the first entry
 * waiting for input whose transport lends it a channel, taken from (and
 * the channel armed) before the entries are armed.  Its socket (a
 * reference), or NULL.
 */
static struct sconn *drive_begin(struct ewait *w, uint32_t bell, struct tp_drive *d)
{
	struct sconn *found = NULL;

	pthread_mutex_lock(&w->s->lock);
	for (int i = 0; i < w->s->n && !found; i++) {
		struct sconn *sc = entry_sc(w, &i);

		if (!sc)
			continue;
		if (!w->s->e[i].disarmed && (w->s->e[i].events & EPOLLIN) && TP(sc, drive_begin, true, bell, d))
			found = sc;
		else
			sconn_put(sc);
	}
	pthread_mutex_unlock(&w->s->lock);
	if (found)
		TP(found, drive_take, d, false);
	return found;
}

static void drive_end(struct sconn *sc, struct tp_drive *d, bool woken)
{
	if (!sc)
		return;
	TP(sc, drive_take, d, woken);
	TP(sc, drive_end, d);
	sconn_put(sc);
}

/*
 * The sleep with our bell: the epoll fd, the bell and a lent channel (chan,
 * or -1) in one ppoll, then the kernel's events without waiting if the
 * epoll fd has some.
 */
static int bell_wait(struct ewait *w, int efd, int chan, bool *rang, bool *woken, int64_t timeout_ns,
		     const sigset_t *mask)
{
	struct pollfd p[3] = { { .fd = w->epfd, .events = POLLIN }, { .fd = efd, .events = POLLIN },
			       { .fd = chan, .events = POLLIN } };
	struct timespec ts = { timeout_ns / 1000000000, timeout_ns % 1000000000 };
	int r = next.ppoll(p, chan >= 0 ? 3 : 2, timeout_ns < 0 ? NULL : &ts, mask);

	if (r < 0)
		return -1;
	*rang = p[1].revents & POLLIN;
	*woken = chan >= 0 && p[2].revents;
	return p[0].revents ? kernel_wait(w, 0, 0, NULL) : 0;
}

static int soft_epoll_wait(struct ewait *w, int64_t timeout_ns, const sigset_t *mask)
{
	int64_t end = timeout_ns >= 0 ? soft_now_ns() + timeout_ns : -1;
	bool spun = false;

	if (w->max <= 0) {
		errno = EINVAL;
		return -1;
	}
	for (;;) {
		int64_t left = end < 0 ? -1 : end - soft_now_ns();
		int n, r, efd;
		uint32_t bell;
		bool rang, woken;
		struct tp_drive drive;
		struct sconn *driver;

		if (left < 0 && end >= 0)
			left = 0;
		if (set_quiet(w)) {
			ctl_poll();
			if (left != 0 && ctl_backlog() && (left < 0 || left > DEL_RETRY_NS))
				left = DEL_RETRY_NS;
			r = kernel_wait(w, 0, left, mask);
			if (r != 0 || left == 0 || (end >= 0 && soft_now_ns() >= end))
				return r;
			continue;
		}
		n = ring_scan(w, true);
		if (n > 0)
			return n < w->max ? kernel_wait(w, n, 0, mask) : n;
		if (left == 0)
			return kernel_wait(w, 0, 0, mask);
		if (!spun && spin_allowed(w)) {
			spun = true;
			if (soft_spin_until(ring_ready, w))
				continue;
		}
		ctl_poll();            /* our bell's id, or a peer's, may have come */
		bell = bell_wait_begin(&efd);
		driver = efd >= 0 && soft_cfg.drive ? drive_begin(w, bell, &drive) : NULL;
		if (arm_all(w, true, bell)) {
			drive_end(driver, &drive, false);
			arm_all(w, false, bell);
			bell_wait_end(efd, false);
			continue;
		}
		atomic_fetch_add_explicit(&pstats->sleeps, 1, memory_order_relaxed);
		rang = woken = false;
		/* replies or ends of registrations due: look again within DEL_RETRY_NS */
		if (ctl_backlog() && (left < 0 || left > DEL_RETRY_NS))
			left = DEL_RETRY_NS;
		if (w->blind && (left < 0 || left > (int64_t)SETTLE_LOOK_MS * 1000000))
			left = (int64_t)SETTLE_LOOK_MS * 1000000;
		/* a lost ring of our bell would be the only thing between it and a sleep for ever */
		if (w->bell_only && (left < 0 || left > QUIET_LOOK_NS))
			left = QUIET_LOOK_NS;
		w->blind = w->bell_only = false;
		r = efd >= 0 ? bell_wait(w, efd, driver ? drive.fd : -1, &rang, &woken, left, mask)
			     : kernel_wait(w, 0, left, mask);
		drive_end(driver, &drive, woken);
		arm_all(w, false, bell);
		bell_wait_end(efd, rang);
		if (r != 0)
			return r;
		if (end >= 0 && soft_now_ns() >= end)
			return 0;
	}
}

/* -2: nothing tracked in this epoll set (use the next function). */
static int epoll_common(int epfd, struct epoll_event *ev, int max, int64_t timeout_ns,
			const sigset_t *mask)
{
	struct ewait w = { .epfd = epfd, .ev = ev, .max = max };

	if (!atomic_load_explicit(&fd_tracked, memory_order_relaxed) ||
	    !(w.s = epset_get(epfd, false)) || !epset_tracks(w.s))
		return -2;
	return soft_epoll_wait(&w, timeout_ns, mask);
}

struct epoll_call {
	int epfd;
	struct epoll_event *ev;
	int max;
	const sigset_t *mask;
	bool pwait2;               /* else a wait in milliseconds */
};

/* One wait of the epoll_wait() family, maybe cut for an offer (offer.c). */
static int epoll_step(void *arg, int64_t timeout_ns)
{
	struct epoll_call *c = arg;
	struct timespec ts = { timeout_ns / 1000000000, timeout_ns % 1000000000 };
	int r = epoll_common(c->epfd, c->ev, c->max, timeout_ns, c->mask);

	if (r != -2)
		return r;
	if (c->pwait2) {
		if (!next.epoll_pwait2) {
			errno = ENOSYS;
			return -1;
		}
		return next.epoll_pwait2(c->epfd, c->ev, c->max, timeout_ns < 0 ? NULL : &ts,
					 c->mask);
	}
	return next.epoll_pwait(c->epfd, c->ev, c->max, offer_ns_to_ms(timeout_ns), c->mask);
}

EXPORT int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
	struct epoll_call c = { .epfd = epfd, .ev = ev, .max = max };

	PRELOAD_INIT();
	return offer_wait(epoll_step, &c, timeout < 0 ? -1 : (int64_t)timeout * 1000000);
}

EXPORT int epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout,
		       const sigset_t *mask)
{
	struct epoll_call c = { .epfd = epfd, .ev = ev, .max = max, .mask = mask };

	PRELOAD_INIT();
	return offer_wait(epoll_step, &c, timeout < 0 ? -1 : (int64_t)timeout * 1000000);
}

EXPORT int epoll_pwait2(int epfd, struct epoll_event *ev, int max, const struct timespec *ts,
			const sigset_t *mask)
{
	struct epoll_call c = { .epfd = epfd, .ev = ev, .max = max, .mask = mask, .pwait2 = true };
	int64_t t = -1;

	PRELOAD_INIT();
	if (ts) {
		if (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000) {
			errno = EINVAL;
			return -1;
		}
		t = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
	}
	return offer_wait(epoll_step, &c, t);
}
