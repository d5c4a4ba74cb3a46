/*
 * Soft SMC-R's set-up from CLC messages (preload/transport/rdma_clc.c) over
 * the fake RDMA of fake_rdma.c: a first contact (PROPOSAL, ACCEPT, CONFIRM,
 * CONFIRM LINK) makes a link group, a second connection between the same
 * two processes joins it, each pair of ends carries bytes through its
 * transports; a proposal of another kind and DECLINE messages.
 */
#include "unit.h"
#include "fake_rdma.h"
#include "clc.h"
#include "smc_size.h"
#include "smcr.h"
#include "smcr_int.h"
#include "transport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct conn_ends {
	struct rdma_neg *cli, *srv;
	struct transport tc, ts;
	int rc_srv;
	uint8_t confirm[512];
	int confirm_len;
};

static void *server_confirms(void *p)
{
	struct conn_ends *e = p;

	e->rc_srv = rdma_neg_confirmed(e->srv, e->confirm, (size_t)e->confirm_len);
	return NULL;
}

static struct in_addr addr(const char *s)
{
	struct in_addr a;

	inet_pton(AF_INET, s, &a);
	return a;
}

static const struct rdma_ports cli_ports = { .dev = "fcl0", .port = 1 }, srv_ports = { .dev = "fsv0", .port = 1 };

/* The client's CONFIRM kept in e: the link confirmed at both ends, each end bound to its transport. */
static void confirm_and_bind(struct conn_ends *e)
{
	pthread_t th;

	/* the server confirms the link while the client answers */
	CHECK_INT(pthread_create(&th, NULL, server_confirms, e), 0);
	CHECK_INT(rdma_neg_confirm_link(e->cli), 0);
	pthread_join(th, NULL);
	CHECK_INT(e->rc_srv, 0);
	CHECK_INT(rdma_neg_bind(e->cli, &e->tc), 0);
	CHECK_INT(rdma_neg_bind(e->srv, &e->ts), 0);
	rdma_neg_free(e->cli);
	rdma_neg_free(e->srv);
}

/* One connection set up as the two libraries do it on these ports, its CLC messages handed over directly. */
static void set_up_on(struct conn_ends *e, bool *first_contact, const struct rdma_ports *cp,
		      const struct rdma_ports *sp, const char *cli_addr, const char *srv_addr)
{
	uint8_t prop[CLC_PROPOSAL_MAX], acc[512];
	struct clc_smcr_accept a;
	int lp, la;

	lp = rdma_neg_propose(cp, addr(cli_addr), &e->cli, prop, sizeof(prop));
	CHECK(lp > 0);
	la = rdma_neg_answer(sp, addr(srv_addr), prop, (size_t)lp, &e->srv, acc, sizeof(acc));
	CHECK(la > 0);
	CHECK_INT(clc_smcr_accept_decode(acc, (size_t)la, &a) > 0, 1);
	*first_contact = a.first_contact;
	e->confirm_len = rdma_neg_accepted(e->cli, acc, (size_t)la, e->confirm, sizeof(e->confirm));
	CHECK(e->confirm_len > 0);
	confirm_and_bind(e);
}

static void set_up(struct conn_ends *e, bool *first_contact)
{
	set_up_on(e, first_contact, &cli_ports, &srv_ports, "10.30.0.1", "10.30.0.2");
}

static void bytes_across_within(struct transport *from, struct transport *to, const char *text, int seconds)
{
	struct iovec v = { (void *)text, strlen(text) };
	char buf[64] = "";
	struct iovec r = { buf, sizeof(buf) - 1 };
	ssize_t n = -1;

	CHECK_INT(from->ops->produce(from, &v, 1, NULL), (long)strlen(text));
	for (int i = 0; i < seconds * 500 && (n = to->ops->consume(to, &r, 1, 0, NULL)) == -EAGAIN; i++)
		usleep(2000);
	CHECK_INT(n, (long)strlen(text));
	CHECK(!strcmp(buf, text));
}

/* 10 s at most: a loaded machine may hold the progress thread back */
static void bytes_across(struct transport *from, struct transport *to, const char *text)
{
	bytes_across_within(from, to, text, 10);
}

static void close_ends(struct conn_ends *e)
{
	e->tc.ops->close(&e->tc);
	e->ts.ops->close(&e->ts);
	e->tc.ops->unmap(&e->tc);
	e->ts.ops->unmap(&e->ts);
}

static void all_freed(void)
{
	for (int i = 0; i < 5000 && smcr_socks(); i++)
		usleep(2000);
	CHECK_INT(smcr_socks(), 0);
}

/* Both connections closed at both ends: every connection of the layer freed. */
static void close_both(struct conn_ends *one, struct conn_ends *two)
{
	close_ends(one);
	close_ends(two);
	all_freed();
}

static bool ring(uint32_t bell)
{
	(void)bell;
	return true;
}

TEST(rdma_clc_first_contact_then_a_second_connection)
{
	static const struct smcr_env env = { .poll = poll, .syscall = syscall, .ring = ring, .drive = true };
	struct conn_ends one, two;
	struct tp_drive d1, d2;
	bool fc1 = false, fc2 = true;

	smcr_env_set(&env);
	rdma_clc_after_fork_child();    /* whatever test ran before: a first contact */
	memset(&one, 0, sizeof(one));
	memset(&two, 0, sizeof(two));
	set_up(&one, &fc1);
	CHECK(fc1);
	bytes_across(&one.tc, &one.ts, "proposal, accept, confirm");
	bytes_across(&one.ts, &one.tc, "and back");
	/* the same two processes: the server's group is found, no first contact */
	set_up(&two, &fc2);
	CHECK(!fc2);
	bytes_across(&two.tc, &two.ts, "second connection");
	bytes_across(&one.ts, &one.tc, "first still there");
	/* a sleeper borrows its link's channel; the other connection's, on the same link, sleeps as before */
	CHECK(one.tc.ops->drive_begin(&one.tc, false, 0, &d1));
	CHECK(d1.fd >= 0);
	CHECK(!two.tc.ops->drive_begin(&two.tc, true, 0, &d2));
	one.tc.ops->drive_take(&one.tc, &d1, false);
	one.tc.ops->drive_end(&one.tc, &d1);
	CHECK(two.tc.ops->drive_begin(&two.tc, true, 0, &d2));
	two.tc.ops->drive_take(&two.tc, &d2, false);
	two.tc.ops->drive_end(&two.tc, &d2);
	/*
	 * With nobody else asleep on the link, the channel stays lent from one
	 * sleep to the next (a take-back by the progress thread after 10 ms
	 * idle costs one lend more: a loaded machine may see a few)
	 */
	long lends = fake_rdma_lends;
	for (int i = 0; i < 20; i++) {
		CHECK(two.tc.ops->drive_begin(&two.tc, true, 0, &d2));
		two.tc.ops->drive_take(&two.tc, &d2, false);
		two.tc.ops->drive_end(&two.tc, &d2);
	}
	CHECK(fake_rdma_lends - lends < 10);
	/* another connection's poll-style sleeper on the link: given back after every sleep */
	uint32_t wake;
	CHECK(!one.tc.ops->rx_sleep_begin(&one.tc, &wake, 7));
	lends = fake_rdma_lends;
	for (int i = 0; i < 20; i++) {
		CHECK(two.tc.ops->drive_begin(&two.tc, true, 0, &d2));
		two.tc.ops->drive_take(&two.tc, &d2, false);
		two.tc.ops->drive_end(&two.tc, &d2);
	}
	CHECK_INT(fake_rdma_lends - lends, 20);
	one.tc.ops->rx_sleep_end(&one.tc);
	bytes_across(&two.tc, &two.ts, "the channel given back");
	/* left lent by a last sleeper with nobody else asleep: the progress thread takes it back */
	CHECK(two.ts.ops->drive_begin(&two.ts, true, 0, &d2));
	two.ts.ops->drive_take(&two.ts, &d2, false);
	long unlends = fake_rdma_unlends;
	two.ts.ops->drive_end(&two.ts, &d2);
	for (int i = 0; i < 5000 && fake_rdma_unlends == unlends; i++)
		usleep(2000);
	CHECK(fake_rdma_unlends > unlends);
	bytes_across(&two.tc, &two.ts, "nobody asleep on it");
	close_both(&one, &two);
}

TEST(rdma_clc_declines)
{
	uint8_t m[64], prop[CLC_PROPOSAL_MAX];
	struct clc_proposal p = { .version = CLC_V2, .typev1 = CLC_SMC_N, .typev2 = CLC_SMC_R, .eid_cnt = 1,
				  .release = 1 };
	struct rdma_neg *n = NULL;
	uint32_t reason = 0;
	int len = rdma_clc_decline(0x03030000, m, sizeof(m));

	CHECK_INT(len, CLC_DECLINE_LEN_V2);
	CHECK_INT(rdma_clc_declined(m, (size_t)len, &reason), 1);
	CHECK_INT(reason, 0x03030000);
	m[4] ^= 0xff;                   /* the header's length byte */
	CHECK(rdma_clc_declined(m, (size_t)len, &reason) <= 0);
	/* a PROPOSAL is no DECLINE */
	memcpy(p.eid[0], "SOMEONE ELSE'S EID              ", CLC_EID_LEN);
	len = clc_proposal_encode(&p, prop, sizeof(prop));
	CHECK(len > 0);
	CHECK_INT(rdma_clc_declined(prop, (size_t)len, &reason), 0);
	/* a proposal without our EID, or truncated: the server cannot answer it */
	CHECK_INT(rdma_neg_answer(&srv_ports, addr("10.30.0.2"), prop, (size_t)len, &n, m, sizeof(m)), -EPROTO);
	CHECK_INT(rdma_neg_answer(&srv_ports, addr("10.30.0.2"), prop, 10, &n, m, sizeof(m)), -EPROTO);
	CHECK(n == NULL);
}

/* Waits until the link group of transport t says what want says (its links in smcr_lgr_describe()'s words). */
static bool links_are(struct transport *t, const char *want)
{
	char buf[512];

	for (int i = 0; i < 5000; i++) {
		transport_rdma_links(t, buf, sizeof(buf));
		if (strstr(buf, want))
			return true;
		usleep(2000);
	}
	unit_fail(__FILE__, __LINE__, "links: want \"%s\" in:\n%s", want, buf);
	return false;
}

/*
 * A new process's first contact between two hosts with two devices each
 * (the client names its second GID, the server adds the second link), then
 * a second connection in the same group: both links up, two connections.
 */
static void two_links_two_conns(struct conn_ends *one, struct conn_ends *two, const struct rdma_ports *cp,
				const struct rdma_ports *sp, const char *cli, const char *srv)
{
	static const struct smcr_env env = { .poll = poll, .syscall = syscall, .ring = ring };
	bool fc1 = false, fc2 = true;

	smcr_env_set(&env);
	rdma_clc_after_fork_child();    /* a new process as far as the groups go: a first contact */
	memset(one, 0, sizeof(*one));
	memset(two, 0, sizeof(*two));
	set_up_on(one, &fc1, cp, sp, cli, srv);
	CHECK(fc1);
	CHECK(links_are(&one->ts, "link 1 (number 2) connected up"));
	CHECK(links_are(&one->tc, "link 1 (number 2) connected up"));
	set_up_on(two, &fc2, cp, sp, cli, srv);
	CHECK(!fc2);
}

TEST(rdma_clc_second_link_carries_the_connection_when_the_first_fails_and_links_come_back)
{
	struct rdma_ports cp = { .dev = "fcl2", .port = 1, .alt_dev = "fcl3", .alt_port = 1 };
	struct rdma_ports sp = { .dev = "fsv2", .port = 1, .alt_dev = "fsv3", .alt_port = 1 };
	struct conn_ends one, two;

	fake_rdma_gid(cp.alt_gid, 41, 1);
	fake_rdma_gid(sp.alt_gid, 41, 2);
	two_links_two_conns(&one, &two, &cp, &sp, "10.40.0.1", "10.40.0.2");
	bytes_across(&one.tc, &one.ts, "before");
	bytes_across(&two.ts, &two.tc, "before, second");
	/* the first link's device goes: both connections go on over the second */
	fake_rdma_port_down("fsv2");
	CHECK(links_are(&one.ts, "link 0 (number 1) connected up dead"));
	bytes_across(&one.tc, &one.ts, "after the failover");
	bytes_across(&one.ts, &one.tc, "and back");
	bytes_across(&two.tc, &two.ts, "after, second");
	/* the device comes back: the server adds the link again, under a new number */
	fake_rdma_port_up("fsv2");
	CHECK(links_are(&one.ts, "link 0 (number 3) connected up:"));
	CHECK(links_are(&one.tc, "link 0 (number 3) connected up:"));
	/* and the other goes: the connections move back to the link that came back */
	fake_rdma_port_down("fcl3");
	/* the server's port is active: its dead link has a new queue pair, not connected */
	CHECK(links_are(&one.ts, "link 1 (number 2) up dead"));
	bytes_across(&one.tc, &one.ts, "over the link that came back");
	bytes_across(&two.ts, &two.tc, "over it too");
	/* the client's port comes back: it asks, the server adds it again */
	fake_rdma_port_up("fcl3");
	CHECK(links_are(&one.ts, "link 1 (number 4) connected up:"));
	CHECK(links_are(&one.tc, "link 1 (number 4) connected up:"));
	close_both(&one, &two);
}

/* A device deleted and added again (rdma link delete/add): opened again by name, its link added again. */
TEST(rdma_clc_links_return_when_a_deleted_device_is_added_again)
{
	struct rdma_ports cp = { .dev = "fcl4", .port = 1, .alt_dev = "fcl5", .alt_port = 1 };
	struct rdma_ports sp = { .dev = "fsv4", .port = 1, .alt_dev = "fsv5", .alt_port = 1 };
	struct conn_ends one, two;

	fake_rdma_gid(cp.alt_gid, 43, 1);
	fake_rdma_gid(sp.alt_gid, 43, 2);
	two_links_two_conns(&one, &two, &cp, &sp, "10.42.0.1", "10.42.0.2");
	bytes_across(&one.tc, &one.ts, "before");
	/*
	 * The client's first device is deleted: a fatal event, and posts on it
	 * fail (EIO), at once: the link fails, not the connections, which move.
	 */
	fake_rdma_delete("fcl4");
	bytes_across(&one.tc, &one.ts, "after the delete");
	CHECK(links_are(&one.tc, "link 0 (number 1) connected up dead"));
	bytes_across(&two.ts, &two.tc, "after the delete, second");
	/* a device of that name comes back: opened, registered, asked for; the server adds it */
	fake_rdma_add("fcl4");
	CHECK(links_are(&one.tc, "link 0 (number 3) connected up:"));
	CHECK(links_are(&one.ts, "link 0 (number 3) connected up:"));
	/* the other link goes: the connections move to the new device's link, with its rkeys */
	fake_rdma_port_down("fcl5");
	CHECK(links_are(&one.tc, "link 1 (number 2) connected up dead"));
	bytes_across(&one.tc, &one.ts, "over the new device");
	bytes_across(&one.ts, &one.tc, "and back");
	bytes_across(&two.tc, &two.ts, "over it, second");
	close_both(&one, &two);
	/* the old link's queue pair, kept while its port is down (rdma_retire()), goes */
	fake_rdma_port_up("fcl5");
}

TEST(rdma_clc_second_gid_without_a_port_for_it_is_refused)
{
	static const struct smcr_env env = { .poll = poll, .syscall = syscall, .ring = ring };
	struct rdma_ports cp = { .dev = "fcl4", .port = 1, .alt_dev = "fcl5", .alt_port = 1 };
	struct rdma_ports sp = { .dev = "fsv4", .port = 1 };
	struct conn_ends one, two;
	bool fc1 = false, fc2 = true;

	smcr_env_set(&env);
	rdma_clc_after_fork_child();
	fake_rdma_gid(cp.alt_gid, 51, 1);
	memset(&one, 0, sizeof(one));
	memset(&two, 0, sizeof(two));
	set_up_on(&one, &fc1, &cp, &sp, "10.50.0.1", "10.50.0.2");
	CHECK(fc1);
	/* the server has no second port: it says so, and the client's spare link is given up */
	CHECK(links_are(&one.tc, "link 1 (number 0) dead"));
	set_up_on(&two, &fc2, &cp, &sp, "10.50.0.1", "10.50.0.2");
	CHECK(!fc2);
	bytes_across(&two.tc, &two.ts, "one link");
	close_both(&one, &two);
}

/*
 * rxe parks a queue pair for good (doc/soft-roce.md section 4): posts taken,
 * nothing sent, no error.  The watchdog fails the link after 10 s without
 * a completion, its connections go on over the other link with the bytes
 * the parked one held, and the link comes back at once on new queue pairs
 * (its port never went down), under a new number, and carries them again.
 */
TEST(rdma_clc_a_parked_link_fails_over_and_comes_back_at_once)
{
	struct rdma_ports cp = { .dev = "fcl6", .port = 1, .alt_dev = "fcl7", .alt_port = 1 };
	struct rdma_ports sp = { .dev = "fsv6", .port = 1, .alt_dev = "fsv7", .alt_port = 1 };
	struct conn_ends one, two;

	fake_rdma_gid(cp.alt_gid, 45, 1);
	fake_rdma_gid(sp.alt_gid, 45, 2);
	two_links_two_conns(&one, &two, &cp, &sp, "10.44.0.1", "10.44.0.2");
	bytes_across(&one.ts, &one.tc, "before");
	/* the server's queue pair of the first link parks: its bytes wait for the watchdog */
	fake_rdma_park("fsv6");
	bytes_across_within(&one.ts, &one.tc, "held by a parked queue pair", 30);
	bytes_across(&two.ts, &two.tc, "the second, after the failover");
	bytes_across(&one.tc, &one.ts, "and back");
	CHECK(links_are(&one.ts, "link 0 (number 3) connected up:"));
	CHECK(links_are(&one.tc, "link 0 (number 3) connected up:"));
	/* the other link goes: the connections move back to the one that came back */
	fake_rdma_port_down("fcl7");
	CHECK(links_are(&one.tc, "link 1 (number 2) connected up dead"));
	bytes_across(&one.ts, &one.tc, "over the link that came back");
	bytes_across(&two.tc, &two.ts, "over it too");
	close_both(&one, &two);
	/* the old link's queue pair, kept while its port is down (rdma_retire()), goes */
	fake_rdma_port_up("fcl7");
}

/*
 * SMCR_LGR_CONNS_MAX connections fill a group (an ADD LINK names every
 * one's rkey): the next is the first contact of a new group between the same
 * processes, the one after joins it, and each client end finds its group by
 * the queue pair the server's ACCEPT named.
 */
TEST(rdma_clc_a_full_group_gives_way_to_a_new_one)
{
	static const struct smcr_env env = { .poll = poll, .syscall = syscall, .ring = ring };
	static const struct rdma_ports cp = { .dev = "fcl9", .port = 1 }, sp = { .dev = "fsv9", .port = 1 };
	enum { N = SMCR_LGR_CONNS_MAX + 2 };
	static struct conn_ends e[N];
	unsigned firsts = 0;
	bool fc;

	smcr_env_set(&env);
	rdma_clc_after_fork_child();
	memset(e, 0, sizeof(e));
	for (unsigned i = 0; i < N; i++) {
		fc = false;
		set_up_on(&e[i], &fc, &cp, &sp, "10.46.0.1", "10.46.0.2");
		if (fc != (i == 0 || i == SMCR_LGR_CONNS_MAX))
			unit_fail(__FILE__, __LINE__, "connection %u: first contact %d", i, fc);
		firsts += fc;
	}
	CHECK_INT(firsts, 2);
	bytes_across(&e[0].tc, &e[0].ts, "the first group");
	bytes_across(&e[N - 1].tc, &e[N - 1].ts, "the second group, joined");
	bytes_across(&e[N - 1].ts, &e[N - 1].tc, "and back");
	bytes_across(&e[SMCR_LGR_CONNS_MAX - 1].ts, &e[SMCR_LGR_CONNS_MAX - 1].tc, "the first group's last");
	for (unsigned i = 0; i < N; i++)
		close_ends(&e[i]);
	all_freed();
}

/*
 * A set-up that fails on the device declines with the kernel's code for
 * the step: no queue pair for a first contact's link, no registration of
 * a connection's buffers (a memlock limit says ENOMEM).  Nothing is left
 * behind: the next connection is set up and carries bytes.
 */
TEST(rdma_clc_set_up_failures_decline_with_the_kernels_codes)
{
	static const struct smcr_env env = { .poll = poll, .syscall = syscall, .ring = ring };
	static const struct rdma_ports cp = { .dev = "fcl8", .port = 1 }, sp = { .dev = "fsv8", .port = 1 };
	uint8_t prop[CLC_PROPOSAL_MAX], acc[512];
	struct rdma_neg *cli = NULL, *srv = NULL;
	struct conn_ends one, two;
	bool fc = false;
	int lp, rc;

	smcr_env_set(&env);
	rdma_clc_after_fork_child();
	lp = rdma_neg_propose(&cp, addr("10.47.0.1"), &cli, prop, sizeof(prop));
	CHECK(lp > 0);
	fake_rdma_fail_qp("fsv8", -ENOMEM);
	rc = rdma_neg_answer(&sp, addr("10.47.0.2"), prop, (size_t)lp, &srv, acc, sizeof(acc));
	CHECK_INT(rc, -ENOMEM);
	CHECK_INT(rdma_neg_reason(rc), 0x01010000);     /* MEM, as smc_lgr_create() says */
	fake_rdma_fail_qp("fsv8", -EINVAL);
	rc = rdma_neg_answer(&sp, addr("10.47.0.2"), prop, (size_t)lp, &srv, acc, sizeof(acc));
	CHECK_INT(rdma_neg_reason(rc), 0x09990000);     /* INTERR */
	CHECK(srv == NULL);
	/* a device's EAGAIN is a failure, not the wait for a first contact */
	fake_rdma_fail_qp("fsv8", -EAGAIN);
	rc = rdma_neg_answer(&sp, addr("10.47.0.2"), prop, (size_t)lp, &srv, acc, sizeof(acc));
	CHECK_INT(rc, -EIO);
	fake_rdma_fail_qp("fsv8", 0);
	rc = rdma_neg_answer(&sp, addr("10.47.0.2"), prop, (size_t)lp, &srv, acc, sizeof(acc));
	CHECK(rc > 0);
	fake_rdma_fail_qp("fcl8", -EAGAIN);
	CHECK_INT(rdma_neg_accepted(cli, acc, (size_t)rc, prop, sizeof(prop)), -EIO);
	fake_rdma_fail_qp("fcl8", 0);
	rdma_neg_free(srv);
	srv = NULL;
	fake_rdma_fail_qp("fsv8", 0);
	rdma_neg_free(cli);
	/* a group's queue pairs go once it is freed (retired in the background) */
	for (int i = 0; i < 2500 && fake_rdma_dev_qps_live("fsv8"); i++)
		usleep(2000);
	CHECK_INT(fake_rdma_dev_qps_live("fsv8"), 0);
	CHECK_INT(fake_rdma_dev_qps_live("fcl8"), 0);

	memset(&one, 0, sizeof(one));
	set_up_on(&one, &fc, &cp, &sp, "10.47.0.1", "10.47.0.2");
	CHECK(fc);
	/* the group is there: a second connection's buffers do not register, at the server, then at the client */
	cli = srv = NULL;
	lp = rdma_neg_propose(&cp, addr("10.47.0.1"), &cli, prop, sizeof(prop));
	CHECK(lp > 0);
	fake_rdma_fail_mr("fsv8", -ENOMEM);
	rc = rdma_neg_answer(&sp, addr("10.47.0.2"), prop, (size_t)lp, &srv, acc, sizeof(acc));
	CHECK_INT(rc, -EKEYREJECTED);
	CHECK_INT(rdma_neg_reason(rc), 0x09990003);     /* ERR_REGBUF */
	fake_rdma_fail_mr("fsv8", 0);
	rc = rdma_neg_answer(&sp, addr("10.47.0.2"), prop, (size_t)lp, &srv, acc, sizeof(acc));
	CHECK(rc > 0);
	fake_rdma_fail_mr("fcl8", -ENOMEM);
	rc = rdma_neg_accepted(cli, acc, (size_t)rc, prop, sizeof(prop));
	CHECK_INT(rdma_neg_reason(rc), 0x09990003);
	fake_rdma_fail_mr("fcl8", 0);
	rdma_neg_free(cli);
	rdma_neg_free(srv);

	memset(&two, 0, sizeof(two));
	set_up_on(&two, &fc, &cp, &sp, "10.47.0.1", "10.47.0.2");
	CHECK(!fc);
	bytes_across(&one.tc, &one.ts, "the first");
	bytes_across(&two.ts, &two.tc, "the one after the failures");
	close_both(&one, &two);
}

/* One end's half of a set-up, for the tests that interleave two. */
static void propose(const struct rdma_ports *cp, const char *a, struct rdma_neg **cli, uint8_t *prop, int *lp)
{
	*lp = rdma_neg_propose(cp, addr(a), cli, prop, CLC_PROPOSAL_MAX);
	CHECK(*lp > 0);
}

/*
 * Connections that start while the first contact with their peer process
 * is under way wait for its group (-EAGAIN) rather than make a group each
 * (the server) or miss the one the server's ACCEPT names (the client); a
 * first contact that fails lets the next one be a first contact.
 */
TEST(rdma_clc_a_second_connection_waits_for_the_first_contact)
{
	static const struct smcr_env env = { .poll = poll, .syscall = syscall, .ring = ring };
	static const struct rdma_ports cp = { .dev = "fcl7", .port = 1 }, sp = { .dev = "fsv7", .port = 1 };
	uint8_t prop[CLC_PROPOSAL_MAX], prop2[CLC_PROPOSAL_MAX], acc[512], acc2[512], conf[512];
	struct rdma_neg *cli = NULL, *srv = NULL, *cli2 = NULL, *srv2 = NULL, *cli3 = NULL;
	struct clc_smcr_accept a;
	struct conn_ends one, two;
	int lp, lp2, la, la2;

	smcr_env_set(&env);
	rdma_clc_after_fork_child();
	/* a first contact that fails leaves none under way */
	propose(&cp, "10.48.0.1", &cli, prop, &lp);
	CHECK(rdma_neg_answer(&sp, addr("10.48.0.2"), prop, (size_t)lp, &srv, acc, sizeof(acc)) > 0);
	rdma_neg_free(srv);
	rdma_neg_free(cli);
	cli = srv = NULL;

	memset(&one, 0, sizeof(one));
	propose(&cp, "10.48.0.1", &one.cli, prop, &lp);
	la = rdma_neg_answer(&sp, addr("10.48.0.2"), prop, (size_t)lp, &one.srv, acc, sizeof(acc));
	CHECK(la > 0);
	CHECK_INT(clc_smcr_accept_decode(acc, (size_t)la, &a) > 0, 1);
	CHECK(a.first_contact);
	/* the server's group is not there yet: the second proposal waits */
	propose(&cp, "10.48.0.1", &cli2, prop2, &lp2);
	CHECK_INT(rdma_neg_answer(&sp, addr("10.48.0.2"), prop2, (size_t)lp2, &srv2, acc2, sizeof(acc2)),
		  -EAGAIN);
	CHECK(srv2 == NULL);
	one.confirm_len = rdma_neg_accepted(one.cli, acc, (size_t)la, one.confirm, sizeof(one.confirm));
	CHECK(one.confirm_len > 0);
	CHECK_INT(rdma_neg_answer(&sp, addr("10.48.0.2"), prop2, (size_t)lp2, &srv2, acc2, sizeof(acc2)),
		  -EAGAIN);
	/* an ACCEPT that names the group the client's first contact is making: it waits too */
	a.first_contact = false;
	la2 = clc_smcr_accept_encode(&a, acc2, sizeof(acc2));
	CHECK(la2 > 0);
	propose(&cp, "10.48.0.1", &cli3, prop, &lp);
	CHECK_INT(rdma_neg_accepted(cli3, acc2, (size_t)la2, conf, sizeof(conf)), -EAGAIN);
	confirm_and_bind(&one);
	/* the group is there at both ends: the client's ACCEPT is taken, the waiting proposal joins it */
	CHECK(rdma_neg_accepted(cli3, acc2, (size_t)la2, conf, sizeof(conf)) > 0);
	rdma_neg_free(cli3);
	memset(&two, 0, sizeof(two));
	two.cli = cli2;
	la2 = rdma_neg_answer(&sp, addr("10.48.0.2"), prop2, (size_t)lp2, &two.srv, acc2, sizeof(acc2));
	CHECK(la2 > 0);
	CHECK_INT(clc_smcr_accept_decode(acc2, (size_t)la2, &a) > 0, 1);
	CHECK(!a.first_contact);
	two.confirm_len = rdma_neg_accepted(two.cli, acc2, (size_t)la2, two.confirm, sizeof(two.confirm));
	CHECK(two.confirm_len > 0);
	confirm_and_bind(&two);
	bytes_across(&two.tc, &two.ts, "waited for the first");
	bytes_across(&one.ts, &one.tc, "the first");
	close_both(&one, &two);
}

/*
 * A process whose locked-memory room runs low starts its connections with
 * smaller buffers (room for 8 more of that size).  Buffers the device does
 * not register whole (a user's RLIMIT_MEMLOCK) are halved until they fit,
 * down to 16 KiB, as the kernel downgrades; the two ends' sizes need not
 * be the same.  None that fits: ERR_REGBUF.
 */
TEST(rdma_clc_buffers_shrink_to_what_may_be_registered)
{
	static const struct smcr_env env = { .poll = poll, .syscall = syscall, .ring = ring };
	static const struct rdma_ports cp = { .dev = "fcl6", .port = 1 }, sp = { .dev = "fsv6", .port = 1 };
	uint8_t prop[CLC_PROPOSAL_MAX], acc[512];
	struct rdma_neg *cli = NULL, *srv = NULL;
	struct clc_smcr_accept a;
	struct conn_ends one, two;
	uint32_t rmb, snd;
	bool fc = false;
	char big[40000];
	int lp, la;

	smcr_env_set(&env);
	rdma_clc_after_fork_child();
	memset(&one, 0, sizeof(one));
	set_up_on(&one, &fc, &cp, &sp, "10.49.0.1", "10.49.0.2");
	CHECK(fc);
	/* 2 MiB left: 8 more of 384 KiB do not fit, 8 of 192 KiB do: a 64 KiB RMB */
	fake_rdma_mr_budget("fsv6", fake_rdma_mr_bytes("fsv6") + 2048 * 1024);
	propose(&cp, "10.49.0.1", &cli, prop, &lp);
	CHECK(rdma_neg_answer(&sp, addr("10.49.0.2"), prop, (size_t)lp, &srv, acc, sizeof(acc)) > 0);
	rdma_neg_bufs(srv, &rmb, &snd);
	CHECK_INT(rmb, 65536);
	CHECK_INT(snd, 131072);
	rdma_neg_free(srv);
	rdma_neg_free(cli);
	cli = srv = NULL;
	/*
	 * Room for a 16 KiB RMB and its 32 KiB send buffer, no more, and the
	 * process cannot tell: the registrations fail down to it
	 */
	fake_rdma_mr_budget("fsv6", fake_rdma_mr_bytes("fsv6") + 48 * 1024);
	fake_rdma_room_hidden = true;
	memset(&two, 0, sizeof(two));
	propose(&cp, "10.49.0.1", &two.cli, prop, &lp);
	la = rdma_neg_answer(&sp, addr("10.49.0.2"), prop, (size_t)lp, &two.srv, acc, sizeof(acc));
	CHECK(la > 0);
	CHECK_INT(clc_smcr_accept_decode(acc, (size_t)la, &a) > 0, 1);
	CHECK_INT(smc_code_size(a.rmbe_size), 16384);
	rdma_neg_bufs(two.srv, &rmb, &snd);
	CHECK_INT(rmb, 16384);
	CHECK_INT(snd, 32768);
	two.confirm_len = rdma_neg_accepted(two.cli, acc, (size_t)la, two.confirm, sizeof(two.confirm));
	CHECK(two.confirm_len > 0);
	CHECK_INT(rdma_neg_confirmed(two.srv, two.confirm, (size_t)two.confirm_len), 0);
	CHECK_INT(rdma_neg_confirm_link(two.cli), 0);
	rdma_neg_bufs(two.cli, &rmb, &snd);
	CHECK_INT(rmb, 131072);
	CHECK_INT(snd, 262144);
	CHECK_INT(rdma_neg_bind(two.cli, &two.tc), 0);
	CHECK_INT(rdma_neg_bind(two.srv, &two.ts), 0);
	rdma_neg_free(two.cli);
	rdma_neg_free(two.srv);
	/* a write larger than the server's RMB arrives whole, through it */
	memset(big, 'r', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	{
		struct iovec v = { big, sizeof(big) - 1 };
		char got[sizeof(big)];
		size_t have = 0;
		long n = two.tc.ops->produce(&two.tc, &v, 1, NULL);

		CHECK_INT(n, (long)sizeof(big) - 1);
		for (int i = 0; i < 5000 && have < sizeof(big) - 1; i++) {
			struct iovec r = { got + have, sizeof(got) - 1 - have };
			ssize_t k = two.ts.ops->consume(&two.ts, &r, 1, 0, NULL);

			if (k > 0)
				have += (size_t)k;
			else
				usleep(2000);
		}
		CHECK_INT((long)have, (long)sizeof(big) - 1);
		CHECK(!memcmp(got, big, sizeof(big) - 1));
	}
	/* nothing fits any more: the kernel's ERR_REGBUF */
	propose(&cp, "10.49.0.1", &cli, prop, &lp);
	la = rdma_neg_answer(&sp, addr("10.49.0.2"), prop, (size_t)lp, &srv, acc, sizeof(acc));
	CHECK_INT(rdma_neg_reason(la), 0x09990003);
	rdma_neg_free(cli);
	fake_rdma_room_hidden = false;
	fake_rdma_mr_budget("fsv6", 0);
	bytes_across(&one.tc, &one.ts, "the first, full size");
	bytes_across(&two.ts, &two.tc, "the small one, back");
	close_both(&one, &two);
}

/*
 * A client process that ended leaves its server's group until a TEST LINK
 * goes unanswered; under a user's RLIMIT_MEMLOCK the next client's first
 * contact does not fit beside it (a link's message slots alone hold some
 * 520 KiB).  Short of memory, the server lets its groups without a
 * connection go and tries once more: the next client gets SMC-R.
 */
TEST(rdma_clc_a_first_contact_short_of_memory_lets_unused_groups_go)
{
	static const struct smcr_env env = { .poll = poll, .syscall = syscall, .ring = ring };
	static const struct rdma_ports cp = { .dev = "fcla", .port = 1 }, sp = { .dev = "fsva", .port = 1 };
	uint8_t prop[CLC_PROPOSAL_MAX], acc[512];
	struct clc_proposal p1, p2;
	struct clc_smcr_accept a;
	struct conn_ends one, two;
	bool fc = false;
	int lp, la;

	smcr_env_set(&env);
	rdma_clc_after_fork_child();
	memset(&one, 0, sizeof(one));
	set_up_on(&one, &fc, &cp, &sp, "10.51.0.1", "10.51.0.2");
	CHECK(fc);
	bytes_across(&one.tc, &one.ts, "the first client");
	close_ends(&one);
	all_freed();
	CHECK_INT(fake_rdma_dev_qps_live("fsva"), 1);
	/* room for what the unused group holds and a connection more, not for a second link */
	fake_rdma_mr_budget("fsva", fake_rdma_mr_bytes("fsva") + 64 * 1024);
	/* another client process: its proposal with another system id */
	memset(&two, 0, sizeof(two));
	propose(&cp, "10.51.0.1", &two.cli, prop, &lp);
	CHECK(clc_proposal_decode(prop, (size_t)lp, &p1) > 0);
	prop[8 + CLC_SYSTEMID_LEN - 1] ^= 0x5a;
	CHECK(clc_proposal_decode(prop, (size_t)lp, &p2) > 0);
	CHECK(memcmp(p1.system_id, p2.system_id, CLC_SYSTEMID_LEN) != 0);
	la = rdma_neg_answer(&sp, addr("10.51.0.2"), prop, (size_t)lp, &two.srv, acc, sizeof(acc));
	CHECK(la > 0);
	if (la <= 0) {
		rdma_neg_free(two.cli);
		fake_rdma_mr_budget("fsva", 0);
		return;
	}
	CHECK_INT(clc_smcr_accept_decode(acc, (size_t)la, &a) > 0, 1);
	CHECK(a.first_contact);
	/* the old group went, its queue pair with it */
	CHECK_INT(fake_rdma_dev_qps_live("fsva"), 1);
	two.confirm_len = rdma_neg_accepted(two.cli, acc, (size_t)la, two.confirm, sizeof(two.confirm));
	CHECK(two.confirm_len > 0);
	confirm_and_bind(&two);
	bytes_across(&two.tc, &two.ts, "the next client");
	bytes_across(&two.ts, &two.tc, "and back");
	fake_rdma_mr_budget("fsva", 0);
	close_ends(&two);
	all_freed();
}

/*
 * A client process closed its connections and ended, saying so
 * (smcr_lgr_goodbye(), its DELETE LINK): the server's group ended, and
 * leaves the list at the next look (rdma_clc_groups_prune()), so that the
 * progress thread frees it, its queue pair with it, at once rather than
 * at the next negotiation.  A group with a link up stays: the next
 * connection between the two processes joins it.
 */
TEST(rdma_clc_an_ended_group_leaves_at_once)
{
	static const struct smcr_env env = { .poll = poll, .syscall = syscall, .ring = ring };
	static const struct rdma_ports cp = { .dev = "fclb", .port = 1 }, sp = { .dev = "fsvb", .port = 1 };
	struct conn_ends one, two;
	struct smcr_lgr *cg;
	uint32_t ckey = 0;
	uint8_t link;
	bool fc = false;

	smcr_env_set(&env);
	rdma_clc_after_fork_child();
	memset(&one, 0, sizeof(one));
	memset(&two, 0, sizeof(two));
	set_up_on(&one, &fc, &cp, &sp, "10.52.0.1", "10.52.0.2");
	CHECK(fc);
	bytes_across(&one.tc, &one.ts, "the client's last words");
	transport_rdma_where(&one.tc, &ckey, &link);
	rdma_clc_groups_prune();
	set_up_on(&two, &fc, &cp, &sp, "10.52.0.1", "10.52.0.2");
	CHECK(!fc);
	bytes_across(&two.tc, &two.ts, "joined");
	close_both(&one, &two);
	CHECK_INT(fake_rdma_dev_qps_live("fsvb"), 1);
	cg = smcr_lgr_of_key(ckey);
	CHECK(cg != NULL);
	if (!cg)
		return;
	CHECK_INT(smcr_lgr_goodbye(cg), 1);
	smcr_lgr_put(cg);
	for (int i = 0; i < 5000 && fake_rdma_dev_qps_live("fsvb"); i++) {
		rdma_clc_groups_prune();
		usleep(2000);
	}
	CHECK_INT(fake_rdma_dev_qps_live("fsvb"), 0);
}
