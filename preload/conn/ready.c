/*
 * Readiness of a paired socket as poll() reports it: each direction that has
 * cut over is decided by its ring, the other by the kernel.
 */
#include <poll.h>
#include <sched.h>

#include "conn.h"

static bool back_unanswered(struct sconn *sc)
{
	return !atomic_load(&sc->back_tx) && TP(sc, back_state) != TP_BACK_DONE;
}

unsigned soft_ready(int fd, struct sconn *sc, unsigned *mode)
{
	unsigned ev = 0, st;

	*mode = 0;
	conn_stdio_check(fd, sc);
	conn_fork_use(fd, sc);
	if (!sconn_mapped(sc))
		return 0;
	/* back to TCP: the kernel's; what the peer did not consume goes meanwhile (back.c) */
	if (conn_back_noted(fd, sc)) {
		conn_back_flush_try(fd, sc);
		/* until the peer answers, no send can go (its answer rings: soft_arm()) */
		if (back_unanswered(sc))
			*mode = SOFT_OUT_RING;
		return 0;
	}
	sconn_attach_late(sc);
	st = TP(sc, peer_state);
	if (soft_rx_cut_now(fd, sc)) {
		long avail = TP(sc, readable);

		*mode |= SOFT_IN_RING;
		if (avail != 0)
			ev |= POLLIN;
		if (st & (TP_PS_DONE_WRITING | TP_PS_CLOSED) || atomic_load(&sc->rx_eof))
			ev |= POLLIN | POLLRDHUP;
		if (st & TP_PS_ABORT || atomic_load(&sc->rx_err))
			ev |= POLLIN | POLLERR | POLLHUP;
	}
	if (atomic_load_explicit(&sc->tx_cut, memory_order_acquire)) {
		*mode |= SOFT_OUT_RING;
		if (TP(sc, space) != 0 || st & (TP_PS_DONE_READING | TP_PS_CLOSED) ||
		    atomic_load(&sc->closed_wr))
			ev |= POLLOUT;
		if (st & TP_PS_ABORT)
			ev |= POLLOUT | POLLERR;
	}
	return ev;
}

bool soft_arm(int fd, struct sconn *sc, unsigned want, uint32_t bell)
{
	bool ready = false;
	uint32_t wake = 0;

	if (!sconn_mapped(sc))
		return false;
	if (conn_back_noted(fd, sc))
		return (want & POLLOUT) && back_unanswered(sc) && TP(sc, tx_sleep_begin, 1, bell);
	if (want & POLLIN) {
		if (!atomic_load(&sc->rx_cut)) {
			/* so that the producer rings once it has cut over */
			TP(sc, rx_want_bell);
			/*
			 * A producer that cut over before it saw that rang no
			 * one, and TCP, read up to its fence, stays quiet: we
			 * cut over here and wait on the ring.
			 */
			if (conn_rx_cut_before_wait(fd, sc))
				ready = true;
		}
		/*
		 * A transport whose producer rings no doorbell over TCP tells
		 * its fence itself: it rings our bell before the cut-over too.
		 */
		if (atomic_load(&sc->rx_cut) || !sc->tp.ops->tcp_doorbells) {
			ready |= TP(sc, rx_sleep_begin, &wake, bell);
			if (wake)
				soft_ring_bell(fd, sc, wake);
		}
	}
	if ((want & POLLOUT) && atomic_load(&sc->tx_cut))
		ready |= TP(sc, tx_sleep_begin, 1, bell);
	if (bell == TP_BELL_TCP &&
	    (atomic_load(&sc->rx_cut) || atomic_load(&sc->tx_cut) || !sc->tp.ops->tcp_doorbells))
		bell_wanted();
	return ready;
}

void soft_disarm(struct sconn *sc)
{
	if (!sconn_mapped(sc))
		return;
	atomic_fetch_add_explicit(&sc->disarms, 1, memory_order_relaxed);
	TP(sc, rx_sleep_end);
	TP(sc, tx_sleep_end);
}

/* Whether the peer last ran on another CPU: only then a waiter spins. */
bool soft_peer_elsewhere(struct sconn *sc)
{
	int cpu;
	uint32_t peer;

	/* only a ring can become ready while we spin */
	if (!soft_cfg.spin_ns || !soft_cfg.multi_cpu || !sconn_mapped(sc) ||
	    !(atomic_load(&sc->rx_cut) || atomic_load(&sc->tx_cut)) || soft_cpus_crowded())
		return false;
	cpu = soft_note_cpu(sc);
	peer = TP(sc, peer_cpu, true);
	return cpu >= 0 && peer != (uint32_t)cpu + 1;
}
