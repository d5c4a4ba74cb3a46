/*
 * Back to TCP (doc/soft-roce.md section 4): an end that another process is
 * to hold leaves RDMA, since its queue pairs stay with this one.  Once our
 * end said BACK its RMB is read no more: the peer sends what we did not
 * consume by TCP, so the TCP stream from where our reader stands is the
 * rest of the stream.  Once the peer said it too, we send by TCP what it
 * did not consume (our transport kept it: BACK_OK), then the program's
 * bytes.
 */
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>

#include "conn.h"
#include "reg.h"

int conn_back_say(int fd, struct sconn *sc)
{
	int rc;

	if (!sconn_mapped(sc))
		return -ENOTCONN;
	atomic_store(&sc->back_ours, true);
	rc = TP(sc, back_say);
	if (!rc)
		conn_back_noted(fd, sc);
	else if (!(TP(sc, back_state) & TP_BACK_SAID))
		atomic_store(&sc->back_ours, false);
	return rc;
}

bool conn_back_noted(int fd, struct sconn *sc)
{
	int low;

	if (conn_back_reads(sc))
		return true;
	if (!sconn_mapped(sc) || !(TP(sc, back_state) & TP_BACK_SAID))
		return false;
	if (atomic_exchange(&sc->back_rx, true))
		return true;
	if (!atomic_load(&sc->back_ours))
		atomic_store(&sc->back_untold, true);
	/* the kernel's mark went to 1 at the cut-over (sconn_rx_cut_set()): the program's again */
	low = atomic_load(&sc->rcvlowat);
	if (low > 1 && atomic_load(&sc->rx_cut))
		sys_setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &low, sizeof(low));
	preload_dbg("libsmc-preload: fd %d goes back to TCP\n", fd);
	return true;
}

void conn_back_report(int fd, struct sconn *sc)
{
	if (atomic_load_explicit(&sc->back_untold, memory_order_relaxed) &&
	    atomic_exchange(&sc->back_untold, false))
		ctl_fall_back_peer(fd, sc, SMC_SOFT_DECL_BACK);
}

/*
 * The peer's BACK, which its progress thread says in answer to ours: a
 * round trip.  Looked for every BACK_LOOK_NS; a connection that fails
 * meanwhile (no link left) ends the wait with its reset, a peer that does
 * not answer (stopped, or failed otherwise) after BACK_GIVE_UP_MS; so
 * does the wait for room in the kernel before a FIN.
 */
#define BACK_LOOK_NS 1000000L
#define BACK_GIVE_UP_MS 5000

int64_t conn_back_deadline(void)
{
	return soft_now_ns() + BACK_GIVE_UP_MS * 1000000LL;
}

/* end: the deadline (conn_back_deadline()), 0 for one from the first look */
static int wait_heard(struct sconn *sc, bool nonblock, int64_t end)
{
	while (TP(sc, back_state) != TP_BACK_DONE) {
		struct timespec ts = { 0, BACK_LOOK_NS };

		if (TP(sc, peer_state) & TP_PS_ABORT)
			return -ECONNRESET;
		if (nonblock)
			return -EAGAIN;
		if (!end)
			end = conn_back_deadline();
		else if (soft_now_ns() >= end)
			return -ETIMEDOUT;
		next.nanosleep(&ts, NULL);
	}
	return 0;
}

#define BACK_PIECE 16384

int conn_back_flush(int fd, struct sconn *sc, bool nonblock)
{
	char buf[BACK_PIECE];
	int rc;

	if (atomic_load(&sc->back_tx))
		return 0;
	if ((rc = wait_heard(sc, nonblock, 0)))
		return rc;
	for (;;) {
		ssize_t n = TP(sc, back_pending, buf, sizeof(buf)), w;

		if (n < 0)
			return (int)n;
		if (!n)
			break;
		w = next.send(fd, buf, (size_t)n, MSG_NOSIGNAL | (nonblock ? MSG_DONTWAIT : 0));
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EPIPE || errno == ECONNRESET || errno == ENOTCONN)) {
			/* TCP is over too: what was left goes nowhere, the program's sends meet the kernel's error */
			rc = -errno;
			atomic_store(&sc->back_tx, true);
			return rc;
		}
		if (w < 0)
			return -errno;
		TP(sc, back_sent, (size_t)w);
	}
	atomic_store(&sc->back_tx, true);
	return 0;
}

bool conn_back_waits_room(struct sconn *sc)
{
	return conn_back_reads(sc) && !atomic_load(&sc->back_tx) && sconn_mapped(sc) &&
	       TP(sc, back_state) == TP_BACK_DONE;
}

void conn_back_flush_try(int fd, struct sconn *sc)
{
	if (atomic_load(&sc->back_tx) || pthread_mutex_trylock(&sc->tx_lock))
		return;
	conn_back_flush(fd, sc, true);
	pthread_mutex_unlock(&sc->tx_lock);
}

/*
 * A blocking read back on TCP: while the bytes its peer did not consume
 * wait for room in the kernel (our end may answer nothing else, and a
 * request-response peer would wait for ever), it sends them as room comes,
 * and reads once TCP has bytes for it.
 */
#define BACK_READ_LOOK_MS 100

void conn_back_before_read(int fd, struct sconn *sc)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN | POLLOUT };

		conn_back_flush_try(fd, sc);
		if (atomic_load(&sc->back_tx) || TP(sc, back_state) != TP_BACK_DONE)
			return;
		if (next.poll(&p, 1, BACK_READ_LOOK_MS) < 0 || (p.revents & ~POLLOUT))
			return;
	}
}

ssize_t conn_back_send(int fd, struct sconn *sc, const struct iovec *iov, int cnt, int flags,
		       bool nonblock)
{
	struct msghdr mh = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)cnt };
	int rc = conn_back_flush(fd, sc, nonblock || (flags & MSG_DONTWAIT));

	if (rc) {
		if (rc == -EPIPE && !(flags & MSG_NOSIGNAL))
			pthread_kill(pthread_self(), SIGPIPE);
		errno = -rc;
		return -1;
	}
	return next.sendmsg(fd, &mh, flags);
}

/*
 * Before the FIN (shutdown, close, exit, another program's hand-over):
 * the bytes the peer did not consume go whatever O_NONBLOCK says, as the
 * kernel's would after a close; given up after BACK_GIVE_UP_MS without
 * an answer or without room.
 */
int conn_back_flush_all_by(int fd, struct sconn *sc, int64_t end)
{
	int rc;

	if (atomic_load(&sc->back_tx))
		return 0;
	if ((rc = wait_heard(sc, false, end)))
		return rc;
	while ((rc = conn_back_flush(fd, sc, true)) == -EAGAIN || rc == -EWOULDBLOCK) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		int64_t left_ms = end ? (end - soft_now_ns()) / 1000000 : BACK_GIVE_UP_MS;

		if (left_ms <= 0 || next.poll(&p, 1, (int)left_ms) <= 0)
			return -ETIMEDOUT;
	}
	return rc;
}

int conn_back_flush_all(int fd, struct sconn *sc)
{
	return conn_back_flush_all_by(fd, sc, 0);
}

bool conn_back_before_fin(int fd, struct sconn *sc)
{
	int rc;

	if (!conn_back_noted(fd, sc) || atomic_load(&sc->back_tx))
		return true;
	if (pthread_mutex_trylock(&sc->tx_lock))
		return false;
	rc = conn_back_flush_all(fd, sc);
	pthread_mutex_unlock(&sc->tx_lock);
	return rc == 0;
}
