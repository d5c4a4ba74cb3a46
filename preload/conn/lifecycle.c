/*
 * A connection's life in the preload: pairing's outcome, the cut-over of
 * each direction, sharing with other processes and the holders, the end.
 * The states and transitions are doc/soft-lifecycle.md's tables; what
 * carries the bytes is the transport under it (transport.h).
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "conn.h"
#include "reg.h"

/* ---- states (doc/soft-lifecycle.md section 1) ---- */

bool conn_ask(struct sconn *sc)
{
	int expect = SC_NEW;

	/* left at a fork to the copy that uses it first (fork_claim.c) */
	if (!conn_claim_pairable(sc))
		return false;
	return atomic_compare_exchange_strong(&sc->state, &expect, SC_ASKED);
}

void conn_ask_later(struct sconn *sc)
{
	atomic_store(&sc->calls, 0);
	atomic_store(&sc->state, SC_NEW);
}

void conn_asked_again(struct sconn *sc)
{
	atomic_store(&sc->state, SC_ASKED);
}

/* From another process (execve, SCM_RIGHTS): its region is asked for at once. */
void conn_came_shared(struct sconn *sc)
{
	atomic_store(&sc->calls, soft_cfg.pair_after);
	atomic_store(&sc->shared, true);
}

void conn_stay_tcp(struct sconn *sc)
{
	atomic_store(&sc->state, SC_TCP);
}

void conn_stay_tcp_if_new(struct sconn *sc)
{
	int expect = SC_NEW;

	atomic_compare_exchange_strong(&sc->state, &expect, SC_TCP);
}

/*
 * An end a fork left to its first user cuts over only if no other copy is
 * left (fork_claim.c): else it stays TCP, as an end shared at its pairing.
 */
static bool claim_attach(struct sconn *sc)
{
	uint32_t none = 0;

	if (conn_claim_attach(sc))
		return true;
	atomic_compare_exchange_strong(&sc->decline, &none, SMC_SOFT_DECL_SHARED);
	return false;
}

bool sconn_attach(struct sconn *sc, unsigned kind, int shm_fd, int side, bool inherited)
{
	const struct transport_ops *ops = transport_of_kind(kind);
	bool ok = false;
	int rc;

	if (!ops)
		return false;
	pthread_mutex_lock(&sc->lock);
	if (atomic_load(&sc->state) == SC_ASKED && claim_attach(sc)) {
		sc->tp.ops = ops;
		rc = TP(sc, map, shm_fd, side);
		if (rc) {
			preload_dbg("libsmc-preload: soft region refused: %d\n", rc);
		} else {
			/* an inherited end counts the holders it was passed with */
			if (!inherited)
				TP(sc, holders_first);
			/*
			 * A process that takes a connection over (execve, SCM_RIGHTS)
			 * has no reader on the plain path: it reads fence-aware now,
			 * or the peer would never cut over to it.  Not on stdin,
			 * stdout or stderr, where stdio may read it: its first
			 * data call decides (conn_stdio_check()).
			 */
			if (inherited && !fd_names_std(sc)) {
				atomic_store(&sc->attached, true);
				TP(sc, say_attached);
			}
			sc->daemon_epoch = ctl_epoch();
			atomic_store_explicit(&sc->state, SC_MAPPED, memory_order_seq_cst);
			preload_dbg("libsmc-preload: paired as side %d\n", side);
			ok = true;
		}
	}
	pthread_mutex_unlock(&sc->lock);
	return ok;
}

bool sconn_attach_transport(struct sconn *sc, const struct transport *t)
{
	bool ok = false;

	pthread_mutex_lock(&sc->lock);
	if (atomic_load(&sc->state) == SC_ASKED && claim_attach(sc) && !ctl_decline_reason(sc)) {
		sc->tp = *t;
		TP(sc, holders_first);
		/* before its first byte: it may go back to TCP for another process (back.c) */
		TP(sc, back_offer);
		sc->daemon_epoch = ctl_epoch();
		atomic_store_explicit(&sc->state, SC_MAPPED, memory_order_seq_cst);
		preload_dbg("libsmc-preload: connected by %s\n", t->ops->name);
		ok = true;
	}
	pthread_mutex_unlock(&sc->lock);
	return ok;
}

/* Other processes held it (fork, spawn, a fork at accept()): what they moved counts too. */
static bool counts_from_kernel(struct sconn *sc)
{
	return TP(sc, ever_shared) || atomic_load_explicit(&sc->kernel_counts, memory_order_relaxed);
}

/*
 * A reader of the plain path increments plain_rx before it loads the state
 * and the state became MAPPED before this load (both seq_cst): either it saw
 * MAPPED and reads fence-aware, or we see it and wait for a later call.
 */
void sconn_attach_late(struct sconn *sc)
{
	if (atomic_load_explicit(&sc->attached, memory_order_relaxed) ||
	    atomic_load_explicit(&sc->plain_rx, memory_order_seq_cst))
		return;
	atomic_store(&sc->attached, true);
	TP(sc, say_attached);
}

/*
 * After the fence the stream carries one-byte doorbells, which Nagle's
 * algorithm would hold back behind an unacknowledged one.
 */
bool sconn_tx_try_cut(int fd, struct sconn *sc)
{
	static const int one = 1;
	uint64_t sent;

	if (atomic_load_explicit(&sc->tx_cut, memory_order_relaxed))
		return true;
	/* another process holding the connection (fork, spawn) cut it over */
	if (sconn_mapped(sc) && TP(sc, tx_fence, &sent)) {
		atomic_store_explicit(&sc->tx_cut, true, memory_order_release);
		return true;
	}
	if (!sconn_mapped(sc) || atomic_load_explicit(&sc->plain_tx, memory_order_seq_cst) ||
	    !TP(sc, peer_attached))
		return false;
	sent = atomic_load(&sc->tcp_tx);
	/* held by several processes (fork, spawn): what the others wrote counts too */
	if (counts_from_kernel(sc) && !sys_tcp_sent_total(fd, sc->role, &sent))
		return false;
	/* an end was handed to a program without the library (sconn_unseen) */
	if (!TP(sc, set_tx_fence, sent))
		return false;
	sys_setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	atomic_store_explicit(&sc->tx_cut, true, memory_order_release);
	atomic_fetch_add_explicit(&pstats->fence_bytes, sent, memory_order_relaxed);
	return true;
}

/* ---- the receiving cut-over ---- */

bool conn_rx_fence_left(struct sconn *sc, uint64_t *left)
{
	uint64_t fence, read;

	if (!TP(sc, rx_fence, &fence)) {
		uint64_t lost = atomic_load(&sc->lost_fence);

		if (!lost)
			return false;
		fence = lost - 1;
	}
	read = atomic_load(&sc->tcp_rx);
	*left = fence > read ? fence - read : 0;
	return true;
}

void conn_rx_count_shared(int fd, struct sconn *sc)
{
	uint64_t total;

	if (counts_from_kernel(sc) && !atomic_load(&sc->rx_eof) && sys_tcp_read_total(fd, &total))
		atomic_store(&sc->tcp_rx, total);
}

/*
 * The TCP stream was read up to the peer's fence: here, or by another holder
 * of the connection (fork, spawn), which marked its cut-over or, if it read
 * the last bytes before the fence came, left only the kernel's count.
 */
static bool rx_fence_reached(int fd, struct sconn *sc)
{
	uint64_t left, total;

	if (!conn_rx_fence_left(sc, &left))
		return false;
	if (!left || TP(sc, rx_cut_seen))
		return true;
	return counts_from_kernel(sc) && !atomic_load(&sc->rx_eof) &&
	       sys_tcp_read_total(fd, &total) && total >= atomic_load(&sc->tcp_rx) + left;
}

/*
 * A transport that rings nothing over TCP lost the connection (soft SMC-R's
 * last link failed) before the peer said its fence: what TCP has brought is
 * read, then the reset, as if the fence were there; TCP, which knows
 * nothing of the loss, would keep a reader waiting for ever.
 */
void conn_rx_lost_fence(int fd, struct sconn *sc)
{
	uint64_t fence = 0, none = 0;
	int queued = 0;

	if (sc->tp.ops->tcp_doorbells || atomic_load(&sc->lost_fence) || TP(sc, rx_fence, &fence) ||
	    !(TP(sc, peer_state) & TP_PS_ABORT))
		return;
	if (next.ioctl(fd, FIONREAD, &queued) < 0 || queued < 0)
		queued = 0;
	fence = atomic_load(&sc->tcp_rx) + (uint64_t)queued;
	atomic_compare_exchange_strong(&sc->lost_fence, &none, fence + 1);
}

/*
 * The sending side of the same loss: a writer still on TCP (its fence not
 * said) writes into a stream whose reader resets at its own lost fence
 * (conn_rx_lost_fence() at the peer), so its bytes would go nowhere.
 */
bool conn_tx_lost(struct sconn *sc)
{
	uint64_t fence;

	/* every send before the cut-over asks: the rare answer first */
	return !sc->tp.ops->tcp_doorbells && !atomic_load(&sc->tx_cut) &&
	       (TP(sc, peer_state) & TP_PS_ABORT) && !TP(sc, tx_fence, &fence);
}

bool soft_rx_cut_now(int fd, struct sconn *sc)
{
	if (atomic_load_explicit(&sc->rx_cut, memory_order_acquire))
		return true;
	conn_rx_lost_fence(fd, sc);
	/* another process holding the connection (fork, spawn) may have cut it */
	if (!TP(sc, rx_cut_seen) && (!atomic_load(&sc->attached) || !rx_fence_reached(fd, sc)))
		return false;
	sconn_rx_cut_set(fd, sc);
	return true;
}

bool conn_rx_cut_before_wait(int fd, struct sconn *sc)
{
	bool left_to_reader;

	if (!rx_fence_reached(fd, sc))
		return false;
	if (pthread_mutex_trylock(&sc->rx_lock))
		return true;
	if (!atomic_load(&sc->rx_cut) && rx_fence_reached(fd, sc))
		sconn_rx_cut_set(fd, sc);
	left_to_reader = !atomic_load(&sc->rx_cut);
	pthread_mutex_unlock(&sc->rx_lock);
	return left_to_reader;
}

/*
 * Unread data makes the close a reset, as in Linux: the peer's next call
 * gets ECONNRESET, and SO_LINGER 0 makes the kernel send RST as well.
 */
/* True when another process still holds the connection. */
static bool ring_let_go(int fd, struct sconn *sc)
{
	bool locked;

	if (!sconn_mapped(sc) || atomic_load(&sc->let_go))
		return false;
	/* a forked child may use it after us: back to TCP first */
	conn_fork_share_let_go(fd, sc);
	/*
	 * Another process's end (a forked child's copy): nothing of it is ours
	 * to close, and the kernel's socket may carry the holders' stream (it
	 * went back to TCP): not a byte of it is drained here.
	 */
	if (sc->tp.ops->not_ours) {
		atomic_store(&sc->let_go, true);
		return true;
	}
	if (atomic_exchange(&sc->let_go, true))
		return false;
	/* what we read is consumed for the holders that stay (a pidfd_getfd taker too) */
	if (!pthread_mutex_trylock(&sc->rx_lock)) {
		uint32_t wake = 0;

		TP(sc, rx_flush, &wake);
		pthread_mutex_unlock(&sc->rx_lock);
		if (wake)
			soft_ring_bell(fd, sc, wake);
	}
	if (TP(sc, holders_add, -1) > 1)
		return true;
	/*
	 * A thread asleep in a read holds the lock and waits for data that is
	 * not there: no reset, and no waiting for it (a close() from another
	 * thread returns at once, as in Linux).
	 */
	locked = !pthread_mutex_trylock(&sc->rx_lock);
	if (locked)
		TP(sc, resync);
	/* back to TCP, what the RMB holds is the peer's to send again: TCP's close decides */
	if (locked && !conn_back_noted(fd, sc) && TP(sc, readable) > 0) {
		struct linger l = { .l_onoff = 1, .l_linger = 0 };

		TP(sc, abort);
		sys_setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	} else {
		TP(sc, close);
		/* doorbells left in the kernel's queue would make its close a reset */
		if (locked) {
			TP(sc, wait_bells);
			/* another holder may have been the one that cut it over */
			soft_rx_cut_now(fd, sc);
			soft_drain_held(fd, sc);
		}
	}
	if (soft_dump_on())
		dump_cdc(sc);
	if (locked)
		pthread_mutex_unlock(&sc->rx_lock);
	/* back to TCP, now or while we closed: the peer's bytes first, or its reset */
	if (!conn_back_before_fin(fd, sc)) {
		struct linger l = { .l_onoff = 1, .l_linger = 0 };

		TP(sc, abort);
		sys_setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	}
	return false;
}

/* Both ends get ECONNRESET: the ring aborted, the TCP connection reset. */
static void conn_reset(int fd, struct sconn *sc)
{
	static const struct sockaddr unspec = { .sa_family = AF_UNSPEC };

	TP(sc, abort);
	/* the kernel resets a connected TCP socket that connects to AF_UNSPEC */
	next.connect(fd, &unspec, sizeof(unspec));
}

int sconn_back_say(int fd, struct sconn *sc, bool may_wait)
{
	int rc;

	if (!sconn_mapped(sc))
		return -ENOTCONN;
	if (may_wait)
		pthread_mutex_lock(&sc->tx_lock);
	else if (pthread_mutex_trylock(&sc->tx_lock))
		return -EBUSY;
	rc = conn_back_say(fd, sc);
	pthread_mutex_unlock(&sc->tx_lock);
	return rc;
}

void sconn_back_refused(int fd, int rc)
{
	preload_dbg("libsmc-preload: fd %d cannot go back to TCP: %s\n", fd,
		    rc == -EAGAIN ? "the peer did not say in time whether it can" : strerror(-rc));
}

#define BACK_SAY_LOOK_NS 1000000L

static bool say_by(int fd, struct sconn *sc, bool may_wait, bool senders_too, int64_t end)
{
	int rc;

	/* an end that attached before its peer: the peer's first CDC says whether it can */
	while (((rc = sconn_back_say(fd, sc, may_wait)) == -EAGAIN || (senders_too && rc == -EBUSY)) &&
	       soft_now_ns() < end) {
		struct timespec ts = { 0, BACK_SAY_LOOK_NS };

		next.nanosleep(&ts, NULL);
	}
	if (rc)
		sconn_back_refused(fd, rc);
	return rc == 0;
}

bool sconn_back_say_by(int fd, struct sconn *sc, bool may_wait, int64_t end)
{
	return say_by(fd, sc, may_wait, false, end);
}

bool sconn_back_say_until(int fd, struct sconn *sc, int64_t end)
{
	return say_by(fd, sc, false, true, end);
}

bool sconn_back_for(int fd, struct sconn *sc, bool leaving, bool may_wait)
{
	int64_t end = conn_back_deadline();

	return sconn_back_say_by(fd, sc, may_wait, end) && sconn_back_finish(fd, sc, leaving, may_wait, end);
}

/* tx_lock by end (soft_now_ns()'s clock): a writer that took it after our BACK sends what is left itself. */
static bool tx_lock_by(struct sconn *sc, int64_t end)
{
	struct timespec at;
	int64_t left = end - soft_now_ns();

	if (left < 0)
		left = 0;
	clock_gettime(CLOCK_REALTIME, &at);
	at.tv_sec += (time_t)(left / 1000000000);
	at.tv_nsec += (long)(left % 1000000000);
	if (at.tv_nsec >= 1000000000) {
		at.tv_sec++;
		at.tv_nsec -= 1000000000;
	}
	return pthread_mutex_timedlock(&sc->tx_lock, &at) == 0;
}

bool sconn_back_finish(int fd, struct sconn *sc, bool leaving, bool may_wait, int64_t end)
{
	bool told, last;
	int rc;

	if (may_wait) {
		pthread_mutex_lock(&sc->tx_lock);
	} else if (!tx_lock_by(sc, end)) {
		/* that writer held it to the end: done if it sent them */
		if (!atomic_load(&sc->back_tx))
			return false;
		goto sent;
	}
	rc = conn_back_flush_all_by(fd, sc, end);
	pthread_mutex_unlock(&sc->tx_lock);
	if (rc)
		return false;
sent:
	/* a region whose daemon is gone has no row (as sconn_unseen()) */
	told = sc->daemon_epoch == ctl_epoch();
	if (told)
		ctl_fall_back(fd, sc, SMC_SOFT_DECL_BACK);
	if (!leaving || atomic_exchange(&sc->let_go, true))
		return true;
	last = TP(sc, holders_add, -1) <= 1;
	if (told)
		ctl_forget(fd, sc, last);
	return true;
}

/*
 * The program reads and writes the connection as plain TCP.  Before either
 * direction has cut over, both stay on TCP for good (the fences say so to
 * every holder and to the peer); after, the bytes on the ring cannot reach
 * it, and the connection is reset at both ends rather than cut short.
 */
void sconn_unseen(int fd, struct sconn *sc, const char *image, const char *why, bool leaving)
{
	if (!sconn_mapped(sc)) {
		conn_stay_tcp(sc);
		return;
	}
	if (TP(sc, stay_tcp)) {
		atomic_store(&sc->tcp_for_good, true);
		/*
		 * A region whose daemon is gone has no row (and the hand-over
		 * that finds it holds ctl_mu, which telling the daemon takes).
		 */
		bool told = sc->daemon_epoch == ctl_epoch(), last;

		if (told)
			ctl_fall_back(fd, sc, SMC_SOFT_DECL_UNSEEN);
		/* the new image has no part in the ring: the daemon's row goes with the last holder */
		if (!leaving || atomic_exchange(&sc->let_go, true))
			return;
		last = TP(sc, holders_add, -1) <= 1;
		if (told)
			ctl_forget(fd, sc, last);
		return;
	}
	/* cut over: an end that cannot be shared goes back to TCP if it can */
	if (sconn_back_for(fd, sc, leaving, true))
		return;
	preload_err("libsmc-preload: exec of %s: fd %d is on %s and %s: "
		    "the connection is reset\n", image, fd, sc->tp.ops->medium, why);
	conn_reset(fd, sc);
}

bool sconn_fall_back(int fd, struct sconn *sc, uint32_t reason)
{
	if (!sconn_mapped(sc))
		return true;
	if (!TP(sc, stay_tcp))
		return false;
	atomic_store(&sc->tcp_for_good, true);
	ctl_fall_back(fd, sc, reason);
	return true;
}

/* ---- reads and writes the library does not see: stdio, io_uring (1.2, 1.3) ---- */

/*
 * Something past the library may read or write the connection from now on
 * (reason: SMC_SOFT_DECL_STDIO, _URING).  False when a direction has cut
 * over: it can no longer be followed.
 */
static bool conn_past(int fd, struct sconn *sc, uint32_t reason)
{
	uint32_t none = 0;
	int st = atomic_load(&sc->state);

	/* back to TCP, both directions: the kernel's stream, whoever reads it */
	if (atomic_load(&sc->back_tx)) {
		atomic_store(&sc->past, true);
		return true;
	}
	if (atomic_exchange(&sc->past, true))
		return !atomic_load(&sc->tx_cut) && !atomic_load(&sc->rx_cut);
	if (st == SC_NEW || st == SC_ASKED) {
		/* its offer declines, or the reply that comes goes back to TCP with it (ctl.c) */
		atomic_compare_exchange_strong(&sc->decline, &none, reason);
		return true;
	}
	if (st != SC_MAPPED)
		return true;
	preload_dbg("libsmc-preload: fd %d may be used past the library: it stays TCP\n", fd);
	return sconn_fall_back(fd, sc, reason);
}

void conn_stdio_check(int fd, struct sconn *sc)
{
	if (atomic_load_explicit(&sc->past, memory_order_relaxed) ||
	    (atomic_load_explicit(&sc->tx_cut, memory_order_relaxed) &&
	     atomic_load_explicit(&sc->rx_cut, memory_order_relaxed)) ||
	    !fd_names_std(sc))
		return;
	conn_past(fd, sc, SMC_SOFT_DECL_STDIO);
}

void conn_stdio_open(int fd, struct sconn *sc)
{
	/* cut over: an end of this process's own goes back to TCP if it can (soft SMC-R) */
	if (conn_past(fd, sc, SMC_SOFT_DECL_STDIO) || sconn_back_for(fd, sc, false, true))
		return;
	preload_err("libsmc-preload: fdopen of fd %d: it is on %s, where stdio "
		    "cannot follow it: the connection is reset\n", fd, sc->tp.ops->medium);
	conn_reset(fd, sc);
}

void conn_uring_use(int fd, struct sconn *sc)
{
	if (atomic_load_explicit(&sc->past, memory_order_relaxed) &&
	    !atomic_load_explicit(&sc->tx_cut, memory_order_relaxed) &&
	    !atomic_load_explicit(&sc->rx_cut, memory_order_relaxed))
		return;
	if (conn_past(fd, sc, SMC_SOFT_DECL_URING) || sconn_back_for(fd, sc, false, true) ||
	    atomic_exchange(&sc->foreign, true))
		return;
	preload_err("libsmc-preload: io_uring request on fd %d: it is on %s, "
		    "where io_uring cannot follow it: the connection is reset\n", fd, sc->tp.ops->medium);
	conn_reset(fd, sc);
}

void conn_foreign_bytes(int fd, struct sconn *sc)
{
	if (atomic_exchange(&sc->foreign, true))
		return;
	preload_err("libsmc-preload: fd %d: the peer wrote past the library after its "
		    "cut-over to shared memory (stdio on the socket, or a program without "
		    "the library): the connection is reset\n", fd);
	conn_reset(fd, sc);
}

void sconn_release(int fd, struct sconn *sc)
{
	conn_claim_let_go(sc);
	/* the daemon's row goes with the last holder, as the kernel's socket */
	ctl_forget(fd, sc, !ring_let_go(fd, sc));
}

static void exit_let_go(int fd, struct sconn *sc, void *arg)
{
	(void)arg;
	/* a second fd of one connection (dup): it let go at the first */
	if (atomic_load(&sc->let_go))
		return;
	conn_claim_let_go(sc);
	if (!ring_let_go(fd, sc))
		ctl_exit_forget(fd, sc);
}

/*
 * The kernel closes the sockets after us.  The rings hear it first, as from
 * close(), and a connection another process holds too (fork, posix_spawn)
 * stays open for it.  Then the bytes that end with the process (soft
 * SMC-R's send buffers, closed connections' too) go to their peers first,
 * as a TCP socket's would go on after it.
 */
void sconn_process_exit(void)
{
	if (soft_vfork_child())
		return;
	if (atomic_load(&fd_tracked))
		fd_for_each(exit_let_go, NULL);
	transport_linger_all();
}

void sconn_free(struct sconn *sc)
{
	if (atomic_load(&sc->state) == SC_MAPPED)
		TP(sc, unmap);
	conn_claim_let_go(sc);
	conn_stay_tcp(sc);
	pthread_mutex_destroy(&sc->lock);
	pthread_mutex_destroy(&sc->tx_lock);
	pthread_mutex_destroy(&sc->rx_lock);
}

/*
 * Before fork() returns in either process both hold the connection, so that
 * neither writes its ring unlocked while the other does.  A fork() that
 * fails takes the second holder back (hook_spawn.c).
 */
static unsigned forks;

static void fork_holds(int fd, struct sconn *sc, void *arg)
{
	(void)fd;
	(void)arg;
	if (sconn_mapped(sc) && !atomic_load(&sc->let_go) && sc->fork_seen != forks) {
		sc->fork_seen = forks;
		TP(sc, holders_add, 1);
		conn_fork_share_before(sc);
	}
}

void sconn_before_fork(void)
{
	forks++;
	fd_for_each(fork_holds, NULL);
}

static void fork_unholds(int fd, struct sconn *sc, void *arg)
{
	(void)fd;
	(void)arg;
	if (sconn_mapped(sc) && sc->fork_seen == forks) {
		sc->fork_seen = forks - 1;
		TP(sc, holders_add, -1);
		conn_fork_share_failed(sc);
	}
}

void sconn_fork_failed(void)
{
	fd_for_each(fork_unholds, NULL);
}

static void child_holds(int fd, struct sconn *sc, void *arg)
{
	(void)fd;
	(void)arg;
	/* a lock another thread held at fork() is free in the only thread left */
	pthread_mutex_init(&sc->tx_lock, NULL);
	pthread_mutex_init(&sc->rx_lock, NULL);
	pthread_mutex_init(&sc->lock, NULL);
	conn_claim_after_fork_child(sc);
	/* not paired before the fork: the parent's to decline (conn_shared) */
	if (atomic_load(&sc->decline))
		conn_stay_tcp_if_new(sc);
	/*
	 * Asked by the parent (its reply, its negotiation): plain TCP here.  Its
	 * registration is the parent's, which this copy's close or exit must
	 * not delete, nor an execve hand on as a question still out.
	 */
	if (atomic_load(&sc->state) == SC_ASKED) {
		sc->token = 0;
		conn_stay_tcp(sc);
		return;
	}
	/*
	 * An end only the parent can use that is on TCP for good, or went
	 * back to TCP (settle.c): plain TCP here, its registration the parent's.
	 */
	if (sconn_mapped(sc) && sc->tp.ops->one_process &&
	    (atomic_load(&sc->tcp_for_good) || atomic_load(&sc->back_tx))) {
		sc->token = 0;
		conn_stay_tcp(sc);
		return;
	}
	if (sconn_mapped(sc) && transport_after_fork_child(&sc->tp, (int)getppid())) {
		/* another process's (rdma_elsewhere.c): every call meets the reset */
		atomic_store(&sc->tx_cut, true);
		atomic_store(&sc->rx_cut, true);
		/* half way back (no answer in time): the parent's to finish */
		atomic_store(&sc->back_rx, false);
		atomic_store(&sc->back_tx, false);
	}
}

void conn_shared(struct sconn *sc)
{
	uint32_t none = 0;
	int st = atomic_load(&sc->state);

	atomic_store(&sc->shared, true);
	conn_claim_spoil(sc);
	if (st == SC_NEW || st == SC_ASKED)
		atomic_compare_exchange_strong(&sc->decline, &none, SMC_SOFT_DECL_SHARED);
}

void ctl_after_fork_child(void)
{
	fd_for_each(child_holds, NULL);
}

/*
 * SO_ZEROCOPY: its completions come from the kernel's TCP path.  On shared
 * memory it is refused as the kernel's SMC refuses it; a connection not
 * there yet stays TCP (declined), where the kernel sends the completions.
 */
int soft_zerocopy(int fd, struct sconn *sc, const void *val, socklen_t len)
{
	int on = 0, r;

	if (val && len >= (socklen_t)sizeof(on))
		memcpy(&on, val, sizeof(on));
	if (on && sconn_mapped(sc)) {
		errno = EOPNOTSUPP;
		return -1;
	}
	r = next.setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, val, len);
	if (r == 0 && on)
		atomic_store(&sc->decline, SMC_SOFT_DECL_ZEROCOPY);
	return r;
}
