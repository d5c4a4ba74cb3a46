/*
 * wire/smcr_conn.c, two ends joined by fake links that execute posted
 * RDMA WRITEs and SENDs in order, one at a time, when the test says so: full
 * duplex random traffic with a small send queue, a link that dies with part
 * of its queue delivered and completions lost (failover: every byte once,
 * in order), and peers that lie about their cursors.
 */
#include "unit.h"
#include "smcr_conn.h"

#include <errno.h>
#include <stdlib.h>

#define SNDBUF  (16u * 1024)
#define RMB     (16u * 1024)
#define QCAP    6

enum { OP_WRITE, OP_SEND };

struct op {
	int kind;
	uint32_t s_off, len, d_off;
	uint8_t msg[SMCR_CDC_LEN + SMCR_CDC_DATA_MAX];
	uint64_t id;
};

#define RXQ 64

struct end;

/* One direction of a link: what one end posted, not executed yet, and its completions. */
struct flink {
	struct end *from, *to;
	struct op q[QCAP];
	int head, n;
	uint64_t done[64];      /* ids of delivered SENDs, not yet completed to the sender */
	int ndone;
	bool down;
	bool starved;           /* a post found the queue full: the sender pushes once it has room */
	int held;               /* the last writes posted, held until a send or a flush (holding) */
	struct op rxq[RXQ];     /* SENDs delivered (and completed) that the receiver did not take yet (late_rx) */
	int nrx;
};

struct end {
	struct smcr_conn c;
	uint8_t sndbuf[SNDBUF];
	uint8_t rmb[RMB];
	struct flink *out;
	uint64_t given, read;   /* stream positions */
	uint64_t total;         /* to send */
	bool shut;
	bool bad;               /* a byte read was wrong */
};

static uint64_t rng;
static long lost_ops;           /* work requests the dead links never executed */
static uint32_t write_cap;      /* the links' largest write (smcr_conn.write_max), 0: any */
static bool holding;            /* the links hold writes back until a send or a flush (one doorbell) */
static bool shut_read_only;     /* an end ends its writing only once its bytes were read */
static bool inside_ok;          /* both ends keep their bytes until consumed and take bytes inside CDCs */
static bool small_gives;        /* the application gives a few bytes at a time, mostly */
static bool late_rx;            /* a delivered SEND waits in the receiver's queue until it takes it */
static long inside_cdcs;        /* CDCs delivered with bytes inside */
static bool refuse_writes;      /* the links have room for a SEND but not for a write (rxe's bytes in flight) */
static bool refuse_some;        /* so for one write in four */
static struct op stale[2][RXQ]; /* a dead link's SENDs not taken yet, per receiving end: taken late or never */
static int nstale[2];

static uint32_t rnd(uint32_t n)
{
	return (uint32_t)(unit_xorshift(&rng) % n);
}

static uint8_t pat(uint64_t pos, int dir)
{
	return (uint8_t)(((pos + (uint64_t)dir * 0x5555) * 0x9E3779B97F4A7C15ull) >> 56);
}

static int post(struct flink *l, const struct op *o)
{
	if (l->down)
		return -ENOLINK;
	if (l->n == QCAP) {
		l->starved = true;
		return -ENOBUFS;
	}
	l->q[(l->head + l->n) % QCAP] = *o;
	l->n++;
	l->held = holding && o->kind == OP_WRITE ? l->held + 1 : 0;
	return 0;
}

/* A dead link's doorbell fails (the preload's path_flush(): -ENOLINK): what it held never goes. */
static int f_flush(void *link)
{
	struct flink *l = link;

	if (l->down)
		return -ENOLINK;
	l->held = 0;
	return 0;
}

static int f_write(void *link, uint32_t off, uint32_t len, uint32_t rmb_off)
{
	struct op o = { .kind = OP_WRITE, .s_off = off, .len = len, .d_off = rmb_off };

	if (!len || off + len > SNDBUF || rmb_off + len > RMB || (write_cap && len > write_cap))
		return -EINVAL;   /* the connection must never ask for this */
	if (refuse_writes || (refuse_some && !rnd(4))) {
		((struct flink *)link)->starved = true;
		return -ENOBUFS;
	}
	return post(link, &o);
}

static int f_send(void *link, const uint8_t *msg, size_t len, uint64_t id)
{
	struct op o = { .kind = OP_SEND, .id = id, .len = (uint32_t)len };

	if (len < SMCR_CDC_LEN || len > sizeof(o.msg))
		return -EINVAL;
	memcpy(o.msg, msg, len);
	return post(link, &o);
}

/* The receiving end takes a SEND: smcr_conn_rx() and what it returned. */
static int take_send(struct end *to, const struct op *o)
{
	if (o->len > SMCR_CDC_LEN)
		inside_cdcs++;
	return smcr_conn_rx(&to->c, o->msg, o->len);
}

/* The receiver takes the oldest SEND waiting in its queue (late_rx): 1, or 0 for none. */
static int take_late(struct flink *l)
{
	int rc;

	if (!l->nrx)
		return 0;
	rc = take_send(l->to, &l->rxq[0]);
	memmove(l->rxq, l->rxq + 1, (size_t)--l->nrx * sizeof(l->rxq[0]));
	return rc < 0 ? rc : 1;
}

/* A SEND a dead link had delivered, taken now, after some of the new link's (end 0: a, 1: b). */
static int take_stale(struct end *to, int e)
{
	int rc;

	if (!nstale[e])
		return 0;
	rc = take_send(to, &stale[e][0]);
	memmove(stale[e], stale[e] + 1, (size_t)--nstale[e] * sizeof(stale[e][0]));
	return rc < 0 ? rc : 1;
}

static void drain(struct flink *l);

static const struct smcr_link_ops fops = { .write = f_write, .send = f_send, .flush = f_flush };

/* Executes the oldest posted work request: the write reads the send buffer now, as a NIC does. */
static int deliver(struct flink *l)
{
	struct op *o;
	int rc = 0;

	if (l->n == l->held)
		return 0;       /* nothing posted, or only writes a doorbell never rang for */
	o = &l->q[l->head];
	if (o->kind == OP_WRITE) {
		memcpy(l->to->rmb + o->d_off, l->from->sndbuf + o->s_off, o->len);
	} else {
		if (late_rx && l->nrx < RXQ)
			l->rxq[l->nrx++] = *o;
		else
			rc = take_send(l->to, o);
		if (l->ndone < 64)
			l->done[l->ndone++] = o->id;
	}
	l->head = (l->head + 1) % QCAP;
	l->n--;
	/* as the progress thread pushes a connection that found no room (preload/smcr/engine.c) */
	if (rc >= 0 && l->starved) {
		l->starved = false;
		rc = smcr_conn_push(&l->from->c);
	}
	return rc < 0 ? rc : 1;
}

static int complete(struct flink *l)
{
	uint64_t id;

	if (!l->ndone)
		return 0;
	id = l->done[0];
	memmove(l->done, l->done + 1, (size_t)--l->ndone * sizeof(l->done[0]));
	return smcr_conn_sent(&l->from->c, id);
}

static void give(struct end *e, int dir)
{
	uint8_t buf[3 * SNDBUF];
	struct iovec iov[2];
	uint32_t n = 1 + rnd(sizeof(buf) - 1), cut = rnd(n);
	ssize_t got;

	if (e->given >= e->total) {
		if (!e->shut && smcr_conn_unread(&e->c) == 0 && !rnd(4)) {
			CHECK_INT(smcr_conn_set_state(&e->c, CDC_CF_DONE_WRITING), 0);
			e->shut = true;
		} else if (!e->shut && !shut_read_only && !rnd(8)) {
			/* the end may go before the last byte was read: it waits for it */
			CHECK_INT(smcr_conn_set_state(&e->c, CDC_CF_DONE_WRITING), 0);
			e->shut = true;
		}
		return;
	}
	if (small_gives && rnd(16))
		n = 1 + rnd(2 * SMCR_CDC_DATA_MAX);
	if (n > e->total - e->given)
		n = (uint32_t)(e->total - e->given);
	if (cut > n)
		cut = n;
	for (uint32_t i = 0; i < n; i++)
		buf[i] = pat(e->given + i, dir);
	iov[0] = (struct iovec){ buf, cut };
	iov[1] = (struct iovec){ buf + cut, n - cut };
	got = smcr_conn_send(&e->c, iov, 2);
	if (got == -EAGAIN)
		return;
	CHECK(got >= 0);
	if (got > 0)
		e->given += (uint64_t)got;
}

static void take(struct end *e, int dir, bool peek_first)
{
	uint8_t buf[2 * RMB];
	struct iovec iov = { buf, 1 + rnd(sizeof(buf) - 1) };
	ssize_t got;

	if (peek_first) {
		got = smcr_conn_recv(&e->c, &iov, 1, true);
		CHECK(got >= 0);
	}
	got = smcr_conn_recv(&e->c, &iov, 1, false);
	CHECK(got >= 0);
	for (ssize_t i = 0; i < got && !e->bad; i++)
		if (buf[i] != pat(e->read + (uint64_t)i, dir)) {
			unit_fail(__FILE__, __LINE__, "byte %llu of direction %d is wrong",
				  (unsigned long long)(e->read + (uint64_t)i), dir);
			e->bad = true;
		}
	if (got > 0)
		e->read += (uint64_t)got;
}

static void pair(struct end *a, struct end *b, struct flink *ab, struct flink *ba)
{
	memset(ab, 0, sizeof(*ab));
	memset(ba, 0, sizeof(*ba));
	ab->from = a, ab->to = b;
	ba->from = b, ba->to = a;
	a->out = ab;
	b->out = ba;
}

static void ends_init(struct end *a, struct end *b, struct flink *ab, struct flink *ba,
		      uint64_t a_total, uint64_t b_total)
{
	memset(a, 0, sizeof(*a));
	memset(b, 0, sizeof(*b));
	pair(a, b, ab, ba);
	smcr_conn_init(&a->c, &fops, ab, a->sndbuf, SNDBUF, a->rmb, RMB, RMB, 0xa, 0xb);
	smcr_conn_init(&b->c, &fops, ba, b->sndbuf, SNDBUF, b->rmb, RMB, RMB, 0xb, 0xa);
	a->total = a_total;
	b->total = b_total;
	nstale[0] = nstale[1] = 0;
	if (inside_ok) {
		/* said as the transport says them, before the first byte; the CDCs go at once */
		CHECK_INT(smcr_conn_set_soft(&a->c, CDC_SOFT_BACK_OK | CDC_SOFT_DATA_OK, 0), 0);
		CHECK_INT(smcr_conn_set_soft(&b->c, CDC_SOFT_BACK_OK | CDC_SOFT_DATA_OK, 0), 0);
		CHECK_INT(deliver(ab), 1);
		CHECK_INT(deliver(ba), 1);
		CHECK_INT(take_late(ab) + take_late(ba), late_rx ? 2 : 0);
	}
}

/* The link dies: a random part of what was posted is executed, the rest and some completions are lost. */
static void kill_link(struct flink *l)
{
	int keep = (int)rnd((uint32_t)l->n + 1);

	for (int i = 0; i < keep; i++)
		CHECK(deliver(l) >= 0);
	lost_ops += l->n;
	l->n = l->held = 0;
	l->ndone = (int)rnd((uint32_t)l->ndone + 1);
	l->down = true;
}

static bool finished(const struct end *a, const struct end *b)
{
	return a->read == b->total && b->read == a->total &&
	       (smcr_conn_peer_state(&a->c) & CDC_CF_DONE_WRITING) &&
	       (smcr_conn_peer_state(&b->c) & CDC_CF_DONE_WRITING);
}

static void keep_stale(const struct flink *l, int e)
{
	for (int i = 0; i < l->nrx && nstale[e] < RXQ; i++)
		stale[e][nstale[e]++] = l->rxq[i];
}

/* The links die with part of their work: the ends go on over new ones. */
static void fail_over(struct end *a, struct end *b, struct flink *ab2, struct flink *ba2)
{
	kill_link(a->out);
	kill_link(b->out);
	/* its SENDs the receiver did not take: taken later, between the new link's, or never */
	if (rnd(3))
		keep_stale(a->out, 1);
	if (rnd(3))
		keep_stale(b->out, 0);
	a->out->nrx = b->out->nrx = 0;
	/* what a dead link still completes is lost with it */
	pair(a, b, ab2, ba2);
	CHECK_INT(smcr_conn_switch(&a->c, ab2), 0);
	CHECK_INT(smcr_conn_switch(&b->c, ba2), 0);
}

/* A random run's step k of 4 to 7, the links' (deliver, complete): false once an end failed. */
static bool link_step(struct end *a, struct end *b, uint32_t k)
{
	if (late_rx && rnd(2)) {
		/* the receivers take what waits in their queues, the dead links' too */
		switch (k) {
		case 4: CHECK(take_late(a->out) >= 0); break;
		case 5: CHECK(take_late(b->out) >= 0); break;
		case 6: CHECK(take_stale(b, 1) >= 0); break;
		default: CHECK(take_stale(a, 0) >= 0); break;
		}
		k = 4 + rnd(4);
	}
	switch (k) {
	case 4: CHECK(deliver(a->out) >= 0); break;
	case 5: CHECK(deliver(b->out) >= 0); break;
	case 6: CHECK(complete(a->out) >= 0); break;
	default: CHECK(complete(b->out) >= 0); break;
	}
	CHECK_INT(smcr_conn_error(&a->c), 0);
	CHECK_INT(smcr_conn_error(&b->c), 0);
	return !smcr_conn_error(&a->c) && !smcr_conn_error(&b->c);
}

/* Random steps until both streams ended; failover_at: the step where the links die (0: never). */
static void run(uint64_t seed, uint64_t a_total, uint64_t b_total, long failover_at)
{
	static struct end a, b;
	static struct flink ab, ba, ab2, ba2;
	long step;

	rng = seed | 1;
	ends_init(&a, &b, &ab, &ba, a_total, b_total);
	a.c.write_max = b.c.write_max = write_cap;
	for (step = 1; step < 400000 && !finished(&a, &b) && !a.bad && !b.bad; step++) {
		uint32_t k = rnd(8);

		if (step == failover_at)
			fail_over(&a, &b, &ab2, &ba2);
		if (k == 0)
			give(&a, 0);
		else if (k == 1)
			give(&b, 1);
		else if (k == 2)
			take(&b, 0, rnd(2));
		else if (k == 3)
			take(&a, 1, rnd(2));
		else if (!link_step(&a, &b, k))
			break;
	}
	if (!finished(&a, &b))
		unit_fail(__FILE__, __LINE__,
			  "seed %llu: stuck after %ld steps: a gave %llu read %llu, b gave %llu read %llu",
			  (unsigned long long)seed, step, (unsigned long long)a.given,
			  (unsigned long long)a.read, (unsigned long long)b.given, (unsigned long long)b.read);
}

TEST(smcr_conn_duplex_random)
{
	for (uint64_t seed = 1; seed <= 40; seed++)
		run(seed, 200000 + seed * 977, 150000 + seed * 331, 0);
}

TEST(smcr_conn_failover_every_byte_once)
{
	lost_ops = 0;
	for (uint64_t seed = 1; seed <= 200; seed++)
		run(seed * 7919, 600000, 450000, 3 + (long)(seed * 37) % 300);
	/* the links died with work on them, or the test proves nothing */
	CHECK(lost_ops > 100);
}

/* Links that take writes of at most a few bytes (rxe's in-flight limit): the same streams, in more writes. */
TEST(smcr_conn_writes_capped)
{
	lost_ops = 0;
	for (uint64_t seed = 1; seed <= 60; seed++) {
		write_cap = 1 + (uint32_t)(seed * 977 % 9000);
		run(seed * 104729, 150000, 120000, seed % 2 ? 5 + (long)(seed * 53) % 400 : 0);
	}
	write_cap = 0;
	CHECK(lost_ops > 10);
}

/* Links that ring once for the writes and the CDC after them: no write may stay held (the streams end). */
TEST(smcr_conn_writes_held_for_one_doorbell)
{
	holding = true;
	for (uint64_t seed = 1; seed <= 40; seed++) {
		write_cap = seed % 3 ? 512 + (uint32_t)(seed * 577 % 5000) : 0;
		run(seed * 6151, 180000, 90000, seed % 4 ? 0 : 7 + (long)(seed * 31) % 200);
	}
	write_cap = 0;
	holding = false;
}

/* Small pushes go inside their CDCs, big ones by RDMA WRITE: every byte once, in order, failovers too. */
TEST(smcr_conn_data_in_cdcs_every_byte_once)
{
	inside_ok = small_gives = true;
	inside_cdcs = lost_ops = 0;
	for (uint64_t seed = 1; seed <= 200; seed++) {
		write_cap = seed % 4 ? 0 : 300;
		holding = seed % 3 == 0;
		refuse_some = seed % 5 == 1;
		run(seed * 15485863, 60000 + seed * 7, 40000, seed % 2 ? 3 + (long)(seed * 29) % 3000 : 0);
	}
	write_cap = 0;
	holding = inside_ok = small_gives = refuse_some = false;
	/* bytes went inside CDCs and links died with work on them, or the test proves little */
	CHECK(inside_cdcs > 5000);
	CHECK(lost_ops > 100);
}

/*
 * A delivered SEND is in the receiver's queue, not yet taken: after a
 * failover the dead link's CDCs are taken after the new link's, or never.
 * Bytes that went inside them are sent again from the peer's consumer cursor.
 */
TEST(smcr_conn_data_in_cdcs_taken_late)
{
	inside_ok = small_gives = late_rx = true;
	inside_cdcs = lost_ops = 0;
	for (uint64_t seed = 1; seed <= 300; seed++) {
		refuse_some = seed % 2;
		run(seed * 2147483647, 30000 + seed * 3, 20000 + seed, 3 + (long)(seed * 41) % 2000);
	}
	inside_ok = small_gives = late_rx = refuse_some = false;
	CHECK(inside_cdcs > 5000);
	CHECK(lost_ops > 100);
}

/* A small push is one SEND and no write; a bigger one, or to a peer that did not say DATA_OK, a write. */
TEST(smcr_conn_data_in_a_cdc_without_a_write)
{
	static struct end a, b;
	static struct flink ab, ba;
	uint8_t x[SMCR_CDC_DATA_MAX + 1], y[2 * SMCR_CDC_DATA_MAX];
	struct iovec iov = { x, 14 }, in = { y, sizeof(y) };

	for (size_t i = 0; i < sizeof(x); i++)
		x[i] = (uint8_t)(i * 7 + 1);
	/* b never said DATA_OK: a writes */
	ends_init(&a, &b, &ab, &ba, 0, 0);
	CHECK_INT(smcr_conn_set_soft(&a.c, CDC_SOFT_BACK_OK | CDC_SOFT_DATA_OK, 0), 0);
	CHECK_INT(smcr_conn_set_soft(&b.c, CDC_SOFT_BACK_OK, 0), 0);
	drain(&ab);
	drain(&ba);
	CHECK_INT(smcr_conn_send(&a.c, &iov, 1), 14);
	CHECK_INT(ab.n, 2);
	CHECK_INT(ab.q[ab.head].kind, OP_WRITE);
	/* b takes them, but a does not keep its bytes until consumed: a write still */
	ends_init(&a, &b, &ab, &ba, 0, 0);
	CHECK_INT(smcr_conn_set_soft(&b.c, CDC_SOFT_BACK_OK | CDC_SOFT_DATA_OK, 0), 0);
	drain(&ba);
	CHECK_INT(smcr_conn_send(&a.c, &iov, 1), 14);
	CHECK_INT(ab.n, 2);
	CHECK_INT(ab.q[ab.head].kind, OP_WRITE);

	inside_ok = true;
	ends_init(&a, &b, &ab, &ba, 0, 0);
	inside_ok = false;
	CHECK_INT(smcr_conn_send(&a.c, &iov, 1), 14);
	CHECK_INT(ab.n, 1);
	CHECK_INT(ab.q[ab.head].kind, OP_SEND);
	CHECK_INT(ab.q[ab.head].len, SMCR_CDC_LEN + 14);
	CHECK_INT(deliver(&ab), 1);
	CHECK_INT(smcr_conn_recv(&b.c, &in, 1, false), 14);
	CHECK(!memcmp(y, x, 14));
	/* the most a CDC holds, then one byte more: a write and a plain CDC */
	iov.iov_len = SMCR_CDC_DATA_MAX;
	CHECK_INT(smcr_conn_send(&a.c, &iov, 1), SMCR_CDC_DATA_MAX);
	CHECK_INT(ab.n, 1);
	iov.iov_len = SMCR_CDC_DATA_MAX + 1;
	CHECK_INT(smcr_conn_send(&a.c, &iov, 1), SMCR_CDC_DATA_MAX + 1);
	CHECK_INT(ab.n, 3);
	CHECK_INT(ab.q[(ab.head + 1) % QCAP].kind, OP_WRITE);
	CHECK_INT(ab.q[(ab.head + 2) % QCAP].len, SMCR_CDC_LEN);
	drain(&ab);
	CHECK_INT(smcr_conn_recv(&b.c, &in, 1, false), sizeof(y));
	CHECK(!memcmp(y, x, SMCR_CDC_DATA_MAX) && !memcmp(y + SMCR_CDC_DATA_MAX, x, SMCR_CDC_DATA_MAX));
	/* a full send queue: the bytes wait inside the CDC that is due, and go with it */
	while (ab.n < QCAP)
		CHECK_INT(post(&ab, &(struct op){ .kind = OP_WRITE }), 0);
	iov.iov_len = 5;
	CHECK_INT(smcr_conn_send(&a.c, &iov, 1), 5);
	CHECK(a.c.cdc_due);
	ab.n = 0;
	CHECK_INT(smcr_conn_push(&a.c), 0);
	CHECK_INT(ab.n, 1);
	CHECK_INT(ab.q[ab.head].len, SMCR_CDC_LEN + 5);
}

/*
 * A failover after bytes went inside a CDC, a lap into the stream: the
 * resend from the peer's consumer cursor starts a lap behind the
 * receiver's producer cursor (wrap 0 against wrap 1), and the new link
 * takes the CDC but not yet the writes.  The receiver ignores the cursor
 * behind its own (Linux's rule would take wrap 0 as the next lap and fail).
 */
TEST(smcr_conn_data_in_a_cdc_then_failover_a_lap_in)
{
	static struct end a, b;
	static struct flink ab, ba, ab2, ba2;
	static uint8_t x[RMB], y[RMB];
	struct iovec iov = { x, 16000 }, in = { y, sizeof(y) };

	for (size_t i = 0; i < sizeof(x); i++)
		x[i] = pat(i, 0);
	inside_ok = true;
	ends_init(&a, &b, &ab, &ba, 0, 0);
	inside_ok = false;
	CHECK_INT(smcr_conn_send(&a.c, &iov, 1), 16000);
	drain(&ab);
	CHECK_INT(smcr_conn_recv(&b.c, &in, 1, false), 16000);
	drain(&ba);
	CHECK(a.c.peer_cons == 16000);
	/* read but not told: less than the window rule's step */
	iov = (struct iovec){ x + 16000, 384 };
	CHECK_INT(smcr_conn_send(&a.c, &iov, 1), 384);
	iov = (struct iovec){ x, 616 };
	CHECK_INT(smcr_conn_send(&a.c, &iov, 1), 616);
	drain(&ab);
	CHECK_INT(smcr_conn_recv(&b.c, &in, 1, false), 1000);
	drain(&ba);
	CHECK(a.c.peer_cons == 16000);
	iov = (struct iovec){ x + 616, 30 };
	CHECK_INT(smcr_conn_send(&a.c, &iov, 1), 30);
	CHECK_INT(ab.q[ab.head].len, SMCR_CDC_LEN + 30);
	drain(&ab);
	CHECK_INT(b.c.peer_prod_curs.wrap, 1);
	pair(&a, &b, &ab2, &ba2);
	refuse_writes = true;
	CHECK_INT(smcr_conn_switch(&a.c, &ab2), 0);
	CHECK_INT(smcr_conn_switch(&b.c, &ba2), 0);
	CHECK_INT(ab2.n, 1);
	CHECK_INT(deliver(&ab2), 1);
	CHECK_INT(smcr_conn_error(&b.c), 0);
	refuse_writes = false;
	CHECK_INT(smcr_conn_push(&a.c), 0);
	drain(&ab2);
	drain(&ba2);
	CHECK_INT(smcr_conn_error(&a.c), 0);
	CHECK_INT(smcr_conn_error(&b.c), 0);
	CHECK_INT(smcr_conn_recv(&b.c, &in, 1, false), 30);
	CHECK(!memcmp(y, x + 616, 30));
}

/* Bytes inside a CDC to an end that never said DATA_OK; more bytes inside than the cursor makes new. */
TEST(smcr_conn_data_in_a_cdc_hostile)
{
	static struct end a, b;
	static struct flink ab, ba;
	uint8_t m[SMCR_CDC_LEN + SMCR_CDC_DATA_MAX], data[SMCR_CDC_DATA_MAX], y[64];
	struct smcr_cdc cdc = { .seqno = 1, .token = 0xa, .prod = { 0, 10 },
				.soft_flags = CDC_SOFT_DATA, .data = data, .data_len = 10 };
	struct iovec in = { y, sizeof(y) };
	int len;

	memset(data, 0x55, sizeof(data));
	ends_init(&a, &b, &ab, &ba, 0, 0);
	len = smcr_cdc_encode(&cdc, m, sizeof(m));
	CHECK_INT(smcr_conn_rx(&a.c, m, (size_t)len), -EPROTO);

	ends_init(&a, &b, &ab, &ba, 0, 0);
	CHECK_INT(smcr_conn_set_soft(&a.c, CDC_SOFT_DATA_OK, 0), 0);
	memset(a.rmb, 0xee, 64);
	/* 30 bytes inside, 10 new: the last 10 go in, ending at the cursor */
	for (int i = 0; i < 30; i++)
		data[i] = (uint8_t)i;
	cdc.data_len = 30;
	len = smcr_cdc_encode(&cdc, m, sizeof(m));
	CHECK_INT(smcr_conn_rx(&a.c, m, (size_t)len), SMCR_RX_DATA);
	CHECK_INT(smcr_conn_recv(&a.c, &in, 1, false), 10);
	CHECK_INT(y[0], 20);
	CHECK_INT(y[9], 29);
	CHECK_INT(a.rmb[10], 0xee);
	/* the same again: nothing new, nothing written */
	cdc.seqno = 2;
	len = smcr_cdc_encode(&cdc, m, sizeof(m));
	memset(a.rmb, 0xee, 64);
	CHECK_INT(smcr_conn_rx(&a.c, m, (size_t)len), 0);
	CHECK_INT(a.rmb[0] & a.rmb[9] & a.rmb[19], 0xee);
	/* its flag does not stick: the next CDC without it carries no bytes */
	CHECK_INT(smcr_conn_peer_soft(&a.c, &(uint64_t){ 0 }), 0);
}

TEST(smcr_conn_one_way_and_empty)
{
	run(5, 500000, 0, 0);
	run(6, 0, 0, 0);
	run(7, 1, 1, 0);
}

/* A peer's CDC, as its smcr_conn would send it. */
static void cdc(uint8_t *buf, uint16_t seq, uint32_t token, struct smcr_curs prod, struct smcr_curs cons)
{
	struct smcr_cdc m = { .seqno = seq, .token = token, .prod = prod, .cons = cons };

	CHECK_INT(smcr_cdc_encode(&m, buf, SMCR_CDC_LEN), SMCR_CDC_LEN);
}

TEST(smcr_conn_hostile_peer)
{
	static struct end a, b;
	static struct flink ab, ba;
	uint8_t m[SMCR_CDC_LEN];
	uint8_t x[100] = { 0 };
	struct iovec iov = { x, sizeof(x) };

	/* more produced than our RMB has room for */
	ends_init(&a, &b, &ab, &ba, 0, 0);
	cdc(m, 1, 0xa, (struct smcr_curs){ 1, 1 }, (struct smcr_curs){ 0, 0 });
	CHECK_INT(smcr_conn_rx(&a.c, m, sizeof(m)), -EPROTO);
	CHECK_INT(smcr_conn_send(&a.c, &iov, 1), -EPROTO);

	/* a consumer cursor past what we ever sent */
	ends_init(&a, &b, &ab, &ba, 0, 0);
	CHECK_INT(smcr_conn_send(&a.c, &iov, 1), 100);
	cdc(m, 1, 0xa, (struct smcr_curs){ 0, 0 }, (struct smcr_curs){ 0, 101 });
	CHECK_INT(smcr_conn_rx(&a.c, m, sizeof(m)), -EPROTO);

	/* a cursor count outside the ring */
	ends_init(&a, &b, &ab, &ba, 0, 0);
	cdc(m, 1, 0xa, (struct smcr_curs){ 0, RMB }, (struct smcr_curs){ 0, 0 });
	CHECK_INT(smcr_conn_rx(&a.c, m, sizeof(m)), -EPROTO);

	/* another connection's token: dropped; an old sequence number: dropped */
	ends_init(&a, &b, &ab, &ba, 0, 0);
	cdc(m, 1, 0x77, (struct smcr_curs){ 0, 10 }, (struct smcr_curs){ 0, 0 });
	CHECK_INT(smcr_conn_rx(&a.c, m, sizeof(m)), 0);
	CHECK_INT(smcr_conn_readable(&a.c), 0);
	cdc(m, 5, 0xa, (struct smcr_curs){ 0, 10 }, (struct smcr_curs){ 0, 0 });
	CHECK_INT(smcr_conn_rx(&a.c, m, sizeof(m)), SMCR_RX_DATA);
	cdc(m, 4, 0xa, (struct smcr_curs){ 0, 20 }, (struct smcr_curs){ 0, 0 });
	CHECK_INT(smcr_conn_rx(&a.c, m, sizeof(m)), 0);
	CHECK_INT(smcr_conn_readable(&a.c), 10);
	/* a cursor that goes back is not taken */
	cdc(m, 6, 0xa, (struct smcr_curs){ 0, 5 }, (struct smcr_curs){ 0, 0 });
	CHECK_INT(smcr_conn_rx(&a.c, m, sizeof(m)), 0);
	CHECK_INT(smcr_conn_readable(&a.c), 10);
	/* not a CDC at all */
	m[0] = 0x21;
	CHECK_INT(smcr_conn_rx(&a.c, m, sizeof(m)), -EPROTO);
}

TEST(smcr_conn_close_after_the_data)
{
	static struct end a, b;
	static struct flink ab, ba;
	uint8_t x[3 * RMB];
	struct iovec iov = { x, SNDBUF };

	ends_init(&a, &b, &ab, &ba, 0, 0);
	memset(x, 7, sizeof(x));
	CHECK_INT(smcr_conn_send(&a.c, &iov, 1), SNDBUF);
	CHECK_INT(smcr_conn_send(&a.c, &iov, 1), -EAGAIN);
	CHECK_INT(smcr_conn_set_state(&a.c, CDC_CF_CLOSED), 0);
	CHECK_INT(smcr_conn_send(&a.c, &iov, 1), -EPIPE);
	while (ab.n)
		CHECK(deliver(&ab) >= 0);
	/* the peer saw every byte and the close with the last one */
	CHECK_INT(smcr_conn_readable(&b.c), SNDBUF);
	CHECK(smcr_conn_peer_state(&b.c) & CDC_CF_CLOSED);
	iov.iov_len = sizeof(x);
	CHECK_INT(smcr_conn_recv(&b.c, &iov, 1, false), SNDBUF);
	CHECK_INT(smcr_conn_recv(&b.c, &iov, 1, false), 0);
}

/*
 * The peer's process ended without a word and the links are lost: every
 * byte it sent is read, then the end of its stream, whether or not it
 * read ours (its cursor comes lazily); an abort it said stays one.
 */
TEST(smcr_conn_peer_vanished_as_its_close)
{
	static struct end a, b;
	static struct flink ab, ba;
	uint8_t x[RMB];
	struct iovec iov = { x, 100 };

	ends_init(&a, &b, &ab, &ba, 0, 0);
	memset(x, 7, sizeof(x));
	CHECK_INT(smcr_conn_send(&b.c, &iov, 1), 100);
	while (ba.n)
		CHECK(deliver(&ba) >= 0);
	smcr_conn_peer_vanished(&a.c);
	a.c.err = -ECONNRESET;          /* the group's word for its links lost */
	CHECK(smcr_conn_lost_after_end(&a.c));
	iov.iov_len = sizeof(x);
	CHECK_INT(smcr_conn_recv(&a.c, &iov, 1, false), 100);
	CHECK_INT(smcr_conn_recv(&a.c, &iov, 1, false), 0);
	/* bytes of ours the peer never read, and its own: its bytes, then the end */
	ends_init(&a, &b, &ab, &ba, 0, 0);
	iov.iov_len = 100;
	CHECK_INT(smcr_conn_send(&a.c, &iov, 1), 100);
	CHECK_INT(smcr_conn_send(&b.c, &iov, 1), 100);
	while (ab.n || ba.n) {
		if (ab.n)
			CHECK(deliver(&ab) >= 0);
		if (ba.n)
			CHECK(deliver(&ba) >= 0);
	}
	smcr_conn_peer_vanished(&a.c);
	a.c.err = -ECONNRESET;
	CHECK(smcr_conn_lost_after_end(&a.c));
	iov.iov_len = sizeof(x);
	CHECK_INT(smcr_conn_recv(&a.c, &iov, 1, false), 100);
	CHECK_INT(smcr_conn_recv(&a.c, &iov, 1, false), 0);
	/* a peer that said ABORT before: a reset */
	ends_init(&a, &b, &ab, &ba, 0, 0);
	CHECK_INT(smcr_conn_set_state(&b.c, CDC_CF_ABORT), 0);
	while (ba.n)
		CHECK(deliver(&ba) >= 0);
	smcr_conn_peer_vanished(&a.c);
	a.c.err = -ECONNRESET;
	CHECK(!smcr_conn_lost_after_end(&a.c));
	CHECK_INT(smcr_conn_recv(&a.c, &iov, 1, false), -ECONNRESET);
}

/* Soft SMC-R's cut-over words ride in every CDC; a fence said twice must not change. */
TEST(smcr_conn_soft_words)
{
	static struct end a, b;
	static struct flink ab, ba;
	uint8_t m[SMCR_CDC_LEN];
	struct smcr_cdc cdc;
	uint64_t f = 1;

	ends_init(&a, &b, &ab, &ba, 0, 0);
	CHECK_INT(smcr_conn_peer_soft(&b.c, &f), 0);
	CHECK_INT(f, 0);
	CHECK_INT(smcr_conn_set_soft(&a.c, CDC_SOFT_ATTACHED, 0), 0);
	CHECK_INT(smcr_conn_set_soft(&a.c, CDC_SOFT_FENCE, 0x123456789aULL), 0);
	/* a fence is said once: a later one changes nothing */
	CHECK_INT(smcr_conn_set_soft(&a.c, CDC_SOFT_FENCE, 7), 0);
	CHECK_INT(deliver(&ab), 1);
	CHECK_INT(smcr_conn_peer_soft(&b.c, &f), CDC_SOFT_ATTACHED);
	CHECK_INT(deliver(&ab), 1);
	CHECK_INT(smcr_conn_peer_soft(&b.c, &f), CDC_SOFT_ATTACHED | CDC_SOFT_FENCE);
	CHECK(f == 0x123456789aULL);
	CHECK_INT(deliver(&ab), 1);
	CHECK(f == 0x123456789aULL);
	/* the words stay in the CDCs that carry data */
	{
		uint8_t x[10] = { 0 };
		struct iovec iov = { x, sizeof(x) };

		CHECK_INT(smcr_conn_send(&a.c, &iov, 1), 10);
	}
	while (ab.n)
		CHECK(deliver(&ab) >= 0);
	CHECK_INT(smcr_conn_peer_soft(&b.c, &f), CDC_SOFT_ATTACHED | CDC_SOFT_FENCE);
	CHECK_INT(smcr_conn_readable(&b.c), 10);
	/* a peer that moves its fence lies about where its TCP bytes end */
	memset(&cdc, 0, sizeof(cdc));
	cdc.seqno = 100;
	cdc.token = 0xb;
	cdc.prod.count = 10;
	cdc.soft_flags = CDC_SOFT_FENCE;
	cdc.soft_fence = 0x123456789bULL;
	smcr_cdc_encode(&cdc, m, sizeof(m));
	CHECK_INT(smcr_conn_rx(&b.c, m, sizeof(m)), -EPROTO);
}

/*
 * Back to TCP: an in-memory TCP stream per direction, indexed by stream
 * position (lo: where the writer's TCP bytes start after BACK).
 */
struct tcp {
	uint8_t *data;
	uint64_t lo, hi;
	bool open, fin;
};

static struct tcp tcp_of[2];    /* direction 0: a to b, 1: b to a */

static bool back_done(const struct end *e)
{
	return smcr_conn_back_state(&e->c) == (SMCR_BACK_SAID | SMCR_BACK_HEARD);
}

/* The writer of direction dir after BACK: the bytes its reader did not consume, then new ones, by TCP. */
static void give_tcp(struct end *e, int dir)
{
	struct tcp *t = &tcp_of[dir];
	struct iovec iov[2];
	ssize_t n = smcr_conn_back_pending(&e->c, iov);
	uint32_t more;

	CHECK(n >= 0);
	if (!t->open) {
		t->open = true;
		t->lo = t->hi = e->given - (uint64_t)n;
	}
	if (n > 0) {
		/* a random part of them, as a short write would */
		size_t part = 1 + rnd((uint32_t)n), a = part < iov[0].iov_len ? part : iov[0].iov_len;

		memcpy(t->data + t->hi, iov[0].iov_base, a);
		memcpy(t->data + t->hi + a, iov[1].iov_base, part - a);
		t->hi += part;
		smcr_conn_back_sent(&e->c, part);
		return;
	}
	if (e->given < e->total) {
		more = 1 + rnd(3 * SNDBUF);
		if (more > e->total - e->given)
			more = (uint32_t)(e->total - e->given);
		for (uint32_t i = 0; i < more; i++)
			t->data[e->given + i] = pat(e->given + i, dir);
		e->given += more;
		t->hi = e->given;
	} else if (!t->fin && !rnd(4)) {
		t->fin = true;
		e->shut = true;
	}
}

static void take_tcp(struct end *e, int dir)
{
	struct tcp *t = &tcp_of[dir];
	uint64_t n;

	if (!t->open || t->hi <= e->read)
		return;
	/* the writer's TCP bytes start where this reader stopped reading its RMB */
	if (t->lo > e->read) {
		unit_fail(__FILE__, __LINE__, "direction %d: TCP from %llu, read up to %llu", dir,
			  (unsigned long long)t->lo, (unsigned long long)e->read);
		e->bad = true;
		return;
	}
	n = 1 + rnd((uint32_t)(t->hi - e->read));
	for (uint64_t i = 0; i < n && !e->bad; i++)
		if (t->data[e->read + i] != pat(e->read + i, dir)) {
			unit_fail(__FILE__, __LINE__, "byte %llu of direction %d by TCP is wrong",
				  (unsigned long long)(e->read + i), dir);
			e->bad = true;
		}
	e->read += n;
}

static void step_end(struct end *e, int dir, bool giving)
{
	/* a writer ends its stream by TCP too (shutdown reaches both): so after BACK */
	if (giving) {
		if (back_done(e))
			give_tcp(e, dir);
		else if (!(smcr_conn_back_state(&e->c) & SMCR_BACK_SAID)) {
			bool was_shut = e->shut;

			give(e, dir);
			if (e->shut && !was_shut)
				tcp_of[dir].fin = true;
		}
	} else {
		if (smcr_conn_back_state(&e->c) & SMCR_BACK_SAID)
			take_tcp(e, 1 - dir);
		else
			take(e, 1 - dir, rnd(2));
	}
}

static bool stream_ended(const struct end *w, const struct end *r, int dir)
{
	if (r->read != w->total)
		return false;
	if (smcr_conn_back_state(&r->c) & SMCR_BACK_SAID)
		return tcp_of[dir].fin;
	return smcr_conn_peer_state(&r->c) & CDC_CF_DONE_WRITING;
}

/*
 * who: 1 a says BACK, 2 b, 3 both at once, from step back_at on (until it is
 * taken: the peer's BACK_OK may not have arrived); failover_at as in run().
 */
static void run_back(uint64_t seed, uint64_t a_total, uint64_t b_total, long back_at, int who,
		     long failover_at)
{
	static struct end a, b;
	static struct flink ab, ba, ab2, ba2;
	bool a_asked = !(who & 1), b_asked = !(who & 2);
	long step;

	rng = seed | 1;
	ends_init(&a, &b, &ab, &ba, a_total, b_total);
	a.c.write_max = b.c.write_max = write_cap;
	for (int d = 0; d < 2; d++) {
		free(tcp_of[d].data);
		tcp_of[d] = (struct tcp){ .data = malloc((d ? b_total : a_total) + 1) };
	}
	CHECK_INT(smcr_conn_set_soft(&a.c, CDC_SOFT_BACK_OK, 0), 0);
	CHECK_INT(smcr_conn_set_soft(&b.c, CDC_SOFT_BACK_OK, 0), 0);
	for (step = 1; step < 400000 && !a.bad && !b.bad; step++) {
		if (stream_ended(&a, &b, 0) && stream_ended(&b, &a, 1) && back_done(&a) && back_done(&b))
			break;
		uint32_t k = rnd(8);

		if (step == failover_at)
			fail_over(&a, &b, &ab2, &ba2);
		if (step >= back_at && !a_asked)
			a_asked = smcr_conn_back(&a.c) == 0;
		if (step >= back_at && !b_asked)
			b_asked = smcr_conn_back(&b.c) == 0;
		if (k < 4) {
			struct end *e = k == 0 || k == 3 ? &a : &b;

			step_end(e, e == &b, k < 2);
		} else if (!link_step(&a, &b, k)) {
			break;
		}
	}
	if (!back_done(&a) || !back_done(&b) || !stream_ended(&a, &b, 0) || !stream_ended(&b, &a, 1))
		unit_fail(__FILE__, __LINE__,
			  "seed %llu: stuck after %ld steps: back %u/%u, a gave %llu read %llu, b gave %llu read %llu",
			  (unsigned long long)seed, step, smcr_conn_back_state(&a.c), smcr_conn_back_state(&b.c),
			  (unsigned long long)a.given, (unsigned long long)a.read,
			  (unsigned long long)b.given, (unsigned long long)b.read);
}

/* Every byte once and in order, whichever end says BACK, whenever, across a failover. */
TEST(smcr_conn_back_every_byte_once)
{
	long rdma_bytes = 0;

	/* one that did not wait is reset (smcr_conn_back_abort_unread) */
	shut_read_only = true;
	for (uint64_t seed = 1; seed <= 300; seed++) {
		long back_at = 1 + (long)(seed * 131 % 3000);
		long failover_at = seed % 3 ? 0 : 2 + (long)(seed * 71 % 4000);

		write_cap = seed % 5 ? 0 : 700;
		run_back(seed * 48271, 120000 + seed * 13, seed % 7 ? 90000 : 0, back_at, 1 + (int)(seed % 3),
			 failover_at);
		rdma_bytes += (long)tcp_of[0].lo;
	}
	write_cap = 0;
	shut_read_only = false;
	for (int d = 0; d < 2; d++) {
		free(tcp_of[d].data);
		tcp_of[d].data = NULL;
	}
	/* BACK came after bytes went by RDMA, or the test proves little */
	CHECK(rdma_bytes > 1000000);
}

static void drain(struct flink *l)
{
	while (l->n > l->held)
		CHECK(deliver(l) >= 0);
	while (l->ndone)
		CHECK(complete(l) >= 0);
}

/*
 * With BACK_OK said, the send buffer is free only as the peer consumes, not
 * once delivered (so a writer asleep for room needs no send completion:
 * preload/smcr/engine.c's link_wants_sent()).
 */
TEST(smcr_conn_space_until_consumed)
{
	static struct end a, b;
	static struct flink ab, ba;
	static uint8_t x[SNDBUF];
	struct iovec iov = { x, SNDBUF };

	for (int keep = 0; keep < 2; keep++) {
		ends_init(&a, &b, &ab, &ba, 0, 0);
		CHECK(smcr_conn_room_on_delivery(&a.c));
		if (keep)
			CHECK_INT(smcr_conn_set_soft(&a.c, CDC_SOFT_BACK_OK, 0), 0);
		CHECK(smcr_conn_room_on_delivery(&a.c) == !keep);
		CHECK_INT(smcr_conn_send(&a.c, &iov, 1), SNDBUF);
		drain(&ab);
		CHECK_INT(smcr_conn_readable(&b.c), SNDBUF);
		CHECK_INT(smcr_conn_space(&a.c), keep ? 0 : SNDBUF);
		iov.iov_len = 3000;
		CHECK_INT(smcr_conn_recv(&b.c, &iov, 1, false), 3000);
		drain(&ba);
		CHECK_INT(smcr_conn_space(&a.c), keep ? 3000 : SNDBUF);
		iov.iov_len = SNDBUF;
	}
	/* the promise comes too late once bytes the peer did not consume were let go */
	ends_init(&a, &b, &ab, &ba, 0, 0);
	CHECK_INT(smcr_conn_send(&a.c, &iov, 1), SNDBUF);
	drain(&ab);
	CHECK_INT(smcr_conn_send(&a.c, &iov, 1), SNDBUF);
	CHECK_INT(smcr_conn_set_soft(&a.c, CDC_SOFT_BACK_OK, 0), -EINVAL);
	CHECK_INT(a.c.own_soft, 0);
}

/* Who may not say BACK, and what a wrong BACK costs. */
TEST(smcr_conn_back_refused)
{
	static struct end a, b;
	static struct flink ab, ba;
	uint8_t x[100] = { 0 };
	struct iovec iov = { x, sizeof(x) }, p[2];
	uint8_t m[SMCR_CDC_LEN];
	struct smcr_cdc cdc;

	/* before the peer's first CDC: not known yet (it says BACK_OK once attached), nothing sent */
	ends_init(&a, &b, &ab, &ba, 0, 0);
	CHECK_INT(smcr_conn_set_soft(&a.c, CDC_SOFT_BACK_OK, 0), 0);
	drain(&ab);
	CHECK_INT(smcr_conn_back(&a.c), -EAGAIN);
	CHECK_INT(smcr_conn_back_state(&a.c), 0);
	CHECK_INT(ab.n, 0);
	/* a peer whose CDCs never say BACK_OK (an older library): refused, nothing sent */
	CHECK_INT(smcr_conn_send(&b.c, &iov, 1), 100);
	drain(&ba);
	CHECK_INT(smcr_conn_back(&a.c), -EOPNOTSUPP);
	CHECK_INT(smcr_conn_back_state(&a.c), 0);
	CHECK_INT(ab.n, 0);
	CHECK_INT(smcr_conn_recv(&a.c, &iov, 1, false), 100);
	drain(&ab);
	/* nor one that said it while we did not */
	CHECK_INT(smcr_conn_back(&b.c), -EOPNOTSUPP);
	/* BACK only through smcr_conn_back() */
	CHECK_INT(smcr_conn_set_soft(&b.c, CDC_SOFT_BACK, 0), 0);
	CHECK_INT(b.c.own_soft, 0);

	/* the peer ended writing with bytes we did not read: they cannot follow */
	ends_init(&a, &b, &ab, &ba, 0, 0);
	CHECK_INT(smcr_conn_set_soft(&a.c, CDC_SOFT_BACK_OK, 0), 0);
	CHECK_INT(smcr_conn_set_soft(&b.c, CDC_SOFT_BACK_OK, 0), 0);
	CHECK_INT(smcr_conn_send(&a.c, &iov, 1), 100);
	CHECK_INT(smcr_conn_set_state(&a.c, CDC_CF_DONE_WRITING), 0);
	drain(&ab);
	drain(&ba);
	CHECK_INT(smcr_conn_back(&b.c), -EOPNOTSUPP);
	/*
	 * nor may the writer, whose TCP stream ended too: it asks the
	 * reader's cursor once (it may have read more than it told), and
	 * the answer says no; BACK is not said
	 */
	CHECK_INT(smcr_conn_back(&a.c), -EAGAIN);
	CHECK_INT(smcr_conn_back(&a.c), -EAGAIN);
	CHECK_INT(ab.n, 1);
	CHECK_INT(smcr_cdc_decode(ab.q[ab.head].msg, SMCR_CDC_LEN, &cdc), 0);
	CHECK(cdc.prod_flags & CDC_PF_CONS_UPD_REQ);
	drain(&ab);
	drain(&ba);
	/* an answer may cross the question: asked again, SMCR_CONS_ASKS answers in all */
	for (int i = 1; i < SMCR_CONS_ASKS; i++) {
		CHECK_INT(smcr_conn_back(&a.c), -EAGAIN);
		CHECK_INT(ab.n, 1);
		drain(&ab);
		drain(&ba);
	}
	CHECK_INT(smcr_conn_back(&a.c), -EOPNOTSUPP);
	CHECK_INT(smcr_conn_back_state(&a.c), 0);
	CHECK_INT(smcr_conn_back_state(&b.c), 0);
	CHECK_INT(ab.n, 0);
	/* read, it may */
	CHECK_INT(smcr_conn_recv(&b.c, &iov, 1, false), 100);
	CHECK_INT(smcr_conn_back(&b.c), 0);
	CHECK_INT(smcr_conn_back(&b.c), 0);
	CHECK_INT(smcr_conn_back_state(&b.c), SMCR_BACK_SAID);
	CHECK_INT(smcr_conn_recv(&b.c, &iov, 1, false), -EXDEV);
	CHECK_INT(smcr_conn_send(&b.c, &iov, 1), -EXDEV);
	CHECK_INT(smcr_conn_back_pending(&b.c, p), -EAGAIN);
	drain(&ba);
	CHECK_INT(smcr_conn_back_state(&a.c), SMCR_BACK_SAID | SMCR_BACK_HEARD);
	CHECK_INT(smcr_conn_back_pending(&a.c, p), 0);
	drain(&ab);
	CHECK_INT(smcr_conn_back_state(&b.c), SMCR_BACK_SAID | SMCR_BACK_HEARD);
	CHECK_INT(smcr_conn_error(&a.c), 0);
	CHECK_INT(smcr_conn_error(&b.c), 0);
	/* after BACK the peer's consumer cursor is final: one that moves lies */
	memset(&cdc, 0, sizeof(cdc));
	cdc.seqno = 100;
	cdc.token = 0xb;
	cdc.cons.count = 1;
	cdc.soft_flags = CDC_SOFT_BACK_OK | CDC_SOFT_BACK;
	smcr_cdc_encode(&cdc, m, sizeof(m));
	CHECK_INT(smcr_conn_rx(&b.c, m, sizeof(m)), -EPROTO);

	/* a BACK from a peer we never promised to keep our bytes for */
	ends_init(&a, &b, &ab, &ba, 0, 0);
	memset(&cdc, 0, sizeof(cdc));
	cdc.seqno = 1;
	cdc.token = 0xa;
	cdc.soft_flags = CDC_SOFT_BACK_OK | CDC_SOFT_BACK;
	smcr_cdc_encode(&cdc, m, sizeof(m));
	CHECK_INT(smcr_conn_rx(&a.c, m, sizeof(m)), -EPROTO);
}

/* Both ends promise BACK_OK; a writes iov and ends writing, nothing delivered yet. */
static void ended_writer(struct end *a, struct end *b, struct flink *ab, struct flink *ba,
			 const struct iovec *iov)
{
	ends_init(a, b, ab, ba, 0, 0);
	CHECK_INT(smcr_conn_set_soft(&a->c, CDC_SOFT_BACK_OK, 0), 0);
	CHECK_INT(smcr_conn_set_soft(&b->c, CDC_SOFT_BACK_OK, 0), 0);
	drain(ab);
	drain(ba);
	CHECK_INT(smcr_conn_send(&a->c, iov, 1), (int)iov->iov_len);
	CHECK_INT(smcr_conn_set_state(&a->c, CDC_CF_DONE_WRITING), 0);
}

/*
 * A writer that ended writing after the reader consumed every byte without
 * telling (a small read leaves the cursor untold): BACK asks the cursor,
 * and goes once the answer shows all consumed.
 */
TEST(smcr_conn_back_after_shutdown_asks_the_cursor)
{
	static struct end a, b;
	static struct flink ab, ba;
	uint8_t x[100] = { 0 };
	struct iovec iov = { x, sizeof(x) };

	ended_writer(&a, &b, &ab, &ba, &iov);
	drain(&ab);
	CHECK_INT(smcr_conn_recv(&b.c, &iov, 1, false), 100);
	CHECK_INT(ba.n, 0);             /* the cursor is not told for so little */
	CHECK(a.c.peer_cons < a.c.tx_prep);
	CHECK_INT(smcr_conn_back(&a.c), -EAGAIN);
	CHECK_INT(smcr_conn_back_state(&a.c), 0);
	drain(&ab);
	CHECK_INT(ba.n, 1);             /* the answer */
	drain(&ba);
	CHECK(a.c.peer_cons == a.c.tx_prep);
	CHECK_INT(smcr_conn_back(&a.c), 0);
	drain(&ab);
	drain(&ba);
	CHECK_INT(smcr_conn_back_state(&a.c), SMCR_BACK_SAID | SMCR_BACK_HEARD);
	CHECK_INT(smcr_conn_back_state(&b.c), SMCR_BACK_SAID | SMCR_BACK_HEARD);
	CHECK_INT(smcr_conn_error(&a.c), 0);
	CHECK_INT(smcr_conn_error(&b.c), 0);
}

/* A writer that ended its TCP stream before the reader consumed its bytes cannot follow a BACK: both reset. */
TEST(smcr_conn_back_abort_unread)
{
	static struct end a, b;
	static struct flink ab, ba;
	uint8_t x[100] = { 0 };
	struct iovec iov = { x, sizeof(x) };

	ended_writer(&a, &b, &ab, &ba, &iov);
	/* b says BACK before the bytes and the end arrive */
	CHECK_INT(smcr_conn_back(&b.c), 0);
	drain(&ab);
	CHECK_INT(smcr_conn_recv(&b.c, &iov, 1, false), -EXDEV);
	CHECK_INT(deliver(&ba), -ECONNRESET);
	CHECK_INT(smcr_conn_error(&a.c), -ECONNRESET);
	CHECK_INT(deliver(&ab), 1);
	CHECK(smcr_conn_peer_state(&b.c) & CDC_CF_ABORT);
	CHECK_INT(smcr_conn_back(&a.c), -ECONNRESET);
}
