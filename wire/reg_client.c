/*
 * SMC_SOFT client: request building and reply matching by hand, because the
 * preload may not depend on libnl or libmnl.
 */
#include "reg_client.h"
#include "soft_socket.h"
#include "dmb.h"

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

#include "pstats.h"

#define REQ_BUF (256 + SMC_SOFT_CLC_MAX)
#define RECV_BUF 8192
#define SOFT_REG_PORT_DEL 0x736f6466u    /* nlmsg_pid of an asynchronous SOCK_DEL */
#define SOFT_REG_PORT_BELL 0x736f6462u   /* nlmsg_pid of a BELL request */
#define SOFT_REG_PORT_CLC 0x736f6463u    /* nlmsg_pid of a CLC request */
#define SOFT_REG_PORT_REBUILD 0x736f6472u        /* nlmsg_pid of a REBUILD request */

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

/* Requests are a few small attributes and at most one CLC message: REQ_BUF always has room. */
static void req_attr(struct req *r, uint16_t type, const void *data, size_t len)
{
	size_t off = NLMSG_ALIGN(r->u.nlh.nlmsg_len);
	struct nlattr a = { .nla_len = (uint16_t)(NLA_HDRLEN + len), .nla_type = type };

	memcpy(r->u.buf + off, &a, sizeof(a));
	memcpy(r->u.buf + off + NLA_HDRLEN, data, len);
	r->u.nlh.nlmsg_len = (uint32_t)(off + NLA_ALIGN(a.nla_len));
}

/* MSG_DONTWAIT in flags: a full socket is -EAGAIN, not a timeout. */
static int send_req_flags(struct soft_reg_conn *c, struct req *r, int fd, int flags)
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
		n = sendmsg(c->fd, &mh, MSG_NOSIGNAL | flags);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN && !(flags & MSG_DONTWAIT) ? -ETIMEDOUT : -errno;
	return (size_t)n == iov.iov_len ? 0 : -EMSGSIZE;
}

static int send_req(struct soft_reg_conn *c, struct req *r, int fd)
{
	return send_req_flags(c, r, fd, 0);
}

/* Descriptors that arrive with a synchronous request's replies are not kept. */
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

/* How a connection's own socket is closed (soft_reg_close_with). */
static int (*close_own)(int) = close;

void soft_reg_close_with(int (*fn)(int))
{
	close_own = fn ? fn : close;
}

void soft_reg_close(struct soft_reg_conn *c)
{
	if (c->fd >= 0)
		close_own(c->fd);
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

int soft_reg_stats_attach(struct soft_reg_conn *c, int memfd)
{
	uint32_t version = SOFT_PSTATS_VERSION;
	struct req r;

	if (memfd < 0)
		return -EBADF;
	req_init(&r, c->family, NLM_F_ACK, SMC_SOFT_CMD_STATS_ATTACH);
	req_attr(&r, SMC_SOFT_A_STATS_VERSION, &version, sizeof(version));
	return transact(c, &r, memfd, c->family, NULL, NULL);
}

int soft_reg_dump_set(struct soft_reg_conn *c, uint8_t mode, uint8_t types, uint32_t ifindex,
		      int pkt)
{
	uint8_t on = pkt >= 0;
	struct req r;

	req_init(&r, c->family, NLM_F_ACK, SMC_SOFT_CMD_DUMP_SET);
	req_attr(&r, SMC_SOFT_A_DUMP_ON, &on, sizeof(on));
	if (on) {
		req_attr(&r, SMC_SOFT_A_DUMP_MODE, &mode, sizeof(mode));
		req_attr(&r, SMC_SOFT_A_DUMP_TYPES, &types, sizeof(types));
		req_attr(&r, SMC_SOFT_A_IFINDEX, &ifindex, sizeof(ifindex));
	}
	return transact(c, &r, pkt, c->family, NULL, NULL);
}

int soft_reg_stats_attach_send(struct soft_reg_conn *c, int memfd)
{
	uint32_t version = SOFT_PSTATS_VERSION;
	struct req r;

	if (memfd < 0)
		return -EBADF;
	req_init(&r, c->family, 0, SMC_SOFT_CMD_STATS_ATTACH);
	req_attr(&r, SMC_SOFT_A_STATS_VERSION, &version, sizeof(version));
	return send_req_flags(c, &r, memfd, MSG_DONTWAIT);
}

/* A request whose reply soft_reg_pair_poll() takes later: its seq, or -errno. */
static long send_async(struct soft_reg_conn *c, struct req *r, int fd)
{
	int rc;

	if (c->seq == UINT32_MAX)
		c->seq = 0;                     /* seq 0 would never match */
	rc = send_req_flags(c, r, fd, MSG_DONTWAIT);
	return rc ? rc : (long)r->u.nlh.nlmsg_seq;
}

long soft_reg_pair_send(struct soft_reg_conn *c, int fd, const struct soft_pair_req *q)
{
	struct req r;

	if (c->fd < 0)
		return -EBADF;
	if (fd < 0 || q->role > 1)
		return -EINVAL;
	req_init(&r, c->family, 0, SMC_SOFT_CMD_PAIR);
	req_attr(&r, SMC_SOFT_A_ROLE, &q->role, sizeof(q->role));
	if (q->sndbuf)
		req_attr(&r, SMC_SOFT_A_SNDBUF, &q->sndbuf, sizeof(q->sndbuf));
	if (q->rcvbuf)
		req_attr(&r, SMC_SOFT_A_RCVBUF, &q->rcvbuf, sizeof(q->rcvbuf));
	if (q->decline)
		req_attr(&r, SMC_SOFT_A_DECLINE, &q->decline, sizeof(q->decline));
	if (q->transports)
		req_attr(&r, SMC_SOFT_A_TRANSPORTS, &q->transports, sizeof(q->transports));
	return send_async(c, &r, fd);
}

long soft_reg_clc_send(struct soft_reg_conn *c, uint64_t token, const void *clc, size_t len,
		       uint8_t taken, uint32_t reason)
{
	struct req r;

	if (c->fd < 0)
		return -EBADF;
	if (!token || (clc && (!len || len > SMC_SOFT_CLC_MAX)) || taken > SMC_SOFT_CLC_MSGS ||
	    (reason && !clc))
		return -EINVAL;
	req_init(&r, c->family, 0, SMC_SOFT_CMD_CLC);
	req_attr(&r, SMC_SOFT_A_TOKEN, &token, sizeof(token));
	req_attr(&r, SMC_SOFT_A_CLC_INDEX, &taken, sizeof(taken));
	if (clc)
		req_attr(&r, SMC_SOFT_A_CLC, clc, len);
	if (reason)
		req_attr(&r, SMC_SOFT_A_REASON, &reason, sizeof(reason));
	r.u.nlh.nlmsg_pid = SOFT_REG_PORT_CLC;
	return send_async(c, &r, -1);
}

long soft_reg_clc_connected_send(struct soft_reg_conn *c, uint64_t token, uint32_t key, uint8_t link_id,
				 uint32_t rmb_size, uint32_t sndbuf_size)
{
	uint8_t paired = SMC_SOFT_PAIR_PAIRED;
	struct req r;

	if (c->fd < 0)
		return -EBADF;
	if (!token)
		return -EINVAL;
	req_init(&r, c->family, 0, SMC_SOFT_CMD_CLC);
	req_attr(&r, SMC_SOFT_A_TOKEN, &token, sizeof(token));
	req_attr(&r, SMC_SOFT_A_PAIR_STATUS, &paired, sizeof(paired));
	if (key && link_id) {
		req_attr(&r, SMC_SOFT_A_LGR_KEY, &key, sizeof(key));
		req_attr(&r, SMC_SOFT_A_LINK_ID, &link_id, sizeof(link_id));
	}
	if (rmb_size && sndbuf_size) {
		req_attr(&r, SMC_SOFT_A_RCVBUF, &rmb_size, sizeof(rmb_size));
		req_attr(&r, SMC_SOFT_A_SNDBUF, &sndbuf_size, sizeof(sndbuf_size));
	}
	r.u.nlh.nlmsg_pid = SOFT_REG_PORT_CLC;
	return send_async(c, &r, -1);
}

long soft_reg_rebuild_send(struct soft_reg_conn *c, uint32_t key, const void *msg, size_t len)
{
	struct req r;

	if (c->fd < 0)
		return -EBADF;
	if (msg && (!key || !len || len > SMC_SOFT_REBUILD_MAX))
		return -EINVAL;
	req_init(&r, c->family, 0, SMC_SOFT_CMD_REBUILD);
	if (msg) {
		req_attr(&r, SMC_SOFT_A_LGR_KEY, &key, sizeof(key));
		req_attr(&r, SMC_SOFT_A_REBUILD, msg, len);
	}
	r.u.nlh.nlmsg_pid = SOFT_REG_PORT_REBUILD;
	return send_async(c, &r, -1);
}

long soft_reg_lgr_send(struct soft_reg_conn *c, uint32_t key, uint8_t role, const char *peer_host,
		       uint32_t conns, const struct smc_soft_link *links, unsigned n)
{
	char host[33];
	struct req r;

	if (c->fd < 0)
		return -EBADF;
	if (!key || n > 2)
		return -EINVAL;
	snprintf(host, sizeof(host), "%s", peer_host ? peer_host : "");
	req_init(&r, c->family, 0, SMC_SOFT_CMD_LGR);
	req_attr(&r, SMC_SOFT_A_LGR_KEY, &key, sizeof(key));
	req_attr(&r, SMC_SOFT_A_ROLE, &role, sizeof(role));
	req_attr(&r, SMC_SOFT_A_PEER_HOST, host, strlen(host) + 1);
	req_attr(&r, SMC_SOFT_A_LGR_CONNS, &conns, sizeof(conns));
	for (unsigned i = 0; i < n; i++)
		req_attr(&r, SMC_SOFT_A_LINK, &links[i], sizeof(links[i]));
	/* as SOCK_DEL's: an error, if any, is skipped by soft_reg_pair_poll() */
	r.u.nlh.nlmsg_pid = SOFT_REG_PORT_DEL;
	return send_req_flags(c, &r, -1, MSG_DONTWAIT);
}

long soft_reg_info_send(struct soft_reg_conn *c, int fd)
{
	struct req r;

	if (c->fd < 0)
		return -EBADF;
	if (fd < 0)
		return -EINVAL;
	req_init(&r, c->family, 0, SMC_SOFT_CMD_SOCK_INFO);
	return send_async(c, &r, fd);
}

int soft_reg_del_send(struct soft_reg_conn *c, uint64_t token, int sock)
{
	struct req r;

	if (c->fd < 0)
		return -EBADF;
	req_init(&r, c->family, 0, SMC_SOFT_CMD_SOCK_DEL);
	req_attr(&r, SMC_SOFT_A_TOKEN, &token, sizeof(token));
	/* the daemon echoes the port id: how pair_poll tells this one's error from a PAIR's */
	r.u.nlh.nlmsg_pid = SOFT_REG_PORT_DEL;
	return send_req_flags(c, &r, sock, MSG_DONTWAIT);
}

int soft_reg_fallback_send(struct soft_reg_conn *c, uint64_t token, uint32_t reason, int sock)
{
	return soft_reg_fallback_diag_send(c, token, reason, 0, sock);
}

int soft_reg_fallback_diag_send(struct soft_reg_conn *c, uint64_t token, uint32_t reason, uint32_t diag,
				int sock)
{
	struct req r;

	if (c->fd < 0)
		return -EBADF;
	req_init(&r, c->family, 0, SMC_SOFT_CMD_FALLBACK);
	req_attr(&r, SMC_SOFT_A_TOKEN, &token, sizeof(token));
	req_attr(&r, SMC_SOFT_A_REASON, &reason, sizeof(reason));
	if (diag)
		req_attr(&r, SMC_SOFT_A_PEER_DIAGNOSIS, &diag, sizeof(diag));
	/* an error comes back as a SOCK_DEL's would: noted, not taken for a PAIR's */
	r.u.nlh.nlmsg_pid = SOFT_REG_PORT_DEL;
	return send_req_flags(c, &r, sock, MSG_DONTWAIT);
}

int soft_reg_del_seq_send(struct soft_reg_conn *c, uint32_t seq)
{
	struct req r;

	if (c->fd < 0)
		return -EBADF;
	req_init(&r, c->family, 0, SMC_SOFT_CMD_SOCK_DEL);
	req_attr(&r, SMC_SOFT_A_PAIR_SEQ, &seq, sizeof(seq));
	r.u.nlh.nlmsg_pid = SOFT_REG_PORT_DEL;
	return send_req_flags(c, &r, -1, MSG_DONTWAIT);
}

static long bell_send(struct soft_reg_conn *c, struct req *r, int fd)
{
	r->u.nlh.nlmsg_pid = SOFT_REG_PORT_BELL;
	return send_async(c, r, fd);
}

long soft_reg_bell_set_send(struct soft_reg_conn *c, int efd, uint8_t slot)
{
	struct req r;

	if (c->fd < 0)
		return -EBADF;
	if (efd < 0)
		return -EINVAL;
	req_init(&r, c->family, 0, SMC_SOFT_CMD_BELL);
	req_attr(&r, SMC_SOFT_A_BELL_SLOT, &slot, sizeof(slot));
	return bell_send(c, &r, efd);
}

long soft_reg_bell_get_send(struct soft_reg_conn *c, uint32_t id)
{
	struct req r;

	if (c->fd < 0)
		return -EBADF;
	req_init(&r, c->family, 0, SMC_SOFT_CMD_BELL);
	req_attr(&r, SMC_SOFT_A_BELL_ID, &id, sizeof(id));
	return bell_send(c, &r, -1);
}

/* One datagram without waiting; its first descriptor in *fd, others closed. */
static ssize_t recv_async(struct soft_reg_conn *c, void *buf, size_t len, int *fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(4 * sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
	ssize_t n;

	*fd = -1;
	do
		n = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		size_t k;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS ||
		    cm->cmsg_len < CMSG_LEN(0))
			continue;
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int f;

			memcpy(&f, CMSG_DATA(cm) + i * sizeof(int), sizeof(f));
			if (*fd < 0)
				*fd = f;
			else
				close(f);
		}
	}
	if (n == 0)
		return -ECONNRESET;
	return n;
}

struct pair_parse {
	struct soft_pair_reply *r;
	int n_ring;
};

static int get_fixed(const struct nlattr *a, void *v, size_t len)
{
	if (a->nla_len != NLA_HDRLEN + len)
		return -EBADMSG;
	memcpy(v, (const unsigned char *)a + NLA_HDRLEN, len);
	return 0;
}

static int pair_attr(const struct nlattr *a, void *arg)
{
	struct pair_parse *p = arg;
	struct soft_pair_reply *r = p->r;

	switch (a->nla_type & NLA_TYPE_MASK) {
	case SMC_SOFT_A_TOKEN:          return get_fixed(a, &r->token, 8);
	case SMC_SOFT_A_PAIR_STATUS:    return get_fixed(a, &r->status, 1);
	case SMC_SOFT_A_SIDE:           return get_fixed(a, &r->side, 1);
	case SMC_SOFT_A_ROLE:           return get_fixed(a, &r->role, 1);
	case SMC_SOFT_A_REASON:         return get_fixed(a, &r->reason, 4);
	case SMC_SOFT_A_PEER_DIAGNOSIS: return get_fixed(a, &r->peer_diagnosis, 4);
	case SMC_SOFT_A_LGR_ID:         return get_fixed(a, &r->lgr_id, 4);
	case SMC_SOFT_A_DMB_TOKEN:      return get_fixed(a, &r->dmb_token, 8);
	case SMC_SOFT_A_PEER_DMB_TOKEN: return get_fixed(a, &r->peer_dmb_token, 8);
	case SMC_SOFT_A_SHM_SIZE:       return get_fixed(a, &r->shm_size, 8);
	case SMC_SOFT_A_TRANSPORT:      return get_fixed(a, &r->transport, 1);
	case SMC_SOFT_A_RING_SIZE:
		if (p->n_ring >= 2)
			return -EBADMSG;
		return get_fixed(a, &r->ring_size[p->n_ring++], 4);
	}
	return 0;
}

/* A PAIR reply into r; -EBADMSG when it is not one a region can be used from. */
static int parse_pair(const struct nlmsghdr *nlh, struct soft_pair_reply *r, int *fd)
{
	struct pair_parse p = { .r = r };
	int rc = walk_attrs(nlh, pair_attr, &p);

	if (rc)
		return rc;
	if (!r->token || r->status < SMC_SOFT_PAIR_PENDING || r->status > SMC_SOFT_PAIR_ASKING)
		return -EBADMSG;
	if (r->status == SMC_SOFT_PAIR_DECLINED)
		return 0;
	/* between hosts: the library goes on with CLC, nothing to map */
	if (r->status == SMC_SOFT_PAIR_ASKING)
		return r->transport == SMC_SOFT_TRANSPORT_RDMA && *fd < 0 ? 0 : -EBADMSG;
	if (!r->transport)
		r->transport = SMC_SOFT_TRANSPORT_RING;
	if (*fd < 0 || r->side > 1 || p.n_ring != 2 || !r->shm_size ||
	    (r->role > 1 && r->role != SOFT_ROLE_UNSAID))
		return -EBADMSG;
	r->shm_fd = *fd;
	*fd = -1;
	return 0;
}

/* A name with its NUL, no longer than the field. */
static int get_name(const char *p, size_t len, char *name, size_t size)
{
	if (!len || len > size || p[len - 1] || strlen(p) != len - 1)
		return -EBADMSG;
	memcpy(name, p, len);
	return 0;
}

static int clc_attr(const struct nlattr *a, void *arg)
{
	struct soft_pair_reply *r = arg;
	size_t len = a->nla_len >= NLA_HDRLEN ? a->nla_len - NLA_HDRLEN : 0;
	const char *p = (const char *)a + NLA_HDRLEN;

	switch (a->nla_type & NLA_TYPE_MASK) {
	case SMC_SOFT_A_TOKEN:          return get_fixed(a, &r->token, 8);
	case SMC_SOFT_A_PAIR_STATUS:    return get_fixed(a, &r->status, 1);
	case SMC_SOFT_A_ROLE:           return get_fixed(a, &r->role, 1);
	case SMC_SOFT_A_REASON:         return get_fixed(a, &r->reason, 4);
	case SMC_SOFT_A_PEER_DIAGNOSIS: return get_fixed(a, &r->peer_diagnosis, 4);
	case SMC_SOFT_A_IBPORT:         return get_fixed(a, &r->ibport, 1);
	case SMC_SOFT_A_IBPORT2:        return get_fixed(a, &r->ibport2, 1);
	case SMC_SOFT_A_GID2:           return get_fixed(a, r->gid2, 16);
	case SMC_SOFT_A_CLC_SEEN:       return get_fixed(a, &r->clc_seen, 1);
	case SMC_SOFT_A_CLC_INDEX:      return get_fixed(a, &r->clc_index, 1);
	case SMC_SOFT_A_IBDEV:
		return get_name(p, len, r->ibdev, sizeof(r->ibdev));
	case SMC_SOFT_A_IBDEV2:
		return get_name(p, len, r->ibdev2, sizeof(r->ibdev2));
	case SMC_SOFT_A_CLC:
		if (!len || len > sizeof(r->clc))
			return -EBADMSG;
		memcpy(r->clc, p, len);
		r->clc_len = (uint16_t)len;
		return 0;
	}
	return 0;
}

/* A CLC reply into r; -EBADMSG for one that does not hold together. */
static int parse_clc(const struct nlmsghdr *nlh, struct soft_pair_reply *r)
{
	int rc = walk_attrs(nlh, clc_attr, r);

	if (rc)
		return rc;
	r->cmd = SMC_SOFT_CMD_CLC;
	if (!r->token || !!r->clc_len != !!r->clc_index || r->clc_index > SMC_SOFT_CLC_MSGS ||
	    r->clc_seen > SMC_SOFT_CLC_MSGS)
		return -EBADMSG;
	switch (r->status) {
	case SMC_SOFT_PAIR_ASKING:
	case SMC_SOFT_PAIR_DECLINED:
	case SMC_SOFT_PAIR_PAIRED:
		return 0;
	case SMC_SOFT_PAIR_NEGOTIATE:
		if (!!r->ibdev2[0] != !!r->ibport2)
			return -EBADMSG;
		return r->ibdev[0] && r->ibport && r->role <= 1 ? 0 : -EBADMSG;
	}
	return -EBADMSG;
}

static int bell_attr(const struct nlattr *a, void *arg)
{
	struct soft_pair_reply *r = arg;

	if ((a->nla_type & NLA_TYPE_MASK) == SMC_SOFT_A_BELL_ID)
		return get_fixed(a, &r->bell_id, 4);
	return 0;
}

/* A BELL reply into r (cmd, bell_id, bell_fd); -EBADMSG without a valid id. */
static int parse_bell(const struct nlmsghdr *nlh, struct soft_pair_reply *r, int *fd)
{
	int rc = walk_attrs(nlh, bell_attr, r);

	if (rc || r->bell_id <= DMB_BELL_TCP)
		return -EBADMSG;
	r->cmd = SMC_SOFT_CMD_BELL;
	r->bell_fd = *fd;
	*fd = -1;
	return 0;
}

static bool is_bell_error(const struct nlmsghdr *nlh, struct soft_pair_reply *r)
{
	const struct nlmsgerr *e = NLMSG_DATA(nlh);

	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)) || e->msg.nlmsg_pid != SOFT_REG_PORT_BELL)
		return false;
	r->cmd = SMC_SOFT_CMD_BELL;
	r->error = e->error < 0 ? e->error : -EBADMSG;
	return true;
}

static bool is_clc_error(const struct nlmsghdr *nlh, struct soft_pair_reply *r)
{
	const struct nlmsgerr *e = NLMSG_DATA(nlh);

	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)) || e->msg.nlmsg_pid != SOFT_REG_PORT_CLC ||
	    e->error >= 0 || e->error < -4095)
		return false;
	r->cmd = SMC_SOFT_CMD_CLC;
	r->error = e->error;
	return true;
}

static bool is_rebuild_error(const struct nlmsghdr *nlh, struct soft_pair_reply *r)
{
	const struct nlmsgerr *e = NLMSG_DATA(nlh);

	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)) || e->msg.nlmsg_pid != SOFT_REG_PORT_REBUILD ||
	    e->error >= 0 || e->error < -4095)
		return false;
	r->cmd = SMC_SOFT_CMD_REBUILD;
	r->error = e->error;
	return true;
}

static int rebuild_attr(const struct nlattr *a, void *arg)
{
	struct soft_pair_reply *r = arg;
	size_t len = a->nla_len >= NLA_HDRLEN ? a->nla_len - NLA_HDRLEN : 0;

	switch (a->nla_type & NLA_TYPE_MASK) {
	case SMC_SOFT_A_TOKEN:          return get_fixed(a, &r->token, 8);
	case SMC_SOFT_A_LGR_KEY:        return get_fixed(a, &r->lgr_key, 4);
	case SMC_SOFT_A_REBUILD:
		if (!len || len > sizeof(r->rebuild))
			return -EBADMSG;
		memcpy(r->rebuild, (const char *)a + NLA_HDRLEN, len);
		r->rebuild_len = (uint8_t)len;
		return 0;
	case SMC_SOFT_A_PEER_GONE:      return get_fixed(a, &r->peer_gone, 1);
	}
	return 0;
}

/*
 * A REBUILD reply into r: with a message (or PEER_GONE 1), its token and
 * group; -EBADMSG for a part without the rest, or both.
 */
static int parse_rebuild(const struct nlmsghdr *nlh, struct soft_pair_reply *r)
{
	int rc = walk_attrs(nlh, rebuild_attr, r);
	bool some = r->rebuild_len || r->peer_gone;

	r->cmd = SMC_SOFT_CMD_REBUILD;
	if (rc || r->peer_gone > 1 || (r->rebuild_len && r->peer_gone) || !r->token != !some ||
	    !r->lgr_key != !some) {
		r->token = r->lgr_key = 0;
		r->rebuild_len = r->peer_gone = 0;
		r->error = -EBADMSG;
	}
	return 0;
}

static bool is_pair_error(const struct nlmsghdr *nlh, struct soft_pair_reply *r)
{
	const struct nlmsgerr *e = NLMSG_DATA(nlh);

	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
		return false;
	if (e->msg.nlmsg_pid == SOFT_REG_PORT_DEL || e->msg.nlmsg_pid == SOFT_REG_PORT_BELL ||
	    e->msg.nlmsg_pid == SOFT_REG_PORT_CLC || e->msg.nlmsg_pid == SOFT_REG_PORT_REBUILD ||
	    e->error >= 0 || e->error < -4095)
		return false;
	r->error = e->error;
	return true;
}

/* The PAIR reply among one datagram's messages: 1 when r is filled. */
static int take_pair(const struct soft_reg_conn *c, const void *buf, size_t len, int *fd,
		     struct soft_pair_reply *r)
{
	size_t off = 0;

	while (off + NLMSG_HDRLEN <= len) {
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)((const char *)buf + off);
		const struct genlmsghdr *g = NLMSG_DATA(nlh);

		if (nlh->nlmsg_len < NLMSG_HDRLEN || nlh->nlmsg_len > len - off)
			return 0;
		memset(r, 0, sizeof(*r));
		r->shm_fd = -1;
		r->bell_fd = -1;
		r->role = SOFT_ROLE_UNSAID;
		r->seq = nlh->nlmsg_seq;
		if (nlh->nlmsg_type == NLMSG_ERROR && is_bell_error(nlh, r))
			return 1;
		if (nlh->nlmsg_type == NLMSG_ERROR &&
		    (is_clc_error(nlh, r) || is_rebuild_error(nlh, r) || is_pair_error(nlh, r)))
			return 1;
		if (nlh->nlmsg_type == c->family && nlh->nlmsg_len >= NLMSG_LENGTH(GENL_HDRLEN) &&
		    g->cmd == SMC_SOFT_CMD_REBUILD)
			return parse_rebuild(nlh, r) == 0;
		if (nlh->nlmsg_type == c->family && nlh->nlmsg_len >= NLMSG_LENGTH(GENL_HDRLEN) &&
		    g->cmd == SMC_SOFT_CMD_CLC) {
			if (parse_clc(nlh, r)) {
				uint64_t token = r->token;

				memset(r, 0, sizeof(*r));
				r->cmd = SMC_SOFT_CMD_CLC;
				r->seq = nlh->nlmsg_seq;
				r->shm_fd = r->bell_fd = -1;
				r->error = -EBADMSG;
				r->token = token;
			}
			return 1;
		}
		if (nlh->nlmsg_type == c->family && nlh->nlmsg_len >= NLMSG_LENGTH(GENL_HDRLEN) &&
		    g->cmd == SMC_SOFT_CMD_BELL) {
			if (parse_bell(nlh, r, fd))
				return 0;
			return 1;
		}
		if (nlh->nlmsg_type == c->family && nlh->nlmsg_len >= NLMSG_LENGTH(GENL_HDRLEN) &&
		    (g->cmd == SMC_SOFT_CMD_PAIR || g->cmd == SMC_SOFT_CMD_SOCK_INFO)) {
			int rc = parse_pair(nlh, r, fd);

			if (rc) {
				/* the token stays: the registration exists, the caller ends it */
				uint64_t token = r->token;

				memset(r, 0, sizeof(*r));
				r->seq = nlh->nlmsg_seq;
				r->shm_fd = -1;
				r->error = rc;
				r->token = token;
			}
			return 1;
		}
		off += NLMSG_ALIGN(nlh->nlmsg_len);
	}
	return 0;
}

int soft_reg_pair_poll(struct soft_reg_conn *c, struct soft_pair_reply *r)
{
	uint32_t buf[RECV_BUF / sizeof(uint32_t)];

	if (c->fd < 0)
		return -EBADF;
	for (;;) {
		int fd, rc;
		ssize_t n = recv_async(c, buf, sizeof(buf), &fd);

		if (n == -EAGAIN)
			return 0;
		if (n < 0)
			return (int)n;
		rc = take_pair(c, buf, (size_t)n, &fd, r);
		if (fd >= 0)
			close(fd);
		if (rc)
			return 1;
	}
}
