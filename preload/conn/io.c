/*
 * The data path of a tracked socket: TCP until the direction is cut over,
 * then the ring; blocking waits sleep in the kernel on the TCP socket itself
 * (doorbell bytes, FIN, RST), so timeouts, signals and peer death behave as
 * the kernel makes them behave.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/single_threaded.h>
#include <sys/socket.h>
#include <time.h>

#include "conn.h"

#define IOV_CHUNK 64
#define DRAIN_BUF 256
#define DRAIN_QUIET 64         /* empty nonblocking reads between two looks at TCP */

/* With one thread there is no one to serialise against (see fd_hold()). */
static inline void sc_lock(pthread_mutex_t *m)
{
	if (!__libc_single_threaded)
		pthread_mutex_lock(m);
}

static inline void sc_unlock(pthread_mutex_t *m)
{
	if (!__libc_single_threaded)
		pthread_mutex_unlock(m);
}

/* Up to max entries of iov after skipping skip bytes, at most limit bytes. */
static int iov_window(const struct iovec *iov, int cnt, size_t skip, size_t limit,
		      struct iovec *out, int max)
{
	int n = 0;

	for (int i = 0; i < cnt && n < max && limit; i++) {
		size_t len = iov[i].iov_len;

		if (skip >= len) {
			skip -= len;
			continue;
		}
		out[n].iov_base = (char *)iov[i].iov_base + skip;
		out[n].iov_len = len - skip;
		skip = 0;
		if (out[n].iov_len > limit)
			out[n].iov_len = limit;
		limit -= out[n].iov_len;
		n++;
	}
	return n;
}

size_t iov_total(const struct iovec *iov, int cnt)
{
	size_t t = 0;

	for (int i = 0; i < cnt; i++) {
		if (iov[i].iov_len > SSIZE_MAX - t)
			return SSIZE_MAX;
		t += iov[i].iov_len;
	}
	return t;
}

/* One buffer through send()/recv(): what the application called, usually. */
/*
 * Without flags, read and write: the system calls every program may make,
 * also inside a seccomp sandbox that allows no recvfrom or sendto (sshd's
 * pre-authentication child).
 */
static ssize_t tcp_sendv(int fd, const struct iovec *iov, int cnt, int flags)
{
	struct msghdr mh = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)cnt };

	if (!flags)
		return cnt == 1 ? next.write(fd, iov[0].iov_base, iov[0].iov_len)
				: next.writev(fd, iov, cnt);
	if (cnt == 1)
		return next.send(fd, iov[0].iov_base, iov[0].iov_len, flags);
	return next.sendmsg(fd, &mh, flags);
}

static ssize_t tcp_recvv(int fd, const struct iovec *iov, int cnt, int flags)
{
	struct msghdr mh = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)cnt };

	if (!flags)
		return cnt == 1 ? next.read(fd, iov[0].iov_base, iov[0].iov_len)
				: next.readv(fd, iov, cnt);
	if (cnt == 1)
		return next.recv(fd, iov[0].iov_base, iov[0].iov_len, flags);
	return next.recvmsg(fd, &mh, flags);
}

/*
 * Whether another process may have changed O_NONBLOCK since we last read it:
 * on the ring, while it holds the end with us, or once after the holders
 * changed (shared by our doing, or taken with pidfd_getfd); without a ring,
 * once we shared it.
 */
static bool nonblock_stale(struct sconn *sc)
{
	uint32_t gen;

	if (!sconn_mapped(sc))
		return atomic_load_explicit(&sc->shared, memory_order_relaxed);
	gen = TP(sc, hold_gen);
	if (TP(sc, holders) <= 1 && gen == atomic_load_explicit(&sc->nonblock_gen, memory_order_relaxed))
		return false;
	atomic_store_explicit(&sc->nonblock_gen, gen, memory_order_relaxed);
	return true;
}

static bool nonblocking(int fd, struct sconn *sc, int flags)
{
	int fl = atomic_load_explicit(&sc->nonblock, memory_order_relaxed);

	if (flags & MSG_DONTWAIT)
		return true;
	if (fl < 0 || (nonblock_stale(sc) && !soft_sandboxed())) {
		fl = next.fcntl(fd, F_GETFL);
		fl = fl >= 0 && (fl & O_NONBLOCK);
		atomic_store_explicit(&sc->nonblock, fl, memory_order_relaxed);
	}
	return fl;
}

bool soft_nonblocking(int fd, struct sconn *sc)
{
	return nonblocking(fd, sc, 0);
}

static int bucket(size_t len)
{
	int b = 0;

	if (!len)
		return 0;
	for (size_t v = (len - 1) >> 13; v; v >>= 1)
		b++;
	return b > SOFT_PSTATS_BUCKETS - 1 ? SOFT_PSTATS_BUCKETS - 1 : b;
}

/*
 * Relaxed load and store, not an atomic add: the counters are statistics,
 * and concurrent threads of one process may lose an increment rarely, where
 * a locked add on every call would cost more than the ring copy of 64 bytes.
 */
static inline void bump(_Atomic uint64_t *c, uint64_t n)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

/* The counters of sc's SMC type: soft SMC-R's or soft SMC-D's. */
static struct soft_pstats_io *io_of(struct sconn *sc)
{
	const struct transport_ops *ops = sc->tp.ops;   /* NULL until mapped */

	return &pstats->io[ops && ops->smcr ? SOFT_PSTATS_R : SOFT_PSTATS_D];
}

static void count(struct sconn *sc, bool tx, size_t want, ssize_t rc)
{
	struct soft_pstats_io *io = io_of(sc);

	if (tx) {
		bump(&io->tx_cnt, 1);
		if (rc > 0) {
			bump(&io->tx_bytes, (uint64_t)rc);
			bump(&io->tx_pd[bucket(want)], 1);
		}
	} else {
		bump(&io->rx_cnt, 1);
		if (rc > 0) {
			bump(&io->rx_bytes, (uint64_t)rc);
			bump(&io->rx_pd[bucket((size_t)rc)], 1);
		}
	}
}

/* The state after collecting a pending PAIR reply. */
static int current_state(struct sconn *sc)
{
	int st = atomic_load_explicit(&sc->state, memory_order_acquire);

	if (st == SC_ASKED) {
		ctl_poll();
		st = atomic_load_explicit(&sc->state, memory_order_acquire);
	}
	return st;
}

void soft_ring_bell(int fd, struct sconn *sc, uint32_t how)
{
	bool cut;
	int saved;

	sc_lock(&sc->tx_lock);
	cut = sconn_tx_try_cut(fd, sc);
	sc_unlock(&sc->tx_lock);
	if (!cut)
		return;
	if (bell_ring(how)) {
		atomic_fetch_add_explicit(&pstats->bells_tx, 1, memory_order_relaxed);
		return;
	}
	if (!TP(sc, bell_begin))
		return;
	saved = errno;
	errno = 0;
	if (sys_bell(fd))
		atomic_fetch_add_explicit(&pstats->doorbells_tx, 1, memory_order_relaxed);
	else if (errno == ECONNRESET || errno == EPIPE)
		/* its send took the kernel's error: the data path must still see it */
		atomic_store(errno == ECONNRESET ? &sc->rx_err : &sc->tx_err, errno);
	errno = saved;
	TP(sc, bell_end);
}

/* Doorbell bytes read from TCP after the fence. */
static void bells_read(int fd, struct sconn *sc, size_t n)
{
	atomic_fetch_add_explicit(&pstats->doorbells_rx, n, memory_order_relaxed);
	if (!TP(sc, tcp_bells_read, (uint32_t)n))
		conn_foreign_bytes(fd, sc);
}

/*
 * The peer's FIN came over TCP.  A ring's producer closes it after its last
 * byte is there; an RDMA peer's last bytes and its CLOSED travel beside TCP
 * and may come after the FIN: they are waited for, bounded (a peer that
 * died sends none).
 */
#define FIN_GRACE_NS 1000000000LL

/* True when the stream may end here: the peer said so, or nothing came in time. */
static bool fin_grace(struct sconn *sc)
{
	int64_t end;

	if (!sconn_mapped(sc) || sc->tp.ops->tcp_doorbells)
		return true;
	end = soft_now_ns() + FIN_GRACE_NS;
	while (!(TP(sc, peer_state) & TP_PS_ENDED)) {
		struct timespec ts = { 0, 5000000 };

		/* bytes first: the reader takes them, the FIN stays for later */
		if (TP(sc, readable) > 0)
			return false;
		if (soft_now_ns() >= end)
			return true;
		TP(sc, rx_wait, &ts);
	}
	return true;
}

static void tcp_fin_seen(struct sconn *sc)
{
	if (fin_grace(sc))
		atomic_store(&sc->rx_eof, true);
}

/*
 * How much a drain may take: all it can, or on a transport that can go
 * back to TCP only the bytes that were there before our end's BACK was
 * looked for (after it they are the stream's, back.c).  0: none.
 */
static size_t drain_room(int fd, struct sconn *sc, char *buf, size_t size)
{
	ssize_t n;

	if (conn_back_reads(sc))
		return 0;
	if (sc->tp.ops->tcp_doorbells || soft_sandboxed())
		return size;
	n = next.recv(fd, buf, size, MSG_PEEK | MSG_DONTWAIT);
	if ((n > 0 && conn_back_noted(fd, sc)) || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)))
		return 0;
	return n > 0 ? (size_t)n : size;
}

/* With rx_lock held and rx cut over: read the doorbells that wait. */
static void drain_locked(int fd, struct sconn *sc)
{
	char buf[DRAIN_BUF];
	ssize_t n;

	do {
		size_t room = drain_room(fd, sc, buf, sizeof(buf));

		if (!room)
			return;
		n = sys_drain(fd, buf, room);
		if (n > 0)
			bells_read(fd, sc, (size_t)n);
	} while (n == (ssize_t)sizeof(buf));
	if (n == 0)
		tcp_fin_seen(sc);
	else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
		atomic_store(&sc->rx_err, errno);
}

void soft_drain_held(int fd, struct sconn *sc)
{
	int saved = errno;

	if (atomic_load(&sc->rx_cut))
		drain_locked(fd, sc);
	errno = saved;
}

/*
 * The doorbells of a connection several processes hold wake all of them:
 * one that only waits for room to send leaves them to those that read,
 * which may be asleep in the kernel for exactly this byte.
 */
bool soft_may_drain(struct sconn *sc, bool wants_in)
{
	return wants_in || TP(sc, holders) <= 1;
}

void soft_drain(int fd, struct sconn *sc)
{
	int saved = errno;

	if (pthread_mutex_trylock(&sc->rx_lock))
		return;
	if (atomic_load(&sc->rx_cut))
		drain_locked(fd, sc);
	pthread_mutex_unlock(&sc->rx_lock);
	errno = saved;
}

/* ---- send ---- */

static bool tx_space(struct sconn *sc)
{
	return TP(sc, space) != 0;
}

/*
 * Wait for room, tx_lock not held (Linux, too, lets other senders in while
 * one waits for memory).  *deadline: SO_SNDTIMEO's end for the whole call
 * in ms, 0 until the first wait, -1 for none.  0, or -errno.
 *
 * The wait is a poll for the doorbell, but a thread blocked in recv() on the
 * same socket may take that byte first: so the poll also wakes every
 * WAIT_SPACE_MS to look at the ring.
 */
#define WAIT_SPACE_MS 10

static int wait_space(int fd, struct sconn *sc, int64_t *deadline)
{
	struct timeval tv = { 0 };
	socklen_t len = sizeof(tv);
	struct pollfd p[3] = { { .fd = fd, .events = POLLIN }, { .fd = -1, .events = POLLIN },
			       { .fd = -1, .events = POLLIN } };
	int timeout = WAIT_SPACE_MS, rc, err = 0;
	struct tp_drive drive;
	bool driving, lookagain;
	unsigned mark;
	uint32_t bell;

	if (soft_spin(sc, tx_space, false))
		return 0;
	bell = bell_wait_begin(&p[1].fd);
	if (bell == TP_BELL_TCP)
		bell_wanted();
	/*
	 * Without a bell, nothing wakes a writer on a transport without TCP
	 * doorbells: it looks again after a nap, not at once (a writer that
	 * spun so on one CPU kept the device's own work from running), and
	 * reads the daemon's replies, so that its bell's id comes.
	 */
	lookagain = bell == TP_BELL_TCP && !sc->tp.ops->tcp_doorbells;
	if (lookagain)
		ctl_poll();
	if (TP(sc, tx_sleep_begin, 1, bell) && (!lookagain || tx_space(sc))) {
		TP(sc, tx_sleep_end);
		bell_wait_end(p[1].fd, false);
		return 0;
	}
	atomic_fetch_add_explicit(&pstats->sleeps, 1, memory_order_relaxed);
	if (!*deadline) {
		*deadline = -1;
		if (!next.getsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, &len) && (tv.tv_sec || tv.tv_usec))
			*deadline = soft_now_ns() / 1000000 + tv.tv_sec * 1000 + tv.tv_usec / 1000;
	}
	if (*deadline > 0) {
		int64_t left = *deadline - soft_now_ns() / 1000000;

		if (left <= 0) {
			TP(sc, tx_sleep_end);
			bell_wait_end(p[1].fd, false);
			return -EAGAIN;
		}
		if (left < timeout)
			timeout = (int)left;
	}
	if (atomic_load(&sc->rx_eof) || lookagain)
		/* readable for good, or no bell: a short nap instead of a spinning poll */
		timeout = 1;
	mark = sig_norestart_mark();
	/*
	 * Room comes with the peer's CDC or our completions: taken here where
	 * they can be, first what completed before the channel was ours (and
	 * the channel armed for what comes next), as a reader's drive does.
	 */
	driving = TP(sc, drive_begin, false, bell, &drive);
	if (driving) {
		TP(sc, drive_take, &drive, false);
		p[2].fd = drive.fd;
	}
	rc = driving && tx_space(sc) ? 0 : next.poll(p, 3, timeout);
	if (driving) {
		TP(sc, drive_take, &drive, rc > 0 && p[2].revents);
		TP(sc, drive_end, &drive);
	}
	TP(sc, tx_sleep_end);
	if (rc < 0) {
		err = errno;
		bell_wait_end(p[1].fd, false);
		/* a send without SO_SNDTIMEO goes on after a handler with SA_RESTART */
		if (err == EINTR && *deadline < 0 && sig_restarts(mark))
			return 0;
		return -err;
	}
	bell_wait_end(p[1].fd, p[1].revents & POLLIN);
	if (rc == 0 || !p[0].revents)
		return 0;
	if (p[0].revents & POLLERR) {
		len = sizeof(err);
		if (!next.getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) && err) {
			/* a reset is the reader's news too; EPIPE (a reset after
			 * the peer's FIN) only the writer's, the reader sees EOF */
			if (err == ECONNRESET)
				atomic_store(&sc->rx_err, err);
			return -err;
		}
	}
	if (p[0].revents & POLLHUP)
		return -EPIPE;
	/* the peer's doorbells for us may stand between us and its FIN */
	if (soft_rx_cut_now(fd, sc)) {
		soft_drain(fd, sc);
	} else if (!tx_space(sc)) {
		/* the application's own unread bytes make the socket readable */
		if (sys_peek_eof(fd))
			tcp_fin_seen(sc);
		else
			sys_yield();
	}
	if ((err = atomic_load(&sc->rx_err)))
		return -err;
	if (atomic_load(&sc->rx_eof) && !tx_space(sc)) {
		/*
		 * The peer's FIN: a doorbell tells a live peer (shut down for
		 * writing) nothing new, and makes a dead one's kernel answer RST.
		 */
		soft_ring_bell(fd, sc, TP_BELL_TCP);
	}
	return 0;
}

bool soft_tx_peer_check(int fd, struct sconn *sc, short kernel)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (kernel & (POLLERR | POLLHUP)) {
		if (next.getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
			err = 0;
		/* closed both ways, its error taken by a doorbell's send: a send fails so */
		if (!err && (kernel & POLLHUP))
			err = EPIPE;
		if (!err)
			return true;
		/* as wait_space(): EPIPE (a reset after the peer's FIN) is the writer's only */
		atomic_store(err == ECONNRESET ? &sc->rx_err : &sc->tx_err, err);
		return true;
	}
	/* the peer's doorbells may stand before its FIN: read them (an edge comes once) */
	if (!atomic_load(&sc->rx_eof)) {
		if (soft_rx_cut_now(fd, sc)) {
			/* a drain stops after the bytes it read: the end is a read more */
			soft_drain(fd, sc);
			if (!atomic_load(&sc->rx_eof))
				soft_drain(fd, sc);
		} else if (sys_peek_eof(fd))
			tcp_fin_seen(sc);
	}
	if (atomic_load(&sc->rx_eof) && !tx_space(sc))
		soft_ring_bell(fd, sc, TP_BELL_TCP);
	return false;
}

void soft_rcvlowat_kernel_one(int fd)
{
	static const int one = 1;

	if (!soft_sandboxed())
		next.setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof(one));
}

/*
 * The kernel keeps the mark until the receiving cut-over
 * (sconn_rx_cut_set()), the ring after; Linux takes 0 for 1.
 */
void soft_rcvlowat_set(int fd, struct sconn *sc, int val)
{
	atomic_store(&sc->rcvlowat, val < 1 ? 1 : val);
	if (val > 1 && atomic_load(&sc->rx_cut))
		soft_rcvlowat_kernel_one(fd);
}

void soft_rcvlowat_get(struct sconn *sc, int *val)
{
	if (atomic_load(&sc->rx_cut))
		*val = atomic_load(&sc->rcvlowat);
}

/* What a blocking receive of total bytes waits for: SO_RCVLOWAT, MSG_WAITALL. */
static size_t recv_need(struct sconn *sc, size_t total, int flags)
{
	size_t low;

	if ((flags & (MSG_WAITALL | MSG_PEEK)) == MSG_WAITALL)
		return total;
	if (flags & MSG_PEEK)
		return 1;
	low = (size_t)atomic_load_explicit(&sc->rcvlowat, memory_order_relaxed);
	return low < total ? low : total;
}

/*
 * A reset is news once, as the kernel's socket error: the first call to
 * meet it fails with ECONNRESET, later writes with EPIPE, later reads see EOF.
 */
static int reset_news(struct sconn *sc, int after)
{
	return atomic_exchange(&sc->reset_told, true) ? after : ECONNRESET;
}

/* The kernel's socket told it (a call on the TCP stream before the cut-over). */
static void kernel_reset_news(struct sconn *sc, ssize_t r, int err)
{
	if (r < 0 && err == ECONNRESET)
		atomic_store(&sc->reset_told, true);
}

static ssize_t send_fail(ssize_t done, int err, int flags)
{
	if (done > 0)
		return done;
	if (err == EPIPE && !(flags & MSG_NOSIGNAL))
		pthread_kill(pthread_self(), SIGPIPE);
	errno = err;
	return -1;
}

/* What a send takes its bytes from: the caller's iovecs, or a file (sendfile). */
struct send_src {
	const struct iovec *iov;
	int cnt;
	int file;                /* -1: iov */
	off_t off;               /* of the file's first byte */
};

/*
 * A file goes in pieces, each published as soon as it is read: the reader
 * copies one out while the next is read in.
 */
#define FILE_PIECE 65536

/* One produce of what is left from src (done of total sent): as the transport's. */
static ssize_t produce_from(struct sconn *sc, const struct send_src *src, size_t done,
			    size_t total, struct iovec *win, int *n, uint32_t *wake)
{
	if (src->file >= 0)
		return TP(sc, produce_file, src->file, src->off + (off_t)done,
			  total - done < FILE_PIECE ? total - done : FILE_PIECE, wake);
	*n = iov_window(src->iov, src->cnt, done, total - done, win, IOV_CHUNK);
	return TP(sc, produce, win, *n, wake);
}

/* The ring's own results; any other error of a file source is its read's. */
static bool ring_result(ssize_t r)
{
	return r >= 0 || r == -EAGAIN || r == -EPIPE || r == -ECONNRESET || r == -EPROTO;
}

/*
 * The rest of a send whose transport went back to TCP (back.c); a file
 * source goes through a buffer (-2, its caller's path) unless some of it
 * went already.
 */
static ssize_t back_send_rest(int fd, struct sconn *sc, const struct send_src *src, int flags,
			      size_t done, size_t total)
{
	bool nonblock = nonblocking(fd, sc, flags);
	struct iovec win[IOV_CHUNK];

	if (src->file >= 0)
		return done ? (ssize_t)done : -2;
	while (done < total) {
		int n = iov_window(src->iov, src->cnt, done, total - done, win, IOV_CHUNK);
		ssize_t r = conn_back_send(fd, sc, win, n, flags, nonblock);

		if (r <= 0)
			return done ? (ssize_t)done : r;
		done += (size_t)r;
		if (nonblock)
			break;
	}
	return (ssize_t)done;
}

static ssize_t ring_send(int fd, struct sconn *sc, const struct send_src *src, int flags,
			 size_t total)
{
	struct iovec win[IOV_CHUNK];
	size_t done = 0;
	bool full_noted = false;
	int64_t deadline = 0;

	for (;;) {
		uint32_t wake = 0;
		int n = 0;
		ssize_t r = produce_from(sc, src, done, total, win, &n, &wake);

		if (r == -EXDEV && conn_back_noted(fd, sc))
			return back_send_rest(fd, sc, src, flags, done, total);
		if (src->file >= 0 && (!r || !ring_result(r))) {
			/* the file ended, or its read failed: as sendfile says it */
			if (done || !r)
				return (ssize_t)done;
			errno = (int)-r;
			return -1;
		}
		if (r > 0) {
			if (soft_dump_on() && src->file < 0)
				dump_io(sc, false, win, n, (size_t)r);
			done += (size_t)r;
			if (wake) {
				sc_unlock(&sc->tx_lock);
				soft_ring_bell(fd, sc, wake);
				sc_lock(&sc->tx_lock);
			}
			if (done == total)
				return (ssize_t)done;
			continue;
		}
		if (r == -EPIPE)
			return send_fail((ssize_t)done, EPIPE, flags);
		if (r != -EAGAIN)
			return done ? (ssize_t)done
				    : send_fail(0, reset_news(sc, EPIPE), flags);
		if (!full_noted) {
			atomic_fetch_add_explicit(&io_of(sc)->rmb_tx.buf_full_peer_cnt, 1,
						  memory_order_relaxed);
			full_noted = true;
			/* the produce said write-blocked */
			if (soft_dump_on())
				dump_cdc(sc);
		}
		if (nonblocking(fd, sc, flags)) {
			int err;

			/*
			 * The wait that follows may never hear of a dead peer
			 * (an edge-triggered epoll had the FIN's edge while
			 * there was room): look now, and draw its RST.
			 */
			if (!done) {
				sc_unlock(&sc->tx_lock);
				soft_tx_peer_check(fd, sc, 0);
				sc_lock(&sc->tx_lock);
			}
			err = atomic_load(&sc->tx_err);
			if (atomic_load(&sc->rx_err))
				err = reset_news(sc, EPIPE);
			return done ? (ssize_t)done : send_fail(0, err ? err : EAGAIN, flags);
		}
		sc_unlock(&sc->tx_lock);
		int w = wait_space(fd, sc, &deadline);
		sc_lock(&sc->tx_lock);
		if (w == -ECONNRESET)
			return done ? (ssize_t)done
				    : send_fail(0, reset_news(sc, EPIPE), flags);
		if (w)
			return send_fail((ssize_t)done, -w, flags);
	}
}

/* Before MAPPED: TCP, every byte counted for the fence. */
static ssize_t plain_send(int fd, struct sconn *sc, const struct iovec *iov, int iovcnt,
			  int flags, int st, const struct msghdr *mh)
{
	ssize_t r;
	int saved;

	if (st == SC_NEW)
		offer_check(fd, sc);
	r = mh ? next.sendmsg(fd, mh, flags) : tcp_sendv(fd, iov, iovcnt, flags);
	saved = errno;

	kernel_reset_news(sc, r, saved);
	if (r > 0) {
		atomic_fetch_add(&sc->tcp_tx, (uint64_t)r);
		if (st == SC_NEW)
			ctl_maybe_pair(fd, sc);
	}
	atomic_fetch_sub(&sc->plain_tx, 1);
	errno = saved;
	return r;
}

ssize_t soft_kernel_send(int fd, struct sconn *sc, ssize_t (*op)(void *), void *arg)
{
	ssize_t r;
	int st, saved;

	atomic_fetch_add_explicit(&sc->plain_tx, 1, memory_order_seq_cst);
	st = current_state(sc);
	if (st == SC_MAPPED) {
		atomic_fetch_sub(&sc->plain_tx, 1);
		return -2;
	}
	if (st == SC_NEW)
		offer_check(fd, sc);
	r = op(arg);
	saved = errno;
	kernel_reset_news(sc, r, saved);
	if (r > 0) {
		atomic_fetch_add(&sc->tcp_tx, (uint64_t)r);
		if (st == SC_NEW)
			ctl_maybe_pair(fd, sc);
	}
	atomic_fetch_sub(&sc->plain_tx, 1);
	errno = saved;
	return r;
}

ssize_t soft_send_before_cut(int fd, struct sconn *sc, ssize_t (*op)(void *), void *arg)
{
	ssize_t r = -2;
	int saved;

	sc_lock(&sc->tx_lock);
	if (!sconn_tx_try_cut(fd, sc)) {
		if (conn_tx_lost(sc)) {
			sc_unlock(&sc->tx_lock);
			return send_fail(0, reset_news(sc, EPIPE), 0);
		}
		r = op(arg);
		saved = errno;
		if (r > 0)
			atomic_fetch_add(&sc->tcp_tx, (uint64_t)r);
		errno = saved;
	}
	sc_unlock(&sc->tx_lock);
	return r;
}

/*
 * A send on a MAPPED connection, under the send lock: TCP until the sending
 * direction cuts over (a file source: -2, its caller's path), then the ring.
 */
static ssize_t mapped_send(int fd, struct sconn *sc, const struct send_src *src, int flags,
			   size_t total)
{
	ssize_t r;

	sconn_attach_late(sc);
	sc_lock(&sc->tx_lock);
	if (!sconn_tx_try_cut(fd, sc)) {
		if (conn_tx_lost(sc)) {
			sc_unlock(&sc->tx_lock);
			return send_fail(0, reset_news(sc, EPIPE), flags);
		}
		r = src->file >= 0 ? -2 : tcp_sendv(fd, src->iov, src->cnt, flags);
		if (r > 0)
			atomic_fetch_add(&sc->tcp_tx, (uint64_t)r);
		sc_unlock(&sc->tx_lock);
		return r;
	}
	if (atomic_load(&sc->closed_wr)) {
		sc_unlock(&sc->tx_lock);
		return send_fail(0, EPIPE, flags);
	}
	if (atomic_load(&sc->back_tx)) {
		r = back_send_rest(fd, sc, src, flags, 0, total);
		sc_unlock(&sc->tx_lock);
		return r;
	}
	r = total ? ring_send(fd, sc, src, flags, total) : 0;
	sc_unlock(&sc->tx_lock);
	if (r != -2)
		count(sc, true, total, r);
	return r;
}

ssize_t soft_send(int fd, struct sconn *sc, const struct iovec *iov, int iovcnt, int flags,
		  const struct msghdr *mh)
{
	size_t total = iov_total(iov, iovcnt);
	ssize_t r;
	int st, saved;

	conn_stdio_check(fd, sc);
	conn_fork_use(fd, sc);
	/* MAPPED is for good: only before it the plain path must be announced */
	if (!sconn_mapped(sc)) {
		atomic_fetch_add_explicit(&sc->plain_tx, 1, memory_order_seq_cst);
		st = current_state(sc);
		if (st != SC_MAPPED)
			return plain_send(fd, sc, iov, iovcnt, flags, st, mh);
		atomic_fetch_sub(&sc->plain_tx, 1);
	}
	if (flags & MSG_OOB) {
		errno = EOPNOTSUPP;
		return -1;
	}
	r = mapped_send(fd, sc, &(struct send_src){ iov, iovcnt, -1, 0 }, flags, total);
	if (conn_back_reads(sc)) {
		saved = errno;
		conn_back_report(fd, sc);
		errno = saved;
	}
	return r;
}

ssize_t soft_send_file(int fd, struct sconn *sc, int in, off_t off, size_t len)
{
	conn_fork_use(fd, sc);
	return mapped_send(fd, sc, &(struct send_src){ NULL, 0, in, off }, 0, len);
}

/* ---- receive ---- */

/* Publish the consumer cursor now; the dump sees it if it moved. */
static void rx_flush(struct sconn *sc, uint32_t *wake)
{
	bool cdc = soft_dump_on() && !TP(sc, rx_published);

	TP(sc, rx_flush, wake);
	if (cdc)
		dump_cdc(sc);
}

static bool rx_ready(struct sconn *sc)
{
	return TP(sc, readable) != 0 || TP(sc, peer_state);
}

/* SO_RCVTIMEO in ms, 0 for none; read again after setsockopt. */
static int rcvtimeo_ms(int fd, struct sconn *sc)
{
	int ms = atomic_load_explicit(&sc->rcvtimeo_ms, memory_order_relaxed);
	struct timeval tv = { 0 };
	socklen_t len = sizeof(tv);

	if (ms >= 0)
		return ms;
	ms = 0;
	if (!next.getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &len)) {
		int64_t t = (int64_t)tv.tv_sec * 1000 + (tv.tv_usec + 999) / 1000;

		ms = t > INT_MAX ? INT_MAX : (int)t;
	}
	atomic_store_explicit(&sc->rcvtimeo_ms, ms, memory_order_relaxed);
	return ms;
}

/*
 * A FIN or RST that came while we slept on the futex: a peer that died
 * wakes no one.  True if the socket had news (now in rx_eof/rx_err).
 */
static bool tcp_news(int fd, struct sconn *sc)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDHUP };

	if (next.poll(&p, 1, 0) <= 0)
		return false;
	drain_locked(fd, sc);
	return true;
}

/*
 * Sleep on the ring's futex, cheaper than a doorbell through TCP.  Waits in
 * slices of FUTEX_SLICE_MS to see the TCP socket, so that a peer's death
 * shows within one.  SO_RCVTIMEO and signals as recv() has them: EAGAIN at
 * the timeout; a handler interrupts a wait with a timeout, and one without
 * unless SA_RESTART.  0 or -errno.
 */
#define FUTEX_SLICE_MS 250

static int wait_data_futex(int fd, struct sconn *sc)
{
	int timeo = rcvtimeo_ms(fd, sc);
	int64_t end = timeo ? soft_now_ns() / 1000000 + timeo : 0;
	uint32_t wake = 0;

	rx_flush(sc, &wake);
	if (wake)
		soft_ring_bell(fd, sc, wake);
	for (;;) {
		int64_t ms = FUTEX_SLICE_MS;
		struct timespec ts;
		unsigned mark;
		int r;

		if (timeo) {
			int64_t left = end - soft_now_ns() / 1000000;

			if (left <= 0)
				return -EAGAIN;
			if (left < ms)
				ms = left;
		}
		ts.tv_sec = (time_t)(ms / 1000);
		ts.tv_nsec = (long)(ms % 1000) * 1000000;
		atomic_fetch_add_explicit(&pstats->sleeps, 1, memory_order_relaxed);
		mark = sig_norestart_mark();
		r = TP(sc, rx_wait, &ts);
		if (r == 0)
			return 0;
		if (r == -EINTR) {
			if (timeo || !sig_restarts(mark))
				return -EINTR;
			continue;
		}
		if (r != -ETIMEDOUT)
			return r;
		if (tcp_news(fd, sc))
			return 0;
	}
}

/*
 * Sleep until a doorbell, FIN or RST, in recv() on the socket itself: its
 * SO_RCVTIMEO, signals and SA_RESTART are the kernel's.  0 or -errno.
 */
static int wait_data(int fd, struct sconn *sc)
{
	char buf[DRAIN_BUF];
	ssize_t n;

	uint32_t wake = 0;
	bool ready, cdc;

	if (soft_spin(sc, rx_ready, true))
		return 0;
	/* in a sandbox the futex wait's timeouts and signals cost calls of ours */
	if (soft_cfg.futex && !soft_sandboxed())
		return wait_data_futex(fd, sc);
	cdc = soft_dump_on() && !TP(sc, rx_published);
	ready = TP(sc, rx_sleep_begin, &wake, TP_BELL_TCP);
	if (cdc)
		dump_cdc(sc);
	if (wake)
		soft_ring_bell(fd, sc, wake);
	if (ready) {
		TP(sc, rx_sleep_end);
		return 0;
	}
	atomic_fetch_add_explicit(&pstats->sleeps, 1, memory_order_relaxed);
	n = next.read(fd, buf, sizeof(buf));
	TP(sc, rx_sleep_end);
	if (n > 0) {
		bells_read(fd, sc, (size_t)n);
		return 0;
	}
	if (n == 0) {
		tcp_fin_seen(sc);
		return 0;
	}
	if (errno == ECONNRESET || errno == ETIMEDOUT)
		atomic_store(&sc->rx_err, errno);
	return -errno;
}

/*
 * A peek for all of it (MSG_WAITALL) that got the TCP stream's last bytes
 * before the fence goes on in the ring, whose bytes follow them: what it
 * adds.
 */
static size_t peek_past_fence(struct sconn *sc, const struct iovec *iov, int cnt, size_t skip,
			      size_t want)
{
	struct iovec win[IOV_CHUNK];
	ssize_t r;
	int w;

	if (!want)
		return 0;
	w = iov_window(iov, cnt, skip, want, win, IOV_CHUNK);
	r = TP(sc, consume, win, w, TP_PEEK, NULL);
	return r > 0 ? (size_t)r : 0;
}

/*
 * A blocking read before the fence on a transport without TCP doorbells
 * (soft SMC-R): the producer's fence comes on the transport, so the reader
 * does not sleep in the TCP stream alone but in poll() on the socket and
 * its bell, which the transport rings when the peer's words change.  0
 * when TCP has bytes, the fence is known or the time is up for this round
 * (the caller looks again); -EAGAIN at SO_RCVTIMEO's end; -EINTR.
 */
#define FENCE_WAIT_MS 250

static int wait_tcp_or_fence(int fd, struct sconn *sc, int64_t *deadline)
{
	struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = -1, .events = POLLIN } };
	int timeout = FENCE_WAIT_MS, rc;
	uint64_t left;
	uint32_t bell;
	unsigned mark;
	bool ready;

	if (!*deadline) {
		int ms = rcvtimeo_ms(fd, sc);

		*deadline = ms ? soft_now_ns() / 1000000 + ms : -1;
	}
	if (*deadline > 0) {
		int64_t rest = *deadline - soft_now_ns() / 1000000;

		if (rest <= 0)
			return -EAGAIN;
		if (rest < timeout)
			timeout = (int)rest;
	}
	bell = bell_wait_begin(&p[1].fd);
	if (bell == TP_BELL_TCP) {
		bell_wanted();
		timeout = timeout < 10 ? timeout : 10;    /* no bell yet: look again soon */
	}
	ready = TP(sc, rx_sleep_begin, NULL, bell) && bell != TP_BELL_TCP;
	mark = sig_norestart_mark();
	if (!ready && !conn_rx_fence_left(sc, &left))
		rc = next.poll(p, p[1].fd >= 0 ? 2 : 1, timeout);
	else
		rc = 0;
	TP(sc, rx_sleep_end);
	bell_wait_end(p[1].fd, rc > 0 && (p[1].revents & POLLIN));
	if (rc < 0 && errno == EINTR && (*deadline > 0 || !sig_restarts(mark)))
		return -EINTR;
	return 0;
}

/*
 * Before the fence: the TCP stream, clipped at the fence once it is known
 * (bytes after it are doorbells).  >0 bytes, 0 cut over now (read the ring),
 * -1 with errno, or -2 at end of stream.
 */
static ssize_t fence_recv(int fd, struct sconn *sc, const struct iovec *iov, int cnt,
			  size_t skip, size_t want, int flags)
{
	const size_t asked = want;
	struct iovec win[IOV_CHUNK];
	bool peek = flags & MSG_PEEK, known, may_end;
	uint64_t left;
	ssize_t n;
	size_t keep;
	int w, rc;

	/* held by several processes (fork, spawn): the others read some of it */
	conn_rx_count_shared(fd, sc);
	conn_rx_lost_fence(fd, sc);
	known = conn_rx_fence_left(sc, &left);
	/* or another process holding the connection read up to the fence */
	if ((known && !left) || TP(sc, rx_cut_seen)) {
		sconn_rx_cut_set(fd, sc);
		return 0;
	}
	if (!(flags & MSG_DONTWAIT) && !nonblocking(fd, sc, flags)) {
		/* so that the producer rings once it has cut over */
		TP(sc, rx_want_bell);
		known = conn_rx_fence_left(sc, &left);
	}
	if (known) {
		if (!left) {
			/* the fence came while we got here: no 0-byte read, no false EOF */
			sconn_rx_cut_set(fd, sc);
			return 0;
		}
		if (left < want)
			want = (size_t)left;
	}
	w = iov_window(iov, cnt, skip, want, win, IOV_CHUNK);
	if (!known && !sc->tp.ops->tcp_doorbells && !(flags & MSG_DONTWAIT) &&
	    !nonblocking(fd, sc, flags)) {
		int64_t deadline = 0;

		/* no doorbell will wake a reader asleep in TCP: wait for either */
		for (;;) {
			n = tcp_recvv(fd, win, w, (flags & MSG_PEEK) | MSG_DONTWAIT);
			/* the fence, or BACK (a peer that never cut over said it, or answered ours) */
			if (n >= 0 || errno != EAGAIN || conn_rx_fence_left(sc, &left) ||
			    conn_back_noted(fd, sc))
				break;
			rc = wait_tcp_or_fence(fd, sc, &deadline);
			if (rc) {
				errno = -rc;
				return -1;
			}
			conn_rx_lost_fence(fd, sc);
		}
		if (n < 0 && errno == EAGAIN && (conn_rx_fence_left(sc, &left) || conn_back_reads(sc)))
			return 0;       /* the fence or BACK came: the caller looks again */
	} else {
		n = tcp_recvv(fd, win, w, flags & (MSG_PEEK | MSG_DONTWAIT));
	}
	if (n < 0) {
		kernel_reset_news(sc, n, errno);
		return -1;
	}
	/* the fence and bytes after it may still come */
	may_end = n != 0 || fin_grace(sc);
	known = conn_rx_fence_left(sc, &left);
	if (n == 0) {
		if (!known)
			return -2;
		conn_rx_count_shared(fd, sc);
		if (conn_rx_fence_left(sc, &left) && left && !TP(sc, rx_cut_seen)) {
			/*
			 * The end before the fence: a FIN comes after every byte
			 * before it, so the stream lost its last bytes to a reset
			 * whose error was taken already (SO_ERROR, a doorbell's
			 * send).  The ring after the fence must not be read as if
			 * they had come.
			 */
			atomic_store(&sc->rx_err, ECONNRESET);
			kernel_reset_news(sc, -1, ECONNRESET);
			errno = ECONNRESET;
			return -1;
		}
		if (may_end)
			atomic_store(&sc->rx_eof, true);
		sconn_rx_cut_set(fd, sc);
		return 0;
	}
	keep = known && (uint64_t)n > left ? (size_t)left : (size_t)n;
	/* after our BACK, what follows the fence is the stream's (back.c) */
	if (keep < (size_t)n && conn_back_noted(fd, sc))
		keep = (size_t)n;
	if (peek && keep)
		return (ssize_t)keep + ((flags & MSG_WAITALL) && known && keep == left
			? (ssize_t)peek_past_fence(sc, iov, cnt, skip + keep, asked - keep) : 0);
	if (!peek)
		atomic_fetch_add(&sc->tcp_rx, keep);
	if (conn_rx_fence_left(sc, &left) && !left)
		sconn_rx_cut_set(fd, sc);
	if (keep < (size_t)n && !peek)
		bells_read(fd, sc, (size_t)n - keep);
	return (ssize_t)keep;
}

static ssize_t recv_fail(ssize_t done, int err)
{
	if (done > 0)
		return done;
	errno = err;
	return -1;
}

/*
 * After our BACK the TCP stream from here is the rest of the stream
 * (back.c): the kernel's receive, done bytes of it had already.
 */
static ssize_t back_recv(int fd, struct sconn *sc, const struct iovec *iov, int cnt, int flags,
			 size_t done, size_t need)
{
	struct iovec win[IOV_CHUNK];
	size_t total = iov_total(iov, cnt);
	ssize_t r;
	int w;

	if ((flags & MSG_DONTWAIT) || nonblocking(fd, sc, flags))
		conn_back_flush_try(fd, sc);
	else
		conn_back_before_read(fd, sc);
	if (!done)
		r = tcp_recvv(fd, iov, cnt, flags);
	else if (done >= need || (flags & MSG_PEEK))
		return (ssize_t)done;
	else {
		w = iov_window(iov, cnt, done, total - done, win, IOV_CHUNK);
		r = tcp_recvv(fd, win, w, flags);
	}
	if (r < 0) {
		kernel_reset_news(sc, r, errno);
		return recv_fail((ssize_t)done, errno);
	}
	return (ssize_t)done + r;
}

/* *from_ring: the bytes of the result that came from the ring (smcd stats). */
static ssize_t ring_recv(int fd, struct sconn *sc, const struct iovec *iov, int cnt,
			 int flags, size_t total, size_t *from_ring)
{
	struct iovec win[IOV_CHUNK];
	bool peek = flags & MSG_PEEK;
	size_t done = 0, need = recv_need(sc, total, flags);

	for (;;) {
		ssize_t r;
		int n, w;
		uint32_t wake = 0;

		if (conn_back_reads(sc))
			return back_recv(fd, sc, iov, cnt, flags, done, need);
		if (!atomic_load_explicit(&sc->rx_cut, memory_order_relaxed)) {
			r = fence_recv(fd, sc, iov, cnt, done, total - done, flags);
			if (r == -1)
				return recv_fail((ssize_t)done, errno);
			if (r == -2)
				return (ssize_t)done;
			done += (size_t)r;
			if (r > 0 && (done >= need || peek))
				return (ssize_t)done;
			continue;
		}
		if (atomic_load_explicit(&sc->foreign, memory_order_relaxed)) {
			w = reset_news(sc, 0);
			return done ? (ssize_t)done : w ? recv_fail(0, w) : 0;
		}
		n = iov_window(iov, cnt, done, total - done, win, IOV_CHUNK);
		r = TP(sc, consume, win, n, peek ? TP_PEEK : 0, &wake);
		if (r == -EXDEV && conn_back_noted(fd, sc))
			continue;
		/* the end of the ring's stream: what the peer wrote past the library came before it */
		if (r == 0 && !done) {
			drain_locked(fd, sc);
			if (atomic_load(&sc->foreign))
				continue;
		}
		if (r > 0) {
			if (soft_dump_on() && !peek)
				dump_io(sc, true, win, n, (size_t)r);
			TP(sc, rx_busy);
			done += (size_t)r;
			*from_ring += (size_t)r;
			if (wake)
				soft_ring_bell(fd, sc, wake);
			if (done >= need)
				return (ssize_t)done;
			continue;
		}
		if (r == 0)
			return (ssize_t)done;
		if (r != -EAGAIN || atomic_load(&sc->rx_err)) {
			if (done)
				return (ssize_t)done;
			w = reset_news(sc, 0);
			return w ? recv_fail(0, w) : 0;
		}
		if (atomic_load(&sc->rx_eof))
			return (ssize_t)done;
		if (done && (done >= need || nonblocking(fd, sc, flags)))
			return (ssize_t)done;
		if (nonblocking(fd, sc, flags)) {
			/*
			 * The peer's FIN or death shows to poll and epoll, which
			 * drain; a program that only calls recv() sees it at
			 * every DRAIN_QUIET-th empty one.
			 */
			if (TP(sc, tcp_bells_due) || !(++sc->rx_quiet % DRAIN_QUIET))
				drain_locked(fd, sc);
			rx_flush(sc, &wake);
			if (wake)
				soft_ring_bell(fd, sc, wake);
			if (rx_ready(sc) || atomic_load(&sc->rx_eof) || atomic_load(&sc->rx_err))
				continue;
			return recv_fail((ssize_t)done, EAGAIN);
		}
		w = wait_data(fd, sc);
		/* the peer's CLOSED in the ring wins over a reset our doorbells caused */
		if (w == -ECONNRESET && atomic_load(&sc->rx_err))
			continue;
		if (w)
			return recv_fail((ssize_t)done, -w);
	}
}

/*
 * A blocking receive on a connection whose offer is timed (offer.c) waits
 * for its data until that time only, offers it then, and waits on in the
 * receive.  SO_RCVTIMEO and signals as recv() has them.  0 or -errno.
 */
static int wait_for_offer(int fd, struct sconn *sc, int flags)
{
	int timeo;
	int64_t end;

	if (!atomic_load_explicit(&sc->offer_at, memory_order_relaxed) ||
	    (flags & MSG_DONTWAIT) || nonblocking(fd, sc, flags))
		return 0;
	timeo = rcvtimeo_ms(fd, sc);
	end = timeo ? soft_now_ns() + (int64_t)timeo * 1000000 : 0;
	for (;;) {
		int64_t now = soft_now_ns(), left = atomic_load(&sc->offer_at) - now;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		struct timespec ts;
		unsigned mark;
		int r;

		if (atomic_load(&sc->state) != SC_NEW)
			return 0;
		if (left <= 0) {
			ctl_offer(fd, sc, false);
			return 0;
		}
		if (timeo) {
			if (end <= now)
				return -EAGAIN;
			if (end - now < left)
				left = end - now;
		}
		ts.tv_sec = (time_t)(left / 1000000000);
		ts.tv_nsec = (long)(left % 1000000000);
		mark = sig_norestart_mark();
		r = next.ppoll(&p, 1, &ts, NULL);
		if (r > 0 || (r < 0 && errno != EINTR))
			return 0;      /* the receive itself tells */
		if (r < 0 && (timeo || !sig_restarts(mark)))
			return -EINTR;
	}
}

/*
 * A blocking receive on a connection being paired while a pairing of ours
 * may still cut over to RDMA (ctl_rdma_settling()): the kernel's receive
 * would sleep through the cut-over, whose producer rings no doorbell over
 * TCP, so it waits for TCP bytes in steps first, through signals whose
 * handlers restart it (the kernel's receive would go on too).  1 once the
 * connection is mapped (the caller goes on there); 0: the receive itself
 * tells; -EINTR: a handler without SA_RESTART ran.
 */
static int wait_settling(int fd, struct sconn *sc, int flags)
{
	if ((flags & MSG_DONTWAIT) || nonblocking(fd, sc, flags) || rcvtimeo_ms(fd, sc))
		return 0;
	while (atomic_load(&sc->state) == SC_ASKED && ctl_rdma_settling()) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		unsigned mark = sig_norestart_mark();
		int r = next.poll(&p, 1, SETTLE_LOOK_MS);

		if (r < 0 && errno == EINTR) {
			if (!sig_restarts(mark))
				return -EINTR;
			continue;
		}
		if (r != 0)
			return 0;
		ctl_poll();
	}
	return sconn_mapped(sc) ? 1 : 0;
}

/* The receive's result when the connection was mapped while it waited (soft_recv goes on there). */
#define PLAIN_NOW_MAPPED (-2)

static ssize_t plain_recv(int fd, struct sconn *sc, const struct iovec *iov, int iovcnt,
			  int flags, int st, struct msghdr *mh)
{
	ssize_t r;
	int saved, w;

	if (st == SC_NEW) {
		offer_check(fd, sc);
		if ((w = wait_for_offer(fd, sc, flags))) {
			atomic_fetch_sub(&sc->plain_rx, 1);
			errno = -w;
			return -1;
		}
	}
	if ((w = wait_settling(fd, sc, flags))) {
		atomic_fetch_sub(&sc->plain_rx, 1);
		if (w > 0)
			return PLAIN_NOW_MAPPED;
		errno = -w;
		return -1;
	}
	r = mh ? next.recvmsg(fd, mh, flags) : tcp_recvv(fd, iov, iovcnt, flags);
	saved = errno;
	kernel_reset_news(sc, r, saved);
	if (r > 0 && !(flags & MSG_PEEK)) {
		atomic_fetch_add(&sc->tcp_rx, (uint64_t)r);
		if (st == SC_NEW)
			ctl_maybe_pair(fd, sc);
	}
	atomic_fetch_sub(&sc->plain_rx, 1);
	errno = saved;
	return r;
}

/* The socket's error queue (timestamps, zero-copy completions) is the kernel's, never the stream. */
static ssize_t errqueue_recv(int fd, const struct iovec *iov, int iovcnt, int flags,
			     struct msghdr *mh)
{
	struct msghdr own = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt };

	return next.recvmsg(fd, mh ? mh : &own, flags);
}

/* Whether a peek that found part of what it wants can get more by waiting. */
static bool peek_may_grow(int fd, struct sconn *sc)
{
	struct pollfd p = { .fd = fd, .events = POLLRDHUP };

	if (atomic_load(&sc->rx_eof) || atomic_load(&sc->rx_err) ||
	    TP(sc, peer_state) & (TP_PS_ENDED))
		return false;
	if (atomic_load(&sc->rx_cut))
		return true;
	return !(next.poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)));
}

/*
 * MSG_PEEK|MSG_WAITALL waits until all of it is there, as TCP's does:
 * peeked again after short pauses (the ring has no wake-up for "more").
 */
#define PEEK_PAUSE_NS 200000

static ssize_t peek_all(int fd, struct sconn *sc, const struct iovec *iov, int cnt, int flags,
			size_t total, ssize_t r)
{
	int timeo = rcvtimeo_ms(fd, sc);
	int64_t end = timeo ? soft_now_ns() / 1000000 + timeo : 0;
	const struct timespec pause = { .tv_sec = 0, .tv_nsec = PEEK_PAUSE_NS };

	while (r > 0 && (size_t)r < total && !soft_sandboxed() && !nonblocking(fd, sc, flags) &&
	       peek_may_grow(fd, sc)) {
		size_t ring = 0;
		ssize_t again;

		if ((timeo && soft_now_ns() / 1000000 >= end) || next.nanosleep(&pause, NULL))
			break;
		sc_lock(&sc->rx_lock);
		again = ring_recv(fd, sc, iov, cnt, flags, total, &ring);
		sc_unlock(&sc->rx_lock);
		if (again < r)
			break;
		r = again;
	}
	return r;
}

ssize_t soft_recv(int fd, struct sconn *sc, const struct iovec *iov, int iovcnt, int flags,
		  struct msghdr *mh)
{
	size_t total = iov_total(iov, iovcnt), ring = 0;
	ssize_t r;
	int st;

	if (flags & MSG_ERRQUEUE)
		return errqueue_recv(fd, iov, iovcnt, flags, mh);
	conn_stdio_check(fd, sc);
	conn_fork_use(fd, sc);

	if (!sconn_mapped(sc)) {
		atomic_fetch_add_explicit(&sc->plain_rx, 1, memory_order_seq_cst);
		st = current_state(sc);
		if (st != SC_MAPPED) {
			r = plain_recv(fd, sc, iov, iovcnt, flags, st, mh);
			if (r != PLAIN_NOW_MAPPED)
				return r;
		} else {
			atomic_fetch_sub(&sc->plain_rx, 1);
		}
	}
	sconn_attach_late(sc);
	if (flags & MSG_OOB) {
		errno = EOPNOTSUPP;
		return -1;
	}
	if (mh) {
		mh->msg_namelen = 0;
		mh->msg_controllen = 0;
		mh->msg_flags = 0;
	}
	if (!total)
		return 0;
	sc_lock(&sc->rx_lock);
	r = ring_recv(fd, sc, iov, iovcnt, flags, total, &ring);
	sc_unlock(&sc->rx_lock);
	if (conn_back_reads(sc)) {
		int saved = errno;

		conn_back_report(fd, sc);
		errno = saved;
	}
	if ((flags & (MSG_PEEK | MSG_WAITALL)) == (MSG_PEEK | MSG_WAITALL))
		r = peek_all(fd, sc, iov, iovcnt, flags, total, r);
	/* what the ring carried, as the kernel counts SMC's data: not the TCP bytes before the fence nor after BACK */
	if (!(flags & MSG_PEEK) && (ring || (atomic_load(&sc->rx_cut) && !conn_back_reads(sc))))
		count(sc, false, total, ring ? (ssize_t)ring : r > 0 ? 0 : r);
	return r;
}

long soft_fionread(int fd, struct sconn *sc)
{
	int k = 0;
	long ring;
	uint64_t left;

	conn_fork_use(fd, sc);
	if (!sconn_mapped(sc) || !atomic_load(&sc->rx_cut) || conn_back_reads(sc)) {
		if (next.ioctl(fd, FIONREAD, &k) < 0)
			return -1;
		if (!sconn_mapped(sc) || conn_back_reads(sc))
			return k;
	}
	ring = TP(sc, readable);
	if (ring < 0)
		ring = 0;
	if (atomic_load(&sc->rx_cut))
		return ring;
	if (!conn_rx_fence_left(sc, &left))
		return k;
	if ((uint64_t)k > left)
		k = (int)left;
	return k + ring;
}

long soft_outq(struct sconn *sc)
{
	long n = TP(sc, unread);

	return n < 0 ? 0 : n;
}

int soft_shutdown(int fd, struct sconn *sc, int how)
{
	conn_fork_use(fd, sc);
	if (how == SHUT_WR || how == SHUT_RDWR) {
		int rc = 0;

		sc_lock(&sc->tx_lock);
		if (sconn_mapped(sc) && !conn_back_noted(fd, sc) && sconn_tx_try_cut(fd, sc)) {
			TP(sc, shutdown_wr);
			if (soft_dump_on())
				dump_cdc(sc);
		}
		/* back to TCP, now or while we shut down: what the peer did not consume goes before the FIN */
		if (sconn_mapped(sc) && conn_back_noted(fd, sc) && (rc = conn_back_flush_all(fd, sc))) {
			sc_unlock(&sc->tx_lock);
			errno = -rc;
			return -1;
		}
		atomic_store(&sc->closed_wr, true);
		sc_unlock(&sc->tx_lock);
	}
	if ((how == SHUT_RD || how == SHUT_RDWR) && sconn_mapped(sc)) {
		TP(sc, shutdown_rd);
		if (soft_dump_on())
			dump_cdc(sc);
	}
	return next.shutdown(fd, how);
}
