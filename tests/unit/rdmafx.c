/* Two ends of one soft SMC-R connection over the fake RDMA (rdmafx.h). */
#include "unit.h"
#include "rdmafx.h"

#include <poll.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

_Atomic uint32_t rdmafx_rung;
bool rdmafx_drive;

static bool ring(uint32_t bell)
{
	atomic_store(&rdmafx_rung, bell);
	return true;
}

struct confirm_job {
	struct rdmafx_end *e;
	const struct smcr_sock_peer *peer;
	int rc;
};

static void *confirm_client(void *p)
{
	struct confirm_job *j = p;

	j->rc = smcr_link_confirm(j->e->g, 0, 1);
	return NULL;
}

static void *connect_client(void *p)
{
	struct confirm_job *j = p;

	j->rc = smcr_sock_connect(j->e->s, j->peer);
	return NULL;
}

void rdmafx_pair_up(struct rdmafx_end *srv, struct rdmafx_end *cli, uint8_t net)
{
	static const struct smcr_env env = { .poll = poll, .syscall = syscall, .ring = ring };
	static const struct smcr_env env_drive = { .poll = poll, .syscall = syscall, .ring = ring,
						   .drive = true };
	struct rdma_qp_addr a_s, a_c;
	struct smcr_sock_local ls, lc;
	struct smcr_sock_peer ps, pc;
	struct confirm_job j = { cli, &ps, -1 };
	uint8_t gs[16], gc[16];
	pthread_t th;

	smcr_env_set(rdmafx_drive ? &env_drive : &env);
	/* every test's devices on a network of their own */
	fake_rdma_gid(gs, net, 1);
	fake_rdma_gid(gc, net, 2);
	CHECK_INT(smcr_lgr_new(true, &srv->g), 0);
	CHECK_INT(smcr_lgr_new(false, &cli->g), 0);
	CHECK_INT(smcr_link_open(srv->g, srv->dev, 1, gs), 0);
	CHECK_INT(smcr_link_open(cli->g, cli->dev, 1, gc), 0);
	smcr_link_local(srv->g, 0, &a_s);
	smcr_link_local(cli->g, 0, &a_c);
	CHECK_INT(smcr_link_connect(srv->g, 0, &a_c), 0);
	CHECK_INT(smcr_link_connect(cli->g, 0, &a_s), 0);
	CHECK_INT(pthread_create(&th, NULL, confirm_client, &j), 0);
	CHECK_INT(smcr_link_confirm(srv->g, 0, 1), 0);
	pthread_join(th, NULL);
	CHECK_INT(j.rc, 0);
	CHECK_INT(smcr_sock_new(srv->g, NULL, RDMAFX_RMB, RDMAFX_RMB, &srv->s), 0);
	smcr_sock_local(srv->s, &ls);
	CHECK_INT(smcr_sock_new(cli->g, &ls.qp, RDMAFX_RMB, RDMAFX_RMB, &cli->s), 0);
	smcr_sock_local(cli->s, &lc);
	ps = (struct smcr_sock_peer){ ls.rkey, ls.rmb_addr, ls.rmb_size, ls.token };
	pc = (struct smcr_sock_peer){ lc.rkey, lc.rmb_addr, lc.rmb_size, lc.token };
	j.rc = -1;
	CHECK_INT(pthread_create(&th, NULL, connect_client, &j), 0);
	CHECK_INT(smcr_sock_connect(srv->s, &pc), 0);
	pthread_join(th, NULL);
	CHECK_INT(j.rc, 0);
	CHECK_INT(transport_rdma_bind(&srv->t, srv->s, lc.rmb_size), 0);
	CHECK_INT(transport_rdma_bind(&cli->t, cli->s, ls.rmb_size), 0);
	srv->t.ops->holders_first(&srv->t);
	cli->t.ops->holders_first(&cli->t);
}

