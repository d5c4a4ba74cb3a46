/*
 * splice, sendmmsg and recvmmsg of tracked sockets.  Before the cut-over the
 * kernel moves the bytes and they are counted for the fence; on the ring
 * they pass through a buffer of ours, as SMC has no zero-copy path either.
 * A connection that stays TCP for good is the kernel's alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "hooks.h"

#define EXPORT __attribute__((visibility("default")))
#define SPLICE_CHUNK 65536
#define PIPE_PAGE 4096

struct splice_args {
	int in;
	loff_t *off_in;
	int out;
	loff_t *off_out;
	size_t len;
	unsigned int flags;
};

static ssize_t kernel_splice(void *arg)
{
	struct splice_args *a = arg;

	return next.splice(a->in, a->off_in, a->out, a->off_out, a->len, a->flags);
}

typedef ssize_t put_fn(int fd, struct sconn *sc, const char *buf, size_t n);

static ssize_t put_sock(int fd, struct sconn *sc, const char *buf, size_t n)
{
	struct iovec v = { .iov_base = (void *)buf, .iov_len = n };

	return soft_send(fd, sc, &v, 1, 0, NULL);
}

static ssize_t put_pipe(int fd, struct sconn *sc, const char *buf, size_t n)
{
	(void)sc;
	return next.write(fd, buf, n);
}

/* All n bytes of buf out through put, waiting for room: they left their source already. */
static ssize_t put_all(int fd, struct sconn *sc, const char *buf, size_t n, put_fn *put)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = put(fd, sc, buf + done, n - done);
		struct pollfd p = { .fd = fd, .events = POLLOUT };

		if (r > 0) {
			done += (size_t)r;
			continue;
		}
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
			poll(&p, 1, -1);
			continue;
		}
		break;
	}
	return done ? (ssize_t)done : -1;
}

/* Into a paired socket: at most what the ring takes now when the caller
 * must not wait, read from the source, then sent whole. */
static ssize_t ring_splice_out(struct splice_args *a, struct sconn *sc)
{
	size_t want = a->len < SPLICE_CHUNK ? a->len : SPLICE_CHUNK;
	int fl = next.fcntl(a->out, F_GETFL);
	ssize_t got, sent;
	char *buf;

	conn_fork_use(a->out, sc);
	/* SPLICE_F_NONBLOCK is for the pipe: the socket waits unless O_NONBLOCK (back on TCP: the kernel's) */
	if (fl >= 0 && (fl & O_NONBLOCK) && atomic_load(&sc->tx_cut) && !atomic_load(&sc->back_tx) &&
	    !sc->tp.ops->not_ours) {
		long room = TP(sc, space);

		if (room <= 0) {
			errno = EAGAIN;
			return -1;
		}
		if ((size_t)room < want)
			want = (size_t)room;
	}
	if (!(buf = malloc(want))) {
		errno = ENOMEM;
		return -1;
	}
	got = a->off_in ? pread(a->in, buf, want, *a->off_in) : next.read(a->in, buf, want);
	sent = got > 0 ? put_all(a->out, sc, buf, (size_t)got, put_sock) : got;
	free(buf);
	if (sent > 0 && a->off_in)
		*a->off_in += sent;
	return sent;
}

/*
 * Bytes the pipe takes without waiting: its size less the pages what it
 * holds may occupy (a write merges only into the last page).  -1 when fd is
 * not a pipe.
 */
static long pipe_room(int fd)
{
	int size = next.fcntl(fd, F_GETPIPE_SZ), held = 0;
	long used;

	if (size <= 0)
		return -1;
	if (next.ioctl(fd, FIONREAD, &held) < 0 || held < 0)
		held = size;
	used = ((long)held + PIPE_PAGE - 1) / PIPE_PAGE * PIPE_PAGE;
	return used < size ? size - used : 0;
}

/*
 * Out of a tracked socket (not TCP for good) into a pipe: as many bytes as
 * the pipe has room for are taken from the data path in one receive, which
 * knows the fence and the ring, and then all of them go into the pipe.  One
 * receive, not a peek and a consume: two threads splicing one connection
 * must not both get the same bytes.
 */
static ssize_t soft_splice_in(struct splice_args *a, struct sconn *sc)
{
	size_t want = a->len < SPLICE_CHUNK ? a->len : SPLICE_CHUNK;
	struct iovec v;
	long room;
	ssize_t got;
	char *buf;

	if (a->off_in || a->off_out) {
		errno = ESPIPE;         /* no offsets for a socket or a pipe */
		return -1;
	}
	while ((room = pipe_room(a->out)) == 0) {
		struct pollfd p = { .fd = a->out, .events = POLLOUT };

		if (a->flags & SPLICE_F_NONBLOCK) {
			errno = EAGAIN;
			return -1;
		}
		if (poll(&p, 1, -1) < 0)
			return -1;
	}
	if (room < 0) {
		errno = EINVAL;         /* neither end is a pipe */
		return -1;
	}
	if ((size_t)room < want)
		want = (size_t)room;
	if (!(buf = malloc(want))) {
		errno = ENOMEM;
		return -1;
	}
	v.iov_base = buf;
	v.iov_len = want;
	got = soft_recv(a->in, sc, &v, 1, 0, NULL);
	if (got > 0)
		got = put_all(a->out, sc, buf, (size_t)got, put_pipe);
	free(buf);
	return got;
}

EXPORT ssize_t splice(int in, loff_t *off_in, int out, loff_t *off_out, size_t len,
		      unsigned int flags)
{
	struct splice_args a = { in, off_in, out, off_out, len, flags };
	struct sconn *sc;
	bool held;
	ssize_t r;

	PRELOAD_INIT();
	if (len && (sc = fd_hold(out, &held))) {
		r = soft_kernel_send(out, sc, kernel_splice, &a);
		/* before the cut-over the kernel's, which waits only as the socket does */
		if (r == -2)
			r = soft_send_before_cut(out, sc, kernel_splice, &a);
		if (r == -2)
			r = ring_splice_out(&a, sc);
		fd_unhold(sc, held);
		return r;
	}
	if (len && (sc = fd_hold(in, &held))) {
		r = atomic_load(&sc->state) == SC_TCP ? kernel_splice(&a) : soft_splice_in(&a, sc);
		fd_unhold(sc, held);
		return r;
	}
	return next.splice(in, off_in, out, off_out, len, flags);
}

/* One message after the other, as sendmsg() and recvmsg() each; the first
 * error ends the batch (returned only when nothing went).  recvmmsg's
 * timeout is not applied (smc_run(8)). */
EXPORT int sendmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags)
{
	struct sconn *sc;
	bool held;
	unsigned int i;

	PRELOAD_INIT();
	if (!(sc = fd_hold(fd, &held))) {
		for (i = 0; i < vlen && !ctl_owns(fd); i++)
			if (vec[i].msg_hdr.msg_controllen)
				return soft_fdpass_sendmmsg(fd, vec, vlen, flags);
		return next.sendmmsg(fd, vec, vlen, flags);
	}
	for (i = 0; i < vlen; i++) {
		struct msghdr *mh = &vec[i].msg_hdr;
		ssize_t r = soft_send(fd, sc, mh->msg_iov, (int)mh->msg_iovlen, flags, mh);

		if (r < 0)
			break;
		vec[i].msg_len = (unsigned int)r;
		/* a message that went in part ends the batch: no gap after it */
		if ((size_t)r < iov_total(mh->msg_iov, (int)mh->msg_iovlen)) {
			i++;
			break;
		}
	}
	fd_unhold(sc, held);
	return i ? (int)i : -1;
}

EXPORT int recvmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags,
		    struct timespec *timeout)
{
	struct sconn *sc;
	bool held;
	unsigned int i;

	PRELOAD_INIT();
	if (!(sc = fd_hold(fd, &held))) {
		int n = next.recvmmsg(fd, vec, vlen, flags, timeout);

		if (n > 0 && !ctl_owns(fd))
			soft_fdpass_mmsg_received(vec, n);
		return n;
	}
	for (i = 0; i < vlen; i++) {
		struct msghdr *mh = &vec[i].msg_hdr;
		int f = flags & ~MSG_WAITFORONE;
		ssize_t r;

		if (i && (flags & MSG_WAITFORONE))
			f |= MSG_DONTWAIT;
		r = soft_recv(fd, sc, mh->msg_iov, (int)mh->msg_iovlen, f, mh);
		if (r < 0)
			break;
		vec[i].msg_len = (unsigned int)r;
		if (r == 0) {
			/* end of stream: the kernel's recvmsg gives 0 again for each one left */
			while (++i < vlen)
				vec[i].msg_len = 0;
			break;
		}
	}
	fd_unhold(sc, held);
	return i ? (int)i : -1;
}
