#include "peer.h"

#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

void peer_init(struct peer *p)
{
	int sv[2];

	memset(p, 0, sizeof(*p));
	socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv);
	p->fd = sv[1];
	p->g.nl.fd = sv[0];
	p->g.nl.protocol = NETLINK_GENERIC;
	p->g.nl.backend = SMC_BACKEND_SOFT;
	p->g.nl.seq = 1000;
	p->g.family = 0x20;
	p->g.version = 1;
}

void peer_close(struct peer *p)
{
	close(p->fd);
	smc_genl_close(&p->g);
}

static void send_msg(struct peer *p, int n, struct mb *m)
{
	struct nlmsghdr *h = (struct nlmsghdr *)m->buf;

	h->nlmsg_len = (uint32_t)m->len;
	h->nlmsg_seq = p->g.nl.seq + (uint32_t)n;
	send(p->fd, m->buf, m->len, 0);
}

void peer_queue(struct peer *p, int n, struct mb *m)
{
	send_msg(p, n, m);
}

void peer_done(struct peer *p, int n)
{
	struct mb m;
	int zero = 0;

	mb_start(&m, NLMSG_DONE, NLM_F_MULTI);
	mb_raw(&m, &zero, sizeof(zero));
	send_msg(p, n, &m);
}

void peer_error(struct peer *p, int n, int error, const char *ext_ack)
{
	struct nlmsgerr e = { .error = error };
	struct mb m;

	mb_start(&m, NLMSG_ERROR, ext_ack ? NLM_F_CAPPED | NLM_F_ACK_TLVS : NLM_F_CAPPED);
	e.msg.nlmsg_len = sizeof(struct nlmsghdr);
	mb_raw(&m, &e, sizeof(e));
	if (ext_ack)
		mb_str(&m, NLMSGERR_ATTR_MSG, ext_ack);
	send_msg(p, n, &m);
}

size_t peer_request(struct peer *p, struct mb *m)
{
	ssize_t n = recv(p->fd, m->buf, sizeof(m->buf), MSG_DONTWAIT);

	m->len = n > 0 ? (size_t)n : 0;
	return m->len;
}
