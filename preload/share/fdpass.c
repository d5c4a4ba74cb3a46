/*
 * Connections passed between processes with SCM_RIGHTS (doc/soft-inherit.md).
 *
 * The sender: a connection that is about to travel is paired first and its
 * sending direction cut over (as before a fork), and it gets one more holder
 * for the journey, so that the sender closing its copy does not end it.
 * The receiver: a connected TCP socket that arrives is asked about at the
 * daemon (SOCK_INFO, the socket as proof); one on shared memory is mapped
 * and takes over the journey's holder, else it stays TCP.
 * A receiver without the library (the peer of a connected Unix socket whose
 * memory maps no libsmc-preload) could not read a ring: a connection not
 * paired yet stays TCP, one on shared memory that has not cut over goes as
 * TCP for good at both ends (listed so), one that has is not sent
 * (EOPNOTSUPP).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <netinet/in.h>

#include "share.h"
#include "reg.h"

#define PASS_MAX     64         /* connections in one message */

/* Each descriptor of the message's SCM_RIGHTS parts, until fn says stop. */
static void for_each_passed(const struct msghdr *mh, void (*fn)(int fd, void *arg), void *arg)
{
	if (!mh->msg_control || mh->msg_controllen < sizeof(struct cmsghdr))
		return;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR((struct msghdr *)mh); cm;
	     cm = CMSG_NXTHDR((struct msghdr *)mh, cm)) {
		size_t n;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS ||
		    cm->cmsg_len < CMSG_LEN(0))
			continue;
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(fd));
			fn(fd, arg);
		}
	}
}

struct journey {
	struct sconn *sc[PASS_MAX];
	size_t n;
	int via;                   /* the Unix socket it goes through */
	int receiver;              /* receiver_preloaded(), RECEIVER_UNASKED before */
	bool refused;              /* a connection on shared memory to a receiver without us */
};

#define RECEIVER_UNASKED (-2)

/*
 * Whether the process at the other end of Unix socket fd has this library
 * mapped: 1 yes, 0 no, -1 unknown (no peer credentials: an unconnected
 * datagram socket, a process of another PID namespace; its maps unreadable).
 */
static int receiver_preloaded(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	char path[64];

	if (next.getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || cr.pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)cr.pid);
	return soft_file_names_library(path);
}

/*
 * A TCP connection's socket, connected or after it: one whose peer closed
 * already (both FINs leave no peer name) may still have bytes in its ring.
 */
static bool tcp_conn(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(int);
	int v;

	if (next.getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &v, &len) < 0 || v != IPPROTO_TCP)
		return false;
	len = sizeof(int);
	if (next.getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) < 0 || v)
		return false;
	len = sizeof(ss);
	return getsockname(fd, (struct sockaddr *)&ss, &len) == 0 &&
	       (ss.ss_family == AF_INET || ss.ss_family == AF_INET6);
}

/* One connected now: it has a peer name. */
static bool tcp_connected(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	return tcp_conn(fd) && getpeername(fd, (struct sockaddr *)&ss, &len) == 0;
}

static void prepare_one(int fd, void *arg)
{
	struct journey *j = arg;
	struct sconn *sc = fd_get(fd);
	uint32_t wake = 0;

	if (!sc)
		return;
	for (size_t i = 0; i < j->n; i++)
		if (j->sc[i] == sc) {
			sconn_put(sc);
			return;
		}
	if (j->receiver == RECEIVER_UNASKED)
		j->receiver = receiver_preloaded(j->via);
	if (j->receiver && tcp_connected(fd))
		ctl_pair_now(fd, sc);
	conn_shared(sc);
	if (!sconn_mapped(sc) || j->n == PASS_MAX) {
		sconn_put(sc);
		return;
	}
	if (!j->receiver || sc->tp.ops->one_process) {
		/* it goes as TCP for good if no direction has cut over */
		if (!sconn_fall_back(fd, sc, SMC_SOFT_DECL_UNSEEN) && !sconn_back_for(fd, sc, false, true))
			j->refused = true;
		sconn_put(sc);
		return;
	}
	/*
	 * As a send does, under the send lock; if the peer has not attached
	 * yet, the holder that sends next cuts over, its fence from the
	 * kernel's count (the journey's holder makes the end shared).
	 */
	pthread_mutex_lock(&sc->tx_lock);
	sconn_tx_try_cut(fd, sc);
	pthread_mutex_unlock(&sc->tx_lock);
	/* what we read must be consumed for the receiver too */
	pthread_mutex_lock(&sc->rx_lock);
	TP(sc, rx_flush, &wake);
	pthread_mutex_unlock(&sc->rx_lock);
	if (wake)
		soft_ring_bell(fd, sc, wake);
	TP(sc, holders_add, 1);
	j->sc[j->n++] = sc;
}

ssize_t soft_fdpass_send(int fd, const struct msghdr *mh, int flags)
{
	struct journey j = { .n = 0, .via = fd, .receiver = RECEIVER_UNASKED };
	ssize_t r;
	int err;

	if (!soft_sandboxed())
		for_each_passed(mh, prepare_one, &j);
	if (j.refused) {
		preload_dbg("libsmc-preload: a connection on shared memory not passed to a "
			    "process without the library\n");
		r = -1;
		errno = EOPNOTSUPP;
	} else {
		r = next.sendmsg(fd, mh, flags);
	}
	err = errno;
	for (size_t i = 0; i < j.n; i++) {
		if (r < 0)
			TP(j.sc[i], holders_add, -1);
		sconn_put(j.sc[i]);
	}
	errno = err;
	return r;
}

/* holder: the process takes a holder of its own (none came with the fd). */
static void adopt(int fd, bool holder)
{
	struct sconn *sc;

	if (!tcp_conn(fd)) {
		soft_uring_check_fd(fd);
		return;
	}
	if (!fd_track(fd, 0) || !(sc = fd_get(fd)))
		return;
	conn_came_shared(sc);
	ctl_adopt(fd, sc);
	if (holder && sconn_mapped(sc))
		TP(sc, holders_add, 1);
	sconn_put(sc);
}

static void adopt_one(int fd, void *arg)
{
	(void)arg;
	adopt(fd, false);
}

void soft_fd_taken(int fd)
{
	if (fd >= 0 && !soft_sandboxed())
		adopt(fd, true);
}

void soft_fdpass_received(const struct msghdr *mh)
{
	if (!soft_sandboxed())
		for_each_passed(mh, adopt_one, NULL);
}

/* sendmmsg(): each message as sendmsg() would send it, so that connections travel. */
int soft_fdpass_sendmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags)
{
	unsigned int i;

	for (i = 0; i < vlen; i++) {
		ssize_t r = soft_fdpass_send(fd, &vec[i].msg_hdr, flags);

		if (r < 0)
			return i ? (int)i : -1;
		vec[i].msg_len = (unsigned int)r;
	}
	return (int)i;
}

/* After recvmmsg(): the connections that came in its n messages. */
void soft_fdpass_mmsg_received(const struct mmsghdr *vec, int n)
{
	for (int i = 0; i < n; i++)
		if (vec[i].msg_hdr.msg_controllen)
			soft_fdpass_received(&vec[i].msg_hdr);
}
