/*
 * The data path of preload/conn/ (io.c) over soft SMC-R, without a VM: a
 * loopback TCP pair whose ends are tracked as the library tracks a
 * program's sockets, each attached to one end of a connection over the
 * fake RDMA (rdmafx.h).  The bytes before the cut-over go by TCP, the rest
 * by RDMA, and the program's calls see one stream.  The tests start
 * threads: their names sort after dmb_asym_mode's (test_dmb_wake.c).
 */
#include "unit.h"
#include "base.h"
#include "conn.h"
#include "rdmafx.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

struct cend {
	int fd;
	struct sconn *sc;
	struct rdmafx_end r;
};

/* A connected loopback TCP pair: fd[0] the accepted end, fd[1] the connecting one. */
static void tcp_pair(int fd[2])
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	CHECK(l >= 0);
	CHECK_INT(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	CHECK_INT(listen(l, 1), 0);
	CHECK_INT(getsockname(l, (struct sockaddr *)&a, &len), 0);
	fd[1] = socket(AF_INET, SOCK_STREAM, 0);
	CHECK_INT(connect(fd[1], (struct sockaddr *)&a, sizeof(a)), 0);
	fd[0] = accept(l, NULL, NULL);
	CHECK(fd[0] >= 0);
	close(l);
}

/* The other tests' configuration: the library's is on only between conn_up() and conn_down(). */
static struct soft_config saved_cfg;

/* Each end tracked as the library tracks a program's socket, then attached to its RDMA end. */
static void conn_up(struct cend *srv, struct cend *cli, uint8_t net)
{
	int fd[2];

	preload_next_init();
	saved_cfg = soft_cfg;
	soft_config_init(true);
	tcp_pair(fd);
	srv->fd = fd[0];
	cli->fd = fd[1];
	CHECK(fd_track(srv->fd, 1));
	CHECK(fd_track(cli->fd, 0));
	srv->sc = fd_get(srv->fd);
	cli->sc = fd_get(cli->fd);
	CHECK(srv->sc && cli->sc);
	CHECK(conn_ask(srv->sc));
	CHECK(conn_ask(cli->sc));
	rdmafx_pair_up(&srv->r, &cli->r, net);
	CHECK(sconn_attach_transport(srv->sc, &srv->r.t));
	CHECK(sconn_attach_transport(cli->sc, &cli->r.t));
}

/* One end closed as a program's close() does. */
static void end_close(struct cend *e)
{
	sconn_put(e->sc);
	CHECK(fd_untrack(e->fd));
	close(e->fd);
	e->fd = -1;
}

/* Both closed as a program's close() does: the connections and their groups go. */
static void conn_down(struct cend *srv, struct cend *cli)
{
	if (srv->fd >= 0)
		end_close(srv);
	end_close(cli);
	for (int i = 0; i < 2500 && smcr_socks(); i++)
		usleep(2000);
	CHECK_INT(smcr_socks(), 0);
	smcr_lgr_put(srv->r.g);
	smcr_lgr_put(cli->r.g);
	soft_cfg = saved_cfg;
}

static ssize_t csend(struct cend *e, const void *buf, size_t len)
{
	struct iovec v = { (void *)buf, len };

	return soft_send(e->fd, e->sc, &v, 1, 0, NULL);
}

static ssize_t crecv(struct cend *e, void *buf, size_t len, int flags)
{
	struct iovec v = { buf, len };

	return soft_recv(e->fd, e->sc, &v, 1, flags, NULL);
}

static uint8_t pat(uint64_t pos, int dir)
{
	return (uint8_t)(((pos + (uint64_t)dir * 7919) * 0x9E3779B97F4A7C15ull) >> 56);
}

struct writer {
	struct cend *e;
	uint64_t total;
	int dir;
	int err;
};

/* Writes total bytes of direction dir's pattern in blocking sends of varying size, then shuts down. */
static void *write_all(void *arg)
{
	struct writer *w = arg;
	uint8_t buf[20000];
	uint64_t done = 0, step = 1;

	while (done < w->total && !w->err) {
		size_t len = (size_t)(1 + (step * 7717) % sizeof(buf));
		ssize_t n;

		step++;
		if (len > w->total - done)
			len = (size_t)(w->total - done);
		for (size_t i = 0; i < len; i++)
			buf[i] = pat(done + i, w->dir);
		n = csend(w->e, buf, len);
		if (n <= 0)
			w->err = n < 0 ? errno : EIO;
		else
			done += (uint64_t)n;
	}
	if (soft_shutdown(w->e->fd, w->e->sc, SHUT_WR))
		w->err = errno;
	return NULL;
}

/* Reads to the end of the stream, checking every byte: the count. */
static uint64_t read_all(struct cend *e, int dir)
{
	uint8_t buf[9000];
	uint64_t got = 0;
	ssize_t n;

	while ((n = crecv(e, buf, 1 + got % sizeof(buf), 0)) > 0) {
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] != pat(got + (uint64_t)i, dir)) {
				unit_fail(__FILE__, __LINE__, "direction %d: byte %llu wrong", dir,
					  (unsigned long long)(got + (uint64_t)i));
				return got;
			}
		got += (uint64_t)n;
	}
	CHECK_INT(n, 0);
	return got;
}

static struct cend *reader_c;

static void *read_c(void *arg)
{
	*(uint64_t *)arg = read_all(reader_c, 1);
	return NULL;
}

/* Until both ends heard the other attached (its first call said it), at most 10 s. */
static void attached(struct cend *a, struct cend *b)
{
	for (int i = 0; i < 5000 && !(TP(a->sc, peer_attached) && TP(b->sc, peer_attached)); i++)
		usleep(2000);
	CHECK(TP(a->sc, peer_attached));
	CHECK(TP(b->sc, peer_attached));
}

/* The server writes len bytes of direction 1's pattern (buf) by RDMA; until the client's RMB holds them unread. */
static void unread_at_client(struct cend *srv, struct cend *cli, uint8_t *buf, size_t len)
{
	uint64_t before = TP(srv->sc, tx_pos);

	for (size_t i = 0; i < len; i++)
		buf[i] = pat(i, 1);
	CHECK_INT(csend(srv, buf, len), (int)len);
	CHECK(TP(srv->sc, tx_pos) - before == len);
	for (int i = 0; i < 5000 && TP(cli->sc, readable) < (long)len; i++)
		usleep(2000);
	CHECK_INT(TP(cli->sc, readable), (int)len);
}

/* Back to TCP mid-stream: once a reader took some of its direction by RDMA, one end says BACK. */
struct back_sayer {
	struct cend *by, *srv, *cli;
	int rc;
};

static void *say_back(void *arg)
{
	struct back_sayer *b = arg;

	for (int i = 0; i < 10000 && TP(b->srv->sc, rx_pos) < 600000 &&
				     TP(b->cli->sc, rx_pos) < 600000; i++)
		usleep(1000);
	b->rc = conn_back_say(b->by->fd, b->by->sc);
	return NULL;
}

/* A word each way by TCP: the ends' first calls attach them; until both heard it. */
static void words(struct cend *srv, struct cend *cli)
{
	char w[8];

	CHECK_INT(csend(cli, "ping", 4), 4);
	CHECK_INT(crecv(srv, w, 4, MSG_WAITALL), 4);
	CHECK_INT(csend(srv, "pong", 4), 4);
	CHECK_INT(crecv(cli, w, 4, MSG_WAITALL), 4);
	CHECK(!memcmp(w, "pong", 4));
	attached(srv, cli);
}

/*
 * A word each way by TCP (the ends' first calls attach them), then both
 * directions at once: every byte once and in order, all of them by RDMA
 * after the cut-over, and the end of each stream where it was shut down.
 * back (1 the accepting end, 2 the connecting one): that end goes back to
 * TCP mid-stream, with readers and writers blocked at both ends; the rest
 * goes by TCP.
 */
static void both_ways_back(const char *srv_dev, const char *cli_dev, uint8_t net, int back)
{
	static struct cend srv, cli;
	struct writer wc = { &cli, 3000000, 0, 0 }, ws = { &srv, 2000000, 1, 0 };
	struct back_sayer bs = { back == 1 ? &srv : &cli, &srv, &cli, -1 };
	pthread_t tc, ts, rd, bt;
	uint64_t got_c = 0;

	srv = (struct cend){ .r.dev = srv_dev };
	cli = (struct cend){ .r.dev = cli_dev };
	conn_up(&srv, &cli, net);
	words(&srv, &cli);
	reader_c = &cli;
	CHECK_INT(pthread_create(&tc, NULL, write_all, &wc), 0);
	CHECK_INT(pthread_create(&ts, NULL, write_all, &ws), 0);
	CHECK_INT(pthread_create(&rd, NULL, read_c, &got_c), 0);
	if (back)
		CHECK_INT(pthread_create(&bt, NULL, say_back, &bs), 0);
	CHECK(read_all(&srv, 0) == wc.total);
	pthread_join(rd, NULL);
	CHECK(got_c == ws.total);
	pthread_join(tc, NULL);
	pthread_join(ts, NULL);
	CHECK_INT(wc.err, 0);
	CHECK_INT(ws.err, 0);
	if (back) {
		pthread_join(bt, NULL);
		CHECK_INT(bs.rc, 0);
		CHECK_INT(TP(srv.sc, back_state), TP_BACK_DONE);
		CHECK_INT(TP(cli.sc, back_state), TP_BACK_DONE);
		CHECK(conn_back_reads(srv.sc) && conn_back_reads(cli.sc));
		/*
		 * A direction went part by RDMA, the rest by TCP (the other may
		 * have been done already: they go at their own pace).
		 */
		CHECK(TP(cli.sc, tx_pos) + TP(srv.sc, tx_pos) >= 600000);
		CHECK(TP(cli.sc, tx_pos) < wc.total || TP(srv.sc, tx_pos) < ws.total);
		conn_down(&srv, &cli);
		return;
	}
	/* every byte after the words went by RDMA (a word too, if its end heard the other attached) */
	CHECK(TP(cli.sc, tx_pos) >= wc.total);
	CHECK(TP(srv.sc, tx_pos) >= ws.total);
	CHECK(TP(cli.sc, tx_pos) + atomic_load(&cli.sc->tcp_tx) == wc.total + 4);
	CHECK(TP(srv.sc, tx_pos) + atomic_load(&srv.sc->tcp_tx) == ws.total + 4);
	CHECK(TP(srv.sc, rx_pos) == TP(cli.sc, tx_pos));
	CHECK(TP(cli.sc, rx_pos) == TP(srv.sc, tx_pos));
	conn_down(&srv, &cli);
}

static void both_ways(const char *srv_dev, const char *cli_dev, uint8_t net)
{
	both_ways_back(srv_dev, cli_dev, net, 0);
}

TEST(rdma_io_both_ways_across_the_cut_over)
{
	both_ways("fc6", "fc7", 30);
}

TEST(rdma_io_back_to_tcp_said_by_the_connecting_end)
{
	both_ways_back("fca", "fcb", 32, 2);
}

TEST(rdma_io_back_to_tcp_said_by_the_accepting_end)
{
	both_ways_back("fcc", "fcd", 33, 1);
}

TEST(rdma_io_back_to_tcp_with_sleepers_driving)
{
	rdmafx_drive = true;
	both_ways_back("fce", "fcf", 34, 2);
	rdmafx_drive = false;
}

/*
 * The same with sleepers that take their link's completions themselves
 * (SMC_SOFT_DRIVE=1): blocked readers and writers waiting for room (the
 * 8 KiB buffers fill at once) borrow the link's channel in turn.
 */
TEST(rdma_io_both_ways_with_sleepers_driving)
{
	static const struct { const char *srv, *cli; uint8_t net; } runs[] = {
		{ "fc8", "fc9", 31 }, { "fg0", "fg1", 39 }, { "fg2", "fg3", 40 },
	};
	long lends = fake_rdma_lends;

	rdmafx_drive = true;
	/*
	 * Whether a sleeper finds the channel free is the scheduler's: under
	 * load one run in fifty had the progress thread take every completion.
	 */
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]) && fake_rdma_lends == lends; i++)
		both_ways(runs[i].srv, runs[i].cli, runs[i].net);
	rdmafx_drive = false;
	/* the sleepers did borrow it */
	CHECK(fake_rdma_lends > lends);
}

/*
 * A writer blocked for room with no bell of its own (no daemon names one
 * here) on a transport that rings nothing over TCP: it naps in poll()
 * between looks, each nap a sleep counted, where it used to look again at
 * once and spin (on one CPU, the device's own work then waited for it).
 */
TEST(rdma_io_writer_without_a_bell_naps_while_blocked)
{
	static struct cend srv, cli;
	struct writer wc = { &cli, 300000, 0, 0 };
	pthread_t tc;
	uint64_t sleeps;

	srv = (struct cend){ .r.dev = "fh0" };
	cli = (struct cend){ .r.dev = "fh1" };
	conn_up(&srv, &cli, 60);
	words(&srv, &cli);
	sleeps = atomic_load(&pstats->sleeps);
	CHECK_INT(pthread_create(&tc, NULL, write_all, &wc), 0);
	/* nobody reads: the writer fills the buffers and waits */
	for (int i = 0; i < 5000 && atomic_load(&pstats->sleeps) < sleeps + 5; i++)
		usleep(2000);
	CHECK(atomic_load(&pstats->sleeps) >= sleeps + 5);
	CHECK(read_all(&srv, 0) == wc.total);
	pthread_join(tc, NULL);
	CHECK_INT(wc.err, 0);
	conn_down(&srv, &cli);
}

/*
 * An end that heard BACK and makes no call: its close sends what the peer
 * had not read (it was on RDMA, in the peer's RMB) by TCP before the FIN.
 */
TEST(rdma_io_back_to_tcp_close_sends_what_the_peer_did_not_read)
{
	static struct cend srv, cli;
	uint8_t buf[6000], got[8192];
	size_t have = 0;
	ssize_t n;

	srv = (struct cend){ .r.dev = "fd0" };
	cli = (struct cend){ .r.dev = "fd1" };
	conn_up(&srv, &cli, 35);
	words(&srv, &cli);
	unread_at_client(&srv, &cli, buf, sizeof(buf));
	CHECK_INT(conn_back_say(cli.fd, cli.sc), 0);
	for (int i = 0; i < 5000 && TP(srv.sc, back_state) != TP_BACK_DONE; i++)
		usleep(2000);
	CHECK_INT(TP(srv.sc, back_state), TP_BACK_DONE);
	end_close(&srv);
	while (have < sizeof(got) && (n = crecv(&cli, got + have, sizeof(got) - have, 0)) > 0)
		have += (size_t)n;
	CHECK_INT(have, sizeof(buf));
	CHECK(!memcmp(got, buf, sizeof(buf)));
	conn_down(&srv, &cli);
}

/*
 * An end handed to another process (execve, a spawn, SCM_RIGHTS) goes
 * back to TCP first: what its peer had not read arrives by TCP, then what
 * either end writes next, and both ends read TCP from then on.
 */
/* sconn_back_for() in a vfork() child, which shares our memory but may not post (fake_rdma.c). */
static bool back_for_in_vfork_child(struct cend *e)
{
	pid_t pid = vfork();
	int st = 0;

	if (pid == 0)
		_exit(sconn_back_for(e->fd, e->sc, false, true) ? 0 : 1);
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/*
 * Both ends up and attached, then 4000 bytes of direction 1's pattern by
 * RDMA unread in the client's RMB; buf (6000 bytes) holds the pattern on.
 */
static void up_with_unread_at_client(struct cend *srv, struct cend *cli, const char *srv_dev,
				     const char *cli_dev, uint8_t net, uint8_t buf[6000])
{
	*srv = (struct cend){ .r.dev = srv_dev };
	*cli = (struct cend){ .r.dev = cli_dev };
	conn_up(srv, cli, net);
	words(srv, cli);
	unread_at_client(srv, cli, buf, 4000);
	for (size_t i = 4000; i < 6000; i++)
		buf[i] = pat(i, 1);
}

/*
 * An end handed over (to another process: by us, or by a vfork() child
 * before its execve) with bytes unread in its peer's RMB: they come again
 * by TCP, then the rest of the stream.
 */
static void back_for_keeps_every_byte(const char *srv_dev, const char *cli_dev, uint8_t net,
				      bool vfork_child)
{
	static struct cend srv, cli;
	uint8_t buf[6000], got[8192];
	size_t have = 0;
	ssize_t n;
	char w[8];

	up_with_unread_at_client(&srv, &cli, srv_dev, cli_dev, net, buf);
	if (vfork_child)
		CHECK(back_for_in_vfork_child(&srv));
	else
		CHECK(sconn_back_for(srv.fd, srv.sc, false, true));
	CHECK(conn_back_reads(srv.sc));
	CHECK_INT(TP(srv.sc, back_state), TP_BACK_DONE);
	CHECK_INT(csend(&srv, buf + 4000, sizeof(buf) - 4000), (int)(sizeof(buf) - 4000));
	while (have < sizeof(buf) && (n = crecv(&cli, got + have, sizeof(got) - have, 0)) > 0)
		have += (size_t)n;
	CHECK_INT(have, sizeof(buf));
	CHECK(!memcmp(got, buf, sizeof(buf)));
	CHECK_INT(csend(&cli, "back", 4), 4);
	CHECK_INT(crecv(&srv, w, 4, MSG_WAITALL), 4);
	CHECK(!memcmp(w, "back", 4));
	/* the rest of the stream went by TCP */
	CHECK(TP(srv.sc, tx_pos) <= 4004);
	conn_down(&srv, &cli);
}

TEST(rdma_io_back_for_another_process_keeps_every_byte)
{
	back_for_keeps_every_byte("fd2", "fd3", 36, false);
}

/* A vfork() child's posts are refused: the progress thread says BACK for it. */
TEST(rdma_io_back_for_in_a_vfork_child_keeps_every_byte)
{
	back_for_keeps_every_byte("fd8", "fd9", 39, true);
}

/*
 * A vfork() child that resets an end (a hand-over that could not go back
 * to TCP) posts nothing itself: the progress thread says ABORT for it, the
 * peer hears it, and the link stays up for the group's other connections.
 */
TEST(rdma_io_abort_in_a_vfork_child_leaves_the_link_up)
{
	static struct cend srv, cli;
	pid_t pid;
	int st = 0;

	srv = (struct cend){ .r.dev = "fda" };
	cli = (struct cend){ .r.dev = "fdb" };
	conn_up(&srv, &cli, 40);
	words(&srv, &cli);
	pid = vfork();
	if (pid == 0) {
		TP(srv.sc, abort);
		_exit(0);
	}
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st));
	for (int i = 0; i < 2500 && !(TP(cli.sc, peer_state) & TP_PS_ABORT); i++)
		usleep(2000);
	CHECK(TP(cli.sc, peer_state) & TP_PS_ABORT);
	CHECK_INT(smcr_lgr_links_up(srv.r.g), 1);
	conn_down(&srv, &cli);
}

struct blocked_reader {
	struct cend *e;
	char got[8];
	ssize_t n;
};

static void *read_word(void *arg)
{
	struct blocked_reader *b = arg;

	b->n = crecv(b->e, b->got, 4, MSG_WAITALL);
	return NULL;
}

/*
 * The end that answers BACK sits in a blocking recv() for the next request,
 * its reply still unread in the peer's RMB: the reply goes by TCP all the
 * same (its reader sends it), and the request that follows reaches it.
 */
static void answering_reader(const char *srv_dev, const char *cli_dev, uint8_t net, bool rx_cut)
{
	static struct cend srv, cli;
	struct blocked_reader br = { .e = &srv };
	struct timeval tv = { 10, 0 };
	uint8_t buf[4000], got[8192];
	size_t have = 0;
	pthread_t t;
	ssize_t n;
	char w[8];

	srv = (struct cend){ .r.dev = srv_dev };
	cli = (struct cend){ .r.dev = cli_dev };
	conn_up(&srv, &cli, net);
	words(&srv, &cli);
	if (rx_cut) {
		/* the server's reader on RDMA: it sleeps on its RMB, not in the TCP stream */
		CHECK_INT(csend(&cli, "more", 4), 4);
		CHECK_INT(crecv(&srv, w, 4, MSG_WAITALL), 4);
		CHECK(atomic_load(&srv.sc->rx_cut));
	}
	unread_at_client(&srv, &cli, buf, sizeof(buf));
	CHECK_INT(pthread_create(&t, NULL, read_word, &br), 0);
	usleep(20000);
	CHECK_INT(conn_back_say(cli.fd, cli.sc), 0);
	/* a reply that never comes fails here, not in a hang */
	CHECK_INT(setsockopt(cli.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	atomic_store(&cli.sc->rcvtimeo_ms, -1);
	while (have < sizeof(buf) && (n = crecv(&cli, got + have, sizeof(got) - have, 0)) > 0)
		have += (size_t)n;
	CHECK_INT(have, sizeof(buf));
	CHECK(!memcmp(got, buf, sizeof(buf)));
	CHECK_INT(csend(&cli, "req!", 4), 4);
	pthread_join(t, NULL);
	CHECK_INT(br.n, 4);
	CHECK(!memcmp(br.got, "req!", 4));
	conn_down(&srv, &cli);
}

TEST(rdma_io_back_to_tcp_answering_reader_sends_the_unread_reply)
{
	answering_reader("fd4", "fd5", 37, false);
}

TEST(rdma_io_back_to_tcp_answering_reader_on_its_rmb_sends_it_too)
{
	answering_reader("fd6", "fd7", 38, true);
}

struct big_reader {
	struct cend *e;
	int flags;
	uint8_t got[9000];
	size_t want;
	ssize_t n;
	atomic_bool done;
};

static void *read_big(void *arg)
{
	struct big_reader *b = arg;

	b->n = crecv(b->e, b->got, b->want, b->flags);
	atomic_store(&b->done, true);
	return NULL;
}

/* Until both ends heard BACK, at most 10 s. */
static void back_done(struct cend *a, struct cend *b)
{
	for (int i = 0; i < 5000 && (TP(a->sc, back_state) != TP_BACK_DONE ||
				     TP(b->sc, back_state) != TP_BACK_DONE); i++)
		usleep(2000);
	CHECK_INT(TP(a->sc, back_state), TP_BACK_DONE);
	CHECK_INT(TP(b->sc, back_state), TP_BACK_DONE);
}

/*
 * A receive that waits for more than has come (MSG_WAITALL, or a mark
 * set with SO_RCVLOWAT) while its direction goes back to TCP: the bytes
 * by RDMA count, the rest comes by TCP, and it returns once, with what it
 * waited for in order; with the mark it does not return early.
 * back_by_reader: the reading end says BACK (else the writing one).
 */
static void wait_across_back(const char *srv_dev, const char *cli_dev, uint8_t net, bool lowat,
			     bool back_by_reader)
{
	static struct cend srv, cli;
	static struct big_reader br;
	uint8_t buf[8000];
	uint8_t rest[sizeof(buf)];
	size_t have;
	pthread_t t;
	int low = 5000;

	srv = (struct cend){ .r.dev = srv_dev };
	cli = (struct cend){ .r.dev = cli_dev };
	conn_up(&srv, &cli, net);
	words(&srv, &cli);
	if (lowat) {
		CHECK_INT(setsockopt(cli.fd, SOL_SOCKET, SO_RCVLOWAT, &low, sizeof(low)), 0);
		soft_rcvlowat_set(cli.fd, cli.sc, low);
	}
	br = (struct big_reader){ .e = &cli, .flags = lowat ? 0 : MSG_WAITALL, .want = sizeof(buf) };
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = pat(i, 1);
	CHECK_INT(pthread_create(&t, NULL, read_big, &br), 0);
	CHECK_INT(csend(&srv, buf, 3000), 3000);
	CHECK(TP(srv.sc, tx_pos) >= 3000);
	usleep(50000);
	CHECK(!atomic_load(&br.done));
	CHECK_INT(conn_back_say(back_by_reader ? cli.fd : srv.fd, back_by_reader ? cli.sc : srv.sc), 0);
	back_done(&srv, &cli);
	usleep(50000);
	CHECK(!atomic_load(&br.done));
	CHECK_INT(csend(&srv, buf + 3000, sizeof(buf) - 3000), (int)(sizeof(buf) - 3000));
	pthread_join(t, NULL);
	if (lowat)
		CHECK(br.n >= low && br.n <= (ssize_t)sizeof(buf));
	else
		CHECK_INT(br.n, (int)sizeof(buf));
	have = br.n > 0 ? (size_t)br.n : 0;
	CHECK(!memcmp(br.got, buf, have));
	while (have < sizeof(buf)) {
		ssize_t n = crecv(&cli, rest, sizeof(buf) - have, 0);

		CHECK(n > 0);
		if (n <= 0)
			break;
		CHECK(!memcmp(rest, buf + have, (size_t)n));
		have += (size_t)n;
	}
	/* the bytes after BACK went by TCP */
	CHECK(TP(srv.sc, tx_pos) <= 3004);
	conn_down(&srv, &cli);
}

TEST(rdma_io_back_to_tcp_waitall_across_it)
{
	wait_across_back("fe0", "fe1", 41, false, false);
}

TEST(rdma_io_back_to_tcp_waitall_across_it_said_by_the_reader)
{
	wait_across_back("fe2", "fe3", 42, false, true);
}

TEST(rdma_io_back_to_tcp_rcvlowat_across_it)
{
	wait_across_back("fe4", "fe5", 43, true, false);
}

TEST(rdma_io_back_to_tcp_rcvlowat_across_it_said_by_the_reader)
{
	wait_across_back("fe6", "fe7", 44, true, true);
}

/* conn_back_say() asked again while -EAGAIN (the peer's cursor asked for), at most 10 s. */
static int back_say_again(struct cend *e)
{
	int rc;

	for (int i = 0; (rc = conn_back_say(e->fd, e->sc)) == -EAGAIN && i < 5000; i++)
		usleep(2000);
	return rc;
}

/*
 * A direction shut down on RDMA before BACK.  Its bytes unread: neither
 * end can go back (the TCP stream ended, they could not follow it), and
 * the reader gets them by RDMA, then the end of the stream.  Read: back to
 * TCP, where the reader finds the end of the stream and the other
 * direction goes on.
 */
static void shutdown_before_back(const char *srv_dev, const char *cli_dev, uint8_t net,
				 bool unread, bool back_by_reader)
{
	static struct cend srv, cli;
	struct cend *by;
	uint8_t buf[3000], got[4096];
	size_t have = 0;
	ssize_t n = -1;
	char w[8];

	srv = (struct cend){ .r.dev = srv_dev };
	cli = (struct cend){ .r.dev = cli_dev };
	conn_up(&srv, &cli, net);
	words(&srv, &cli);
	unread_at_client(&srv, &cli, buf, sizeof(buf));
	if (!unread) {
		while (have < sizeof(buf) && (n = crecv(&cli, got + have, sizeof(got) - have, 0)) > 0)
			have += (size_t)n;
		CHECK_INT(have, sizeof(buf));
	}
	CHECK_INT(soft_shutdown(srv.fd, srv.sc, SHUT_WR), 0);
	/* until the reader heard it */
	for (int i = 0; i < 5000 && !(TP(cli.sc, peer_state) & TP_PS_DONE_WRITING); i++)
		usleep(2000);
	by = back_by_reader ? &cli : &srv;
	if (unread) {
		CHECK_INT(back_say_again(by), -EOPNOTSUPP);
		CHECK_INT(TP(srv.sc, back_state), 0);
		CHECK_INT(TP(cli.sc, back_state), 0);
	} else {
		CHECK_INT(back_say_again(by), 0);
		back_done(&srv, &cli);
	}
	while (have < sizeof(got) && (n = crecv(&cli, got + have, sizeof(got) - have, 0)) > 0)
		have += (size_t)n;
	CHECK_INT(n, 0);
	CHECK_INT(have, sizeof(buf));
	CHECK(!memcmp(got, buf, sizeof(buf)));
	CHECK_INT(csend(&cli, "late", 4), 4);
	CHECK_INT(crecv(&srv, w, 4, MSG_WAITALL), 4);
	CHECK(!memcmp(w, "late", 4));
	/* after BACK the word went by TCP */
	if (!unread)
		CHECK(TP(cli.sc, tx_pos) <= 4);
	conn_down(&srv, &cli);
}

TEST(rdma_io_back_to_tcp_refused_after_a_shutdown_with_bytes_unread)
{
	shutdown_before_back("fe8", "fe9", 45, true, false);
}

TEST(rdma_io_back_to_tcp_refused_after_a_shutdown_with_bytes_unread_by_the_reader)
{
	shutdown_before_back("fea", "feb", 46, true, true);
}

TEST(rdma_io_back_to_tcp_after_a_shutdown_read)
{
	shutdown_before_back("fec", "fed", 47, false, false);
}

TEST(rdma_io_back_to_tcp_after_a_shutdown_read_said_by_the_reader)
{
	shutdown_before_back("fee", "fef", 48, false, true);
}

/*
 * A non-blocking end in poll when BACK comes: before, the ring decides its
 * input (the bytes in its RMB); after, the kernel does, and what the peer
 * had not consumed comes by TCP as the peer's poll looks (it sends as
 * room comes), then the next bytes.
 */
static void poll_across_back(const char *srv_dev, const char *cli_dev, uint8_t net, bool by_reader)
{
	static struct cend srv, cli;
	uint8_t buf[3000], got[4096];
	struct pollfd p = { .events = POLLIN };
	unsigned mode = 0, ev;
	size_t have = 0;
	char w[8];

	srv = (struct cend){ .r.dev = srv_dev };
	cli = (struct cend){ .r.dev = cli_dev };
	conn_up(&srv, &cli, net);
	words(&srv, &cli);
	/* the client's reader on RDMA */
	CHECK_INT(csend(&srv, "more", 4), 4);
	CHECK_INT(crecv(&cli, w, 4, MSG_WAITALL), 4);
	unread_at_client(&srv, &cli, buf, sizeof(buf));
	ev = soft_ready(cli.fd, cli.sc, &mode);
	CHECK(mode & SOFT_IN_RING);
	CHECK(ev & POLLIN);
	CHECK_INT(conn_back_say(by_reader ? cli.fd : srv.fd, by_reader ? cli.sc : srv.sc), 0);
	back_done(&srv, &cli);
	/* the kernel's now, at both ends */
	ev = soft_ready(cli.fd, cli.sc, &mode);
	CHECK(!(mode & SOFT_IN_RING));
	CHECK_INT(ev & POLLIN, 0);
	p.fd = cli.fd;
	for (int i = 0; i < 5000 && !(p.revents & POLLIN); i++) {
		/* the server's poll sends what the client had not read */
		soft_ready(srv.fd, srv.sc, &mode);
		CHECK(poll(&p, 1, 2) >= 0);
	}
	CHECK(p.revents & POLLIN);
	while (have < sizeof(buf)) {
		ssize_t n = crecv(&cli, got + have, sizeof(got) - have, MSG_DONTWAIT);

		if (n < 0 && errno == EAGAIN) {
			soft_ready(srv.fd, srv.sc, &mode);
			usleep(1000);
			continue;
		}
		CHECK(n > 0);
		if (n <= 0)
			break;
		have += (size_t)n;
	}
	CHECK_INT(have, sizeof(buf));
	CHECK(!memcmp(got, buf, sizeof(buf)));
	/* nothing more: EAGAIN, as the kernel says */
	CHECK_INT(crecv(&cli, got, sizeof(got), MSG_DONTWAIT), -1);
	CHECK_INT(errno, EAGAIN);
	/* writable by the kernel's word, and the next bytes go by TCP */
	ev = soft_ready(cli.fd, cli.sc, &mode);
	CHECK(!(mode & SOFT_OUT_RING));
	CHECK_INT(csend(&cli, "next", 4), 4);
	CHECK_INT(crecv(&srv, w, 4, MSG_WAITALL), 4);
	CHECK(!memcmp(w, "next", 4));
	conn_down(&srv, &cli);
}

TEST(rdma_io_back_to_tcp_poll_across_it)
{
	poll_across_back("ff0", "ff1", 49, false);
}

TEST(rdma_io_back_to_tcp_poll_across_it_said_by_the_reader)
{
	poll_across_back("ff2", "ff3", 50, true);
}

/*
 * stdio or io_uring on an end cut over to RDMA (fdopen(): conn_stdio_open(),
 * a request naming it: conn_uring_use()) takes it back to TCP instead of
 * resetting it: they read the kernel's stream, which brings what the end
 * had not read of its RMB, then the rest, and what they write reaches the
 * peer's reader.
 */
static void past_the_library_goes_back_with(const char *srv_dev, const char *cli_dev, uint8_t net,
					    void (*use)(int, struct sconn *), struct cend *srv)
{
	static struct cend cli;
	uint8_t buf[6000], got[8192];
	size_t have = 0;
	ssize_t n;
	char w[8];

	up_with_unread_at_client(srv, &cli, srv_dev, cli_dev, net, buf);
	use(cli.fd, cli.sc);
	CHECK(conn_back_reads(cli.sc));
	CHECK_INT(TP(cli.sc, back_state), TP_BACK_DONE);
	CHECK_INT(csend(srv, buf + 4000, sizeof(buf) - 4000), (int)(sizeof(buf) - 4000));
	/* the kernel's stream, as stdio and io_uring read and write it */
	while (have < sizeof(buf) && (n = read(cli.fd, got + have, sizeof(got) - have)) > 0)
		have += (size_t)n;
	CHECK_INT(have, sizeof(buf));
	CHECK(!memcmp(got, buf, sizeof(buf)));
	CHECK_INT(write(cli.fd, "back", 4), 4);
	CHECK_INT(crecv(srv, w, 4, MSG_WAITALL), 4);
	CHECK(!memcmp(w, "back", 4));
	conn_down(srv, &cli);
}

static void past_the_library_goes_back(const char *srv_dev, const char *cli_dev, uint8_t net,
				       void (*use)(int, struct sconn *))
{
	static struct cend srv;

	past_the_library_goes_back_with(srv_dev, cli_dev, net, use, &srv);
}

TEST(rdma_io_stdio_on_a_cut_over_end_goes_back_to_tcp)
{
	past_the_library_goes_back("ff4", "ff5", 51, conn_stdio_open);
}

TEST(rdma_io_uring_on_a_cut_over_end_goes_back_to_tcp)
{
	past_the_library_goes_back("ff6", "ff7", 52, conn_uring_use);
}

/* Every end this process holds, both here: they say BACK, then wait together. */
static struct cend *unwatched_peer;

static void uring_unwatched(int fd, struct sconn *sc)
{
	(void)fd;
	(void)sc;
	conn_uring_unwatched_all();
	CHECK_INT(TP(unwatched_peer->sc, back_state), TP_BACK_DONE);
}

/* An instance the library cannot watch: any request of it may name the end. */
TEST(rdma_io_uring_not_watched_takes_a_cut_over_end_back_to_tcp)
{
	static struct cend srv;

	unwatched_peer = &srv;
	past_the_library_goes_back_with("ff8", "ff9", 53, uring_unwatched, &srv);
}

/*
 * A request named the end, which went back; then the instance shows it is
 * not watched (soft_uring_names_conn()): the end back already is left as
 * it is, even while a thread holds it to send (here: this one).
 */
TEST(rdma_io_uring_not_watched_leaves_an_end_back_already)
{
	static struct cend srv, cli;
	uint8_t buf[6000], got[8192];
	size_t have = 0;
	ssize_t n;

	up_with_unread_at_client(&srv, &cli, "ffa", "ffb", 54, buf);
	conn_uring_use(cli.fd, cli.sc);
	CHECK_INT(TP(cli.sc, back_state), TP_BACK_DONE);
	pthread_mutex_lock(&cli.sc->tx_lock);
	conn_uring_unwatched_all();
	pthread_mutex_unlock(&cli.sc->tx_lock);
	CHECK_INT(csend(&srv, buf + 4000, sizeof(buf) - 4000), (int)(sizeof(buf) - 4000));
	while (have < sizeof(buf) && (n = read(cli.fd, got + have, sizeof(got) - have)) > 0)
		have += (size_t)n;
	CHECK_INT(have, sizeof(buf));
	CHECK(!memcmp(got, buf, sizeof(buf)));
	conn_down(&srv, &cli);
}

static atomic_bool unwatched_sending;

/* A thread in the middle of a write on the end: it holds tx_lock for a while. */
static void *sending_a_while(void *arg)
{
	struct sconn *sc = arg;

	pthread_mutex_lock(&sc->tx_lock);
	atomic_store(&unwatched_sending, true);
	/* long enough for the batch to find it held, however loaded the machine */
	usleep(200000);
	pthread_mutex_unlock(&sc->tx_lock);
	return NULL;
}

static void uring_unwatched_while_sending(int fd, struct sconn *sc)
{
	pthread_t t;

	atomic_store(&unwatched_sending, false);
	CHECK_INT(pthread_create(&t, NULL, sending_a_while, sc), 0);
	while (!atomic_load(&unwatched_sending))
		usleep(1000);
	uring_unwatched(fd, sc);
	pthread_join(t, NULL);
}

/* The end another thread sends on goes back once that write is done: io_uring may name it next. */
TEST(rdma_io_uring_not_watched_waits_for_a_sender)
{
	static struct cend srv;

	unwatched_peer = &srv;
	past_the_library_goes_back_with("ffc", "ffd", 55, uring_unwatched_while_sending, &srv);
}
