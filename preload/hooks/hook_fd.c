/* Descriptor calls of tracked sockets: connect, accept, close, dup, fcntl, ioctl, fdopen. */
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>

#include <linux/close_range.h>
#include <sys/syscall.h>

#include "hooks.h"
#include "rdma.h"

#define EXPORT __attribute__((visibility("default")))

static void put(struct sconn *sc)
{
	int saved = errno;

	sconn_put(sc);
	errno = saved;
}

EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct sconn *sc;
	int rc;

	PRELOAD_INIT();
	if (!(sc = fd_get(fd)))
		return next.connect(fd, addr, len);
	sc->role = 0;
	rc = next.connect(fd, addr, len);
	/* listed in /proc/net/tcp from now on (EINPROGRESS too) */
	fd_listed();
	if (rc == 0) {
		int saved = errno;

		ctl_established(fd, sc);
		errno = saved;
	}
	put(sc);
	return rc;
}

EXPORT int listen(int fd, int backlog)
{
	struct sconn *sc;
	int rc;

	PRELOAD_INIT();
	rc = next.listen(fd, backlog);
	if (rc == 0 && (sc = fd_get(fd))) {
		fd_listed();
		put(sc);
	}
	return rc;
}

/* A connection accepted from a listener this library created is tracked. */
static int accepted(int lfd, int fd, int flags)
{
	struct sconn *sc;
	int timeo;

	if (fd < 0 || !(sc = fd_get(lfd)))
		return fd;
	timeo = atomic_load(&sc->rcvtimeo_ms);
	put(sc);
	if (fd_track(fd, 1) && (sc = fd_get(fd))) {
		int saved = errno;

		soft_set_nonblock(fd, (flags & SOCK_NONBLOCK) != 0);
		/* the kernel copies the listener's */
		soft_set_rcvtimeo(fd, timeo);
		/* a forked worker that only accepts is listed in smcss too */
		ctl_hello();
		ctl_established(fd, sc);
		put(sc);
		errno = saved;
	}
	return fd;
}

/* A blocking accept is a wait that cannot be cut short (offer.c). */
static void before_accept(int lfd)
{
	struct sconn *sc;

	if (!offer_pending() || !(sc = fd_get(lfd)))
		return;
	if (!soft_nonblocking(lfd, sc))
		offer_before_sleep(-1);
	put(sc);
}

EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	PRELOAD_INIT();
	before_accept(fd);
	return accepted(fd, next.accept(fd, addr, len), 0);
}

EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	PRELOAD_INIT();
	before_accept(fd);
	return accepted(fd, next.accept4(fd, addr, len, flags), flags);
}

/* A vfork() child: its descriptors are its own, our table is its parent's. */
static bool in_vfork_child(void)
{
	return atomic_load_explicit(&fd_tracked, memory_order_relaxed) && soft_vfork_child();
}

EXPORT int close(int fd)
{
	bool vfork_child;

	PRELOAD_INIT();
	vfork_child = soft_vfork_child();
	if (vfork_child && atomic_load_explicit(&fd_tracked, memory_order_relaxed)) {
		child_fds_close(child_fds_vfork(), fd);
		return next.close(fd);
	}
	/* one of our RDMA resources' (rdma_fd_keep()): it stays open, the call succeeds */
	if (fd >= 0 && !vfork_child && rdma_fds_kept_in((unsigned)fd, (unsigned)fd, &(int){ 0 }, 1))
		return 0;
	if (atomic_load_explicit(&fd_tracked, memory_order_relaxed))
		fd_untrack(fd);
	soft_epoll_closed(fd);
	if (!vfork_child) {
		bell_fds_closed((unsigned)fd, (unsigned)fd);
		ctl_fds_closed((unsigned)fd, (unsigned)fd);
	}
	return next.close(fd);
}

static int raw_close_range(unsigned first, unsigned last, int flags)
{
	if (!next.close_range)
		return (int)next.syscall(SYS_close_range, first, last, flags);
	return next.close_range(first, last, flags);
}

/*
 * close_range(2) over [first, last] but for the descriptors of our RDMA
 * resources (rdma_fd_keep()), which stay open: the ranges between them.
 */
static int close_range_around(unsigned first, unsigned last, int flags)
{
	int kept[64], rc = 0;
	unsigned n = soft_vfork_child() ? 0 : rdma_fds_kept_in(first, last, kept, 64);
	unsigned long from = first;

	for (unsigned i = 0; i < n; i++) {
		if ((unsigned long)kept[i] > from && raw_close_range((unsigned)from, (unsigned)kept[i] - 1, flags))
			rc = -1;
		from = (unsigned long)kept[i] + 1;
	}
	if (from <= last && raw_close_range((unsigned)from, last, flags))
		rc = -1;
	return rc;
}

/*
 * close_range(2) and closefrom(3) (sshd and daemons close every descriptor
 * they do not know before they exec): each descriptor of ours in the range
 * is let go as by close(), and the library forgets its own ones there (the
 * control connection, the doorbells), so that nothing of ours is ever
 * written to a descriptor number the program opens next.
 */
void soft_fds_closing(unsigned first, unsigned last)
{
	int high = fd_high();

	if (in_vfork_child())
		child_fds_close_range(child_fds_vfork(), first, last, false);
	for (unsigned fd = first; fd <= last && fd < (unsigned)high; fd++) {
		if (in_vfork_child()) {
			struct sconn *sc = fd_get((int)fd);

			if (sc) {
				child_fds_close(child_fds_vfork(), (int)fd);
				sconn_put(sc);
			}
		} else if (atomic_load_explicit(&fd_tracked, memory_order_relaxed)) {
			fd_untrack((int)fd);
		}
	}
	if (!soft_vfork_child()) {
		soft_epoll_closed_range(first, last);
		bell_fds_closed(first, last);
		ctl_fds_closed(first, last);
	}
}

EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
	PRELOAD_INIT();
	if (first <= last && !(flags & CLOSE_RANGE_CLOEXEC))
		soft_fds_closing(first, last);
	else if (first <= last && in_vfork_child())
		child_fds_close_range(child_fds_vfork(), first, last, true);
	if (first > last)
		return raw_close_range(first, last, flags);
	return close_range_around(first, last, flags);
}

EXPORT void closefrom(int lowfd)
{
	PRELOAD_INIT();
	if (lowfd < 0)
		lowfd = 0;
	soft_fds_closing((unsigned)lowfd, ~0U);
	if (!soft_vfork_child() && rdma_fds_kept_in((unsigned)lowfd, ~0U, &(int){ 0 }, 1))
		close_range_around((unsigned)lowfd, ~0U, 0);
	else if (next.closefrom)
		next.closefrom(lowfd);
	else
		next.syscall(SYS_close_range, (unsigned)lowfd, ~0U, 0);
}

EXPORT int shutdown(int fd, int how)
{
	struct sconn *sc;
	int r;

	PRELOAD_INIT();
	if (!(sc = fd_get(fd)))
		return next.shutdown(fd, how);
	if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR) {
		put(sc);
		errno = EINVAL;
		return -1;
	}
	r = soft_shutdown(fd, sc, how);
	put(sc);
	return r;
}

/* newfd names the same connection as oldfd now. */
static int duped(int oldfd, int newfd, bool cloexec)
{
	struct sconn *sc;

	if (newfd >= 0 && in_vfork_child()) {
		child_fds_dup(child_fds_vfork(), oldfd, newfd, cloexec);
		return newfd;
	}
	if (newfd < 0 || !(sc = fd_get(oldfd)))
		return newfd;
	fd_alias(newfd, sc);
	put(sc);
	return newfd;
}

EXPORT int dup(int fd)
{
	PRELOAD_INIT();
	return duped(fd, next.dup(fd), false);
}

/* dup2/dup3 close newfd first: a tracked one is released as by close(). */
static void replacing(int oldfd, int newfd)
{
	if (oldfd != newfd && newfd >= 0 && !soft_vfork_child()) {
		bell_fds_closed((unsigned)newfd, (unsigned)newfd);
		ctl_fds_closed((unsigned)newfd, (unsigned)newfd);
	}
	if (oldfd != newfd && atomic_load_explicit(&fd_tracked, memory_order_relaxed) &&
	    !soft_vfork_child()) {
		struct sconn *sc = fd_get(oldfd);
		int saved = errno;

		/* only when the call can succeed: oldfd must be open */
		if (sc || next.fcntl(oldfd, F_GETFD) >= 0)
			fd_untrack(newfd);
		if (sc)
			sconn_put(sc);
		errno = saved;
	}
}

/* newfd now names what oldfd does: an epoll set it named is closed (epoll_sets.c). */
static int replaced(int oldfd, int newfd, int r)
{
	if (r >= 0 && oldfd != newfd && !soft_vfork_child())
		soft_epoll_closed(newfd);
	return r;
}

EXPORT int dup2(int oldfd, int newfd)
{
	PRELOAD_INIT();
	replacing(oldfd, newfd);
	return duped(oldfd, replaced(oldfd, newfd, next.dup2(oldfd, newfd)), false);
}

EXPORT int dup3(int oldfd, int newfd, int flags)
{
	PRELOAD_INIT();
	replacing(oldfd, newfd);
	return duped(oldfd, replaced(oldfd, newfd, next.dup3(oldfd, newfd, flags)), (flags & O_CLOEXEC) != 0);
}

static int fcntl_common(int (*fn)(int, int, ...), int fd, int cmd, void *arg)
{
	int r = fn(fd, cmd, arg);

	if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
		return duped(fd, r, cmd == F_DUPFD_CLOEXEC);
	if (cmd == F_SETFL && r == 0)
		soft_set_nonblock(fd, ((long)(intptr_t)arg & O_NONBLOCK) != 0);
	return r;
}

EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	PRELOAD_INIT();
	return fcntl_common(next.fcntl, fd, cmd, arg);
}

EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	PRELOAD_INIT();
	return fcntl_common(next.fcntl64 ? next.fcntl64 : next.fcntl, fd, cmd, arg);
}

/* Only to see SO_RCVTIMEO change: a futex wait needs it (io.c). */
EXPORT int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	struct sconn *sc;
	bool held;
	int r;

	PRELOAD_INIT();
	if (level == SOL_SOCKET && name == SO_ZEROCOPY && (sc = fd_hold(fd, &held))) {
		r = soft_zerocopy(fd, sc, val, len);
		fd_unhold(sc, held);
		return r;
	}
	r = next.setsockopt(fd, level, name, val, len);
	if (r == 0 && level == SOL_SOCKET &&
	    (name == SO_RCVTIMEO_OLD || name == SO_RCVTIMEO_NEW) && (sc = fd_hold(fd, &held))) {
		atomic_store(&sc->rcvtimeo_ms, -1);
		fd_unhold(sc, held);
	}
	if (r == 0 && level == SOL_SOCKET && name == SO_RCVLOWAT && len >= (socklen_t)sizeof(int) &&
	    (sc = fd_hold(fd, &held))) {
		int v;

		memcpy(&v, val, sizeof(v));
		soft_rcvlowat_set(fd, sc, v);
		fd_unhold(sc, held);
	}
	return r;
}

EXPORT int getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	struct sconn *sc;
	bool held;
	int r;

	PRELOAD_INIT();
	r = next.getsockopt(fd, level, name, val, len);
	if (r == 0 && level == SOL_SOCKET && name == SO_RCVLOWAT && *len >= (socklen_t)sizeof(int) &&
	    (sc = fd_hold(fd, &held))) {
		int v;

		memcpy(&v, val, sizeof(v));
		soft_rcvlowat_get(sc, &v);
		memcpy(val, &v, sizeof(v));
		fd_unhold(sc, held);
	}
	return r;
}

EXPORT int ioctl(int fd, unsigned long req, ...)
{
	struct sconn *sc;
	va_list ap;
	void *arg;
	long n = -1;
	bool mine = false;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	PRELOAD_INIT();
	if (req == FIONBIO) {
		int r = next.ioctl(fd, req, arg);

		if (r == 0 && arg)
			soft_set_nonblock(fd, *(int *)arg != 0);
		return r;
	}
	if ((req != FIONREAD && req != SIOCOUTQ) || !(sc = fd_get(fd)))
		return next.ioctl(fd, req, arg);
	if (req == FIONREAD && sconn_mapped(sc)) {
		n = soft_fionread(fd, sc);
		mine = true;
	} else if (req == SIOCOUTQ && sconn_mapped(sc) && atomic_load(&sc->tx_cut) &&
		   !conn_back_reads(sc)) {
		n = soft_outq(sc);
		mine = true;
	}
	put(sc);
	if (!mine)
		return next.ioctl(fd, req, arg);
	if (n < 0)
		return -1;
	if (!arg) {
		errno = EFAULT;
		return -1;
	}
	*(int *)arg = n > INT32_MAX ? INT32_MAX : (int)n;
	return 0;
}

/* stdio reads and writes a stream past the library: see conn_stdio_open() */
EXPORT FILE *fdopen(int fd, const char *mode)
{
	struct sconn *sc;

	PRELOAD_INIT();
	if ((sc = fd_get(fd))) {
		conn_stdio_open(fd, sc);
		put(sc);
	}
	return next.fdopen(fd, mode);
}
