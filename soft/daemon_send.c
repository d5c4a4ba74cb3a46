/* Replies of one client connection of smc_softd: datagrams out, the rest queued. */
#include "daemon_client.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define SOFTD_QUEUE_KEEP (64u << 10)      /* larger queue buffers are given back once empty */

/* Length of the first reply datagram in p: whole messages, at least one. */
static size_t datagram_len(const unsigned char *p, size_t len)
{
	size_t off = 0;

	while (off + sizeof(struct nlmsghdr) <= len) {
		struct nlmsghdr h;
		size_t m;

		memcpy(&h, p + off, sizeof(h));
		m = NLMSG_ALIGN(h.nlmsg_len);
		if (h.nlmsg_len < sizeof(h) || m > len - off)
			return len;
		if (off && off + m > SOFTD_TX_MAX)
			break;
		off += m;
	}
	return off ? off : len;
}

/* Send p as datagrams until done or the socket is full: bytes sent, or -errno. */
static ssize_t send_msgs(int sock, const unsigned char *p, size_t len)
{
	size_t off = 0;

	while (off < len) {
		size_t n = datagram_len(p + off, len - off);

		if (send(sock, p + off, n, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			return -errno;
		}
		off += n;
	}
	return (ssize_t)off;
}

static bool queue_add(struct softd_client *c, const unsigned char *p, size_t len)
{
	size_t pending = c->q_len - c->q_off;

	if (len > SOFTD_QUEUE_MAX - pending)
		return false;
	if (c->q_off) {
		memmove(c->q, c->q + c->q_off, pending);
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
	memcpy(c->q + c->q_len, p, len);
	c->q_len += len;
	return true;
}

enum softd_io_rc softd_client_send(struct softd_client *c, const unsigned char *p, size_t len)
{
	ssize_t n = 0;

	if (!softd_client_blocked(c)) {
		n = send_msgs(c->fd, p, len);
		if (n < 0)
			return SOFTD_IO_CLOSE;
	}
	if ((size_t)n < len && !queue_add(c, p + n, len - (size_t)n))
		return SOFTD_IO_DROP;
	return SOFTD_IO_OK;
}

enum softd_io_rc softd_client_flush(struct softd_client *c)
{
	ssize_t n;

	if (!softd_client_blocked(c))
		return SOFTD_IO_OK;
	n = send_msgs(c->fd, c->q + c->q_off, c->q_len - c->q_off);
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
