/*
 * The smcd/smcr code against smc_softd's request core, without a daemon:
 * each command runs once against canned acks so that its requests are
 * captured as it sends them, the requests go to soft_handle(), and the
 * command runs again on smc_softd's replies.
 */
#include "softfx.h"
#include "peer.h"
#include "soft/fabric/devices.h"
#include "soft/base/stats.h"
#include "soft/families/families.h"
#include "smc/smc.h"
#include "smc_uapi.h"

#include <errno.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/utsname.h>

#define MAX_REQ 4

struct trip {
	struct sfx f;
	struct peer p;
	pthread_t server;
	struct capture out, err;
	struct smc_ctx ctx;
	const struct soft_peer *who;     /* the caller smc_softd sees */
	struct mb req[MAX_REQ];          /* the requests of the last command */
	int nreq;
};

/* The far end: each request datagram to soft_handle(), its replies back. */
static void *serve(void *arg)
{
	static unsigned char buf[65536];
	struct trip *t = arg;
	ssize_t n;

	while ((n = recv(t->p.fd, buf, sizeof(buf), 0)) > 0) {
		if (t->nreq < MAX_REQ && (size_t)n <= sizeof(t->req[0].buf)) {
			memcpy(t->req[t->nreq].buf, buf, (size_t)n);
			t->req[t->nreq++].len = (size_t)n;
		}
		t->f.out.len = 0;
		soft_handle(&t->f.st, t->who, buf, (size_t)n, -1, &t->f.out);
		send(t->p.fd, t->f.out.buf, t->f.out.len, 0);
	}
	return NULL;
}

static void trip_init(struct trip *t, bool smcd, int level)
{
	struct timeval tv = { .tv_sec = 5 };

	sfx_init(&t->f, true);
	peer_init(&t->p);
	t->p.g.family = SOFT_ID_GEN;
	/* a lost reply fails the command instead of hanging the test */
	setsockopt(t->p.g.nl.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	cap_open(&t->out);
	cap_open(&t->err);
	t->ctx = (struct smc_ctx){ .prog = smcd ? "smcd" : "smcr", .smcd = smcd, .level = level,
				   .g = &t->p.g, .out = t->out.f, .err = t->err.f };
	t->who = &t->f.user;
	pthread_create(&t->server, NULL, serve, t);
}

static void trip_free(struct trip *t)
{
	shutdown(t->p.g.nl.fd, SHUT_RDWR);
	pthread_join(t->server, NULL);
	cap_free(&t->out);
	cap_free(&t->err);
	peer_close(&t->p);
	sfx_free(&t->f);
}

/* Run cmd as caller who against smc_softd's core; output in t->out / t->err. */
static int trip_run(struct trip *t, const struct soft_peer *who,
		    int (*cmd)(struct smc_ctx *, int, char **), int argc, char **argv)
{
	cap_free(&t->out);
	cap_free(&t->err);
	cap_open(&t->out);
	cap_open(&t->err);
	t->ctx.out = t->out.f;
	t->ctx.err = t->err.f;
	t->who = who;
	t->nreq = 0;
	return cmd(&t->ctx, argc, argv);
}

/* A request as the kernel expects it: header, genl cmd, version 1. */
static void check_req(const struct mb *m, uint8_t cmd, uint16_t flags)
{
	const struct nlmsghdr *h = (const struct nlmsghdr *)m->buf;
	const struct genlmsghdr *g = (const struct genlmsghdr *)(m->buf + NLMSG_HDRLEN);

	CHECK_INT(h->nlmsg_len, m->len);
	CHECK_INT(h->nlmsg_type, SOFT_ID_GEN);
	CHECK_INT(h->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK | flags);
	CHECK_INT(g->cmd, cmd);
	CHECK_INT(g->version, 1);
}

TEST(soft_tools_ueid_add_and_show)
{
	char *add[] = { "add", "SOME-EID" }, *show[] = { "show" };
	struct trip t;
	struct mb exp;

	trip_init(&t, false, 0);
	CHECK_INT(trip_run(&t, &t.f.admin, smc_ueid_cmd, 2, add), 0);
	CHECK_STR(cap_text(&t.err), "");
	CHECK_INT(t.nreq, 1);
	/* the request, byte by byte: the EID blank-padded to 32 and a NUL */
	check_req(&t.req[0], SMC_NETLINK_ADD_UEID, 0);
	sfx_req(&exp, SOFT_ID_GEN, SMC_NETLINK_ADD_UEID, 0, 0);
	mb_str(&exp, SMC_NLA_EID_TABLE_ENTRY, "SOME-EID                        ");
	CHECK_INT(t.req[0].len, exp.len);
	CHECK(!memcmp(t.req[0].buf + NLMSG_HDRLEN, exp.buf + NLMSG_HDRLEN, exp.len - NLMSG_HDRLEN));
	CHECK_INT(t.f.st.n_ueid, 1);
	CHECK_INT(trip_run(&t, &t.f.admin, smc_ueid_cmd, 2, add), SMC_EXIT_FAIL);
	CHECK_STR(cap_text(&t.err), "Error: specified User EID is already defined\n");
	CHECK_INT(trip_run(&t, &t.f.user, smc_ueid_cmd, 1, show), 0);
	check_req(&t.req[0], SMC_NETLINK_DUMP_UEID, NLM_F_DUMP);
	CHECK_STR(cap_text(&t.out), "SOME-EID                        \n");
	CHECK_INT(trip_run(&t, &t.f.user, smc_ueid_cmd, 2, add), SMC_EXIT_FAIL);
	CHECK_STR(cap_text(&t.err), "Error: Operation not permitted\n");
	trip_free(&t);
}

TEST(soft_tools_seid_enable_unsupported)
{
	char *enable[] = { "enable" };
	struct trip t;

	trip_init(&t, true, 0);
	CHECK_INT(trip_run(&t, &t.f.user, smc_seid_cmd, 0, NULL), 0);
	CHECK_STR(cap_text(&t.out), " [disabled]\n");
	CHECK_INT(trip_run(&t, &t.f.admin, smc_seid_cmd, 1, enable), SMC_EXIT_FAIL);
	CHECK_INT(t.nreq, 2);
	check_req(&t.req[0], SMC_NETLINK_DUMP_SEID, NLM_F_DUMP);
	check_req(&t.req[1], SMC_NETLINK_ENABLE_SEID, 0);
	CHECK_STR(cap_text(&t.err), "Error: operation not supported by kernel\n");
	trip_free(&t);
}

TEST(soft_tools_info_and_devices)
{
	char expect[512];
	struct utsname u;
	struct trip t;

	trip_init(&t, true, 0);
	uname(&u);
	CHECK_INT(trip_run(&t, &t.f.user, smc_info_cmd, 0, NULL), 0);
	CHECK_INT(t.nreq, 3);
	check_req(&t.req[0], SMC_NETLINK_GET_DEV_SMCD, NLM_F_DUMP);
	check_req(&t.req[1], SMC_NETLINK_GET_DEV_SMCR, NLM_F_DUMP);
	check_req(&t.req[2], SMC_NETLINK_GET_SYS_INFO, NLM_F_DUMP);
	snprintf(expect, sizeof(expect),
		 "Kernel Capabilities\n"
		 "SMC Version:      2.1\n"
		 "SMC Hostname:     %-32.32s\n"
		 "SMC-D Features:   v1 v2\n"
		 "SMC-R Features:   v1 v2\n"
		 "\n"
		 "Hardware Capabilities\n"
		 "SEID:             n/a\n"
		 "ISM:              v1 v2\n"
		 "RoCE:             n/a\n", u.nodename);
	CHECK_STR(cap_text(&t.out), expect);

	strcpy(soft_dev_ism(&t.f.st)->pnetid[0], "NETD");
	soft_dev_ism(&t.f.st)->pnet_user[0] = true;
	CHECK_INT(trip_run(&t, &t.f.user, smc_device_cmd, 0, NULL), 0);
	CHECK_STR(cap_text(&t.out),
		  "FID  Type  PCI-ID        PCHID  InUse  #LGs  PNET-ID  \n"
		  "0000 ISM   ffff:00:00.0  ff01   No        0  *NETD            \n");
	trip_free(&t);
}

TEST(soft_tools_smcr_device)
{
	char expect[512];
	struct soft_dev *d;
	struct trip t;

	trip_init(&t, false, 1);
	d = soft_dev_find_roce(&t.f.st, "sr_test");
	CHECK_INT(trip_run(&t, &t.f.user, smc_device_cmd, 0, NULL), 0);
	check_req(&t.req[0], SMC_NETLINK_GET_DEV_SMCR, NLM_F_DUMP);
	snprintf(expect, sizeof(expect),
		 "Net-Dev         IB-Dev   IB-P  IB-State  Type          Crit   FID   PCI-ID        PCHID  #Links  PNET-ID  \n"
		 "lo              sr_test     1  %8s  0               No   0000                0000        0                   \n",
		 soft_dev_port_active(d, 1) ? "ACTIVE" : "INACTIVE");
	CHECK_STR(cap_text(&t.out), expect);
	trip_free(&t);
}

TEST(soft_tools_stats_absolute)
{
	struct trip t;
	const char *out;

	trip_init(&t, true, SMC_LVL_ABSOLUTE);
	soft_stats_conn(soft_ns_get(&t.f.st, t.f.st.init_netns), true, false, true);
	CHECK_INT(trip_run(&t, &t.f.user, smc_stats_cmd, 0, NULL), 0);
	CHECK_INT(t.nreq, 2);
	check_req(&t.req[0], SMC_NETLINK_GET_FBACK_STATS, NLM_F_DUMP);
	check_req(&t.req[1], SMC_NETLINK_GET_STATS, NLM_F_DUMP);
	out = cap_text(&t.out);
	CHECK(!strncmp(out, "SMC-D Connections Summary\n"
		       "  Total connections handled             1\n"
		       "  SMC connections                       1\n", 110));
	trip_free(&t);
}
