/*
 * SMC_SOFT PAIR and STATS_ATTACH (wire/reg.h) through soft_handle(), with
 * real loopback connections: the replies and their memfd, what sock_diag,
 * the link groups and the counters show, declines, and what is refused.
 */
#include "unit.h"
#include "regfx.h"
#include "soft/fabric/devices.h"
#include "wire/dmb.h"
#include "soft/fabric/lgr.h"
#include "wire/pstats.h"
#include "soft/service/service.h"
#include "soft/registry/regidx.h"
#include "soft/base/stats.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <libmnl/libmnl.h>

struct pair_rep {
	uint64_t token, peer_token, dmb_token, peer_dmb_token, shm_size;
	uint32_t reason, diag, lgr_id, ring[2];
	uint8_t status, side, transport;
	int n_ring;
	int fd;                          /* the attached descriptor, -1 */
	int err;                         /* NLMSG_ERROR, 1 when none */
};

static int rep_attr(const struct nlattr *a, void *data)
{
	struct pair_rep *r = data;
	const void *p = mnl_attr_get_payload(a);

	switch (mnl_attr_get_type(a)) {
	case SMC_SOFT_A_TOKEN: memcpy(&r->token, p, 8); break;
	case SMC_SOFT_A_PEER_TOKEN: memcpy(&r->peer_token, p, 8); break;
	case SMC_SOFT_A_DMB_TOKEN: memcpy(&r->dmb_token, p, 8); break;
	case SMC_SOFT_A_PEER_DMB_TOKEN: memcpy(&r->peer_dmb_token, p, 8); break;
	case SMC_SOFT_A_SHM_SIZE: memcpy(&r->shm_size, p, 8); break;
	case SMC_SOFT_A_REASON: memcpy(&r->reason, p, 4); break;
	case SMC_SOFT_A_PEER_DIAGNOSIS: memcpy(&r->diag, p, 4); break;
	case SMC_SOFT_A_LGR_ID: memcpy(&r->lgr_id, p, 4); break;
	case SMC_SOFT_A_PAIR_STATUS: r->status = *(const uint8_t *)p; break;
	case SMC_SOFT_A_SIDE: r->side = *(const uint8_t *)p; break;
	case SMC_SOFT_A_TRANSPORT: r->transport = *(const uint8_t *)p; break;
	case SMC_SOFT_A_RING_SIZE:
		if (r->n_ring < 2)
			memcpy(&r->ring[r->n_ring], p, 4);
		r->n_ring++;
		break;
	}
	return MNL_CB_OK;
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* PAIR of a copy of fd as p; the reply's descriptor is taken out of f->out. */
static void pair(struct regfx *f, const struct soft_peer *p, int fd, uint8_t role,
		 uint32_t snd, uint32_t rcv, struct pair_rep *r)
{
	const struct nlmsghdr *nlh;
	struct mb m;

	memset(r, 0, sizeof(*r));
	r->fd = -1;
	regfx_req(&m, SMC_SOFT_CMD_PAIR, 0);
	mb_u8(&m, SMC_SOFT_A_ROLE, role);
	if (snd)
		mb_u32(&m, SMC_SOFT_A_SNDBUF, snd);
	if (rcv)
		mb_u32(&m, SMC_SOFT_A_RCVBUF, rcv);
	regfx_run(f, p, &m, fd < 0 ? -1 : dup(fd));
	r->err = regfx_error(f);
	nlh = regfx_find(f, SOFT_ID_SOFT);
	if (nlh)
		mnl_attr_parse(nlh, GENL_HDRLEN, rep_attr, r);
	if (f->out.n_fds == 1) {
		CHECK(nlh && f->out.fds[0].off == (size_t)((const unsigned char *)nlh - f->out.buf));
		r->fd = f->out.fds[0].fd;
		f->out.n_fds = 0;
	}
}

static void add_ism(struct regfx *f)
{
	char *const roce[] = { "sr_unit=lo" };
	char err[256];

	CHECK_INT(soft_devs_init(&f->st, roce, 1, err, sizeof(err)), 0);
}

static struct soft_peer other_conn(const struct regfx *f, uint64_t conn_id)
{
	struct soft_peer p = f->peer;

	p.conn_id = conn_id;
	return p;
}

static struct soft_stats_tech *smcd_stats(struct regfx *f)
{
	struct soft_ns *ns = soft_ns_get(&f->st, f->st.init_netns);

	return ns && ns->stats ? &ns->stats->smc[SOFT_TECH_D] : NULL;
}

TEST(soft_pair_two_ends)
{
	struct regfx f;
	struct regfx_tcp t;
	struct soft_peer b;
	struct pair_rep ra, rb;
	struct smcss_opts o = { .smcd = true };
	struct dmb_conn da, db;
	struct soft_stats_tech *st;
	const struct soft_lgr *lgr;
	char *got;

	regfx_init(&f);
	add_ism(&f);
	b = other_conn(&f, 2);
	regfx_tcp_open(&t, AF_INET);
	pair(&f, &f.peer, t.cli, 0, 16384, 0, &ra);
	CHECK_INT(ra.err, 1);
	CHECK_INT(ra.status, SMC_SOFT_PAIR_PENDING);
	CHECK_INT(ra.side, 0);
	CHECK_INT(ra.transport, SMC_SOFT_TRANSPORT_RING);
	CHECK_INT(ra.lgr_id, 0);
	CHECK_INT(ra.n_ring, 2);
	CHECK_INT(ra.ring[0], 16384);
	CHECK_INT(ra.ring[1], DMB_DEFAULT_SIZE);
	CHECK_INT(ra.shm_size, DMB_HDR_SIZE + 16384 + DMB_DEFAULT_SIZE);
	CHECK(ra.fd >= 0);
	CHECK(soft_lgr_first(&f.st) == NULL);

	pair(&f, &b, t.srv, 1, 0, 0, &rb);
	CHECK_INT(rb.err, 1);
	CHECK_INT(rb.status, SMC_SOFT_PAIR_PAIRED);
	CHECK_INT(rb.side, 1);
	CHECK_INT(rb.transport, SMC_SOFT_TRANSPORT_RING);
	CHECK_INT(rb.peer_token, ra.token);
	CHECK_INT(rb.peer_dmb_token, ra.dmb_token);
	CHECK_INT(rb.ring[0], DMB_DEFAULT_SIZE);
	CHECK_INT(rb.ring[1], 16384);
	CHECK(rb.fd >= 0);
	lgr = soft_lgr_first(&f.st);
	CHECK(lgr && lgr->smcd && lgr->conns == 1 && soft_lgr_id(lgr) == rb.lgr_id);
	CHECK(lgr && lgr->peer_gid == soft_dev_ism(&f.st)->gid);

	/* the two ends share the region */
	CHECK_INT(dmb_map(ra.fd, 0, &da), 0);
	CHECK_INT(dmb_map(rb.fd, 1, &db), 0);
	{
		struct iovec iov = { .iov_base = "abc", .iov_len = 3 };

		CHECK_INT(dmb_produce(&da, &iov, 1, 0, NULL), 3);
	}
	CHECK_INT(regfx_dump(&f, &f.peer, 0xff), 0);
	got = regfx_smcss(&f, &o);
	CHECK(got && strstr(got, " SMCD ") && strstr(got, "0000000000000001"));
	free(got);
	o = (struct smcss_opts){ .debug = true };
	got = regfx_smcss(&f, &o);
	/* the server end: 3 bytes produced into its receive ring */
	CHECK(got && strstr(got, "0000:00000003 0000:00000000"));
	free(got);

	st = smcd_stats(&f);
	CHECK(st && st->clnt_v2_succ_cnt == 1 && st->srv_v2_succ_cnt == 1);
	CHECK(st && st->rx_rmbuse == 16384 + DMB_DEFAULT_SIZE);
	CHECK_INT(regfx_del(&f, &b, rb.token), 0);
	CHECK(soft_lgr_first(&f.st) == NULL);
	soft_conn_gone(&f.st, f.peer.conn_id);
	st = smcd_stats(&f);
	CHECK(st && st->rx_rmbuse == 0 && st->tx_rmbuse == 0);
	dmb_unmap(&da);
	dmb_unmap(&db);
	close(ra.fd);
	close(rb.fd);
	regfx_tcp_close(&t);
	regfx_free(&f);
}

/* SOCK_INFO of a copy of fd as p: the reply as a PAIR reply's. */
static void sock_info(struct regfx *f, const struct soft_peer *p, int fd, struct pair_rep *r)
{
	const struct nlmsghdr *nlh;
	struct mb m;

	memset(r, 0, sizeof(*r));
	r->fd = -1;
	regfx_req(&m, SMC_SOFT_CMD_SOCK_INFO, 0);
	regfx_run(f, p, &m, fd < 0 ? -1 : dup(fd));
	r->err = regfx_error(f);
	nlh = regfx_find(f, SOFT_ID_SOFT);
	if (nlh) {
		CHECK_INT(((const struct genlmsghdr *)mnl_nlmsg_get_payload(nlh))->cmd,
			  SMC_SOFT_CMD_SOCK_INFO);
		mnl_attr_parse(nlh, GENL_HDRLEN, rep_attr, r);
	}
	if (f->out.n_fds == 1) {
		r->fd = f->out.fds[0].fd;
		f->out.n_fds = 0;
	}
}

/* After execve: whoever holds the socket gets its region again, no one else. */
TEST(soft_pair_sock_info_after_exec)
{
	struct regfx f;
	struct regfx_tcp t, u;
	struct soft_peer b, c;
	struct pair_rep ra, rb, ri;
	struct dmb_conn da, di;
	struct iovec iov = { .iov_base = "xyz", .iov_len = 3 };
	char buf[8];
	struct iovec in = { .iov_base = buf, .iov_len = sizeof(buf) };

	regfx_init(&f);
	add_ism(&f);
	b = other_conn(&f, 2);
	c = other_conn(&f, 3);
	regfx_tcp_open(&t, AF_INET);
	regfx_tcp_open(&u, AF_INET);
	sock_info(&f, &c, -1, &ri);
	CHECK_INT(ri.err, -EINVAL);
	sock_info(&f, &c, t.cli, &ri);
	CHECK_INT(ri.err, -ENOENT);
	pair(&f, &f.peer, t.cli, 0, 0, 0, &ra);
	pair(&f, &b, t.srv, 1, 0, 0, &rb);
	CHECK_INT(rb.status, SMC_SOFT_PAIR_PAIRED);
	/* another connection (the new image) passes the server's socket */
	sock_info(&f, &c, t.srv, &ri);
	CHECK_INT(ri.err, 1);
	CHECK_INT(ri.status, SMC_SOFT_PAIR_PAIRED);
	CHECK_INT(ri.side, 1);
	CHECK_INT(ri.token, rb.token);
	CHECK_INT(ri.peer_token, ra.token);
	CHECK(ri.fd >= 0);
	CHECK_INT(dmb_map(ra.fd, 0, &da), 0);
	CHECK_INT(dmb_map(ri.fd, 1, &di), 0);
	CHECK_INT(dmb_produce(&da, &iov, 1, 0, NULL), 3);
	CHECK_INT(dmb_consume(&di, &in, 1, 0, NULL), 3);
	CHECK(!memcmp(buf, "xyz", 3));
	/* a socket of another connection has no region */
	sock_info(&f, &c, u.cli, &ri);
	CHECK_INT(ri.err, -ENOENT);
	CHECK_INT(ri.fd, -1);
	dmb_unmap(&da);
	dmb_unmap(&di);
	close(ra.fd);
	close(rb.fd);
	regfx_tcp_close(&t);
	regfx_tcp_close(&u);
	regfx_free(&f);
}

/* An IPv4 client of a server listening on "::" (iperf3, for one). */
TEST(soft_pair_ipv4_client_of_dual_stack_server)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT };
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a6);
	int off = 0, lst, cli, srv;
	struct regfx f;
	struct soft_peer b;
	struct pair_rep ra, rb;

	regfx_init(&f);
	add_ism(&f);
	b = other_conn(&f, 2);
	lst = socket(AF_INET6, SOCK_STREAM, 0);
	CHECK(lst >= 0);
	CHECK_INT(setsockopt(lst, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)), 0);
	CHECK_INT(bind(lst, (struct sockaddr *)&a6, sizeof(a6)), 0);
	CHECK_INT(listen(lst, 1), 0);
	CHECK_INT(getsockname(lst, (struct sockaddr *)&a6, &len), 0);
	a4.sin_port = a6.sin6_port;
	cli = socket(AF_INET, SOCK_STREAM, 0);
	CHECK_INT(connect(cli, (struct sockaddr *)&a4, sizeof(a4)), 0);
	srv = accept(lst, NULL, NULL);
	CHECK(srv >= 0);
	pair(&f, &f.peer, cli, 0, 0, 0, &ra);
	CHECK_INT(ra.status, SMC_SOFT_PAIR_PENDING);
	pair(&f, &b, srv, 1, 0, 0, &rb);
	CHECK_INT(rb.status, SMC_SOFT_PAIR_PAIRED);
	CHECK_INT(rb.peer_token, ra.token);
	close(ra.fd);
	close(rb.fd);
	close(cli);
	close(srv);
	close(lst);
	regfx_free(&f);
}

TEST(soft_pair_refused)
{
	struct regfx f;
	struct regfx_tcp t;
	struct pair_rep r;
	struct mb m;
	int before = open_fds();

	regfx_init(&f);
	add_ism(&f);
	regfx_tcp_open(&t, AF_INET6);
	regfx_req(&m, SMC_SOFT_CMD_PAIR, 0);          /* no ROLE */
	regfx_run(&f, &f.peer, &m, dup(t.cli));
	CHECK_INT(regfx_error(&f), -EINVAL);
	pair(&f, &f.peer, t.cli, 2, 0, 0, &r);
	CHECK_INT(r.err, -EINVAL);
	pair(&f, &f.peer, -1, 0, 0, 0, &r);
	CHECK_INT(r.err, -EINVAL);
	pair(&f, &f.peer, t.lst, 1, 0, 0, &r);        /* not connected */
	CHECK_INT(r.err, -EINVAL);
	regfx_req(&m, SMC_SOFT_CMD_PAIR, 0);
	mb_u8(&m, SMC_SOFT_A_ROLE, 0);
	mb_u16(&m, SMC_SOFT_A_SNDBUF, 1);
	regfx_run(&f, &f.peer, &m, dup(t.cli));
	CHECK_INT(regfx_error(&f), -EINVAL);
	pair(&f, &f.peer, t.cli, 0, 0, 0, &r);
	CHECK_INT(r.status, SMC_SOFT_PAIR_PENDING);
	close(r.fd);
	pair(&f, &f.peer, t.cli, 0, 0, 0, &r);
	CHECK_INT(r.err, -EEXIST);
	CHECK(r.fd < 0);
	/* a PAIR registration keeps its state */
	CHECK_INT(regfx_state(&f, &f.peer, 1, SMC_SOFT_STATE_INIT, -1), -EINVAL);
	regfx_tcp_close(&t);
	regfx_free(&f);
	CHECK_INT(open_fds(), before);
}

TEST(soft_pair_pending_dropped_is_a_fallback)
{
	struct regfx f;
	struct regfx_tcp t;
	struct pair_rep r;
	struct soft_ns *ns;

	regfx_init(&f);
	add_ism(&f);
	regfx_tcp_open(&t, AF_INET);
	pair(&f, &f.peer, t.srv, 1, 0, 0, &r);
	CHECK_INT(r.status, SMC_SOFT_PAIR_PENDING);
	close(r.fd);
	soft_conn_gone(&f.st, f.peer.conn_id);
	ns = soft_ns_get(&f.st, f.st.init_netns);
	CHECK(ns && ns->stats && ns->stats->srv_fback_cnt == 1 && ns->stats->clnt_fback_cnt == 0);
	CHECK(ns && ns->stats && ns->stats->srv[0].fback_code == 0x03010000);
	regfx_tcp_close(&t);
	regfx_free(&f);
}

TEST(soft_pair_pnet_declines_both)
{
	struct regfx f;
	struct regfx_tcp t;
	struct soft_peer b;
	struct pair_rep ra, rb;
	struct smcss_opts o = { .all = true };
	char *got;

	regfx_init(&f);
	add_ism(&f);
	snprintf(soft_dev_ism(&f.st)->pnetid[0], SOFT_PNETID_LEN + 1, "NET1");
	b = other_conn(&f, 2);
	regfx_tcp_open(&t, AF_INET);
	pair(&f, &f.peer, t.cli, 0, 0, 0, &ra);
	CHECK_INT(ra.status, SMC_SOFT_PAIR_DECLINED);
	CHECK_INT(ra.reason, 0x03030001);
	CHECK(ra.fd < 0);
	pair(&f, &b, t.srv, 1, 0, 0, &rb);
	CHECK_INT(rb.status, SMC_SOFT_PAIR_DECLINED);
	CHECK_INT(rb.reason, 0x03030001);
	CHECK_INT(regfx_dump(&f, &f.peer, 0), 0);
	got = regfx_smcss(&f, &o);
	CHECK(got && strstr(got, "TCP 0x03030001\nACTIVE") && strstr(got + 10, "TCP 0x03030001\n"));
	free(got);
	regfx_tcp_close(&t);
	regfx_free(&f);
}

/* The first end already waits when the second one is declined: both are. */
TEST(soft_pair_pnet_declines_the_waiting_end)
{
	struct regfx f;
	struct regfx_tcp t;
	struct soft_peer b;
	struct pair_rep ra, rb;
	const struct soft_sock *s;

	regfx_init(&f);
	add_ism(&f);
	b = other_conn(&f, 2);
	regfx_tcp_open(&t, AF_INET);
	pair(&f, &f.peer, t.cli, 0, 0, 0, &ra);
	CHECK_INT(ra.status, SMC_SOFT_PAIR_PENDING);
	close(ra.fd);
	snprintf(soft_dev_ism(&f.st)->pnetid[0], SOFT_PNETID_LEN + 1, "NET1");
	pair(&f, &b, t.srv, 1, 0, 0, &rb);
	CHECK_INT(rb.status, SMC_SOFT_PAIR_DECLINED);
	s = soft_ns_get(&f.st, f.st.init_netns)->socks;
	for (; s; s = s->next) {
		CHECK_INT(s->fallback_reason, 0x03030001);
		CHECK(s->region == NULL);
	}
	regfx_tcp_close(&t);
	regfx_free(&f);
}

/* Ends filed in different namespaces pair only for the same user. */
static void cross_ns(bool same_uid)
{
	struct regfx f;
	struct regfx_tcp t;
	struct soft_peer b;
	struct pair_rep ra, rb;
	struct soft_sock *s;

	regfx_init(&f);
	add_ism(&f);
	b = other_conn(&f, 2);
	if (!same_uid)
		b.uid++;
	regfx_tcp_open(&t, AF_INET);
	pair(&f, &f.peer, t.cli, 0, 0, 0, &ra);
	close(ra.fd);
	s = soft_ns_get(&f.st, f.st.init_netns)->socks;
	s->id.netns = 0x7fff0001;            /* as if the client end lived elsewhere */
	pair(&f, &b, t.srv, 1, 0, 0, &rb);
	CHECK_INT(rb.status, same_uid ? SMC_SOFT_PAIR_PAIRED : SMC_SOFT_PAIR_PENDING);
	CHECK_INT(rb.side, same_uid ? 1 : 0);
	if (rb.fd >= 0)
		close(rb.fd);
	regfx_tcp_close(&t);
	regfx_free(&f);
}

TEST(soft_pair_cross_ns_same_uid)
{
	cross_ns(true);
}

TEST(soft_pair_cross_ns_other_uid_stays_pending)
{
	cross_ns(false);
}

static int pstats_fd(uint32_t version, bool seal, size_t size)
{
	int fd = memfd_create("pstats", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	struct soft_pstats *p;

	if (fd < 0 || ftruncate(fd, (off_t)size) < 0)
		return -1;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	if (size >= sizeof(*p)) {
		p->magic = SOFT_PSTATS_MAGIC;
		p->version = version;
		p->size = sizeof(*p);
		atomic_store(&p->io[SOFT_PSTATS_D].tx_bytes, 1000);
		atomic_store(&p->io[SOFT_PSTATS_D].rx_cnt, 7);
		atomic_store(&p->io[SOFT_PSTATS_D].rx_pd[2], 7);
		atomic_store(&p->io[SOFT_PSTATS_R].tx_bytes, 300);
	}
	munmap(p, size);
	if (seal)
		fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK);
	return fd;
}

static int attach(struct regfx *f, int fd, uint32_t version)
{
	struct mb m;

	regfx_req(&m, SMC_SOFT_CMD_STATS_ATTACH, NLM_F_ACK);
	mb_u32(&m, SMC_SOFT_A_STATS_VERSION, version);
	regfx_run(f, &f->peer, &m, fd);
	return regfx_error(f);
}

TEST(soft_pair_stats_attach)
{
	enum { V = SOFT_PSTATS_VERSION };
	struct regfx f;
	struct soft_stats_tech *st;
	int before = open_fds();

	regfx_init(&f);
	CHECK_INT(attach(&f, -1, V), -EINVAL);
	CHECK_INT(attach(&f, pstats_fd(V, false, SOFT_PSTATS_MAP_LEN), V), -EINVAL);
	CHECK_INT(attach(&f, pstats_fd(V, true, 64), V), -EINVAL);
	CHECK_INT(attach(&f, pstats_fd(V, true, sizeof(struct soft_pstats)), V), -EINVAL);
	CHECK_INT(attach(&f, pstats_fd(V - 1, true, SOFT_PSTATS_MAP_LEN), V), -EINVAL);
	CHECK_INT(attach(&f, pstats_fd(V, true, SOFT_PSTATS_MAP_LEN), V - 1), -EINVAL);
	CHECK_INT(attach(&f, pstats_fd(V, true, SOFT_PSTATS_MAP_LEN), V), 0);
	{
		struct soft_stats live = { 0 };

		soft_pstats_sum(&f.st, f.peer.netns, &live);
		CHECK_INT(live.smc[SOFT_TECH_D].tx_bytes, 1000);
		CHECK_INT(live.smc[SOFT_TECH_R].tx_bytes, 300);   /* soft SMC-R's apart from SMC-D's */
		soft_pstats_sum(&f.st, f.peer.netns + 1, &live);
		CHECK_INT(live.smc[SOFT_TECH_D].tx_bytes, 1000);       /* another namespace adds nothing */
	}
	/* a bad second memfd leaves the first attached */
	CHECK_INT(attach(&f, pstats_fd(V, true, 64), V), -EINVAL);
	{
		struct soft_stats live = { 0 };

		soft_pstats_sum(&f.st, f.peer.netns, &live);
		CHECK_INT(live.smc[SOFT_TECH_D].tx_bytes, 1000);
	}
	/* the image after execve: its memfd replaces the first, whose counts stay */
	CHECK_INT(attach(&f, pstats_fd(V, true, SOFT_PSTATS_MAP_LEN), V), 0);
	{
		struct soft_stats live = { 0 };

		soft_pstats_sum(&f.st, f.peer.netns, &live);
		CHECK_INT(live.smc[SOFT_TECH_D].tx_bytes, 1000);
		st = smcd_stats(&f);
		CHECK(st && st->tx_bytes == 1000 && st->rx_cnt == 7);
	}
	soft_conn_gone(&f.st, f.peer.conn_id);
	st = smcd_stats(&f);
	CHECK(st && st->tx_bytes == 2000 && st->rx_cnt == 14 && st->rx_pd.buf[2] == 14);
	regfx_free(&f);
	CHECK_INT(open_fds(), before);
}

/* SOCK_DEL by the PAIR request's sequence number (a socket closed before its
 * reply was read), and by token with the socket as proof of holding it. */
static int del_seq(struct regfx *f, const struct soft_peer *p, uint32_t seq)
{
	struct mb m;

	regfx_req(&m, SMC_SOFT_CMD_SOCK_DEL, NLM_F_ACK);
	mb_u32(&m, SMC_SOFT_A_PAIR_SEQ, seq);
	regfx_run(f, p, &m, -1);
	return regfx_error(f);
}

/* cmd (SOCK_DEL, FALLBACK) of token with reason (0: none), by p with fd as proof (-1: none). */
static int by_token(struct regfx *f, const struct soft_peer *p, uint8_t cmd, uint64_t token,
		    uint32_t reason, int fd)
{
	struct mb m;

	regfx_req(&m, cmd, NLM_F_ACK);
	mb_u64(&m, SMC_SOFT_A_TOKEN, token);
	if (reason)
		mb_u32(&m, SMC_SOFT_A_REASON, reason);
	regfx_run(f, p, &m, fd < 0 ? -1 : dup(fd));
	return regfx_error(f);
}

static int del_held(struct regfx *f, const struct soft_peer *p, uint64_t token, int fd)
{
	return by_token(f, p, SMC_SOFT_CMD_SOCK_DEL, token, 0, fd);
}

TEST(soft_pair_del_by_seq_and_by_holder)
{
	struct regfx f;
	struct regfx_tcp t;
	struct soft_peer b, c;
	struct pair_rep ra, rb;
	uint32_t seq_a;
	int before = open_fds();

	regfx_init(&f);
	add_ism(&f);
	b = other_conn(&f, 2);
	c = other_conn(&f, 3);
	regfx_tcp_open(&t, AF_INET);
	pair(&f, &f.peer, t.cli, 0, 0, 0, &ra);
	seq_a = f.seq;
	pair(&f, &b, t.srv, 1, 0, 0, &rb);
	CHECK_INT(rb.status, SMC_SOFT_PAIR_PAIRED);
	close(ra.fd);
	close(rb.fd);
	/* another connection's seq, or one that made nothing: not found */
	CHECK_INT(del_seq(&f, &c, seq_a), -ENOENT);
	CHECK_INT(del_seq(&f, &f.peer, seq_a + 100), -ENOENT);
	CHECK(soft_idx_token(&f.st, ra.token) != NULL);
	CHECK_INT(del_seq(&f, &f.peer, seq_a), 0);
	CHECK(soft_idx_token(&f.st, ra.token) == NULL);
	/* b's registration from connection c: only with the socket in hand */
	CHECK_INT(del_held(&f, &c, rb.token, -1), -ENOENT);
	CHECK_INT(del_held(&f, &c, rb.token, t.cli), -ENOENT);   /* the other end */
	CHECK_INT(del_held(&f, &c, rb.token + 1, t.srv), -ENOENT);
	CHECK(soft_idx_token(&f.st, rb.token) != NULL);
	CHECK_INT(del_held(&f, &c, rb.token, t.srv), 0);
	CHECK(soft_idx_token(&f.st, rb.token) == NULL);
	regfx_tcp_close(&t);
	regfx_free(&f);
	CHECK_INT(open_fds(), before);
}

static int fall_back(struct regfx *f, const struct soft_peer *p, uint64_t token, uint32_t reason,
		     int fd)
{
	return by_token(f, p, SMC_SOFT_CMD_FALLBACK, token, reason, fd);
}

/*
 * An end goes to a program that cannot use the region: both ends are listed
 * as TCP from then on (the peer with PEERDECL), the region and the link
 * group go, SOCK_INFO finds nothing, and the connection stays counted as
 * SMC-D with no buffer in use.
 */
TEST(soft_pair_fall_back_after_pairing)
{
	struct regfx f;
	struct regfx_tcp t;
	struct soft_peer b, c;
	struct pair_rep ra, rb, ri;
	struct smcss_opts o = { .smcd = false };
	struct soft_stats_tech *st;
	struct soft_sock *sa, *sb;
	char *got;
	int before = open_fds();

	regfx_init(&f);
	add_ism(&f);
	b = other_conn(&f, 2);
	c = other_conn(&f, 3);
	regfx_tcp_open(&t, AF_INET);
	pair(&f, &f.peer, t.cli, 0, 0, 0, &ra);
	pair(&f, &b, t.srv, 1, 0, 0, &rb);
	CHECK_INT(rb.status, SMC_SOFT_PAIR_PAIRED);
	close(ra.fd);
	close(rb.fd);
	CHECK(soft_lgr_first(&f.st) != NULL);
	/* refused: no reason, another's registration without proof, the wrong socket */
	CHECK_INT(fall_back(&f, &b, rb.token, 0, -1), -EINVAL);
	CHECK_INT(fall_back(&f, &c, rb.token, SMC_SOFT_DECL_UNSEEN, -1), -ENOENT);
	CHECK_INT(fall_back(&f, &c, rb.token, SMC_SOFT_DECL_UNSEEN, t.cli), -ENOENT);
	sb = soft_idx_token(&f.st, rb.token);
	CHECK(sb && sb->pair_status == SMC_SOFT_PAIR_PAIRED);
	/* a holder that did not register it, with the socket in hand */
	CHECK_INT(fall_back(&f, &c, rb.token, SMC_SOFT_DECL_UNSEEN, t.srv), 0);
	sa = soft_idx_token(&f.st, ra.token);
	CHECK(sa && sa->pair_status == SMC_SOFT_PAIR_DECLINED && !sa->region);
	CHECK(sa && sa->fallback_reason == SOFT_DECL_PEERDECL &&
	      sa->peer_diagnosis == SMC_SOFT_DECL_UNSEEN);
	CHECK(sb->pair_status == SMC_SOFT_PAIR_DECLINED && !sb->region);
	CHECK(sb->fallback_reason == SMC_SOFT_DECL_UNSEEN && !sb->peer_diagnosis);
	CHECK(soft_lgr_first(&f.st) == NULL);
	CHECK_INT(regfx_dump(&f, &f.peer, 0xff), 0);
	got = regfx_smcss(&f, &o);
	CHECK(got && strstr(got, " TCP 0x03060004\n") && strstr(got, " TCP 0x05000000/0x03060004\n"));
	CHECK(got && !strstr(got, "SMCD"));
	free(got);
	sock_info(&f, &f.peer, t.cli, &ri);
	CHECK_INT(ri.err, -ENOENT);
	/* again: as it is */
	CHECK_INT(fall_back(&f, &b, rb.token, 0x03030000, -1), 0);
	CHECK(sb->fallback_reason == SMC_SOFT_DECL_UNSEEN);
	st = smcd_stats(&f);
	CHECK(st && st->clnt_v2_succ_cnt == 1 && st->srv_v2_succ_cnt == 1);
	CHECK(st && st->rx_rmbuse == 0 && st->tx_rmbuse == 0);
	CHECK_INT(regfx_del(&f, &b, rb.token), 0);
	soft_conn_gone(&f.st, f.peer.conn_id);
	st = smcd_stats(&f);
	CHECK(st && st->rx_rmbuse == 0 && st->tx_rmbuse == 0);
	/* a SOCK_ADD registration is no PAIR one */
	{
		uint64_t tok;

		CHECK_INT(regfx_add(&f, &f.peer, t.cli, SMC_SOFT_STATE_ACTIVE, &tok), 0);
		CHECK_INT(fall_back(&f, &f.peer, tok, SMC_SOFT_DECL_UNSEEN, -1), -EINVAL);
	}
	regfx_tcp_close(&t);
	regfx_free(&f);
	CHECK_INT(open_fds(), before);
}

/*
 * An end that declined for a reason of its own and went before its peer
 * asked: the peer is declined with PEERDECL and that reason, not left to
 * find no one; once, and only for that connection.
 */
TEST(soft_pair_decline_remembered)
{
	struct regfx f;
	struct regfx_tcp t, u;
	struct soft_peer b;
	struct pair_rep ra, rb, rc;

	regfx_init(&f);
	add_ism(&f);
	b = other_conn(&f, 2);
	regfx_tcp_open(&t, AF_INET);
	regfx_tcp_open(&u, AF_INET);
	pair(&f, &f.peer, t.cli, 0, 0, 0, &ra);
	CHECK_INT(ra.status, SMC_SOFT_PAIR_PENDING);
	close(ra.fd);
	CHECK_INT(fall_back(&f, &f.peer, ra.token, SMC_SOFT_DECL_STDIO, -1), 0);
	CHECK_INT(regfx_del(&f, &f.peer, ra.token), 0);
	/* another connection is not concerned */
	pair(&f, &b, u.srv, 1, 0, 0, &rc);
	CHECK_INT(rc.status, SMC_SOFT_PAIR_PENDING);
	if (rc.fd >= 0)
		close(rc.fd);
	pair(&f, &b, t.srv, 1, 0, 0, &rb);
	CHECK_INT(rb.status, SMC_SOFT_PAIR_DECLINED);
	CHECK_INT(rb.reason, SOFT_DECL_PEERDECL);
	CHECK_INT(rb.diag, SMC_SOFT_DECL_STDIO);
	CHECK_INT(rb.fd, -1);
	regfx_tcp_close(&u);
	regfx_tcp_close(&t);
	regfx_free(&f);
}

/* A PENDING end falls back: the end that comes later is declined with PEERDECL. */
TEST(soft_pair_fall_back_while_pending)
{
	struct regfx f;
	struct regfx_tcp t;
	struct soft_peer b;
	struct pair_rep ra, rb;

	regfx_init(&f);
	add_ism(&f);
	b = other_conn(&f, 2);
	regfx_tcp_open(&t, AF_INET);
	pair(&f, &f.peer, t.cli, 0, 0, 0, &ra);
	CHECK_INT(ra.status, SMC_SOFT_PAIR_PENDING);
	close(ra.fd);
	CHECK_INT(fall_back(&f, &f.peer, ra.token, SMC_SOFT_DECL_URING, -1), 0);
	pair(&f, &b, t.srv, 1, 0, 0, &rb);
	CHECK_INT(rb.status, SMC_SOFT_PAIR_DECLINED);
	CHECK_INT(rb.reason, SOFT_DECL_PEERDECL);
	CHECK_INT(rb.diag, SMC_SOFT_DECL_URING);
	CHECK_INT(rb.fd, -1);
	regfx_tcp_close(&t);
	regfx_free(&f);
}

/*
 * An end whose other end closed before either was paired (its PAIR came
 * after the other's SOCK_DEL) gets no region: DECLINED as a peer without
 * SMC.  One whose other end waits still pairs, closing or not.
 */
TEST(soft_pair_closing_end_alone_gets_no_region)
{
	struct regfx f;
	struct regfx_tcp t, u;
	struct soft_peer b;
	struct pair_rep ra, rb;
	char c;

	regfx_init(&f);
	add_ism(&f);
	b = other_conn(&f, 2);
	regfx_tcp_open(&t, AF_INET);
	close(t.cli);
	t.cli = -1;
	CHECK_INT(read(t.srv, &c, 1), 0);             /* the FIN is there */
	pair(&f, &b, t.srv, 1, 0, 0, &rb);
	CHECK_INT(rb.status, SMC_SOFT_PAIR_DECLINED);
	CHECK_INT(rb.reason, SOFT_DECL_PEERNOSMC);
	CHECK_INT(rb.fd, -1);
	/* the other end registered first, then shut down writing: paired */
	regfx_tcp_open(&u, AF_INET);
	pair(&f, &f.peer, u.cli, 0, 0, 0, &ra);
	CHECK_INT(ra.status, SMC_SOFT_PAIR_PENDING);
	shutdown(u.cli, SHUT_WR);
	CHECK_INT(read(u.srv, &c, 1), 0);
	pair(&f, &b, u.srv, 1, 0, 0, &rb);
	CHECK_INT(rb.status, SMC_SOFT_PAIR_PAIRED);
	close(ra.fd);
	close(rb.fd);
	regfx_tcp_close(&u);
	regfx_tcp_close(&t);
	regfx_free(&f);
}
