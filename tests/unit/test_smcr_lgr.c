/*
 * The link groups of preload/smcr/ (doc/soft-roce.md section 4) over the
 * fake RDMA of fake_rdma.c: two groups of one process play server and
 * client with the layer's own progress thread.  The first link confirmed,
 * the second added, connections on both links with their rkeys confirmed,
 * data both ways checked byte for byte, a link's device going down (its
 * connections move to the other link), then the last one (every
 * connection ends with ECONNRESET).
 */
#include "unit.h"
#include "fake_rdma.h"
#include "smcr.h"
#include "smcr_int.h"
#include "cdc_flags.h"
#include "smcr_llc.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NCONN 4
#define BUF (16u * 1024)

struct side {
	const char *dev[2];
	uint8_t gid[2][16];
	struct smcr_lgr *g;
	struct smcr_sock *s[NCONN];
};

struct pair_conn {
	struct smcr_sock *srv, *cli;
	uint64_t sent[2], got[2];       /* [0] client to server, [1] server to client */
};

static struct side srv = { .dev = { "fs0", "soft1" } }, cli = { .dev = { "fc0", "soft2" } };
static struct pair_conn pc[NCONN];

static uint8_t pat(int conn, int dir, uint64_t pos)
{
	return (uint8_t)((pos * 2654435761u >> 7) + (uint64_t)conn * 31u + (uint64_t)dir * 97u);
}

/* Runs fn(arg) in a thread while the caller does its side; joins. */
struct job {
	int (*fn)(void *);
	void *arg;
	int rc;
};

static void *job_run(void *p)
{
	struct job *j = p;

	j->rc = j->fn(j->arg);
	return NULL;
}

static int confirm_client(void *arg)
{
	return smcr_link_confirm(cli.g, 0, *(uint8_t *)arg);
}

static int add_client(void *arg)
{
	(void)arg;
	return smcr_link_add(cli.g, 1, 2, NULL);
}

static int connect_client(void *arg)
{
	struct smcr_sock_local l;
	struct pair_conn *p = arg;
	struct smcr_sock_peer peer;

	smcr_sock_local(p->srv, &l);
	peer = (struct smcr_sock_peer){ l.rkey, l.rmb_addr, l.rmb_size, l.token };
	return smcr_sock_connect(p->cli, &peer);
}

static void beside(struct job *j, int (*fn)(void *), void *arg, pthread_t *th)
{
	*j = (struct job){ fn, arg, -1 };
	CHECK_INT(pthread_create(th, NULL, job_run, j), 0);
}

/* The server's connection and the client's on the link the server chose, started both ways. */
static void conn_up(struct pair_conn *p)
{
	struct smcr_sock_local ls, lc;
	struct smcr_sock_peer peer;
	struct job j;
	pthread_t th;

	CHECK_INT(smcr_sock_new(srv.g, NULL, BUF, BUF, &p->srv), 0);
	smcr_sock_local(p->srv, &ls);
	/* the server's ACCEPT names its link's queue pair: the client takes the same link */
	CHECK_INT(smcr_sock_new(cli.g, &ls.qp, BUF, BUF, &p->cli), 0);
	smcr_sock_local(p->cli, &lc);
	CHECK(lc.qp.gid[13] == ls.qp.gid[13]);
	beside(&j, connect_client, p, &th);
	peer = (struct smcr_sock_peer){ lc.rkey, lc.rmb_addr, lc.rmb_size, lc.token };
	CHECK_INT(smcr_sock_connect(p->srv, &peer), 0);
	pthread_join(th, NULL);
	CHECK_INT(j.rc, 0);
}

/* The bells the layer rang (env.ring): the last one, and how many. */
static _Atomic uint32_t bells_rung, rung_mask;

static bool ring(uint32_t bell)
{
	atomic_fetch_add(&bells_rung, 1);
	if (bell < 32)
		atomic_fetch_or(&rung_mask, 1u << bell);
	return true;
}

/*
 * The LLC messages the layer showed (env.llc): how many went and came, by
 * type, and whether each came with both of its link's GIDs.
 */
static _Atomic unsigned llc_seen[2][16], llc_without_gids;

static void llc(const struct smcr_llc_seen *m)
{
	static const uint8_t zero[16];

	if (!memcmp(m->gid, zero, 16) || !memcmp(m->peer_gid, zero, 16) || m->len < 44)
		atomic_fetch_add(&llc_without_gids, 1);
	atomic_fetch_add(&llc_seen[m->rx][m->msg[0] & 15], 1);
}

static void groups_up(void)
{
	static const struct smcr_env env = { .poll = poll, .syscall = syscall, .ring = ring, .drive = true,
					     .llc = llc };
	struct rdma_qp_addr a_s, a_c, c2;
	uint8_t one = 1;
	struct job j;
	pthread_t th;

	smcr_env_set(&env);
	for (int i = 0; i < 2; i++) {
		fake_rdma_gid(srv.gid[i], (uint8_t)i, 1);
		fake_rdma_gid(cli.gid[i], (uint8_t)i, 2);
	}
	CHECK_INT(smcr_lgr_new(true, &srv.g), 0);
	CHECK_INT(smcr_lgr_new(false, &cli.g), 0);
	for (int i = 0; i < 2; i++) {
		CHECK_INT(smcr_link_open(srv.g, srv.dev[i], 1, srv.gid[i]), i);
		CHECK_INT(smcr_link_open(cli.g, cli.dev[i], 1, cli.gid[i]), i);
	}
	/* the first link, as the first connection's CLC connects it */
	smcr_link_local(srv.g, 0, &a_s);
	smcr_link_local(cli.g, 0, &a_c);
	CHECK_INT(smcr_link_connect(srv.g, 0, &a_c), 0);
	CHECK_INT(smcr_link_connect(cli.g, 0, &a_s), 0);
	beside(&j, confirm_client, &one, &th);
	CHECK_INT(smcr_link_confirm(srv.g, 0, 1), 0);
	pthread_join(th, NULL);
	CHECK_INT(j.rc, 0);
	CHECK_INT(smcr_lgr_links_up(srv.g), 1);
	conn_up(&pc[0]);
	/* the second link, offered by the server to the client's second GID */
	smcr_link_local(cli.g, 1, &c2);
	beside(&j, add_client, NULL, &th);
	CHECK_INT(smcr_link_add(srv.g, 1, 2, c2.gid), 0);
	pthread_join(th, NULL);
	CHECK_INT(j.rc, 0);
	CHECK_INT(smcr_lgr_links_up(srv.g), 2);
	CHECK_INT(smcr_lgr_links_up(cli.g), 2);
	for (int i = 1; i < NCONN; i++)
		conn_up(&pc[i]);
}

/* One step of every connection both ways: false once nothing moved. */
static bool step(uint64_t total, int *reset)
{
	uint8_t buf[4096];
	bool moved = false;

	for (int i = 0; i < NCONN; i++) {
		for (int dir = 0; dir < 2; dir++) {
			struct smcr_sock *from = dir ? pc[i].srv : pc[i].cli;
			struct smcr_sock *to = dir ? pc[i].cli : pc[i].srv;
			uint64_t *sent = &pc[i].sent[dir], *got = &pc[i].got[dir];
			struct iovec iov = { buf, sizeof(buf) };
			ssize_t n;

			if (*sent < total) {
				iov.iov_len = total - *sent < sizeof(buf) ? (size_t)(total - *sent) : sizeof(buf);
				for (size_t k = 0; k < iov.iov_len; k++)
					buf[k] = pat(i, dir, *sent + k);
				n = smcr_sock_send(from, &iov, 1);
				if (n > 0) {
					*sent += (uint64_t)n;
					moved = true;
				} else if (n == -ECONNRESET) {
					(*reset)++;
				} else if (n != -EAGAIN) {
					unit_fail(__FILE__, __LINE__, "connection %d: send: %zd", i, n);
				}
			}
			iov.iov_len = sizeof(buf);
			n = smcr_sock_recv(to, &iov, 1, false);
			if (n == -ECONNRESET) {
				(*reset)++;
				continue;
			}
			CHECK(n >= 0);
			for (ssize_t k = 0; k < n; k++)
				if (buf[k] != pat(i, dir, *got + (uint64_t)k)) {
					unit_fail(__FILE__, __LINE__, "connection %d dir %d: byte %llu wrong", i, dir,
						  (unsigned long long)(*got + (uint64_t)k));
					return false;
				}
			if (n > 0) {
				*got += (uint64_t)n;
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

/* A blocking receive's sleep (smcr_sock_wait()), which takes its link's completions itself. */
struct drive_job {
	struct smcr_sock *s;
	uint32_t seq;
	long ms;
};

static int drive_wait(void *arg)
{
	struct drive_job *d = arg;
	struct timespec ts = { d->ms / 1000, d->ms % 1000 * 1000000 };

	return smcr_sock_wait(d->s, true, d->seq, &ts);
}

/* n bytes of connection i's client to server stream, sent and taken as step() would. */
static void one_message(int i, size_t n)
{
	uint8_t buf[256];
	struct iovec iov = { buf, n };

	for (size_t k = 0; k < n; k++)
		buf[k] = pat(i, 0, pc[i].sent[0] + k);
	CHECK_INT(smcr_sock_send(pc[i].cli, &iov, 1), (long)n);
	pc[i].sent[0] += n;
}

static void one_message_in(int i, size_t n)
{
	uint8_t buf[256];
	struct iovec iov = { buf, sizeof(buf) };

	CHECK_INT(smcr_sock_recv(pc[i].srv, &iov, 1, false), (long)n);
	for (size_t k = 0; k < n; k++)
		CHECK_INT(buf[k], pat(i, 0, pc[i].got[0] + k));
	pc[i].got[0] += n;
}

/*
 * Moves data until every connection carried total each way, or every one
 * was reset: the resets seen.  Nothing moving for STALL_S is a hang.
 */
#define STALL_S 20

static int run_to(uint64_t total)
{
	double moved_at = now_s();

	for (;;) {
		bool done = true;
		int reset = 0;

		if (step(total, &reset))
			moved_at = now_s();
		else if (now_s() - moved_at > STALL_S)
			break;
		else
			usleep(500);
		if (reset >= 2 * NCONN)
			return reset;
		for (int i = 0; i < NCONN; i++)
			done &= pc[i].got[0] == total && pc[i].got[1] == total;
		if (done)
			return 0;
	}
	unit_fail(__FILE__, __LINE__, "no progress for %d s: connection 0 got %llu and %llu", STALL_S,
		  (unsigned long long)pc[0].got[0], (unsigned long long)pc[0].got[1]);
	return -1;
}

static bool all_reset(void)
{
	for (int i = 0; i < NCONN; i++)
		if (smcr_sock_error(pc[i].cli) != -ECONNRESET || smcr_sock_error(pc[i].srv) != -ECONNRESET)
			return false;
	return true;
}

TEST(smcr_lgr_links_connections_failover_reset)
{
	char d[512];
	bool on_second = false;

	groups_up();
	/* both links' CONFIRM LINK each way, the second's ADD LINK, each group's rkeys */
	CHECK(llc_seen[0][SMCR_LLC_CONFIRM_LINK] >= 2 && llc_seen[1][SMCR_LLC_CONFIRM_LINK] >= 2);
	CHECK(llc_seen[0][SMCR_LLC_ADD_LINK] >= 1 && llc_seen[1][SMCR_LLC_ADD_LINK] >= 1);
	CHECK_INT(llc_without_gids, 0);
	/* the server gives new connections its live links in turn */
	for (int i = 0; i < NCONN; i++) {
		char line[300];

		smcr_sock_describe(pc[i].srv, line, sizeof(line));
		on_second |= !strncmp(line, "link 1", 6);
	}
	CHECK(on_second);
	/*
	 * Poll-style sleepers' bells are rung once each, at the next data:
	 * a second thread's beside the first's, one named twice once.
	 */
	smcr_sock_bell(pc[0].srv, true, 7);
	smcr_sock_bell(pc[0].srv, true, 9);
	smcr_sock_bell(pc[0].srv, true, 7);
	smcr_sock_bell(pc[0].srv, true, 0);
	CHECK_INT(atomic_load(&bells_rung), 0);
	CHECK_INT(run_to(200000), 0);
	CHECK_INT(atomic_load(&bells_rung), 2);
	CHECK_INT(atomic_load(&rung_mask), (1u << 7) | (1u << 9));
	/* a sleeping reader borrows its link's channel: nothing comes, its wait ends, the channel is back */
	long lends = fake_rdma_lends;
	struct drive_job dj = { pc[0].srv, 0, 100 };
	struct job j;
	pthread_t th;
	int rc = 0;

	/* (the last cursor updates of run_to() may still come: each ends a wait early) */
	for (int k = 0; k < 20 && rc != -ETIMEDOUT; k++) {
		dj.seq = smcr_sock_seq(pc[0].srv, true);
		rc = drive_wait(&dj);
	}
	CHECK_INT(rc, -ETIMEDOUT);
	CHECK(fake_rdma_lends > lends);
	/* the peer's message wakes it (it takes the CDC itself) */
	dj = (struct drive_job){ pc[0].srv, smcr_sock_seq(pc[0].srv, true), 20000 };
	beside(&j, drive_wait, &dj, &th);
	usleep(20000);
	one_message(0, 100);
	pthread_join(th, NULL);
	CHECK_INT(j.rc, 0);
	one_message_in(0, 100);
	/* a reader asleep on the channel of a link that fails wakes, and its connection moves */
	for (int i = 0; i < NCONN; i++) {
		char line[300];

		smcr_sock_describe(pc[i].cli, line, sizeof(line));
		if (!strncmp(line, "link 1", 6))
			dj = (struct drive_job){ pc[i].cli, smcr_sock_seq(pc[i].cli, true), 20000 };
	}
	beside(&j, drive_wait, &dj, &th);
	usleep(20000);
	/* the client's second device goes: its connections go on over the first link */
	fake_rdma_port_down("soft2");
	pthread_join(th, NULL);
	CHECK_INT(j.rc, 0);
	CHECK_INT(run_to(600000), 0);
	CHECK_INT(smcr_lgr_links_up(cli.g), 1);
	for (int i = 0; i < 100 && smcr_lgr_links_up(srv.g) != 1; i++)
		usleep(10000);          /* the server hears it from the client's DELETE LINK */
	CHECK_INT(smcr_lgr_links_up(srv.g), 1);
	CHECK(smcr_lgr_failovers(cli.g) >= 1);
	smcr_lgr_describe(srv.g, d, sizeof(d));
	/* its port active, the dead link has a new queue pair, not connected: the old one went (smcr_link_die()) */
	CHECK(strstr(d, "link 1 (number 2) up dead") != NULL);
	/* and the first: no link is left, every connection ends with ECONNRESET */
	fake_rdma_port_down("fc0");
	CHECK(run_to(1000000) > 0);
	/*
	 * run_to() ends once one side's ends are all reset; the server hears it
	 * from its own posts' completions, which a loaded machine may not have
	 * taken yet: it goes on moving data until they came (or STALL_S).
	 */
	for (double t0 = now_s(); !all_reset() && now_s() - t0 < STALL_S;) {
		int reset = 0;

		step(1000000, &reset);
		usleep(1000);
	}
	for (int i = 0; i < NCONN; i++) {
		CHECK_INT(smcr_sock_error(pc[i].cli), -ECONNRESET);
		CHECK_INT(smcr_sock_error(pc[i].srv), -ECONNRESET);
		smcr_sock_free(pc[i].srv);
		smcr_sock_free(pc[i].cli);
	}
	smcr_lgr_put(srv.g);
	smcr_lgr_put(cli.g);
	CHECK(fake_rdma_writes > 0 && fake_rdma_msgs > 0);
	/* the client's queue pairs, kept while their ports are down (rdma_retire()), go */
	fake_rdma_port_up("soft2");
	fake_rdma_port_up("fc0");
}

static struct smcr_lgr *other_cli;

static int confirm_other(void *arg)
{
	(void)arg;
	return smcr_link_confirm(other_cli, 0, 1);
}

static int add_other(void *arg)
{
	(void)arg;
	return smcr_link_add(other_cli, 1, 2, NULL);
}

struct other_conn {
	struct smcr_sock *s;
	struct smcr_sock_peer peer;
};

static int connect_other(void *arg)
{
	struct other_conn *c = arg;

	return smcr_sock_connect(c->s, &c->peer);
}

/*
 * A server group and a client group with one link each, on devices sdev
 * and cdev with GIDs gs and gc, the link confirmed at both ends: true.
 */
static bool one_link_groups(const char *sdev, const char *cdev, const uint8_t gs[16], const uint8_t gc[16],
			    struct smcr_lgr **sg, struct smcr_lgr **cg)
{
	struct rdma_qp_addr a_s, a_c;
	struct job j;
	pthread_t th;

	CHECK_INT(smcr_lgr_new(true, sg), 0);
	CHECK_INT(smcr_lgr_new(false, cg), 0);
	CHECK_INT(smcr_link_open(*sg, sdev, 1, gs), 0);
	CHECK_INT(smcr_link_open(*cg, cdev, 1, gc), 0);
	smcr_link_local(*sg, 0, &a_s);
	smcr_link_local(*cg, 0, &a_c);
	CHECK_INT(smcr_link_connect(*sg, 0, &a_c), 0);
	CHECK_INT(smcr_link_connect(*cg, 0, &a_s), 0);
	other_cli = *cg;
	beside(&j, confirm_other, NULL, &th);
	CHECK_INT(smcr_link_confirm(*sg, 0, 1), 0);
	pthread_join(th, NULL);
	CHECK_INT(j.rc, 0);
	return j.rc == 0;
}

/* A connection of sg (*ss) and its other end in cg (*cs) on their first link, each knowing the other's RMB: true. */
static bool one_link_conn(struct smcr_lgr *sg, struct smcr_lgr *cg, struct smcr_sock **ss, struct smcr_sock **cs,
			  struct smcr_sock_local *ls, struct smcr_sock_local *lc)
{
	struct other_conn oc;
	struct job j;
	pthread_t th;

	if (smcr_sock_new(sg, NULL, 65536, 65536, ss)) {
		unit_fail(__FILE__, __LINE__, "no connection in the server's group");
		return false;
	}
	smcr_sock_local(*ss, ls);
	if (smcr_sock_new(cg, &ls->qp, 65536, 65536, cs)) {
		unit_fail(__FILE__, __LINE__, "no connection in the client's group");
		smcr_sock_free(*ss);
		return false;
	}
	smcr_sock_local(*cs, lc);
	oc = (struct other_conn){ *cs, { ls->rkey, ls->rmb_addr, ls->rmb_size, ls->token } };
	beside(&j, connect_other, &oc, &th);
	CHECK_INT(smcr_sock_connect(*ss, &(struct smcr_sock_peer){ lc->rkey, lc->rmb_addr, lc->rmb_size,
								   lc->token }), 0);
	pthread_join(th, NULL);
	CHECK_INT(j.rc, 0);
	return true;
}

/* Each end of s and c has the other's RMB key on link li, and the right one. */
static void check_peer_rkeys(struct smcr_sock *s, struct smcr_sock *c, int li)
{
	CHECK(s->peer_rkey_ok[li] && c->peer_rkey_ok[li]);
	CHECK_INT(s->peer_rkey[li], c->rmb_mr[li].rkey);
	CHECK_INT(c->peer_rkey[li], s->rmb_mr[li].rkey);
}

/*
 * A peer host of the other byte order (an s390x against an x86): Linux
 * writes an LLC v2 length in its CPU's order, so each end reads the other's
 * in the order its messages show, and writes to it in that order: the
 * CONFIRM LINK exchange brings the first link up at both ends; then a
 * connection's rkeys reach each end in the second link's ADD LINK (whose
 * rkey count is the other such field).
 */
TEST(smcr_lgr_peer_of_other_byte_order)
{
	static const struct smcr_env env = { .poll = poll, .syscall = syscall, .ring = ring, .drive = true };
	struct smcr_lgr *sg, *cg;
	struct rdma_qp_addr c2;
	uint8_t gs[16], gc[16], gs2[16], gc2[16];
	struct smcr_sock_local ls, lc;
	struct smcr_sock *ss, *cs;
	struct job j;
	pthread_t th;

	smcr_env_set(&env);
	fake_rdma_other_byte_order("oc0");
	fake_rdma_gid(gs, 7, 1);
	fake_rdma_gid(gc, 7, 2);
	if (!one_link_groups("os0", "oc0", gs, gc, &sg, &cg))
		return;
	CHECK_INT(smcr_lgr_links_up(sg), 1);
	CHECK_INT(smcr_lgr_links_up(cg), 1);
	/* a connection on the first link, then the second link with its rkeys */
	if (!one_link_conn(sg, cg, &ss, &cs, &ls, &lc))
		return;
	check_peer_rkeys(ss, cs, 0);
	fake_rdma_other_byte_order("oc1");
	fake_rdma_gid(gs2, 8, 1);
	fake_rdma_gid(gc2, 8, 2);
	CHECK_INT(smcr_link_open(sg, "os1", 1, gs2), 1);
	CHECK_INT(smcr_link_open(cg, "oc1", 1, gc2), 1);
	smcr_link_local(cg, 1, &c2);
	beside(&j, add_other, NULL, &th);
	CHECK_INT(smcr_link_add(sg, 1, 2, c2.gid), 0);
	pthread_join(th, NULL);
	CHECK_INT(j.rc, 0);
	CHECK_INT(smcr_lgr_links_up(sg), 2);
	CHECK_INT(smcr_lgr_links_up(cg), 2);
	check_peer_rkeys(ss, cs, 1);
	smcr_sock_free(ss);
	smcr_sock_free(cs);
	smcr_lgr_put(sg);
	smcr_lgr_put(cg);
}

/*
 * A soft-RoCE link keeps RDMA_SOFT_INFLIGHT_PKTS packets of its path MTU in
 * flight, at most RDMA_SOFT_INFLIGHT_MAX bytes, and its group's connections
 * write half of that at once: 192 KiB (96 KiB) at MTU 1024 and on jumbo
 * frames (MTU 4096) alike, 96 KiB (48 KiB) at MTU 512, and a port of 1024
 * connected to one of 512 takes the smaller.  A device that is not soft
 * has no limit.
 */
TEST(smcr_lgr_soft_inflight_by_path_mtu)
{
	static const struct smcr_env env = { .poll = poll, .syscall = syscall, .ring = ring, .drive = true };
	static const struct {
		const char *srv, *cli;
		uint32_t inflight;
	} cases[] = {
		{ "softm0", "softm1", 192 * 1024 },
		{ "softj0", "softj1", 192 * 1024 },
		{ "softs0", "softs1", 96 * 1024 },
		{ "softm2", "softs2", 96 * 1024 },
		{ "hardm0", "hardm1", 0 },
	};

	smcr_env_set(&env);
	fake_rdma_mtu("softj0", 5);
	fake_rdma_mtu("softj1", 5);
	fake_rdma_mtu("softs0", 2);
	fake_rdma_mtu("softs1", 2);
	fake_rdma_mtu("softs2", 2);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct smcr_lgr *sg, *cg;
		struct rdma_qp_addr a_s, a_c;
		uint8_t gs[16], gc[16];

		fake_rdma_gid(gs, (uint8_t)(20 + i), 1);
		fake_rdma_gid(gc, (uint8_t)(20 + i), 2);
		CHECK_INT(smcr_lgr_new(true, &sg), 0);
		CHECK_INT(smcr_lgr_new(false, &cg), 0);
		CHECK_INT(smcr_link_open(sg, cases[i].srv, 1, gs), 0);
		CHECK_INT(smcr_link_open(cg, cases[i].cli, 1, gc), 0);
		smcr_link_local(sg, 0, &a_s);
		smcr_link_local(cg, 0, &a_c);
		CHECK_INT(smcr_link_connect(sg, 0, &a_c), 0);
		CHECK_INT(smcr_link_connect(cg, 0, &a_s), 0);
		CHECK_INT(rdma_qp_inflight(sg->link[0].qp), cases[i].inflight);
		CHECK_INT(rdma_qp_inflight(cg->link[0].qp), cases[i].inflight);
		CHECK_INT(sg->write_max, cases[i].inflight / 2);
		CHECK_INT(cg->write_max, cases[i].inflight / 2);
		smcr_lgr_put(sg);
		smcr_lgr_put(cg);
	}
}

/*
 * The RDMA layer's descriptors a close-everything loop must leave open, in
 * order (numbers far above those the tests before kept for real).
 */
TEST(rdma_fds_kept_in_order)
{
	int out[8];

	rdma_fd_keep(900);
	rdma_fd_keep(700);
	rdma_fd_keep(800);
	rdma_fd_keep(-1);
	CHECK_INT(rdma_fds_kept_in(600, 1000, out, 8), 3);
	CHECK_INT(out[0], 700);
	CHECK_INT(out[1], 800);
	CHECK_INT(out[2], 900);
	CHECK_INT(rdma_fds_kept_in(750, 899, out, 8), 1);
	CHECK_INT(out[0], 800);
	CHECK_INT(rdma_fds_kept_in(901, 1000, out, 8), 0);
	rdma_fd_drop(800);
	CHECK_INT(rdma_fds_kept_in(600, 1000, out, 8), 2);
	CHECK_INT(out[1], 900);
	rdma_fd_drop(700);
	rdma_fd_drop(900);
	CHECK_INT(rdma_fds_kept_in(600, 1000, out, 8), 0);
}

/* A small seeded generator for the hostile peer below. */
static uint64_t xs;

static uint32_t rnd(void)
{
	xs ^= xs << 13;
	xs ^= xs >> 7;
	xs ^= xs << 17;
	return (uint32_t)(xs >> 16);
}

/*
 * A well-formed LLC message of a random type with random fields, some of
 * them the group's own (a link's number, a connection's rkey, a GID), so
 * that the handlers act on it instead of dropping it.
 */
static int hostile_llc(const struct smcr_sock_local *l, const uint8_t *gid, uint8_t *buf, size_t size)
{
	static const uint8_t flags[] = { 0, SMCR_LLC_FLAG_RESP, SMCR_LLC_FLAG_DEL_LINK_ALL, SMCR_LLC_FLAG_ADD_LNK_REJ,
					 SMCR_LLC_FLAG_RKEY_NEG | SMCR_LLC_FLAG_RESP, SMCR_LLC_FLAG_RKEY_RETRY };
	struct smcr_llc_msg m;
	uint8_t *p = (uint8_t *)&m;

	for (size_t i = 0; i < sizeof(m); i++)
		p[i] = (uint8_t)rnd();
	m.hd.type = (uint8_t)(1 + rnd() % 9);
	/* a DELETE LINK ends the test's link: rarely */
	if (m.hd.type == SMCR_LLC_DELETE_LINK && rnd() % 8)
		m.hd.type = SMCR_LLC_TEST_LINK;
	m.hd.version = rnd() % 2 ? SMCR_LLC_VERSION_V2 : 0;
	m.hd.length = SMCR_LLC_LEN;
	m.hd.rej_rsn = 0;
	m.hd.flags = flags[rnd() % sizeof(flags)];
	switch (m.hd.type) {
	case SMCR_LLC_CONFIRM_LINK:
		m.confirm_link.link_num = (uint8_t)(rnd() % 4);
		m.confirm_link.sender_qp_num &= 0xffffff;
		break;
	case SMCR_LLC_ADD_LINK:
		m.add_link.link_num = (uint8_t)(rnd() % 4);
		m.add_link.sender_qp_num &= 0xffffff;
		m.add_link.initial_psn &= 0xffffff;
		m.add_link.qp_mtu = (uint8_t)(1 + rnd() % 5);
		m.add_link.has_ext = m.hd.version == SMCR_LLC_VERSION_V2;
		m.add_link.num_rkeys = (uint16_t)(rnd() % 4 ? rnd() % 4 : rnd() % (SMCR_LLC_RKEYS_V2_MAX + 1));
		if (rnd() % 2)
			memcpy(m.add_link.client_target_gid, gid, 16);
		if (m.add_link.num_rkeys)
			m.add_link.rt[0].rmb_key = l->rkey;
		break;
	case SMCR_LLC_ADD_LINK_CONT:
		m.add_link_cont.link_num = (uint8_t)(rnd() % 4);
		m.add_link_cont.num_rkeys = (uint8_t)(rnd() % 4);
		m.add_link_cont.rt[0].rmb_key = l->rkey;
		break;
	case SMCR_LLC_DELETE_LINK:
		m.delete_link.link_num = (uint8_t)(rnd() % 4);
		break;
	case SMCR_LLC_REQ_ADD_LINK:
		m.req_add_link.gid_cnt = (uint8_t)(rnd() % (SMCR_LLC_GIDS_MAX + 1));
		if (m.hd.version != SMCR_LLC_VERSION_V2 && m.req_add_link.gid_cnt > 1)
			m.req_add_link.gid_cnt = 1;
		if (m.req_add_link.gid_cnt && rnd() % 2)
			memcpy(m.req_add_link.gid[0], gid, 16);
		break;
	case SMCR_LLC_CONFIRM_RKEY:
		m.confirm_rkey.rt[0].link_id = (uint8_t)(rnd() % 4);
		m.confirm_rkey.rt[0].rmb_key = l->rkey;
		for (int i = 1; i < (int)SMCR_LLC_RKEYS_PER_MSG; i++)
			m.confirm_rkey.rt[i].link_id = (uint8_t)(rnd() % 4);
		break;
	case SMCR_LLC_CONFIRM_RKEY_CONT:
		m.confirm_rkey_cont.num_rkeys = (uint8_t)(rnd() % 5);
		break;
	case SMCR_LLC_DELETE_RKEY:
		m.delete_rkey.num_rkeys = (uint8_t)(rnd() % (m.hd.version ? 12 : SMCR_LLC_DEL_RKEY_MAX + 1));
		m.delete_rkey.rkey[0] = l->rkey;
		break;
	}
	return smcr_llc_encode(&m, SMCR_LLC_HO_LE, buf, size);
}

/*
 * A peer that sends LLC messages nobody asked for, of every type, with
 * fields that name the group's own links, keys and GIDs or none: nothing is
 * read or written out of bounds (ASan), and the groups, their links and
 * their connections are freed as after any other peer.
 */
TEST(smcr_lgr_hostile_llc_messages)
{
	static const struct smcr_env env = { .poll = poll, .syscall = syscall, .ring = ring, .llc = llc };
	uint8_t gs[16], gc[16], buf[SMCR_LLC_ENC_MAX_LEN];
	unsigned sent = 0, before[16], kinds = 0;

	smcr_env_set(&env);
	for (int t = 0; t < 16; t++)
		before[t] = llc_seen[1][t];
	for (unsigned round = 0; round < 12; round++) {
		struct smcr_lgr *sg, *cg;
		struct smcr_sock *ss, *cs;
		struct smcr_sock_local ls, lc;

		xs = 0x9e3779b97f4a7c15ull * (round + 1);
		/* each round's own addresses: the last round's queue pairs may still go */
		fake_rdma_gid(gs, (uint8_t)(40 + round), 1);
		fake_rdma_gid(gc, (uint8_t)(40 + round), 2);
		if (!one_link_groups("hs0", "hc0", gs, gc, &sg, &cg) || !one_link_conn(sg, cg, &ss, &cs, &ls, &lc))
			return;
		/* each group hears the other's messages, the server's and the client's alike */
		for (int i = 0; i < 60; i++) {
			bool to_server = i % 2;
			struct smcr_lgr *from = to_server ? cg : sg;
			int len = hostile_llc(to_server ? &ls : &lc, to_server ? gs : gc, buf, sizeof(buf));

			if (len <= 0)
				continue;
			pthread_mutex_lock(&from->mu);
			if (!from->link[0].dead && rdma_post_msg(from->link[0].qp, buf, (size_t)len, 0) == 0)
				sent++;
			pthread_mutex_unlock(&from->mu);
			if (i % 8 == 7)
				usleep(2000);
		}
		usleep(20000);
		smcr_sock_free(ss);
		smcr_sock_free(cs);
		smcr_lgr_put(sg);
		smcr_lgr_put(cg);
	}
	CHECK(sent > 200);
	/* the layer took in messages of every type (its env.llc saw them come) */
	for (int t = SMCR_LLC_CONFIRM_LINK; t <= SMCR_LLC_DELETE_RKEY; t++)
		kinds += llc_seen[1][t] > before[t];
	CHECK_INT(kinds, 9);
	for (int i = 0; i < 5000 && fake_rdma_dev_qps_live("hs0") + fake_rdma_dev_qps_live("hc0"); i++)
		usleep(2000);
	CHECK_INT(fake_rdma_dev_qps_live("hs0") + fake_rdma_dev_qps_live("hc0"), 0);
}

/*
 * The progress thread watches every link of the process: a server with a
 * group per client process has many (its poll set held 32 links, and the
 * others' completions waited for its next round, up to a second).
 */
TEST(smcr_lgr_every_link_is_watched)
{
	static const struct smcr_env env = { .poll = poll, .syscall = syscall, .ring = ring, .llc = llc };
	enum { N = 40 };
	struct smcr_lgr *g[N];
	unsigned seen = 0;
	uint8_t gid[16];

	smcr_env_set(&env);
	for (int i = 0; i < N; i++) {
		fake_rdma_gid(gid, 90, (uint8_t)(i + 1));
		CHECK_INT(smcr_lgr_new(true, &g[i]), 0);
		CHECK_INT(smcr_link_open(g[i], "wl0", 1, gid), 0);
	}
	smcr_engine_kick();
	for (int i = 0; i < 5000 && (seen = smcr_engine_links_watched()) < N; i++)
		usleep(1000);
	CHECK(seen >= N);
	for (int i = 0; i < N; i++)
		smcr_lgr_put(g[i]);
}
