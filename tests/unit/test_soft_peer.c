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
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#define QMAX 16

/* Datagrams on their way: sent by state[from], each with its source address. */
static struct sent {
	int from;
	int family;
	uint8_t src[16];
	uint16_t port;
	uint8_t msg[SOFT_PEER_DGRAM_MAX];
	size_t len;
} q[QMAX];
static int nq, nsent;
static struct soft_state hosts[2];

static int fake_send(void *ctx, const uint8_t *msg, size_t len, int family, const uint8_t from[16],
		     const uint8_t to[16], uint16_t port, uint32_t ifindex)
{
	(void)to;
	(void)ifindex;
	nsent++;
	if (nq == QMAX || len < SOFT_PEER_MSG_LEN || len > SOFT_PEER_DGRAM_MAX)
		return -ENOBUFS;
	q[nq].len = len;
	q[nq].from = (int)(intptr_t)ctx;
	q[nq].family = family;
	memcpy(q[nq].src, from, 16);
	q[nq].port = port ? port : SOFT_PEER_PORT;
	memcpy(q[nq].msg, msg, len);
	nq++;
	return 0;
}

/* Queued message i reaches the other host. */
static void input_at(int i, int64_t now)
{
	soft_peer_input(&hosts[!q[i].from], q[i].msg, q[i].len, q[i].family, q[i].src, q[i].port, now);
}

/* Deliver what is on its way (and what that sends) to the other host; drop: lose it. */
static void deliver(bool drop, int64_t now)
{
	for (int i = 0; i < nq; i++)
		if (!drop)
			input_at(i, now);
	nq = 0;
}

/* The messages queued now delivered, what they bring about lost. */
static void deliver_answers_lost(int64_t now)
{
	int n = nq;

	for (int i = 0; i < n; i++)
		input_at(i, now);
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

/*
 * The daemon's getrandom(), which a test may make fail: without waiting, as
 * before the kernel's generator is seeded (unseeded), or at all (no_random).
 */
static bool unseeded, no_random;
static int insecure_calls, blocking_calls;

ssize_t getrandom(void *buf, size_t len, unsigned int flags)
{
	insecure_calls += !!(flags & GRND_INSECURE);
	blocking_calls += !(flags & (GRND_NONBLOCK | GRND_INSECURE));
	if (no_random || (unseeded && (flags & GRND_NONBLOCK))) {
		errno = no_random ? ENOSYS : EAGAIN;
		return -1;
	}
	return syscall(SYS_getrandom, buf, len, flags);
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
	CHECK_INT(soft_peer_msg_encode(&m, b, sizeof(b)), SOFT_PEER_MSG_LEN);
	CHECK_INT(soft_peer_msg_encode(&m, b, sizeof(b) - 1), -EINVAL);
	CHECK(!memcmp(b, "SMCQ\x03\x02\x01\x01\x01\x02\x03\x04\x03\x03\x00\x00\x04\x00\x00\x50\x9c\x40",
		      22));
	CHECK(!memcmp(b + 56, "\x11\x12\x13\x14\x15\x16\x17\x18\x21\x22\x23\x24\x25\x26\x27\x28"
			      "\0\0\0\0\0\0\0\0", 24));
	CHECK_INT(soft_peer_msg_decode(b, sizeof(b), &d), 0);
	CHECK(!memcmp(&d, &m, sizeof(m)) || (d.seq == m.seq && d.verdict == m.verdict &&
					     !memcmp(d.src, m.src, 16) && d.dport == m.dport));
	CHECK_INT(soft_peer_msg_decode(b, sizeof(b) - 1, &d), -EBADMSG);
	/* every field out of its range, one at a time */
	static const struct { int off; uint8_t v; } bad[] = {
		{ 0, 'X' }, { 4, 1 }, { 5, 7 }, { 5, 0 }, { 6, 2 }, { 7, 2 }, { 16, 5 }, { 17, 1 },
		{ 22, 1 }, { 30, 1 }, { 46, 1 }, { 72, 1 }, { 73, 1 }, { 79, 1 },
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
	/* each type with its nonces, index and bytes, and only those */
	m.have = false;
	CHECK_INT(soft_peer_msg_encode(&m, b, sizeof(b)), -EINVAL);   /* "not here" names no nonce of its own */
	m.nonce = 0;
	CHECK_INT(soft_peer_msg_encode(&m, b, sizeof(b)), SOFT_PEER_MSG_LEN);
	m.echo = 0;
	CHECK_INT(soft_peer_msg_encode(&m, b, sizeof(b)), -EINVAL);   /* an answer echoes its question's */
	m.type = SOFT_PEER_ASK;
	m.nonce = 7;
	CHECK_INT(soft_peer_msg_encode(&m, b, sizeof(b)), SOFT_PEER_MSG_LEN);
	m.index = 1;
	CHECK_INT(soft_peer_msg_encode(&m, b, sizeof(b)), -EINVAL);   /* a question has no index */
	m.type = SOFT_PEER_CLC_SEEN;
	CHECK_INT(soft_peer_msg_encode(&m, b, sizeof(b)), -EINVAL);   /* both nonces */
	m.echo = 9;
	CHECK_INT(soft_peer_msg_encode(&m, b, sizeof(b)), -EINVAL);   /* no verdict in the relay */
	m.verdict = 0;
	CHECK_INT(soft_peer_msg_encode(&m, b, sizeof(b)), SOFT_PEER_MSG_LEN);
	for (unsigned i = 0; i < 4; i++) {
		m.index = (uint8_t)i;
		CHECK_INT(soft_peer_msg_encode(&m, b, sizeof(b)), i >= 1 && i <= 2 ? SOFT_PEER_MSG_LEN : -EINVAL);
	}
	m.index = 2;
	m.clc = (const uint8_t *)"abc";
	m.clc_len = 3;
	CHECK_INT(soft_peer_msg_encode(&m, b, sizeof(b)), -EINVAL);   /* CLC_SEEN carries no bytes */
	m.type = SOFT_PEER_CLC;
	{
		uint8_t e[SOFT_PEER_DGRAM_MAX + 1];

		CHECK_INT(soft_peer_msg_encode(&m, e, SOFT_PEER_MSG_LEN + 2), -EINVAL);   /* no room */
		CHECK_INT(soft_peer_msg_encode(&m, e, sizeof(e)), SOFT_PEER_MSG_LEN + 3);
		CHECK_INT(e[72], 2);
		CHECK(!memcmp(e + SOFT_PEER_MSG_LEN, "abc", 3));
		CHECK_INT(soft_peer_msg_decode(e, SOFT_PEER_MSG_LEN + 3, &d), 0);
		CHECK(d.type == SOFT_PEER_CLC && d.nonce == 7 && d.echo == 9 && d.index == 2);
		CHECK(d.clc_len == 3 && !memcmp(d.clc, "abc", 3));
		/* a CLC without bytes, or with more than SOFT_PEER_CLC_MAX: dropped */
		CHECK_INT(soft_peer_msg_decode(e, SOFT_PEER_MSG_LEN, &d), -EBADMSG);
		memset(e + SOFT_PEER_MSG_LEN, 0x41, SOFT_PEER_CLC_MAX + 1);
		CHECK_INT(soft_peer_msg_decode(e, SOFT_PEER_DGRAM_MAX, &d), 0);
		CHECK_INT(soft_peer_msg_decode(e, SOFT_PEER_DGRAM_MAX + 1, &d), -EBADMSG);
		/* bytes after another type: dropped */
		e[5] = SOFT_PEER_CLC_SEEN;
		CHECK_INT(soft_peer_msg_decode(e, SOFT_PEER_MSG_LEN + 3, &d), -EBADMSG);
		CHECK_INT(soft_peer_msg_decode(e, SOFT_PEER_MSG_LEN, &d), 0);
	}
	/* a rebuild message: any index but 0, at most SOFT_PEER_REBUILD_MAX bytes */
	m.type = SOFT_PEER_REBUILD;
	m.index = 200;
	{
		uint8_t e[SOFT_PEER_DGRAM_MAX], big[SOFT_PEER_REBUILD_MAX + 1];

		CHECK_INT(soft_peer_msg_encode(&m, e, sizeof(e)), SOFT_PEER_MSG_LEN + 3);
		CHECK(e[5] == SOFT_PEER_REBUILD && e[72] == 200);
		CHECK_INT(soft_peer_msg_decode(e, SOFT_PEER_MSG_LEN + 3, &d), 0);
		CHECK(d.type == SOFT_PEER_REBUILD && d.index == 200 && d.clc_len == 3 && !memcmp(d.clc, "abc", 3));
		e[72] = 0;
		CHECK_INT(soft_peer_msg_decode(e, SOFT_PEER_MSG_LEN + 3, &d), -EBADMSG);
		e[72] = 200;
		memset(e + SOFT_PEER_MSG_LEN, 0x42, SOFT_PEER_REBUILD_MAX + 1);
		CHECK_INT(soft_peer_msg_decode(e, SOFT_PEER_MSG_LEN + SOFT_PEER_REBUILD_MAX, &d), 0);
		CHECK_INT(soft_peer_msg_decode(e, SOFT_PEER_MSG_LEN + SOFT_PEER_REBUILD_MAX + 1, &d), -EBADMSG);
		memset(big, 0x43, sizeof(big));
		m.clc = big;
		m.clc_len = sizeof(big);
		CHECK_INT(soft_peer_msg_encode(&m, e, sizeof(e)), -EINVAL);
		m.type = SOFT_PEER_REBUILD_SEEN;
		m.clc_len = 0;
		CHECK_INT(soft_peer_msg_encode(&m, e, sizeof(e)), SOFT_PEER_MSG_LEN);
		CHECK_INT(soft_peer_msg_decode(e, SOFT_PEER_MSG_LEN, &d), 0);
		CHECK(d.type == SOFT_PEER_REBUILD_SEEN && d.index == 200 && !d.clc_len);
		m.echo = 0;
		CHECK_INT(soft_peer_msg_encode(&m, e, sizeof(e)), -EINVAL);   /* both nonces */
		m.echo = 9;
		/* GONE: both nonces, no index, no bytes */
		m.type = SOFT_PEER_GONE;
		CHECK_INT(soft_peer_msg_encode(&m, e, sizeof(e)), -EINVAL);
		m.index = 0;
		CHECK_INT(soft_peer_msg_encode(&m, e, sizeof(e)), SOFT_PEER_MSG_LEN);
		CHECK_INT(soft_peer_msg_decode(e, SOFT_PEER_MSG_LEN, &d), 0);
		CHECK(d.type == SOFT_PEER_GONE && d.nonce == 7 && d.echo == 9 && !d.index && !d.clc_len);
		e[72] = 1;
		CHECK_INT(soft_peer_msg_decode(e, SOFT_PEER_MSG_LEN, &d), -EBADMSG);
		e[72] = 0;
		CHECK_INT(soft_peer_msg_decode(e, SOFT_PEER_MSG_LEN + 1, &d), -EBADMSG);
		m.index = 200;
	}
	m.type = SOFT_PEER_ANSWER;
	m.have = true;
	m.index = 0;
	m.clc = NULL;
	m.clc_len = 0;
	m.role = 2;
	CHECK_INT(soft_peer_msg_encode(&m, b, sizeof(b)), -EINVAL);
	/* IPv6 keeps all 16 bytes */
	m.role = 0;
	m.family = AF_INET6;
	inet_pton(AF_INET6, "fd00::2", m.src);
	inet_pton(AF_INET6, "fe80::1", m.dst);
	CHECK_INT(soft_peer_msg_encode(&m, b, sizeof(b)), SOFT_PEER_MSG_LEN);
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
	CHECK_INT(soft_peer_msg_encode(&m, buf, sizeof(buf)), SOFT_PEER_MSG_LEN);
	soft_peer_input(&hosts[1], buf, sizeof(buf), AF_INET, m.src, 7609, 10);
	check_decided(b, SOFT_DECL_NOSMCDEV, 0);
	/* the answer: the server's end is here, with its code */
	CHECK_INT(nq, 1);
	CHECK_INT(soft_peer_msg_decode(q[0].msg, q[0].len, &m), 0);
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
	CHECK_INT(soft_peer_msg_encode(&m, buf, sizeof(buf)), SOFT_PEER_MSG_LEN);
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
	CHECK_INT(soft_peer_msg_encode(&m, buf, sizeof(buf)), SOFT_PEER_MSG_LEN);
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
	CHECK_INT(soft_peer_msg_encode(&m, buf, sizeof(buf)), SOFT_PEER_MSG_LEN);
	soft_peer_input(&hosts[1], buf, sizeof(buf), AF_INET, m.src, 7609, 1);
	CHECK_INT(nq, 1);
	CHECK_INT(soft_peer_msg_decode(q[0].msg, q[0].len, &m), 0);
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
	CHECK_INT(soft_peer_msg_encode(&m, buf, sizeof(buf)), SOFT_PEER_MSG_LEN);
	soft_peer_input(&hosts[1], buf, sizeof(buf), AF_INET, m.src, 7609, 1);
	nq = nsent = 0;
	b = end_on(1);
	CHECK_INT(soft_peer_ask_begin(&hosts[1], NULL, b, 0, "nosuch0", 2), 0);
	check_decided(b, SOFT_DECL_PEERDECL, SOFT_DECL_NOSMCDEV);
	CHECK_INT(nsent, 1);
	soft_reg_drop(&hosts[1], b);
	hosts_free();
}

/* Both hosts' ends, each able to negotiate, after their questions crossed: both negotiate. */
TEST(soft_peer_no_random_bytes_no_question)
{
	struct soft_sock *a;

	/* a nonce an off-path host could guess would let it into the handshake */
	hosts_init();
	a = end_on(0);
	no_random = true;
	CHECK_INT(begin(0, a, 0, 0), 0);
	no_random = false;
	check_decided(a, SOFT_DECL_INTERR, 0);
	CHECK_INT(nsent, 0);
	soft_reg_drop(&hosts[0], a);
	hosts_free();

	/* not seeded yet: the generator's output as it is then, never a wait, and the question */
	hosts_init();
	a = end_on(0);
	unseeded = true;
	insecure_calls = blocking_calls = 0;
	CHECK_INT(begin(0, a, 0, 0), 0);
	unseeded = false;
	CHECK_INT(insecure_calls, 1);
	CHECK_INT(blocking_calls, 0);
	CHECK_INT(a->pair_status, SMC_SOFT_PAIR_ASKING);
	CHECK(a->ask.nonce != 0);
	CHECK_INT(nsent, 1);
	soft_reg_drop(&hosts[0], a);
	hosts_free();
}

static void ends_negotiate(struct soft_sock **a, struct soft_sock **b)
{
	hosts_init();
	*a = end_on(0);
	*b = end_on(1);
	CHECK_INT(begin(0, *a, 0, 0), 0);
	CHECK_INT(begin(1, *b, 0, 0), 0);
	deliver(false, 0);
	deliver(false, 0);
	deliver(false, 0);
	CHECK((*a)->ask.peer_nonce == (*b)->ask.nonce && (*b)->ask.peer_nonce == (*a)->ask.nonce);
	CHECK((*a)->ask.nonce && (*a)->ask.nonce != (*b)->ask.nonce);
	CHECK_INT((*a)->pair_status, SOFT_PAIR_NEGOTIATE);
	CHECK_INT((*b)->pair_status, SOFT_PAIR_NEGOTIATE);
	CHECK(!(*a)->ask.pprev && !(*b)->ask.pprev);
}

static bool peer_msg_is(const struct soft_sock *s, unsigned index, const char *want)
{
	size_t len = 0;
	const uint8_t *m = soft_clc_peer_msg(s, index, &len);

	return m && len == strlen(want) && !memcmp(m, want, len);
}

TEST(soft_peer_clc_messages_both_ways)
{
	struct soft_sock *a, *b;
	size_t len;

	ends_negotiate(&a, &b);
	nsent = 0;
	/* the client's PROPOSAL: kept at the server's daemon, which says so */
	CHECK_INT(soft_clc_give(&hosts[0], a, "PROPOSAL", 8, 0, 100), 0);
	CHECK_INT(soft_clc_give(&hosts[0], a, "CONFIRM", 7, 0, 100), -EBUSY);    /* not kept yet */
	CHECK(a->ask.pprev != NULL);
	deliver(false, 100);               /* CLC */
	CHECK(peer_msg_is(b, 1, "PROPOSAL"));
	CHECK(soft_clc_peer_msg(b, 2, &len) == NULL);
	deliver(false, 100);               /* CLC_SEEN */
	CHECK_INT(soft_clc_seen(a), 1);
	CHECK_INT(nsent, 2);
	CHECK_INT(soft_peer_tick(&hosts[0], 101), -1);
	CHECK(!a->ask.pprev);
	/* the server's ACCEPT, the client's CONFIRM */
	CHECK_INT(soft_clc_give(&hosts[1], b, "ACCEPT", 6, 0, 200), 0);
	deliver(false, 200);
	deliver(false, 200);
	CHECK(peer_msg_is(a, 1, "ACCEPT") && soft_clc_seen(b) == 1);
	CHECK_INT(soft_clc_give(&hosts[0], a, "CONFIRM", 7, 0, 300), 0);
	deliver(false, 300);
	deliver(false, 300);
	CHECK(peer_msg_is(b, 2, "CONFIRM") && soft_clc_seen(a) == 2);
	CHECK(peer_msg_is(b, 1, "PROPOSAL"));
	/* two messages per end, each 1 to 1024 bytes */
	CHECK_INT(soft_clc_give(&hosts[0], a, "x", 1, 0, 400), -EINVAL);
	CHECK_INT(soft_clc_give(&hosts[1], b, "", 0, 0, 400), -EINVAL);
	{
		static uint8_t big[SOFT_PEER_CLC_MAX + 1];

		CHECK_INT(soft_clc_give(&hosts[1], b, big, sizeof(big), 0, 400), -EINVAL);
		CHECK_INT(soft_clc_give(&hosts[1], b, big, SOFT_PEER_CLC_MAX, 0, 400), 0);
		deliver(false, 400);
		CHECK(soft_clc_peer_msg(a, 2, &len) && len == SOFT_PEER_CLC_MAX);
	}
	soft_reg_drop(&hosts[0], a);
	soft_reg_drop(&hosts[1], b);
	hosts_free();
}

TEST(soft_peer_clc_lost_sent_again_then_failed)
{
	struct soft_sock *a, *b;
	int64_t due;

	ends_negotiate(&a, &b);
	nsent = 0;
	CHECK_INT(soft_clc_give(&hosts[0], a, "PROPOSAL", 8, 0, 1000), 0);
	for (int64_t t = 1000; t < 2999; t = due) {
		deliver(true, t);
		due = soft_peer_tick(&hosts[0], t);
		CHECK(due > t);
	}
	CHECK_INT(nsent, 3);
	CHECK(!soft_clc_failed(a));
	CHECK_INT(soft_peer_tick(&hosts[0], 3000), -1);
	CHECK(soft_clc_failed(a) && soft_clc_seen(a) == 0 && !a->ask.pprev);
	CHECK(!peer_msg_is(b, 1, "PROPOSAL"));
	/* its end falls back as if no daemon answered */
	CHECK_INT(soft_clc_undecided_reason(a), 0x03010000);
	soft_reg_drop(&hosts[0], a);
	soft_reg_drop(&hosts[1], b);
	hosts_free();
	/* a DECLINE of its library's own, not kept: its end falls back with the DECLINE's code */
	ends_negotiate(&a, &b);
	CHECK_INT(soft_clc_give(&hosts[0], a, "PROPOSAL", 8, 0, 0), 0);
	deliver(false, 0);
	deliver(false, 0);
	CHECK_INT(soft_clc_seen(a), 1);
	CHECK_INT(soft_clc_give(&hosts[0], a, "DECLINE", 7, 0x02010000, 10), 0);
	for (int64_t t = 10; (due = soft_peer_tick(&hosts[0], t)) > 0; t = due)
		deliver(true, t);
	CHECK(soft_clc_failed(a));
	CHECK_INT(soft_clc_undecided_reason(a), 0x02010000);
	soft_reg_drop(&hosts[0], a);
	soft_reg_drop(&hosts[1], b);
	hosts_free();
	/* one that gets through on a second try */
	ends_negotiate(&a, &b);
	CHECK_INT(soft_clc_give(&hosts[0], a, "PROPOSAL", 8, 0, 0), 0);
	deliver(true, 0);
	soft_peer_tick(&hosts[0], 250);
	deliver(false, 250);
	deliver(false, 250);
	CHECK(peer_msg_is(b, 1, "PROPOSAL") && soft_clc_seen(a) == 1);
	soft_reg_drop(&hosts[0], a);
	soft_reg_drop(&hosts[1], b);
	hosts_free();
}

TEST(soft_peer_clc_an_answer_says_what_it_answers_was_kept)
{
	struct soft_sock *a, *b;
	int64_t due;

	ends_negotiate(&a, &b);
	/* the PROPOSAL kept, its CLC_SEEN lost */
	CHECK_INT(soft_clc_give(&hosts[0], a, "PROPOSAL", 8, 0, 0), 0);
	deliver_answers_lost(0);
	CHECK_INT(soft_clc_seen(a), 0);
	/* the server's ACCEPT answers it */
	CHECK_INT(soft_clc_give(&hosts[1], b, "ACCEPT", 6, 0, 10), 0);
	/* every CLC_SEEN of the ACCEPT lost until the server's daemon gave up */
	deliver_answers_lost(10);
	CHECK(peer_msg_is(a, 1, "ACCEPT"));
	CHECK_INT(soft_clc_seen(a), 1);
	for (int64_t t = 10; (due = soft_peer_tick(&hosts[1], t)) > 0; t = due)
		deliver(true, t);
	CHECK(soft_clc_failed(b) && soft_clc_seen(b) == 0);
	/* the client's CONFIRM, which only an ACCEPT that got there brings */
	CHECK_INT(soft_clc_give(&hosts[0], a, "CONFIRM", 7, 0, 2100), 0);
	deliver_answers_lost(2100);
	CHECK(peer_msg_is(b, 2, "CONFIRM"));
	CHECK(!soft_clc_failed(b) && soft_clc_seen(b) == 1);
	CHECK(!b->ask.pprev);
	CHECK_INT(b->pair_status, SOFT_PAIR_NEGOTIATE);
	soft_reg_drop(&hosts[0], a);
	soft_reg_drop(&hosts[1], b);
	hosts_free();
}

TEST(soft_peer_clc_one_end_cannot)
{
	struct soft_sock *a, *b;

	/* the server's library has no RDMA transport: both stay TCP, with its code first at the server */
	hosts_init();
	a = end_on(0);
	b = end_on(1);
	CHECK_INT(begin(0, a, 0, 0), 0);
	CHECK_INT(begin(1, b, SOFT_DECL_NOSMCDEV, 0), 0);
	deliver(false, 0);
	deliver(false, 0);
	check_decided(a, SOFT_DECL_PEERDECL, SOFT_DECL_NOSMCDEV);
	check_decided(b, SOFT_DECL_NOSMCDEV, 0);
	CHECK_INT(soft_clc_give(&hosts[0], a, "PROPOSAL", 8, 0, 0), -EAGAIN);
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

/* A CLC_SEEN from b's end, under the right nonces, for message index. */
static int msg_seen_for(const struct soft_sock *b, uint8_t index, uint8_t *buf)
{
	struct soft_peer_msg m = { .type = SOFT_PEER_CLC_SEEN, .role = 1, .family = AF_INET,
				   .sport = 80, .dport = 40000, .nonce = b->ask.nonce,
				   .echo = b->ask.peer_nonce, .index = index };

	memcpy(m.src, b_addr(), 4);
	inet_pton(AF_INET, "10.99.0.1", m.dst);
	return soft_peer_msg_encode(&m, buf, SOFT_PEER_DGRAM_MAX);
}

TEST(soft_peer_forged_clc_does_nothing)
{
	struct soft_peer_msg m;
	uint8_t buf[SOFT_PEER_DGRAM_MAX], other[16] = { 10, 99, 0, 3 };
	struct soft_sock *a, *b;
	int n;

	ends_negotiate(&a, &b);
	CHECK_INT(soft_clc_give(&hosts[0], a, "PROPOSAL", 8, 0, 0), 0);
	CHECK_INT(soft_peer_msg_decode(q[0].msg, q[0].len, &m), 0);
	CHECK(m.type == SOFT_PEER_CLC && m.index == 1 && m.clc_len == 8);
	nq = 0;
	/* from another address, with the right nonces: dropped */
	n = soft_peer_msg_encode(&m, buf, sizeof(buf));
	CHECK_INT(n, SOFT_PEER_MSG_LEN + 8);
	soft_peer_input(&hosts[1], buf, (size_t)n, AF_INET, other, 7609, 1);
	CHECK(!peer_msg_is(b, 1, "PROPOSAL"));
	/* from the peer's address with a guessed nonce: dropped */
	m.nonce ^= 1;
	n = soft_peer_msg_encode(&m, buf, sizeof(buf));
	soft_peer_input(&hosts[1], buf, (size_t)n, AF_INET, m.src, 7609, 1);
	m.nonce ^= 1;
	m.echo ^= 0x100;
	n = soft_peer_msg_encode(&m, buf, sizeof(buf));
	soft_peer_input(&hosts[1], buf, (size_t)n, AF_INET, m.src, 7609, 1);
	CHECK(soft_clc_peer_msg(b, 1, &(size_t){ 0 }) == NULL);
	CHECK_INT(nq, 0);
	/* the real one, then other bytes under the right nonces: the first copy stays */
	m.echo ^= 0x100;
	n = soft_peer_msg_encode(&m, buf, sizeof(buf));
	soft_peer_input(&hosts[1], buf, (size_t)n, AF_INET, m.src, 7609, 1);
	CHECK(peer_msg_is(b, 1, "PROPOSAL"));
	m.clc = (const uint8_t *)"FORGERY!";
	n = soft_peer_msg_encode(&m, buf, sizeof(buf));
	soft_peer_input(&hosts[1], buf, (size_t)n, AF_INET, m.src, 7609, 2);
	CHECK(peer_msg_is(b, 1, "PROPOSAL"));
	CHECK_INT(nq, 2);                  /* CLC_SEEN for each copy */
	/* a CLC_SEEN for another message confirms nothing */
	nq = 0;
	n = msg_seen_for(b, 2, buf);
	CHECK(n > 0);
	soft_peer_input(&hosts[0], buf, (size_t)n, AF_INET, b_addr(), 7609, 3);
	CHECK_INT(soft_clc_seen(a), 0);
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
	CHECK_INT(soft_peer_msg_encode(&m, buf, sizeof(buf)), SOFT_PEER_MSG_LEN);
	soft_peer_input(&hosts[0], buf, sizeof(buf), AF_INET, m.src, 7609, 1);
	CHECK_INT(a->pair_status, SOFT_PAIR_ASKING);
	CHECK_INT(a->ask.peer_nonce, 0);
	m.echo = a->ask.nonce;
	CHECK_INT(soft_peer_msg_encode(&m, buf, sizeof(buf)), SOFT_PEER_MSG_LEN);
	soft_peer_input(&hosts[0], buf, sizeof(buf), AF_INET, m.src, 7609, 2);
	check_decided(a, SOFT_DECL_NOSMCDEV, 0);
	CHECK(a->ask.peer_nonce == 5);
	soft_reg_drop(&hosts[0], a);
	hosts_free();
}

/* Both ends negotiated and run over RDMA, as their libraries' PAIRED said. */
static void ends_over_rdma(struct soft_sock **a, struct soft_sock **b)
{
	ends_negotiate(a, b);
	(*a)->pair_status = (*b)->pair_status = SOFT_PAIR_RDMA;
	nq = nsent = 0;
}

static bool rebuild_is(int h, const struct soft_sock *want, const char *msg)
{
	struct soft_sock *from = NULL;
	size_t len = 0;
	const uint8_t *m = soft_rebuild_take(&hosts[h], 0, &from, &len);

	return m && from == want && len == strlen(msg) && !memcmp(m, msg, len);
}

/*
 * A rebuild message goes to the peer's daemon once both ends run over
 * RDMA, is kept there until its library takes it (once), and a newer one
 * of the same end replaces it; one lost is sent again, then given up.
 */
TEST(soft_peer_rebuild_messages_relayed)
{
	struct soft_sock *a, *b, *from;
	size_t len;
	int64_t due;

	ends_negotiate(&a, &b);
	CHECK_INT(soft_rebuild_give(&hosts[0], a, "QP1", 3, 0), -EAGAIN);      /* still negotiating */
	a->pair_status = b->pair_status = SOFT_PAIR_RDMA;
	CHECK_INT(soft_rebuild_give(&hosts[0], a, "", 0, 0), -EINVAL);
	{
		char big[SOFT_PEER_REBUILD_MAX + 1];

		memset(big, 'x', sizeof(big));
		CHECK_INT(soft_rebuild_give(&hosts[0], a, big, sizeof(big), 0), -EINVAL);
	}
	/* the group's messages go through an end its library named with PAIRED */
	CHECK(!soft_rebuild_carrier(&hosts[0], 0, 7));
	a->lgr_key = 7;
	CHECK(soft_rebuild_carrier(&hosts[0], 0, 7) == a);
	CHECK(!soft_rebuild_carrier(&hosts[0], 0, 8) && !soft_rebuild_carrier(&hosts[0], 1, 7));
	nq = nsent = 0;
	CHECK(!soft_rebuild_take(&hosts[1], 0, &from, &len));
	CHECK_INT(soft_rebuild_give(&hosts[0], a, "QP1", 3, 0), 0);
	CHECK(a->ask.pprev != NULL);
	deliver(false, 0);                 /* REBUILD, and its REBUILD_SEEN */
	CHECK(soft_rebuild_kept(a));
	CHECK_INT(soft_peer_tick(&hosts[0], 200), -1);
	CHECK(!a->ask.pprev);
	CHECK(rebuild_is(1, b, "QP1"));
	CHECK(!soft_rebuild_take(&hosts[1], 0, &from, &len));      /* taken once */
	/* the answer back, lost once: sent again, kept, taken */
	CHECK_INT(soft_rebuild_give(&hosts[1], b, "QP2-answer", 10, 100), 0);
	deliver(true, 100);
	due = soft_peer_tick(&hosts[1], 300);
	CHECK(due > 300);
	deliver(false, 300);
	deliver(false, 300);
	CHECK(soft_rebuild_kept(b));
	CHECK(rebuild_is(0, a, "QP2-answer"));
	/* a repeat of a message kept is answered, not taken again; a newer one is */
	CHECK_INT(soft_rebuild_give(&hosts[0], a, "QP3", 3, 400), 0);
	q[1] = q[0];
	nq = 2;
	deliver(false, 400);
	CHECK(rebuild_is(1, b, "QP3"));
	CHECK(!soft_rebuild_take(&hosts[1], 0, &from, &len));
	CHECK(soft_rebuild_kept(a));
	/* never kept: sent at 0, 0.2, 0.6, 1.4 s, then every 1.6 s until REBUILD_MS (9 s): eight times */
	nsent = 0;
	CHECK_INT(soft_rebuild_give(&hosts[0], a, "QP4", 3, 1000), 0);
	for (int64_t t = 1000; (due = soft_peer_tick(&hosts[0], t)) > 0; t = due)
		deliver(true, t);
	CHECK_INT(nsent, 8);
	CHECK(!soft_rebuild_kept(a) && !a->ask.pprev);
	soft_reg_drop(&hosts[0], a);
	soft_reg_drop(&hosts[1], b);
	hosts_free();
}

/* GONE from the peer's end: both nonces, and an end over RDMA; else nothing. */
static void gone_from(struct soft_sock *from, struct soft_sock *to, uint64_t nonce_flip)
{
	struct soft_peer_msg m;
	uint8_t buf[SOFT_PEER_DGRAM_MAX];
	int n;

	soft_peer_msg_of(from, SOFT_PEER_GONE, &m);
	m.verdict = 0;
	m.echo = to->ask.nonce;
	m.nonce ^= nonce_flip;
	n = soft_peer_msg_encode(&m, buf, sizeof(buf));
	CHECK_INT(n, SOFT_PEER_MSG_LEN);
	soft_peer_input(&hosts[1], buf, (size_t)n, AF_INET, m.src, SOFT_PEER_PORT, 0);
}

/*
 * A process that ends without closing its end over RDMA: its daemon
 * tells the peer's (twice, the second later; unanswered), whose library
 * hears it once, with the group its end named; a forged GONE, or one for
 * an end not over RDMA, changes nothing.
 */
TEST(soft_peer_a_process_gone_is_told_once)
{
	struct soft_sock *a, *b;
	int64_t t0;

	ends_over_rdma(&a, &b);
	b->lgr_key = 9;
	gone_from(a, b, 1);
	CHECK(!b->ask.peer_gone);
	b->pair_status = SOFT_PAIR_NEGOTIATE;
	gone_from(a, b, 0);
	CHECK(!b->ask.peer_gone);
	b->pair_status = SOFT_PAIR_RDMA;
	CHECK_INT(nq, 0);                   /* unanswered */
	CHECK(!soft_gone_take(&hosts[1], 0));
	/* the process's control connection hangs up: its ends' peers told */
	soft_gone_tell(&hosts[0], 1);       /* another process's: none */
	CHECK_INT(nq, 0);
	t0 = soft_now_ms();
	soft_gone_tell(&hosts[0], 0);
	CHECK_INT(nq, 1);
	deliver(false, 0);
	CHECK_INT(b->ask.peer_gone, SOFT_GONE_HEARD);
	/* once more a little later, not right behind the first */
	CHECK(soft_peer_tick(&hosts[0], t0) > t0);
	CHECK_INT(nq, 0);
	soft_peer_tick(&hosts[0], t0 + 1000);
	CHECK_INT(nq, 1);
	deliver(false, 0);
	CHECK_INT(b->ask.peer_gone, SOFT_GONE_HEARD);
	CHECK(!soft_gone_take(&hosts[1], 1));
	CHECK(soft_gone_take(&hosts[1], 0) == b);
	CHECK(!soft_gone_take(&hosts[1], 0));       /* told once */
	soft_reg_drop(&hosts[0], a);
	soft_reg_drop(&hosts[1], b);
	hosts_free();
}

/* A rebuild message with a wrong nonce, or for an end that does not run over RDMA, is dropped unanswered. */
TEST(soft_peer_forged_rebuild_does_nothing)
{
	struct soft_sock *a, *b, *from;
	struct soft_peer_msg m;
	uint8_t buf[SOFT_PEER_DGRAM_MAX];
	size_t len;
	int n;

	ends_over_rdma(&a, &b);
	soft_peer_msg_of(a, SOFT_PEER_REBUILD, &m);
	m.verdict = 0;
	m.echo = b->ask.nonce;
	m.nonce ^= 1;
	m.index = 1;
	m.clc = (const uint8_t *)"QPX";
	m.clc_len = 3;
	n = soft_peer_msg_encode(&m, buf, sizeof(buf));
	CHECK_INT(n, SOFT_PEER_MSG_LEN + 3);
	soft_peer_input(&hosts[1], buf, (size_t)n, AF_INET, m.src, SOFT_PEER_PORT, 0);
	CHECK_INT(nq, 0);
	CHECK(!soft_rebuild_take(&hosts[1], 0, &from, &len));
	/* the right nonces while the end negotiates: nothing either */
	m.nonce ^= 1;
	b->pair_status = SOFT_PAIR_NEGOTIATE;
	n = soft_peer_msg_encode(&m, buf, sizeof(buf));
	soft_peer_input(&hosts[1], buf, (size_t)n, AF_INET, m.src, SOFT_PEER_PORT, 0);
	CHECK_INT(nq, 0);
	b->pair_status = SOFT_PAIR_RDMA;
	soft_peer_input(&hosts[1], buf, (size_t)n, AF_INET, m.src, SOFT_PEER_PORT, 0);
	CHECK_INT(nq, 1);
	CHECK(rebuild_is(1, b, "QPX"));
	soft_reg_drop(&hosts[0], a);
	soft_reg_drop(&hosts[1], b);
	hosts_free();
}
