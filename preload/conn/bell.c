/*
 * The process's doorbells (doc/soft-ring.md section 4): an eventfd that poll,
 * select and epoll waits watch beside the TCP sockets, so that a peer wakes
 * them with one eventfd write instead of a byte through the TCP stack.
 *
 * Each eventfd has one waiting thread at a time (a second one could take
 * the wake-up of the first and leave it asleep): a process keeps up to
 * SOFT_BELL_SLOTS of them, one per thread that waits at once, made as
 * waits find the others taken.  A waiter names its bell's id in the sleeper
 * flags of its rings; one that finds none free names TP_BELL_TCP.  A peer
 * that finds an id it has no descriptor for rings over TCP and asks the
 * daemon for that bell.  Every sleeper also waits on TCP, so a bell
 * unknown, lost or refused costs a TCP doorbell, never a wake-up.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "conn.h"
#include "reg_client.h"

#define PEER_BELLS 64
/* A peer's bell not rung for this long is closed when another one comes. */
#define PEER_IDLE_NS (5 * 1000000000LL)

struct peer_bell {
	uint32_t id;
	int fd;                    /* -1: asked for, no answer yet */
	_Atomic int64_t rung_at;   /* soft_now_ns() of its last use */
};

static pthread_rwlock_t peers_mu = PTHREAD_RWLOCK_INITIALIZER;
static struct peer_bell peers[PEER_BELLS];
static unsigned npeers, next_evict;
/* bit fd % 64 of every peer's descriptor ever held: close() looks here first */
static _Atomic uint64_t peer_fd_bits;

struct own_bell {
	int fd;                    /* under own_mu: the program may close it */
	_Atomic uint32_t id;       /* 0 until the daemon named it */
	_Atomic long seq;          /* the BELL request that set it */
	_Atomic bool asked;        /* once: made and given to the daemon, or given up */
	_Atomic bool busy;         /* a thread waits on it */
};

#define OWN_NONE { .fd = -1 }
_Static_assert(SOFT_BELL_SLOTS == 8, "one initialiser per slot");
static struct own_bell own[SOFT_BELL_SLOTS] = {
	OWN_NONE, OWN_NONE, OWN_NONE, OWN_NONE, OWN_NONE, OWN_NONE, OWN_NONE, OWN_NONE,
};
static _Atomic bool daemon_lost;
static pthread_mutex_t ask_mu = PTHREAD_MUTEX_INITIALIZER;
/* the fds' numbers against the program closing one while a waiter resets it */
static pthread_mutex_t own_mu = PTHREAD_MUTEX_INITIALIZER;

static bool bells_usable(void)
{
	return soft_cfg.bells && !soft_sandboxed() &&
	       !atomic_load_explicit(&daemon_lost, memory_order_relaxed);
}

/*
 * Another daemon may give our ids to other processes: from now on every
 * doorbell of this process goes over TCP.
 */
void bell_daemon_lost(void)
{
	atomic_store(&daemon_lost, true);
}

/*
 * Make the eventfd of slot and give it to the daemon, once; the reply
 * (bell_reply) names its id.  Callers may hold a connection's locks:
 * nothing here waits for a lock another thread could hold while it waits
 * for theirs.
 */
static void own_ask(unsigned slot)
{
	struct own_bell *o = &own[slot];
	int fd;

	if (atomic_load_explicit(&o->asked, memory_order_relaxed) || pthread_mutex_trylock(&ask_mu))
		return;
	if (!atomic_load(&o->asked)) {
		pthread_mutex_lock(&own_mu);
		if (o->fd < 0)
			o->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		fd = o->fd;
		pthread_mutex_unlock(&own_mu);
		if (fd < 0) {
			preload_dbg("libsmc-preload: no doorbell of our own: %s\n", strerror(errno));
			atomic_store(&o->asked, true);
		} else if (ctl_bell_set(fd, slot, &o->seq)) {
			atomic_store(&o->asked, true);
		}
	}
	pthread_mutex_unlock(&ask_mu);
}

void bell_wanted(void)
{
	if (bells_usable() && !atomic_load_explicit(&own[0].id, memory_order_relaxed))
		own_ask(0);
}

uint32_t bell_wait_begin(int *efd)
{
	*efd = -1;
	if (!bells_usable())
		return TP_BELL_TCP;
	for (unsigned i = 0; i < SOFT_BELL_SLOTS; i++) {
		struct own_bell *o = &own[i];
		uint32_t id = atomic_load_explicit(&o->id, memory_order_acquire);

		if (!id) {
			/* the others are taken: this one for the next wait */
			own_ask(i);
			return TP_BELL_TCP;
		}
		if (atomic_exchange_explicit(&o->busy, true, memory_order_acquire))
			continue;
		pthread_mutex_lock(&own_mu);
		*efd = o->fd;
		pthread_mutex_unlock(&own_mu);
		if (*efd >= 0)
			return id;
		/* the program closed it: that slot rings and waits over TCP */
		atomic_store_explicit(&o->busy, false, memory_order_release);
	}
	return TP_BELL_TCP;
}

void bell_wait_end(int efd, bool rang)
{
	uint64_t v;

	if (efd < 0)
		return;
	pthread_mutex_lock(&own_mu);
	for (unsigned i = 0; i < SOFT_BELL_SLOTS; i++) {
		if (own[i].fd != efd)
			continue;
		/* not a number the program has closed and opened again meanwhile */
		if (rang)
			(void)next.read(efd, &v, sizeof(v));
		atomic_store_explicit(&own[i].busy, false, memory_order_release);
		break;
	}
	pthread_mutex_unlock(&own_mu);
}

static struct peer_bell *peer_find(uint32_t id)
{
	for (unsigned i = 0; i < npeers; i++)
		if (peers[i].id == id)
			return &peers[i];
	return NULL;
}

/*
 * With peers_mu held: a slot for id.  One freed, or idle for PEER_IDLE_NS
 * (its process has likely ended: a server would otherwise keep an eventfd
 * of every client process it ever served), else a new one, else the
 * oldest given up.
 */
static struct peer_bell *peer_slot(uint32_t id)
{
	int64_t now = soft_now_ns();
	struct peer_bell *p = NULL;

	for (unsigned i = 0; i < npeers && !p; i++)
		if (!peers[i].id ||
		    now - atomic_load_explicit(&peers[i].rung_at, memory_order_relaxed) > PEER_IDLE_NS)
			p = &peers[i];
	if (!p && npeers < PEER_BELLS) {
		p = &peers[npeers++];
		p->fd = -1;           /* never used: not descriptor 0 */
	} else if (!p) {
		p = &peers[next_evict++ % PEER_BELLS];
	}
	if (p->fd >= 0)
		next.close(p->fd);
	p->id = id;
	p->fd = -1;
	atomic_store_explicit(&p->rung_at, now, memory_order_relaxed);
	return p;
}

bool bell_ring(uint32_t id)
{
	static const uint64_t one = 1;
	struct peer_bell *p;
	bool rung = false, ask = false;

	if (id <= TP_BELL_TCP || !bells_usable())
		return false;
	/* readers ring at once; a descriptor is closed only under the write lock */
	pthread_rwlock_rdlock(&peers_mu);
	p = peer_find(id);
	if (p && p->fd >= 0) {
		rung = next.write(p->fd, &one, sizeof(one)) == sizeof(one);
		atomic_store_explicit(&p->rung_at, soft_now_ns(), memory_order_relaxed);
	}
	pthread_rwlock_unlock(&peers_mu);
	if (p)
		return rung;
	pthread_rwlock_wrlock(&peers_mu);
	if (!peer_find(id)) {
		peer_slot(id);
		ask = true;
	}
	pthread_rwlock_unlock(&peers_mu);
	if (ask && !ctl_bell_get(id)) {
		pthread_rwlock_wrlock(&peers_mu);
		if ((p = peer_find(id)) && p->fd < 0)
			p->id = 0;            /* ask again next time */
		pthread_rwlock_unlock(&peers_mu);
	}
	return false;
}

bool bell_ring_own(uint32_t id)
{
	static const uint64_t one = 1;
	bool rung = false;

	if (id <= TP_BELL_TCP)
		return false;
	for (unsigned i = 0; i < SOFT_BELL_SLOTS && !rung; i++) {
		if (atomic_load_explicit(&own[i].id, memory_order_acquire) != id)
			continue;
		pthread_mutex_lock(&own_mu);
		rung = own[i].fd >= 0 && next.write(own[i].fd, &one, sizeof(one)) == sizeof(one);
		pthread_mutex_unlock(&own_mu);
	}
	return rung;
}

void bell_reply(const struct soft_pair_reply *r)
{
	struct peer_bell *p;

	if (r->bell_fd < 0) {
		/* one of ours named (or an error: that slot stays TCP) */
		for (unsigned i = 0; i < SOFT_BELL_SLOTS; i++)
			if (!r->error && atomic_load(&own[i].seq) == (long)r->seq &&
			    !atomic_load(&own[i].id))
				atomic_store_explicit(&own[i].id, r->bell_id, memory_order_release);
		return;
	}
	pthread_rwlock_wrlock(&peers_mu);
	p = peer_find(r->bell_id);
	if (p && p->fd < 0) {
		p->fd = r->bell_fd;
		atomic_fetch_or_explicit(&peer_fd_bits, 1ULL << (r->bell_fd % 64),
					 memory_order_relaxed);
	} else
		next.close(r->bell_fd);
	pthread_rwlock_unlock(&peers_mu);
}

static bool in_range(int fd, unsigned first, unsigned last)
{
	return fd >= 0 && (unsigned)fd >= first && (unsigned)fd <= last;
}

/* The program closes descriptors of ours (a close-everything loop): forget them. */
void bell_fds_closed(unsigned first, unsigned last)
{
	uint64_t bits;

	pthread_mutex_lock(&own_mu);
	for (unsigned i = 0; i < SOFT_BELL_SLOTS; i++)
		if (in_range(own[i].fd, first, last))
			own[i].fd = -1;                 /* for good: asked stays */
	pthread_mutex_unlock(&own_mu);
	bits = last - first >= 63 ? ~0ULL : (2ULL << (last - first)) - 1;
	bits = bits << (first % 64) | bits >> ((64 - first % 64) % 64);
	if (!(atomic_load_explicit(&peer_fd_bits, memory_order_relaxed) & bits))
		return;
	pthread_rwlock_wrlock(&peers_mu);
	for (unsigned i = 0; i < npeers; i++)
		if (in_range(peers[i].fd, first, last)) {
			peers[i].fd = -1;
			peers[i].id = 0;
		}
	pthread_rwlock_unlock(&peers_mu);
}

/*
 * The child of fork() shares the parent's eventfds: two processes waiting
 * on one could take each other's wake-ups.  It makes its own when it waits.
 * The peers' bells stay valid.
 */
void bell_after_fork_child(void)
{
	for (unsigned i = 0; i < SOFT_BELL_SLOTS; i++) {
		if (own[i].fd >= 0)
			next.close(own[i].fd);
		own[i].fd = -1;
		atomic_store(&own[i].id, 0);
		atomic_store(&own[i].seq, 0);
		atomic_store(&own[i].asked, false);
		atomic_store(&own[i].busy, false);
	}
	pthread_rwlock_init(&peers_mu, NULL);
	pthread_mutex_init(&ask_mu, NULL);
	pthread_mutex_init(&own_mu, NULL);
}
