/* The soft SMC-D shared-memory rings (wire/dmb.c). */
#include "unit.h"
#include "wire/dmb.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Both ends of one region, mapped twice in this process. */
struct pair {
	int fd;
	struct dmb_conn a, b;
};

static bool pair_open(struct pair *p, size_t s0, size_t s1)
{
	p->fd = dmb_create(s0, s1);
	if (p->fd < 0)
		return false;
	if (dmb_map(p->fd, 0, &p->a) || dmb_map(p->fd, 1, &p->b)) {
		close(p->fd);
		return false;
	}
	return true;
}

static void pair_close(struct pair *p)
{
	dmb_unmap(&p->a);
	dmb_unmap(&p->b);
	close(p->fd);
}

static ssize_t put(struct dmb_conn *c, const void *buf, size_t len)
{
	struct iovec v = { (void *)buf, len };

	return dmb_produce(c, &v, 1, 0, NULL);
}

static ssize_t get(struct dmb_conn *c, void *buf, size_t len, unsigned flags)
{
	struct iovec v = { buf, len };

	return dmb_consume(c, &v, 1, flags, NULL);
}

/* The byte at stream offset i: offset-dependent, so loss or duplication shows. */
static uint8_t pat(uint64_t i)
{
	return (uint8_t)((i >> 8) ^ (i * 131) ^ (i >> 17));
}

TEST(dmb_size_rounding)
{
	uint32_t ring[2];
	uint64_t total;

	dmb_sizes(20000, 0, ring, &total);
	CHECK_INT(ring[0], 32768);
	CHECK_INT(ring[1], 16384);
	CHECK_INT(total, DMB_HDR_SIZE + 32768 + 16384);
	CHECK_INT(dmb_size_round(0), 16384);
	CHECK_INT(dmb_size_round(16384), 16384);
	CHECK_INT(dmb_size_round(16385), 32768);
	CHECK_INT(dmb_size_round(65536), 65536);
	CHECK_INT(dmb_size_round(100000), 131072);
	CHECK_INT(dmb_size_round(1 << 20), 1 << 20);
	CHECK_INT(dmb_size_round((1 << 20) + 1), 1 << 20);
	CHECK_INT(dmb_size_round((size_t)-1), 1 << 20);
	CHECK_INT(dmb_size_code(16384), 0);
	CHECK_INT(dmb_size_code(65536), 2);
	CHECK_INT(dmb_size_code(1 << 20), 6);
	CHECK_INT(dmb_code_size(4), 256 * 1024);
	CHECK_INT(dmb_code_size(15), 1 << 20);
}

TEST(dmb_create_map)
{
	struct pair p;

	CHECK(pair_open(&p, 20000, 64 * 1024));
	CHECK_INT(dmb_tx_size(&p.a), 32768);
	CHECK_INT(dmb_rx_size(&p.a), 65536);
	CHECK_INT(dmb_tx_size(&p.b), 65536);
	CHECK_INT(dmb_rx_size(&p.b), 32768);
	CHECK_INT(dmb_readable(&p.a), 0);
	CHECK_INT(dmb_space(&p.a), 32768);
	CHECK_INT(dmb_unread(&p.a), 0);
	CHECK_INT(fcntl(p.fd, F_GET_SEALS) & (F_SEAL_SHRINK | F_SEAL_GROW),
		  F_SEAL_SHRINK | F_SEAL_GROW);
	CHECK(fcntl(p.fd, F_GETFD) & FD_CLOEXEC);
	CHECK_INT(lseek(p.fd, 0, SEEK_END), 4096 + 32768 + 65536);
	CHECK_INT(dmb_map(p.fd, 2, &p.a), -EINVAL);
	pair_close(&p);
}

/* Both directions carry independent streams. */
TEST(dmb_both_directions)
{
	struct pair p;
	char buf[16];

	CHECK(pair_open(&p, 0, 0));
	CHECK_INT(put(&p.a, "ping", 4), 4);
	CHECK_INT(put(&p.b, "pong!", 5), 5);
	CHECK_INT(dmb_readable(&p.a), 5);
	CHECK_INT(dmb_readable(&p.b), 4);
	CHECK_INT(get(&p.b, buf, sizeof(buf), 0), 4);
	CHECK(!memcmp(buf, "ping", 4));
	CHECK_INT(get(&p.a, buf, sizeof(buf), 0), 5);
	CHECK(!memcmp(buf, "pong!", 5));
	CHECK_INT(get(&p.a, buf, sizeof(buf), 0), -EAGAIN);
	pair_close(&p);
}

/*
 * A message length coprime with the ring size starts at every offset once
 * in size iterations, so every wrap position is crossed.
 */
TEST(dmb_wrap_every_offset)
{
	enum { N = 16384, M = 4099 };
	static uint8_t in[M], out[M];
	struct pair p;
	uint64_t pos = 0;
	int bad = 0;

	CHECK(pair_open(&p, N, N));
	for (int it = 0; it < N && !bad; it++) {
		for (int i = 0; i < M; i++)
			in[i] = pat(pos + (uint64_t)i);
		/* Write in two pieces, read in two different ones. */
		int w1 = it % M;
		if (put(&p.a, in, (size_t)w1) != w1 || put(&p.a, in + w1, (size_t)(M - w1)) != M - w1)
			bad = 1;
		if (dmb_readable(&p.b) != M || dmb_unread(&p.a) != M)
			bad = 2;
		int r1 = (it * 7) % M;
		if (get(&p.b, out, (size_t)r1, 0) != r1 ||
		    get(&p.b, out + r1, (size_t)(M - r1), 0) != M - r1)
			bad = 3;
		/* the consumer publishes in batches; make this one visible */
		dmb_rx_flush(&p.b, NULL);
		if (memcmp(in, out, M))
			bad = 4;
		pos += M;
	}
	CHECK_INT(bad, 0);
	CHECK_INT(dmb_readable(&p.b), 0);
	CHECK_INT(dmb_space(&p.a), N);
	/* M * N bytes went through: exactly M wraps. */
	struct dmb_cursor cur = dmb_cursor_of(atomic_load(&((struct dmb_hdr *)p.a.base)->ctrl[0].prod));
	CHECK_INT(cur.wrap, M);
	CHECK_INT(cur.count, 0);
	pair_close(&p);
}

TEST(dmb_partial_when_full)
{
	enum { N = 16384 };
	static uint8_t buf[N];
	struct pair p;

	for (int i = 0; i < N; i++)
		buf[i] = pat((uint64_t)i);
	CHECK(pair_open(&p, N, N));
	CHECK_INT(put(&p.a, buf, 10000), 10000);
	CHECK_INT(dmb_peer_pflags(&p.b) & DMB_PF_WRITE_BLOCKED, 0);
	CHECK_INT(put(&p.a, buf + 10000, 10000), N - 10000);
	CHECK(dmb_peer_pflags(&p.b) & DMB_PF_WRITE_BLOCKED);
	CHECK_INT(put(&p.a, buf, 1), -EAGAIN);
	CHECK_INT(dmb_space(&p.a), 0);
	CHECK_INT(dmb_unread(&p.a), N);
	CHECK_INT(dmb_readable(&p.b), N);

	static uint8_t out[N];
	CHECK_INT(get(&p.b, out, 1, 0), 1);
	CHECK_INT(dmb_space(&p.a), 1);
	/* a small write goes whole or not at all; POLLOUT waits for a quarter */
	CHECK_INT(dmb_writable(&p.a), 0);
	CHECK_INT(put(&p.a, buf, 5), -EAGAIN);
	CHECK(dmb_peer_pflags(&p.b) & DMB_PF_WRITE_BLOCKED);
	CHECK_INT(get(&p.b, out + 1, N - 1, 0), N - 1);
	CHECK(!memcmp(out, buf, N));
	CHECK_INT(dmb_writable(&p.a), N);
	CHECK_INT(put(&p.a, buf, 5), 5);
	CHECK_INT(dmb_peer_pflags(&p.b) & DMB_PF_WRITE_BLOCKED, 0);
	CHECK_INT(get(&p.b, out, 5, 0), 5);
	CHECK(!memcmp(out, buf, 5));
	pair_close(&p);
}

/*
 * Writes of up to a quarter of the ring are never cut (records of two
 * processes on one socket stay whole); a larger one waits for a quarter of
 * the ring and then goes in parts.
 */
TEST(dmb_small_writes_whole)
{
	enum { N = 16384, Q = N / 4 };
	static uint8_t buf[N], out[N];
	struct pair p;

	for (int i = 0; i < N; i++)
		buf[i] = pat((uint64_t)i);
	CHECK(pair_open(&p, N, N));
	CHECK_INT(put(&p.a, buf, N - 10), N - 10);
	CHECK_INT(put(&p.a, buf, 16), -EAGAIN);
	CHECK(dmb_peer_pflags(&p.b) & DMB_PF_WRITE_BLOCKED);
	CHECK_INT(put(&p.a, buf, 10), 10);
	/* the consumer publishes its cursor when it flushes */
	CHECK_INT(get(&p.b, out, 16, 0), 16);
	dmb_rx_flush(&p.b, NULL);
	CHECK_INT(dmb_space(&p.a), 16);
	CHECK_INT(put(&p.a, buf, 16), 16);
	/* a write of more than a quarter: not with less than a quarter free */
	CHECK_INT(get(&p.b, out, Q - 1, 0), Q - 1);
	dmb_rx_flush(&p.b, NULL);
	CHECK_INT(dmb_space(&p.a), Q - 1);
	CHECK_INT(dmb_writable(&p.a), 0);
	CHECK_INT(put(&p.a, buf, N), -EAGAIN);
	CHECK_INT(get(&p.b, out, 1, 0), 1);
	dmb_rx_flush(&p.b, NULL);
	CHECK_INT(dmb_writable(&p.a), Q);
	CHECK_INT(put(&p.a, buf, N), Q);
	/* a quarter exactly goes whole into a quarter */
	CHECK_INT(get(&p.b, out, Q, 0), Q);
	dmb_rx_flush(&p.b, NULL);
	CHECK_INT(put(&p.a, buf, Q), Q);
	CHECK_INT(put(&p.a, buf, 1), -EAGAIN);
	pair_close(&p);
}

/* A file's bytes read straight into the ring: across the wrap, short at its end, 0 after. */
TEST(dmb_file_into_ring)
{
	enum { N = 16384, F = 3 * N };
	static uint8_t buf[F], out[F];
	char path[] = "/tmp/dmb_file.XXXXXX";
	int fd = mkstemp(path), pfd[2];
	struct pair p;
	size_t got = 0, sent;

	CHECK(fd >= 0);
	unlink(path);
	for (int i = 0; i < F; i++)
		buf[i] = pat((uint64_t)i);
	CHECK_INT(write(fd, buf, F), F);
	CHECK(pair_open(&p, N, N));
	/* the ring's cursor off 0, so that a full ring's read wraps */
	CHECK_INT(put(&p.a, buf, 1000), 1000);
	CHECK_INT(get(&p.b, out, 1000, 0), 1000);
	dmb_rx_flush(&p.b, NULL);
	CHECK_INT(dmb_produce_file(&p.a, fd, 0, F, NULL), N);
	sent = N;
	CHECK_INT(dmb_produce_file(&p.a, fd, (off_t)sent, F - sent, NULL), -EAGAIN);
	CHECK(dmb_peer_pflags(&p.b) & DMB_PF_WRITE_BLOCKED);
	while (got < F) {
		ssize_t r = get(&p.b, out + got, N, 0);

		CHECK(r > 0);
		if (r <= 0)
			break;
		got += (size_t)r;
		dmb_rx_flush(&p.b, NULL);
		if (sent < F) {
			r = dmb_produce_file(&p.a, fd, (off_t)sent, F - sent, NULL);
			CHECK(r > 0);
			sent += r > 0 ? (size_t)r : 0;
		}
	}
	CHECK(!memcmp(out, buf, F));
	/* more asked than the room and the file have: short, and not for want of room */
	CHECK_INT(put(&p.a, buf, 10000), 10000);
	CHECK_INT(dmb_produce_file(&p.a, fd, F - 100, 100000, NULL), 100);
	CHECK_INT(dmb_peer_pflags(&p.b) & DMB_PF_WRITE_BLOCKED, 0);
	CHECK_INT(get(&p.b, out, 10100, 0), 10100);
	CHECK(!memcmp(out, buf, 10000) && !memcmp(out + 10000, buf + F - 100, 100));
	dmb_rx_flush(&p.b, NULL);
	/* past the end of the file: nothing, and no cursor moved */
	CHECK_INT(dmb_produce_file(&p.a, fd, F, 100, NULL), 0);
	CHECK_INT(dmb_readable(&p.b), 0);
	/* a file that cannot be read at an offset: its error, nothing sent */
	CHECK_INT(pipe(pfd), 0);
	CHECK_INT(dmb_produce_file(&p.a, pfd[0], 0, 100, NULL), -ESPIPE);
	CHECK_INT(dmb_produce_file(&p.a, -1, 0, 100, NULL), -EINVAL);
	CHECK_INT(dmb_readable(&p.b), 0);
	close(pfd[0]);
	close(pfd[1]);
	close(fd);
	pair_close(&p);
}

TEST(dmb_peek)
{
	struct pair p;
	char buf[32];

	CHECK(pair_open(&p, 0, 0));
	CHECK_INT(get(&p.b, buf, sizeof(buf), DMB_PEEK), -EAGAIN);
	CHECK_INT(put(&p.a, "hello world", 11), 11);
	memset(buf, 0, sizeof(buf));
	CHECK_INT(get(&p.b, buf, 5, DMB_PEEK), 5);
	CHECK(!memcmp(buf, "hello", 5));
	CHECK_INT(get(&p.b, buf, sizeof(buf), DMB_PEEK), 11);
	CHECK_INT(dmb_readable(&p.b), 11);
	CHECK_INT(dmb_space(&p.a), 16384 - 11);
	CHECK_INT(get(&p.b, buf, 6, 0), 6);
	CHECK_INT(get(&p.b, buf, sizeof(buf), DMB_PEEK), 5);
	CHECK(!memcmp(buf, "world", 5));
	CHECK_INT(get(&p.b, buf, sizeof(buf), 0), 5);
	CHECK_INT(dmb_readable(&p.b), 0);
	pair_close(&p);
}

/*
 * One end held by two processes (b, and b2 as a spawned child maps it): a
 * flush by b after b2 consumed must not publish b's older cursor, or the
 * bytes b2 read come round again.
 */
TEST(dmb_flush_after_other_holder)
{
	struct pair p;
	struct dmb_conn b2;
	char buf[32];

	CHECK(pair_open(&p, 0, 0));
	CHECK_INT(dmb_holders_add(&p.b, 1), 0);
	CHECK_INT(put(&p.a, "hello world!", 12), 12);
	CHECK_INT(get(&p.b, buf, 5, 0), 5);         /* not published yet */
	CHECK_INT(dmb_holders_add(&p.b, 1), 1);     /* the child comes */
	dmb_rx_flush(&p.b, NULL);
	CHECK_INT(dmb_map(p.fd, 1, &b2), 0);
	memset(buf, 0, sizeof(buf));
	CHECK_INT(get(&b2, buf, 6, 0), 6);
	CHECK(!memcmp(buf, " world", 6));
	CHECK_INT(dmb_holders_add(&b2, -1), 2);     /* and goes */
	dmb_unmap(&b2);
	dmb_rx_flush(&p.b, NULL);                   /* before the next child */
	CHECK_INT(dmb_space(&p.a), 16384 - 1);
	memset(buf, 0, sizeof(buf));
	CHECK_INT(get(&p.b, buf, sizeof(buf), 0), 1);
	CHECK(buf[0] == '!');
	pair_close(&p);
}

/*
 * A holder that maps the region without the consumer's doing (pidfd_getfd):
 * it starts where the consumer read, published or not; a read cursor
 * beyond the producer's is not believed.
 */
TEST(dmb_holder_starts_at_read_cursor)
{
	struct pair p;
	struct dmb_conn b2;
	struct dmb_hdr *h;
	char buf[32];

	CHECK(pair_open(&p, 0, 0));
	CHECK_INT(dmb_holders_add(&p.b, 1), 0);
	CHECK_INT(put(&p.a, "hello world!", 12), 12);
	CHECK_INT(get(&p.b, buf, 5, 0), 5);         /* not published */
	CHECK(!dmb_rx_published(&p.b));
	CHECK_INT(dmb_map(p.fd, 1, &b2), 0);        /* no flush before */
	CHECK_INT(dmb_holders_add(&b2, 1), 1);
	memset(buf, 0, sizeof(buf));
	CHECK_INT(get(&b2, buf, 6, 0), 6);
	CHECK(!memcmp(buf, " world", 6));
	memset(buf, 0, sizeof(buf));
	CHECK_INT(get(&p.b, buf, sizeof(buf), 0), 1);   /* the first holder goes on after it */
	CHECK(buf[0] == '!');
	dmb_unmap(&b2);
	/* a read cursor past what was produced is ignored */
	h = p.b.base;
	atomic_store(&h->rd[0].cons_read, dmb_cursor_word((struct dmb_cursor){ 0, 100 }, 0, 0));
	CHECK_INT(dmb_map(p.fd, 1, &b2), 0);
	CHECK_INT(dmb_readable(&b2), 0);
	CHECK_INT(put(&p.a, "x", 1), 1);
	CHECK_INT(get(&b2, buf, sizeof(buf), 0), 1);
	CHECK(buf[0] == 'x');
	dmb_unmap(&b2);
	pair_close(&p);
}

/* Hundreds of pieces, some empty, written across the wrap and read in others. */
TEST(dmb_iovec_many)
{
	enum { N = 16384, PIECES = 300 };
	static uint8_t src[N], dst[N];
	struct iovec iov[PIECES];
	struct pair p;
	size_t off = 0;
	int n = 0;

	for (int i = 0; i < N; i++)
		src[i] = pat((uint64_t)i * 7);
	CHECK(pair_open(&p, N, N));
	/* Move the cursors near the end so the vector crosses the wrap. */
	CHECK_INT(put(&p.a, src, N - 1000), N - 1000);
	CHECK_INT(get(&p.b, dst, N - 1000, 0), N - 1000);
	for (int i = 0; i < PIECES; i++) {
		size_t len = i % 5 == 0 ? 0 : (size_t)(i * 13 % 97);
		iov[n++] = (struct iovec){ src + off, len };
		off += len;
	}
	CHECK(off < N);
	CHECK_INT(dmb_produce(&p.a, iov, n, 0, NULL), (long)off);
	/* Read back through 1-, 2- and 3-byte pieces. */
	struct iovec rv[PIECES * 2];
	size_t roff = 0;
	int rn = 0;
	while (roff < off && rn < PIECES * 2) {
		size_t len = (size_t)(rn % 3) + 1;
		rv[rn++] = (struct iovec){ dst + roff, len };
		roff += len;
	}
	ssize_t got = dmb_consume(&p.b, rv, rn, 0, NULL);
	CHECK_INT(got, (long)(roff < off ? roff : off));
	ssize_t rest = get(&p.b, dst + got, N, 0);
	CHECK_INT(got + (rest > 0 ? rest : 0), (long)off);
	CHECK(!memcmp(src, dst, off));
	pair_close(&p);
}

TEST(dmb_zero_length)
{
	struct pair p;
	struct iovec empty[3] = { { NULL, 0 }, { NULL, 0 }, { NULL, 0 } };
	char c;

	CHECK(pair_open(&p, 0, 0));
	CHECK_INT(dmb_produce(&p.a, NULL, 0, 0, NULL), 0);
	CHECK_INT(dmb_produce(&p.a, empty, 3, 0, NULL), 0);
	CHECK_INT(dmb_produce(&p.a, empty, -1, 0, NULL), -EINVAL);
	CHECK_INT(dmb_produce(&p.a, NULL, 1, 0, NULL), -EINVAL);
	CHECK_INT(dmb_readable(&p.b), 0);
	CHECK_INT(dmb_consume(&p.b, NULL, 0, 0, NULL), 0);
	CHECK_INT(dmb_consume(&p.b, empty, 3, 0, NULL), 0);
	CHECK_INT(dmb_consume(&p.b, empty, -2, 0, NULL), -EINVAL);
	CHECK_INT(put(&p.a, "x", 1), 1);
	CHECK_INT(dmb_consume(&p.b, empty, 3, 0, NULL), 0);
	CHECK_INT(get(&p.b, &c, 1, 0), 1);
	CHECK_INT(c, 'x');
	pair_close(&p);
}

TEST(dmb_shutdown_flags)
{
	struct pair p;
	char buf[8];

	CHECK(pair_open(&p, 0, 0));
	CHECK_INT(dmb_peer_state(&p.b), 0);
	CHECK_INT(put(&p.a, "abc", 3), 3);
	dmb_shutdown_wr(&p.a);
	CHECK_INT(dmb_peer_state(&p.b), DMB_CF_DONE_WRITING);
	CHECK_INT(put(&p.a, "d", 1), -EPIPE);
	/* Data before the shutdown first, then end of stream, repeatedly. */
	CHECK_INT(get(&p.b, buf, sizeof(buf), 0), 3);
	CHECK_INT(get(&p.b, buf, sizeof(buf), 0), 0);
	CHECK_INT(get(&p.b, buf, sizeof(buf), DMB_PEEK), 0);
	/* The other direction still works. */
	CHECK_INT(put(&p.b, "reply", 5), 5);
	CHECK_INT(get(&p.a, buf, sizeof(buf), 0), 5);
	/* The reader's SHUT_RD makes the writer's sends fail with EPIPE. */
	dmb_shutdown_rd(&p.a);
	CHECK_INT(dmb_peer_state(&p.b), DMB_CF_DONE_WRITING | DMB_CF_DONE_READING);
	CHECK_INT(put(&p.b, "more", 4), -EPIPE);
	CHECK_INT(get(&p.a, buf, sizeof(buf), 0), 0);
	pair_close(&p);
}

TEST(dmb_close_abort)
{
	struct pair p;
	char buf[8];

	CHECK(pair_open(&p, 0, 0));
	CHECK_INT(put(&p.a, "abc", 3), 3);
	dmb_close(&p.a);
	CHECK(dmb_peer_state(&p.b) & DMB_CF_CLOSED);
	CHECK_INT(get(&p.b, buf, sizeof(buf), 0), 3);
	CHECK_INT(get(&p.b, buf, sizeof(buf), 0), 0);
	CHECK_INT(put(&p.b, "x", 1), -EPIPE);
	pair_close(&p);

	CHECK(pair_open(&p, 0, 0));
	CHECK_INT(put(&p.a, "abc", 3), 3);
	CHECK_INT(put(&p.b, "def", 3), 3);
	dmb_abort(&p.b);
	CHECK(dmb_peer_state(&p.a) & DMB_CF_ABORT);
	CHECK_INT(get(&p.a, buf, sizeof(buf), 0), -ECONNRESET);
	CHECK_INT(put(&p.a, "x", 1), -ECONNRESET);
	CHECK_INT(get(&p.b, buf, sizeof(buf), 0), -ECONNRESET);
	CHECK_INT(put(&p.b, "x", 1), -ECONNRESET);
	pair_close(&p);
}

TEST(dmb_urgent_flag)
{
	struct pair p;
	struct iovec v = { "ab!", 3 };

	CHECK(pair_open(&p, 0, 0));
	CHECK_INT(dmb_produce(&p.a, &v, 1, DMB_URGENT, NULL), 3);
	CHECK(dmb_peer_pflags(&p.b) & DMB_PF_URG_PRESENT);
	CHECK_INT(put(&p.a, "c", 1), 1);
	CHECK_INT(dmb_peer_pflags(&p.b) & (DMB_PF_URG_PRESENT | DMB_PF_URG_PENDING), 0);
	pair_close(&p);
}

/*
 * A fence is set once: a second holder follows the first one's.  Before
 * either direction has one, stay_tcp closes both for good; after, it fails.
 */
TEST(dmb_fences)
{
	struct pair p;
	uint64_t bytes = 7;

	CHECK(pair_open(&p, 4096, 4096));
	CHECK(!dmb_tx_fence(&p.a, &bytes));
	CHECK(!dmb_rx_fence(&p.b, &bytes));
	CHECK(dmb_fence_set(&p.a, 5));
	CHECK(dmb_fence_set(&p.a, 9));
	CHECK(dmb_rx_fence(&p.b, &bytes));
	CHECK_INT(bytes, 5);
	CHECK(!dmb_stay_tcp(&p.b));
	CHECK(!dmb_stay_tcp(&p.a));
	pair_close(&p);

	CHECK(pair_open(&p, 4096, 4096));
	CHECK(dmb_stay_tcp(&p.b));
	CHECK(dmb_stay_tcp(&p.a));
	CHECK(!dmb_fence_set(&p.a, 5));
	CHECK(!dmb_fence_set(&p.b, 0));
	CHECK(!dmb_rx_fence(&p.b, &bytes));
	CHECK_INT(bytes, 0);
	CHECK(!dmb_rx_fence(&p.a, &bytes));
	pair_close(&p);
}

/* A doorbell over TCP is due at the other end until one of its holders read it. */
TEST(dmb_tcp_bells)
{
	struct pair p;

	CHECK(pair_open(&p, 4096, 4096));
	CHECK(!dmb_tcp_bells_due(&p.b));
	CHECK(dmb_bell_begin(&p.a));
	dmb_bell_end(&p.a);
	CHECK(dmb_bell_begin(&p.a));
	dmb_bell_end(&p.a);
	CHECK(dmb_tcp_bells_due(&p.b));
	CHECK(!dmb_tcp_bells_due(&p.a));
	CHECK(dmb_tcp_bells_read(&p.b, 1));
	CHECK(dmb_tcp_bells_due(&p.b));
	CHECK(dmb_tcp_bells_read(&p.b, 1));
	CHECK(!dmb_tcp_bells_due(&p.b));
	/* a byte more than the producer rang: written past the library */
	CHECK(!dmb_tcp_bells_read(&p.b, 1));
	/* none once the peer closed: nothing is counted */
	dmb_close(&p.b);
	CHECK(!dmb_bell_begin(&p.a));
	CHECK(!dmb_tcp_bells_due(&p.b));
	pair_close(&p);
}

/*
 * Calls without the lock are counted while they run and only then: a new
 * holder waits for them, and for one stopped inside a copy not for ever.
 */
TEST(dmb_solo_calls)
{
	static uint8_t buf[100];
	struct iovec v = { buf, sizeof(buf) };
	struct pair p;

	CHECK(pair_open(&p, 4096, 4096));
	CHECK_INT(dmb_produce(&p.a, &v, 1, 0, NULL), 100);
	CHECK_INT(dmb_consume(&p.b, &v, 1, 0, NULL), 100);
	dmb_rx_flush(&p.b, NULL);
	CHECK_INT(atomic_load(p.a.solo_calls), 0);
	CHECK_INT(atomic_load(p.b.solo_calls), 0);
	/* shared (the pair starts with no holder): the calls take the lock, uncounted */
	CHECK_INT(dmb_holders_add(&p.a, 1), 0);
	CHECK_INT(dmb_holders_add(&p.a, 1), 1);
	CHECK_INT(dmb_produce(&p.a, &v, 1, 0, NULL), 100);
	CHECK_INT(atomic_load(p.a.solo_calls), 0);
	/* a call that never ends delays a new holder, then lets it go on */
	atomic_store(p.b.solo_calls, 1);
	CHECK_INT(dmb_holders_add(&p.b, 1), 0);
	CHECK_INT(dmb_holders_add(&p.b, -1), 1);
	atomic_store(p.b.solo_calls, 0);
	dmb_close(&p.a);
	dmb_close(&p.b);
	CHECK_INT(atomic_load(p.a.solo_calls), 0);
	CHECK_INT(atomic_load(p.b.solo_calls), 0);
	pair_close(&p);
}

TEST(dmb_sleepers)
{
	enum { N = 16384 };
	static uint8_t buf[N];
	struct iovec v = { buf, 100 };
	struct pair p;
	uint32_t wake = 1;

	CHECK(pair_open(&p, N, N));
	CHECK_INT(dmb_produce(&p.a, &v, 1, 0, &wake), 100);
	CHECK(!wake);
	CHECK_INT(dmb_consume(&p.b, &v, 1, 0, &wake), 100);
	CHECK(!wake);
	/* Empty: the consumer may sleep, and the next send wakes it. */
	CHECK(!dmb_rx_sleep_begin(&p.b, NULL, DMB_BELL_TCP));
	CHECK_INT(dmb_produce(&p.a, &v, 1, 0, &wake), 100);
	CHECK_INT(wake, DMB_BELL_TCP);
	CHECK(dmb_rx_sleep_begin(&p.b, NULL, DMB_BELL_TCP));
	dmb_rx_sleep_end(&p.b);
	CHECK_INT(dmb_produce(&p.a, &v, 1, 0, &wake), 100);
	CHECK(!wake);
	/* Full: the producer may sleep, and the next read wakes it. */
	v.iov_len = N;
	CHECK_INT(dmb_produce(&p.a, &v, 1, 0, NULL), N - 200);
	CHECK(!dmb_tx_sleep_begin(&p.a, 1, DMB_BELL_TCP));
	v.iov_len = 10;
	CHECK_INT(dmb_consume(&p.b, &v, 1, DMB_PEEK, &wake), 10);
	CHECK(!wake);
	CHECK_INT(dmb_consume(&p.b, &v, 1, 0, &wake), 10);
	CHECK(wake);
	/* the producer sleeps until a quarter of the ring is free: any write goes then */
	CHECK(!dmb_tx_sleep_begin(&p.a, 10, DMB_BELL_TCP));
	dmb_tx_sleep_end(&p.a);
	v.iov_len = N / 4 - 10;
	CHECK_INT(dmb_consume(&p.b, &v, 1, 0, &wake), N / 4 - 10);
	CHECK(!wake);
	CHECK(dmb_tx_sleep_begin(&p.a, 10, DMB_BELL_TCP));
	CHECK(!dmb_tx_sleep_begin(&p.a, N / 4 + 1, DMB_BELL_TCP));
	dmb_tx_sleep_end(&p.a);
	v.iov_len = 10;
	CHECK_INT(dmb_consume(&p.b, &v, 1, 0, &wake), 10);
	CHECK(!wake);
	/* A sleeper's bell reaches the waker; two different bells make it TCP. */
	v.iov_len = N;
	CHECK(dmb_consume(&p.b, &v, 1, 0, NULL) > 0);
	CHECK(!dmb_rx_sleep_begin(&p.b, NULL, 7));
	CHECK(!dmb_rx_sleep_begin(&p.b, NULL, 7));
	v.iov_len = 10;
	CHECK_INT(dmb_produce(&p.a, &v, 1, 0, &wake), 10);
	CHECK_INT(wake, 7);
	v.iov_len = N;
	CHECK(dmb_consume(&p.b, &v, 1, 0, NULL) > 0);
	CHECK(!dmb_rx_sleep_begin(&p.b, NULL, 7));
	CHECK(!dmb_rx_sleep_begin(&p.b, NULL, 9));
	v.iov_len = 10;
	CHECK_INT(dmb_produce(&p.a, &v, 1, 0, &wake), 10);
	CHECK_INT(wake, DMB_BELL_TCP);
	CHECK_INT(dmb_wake_merge(0, 7), 7);
	CHECK_INT(dmb_wake_merge(7, 0), 7);
	CHECK_INT(dmb_wake_merge(7, 7), 7);
	CHECK_INT(dmb_wake_merge(7, 9), DMB_BELL_TCP);
	/* A state change ends a sleep too. */
	v.iov_len = N;
	CHECK(dmb_consume(&p.b, &v, 1, 0, NULL) > 0);
	CHECK(!dmb_rx_sleep_begin(&p.b, NULL, DMB_BELL_TCP));
	dmb_shutdown_wr(&p.a);
	CHECK(dmb_rx_sleep_begin(&p.b, NULL, DMB_BELL_TCP));
	dmb_rx_sleep_end(&p.b);
	pair_close(&p);
}

/* ---- hostile regions ------------------------------------------------ */

/* A memfd of size bytes holding hdr (len bytes), sealed as dmb_create does. */
static int raw_region(const void *hdr, size_t len, off_t size, bool seal)
{
	int fd = memfd_create("t", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return -1;
	if (ftruncate(fd, size) < 0 || pwrite(fd, hdr, len, 0) != (ssize_t)len ||
	    (seal && fcntl(fd, F_ADD_SEALS, F_SEAL_GROW | F_SEAL_SHRINK) < 0)) {
		close(fd);
		return -1;
	}
	return fd;
}

static struct dmb_hdr good_hdr(void)
{
	struct dmb_hdr h;

	memset(&h, 0, sizeof(h));
	h.magic = DMB_MAGIC;
	h.version = DMB_VERSION;
	h.hdr_size = DMB_HDR_SIZE;
	h.ring_size[0] = h.ring_size[1] = 16384;
	h.total_size = DMB_HDR_SIZE + 2 * 16384;
	return h;
}

static int map_raw(const struct dmb_hdr *h, off_t size, bool seal)
{
	struct dmb_conn c;
	int fd = raw_region(h, sizeof(*h), size, seal), rc;

	if (fd < 0)
		return -1000;
	rc = dmb_map(fd, 0, &c);
	if (!rc)
		dmb_unmap(&c);
	close(fd);
	return rc;
}

static void set_word(_Atomic uint64_t *w, uint16_t wrap, uint32_t count, uint8_t pf, uint8_t cf)
{
	struct dmb_cursor c = { wrap, count };

	atomic_store(w, dmb_cursor_word(c, pf, cf));
}

TEST(dmb_hostile_headers)
{
	const off_t sz = DMB_HDR_SIZE + 2 * 16384;
	struct dmb_hdr h;

	h = good_hdr();
	CHECK_INT(map_raw(&h, sz, true), 0);
	CHECK_INT(map_raw(&h, sz, false), -EPROTO);   /* could be shrunk: SIGBUS */
	h.magic ^= 1;
	CHECK_INT(map_raw(&h, sz, true), -EPROTO);
	h = good_hdr();
	h.version = 2;
	CHECK_INT(map_raw(&h, sz, true), -EPROTO);
	h = good_hdr();
	h.hdr_size = 64;
	CHECK_INT(map_raw(&h, sz, true), -EPROTO);
	/* Sizes larger than the mapping. */
	h = good_hdr();
	h.ring_size[1] = 1 << 20;
	h.total_size = DMB_HDR_SIZE + 16384 + (1 << 20);
	CHECK_INT(map_raw(&h, sz, true), -EPROTO);
	h = good_hdr();
	h.total_size += 4096;
	CHECK_INT(map_raw(&h, sz, true), -EPROTO);
	CHECK_INT(map_raw(&h, sz + 4096, true), -EPROTO);
	h = good_hdr();
	CHECK_INT(map_raw(&h, sz + 1, true), -EPROTO);
	CHECK_INT(map_raw(&h, sz - 1, true), -EPROTO);
	CHECK_INT(map_raw(&h, 100, true), -EPROTO);
	/* Sizes out of range or not a power of two. */
	h = good_hdr();
	h.ring_size[0] = 8192;
	h.total_size = DMB_HDR_SIZE + 8192 + 16384;
	CHECK_INT(map_raw(&h, (off_t)h.total_size, true), -EPROTO);
	h = good_hdr();
	h.ring_size[0] = 16384 + 4096;
	h.total_size = DMB_HDR_SIZE + 16384 + 4096 + 16384;
	CHECK_INT(map_raw(&h, (off_t)h.total_size, true), -EPROTO);
	h = good_hdr();
	h.ring_size[0] = 2u << 20;
	h.total_size = DMB_HDR_SIZE + (2u << 20) + 16384;
	CHECK_INT(map_raw(&h, (off_t)h.total_size, true), -EPROTO);
	h = good_hdr();
	h.ring_size[0] = 0x80000000u;
	h.ring_size[1] = 0x80000000u;
	h.total_size = DMB_HDR_SIZE;   /* would wrap in 32 bits */
	CHECK_INT(map_raw(&h, DMB_HDR_SIZE, true), -EPROTO);

	/* Not a sealable regular file at all. */
	int pfd[2];
	struct dmb_conn c;
	CHECK_INT(pipe(pfd), 0);
	CHECK(dmb_map(pfd[0], 0, &c) < 0);
	close(pfd[0]);
	close(pfd[1]);
	CHECK(dmb_map(-1, 0, &c) < 0);
}

TEST(dmb_hostile_cursors)
{
	const off_t sz = DMB_HDR_SIZE + 2 * 16384;
	struct dmb_hdr h;

	/* Cursor beyond the ring size. */
	h = good_hdr();
	set_word(&h.ctrl[0].prod, 0, 16384, 0, 0);
	CHECK_INT(map_raw(&h, sz, true), -EPROTO);
	h = good_hdr();
	set_word(&h.ctrl[1].cons, 0, 0xffffffffu, 0, 0);
	set_word(&h.ctrl[1].prod, 0, 0xffffffffu, 0, 0);
	CHECK_INT(map_raw(&h, sz, true), -EPROTO);
	/* Wrap counters inconsistent: two wraps apart, or consumer ahead. */
	h = good_hdr();
	set_word(&h.ctrl[0].prod, 2, 0, 0, 0);
	CHECK_INT(map_raw(&h, sz, true), -EPROTO);
	h = good_hdr();
	set_word(&h.ctrl[0].prod, 1, 100, 0, 0);
	set_word(&h.ctrl[0].cons, 0, 50, 0, 0);    /* 16434 > ring */
	CHECK_INT(map_raw(&h, sz, true), -EPROTO);
	h = good_hdr();
	set_word(&h.ctrl[0].prod, 0, 100, 0, 0);
	set_word(&h.ctrl[0].cons, 0, 200, 0, 0);
	CHECK_INT(map_raw(&h, sz, true), -EPROTO);
	h = good_hdr();
	set_word(&h.ctrl[0].cons, 1, 0, 0, 0);
	CHECK_INT(map_raw(&h, sz, true), -EPROTO);
	/* Unknown flag bits. */
	h = good_hdr();
	set_word(&h.ctrl[0].prod, 0, 0, 0x01, 0);
	CHECK_INT(map_raw(&h, sz, true), -EPROTO);
	h = good_hdr();
	set_word(&h.ctrl[1].prod, 0, 0, 0, 0x01);
	CHECK_INT(map_raw(&h, sz, true), -EPROTO);
	h = good_hdr();
	set_word(&h.ctrl[1].cons, 0, 0, DMB_PF_WRITE_BLOCKED, 0);
	CHECK_INT(map_raw(&h, sz, true), -EPROTO);
	/* Consistent states are accepted: full ring across a wrap, wrap 0xffff -> 0. */
	h = good_hdr();
	set_word(&h.ctrl[0].prod, 0, 10, 0, 0);
	set_word(&h.ctrl[0].cons, 0xffff, 10, 0, 0);
	set_word(&h.ctrl[1].prod, 7, 5, DMB_PF_WRITE_BLOCKED, DMB_CF_DONE_WRITING);
	set_word(&h.ctrl[1].cons, 7, 3, 0, DMB_CF_DONE_READING);
	CHECK_INT(map_raw(&h, sz, true), 0);
}

/* A peer that corrupts its cursors after the mapping was validated. */
TEST(dmb_hostile_runtime)
{
	struct pair p;
	struct dmb_hdr *sh;
	char buf[64];

	CHECK(pair_open(&p, 0, 0));
	sh = p.b.base;
	CHECK_INT(put(&p.a, "abc", 3), 3);
	/* The producer of direction 0 (side 0) claims more than a ring. */
	set_word(&sh->ctrl[0].prod, 1, 100, 0, 0);
	CHECK_INT(dmb_readable(&p.b), -EPROTO);
	CHECK_INT(get(&p.b, buf, sizeof(buf), 0), -EPROTO);
	CHECK_INT(get(&p.b, buf, sizeof(buf), DMB_PEEK), -EPROTO);
	CHECK(dmb_rx_sleep_begin(&p.b, NULL, DMB_BELL_TCP));
	dmb_rx_sleep_end(&p.b);
	set_word(&sh->ctrl[0].prod, 0, 0xfffffff0u, 0, 0);
	CHECK_INT(get(&p.b, buf, sizeof(buf), 0), -EPROTO);
	/* A consumer that claims to have read what was never written: seen
	 * when the producer looks again, which it does when its cached view
	 * does not promise the room asked for. */
	set_word(&sh->ctrl[0].cons, 0, 3000, 0, 0);
	static uint8_t big[DMB_MAX_SIZE];
	CHECK_INT(put(&p.a, big, dmb_tx_size(&p.a)), -EPROTO);
	CHECK_INT(dmb_space(&p.a), -EPROTO);
	CHECK_INT(dmb_unread(&p.a), -EPROTO);
	CHECK(dmb_tx_sleep_begin(&p.a, 1, DMB_BELL_TCP));
	dmb_tx_sleep_end(&p.a);
	/* A cursor within bounds but moved back only shrinks what we see. */
	set_word(&sh->ctrl[0].cons, 0, 0, 0, 0);
	CHECK_INT(dmb_unread(&p.a), 3);
	pair_close(&p);
}

/* ---- two threads ---------------------------------------------------- */

#define STREAM_BYTES (64ull << 20)

struct xfer {
	struct dmb_conn *c;
	uint64_t sum;
	uint64_t bytes;
	int errors;
};

static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static uint64_t fnv(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static void *producer(void *arg)
{
	struct xfer *x = arg;
	static uint8_t buf[3][70000];
	uint32_t seed = 12345;
	uint64_t pos = 0;

	x->sum = 0xcbf29ce484222325ull;
	while (pos < STREAM_BYTES) {
		/* Three pieces of random sizes, up to beyond the ring size. */
		struct iovec v[3];
		size_t want = 0;
		for (int i = 0; i < 3; i++) {
			size_t len = rnd(&seed) % (i == 2 ? 70000 : 3000);
			if (len > STREAM_BYTES - pos - want)
				len = (size_t)(STREAM_BYTES - pos - want);
			for (size_t k = 0; k < len; k++)
				buf[i][k] = pat(pos + want + k);
			v[i] = (struct iovec){ buf[i], len };
			want += len;
		}
		size_t done = 0;
		while (done < want) {
			struct iovec w[3];
			int n = 0;
			size_t skip = done;
			for (int i = 0; i < 3; i++) {
				if (skip >= v[i].iov_len) {
					skip -= v[i].iov_len;
					continue;
				}
				w[n++] = (struct iovec){ (uint8_t *)v[i].iov_base + skip, v[i].iov_len - skip };
				skip = 0;
			}
			ssize_t r = dmb_produce(x->c, w, n, 0, NULL);
			if (r == -EAGAIN) {
				sched_yield();
				continue;
			}
			if (r <= 0) {
				x->errors++;
				return NULL;
			}
			for (int i = 0; i < n && r > 0; i++) {
				size_t k = (size_t)r < w[i].iov_len ? (size_t)r : w[i].iov_len;
				x->sum = fnv(x->sum, w[i].iov_base, k);
				done += k;
				r -= (ssize_t)k;
			}
		}
		pos += want;
	}
	dmb_shutdown_wr(x->c);
	x->bytes = pos;
	return NULL;
}

static void *consumer(void *arg)
{
	struct xfer *x = arg;
	static uint8_t buf[100000];
	uint32_t seed = 777;
	uint64_t pos = 0;

	x->sum = 0xcbf29ce484222325ull;
	for (;;) {
		size_t len = rnd(&seed) % sizeof(buf) + 1;
		unsigned fl = rnd(&seed) % 8 == 0 ? DMB_PEEK : 0;
		struct iovec v[2] = { { buf, len / 3 }, { buf + len / 3, len - len / 3 } };
		ssize_t r = dmb_consume(x->c, v, 2, fl, NULL);
		if (r == -EAGAIN) {
			sched_yield();
			continue;
		}
		if (r < 0) {
			x->errors++;
			break;
		}
		if (r == 0)
			break;
		for (ssize_t i = 0; i < r; i++)
			if (buf[i] != pat(pos + (uint64_t)i)) {
				x->errors++;
				break;
			}
		if (fl & DMB_PEEK)
			continue;
		x->sum = fnv(x->sum, buf, (size_t)r);
		pos += (uint64_t)r;
		if (x->errors)
			break;
	}
	x->bytes = pos;
	return NULL;
}

TEST(dmb_two_threads_64mib)
{
	struct pair p;
	struct xfer tx = { 0 }, rx = { 0 };
	pthread_t pt, ct;

	CHECK(pair_open(&p, 64 * 1024, 16384));
	tx.c = &p.a;
	rx.c = &p.b;
	CHECK_INT(pthread_create(&ct, NULL, consumer, &rx), 0);
	CHECK_INT(pthread_create(&pt, NULL, producer, &tx), 0);
	pthread_join(pt, NULL);
	pthread_join(ct, NULL);
	CHECK_INT(tx.errors, 0);
	CHECK_INT(rx.errors, 0);
	CHECK_INT(tx.bytes, STREAM_BYTES);
	CHECK_INT(rx.bytes, STREAM_BYTES);
	CHECK(tx.sum == rx.sum);
	pair_close(&p);
}

/* What the SMC dump reads: stream positions and our CDC words as published. */
TEST(dmb_dump_accessors)
{
	static char buf[16384];
	struct dmb_cdc d;
	struct pair p;

	CHECK(pair_open(&p, 16384, 16384));
	CHECK_INT(dmb_tx_pos(&p.a), 0);
	CHECK(dmb_rx_published(&p.b));
	CHECK_INT(put(&p.a, buf, 10000), 10000);
	CHECK_INT(get(&p.b, buf, 100, DMB_PEEK), 100);
	CHECK_INT(dmb_rx_pos(&p.b), 0);
	CHECK_INT(get(&p.b, buf, 100, 0), 100);
	CHECK_INT(dmb_rx_pos(&p.b), 100);
	CHECK(!dmb_rx_published(&p.b));
	d = dmb_own_cdc(&p.b);
	CHECK_INT(d.cons.count, 0);
	/* a quarter of the ring consumed: published */
	CHECK_INT(get(&p.b, buf, 9900, 0), 9900);
	CHECK(dmb_rx_published(&p.b));
	CHECK_INT(put(&p.a, buf, 10000), 10000);
	CHECK_INT(dmb_tx_pos(&p.a), 20000);
	d = dmb_own_cdc(&p.a);
	CHECK_INT(d.prod.wrap, 1);
	CHECK_INT(d.prod.count, 20000 - 16384);
	CHECK_INT(d.pflags, 0);
	d = dmb_own_cdc(&p.b);
	CHECK_INT(d.cons.wrap, 0);
	CHECK_INT(d.cons.count, 10000);
	dmb_shutdown_wr(&p.a);
	d = dmb_own_cdc(&p.a);
	CHECK_INT(d.cflags, DMB_CF_DONE_WRITING);
	dmb_shutdown_rd(&p.b);
	CHECK_INT(dmb_own_cdc(&p.b).cflags, DMB_CF_DONE_READING);
	dmb_close(&p.b);
	CHECK_INT(dmb_own_cdc(&p.b).cflags,
		  DMB_CF_DONE_WRITING | DMB_CF_CLOSED | DMB_CF_DONE_READING);
	pair_close(&p);
}
