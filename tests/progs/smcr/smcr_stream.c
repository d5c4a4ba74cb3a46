/*
 * smcr_stream: soft SMC-R's building blocks between two hosts
 * (tests/vm/guest/s5.sh).  A TCP connection carries the SMC-R CLC
 * Proposal, Accept and Confirm (wire/clc.h) with each end's queue pair,
 * RMB and alert token; the server confirms the new link with LLC CONFIRM
 * LINK over the queue pair (wire/smcr_llc.h); then the client RDMA-writes
 * BYTES of a pattern into the server's RMB, telling its producer cursor in
 * CDC messages (wire/smcr_cdc.h), the server checks every byte and returns
 * its consumer cursor, and both end with the CDC's close flags.
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
#include "smcr_cdc.h"
#include "smcr_handshake.h"

#define RMB_SIZE (256u * 1024)
#define CHUNK    (64u * 1024)

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
	uint16_t seq;                 /* CDCs sent */
	uint16_t peer_seq;            /* the last CDC taken */
	struct smcr_curs prod;        /* ours, into the peer's RMB */
	struct smcr_curs cons;        /* ours, of our RMB */
	struct smcr_curs peer_prod, peer_cons;
	uint8_t peer_cflags, peer_pflags;
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
	e->sndbuf = aligned_alloc(4096, RMB_SIZE);
	if (!e->rmb || !e->sndbuf)
		die("out of memory");
	memset(e->rmb, 0, RMB_SIZE);
	rc = rdma_mr_reg(e->dev, e->rmb, RMB_SIZE, true, &e->rmb_mr);
	if (!rc)
		rc = rdma_mr_reg(e->dev, e->sndbuf, RMB_SIZE, false, &e->snd_mr);
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

static void send_cdc(struct end *e, uint8_t pflags, uint8_t cflags)
{
	struct smcr_cdc m = {
		.seqno = ++e->seq,
		.token = e->peer.token,
		.prod = e->prod,
		.cons = e->cons,
		.prod_flags = pflags,
		.conn_state_flags = cflags,
	};
	uint8_t buf[SMCR_WR_BUF_SIZE];
	int rc;

	smcr_cdc_encode(&m, buf, sizeof(buf));
	for (;;) {
		rc = rdma_post_msg(e->qp, buf, SMCR_CDC_LEN, e->seq);
		if (rc != -ENOBUFS)
			break;
		/* the send queue is full: completions give slots back */
		struct rdma_event ev[8];
		int n = rdma_qp_poll(e->qp, ev, 8);

		for (int i = 0; i < n; i++)
			if (ev[i].kind == RDMA_EV_ERROR)
				die("work request failed: status %d", ev[i].status);
		if (!n && smcr_qp_wait(e->qp, 5000) <= 0)
			die("send queue stuck");
	}
	if (rc)
		die("CDC send: %s", strerror(-rc));
}

/* A CDC of the peer, checked as a receiver must before trusting it. */
static void take_cdc(struct end *e, const struct rdma_event *ev, uint32_t own_token)
{
	struct smcr_cdc m;

	if (smcr_cdc_decode(ev->msg, ev->len, &m))
		die("a message that is no CDC (type 0x%02x, %u bytes)", ev->msg[0], ev->len);
	if (m.token != own_token)
		die("CDC for token %u, ours is %u", m.token, own_token);
	if (smcr_cdc_check(&m, RMB_SIZE, e->peer.rmb_size))
		die("CDC cursors out of range");
	if (e->peer_seq && smcr_seq_before(m.seqno, e->peer_seq))
		return;
	e->peer_seq = m.seqno;
	if (smcr_curs_accept(e->peer_prod, m.prod))
		e->peer_prod = m.prod;
	if (smcr_curs_accept(e->peer_cons, m.cons))
		e->peer_cons = m.cons;
	e->peer_pflags = m.prod_flags;
	e->peer_cflags |= m.conn_state_flags;
}

/*
 * Completions: CDCs of the peer taken, failures fatal.  With ms, sleeps
 * until a CDC came or ms passed.  The count of CDCs taken.
 */
static int pump(struct end *e, uint32_t own_token, int ms)
{
	double deadline = now_s() + ms / 1000.0;
	int got = 0;

	for (;;) {
		struct rdma_event ev[16];
		int n = rdma_qp_poll(e->qp, ev, 16), left;

		if (n < 0)
			die("polling completions: %s", strerror(-n));
		for (int i = 0; i < n; i++) {
			if (ev[i].kind == RDMA_EV_ERROR)
				die("work request failed: status %d", ev[i].status);
			if (ev[i].kind == RDMA_EV_MSG) {
				take_cdc(e, &ev[i], own_token);
				got++;
			}
		}
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

/* Copies len bytes of the pattern from stream position pos into the send buffer at ring offset off. */
static void fill(uint8_t *ring, uint32_t off, uint32_t len, uint64_t pos)
{
	for (uint32_t i = 0; i < len; i++)
		ring[(off + i) % RMB_SIZE] = pattern(pos + i);
}

static void client_stream(struct end *e, uint64_t total, uint32_t own_token)
{
	uint64_t sent = 0;
	double t0 = now_s(), dt;

	while (sent < total) {
		int space = smcr_peer_rmbe_space(e->peer.rmb_size, e->prod, e->peer_cons);
		uint32_t n, off = e->prod.count, first;
		int rc;

		if (space < 0)
			die("the peer's consumer cursor is ahead of what was sent");
		if (space == 0) {
			if (!pump(e, own_token, 5000))
				die("no consumer cursor from the server for 5 s (sent %llu)",
				    (unsigned long long)sent);
			continue;
		}
		n = (uint32_t)space < CHUNK ? (uint32_t)space : CHUNK;
		if (total - sent < n)
			n = (uint32_t)(total - sent);
		fill(e->sndbuf, off, n, sent);
		first = RMB_SIZE - off < n ? RMB_SIZE - off : n;
		rc = rdma_post_write(e->qp, &e->snd_mr, off, first, e->peer.rmb_addr + off,
				     e->peer.rkey, 0, false);
		if (!rc && first < n)
			rc = rdma_post_write(e->qp, &e->snd_mr, 0, n - first, e->peer.rmb_addr,
					     e->peer.rkey, 0, false);
		while (rc == -ENOBUFS) {
			pump(e, own_token, 1000);
			rc = rdma_post_write(e->qp, &e->snd_mr, off, first, e->peer.rmb_addr + off,
					     e->peer.rkey, 0, false);
			if (!rc && first < n)
				rc = rdma_post_write(e->qp, &e->snd_mr, 0, n - first, e->peer.rmb_addr,
						     e->peer.rkey, 0, false);
		}
		if (rc)
			die("RDMA WRITE: %s", strerror(-rc));
		smcr_curs_add(&e->prod, e->peer.rmb_size, n);
		sent += n;
		send_cdc(e, space == (int)n ? CDC_PF_WRITE_BLOCKED : 0, 0);
		pump(e, own_token, 0);
	}
	send_cdc(e, 0, CDC_CF_DONE_WRITING | CDC_CF_CLOSED);
	while (!(e->peer_cflags & CDC_CF_CLOSED))
		if (!pump(e, own_token, 10000))
			die("no close from the server for 10 s");
	dt = now_s() - t0;
	if (smcr_peer_rmbe_space(e->peer.rmb_size, e->prod, e->peer_cons) != (int)e->peer.rmb_size)
		die("the server closed without consuming everything");
	printf("smcr_stream: OK client sent %llu bytes by RDMA WRITE in %.2f s (%.1f MB/s), %u CDCs\n",
	       (unsigned long long)sent, dt, (double)sent / dt / 1e6, e->seq);
}

static void server_stream(struct end *e, uint64_t total, uint32_t own_token)
{
	uint64_t got = 0;
	uint32_t unconfirmed = 0;

	for (;;) {
		int avail = smcr_curs_diff(RMB_SIZE, e->cons, e->peer_prod);

		if (avail < 0 || avail > (int)RMB_SIZE)
			die("bad producer cursor");
		for (int i = 0; i < avail; i++) {
			uint8_t b = e->rmb[(e->cons.count + (uint32_t)i) % RMB_SIZE];

			if (b != pattern(got + (uint64_t)i))
				die("byte %llu is 0x%02x, sent 0x%02x", (unsigned long long)(got + (uint64_t)i),
				    b, pattern(got + (uint64_t)i));
		}
		if (avail) {
			smcr_curs_add(&e->cons, RMB_SIZE, (uint32_t)avail);
			got += (uint64_t)avail;
			unconfirmed += (uint32_t)avail;
		}
		/* RFC 7609's rule: tell the consumer cursor once a tenth of the buffer is free again */
		if (unconfirmed > RMB_SIZE / 10 || (unconfirmed && (e->peer_pflags & CDC_PF_WRITE_BLOCKED))) {
			send_cdc(e, 0, 0);
			unconfirmed = 0;
		}
		if ((e->peer_cflags & CDC_CF_CLOSED) && !smcr_curs_diff(RMB_SIZE, e->cons, e->peer_prod))
			break;
		if (!avail && !pump(e, own_token, 10000))
			die("no CDC from the client for 10 s (got %llu)", (unsigned long long)got);
	}
	if (got != total)
		die("the client closed after %llu bytes of %llu", (unsigned long long)got,
		    (unsigned long long)total);
	send_cdc(e, 0, CDC_CF_CLOSED);
	/* the close must reach the client before the queue pair goes */
	while (rdma_qp_poll(e->qp, (struct rdma_event[4]){ 0 }, 4) == 0 && smcr_qp_wait(e->qp, 2000) > 0)
		;
	printf("smcr_stream: OK server received %llu bytes, every byte checked, %u CDCs\n",
	       (unsigned long long)got, e->seq);
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
		server_stream(&e, total, own_token);
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
		client_stream(&e, total, own_token);
	} else {
		fprintf(stderr, "usage: smcr_stream server PORT DEVICE BYTES\n"
				"       smcr_stream client ADDR PORT DEVICE BYTES\n");
		return 2;
	}
	end_close(&e);
	close(fd);
	return 0;
}
