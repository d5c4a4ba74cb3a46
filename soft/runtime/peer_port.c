/* The control port (peer_port.h): sockets, and datagrams in and out. */
#include "peer_port.h"
#include "service.h"
#include "peer_msg.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int open_one(int family, uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	int fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1, rc;

	if (fd < 0)
		return -errno;
	if (family == AF_INET6) {
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		rc = bind(fd, (struct sockaddr *)&sin6, sizeof(sin6));
	} else {
		rc = bind(fd, (struct sockaddr *)&sin, sizeof(sin));
	}
	if (rc < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}

int softd_peer_port_open(struct softd_peer_port *p, uint16_t port, bool given,
			 char *err, size_t errlen)
{
	int v4, v6, e = 0;

	p->fd[0] = p->fd[1] = -1;
	p->port = port;
	p->error = 0;
	if (!port)
		return 0;
	v4 = open_one(AF_INET, port);
	v6 = open_one(AF_INET6, port);
	/* a host without IPv6 (or IPv4) serves the other family */
	if (v4 < 0 && v4 != -EAFNOSUPPORT)
		e = -v4;
	else if (v6 < 0 && v6 != -EAFNOSUPPORT)
		e = -v6;
	else if (v4 < 0 && v6 < 0)
		e = EAFNOSUPPORT;
	if (e) {
		if (v4 >= 0)
			close(v4);
		if (v6 >= 0)
			close(v6);
		if (given) {
			snprintf(err, errlen, "--peer-port %u: %s", port, strerror(e));
			return -1;
		}
		p->error = e;
		return 0;
	}
	p->fd[0] = v4 >= 0 ? v4 : -1;
	p->fd[1] = v6 >= 0 ? v6 : -1;
	return 0;
}

void softd_peer_port_close(struct softd_peer_port *p)
{
	for (int i = 0; i < 2; i++) {
		if (p->fd[i] >= 0)
			close(p->fd[i]);
		p->fd[i] = -1;
	}
}

bool softd_peer_port_on(const struct softd_peer_port *p)
{
	return p->fd[0] >= 0 || p->fd[1] >= 0;
}

void softd_peer_port_read(struct softd_peer_port *p, int fd, struct soft_state *st)
{
	uint8_t buf[SOFT_PEER_DGRAM_MAX], from[16];
	struct sockaddr_storage ss;

	(void)p;
	for (int i = 0; i < 64; i++) {
		socklen_t len = sizeof(ss);
		ssize_t n = recvfrom(fd, buf, sizeof(buf), MSG_TRUNC, (struct sockaddr *)&ss, &len);
		int family = ss.ss_family;
		uint16_t port;

		if (n < 0)
			return;
		memset(from, 0, sizeof(from));
		if (family == AF_INET) {
			memcpy(from, &((struct sockaddr_in *)&ss)->sin_addr, 4);
			port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		} else if (family == AF_INET6) {
			memcpy(from, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
			port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
		} else {
			continue;
		}
		if ((size_t)n <= sizeof(buf) && port)
			soft_peer_input(st, buf, (size_t)n, family, from, port, soft_now_ms());
	}
}

int softd_peer_send(void *ctx, const uint8_t *msg, size_t len, int family,
		    const uint8_t from[16], const uint8_t to[16], uint16_t port, uint32_t ifindex)
{
	struct softd_peer_port *p = ctx;
	union {
		char buf[CMSG_SPACE(sizeof(struct in6_pktinfo))];
		struct cmsghdr align;
	} ctl;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port ? port : p->port) };
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6,
				     .sin6_port = htons(port ? port : p->port) };
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf };
	struct cmsghdr *c;
	int fd = p->fd[family == AF_INET6];

	if (fd < 0)
		return -EAFNOSUPPORT;
	memset(&ctl, 0, sizeof(ctl));
	c = (struct cmsghdr *)ctl.buf;
	/* from our end's own address: the peer checks that the question comes from it */
	if (family == AF_INET) {
		struct in_pktinfo pi = { 0 };

		memcpy(&sin.sin_addr, to, 4);
		memcpy(&pi.ipi_spec_dst, from, 4);
		mh.msg_name = &sin;
		mh.msg_namelen = sizeof(sin);
		mh.msg_controllen = CMSG_SPACE(sizeof(pi));
		c->cmsg_level = IPPROTO_IP;
		c->cmsg_type = IP_PKTINFO;
		c->cmsg_len = CMSG_LEN(sizeof(pi));
		memcpy(CMSG_DATA(c), &pi, sizeof(pi));
	} else {
		struct in6_pktinfo pi = { .ipi6_ifindex = 0 };

		memcpy(&sin6.sin6_addr, to, 16);
		if (IN6_IS_ADDR_LINKLOCAL(&sin6.sin6_addr))
			sin6.sin6_scope_id = ifindex;
		memcpy(&pi.ipi6_addr, from, 16);
		mh.msg_name = &sin6;
		mh.msg_namelen = sizeof(sin6);
		mh.msg_controllen = CMSG_SPACE(sizeof(pi));
		c->cmsg_level = IPPROTO_IPV6;
		c->cmsg_type = IPV6_PKTINFO;
		c->cmsg_len = CMSG_LEN(sizeof(pi));
		memcpy(CMSG_DATA(c), &pi, sizeof(pi));
	}
	return sendmsg(fd, &mh, MSG_DONTWAIT) < 0 ? -errno : 0;
}
