/*
 * One client connection of smc_softd: its requests in, its replies out.
 * Replies go out as datagrams of whole messages; what the client's socket
 * cannot take yet waits in a bounded queue, and the client's requests are not
 * read while it does (the socket's own buffer then throttles the client).
 */
#ifndef SOFTD_CLIENT_H
#define SOFTD_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "soft_nl.h"

#define SOFTD_RX_MAX     65536            /* largest request datagram */
#define SOFTD_TX_MAX     32768            /* largest reply datagram, unless one message is larger */
#define SOFTD_QUEUE_MAX  (4u << 20)       /* replies waiting for one client */

/* Buffers shared by every client: one request is handled at a time. */
struct softd_io {
	_Alignas(struct nlmsghdr) unsigned char rx[SOFTD_RX_MAX];
	struct soft_out out;
};

struct softd_client {
	int fd;
	struct soft_peer peer;
	unsigned char *q;                 /* replies not sent yet: q[q_off..q_len) */
	size_t q_off, q_len, q_cap;
	struct soft_out_fd *qfds;         /* their descriptors, offsets into q */
	size_t n_qfds, qfds_cap;
	bool eof;                         /* the client will send no more */
	uint32_t events;                  /* what epoll waits for */
	int64_t stalled_since_ms;         /* blocked and reading nothing since (0: not blocked) */
	struct softd_client *prev, *next;
};

enum softd_io_rc {
	SOFTD_IO_OK,
	SOFTD_IO_CLOSE,                   /* the connection is over (EOF, error) */
	SOFTD_IO_DROP,                    /* the client misbehaved: queue overflow, no memory */
};

static inline bool softd_client_blocked(const struct softd_client *c)
{
	return c->q_off < c->q_len;
}

/*
 * Read and answer requests until the socket is empty, a burst is done, or
 * replies start to wait.  hup: the client closed its end (EPOLLRDHUP/HUP),
 * so a zero-length read is its end and not an empty datagram.
 */
enum softd_io_rc softd_client_read(struct softd_client *c, bool hup, struct soft_state *st,
				   struct softd_io *io);
/* Send replies (whole messages), queueing what the socket cannot take yet. */
enum softd_io_rc softd_client_send(struct softd_client *c, const unsigned char *p, size_t len);
/* The same for o with its descriptors, which are sent, queued or closed. */
enum softd_io_rc softd_client_send_out(struct softd_client *c, struct soft_out *o);
/* Send what waits; OK also when the socket is still full. */
enum softd_io_rc softd_client_flush(struct softd_client *c);
/* The client is gone: carry out what it sent before, without replies. */
void softd_client_drain(struct softd_client *c, struct soft_state *st, struct softd_io *io);
void softd_client_free(struct softd_client *c);

#endif
