/*
 * SMC_SOFT registration (wire/reg.h) through soft_handle(), with real
 * sockets: what the daemon reads from the kernel, who may change what, and
 * what it refuses.
 */
#include "unit.h"
#include "regfx.h"
#include "soft/families/families.h"
#include "soft/service/service.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>
#include <libmnl/libmnl.h>

static const struct soft_sock *only_sock(const struct regfx *f, uint64_t netns)
{
	for (const struct soft_ns *ns = f->st.ns; ns; ns = ns->next)
		if (ns->netns == netns)
			return ns->socks;
	return NULL;
}

static int n_socks(const struct regfx *f)
{
	int n = 0;

	for (const struct soft_ns *ns = f->st.ns; ns; ns = ns->next)
		for (const struct soft_sock *s = ns->socks; s; s = s->next)
			n++;
	return n;
}

struct add_reply {
	uint64_t token, inode, cookie, netns;
	int n;
};

static int add_reply_attr(const struct nlattr *a, void *data)
{
	struct add_reply *r = data;
	uint64_t *v = NULL;

	switch (mnl_attr_get_type(a)) {
	case SMC_SOFT_A_TOKEN: v = &r->token; break;
	case SMC_SOFT_A_INODE: v = &r->inode; break;
	case SMC_SOFT_A_COOKIE: v = &r->cookie; break;
	case SMC_SOFT_A_NETNS: v = &r->netns; break;
	}
	if (v && mnl_attr_get_payload_len(a) == 8)
		*v = mnl_attr_get_u64(a);
	r->n++;
	return MNL_CB_OK;
}

TEST(soft_reg_add_listener)
{
	struct regfx f;
	struct add_reply rep = { 0 };
	const struct nlmsghdr *nlh;
	const struct soft_sock *s;
	const struct genlmsghdr *g;
	uint64_t token;
	uint16_t port;
	int lst = regfx_listener(AF_INET, &port);

	regfx_init(&f);
	CHECK_INT(regfx_add(&f, &f.peer, lst, SMC_SOFT_STATE_LISTEN, &token), 0);
	CHECK_INT(regfx_count(&f), 1);             /* the reply, no ack unasked */
	nlh = regfx_find(&f, SOFT_ID_SOFT);
	CHECK(nlh != NULL);
	if (nlh) {
		g = mnl_nlmsg_get_payload(nlh);
		CHECK_INT(g->cmd, SMC_SOFT_CMD_SOCK_ADD);
		CHECK_INT(g->version, 1);
		CHECK_INT(nlh->nlmsg_seq, f.seq);
		mnl_attr_parse(nlh, GENL_HDRLEN, add_reply_attr, &rep);
	}
	CHECK_INT(rep.n, 4);
	CHECK_INT(rep.token, token);
	CHECK(token != 0);
	CHECK_INT(rep.inode, regfx_inode(lst));
	CHECK_INT(rep.cookie, regfx_cookie(lst));
	CHECK(rep.cookie != 0);
	CHECK_INT(rep.netns, f.st.init_netns);
	s = only_sock(&f, f.st.init_netns);
	CHECK(s != NULL);
	if (s) {
		static const uint8_t lo[16] = { 127, 0, 0, 1 };
		static const uint8_t zero[16];

		CHECK_INT(s->state, SMC_SOFT_STATE_LISTEN);
		CHECK_INT(s->mode, 0);
		CHECK_INT(s->conn_id, 1);
		CHECK_INT(s->id.family, AF_INET);
		CHECK_INT(s->id.sport, port);
		CHECK_INT(s->id.dport, 0);
		CHECK(!memcmp(s->id.src, lo, 16));
		CHECK(!memcmp(s->id.dst, zero, 16));
		CHECK_INT(s->id.uid, geteuid());
		CHECK_INT(s->id.ifindex, 0);
		CHECK(s->next == NULL);
	}
	close(lst);
	regfx_free(&f);
}

TEST(soft_reg_add_closes_the_fd)
{
	struct regfx f;
	struct mb m;
	uint16_t port;
	int lst = regfx_listener(AF_INET, &port);
	int copy = dup(lst);

	regfx_init(&f);
	regfx_req(&m, SMC_SOFT_CMD_SOCK_ADD, 0);
	mb_u8(&m, SMC_SOFT_A_STATE, SMC_SOFT_STATE_LISTEN);
	regfx_run(&f, &f.peer, &m, copy);
	CHECK_INT(regfx_error(&f), 1);
	errno = 0;
	CHECK_INT(fcntl(copy, F_GETFD), -1);        /* the daemon kept no copy */
	CHECK_INT(errno, EBADF);
	close(lst);
	regfx_free(&f);
}

TEST(soft_reg_tokens_unique)
{
	struct regfx f;
	struct regfx_tcp t;
	uint64_t a = 0, b = 0, c = 0;

	regfx_init(&f);
	regfx_tcp_open(&t, AF_INET);
	CHECK_INT(regfx_add(&f, &f.peer, t.lst, SMC_SOFT_STATE_LISTEN, &a), 0);
	CHECK_INT(regfx_add(&f, &f.peer, t.cli, SMC_SOFT_STATE_ACTIVE, &b), 0);
	CHECK_INT(regfx_add(&f, &f.peer, t.srv, SMC_SOFT_STATE_ACTIVE, &c), 0);
	CHECK(a && b && c && a != b && b != c && a != c);
	CHECK_INT(n_socks(&f), 3);
	regfx_tcp_close(&t);
	regfx_free(&f);
}

TEST(soft_reg_active_reads_both_ends)
{
	struct regfx f;
	struct regfx_tcp t;
	const struct soft_sock *s;
	uint64_t tok;

	regfx_init(&f);
	regfx_tcp_open(&t, AF_INET);
	CHECK_INT(regfx_add(&f, &f.peer, t.srv, SMC_SOFT_STATE_ACTIVE, &tok), 0);
	s = only_sock(&f, f.st.init_netns);
	CHECK(s != NULL);
	if (s) {
		CHECK_INT(s->state, SMC_SOFT_STATE_ACTIVE);
		CHECK_INT(s->mode, 1);                      /* TCP until paired */
		CHECK_INT(s->fallback_reason, 0x03010000);
		CHECK_INT(s->peer_diagnosis, 0);
		CHECK_INT(s->id.sport, t.lport);
		CHECK_INT(s->id.dport, t.cport);
		CHECK_INT(s->id.inode, regfx_inode(t.srv));
		CHECK_INT(s->id.cookie, regfx_cookie(t.srv));
		CHECK_INT(s->id.dst[0], 127);
	}
	regfx_tcp_close(&t);
	regfx_free(&f);
}

TEST(soft_reg_ipv6_address_as_is)
{
	struct regfx f;
	struct regfx_tcp t;
	const struct soft_sock *s;
	uint64_t tok;
	static const uint8_t lo6[16] = { [15] = 1 };

	regfx_init(&f);
	regfx_tcp_open(&t, AF_INET6);
	CHECK_INT(regfx_add(&f, &f.peer, t.cli, SMC_SOFT_STATE_ACTIVE, &tok), 0);
	s = only_sock(&f, f.st.init_netns);
	CHECK(s != NULL);
	if (s) {
		CHECK_INT(s->id.family, AF_INET6);
		CHECK(!memcmp(s->id.src, lo6, 16));
		CHECK(!memcmp(s->id.dst, lo6, 16));
		CHECK_INT(s->id.sport, t.cport);
		CHECK_INT(s->id.dport, t.lport);
	}
	regfx_tcp_close(&t);
	regfx_free(&f);
}

TEST(soft_reg_bound_interface)
{
	struct regfx f;
	const struct soft_sock *s;
	uint64_t tok;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	int lo = 1;                                 /* loopback's ifindex */

	regfx_init(&f);
	if (setsockopt(fd, SOL_SOCKET, SO_BINDTOIFINDEX, &lo, sizeof(lo)) < 0) {
		printf("    (skipped: SO_BINDTOIFINDEX: %s)\n", strerror(errno));
	} else {
		CHECK_INT(regfx_add(&f, &f.peer, fd, SMC_SOFT_STATE_INIT, &tok), 0);
		s = only_sock(&f, f.st.init_netns);
		CHECK(s && s->id.ifindex == 1);
	}
	close(fd);
	regfx_free(&f);
}

TEST(soft_reg_refuses_other_sockets)
{
	struct regfx f;
	uint64_t tok = 0;
	int udp = socket(AF_INET, SOCK_DGRAM, 0);
	int udp6 = socket(AF_INET6, SOCK_DGRAM, 0);
	int unx = socket(AF_UNIX, SOCK_STREAM, 0);
	int sctp = socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP);
	int raw = socket(AF_INET, SOCK_RAW, IPPROTO_TCP);
	int p[2];

	regfx_init(&f);
	CHECK_INT(pipe(p), 0);
	CHECK_INT(regfx_add(&f, &f.peer, udp, SMC_SOFT_STATE_INIT, &tok), -EINVAL);
	CHECK_INT(regfx_add(&f, &f.peer, udp6, SMC_SOFT_STATE_INIT, &tok), -EINVAL);
	CHECK_INT(regfx_add(&f, &f.peer, unx, SMC_SOFT_STATE_INIT, &tok), -EINVAL);
	CHECK_INT(regfx_add(&f, &f.peer, p[0], SMC_SOFT_STATE_INIT, &tok), -EINVAL);
	if (sctp >= 0)
		CHECK_INT(regfx_add(&f, &f.peer, sctp, SMC_SOFT_STATE_INIT, &tok), -EINVAL);
	if (raw >= 0)
		CHECK_INT(regfx_add(&f, &f.peer, raw, SMC_SOFT_STATE_INIT, &tok), -EINVAL);
	CHECK_INT(n_socks(&f), 0);
	close(udp);
	close(udp6);
	close(unx);
	if (sctp >= 0)
		close(sctp);
	if (raw >= 0)
		close(raw);
	close(p[0]);
	close(p[1]);
	regfx_free(&f);
}

TEST(soft_reg_missing_or_bad_attributes)
{
	struct regfx f;
	struct mb m;
	uint64_t tok;
	uint16_t port;
	int lst = regfx_listener(AF_INET, &port);

	regfx_init(&f);
	/* no fd */
	CHECK_INT(regfx_add(&f, &f.peer, -1, SMC_SOFT_STATE_INIT, &tok), -EINVAL);
	/* no state */
	regfx_req(&m, SMC_SOFT_CMD_SOCK_ADD, 0);
	regfx_run(&f, &f.peer, &m, dup(lst));
	CHECK_INT(regfx_error(&f), -EINVAL);
	/* a state that is not INIT, LISTEN or ACTIVE */
	CHECK_INT(regfx_add(&f, &f.peer, lst, 7, &tok), -EINVAL);
	CHECK_INT(regfx_add(&f, &f.peer, lst, 0, &tok), -EINVAL);
	/* a state of the wrong size */
	regfx_req(&m, SMC_SOFT_CMD_SOCK_ADD, 0);
	mb_u32(&m, SMC_SOFT_A_STATE, SMC_SOFT_STATE_LISTEN);
	regfx_run(&f, &f.peer, &m, dup(lst));
	CHECK_INT(regfx_error(&f), -EINVAL);
	/* an attribute running past the message */
	regfx_req(&m, SMC_SOFT_CMD_SOCK_ADD, 0);
	mb_u8(&m, SMC_SOFT_A_STATE, SMC_SOFT_STATE_LISTEN);
	m.buf[m.len - 8] = 200;
	regfx_run(&f, &f.peer, &m, dup(lst));
	CHECK_INT(regfx_error(&f), -EINVAL);
	/* STATE and DEL without a token, a token of the wrong size */
	regfx_req(&m, SMC_SOFT_CMD_SOCK_STATE, NLM_F_ACK);
	mb_u8(&m, SMC_SOFT_A_STATE, SMC_SOFT_STATE_LISTEN);
	regfx_run(&f, &f.peer, &m, -1);
	CHECK_INT(regfx_error(&f), -EINVAL);
	regfx_req(&m, SMC_SOFT_CMD_SOCK_DEL, NLM_F_ACK);
	regfx_run(&f, &f.peer, &m, -1);
	CHECK_INT(regfx_error(&f), -EINVAL);
	regfx_req(&m, SMC_SOFT_CMD_SOCK_DEL, NLM_F_ACK);
	mb_u32(&m, SMC_SOFT_A_TOKEN, 1);
	regfx_run(&f, &f.peer, &m, -1);
	CHECK_INT(regfx_error(&f), -EINVAL);
	CHECK_INT(n_socks(&f), 0);
	close(lst);
	regfx_free(&f);
}

/* The claimed state must agree with the kernel's view of the socket. */
TEST(soft_reg_state_must_match_kernel)
{
	struct regfx f;
	struct regfx_tcp t;
	uint64_t tok;
	int fresh = socket(AF_INET, SOCK_STREAM, 0);

	regfx_init(&f);
	regfx_tcp_open(&t, AF_INET);
	CHECK_INT(regfx_add(&f, &f.peer, fresh, SMC_SOFT_STATE_LISTEN, &tok), -EINVAL);
	CHECK_INT(regfx_add(&f, &f.peer, fresh, SMC_SOFT_STATE_ACTIVE, &tok), -EINVAL);
	CHECK_INT(regfx_add(&f, &f.peer, t.lst, SMC_SOFT_STATE_INIT, &tok), -EINVAL);
	CHECK_INT(regfx_add(&f, &f.peer, t.lst, SMC_SOFT_STATE_ACTIVE, &tok), -EINVAL);
	CHECK_INT(regfx_add(&f, &f.peer, t.cli, SMC_SOFT_STATE_LISTEN, &tok), -EINVAL);
	CHECK_INT(n_socks(&f), 0);
	/* a connected socket may still be INIT (handshake not done) */
	CHECK_INT(regfx_add(&f, &f.peer, t.cli, SMC_SOFT_STATE_INIT, &tok), 0);
	close(fresh);
	regfx_tcp_close(&t);
	regfx_free(&f);
}

TEST(soft_reg_socket_registered_once)
{
	struct regfx f;
	struct soft_peer other;
	uint64_t a, b;
	uint16_t port;
	int lst = regfx_listener(AF_INET, &port);

	regfx_init(&f);
	other = f.peer;
	other.conn_id = 2;
	CHECK_INT(regfx_add(&f, &f.peer, lst, SMC_SOFT_STATE_LISTEN, &a), 0);
	CHECK_INT(regfx_add(&f, &f.peer, lst, SMC_SOFT_STATE_LISTEN, &b), -EEXIST);
	CHECK_INT(regfx_add(&f, &other, lst, SMC_SOFT_STATE_LISTEN, &b), -EEXIST);
	CHECK_INT(regfx_del(&f, &f.peer, a), 0);
	CHECK_INT(regfx_add(&f, &other, lst, SMC_SOFT_STATE_LISTEN, &b), 0);
	close(lst);
	regfx_free(&f);
}

/* What a preload does: INIT at socket(), the fd again after connect(). */
TEST(soft_reg_state_rereads_after_connect)
{
	struct regfx f;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	const struct soft_sock *s;
	uint64_t tok;
	uint16_t port;
	int lst = regfx_listener(AF_INET, &port);
	int fd = socket(AF_INET, SOCK_STREAM, 0), acc;

	regfx_init(&f);
	CHECK_INT(regfx_add(&f, &f.peer, fd, SMC_SOFT_STATE_INIT, &tok), 0);
	s = only_sock(&f, f.st.init_netns);
	CHECK(s && s->id.sport == 0 && s->id.dport == 0 && s->mode == 0 &&
	      s->fallback_reason == 0);
	sin.sin_port = htons(port);
	CHECK_INT(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	acc = accept(lst, NULL, NULL);
	CHECK_INT(regfx_state(&f, &f.peer, tok, SMC_SOFT_STATE_ACTIVE, fd), 0);
	CHECK_INT(regfx_count(&f), 1);             /* the ack only */
	s = only_sock(&f, f.st.init_netns);
	CHECK(s != NULL);
	if (s) {
		CHECK_INT(s->state, SMC_SOFT_STATE_ACTIVE);
		CHECK_INT(s->mode, 1);
		CHECK_INT(s->fallback_reason, 0x03010000);
		CHECK_INT(s->id.dport, port);
		CHECK(s->id.sport != 0);
		CHECK_INT(s->id.src[0], 127);
	}
	/* another socket's fd cannot be slipped under the token */
	CHECK_INT(regfx_state(&f, &f.peer, tok, SMC_SOFT_STATE_ACTIVE, acc), -EINVAL);
	/* a state the socket is not in */
	CHECK_INT(regfx_state(&f, &f.peer, tok, SMC_SOFT_STATE_LISTEN, fd), -EINVAL);
	s = only_sock(&f, f.st.init_netns);
	CHECK(s && s->state == SMC_SOFT_STATE_ACTIVE && s->id.inode == regfx_inode(fd));
	/* without an fd, only the state changes */
	CHECK_INT(regfx_state(&f, &f.peer, tok, SMC_SOFT_STATE_INIT, -1), 0);
	s = only_sock(&f, f.st.init_netns);
	CHECK(s && s->state == SMC_SOFT_STATE_INIT && s->mode == 0 && s->id.dport == port);
	close(acc);
	close(fd);
	close(lst);
	regfx_free(&f);
}

TEST(soft_reg_listen_after_bind)
{
	struct regfx f;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);
	const struct soft_sock *s;
	uint64_t tok;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	regfx_init(&f);
	CHECK_INT(regfx_add(&f, &f.peer, fd, SMC_SOFT_STATE_INIT, &tok), 0);
	CHECK_INT(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	CHECK_INT(listen(fd, 4), 0);
	getsockname(fd, (struct sockaddr *)&sin, &len);
	CHECK_INT(regfx_state(&f, &f.peer, tok, SMC_SOFT_STATE_LISTEN, fd), 0);
	s = only_sock(&f, f.st.init_netns);
	CHECK(s && s->state == SMC_SOFT_STATE_LISTEN && s->id.sport == ntohs(sin.sin_port) &&
	      s->mode == 0 && s->fallback_reason == 0);
	close(fd);
	regfx_free(&f);
}

TEST(soft_reg_other_connection_gets_enoent)
{
	struct regfx f;
	struct soft_peer other;
	struct regfx_tcp t;
	const struct soft_sock *s;
	uint64_t tok;

	regfx_init(&f);
	other = f.peer;
	other.conn_id = 2;
	other.pid = 1;
	regfx_tcp_open(&t, AF_INET);
	CHECK_INT(regfx_add(&f, &f.peer, t.cli, SMC_SOFT_STATE_INIT, &tok), 0);
	CHECK_INT(regfx_state(&f, &other, tok, SMC_SOFT_STATE_ACTIVE, -1), -ENOENT);
	CHECK_INT(regfx_state(&f, &other, tok, SMC_SOFT_STATE_ACTIVE, t.cli), -ENOENT);
	CHECK_INT(regfx_del(&f, &other, tok), -ENOENT);
	/* CAP_NET_ADMIN does not open another connection's registrations */
	other.net_admin = true;
	CHECK_INT(regfx_del(&f, &other, tok), -ENOENT);
	s = only_sock(&f, f.st.init_netns);
	CHECK(s && s->token == tok && s->state == SMC_SOFT_STATE_INIT);
	/* unknown tokens */
	CHECK_INT(regfx_state(&f, &f.peer, tok + 1, SMC_SOFT_STATE_ACTIVE, -1), -ENOENT);
	CHECK_INT(regfx_del(&f, &f.peer, 0), -ENOENT);
	CHECK_INT(regfx_del(&f, &f.peer, tok), 0);
	CHECK_INT(regfx_del(&f, &f.peer, tok), -ENOENT);
	CHECK_INT(n_socks(&f), 0);
	regfx_tcp_close(&t);
	regfx_free(&f);
}

TEST(soft_reg_conn_gone_drops_its_own)
{
	struct regfx f;
	struct soft_peer other;
	struct regfx_tcp t;
	uint64_t a, b, c;

	regfx_init(&f);
	other = f.peer;
	other.conn_id = 2;
	regfx_tcp_open(&t, AF_INET);
	CHECK_INT(regfx_add(&f, &f.peer, t.lst, SMC_SOFT_STATE_LISTEN, &a), 0);
	CHECK_INT(regfx_add(&f, &other, t.cli, SMC_SOFT_STATE_ACTIVE, &b), 0);
	CHECK_INT(regfx_add(&f, &f.peer, t.srv, SMC_SOFT_STATE_ACTIVE, &c), 0);
	soft_conn_gone(&f.st, 1);
	CHECK_INT(n_socks(&f), 1);
	CHECK_INT(regfx_del(&f, &f.peer, a), -ENOENT);
	CHECK_INT(regfx_del(&f, &other, b), 0);
	soft_conn_gone(&f.st, 2);
	soft_conn_gone(&f.st, 99);
	CHECK_INT(n_socks(&f), 0);
	regfx_tcp_close(&t);
	regfx_free(&f);
}

TEST(soft_reg_not_admin_only)
{
	struct regfx f;
	uint64_t tok;
	uint16_t port;
	int lst = regfx_listener(AF_INET, &port);

	regfx_init(&f);
	f.peer.net_admin = false;
	f.peer.uid = 65534;
	CHECK_INT(regfx_add(&f, &f.peer, lst, SMC_SOFT_STATE_LISTEN, &tok), 0);
	CHECK_INT(regfx_state(&f, &f.peer, tok, SMC_SOFT_STATE_LISTEN, -1), 0);
	CHECK_INT(regfx_del(&f, &f.peer, tok), 0);
	close(lst);
	regfx_free(&f);
}

TEST(soft_reg_reserved_commands_unsupported)
{
	static const uint8_t cmds[] = {
		SMC_SOFT_CMD_UNSPEC, SMC_SOFT_CMD_BUF_SETUP, SMC_SOFT_CMD_MAX + 1,
	};
	struct regfx f;
	struct mb m;

	regfx_init(&f);
	for (size_t i = 0; i < sizeof(cmds); i++) {
		regfx_req(&m, cmds[i], NLM_F_ACK);
		regfx_run(&f, &f.peer, &m, -1);
		CHECK_INT(regfx_error(&f), -EOPNOTSUPP);
	}
	/* registration is a doit: a dump request does not fit it */
	regfx_req(&m, SMC_SOFT_CMD_SOCK_ADD, NLM_F_DUMP);
	mb_u8(&m, SMC_SOFT_A_STATE, SMC_SOFT_STATE_INIT);
	regfx_run(&f, &f.peer, &m, -1);
	CHECK_INT(regfx_error(&f), -EOPNOTSUPP);
	regfx_free(&f);
}

TEST(soft_reg_family_resolves)
{
	struct regfx f;
	const struct nlmsghdr *nlh;
	const struct nlattr *a;
	struct mb m;
	int seen = 0;

	regfx_init(&f);
	mb_start(&m, GENL_ID_CTRL, NLM_F_REQUEST);
	mb_genl(&m, CTRL_CMD_GETFAMILY);
	mb_str(&m, CTRL_ATTR_FAMILY_NAME, "SMC_SOFT");
	regfx_run(&f, &f.peer, &m, -1);
	nlh = regfx_find(&f, GENL_ID_CTRL);
	CHECK(nlh != NULL);
	if (nlh)
		mnl_attr_for_each(a, nlh, GENL_HDRLEN) {
			switch (mnl_attr_get_type(a)) {
			case CTRL_ATTR_FAMILY_ID:
				CHECK_INT(mnl_attr_get_u16(a), SOFT_ID_SOFT);
				seen++;
				break;
			case CTRL_ATTR_VERSION:
				CHECK_INT(mnl_attr_get_u32(a), SMC_SOFT_VERSION);
				seen++;
				break;
			case CTRL_ATTR_MAXATTR:
				CHECK_INT(mnl_attr_get_u32(a), SMC_SOFT_A_MAX);
				seen++;
				break;
			}
		}
	CHECK_INT(seen, 3);
	regfx_free(&f);
}

/* One fd for a datagram of two SOCK_ADDs: only the first gets the socket. */
TEST(soft_reg_fd_used_once_per_datagram)
{
	struct regfx f;
	unsigned char two[2 * 64];
	struct mb m;
	size_t len;
	uint16_t port;
	int lst = regfx_listener(AF_INET, &port);
	const struct nlmsghdr *nlh;
	int errors = 0, replies = 0;

	regfx_init(&f);
	regfx_req(&m, SMC_SOFT_CMD_SOCK_ADD, 0);
	mb_u8(&m, SMC_SOFT_A_STATE, SMC_SOFT_STATE_LISTEN);
	((struct nlmsghdr *)m.buf)->nlmsg_len = (uint32_t)m.len;
	len = NLMSG_ALIGN(m.len);
	CHECK(2 * len <= sizeof(two));
	memset(two, 0, sizeof(two));
	memcpy(two, m.buf, m.len);
	memcpy(two + len, m.buf, m.len);
	soft_handle(&f.st, &f.peer, two, 2 * len, dup(lst), &f.out);
	for (size_t off = 0; off + NLMSG_HDRLEN <= f.out.len; off += NLMSG_ALIGN(nlh->nlmsg_len)) {
		nlh = (const struct nlmsghdr *)(f.out.buf + off);
		if (nlh->nlmsg_type == NLMSG_ERROR) {
			CHECK_INT(((const struct nlmsgerr *)NLMSG_DATA(nlh))->error, -EINVAL);
			errors++;
		} else {
			replies++;
		}
	}
	CHECK_INT(replies, 1);
	CHECK_INT(errors, 1);
	CHECK_INT(n_socks(&f), 1);
	close(lst);
	regfx_free(&f);
}

static int new_netns(void)
{
	return unshare(CLONE_NEWNET);
}

/*
 * A socket of another network namespace, registered by a caller of this
 * one: it is filed under the socket's namespace, which the kernel tells.
 */
TEST(soft_reg_socket_filed_under_its_namespace)
{
	struct regfx f;
	struct soft_peer there;
	uint64_t netns = 0, tok;
	int fd = regfx_child_socket(new_netns);

	if (fd < 0 || !regfx_netns(fd)) {
		printf("    (skipped: no new network namespace here)\n");
		if (fd >= 0)
			close(fd);
		return;
	}
	regfx_init(&f);
	netns = regfx_netns(fd);
	CHECK(netns != f.st.init_netns);
	CHECK_INT(regfx_add(&f, &f.peer, fd, SMC_SOFT_STATE_INIT, &tok), 0);
	CHECK(only_sock(&f, netns) != NULL);
	CHECK(only_sock(&f, f.st.init_netns) == NULL);
	CHECK_INT(regfx_dump(&f, &f.peer, 0), 0);
	CHECK_INT(f.rep.len, 0);
	there = f.peer;
	there.netns = netns;
	CHECK_INT(regfx_dump(&f, &there, 0), 0);
	CHECK(f.rep.len > 0);
	/* it still belongs to the connection that registered it */
	CHECK_INT(regfx_del(&f, &there, tok), 0);
	close(fd);
	regfx_free(&f);
}
