/*
 * Soft SMC-R as a transport (preload/transport/transport_rdma.c) over the
 * link groups of preload/smcr/ and the fake RDMA of fake_rdma.c: the
 * cut-over's words (attached, each direction's fence, staying on TCP) from
 * one end reach the other in CDCs, data both ways behind the fences, the
 * sleep and wake protocol, the end of the stream, and a released end that
 * waits for its peer's close before its RMB goes.
 */
#include "unit.h"
#include "rdmafx.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define OP(e, op, ...) ((e)->t.ops->op(&(e)->t, ##__VA_ARGS__))

/* Both ends closed and let go: the progress thread frees their connections. */
static void pair_down(struct rdmafx_end *srv, struct rdmafx_end *cli)
{
	OP(srv, close);
	OP(cli, close);
	OP(srv, unmap);
	OP(cli, unmap);
	for (int i = 0; i < 500 && smcr_socks(); i++)
		usleep(2000);
	CHECK_INT(smcr_socks(), 0);
	smcr_lgr_put(srv->g);
	smcr_lgr_put(cli->g);
}

/* Waits (bounded) until cond holds, sleeping on e's receive side as a blocking read does. */
/*
 * Until cond, at most 10 s: rx_wait returns at once while bytes wait
 * unread (a state change the test waits for may still be on its way), so
 * the bound is a time, not a count of waits.
 */
#define AWAIT(e, cond)                                                                       \
	do {                                                                                 \
		struct timespec to_ = { 0, 20 * 1000 * 1000 };                               \
		long long end_ = mono_ms() + 10000;                                          \
		while (!(cond) && mono_ms() < end_) {                                        \
			if (OP(e, rx_wait, &to_) == 0)                                       \
				usleep(1000);                                                \
		}                                                                            \
		CHECK(cond);                                                                 \
	} while (0)

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static ssize_t put(struct rdmafx_end *e, const char *s)
{
	struct iovec v = { (void *)s, strlen(s) };
	uint32_t wake = 99;
	ssize_t n = OP(e, produce, &v, 1, &wake);

	CHECK_INT(wake, 0);             /* the peer's progress thread wakes its sleepers */
	return n;
}

static ssize_t get(struct rdmafx_end *e, char *buf, size_t size, unsigned flags)
{
	struct iovec v = { buf, size };
	uint32_t wake = 99;
	ssize_t n = OP(e, consume, &v, 1, flags, &wake);

	CHECK_INT(wake, 0);
	if (n > 0 && (size_t)n < size)
		buf[n] = 0;
	return n;
}

TEST(transport_rdma_cut_over_data_end)
{
	struct rdmafx_end srv = { .dev = "ft0" }, cli = { .dev = "ft1" };
	uint64_t f = 0;
	char buf[64];
	struct iovec none = { buf, 0 };

	rdmafx_pair_up(&srv, &cli, 20);
	CHECK(!strcmp(srv.t.ops->name, "rdma"));
	CHECK_INT(OP(&srv, map, 3, 0), -EOPNOTSUPP);
	/* before anything is said: no fence, not attached, a read finds nothing */
	CHECK(!OP(&srv, peer_attached));
	CHECK(!OP(&srv, rx_fence, &f));
	CHECK(!OP(&srv, on_tcp_for_good));
	CHECK_INT(get(&srv, buf, sizeof(buf), 0), -EAGAIN);
	CHECK_INT(OP(&srv, consume, &none, 1, 0, NULL), 0);

	/* each end attaches; the other hears it in a CDC */
	OP(&srv, say_attached);
	OP(&cli, say_attached);
	AWAIT(&cli, OP(&cli, peer_attached));
	AWAIT(&srv, OP(&srv, peer_attached));

	/* the client cuts its writing over after 5 TCP bytes; the server learns the fence */
	CHECK(!OP(&cli, tx_fence, &f));
	CHECK(OP(&cli, set_tx_fence, 5));
	CHECK(OP(&cli, tx_fence, &f));
	CHECK_INT(f, 5);
	CHECK(OP(&cli, set_tx_fence, 9));       /* set once: a second holder's is the first */
	AWAIT(&srv, OP(&srv, rx_fence, &f));
	CHECK_INT(f, 5);
	/* once a direction cut over, the connection cannot stay on TCP */
	CHECK(!OP(&srv, stay_tcp));
	CHECK(!OP(&cli, stay_tcp));

	CHECK_INT(put(&cli, "hello over rdma"), 15);
	AWAIT(&srv, OP(&srv, readable) == 15);
	CHECK_INT(get(&srv, buf, 5, TP_PEEK), 5);
	CHECK(!strncmp(buf, "hello", 5));
	CHECK_INT(OP(&srv, rx_pos), 0);
	CHECK_INT(get(&srv, buf, sizeof(buf), 0), 15);
	CHECK(!strcmp(buf, "hello over rdma"));
	CHECK_INT(OP(&srv, rx_pos), 15);
	CHECK_INT(OP(&cli, tx_pos), 15);

	/* the server's direction: its fence, then a sleeper's bell rung by the client's CDC */
	CHECK(OP(&srv, set_tx_fence, 0));
	AWAIT(&cli, OP(&cli, rx_fence, &f));
	CHECK_INT(f, 0);
	CHECK(OP(&cli, rx_sleep_begin, NULL, TP_BELL_TCP));   /* nothing could wake it */
	atomic_store(&rdmafx_rung, 0);
	CHECK(!OP(&cli, rx_sleep_begin, NULL, 42));
	CHECK_INT(put(&srv, "pong"), 4);
	for (int i = 0; i < 500 && atomic_load(&rdmafx_rung) != 42; i++)
		usleep(2000);
	CHECK_INT(atomic_load(&rdmafx_rung), 42);
	OP(&cli, rx_sleep_end);
	CHECK_INT(get(&cli, buf, sizeof(buf), 0), 4);
	CHECK(!strcmp(buf, "pong"));
	CHECK(OP(&cli, tx_sleep_begin, 100, 43));            /* room for 100 bytes */
	OP(&cli, tx_sleep_end);

	/* the client shuts its writing: the server reads the end of the stream */
	CHECK_INT(put(&cli, "last"), 4);
	OP(&cli, shutdown_wr);
	AWAIT(&srv, OP(&srv, peer_state) & TP_PS_DONE_WRITING);
	CHECK_INT(get(&srv, buf, sizeof(buf), 0), 4);
	CHECK_INT(get(&srv, buf, sizeof(buf), 0), 0);
	CHECK_INT(put(&cli, "more"), -EPIPE);

	/*
	 * The server lets go first: its RMB stays until the client cannot write
	 * into it (the client's close), then the progress thread frees it.
	 */
	OP(&srv, close);
	AWAIT(&cli, OP(&cli, peer_state) & TP_PS_CLOSED);
	CHECK_INT(put(&srv, "x"), -EPIPE);
	OP(&srv, unmap);
	CHECK_INT(smcr_socks(), 2);
	OP(&cli, close);
	OP(&cli, unmap);
	for (int i = 0; i < 500 && smcr_socks(); i++)
		usleep(2000);
	CHECK_INT(smcr_socks(), 0);
	smcr_lgr_put(srv.g);
	smcr_lgr_put(cli.g);
}

TEST(transport_rdma_stays_tcp)
{
	struct rdmafx_end srv = { .dev = "ft2" }, cli = { .dev = "ft3" };
	uint64_t f;

	rdmafx_pair_up(&srv, &cli, 21);
	/* neither end attached nor cut: both directions stay on TCP, at both ends */
	CHECK(OP(&cli, stay_tcp));
	CHECK(OP(&cli, on_tcp_for_good));
	AWAIT(&srv, OP(&srv, on_tcp_for_good));
	CHECK(OP(&srv, stay_tcp));
	CHECK(!OP(&srv, set_tx_fence, 3));
	CHECK(!OP(&cli, set_tx_fence, 3));
	CHECK(!OP(&srv, rx_fence, &f));
	/* an end that said attached may have a peer cutting over already */
	OP(&srv, abort);
	AWAIT(&cli, OP(&cli, peer_state) & TP_PS_ABORT);
	{
		char b[8];
		struct iovec v = { b, sizeof(b) };

		CHECK_INT(OP(&cli, consume, &v, 1, 0, NULL), -ECONNRESET);
		CHECK_INT(OP(&cli, produce, &v, 1, NULL), -ECONNRESET);
	}
	OP(&srv, unmap);
	OP(&cli, close);
	OP(&cli, unmap);
	smcr_lgr_put(srv.g);
	smcr_lgr_put(cli.g);
}

TEST(transport_rdma_attached_cannot_stay)
{
	struct rdmafx_end srv = { .dev = "ft4" }, cli = { .dev = "ft5" };

	rdmafx_pair_up(&srv, &cli, 22);
	OP(&srv, say_attached);
	CHECK(!OP(&srv, stay_tcp));
	CHECK(!OP(&srv, on_tcp_for_good));
	/* the other end never attached: it may still stay, and then both do */
	CHECK(OP(&cli, stay_tcp));
	AWAIT(&srv, OP(&srv, on_tcp_for_good));
	CHECK(!OP(&srv, set_tx_fence, 1));
	OP(&srv, close);
	OP(&cli, close);
	OP(&srv, unmap);
	OP(&cli, unmap);
	smcr_lgr_put(srv.g);
	smcr_lgr_put(cli.g);
}

/*
 * Back to TCP: the bytes each end did not consume are the writer's to send
 * by TCP, reads and writes on the transport end, and the links' loss after
 * it is no reset.
 */
TEST(transport_rdma_back_to_tcp)
{
	struct rdmafx_end srv = { .dev = "ft6" }, cli = { .dev = "ft7" };
	uint64_t f;
	char buf[64];

	rdmafx_pair_up(&srv, &cli, 23);
	CHECK(OP(&srv, back_offer));
	CHECK(OP(&cli, back_offer));
	OP(&srv, say_attached);
	OP(&cli, say_attached);
	CHECK(OP(&cli, set_tx_fence, 0));
	CHECK(OP(&srv, set_tx_fence, 0));
	AWAIT(&srv, OP(&srv, rx_fence, &f));
	AWAIT(&cli, OP(&cli, rx_fence, &f));
	CHECK_INT(OP(&cli, back_pending, buf, sizeof(buf)), -EAGAIN);
	CHECK_INT(put(&cli, "abcdef"), 6);
	CHECK_INT(put(&srv, "xyz"), 3);
	AWAIT(&srv, OP(&srv, readable) == 6);
	AWAIT(&cli, OP(&cli, readable) == 3);
	CHECK_INT(get(&srv, buf, 2, 0), 2);
	/* the client says it; the server's progress thread answers */
	CHECK_INT(OP(&cli, back_say), 0);
	CHECK_INT(OP(&cli, back_state) & TP_BACK_SAID, TP_BACK_SAID);
	CHECK_INT(get(&cli, buf, sizeof(buf), 0), -EXDEV);
	AWAIT(&cli, OP(&cli, back_state) == TP_BACK_DONE);
	AWAIT(&srv, OP(&srv, back_state) == TP_BACK_DONE);
	CHECK_INT(get(&srv, buf, sizeof(buf), 0), -EXDEV);
	CHECK_INT(put(&srv, "late"), -EXDEV);
	/* the server read 2 of the client's 6 bytes, the client none of the server's 3 */
	memset(buf, 0, sizeof(buf));
	CHECK_INT(OP(&cli, back_pending, buf, 3), 3);
	CHECK(!strcmp(buf, "cde"));
	OP(&cli, back_sent, 3);
	CHECK_INT(OP(&cli, back_pending, buf, sizeof(buf)), 1);
	CHECK_INT(buf[0], 'f');
	OP(&cli, back_sent, 1);
	CHECK_INT(OP(&cli, back_pending, buf, sizeof(buf)), 0);
	memset(buf, 0, sizeof(buf));
	CHECK_INT(OP(&srv, back_pending, buf, sizeof(buf)), 3);
	CHECK(!strcmp(buf, "xyz"));
	/* the link goes: the connection is TCP's, nothing reset */
	fake_rdma_port_down("ft6");
	for (int i = 0; i < 50; i++)
		usleep(2000);
	CHECK(!(OP(&cli, peer_state) & TP_PS_ABORT));
	CHECK(!(OP(&srv, peer_state) & TP_PS_ABORT));
	CHECK_INT(smcr_sock_error(cli.s), 0);
	CHECK_INT(OP(&srv, back_pending, buf, sizeof(buf)), 3);
	fake_rdma_port_up("ft6");
	/* the peer writes into neither RMB after its BACK: they go with their ends */
	pair_down(&srv, &cli);
}

/*
 * A writer that shut down cannot send its unread bytes by TCP: BACK is
 * refused until they were read, then goes with nothing pending.
 */
TEST(transport_rdma_back_after_shutdown)
{
	struct rdmafx_end srv = { .dev = "ft8" }, cli = { .dev = "ft9" };
	uint64_t f;
	char buf[16];

	rdmafx_pair_up(&srv, &cli, 24);
	CHECK(OP(&srv, back_offer));
	CHECK(OP(&cli, back_offer));
	OP(&srv, say_attached);
	OP(&cli, say_attached);
	CHECK(OP(&cli, set_tx_fence, 0));
	AWAIT(&srv, OP(&srv, rx_fence, &f));
	AWAIT(&cli, OP(&cli, peer_attached));
	CHECK_INT(put(&cli, "abc"), 3);
	OP(&cli, shutdown_wr);
	AWAIT(&srv, OP(&srv, peer_state) & TP_PS_DONE_WRITING);
	/* unread bytes of a peer that ended writing: refused, nothing changed */
	CHECK_INT(OP(&srv, back_say), -EOPNOTSUPP);
	CHECK_INT(OP(&srv, back_state), 0);
	CHECK_INT(get(&srv, buf, sizeof(buf), 0), 3);
	CHECK_INT(OP(&srv, back_say), 0);
	AWAIT(&srv, OP(&srv, back_state) == TP_BACK_DONE);
	CHECK_INT(OP(&cli, back_pending, buf, sizeof(buf)), 0);
	pair_down(&srv, &cli);
}
