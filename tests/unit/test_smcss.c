/*
 * smcss formatting, fed with sock_diag replies built byte by byte at the
 * offsets of the uapi structures (struct smc_diag_msg and its extensions,
 * lib/smc_uapi.h).  Expected text is written as smcss(8) shows the columns:
 * a '$' marks each line end so that trailing blanks stay visible.
 */
#include "unit.h"
#include "msgbuild.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include "smcss_print.h"

/* ---- building replies ------------------------------------------------ */

struct tsock {
	uint8_t state, mode;
	const char *src, *dst;        /* NULL: all-zero address */
	uint16_t sport, dport;
	uint32_t ifindex, uid;
	uint64_t inode;
	int shutdown;                 /* -1: no SMC_DIAG_SHUTDOWN attribute */
	bool no_fallback;             /* leave out SMC_DIAG_FALLBACK */
	uint32_t reason, peer_diag;
};

static void put16be(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

static void put_addr(uint8_t *p, const char *text)
{
	if (!text)
		return;
	if (inet_pton(AF_INET, text, p) != 1 && inet_pton(AF_INET6, text, p) != 1)
		unit_fail(__FILE__, __LINE__, "bad test address %s", text);
}

/* Message header, smc_diag_msg and the attributes every kernel sends. */
static void sock_start(struct mb *m, const struct tsock *t)
{
	uint8_t h[SMC_DIAG_MSG_LEN] = { 0 };
	uint8_t fb[8];

	h[0] = AF_SMC;
	h[1] = t->state;
	h[2] = t->mode;
	put16be(h + 4, t->sport);
	put16be(h + 6, t->dport);
	put_addr(h + 8, t->src);
	put_addr(h + 24, t->dst);
	put32(h + 40, t->ifindex);
	put64(h + 44, 0x1122334455667788ull);   /* cookie: never printed */
	put32(h + 52, t->uid);
	put64(h + 56, t->inode);
	mb_start(m, SOCK_DIAG_BY_FAMILY, NLM_F_MULTI);
	mb_raw(m, h, sizeof(h));
	if (t->shutdown >= 0)
		mb_u8(m, SMC_DIAG_SHUTDOWN, (uint8_t)t->shutdown);
	if (!t->no_fallback) {
		put32(fb, t->reason);
		put32(fb + 4, t->peer_diag);
		mb_attr(m, SMC_DIAG_FALLBACK, fb, sizeof(fb));
	}
}

static void add_sock(struct smc_reply *rep, const struct tsock *t)
{
	struct mb m;

	sock_start(&m, t);
	mb_finish(&m, rep);
}

struct tcur { uint16_t wrap; uint32_t count; };

struct tconn {
	uint32_t token, sndbuf, rmbe, peer_rmbe;
	struct tcur rx_prod, rx_cons, tx_prod, tx_cons;
	uint8_t flags[4];
	struct tcur tx_prep, tx_sent, tx_fin;
};

static void put_cur(uint8_t *p, struct tcur c)
{
	put16(p, 0xdead);                       /* reserved: never printed */
	put16(p + 2, c.wrap);
	put32(p + 4, c.count);
}

static void add_conninfo(struct mb *m, const struct tconn *c, size_t len)
{
	uint8_t b[SMC_DIAG_CONNINFO_LEN];

	put32(b, c->token);
	put32(b + 4, c->sndbuf);
	put32(b + 8, c->rmbe);
	put32(b + 12, c->peer_rmbe);
	put_cur(b + 16, c->rx_prod);
	put_cur(b + 24, c->rx_cons);
	put_cur(b + 32, c->tx_prod);
	put_cur(b + 40, c->tx_cons);
	memcpy(b + 48, c->flags, 4);
	put_cur(b + 52, c->tx_prep);
	put_cur(b + 60, c->tx_sent);
	put_cur(b + 68, c->tx_fin);
	mb_attr(m, SMC_DIAG_CONNINFO, b, len);
}

static void add_lgrinfo(struct mb *m, uint8_t link_id, const char *ibname, uint8_t ibport,
			const char *gid, const char *peer_gid, uint8_t role)
{
	uint8_t b[SMC_DIAG_LGRINFO_LEN] = { 0 };

	b[0] = link_id;
	memcpy(b + 1, ibname, strlen(ibname));
	b[65] = ibport;
	memcpy(b + 66, gid, strlen(gid));
	memcpy(b + 106, peer_gid, strlen(peer_gid));
	b[146] = role;
	mb_attr(m, SMC_DIAG_LGRINFO, b, sizeof(b));
}

struct tdmb { uint32_t linkid; uint64_t peer_gid, my_gid, token, peer_token; };

static void add_dmbinfo(struct mb *m, const struct tdmb *d, size_t len)
{
	uint8_t b[SMC_DIAG_DMBINFO_EXT_LEN];

	memset(b, 0xee, sizeof(b));             /* padding and extended GIDs */
	put32(b, d->linkid);
	put64(b + 8, d->peer_gid);
	put64(b + 16, d->my_gid);
	put64(b + 24, d->token);
	put64(b + 32, d->peer_token);
	mb_attr(m, SMC_DIAG_DMBINFO, b, len);
}

/* ---- the example sockets of smcss(8) ------------------------------------- */

static const struct tsock ex_smcr = {
	.state = 1, .mode = 0, .uid = 0, .inode = 1234567,
	.src = "192.168.100.11", .sport = 40000, .dst = "192.168.100.12", .dport = 37373,
};
static const struct tsock ex_smcd = {
	.state = 1, .mode = 2, .uid = 1000, .inode = 98765432, .ifindex = 3,
	.src = "10.0.0.1", .sport = 5201, .dst = "10.0.0.2", .dport = 51234,
};
static const struct tsock ex_tcp = {
	.state = 1, .mode = 1, .inode = 4242, .reason = 0x03010000,
	.src = "10.1.1.1", .sport = 22, .dst = "10.1.1.2", .dport = 60000,
};
static const struct tsock ex_tcp6 = {
	.state = 1, .mode = 1, .inode = 4243, .reason = 0x03030000, .peer_diag = 0x03030001,
	.src = "fd00:1234:5678:9abc:def0:1234:5678:9abc", .sport = 443,
	.dst = "fd00::2", .dport = 33333,
};
static const struct tsock ex_closed = {
	.state = 7, .mode = 0, .inode = 4244,
	.src = "10.1.1.1", .sport = 22, .dst = "10.1.1.2", .dport = 60001,
};
static const struct tsock ex_appclw1 = {
	.state = 22, .mode = 0, .inode = 4245,
	.src = "10.1.1.1", .sport = 22, .dst = "10.1.1.2", .dport = 60002,
};
static const struct tsock ex_listen = {
	.state = 10, .mode = 0, .inode = 12345, .src = "0.0.0.0", .sport = 37373,
};
static const struct tsock ex_init = { .state = 2, .mode = 0, .uid = 1000, .inode = 23456 };

static const struct tconn ex_conn = {
	.token = 0x1234, .sndbuf = 0x10000, .rmbe = 0x10000, .peer_rmbe = 0x40000,
	.rx_prod = { 1, 0x2000 }, .rx_cons = { 1, 0x2000 },
	.tx_prod = { 0, 0x400 }, .tx_cons = { 0, 0x400 },
	.tx_prep = { 0, 0x400 }, .tx_sent = { 0, 0x400 }, .tx_fin = { 0, 0x400 },
};

static const struct tdmb ex_dmb = {
	.linkid = 0x300, .peer_gid = 0x1122334455667788ull, .my_gid = 0x99aabbccddeeff00ull,
	.token = 0x000000010000000full, .peer_token = 0x000000020000000eull,
};

#define GID1 "fe80:0000:0000:0000:0000:0000:0000:0001"
#define GID2 "fe80:0000:0000:0000:0000:0000:0000:0002"

static void add_smcr_lgr(struct smc_reply *rep)
{
	struct mb m;

	sock_start(&m, &ex_smcr);
	add_lgrinfo(&m, 1, "mlx5_0", 1, GID1, GID2, 1);
	mb_finish(&m, rep);
}

static void add_smcd_dmb(struct smc_reply *rep, size_t len)
{
	struct mb m;

	sock_start(&m, &ex_smcd);
	add_dmbinfo(&m, &ex_dmb, len);
	mb_finish(&m, rep);
}

/* Base example plus the -a rows, in one reply (kernel order). */
static void add_examples(struct smc_reply *rep)
{
	add_sock(rep, &ex_smcr);
	add_sock(rep, &ex_smcd);
	add_sock(rep, &ex_tcp);
	add_sock(rep, &ex_tcp6);
	add_sock(rep, &ex_listen);
	add_sock(rep, &ex_closed);
	add_sock(rep, &ex_init);
	add_sock(rep, &ex_appclw1);
}

/* ---- running the printer -------------------------------------------- */

/* Drop the '$' end-of-line markers. */
static void unmark(const char *in, char *out, size_t len)
{
	size_t n = 0;

	for (; *in && n + 1 < len; in++)
		if (!(in[0] == '$' && (in[1] == '\n' || in[1] == '\0')))
			out[n++] = *in;
	out[n] = '\0';
}

struct run {
	struct capture cap;
	int rc;
	const char *text;
};

static void run(struct run *r, const struct smc_reply *rep, const struct smcss_opts *o)
{
	cap_open(&r->cap);
	r->rc = smcss_print_reply(rep, o, r->cap.f);
	r->text = cap_text(&r->cap);
}

#define CHECK_TEXT(got, marked) do {                                       \
	char _exp[8192];                                                   \
	unmark(marked, _exp, sizeof(_exp));                                \
	CHECK_STR(got, _exp);                                              \
} while (0)

/* Print rep with options o and compare the whole output. */
#define CHECK_PRINT(rep, o, marked) do {                                   \
	struct run _r;                                                     \
	run(&_r, rep, o);                                                  \
	CHECK_INT(_r.rc, 0);                                               \
	CHECK_TEXT(_r.text, marked);                                       \
	cap_free(&_r.cap);                                                 \
} while (0)

#define HDR "State          UID   Inode   Local Address           Peer Address            Intf Mode "
#define HDR_D "Shutd Token    Sndbuf   Rcvbuf   Peerbuf  rxprod-Cursor rxcons-Cursor rxFlags " \
	"txprod-Cursor txcons-Cursor txFlags txprep-Cursor txsent-Cursor txfin-Cursor  "
#define HDR_R "Role IB-device       Port Linkid GID                                      Peer-GID"
#define HDR_DMB "GID              Token            Peer-GID         Peer-Token       Linkid"

#define ROW_SMCR "ACTIVE         00000 1234567 192.168.100.11:40000    192.168.100.12:37373    0000 SMCR "
#define ROW_SMCD "ACTIVE         01000 98765432 10.0.0.1:5201           10.0.0.2:51234          0003 SMCD "
#define ROW_TCP "ACTIVE         00000 0004242 10.1.1.1:22             10.1.1.2:60000          0000 TCP 0x03010000"
#define ROW_TCP6 "ACTIVE         00000 0004243 fd00:1234:5678:9a..:443 fd00::2:33333           0000 TCP 0x03030000/0x03030001"
#define ROW_CLOSED "CLOSED         00000 0004244 10.1.1.1:22             10.1.1.2:60001          0000 "
#define ROW_APPCLW1 "APPCLOSEWAIT1  00000 0004245 10.1.1.1:22             10.1.1.2:60002          0000 SMCR "
#define ROW_LISTEN "LISTEN         00000 0012345 0.0.0.0:37373           "
#define ROW_INIT "INIT           01000 0023456 "

/* ---- the rows of smcss(8) ----------------------------------------------- */

TEST(smcss_example_base)
{
	struct smc_reply rep;
	struct smcss_opts o = { 0 };

	smc_reply_init(&rep);
	add_examples(&rep);
	CHECK_PRINT(&rep, &o,
		"State          UID   Inode   Local Address           Peer Address            Intf Mode $\n"
		"ACTIVE         00000 1234567 192.168.100.11:40000    192.168.100.12:37373    0000 SMCR $\n"
		"ACTIVE         01000 98765432 10.0.0.1:5201           10.0.0.2:51234          0003 SMCD $\n"
		"ACTIVE         00000 0004242 10.1.1.1:22             10.1.1.2:60000          0000 TCP 0x03010000$\n"
		"ACTIVE         00000 0004243 fd00:1234:5678:9a..:443 fd00::2:33333           0000 TCP 0x03030000/0x03030001$\n"
		"CLOSED         00000 0004244 10.1.1.1:22             10.1.1.2:60001          0000 $\n"
		"APPCLOSEWAIT1  00000 0004245 10.1.1.1:22             10.1.1.2:60002          0000 SMCR $\n");
	smc_reply_free(&rep);
}

TEST(smcss_example_all)
{
	struct smc_reply rep;
	struct smcss_opts o = { .all = true };

	smc_reply_init(&rep);
	add_examples(&rep);
	CHECK_PRINT(&rep, &o,
		HDR "$\n" ROW_SMCR "$\n" ROW_SMCD "$\n" ROW_TCP "$\n" ROW_TCP6 "$\n"
		"LISTEN         00000 0012345 0.0.0.0:37373           $\n"
		ROW_CLOSED "$\n"
		"INIT           01000 0023456 $\n"
		ROW_APPCLW1 "$\n");
	smc_reply_free(&rep);
}

TEST(smcss_example_smcr)
{
	struct smc_reply rep;
	struct smcss_opts o = { .smcr = true };

	smc_reply_init(&rep);
	add_smcr_lgr(&rep);
	add_smcd_dmb(&rep, SMC_DIAG_DMBINFO_LEN);
	add_sock(&rep, &ex_tcp);
	CHECK_PRINT(&rep, &o,
		"State          UID   Inode   Local Address           Peer Address            Intf Mode Role IB-device       Port Linkid GID                                      Peer-GID$\n"
		"ACTIVE         00000 1234567 192.168.100.11:40000    192.168.100.12:37373    0000 SMCR SERV mlx5_0          01   01     fe80:0000:0000:0000:0000:0000:0000:0001  fe80:0000:0000:0000:0000:0000:0000:0002$\n");
	smc_reply_free(&rep);
}

TEST(smcss_example_smcd)
{
	struct smc_reply rep;
	struct smcss_opts o = { .smcd = true };

	smc_reply_init(&rep);
	add_smcr_lgr(&rep);
	add_smcd_dmb(&rep, SMC_DIAG_DMBINFO_LEN);
	add_sock(&rep, &ex_tcp6);
	CHECK_PRINT(&rep, &o,
		"State          UID   Inode   Local Address           Peer Address            Intf Mode GID              Token            Peer-GID         Peer-Token       Linkid$\n"
		"ACTIVE         01000 98765432 10.0.0.1:5201           10.0.0.2:51234          0003 SMCD 99aabbccddeeff00 000000010000000f 1122334455667788 000000020000000e 00000300 $\n");
	smc_reply_free(&rep);
}

/* Kernels since 6.8 append two extended GIDs to the DMB info: same row. */
TEST(smcss_smcd_extended_dmbinfo)
{
	struct smc_reply rep;
	struct smcss_opts o = { .smcd = true };

	smc_reply_init(&rep);
	add_smcd_dmb(&rep, SMC_DIAG_DMBINFO_EXT_LEN);
	CHECK_PRINT(&rep, &o, HDR HDR_DMB "$\n" ROW_SMCD
		"99aabbccddeeff00 000000010000000f 1122334455667788 000000020000000e 00000300 $\n");
	smc_reply_free(&rep);
}

static void add_debug_sock(struct smc_reply *rep, int shutdown, bool conn)
{
	struct tsock t = ex_smcr;
	struct mb m;

	t.shutdown = shutdown;
	sock_start(&m, &t);
	if (conn)
		add_conninfo(&m, &ex_conn, SMC_DIAG_CONNINFO_LEN);
	mb_finish(&m, rep);
}

#define CONN_CELLS "00001234 00010000 00010000 00040000 0001:00002000 0001:00002000 00:00   " \
	"0000:00000400 0000:00000400 00:00   0000:00000400 0000:00000400 0000:00000400 "

TEST(smcss_example_debug)
{
	struct smc_reply rep;
	struct smcss_opts o = { .debug = true };

	smc_reply_init(&rep);
	add_debug_sock(&rep, 0, true);
	CHECK_PRINT(&rep, &o,
		HDR HDR_D "$\n"
		"ACTIVE         00000 1234567 192.168.100.11:40000    192.168.100.12:37373    0000 SMCR  <->  00001234 00010000 00010000 00040000 0001:00002000 0001:00002000 00:00   0000:00000400 0000:00000400 00:00   0000:00000400 0000:00000400 0000:00000400 $\n");
	smc_reply_free(&rep);
}

TEST(smcss_debug_shutdown_combinations)
{
	struct smc_reply rep;
	struct smcss_opts o = { .debug = true };

	smc_reply_init(&rep);
	for (int sd = 0; sd < 4; sd++)
		add_debug_sock(&rep, sd, true);
	add_debug_sock(&rep, 0xfc, true);       /* other bits do not count */
	CHECK_PRINT(&rep, &o,
		HDR HDR_D "$\n"
		ROW_SMCR " <->  " CONN_CELLS "$\n"
		ROW_SMCR " R->  " CONN_CELLS "$\n"
		ROW_SMCR " <-W  " CONN_CELLS "$\n"
		ROW_SMCR " R-W  " CONN_CELLS "$\n"
		ROW_SMCR " <->  " CONN_CELLS "$\n");
	smc_reply_free(&rep);
}

/* Each -d cell is there only when its attribute is. */
TEST(smcss_debug_missing_attributes)
{
	struct smc_reply rep;
	struct smcss_opts o = { .debug = true };

	smc_reply_init(&rep);
	add_debug_sock(&rep, -1, true);
	add_debug_sock(&rep, 2, false);
	add_debug_sock(&rep, -1, false);
	CHECK_PRINT(&rep, &o,
		HDR HDR_D "$\n"
		ROW_SMCR CONN_CELLS "$\n"
		ROW_SMCR " <-W  $\n"
		ROW_SMCR "$\n");
	smc_reply_free(&rep);
}

TEST(smcss_debug_all_fields_distinct)
{
	static const struct tconn c = {
		.token = 0x89abcdef, .sndbuf = 0x1, .rmbe = 0x22, .peer_rmbe = 0x333,
		.rx_prod = { 0xa1, 0x11 }, .rx_cons = { 0xa2, 0x12 },
		.tx_prod = { 0xa3, 0x13 }, .tx_cons = { 0xa4, 0x14 },
		.flags = { 0x01, 0x02, 0x03, 0xff },
		.tx_prep = { 0xa5, 0x15 }, .tx_sent = { 0xa6, 0x16 }, .tx_fin = { 0xffff, 0xffffffff },
	};
	struct smc_reply rep;
	struct smcss_opts o = { .debug = true };
	struct mb m;

	smc_reply_init(&rep);
	sock_start(&m, &ex_smcr);
	add_conninfo(&m, &c, SMC_DIAG_CONNINFO_LEN);
	mb_finish(&m, &rep);
	CHECK_PRINT(&rep, &o,
		HDR HDR_D "$\n" ROW_SMCR
		" <->  89abcdef 00000001 00000022 00000333 00a1:00000011 00a2:00000012 01:02   "
		"00a3:00000013 00a4:00000014 03:ff   00a5:00000015 00a6:00000016 ffff:ffffffff $\n");
	smc_reply_free(&rep);
}

/* Fallback rows end after the reason even with -d; CLOSED after Intf; LISTEN/INIT early. */
TEST(smcss_short_rows_with_details)
{
	struct smc_reply rep;
	struct smcss_opts o = { .debug = true, .all = true };
	struct tsock t = ex_tcp;
	struct mb m;

	smc_reply_init(&rep);
	sock_start(&m, &t);
	add_conninfo(&m, &ex_conn, SMC_DIAG_CONNINFO_LEN);
	mb_finish(&m, &rep);
	t = ex_closed;
	sock_start(&m, &t);
	add_conninfo(&m, &ex_conn, SMC_DIAG_CONNINFO_LEN);
	mb_finish(&m, &rep);
	add_sock(&rep, &ex_listen);
	add_sock(&rep, &ex_init);
	CHECK_PRINT(&rep, &o,
		HDR HDR_D "$\n" ROW_TCP "$\n" ROW_CLOSED "$\n" ROW_LISTEN "$\n" ROW_INIT "$\n");
	smc_reply_free(&rep);
}

TEST(smcss_fallback_reason_forms)
{
	struct smc_reply rep;
	struct smcss_opts o = { 0 };
	struct tsock t = ex_tcp;

	smc_reply_init(&rep);
	t.no_fallback = true;
	add_sock(&rep, &t);                     /* no attribute: "TCP " alone */
	t = ex_tcp;
	t.reason = 0;
	t.peer_diag = 0x05000000;
	add_sock(&rep, &t);
	t.reason = 0xffffffff;
	t.peer_diag = 0;
	add_sock(&rep, &t);
	CHECK_PRINT(&rep, &o, HDR "$\n"
		"ACTIVE         00000 0004242 10.1.1.1:22             10.1.1.2:60000          0000 TCP $\n"
		"ACTIVE         00000 0004242 10.1.1.1:22             10.1.1.2:60000          0000 TCP 0x00000000/0x05000000$\n"
		"ACTIVE         00000 0004242 10.1.1.1:22             10.1.1.2:60000          0000 TCP 0xffffffff$\n");
	smc_reply_free(&rep);
}

/* An SMC-R socket's fallback attribute (reason 0 or not) is not printed. */
TEST(smcss_fallback_hidden_for_smc_modes)
{
	struct smc_reply rep;
	struct smcss_opts o = { 0 };
	struct tsock t = ex_smcr;

	smc_reply_init(&rep);
	t.reason = 0x03010000;
	t.peer_diag = 7;
	add_sock(&rep, &t);
	CHECK_PRINT(&rep, &o, HDR "$\n" ROW_SMCR "$\n");
	smc_reply_free(&rep);
}

/* ---- single columns -------------------------------------------------- */

TEST(smcss_unknown_state_and_mode)
{
	struct smc_reply rep;
	struct smcss_opts o = { 0 };
	struct tsock t = ex_smcr;

	smc_reply_init(&rep);
	t.state = 0x63;
	add_sock(&rep, &t);
	t.state = 27;
	t.mode = 9;                             /* unknown modes print as SMCR */
	add_sock(&rep, &t);
	t.state = 0;
	add_sock(&rep, &t);
	CHECK_PRINT(&rep, &o, HDR "$\n"
		"0x63?          00000 1234567 192.168.100.11:40000    192.168.100.12:37373    0000 SMCR $\n"
		"PROCESSABORT   00000 1234567 192.168.100.11:40000    192.168.100.12:37373    0000 SMCR $\n"
		"0?             00000 1234567 192.168.100.11:40000    192.168.100.12:37373    0000 SMCR $\n");
	smc_reply_free(&rep);
}

TEST(smcss_every_state_name)
{
	static const struct { uint8_t state; const char *cell; } states[] = {
		{ 1, "ACTIVE         " }, { 20, "PEERCLOSEWAIT1 " }, { 21, "PEERCLOSEWAIT2 " },
		{ 22, "APPCLOSEWAIT1  " }, { 23, "APPCLOSEWAIT2  " }, { 24, "APPFINCLOSEWAIT " },
		{ 25, "PEERFINCLOSEWAIT " }, { 26, "PEERABORTWAIT  " }, { 27, "PROCESSABORT   " },
	};
	struct smcss_opts o = { 0 };

	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		struct smc_reply rep;
		struct tsock t = ex_smcr;
		char exp[512];

		smc_reply_init(&rep);
		t.state = states[i].state;
		add_sock(&rep, &t);
		snprintf(exp, sizeof(exp), HDR "$\n%s%s$\n", states[i].cell, &ROW_SMCR[15]);
		CHECK_PRINT(&rep, &o, exp);
		smc_reply_free(&rep);
	}
}

TEST(smcss_wide_numbers)
{
	struct smc_reply rep;
	struct smcss_opts o = { 0 };
	struct tsock t = ex_smcr;

	smc_reply_init(&rep);
	t.inode = 18446744073709551615ull;
	t.uid = 123456;
	t.ifindex = 0x12345;
	add_sock(&rep, &t);
	t.inode = 0;
	t.uid = 4294967295u;                    /* upstream's %05d */
	t.ifindex = 0xabc;
	add_sock(&rep, &t);
	CHECK_PRINT(&rep, &o, HDR "$\n"
		"ACTIVE         123456 18446744073709551615 192.168.100.11:40000    192.168.100.12:37373    12345 SMCR $\n"
		"ACTIVE         -0001 0000000 192.168.100.11:40000    192.168.100.12:37373    0abc SMCR $\n");
	smc_reply_free(&rep);
}

static const char *addr_text(const char *text)
{
	static char buf[SMCSS_ADDR_BUF];
	uint8_t a[16] = { 0 };

	put_addr(a, text);
	smcss_addr_text(a, buf, sizeof(buf));
	return buf;
}

TEST(smcss_address_family_guess)
{
	uint8_t a[16] = { 0 };
	char buf[SMCSS_ADDR_BUF];

	CHECK_STR(addr_text("192.168.100.11"), "192.168.100.11");
	CHECK_STR(addr_text("0.0.0.0"), "0.0.0.0");
	CHECK_STR(addr_text("::"), "0.0.0.0");
	CHECK_STR(addr_text("2001:db8::"), "32.1.13.184");
	CHECK_STR(addr_text("::1"), "::1");
	CHECK_STR(addr_text("fd00::2"), "fd00::2");
	CHECK_STR(addr_text("::ffff:10.1.2.3"), "::ffff:10.1.2.3");
	CHECK_STR(addr_text("2001:db8:0:1::"), "2001:db8:0:1::");
	/* any one of words 1, 2, 3 makes it IPv6 */
	for (int w = 1; w < 4; w++) {
		memset(a, 0, sizeof(a));
		a[0] = 10;
		a[w * 4 + 3] = 1;
		smcss_addr_text(a, buf, sizeof(buf));
		CHECK(strchr(buf, ':') != NULL);
	}
}

static const char *addr_port(const char *text, uint16_t port, bool wide)
{
	static char buf[SMCSS_ADDR_BUF];
	uint8_t a[16] = { 0 };

	put_addr(a, text);
	smcss_addr_port_text(a, port, wide, buf, sizeof(buf));
	return buf;
}

TEST(smcss_address_truncation)
{
	CHECK_STR(addr_port("fd00:1234:5678:9abc:def0:1234:5678:9abc", 443, false),
		  "fd00:1234:5678:9a..:443");
	CHECK_STR(addr_port("fd00:1234:5678:9abc:def0:1234:5678:9abc", 443, true),
		  "fd00:1234:5678:9abc:def0:1234:5678:9abc:443");
	CHECK_STR(addr_port("fd00:1234:5678:9abc:def0:1234:5678:9abc", 1, false),
		  "fd00:1234:5678:9abc..:1");
	CHECK_STR(addr_port("fd00:1234:5678:9abc:def0:1234:5678:9abc", 65535, false),
		  "fd00:1234:5678:..:65535");
	/* exactly 23 characters: kept; 24: cut */
	CHECK_STR(addr_port("fd00:1234:5678:9ab::1", 0, false), "fd00:1234:5678:9ab::1:0");
	CHECK_STR(addr_port("fd00:1234:5678:9abc::1", 0, false), "fd00:1234:5678:9abc..:0");
	CHECK_STR(addr_port("fd00:1234:5678:9abc::1", 10, false), "fd00:1234:5678:9ab..:10");
	CHECK_STR(addr_port("fd00:1234:5678:9abc::1", 10, true), "fd00:1234:5678:9abc::1:10");
	CHECK_STR(addr_port("255.255.255.255", 65535, false), "255.255.255.255:65535");
	CHECK_STR(addr_port("::", 0, false), "0.0.0.0:0");
}

TEST(smcss_wide_rows)
{
	struct smc_reply rep;
	struct smcss_opts o = { .wide = true };

	smc_reply_init(&rep);
	add_sock(&rep, &ex_tcp6);
	add_sock(&rep, &ex_tcp);
	CHECK_PRINT(&rep, &o, HDR "$\n"
		"ACTIVE         00000 0004243 fd00:1234:5678:9abc:def0:1234:5678:9abc:443 fd00::2:33333           0000 TCP 0x03030000/0x03030001$\n"
		ROW_TCP "$\n");
	smc_reply_free(&rep);
}

/* A LISTEN socket on IPv6 "::" shows as 0.0.0.0, as upstream (smcss(8)). */
TEST(smcss_ipv6_any_as_ipv4)
{
	struct smc_reply rep;
	struct smcss_opts o = { .listening = true };
	struct tsock t = ex_listen;

	smc_reply_init(&rep);
	t.src = "::";
	t.sport = 443;
	add_sock(&rep, &t);
	t.src = "fd00:1234:5678:9abc:def0:1234:5678:9abc";
	add_sock(&rep, &t);
	CHECK_PRINT(&rep, &o, HDR "$\n"
		"LISTEN         00000 0012345 0.0.0.0:443             $\n"
		"LISTEN         00000 0012345 fd00:1234:5678:9a..:443 $\n");
	smc_reply_free(&rep);
}

/* ---- row selection --------------------------------------------------- */

static void add_selection_set(struct smc_reply *rep)
{
	struct tsock t = ex_smcd;

	add_examples(rep);
	t.state = 10;                           /* an SMC-D listener (never seen, mode 0 in practice) */
	t.inode = 99;
	add_sock(rep, &t);
}

TEST(smcss_select_listening)
{
	struct smc_reply rep;
	struct smcss_opts o = { .listening = true };

	smc_reply_init(&rep);
	add_selection_set(&rep);
	CHECK_PRINT(&rep, &o, HDR "$\n" ROW_LISTEN "$\n"
		"LISTEN         01000 0000099 10.0.0.1:5201           $\n");
	smc_reply_free(&rep);
}

TEST(smcss_select_smcr_and_smcd)
{
	struct smc_reply rep;
	struct smcss_opts r = { .smcr = true }, ra = { .smcr = true, .all = true };
	struct smcss_opts d = { .smcd = true }, da = { .smcd = true, .all = true };

	smc_reply_init(&rep);
	add_selection_set(&rep);
	/* no LGRINFO/DMBINFO attributes: rows end after the mode */
	CHECK_PRINT(&rep, &r, HDR HDR_R "$\n" ROW_SMCR "$\n" ROW_CLOSED "$\n" ROW_APPCLW1 "$\n");
	CHECK_PRINT(&rep, &ra, HDR HDR_R "$\n" ROW_SMCR "$\n" ROW_LISTEN "$\n" ROW_CLOSED "$\n"
		    ROW_INIT "$\n" ROW_APPCLW1 "$\n");
	CHECK_PRINT(&rep, &d, HDR HDR_DMB "$\n" ROW_SMCD "$\n");
	CHECK_PRINT(&rep, &da, HDR HDR_DMB "$\n" ROW_SMCD "$\n"
		    "LISTEN         01000 0000099 10.0.0.1:5201           $\n");
	smc_reply_free(&rep);
}

TEST(smcss_selected_rules)
{
	struct smc_diag_sock s = { 0 };
	struct smcss_opts none = { 0 }, all = { .all = true }, l = { .listening = true };
	struct smcss_opts r = { .smcr = true, .all = true }, d = { .smcd = true, .all = true };

	for (unsigned int st = 0; st < 256; st++) {
		s.state = (uint8_t)st;
		s.mode = 0;
		CHECK_INT(smcss_selected(&s, &none), st != 2 && st != 10);
		CHECK_INT(smcss_selected(&s, &all), 1);
		CHECK_INT(smcss_selected(&s, &l), st == 10);
	}
	for (unsigned int mode = 0; mode < 256; mode++) {
		s.state = 1;
		s.mode = (uint8_t)mode;
		CHECK_INT(smcss_selected(&s, &r), mode == 0);
		CHECK_INT(smcss_selected(&s, &d), mode == 2);
	}
}

TEST(smcss_ext_mask_bits)
{
	struct smcss_opts o = { 0 };

	CHECK_INT(smcss_ext_mask(&o), 0x14);
	o.debug = true;
	CHECK_INT(smcss_ext_mask(&o), 0x15);
	o.smcr = true;
	CHECK_INT(smcss_ext_mask(&o), 0x17);
	o.smcr = false;
	o.smcd = true;
	CHECK_INT(smcss_ext_mask(&o), 0x1d);
	o.debug = false;
	CHECK_INT(smcss_ext_mask(&o), 0x1c);
}

TEST(smcss_header_variants)
{
	struct capture c;
	struct smcss_opts o = { .debug = true, .smcd = true };

	cap_open(&c);
	smcss_print_header(&o, c.f);
	CHECK_STR(cap_text(&c), HDR HDR_D HDR_DMB "\n");
	cap_free(&c);
	o.json = true;
	cap_open(&c);
	smcss_print_header(&o, c.f);
	CHECK_STR(cap_text(&c), "");
	cap_free(&c);
}

/* ---- JSON -------------------------------------------------------------- */

TEST(smcss_json_basic)
{
	struct smc_reply rep;
	struct smcss_opts o = { .json = true };
	struct tsock t = ex_tcp6;

	smc_reply_init(&rep);
	add_sock(&rep, &ex_smcr);
	add_sock(&rep, &ex_listen);             /* not selected without -a */
	t.shutdown = 3;
	add_sock(&rep, &t);
	CHECK_PRINT(&rep, &o,
		"{\"sockets\":["
		"{\"state\":\"ACTIVE\",\"uid\":0,\"inode\":1234567,"
		"\"local_address\":\"192.168.100.11\",\"local_port\":40000,"
		"\"peer_address\":\"192.168.100.12\",\"peer_port\":37373,"
		"\"interface\":0,\"mode\":\"SMCR\",\"fallback_reason\":0,"
		"\"fallback_reason_hex\":\"0x00000000\",\"peer_diagnosis\":0,\"shutdown\":\"<->\"},"
		"{\"state\":\"ACTIVE\",\"uid\":0,\"inode\":4243,"
		"\"local_address\":\"fd00:1234:5678:9abc:def0:1234:5678:9abc\",\"local_port\":443,"
		"\"peer_address\":\"fd00::2\",\"peer_port\":33333,"
		"\"interface\":0,\"mode\":\"TCP\",\"fallback_reason\":50528256,"
		"\"fallback_reason_hex\":\"0x03030000\","
		"\"fallback_reason_text\":\"no SMC device found (R or D) (NOSMCDEV)\","
		"\"peer_diagnosis\":50528257,"
		"\"peer_diagnosis_text\":\"no SMC-D device found (NOSMCDDEV)\",\"shutdown\":\"R-W\"}"
		"]}\n");
	smc_reply_free(&rep);
}

/* Codes newer than smc-tools 1.8.5: hex in the text as ever, named in JSON. */
TEST(smcss_json_reason_codes_after_1_8_5)
{
	struct smc_reply rep;
	struct smcss_opts o = { 0 };
	struct smcss_opts j = { .json = true };
	struct tsock t = ex_tcp;

	smc_reply_init(&rep);
	t.reason = 0x05000000;
	t.peer_diag = 0x0303000b;
	add_sock(&rep, &t);
	t.reason = 0x09990002;
	t.peer_diag = 0;
	add_sock(&rep, &t);
	CHECK_PRINT(&rep, &o, HDR "$\n"
		"ACTIVE         00000 0004242 10.1.1.1:22             10.1.1.2:60000          0000 TCP 0x05000000/0x0303000b$\n"
		"ACTIVE         00000 0004242 10.1.1.1:22             10.1.1.2:60000          0000 TCP 0x09990002$\n");
	CHECK_PRINT(&rep, &j,
		"{\"sockets\":["
		"{\"state\":\"ACTIVE\",\"uid\":0,\"inode\":4242,"
		"\"local_address\":\"10.1.1.1\",\"local_port\":22,"
		"\"peer_address\":\"10.1.1.2\",\"peer_port\":60000,"
		"\"interface\":0,\"mode\":\"TCP\",\"fallback_reason\":83886080,"
		"\"fallback_reason_hex\":\"0x05000000\","
		"\"fallback_reason_text\":\"peer declined (PEERDECL)\","
		"\"peer_diagnosis\":50528267,"
		"\"peer_diagnosis_text\":\"max links negotiation failed (MAXLINKERR)\",\"shutdown\":\"<->\"},"
		"{\"state\":\"ACTIVE\",\"uid\":0,\"inode\":4242,"
		"\"local_address\":\"10.1.1.1\",\"local_port\":22,"
		"\"peer_address\":\"10.1.1.2\",\"peer_port\":60000,"
		"\"interface\":0,\"mode\":\"TCP\",\"fallback_reason\":161021954,"
		"\"fallback_reason_hex\":\"0x09990002\","
		"\"fallback_reason_text\":\"making the IB link ready failed (ERR_RDYLNK)\","
		"\"peer_diagnosis\":0,\"shutdown\":\"<->\"}"
		"]}\n");
	smc_reply_free(&rep);
}

TEST(smcss_json_short_states_and_no_attributes)
{
	struct smc_reply rep;
	struct smcss_opts o = { .json = true, .listening = true };
	struct tsock t = ex_listen;

	smc_reply_init(&rep);
	t.shutdown = -1;
	t.no_fallback = true;
	t.uid = 4294967295u;
	add_sock(&rep, &t);
	CHECK_PRINT(&rep, &o,
		"{\"sockets\":[{\"state\":\"LISTEN\",\"uid\":4294967295,\"inode\":12345,"
		"\"local_address\":\"0.0.0.0\",\"local_port\":37373,"
		"\"peer_address\":\"0.0.0.0\",\"peer_port\":0,"
		"\"interface\":0,\"mode\":\"SMCR\"}]}\n");
	smc_reply_free(&rep);
}

TEST(smcss_json_details)
{
	struct smc_reply rep;
	struct smcss_opts o = { .json = true, .debug = true, .smcr = true };
	struct tsock t = ex_smcr;
	struct mb m;

	smc_reply_init(&rep);
	t.no_fallback = true;
	t.shutdown = 1;
	sock_start(&m, &t);
	add_conninfo(&m, &ex_conn, SMC_DIAG_CONNINFO_LEN);
	add_lgrinfo(&m, 1, "mlx5_0", 1, GID1, GID2, 0);
	mb_finish(&m, &rep);
	CHECK_PRINT(&rep, &o,
		"{\"sockets\":[{\"state\":\"ACTIVE\",\"uid\":0,\"inode\":1234567,"
		"\"local_address\":\"192.168.100.11\",\"local_port\":40000,"
		"\"peer_address\":\"192.168.100.12\",\"peer_port\":37373,"
		"\"interface\":0,\"mode\":\"SMCR\",\"shutdown\":\"R->\","
		"\"conn\":{\"token\":4660,\"sndbuf\":65536,\"rcvbuf\":65536,\"peerbuf\":262144,"
		"\"rx_prod\":{\"wrap\":1,\"count\":8192},\"rx_cons\":{\"wrap\":1,\"count\":8192},"
		"\"rx_prod_flags\":0,\"rx_conn_state_flags\":0,"
		"\"tx_prod\":{\"wrap\":0,\"count\":1024},\"tx_cons\":{\"wrap\":0,\"count\":1024},"
		"\"tx_prod_flags\":0,\"tx_conn_state_flags\":0,"
		"\"tx_prep\":{\"wrap\":0,\"count\":1024},\"tx_sent\":{\"wrap\":0,\"count\":1024},"
		"\"tx_fin\":{\"wrap\":0,\"count\":1024}},"
		"\"smcr\":{\"role\":\"CLNT\",\"ib_dev\":\"mlx5_0\",\"ib_port\":1,\"link_id\":1,"
		"\"gid\":\"" GID1 "\",\"peer_gid\":\"" GID2 "\"}}]}\n");
	smc_reply_free(&rep);
}

TEST(smcss_json_smcd)
{
	struct smc_reply rep;
	struct smcss_opts o = { .json = true, .smcd = true };
	struct tsock t = ex_smcd;
	struct mb m;

	smc_reply_init(&rep);
	t.no_fallback = true;
	t.shutdown = -1;
	sock_start(&m, &t);
	add_dmbinfo(&m, &ex_dmb, SMC_DIAG_DMBINFO_LEN);
	mb_finish(&m, &rep);
	add_sock(&rep, &ex_smcr);               /* filtered by -D */
	CHECK_PRINT(&rep, &o,
		"{\"sockets\":[{\"state\":\"ACTIVE\",\"uid\":1000,\"inode\":98765432,"
		"\"local_address\":\"10.0.0.1\",\"local_port\":5201,"
		"\"peer_address\":\"10.0.0.2\",\"peer_port\":51234,"
		"\"interface\":3,\"mode\":\"SMCD\","
		"\"smcd\":{\"gid\":11072869122414935808,\"token\":4294967311,"
		"\"peer_gid\":1234605616436508552,\"peer_token\":8589934606,"
		"\"link_id\":768}}]}\n");
	smc_reply_free(&rep);
}

/* The extended GIDs of a 6.8+ kernel: in JSON, never in the text columns. */
TEST(smcss_json_smcd_extended_gids)
{
	struct smc_reply rep;
	struct smcss_opts o = { .json = true, .smcd = true };
	struct tsock t = ex_smcd;
	struct mb m;

	smc_reply_init(&rep);
	t.no_fallback = true;
	t.shutdown = -1;
	sock_start(&m, &t);
	add_dmbinfo(&m, &ex_dmb, SMC_DIAG_DMBINFO_EXT_LEN);
	mb_finish(&m, &rep);
	CHECK_PRINT(&rep, &o,
		"{\"sockets\":[{\"state\":\"ACTIVE\",\"uid\":1000,\"inode\":98765432,"
		"\"local_address\":\"10.0.0.1\",\"local_port\":5201,"
		"\"peer_address\":\"10.0.0.2\",\"peer_port\":51234,"
		"\"interface\":3,\"mode\":\"SMCD\","
		"\"smcd\":{\"gid\":11072869122414935808,\"token\":4294967311,"
		"\"peer_gid\":1234605616436508552,\"peer_token\":8589934606,"
		"\"link_id\":768,\"gid_ext\":17216961135462248174,"
		"\"peer_gid_ext\":17216961135462248174}}]}\n");
	smc_reply_free(&rep);
}

TEST(smcss_json_empty)
{
	struct smc_reply rep;
	struct smcss_opts o = { .json = true, .all = true };

	smc_reply_init(&rep);
	CHECK_PRINT(&rep, &o, "{\"sockets\":[]}\n");
	smc_reply_free(&rep);
}

/* ---- malformed replies ----------------------------------------------- */

TEST(smcss_empty_reply)
{
	struct smc_reply rep;
	struct smcss_opts o = { .all = true };

	smc_reply_init(&rep);
	CHECK_PRINT(&rep, &o, HDR "$\n");
	smc_reply_free(&rep);
}

TEST(smcss_short_header_rejected)
{
	struct smc_reply rep;
	struct smcss_opts o = { 0 }, j = { .json = true };
	uint8_t h[SMC_DIAG_MSG_LEN - 1] = { 1 };
	struct run r;
	struct mb m;

	smc_reply_init(&rep);
	add_sock(&rep, &ex_smcr);
	mb_start(&m, SOCK_DIAG_BY_FAMILY, NLM_F_MULTI);
	mb_raw(&m, h, sizeof(h));
	mb_finish(&m, &rep);
	add_sock(&rep, &ex_smcr);
	run(&r, &rep, &o);
	CHECK_INT(r.rc, -EBADMSG);
	CHECK_TEXT(r.text, HDR "$\n" ROW_SMCR "$\n");
	cap_free(&r.cap);
	run(&r, &rep, &j);                      /* the document is still closed */
	CHECK_INT(r.rc, -EBADMSG);
	CHECK(r.text[0] == '{' && strstr(r.text, "]}\n") != NULL);
	cap_free(&r.cap);
	smc_reply_free(&rep);
}

TEST(smcss_wrong_message_type_rejected)
{
	struct smc_reply rep;
	struct smcss_opts o = { 0 };
	struct mb m;
	struct run r;

	smc_reply_init(&rep);
	sock_start(&m, &ex_smcr);
	memcpy(m.buf + 4, &(uint16_t){ NLMSG_NOOP }, 2);
	mb_finish(&m, &rep);
	run(&r, &rep, &o);
	CHECK_INT(r.rc, -EBADMSG);
	CHECK_TEXT(r.text, HDR "$\n");
	cap_free(&r.cap);
	smc_reply_free(&rep);
}

/* An attribute claiming more bytes than the message holds is not used. */
TEST(smcss_attribute_past_message_end)
{
	struct smc_reply rep;
	struct smcss_opts o = { .debug = true };
	struct tsock t = ex_tcp;
	struct mb m;
	uint16_t big = 200;

	smc_reply_init(&rep);
	t.shutdown = -1;
	sock_start(&m, &t);                     /* FALLBACK is the last attribute */
	memcpy(m.buf + m.len - 12, &big, 2);
	mb_finish(&m, &rep);
	t = ex_smcr;
	t.no_fallback = true;
	sock_start(&m, &t);                     /* SHUTDOWN is the last attribute */
	memcpy(m.buf + m.len - 8, &big, 2);
	mb_finish(&m, &rep);
	CHECK_PRINT(&rep, &o, HDR HDR_D "$\n"
		"ACTIVE         00000 0004242 10.1.1.1:22             10.1.1.2:60000          0000 TCP $\n"
		ROW_SMCR "$\n");
	smc_reply_free(&rep);
}

/* Attributes shorter than their structures are ignored, as upstream does. */
TEST(smcss_short_attributes_ignored)
{
	struct smc_reply rep;
	struct smcss_opts d = { .debug = true }, r = { .smcr = true }, dm = { .smcd = true };
	struct smcss_opts j = { .json = true, .debug = true, .smcd = true };
	uint8_t lgr[SMC_DIAG_LGRINFO_LEN - 1] = { 0 };
	struct tsock t = ex_smcr;
	struct mb m;

	smc_reply_init(&rep);
	t.shutdown = -1;
	t.no_fallback = true;
	sock_start(&m, &t);
	mb_attr(&m, SMC_DIAG_SHUTDOWN, NULL, 0);
	mb_attr(&m, SMC_DIAG_FALLBACK, "\1\2\3\4\5\6\7", 7);
	add_conninfo(&m, &ex_conn, SMC_DIAG_CONNINFO_LEN - 1);
	mb_attr(&m, SMC_DIAG_LGRINFO, lgr, sizeof(lgr));
	mb_finish(&m, &rep);
	t.mode = 2;
	sock_start(&m, &t);
	add_dmbinfo(&m, &ex_dmb, SMC_DIAG_DMBINFO_LEN - 1);
	mb_finish(&m, &rep);
	CHECK_PRINT(&rep, &d, HDR HDR_D "$\n" ROW_SMCR "$\n"
		"ACTIVE         00000 1234567 192.168.100.11:40000    192.168.100.12:37373    0000 SMCD $\n");
	CHECK_PRINT(&rep, &r, HDR HDR_R "$\n" ROW_SMCR "$\n");
	CHECK_PRINT(&rep, &dm, HDR HDR_DMB "$\n"
		"ACTIVE         00000 1234567 192.168.100.11:40000    192.168.100.12:37373    0000 SMCD $\n");
	CHECK_PRINT(&rep, &j,
		"{\"sockets\":[{\"state\":\"ACTIVE\",\"uid\":0,\"inode\":1234567,"
		"\"local_address\":\"192.168.100.11\",\"local_port\":40000,"
		"\"peer_address\":\"192.168.100.12\",\"peer_port\":37373,"
		"\"interface\":0,\"mode\":\"SMCD\"}]}\n");
	smc_reply_free(&rep);
}

/* Unknown attribute types and unterminated strings do no harm. */
TEST(smcss_unknown_attributes_and_long_strings)
{
	struct smc_reply rep;
	struct smcss_opts o = { .smcr = true };
	uint8_t lgr[SMC_DIAG_LGRINFO_LEN];
	struct mb m;
	char exp[1024];

	smc_reply_init(&rep);
	memset(lgr, 'x', sizeof(lgr));
	lgr[0] = 0xff;
	lgr[65] = 0x7f;
	lgr[146] = 0;
	sock_start(&m, &ex_smcr);
	mb_u32(&m, 99, 7);
	mb_u32(&m, 0, 7);
	mb_attr(&m, SMC_DIAG_LGRINFO, lgr, sizeof(lgr));
	mb_finish(&m, &rep);
	snprintf(exp, sizeof(exp), HDR HDR_R "$\n" ROW_SMCR "CLNT %.64s 7f   ff     %.40s %.40s$\n",
		 (const char *)lgr + 1, (const char *)lgr + 1, (const char *)lgr + 1);
	CHECK_PRINT(&rep, &o, exp);
	smc_reply_free(&rep);
}
