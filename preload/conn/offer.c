/*
 * When an established connection is offered to the daemon (PAIR): once it
 * has lived SMC_SOFT_PAIR_DELAY_USEC (doc/soft-lifecycle.md section 1.1).  A
 * connection that ends sooner costs the daemon nothing and its process no
 * message.  A connection waiting for its offer is NEW with offer_at set; it
 * is offered
 *   - at a data call on it from that time on,
 *   - when a wait of its process would outlast that time: poll, ppoll,
 *     epoll_wait and a blocking receive on it (io.c) wait until then only,
 *     offer it, and wait on for the rest,
 *   - before a wait that cannot be cut short (select, pselect, a blocking
 *     accept, pause, sleep, waitpid, sigsuspend, ...): everything that
 *     would come due meanwhile.
 * Offering is ctl_offer(); sharing a connection (fork, spawn, SCM_RIGHTS)
 * pairs it at once as before, whatever its time.  While a pairing may still
 * cut over to RDMA, the waits that can be cut, select and pselect too, are
 * cut every SETTLE_LOOK_MS (conn.h).
 */
#include <fcntl.h>
#include <stdint.h>

#include "conn.h"

#define NO_DUE INT64_MAX

/* The earliest offer_at of a connection still waiting, or NO_DUE. */
static _Atomic int64_t due = NO_DUE;

static void due_lower(int64_t t)
{
	int64_t cur = atomic_load_explicit(&due, memory_order_relaxed);

	while (t < cur && !atomic_compare_exchange_weak(&due, &cur, t))
		;
}

void offer_defer(struct sconn *sc)
{
	int64_t at = soft_now_ns() + (int64_t)soft_cfg.pair_delay_ns;

	atomic_store_explicit(&sc->offer_at, at, memory_order_relaxed);
	due_lower(at);
}

void offer_check(int fd, struct sconn *sc)
{
	int64_t at;

	/* a copy left at a fork: the first user's (fork_claim.c) */
	if (atomic_load_explicit(&sc->claim, memory_order_relaxed) && !conn_claim_use(fd, sc))
		return;
	at = atomic_load_explicit(&sc->offer_at, memory_order_relaxed);
	if (at && soft_now_ns() >= at)
		ctl_offer(fd, sc, false);
}

struct sweep {
	int64_t until;             /* offer what is due before this */
	int64_t next;              /* the earliest offer_at left */
};

/*
 * A duplicate of fd while it still names sc, else -1: another thread may
 * close fd during a sweep, and its number may name another socket by the
 * time the PAIR carries it.  The close hook forgets fd before it closes it,
 * so a duplicate made while the table still says sc is sc's socket.
 */
static int dup_of(int fd, struct sconn *sc)
{
	int d = next.fcntl(fd, F_DUPFD_CLOEXEC, 0);
	struct sconn *now;

	if (d < 0)
		return -1;
	if ((now = fd_get(fd)))
		sconn_put(now);
	if (now != sc) {
		next.close(d);
		return -1;
	}
	return d;
}

static void sweep_one(int fd, struct sconn *sc, void *arg)
{
	struct sweep *s = arg;
	int64_t at = atomic_load_explicit(&sc->offer_at, memory_order_relaxed);
	int d;

	if (!at || atomic_load(&sc->state) != SC_NEW)
		return;
	/* a vfork() child shares our table and control connection: not its to use */
	if (at <= s->until && !soft_vfork_child() && (d = dup_of(fd, sc)) >= 0) {
		ctl_offer(d, sc, true);
		next.close(d);
	}
	/* still NEW: not due, or the daemon or the control lock was busy */
	if (atomic_load(&sc->state) == SC_NEW && at < s->next)
		s->next = at;
}

/* Offer every waiting connection due before until. */
static void sweep(int64_t until)
{
	struct sweep s = { .until = until, .next = NO_DUE };

	atomic_store(&due, NO_DUE);
	fd_for_each(sweep_one, &s);
	due_lower(s.next);
}

bool offer_pending(void)
{
	return atomic_load_explicit(&due, memory_order_relaxed) != NO_DUE;
}

void offer_all_now(void)
{
	if (atomic_load_explicit(&due, memory_order_relaxed) != NO_DUE)
		sweep(NO_DUE - 1);
}

void offer_before_sleep(int64_t timeout_ns)
{
	int64_t d = atomic_load_explicit(&due, memory_order_relaxed);

	if (timeout_ns != 0)
		ctl_before_sleep();
	if (d == NO_DUE || timeout_ns == 0)
		return;
	sweep(timeout_ns < 0 ? NO_DUE - 1 : soft_now_ns() + timeout_ns);
}

/*
 * Before a wait of timeout_ns (-1: none) that can be cut: offers what is
 * due now and returns how long to wait first; *cut when that is less than
 * asked for, a connection's offer coming due at its end.
 */
static int64_t offer_step(int64_t timeout_ns, bool *cut)
{
	int64_t d = atomic_load_explicit(&due, memory_order_relaxed), now;

	*cut = false;
	if (d == NO_DUE || timeout_ns == 0)
		return timeout_ns;
	now = soft_now_ns();
	if (d <= now) {
		sweep(now);
		/* one that could not be offered now is left for a later call */
		if ((d = atomic_load(&due)) <= now || d == NO_DUE)
			return timeout_ns;
	}
	if (timeout_ns >= 0 && d - now >= timeout_ns)
		return timeout_ns;
	*cut = true;
	return d - now;
}

/* The same, and cut every SETTLE_LOOK_MS while a pairing may move to RDMA (conn.h). */
static int64_t wait_step(int64_t timeout_ns, bool *cut)
{
	const int64_t look = (int64_t)SETTLE_LOOK_MS * 1000000;
	int64_t step = offer_step(timeout_ns, cut);

	if (step != 0 && (step < 0 || step > look) && ctl_rdma_settling()) {
		*cut = true;
		step = look;
	}
	return step;
}

int offer_wait(int (*fn)(void *arg, int64_t timeout_ns), void *arg, int64_t timeout_ns)
{
	int64_t end = timeout_ns > 0 ? soft_now_ns() + timeout_ns : 0;

	for (;;) {
		bool cut;
		int r = fn(arg, wait_step(timeout_ns, &cut));

		if (r != 0 || !cut)
			return r;
		if (timeout_ns > 0) {
			timeout_ns = end - soft_now_ns();
			if (timeout_ns <= 0)
				return 0;
		}
	}
}

int offer_ns_to_ms(int64_t timeout_ns)
{
	if (timeout_ns < 0)
		return -1;
	/* rounded up: a wait cut for an offer ends at or after its time */
	if (timeout_ns > (int64_t)INT32_MAX * 1000000)
		return INT32_MAX;
	return (int)((timeout_ns + 999999) / 1000000);
}
