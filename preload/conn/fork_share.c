/*
 * A forked child's copy of an end only its owner can use (soft SMC-R: the
 * queue pairs stay with the process that set the end up; the child's copy
 * is rdma_elsewhere.c's).  At the child's first use it asks the owner,
 * through a page both share, to take the end back to TCP; the owner's
 * answering thread does (sconn_back_for()'s steps), and so does the owner
 * when it lets go of the end (close, exit) while a child may still hold it:
 * `ssh -f` forks and its parent exits at once.  A fork whose child never
 * uses the end costs nothing but a slot.  doc/soft-roce.md section 4.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "conn.h"
#include "reg.h"

#define FORK_SLOTS 255
/* a child waits that long for its owner's answer (a BACK gives up after 5 s) */
#define FORK_ASK_GIVE_UP_NS (8 * 1000000000LL)
#define FORK_ASK_LOOK_NS 100000000L

struct fork_page {
	_Atomic uint32_t bell;     /* a child asked: the owner's answering thread wakes */
	int owner;
	struct fork_slot s[FORK_SLOTS];
};

static struct fork_page *own_page;     /* the page of the ends this process owns */
static bool answering;                 /* its answering thread runs */
static pthread_mutex_t own_mu = PTHREAD_MUTEX_INITIALIZER;

static void futex_wake_all(_Atomic uint32_t *w)
{
	next.syscall(SYS_futex, w, FUTEX_WAKE, 0x7fffffff, NULL, NULL, 0);
}

static void futex_wait_ns(_Atomic uint32_t *w, uint32_t val, long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };

	next.syscall(SYS_futex, w, FUTEX_WAIT, val, ns >= 0 ? &ts : NULL, NULL, 0);
}

/* ---- the slot's state machine (tests/unit/test_fork_share.c) ---- */

bool fork_slot_take(struct fork_slot *s)
{
	uint32_t fr = FS_FREE;

	/* the new generation before HELD shows: a copy of the old end never asks for the new one */
	if (!atomic_compare_exchange_strong(&s->state, &fr, FS_TAKING))
		return false;
	atomic_store(&s->kids, 0);
	atomic_store(&s->askers, 0);
	atomic_store(&s->owner_gone, false);
	atomic_fetch_add(&s->gen, 1);
	atomic_store(&s->state, FS_HELD);
	return true;
}

void fork_slot_ask(struct fork_slot *s)
{
	uint32_t st = FS_HELD;

	atomic_fetch_add(&s->askers, 1);
	/*
	 * An owner that could not before may now (its writer let go of the
	 * end, its peer answers); one that let go of it will not (ENDED).
	 */
	if (!atomic_compare_exchange_strong(&s->state, &st, FS_WANTED) && st == FS_LOST)
		atomic_compare_exchange_strong(&s->state, &st, FS_WANTED);
}

void fork_slot_unask(struct fork_slot *s)
{
	uint32_t st = FS_WANTED;

	/* the last child still asking takes the question back: the owner goes back for nobody */
	if (atomic_fetch_sub(&s->askers, 1) == 1)
		atomic_compare_exchange_strong(&s->state, &st, FS_HELD);
}

bool fork_slot_claim(struct fork_slot *s, bool only_wanted)
{
	uint32_t st = FS_WANTED;

	if (atomic_compare_exchange_strong(&s->state, &st, FS_GOING))
		return true;
	if (only_wanted)
		return false;
	st = FS_HELD;
	if (atomic_compare_exchange_strong(&s->state, &st, FS_GOING))
		return true;
	st = FS_LOST;
	return atomic_compare_exchange_strong(&s->state, &st, FS_GOING);
}

/* A slot whose owner let go and that no copy names is free again (not while taken or going). */
static void free_if_unused(struct fork_slot *s)
{
	uint32_t st = atomic_load(&s->state);

	if (atomic_load(&s->owner_gone) && atomic_load(&s->kids) == 0 && st != FS_FREE &&
	    st != FS_TAKING && st != FS_GOING)
		atomic_compare_exchange_strong(&s->state, &st, FS_FREE);
}

void fork_slot_settle(struct fork_slot *s, bool tcp)
{
	/* an owner that let go while its thread went back: LOST is for good then */
	atomic_store(&s->state, tcp ? FS_TCP : atomic_load(&s->owner_gone) ? FS_ENDED : FS_LOST);
	futex_wake_all(&s->state);
	free_if_unused(s);
}

void fork_slot_kid_gone(struct fork_slot *s)
{
	if (atomic_fetch_sub(&s->kids, 1) == 1)
		free_if_unused(s);
}

void fork_slot_owner_gone(struct fork_slot *s)
{
	uint32_t st;

	atomic_store(&s->owner_gone, true);
	/* nobody answers from now on: a question or a LOST is ENDED, its askers woken */
	for (st = atomic_load(&s->state); st == FS_LOST || st == FS_WANTED || st == FS_HELD;)
		if (atomic_compare_exchange_weak(&s->state, &st, FS_ENDED)) {
			futex_wake_all(&s->state);
			break;
		}
	free_if_unused(s);
}

uint32_t fork_slot_wait(struct fork_slot *s, int owner, int64_t end)
{
	uint32_t st;

	while ((st = atomic_load(&s->state)) == FS_HELD || st == FS_WANTED || st == FS_GOING) {
		/* no answer in time, or an owner killed without a word (its queue pairs went with it) */
		if (soft_now_ns() >= end || (owner > 0 && kill(owner, 0) && errno == ESRCH))
			return FS_LOST;
		futex_wait_ns(&s->state, st, FORK_ASK_LOOK_NS);
	}
	return st;
}

/* ---- the owner ---- */

static struct fork_slot *slot_of(struct sconn *sc)
{
	struct fork_page *p = atomic_load(&sc->fork_page);

	return p ? &p->s[sc->fork_idx] : NULL;
}

/* The end goes back to TCP for every holder: sconn_back_for()'s steps, never blocking on tx_lock. */
static bool back_for_children(int fd, struct sconn *sc)
{
	int64_t end;

	/* nothing cut over: TCP for good at both ends (as at a fork: settle.c) */
	if (sconn_fall_back(fd, sc, SMC_SOFT_DECL_BACK))
		return true;
	end = conn_back_deadline();
	return sconn_back_say_until(fd, sc, end) && sconn_back_finish(fd, sc, false, false, end);
}

static void go_back(int fd, struct sconn *sc, struct fork_slot *s, bool only_wanted)
{
	bool tcp;

	if (!fork_slot_claim(s, only_wanted))
		return;
	tcp = back_for_children(fd, sc);
	fork_slot_settle(s, tcp);
	preload_dbg("libsmc-preload: fd %d: %s for a forked child's copy\n", fd,
		    tcp ? "back to TCP" : "could not go back to TCP");
}

static void answer_one(int fd, struct sconn *sc, void *arg)
{
	struct fork_slot *s;
	struct sconn *now;

	(void)arg;
	if (atomic_load(&sc->fork_page) != own_page || !sconn_mapped(sc) || sc->tp.ops->not_ours ||
	    !(s = slot_of(sc)) || atomic_load(&s->state) != FS_WANTED)
		return;
	/* not closed meanwhile */
	if ((now = fd_get(fd)) == sc)
		go_back(fd, sc, s, true);
	if (now)
		sconn_put(now);
}

static void *answer(void *arg)
{
	struct fork_page *p = arg;

	for (;;) {
		uint32_t b = atomic_load(&p->bell);


		fd_for_each(answer_one, NULL);
		futex_wait_ns(&p->bell, b, -1);
	}
	return NULL;
}

/* An end of ours that stays on RDMA while a forked child gets a copy: a slot for it. */
static void own_slot(struct sconn *sc)
{
	struct fork_page *p = own_page;

	if (!p) {
		p = mmap(NULL, sizeof(*p), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return;
		p->owner = (int)getpid();
		own_page = p;
	}
	for (unsigned i = 0; i < FORK_SLOTS; i++)
		if (fork_slot_take(&p->s[i])) {
			sc->fork_idx = i;
			sc->fork_gen = atomic_load(&p->s[i].gen);
			atomic_store(&sc->fork_page, p);
			return;
		}
}

void conn_fork_share_before(struct sconn *sc)
{
	struct fork_slot *s;

	if (!sconn_mapped(sc) || !sc->tp.ops->one_process || atomic_load(&sc->back_tx) ||
	    atomic_load(&sc->tcp_for_good))
		return;
	if (!sc->tp.ops->not_ours && !atomic_load(&sc->fork_page))
		own_slot(sc);
	if ((s = slot_of(sc)) && atomic_load(&s->gen) == sc->fork_gen)
		atomic_fetch_add(&s->kids, 1);
}

void conn_fork_share_failed(struct sconn *sc)
{
	struct fork_slot *s = slot_of(sc);

	if (s && atomic_load(&s->gen) == sc->fork_gen && sconn_mapped(sc))
		fork_slot_kid_gone(s);
}

void conn_fork_share_parent(void)
{
	pthread_mutex_lock(&own_mu);
	if (own_page && !answering)
		answering = !lib_thread_start(answer, own_page);
	pthread_mutex_unlock(&own_mu);
}

void conn_fork_share_child(void)
{
	/* the parent's page stays named by the copies; ends this child sets up get a page of its own */
	own_page = NULL;
	answering = false;
	pthread_mutex_init(&own_mu, NULL);
}

/* ---- a holder letting go, and a child's first use ---- */

/*
 * The copy's count, taken by whoever takes sc->fork_page (NULL after): a
 * close, an exit, an execve and a first use that race count it out once.
 */
static struct fork_slot *copy_out(struct sconn *sc)
{
	struct fork_page *p = atomic_exchange(&sc->fork_page, NULL);
	struct fork_slot *s = p ? &p->s[sc->fork_idx] : NULL;

	if (s && atomic_load(&s->gen) == sc->fork_gen)
		fork_slot_kid_gone(s);
	return s;
}

static void exec_out(int fd, struct sconn *sc, void *arg)
{
	bool before = *(bool *)arg;
	struct fork_slot *s;
	uint32_t st;
	int fl;

	if (!sconn_mapped(sc))
		return;
	/* an owner's end the new image will not have: a child's copy goes on over TCP */
	if (!sc->tp.ops->not_ours) {
		if (before && atomic_load(&sc->fork_page) && (fl = next.fcntl(fd, F_GETFD)) >= 0 &&
		    (fl & FD_CLOEXEC))
			conn_fork_share_let_go(fd, sc);
		return;
	}
	if (before && atomic_load(&sc->fork_page) && (fl = next.fcntl(fd, F_GETFD)) >= 0 &&
	    (fl & FD_CLOEXEC)) {
		sc->fork_exec_page = atomic_load(&sc->fork_page);
		if (!copy_out(sc))
			sc->fork_exec_page = NULL;
		return;
	}
	if (before || !sc->fork_exec_page)
		return;
	/* the execve failed (execvp tries every PATH directory): counted again if the slot is still the end's */
	s = &sc->fork_exec_page->s[sc->fork_idx];
	st = atomic_load(&s->state);
	if (atomic_load(&s->gen) == sc->fork_gen && st != FS_FREE && st != FS_TAKING) {
		atomic_fetch_add(&s->kids, 1);
		atomic_store(&sc->fork_page, sc->fork_exec_page);
	}
	sc->fork_exec_page = NULL;
}

void conn_fork_share_exec(bool before)
{
	fd_for_each(exec_out, &before);
}

void conn_fork_share_let_go(int fd, struct sconn *sc)
{
	struct fork_page *p;
	struct fork_slot *s;

	if (!sconn_mapped(sc))
		return;
	if (sc->tp.ops->not_ours) {
		copy_out(sc);
		return;
	}
	if (!(p = atomic_exchange(&sc->fork_page, NULL)))
		return;
	s = &p->s[sc->fork_idx];
	/* a child may use it after us: it goes on over TCP, unless the peer has ended */
	if (atomic_load(&s->kids) > 0) {
		if (!(TP(sc, peer_state) & (TP_PS_CLOSED | TP_PS_ABORT)))
			go_back(fd, sc, s, false);
		else if (fork_slot_claim(s, false))
			fork_slot_settle(s, false);
	}
	/* the answering thread's going back ends before we close (or exit) */
	if (atomic_load(&s->state) == FS_GOING)
		fork_slot_wait(s, 0, soft_now_ns() + FORK_ASK_GIVE_UP_NS);
	fork_slot_owner_gone(s);
}

void conn_fork_use(int fd, struct sconn *sc)
{
	struct fork_page *p = atomic_load_explicit(&sc->fork_page, memory_order_relaxed);
	struct fork_slot *s;
	uint32_t st;

	/* inside a seccomp sandbox we make no call the program did not make: the reset */
	if (!p || !sconn_mapped(sc) || !sc->tp.ops->not_ours || conn_back_reads(sc) || soft_sandboxed())
		return;
	s = &p->s[sc->fork_idx];
	if (atomic_load(&s->gen) != sc->fork_gen) {
		copy_out(sc);
		return;
	}
	fork_slot_ask(s);
	atomic_fetch_add(&p->bell, 1);
	futex_wake_all(&p->bell);
	st = fork_slot_wait(s, p->owner, soft_now_ns() + FORK_ASK_GIVE_UP_NS);
	if (atomic_load(&s->gen) != sc->fork_gen)
		st = FS_LOST;
	else
		fork_slot_unask(s);     /* no longer waiting: a question left unanswered goes */
	if (st == FS_TCP) {
		/* the owner went back: everything from here is the TCP stream's */
		atomic_store(&sc->back_tx, true);
		atomic_store(&sc->back_rx, true);
		preload_dbg("libsmc-preload: fd %d: its owner %d went back to TCP for us\n", fd, p->owner);
	} else {
		preload_dbg("libsmc-preload: fd %d: its owner %d did not go back to TCP in time\n", fd,
			    p->owner);
	}
	/* asked once: a copy that could not go back meets the reset (rdma_elsewhere.c) */
	copy_out(sc);
}
