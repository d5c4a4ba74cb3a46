/* The I/O calls: tracked sockets go to the soft data path, the rest straight on. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hooks.h"

#define EXPORT __attribute__((visibility("default")))
#define SENDFILE_CHUNK 65536

extern void __chk_fail(void) __attribute__((noreturn));

static ssize_t recv1(int fd, struct sconn *sc, bool held, void *buf, size_t len, int flags)
{
	struct iovec v = { .iov_base = buf, .iov_len = len };
	ssize_t r = soft_recv(fd, sc, &v, 1, flags, NULL);

	fd_unhold(sc, held);
	return r;
}

static ssize_t send1(int fd, struct sconn *sc, bool held, const void *buf, size_t len,
		     int flags)
{
	struct iovec v = { .iov_base = (void *)buf, .iov_len = len };
	ssize_t r = soft_send(fd, sc, &v, 1, flags, NULL);

	fd_unhold(sc, held);
	return r;
}

EXPORT ssize_t read(int fd, void *buf, size_t len)
{
	struct sconn *sc;
	bool held;

	PRELOAD_INIT();
	if (!(sc = fd_hold(fd, &held)))
		return next.read(fd, buf, len);
	return recv1(fd, sc, held, buf, len, 0);
}

EXPORT ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen)
{
	if (len > buflen)
		__chk_fail();
	return read(fd, buf, len);
}

EXPORT ssize_t write(int fd, const void *buf, size_t len)
{
	struct sconn *sc;
	bool held;

	PRELOAD_INIT();
	if (!(sc = fd_hold(fd, &held)))
		return next.write(fd, buf, len);
	return send1(fd, sc, held, buf, len, 0);
}

EXPORT ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	struct sconn *sc;
	bool held;

	PRELOAD_INIT();
	if (!(sc = fd_hold(fd, &held)))
		return next.recv(fd, buf, len, flags);
	return recv1(fd, sc, held, buf, len, flags);
}

EXPORT ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags)
{
	if (len > buflen)
		__chk_fail();
	return recv(fd, buf, len, flags);
}

EXPORT ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	struct sconn *sc;
	bool held;

	PRELOAD_INIT();
	if (!(sc = fd_hold(fd, &held)))
		return next.send(fd, buf, len, flags);
	return send1(fd, sc, held, buf, len, flags);
}

/* Through a message header, so the plain path counts the bytes for the fence. */
EXPORT ssize_t recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *addr,
			socklen_t *alen)
{
	struct iovec v = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = { .msg_name = addr, .msg_namelen = addr && alen ? *alen : 0,
			     .msg_iov = &v, .msg_iovlen = 1 };
	struct sconn *sc;
	bool held;
	ssize_t r;

	PRELOAD_INIT();
	if (!(sc = fd_hold(fd, &held)))
		return next.recvfrom(fd, buf, len, flags, addr, alen);
	r = soft_recv(fd, sc, &v, 1, flags, &mh);
	if (r >= 0 && addr && alen)
		*alen = mh.msg_namelen;
	fd_unhold(sc, held);
	return r;
}

EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen, int flags,
			      struct sockaddr *addr, socklen_t *alen)
{
	if (len > buflen)
		__chk_fail();
	return recvfrom(fd, buf, len, flags, addr, alen);
}

EXPORT ssize_t sendto(int fd, const void *buf, size_t len, int flags,
		      const struct sockaddr *addr, socklen_t alen)
{
	struct iovec v = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_name = (void *)addr, .msg_namelen = alen,
			     .msg_iov = &v, .msg_iovlen = 1 };
	struct sconn *sc;
	bool held;
	ssize_t r;

	PRELOAD_INIT();
	if (!(sc = fd_hold(fd, &held)))
		return next.sendto(fd, buf, len, flags, addr, alen);
	r = soft_send(fd, sc, &v, 1, flags, &mh);
	fd_unhold(sc, held);
	return r;
}

EXPORT ssize_t recvmsg(int fd, struct msghdr *mh, int flags)
{
	struct sconn *sc;
	bool held;
	ssize_t r;

	PRELOAD_INIT();
	if (!(sc = fd_hold(fd, &held))) {
		r = next.recvmsg(fd, mh, flags);
		if (r >= 0 && mh->msg_controllen && !ctl_owns(fd))
			soft_fdpass_received(mh);
		return r;
	}
	r = soft_recv(fd, sc, mh->msg_iov, (int)mh->msg_iovlen, flags, mh);
	fd_unhold(sc, held);
	return r;
}

EXPORT ssize_t sendmsg(int fd, const struct msghdr *mh, int flags)
{
	struct sconn *sc;
	bool held;
	ssize_t r;

	PRELOAD_INIT();
	if (!(sc = fd_hold(fd, &held)))
		return mh->msg_controllen && !ctl_owns(fd) ? soft_fdpass_send(fd, mh, flags)
							   : next.sendmsg(fd, mh, flags);
	r = soft_send(fd, sc, mh->msg_iov, (int)mh->msg_iovlen, flags, mh);
	fd_unhold(sc, held);
	return r;
}

EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	struct sconn *sc;
	bool held;
	ssize_t r;

	PRELOAD_INIT();
	if (!(sc = fd_hold(fd, &held)))
		return next.readv(fd, iov, cnt);
	if (cnt < 0 || cnt > IOV_MAX) {
		fd_unhold(sc, held);
		errno = EINVAL;
		return -1;
	}
	r = soft_recv(fd, sc, iov, cnt, 0, NULL);
	fd_unhold(sc, held);
	return r;
}

EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	struct sconn *sc;
	bool held;
	ssize_t r;

	PRELOAD_INIT();
	if (!(sc = fd_hold(fd, &held)))
		return next.writev(fd, iov, cnt);
	if (cnt < 0 || cnt > IOV_MAX) {
		fd_unhold(sc, held);
		errno = EINVAL;
		return -1;
	}
	r = soft_send(fd, sc, iov, cnt, 0, NULL);
	fd_unhold(sc, held);
	return r;
}

/* Through a buffer of ours: read, then sent as by write(). */
static ssize_t buffered_sendfile(int out, struct sconn *sc, int in, off_t *off, size_t count)
{
	char *buf = malloc(SENDFILE_CHUNK);
	size_t done = 0;
	ssize_t r = 0;

	if (!buf) {
		errno = ENOMEM;
		return -1;
	}
	while (done < count) {
		size_t want = count - done < SENDFILE_CHUNK ? count - done : SENDFILE_CHUNK;
		ssize_t got = off ? pread(in, buf, want, *off + (off_t)done) : next.read(in, buf, want);
		struct iovec v;

		if (got <= 0) {
			r = got;
			break;
		}
		v.iov_base = buf;
		v.iov_len = (size_t)got;
		r = soft_send(out, sc, &v, 1, 0, NULL);
		if (r <= 0) {
			/* nothing went: the file position goes back to where it was */
			if (!off)
				lseek(in, -got, SEEK_CUR);
			break;
		}
		done += (size_t)r;
		if (r < got) {
			/* the socket took less: give the rest back to a file offset */
			if (!off)
				lseek(in, (off_t)r - got, SEEK_CUR);
			break;
		}
	}
	free(buf);
	if (off)
		*off += (off_t)done;
	if (done)
		return (ssize_t)done;
	return r;
}

/*
 * sendfile to a paired socket: the file's bytes go through the ring, as
 * SMC has no zero-copy path either.  A regular file's are read straight
 * into the ring (not while the dump wants to see the bytes); others'
 * through a buffer.
 */
static ssize_t ring_sendfile(int out, struct sconn *sc, int in, off_t *off, size_t count)
{
	struct stat st;
	off_t at;
	ssize_t r;

	if (!soft_dump_on() && !fstat(in, &st) && S_ISREG(st.st_mode) &&
	    (at = off ? *off : lseek(in, 0, SEEK_CUR)) >= 0) {
		r = soft_send_file(out, sc, in, at, count);
		if (r > 0 && off)
			*off += (off_t)r;
		else if (r > 0)
			lseek(in, r, SEEK_CUR);
		if (r != -2)
			return r;
	}
	return buffered_sendfile(out, sc, in, off, count);
}

struct sendfile_args {
	int out, in;
	off_t *off;
	size_t count;
};

static ssize_t kernel_sendfile(void *arg)
{
	struct sendfile_args *a = arg;

	return next.sendfile(a->out, a->in, a->off, a->count);
}

EXPORT ssize_t sendfile(int out, int in, off_t *off, size_t count)
{
	struct sendfile_args a = { out, in, off, count };
	struct sconn *sc;
	bool held;
	ssize_t r;

	PRELOAD_INIT();
	if (!(sc = fd_hold(out, &held)))
		return next.sendfile(out, in, off, count);
	r = soft_kernel_send(out, sc, kernel_sendfile, &a);
	if (r == -2)
		r = ring_sendfile(out, sc, in, off, count);
	fd_unhold(sc, held);
	return r;
}

EXPORT ssize_t sendfile64(int out, int in, off_t *off, size_t count)
	__attribute__((alias("sendfile")));
