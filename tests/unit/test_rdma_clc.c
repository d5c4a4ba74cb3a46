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
#include "smcr.h"
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

/* One connection set up as the two libraries do it, its CLC messages handed over directly. */
static void set_up(struct conn_ends *e, bool *first_contact)
{
	uint8_t prop[CLC_PROPOSAL_MAX], acc[512];
	struct clc_smcr_accept a;
	int lp, la;
	pthread_t th;

	lp = rdma_neg_propose("fcl0", 1, addr("10.30.0.1"), &e->cli, prop, sizeof(prop));
	CHECK(lp > 0);
	la = rdma_neg_answer("fsv0", 1, addr("10.30.0.2"), prop, (size_t)lp, &e->srv, acc, sizeof(acc));
	CHECK(la > 0);
	CHECK_INT(clc_smcr_accept_decode(acc, (size_t)la, &a) > 0, 1);
	*first_contact = a.first_contact;
	e->confirm_len = rdma_neg_accepted(e->cli, acc, (size_t)la, e->confirm, sizeof(e->confirm));
	CHECK(e->confirm_len > 0);
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

static void bytes_across(struct transport *from, struct transport *to, const char *text)
{
	struct iovec v = { (void *)text, strlen(text) };
	char buf[64] = "";
	struct iovec r = { buf, sizeof(buf) - 1 };
	ssize_t n = -1;

	CHECK_INT(from->ops->produce(from, &v, 1, NULL), (long)strlen(text));
	for (int i = 0; i < 500 && (n = to->ops->consume(to, &r, 1, 0, NULL)) == -EAGAIN; i++)
		usleep(2000);
	CHECK_INT(n, (long)strlen(text));
	CHECK(!strcmp(buf, text));
}

static bool ring(uint32_t bell)
{
	(void)bell;
	return true;
}

TEST(rdma_clc_first_contact_then_a_second_connection)
{
	static const struct smcr_env env = { .poll = poll, .syscall = syscall, .ring = ring };
	struct conn_ends one, two;
	bool fc1 = false, fc2 = true;

	smcr_env_set(&env);
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
	for (int i = 0; i < 2; i++) {
		struct conn_ends *e = i ? &two : &one;

		e->tc.ops->close(&e->tc);
		e->ts.ops->close(&e->ts);
		e->tc.ops->unmap(&e->tc);
		e->ts.ops->unmap(&e->ts);
	}
	for (int i = 0; i < 500 && smcr_socks(); i++)
		usleep(2000);
	CHECK_INT(smcr_socks(), 0);
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
	CHECK_INT(rdma_neg_answer("fsv0", 1, addr("10.30.0.2"), prop, (size_t)len, &n, m, sizeof(m)), -EPROTO);
	CHECK_INT(rdma_neg_answer("fsv0", 1, addr("10.30.0.2"), prop, 10, &n, m, sizeof(m)), -EPROTO);
	CHECK(n == NULL);
}
