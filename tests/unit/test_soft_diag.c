/*
 * sock_diag of the soft backend: the reply bytes at the kernel's offsets
 * (<linux/smc_diag.h>, sizes in lib/smc_uapi.h) for registered sockets, then
 * the same reply through lib/diag.c's parser and smcss's printer, compared
 * with the rows smcss(8) documents.  Sockets
 * that have the SMC parts (CONNINFO, LGRINFO, DMBINFO) only exist once the
 * data path pairs them; here they are test-only entries.
 */
#include "unit.h"
#include "regfx.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
#include <libmnl/libmnl.h>
#include <linux/sock_diag.h>

#include "diag.h"

#define HDR "State          UID   Inode   Local Address           Peer Address            Intf Mode \n"

/* ---- expected bytes, written at the documented offsets ------------------ */

struct want {
	uint8_t state, mode, shutdown;
	uint16_t sport, dport;
	uint8_t src[16], dst[16];
	uint32_t ifindex, uid, reason, peer_diag;
	uint64_t cookie, inode;
};

static void le16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void le32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void le64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

/* The 100 bytes of a socket without SMC parts: header, msg, SHUTDOWN, FALLBACK. */
static size_t want_bytes(uint8_t *b, const struct want *w, uint32_t seq)
{
	memset(b, 0, 100);
	le32(b, 100);                            /* nlmsg_len */
	le16(b + 4, SOCK_DIAG_BY_FAMILY);
	le16(b + 6, NLM_F_MULTI);
	le32(b + 8, seq);
	/* smc_diag_msg at 16 */
	b[16 + 0] = 43;
	b[16 + 1] = w->state;
	b[16 + 2] = w->mode;
	b[16 + 3] = 0;
	b[16 + 4] = (uint8_t)(w->sport >> 8);
	b[16 + 5] = (uint8_t)w->sport;
	b[16 + 6] = (uint8_t)(w->dport >> 8);
	b[16 + 7] = (uint8_t)w->dport;
	memcpy(b + 16 + 8, w->src, 16);
	memcpy(b + 16 + 24, w->dst, 16);
	le32(b + 16 + 40, w->ifindex);
	le32(b + 16 + 44, (uint32_t)w->cookie);
	le32(b + 16 + 48, (uint32_t)(w->cookie >> 32));
	le32(b + 16 + 52, w->uid);
	le64(b + 16 + 56, w->inode);
	/* SMC_DIAG_SHUTDOWN: len 5, type 3, u8, 3 bytes padding */
	le16(b + 80, 5);
	le16(b + 82, 3);
	b[84] = w->shutdown;
	/* SMC_DIAG_FALLBACK: len 12, type 5, reason, peer_diagnosis */
	le16(b + 88, 12);
	le16(b + 90, 5);
	le32(b + 92, w->reason);
	le32(b + 96, w->peer_diag);
	return 100;
}

static void check_bytes(const uint8_t *got, size_t got_len, const uint8_t *want, size_t len,
			const char *what)
{
	if (got_len != len) {
		unit_fail(__FILE__, __LINE__, "%s: %zu bytes, expected %zu", what, got_len, len);
		return;
	}
	for (size_t i = 0; i < len; i++)
		if (got[i] != want[i]) {
			unit_fail(__FILE__, __LINE__, "%s: byte %zu is 0x%02x, expected 0x%02x",
				  what, i, got[i], want[i]);
			return;
		}
}

static const struct nlmsghdr *nth(const struct regfx *f, int n)
{
	const struct nlmsghdr *nlh = NULL;

	for (int i = 0; i <= n; i++)
		if (!(nlh = smc_reply_next(&f->rep, nlh)))
			return NULL;
	return nlh;
}

static int n_msgs(const struct regfx *f)
{
	int n = 0;

	for (const struct nlmsghdr *nlh = NULL; (nlh = smc_reply_next(&f->rep, nlh));)
		n++;
	return n;
}

static void lo4(uint8_t a[16])
{
	memset(a, 0, 16);
	a[0] = 127;
	a[3] = 1;
}

/* ---- registered sockets ---------------------------------------------------- */

struct three {
	struct regfx_tcp t;
	int fresh;
	uint64_t tok[3];
};

/* INIT, LISTEN and ACTIVE, registered in that order. */
static void three_open(struct regfx *f, struct three *x)
{
	regfx_tcp_open(&x->t, AF_INET);
	x->fresh = socket(AF_INET, SOCK_STREAM, 0);
	CHECK_INT(regfx_add(f, &f->peer, x->fresh, SMC_SOFT_STATE_INIT, &x->tok[0]), 0);
	CHECK_INT(regfx_add(f, &f->peer, x->t.lst, SMC_SOFT_STATE_LISTEN, &x->tok[1]), 0);
	CHECK_INT(regfx_add(f, &f->peer, x->t.cli, SMC_SOFT_STATE_ACTIVE, &x->tok[2]), 0);
}

static void three_close(struct three *x)
{
	close(x->fresh);
	regfx_tcp_close(&x->t);
}

TEST(soft_diag_bytes_of_each_state)
{
	struct regfx f;
	struct three x;
	uint8_t b[100];
	struct want w;
	const struct nlmsghdr *nlh;

	regfx_init(&f);
	three_open(&f, &x);
	CHECK_INT(regfx_dump(&f, &f.peer, 0), 0);
	CHECK_INT(n_msgs(&f), 3);
	/* newest first, as the kernel's hash list: ACTIVE, LISTEN, INIT */
	memset(&w, 0, sizeof(w));
	w.state = 1;
	w.mode = 1;
	w.reason = 0x03010000;
	w.sport = x.t.cport;
	w.dport = x.t.lport;
	lo4(w.src);
	lo4(w.dst);
	w.cookie = regfx_cookie(x.t.cli);
	w.uid = geteuid();
	w.inode = regfx_inode(x.t.cli);
	want_bytes(b, &w, f.seq);
	nlh = nth(&f, 0);
	CHECK(nlh != NULL);
	if (nlh)
		check_bytes((const uint8_t *)nlh, nlh->nlmsg_len, b, sizeof(b), "ACTIVE");

	memset(&w, 0, sizeof(w));
	w.state = 10;
	w.sport = x.t.lport;
	lo4(w.src);
	w.cookie = regfx_cookie(x.t.lst);
	w.uid = geteuid();
	w.inode = regfx_inode(x.t.lst);
	want_bytes(b, &w, f.seq);
	nlh = nth(&f, 1);
	CHECK(nlh != NULL);
	if (nlh)
		check_bytes((const uint8_t *)nlh, nlh->nlmsg_len, b, sizeof(b), "LISTEN");

	memset(&w, 0, sizeof(w));
	w.state = 2;
	w.cookie = regfx_cookie(x.fresh);
	w.uid = geteuid();
	w.inode = regfx_inode(x.fresh);
	want_bytes(b, &w, f.seq);
	nlh = nth(&f, 2);
	CHECK(nlh != NULL);
	if (nlh)
		check_bytes((const uint8_t *)nlh, nlh->nlmsg_len, b, sizeof(b), "INIT");
	three_close(&x);
	regfx_free(&f);
}

TEST(soft_diag_done_ends_the_dump)
{
	struct regfx f;
	const struct nlmsghdr *nlh = NULL;
	size_t off = 0;
	uint16_t port;
	uint64_t tok;
	int lst = regfx_listener(AF_INET, &port);

	regfx_init(&f);
	CHECK_INT(regfx_dump(&f, &f.peer, 0), 0);
	CHECK_INT(regfx_count(&f), 1);
	nlh = regfx_find(&f, NLMSG_DONE);
	CHECK(nlh && nlh->nlmsg_flags == NLM_F_MULTI && nlh->nlmsg_seq == f.seq &&
	      nlh->nlmsg_len == NLMSG_LENGTH(sizeof(int)));
	CHECK_INT(regfx_add(&f, &f.peer, lst, SMC_SOFT_STATE_LISTEN, &tok), 0);
	CHECK_INT(regfx_dump(&f, &f.peer, 0x1f), 0);
	CHECK_INT(regfx_count(&f), 2);
	for (int i = 0; i < 2; i++) {
		nlh = (const struct nlmsghdr *)(f.out.buf + off);
		off += NLMSG_ALIGN(nlh->nlmsg_len);
	}
	CHECK_INT(nlh->nlmsg_type, NLMSG_DONE);
	CHECK_INT(off, f.out.len);
	close(lst);
	regfx_free(&f);
}

/* A request without NLM_F_DUMP is ignored, as smc_diag does. */
TEST(soft_diag_needs_dump_flag)
{
	struct regfx f;
	unsigned char buf[SMC_DIAG_REQ_BUF];
	struct mb m;

	regfx_init(&f);
	smc_diag_build_req(buf, 0);
	((struct nlmsghdr *)buf)->nlmsg_flags = NLM_F_REQUEST;
	memset(&m, 0, sizeof(m));
	mb_raw(&m, buf, ((struct nlmsghdr *)buf)->nlmsg_len);
	regfx_run(&f, &f.peer, &m, -1);
	CHECK_INT(f.out.len, 0);
	regfx_free(&f);
}

TEST(soft_diag_ipv4_before_ipv6)
{
	struct regfx f;
	struct regfx_tcp t6;
	struct smc_diag_sock s;
	static const uint8_t lo6[16] = { [15] = 1 };
	uint64_t tok;
	uint16_t port4;
	int lst4;

	regfx_init(&f);
	regfx_tcp_open(&t6, AF_INET6);
	lst4 = regfx_listener(AF_INET, &port4);
	CHECK_INT(regfx_add(&f, &f.peer, t6.cli, SMC_SOFT_STATE_ACTIVE, &tok), 0);
	CHECK_INT(regfx_add(&f, &f.peer, t6.lst, SMC_SOFT_STATE_LISTEN, &tok), 0);
	CHECK_INT(regfx_add(&f, &f.peer, lst4, SMC_SOFT_STATE_LISTEN, &tok), 0);
	CHECK_INT(regfx_dump(&f, &f.peer, 0), 0);
	CHECK_INT(n_msgs(&f), 3);
	CHECK_INT(smc_diag_parse(nth(&f, 0), &s), 0);
	CHECK_INT(s.inode, regfx_inode(lst4));
	CHECK_INT(s.family, 43);
	CHECK_INT(smc_diag_parse(nth(&f, 1), &s), 0);
	CHECK_INT(s.inode, regfx_inode(t6.lst));
	CHECK_INT(smc_diag_parse(nth(&f, 2), &s), 0);
	CHECK_INT(s.inode, regfx_inode(t6.cli));
	CHECK(!memcmp(s.src, lo6, 16) && !memcmp(s.dst, lo6, 16));
	CHECK_INT(s.sport, t6.cport);
	CHECK_INT(s.dport, t6.lport);
	close(lst4);
	regfx_tcp_close(&t6);
	regfx_free(&f);
}

/* An IPv6 socket talking to IPv4 keeps the mapped address, as smc_diag copies it. */
TEST(soft_diag_ipv4_mapped_stays_ipv6)
{
	struct regfx f;
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };
	struct smcss_opts o = { 0 };
	struct smc_diag_sock d;
	uint8_t mapped[16] = { [10] = 0xff, [11] = 0xff, 127, 0, 0, 1 };
	char want[512], a[64], b[64], *got;
	uint16_t port;
	uint64_t tok;
	int lst = regfx_listener(AF_INET, &port);
	int fd = socket(AF_INET6, SOCK_STREAM, 0), acc;

	regfx_init(&f);
	memcpy(&sin6.sin6_addr, mapped, 16);
	sin6.sin6_port = htons(port);
	CHECK_INT(connect(fd, (struct sockaddr *)&sin6, sizeof(sin6)), 0);
	acc = accept(lst, NULL, NULL);
	CHECK_INT(regfx_add(&f, &f.peer, fd, SMC_SOFT_STATE_ACTIVE, &tok), 0);
	CHECK_INT(regfx_add(&f, &f.peer, acc, SMC_SOFT_STATE_ACTIVE, &tok), 0);
	CHECK_INT(regfx_dump(&f, &f.peer, 0), 0);
	CHECK_INT(n_msgs(&f), 2);
	CHECK_INT(smc_diag_parse(nth(&f, 1), &d), 0);   /* the IPv6 socket comes last */
	CHECK_INT(d.inode, regfx_inode(fd));
	CHECK(!memcmp(d.src, mapped, 16) && !memcmp(d.dst, mapped, 16));
	CHECK_INT(d.dport, port);
	snprintf(a, sizeof(a), "::ffff:127.0.0.1:%u", d.sport);
	snprintf(b, sizeof(b), "::ffff:127.0.0.1:%u", port);
	snprintf(want, sizeof(want), HDR
		 "ACTIVE         %05d %07llu %-23s %-23s 0000 TCP 0x03010000\n",
		 (int)geteuid(), (unsigned long long)regfx_inode(fd), a, b);
	got = regfx_smcss(&f, &o);
	CHECK(strstr(got, want + strlen(HDR)) != NULL);   /* after the IPv4 row of acc */
	free(got);
	close(acc);
	close(fd);
	close(lst);
	regfx_free(&f);
}

/* ---- through lib/diag.c and smcss ------------------------------------------ */


static char *addr(char *buf, const char *ip, uint16_t port)
{
	snprintf(buf, 32, "%s:%u", ip, port);
	return buf;
}

TEST(soft_diag_smcss_rows)
{
	struct regfx f;
	struct three x;
	struct smcss_opts all = { .all = true }, lst = { .listening = true }, none = { 0 };
	char want[1024], a[32], b[32], c[32], *got;
	int uid = (int)geteuid();

	regfx_init(&f);
	three_open(&f, &x);
	CHECK_INT(regfx_dump(&f, &f.peer, smcss_ext_mask(&all)), 0);
	snprintf(want, sizeof(want), HDR
		 "ACTIVE         %05d %07llu %-23s %-23s 0000 TCP 0x03010000\n"
		 "LISTEN         %05d %07llu %-23s \n"
		 "INIT           %05d %07llu \n",
		 uid, (unsigned long long)regfx_inode(x.t.cli), addr(a, "127.0.0.1", x.t.cport),
		 addr(b, "127.0.0.1", x.t.lport),
		 uid, (unsigned long long)regfx_inode(x.t.lst), addr(c, "127.0.0.1", x.t.lport),
		 uid, (unsigned long long)regfx_inode(x.fresh));
	got = regfx_smcss(&f, &all);
	CHECK_STR(got, want);
	free(got);

	snprintf(want, sizeof(want), HDR "LISTEN         %05d %07llu %-23s \n",
		 uid, (unsigned long long)regfx_inode(x.t.lst), addr(a, "127.0.0.1", x.t.lport));
	got = regfx_smcss(&f, &lst);
	CHECK_STR(got, want);
	free(got);

	snprintf(want, sizeof(want), HDR "ACTIVE         %05d %07llu %-23s %-23s 0000 TCP 0x03010000\n",
		 uid, (unsigned long long)regfx_inode(x.t.cli), addr(a, "127.0.0.1", x.t.cport),
		 addr(b, "127.0.0.1", x.t.lport));
	got = regfx_smcss(&f, &none);
	CHECK_STR(got, want);
	free(got);
	three_close(&x);
	regfx_free(&f);
}

TEST(soft_diag_smcss_json)
{
	struct regfx f;
	struct smcss_opts o = { .json = true };
	char want[1024], *got;
	uint16_t port;
	uint64_t tok;
	int lst = regfx_listener(AF_INET, &port);

	regfx_init(&f);
	CHECK_INT(regfx_add(&f, &f.peer, lst, SMC_SOFT_STATE_LISTEN, &tok), 0);
	o.all = true;
	CHECK_INT(regfx_dump(&f, &f.peer, smcss_ext_mask(&o)), 0);
	got = regfx_smcss(&f, &o);
	snprintf(want, sizeof(want),
		 "{\"sockets\":[{\"state\":\"LISTEN\",\"uid\":%u,\"inode\":%llu,"
		 "\"local_address\":\"127.0.0.1\",\"local_port\":%u,"
		 "\"peer_address\":\"0.0.0.0\",\"peer_port\":0,\"interface\":0,\"mode\":\"SMCR\","
		 "\"fallback_reason\":0,\"fallback_reason_hex\":\"0x00000000\",\"peer_diagnosis\":0,"
		 "\"shutdown\":\"<->\"}]}\n",
		 geteuid(), (unsigned long long)regfx_inode(lst), port);
	CHECK_STR(got, want);
	free(got);
	close(lst);
	regfx_free(&f);
}

/* Another namespace's sockets are not listed; its own callers see them. */
TEST(soft_diag_per_namespace)
{
	struct regfx f;
	struct soft_peer there;
	struct soft_sock *s = calloc(1, sizeof(*s));
	struct soft_ns *ns;
	struct smc_diag_sock d;
	uint16_t port;
	uint64_t tok;
	int lst = regfx_listener(AF_INET, &port);

	regfx_init(&f);
	CHECK_INT(regfx_add(&f, &f.peer, lst, SMC_SOFT_STATE_LISTEN, &tok), 0);
	ns = soft_ns_get(&f.st, 4242);
	s->token = 999;
	s->conn_id = 7;
	s->id.family = AF_INET;
	s->id.inode = 777;
	s->id.netns = 4242;
	soft_sock_set_state(s, SMC_SOFT_STATE_INIT);
	s->next = ns->socks;
	ns->socks = s;
	CHECK_INT(regfx_dump(&f, &f.peer, 0), 0);
	CHECK_INT(n_msgs(&f), 1);
	CHECK_INT(smc_diag_parse(nth(&f, 0), &d), 0);
	CHECK_INT(d.inode, regfx_inode(lst));
	there = f.peer;
	there.netns = 4242;
	CHECK_INT(regfx_dump(&f, &there, 0), 0);
	CHECK_INT(n_msgs(&f), 1);
	CHECK_INT(smc_diag_parse(nth(&f, 0), &d), 0);
	CHECK_INT(d.inode, 777);
	there.netns = 4343;                         /* a namespace without sockets */
	CHECK_INT(regfx_dump(&f, &there, 0), 0);
	CHECK_INT(n_msgs(&f), 0);
	close(lst);
	regfx_free(&f);
}

/* ---- sockets with the SMC parts (test-only) ------------------------------- */

#define GID1 "fe80:0000:0000:0000:0000:0000:0000:0001"
#define GID2 "fe80:0000:0000:0000:0000:0000:0000:0002"

static struct soft_sock *add_test_sock(struct regfx *f, uint8_t mode, uint64_t inode)
{
	struct soft_sock *s = calloc(1, sizeof(*s));
	struct soft_ns *ns = soft_ns_get(&f->st, f->st.init_netns);

	s->token = 1000 + inode;
	s->conn_id = 9;
	s->id.family = AF_INET;
	s->id.inode = inode;
	s->id.netns = f->st.init_netns;
	s->state = SMC_SOFT_STATE_ACTIVE;
	s->mode = mode;
	s->next = ns->socks;
	ns->socks = s;
	return s;
}

/* An SMC-R socket as smcss(8)'s examples show one, with CONNINFO and LGRINFO. */
static struct soft_sock *add_smcr(struct regfx *f)
{
	struct soft_sock *s = add_test_sock(f, 0, 1234567);

	inet_pton(AF_INET, "192.168.100.11", s->id.src);
	inet_pton(AF_INET, "192.168.100.12", s->id.dst);
	s->id.sport = 40000;
	s->id.dport = 37373;
	s->has_conn = true;
	s->conn = (struct soft_conninfo){
		.token = 0x1234, .sndbuf_size = 0x10000, .rmbe_size = 0x10000,
		.peer_rmbe_size = 0x40000,
		.rx_prod = { 1, 0x2000 }, .rx_cons = { 1, 0x2000 },
		.tx_prod = { 0, 0x400 }, .tx_cons = { 0, 0x400 },
		.tx_prep = { 0, 0x400 }, .tx_sent = { 0, 0x400 }, .tx_fin = { 0, 0x400 },
	};
	s->has_lgr = true;
	s->lgr.link_id = 1;
	memcpy(s->lgr.ibname, "mlx5_0", 6);
	s->lgr.ibport = 1;
	memcpy(s->lgr.gid, GID1, 39);
	memcpy(s->lgr.peer_gid, GID2, 39);
	s->lgr.role = 1;
	return s;
}

/* An SMC-D socket as smcss(8)'s examples show one, with DMBINFO. */
static struct soft_sock *add_smcd(struct regfx *f)
{
	struct soft_sock *s = add_test_sock(f, 2, 98765432);

	inet_pton(AF_INET, "10.0.0.1", s->id.src);
	inet_pton(AF_INET, "10.0.0.2", s->id.dst);
	s->id.sport = 5201;
	s->id.dport = 51234;
	s->id.uid = 1000;
	s->id.ifindex = 3;
	s->has_dmb = true;
	s->dmb = (struct soft_dmbinfo){
		.linkid = 0x300, .peer_gid = 0x1122334455667788ull, .my_gid = 0x99aabbccddeeff00ull,
		.token = 0x000000010000000full, .peer_token = 0x000000020000000eull,
		.peer_gid_ext = 0xa1a2a3a4a5a6a7a8ull, .my_gid_ext = 0xb1b2b3b4b5b6b7b8ull,
	};
	return s;
}

/* Types and payload lengths of a message's attributes, in order. */
static int attr_list(const struct nlmsghdr *nlh, uint16_t types[8], uint16_t lens[8])
{
	const struct nlattr *a;
	int n = 0;

	mnl_attr_for_each(a, nlh, SMC_DIAG_MSG_LEN) {
		if (n < 8) {
			types[n] = mnl_attr_get_type(a);
			lens[n] = mnl_attr_get_payload_len(a);
		}
		n++;
	}
	return n;
}

static const uint8_t *attr_payload(const struct nlmsghdr *nlh, uint16_t type)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, SMC_DIAG_MSG_LEN)
		if (mnl_attr_get_type(a) == type)
			return mnl_attr_get_payload(a);
	return NULL;
}

TEST(soft_diag_ext_mask)
{
	static const struct {
		uint8_t ext;
		int n;
		uint16_t types[5], lens[5];
	} cases[] = {
		{ 0x00, 2, { 3, 5 }, { 1, 8 } },
		{ 0x04 | 0x10, 2, { 3, 5 }, { 1, 8 } },  /* SHUTDOWN and FALLBACK: sent anyway */
		{ 0x01, 3, { 3, 5, 1 }, { 1, 8, 76 } },
		{ 0x02, 3, { 3, 5, 2 }, { 1, 8, 147 } },
		{ 0x08, 3, { 3, 5, 4 }, { 1, 8, 56 } },
		{ 0x1f, 5, { 3, 5, 1, 2, 4 }, { 1, 8, 76, 147, 56 } },
		{ 0xe0, 2, { 3, 5 }, { 1, 8 } },         /* bits of no extension */
	};
	struct regfx f;
	struct soft_sock *s;

	regfx_init(&f);
	s = add_smcr(&f);
	s->has_dmb = true;                          /* all three, to see the mask alone decide */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint16_t types[8] = { 0 }, lens[8] = { 0 };
		const struct nlmsghdr *nlh;

		CHECK_INT(regfx_dump(&f, &f.peer, cases[i].ext), 0);
		nlh = nth(&f, 0);
		CHECK(nlh != NULL);
		if (!nlh)
			continue;
		CHECK_INT(attr_list(nlh, types, lens), cases[i].n);
		for (int j = 0; j < cases[i].n; j++) {
			CHECK_INT(types[j], cases[i].types[j]);
			CHECK_INT(lens[j], cases[i].lens[j]);
		}
	}
	regfx_free(&f);
}

/* Without the parts, a requested extension is simply not sent. */
TEST(soft_diag_ext_only_when_present)
{
	struct regfx f;
	uint16_t types[8], lens[8];
	struct regfx_tcp t;
	uint64_t tok;

	regfx_init(&f);
	regfx_tcp_open(&t, AF_INET);
	CHECK_INT(regfx_add(&f, &f.peer, t.cli, SMC_SOFT_STATE_ACTIVE, &tok), 0);
	CHECK_INT(regfx_dump(&f, &f.peer, 0xff), 0);
	CHECK_INT(attr_list(nth(&f, 0), types, lens), 2);
	regfx_tcp_close(&t);
	regfx_free(&f);
}

TEST(soft_diag_conninfo_lgrinfo_bytes)
{
	struct regfx f;
	const struct nlmsghdr *nlh;
	const uint8_t *p;
	uint8_t want[SMC_DIAG_LGRINFO_LEN];

	regfx_init(&f);
	add_smcr(&f)->conn.rx_prod_flags = 0xa1;
	CHECK_INT(regfx_dump(&f, &f.peer, 0x03), 0);
	nlh = nth(&f, 0);
	p = nlh ? attr_payload(nlh, SMC_DIAG_CONNINFO) : NULL;
	CHECK(p != NULL);
	if (p) {
		memset(want, 0, sizeof(want));
		le32(want, 0x1234);
		le32(want + 4, 0x10000);
		le32(want + 8, 0x10000);
		le32(want + 12, 0x40000);
		le16(want + 18, 1);                 /* rx_prod: reserved 0, wrap, count */
		le32(want + 20, 0x2000);
		le16(want + 26, 1);
		le32(want + 28, 0x2000);
		le32(want + 36, 0x400);
		le32(want + 44, 0x400);
		want[48] = 0xa1;
		le32(want + 56, 0x400);
		le32(want + 64, 0x400);
		le32(want + 72, 0x400);
		check_bytes(p, SMC_DIAG_CONNINFO_LEN, want, SMC_DIAG_CONNINFO_LEN, "conninfo");
	}
	p = nlh ? attr_payload(nlh, SMC_DIAG_LGRINFO) : NULL;
	CHECK(p != NULL);
	if (p) {
		memset(want, 0, sizeof(want));
		want[0] = 1;
		memcpy(want + 1, "mlx5_0", 6);
		want[65] = 1;
		memcpy(want + 66, GID1, 39);
		memcpy(want + 106, GID2, 39);
		want[146] = 1;
		check_bytes(p, SMC_DIAG_LGRINFO_LEN, want, SMC_DIAG_LGRINFO_LEN, "lgrinfo");
	}
	regfx_free(&f);
}

TEST(soft_diag_dmbinfo_bytes)
{
	struct regfx f;
	const struct nlmsghdr *nlh;
	const uint8_t *p;
	uint8_t want[SMC_DIAG_DMBINFO_EXT_LEN] = { 0 };
	struct smc_diag_sock d;

	regfx_init(&f);
	add_smcd(&f);
	CHECK_INT(regfx_dump(&f, &f.peer, 0x08), 0);
	nlh = nth(&f, 0);
	p = nlh ? attr_payload(nlh, SMC_DIAG_DMBINFO) : NULL;
	CHECK(p != NULL);
	if (p) {
		le32(want, 0x300);                  /* then 4 bytes of padding */
		le64(want + 8, 0x1122334455667788ull);
		le64(want + 16, 0x99aabbccddeeff00ull);
		le64(want + 24, 0x000000010000000full);
		le64(want + 32, 0x000000020000000eull);
		le64(want + 40, 0xa1a2a3a4a5a6a7a8ull);
		le64(want + 48, 0xb1b2b3b4b5b6b7b8ull);
		check_bytes(p, sizeof(want), want, sizeof(want), "dmbinfo");
	}
	CHECK_INT(smc_diag_parse(nlh, &d), 0);
	CHECK(d.has_dmb && d.dmb.has_ext && d.dmb.my_gid_ext == 0xb1b2b3b4b5b6b7b8ull);
	CHECK(d.mode == 2 && d.ifindex == 3 && d.uid == 1000 && d.sport == 5201);
	regfx_free(&f);
}

/* The SMC parts as smcss -d, -R and -D print them (smcss(8)). */
TEST(soft_diag_smcss_details)
{
	struct regfx f;
	struct smcss_opts d = { .debug = true }, r = { .smcr = true }, D = { .smcd = true };
	char *got;

	regfx_init(&f);
	add_smcr(&f);
	add_smcd(&f)->shutdown = 3;
	CHECK_INT(regfx_dump(&f, &f.peer, smcss_ext_mask(&d)), 0);
	got = regfx_smcss(&f, &d);
	CHECK_STR(got,
		"State          UID   Inode   Local Address           Peer Address            Intf Mode "
		"Shutd Token    Sndbuf   Rcvbuf   Peerbuf  rxprod-Cursor rxcons-Cursor rxFlags "
		"txprod-Cursor txcons-Cursor txFlags txprep-Cursor txsent-Cursor txfin-Cursor  \n"
		"ACTIVE         01000 98765432 10.0.0.1:5201           10.0.0.2:51234          0003 SMCD  R-W  \n"
		"ACTIVE         00000 1234567 192.168.100.11:40000    192.168.100.12:37373    0000 SMCR  <->  "
		"00001234 00010000 00010000 00040000 0001:00002000 0001:00002000 00:00   0000:00000400 "
		"0000:00000400 00:00   0000:00000400 0000:00000400 0000:00000400 \n");
	free(got);
	CHECK_INT(regfx_dump(&f, &f.peer, smcss_ext_mask(&r)), 0);
	got = regfx_smcss(&f, &r);
	CHECK_STR(got,
		"State          UID   Inode   Local Address           Peer Address            Intf Mode "
		"Role IB-device       Port Linkid GID                                      Peer-GID\n"
		"ACTIVE         00000 1234567 192.168.100.11:40000    192.168.100.12:37373    0000 SMCR "
		"SERV mlx5_0          01   01     " GID1 "  " GID2 "\n");
	free(got);
	CHECK_INT(regfx_dump(&f, &f.peer, smcss_ext_mask(&D)), 0);
	got = regfx_smcss(&f, &D);
	CHECK_STR(got,
		"State          UID   Inode   Local Address           Peer Address            Intf Mode "
		"GID              Token            Peer-GID         Peer-Token       Linkid\n"
		"ACTIVE         01000 98765432 10.0.0.1:5201           10.0.0.2:51234          0003 SMCD "
		"99aabbccddeeff00 000000010000000f 1122334455667788 000000020000000e 00000300 \n");
	free(got);
	regfx_free(&f);
}

static int drop_to_nobody(void)
{
	return setresuid(65534, 65534, 65534);
}

/* diag_uid is the owner of the socket, not of the process that registers it. */
TEST(soft_diag_uid_of_socket_owner)
{
	struct regfx f;
	struct smc_diag_sock d;
	uint64_t tok;
	int fd = geteuid() == 0 ? regfx_child_socket(drop_to_nobody) : -1;

	if (fd < 0) {
		printf("    (skipped: needs root to make a socket of another user)\n");
		return;
	}
	regfx_init(&f);
	CHECK_INT(regfx_add(&f, &f.peer, fd, SMC_SOFT_STATE_INIT, &tok), 0);
	CHECK_INT(regfx_dump(&f, &f.peer, 0), 0);
	CHECK_INT(smc_diag_parse(nth(&f, 0), &d), 0);
	CHECK_INT(d.uid, 65534);
	close(fd);
	regfx_free(&f);
}
