/*
 * nlflood: a hostile and a greedy client of smc_softd, to check that the
 * daemon answers bad input as the kernel would and keeps serving.
 *
 *   nlflood SOCKET ping              exit 0 when the daemon resolves a family
 *   nlflood SOCKET malformed [PID]   bad datagrams, each with its expected reply;
 *                                    with PID, also that passed descriptors
 *                                    do not stay open in the daemon
 *   nlflood SOCKET burst N           N requests without reading the replies,
 *                                    another client served meanwhile, then
 *                                    exit with the replies unread
 *   nlflood SOCKET overflow          a datagram of dump requests whose replies
 *                                    pass the daemon's 4 MiB queue limit, never
 *                                    read: the daemon drops the connection
 *   nlflood SOCKET stall             requests until the daemon stops reading us,
 *                                    then one carrying a TCP socket; never
 *                                    read: the daemon drops the connection
 *                                    within a minute, and the TCP socket in
 *                                    flight closes with it (its peer sees EOF)
 *   nlflood SOCKET clients N         N connections open at once, one request
 *                                    on each, every reply read
 *   nlflood SOCKET sequence N PID    N requests in turn on one connection;
 *                                    VmRSS of PID after 10000 and after N
 *                                    must differ by less than 1 MiB
 *
 * One line per check on stdout, "ok NAME" or "FAIL NAME: why"; exit status 1
 * when a check failed.  Links only libc.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#define SOCK_DIAG_BY_FAMILY 20
#define AF_SMC_FAMILY 43
#define SMC_DIAG_REQ_LEN 52
#define SMC_PNETID_GET 1
#define SMC_PNETID_ADD 2
#define SMC_PNETID_FLUSH 4
#define SMC_PNETID_NAME 1
#define SMC_PNETID_ETHNAME 2
#define SMC_NETLINK_GET_SYS_INFO 1
#define SMC_NETLINK_ADD_UEID 10
#define RX_MAX (128 * 1024)

static const char *sock_path;
static int failures;

/* A request under construction. */
struct msg {
	_Alignas(struct nlmsghdr) unsigned char buf[80 * 1024];
	size_t len;
};

static struct nlmsghdr *hdr(struct msg *m)
{
	return (struct nlmsghdr *)m->buf;
}

static void msg_start(struct msg *m, uint16_t type, uint16_t flags, uint32_t seq)
{
	memset(m->buf, 0, NLMSG_HDRLEN);
	m->len = NLMSG_HDRLEN;
	hdr(m)->nlmsg_type = type;
	hdr(m)->nlmsg_flags = flags;
	hdr(m)->nlmsg_seq = seq;
	hdr(m)->nlmsg_len = (uint32_t)m->len;
}

static void put(struct msg *m, const void *data, size_t len)
{
	memcpy(m->buf + m->len, data, len);
	memset(m->buf + m->len + len, 0, NLMSG_ALIGN(len) - len);
	m->len += NLMSG_ALIGN(len);
	hdr(m)->nlmsg_len = (uint32_t)m->len;
}

static void genl_start(struct msg *m, uint16_t family, uint8_t cmd, uint16_t flags, uint32_t seq)
{
	struct genlmsghdr g = { .cmd = cmd, .version = 1 };

	msg_start(m, family, NLM_F_REQUEST | flags, seq);
	put(m, &g, sizeof(g));
}

static void put_attr(struct msg *m, uint16_t type, const void *data, size_t len)
{
	struct nlattr a = { .nla_len = (uint16_t)(NLA_HDRLEN + len), .nla_type = type };

	memcpy(m->buf + m->len, &a, sizeof(a));
	m->len += NLA_HDRLEN;
	put(m, data, len);
}

static void getfamily(struct msg *m, const char *name, uint32_t seq)
{
	genl_start(m, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, NLM_F_ACK, seq);
	put_attr(m, CTRL_ATTR_FAMILY_NAME, name, strlen(name) + 1);
}

/* depth nests inside each other, each holding the next */
static void put_deep_nest(struct msg *m, uint16_t type, int depth)
{
	size_t start = m->len;

	for (int i = 0; i < depth; i++) {
		struct nlattr a = { .nla_len = (uint16_t)(NLA_HDRLEN * (depth - i)),
				    .nla_type = type | NLA_F_NESTED };

		memcpy(m->buf + start + (size_t)i * NLA_HDRLEN, &a, sizeof(a));
	}
	m->len += (size_t)depth * NLA_HDRLEN;
	hdr(m)->nlmsg_len = (uint32_t)m->len;
}

static void check(bool ok, const char *name, const char *why)
{
	if (ok) {
		printf("ok %s\n", name);
	} else {
		printf("FAIL %s: %s\n", name, why);
		failures++;
	}
	fflush(stdout);
}

static int connect_daemon(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 10 };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sock_path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		fprintf(stderr, "nlflood: connect %s: %s\n", sock_path, strerror(errno));
		exit(1);
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static bool send_raw(int fd, const void *p, size_t len)
{
	return send(fd, p, len, MSG_NOSIGNAL) == (ssize_t)len;
}

/* Reply messages of one connection, a datagram at a time. */
static struct {
	_Alignas(struct nlmsghdr) unsigned char buf[RX_MAX];
	size_t len, off;
	int fd;
	bool eof;                       /* the daemon closed the connection */
} rx = { .fd = -1 };

/* The next reply message on fd, NULL on EOF, error, timeout or bad framing. */
static const struct nlmsghdr *next_msg(int fd)
{
	const struct nlmsghdr *h;

	if (rx.fd != fd || rx.off + NLMSG_HDRLEN > rx.len) {
		ssize_t n = recv(fd, rx.buf, sizeof(rx.buf), 0);

		rx.fd = fd;
		rx.off = 0;
		rx.len = n > 0 ? (size_t)n : 0;
		rx.eof = n == 0 || (n < 0 && errno == ECONNRESET);
		if (rx.len < NLMSG_HDRLEN)
			return NULL;
	}
	h = (const struct nlmsghdr *)(rx.buf + rx.off);
	if (h->nlmsg_len < NLMSG_HDRLEN || h->nlmsg_len > rx.len - rx.off) {
		rx.len = 0;
		return NULL;
	}
	rx.off += NLMSG_ALIGN(h->nlmsg_len);
	return h;
}

static void close_conn(int fd)
{
	if (rx.fd == fd)
		rx.fd = -1;
	close(fd);
}

/*
 * Read the answer to request seq, up to NLMSG_DONE or NLMSG_ERROR.  *error
 * is the NLMSG_ERROR's value (1 when none came), *type the type of the first
 * data message (0 for none).
 */
static bool read_answer(int fd, uint32_t seq, int *error, uint16_t *type)
{
	const struct nlmsghdr *h;

	*error = 1;
	*type = 0;
	while ((h = next_msg(fd)) && h->nlmsg_seq == seq) {
		if (h->nlmsg_type == NLMSG_ERROR) {
			if (h->nlmsg_len < NLMSG_LENGTH(sizeof(int)))
				return false;
			*error = ((const struct nlmsgerr *)NLMSG_DATA(h))->error;
			return true;
		}
		if (h->nlmsg_type == NLMSG_DONE)
			return true;
		if (!*type)
			*type = h->nlmsg_type;
	}
	return false;
}

static void expect_error(int fd, uint32_t seq, int err, const char *name)
{
	char why[128];
	uint16_t type;
	int e;

	if (!read_answer(fd, seq, &e, &type))
		snprintf(why, sizeof(why), "no well-formed answer with seq %u", seq);
	else
		snprintf(why, sizeof(why), "error %d, expected %d", e == 1 ? 0 : e, -err);
	check(e == -err, name, why);
}

/* The family id of name, resolved the way lib/ does it; 0 when it fails. */
static uint16_t family_id(int fd, const char *name)
{
	static struct msg m;
	const struct nlmsghdr *h;
	uint16_t id = 0;
	size_t off = NLMSG_LENGTH(GENL_HDRLEN);

	getfamily(&m, name, 77);
	if (!send_raw(fd, m.buf, m.len) || !(h = next_msg(fd)) || h->nlmsg_type != GENL_ID_CTRL)
		return 0;
	while (off + NLA_HDRLEN <= h->nlmsg_len) {
		const struct nlattr *a = (const struct nlattr *)((const unsigned char *)h + off);

		if (a->nla_len < NLA_HDRLEN)
			return 0;
		if (a->nla_type == CTRL_ATTR_FAMILY_ID && a->nla_len >= NLA_HDRLEN + 2)
			memcpy(&id, (const unsigned char *)a + NLA_HDRLEN, sizeof(id));
		off += NLA_ALIGN(a->nla_len);
	}
	h = next_msg(fd);                       /* the ack */
	return h && h->nlmsg_type == NLMSG_ERROR ? id : 0;
}

/* A normal request is answered normally on a new connection. */
static void check_alive(const char *name)
{
	int fd = connect_daemon();

	check(family_id(fd, "SMC_GEN_NETLINK") != 0, name, "no answer to CTRL_CMD_GETFAMILY");
	close_conn(fd);
}

static int count_fds(const char *pid)
{
	char path[64];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%s/fd", pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void send_with_fds(int fd, const struct msg *m, int nfds)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(8 * sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = (void *)m->buf, .iov_len = m->len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			     .msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int)) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	int fds[8];

	for (int i = 0; i < nfds; i++)
		fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, (size_t)nfds * sizeof(int));
	if (sendmsg(fd, &mh, MSG_NOSIGNAL) < 0)
		perror("nlflood: sendmsg");
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
}

static void malformed_framing(int fd)
{
	static struct msg m;

	send_raw(fd, "\x01\x02\x03", 3);
	expect_error(fd, 0, EINVAL, "3-byte datagram");

	getfamily(&m, "SMC_PNETID", 2);
	hdr(&m)->nlmsg_len = (uint32_t)m.len + 64;
	send_raw(fd, m.buf, m.len);
	expect_error(fd, 2, EINVAL, "nlmsg_len beyond the datagram");

	getfamily(&m, "SMC_PNETID", 3);
	hdr(&m)->nlmsg_len = 8;
	send_raw(fd, m.buf, m.len);
	expect_error(fd, 3, EINVAL, "nlmsg_len below a header");

	getfamily(&m, "SMC_PNETID", 4);
	memset(m.buf + m.len, 0, 65537 - m.len);
	m.len = 65537;
	hdr(&m)->nlmsg_len = (uint32_t)m.len;
	send_raw(fd, m.buf, m.len);
	expect_error(fd, 4, EINVAL, "datagram of 64 KiB + 1");
}

static void malformed_genl(int fd)
{
	static struct msg m;
	uint16_t gen = family_id(fd, "SMC_GEN_NETLINK");
	uint16_t type;
	int e;

	check(gen != 0, "family SMC_GEN_NETLINK resolves", "no id");
	genl_start(&m, 0x3ff, 1, NLM_F_ACK, 5);
	send_raw(fd, m.buf, m.len);
	expect_error(fd, 5, ENOENT, "unknown family id");

	genl_start(&m, gen, 200, NLM_F_ACK, 6);
	send_raw(fd, m.buf, m.len);
	expect_error(fd, 6, EOPNOTSUPP, "unknown genl command");

	genl_start(&m, gen, SMC_NETLINK_ADD_UEID, NLM_F_DUMP, 7);
	send_raw(fd, m.buf, m.len);
	expect_error(fd, 7, EOPNOTSUPP, "dump flag on a doit command");

	getfamily(&m, "SMC_PNETID", 8);
	((struct nlattr *)(m.buf + NLMSG_LENGTH(GENL_HDRLEN)))->nla_len = 200;
	send_raw(fd, m.buf, m.len);
	expect_error(fd, 8, EINVAL, "attribute longer than the message");

	genl_start(&m, gen, 1, NLM_F_ACK, 9);
	m.len -= GENL_HDRLEN;
	hdr(&m)->nlmsg_len = (uint32_t)m.len;
	send_raw(fd, m.buf, m.len);
	expect_error(fd, 9, EINVAL, "genl message without its genl header");

	getfamily(&m, "SMC_PNETID", 10);
	put_deep_nest(&m, CTRL_ATTR_OPS, 8000);
	send_raw(fd, m.buf, m.len);
	check(read_answer(fd, 10, &e, &type) &&
	      ((type == GENL_ID_CTRL && e == 0) || e == -EINVAL),
	      "8000 nested attributes", "neither the family nor EINVAL");
}

/* Every family gets deep nesting; any well-formed answer will do. */
static void malformed_deep(int fd)
{
	static struct msg m;
	uint16_t pnet = family_id(fd, "SMC_PNETID");
	uint16_t gen = family_id(fd, "SMC_GEN_NETLINK");
	unsigned char req[SMC_DIAG_REQ_LEN] = { AF_SMC_FAMILY, 0, 0, 0xff };
	uint16_t type;
	int e;

	genl_start(&m, pnet, SMC_PNETID_GET, NLM_F_DUMP, 11);
	put_deep_nest(&m, 1, 8000);
	send_raw(fd, m.buf, m.len);
	check(read_answer(fd, 11, &e, &type), "deep nesting in SMC_PNETID", "no answer");

	genl_start(&m, gen, SMC_NETLINK_GET_SYS_INFO, NLM_F_DUMP, 12);
	put_deep_nest(&m, 1, 8000);
	send_raw(fd, m.buf, m.len);
	check(read_answer(fd, 12, &e, &type), "deep nesting in SMC_GEN_NETLINK", "no answer");

	msg_start(&m, SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, 13);
	put(&m, req, sizeof(req));
	put_deep_nest(&m, 1, 8000);
	send_raw(fd, m.buf, m.len);
	check(read_answer(fd, 13, &e, &type), "deep nesting in sock_diag", "no answer");
}

static void malformed_misc(int fd, const char *pid)
{
	static struct msg m, two;
	uint16_t type;
	int before, after, e;

	send_raw(fd, "", 0);
	msg_start(&m, GENL_ID_CTRL, NLM_F_ACK, 20);    /* not a request: ignored */
	put(&m, &(struct genlmsghdr){ .cmd = CTRL_CMD_GETFAMILY }, GENL_HDRLEN);
	send_raw(fd, m.buf, m.len);
	getfamily(&m, "SMC_PNETID", 21);
	send_raw(fd, m.buf, m.len);
	check(read_answer(fd, 21, &e, &type) && e == 0 && type == GENL_ID_CTRL,
	      "empty datagram and non-request ignored", "the next request was not answered first");

	getfamily(&two, "SMC_PNETID", 22);
	getfamily(&m, "SMC_GEN_NETLINK", 22);
	memcpy(two.buf + two.len, m.buf, m.len);
	two.len += m.len;
	send_raw(fd, two.buf, two.len);
	check(read_answer(fd, 22, &e, &type) && e == 0 &&
	      read_answer(fd, 22, &e, &type) && e == 0,
	      "two requests in one datagram", "not both answered");

	before = pid ? count_fds(pid) : 0;
	getfamily(&m, "SMC_PNETID", 23);
	send_with_fds(fd, &m, 3);
	check(read_answer(fd, 23, &e, &type) && e == 0, "request with 3 descriptors",
	      "not answered");
	after = pid ? count_fds(pid) : 0;
	if (pid)
		check(before == after && before > 0, "passed descriptors closed",
		      "the daemon's descriptor count changed");
}

static int malformed(const char *pid)
{
	int fd = connect_daemon();

	malformed_framing(fd);
	malformed_genl(fd);
	malformed_deep(fd);
	malformed_misc(fd, pid);
	close_conn(fd);
	check_alive("daemon still answers");
	return failures ? 1 : 0;
}

/*
 * Requests packed into datagrams of up to 64 KiB, sent while the daemon
 * takes them; stop when it has throttled us for 300 ms.
 */
static int burst(int n)
{
	static struct msg one, m;
	int fd = connect_daemon(), sent = 0, dgrams = 0, e;
	uint16_t type;

	/* room for the whole burst in our socket, where root may have it */
	int sndbuf = 8 << 20;

	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	getfamily(&one, "SMC_PNETID", 0);
	while (sent < n) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		int k = 0;

		for (m.len = 0; sent + k < n && m.len + one.len <= 65536; k++) {
			hdr(&one)->nlmsg_seq = (uint32_t)(sent + k + 1);
			memcpy(m.buf + m.len, one.buf, one.len);
			m.len += one.len;
		}
		if (send(fd, m.buf, m.len, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)m.len) {
			sent += k;
			dgrams++;
			continue;
		}
		if (errno != EAGAIN || poll(&p, 1, 300) <= 0)
			break;
	}
	printf("sent %d of %d requests in %d datagrams\n", sent, n, dgrams);
	check(sent > 0, "burst sent", "nothing");
	check_alive("another client is served meanwhile");
	check(read_answer(fd, 1, &e, &type) && e == 0 &&
	      read_answer(fd, 2, &e, &type) && e == 0, "first replies in order",
	      "missing or out of order");
	close_conn(fd);                        /* with replies unread */
	check_alive("daemon still answers");
	return failures ? 1 : 0;
}

/* A TCP connection on the loopback: *client and *server, 0 or -1. */
static int tcp_pair(int *client, int *server)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	*client = *server = -1;
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &len) ||
	    (*client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    connect(*client, (struct sockaddr *)&a, sizeof(a)) ||
	    (*server = accept4(l, NULL, NULL, SOCK_CLOEXEC)) < 0) {
		if (l >= 0)
			close(l);
		return -1;
	}
	close(l);
	return 0;
}

/* Whether fd has its end of stream (or an error) within ms. */
static bool ends_within(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDHUP };
	char c;

	return poll(&p, 1, ms) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) &&
	       recv(fd, &c, 1, MSG_DONTWAIT) <= 0;
}

static int stall(void)
{
	static struct msg one, m;
	int fd = connect_daemon(), sndbuf = 16 << 20, tc, ts, sent = 0;
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	bool hup = false;

	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	if (tcp_pair(&tc, &ts)) {
		check(false, "TCP connection", strerror(errno));
		return 1;
	}
	getfamily(&one, "SMC_PNETID", 0);
	/* far more replies than our receive buffer holds: the daemon must stop reading us */
	while (sent < 20000) {
		int k = 0;

		for (m.len = 0; m.len + one.len <= 65536; k++) {
			hdr(&one)->nlmsg_seq = (uint32_t)(sent + k + 1);
			memcpy(m.buf + m.len, one.buf, one.len);
			m.len += one.len;
		}
		if (send(fd, m.buf, m.len, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)m.len)
			break;
		sent += k;
	}
	printf("sent %d requests\n", sent);
	sleep(1);
	iov.iov_base = one.buf;
	iov.iov_len = one.len;
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &tc, sizeof(int));
	check(sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)one.len,
	      "a request with a TCP socket queued behind them", strerror(errno));
	close(tc);
	check(!ends_within(ts, 500), "the socket in flight keeps its connection open", "it ended");
	check_alive("another client is served meanwhile");
	for (int i = 0; i < 60 && !hup; i++) {
		struct pollfd p = { .fd = fd, .events = 0 };

		hup = poll(&p, 1, 1000) == 1 && (p.revents & (POLLHUP | POLLERR));
	}
	check(hup, "the daemon drops a client that takes no reply", "still connected after 60 s");
	check(ends_within(ts, 10000), "the socket in flight closed with it", "its peer sees no end");
	close(ts);
	close(fd);
	check_alive("daemon still answers");
	return failures ? 1 : 0;
}

/* Enough PNET entries that a dump needs several datagrams. */
static bool fill_pnet_table(int fd, uint16_t pnet, int entries)
{
	static struct msg m;
	uint16_t type;
	int e;

	for (int i = 0; i < entries; i++) {
		char ifname[16];

		snprintf(ifname, sizeof(ifname), "nlflood%d", i);
		genl_start(&m, pnet, SMC_PNETID_ADD, NLM_F_ACK, (uint32_t)i + 1000);
		put_attr(&m, SMC_PNETID_NAME, "NLFLOOD", 8);
		put_attr(&m, SMC_PNETID_ETHNAME, ifname, strlen(ifname) + 1);
		if (!send_raw(fd, m.buf, m.len) ||
		    !read_answer(fd, (uint32_t)i + 1000, &e, &type) || e != 0)
			return false;
	}
	return true;
}

/* One dump read a datagram at a time: their number and the largest. */
static bool dump_datagrams(int fd, const struct msg *req, int *count, size_t *largest)
{
	static _Alignas(struct nlmsghdr) unsigned char buf[RX_MAX];

	*count = 0;
	*largest = 0;
	if (!send_raw(fd, req->buf, req->len))
		return false;
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		size_t off = 0;

		if (n <= 0)
			return false;
		(*count)++;
		if ((size_t)n > *largest)
			*largest = (size_t)n;
		while (off + NLMSG_HDRLEN <= (size_t)n) {
			const struct nlmsghdr *h = (const struct nlmsghdr *)(buf + off);

			if (h->nlmsg_len < NLMSG_HDRLEN || h->nlmsg_len > (size_t)n - off)
				return false;           /* a message cut between datagrams */
			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR)
				return off + NLMSG_ALIGN(h->nlmsg_len) >= (size_t)n;
			off += NLMSG_ALIGN(h->nlmsg_len);
		}
	}
}

static int overflow(void)
{
	static struct msg one, m;
	int fd = connect_daemon(), requests = 0, answers = 0, e;
	uint16_t pnet = family_id(fd, "SMC_PNETID"), type;
	const struct nlmsghdr *h;
	char why[96];

	int count;
	size_t largest;

	check(fill_pnet_table(fd, pnet, 1000), "1000 PNET entries added", "refused");
	genl_start(&one, pnet, SMC_PNETID_GET, NLM_F_DUMP, 1);
	snprintf(why, sizeof(why), "bad framing");
	if (dump_datagrams(fd, &one, &count, &largest))
		snprintf(why, sizeof(why), "%d datagrams, the largest %zu bytes", count, largest);
	check(count > 1 && largest <= 32768, "a large dump comes in datagrams of whole messages "
	      "up to 32 KiB", why);
	for (m.len = 0; m.len + one.len <= 65536; requests++) {
		memcpy(m.buf + m.len, one.buf, one.len);
		m.len += one.len;
	}
	check(send_raw(fd, m.buf, m.len), "datagram of dump requests sent", "send failed");
	sleep(1);                               /* the daemon meets the limit meanwhile */
	while ((h = next_msg(fd)))
		answers += h->nlmsg_type == NLMSG_DONE;
	printf("%d of %d dumps answered before the daemon hung up\n", answers, requests);
	snprintf(why, sizeof(why), "no end of connection after %d of %d dumps",
		 answers, requests);
	check(rx.eof && answers < requests, "connection dropped", why);
	close_conn(fd);
	fd = connect_daemon();
	genl_start(&m, pnet, SMC_PNETID_FLUSH, NLM_F_ACK, 2);
	check(send_raw(fd, m.buf, m.len) && read_answer(fd, 2, &e, &type) && e == 0,
	      "table flushed", "flush failed");
	close_conn(fd);
	check_alive("daemon still answers");
	return failures ? 1 : 0;
}

static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int clients(int n)
{
	static struct msg m;
	int *fds = calloc((size_t)n, sizeof(int)), answered = 0, e;
	uint16_t type;
	char why[64];

	raise_nofile();
	for (int i = 0; i < n; i++)
		fds[i] = connect_daemon();
	for (int i = 0; i < n; i++) {
		getfamily(&m, "SMC_GEN_NETLINK", (uint32_t)i + 1);
		send_raw(fds[i], m.buf, m.len);
	}
	for (int i = 0; i < n; i++) {
		answered += read_answer(fds[i], (uint32_t)i + 1, &e, &type) && e == 0 &&
			    type == GENL_ID_CTRL;
		close_conn(fds[i]);
	}
	free(fds);
	snprintf(why, sizeof(why), "%d of %d answered", answered, n);
	check(answered == n, "concurrent clients", why);
	return failures ? 1 : 0;
}

static long vm_rss_kb(const char *pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* The requests of the sequence: family resolution, and a dump of each kind. */
static void sequence_request(struct msg *m, uint16_t pnet, uint16_t gen, uint32_t seq)
{
	unsigned char req[SMC_DIAG_REQ_LEN] = { AF_SMC_FAMILY, 0, 0, 0xff };

	switch (seq % 4) {
	case 0:
		getfamily(m, "SMC_GEN_NETLINK", seq);
		break;
	case 1:
		genl_start(m, pnet, SMC_PNETID_GET, NLM_F_DUMP, seq);
		break;
	case 2:
		genl_start(m, gen, SMC_NETLINK_GET_SYS_INFO, NLM_F_DUMP, seq);
		break;
	default:
		msg_start(m, SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, seq);
		put(m, req, sizeof(req));
		break;
	}
}

static int sequence(int n, const char *pid)
{
	static struct msg m;
	int fd = connect_daemon(), answered = 0, e;
	uint16_t pnet = family_id(fd, "SMC_PNETID"), gen = family_id(fd, "SMC_GEN_NETLINK");
	long rss_10k = -1, rss_end;
	uint16_t type;
	char why[128];

	for (int i = 1; i <= n; i++) {
		sequence_request(&m, pnet, gen, (uint32_t)i);
		answered += send_raw(fd, m.buf, m.len) &&
			    read_answer(fd, (uint32_t)i, &e, &type);
		if (i == 10000)
			rss_10k = vm_rss_kb(pid);
	}
	rss_end = vm_rss_kb(pid);
	close_conn(fd);
	printf("VmRSS after 10000 requests: %ld kB, after %d: %ld kB\n", rss_10k, n, rss_end);
	snprintf(why, sizeof(why), "%d of %d answered", answered, n);
	check(answered == n, "every request answered", why);
	snprintf(why, sizeof(why), "grew by %ld kB", rss_end - rss_10k);
	check(rss_10k > 0 && rss_end > 0 && rss_end - rss_10k < 1024, "VmRSS growth under 1 MiB", why);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		goto usage;
	sock_path = argv[1];
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[2], "ping")) {
		int fd = connect_daemon(), ok = family_id(fd, "SMC_PNETID") != 0;

		close_conn(fd);
		return ok ? 0 : 1;
	}
	if (!strcmp(argv[2], "malformed"))
		return malformed(argc > 3 ? argv[3] : NULL);
	if (!strcmp(argv[2], "burst") && argc == 4)
		return burst(atoi(argv[3]));
	if (!strcmp(argv[2], "overflow"))
		return overflow();
	if (!strcmp(argv[2], "stall"))
		return stall();
	if (!strcmp(argv[2], "clients") && argc == 4)
		return clients(atoi(argv[3]));
	if (!strcmp(argv[2], "sequence") && argc == 5)
		return sequence(atoi(argv[3]), argv[4]);
usage:
	fprintf(stderr, "usage: nlflood SOCKET ping | malformed [PID] | burst N | overflow | stall | clients N | "
		"sequence N PID\n");
	return 2;
}
