/*
 * The daemon-to-daemon questions of soft/service/peer_ask.c (doc/soft-roce.md
 * section 2): the message codec, and two daemons' states wired to each
 * other by a fake control port, with time passed in.
 */
#include "unit.h"
#include "treefx.h"
#include "soft/fabric/devices.h"
#include "soft/fabric/peer_msg.h"
#include "soft/registry/regidx.h"
#include "soft/runtime/teardown.h"
#include "soft/service/service.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>

#define QMAX 16

/* Datagrams on their way: sent by state[from], each with its source address. */
static struct sent {
	int from;
	int family;
	uint8_t src[16];
	uint16_t port;
	uint8_t msg[SOFT_PEER_MSG_LEN];
} q[QMAX];
static int nq, nsent;
static struct soft_state hosts[2];

static int fake_send(void *ctx, const uint8_t *msg, size_t len, int family, const uint8_t from[16],
		     const uint8_t to[16], uint16_t port, uint32_t ifindex)
{
	(void)to;
	(void)ifindex;
	nsent++;
	if (nq == QMAX || len != SOFT_PEER_MSG_LEN)
		return -ENOBUFS;
	q[nq].from = (int)(intptr_t)ctx;
	q[nq].family = family;
	memcpy(q[nq].src, from, 16);
	q[nq].port = port ? port : SOFT_PEER_PORT;
	memcpy(q[nq].msg, msg, len);
	nq++;
	return 0;
}

/* Deliver what is on its way (and what that sends) to the other host; drop: lose it. */
static void deliver(bool drop, int64_t now)
{
	for (int i = 0; i < nq; i++)
		if (!drop)
			soft_peer_input(&hosts[!q[i].from], q[i].msg, SOFT_PEER_MSG_LEN, q[i].family,
					q[i].src, q[i].port, now);
	nq = 0;
}

static char sysfs[64];

/* Both hosts see rxe0 on lo (ends on lo have an SMC-R device, others none). */
static void hosts_init(void)
{
	char err[256];

	snprintf(sysfs, sizeof(sysfs), "/tmp/smc-unit-peer.XXXXXX");
	CHECK(mkdtemp(sysfs) != NULL);
	{
		put(sysfs, "1: CA\n", "devices/virtual/infiniband/rxe0/node_type");
		put(sysfs, "4: ACTIVE\n", "devices/virtual/infiniband/rxe0/ports/1/state");
		put(sysfs, "lo\n", "devices/virtual/infiniband/rxe0/ports/1/gid_attrs/ndevs/0");
		put(sysfs, "", "class/infiniband/.keep");
		link_at(sysfs, "../../devices/virtual/infiniband/rxe0", "class/infiniband/rxe0");
	}
	for (int i = 0; i < 2; i++) {
		soft_state_init(&hosts[i]);
		hosts[i].sysfs = sysfs;
		CHECK_INT(soft_devs_init(&hosts[i], NULL, 0, err, sizeof(err)), 0);
		hosts[i].peer_send = fake_send;
		hosts[i].peer_ctx = (void *)(intptr_t)i;
	}
	nq = nsent = 0;
}

static void hosts_free(void)
{
	for (int i = 0; i < 2; i++)
		soft_state_free(&hosts[i]);
	rm_tree(sysfs);
}

/* Host h's end starts asking, on lo (an SMC-R device there). */
static int begin(int h, struct soft_sock *s, uint32_t verdict, int64_t now)
{
	return soft_peer_ask_begin(&hosts[h], NULL, s, verdict, "lo", now);
}

/* Host h's end of 10.99.0.1:40000 <-> 10.99.0.2:80 (host 0 the client). */
static struct soft_sock *end_on(int h)
{
	struct soft_state *st = &hosts[h];
	struct soft_sock *s = calloc(1, sizeof(*s));

	s->id.family = AF_INET;
	inet_pton(AF_INET, h ? "10.99.0.2" : "10.99.0.1", s->id.src);
	inet_pton(AF_INET, h ? "10.99.0.1" : "10.99.0.2", s->id.dst);
	s->id.sport = h ? 80 : 40000;
	s->id.dport = h ? 40000 : 80;
	s->id.netns = st->init_netns;
	s->id.inode = 1000 + (uint64_t)h;
	s->token = 1;
	s->role = (uint8_t)h;
	soft_sock_set_state(s, SMC_SOFT_STATE_ACTIVE);
	CHECK_INT(soft_idx_add(st, s), 0);
	CHECK_INT(soft_idx_tuple_add(st, s), 0);
	return s;
}

static void check_decided(const struct soft_sock *s, uint32_t reason, uint32_t diag)
{
	CHECK_INT(s->pair_status, SMC_SOFT_PAIR_DECLINED);
	CHECK_INT(s->fallback_reason, reason);
	CHECK_INT(s->peer_diagnosis, diag);
	CHECK(!s->ask.pprev);
}

TEST(soft_peer_msg_codec)
{
	struct soft_peer_msg m = { .type = SOFT_PEER_ANSWER, .role = 1, .have = true, .seq = 0x01020304,
				   .verdict = 0x03030000, .family = AF_INET, .sport = 80, .dport = 40000,
				   .nonce = 0x1112131415161718ull, .echo = 0x2122232425262728ull };
	struct soft_peer_msg d;
	uint8_t b[SOFT_PEER_MSG_LEN], c[SOFT_PEER_MSG_LEN];

	inet_pton(AF_INET, "10.99.0.2", m.src);
	inet_pton(AF_INET, "10.99.0.1", m.dst);
	CHECK_INT(soft_peer_msg_encode(&m, b), 0);
	CHECK(!memcmp(b, "SMCQ\x02\x02\x01\x01\x01\x02\x03\x04\x03\x03\x00\x00\x04\x00\x00\x50\x9c\x40",
		      22));
	CHECK(!memcmp(b + 56, "\x11\x12\x13\x14\x15\x16\x17\x18\x21\x22\x23\x24\x25\x26\x27\x28"
			      "\0\0\0\0\0\0\0\0", 24));
	CHECK_INT(soft_peer_msg_decode(b, sizeof(b), &d), 0);
	CHECK(!memcmp(&d, &m, sizeof(m)) || (d.seq == m.seq && d.verdict == m.verdict &&
					     !memcmp(d.src, m.src, 16) && d.dport == m.dport));
	CHECK_INT(soft_peer_msg_decode(b, sizeof(b) - 1, &d), -EBADMSG);
	/* every field out of its range, one at a time */
	static const struct { int off; uint8_t v; } bad[] = {
		{ 0, 'X' }, { 4, 1 }, { 5, 5 }, { 5, 0 }, { 6, 2 }, { 7, 2 }, { 16, 5 }, { 17, 1 },
		{ 22, 1 }, { 30, 1 }, { 46, 1 }, { 79, 1 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(c, b, sizeof(c));
		c[bad[i].off] = bad[i].v;
		if (soft_peer_msg_decode(c, sizeof(c), &d) != -EBADMSG)
			unit_fail(__FILE__, __LINE__, "byte %d = %u decoded", bad[i].off, bad[i].v);
	}
	memcpy(c, b, sizeof(c));
	c[5] = SOFT_PEER_ASK;                  /* have is an answer's */
	CHECK_INT(soft_peer_msg_decode(c, sizeof(c), &d), -EBADMSG);
	memcpy(c, b, sizeof(c));
	c[18] = c[19] = 0;                     /* port 0 */
	CHECK_INT(soft_peer_msg_decode(c, sizeof(c), &d), -EBADMSG);
	memcpy(c, b, sizeof(c));
	memset(c + 24, 0, 4);                  /* the unspecified address */
	CHECK_INT(soft_peer_msg_decode(c, sizeof(c), &d), -EBADMSG);
	/* each type with its nonces and fence, and only those */
	m.have = false;
	CHECK_INT(soft_peer_msg_encode(&m, b), -EINVAL);   /* "not here" names no nonce of its own */
	m.nonce = 0;
	CHECK_INT(soft_peer_msg_encode(&m, b), 0);
	m.echo = 0;
	CHECK_INT(soft_peer_msg_encode(&m, b), -EINVAL);   /* an answer echoes its question's */
	m.type = SOFT_PEER_ASK;
	m.nonce = 7;
	CHECK_INT(soft_peer_msg_encode(&m, b), 0);
	m.fence = 1;
	CHECK_INT(soft_peer_msg_encode(&m, b), -EINVAL);
	m.type = SOFT_PEER_FENCE;
	CHECK_INT(soft_peer_msg_encode(&m, b), -EINVAL);   /* both nonces */
	m.echo = 9;
	CHECK_INT(soft_peer_msg_encode(&m, b), -EINVAL);   /* no verdict in a fence */
	m.verdict = 0;
	m.fence = 0x0102030405060708ull;
	CHECK_INT(soft_peer_msg_encode(&m, b), 0);
	CHECK_INT(soft_peer_msg_decode(b, sizeof(b), &d), 0);
	CHECK(d.type == SOFT_PEER_FENCE && d.nonce == 7 && d.echo == 9 && d.fence == m.fence);
	m.type = SOFT_PEER_FENCE_SEEN;
	CHECK_INT(soft_peer_msg_encode(&m, b), 0);
	m.type = SOFT_PEER_ANSWER;
	m.have = true;
	m.fence = 0;
	m.role = 2;
	CHECK_INT(soft_peer_msg_encode(&m, b), -EINVAL);
	/* IPv6 keeps all 16 bytes */
	m.role = 0;
	m.family = AF_INET6;
	inet_pton(AF_INET6, "fd00::2", m.src);
	inet_pton(AF_INET6, "fe80::1", m.dst);
	CHECK_INT(soft_peer_msg_encode(&m, b), 0);
	CHECK_INT(soft_peer_msg_decode(b, sizeof(b), &d), 0);
	CHECK(d.family == AF_INET6 && !memcmp(d.dst, m.dst, 16));
}

TEST(soft_peer_both_ends_decline_as_the_kernel)
{
	struct soft_sock *a, *b;

	hosts_init();
	a = end_on(0);
	CHECK_INT(begin(0, a, SOFT_DECL_NOSMCDEV, 1000), 0);
	CHECK_INT(a->pair_status, SOFT_PAIR_ASKING);
	/* B's end has not come: "not here", and the question is kept */
	deliver(false, 1000);
	deliver(false, 1000);
	CHECK_INT(a->pair_status, SOFT_PAIR_ASKING);
	CHECK(a->ask.daemon_there);
	/* B's end comes: the kept question decides it, its own tells A */
	b = end_on(1);
	CHECK_INT(begin(1, b, SOFT_DECL_NOSMCDEV, 1100), 0);
	check_decided(b, SOFT_DECL_PEERDECL, SOFT_DECL_NOSMCDEV);
	deliver(false, 1100);
	check_decided(a, SOFT_DECL_NOSMCDEV, 0);
	deliver(false, 1100);              /* A's answer: B decided already */
	check_decided(b, SOFT_DECL_PEERDECL, SOFT_DECL_NOSMCDEV);
	CHECK_INT(soft_peer_tick(&hosts[0], 9000), -1);
	CHECK_INT(soft_peer_tick(&hosts[1], 9000), -1);
	soft_reg_drop(&hosts[0], a);
	soft_reg_drop(&hosts[1], b);
	hosts_free();
}

TEST(soft_peer_the_server_declines_when_the_client_would_go_on)
{
	struct soft_peer_msg m = { .type = SOFT_PEER_ASK, .role = 0, .verdict = 0, .family = AF_INET,
				   .sport = 40000, .dport = 80, .seq = 5, .nonce = 0xa5 };
	uint8_t buf[SOFT_PEER_MSG_LEN];
	struct soft_sock *b;

	hosts_init();
	b = end_on(1);
	CHECK_INT(begin(1, b, SOFT_DECL_NOSMCDEV, 0), 0);
	nq = 0;
	inet_pton(AF_INET, "10.99.0.1", m.src);
	inet_pton(AF_INET, "10.99.0.2", m.dst);
	CHECK_INT(soft_peer_msg_encode(&m, buf), 0);
	soft_peer_input(&hosts[1], buf, sizeof(buf), AF_INET, m.src, 7609, 10);
	check_decided(b, SOFT_DECL_NOSMCDEV, 0);
	/* the answer: the server's end is here, with its code */
	CHECK_INT(nq, 1);
	CHECK_INT(soft_peer_msg_decode(q[0].msg, SOFT_PEER_MSG_LEN, &m), 0);
	CHECK(m.type == SOFT_PEER_ANSWER && m.have && m.role == 1 && m.seq == 5);
	CHECK(m.echo == 0xa5 && m.nonce == b->ask.nonce && m.nonce);
	CHECK_INT(m.verdict, SOFT_DECL_NOSMCDEV);
	soft_reg_drop(&hosts[1], b);
	hosts_free();
}

TEST(soft_peer_no_daemon_no_end)
{
	struct soft_sock *a;
	int64_t due;

	/* no daemon: three questions, then PEERNOSMC at 2 s */
	hosts_init();
	a = end_on(0);
	CHECK_INT(begin(0, a, SOFT_DECL_NOSMCDEV, 0), 0);
	for (int64_t t = 0; t < 1999; t = due) {
		deliver(true, t);
		due = soft_peer_tick(&hosts[0], t);
		CHECK(due > t);
	}
	CHECK_INT(nsent, 3);
	CHECK_INT(a->pair_status, SOFT_PAIR_ASKING);
	soft_peer_tick(&hosts[0], 2000);
	check_decided(a, SOFT_DECL_PEERNOSMC, 0);
	soft_reg_drop(&hosts[0], a);
	hosts_free();

	/* a daemon that says "not here": no more questions, PEERNOSMC at 2.5 s */
	hosts_init();
	a = end_on(0);
	CHECK_INT(begin(0, a, SOFT_DECL_NOSMCDEV, 0), 0);
	deliver(false, 0);
	deliver(false, 0);
	nsent = 0;
	CHECK_INT(soft_peer_tick(&hosts[0], 2100), 2500);
	CHECK_INT(a->pair_status, SOFT_PAIR_ASKING);
	CHECK_INT(nsent, 0);
	soft_peer_tick(&hosts[0], 2500);
	check_decided(a, SOFT_DECL_PEERNOSMC, 0);
	soft_reg_drop(&hosts[0], a);
	hosts_free();
}

TEST(soft_peer_questions_from_elsewhere_are_ignored)
{
	struct soft_peer_msg m = { .type = SOFT_PEER_ASK, .role = 0, .verdict = 0x03030000,
				   .family = AF_INET, .sport = 40000, .dport = 80, .nonce = 0xa5 };
	uint8_t buf[SOFT_PEER_MSG_LEN], other[16] = { 10, 99, 0, 3 };
	struct soft_sock *b;

	hosts_init();
	inet_pton(AF_INET, "10.99.0.1", m.src);
	inet_pton(AF_INET, "10.99.0.2", m.dst);
	CHECK_INT(soft_peer_msg_encode(&m, buf), 0);
	/* not from the address the question names: no answer, nothing kept */
	soft_peer_input(&hosts[1], buf, sizeof(buf), AF_INET, other, 7609, 0);
	CHECK_INT(nq, 0);
	b = end_on(1);
	CHECK_INT(begin(1, b, SOFT_DECL_NOSMCDEV, 0), 0);
	CHECK_INT(b->pair_status, SOFT_PAIR_ASKING);
	soft_peer_input(&hosts[1], buf, sizeof(buf), AF_INET, other, 7609, 1);
	CHECK_INT(b->pair_status, SOFT_PAIR_ASKING);
	/* a peer claiming the same role: not the other end of this connection */
	m.role = 1;
	CHECK_INT(soft_peer_msg_encode(&m, buf), 0);
	soft_peer_input(&hosts[1], buf, sizeof(buf), AF_INET, m.src, 7609, 2);
	check_decided(b, SOFT_DECL_PEERNOSMC, 0);
	/* closed while asking: a fallback counted, out of the list */
	soft_reg_drop(&hosts[1], b);
	b = end_on(1);
	CHECK_INT(begin(1, b, SOFT_DECL_NOSMCDEV, 10), 0);
	soft_reg_drop(&hosts[1], b);
	CHECK_INT(soft_peer_tick(&hosts[1], 20), -1);
	hosts_free();
}

TEST(soft_peer_no_device_no_question)
{
	struct soft_peer_msg m = { .type = SOFT_PEER_ASK, .role = 0, .verdict = 0x03030000,
				   .family = AF_INET, .sport = 40000, .dport = 80, .nonce = 0xa5 };
	uint8_t buf[SOFT_PEER_MSG_LEN];
	struct soft_sock *b;

	/* no SMC-R device on its interface: decided at once, nothing sent */
	hosts_init();
	b = end_on(1);
	CHECK_INT(soft_peer_ask_begin(&hosts[1], NULL, b, 0, "nosuch0", 0), 0);
	check_decided(b, SOFT_DECL_NOSMCDEV, 0);
	CHECK_INT(nsent, 0);
	/* a question that comes later hears its code */
	inet_pton(AF_INET, "10.99.0.1", m.src);
	inet_pton(AF_INET, "10.99.0.2", m.dst);
	CHECK_INT(soft_peer_msg_encode(&m, buf), 0);
	soft_peer_input(&hosts[1], buf, sizeof(buf), AF_INET, m.src, 7609, 1);
	CHECK_INT(nq, 1);
	CHECK_INT(soft_peer_msg_decode(q[0].msg, SOFT_PEER_MSG_LEN, &m), 0);
	CHECK(m.have && m.role == 1 && m.verdict == SOFT_DECL_NOSMCDEV);
	soft_reg_drop(&hosts[1], b);
	hosts_free();

	/* without a device, an earlier question from the peer still decides it, with an answer */
	hosts_init();
	memset(&m, 0, sizeof(m));
	m.type = SOFT_PEER_ASK;
	m.nonce = 0xa5;
	m.verdict = SOFT_DECL_NOSMCDEV;
	m.family = AF_INET;
	m.sport = 40000;
	m.dport = 80;
	inet_pton(AF_INET, "10.99.0.1", m.src);
	inet_pton(AF_INET, "10.99.0.2", m.dst);
	CHECK_INT(soft_peer_msg_encode(&m, buf), 0);
	soft_peer_input(&hosts[1], buf, sizeof(buf), AF_INET, m.src, 7609, 1);
	nq = nsent = 0;
	b = end_on(1);
	CHECK_INT(soft_peer_ask_begin(&hosts[1], NULL, b, 0, "nosuch0", 2), 0);
	check_decided(b, SOFT_DECL_PEERDECL, SOFT_DECL_NOSMCDEV);
	CHECK_INT(nsent, 1);
	soft_reg_drop(&hosts[1], b);
	hosts_free();
}

/* Both hosts' ends after their questions crossed: each knows the other's nonce. */
static void ends_known(struct soft_sock **a, struct soft_sock **b)
{
	hosts_init();
	*a = end_on(0);
	*b = end_on(1);
	CHECK_INT(begin(0, *a, SOFT_DECL_NOSMCDEV, 0), 0);
	CHECK_INT(begin(1, *b, SOFT_DECL_NOSMCDEV, 0), 0);
	deliver(false, 0);
	deliver(false, 0);
	deliver(false, 0);
	CHECK((*a)->ask.peer_nonce == (*b)->ask.nonce && (*b)->ask.peer_nonce == (*a)->ask.nonce);
	CHECK((*a)->ask.nonce && (*a)->ask.nonce != (*b)->ask.nonce);
}

TEST(soft_peer_fence_reaches_the_other_end)
{
	struct soft_sock *a, *b;

	ends_known(&a, &b);
	nsent = 0;
	CHECK_INT(soft_peer_fence_send(&hosts[0], a, 1234, 100), 0);
	CHECK_INT(soft_peer_fence_send(&hosts[0], a, 99, 100), -EINVAL);   /* one fence per end */
	CHECK(a->ask.pprev != NULL);
	deliver(false, 100);               /* FENCE */
	CHECK(b->ask.rx_fence_known && b->ask.rx_fence == 1234);
	deliver(false, 100);               /* FENCE_SEEN */
	CHECK(a->ask.tx_fence_seen && !a->ask.fence_failed);
	CHECK_INT(nsent, 2);
	CHECK_INT(soft_peer_tick(&hosts[0], 101), -1);
	CHECK(!a->ask.pprev);
	/* the other direction, with its own fence */
	CHECK_INT(soft_peer_fence_send(&hosts[1], b, 0, 200), 0);
	deliver(false, 200);
	deliver(false, 200);
	CHECK(a->ask.rx_fence_known && a->ask.rx_fence == 0 && b->ask.tx_fence_seen);
	soft_reg_drop(&hosts[0], a);
	soft_reg_drop(&hosts[1], b);
	hosts_free();
}

TEST(soft_peer_fence_lost_sent_again_then_failed)
{
	struct soft_sock *a, *b;
	int64_t due;

	ends_known(&a, &b);
	nsent = 0;
	CHECK_INT(soft_peer_fence_send(&hosts[0], a, 77, 1000), 0);
	for (int64_t t = 1000; t < 2999; t = due) {
		deliver(true, t);
		due = soft_peer_tick(&hosts[0], t);
		CHECK(due > t);
	}
	CHECK_INT(nsent, 3);
	CHECK(!a->ask.fence_failed);
	CHECK_INT(soft_peer_tick(&hosts[0], 3000), -1);
	CHECK(a->ask.fence_failed && !a->ask.tx_fence_seen && !a->ask.pprev);
	CHECK(!b->ask.rx_fence_known);
	/* one that gets through on a second try */
	soft_reg_drop(&hosts[0], a);
	soft_reg_drop(&hosts[1], b);
	hosts_free();
	ends_known(&a, &b);
	CHECK_INT(soft_peer_fence_send(&hosts[0], a, 78, 0), 0);
	deliver(true, 0);
	soft_peer_tick(&hosts[0], 250);
	deliver(false, 250);
	deliver(false, 250);
	CHECK(b->ask.rx_fence == 78 && a->ask.tx_fence_seen);
	soft_reg_drop(&hosts[0], a);
	soft_reg_drop(&hosts[1], b);
	hosts_free();
}

/* Host 1's address, as its messages name it. */
static const uint8_t *b_addr(void)
{
	static uint8_t a[16];

	inet_pton(AF_INET, "10.99.0.2", a);
	return a;
}

/* A FENCE_SEEN from b's end, under the right nonces, for fence. */
static void msg_seen_for(const struct soft_sock *b, uint64_t fence, uint8_t buf[SOFT_PEER_MSG_LEN])
{
	struct soft_peer_msg m = { .type = SOFT_PEER_FENCE_SEEN, .role = 1, .family = AF_INET,
				   .sport = 80, .dport = 40000, .nonce = b->ask.nonce,
				   .echo = b->ask.peer_nonce, .fence = fence };

	memcpy(m.src, b_addr(), 4);
	inet_pton(AF_INET, "10.99.0.1", m.dst);
	CHECK_INT(soft_peer_msg_encode(&m, buf), 0);
}

TEST(soft_peer_forged_fences_do_nothing)
{
	struct soft_peer_msg m;
	uint8_t buf[SOFT_PEER_MSG_LEN], other[16] = { 10, 99, 0, 3 };
	struct soft_sock *a, *b;

	ends_known(&a, &b);
	CHECK_INT(soft_peer_fence_send(&hosts[0], a, 500, 0), 0);
	CHECK_INT(soft_peer_msg_decode(q[0].msg, SOFT_PEER_MSG_LEN, &m), 0);
	nq = 0;
	/* from another address, with the right nonces: dropped */
	CHECK_INT(soft_peer_msg_encode(&m, buf), 0);
	soft_peer_input(&hosts[1], buf, sizeof(buf), AF_INET, other, 7609, 1);
	CHECK(!b->ask.rx_fence_known);
	/* from the peer's address with a guessed nonce: dropped */
	m.nonce ^= 1;
	CHECK_INT(soft_peer_msg_encode(&m, buf), 0);
	soft_peer_input(&hosts[1], buf, sizeof(buf), AF_INET, m.src, 7609, 1);
	m.nonce ^= 1;
	m.echo ^= 0x100;
	CHECK_INT(soft_peer_msg_encode(&m, buf), 0);
	soft_peer_input(&hosts[1], buf, sizeof(buf), AF_INET, m.src, 7609, 1);
	CHECK(!b->ask.rx_fence_known);
	CHECK_INT(nq, 0);
	/* the real one, then another fence under the right nonces: the first stays */
	m.echo ^= 0x100;
	CHECK_INT(soft_peer_msg_encode(&m, buf), 0);
	soft_peer_input(&hosts[1], buf, sizeof(buf), AF_INET, m.src, 7609, 1);
	CHECK(b->ask.rx_fence_known && b->ask.rx_fence == 500);
	m.fence = 501;
	CHECK_INT(soft_peer_msg_encode(&m, buf), 0);
	soft_peer_input(&hosts[1], buf, sizeof(buf), AF_INET, m.src, 7609, 2);
	CHECK_INT(b->ask.rx_fence, 500);
	CHECK_INT(nq, 1);                  /* one FENCE_SEEN, for 500 */
	/* a FENCE_SEEN for another fence confirms nothing */
	nq = 0;
	msg_seen_for(b, 499, buf);
	soft_peer_input(&hosts[0], buf, sizeof(buf), AF_INET, b_addr(), 7609, 3);
	CHECK(!a->ask.tx_fence_seen);
	soft_reg_drop(&hosts[0], a);
	soft_reg_drop(&hosts[1], b);
	hosts_free();
}

TEST(soft_peer_answers_to_other_questions_are_ignored)
{
	struct soft_peer_msg m = { .type = SOFT_PEER_ANSWER, .role = 1, .have = true, .verdict = 0,
				   .family = AF_INET, .sport = 80, .dport = 40000, .nonce = 5, .echo = 6 };
	uint8_t buf[SOFT_PEER_MSG_LEN];
	struct soft_sock *a;

	hosts_init();
	a = end_on(0);
	CHECK_INT(begin(0, a, SOFT_DECL_NOSMCDEV, 0), 0);
	inet_pton(AF_INET, "10.99.0.2", m.src);
	inet_pton(AF_INET, "10.99.0.1", m.dst);
	if (m.echo == a->ask.nonce)
		m.echo++;
	CHECK_INT(soft_peer_msg_encode(&m, buf), 0);
	soft_peer_input(&hosts[0], buf, sizeof(buf), AF_INET, m.src, 7609, 1);
	CHECK_INT(a->pair_status, SOFT_PAIR_ASKING);
	CHECK_INT(a->ask.peer_nonce, 0);
	m.echo = a->ask.nonce;
	CHECK_INT(soft_peer_msg_encode(&m, buf), 0);
	soft_peer_input(&hosts[0], buf, sizeof(buf), AF_INET, m.src, 7609, 2);
	check_decided(a, SOFT_DECL_NOSMCDEV, 0);
	CHECK(a->ask.peer_nonce == 5);
	soft_reg_drop(&hosts[0], a);
	hosts_free();
}
