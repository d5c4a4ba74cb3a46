/*
 * smcr_stream: soft SMC-R's building blocks between two hosts
 * (tests/vm/guest/s5.sh).  A TCP connection carries the SMC-R CLC
 * Proposal, Accept and Confirm (wire/clc.h) with each end's queue pair,
 * RMB and alert token; the server confirms the new link with LLC CONFIRM
 * LINK over the queue pair (wire/smcr_llc.h); then the connection's data
 * path (wire/smcr_conn.h) carries BYTES of a pattern: the client
 * RDMA-writes them into the server's RMB with CDC messages for its producer
 * cursor, the server checks every byte and returns its consumer cursor, and
 * both end with the CDC's close flags.
 *
 *   smcr_stream server PORT DEVICE BYTES
 *   smcr_stream client ADDR PORT DEVICE BYTES
 *
 * Prints one line: "smcr_stream: OK ..." with exit 0, else the failure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rdma.h"
#include "smcr_conn.h"
#include "smcr_handshake.h"

#define RMB_SIZE    (256u * 1024)
#define SNDBUF_SIZE (128u * 1024)
#define CHUNK       (64u * 1024)

static const char *role;

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "smcr_stream %s: ", role);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static uint8_t pattern(uint64_t pos)
{
	return (uint8_t)(pos * 131u + (pos >> 9) + (pos >> 17));
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One end's link: the queue pair, its RMB (the peer writes into it) and send buffer. */
struct end {
	struct rdma_dev *dev;
	struct rdma_qp *qp;
	uint8_t *rmb, *sndbuf;
	struct rdma_mr rmb_mr, snd_mr;
	struct smcr_link_end peer;    /* what the other end's CLC said */
	struct smcr_conn conn;        /* the data path (wire/smcr_conn.h) */
	unsigned cdcs;                /* CDCs of the peer taken */
};

static void end_open(struct end *e, const char *dev, int fd)
{
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);
	uint8_t gid[16] = { [10] = 0xff, [11] = 0xff };
	struct rdma_qp_size size = { .send_wr = 16, .recv_slots = 48 };
	int rc;

	/* SMC-Rv2: the RoCE v2 GID of the connection's own IPv4 address */
	if (getsockname(fd, (struct sockaddr *)&sin, &sl) || sin.sin_family != AF_INET)
		die("getsockname: not an IPv4 connection");
	memcpy(gid + 12, &sin.sin_addr, 4);
	rc = rdma_dev_open(dev, 1, gid, &e->dev);
	if (rc)
		die("device %s: %s%s%s", dev, strerror(-rc), rc == -ENOSYS ? ": " : "",
		    rc == -ENOSYS ? rdma_lib_error() : "");
	rc = rdma_qp_create(e->dev, &size, &e->qp);
	if (rc)
		die("queue pair: %s", strerror(-rc));
	e->rmb = aligned_alloc(4096, RMB_SIZE);
	e->sndbuf = aligned_alloc(4096, SNDBUF_SIZE);
	if (!e->rmb || !e->sndbuf)
		die("out of memory");
	memset(e->rmb, 0, RMB_SIZE);
	rc = rdma_mr_reg(e->dev, e->rmb, RMB_SIZE, true, &e->rmb_mr);
	if (!rc)
		rc = rdma_mr_reg(e->dev, e->sndbuf, SNDBUF_SIZE, false, &e->snd_mr);
	if (rc)
		die("memory registration: %s", strerror(-rc));
}

static void end_close(struct end *e)
{
	rdma_mr_dereg(&e->rmb_mr);
	rdma_mr_dereg(&e->snd_mr);
	rdma_qp_destroy(e->qp);
	rdma_dev_close(e->dev);
	free(e->rmb);
	free(e->sndbuf);
}

static void local_link(const struct end *e, uint32_t token, struct smcr_link_end *l)
{
	memset(l, 0, sizeof(*l));
	rdma_qp_local(e->qp, &l->qp);
	l->rkey = e->rmb_mr.rkey;
	l->rmb_addr = (uintptr_t)e->rmb;
	l->rmb_size = RMB_SIZE;
	l->token = token;
}

/* The connection's link operations over the queue pair. */
static int link_write(void *link, uint32_t off, uint32_t len, uint32_t rmb_off)
{
	struct end *e = link;

	return rdma_post_write(e->qp, &e->snd_mr, off, len, e->peer.rmb_addr + rmb_off, e->peer.rkey, 0,
			       false);
}

static int link_send(void *link, const uint8_t *msg, size_t len, uint64_t id)
{
	return rdma_post_msg(((struct end *)link)->qp, msg, len, id);
}

static const struct smcr_link_ops link_ops = { .write = link_write, .send = link_send };

/*
 * Completions into the connection, failures fatal.  With ms, sleeps until
 * something came from the peer or ms passed; the count of the peer's CDCs.
 */
static int pump(struct end *e, int ms)
{
	double deadline = now_s() + ms / 1000.0;
	int got = 0;

	for (;;) {
		struct rdma_event ev[16];
		int n = rdma_qp_poll(e->qp, ev, 16), left, rc = 0;

		if (n < 0)
			die("polling completions: %s", strerror(-n));
		for (int i = 0; i < n && rc >= 0; i++) {
			if (ev[i].kind == RDMA_EV_ERROR)
				die("work request failed: status %d", ev[i].status);
			if (ev[i].kind == RDMA_EV_SENT)
				rc = smcr_conn_sent(&e->conn, ev[i].wr_id);
			if (ev[i].kind == RDMA_EV_MSG) {
				rc = smcr_conn_rx(&e->conn, ev[i].msg, ev[i].len);
				got++;
			}
		}
		if (rc < 0)
			die("connection: %s", strerror(-rc));
		e->cdcs += (unsigned)got;
		left = (int)((deadline - now_s()) * 1000);
		if (got || !ms || left <= 0)
			return got;
		if (!n) {
			n = smcr_qp_wait(e->qp, left);
			if (n < 0)
				die("waiting for completions: %s", strerror(-n));
		}
	}
}

static void client_stream(struct end *e, uint64_t total)
{
	static uint8_t buf[CHUNK];
	uint64_t sent = 0;
	double t0 = now_s(), dt;
	int rc;

	while (sent < total) {
		struct iovec iov = { buf, total - sent < CHUNK ? (size_t)(total - sent) : CHUNK };
		ssize_t n;

		for (size_t i = 0; i < iov.iov_len; i++)
			buf[i] = pattern(sent + i);
		n = smcr_conn_send(&e->conn, &iov, 1);
		if (n == -EAGAIN) {
			if (!pump(e, 5000))
				die("no consumer cursor from the server for 5 s (sent %llu)",
				    (unsigned long long)sent);
			continue;
		}
		if (n < 0)
			die("send: %s", strerror((int)-n));
		sent += (uint64_t)n;
		pump(e, 0);
	}
	rc = smcr_conn_set_state(&e->conn, CDC_CF_DONE_WRITING | CDC_CF_CLOSED);
	if (rc)
		die("close: %s", strerror(-rc));
	while (!(smcr_conn_peer_state(&e->conn) & CDC_CF_CLOSED))
		if (!pump(e, 10000))
			die("no close from the server for 10 s");
	dt = now_s() - t0;
	if (smcr_conn_unread(&e->conn))
		die("the server closed with %llu bytes unread", (unsigned long long)smcr_conn_unread(&e->conn));
	printf("smcr_stream: OK client sent %llu bytes by RDMA WRITE in %.2f s (%.1f MB/s), %u CDCs\n",
	       (unsigned long long)sent, dt, (double)sent / dt / 1e6, e->conn.seq);
}

static void server_stream(struct end *e, uint64_t total)
{
	static uint8_t buf[CHUNK];
	uint64_t got = 0;

	for (;;) {
		struct iovec iov = { buf, sizeof(buf) };
		ssize_t n = smcr_conn_recv(&e->conn, &iov, 1, false);

		if (n < 0)
			die("receive: %s", strerror((int)-n));
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] != pattern(got + (uint64_t)i))
				die("byte %llu is 0x%02x, sent 0x%02x", (unsigned long long)(got + (uint64_t)i),
				    buf[i], pattern(got + (uint64_t)i));
		got += (uint64_t)n;
		if (n)
			continue;
		if (smcr_conn_peer_state(&e->conn) & CDC_CF_CLOSED)
			break;
		if (!pump(e, 10000))
			die("no CDC from the client for 10 s (got %llu)", (unsigned long long)got);
	}
	if (got != total)
		die("the client closed after %llu bytes of %llu", (unsigned long long)got,
		    (unsigned long long)total);
	if (smcr_conn_set_state(&e->conn, CDC_CF_CLOSED))
		die("close: %s", strerror(-smcr_conn_error(&e->conn)));
	/* the close must reach the client before the queue pair goes */
	while (rdma_qp_poll(e->qp, (struct rdma_event[4]){ 0 }, 4) == 0 && smcr_qp_wait(e->qp, 2000) > 0)
		;
	printf("smcr_stream: OK server received %llu bytes, every byte checked, %u CDCs\n",
	       (unsigned long long)got, e->cdcs);
}

static int tcp_server(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int one = 1, l = socket(AF_INET, SOCK_STREAM, 0), fd;

	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1))
		die("listen on %d: %s", port, strerror(errno));
	fd = accept(l, NULL, NULL);
	if (fd < 0)
		die("accept: %s", strerror(errno));
	close(l);
	return fd;
}

static int tcp_client(const char *addr, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (inet_pton(AF_INET, addr, &a.sin_addr) != 1)
		die("%s: not an IPv4 address", addr);
	for (int i = 0; i < 100; i++) {
		if (!connect(fd, (struct sockaddr *)&a, sizeof(a)))
			return fd;
		if (errno != ECONNREFUSED)
			break;
		usleep(100000);
		close(fd);
		fd = socket(AF_INET, SOCK_STREAM, 0);
	}
	die("connect to %s:%d: %s", addr, port, strerror(errno));
	return -1;
}

static uint64_t parse_bytes(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (end == s || *end || !v)
		die("%s: not a byte count", s);
	return v;
}

int main(int argc, char **argv)
{
	struct end e;
	struct smcr_link_end me;
	uint32_t own_token = 0x5e00u + (uint32_t)getpid();
	int fd, rc;

	memset(&e, 0, sizeof(e));
	role = argc > 1 ? argv[1] : "?";
	if (argc == 5 && !strcmp(argv[1], "server")) {
		uint64_t total = parse_bytes(argv[4]);

		fd = tcp_server(atoi(argv[2]));
		end_open(&e, argv[3], fd);
		local_link(&e, own_token, &me);
		rc = smcr_handshake_server(fd, &me, &e.peer);
		if (rc)
			die("CLC handshake: %s", strerror(-rc));
		rc = rdma_qp_connect(e.qp, &e.peer.qp);
		if (!rc)
			rc = smcr_confirm_link_server(e.qp, &me);
		if (rc)
			die("link: %s", strerror(-rc));
		smcr_conn_init(&e.conn, &link_ops, &e, e.sndbuf, SNDBUF_SIZE, e.rmb, RMB_SIZE,
			       e.peer.rmb_size, own_token, e.peer.token);
		server_stream(&e, total);
	} else if (argc == 6 && !strcmp(argv[1], "client")) {
		uint64_t total = parse_bytes(argv[5]);

		fd = tcp_client(argv[2], atoi(argv[3]));
		end_open(&e, argv[4], fd);
		local_link(&e, own_token, &me);
		rc = smcr_handshake_client(fd, &me, &e.peer, e.qp);
		if (!rc)
			rc = smcr_confirm_link_client(e.qp, &me);
		if (rc)
			die("link: %s", strerror(-rc));
		smcr_conn_init(&e.conn, &link_ops, &e, e.sndbuf, SNDBUF_SIZE, e.rmb, RMB_SIZE,
			       e.peer.rmb_size, own_token, e.peer.token);
		client_stream(&e, total);
	} else {
		fprintf(stderr, "usage: smcr_stream server PORT DEVICE BYTES\n"
				"       smcr_stream client ADDR PORT DEVICE BYTES\n");
		return 2;
	}
	end_close(&e);
	close(fd);
	return 0;
}
