/*
 * A group's only link rebuilt on new queue pairs (preload/smcr/rebuild.c)
 * over the fake RDMA: the server's queue pair parks as rxe's do, the
 * watchdog fails the link, the two ends give each other their new queue
 * pairs through the hook (here straight to the other group, as the
 * daemons' relay would), and every connection goes on over the new link
 * with every byte once, in order, both ways.
 */
#include "unit.h"
#include "fake_rdma.h"
#include "smcr.h"
#include "smcr_rebuild.h"
#include "smcr_int.h"
#include "cdc_flags.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NCONN 4        /* more rkeys than an ADD LINK of 128 bytes held */
#define BUF (16u * 1024)
#define STALL_S 40

struct end {
	const char *dev;
	uint8_t gid[16];
	struct smcr_lgr *g;
	uint32_t key;
	struct smcr_sock *s[NCONN];
	/* the messages its hook handed on: offers, answers, the last one */
	_Atomic int offers, answers;
	struct smcr_rebuild_msg last;
	int in_rc;              /* what the other group said to the last */
};

static struct end srv, cli;
static uint64_t sent[NCONN][2], got[NCONN][2];

/* The daemons' relay: a group's message to the other group (the keys name them). */
static void hand_on(uint32_t key, const struct smcr_rebuild_msg *m)
{
	struct end *from = key == srv.key ? &srv : &cli, *to = from == &srv ? &cli : &srv;

	from->last = *m;
	atomic_fetch_add(m->answer ? &from->answers : &from->offers, 1);
	from->in_rc = smcr_rebuild_in(to->key, m);
}

static uint8_t pat(int conn, int dir, uint64_t pos)
{
	return (uint8_t)((pos * 2246822519u >> 9) + (uint64_t)conn * 13u + (uint64_t)dir * 71u);
}

struct job {
	pthread_t th;
	int rc;
	int conn;
};

static void *confirm_cli(void *arg)
{
	struct job *j = arg;

	j->rc = smcr_link_confirm(cli.g, 0, 1);
	return NULL;
}

static void *connect_cli(void *arg)
{
	struct job *j = arg;
	struct smcr_sock_local l;
	struct smcr_sock_peer p;

	smcr_sock_local(srv.s[j->conn], &l);
	p = (struct smcr_sock_peer){ l.rkey, l.rmb_addr, l.rmb_size, l.token };
	j->rc = smcr_sock_connect(cli.s[j->conn], &p);
	return NULL;
}

/* rdma_retired_reap() at now_ns until those it may destroy are destroyed (on a thread of their own): how many wait */
static unsigned retired_drain(int64_t now_ns)
{
	unsigned left = rdma_retired_reap(now_ns);

	for (int i = 0; i < 30000 && left; i++) {
		usleep(1000);
		left = rdma_retired_reap(now_ns);
	}
	return left;
}

/* The two groups' link on devices named sdev and cdev (new names: fake_rdma_park() parks a device's queue pairs for good). */
static void one_link(const char *sdev, const char *cdev, uint8_t net)
{
	static const struct smcr_env env = { .poll = poll, .syscall = syscall, .rebuild = hand_on };
	struct rdma_qp_addr a_s, a_c;
	struct job j = { 0 };

	smcr_env_set(&env);
	srv = (struct end){ .dev = sdev };
	cli = (struct end){ .dev = cdev };
	memset(sent, 0, sizeof(sent));
	memset(got, 0, sizeof(got));
	fake_rdma_gid(srv.gid, net, 1);
	fake_rdma_gid(cli.gid, net, 2);
	CHECK_INT(smcr_lgr_new(true, &srv.g), 0);
	CHECK_INT(smcr_lgr_new(false, &cli.g), 0);
	CHECK_INT(smcr_link_open(srv.g, srv.dev, 1, srv.gid), 0);
	CHECK_INT(smcr_link_open(cli.g, cli.dev, 1, cli.gid), 0);
	smcr_link_local(srv.g, 0, &a_s);
	smcr_link_local(cli.g, 0, &a_c);
	CHECK_INT(smcr_link_connect(srv.g, 0, &a_c), 0);
	CHECK_INT(smcr_link_connect(cli.g, 0, &a_s), 0);
	CHECK_INT(pthread_create(&j.th, NULL, confirm_cli, &j), 0);
	CHECK_INT(smcr_link_confirm(srv.g, 0, 1), 0);
	pthread_join(j.th, NULL);
	CHECK_INT(j.rc, 0);
	srv.key = srv.g->key;
	cli.key = cli.g->key;
}

/* NCONN connections on one_link(). */
static void one_link_conns(const char *sdev, const char *cdev, uint8_t net)
{
	struct job j = { 0 };

	one_link(sdev, cdev, net);
	for (int i = 0; i < NCONN; i++) {
		struct smcr_sock_local ls, lc;
		struct smcr_sock_peer p;

		CHECK_INT(smcr_sock_new(srv.g, NULL, BUF, BUF, &srv.s[i]), 0);
		smcr_sock_local(srv.s[i], &ls);
		CHECK_INT(smcr_sock_new(cli.g, &ls.qp, BUF, BUF, &cli.s[i]), 0);
		smcr_sock_local(cli.s[i], &lc);
		j.conn = i;
		CHECK_INT(pthread_create(&j.th, NULL, connect_cli, &j), 0);
		p = (struct smcr_sock_peer){ lc.rkey, lc.rmb_addr, lc.rmb_size, lc.token };
		CHECK_INT(smcr_sock_connect(srv.s[i], &p), 0);
		pthread_join(j.th, NULL);
		CHECK_INT(j.rc, 0);
	}
}

/* One step of every connection both ways: whether anything moved; *reset counts ECONNRESETs. */
static bool step(uint64_t total, int *reset)
{
	uint8_t buf[4096];
	bool moved = false;

	for (int i = 0; i < NCONN; i++) {
		for (int dir = 0; dir < 2; dir++) {
			struct smcr_sock *from = dir ? srv.s[i] : cli.s[i], *to = dir ? cli.s[i] : srv.s[i];
			struct iovec iov = { buf, sizeof(buf) };
			ssize_t n;

			if (sent[i][dir] < total) {
				if (total - sent[i][dir] < sizeof(buf))
					iov.iov_len = (size_t)(total - sent[i][dir]);
				for (size_t k = 0; k < iov.iov_len; k++)
					buf[k] = pat(i, dir, sent[i][dir] + k);
				n = smcr_sock_send(from, &iov, 1);
				if (n > 0) {
					sent[i][dir] += (uint64_t)n;
					moved = true;
				}
				*reset += n == -ECONNRESET;
			}
			iov.iov_len = sizeof(buf);
			n = smcr_sock_recv(to, &iov, 1, false);
			*reset += n == -ECONNRESET;
			for (ssize_t k = 0; k < n; k++)
				if (buf[k] != pat(i, dir, got[i][dir] + (uint64_t)k)) {
					unit_fail(__FILE__, __LINE__, "connection %d dir %d: byte %llu wrong", i, dir,
						  (unsigned long long)(got[i][dir] + (uint64_t)k));
					return false;
				}
			if (n > 0) {
				got[i][dir] += (uint64_t)n;
				moved = true;
			}
		}
	}
	return moved;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Moves data until every connection carried total each way: 0, or the resets seen, or -1 (stalled). */
static int run_to(uint64_t total)
{
	double moved_at = now_s();

	for (;;) {
		bool done = true;
		int reset = 0;

		if (step(total, &reset))
			moved_at = now_s();
		else if (now_s() - moved_at > STALL_S)
			return -1;
		else
			usleep(1000);
		if (reset)
			return reset;
		for (int i = 0; i < NCONN; i++)
			done &= got[i][0] == total && got[i][1] == total;
		if (done)
			return 0;
	}
}

static bool described(struct smcr_lgr *g, const char *what)
{
	char d[512];

	smcr_lgr_describe(g, d, sizeof(d));
	if (strstr(d, what))
		return true;
	unit_fail(__FILE__, __LINE__, "not \"%s\" in: %s", what, d);
	return false;
}

static void close_all(void);

TEST(smcr_rebuild_a_parked_only_link_comes_back_on_new_queue_pairs)
{
	struct smcr_rebuild_msg stray;
	long stops;
	int live;

	one_link_conns("rbs0", "rbc0", 60);
	CHECK_INT(run_to(100000), 0);
	/* an answer nobody asked for, and an offer to a GID no link goes to: refused, nothing changes */
	stray = (struct smcr_rebuild_msg){ .answer = true };
	memcpy(stray.qp.gid, srv.gid, 16);
	CHECK_INT(smcr_rebuild_in(cli.key, &stray), -ENOENT);
	stray.answer = false;
	stray.qp.gid[15] ^= 0x55;
	CHECK_INT(smcr_rebuild_in(cli.key, &stray), -ENOENT);
	CHECK_INT(smcr_rebuild_in(cli.key + srv.key + 1000, &stray), -ENOENT);
	CHECK_INT(smcr_lgr_links_up(cli.g), 1);
	/* the server's queue pair parks: the bytes it holds wait for the watchdog, then the new link */
	CHECK_INT(retired_drain(INT64_MAX), 0);
	stops = fake_rdma_stops;
	live = fake_rdma_qps_live();
	fake_rdma_park(srv.dev);
	CHECK_INT(run_to(600000), 0);
	/*
	 * both old queue pairs replaced as their links failed, never reset,
	 * and went at once: their ports are active (smcr_link_die(), rdma_retire())
	 */
	CHECK_INT(retired_drain(0), 0);
	CHECK_INT(fake_rdma_stops - stops, 0);
	CHECK_INT(fake_rdma_qps_live(), live);
	CHECK_INT(atomic_load(&srv.offers), 1);
	CHECK_INT(atomic_load(&cli.answers), 1);
	CHECK_INT(atomic_load(&srv.answers) + atomic_load(&cli.offers), 0);
	CHECK_INT(srv.in_rc, 0);
	CHECK_INT(cli.in_rc, 0);
	/* the server numbered the new link, the client said none */
	CHECK_INT(srv.last.num, 2);
	CHECK_INT(cli.last.num, 0);
	CHECK(!memcmp(srv.last.qp.gid, srv.gid, 16) && !memcmp(cli.last.qp.gid, cli.gid, 16));
	CHECK_INT(smcr_lgr_links_up(srv.g), 1);
	CHECK_INT(smcr_lgr_links_up(cli.g), 1);
	CHECK(described(srv.g, "link 0 (number 2) connected up:"));
	CHECK(described(cli.g, "link 0 (number 2) connected up:"));
	CHECK_INT(smcr_lgr_failovers(srv.g), 1);
	for (int i = 0; i < NCONN; i++) {
		CHECK_INT(smcr_sock_error(srv.s[i]), 0);
		CHECK_INT(smcr_sock_error(cli.s[i]), 0);
	}
	close_all();
}

/*
 * A group without connections (its client process ended, say) has nothing
 * to carry over: its only link fails and the group ends with it, no new
 * queue pairs offered, so that it goes and its memory with it.
 */
TEST(smcr_rebuild_a_group_without_connections_ends_with_its_link)
{
	one_link("rbs9", "rbc9", 69);
	pthread_mutex_lock(&srv.g->mu);
	smcr_link_fail(srv.g, 0, false);
	pthread_mutex_unlock(&srv.g->mu);
	CHECK_INT(smcr_lgr_links_up(srv.g), 0);
	CHECK_INT(atomic_load(&srv.offers) + atomic_load(&srv.answers), 0);
	CHECK(!srv.g->rebuild.on);
	smcr_lgr_put(srv.g);
	smcr_lgr_put(cli.g);
}

/*
 * Both ends' queue pairs park: both watchdogs fail the link, and the two
 * offers may cross (neither answers) or one may come first (answered);
 * either way one new link, numbered by the server, carries every byte.
 */
TEST(smcr_rebuild_both_ends_parked)
{
	one_link_conns("rbs1", "rbc1", 61);
	CHECK_INT(run_to(50000), 0);
	fake_rdma_park("rbs1");
	fake_rdma_park("rbc1");
	CHECK_INT(run_to(400000), 0);
	CHECK(atomic_load(&srv.offers) + atomic_load(&srv.answers) >= 1);
	CHECK(atomic_load(&cli.offers) + atomic_load(&cli.answers) >= 1);
	CHECK_INT(srv.last.num, 2);
	CHECK(described(srv.g, "link 0 (number 2) connected up:"));
	CHECK(described(cli.g, "link 0 (number 2) connected up:"));
	close_all();
}

/*
 * The client's port goes down and comes back (an interface flap): its only
 * link waits for the port instead of resetting its connections, the
 * server's failed link offers at once, and once the port is back the new
 * link carries every byte, written meanwhile or after, once.
 */
TEST(smcr_rebuild_an_only_link_waits_for_its_port_to_come_back)
{
	int reset = 0;

	one_link_conns("rbs2", "rbc2", 62);
	CHECK_INT(run_to(50000), 0);
	fake_rdma_port_down("rbc2");
	for (int i = 0; i < 100; i++) {
		step(100000, &reset);
		usleep(2000);
	}
	CHECK_INT(reset, 0);
	/* nothing of ours was offered while the port was down */
	CHECK_INT(atomic_load(&cli.offers) + atomic_load(&cli.answers), 0);
	fake_rdma_port_up("rbc2");
	CHECK_INT(run_to(300000), 0);
	CHECK(described(srv.g, "link 0 (number 2) connected up:"));
	CHECK(described(cli.g, "link 0 (number 2) connected up:"));
	for (int i = 0; i < NCONN; i++) {
		CHECK_INT(smcr_sock_error(srv.s[i]), 0);
		CHECK_INT(smcr_sock_error(cli.s[i]), 0);
	}
	close_all();
}

/* closed both ways over the new link: every connection is freed, the groups go */
static void close_all(void)
{
	for (int i = 0; i < NCONN; i++) {
		CHECK_INT(smcr_sock_set_state(srv.s[i], CDC_CF_DONE_WRITING | CDC_CF_CLOSED), 0);
		CHECK_INT(smcr_sock_set_state(cli.s[i], CDC_CF_DONE_WRITING | CDC_CF_CLOSED), 0);
		smcr_sock_release(srv.s[i]);
		smcr_sock_release(cli.s[i]);
	}
	for (int i = 0; i < 2000 && smcr_socks(); i++)
		usleep(2000);
	CHECK_INT(smcr_socks(), 0);
	smcr_lgr_put(srv.g);
	smcr_lgr_put(cli.g);
}

static void *add_cli(void *arg)
{
	struct job *j = arg;

	j->rc = smcr_link_add(cli.g, 1, 2, NULL);
	return NULL;
}

/* A second link, on devices sdev and cdev: the server adds it, the connections' rkeys ride its ADD LINK. */
static void second_link(const char *sdev, const char *cdev, uint8_t net)
{
	uint8_t sg[16], cg[16];
	struct rdma_qp_addr c2;
	struct job j = { 0 };

	fake_rdma_gid(sg, net, 1);
	fake_rdma_gid(cg, net, 2);
	CHECK_INT(smcr_link_open(srv.g, sdev, 1, sg), 1);
	CHECK_INT(smcr_link_open(cli.g, cdev, 1, cg), 1);
	smcr_link_local(cli.g, 1, &c2);
	CHECK_INT(pthread_create(&j.th, NULL, add_cli, &j), 0);
	CHECK_INT(smcr_link_add(srv.g, 1, 2, c2.gid), 0);
	pthread_join(j.th, NULL);
	CHECK_INT(j.rc, 0);
	CHECK_INT(smcr_lgr_links_up(srv.g), 2);
	CHECK_INT(smcr_lgr_links_up(cli.g), 2);
}

/* Two links, each on a pair of devices of its own, carrying the connections a while. */
static void two_links_running(const char *s1, const char *c1, uint8_t n1, const char *s2, const char *c2, uint8_t n2)
{
	one_link_conns(s1, c1, n1);
	second_link(s2, c2, n2);
	CHECK_INT(run_to(50000), 0);
}

/* Data keeps moving for a while with ports down: nothing may be reset meanwhile. */
static void hold_down(void)
{
	int reset = 0;

	for (int i = 0; i < 100; i++) {
		step(100000, &reset);
		usleep(2000);
	}
	CHECK_INT(reset, 0);
}

/*
 * After both links flapped: every connection went on, nothing reset, and
 * the group's other link, whose port came back during the rebuild, is
 * added again (the watchdog, once the group can) and carries more.
 */
static void went_on_with_both_links(void)
{
	CHECK_INT(run_to(300000), 0);
	for (int i = 0; i < NCONN; i++) {
		CHECK_INT(smcr_sock_error(srv.s[i]), 0);
		CHECK_INT(smcr_sock_error(cli.s[i]), 0);
	}
	for (int i = 0; i < 400 && (smcr_lgr_links_up(srv.g) < 2 || smcr_lgr_links_up(cli.g) < 2); i++)
		usleep(50000);
	CHECK_INT(smcr_lgr_links_up(srv.g), 2);
	CHECK_INT(smcr_lgr_links_up(cli.g), 2);
	CHECK_INT(run_to(400000), 0);
	close_all();
}

/*
 * Both links of a two-link group flap at once (both of the client's
 * interfaces down, then up): the group's last link waits for its port and
 * is rebuilt; every byte once, nothing reset.  The server heard nothing
 * of it when the client's offer came: it gives up its other link too.
 */
TEST(smcr_rebuild_both_links_of_a_group_flap)
{
	two_links_running("rbs3", "rbc3", 63, "rbs4", "rbc4", 64);
	fake_rdma_port_down("rbc4");
	fake_rdma_port_down("rbc3");
	hold_down();
	fake_rdma_port_up("rbc3");
	fake_rdma_port_up("rbc4");
	went_on_with_both_links();
}

/*
 * The two ends see different links fail last (the client's second link
 * first, the server's first link first): each offers its last; the server
 * ignores the client's, the client follows the server's and answers it.
 */
TEST(smcr_rebuild_the_client_follows_the_server_s_last_link)
{
	two_links_running("rbs5", "rbc5", 65, "rbs6", "rbc6", 66);
	fake_rdma_port_down("rbc6");
	fake_rdma_port_down("rbs5");
	fake_rdma_port_down("rbc5");
	fake_rdma_port_down("rbs6");
	hold_down();
	fake_rdma_port_up("rbs5");
	fake_rdma_port_up("rbs6");
	fake_rdma_port_up("rbc5");
	fake_rdma_port_up("rbc6");
	went_on_with_both_links();
}

static bool server_link_again(int li)
{
	bool again;

	pthread_mutex_lock(&srv.g->mu);
	again = srv.g->link[li].again;
	pthread_mutex_unlock(&srv.g->mu);
	return again;
}

/*
 * The client's REQ ADD LINK for a failed link comes while the server adds
 * another (its group marked adding here): the server keeps it and adds the
 * link once it can.  Before, it dropped the request, and the client, which
 * asks once, went on with one link for good.
 */
TEST(smcr_rebuild_a_link_asked_for_while_the_server_adds_comes_later)
{
	two_links_running("rbs7", "rbc7", 67, "rbs8", "rbc8", 68);
	fake_rdma_port_down("rbc8");
	for (int i = 0; i < 400 && (smcr_lgr_links_up(srv.g) > 1 || smcr_lgr_links_up(cli.g) > 1); i++)
		usleep(50000);
	CHECK_INT(smcr_lgr_links_up(srv.g), 1);
	CHECK_INT(smcr_lgr_links_up(cli.g), 1);
	pthread_mutex_lock(&srv.g->mu);
	srv.g->adding = true;
	pthread_mutex_unlock(&srv.g->mu);
	fake_rdma_port_up("rbc8");
	for (int i = 0; i < 400 && !server_link_again(1); i++)
		usleep(50000);
	CHECK(server_link_again(1));
	pthread_mutex_lock(&srv.g->mu);
	srv.g->adding = false;
	pthread_mutex_unlock(&srv.g->mu);
	went_on_with_both_links();
}

/* After the earlier tests' retired queue pairs went: a queue pair on a device of its own, name. */
static struct rdma_qp *retire_test_qp(const char *name, int n, struct rdma_dev **d)
{
	struct rdma_qp_size size = { .send_wr = 8, .recv_slots = 8 };
	struct rdma_qp *q = NULL;
	uint8_t gid[16];

	CHECK_INT(retired_drain(INT64_MAX), 0);
	fake_rdma_gid(gid, n, 1);
	CHECK_INT(rdma_dev_open(name, 1, gid, d), 0);
	CHECK_INT(rdma_qp_create(*d, &size, &q), 0);
	return q;
}

/*
 * A queue pair retired while its port is active is destroyed at once, not
 * stopped first (rxe drops what comes to a destroyed queue pair; one in
 * the error state that still receives can deadlock it: doc/kernels.md),
 * and on a thread of its own: its destroy may wait in the kernel (rxe, for
 * packets a network device holds), neither the retiring caller nor the
 * reap, which the progress thread calls, does.
 */
TEST(rdma_retired_on_an_active_port_destroyed_at_once_on_a_thread)
{
	struct rdma_dev *d;
	struct rdma_qp *q = retire_test_qp("rtr0", 70, &d);
	long stops = fake_rdma_stops;

	atomic_store(&fake_rdma_destroy_held, true);
	rdma_retire(q);
	rdma_dev_close(d);
	/* counted while its destroy waits, whenever the reap looks */
	CHECK_INT(rdma_retired_reap(0), 1);
	usleep(20000);
	CHECK_INT(rdma_retired_reap(INT64_MAX), 1);
	CHECK_INT(fake_rdma_dev_qps_live("rtr0"), 1);
	atomic_store(&fake_rdma_destroy_held, false);
	CHECK_INT(retired_drain(0), 0);
	CHECK_INT(fake_rdma_dev_qps_live("rtr0"), 0);
	CHECK_INT(fake_rdma_stops - stops, 0);
}

/*
 * One retired while its port is down is stopped (nothing comes while the
 * port is down) and kept, however long, until its port is active again:
 * destroyed before, the kernel could free it under packets the downed
 * device still holds (doc/kernels.md).
 */
TEST(rdma_retired_on_a_downed_port_waits_for_it_to_come_back)
{
	struct rdma_dev *d;
	struct rdma_qp *q = retire_test_qp("rtr1", 71, &d);
	long stops = fake_rdma_stops;

	fake_rdma_port_down("rtr1");
	rdma_retire(q);
	rdma_dev_close(d);
	CHECK_INT(fake_rdma_stops - stops, 1);
	/* not looked at before its time, and kept while the port is down */
	CHECK_INT(rdma_retired_reap(0), 1);
	CHECK_INT(rdma_retired_reap(INT64_MAX), 1);
	CHECK_INT(rdma_retired_reap(INT64_MAX), 1);
	CHECK_INT(fake_rdma_dev_qps_live("rtr1"), 1);
	fake_rdma_port_up("rtr1");
	/* the port is back: destroyed once looked at */
	CHECK_INT(retired_drain(INT64_MAX), 0);
	CHECK_INT(fake_rdma_dev_qps_live("rtr1"), 0);
}

/* The layer's message to bytes and back (smcr_rebuild_msg_encode/decode): every field, a short buffer. */
TEST(smcr_rebuild_msg_round_trip)
{
	struct smcr_rebuild_msg m = { .qp = { .qpn = 0x222, .psn = 0x123456, .mtu = 5,
					      .gid = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 9 } },
				      .num = 7, .answer = true };
	struct smcr_rebuild_msg d;
	uint8_t b[SMCR_REBUILD_LEN];

	CHECK_INT(smcr_rebuild_msg_encode(&m, b, sizeof(b) - 1), -EINVAL);
	CHECK_INT(smcr_rebuild_msg_encode(&m, b, sizeof(b)), SMCR_REBUILD_LEN);
	CHECK_INT(smcr_rebuild_msg_decode(b, sizeof(b), &d), 0);
	CHECK(d.qp.qpn == m.qp.qpn && d.qp.psn == m.qp.psn && d.qp.mtu == m.qp.mtu && d.num == m.num && d.answer);
	CHECK(!memcmp(d.qp.gid, m.qp.gid, sizeof(m.qp.gid)));
	b[0] = 'X';
	CHECK_INT(smcr_rebuild_msg_decode(b, sizeof(b), &d), -EBADMSG);
}

#define LAST_BYTES 3000u

/* The client writes LAST_BYTES on every connection and closes it, as a client process does before it ends. */
static void client_writes_and_closes(void)
{
	uint8_t buf[LAST_BYTES];

	for (int i = 0; i < NCONN; i++) {
		struct iovec iov = { buf, sizeof(buf) };

		for (size_t k = 0; k < sizeof(buf); k++)
			buf[k] = pat(i, 0, k);
		CHECK_INT(smcr_sock_send(cli.s[i], &iov, 1), LAST_BYTES);
		CHECK_INT(smcr_sock_set_state(cli.s[i], CDC_CF_DONE_WRITING | CDC_CF_CLOSED), 0);
	}
}

/* Until the server heard every connection's close: whether it did within 10 s. */
static bool server_heard_closes(void)
{
	for (int t = 0; t < 5000; t++) {
		int heard = 0;

		for (int i = 0; i < NCONN; i++) {
			struct smcr_sock_view v;

			smcr_sock_view(srv.s[i], &v);
			heard += !!(v.peer_state & CDC_CF_CLOSED);
		}
		if (heard == NCONN)
			return true;
		usleep(2000);
	}
	return false;
}

/*
 * With no link left, each server connection gives every byte the client
 * wrote before its close, in order, then the end of the stream; a write
 * is EPIPE, as TCP's after the peer's FIN and reset.
 */
static void server_reads_to_the_end(void)
{
	for (int i = 0; i < NCONN; i++) {
		uint8_t buf[LAST_BYTES + 100];
		struct iovec iov = { buf, 1000 };
		struct smcr_sock_view v;
		uint64_t n = 0;
		ssize_t r;

		smcr_sock_view(srv.s[i], &v);
		CHECK(v.lost_after_end);
		CHECK_INT(v.error, -ECONNRESET);
		while ((r = smcr_sock_recv(srv.s[i], &iov, 1, false)) > 0) {
			for (ssize_t k = 0; k < r; k++)
				if (buf[k] != pat(i, 0, n + (uint64_t)k)) {
					unit_fail(__FILE__, __LINE__, "connection %d: byte %llu wrong", i,
						  (unsigned long long)(n + (uint64_t)k));
					return;
				}
			n += (uint64_t)r;
		}
		CHECK_INT(r, 0);
		CHECK_INT(n, LAST_BYTES);
		iov.iov_len = 1;
		CHECK_INT(smcr_sock_send(srv.s[i], &iov, 1), -EPIPE);
	}
}

/* The server lets go of its ends; the client's (let go) wait for a close that cannot come: their links fail too. */
static void both_let_go(void)
{
	for (int i = 0; i < NCONN; i++)
		smcr_sock_release(srv.s[i]);
	pthread_mutex_lock(&cli.g->mu);
	for (unsigned li = 0; li < cli.g->nlinks; li++)
		smcr_link_fail(cli.g, (int)li, true);
	pthread_mutex_unlock(&cli.g->mu);
	for (int i = 0; i < 2000 && smcr_socks(); i++)
		usleep(2000);
	CHECK_INT(smcr_socks(), 0);
	smcr_lgr_put(srv.g);
	smcr_lgr_put(cli.g);
}

/*
 * A client process wrote, closed every connection and ended, and the
 * server had not read yet when its only link failed: nothing is rebuilt
 * (no peer could use it), and the server still reads every byte, then
 * the end.  It was a reset that lost them.
 */
TEST(smcr_rebuild_not_for_a_peer_that_closed_whose_bytes_stay_readable)
{
	one_link_conns("rbs10", "rbc10", 73);
	client_writes_and_closes();
	CHECK(server_heard_closes());
	pthread_mutex_lock(&srv.g->mu);
	smcr_link_fail(srv.g, 0, false);
	pthread_mutex_unlock(&srv.g->mu);
	CHECK_INT(smcr_lgr_links_up(srv.g), 0);
	CHECK_INT(atomic_load(&srv.offers) + atomic_load(&srv.answers), 0);
	CHECK(!srv.g->rebuild.on);
	server_reads_to_the_end();
	for (int i = 0; i < NCONN; i++)
		smcr_sock_release(cli.s[i]);
	both_let_go();
}

/*
 * An ending process's word (smcr_lgr_goodbye()): nothing while a
 * connection of the group is held, then an orderly DELETE LINK on each
 * link, behind that link's CDCs.  The server's links all go at once, not
 * at a TEST LINK 40 s later, and its connections read to the end.
 */
TEST(smcr_lgr_goodbye_after_the_last_close)
{
	two_links_running("rbs11", "rbc11", 74, "rbs12", "rbc12", 75);
	client_writes_and_closes();
	CHECK_INT(smcr_lgr_goodbye(cli.g), 0);
	for (int i = 0; i < NCONN; i++)
		smcr_sock_release(cli.s[i]);
	CHECK_INT(smcr_socks(), 2 * NCONN);
	CHECK_INT(smcr_lgr_goodbye(cli.g), 2);
	for (int i = 0; i < 5000 && smcr_lgr_links_up(srv.g); i++)
		usleep(2000);
	CHECK_INT(smcr_lgr_links_up(srv.g), 0);
	CHECK_INT(atomic_load(&srv.offers) + atomic_load(&srv.answers), 0);
	server_reads_to_the_end();
	both_let_go();
}

static void *linger_long(void *arg)
{
	(void)arg;
	smcr_linger_all(3600 * 1000000000LL);
	return NULL;
}

/*
 * An ending process lingers while a peer that reads may still take its
 * bytes (up to a minute without progress, as TCP keeps an orphan's), but
 * not for a peer that closed: it reads nothing more.
 */
TEST(smcr_linger_not_for_a_peer_that_closed)
{
	uint8_t buf[BUF];
	struct iovec iov = { buf, sizeof(buf) };
	struct timespec end;
	size_t sent = 0, got = 0;
	pthread_t th;
	int rc;

	one_link_conns("rbs13", "rbc13", 76);
	memset(buf, 7, sizeof(buf));
	/* more than the server's RMB holds: the rest waits in the client's send buffer */
	for (int i = 0; i < 5000 && sent < 3 * BUF / 2; i++) {
		ssize_t n;

		iov.iov_len = 3 * BUF / 2 - sent < BUF ? 3 * BUF / 2 - sent : BUF;
		n = smcr_sock_send(cli.s[0], &iov, 1);
		if (n > 0)
			sent += (size_t)n;
		else
			usleep(2000);
	}
	CHECK_INT(sent, 3 * BUF / 2);
	CHECK_INT(smcr_sock_set_state(cli.s[0], CDC_CF_DONE_WRITING | CDC_CF_CLOSED), 0);
	CHECK_INT(smcr_sock_set_state(srv.s[0], CDC_CF_DONE_WRITING | CDC_CF_CLOSED), 0);
	CHECK_INT(pthread_create(&th, NULL, linger_long, NULL), 0);
	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += 30;
	rc = pthread_timedjoin_np(th, NULL, &end);
	CHECK_INT(rc, 0);
	/* the server reads it all after all: the client's close comes behind its bytes */
	for (size_t i = 0; got < sent && i < 5000; i++) {
		struct iovec ri = { buf, sizeof(buf) };
		ssize_t n = smcr_sock_recv(srv.s[0], &ri, 1, false);

		if (n > 0)
			got += (size_t)n;
		else
			usleep(2000);
	}
	CHECK_INT(got, sent);
	if (rc)
		pthread_join(th, NULL);
	close_all();
}
