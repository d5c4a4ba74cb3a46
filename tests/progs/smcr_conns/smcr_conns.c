/*
 * smcr_conns: the preload's soft SMC-R layer (preload/smcr/) between two
 * hosts (tests/vm/guest/s6.sh).  One link group joins the two processes:
 * the first TCP connection's CLC exchange (first contact) brings up its
 * first link with LLC CONFIRM LINK, the server adds the second with LLC ADD
 * LINK, and every further connection's CLC exchange names the link the
 * server chose (in turn) with LLC CONFIRM RKEY for the other.  Then every
 * connection carries BYTES each way at once, a sender and a receiver
 * thread per connection, both sleeping on the layer's futex words while the
 * progress thread takes the completions; every byte is checked.  "a
 * quarter sent" is printed for a test that takes a link down then.  With
 * "reset", the test takes every link down: each connection must end with
 * ECONNRESET (no byte wrong before it), never hang.  A group's only link
 * that fails while its port is up is rebuilt on new queue pairs, the two
 * processes handing each other the layer's rebuild messages over one more
 * TCP connection, as two libraries do through their daemons.  With
 * "relink", the test takes a link down and brings it back: after the bytes
 * each end waits (up to 60 s) for its group to have two links up again
 * before it closes its connections, and prints how many it has.
 *
 *   smcr_conns server PORT DEV DEV2 ADDR2 CONNS BYTES [reset|relink]
 *   smcr_conns client ADDR PORT DEV DEV2 ADDR2 CONNS BYTES [reset|relink]
 *
 * Prints "smcr_conns: OK ..." with exit 0, else the failure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cdc_flags.h"
#include "smcr.h"
#include "smcr_handshake.h"
#include "smcr_rebuild.h"

#define CONNS_MAX   16
#define RMB_SIZE    (64u * 1024)
#define SNDBUF_SIZE (64u * 1024)
#define CHUNK       (16u * 1024)
/* No progress for this long fails the test (a hang, not a slow machine). */
#define STALL_S     60

static const char *role;
static bool server;
static uint64_t total;
static int nconns;
static _Atomic uint64_t sent_all;
static _Atomic bool quarter_told;
static bool expect_reset, relink;

struct conn {
	int idx;
	int fd;
	struct smcr_sock *s;
	uint64_t sent, got;
	_Atomic bool reset;     /* ended with ECONNRESET (expect_reset) */
};

/* With expect_reset, ECONNRESET ends the connection's thread; anything else is the test's failure. */
static bool reset_ends(struct conn *c, long err)
{
	if (!expect_reset || err != -ECONNRESET)
		return false;
	atomic_store(&c->reset, true);
	return true;
}

static struct conn conns[CONNS_MAX];
static struct smcr_lgr *lgr;
/* the connection that carries rebuild messages, and our group's key */
static int rebuild_fd = -1;
static uint32_t lgr_key;

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "smcr_conns %s: ", role);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* The byte at pos of connection idx, sent by the client (up) or the server. */
static uint8_t pattern(int idx, bool up, uint64_t pos)
{
	return (uint8_t)(pos * 131u + (pos >> 9) + (pos >> 17) + (uint64_t)idx * 7u + (up ? 0 : 101u));
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void local_gid(int fd, uint8_t gid[16])
{
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);

	if (getsockname(fd, (struct sockaddr *)&sin, &sl) || sin.sin_family != AF_INET)
		die("getsockname: not an IPv4 connection");
	smcr_gid_of(sin.sin_addr, gid);
}

/* Sleeps on direction rx of c until its word moved from seq; dies after STALL_S without. */
/* The layer's debug lines (SMC_DEBUG set), on stderr. */
static void debug_line(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

static void sleep_on(struct conn *c, bool rx, uint32_t seq, double *since)
{
	struct timespec ts = { 1, 0 };
	int rc = smcr_sock_wait(c->s, rx, seq, &ts);

	if (rc == 0 || rc == -EINTR) {
		*since = now_s();
		return;
	}
	if (rc != -ETIMEDOUT)
		die("connection %d: wait: %s", c->idx, strerror(-rc));
	if (now_s() - *since > STALL_S) {
		static _Atomic bool told;

		if (atomic_exchange(&told, true))
			pause();        /* another thread reports and exits */
		{
			char links[1024];

			smcr_lgr_describe(lgr, links, sizeof(links));
			fprintf(stderr, "%s", links);
		}
		for (int i = 0; i < nconns; i++) {
			char line[400];

			smcr_sock_describe(conns[i].s, line, sizeof(line));
			fprintf(stderr, "smcr_conns %s: connection %d: %s\n", role, i, line);
		}
		die("connection %d: nothing for %d s (%s, sent %llu, got %llu)", c->idx, STALL_S,
		    rx ? "receiving" : "sending", (unsigned long long)c->sent, (unsigned long long)c->got);
	}
}

static void *sender(void *arg)
{
	struct conn *c = arg;
	static _Thread_local uint8_t buf[CHUNK];
	double since = now_s();

	while (c->sent < total) {
		struct iovec iov = { buf, total - c->sent < CHUNK ? (size_t)(total - c->sent) : CHUNK };
		uint32_t seq = smcr_sock_seq(c->s, false);
		ssize_t n;

		for (size_t i = 0; i < iov.iov_len; i++)
			buf[i] = pattern(c->idx, !server, c->sent + i);
		n = smcr_sock_send(c->s, &iov, 1);
		if (n == -EAGAIN) {
			sleep_on(c, false, seq, &since);
			continue;
		}
		if (n < 0 && reset_ends(c, n))
			return NULL;
		if (n < 0)
			die("connection %d: send: %s", c->idx, strerror((int)-n));
		c->sent += (uint64_t)n;
		since = now_s();
		if (atomic_fetch_add(&sent_all, (uint64_t)n) + (uint64_t)n >= total * (uint64_t)nconns / 4 &&
		    !atomic_exchange(&quarter_told, true)) {
			printf("smcr_conns: a quarter sent\n");
			fflush(stdout);
		}
	}
	if (smcr_sock_set_state(c->s, CDC_CF_DONE_WRITING) && !reset_ends(c, smcr_sock_error(c->s)))
		die("connection %d: shutdown: %s", c->idx, strerror(-smcr_sock_error(c->s)));
	return NULL;
}

static void *receiver(void *arg)
{
	struct conn *c = arg;
	static _Thread_local uint8_t buf[CHUNK];
	double since = now_s();

	for (;;) {
		struct iovec iov = { buf, sizeof(buf) };
		uint32_t seq = smcr_sock_seq(c->s, true);
		ssize_t n = smcr_sock_recv(c->s, &iov, 1, false);

		if (n < 0 && reset_ends(c, n))
			return NULL;
		if (n < 0)
			die("connection %d: receive: %s", c->idx, strerror((int)-n));
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] != pattern(c->idx, server, c->got + (uint64_t)i))
				die("connection %d: byte %llu is 0x%02x, sent 0x%02x", c->idx,
				    (unsigned long long)(c->got + (uint64_t)i), buf[i],
				    pattern(c->idx, server, c->got + (uint64_t)i));
		c->got += (uint64_t)n;
		if (n) {
			since = now_s();
			continue;
		}
		if (smcr_sock_peer_state(c->s) & (CDC_CF_DONE_WRITING | CDC_CF_CLOSED | CDC_CF_ABORT))
			break;
		sleep_on(c, true, seq, &since);
	}
	if (c->got != total)
		die("connection %d: the peer ended after %llu bytes of %llu", c->idx, (unsigned long long)c->got,
		    (unsigned long long)total);
	return NULL;
}

/* Closes c once the peer is done with our RMB. */
static void finish(struct conn *c)
{
	double since = now_s();

	if (smcr_sock_set_state(c->s, CDC_CF_CLOSED))
		die("connection %d: close: %s", c->idx, strerror(-smcr_sock_error(c->s)));
	for (;;) {
		uint32_t seq = smcr_sock_seq(c->s, true);

		if (smcr_sock_peer_state(c->s) & (CDC_CF_CLOSED | CDC_CF_ABORT))
			break;
		sleep_on(c, true, seq, &since);
	}
	/* our CLOSED must reach the peer before our queue pairs may go */
	while (smcr_sock_unread(c->s) || smcr_sock_error(c->s)) {
		uint32_t seq = smcr_sock_seq(c->s, false);

		if (smcr_sock_error(c->s))
			die("connection %d: %s", c->idx, strerror(-smcr_sock_error(c->s)));
		sleep_on(c, false, seq, &since);
	}
	smcr_sock_free(c->s);
	close(c->fd);
}

static int tcp_listen(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int one = 1, l = socket(AF_INET, SOCK_STREAM, 0);

	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, CONNS_MAX))
		die("listen on %d: %s", port, strerror(errno));
	return l;
}

static int tcp_connect(const char *addr, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };

	if (inet_pton(AF_INET, addr, &a.sin_addr) != 1)
		die("%s: not an IPv4 address", addr);
	for (int i = 0; i < 100; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		if (!connect(fd, (struct sockaddr *)&a, sizeof(a)))
			return fd;
		close(fd);
		if (errno != ECONNREFUSED)
			break;
		usleep(100000);
	}
	die("connect to %s:%d: %s", addr, port, strerror(errno));
	return -1;
}

/* The layer's rebuild message (env.rebuild) to the peer's process. */
static void rebuild_out(uint32_t key, const struct smcr_rebuild_msg *m)
{
	uint8_t b[SMCR_REBUILD_LEN];

	(void)key;
	if (smcr_rebuild_msg_encode(m, b, sizeof(b)) < 0 || rebuild_fd < 0 || write(rebuild_fd, b, sizeof(b)) != sizeof(b))
		fprintf(stderr, "smcr_conns %s: a rebuild message not sent\n", role);
}

/* The peer's rebuild messages, to the layer, until the peer's process ends. */
static void *rebuild_in(void *arg)
{
	uint8_t b[SMCR_REBUILD_LEN];

	(void)arg;
	for (;;) {
		struct smcr_rebuild_msg m;
		size_t got = 0;
		int rc;

		while (got < sizeof(b)) {
			ssize_t n = read(rebuild_fd, b + got, sizeof(b) - got);

			if (n <= 0)
				return NULL;
			got += (size_t)n;
		}
		if (smcr_rebuild_msg_decode(b, sizeof(b), &m)) {
			fprintf(stderr, "smcr_conns %s: a bad rebuild message\n", role);
			continue;
		}
		rc = smcr_rebuild_in(lgr_key, &m);
		if (rc)
			fprintf(stderr, "smcr_conns %s: the peer's rebuild message: %s\n", role, strerror(-rc));
	}
}

static void to_end(const struct smcr_sock_local *l, struct smcr_link_end *me)
{
	me->qp = l->qp;
	me->rkey = l->rkey;
	me->rmb_addr = l->rmb_addr;
	me->rmb_size = l->rmb_size;
	me->token = l->token;
}

static void sock_start(struct conn *c, const struct smcr_link_end *peer)
{
	struct smcr_sock_peer p = { .rkey = peer->rkey, .rmb_addr = peer->rmb_addr,
				    .rmb_size = peer->rmb_size, .token = peer->token };
	int rc = smcr_sock_connect(c->s, &p);

	if (rc)
		die("connection %d: start: %s", c->idx, strerror(-rc));
}

/* The server's side of connection c: the first one brings the links up. */
static void server_conn(struct conn *c)
{
	struct smcr_link_end me = { 0 }, peer;
	struct smcr_sock_local l;
	int rc;

	rc = smcr_sock_new(lgr, NULL, RMB_SIZE, SNDBUF_SIZE, &c->s);
	if (rc)
		die("connection %d: %s", c->idx, strerror(-rc));
	smcr_sock_local(c->s, &l);
	to_end(&l, &me);
	me.first_contact = !c->idx;
	rc = smcr_handshake_server(c->fd, &me, &peer);
	if (rc)
		die("connection %d: CLC: %s", c->idx, strerror(-rc));
	if (!c->idx) {
		rc = smcr_link_connect(lgr, 0, &peer.qp);
		if (!rc)
			rc = smcr_link_confirm(lgr, 0, 1);
		if (rc)
			die("first link: %s", strerror(-rc));
	}
	sock_start(c, &peer);
	if (!c->idx) {
		if (!peer.has_gid2)
			die("the client's CONFIRM names no second GID");
		rc = smcr_link_add(lgr, 1, 2, peer.gid2);
		if (rc)
			die("second link: %s", strerror(-rc));
	}
}

struct accept_arg {
	struct conn *c;
};

/* Between the server's ACCEPT and our CONFIRM: the first link connects, the connection takes the server's link. */
static int accepted(void *arg, const struct smcr_link_end *peer, struct smcr_link_end *me)
{
	struct accept_arg *a = arg;
	struct smcr_sock_local l;
	int rc = 0;

	if (!a->c->idx)
		rc = smcr_link_connect(lgr, 0, &peer->qp);
	if (!rc)
		rc = smcr_sock_new(lgr, &peer->qp, RMB_SIZE, SNDBUF_SIZE, &a->c->s);
	if (rc)
		return rc;
	smcr_sock_local(a->c->s, &l);
	to_end(&l, me);
	return 0;
}

static void client_conn(struct conn *c)
{
	struct smcr_link_end me = { 0 }, peer;
	struct accept_arg a = { c };
	int rc;

	smcr_link_local(lgr, 0, &me.qp);
	me.first_contact = !c->idx;
	if (!c->idx) {
		struct rdma_qp_addr q2;

		smcr_link_local(lgr, 1, &q2);
		me.has_gid2 = true;
		memcpy(me.gid2, q2.gid, 16);
	}
	rc = smcr_handshake_client(c->fd, &me, &peer, accepted, &a);
	if (rc)
		die("connection %d: CLC: %s", c->idx, strerror(-rc));
	if (!c->idx) {
		rc = smcr_link_confirm(lgr, 0, 1);
		if (rc)
			die("first link: %s", strerror(-rc));
	}
	sock_start(c, &peer);
	if (!c->idx) {
		rc = smcr_link_add(lgr, 1, 2, NULL);
		if (rc)
			die("second link: %s", strerror(-rc));
	}
}

static uint64_t parse_u64(const char *s, const char *what)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (end == s || *end || !v)
		die("%s: not %s", s, what);
	return v;
}

static void open_links(int fd, const char *dev, const char *dev2, const char *addr2)
{
	uint8_t gid[16];
	struct in_addr a;
	int rc;

	rc = smcr_lgr_new(server, &lgr);
	if (rc)
		die("link group: %s%s%s", strerror(-rc), rc == -ENOSYS ? ": " : "",
		    rc == -ENOSYS ? rdma_lib_error() : "");
	local_gid(fd, gid);
	rc = smcr_link_open(lgr, dev, 1, gid);
	if (rc < 0)
		die("device %s: %s", dev, strerror(-rc));
	if (inet_pton(AF_INET, addr2, &a) != 1)
		die("%s: not an IPv4 address", addr2);
	smcr_gid_of(a, gid);
	rc = smcr_link_open(lgr, dev2, 1, gid);
	if (rc < 0)
		die("device %s: %s", dev2, strerror(-rc));
}

int main(int argc, char **argv)
{
	struct smcr_env env = { .poll = poll, .syscall = syscall, .rebuild = rebuild_out };
	pthread_t th[2 * CONNS_MAX], rt;
	uint8_t num;
	const char *dev, *dev2, *addr2;
	int a, l = -1;
	double t0, dt;

	role = argc > 1 ? argv[1] : "?";
	server = argc > 1 && !strcmp(argv[1], "server");
	a = server ? 2 : 3;
	expect_reset = argc == a + 7 && !strcmp(argv[a + 6], "reset");
	relink = argc == a + 7 && !strcmp(argv[a + 6], "relink");
	if ((argc != a + 6 && !expect_reset && !relink) || (!server && strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: smcr_conns server PORT DEV DEV2 ADDR2 CONNS BYTES [reset|relink]\n"
				"       smcr_conns client ADDR PORT DEV DEV2 ADDR2 CONNS BYTES [reset|relink]\n");
		return 2;
	}
	dev = argv[a + 1];
	dev2 = argv[a + 2];
	addr2 = argv[a + 3];
	nconns = (int)parse_u64(argv[a + 4], "a connection count");
	total = parse_u64(argv[a + 5], "a byte count");
	if (nconns > CONNS_MAX)
		die("at most %d connections", CONNS_MAX);
	if (getenv("SMC_DEBUG"))
		env.log = debug_line;
	smcr_env_set(&env);
	if (server)
		l = tcp_listen(atoi(argv[2]));
	for (int i = 0; i < nconns; i++) {
		struct conn *c = &conns[i];

		c->idx = i;
		c->fd = server ? accept(l, NULL, NULL) : tcp_connect(argv[2], atoi(argv[3]));
		if (c->fd < 0)
			die("accept: %s", strerror(errno));
		if (!i)
			open_links(c->fd, dev, dev2, addr2);
		if (server)
			server_conn(c);
		else
			client_conn(c);
	}
	rebuild_fd = server ? accept(l, NULL, NULL) : tcp_connect(argv[2], atoi(argv[3]));
	if (rebuild_fd < 0)
		die("the connection for rebuild messages: %s", strerror(errno));
	smcr_sock_where(conns[0].s, &lgr_key, &num);
	if (pthread_create(&rt, NULL, rebuild_in, NULL) || pthread_detach(rt))
		die("a thread for rebuild messages");
	if (l >= 0)
		close(l);
	printf("smcr_conns: %d connections on %u links\n", nconns, smcr_lgr_links_up(lgr));
	fflush(stdout);
	t0 = now_s();
	for (int i = 0; i < nconns; i++) {
		pthread_create(&th[2 * i], NULL, sender, &conns[i]);
		pthread_create(&th[2 * i + 1], NULL, receiver, &conns[i]);
	}
	for (int i = 0; i < 2 * nconns; i++)
		pthread_join(th[i], NULL);
	dt = now_s() - t0;
	if (expect_reset) {
		uint64_t sent = 0, got = 0;

		for (int i = 0; i < nconns; i++) {
			if (!atomic_load(&conns[i].reset))
				die("connection %d ended without ECONNRESET (sent %llu, got %llu)", i,
				    (unsigned long long)conns[i].sent, (unsigned long long)conns[i].got);
			sent += conns[i].sent;
			got += conns[i].got;
		}
		printf("smcr_conns: OK %s: every connection ended with ECONNRESET, %llu bytes sent and "
		       "%llu received before, every byte checked, %u links failed\n", role,
		       (unsigned long long)sent, (unsigned long long)got, smcr_lgr_failovers(lgr));
		for (int i = 0; i < nconns; i++) {
			smcr_sock_free(conns[i].s);
			close(conns[i].fd);
		}
		smcr_lgr_put(lgr);
		return 0;
	}
	/* the link added again names every connection's rkey: they stay meanwhile */
	for (int i = 0; relink && i < 600 && smcr_lgr_links_up(lgr) < 2; i++)
		usleep(100000);
	if (relink)
		printf("smcr_conns: %u links up after the bytes\n", smcr_lgr_links_up(lgr));
	for (int i = 0; i < nconns; i++)
		finish(&conns[i]);
	printf("smcr_conns: OK %s sent %llu and received %llu bytes on each of %d connections, every byte "
	       "checked, %.1f MB/s each way, %u failovers\n", role, (unsigned long long)total,
	       (unsigned long long)total, nconns, (double)total * nconns / dt / 1e6, smcr_lgr_failovers(lgr));
	smcr_lgr_put(lgr);
	return 0;
}
