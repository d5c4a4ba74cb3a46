/* A tracked connection's shared memory: attach, cut-over, release. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "preload.h"
#include "soft.h"
#include "reg.h"

bool sconn_attach(struct sconn *sc, int shm_fd, int side, bool inherited)
{
	bool ok = false;
	int rc;

	pthread_mutex_lock(&sc->lock);
	if (atomic_load(&sc->state) == SC_ASKED) {
		rc = dmb_map(shm_fd, side, &sc->dmb);
		if (rc) {
			preload_dbg("libsmc-preload: soft region refused: %d\n", rc);
		} else {
			/* an inherited end counts the holders it was passed with */
			if (!inherited)
				atomic_store(&sc->dmb.tx.ctrl->holders, 1);
			atomic_store_explicit(&sc->state, SC_MAPPED, memory_order_seq_cst);
			preload_dbg("libsmc-preload: paired as side %d\n", side);
			ok = true;
		}
	}
	pthread_mutex_unlock(&sc->lock);
	return ok;
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
	atomic_store_explicit(&sc->dmb.rx.ctrl->attached, 1, memory_order_seq_cst);
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
	if (sconn_mapped(sc) &&
	    atomic_load_explicit(&sc->dmb.tx.ctrl->fence, memory_order_acquire) & DMB_FENCE_VALID) {
		atomic_store_explicit(&sc->tx_cut, true, memory_order_release);
		return true;
	}
	if (!sconn_mapped(sc) || atomic_load_explicit(&sc->plain_tx, memory_order_seq_cst) ||
	    !atomic_load_explicit(&sc->dmb.tx.ctrl->attached, memory_order_acquire))
		return false;
	sent = atomic_load(&sc->tcp_tx);
	/* held by several processes (fork, spawn): what the others wrote counts too */
	if (atomic_load_explicit(&sc->dmb.tx.ctrl->hold_gen, memory_order_relaxed) &&
	    !sys_tcp_sent_total(fd, sc->role, &sent))
		return false;
	atomic_store_explicit(&sc->dmb.tx.ctrl->fence, DMB_FENCE_VALID | sent,
			      memory_order_seq_cst);
	sys_setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	atomic_store_explicit(&sc->tx_cut, true, memory_order_release);
	atomic_fetch_add_explicit(&pstats->fence_bytes, sent, memory_order_relaxed);
	return true;
}

/*
 * Unread data makes the close a reset, as in Linux: the peer's next call
 * gets ECONNRESET, and SO_LINGER 0 makes the kernel send RST as well.
 */
/* True when another process still holds the connection. */
static bool ring_let_go(int fd, struct sconn *sc)
{
	bool locked;

	if (!sconn_mapped(sc) || atomic_exchange(&sc->let_go, true))
		return false;
	if (dmb_holders_add(&sc->dmb, -1) > 1)
		return true;
	/*
	 * A thread asleep in a read holds the lock and waits for data that is
	 * not there: no reset, and no waiting for it (a close() from another
	 * thread returns at once, as in Linux).
	 */
	locked = !pthread_mutex_trylock(&sc->rx_lock);
	if (locked)
		dmb_resync(&sc->dmb);
	if (locked && dmb_readable(&sc->dmb) > 0) {
		struct linger l = { .l_onoff = 1, .l_linger = 0 };

		dmb_abort(&sc->dmb);
		sys_setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	} else {
		dmb_close(&sc->dmb);
		/* doorbells left in the kernel's queue would make its close a reset */
		if (locked) {
			dmb_wait_bells(&sc->dmb);
			/* another holder may have been the one that cut it over */
			soft_rx_cut_now(fd, sc);
			soft_drain_held(fd, sc);
		}
	}
	if (soft_dump_on())
		dump_cdc(sc);
	if (locked)
		pthread_mutex_unlock(&sc->rx_lock);
	return false;
}

void sconn_release(int fd, struct sconn *sc)
{
	/* the daemon's row goes with the last holder, as the kernel's socket */
	ctl_forget(fd, sc, !ring_let_go(fd, sc));
}

static void exit_let_go(int fd, struct sconn *sc, void *arg)
{
	(void)arg;
	if (!ring_let_go(fd, sc))
		ctl_exit_forget(fd, sc);
}

/*
 * The kernel closes the sockets after us.  The rings hear it first, as from
 * close(), and a connection another process holds too (fork, posix_spawn)
 * stays open for it.
 */
void sconn_process_exit(void)
{
	if (atomic_load(&fd_tracked) && !soft_vfork_child())
		fd_for_each(exit_let_go, NULL);
}

void sconn_free(struct sconn *sc)
{
	if (atomic_load(&sc->state) == SC_MAPPED)
		dmb_unmap(&sc->dmb);
	atomic_store(&sc->state, SC_TCP);
	pthread_mutex_destroy(&sc->lock);
	pthread_mutex_destroy(&sc->tx_lock);
	pthread_mutex_destroy(&sc->rx_lock);
}

/*
 * Before fork() returns in either process both hold the connection, so that
 * neither writes its ring unlocked while the other does.  A fork() that
 * fails takes the second holder back (spawn.c).
 */
static unsigned forks;

static void fork_holds(int fd, struct sconn *sc, void *arg)
{
	(void)fd;
	(void)arg;
	if (sconn_mapped(sc) && !atomic_load(&sc->let_go) && sc->fork_seen != forks) {
		sc->fork_seen = forks;
		dmb_holders_add(&sc->dmb, 1);
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
		dmb_holders_add(&sc->dmb, -1);
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
	/* not paired before the fork: the parent's to decline (ctl_shared) */
	if (atomic_load(&sc->state) == SC_NEW && atomic_load(&sc->decline))
		atomic_store(&sc->state, SC_TCP);
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
