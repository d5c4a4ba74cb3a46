/*
 * How much of a TCP stream the application has read or written, from the
 * kernel: for a socket several processes hold, each one's own count misses
 * the others'.
 */
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <linux/tcp.h>

#include "base.h"

/* tcpi_state values (the kernel's include/net/tcp_states.h) */
enum {
	ST_FIN_WAIT1 = 4, ST_FIN_WAIT2 = 5, ST_TIME_WAIT = 6, ST_CLOSE = 7, ST_CLOSE_WAIT = 8,
	ST_LAST_ACK = 9, ST_CLOSING = 11,
};

/*
 * Application bytes received: the kernel's count moves with rcv_nxt, which
 * a FIN moves by one too (states after the peer's FIN).  CLOSE is also
 * where an open socket ends after both FINs (LAST_ACK, or FIN_WAIT2 and the
 * peer's FIN); after a reset the count no longer matters.
 */
static bool bytes_received(int fd, uint64_t *out)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (next.getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) ||
	    len < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof(ti.tcpi_bytes_received))
		return false;
	*out = ti.tcpi_bytes_received;
	switch (ti.tcpi_state) {
	case ST_CLOSE_WAIT:
	case ST_LAST_ACK:
	case ST_CLOSING:
	case ST_TIME_WAIT:
	case ST_CLOSE:
		if (*out)
			(*out)--;
		break;
	default:
		break;
	}
	return true;
}

bool soft_tcp_read_total(int fd, uint64_t *out)
{
	uint64_t before, after;
	int inq;

	/* received minus still queued, taken while nothing arrived */
	for (int i = 0; i < 4; i++) {
		if (!bytes_received(fd, &before) || next.ioctl(fd, SIOCINQ, &inq) < 0 ||
		    !bytes_received(fd, &after))
			return false;
		if (before == after && inq >= 0 && (uint64_t)inq <= before) {
			*out = before - (uint64_t)inq;
			return true;
		}
	}
	return false;
}

/* Our FIN is queued or acknowledged: shutdown(SHUT_WR) by any holder. */
static bool fin_sent(int state)
{
	switch (state) {
	case ST_FIN_WAIT1:
	case ST_FIN_WAIT2:
	case ST_TIME_WAIT:
	case ST_CLOSE:
	case ST_LAST_ACK:
	case ST_CLOSING:
		return true;
	default:
		return false;
	}
}

/*
 * Application bytes written, acknowledged or still queued: both counts
 * include the SYN of a connect() (one sequence number; role 0 is the
 * connecting end) and our FIN once a holder shut the socket down.
 */
bool soft_tcp_sent_total(int fd, int role, uint64_t *out)
{
	struct tcp_info ti;
	socklen_t len;
	uint64_t before;
	int outq;

	for (int i = 0; i < 4; i++) {
		len = sizeof(ti);
		if (next.getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) ||
		    len < offsetof(struct tcp_info, tcpi_bytes_acked) + sizeof(ti.tcpi_bytes_acked))
			return false;
		before = ti.tcpi_bytes_acked;
		if (next.ioctl(fd, SIOCOUTQ, &outq) < 0 || outq < 0)
			return false;
		len = sizeof(ti);
		if (next.getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
			return false;
		if (ti.tcpi_bytes_acked == before) {
			uint64_t total = before + (uint64_t)outq;
			uint64_t ctl = (role == 0 ? 1 : 0) + (fin_sent(ti.tcpi_state) ? 1 : 0);

			if (total < ctl)
				return false;
			*out = total - ctl;
			return true;
		}
	}
	return false;
}
