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
#include <poll.h>
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

/* A link: a device's queue pair, our buffers registered with that device, the peer's RMB key on it. */
struct link {
	int num;                      /* 1, 2: as LLC numbers it */
	struct rdma_dev *dev;
	struct rdma_qp *qp;
	struct rdma_mr rmb_mr, snd_mr;
	uint32_t peer_rkey;
	uint64_t peer_rmb_addr;
	bool dead;
};

/* One end: its links, its RMB (the peer writes into it), its send buffer and the data path. */
struct end {
	struct link links[2];
	int nlinks, active;
	uint8_t *rmb, *sndbuf;
	struct smcr_link_end peer;    /* what the other end's CLC said */
	struct smcr_conn conn;        /* the data path (wire/smcr_conn.h) */
	unsigned cdcs;                /* CDCs of the peer taken */
	unsigned sent;                /* our messages delivered */
	unsigned failovers;
};

/* The connection's positions, for a failure's message. */
static void show_state(const struct end *e)
{
	const struct smcr_conn *c = &e->conn;

	fprintf(stderr, "smcr_stream %s: tx prep %llu sent %llu fin %llu peer_cons %llu, rx cons %llu told %llu "
		"peer_prod %llu, cdc_due %d, seq %u, delivered %u, peer's taken %u, link %d active, dead %d/%d\n",
		role,
		(unsigned long long)c->tx_prep, (unsigned long long)c->tx_sent, (unsigned long long)c->tx_fin,
		(unsigned long long)c->peer_cons, (unsigned long long)c->rx_cons,
		(unsigned long long)c->rx_told, (unsigned long long)c->peer_prod, c->cdc_due, c->seq, e->sent,
		e->cdcs, e->active + 1, e->links[0].dead, e->links[1].dead);
}

static void link_open(struct end *e, struct link *l, const char *dev, const uint8_t gid[16])
{
	struct rdma_qp_size size = { .send_wr = 16, .recv_slots = 48, .msg_size = 128 };
	int rc;

	l->num = (int)(l - e->links) + 1;
	rc = rdma_dev_open(dev, 1, gid, &l->dev);
	if (rc)
		die("device %s: %s%s%s", dev, strerror(-rc), rc == -ENOSYS ? ": " : "",
		    rc == -ENOSYS ? rdma_lib_error() : "");
	rc = rdma_qp_create(l->dev, &size, &l->qp);
	if (rc)
		die("queue pair on %s: %s", dev, strerror(-rc));
	rc = rdma_mr_reg(l->dev, e->rmb, RMB_SIZE, true, &l->rmb_mr);
	if (!rc)
		rc = rdma_mr_reg(l->dev, e->sndbuf, SNDBUF_SIZE, false, &l->snd_mr);
	if (rc)
		die("memory registration on %s: %s", dev, strerror(-rc));
	e->nlinks++;
}

static void end_open(struct end *e, const char *dev, int fd, const char *dev2, const char *addr2)
{
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);
	uint8_t gid[16];

	e->rmb = aligned_alloc(4096, RMB_SIZE);
	e->sndbuf = aligned_alloc(4096, SNDBUF_SIZE);
	if (!e->rmb || !e->sndbuf)
		die("out of memory");
	memset(e->rmb, 0, RMB_SIZE);
	if (getsockname(fd, (struct sockaddr *)&sin, &sl) || sin.sin_family != AF_INET)
		die("getsockname: not an IPv4 connection");
	smcr_gid_of(sin.sin_addr, gid);
	link_open(e, &e->links[0], dev, gid);
	if (dev2) {
		struct in_addr a;

		if (inet_pton(AF_INET, addr2, &a) != 1)
			die("%s: not an IPv4 address", addr2);
		smcr_gid_of(a, gid);
		link_open(e, &e->links[1], dev2, gid);
	}
}

static void end_close(struct end *e)
{
	for (int i = 0; i < e->nlinks; i++) {
		struct link *l = &e->links[i];

		rdma_mr_dereg(&l->rmb_mr);
		rdma_mr_dereg(&l->snd_mr);
		rdma_qp_destroy(l->qp);
		rdma_dev_close(l->dev);
	}
	free(e->rmb);
	free(e->sndbuf);
}

static void local_link(const struct end *e, const struct link *l, uint32_t token, struct smcr_link_end *me)
{
	memset(me, 0, sizeof(*me));
	rdma_qp_local(l->qp, &me->qp);
	me->rkey = l->rmb_mr.rkey;
	me->rmb_addr = (uintptr_t)e->rmb;
	me->rmb_size = RMB_SIZE;
	me->token = token;
}

/* The connection's link operations over a link's queue pair. */
static int link_write(void *link, uint32_t off, uint32_t len, uint32_t rmb_off)
{
	struct link *l = link;

	if (l->dead)
		return -ENOLINK;
	return rdma_post_write(l->qp, &l->snd_mr, off, len, l->peer_rmb_addr + rmb_off, l->peer_rkey, 0,
			       false);
}

static int link_send(void *link, const uint8_t *msg, size_t len, uint64_t id)
{
	struct link *l = link;

	return l->dead ? -ENOLINK : rdma_post_msg(l->qp, msg, len, id);
}

static const struct smcr_link_ops link_ops = { .write = link_write, .send = link_send };

/*
 * The active link failed (why: a completion's status, the port, or the
 * peer's DELETE LINK with peer_deleted): the connection goes on over the
 * other one, or ends.  The end that saw it fail tells the other with LLC
 * DELETE LINK over the link left, as the peer's own queue pair may not
 * notice for long.
 */
static void failover(struct end *e, const char *why, bool peer_deleted)
{
	struct link *from = &e->links[e->active], *to;

	from->dead = true;
	if (e->nlinks < 2 || e->links[!e->active].dead)
		die("link %d failed (%s) and no link is left", from->num, why);
	e->active = !e->active;
	to = &e->links[e->active];
	e->failovers++;
	fprintf(stderr, "smcr_stream %s: link %d failed (%s), on link %d now\n", role, from->num, why, to->num);
	if (smcr_delete_link_send(to->qp, (uint8_t)from->num, peer_deleted))
		die("DELETE LINK over link %d failed", to->num);
	if (smcr_conn_switch(&e->conn, to))
		die("failover: %s", strerror(-smcr_conn_error(&e->conn)));
}

/* An LLC message of the peer in the data phase: a DELETE LINK of our active link fails over. */
static void llc_in(struct end *e, const struct rdma_event *ev)
{
	uint8_t num;
	bool resp;
	int rc = smcr_delete_link_of(ev->msg, ev->len, &num, &resp);

	if (rc < 0)
		die("a malformed LLC message (type 0x%02x)", ev->msg[0]);
	if (rc && !resp && num == e->links[e->active].num)
		failover(e, "the peer deleted it", true);
	else if (rc && !resp)
		e->links[num == 1 ? 0 : 1].dead = true;
}

/* A device event of link l: the port went down or the device broke, so the link fails. */
static void dev_event(struct end *e, struct link *l)
{
	enum rdma_dev_event ev = rdma_dev_event(l->dev);

	if (ev != RDMA_DEV_PORT_DOWN && ev != RDMA_DEV_FATAL)
		return;
	if (l == &e->links[e->active])
		failover(e, ev == RDMA_DEV_FATAL ? "device failed" : "port down", false);
	else
		l->dead = true;
}

/* Sleeps until a live link has a completion or a device event, or ms passed. */
static void wait_links(struct end *e, int ms)
{
	struct pollfd pfd[4];
	struct link *l[4];
	int n = 0;

	for (int i = 0; i < e->nlinks; i++) {
		if (e->links[i].dead)
			continue;
		if (rdma_qp_arm(e->links[i].qp, true))
			return;         /* something completed meanwhile */
		l[n] = &e->links[i];
		pfd[n++] = (struct pollfd){ .fd = rdma_qp_fd(e->links[i].qp), .events = POLLIN };
		l[n] = &e->links[i];
		pfd[n++] = (struct pollfd){ .fd = rdma_dev_event_fd(e->links[i].dev), .events = POLLIN };
	}
	if (poll(pfd, (nfds_t)n, ms) <= 0)
		return;
	for (int i = 0; i < n; i++) {
		if (!(pfd[i].revents & POLLIN))
			continue;
		if (i % 2 == 0)
			rdma_qp_woken(l[i]->qp);
		else
			dev_event(e, l[i]);
	}
}

/*
 * Completions of every link into the connection; a failure of the active
 * link fails over.  With ms, sleeps until a CDC came, one of ours was
 * delivered, a failover happened or ms passed; the count of those.
 */
static int pump(struct end *e, int ms)
{
	double deadline = now_s() + ms / 1000.0;
	int got = 0;

	for (;;) {
		int events = 0, left;

		for (int k = 0; k < e->nlinks; k++) {
			struct link *l = &e->links[k];
			struct rdma_event ev[16];
			int n = rdma_qp_poll(l->qp, ev, 16), rc = 0;

			/* a failed link's queue still holds what arrived before it failed */
			if (n < 0)
				die("polling completions of link %d: %s", l->num, strerror(-n));
			events += n;
			for (int i = 0; i < n && rc >= 0; i++) {
				if (ev[i].kind == RDMA_EV_ERROR) {
					if (l == &e->links[e->active]) {
						char why[32];

						snprintf(why, sizeof(why), "status %d", ev[i].status);
						failover(e, why, false);
						got++;
					} else {
						l->dead = true;
					}
				} else if (ev[i].kind == RDMA_EV_SENT) {
					rc = smcr_conn_sent(&e->conn, ev[i].wr_id);
					e->sent++;
					got++;  /* the send buffer may have room now */
				} else if (ev[i].kind == RDMA_EV_MSG && ev[i].msg[0] == SMCR_CDC_TYPE) {
					rc = smcr_conn_rx(&e->conn, ev[i].msg, ev[i].len);
					got++;
					e->cdcs++;
				} else if (ev[i].kind == RDMA_EV_MSG) {
					llc_in(e, &ev[i]);
					got++;
				}
			}
			if (rc < 0)
				die("connection: %s", strerror(-rc));
		}
		left = (int)((deadline - now_s()) * 1000);
		if (got || !ms || left <= 0)
			return got;
		if (!events)
			wait_links(e, left);
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
			if (!pump(e, 20000)) {
				show_state(e);
				die("no room for 20 s (sent %llu)",
				    (unsigned long long)sent);
			}
			continue;
		}
		if (n < 0)
			die("send: %s", strerror((int)-n));
		if (sent < total / 4 && sent + (uint64_t)n >= total / 4) {
			printf("smcr_stream: a quarter sent\n");
			fflush(stdout);
		}
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
	printf("smcr_stream: OK client sent %llu bytes by RDMA WRITE in %.2f s (%.1f MB/s), %u CDCs, "
	       "%u failovers\n", (unsigned long long)sent, dt, (double)sent / dt / 1e6, e->conn.seq,
	       e->failovers);
}

static void server_stream(struct end *e, uint64_t total)
{
	static uint8_t buf[CHUNK];
	uint64_t got = 0;
	unsigned sent;

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
		if (!pump(e, 20000)) {
			show_state(e);
			die("no CDC from the client for 20 s (got %llu)", (unsigned long long)got);
		}
	}
	if (got != total)
		die("the client closed after %llu bytes of %llu", (unsigned long long)got,
		    (unsigned long long)total);
	sent = e->sent;
	if (smcr_conn_set_state(&e->conn, CDC_CF_CLOSED))
		die("close: %s", strerror(-smcr_conn_error(&e->conn)));
	/* the close must reach the client before the queue pairs go */
	for (int i = 0; i < 100 && (e->sent == sent || e->conn.cdc_due); i++) {
		pump(e, 0);
		wait_links(e, 100);
	}
	printf("smcr_stream: OK server received %llu bytes, every byte checked, %u CDCs, %u failovers\n",
	       (unsigned long long)got, e->cdcs, e->failovers);
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

/* The second link, offered by the server over the first with LLC ADD LINK, then confirmed over itself. */
static void second_link(struct end *e, bool server, uint32_t token)
{
	struct smcr_link_end me2, peer2;
	struct link *l1 = &e->links[0], *l2 = &e->links[1];
	int rc;

	local_link(e, l2, token, &me2);
	if (server) {
		if (!e->peer.has_gid2)
			die("the client's CONFIRM names no second GID");
		rc = smcr_add_link_server(l1->qp, l2->qp, &me2, l1->rmb_mr.rkey, e->peer.rkey, e->peer.gid2,
					  &peer2);
		if (!rc)
			rc = smcr_confirm_link_server(l2->qp, &me2, 2);
	} else {
		rc = smcr_add_link_client(l1->qp, l2->qp, &me2, l1->rmb_mr.rkey, e->peer.rkey, &peer2);
		if (!rc)
			rc = smcr_confirm_link_client(l2->qp, &me2, 2);
	}
	if (rc)
		die("second link: %s", strerror(-rc));
	l2->peer_rkey = peer2.rkey;
	l2->peer_rmb_addr = peer2.rmb_addr;
	e->active = 1;          /* data over the second link: the one the test takes down */
}

/* Between the server's ACCEPT and our CONFIRM: the first link's queue pair connects. */
static int accepted(void *arg, const struct smcr_link_end *peer, struct smcr_link_end *me)
{
	struct end *e = arg;

	(void)me;
	return rdma_qp_connect(e->links[0].qp, &peer->qp);
}

int main(int argc, char **argv)
{
	static struct end e;
	struct smcr_link_end me;
	uint32_t own_token = 0x5e00u + (uint32_t)getpid();
	bool server = argc > 1 && !strcmp(argv[1], "server");
	const char *dev, *dev2 = NULL, *addr2 = NULL;
	uint64_t total;
	int fd, rc, a = server ? 2 : 3;

	role = argc > 1 ? argv[1] : "?";
	if ((argc != a + 3 && argc != a + 5) || (!server && strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: smcr_stream server PORT DEVICE BYTES [DEVICE2 ADDR2]\n"
				"       smcr_stream client ADDR PORT DEVICE BYTES [DEVICE2 ADDR2]\n");
		return 2;
	}
	dev = argv[a + 1];
	total = parse_bytes(argv[a + 2]);
	if (argc == a + 5) {
		dev2 = argv[a + 3];
		addr2 = argv[a + 4];
	}
	fd = server ? tcp_server(atoi(argv[2])) : tcp_client(argv[2], atoi(argv[3]));
	end_open(&e, dev, fd, dev2, addr2);
	local_link(&e, &e.links[0], own_token, &me);
	me.first_contact = true;
	if (dev2) {
		me.has_gid2 = true;
		memcpy(me.gid2, rdma_dev_port(e.links[1].dev)->gid, 16);
	}
	if (server) {
		rc = smcr_handshake_server(fd, &me, &e.peer);
		if (!rc)
			rc = rdma_qp_connect(e.links[0].qp, &e.peer.qp);
		if (!rc)
			rc = smcr_confirm_link_server(e.links[0].qp, &me, 1);
	} else {
		rc = smcr_handshake_client(fd, &me, &e.peer, accepted, &e);
		if (!rc)
			rc = smcr_confirm_link_client(e.links[0].qp, &me, 1);
	}
	if (rc)
		die("first link: %s", strerror(-rc));
	e.links[0].peer_rkey = e.peer.rkey;
	e.links[0].peer_rmb_addr = e.peer.rmb_addr;
	if (dev2)
		second_link(&e, server, own_token);
	smcr_conn_init(&e.conn, &link_ops, &e.links[e.active], e.sndbuf, SNDBUF_SIZE, e.rmb, RMB_SIZE,
		       e.peer.rmb_size, own_token, e.peer.token);
	if (server)
		server_stream(&e, total);
	else
		client_stream(&e, total);
	end_close(&e);
	close(fd);
	return 0;
}
