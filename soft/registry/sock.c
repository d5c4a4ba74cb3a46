/*
 * What the kernel says about a socket handed to the daemon: only these facts
 * go into a registration, so a client cannot claim a socket, address or
 * namespace it does not have.
 */
#include "sock.h"
#include "state.h"
#include "reg.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/sockios.h>

#include "smc_uapi.h"

static int get_int(int fd, int opt, int *v)
{
	socklen_t len = sizeof(*v);

	return getsockopt(fd, SOL_SOCKET, opt, v, &len) < 0 ? -errno : 0;
}

/* family: getsockname's (SOCK_RAW sockets of protocol TCP are not TCP sockets) */
static bool is_tcp(int fd, int family)
{
	int type, proto;

	return (family == AF_INET || family == AF_INET6) && !get_int(fd, SO_TYPE, &type) &&
	       type == SOCK_STREAM && !get_int(fd, SO_PROTOCOL, &proto) && proto == IPPROTO_TCP;
}

/* As smc_diag fills inet_diag_sockid: IPv4 in word 0, IPv6 as it is. */
static void put_addr(const struct sockaddr_storage *ss, uint8_t addr[16], uint16_t *port)
{
	memset(addr, 0, 16);
	*port = 0;
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;

		memcpy(addr, &sin->sin_addr, 4);
		*port = ntohs(sin->sin_port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;

		memcpy(addr, &sin6->sin6_addr, 16);
		*port = ntohs(sin6->sin6_port);
	}
}

/* An unconnected socket has no peer: its peer fields stay zero.  The family. */
static int read_addrs(int fd, struct soft_sock_id *id)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int family;

	memset(&ss, 0, sizeof(ss));
	len = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		ss.ss_family = AF_UNSPEC;
	family = ss.ss_family;
	put_addr(&ss, id->src, &id->sport);
	memset(&ss, 0, sizeof(ss));
	len = sizeof(ss);
	if (getpeername(fd, (struct sockaddr *)&ss, &len) < 0)
		ss.ss_family = AF_UNSPEC;
	put_addr(&ss, id->dst, &id->dport);
	return family;
}

/* SIOCGSKNS needs CAP_NET_ADMIN over the socket's namespace: 0 without. */
static uint64_t sock_netns(int fd)
{
	struct stat sb;
	int nsfd = ioctl(fd, SIOCGSKNS);
	uint64_t ino = 0;

	if (nsfd < 0)
		return 0;
	if (fstat(nsfd, &sb) == 0)
		ino = (uint64_t)sb.st_ino;
	close(nsfd);
	return ino;
}

int soft_sock_read(int fd, struct soft_sock_id *id, uint64_t fallback_netns)
{
	struct stat sb;
	socklen_t len;
	int family, ifindex;

	if (fstat(fd, &sb) < 0)
		return -errno;
	if (!S_ISSOCK(sb.st_mode))
		return -EINVAL;
	memset(id, 0, sizeof(*id));
	family = read_addrs(fd, id);
	if (!is_tcp(fd, family))
		return -EINVAL;
	id->family = family;
	id->inode = (uint64_t)sb.st_ino;
	id->uid = (uint32_t)sb.st_uid;
	id->ifindex = get_int(fd, SO_BINDTOIFINDEX, &ifindex) ? 0 : (uint32_t)ifindex;
	len = sizeof(id->cookie);
	if (getsockopt(fd, SOL_SOCKET, SO_COOKIE, &id->cookie, &len) < 0)
		id->cookie = 0;
	id->netns = soft_netns_key(fd, -1);
	if (!id->netns)
		id->netns = sock_netns(fd);     /* no cookies: the inode, as the peer's */
	if (!id->netns)
		id->netns = fallback_netns;
	return 0;
}

int soft_sock_check_state(int fd, struct soft_sock_id *id, uint8_t state)
{
	int listening;
	uint8_t tcp;
	socklen_t len = sizeof(tcp);

	if (state == SMC_SOFT_STATE_ACTIVE) {
		/* a connected TCP socket's peer has a port (read_addrs); tcp_info starts with the state */
		if (!id->dport || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &tcp, &len) < 0 || len != 1 ||
		    tcp == TCP_LISTEN)
			return -EINVAL;
		id->tcp_state = tcp;
		return 0;
	}
	if (get_int(fd, SO_ACCEPTCONN, &listening))
		return -EINVAL;
	switch (state) {
	case SMC_SOFT_STATE_INIT:
		return listening ? -EINVAL : 0;
	case SMC_SOFT_STATE_LISTEN:
		return listening ? 0 : -EINVAL;
	}
	return -EINVAL;
}

void soft_sock_set_state(struct soft_sock *s, uint8_t state)
{
	s->state = state;
	/* Until the data path pairs it, a connected socket is a TCP fallback. */
	if (state == SMC_SOFT_STATE_ACTIVE) {
		s->mode = SMC_DIAG_MODE_FALLBACK_TCP;
		s->fallback_reason = SOFT_DECL_PEERNOSMC;
	} else {
		s->mode = SMC_DIAG_MODE_SMCR;
		s->fallback_reason = 0;
	}
	s->peer_diagnosis = 0;
}
