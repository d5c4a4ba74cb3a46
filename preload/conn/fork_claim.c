/*
 * An end to another host that is still NEW when its process forks: a server
 * that forks at accept() (rsync's daemon, PostgreSQL, sshd, git daemon) and
 * closes its copy.  Pairing it before the fork, as settle.c does for ends of
 * this host, would leave its negotiation with the parent, whose close then
 * ends it; so it is left to the copy that uses it first, which claims it
 * through a slot every copy shares and pairs it on its own control
 * connection.  It cuts over only if it is the one holder left by then; a
 * second user, a hand-over (SCM_RIGHTS, a spawn, an execve beside another
 * holder) keep every copy on TCP.  doc/soft-roce.md section 4, "A fork at
 * accept()".
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "conn.h"
#include "reg.h"

#define CLAIM_SLOTS 1024
/* an execve beside another holder waits that long for it to close (a fork at accept) */
#define CLAIM_EXEC_WAIT_MS 20
/* a copy counting in again waits that many yields for another's decision (DECIDING) */
#define CLAIM_DECIDING_SPINS 1000

/* ---- the slot's steps (shared memory, any process; tests/unit/test_fork_claim.c) ---- */

bool claim_slot_open(struct claim_slot *s)
{
	uint32_t fr = CL_FREE;

	if (!atomic_compare_exchange_strong(&s->state, &fr, CL_TAKING))
		return false;
	atomic_store(&s->owner, 0);
	/* before the count: a copy of the older end that rejoins sees the change */
	atomic_fetch_add(&s->gen, 1);
	atomic_store(&s->kids, 1);
	atomic_store(&s->state, CL_OPEN);
	return true;
}

bool claim_slot_take(struct claim_slot *s, int pid)
{
	uint32_t st = CL_OPEN;

	if (atomic_compare_exchange_strong(&s->state, &st, CL_TAKING)) {
		atomic_store(&s->owner, pid);
		st = CL_TAKING;
		/* a second user meanwhile made it TCP */
		return atomic_compare_exchange_strong(&s->state, &st, CL_CLAIMED);
	}
	return st == CL_CLAIMED && atomic_load(&s->owner) == pid;
}

bool claim_slot_mine(struct claim_slot *s, int pid)
{
	uint32_t st = atomic_load(&s->state);

	/* DECIDING with our pid: our own step from CLAIMED to DONE, in another thread */
	return (st == CL_CLAIMED || st == CL_DECIDING) && atomic_load(&s->owner) == pid;
}

void claim_slot_spoil(struct claim_slot *s)
{
	uint32_t st = atomic_load(&s->state);

	while ((st == CL_OPEN || st == CL_TAKING || st == CL_CLAIMED || st == CL_DECIDING) &&
	       !atomic_compare_exchange_weak(&s->state, &st, CL_TCP))
		;
}

/*
 * From `from` to DONE if our copy is the only one: through DECIDING, so
 * that a copy counting in again (claim_slot_rejoin()) either is seen here
 * or sees DECIDING and waits for the outcome.  Spoiled meanwhile (another
 * copy used it, or a rejoin gave up waiting): TCP stays.  The owner stays
 * as it was: no thread of ours takes an open end for its own meanwhile.
 */
static bool alone_to_done(struct claim_slot *s, uint32_t from)
{
	uint32_t st = from;

	if (!atomic_compare_exchange_strong(&s->state, &st, CL_DECIDING))
		return false;
	if (atomic_load(&s->kids) == 1) {
		st = CL_DECIDING;
		/* its count goes with ours (claim_slot_kid_gone()) */
		return atomic_compare_exchange_strong(&s->state, &st, CL_DONE);
	}
	st = CL_DECIDING;
	atomic_compare_exchange_strong(&s->state, &st, from);
	return false;
}

bool claim_slot_done(struct claim_slot *s, int pid)
{
	/* every other copy gone: no process can use the socket beside us */
	if (atomic_load(&s->owner) != pid || atomic_load(&s->kids) != 1)
		return false;
	return alone_to_done(s, CL_CLAIMED);
}

bool claim_slot_hand_on(struct claim_slot *s, int pid)
{
	if (atomic_load(&s->kids) != 1)
		return false;
	if (atomic_load(&s->state) == CL_OPEN)
		return alone_to_done(s, CL_OPEN);
	return claim_slot_mine(s, pid) && alone_to_done(s, CL_CLAIMED);
}

bool claim_slot_rejoin(struct claim_slot *s, uint32_t gen)
{
	uint32_t k = atomic_load(&s->kids), st;

	/* none left: free, or freed while we looked */
	do {
		if (!k)
			return false;
	} while (!atomic_compare_exchange_weak(&s->kids, &k, k + 1));
	/* another copy deciding whether it is alone: its outcome */
	for (int i = 0; (st = atomic_load(&s->state)) == CL_DECIDING && i < CLAIM_DECIDING_SPINS; i++)
		sched_yield();
	/*
	 * Still deciding (its process stopped, or starved): TCP for every
	 * copy, so that it cannot go on beside ours, and ours stays counted.
	 */
	if (st == CL_DECIDING && atomic_load(&s->gen) == gen &&
	    atomic_compare_exchange_strong(&s->state, &st, CL_TCP))
		st = CL_TCP;    /* (a failed exchange left st what the state became) */
	if (atomic_load(&s->gen) == gen && (st == CL_OPEN || st == CL_CLAIMED || st == CL_TCP))
		return true;
	/* opened again for another end meanwhile, or cut over */
	if (atomic_fetch_sub(&s->kids, 1) == 1)
		atomic_store(&s->state, CL_FREE);
	return false;
}

void claim_slot_kid_gone(struct claim_slot *s, int pid)
{
	/* a claimant letting go before it cut over: the other copies go on over TCP */
	if (claim_slot_mine(s, pid))
		claim_slot_spoil(s);
	if (atomic_fetch_sub(&s->kids, 1) == 1)
		atomic_store(&s->state, CL_FREE);
}

/* ---- an end's slot ---- */

struct claim_page {
	struct claim_slot s[CLAIM_SLOTS];
};

/* Every process forked from the one that made it shares it (never unmapped). */
static struct claim_page *page;
static unsigned forks;

static struct claim_slot *slot_new(void)
{
	if (!page) {
		void *p = mmap(NULL, sizeof(*page), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return NULL;
		page = p;
	}
	for (unsigned i = 0; i < CLAIM_SLOTS; i++)
		if (claim_slot_open(&page->s[i]))
			return &page->s[i];
	return NULL;
}

/* This process's count goes, once, whoever takes sc->claim (NULL after). */
static void drop(struct sconn *sc)
{
	struct claim_slot *s = atomic_exchange(&sc->claim, NULL);

	if (s)
		claim_slot_kid_gone(s, (int)getpid());
}

static bool connected(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	return !getpeername(fd, (struct sockaddr *)&ss, &len);
}

void conn_claim_fork_begin(void)
{
	forks++;
}

bool conn_claim_fork(int fd, struct sconn *sc)
{
	struct claim_slot *s = atomic_load(&sc->claim);

	if (!s) {
		if (atomic_load(&sc->state) != SC_NEW || ctl_decline_reason(sc) || soft_sandboxed() ||
		    !ctl_peer_may_be_remote(fd) || !connected(fd) || !(s = slot_new()))
			return false;
		/*
		 * A copy's I/O our hooks never see (a thread asleep in recv()
		 * across the fork) would be missing from the claimant's counts.
		 */
		atomic_store(&sc->kernel_counts, true);
		atomic_store(&sc->claim, s);
	}
	/* the child's copy, once per connection (dup'ed fds) */
	if (sc->claim_fork != forks) {
		sc->claim_fork = forks;
		atomic_fetch_add(&s->kids, 1);
	}
	if (atomic_load(&s->state) == CL_OPEN) {
		/* no timed offer in either process: the first user pairs it */
		atomic_store(&sc->offer_at, 0);
		return true;
	}
	/*
	 * Ours already, not paired yet (socat's child forks for its SYSTEM
	 * shell after its first call): the child's copy is NEW too, and counts
	 * until it closes or its execve does; a use of it makes the end TCP
	 * for all.  Once paired, the child's copy would be plain TCP
	 * (child_holds()), its bytes unseen by our fences: shared, as before.
	 */
	return claim_slot_mine(s, (int)getpid()) && atomic_load(&sc->state) == SC_NEW;
}

static void unfork(int fd, struct sconn *sc, void *arg)
{
	struct claim_slot *s = atomic_load(&sc->claim);

	(void)fd;
	(void)arg;
	if (s && sc->claim_fork == forks) {
		sc->claim_fork = forks - 1;
		atomic_fetch_sub(&s->kids, 1);
	}
}

void conn_claim_fork_failed(void)
{
	fd_for_each(unfork, NULL);
}

/*
 * TCP for good, as an end another process holds (conn_shared()), with this
 * process's count out: the other copies find the slot TCP.
 */
static void stay_tcp(struct sconn *sc, struct claim_slot *s)
{
	uint32_t none = 0;

	claim_slot_spoil(s);
	atomic_compare_exchange_strong(&sc->decline, &none, SMC_SOFT_DECL_SHARED);
	atomic_store(&sc->shared, true);
	conn_stay_tcp_if_new(sc);
	drop(sc);
}

/*
 * What the other copies read and wrote before us is in the kernel's counts,
 * not in ours: the fences count from there.
 */
static bool count_from_kernel(int fd, struct sconn *sc)
{
	uint64_t rx, tx;

	if (!sys_tcp_read_total(fd, &rx) || !sys_tcp_sent_total(fd, sc->role, &tx))
		return false;
	atomic_store(&sc->tcp_rx, rx);
	atomic_store(&sc->tcp_tx, tx);
	return true;
}

bool conn_claim_use(int fd, struct sconn *sc)
{
	struct claim_slot *s = atomic_load_explicit(&sc->claim, memory_order_relaxed);
	int me = (int)getpid();

	if (!s || claim_slot_mine(s, me))
		return true;
	if (atomic_load(&sc->state) == SC_NEW && claim_slot_take(s, me)) {
		if (!count_from_kernel(fd, sc)) {
			stay_tcp(sc, s);
			return false;
		}
		preload_dbg("libsmc-preload: fd %d: claimed from its forked copies\n", fd);
		if (soft_cfg.pair_delay_ns && !soft_cfg.pair_after)
			offer_defer(sc);
		return true;
	}
	preload_dbg("libsmc-preload: fd %d: another process uses it too: TCP\n", fd);
	stay_tcp(sc, s);
	return false;
}

bool conn_claim_pairable(struct sconn *sc)
{
	struct claim_slot *s = atomic_load(&sc->claim);

	return !s || claim_slot_mine(s, (int)getpid());
}

bool conn_claim_attach(struct sconn *sc)
{
	struct claim_slot *s = atomic_load(&sc->claim);

	if (!s)
		return true;
	if (!claim_slot_done(s, (int)getpid()))
		return false;
	/* once, beside a close() in another thread */
	drop(sc);
	return true;
}

void conn_claim_spoil(struct sconn *sc)
{
	struct claim_slot *s = atomic_load(&sc->claim);

	/* the count stays: the copy a fork made names the slot too */
	if (s)
		claim_slot_spoil(s);
}

bool conn_claim_left(struct sconn *sc)
{
	struct claim_slot *s = atomic_load(&sc->claim);

	return s && (atomic_load(&s->state) == CL_OPEN ||
		     (claim_slot_mine(s, (int)getpid()) && atomic_load(&sc->state) == SC_NEW));
}

enum claim_others conn_claim_others(struct sconn *sc)
{
	struct claim_slot *s = atomic_load(&sc->claim);
	uint32_t st;

	if (!s)
		return CLAIM_ALONE;
	st = atomic_load(&s->state);
	if (st == CL_TCP)
		return CLAIM_SHARED;
	if (atomic_load(&s->kids) == 1)
		return CLAIM_ALONE;
	/* DECIDING: our own attach or execve in another thread, for a moment */
	return st == CL_CLAIMED || st == CL_DECIDING ? CLAIM_WAIT : CLAIM_SHARED;
}

void conn_claim_after_fork_child(struct sconn *sc)
{
	/* the parent's claim, or open: this copy offers nothing on a timer */
	if (atomic_load(&sc->claim))
		atomic_store(&sc->offer_at, 0);
}

void conn_claim_let_go(struct sconn *sc)
{
	drop(sc);
}

/*
 * An execve that hands sc on (fd not close-on-exec): the new image cannot
 * reach the slot.  Alone with it (a fork at accept whose parent closed its
 * copy, which we wait for a moment), the new image gets an end of its own;
 * else TCP for every copy.  One the execve closes (close-on-exec) counts
 * itself out, and in again if the execve fails (execvp tries every PATH
 * directory) while the slot is still undecided.
 */
static void exec_before(int fd, struct sconn *sc, void *arg)
{
	struct claim_slot *s = atomic_load(&sc->claim);
	bool closing = *(bool *)arg;
	struct timespec ms = { 0, 1000000 };
	int fl;

	sc->claim_exec = closing ? sc->claim_exec : NULL;
	if (!s || (fl = next.fcntl(fd, F_GETFD)) < 0 || closing != !!(fl & FD_CLOEXEC))
		return;
	if (closing) {
		sc->claim_exec = s;
		sc->claim_gen = atomic_load(&s->gen);
		drop(sc);
		return;
	}
	for (int i = 0; i < CLAIM_EXEC_WAIT_MS && atomic_load(&s->kids) > 1; i++)
		next.nanosleep(&ms, NULL);
	if (claim_slot_hand_on(s, (int)getpid())) {
		drop(sc);
		return;
	}
	stay_tcp(sc, s);
}

static void exec_failed(int fd, struct sconn *sc, void *arg)
{
	struct claim_slot *s = sc->claim_exec, *other = NULL;

	(void)fd;
	(void)arg;
	if (!s)
		return;
	sc->claim_exec = NULL;
	if (claim_slot_rejoin(s, sc->claim_gen)) {
		if (atomic_compare_exchange_strong(&sc->claim, &other, s))
			return;
		/* a fork in another thread meanwhile left it to a slot of its own: TCP in both */
		claim_slot_spoil(s);
		claim_slot_kid_gone(s, (int)getpid());
		stay_tcp(sc, other);
		return;
	}
	/*
	 * Freed meanwhile: no copy was left but ours, or (within the failed
	 * call) the one left cut over.  TCP here; the second would need this
	 * process to use a descriptor it had marked close-on-exec.
	 */
	conn_stay_tcp_if_new(sc);
}

void conn_claim_exec_all(bool before)
{
	bool closing = false;

	if (!before) {
		fd_for_each(exec_failed, NULL);
		return;
	}
	/* the ends a descriptor hands on first: one a dup of it names is not closed by the execve */
	fd_for_each(exec_before, &closing);
	closing = true;
	fd_for_each(exec_before, &closing);
}
