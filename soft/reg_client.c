/*
 * SMC_SOFT client: request building and reply matching by hand, because the
 * preload may not depend on libnl or libmnl.
 */
#include "reg_client.h"
#include "soft_socket.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "softd.h"

#define REQ_BUF 256
#define RECV_BUF 8192

struct req {
	union {
		struct nlmsghdr nlh;
		unsigned char buf[REQ_BUF];
	} u;
};

/* Called for each attribute of the awaited reply message. */
typedef int (*attr_fn)(const struct nlattr *a, void *arg);

const char *soft_reg_socket_path(char *buf, size_t len)
{
	return smc_soft_socket_find(buf, len);
}

static void req_init(struct req *r, uint16_t type, uint16_t flags, uint8_t cmd)
{
	struct genlmsghdr *g;

	memset(r, 0, sizeof(*r));
	r->u.nlh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r->u.nlh.nlmsg_type = type;
	r->u.nlh.nlmsg_flags = NLM_F_REQUEST | flags;
	g = NLMSG_DATA(&r->u.nlh);
	g->cmd = cmd;
	g->version = SMC_SOFT_VERSION;
}

/* Requests are a few small attributes: REQ_BUF always has room. */
static void req_attr(struct req *r, uint16_t type, const void *data, size_t len)
{
	size_t off = NLMSG_ALIGN(r->u.nlh.nlmsg_len);
	struct nlattr a = { .nla_len = (uint16_t)(NLA_HDRLEN + len), .nla_type = type };

	memcpy(r->u.buf + off, &a, sizeof(a));
	memcpy(r->u.buf + off + NLA_HDRLEN, data, len);
	r->u.nlh.nlmsg_len = (uint32_t)(off + NLA_ALIGN(a.nla_len));
}

static int send_req(struct soft_reg_conn *c, struct req *r, int fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = r->u.buf, .iov_len = r->u.nlh.nlmsg_len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	r->u.nlh.nlmsg_seq = ++c->seq;
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
	do
		n = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN ? -ETIMEDOUT : -errno;
	return (size_t)n == iov.iov_len ? 0 : -EMSGSIZE;
}

/* The daemon sends no descriptors yet: any that arrive are not kept. */
static void close_fds(struct msghdr *mh)
{
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(fd));
			close(fd);
		}
	}
}

static ssize_t recv_datagram(struct soft_reg_conn *c, void *buf, size_t len)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(4 * sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
	ssize_t n;

	do
		n = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN ? -ETIMEDOUT : -errno;
	close_fds(&mh);
	if (n == 0)
		return -ECONNRESET;
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		return -EMSGSIZE;
	return n;
}

static int walk_attrs(const struct nlmsghdr *nlh, attr_fn fn, void *arg)
{
	size_t off = NLMSG_HDRLEN + GENL_HDRLEN;
	const unsigned char *p = (const unsigned char *)nlh;

	if (nlh->nlmsg_len < off)
		return -EBADMSG;
	while (off + NLA_HDRLEN <= nlh->nlmsg_len) {
		const struct nlattr *a = (const struct nlattr *)(p + off);
		int rc;

		if (a->nla_len < NLA_HDRLEN || a->nla_len > nlh->nlmsg_len - off)
			return -EBADMSG;
		rc = fn(a, arg);
		if (rc)
			return rc;
		off += NLA_ALIGN(a->nla_len);
	}
	return 0;
}

/* What ends a request: the ack, or else the reply of reply_type. */
struct expect {
	uint32_t seq;
	uint16_t reply_type;
	bool want_ack;
	attr_fn fn;
	void *arg;
};

/* One message: 1 not ours or not final yet, 0 done, -errno failed. */
static int take_msg(const struct nlmsghdr *nlh, const struct expect *x)
{
	int rc;

	if (nlh->nlmsg_seq != x->seq)
		return 1;
	if (nlh->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(nlh);

		if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(e->error)) || e->error > 0 || e->error < -4095)
			return -EBADMSG;
		if (e->error == 0 && !x->want_ack)
			return -EBADMSG;        /* an ack where a reply was due */
		return e->error;
	}
	if (nlh->nlmsg_type != x->reply_type || !x->fn)
		return 1;
	rc = walk_attrs(nlh, x->fn, x->arg);
	if (rc)
		return rc;
	return x->want_ack ? 1 : 0;
}

/* The messages of one datagram: 1 when the request is not finished yet. */
static int take_datagram(const void *buf, size_t len, const struct expect *x)
{
	size_t off = 0;
	int rc = 1;

	while (rc == 1 && off + NLMSG_HDRLEN <= len) {
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)((const char *)buf + off);

		if (nlh->nlmsg_len < NLMSG_HDRLEN || nlh->nlmsg_len > len - off)
			return -EBADMSG;
		rc = take_msg(nlh, x);
		off += NLMSG_ALIGN(nlh->nlmsg_len);
	}
	return rc;
}

static int transact(struct soft_reg_conn *c, struct req *r, int fd, uint16_t reply_type,
		    attr_fn fn, void *arg)
{
	struct expect x = { .reply_type = reply_type, .fn = fn, .arg = arg,
			    .want_ack = (r->u.nlh.nlmsg_flags & NLM_F_ACK) != 0 };
	uint32_t buf[RECV_BUF / sizeof(uint32_t)];
	int rc;

	if (c->fd < 0)
		return -EBADF;
	rc = send_req(c, r, fd);
	if (rc)
		return rc;
	x.seq = r->u.nlh.nlmsg_seq;
	for (;;) {
		ssize_t n = recv_datagram(c, buf, sizeof(buf));

		if (n < 0)
			return (int)n;
		rc = take_datagram(buf, (size_t)n, &x);
		if (rc <= 0)
			return rc;
	}
}

struct family_arg {
	uint16_t id;
};

static int family_attr(const struct nlattr *a, void *arg)
{
	struct family_arg *f = arg;

	if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_FAMILY_ID &&
	    a->nla_len == NLA_HDRLEN + sizeof(uint16_t))
		memcpy(&f->id, (const unsigned char *)a + NLA_HDRLEN, sizeof(f->id));
	return 0;
}

static int resolve_family(struct soft_reg_conn *c)
{
	struct family_arg f = { 0 };
	struct req r;
	int rc;

	req_init(&r, GENL_ID_CTRL, 0, CTRL_CMD_GETFAMILY);
	req_attr(&r, CTRL_ATTR_FAMILY_NAME, SMC_SOFT_FAMILY_NAME, sizeof(SMC_SOFT_FAMILY_NAME));
	rc = transact(c, &r, -1, GENL_ID_CTRL, family_attr, &f);
	if (rc)
		return rc;
	if (!f.id)
		return -EBADMSG;
	c->family = f.id;
	return 0;
}

static int set_timeouts(int fd, int timeout_ms)
{
	struct timeval tv = { .tv_sec = timeout_ms / 1000,
			      .tv_usec = (timeout_ms % 1000) * 1000 };

	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
		return -errno;
	return 0;
}

static int connect_to(struct soft_reg_conn *c, const char *path, int timeout_ms)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int rc;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	c->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -errno;
	rc = set_timeouts(c->fd, timeout_ms);
	if (!rc && connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		rc = errno == EAGAIN ? -ETIMEDOUT : -errno;
	return rc;
}

int soft_reg_open(struct soft_reg_conn *c, const char *path, int timeout_ms)
{
	char buf[sizeof(((struct sockaddr_un *)0)->sun_path) + 64];
	int rc;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	if (!path)
		path = soft_reg_socket_path(buf, sizeof(buf));
	rc = connect_to(c, path, timeout_ms > 0 ? timeout_ms : SOFT_REG_TIMEOUT_MS);
	if (!rc)
		rc = smc_soft_peer_trusted(c->fd);
	if (!rc)
		rc = resolve_family(c);
	if (rc)
		soft_reg_close(c);
	return rc;
}

void soft_reg_close(struct soft_reg_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

struct add_arg {
	uint64_t token;
};

static int add_attr(const struct nlattr *a, void *arg)
{
	struct add_arg *t = arg;

	if ((a->nla_type & NLA_TYPE_MASK) == SMC_SOFT_A_TOKEN &&
	    a->nla_len == NLA_HDRLEN + sizeof(uint64_t))
		memcpy(&t->token, (const unsigned char *)a + NLA_HDRLEN, sizeof(t->token));
	return 0;
}

int soft_reg_add(struct soft_reg_conn *c, int fd, uint8_t state, uint64_t *token)
{
	struct add_arg t = { 0 };
	struct req r;
	int rc;

	req_init(&r, c->family, 0, SMC_SOFT_CMD_SOCK_ADD);
	req_attr(&r, SMC_SOFT_A_STATE, &state, sizeof(state));
	rc = transact(c, &r, fd, c->family, add_attr, &t);
	if (rc)
		return rc;
	if (!t.token)
		return -EBADMSG;
	*token = t.token;
	return 0;
}

int soft_reg_state(struct soft_reg_conn *c, uint64_t token, uint8_t state, int fd)
{
	struct req r;

	req_init(&r, c->family, NLM_F_ACK, SMC_SOFT_CMD_SOCK_STATE);
	req_attr(&r, SMC_SOFT_A_TOKEN, &token, sizeof(token));
	req_attr(&r, SMC_SOFT_A_STATE, &state, sizeof(state));
	return transact(c, &r, fd, c->family, NULL, NULL);
}

int soft_reg_del(struct soft_reg_conn *c, uint64_t token)
{
	struct req r;

	req_init(&r, c->family, NLM_F_ACK, SMC_SOFT_CMD_SOCK_DEL);
	req_attr(&r, SMC_SOFT_A_TOKEN, &token, sizeof(token));
	return transact(c, &r, -1, c->family, NULL, NULL);
}
