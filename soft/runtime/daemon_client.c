/* Requests of one client connection of smc_softd, read and handed to the core. */
#include "daemon_client.h"
#include "families.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define SOFTD_READ_BURST 32              /* requests per wake-up, so clients take turns */
#define SOFTD_DRAIN_MAX  64              /* bounds the work for a client that is gone */
#define SOFTD_MAX_FDS    8               /* room for descriptors; the kernel drops extras */
#define SOFTD_OUT_KEEP   (1u << 20)      /* larger reply buffers are given back */

/* Keep the first descriptor that came with a request, close the others. */
static void take_fds(struct msghdr *msg, int *fd)
{
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
		size_t n;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS ||
		    cm->cmsg_len < CMSG_LEN(0))
			continue;
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int f;

			memcpy(&f, CMSG_DATA(cm) + i * sizeof(int), sizeof(f));
			if (*fd < 0)
				*fd = f;
			else
				close(f);
		}
	}
}

/* One datagram into io->rx: its length or -errno; *trunc when it did not fit. */
static ssize_t recv_request(int sock, struct softd_io *io, int *fd, bool *trunc)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(SOFTD_MAX_FDS * sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = io->rx, .iov_len = sizeof(io->rx) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
	};
	ssize_t n;
	int reset = 0;

	*fd = -1;
	*trunc = false;
	/*
	 * A client that closes with our replies unread makes the kernel
	 * report ECONNRESET once, ahead of the requests it sent last (its
	 * SOCK_DEL at exit): they are read after it.
	 */
	do
		n = recvmsg(sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	while (n < 0 && (errno == EINTR || (errno == ECONNRESET && !reset++)));
	if (n < 0)
		return -errno;
	take_fds(&msg, fd);
	*trunc = (msg.msg_flags & MSG_TRUNC) != 0;
	return n;
}

/*
 * The core gets a datagram one message at a time, so that one packed with
 * requests whose replies are large stops at the queue limit instead of
 * building them all.  A descriptor stays with the whole datagram, as the
 * core offers it to each message in turn.  False when it stopped early.
 */
static bool handle(struct softd_client *c, struct soft_state *st, const unsigned char *p,
		   size_t len, int fd, struct soft_out *out)
{
	size_t off = 0;

	if (len < sizeof(struct nlmsghdr)) {
		soft_handle(st, &c->peer, p, len, fd, out);
		return true;
	}
	while (off + sizeof(struct nlmsghdr) <= len) {
		struct nlmsghdr h;
		size_t n = len - off;

		if (out->len > SOFTD_QUEUE_MAX) {
			if (fd >= 0)
				close(fd);
			return false;
		}
		memcpy(&h, p + off, sizeof(h));
		/* a lying length goes to the core as it is: the core answers it */
		if (h.nlmsg_len >= sizeof(h) && h.nlmsg_len <= n && NLMSG_ALIGN(h.nlmsg_len) < n)
			n = NLMSG_ALIGN(h.nlmsg_len);
		fd = soft_handle_keep(st, &c->peer, p + off, n, fd, out);
		off += n;
	}
	if (fd >= 0)
		close(fd);
	return true;
}

/* Run one request datagram through the core; send the replies when asked to. */
static enum softd_io_rc answer(struct softd_client *c, struct soft_state *st, struct softd_io *io,
			       size_t len, int fd, bool trunc, bool reply)
{
	struct soft_out *out = &io->out;
	enum softd_io_rc rc = SOFTD_IO_OK;

	if (trunc) {
		struct nlmsghdr req;

		memcpy(&req, io->rx, sizeof(req));
		if (fd >= 0)
			close(fd);
		soft_error(out, &req, -EINVAL, "message longer than 65536 bytes");
	} else if (!handle(c, st, io->rx, len, fd, out)) {
		rc = SOFTD_IO_DROP;
	}
	if (out->failed)
		rc = SOFTD_IO_DROP;
	else if (reply && out->len && rc == SOFTD_IO_OK)
		rc = softd_client_send_out(c, out);
	if (out->failed || out->cap > SOFTD_OUT_KEEP)
		soft_out_free(out);
	else
		soft_out_trim(out, 0);
	return rc;
}

enum softd_io_rc softd_client_read(struct softd_client *c, bool hup, struct soft_state *st,
				   struct softd_io *io)
{
	for (int i = 0; i < SOFTD_READ_BURST && !softd_client_blocked(c); i++) {
		enum softd_io_rc rc;
		bool trunc;
		ssize_t n;
		int fd;

		n = recv_request(c->fd, io, &fd, &trunc);
		if (n < 0)
			return n == -EAGAIN || n == -EWOULDBLOCK ? SOFTD_IO_OK : SOFTD_IO_CLOSE;
		if (n == 0 && hup) {
			if (fd >= 0)
				close(fd);
			c->eof = true;
			return SOFTD_IO_OK;
		}
		rc = answer(c, st, io, (size_t)n, fd, trunc, true);
		if (rc != SOFTD_IO_OK)
			return rc;
	}
	return SOFTD_IO_OK;
}

void softd_client_drain(struct softd_client *c, struct soft_state *st, struct softd_io *io)
{
	for (int i = 0; i < SOFTD_DRAIN_MAX; i++) {
		bool trunc;
		ssize_t n;
		int fd;

		n = recv_request(c->fd, io, &fd, &trunc);
		if (n <= 0) {
			if (fd >= 0)
				close(fd);
			return;
		}
		answer(c, st, io, (size_t)n, fd, trunc, false);
	}
}

void softd_client_free(struct softd_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	for (size_t i = 0; i < c->n_qfds; i++)
		if (c->qfds[i].fd >= 0)
			close(c->qfds[i].fd);
	free(c->qfds);
	free(c->q);
	free(c);
}
