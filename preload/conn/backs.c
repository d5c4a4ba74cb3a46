/*
 * Several ends of this process go back to TCP at once (a fork, an io_uring
 * instance the library cannot watch): each says BACK first, then all wait
 * for their peers' answers together, with one deadline, so that n silent
 * peers cost one wait, not n (doc/soft-roce.md section 4).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>

#include "conn.h"

struct backs {
	const struct conn_backs_rule *rule;
	struct back_end { int fd; struct sconn *sc; bool said; } *e;
	size_t n, cap;
};

/* Nothing to do: an end already back, on TCP for good, or let go. */
static bool decided(struct sconn *sc)
{
	return atomic_load(&sc->back_tx) || atomic_load(&sc->tcp_for_good) || atomic_load(&sc->let_go);
}

/* An end that could not say BACK at once says it by end. */
static bool say_later(const struct conn_backs_rule *rule, int fd, struct sconn *sc, int64_t end)
{
	return rule->waits_for_senders ? sconn_back_say_until(fd, sc, end) : sconn_back_say_by(fd, sc, false, end);
}

static void back_say(int fd, struct sconn *sc, void *arg)
{
	struct backs *b = arg;
	struct back_end *p;
	int fl, rc;

	if (!sconn_mapped(sc))
		return;
	if (sc->tp.ops->not_ours) {
		/* a forked child's copy of its parent's end: the owner goes back for it */
		if (b->rule->others)
			conn_fork_use(fd, sc);
		return;
	}
	if (decided(sc) || (b->rule->one_process_only && !sc->tp.ops->one_process))
		return;
	fl = next.fcntl(fd, F_GETFD);
	if (fl < 0 || (b->rule->inherited_only && (fl & FD_CLOEXEC)))
		return;
	/* nothing cut over: TCP for good at both ends, else back */
	if (sconn_fall_back(fd, sc, b->rule->reason) || !sc->tp.ops->one_process)
		return;
	rc = sconn_back_say(fd, sc, false);
	if (rc && rc != -EAGAIN && !(rc == -EBUSY && b->rule->waits_for_senders)) {
		sconn_back_refused(fd, rc);
		return;
	}
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 8;

		if (!(p = realloc(b->e, cap * sizeof(*p)))) {
			/* no room to keep it for later: this one waits now */
			int64_t end = conn_back_deadline();

			if (rc == 0 || say_later(b->rule, fd, sc, end))
				sconn_back_finish(fd, sc, false, false, end);
			return;
		}
		b->e = p;
		b->cap = cap;
	}
	atomic_fetch_add_explicit(&sc->refs, 1, memory_order_relaxed);
	b->e[b->n++] = (struct back_end){ fd, sc, rc == 0 };
}

static void backs_finish(struct backs *b)
{
	int64_t end = conn_back_deadline();

	for (size_t i = 0; i < b->n; i++) {
		struct back_end *e = &b->e[i];
		struct sconn *now = fd_get(e->fd);

		/* not closed by another thread meanwhile */
		if (now == e->sc && (e->said || say_later(b->rule, e->fd, now, end)))
			sconn_back_finish(e->fd, now, false, false, end);
		if (now)
			sconn_put(now);
		sconn_put(e->sc);
	}
	free(b->e);
}

void conn_backs_all(const struct conn_backs_rule *rule)
{
	struct backs b = { .rule = rule };

	fd_for_each(back_say, &b);
	backs_finish(&b);
}
