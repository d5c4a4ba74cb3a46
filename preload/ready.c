/*
 * Readiness of a paired socket as poll() reports it: each direction that has
 * cut over is decided by its ring, the other by the kernel.
 */
#include <poll.h>
#include <sched.h>

#include "soft.h"

/*
 * The TCP stream was read up to the peer's fence: here, or by another holder
 * of the connection (fork, spawn), which marked its cut-over or, if it read
 * the last bytes before the fence came, left only the kernel's count.
 */
static bool rx_fence_reached(int fd, struct sconn *sc)
{
	uint64_t f = atomic_load_explicit(&sc->dmb.rx.ctrl->fence, memory_order_seq_cst), total;

	if (!(f & DMB_FENCE_VALID))
		return false;
	if (atomic_load(&sc->tcp_rx) >= (f & ~DMB_FENCE_VALID) ||
	    atomic_load_explicit(&sc->dmb.rx.ctrl->cons_cut, memory_order_acquire))
		return true;
	return atomic_load_explicit(&sc->dmb.tx.ctrl->hold_gen, memory_order_relaxed) &&
	       !atomic_load(&sc->rx_eof) && sys_tcp_read_total(fd, &total) &&
	       total >= (f & ~DMB_FENCE_VALID);
}

bool soft_rx_cut_now(int fd, struct sconn *sc)
{
	if (atomic_load_explicit(&sc->rx_cut, memory_order_acquire))
		return true;
	/* another process holding the connection (fork, spawn) may have cut it */
	if (!atomic_load_explicit(&sc->dmb.rx.ctrl->cons_cut, memory_order_acquire) &&
	    (!atomic_load(&sc->attached) || !rx_fence_reached(fd, sc)))
		return false;
	sconn_rx_cut_set(sc);
	return true;
}

unsigned soft_ready(int fd, struct sconn *sc, unsigned *mode)
{
	unsigned ev = 0, st;

	*mode = 0;
	if (!sconn_mapped(sc))
		return 0;
	sconn_attach_late(sc);
	st = dmb_peer_state(&sc->dmb);
	if (soft_rx_cut_now(fd, sc)) {
		long avail = dmb_readable(&sc->dmb);

		*mode |= SOFT_IN_RING;
		if (avail != 0)
			ev |= POLLIN;
		if (st & (DMB_CF_DONE_WRITING | DMB_CF_CLOSED) || atomic_load(&sc->rx_eof))
			ev |= POLLIN | POLLRDHUP;
		if (st & DMB_CF_ABORT || atomic_load(&sc->rx_err))
			ev |= POLLIN | POLLERR | POLLHUP;
	}
	if (atomic_load_explicit(&sc->tx_cut, memory_order_acquire)) {
		*mode |= SOFT_OUT_RING;
		if (dmb_space(&sc->dmb) != 0 || st & (DMB_CF_DONE_READING | DMB_CF_CLOSED) ||
		    atomic_load(&sc->closed_wr))
			ev |= POLLOUT;
		if (st & DMB_CF_ABORT)
			ev |= POLLOUT | POLLERR;
	}
	return ev;
}

/* Cut the receive direction over now, if no reader holds it: whether it is. */
static bool rx_cut_now(int fd, struct sconn *sc)
{
	if (pthread_mutex_trylock(&sc->rx_lock))
		return false;
	if (!atomic_load(&sc->rx_cut) && rx_fence_reached(fd, sc))
		sconn_rx_cut_set(sc);
	pthread_mutex_unlock(&sc->rx_lock);
	return atomic_load(&sc->rx_cut);
}

bool soft_arm(int fd, struct sconn *sc, unsigned want)
{
	bool ready = false, wake = false;

	if (!sconn_mapped(sc))
		return false;
	if (want & POLLIN) {
		if (!atomic_load(&sc->rx_cut)) {
			/* so that the producer rings once it has cut over */
			atomic_store_explicit(&sc->dmb.rx.ctrl->cons_sleeping, 1,
					      memory_order_seq_cst);
			/*
			 * A producer that cut over before it saw that rang no
			 * one, and TCP, read up to its fence, stays quiet: we
			 * cut over here and wait on the ring.
			 */
			if (rx_fence_reached(fd, sc) && !rx_cut_now(fd, sc))
				ready = true;  /* a reader has the lock: it will */
		}
		if (atomic_load(&sc->rx_cut)) {
			ready |= dmb_rx_sleep_begin(&sc->dmb, &wake);
			if (wake)
				soft_ring_bell(fd, sc);
		}
	}
	if ((want & POLLOUT) && atomic_load(&sc->tx_cut))
		ready |= dmb_tx_sleep_begin(&sc->dmb, 1);
	return ready;
}

void soft_disarm(struct sconn *sc)
{
	if (!sconn_mapped(sc))
		return;
	dmb_rx_sleep_end(&sc->dmb);
	dmb_tx_sleep_end(&sc->dmb);
}

/* Whether the peer last ran on another CPU: only then a waiter spins. */
bool soft_peer_elsewhere(struct sconn *sc)
{
	int cpu;
	uint32_t peer;

	/* only a ring can become ready while we spin */
	if (!soft_cfg.spin_ns || !soft_cfg.multi_cpu || !sconn_mapped(sc) ||
	    !(atomic_load(&sc->rx_cut) || atomic_load(&sc->tx_cut)))
		return false;
	cpu = soft_note_cpu(sc);
	peer = atomic_load_explicit(&sc->dmb.rx.ctrl->prod_cpu, memory_order_relaxed);
	return cpu >= 0 && peer != (uint32_t)cpu + 1;
}
