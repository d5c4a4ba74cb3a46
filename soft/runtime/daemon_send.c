/* Replies of one client connection of smc_softd: datagrams out, the rest queued. */
#include "daemon_client.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define SOFTD_QUEUE_KEEP (64u << 10)      /* larger queue buffers are given back once empty */

/*
 * Descriptors of a run of replies; off - base is the offset into the run.
 * An entry with fd -1 is a mark: a new datagram starts there.
 */
struct fdrun {
	const struct soft_out_fd *v;
	size_t n, base;
	size_t used;                      /* sent (and closed) so far */
};

static size_t next_fd_off(const struct fdrun *f)
{
	return f->used < f->n ? f->v[f->used].off - f->base : SIZE_MAX;
}

/*
 * Length of the first reply datagram in p: whole messages, at least one.  A
 * mark (at offset mark) starts a new datagram; the message of a mark with a
 * descriptor (alone) goes alone.
 */
static size_t datagram_len(const unsigned char *p, size_t len, size_t mark, bool alone)
{
	size_t off = 0;

	while (off + sizeof(struct nlmsghdr) <= len) {
		struct nlmsghdr h;
		size_t m;

		memcpy(&h, p + off, sizeof(h));
		m = NLMSG_ALIGN(h.nlmsg_len);
		if (h.nlmsg_len < sizeof(h) || m > len - off)
			return off ? off : len;
		if (off && (off + m > SOFTD_TX_MAX || off == mark))
			break;
		off += m;
		if (alone && off - m == mark)
			break;
	}
	return off ? off : len;
}

static ssize_t send_one(int sock, const unsigned char *p, size_t len, int fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = (void *)p, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (fd >= 0) {
		struct cmsghdr *cm;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	}
	return sendmsg(sock, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* Send p as datagrams until done or the socket is full: bytes sent, or -errno. */
static ssize_t send_msgs(int sock, const unsigned char *p, size_t len, struct fdrun *f)
{
	size_t off = 0;

	while (off < len) {
		size_t mark;
		int fd = -1;
		size_t n;

		/* marks at this offset start this datagram; one may bring a descriptor */
		while (next_fd_off(f) == off && fd < 0 && f->v[f->used].fd < 0)
			f->used++;
		if (next_fd_off(f) == off)
			fd = f->v[f->used].fd;
		mark = next_fd_off(f);
		n = datagram_len(p + off, len - off, mark >= off ? mark - off : SIZE_MAX, fd >= 0);
		if (send_one(sock, p + off, n, fd) < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			return -errno;
		}
		if (fd >= 0)
			close(f->v[f->used++].fd);
		off += n;
	}
	return (ssize_t)off;
}

static bool qfds_add(struct softd_client *c, const struct soft_out_fd *v, size_t n, size_t shift)
{
	if (c->n_qfds + n > c->qfds_cap) {
		size_t cap = c->qfds_cap ? c->qfds_cap : 4;
		struct soft_out_fd *q;

		while (cap < c->n_qfds + n)
			cap *= 2;
		q = realloc(c->qfds, cap * sizeof(*q));
		if (!q)
			return false;
		c->qfds = q;
		c->qfds_cap = cap;
	}
	for (size_t i = 0; i < n; i++)
		c->qfds[c->n_qfds++] = (struct soft_out_fd){ .off = v[i].off + shift, .fd = v[i].fd };
	return true;
}

/* Queue p; its descriptors (offsets from base) move to the queue. */
static bool queue_add(struct softd_client *c, const unsigned char *p, size_t len,
		      const struct fdrun *f)
{
	size_t pending = c->q_len - c->q_off;

	if (len > SOFTD_QUEUE_MAX - pending)
		return false;
	if (c->q_off) {
		memmove(c->q, c->q + c->q_off, pending);
		for (size_t i = 0; i < c->n_qfds; i++)
			c->qfds[i].off -= c->q_off;
		c->q_off = 0;
		c->q_len = pending;
	}
	if (c->q_len + len > c->q_cap) {
		size_t cap = c->q_cap ? c->q_cap : SOFTD_QUEUE_KEEP;
		unsigned char *q;

		while (cap < c->q_len + len)
			cap *= 2;
		q = realloc(c->q, cap);
		if (!q)
			return false;
		c->q = q;
		c->q_cap = cap;
	}
	/* queued answers to different requests never share a datagram */
	if (!qfds_add(c, &(struct soft_out_fd){ .off = 0, .fd = -1 }, 1, c->q_len) ||
	    !qfds_add(c, f->v + f->used, f->n - f->used, c->q_len - f->base))
		return false;
	memcpy(c->q + c->q_len, p, len);
	c->q_len += len;
	return true;
}

static enum softd_io_rc send_run(struct softd_client *c, const unsigned char *p, size_t len,
				 struct fdrun *f)
{
	enum softd_io_rc rc = SOFTD_IO_OK;
	ssize_t n = 0;

	if (!softd_client_blocked(c)) {
		n = send_msgs(c->fd, p, len, f);
		if (n < 0)
			rc = SOFTD_IO_CLOSE;
	}
	if (rc == SOFTD_IO_OK && (size_t)n < len) {
		f->base += (size_t)n;
		if (queue_add(c, p + n, len - (size_t)n, f))
			f->used = f->n;         /* the queue has them now */
		else
			rc = SOFTD_IO_DROP;
	}
	for (; f->used < f->n; f->used++)
		if (f->v[f->used].fd >= 0)
			close(f->v[f->used].fd);
	return rc;
}

enum softd_io_rc softd_client_send(struct softd_client *c, const unsigned char *p, size_t len)
{
	struct fdrun f = { 0 };

	return send_run(c, p, len, &f);
}

enum softd_io_rc softd_client_send_out(struct softd_client *c, struct soft_out *o)
{
	struct fdrun f = { .v = o->fds, .n = o->n_fds };
	enum softd_io_rc rc = send_run(c, o->buf, o->len, &f);

	o->n_fds = 0;
	return rc;
}

enum softd_io_rc softd_client_flush(struct softd_client *c)
{
	struct fdrun f = { .v = c->qfds, .n = c->n_qfds, .base = c->q_off };
	ssize_t n;

	if (!softd_client_blocked(c))
		return SOFTD_IO_OK;
	n = send_msgs(c->fd, c->q + c->q_off, c->q_len - c->q_off, &f);
	if (f.used) {
		memmove(c->qfds, c->qfds + f.used, (c->n_qfds - f.used) * sizeof(*c->qfds));
		c->n_qfds -= f.used;
	}
	if (n < 0)
		return SOFTD_IO_CLOSE;
	c->q_off += (size_t)n;
	if (c->q_off == c->q_len) {
		c->q_off = c->q_len = 0;
		if (c->q_cap > SOFTD_QUEUE_KEEP) {
			free(c->q);
			c->q = NULL;
			c->q_cap = 0;
		}
	}
	return SOFTD_IO_OK;
}
