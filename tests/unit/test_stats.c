/*
 * smcd/smcr stats: abbreviation, the reports of smcd(8) `stats`/`stats json`, the -j
 * document, the cache file of 5.5.6 and malformed replies.  Replies are built
 * byte by byte in the kernel's emission order (net/smc/smc_stats.c, <linux/smc.h>).
 */
#include "fixture.h"
#include "msgbuild.h"
#include "smc/stats.h"
#include "smc_uapi.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/netlink.h>

#define FAMILY 0x1a

/* ---- reply builders ------------------------------------------------------- */

/* Fallback reasons as the kernel keeps them (slot order). */
struct fb_slot {
	uint32_t code;
	uint16_t count;
};

struct fb_table {
	struct fb_slot srv[8], clnt[8];
	int nsrv, nclnt;
	uint64_t srv_total, clnt_total;
};

static void fback_msg(struct smc_reply *rep, bool first, uint8_t type,
		      const struct fb_slot *s, const struct fb_table *t)
{
	struct mb m;

	mb_start(&m, FAMILY, NLM_F_MULTI);
	mb_genl(&m, SMC_NETLINK_GET_FBACK_STATS);
	mb_nest(&m, SMC_GEN_FBACK_STATS);
	mb_u8(&m, SMC_NLA_FBACK_STATS_TYPE, type);
	if (first) {
		mb_u64(&m, SMC_NLA_FBACK_STATS_SRV_CNT, t->srv_total);
		mb_u64(&m, SMC_NLA_FBACK_STATS_CLNT_CNT, t->clnt_total);
	}
	mb_u32(&m, SMC_NLA_FBACK_STATS_RSN_CODE, s->code);
	mb_u16(&m, SMC_NLA_FBACK_STATS_RSN_CNT, s->count);
	mb_end(&m);
	mb_finish(&m, rep);
}

/* k = 0..: srv[k] if used, then clnt[k] if used; totals in the first message. */
static void build_fback(struct smc_reply *rep, const struct fb_table *t)
{
	bool first = true;

	for (int k = 0; k < t->nsrv || k < t->nclnt; k++) {
		if (k < t->nsrv) {
			fback_msg(rep, first, 1, &t->srv[k], t);
			first = false;
		}
		if (k < t->nclnt) {
			fback_msg(rep, first, 0, &t->clnt[k], t);
			first = false;
		}
	}
}

/* A technology block to send: values by smc_stats_off, and how to send usage. */
struct tech {
	uint64_t v[SMC_ST_TECH_CNT];
	bool no_usage;           /* kernel before ~6.12 */
	bool pads;               /* PAD attributes before the u64s */
};

static void put_u64(struct mb *m, const struct tech *t, uint16_t type, uint64_t v)
{
	if (t->pads)
		mb_attr(m, 0, NULL, 0);
	mb_u64(m, type, v);
}

/* nla_put_uint: 4 bytes when the value fits */
static void put_uint(struct mb *m, uint16_t type, uint64_t v)
{
	if (v <= UINT32_MAX)
		mb_u32(m, type, (uint32_t)v);
	else
		mb_u64(m, type, v);
}

static void put_rmb(struct mb *m, const struct tech *t, uint16_t type, int off)
{
	static const int order[] = { SMC_RMB_REUSE, SMC_RMB_SIZE_SM_PEER, SMC_RMB_SIZE_SM,
				     SMC_RMB_FULL_PEER, SMC_RMB_FULL, SMC_RMB_ALLOC,
				     SMC_RMB_DGRADE };

	mb_nest(m, type);
	for (int i = 0; i < 7; i++)
		put_u64(m, t, (uint16_t)(order[i] + 1), t->v[off + order[i]]);
	mb_end(m);
}

static void put_buckets(struct mb *m, const struct tech *t, uint16_t type, int off)
{
	mb_nest(m, type);
	for (int i = 0; i < SMC_STATS_BUCKETS; i++)
		put_u64(m, t, (uint16_t)(i + 1), t->v[off + i]);
	mb_end(m);
}

static void put_tech(struct mb *m, uint16_t type, const struct tech *t)
{
	const uint64_t *v = t->v;

	mb_nest(m, type);
	put_rmb(m, t, SMC_NLA_STATS_T_TX_RMB_STATS, SMC_ST_RMB_TX);
	put_rmb(m, t, SMC_NLA_STATS_T_RX_RMB_STATS, SMC_ST_RMB_RX);
	put_buckets(m, t, SMC_NLA_STATS_T_TXPLOAD_SIZE, SMC_ST_TX_PD);
	put_buckets(m, t, SMC_NLA_STATS_T_RXPLOAD_SIZE, SMC_ST_RX_PD);
	put_buckets(m, t, SMC_NLA_STATS_T_TX_RMB_SIZE, SMC_ST_TX_RMBSIZE);
	put_buckets(m, t, SMC_NLA_STATS_T_RX_RMB_SIZE, SMC_ST_RX_RMBSIZE);
	put_u64(m, t, SMC_NLA_STATS_T_CLNT_V1_SUCC, v[SMC_ST_CLNT_V1]);
	put_u64(m, t, SMC_NLA_STATS_T_CLNT_V2_SUCC, v[SMC_ST_CLNT_V2]);
	put_u64(m, t, SMC_NLA_STATS_T_SRV_V1_SUCC, v[SMC_ST_SRV_V1]);
	put_u64(m, t, SMC_NLA_STATS_T_SRV_V2_SUCC, v[SMC_ST_SRV_V2]);
	put_u64(m, t, SMC_NLA_STATS_T_RX_BYTES, v[SMC_ST_RX_BYTES]);
	put_u64(m, t, SMC_NLA_STATS_T_TX_BYTES, v[SMC_ST_TX_BYTES]);
	if (!t->no_usage) {
		put_uint(m, SMC_NLA_STATS_T_RX_RMB_USAGE, v[SMC_ST_RX_RMBUSE]);
		put_uint(m, SMC_NLA_STATS_T_TX_RMB_USAGE, v[SMC_ST_TX_RMBUSE]);
	}
	put_u64(m, t, SMC_NLA_STATS_T_RX_CNT, v[SMC_ST_RX_CNT]);
	put_u64(m, t, SMC_NLA_STATS_T_TX_CNT, v[SMC_ST_TX_CNT]);
	put_u64(m, t, SMC_NLA_STATS_T_SENDPAGE_CNT, v[SMC_ST_SENDPAGE]);
	put_u64(m, t, SMC_NLA_STATS_T_CORK_CNT, v[SMC_ST_CORK]);
	put_u64(m, t, SMC_NLA_STATS_T_NDLY_CNT, v[SMC_ST_NDLY]);
	put_u64(m, t, SMC_NLA_STATS_T_SPLICE_CNT, v[SMC_ST_SPLICE]);
	put_u64(m, t, SMC_NLA_STATS_T_URG_DATA_CNT, v[SMC_ST_URG_DATA]);
	mb_end(m);
}

struct kstats {
	struct tech d, r;
	uint64_t hs_clnt, hs_srv;
};

static void build_stats(struct smc_reply *rep, const struct kstats *k)
{
	struct mb m;

	mb_start(&m, FAMILY, NLM_F_MULTI);
	mb_genl(&m, SMC_NETLINK_GET_STATS);
	mb_nest(&m, SMC_GEN_STATS);
	put_tech(&m, SMC_NLA_STATS_SMCD_TECH, &k->d);
	put_tech(&m, SMC_NLA_STATS_SMCR_TECH, &k->r);
	mb_u64(&m, SMC_NLA_STATS_CLNT_HS_ERR_CNT, k->hs_clnt);
	mb_u64(&m, SMC_NLA_STATS_SRV_HS_ERR_CNT, k->hs_srv);
	mb_end(&m);
	mb_finish(&m, rep);
}

/* ---- the data of the smcr(8) `-d stats` example -------------- */

#define RSN_PEER_NO_SMC 0x03010000
#define RSN_NOSMCDEV    0x03030000
#define RSN_NOSMCRDEV   0x03030002
#define RSN_DIFFPREFIX  0x03070000
#define RSN_PEERDECL    0x05000000

/* Slot order differs from the printed order: the report sorts by count. */
static const struct fb_table example_fb = {
	.srv = { { RSN_DIFFPREFIX, 2 }, { RSN_PEER_NO_SMC, 5 } },
	.nsrv = 2,
	/* PEERDECL and NOSMCDEV tie: the stable sort keeps PEERDECL, only 3 shown */
	.clnt = { { RSN_PEER_NO_SMC, 3 }, { RSN_NOSMCRDEV, 20 }, { RSN_PEERDECL, 1 },
		  { RSN_NOSMCDEV, 1 } },
	.nclnt = 4,
	.srv_total = 7,
	.clnt_total = 25,
};

static void example_smcr(struct tech *t)
{
	uint64_t *v = t->v;

	memset(t, 0, sizeof(*t));
	v[SMC_ST_CLNT_V1] = 11;
	v[SMC_ST_CLNT_V2] = 2;
	v[SMC_ST_SRV_V1] = 1;
	v[SMC_ST_SRV_V2] = 1;
	v[SMC_ST_RX_CNT] = 654324;
	v[SMC_ST_TX_CNT] = 125472;
	v[SMC_ST_RX_BYTES] = 987654321;
	v[SMC_ST_RX_RMBUSE] = 65536;
	v[SMC_ST_RMB_RX + SMC_RMB_FULL] = 9;
	v[SMC_ST_RMB_RX + SMC_RMB_REUSE] = 1;
	v[SMC_ST_RMB_RX + SMC_RMB_ALLOC] = 15;
	v[SMC_ST_RX_RMBSIZE + 3] = 15;
	v[SMC_ST_RX_PD + 0] = 654321;
	v[SMC_ST_RX_PD + 1] = 3;
	v[SMC_ST_TX_BYTES] = 123456789012ULL;
	v[SMC_ST_TX_RMBUSE] = 1048576;
	v[SMC_ST_RMB_TX + SMC_RMB_FULL] = 70;
	v[SMC_ST_RMB_TX + SMC_RMB_FULL_PEER] = 6;
	v[SMC_ST_RMB_TX + SMC_RMB_SIZE_SM] = 5;
	v[SMC_ST_RMB_TX + SMC_RMB_SIZE_SM_PEER] = 4;
	v[SMC_ST_RMB_TX + SMC_RMB_DGRADE] = 1;
	v[SMC_ST_RMB_TX + SMC_RMB_REUSE] = 2;
	v[SMC_ST_RMB_TX + SMC_RMB_ALLOC] = 14;
	v[SMC_ST_TX_RMBSIZE + 2] = 12;
	v[SMC_ST_TX_RMBSIZE + 5] = 3;
	v[SMC_ST_TX_RMBSIZE + 7] = 1;
	v[SMC_ST_TX_PD + 0] = 123456;
	v[SMC_ST_TX_PD + 1] = 2000;
	v[SMC_ST_TX_PD + 2] = 15;
	v[SMC_ST_TX_PD + 8] = 1;
	v[SMC_ST_CORK] = 3;
	v[SMC_ST_NDLY] = 40;
	v[SMC_ST_SENDPAGE] = 1;
	v[SMC_ST_SPLICE] = 2;
}

/* An SMC-D block, sent with PAD attributes before the u64s. */
static void example_smcd(struct tech *t)
{
	uint64_t *v = t->v;

	memset(t, 0, sizeof(*t));
	v[SMC_ST_CLNT_V2] = 4;
	v[SMC_ST_SRV_V2] = 4;
	v[SMC_ST_RX_CNT] = 100;
	v[SMC_ST_TX_CNT] = 33;
	v[SMC_ST_RX_RMBUSE] = 5000000000ULL;          /* sent as 8-byte uint */
	v[SMC_ST_RMB_RX + SMC_RMB_FULL] = 50;
	v[SMC_ST_RX_RMBSIZE + 0] = 4;
	v[SMC_ST_RX_RMBSIZE + 7] = 2;                 /* >512KB = 1024K + >1024K */
	v[SMC_ST_RX_RMBSIZE + 8] = 3;
	v[SMC_ST_RX_PD + 0] = 999;
	v[SMC_ST_RX_PD + 1] = 1000;
	v[SMC_ST_RX_PD + 6] = 99999;
	v[SMC_ST_TX_BYTES] = 1000;
	v[SMC_ST_RMB_TX + SMC_RMB_FULL] = 11;
	v[SMC_ST_RMB_TX + SMC_RMB_FULL_PEER] = 1;
	v[SMC_ST_RMB_TX + SMC_RMB_SIZE_SM] = 2;
	v[SMC_ST_TX_RMBSIZE + 8] = 999999;
	v[SMC_ST_TX_PD + 0] = 33;
	t->pads = true;
}

static void example_kernel(struct kstats *k)
{
	memset(k, 0, sizeof(*k));
	example_smcr(&k->r);
	example_smcd(&k->d);
	k->hs_clnt = 1;
	k->hs_srv = 2;
}

/* ---- running the command against in-memory replies ------------------------ */

struct fake {
	struct smc_reply fback, stats;
	int fail;                /* returned by the dump instead of a reply */
};

static int fake_dump(void *src, uint8_t cmd, smc_msg_cb cb, void *arg)
{
	struct fake *f = src;

	if (f->fail)
		return f->fail;
	return smc_genl_walk(cmd == SMC_NETLINK_GET_STATS ? &f->stats : &f->fback, cb, arg);
}

static void fake_init(struct fake *f, const struct fb_table *fb, const struct kstats *k)
{
	memset(f, 0, sizeof(*f));
	smc_reply_init(&f->fback);
	smc_reply_init(&f->stats);
	if (fb)
		build_fback(&f->fback, fb);
	if (k)
		build_stats(&f->stats, k);
}

static void fake_free(struct fake *f)
{
	smc_reply_free(&f->fback);
	smc_reply_free(&f->stats);
}

/* f answering with the replies of the 5.5.4 example. */
static void fake_example(struct fake *f)
{
	struct kstats k;

	example_kernel(&k);
	fake_init(f, &example_fb, &k);
}

struct run {
	struct capture out, err;
	int rc;
};

static void run_stats(struct run *r, struct fake *f, bool smcd, int level, bool json,
		      enum smc_stats_mode mode)
{
	struct smc_ctx ctx = { .prog = smcd ? "smcd" : "smcr", .smcd = smcd,
			       .level = level, .json = json };

	cap_open(&r->out);
	cap_open(&r->err);
	ctx.out = r->out.f;
	ctx.err = r->err.f;
	r->rc = smc_stats_run(&ctx, mode, fake_dump, f);
	cap_text(&r->out);
	cap_text(&r->err);
}

static void run_free(struct run *r)
{
	cap_free(&r->out);
	cap_free(&r->err);
}

/* Parse the replies of f into d (no cache, no output). */
static void parse_fake(struct fake *f, struct smc_stats_data *d, FILE *err)
{
	struct smc_stats_parse p = { .d = d, .err = err };

	memset(d, 0, sizeof(*d));
	smc_genl_walk(&f->fback, smc_stats_fback_cb, &p);
	smc_genl_walk(&f->stats, smc_stats_cb, &p);
}

/* A private cache file, through SMC_STATS_CACHE. */
struct tmpcache {
	char dir[64];
	char path[128];
};

static void cache_setup(struct tmpcache *c)
{
	snprintf(c->dir, sizeof(c->dir), "/tmp/smcstats-test.XXXXXX");
	if (!mkdtemp(c->dir))
		unit_fail(__FILE__, __LINE__, "mkdtemp: %s", strerror(errno));
	snprintf(c->path, sizeof(c->path), "%s/cache", c->dir);
	setenv("SMC_STATS_CACHE", c->path, 1);
}

static void cache_teardown(struct tmpcache *c)
{
	unlink(c->path);
	rmdir(c->dir);
	unsetenv("SMC_STATS_CACHE");
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

/* The whole file, malloc'd. */
static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;
	FILE *m;
	int c;

	if (!f)
		return NULL;
	m = open_memstream(&buf, &len);
	while ((c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(m);
	fclose(f);
	return buf;
}

static const char *nth_line(const char *text, int n, char *buf, size_t len)
{
	for (int i = 1; i < n && text; i++) {
		text = strchr(text, '\n');
		if (text)
			text++;
	}
	if (!text || !*text)
		return "(none)";
	snprintf(buf, len, "%.*s", (int)(strchr(text, '\n') ? strchr(text, '\n') - text : (long)strlen(text)), text);
	return buf;
}

static int count_lines(const char *text)
{
	int n = 0;

	for (; text && *text; text++)
		n += *text == '\n';
	return n;
}

/* The text starts with want; on failure, show both. */
#define CHECK_PREFIX(text, want) do { const char *_t = (text), *_w = (want);      \
	if (!_t || strncmp(_t, _w, strlen(_w))) unit_fail(__FILE__, __LINE__,        \
		"%s:\n--- got ---\n%s\n--- expected prefix ---\n%s", #text, _t ? _t : "(null)", _w); } while (0)

/* ---- abbreviation ----------------------------------------------------------- */

static const char *abbrev(uint64_t v, char *buf)
{
	smc_stats_abbrev(v, buf);
	return buf;
}

TEST(stats_abbrev_reference_table)
{
	static const struct { uint64_t v; const char *out; } t[] = {
		{ 0, "0" },
		{ 999, "999" },
		{ 1000, "1.000K" },
		{ 1234, "1.234K" },
		{ 12345, "12.35K" },
		{ 99999, "100.0K" },
		{ 123456, "123.5K" },
		{ 999949, "999.9K" },
		{ 999999, " 1000K" },
		{ 1000000, "1.000M" },
		{ 9999999, "10.00M" },
		{ 123456789, "123.5M" },
		{ 4294967296ULL, "4.295G" },
		{ 1000000000000ULL, "1.000T" },
		/* upstream bug kept for byte compatibility: divisor 1e15, not 1e12 */
		{ 123456789012345ULL, "  0.1T" },
	};
	char buf[SMC_ABBREV_LEN];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		CHECK_STR(abbrev(t[i].v, buf), t[i].out);
}

TEST(stats_abbrev_rounding_and_ranges)
{
	char buf[SMC_ABBREV_LEN];

	CHECK_STR(abbrev(1, buf), "1");
	CHECK_STR(abbrev(65536, buf), "65.54K");
	CHECK_STR(abbrev(1048576, buf), "1.049M");
	CHECK_STR(abbrev(987654321, buf), "987.7M");
	CHECK_STR(abbrev(123456789012ULL, buf), "123.5G");
	/* rounding reaches 10^f: one decimal less */
	CHECK_STR(abbrev(9999, buf), "9.999K");
	CHECK_STR(abbrev(99995, buf), "100.0K");
	CHECK_STR(abbrev(99994, buf), "99.99K");
	CHECK_STR(abbrev(999950, buf), " 1000K");
	CHECK_STR(abbrev(9999500, buf), "10.00M");
	CHECK_STR(abbrev(9999499, buf), "9.999M");
	/* 13, 14 digits right; 16, 17 digits P right; 18 digits off by 1000 */
	CHECK_STR(abbrev(1234567890123ULL, buf), "1.235T");
	CHECK_STR(abbrev(12345678901234ULL, buf), "12.35T");
	CHECK_STR(abbrev(1234567890123456ULL, buf), "1.235P");
	CHECK_STR(abbrev(123456789012345678ULL, buf), "  0.1P");
	CHECK_STR(abbrev(1234567890123456789ULL, buf), "1.235?");
	/* at and above 2^63 upstream counts the digits of the negative number */
	CHECK_STR(abbrev(UINT64_MAX, buf), "184467");
	CHECK_STR(abbrev(9223372036854775808ULL, buf), " 9.22?");
}

/* ---- text reports ------------------------------------------------------------ */

/* What both reports of the example show alike; -d adds lines between them. */
#define EXAMPLE_RX                                             \
	"RX Stats\n"                                           \
	"  Data transmitted (Bytes)      987654321 (987.7M)\n" \
	"  Total requests                   654324\n"          \
	"  Buffer usage (Bytes)              65536 (65.54K)\n" \
	"  Buffer full                           9 (0.00%)\n"
#define EXAMPLE_RX_SIZES                                                            \
	"            8KB    16KB    32KB    64KB   128KB   256KB   512KB  >512KB\n" \
	"  Bufs        0       0       0      15       0       0       0       0\n" \
	"  Reqs   654.3K       3       0       0       0       0       0       0\n" \
	"\n"
#define EXAMPLE_TX                                             \
	"TX Stats\n"                                           \
	"  Data transmitted (Bytes)   123456789012 (123.5G)\n" \
	"  Total requests                   125472\n"          \
	"  Buffer usage (Bytes)            1048576 (1.049M)\n" \
	"  Buffer full                          70 (0.06%)\n"  \
	"  Buffer full (remote)                  6 (0.00%)\n"  \
	"  Buffer too small                      5 (0.00%)\n"  \
	"  Buffer too small (remote)             4 (0.00%)\n"
#define EXAMPLE_TX_SIZES                                                            \
	"            8KB    16KB    32KB    64KB   128KB   256KB   512KB  >512KB\n" \
	"  Bufs        0       0      12       0       0       3       0       1\n" \
	"  Reqs   123.5K  2.000K      15       0       0       0       0       1\n" \
	"\n"
#define EXAMPLE_EXTRAS                                \
	"Extras\n"                                    \
	"  Special socket calls                 46\n"

static const char example_details[] =
	"SMC-R Connections Summary\n"
	"  Total connections handled            50\n"
	"  SMC connections                      15 (client 13, server 2)\n"
	"    v1                                 12\n"
	"    v2                                  3\n"
	"  Handshake errors                      3 (client 1, server 2)\n"
	"  Avg requests per SMC conn         51986.4\n"
	"  TCP fallback                         32 (client 25, server 7)\n"
	"    Server\n"
	"     PEER_NO_SMC                        5\n"
	"     DIFFPREFIX                         2\n"
	"    Client\n"
	"     NOSMCRDEV                         20\n"
	"     PEER_NO_SMC                        3\n"
	"     PEERDECL                           1\n"
	"\n"
	EXAMPLE_RX
	"  Buffer downgrades                     0\n"
	"  Buffer reuses                         1\n"
	EXAMPLE_RX_SIZES
	EXAMPLE_TX
	"  Buffer downgrades                     1\n"
	"  Buffer reuses                         2\n"
	EXAMPLE_TX_SIZES
	EXAMPLE_EXTRAS
	"    cork                                3\n"
	"    nodelay                            40\n"
	"    sendpage                            1\n"
	"    splice                              2\n"
	"    urgent data                         0\n";

static const char example_plain[] =
	"SMC-R Connections Summary\n"
	"  Total connections handled            50\n"
	"  SMC connections                      15\n"
	"  Handshake errors                      3\n"
	"  Avg requests per SMC conn         51986.4\n"
	"  TCP fallback                         32\n"
	"\n"
	EXAMPLE_RX
	EXAMPLE_RX_SIZES
	EXAMPLE_TX
	EXAMPLE_TX_SIZES
	EXAMPLE_EXTRAS;

TEST(stats_text_smcr_details_example)
{
	struct fake f;
	struct run r;

	fake_example(&f);
	run_stats(&r, &f, false, SMC_LVL_DETAILS_ABS, false, SMC_STATS_SHOW);
	CHECK_INT(r.rc, 0);
	CHECK_STR(r.out.buf, example_details);
	CHECK_STR(r.err.buf, "");
	run_free(&r);
	/* -dd shows the same (here with an empty cache: no baseline) */
	{
		struct tmpcache tc;

		cache_setup(&tc);
		run_stats(&r, &f, false, SMC_LVL_MORE_DETAILS, false, SMC_STATS_SHOW);
		CHECK_STR(r.out.buf, example_details);
		run_free(&r);
		cache_teardown(&tc);
	}
	fake_free(&f);
}

TEST(stats_text_smcr_plain_example)
{
	struct smc_stats_data d;
	struct capture c;
	struct fake f;
	struct run r;

	fake_example(&f);
	run_stats(&r, &f, false, SMC_LVL_ABSOLUTE, false, SMC_STATS_SHOW);
	CHECK_INT(r.rc, 0);
	CHECK_STR(r.out.buf, example_plain);
	run_free(&r);

	/* the formatter alone, both levels */
	parse_fake(&f, &d, stderr);
	cap_open(&c);
	smc_stats_print_text(c.f, &d, false, true);
	CHECK_STR(cap_text(&c), example_details);
	cap_free(&c);
	fake_free(&f);
}

static const char smcd_details[] =
	"SMC-D Connections Summary\n"
	"  Total connections handled            11\n"
	"  SMC connections                       8 (client 4, server 4)\n"
	"    v1                                  0\n"
	"    v2                                  8\n"
	"  Handshake errors                      3 (client 1, server 2)\n"
	"  Avg requests per SMC conn            16.6\n"
	"  TCP fallback                          0 (client 0, server 0)\n"
	"\n"
	"RX Stats\n"
	"  Data transmitted (Bytes)              0 (0)\n"
	"  Total requests                      100\n"
	"  Buffer usage (Bytes)         5000000000 (5.000G)\n"
	"  Buffer full                          50 (50.00%)\n"
	"  Buffer downgrades                     0\n"
	"  Buffer reuses                         0\n"
	"            8KB    16KB    32KB    64KB   128KB   256KB   512KB  >512KB\n"
	"  Bufs        4       0       0       0       0       0       0       5\n"
	"  Reqs      999  1.000K       0       0       0       0  100.0K       0\n"
	"\n"
	"TX Stats\n"
	"  Data transmitted (Bytes)           1000 (1.000K)\n"
	"  Total requests                       33\n"
	"  Buffer usage (Bytes)                  0 (0)\n"
	"  Buffer full                          11 (33.33%)\n"
	"  Buffer full (remote)                  1 (3.03%)\n"
	"  Buffer too small                      2 (6.06%)\n"
	"  Buffer too small (remote)             0 (0.00%)\n"
	"  Buffer downgrades                     0\n"
	"  Buffer reuses                         0\n"
	"            8KB    16KB    32KB    64KB   128KB   256KB   512KB  >512KB\n"
	"  Bufs        0       0       0       0       0       0       0   1000K\n"
	"  Reqs       33       0       0       0       0       0       0       0\n"
	"\n"
	"Extras\n"
	"  Special socket calls                  0\n"
	"    cork                                0\n"
	"    nodelay                             0\n"
	"    sendpage                            0\n"
	"    splice                              0\n"
	"    urgent data                         0\n";

/* smcd, no fallback messages at all, PAD attributes, 8-byte uint, no TX usage */
TEST(stats_text_smcd_details)
{
	struct kstats k;
	struct fake f;
	struct run r;

	example_kernel(&k);
	k.d.v[SMC_ST_TX_RMBUSE] = 0;
	fake_init(&f, NULL, &k);
	run_stats(&r, &f, true, SMC_LVL_DETAILS_ABS, false, SMC_STATS_SHOW);
	CHECK_INT(r.rc, 0);
	CHECK_STR(r.out.buf, smcd_details);
	CHECK_STR(r.err.buf, "");
	run_free(&r);
	fake_free(&f);
}

TEST(stats_text_missing_usage_attributes)
{
	struct smc_stats_data d;
	struct kstats k;
	struct fake f;

	example_kernel(&k);
	k.r.no_usage = true;
	fake_init(&f, &example_fb, &k);
	parse_fake(&f, &d, stderr);
	CHECK_INT(d.cnt[SMC_STATS_TECH_R + SMC_ST_RX_RMBUSE], 0);
	CHECK_INT(d.cnt[SMC_STATS_TECH_R + SMC_ST_TX_RMBUSE], 0);
	CHECK_INT(d.cnt[SMC_STATS_TECH_R + SMC_ST_TX_CNT], 125472);
	CHECK_INT(d.cnt[SMC_STATS_TECH_D + SMC_ST_RX_RMBUSE], 5000000000LL);
	fake_free(&f);
}

TEST(stats_parse_fallback_slots)
{
	struct fb_table fb = { .nsrv = 0, .srv_total = 40, .clnt_total = 41 };
	struct smc_stats_data d;
	struct fake f;

	/* 32 client reasons: the last slot takes the overflow, as upstream */
	fb.nclnt = 8;
	for (int i = 0; i < 8; i++)
		fb.clnt[i] = (struct fb_slot){ 0x03030000u + (uint32_t)i, (uint16_t)(i + 1) };
	fake_init(&f, &fb, NULL);
	for (int n = 0; n < 3; n++)
		build_fback(&f.fback, &fb);
	parse_fake(&f, &d, stderr);
	CHECK_INT(d.clnt[0].code, 0x03030000);
	CHECK_INT(d.clnt[0].count, 1);
	CHECK_INT(d.clnt[28].code, 0x03030004);
	CHECK_INT(d.clnt[29].code, 0x03030007);
	CHECK_INT(d.clnt[29].count, 8);
	CHECK_INT(d.srv[0].code, 0);
	CHECK_INT(d.srv_fback, 40);
	CHECK_INT(d.clnt_fback, 41);
	fake_free(&f);
}

/* ---- JSON ---------------------------------------------------------------------- */

TEST(stats_legacy_json)
{
	struct smc_stats_data d;
	struct capture c;

	memset(&d, 0, sizeof(d));
	d.cnt[SMC_STATS_TECH_D + SMC_ST_TX_RMBSIZE] = 1;
	d.cnt[SMC_STATS_TECH_D + SMC_ST_RX_PD + 8] = 2;
	d.cnt[SMC_STATS_TECH_D + SMC_ST_RMB_RX + SMC_RMB_DGRADE] = 3;
	d.cnt[SMC_STATS_TECH_D + SMC_ST_URG_DATA] = 4;
	d.cnt[SMC_STATS_TECH_D + SMC_ST_TX_RMBUSE] = 1048576;
	d.cnt[SMC_STATS_TECH_R + SMC_ST_TX_CNT] = 99;     /* not shown by smcd */
	d.cnt[SMC_STATS_HS_CLNT] = 5;                     /* never in the legacy form */
	cap_open(&c);
	smc_stats_print_legacy_json(c.f, &d, true);
	CHECK_STR(cap_text(&c),
		"{\"SMCD\": {\"SMC_INT_TX_BUF_8K\":1,\"SMC_INT_TX_BUF_16K\":0,\"SMC_INT_TX_BUF_32K\":0,"
		"\"SMC_INT_TX_BUF_64K\":0,\"SMC_INT_TX_BUF_128K\":0,\"SMC_INT_TX_BUF_256K\":0,"
		"\"SMC_INT_TX_BUF_512K\":0,\"SMC_INT_TX_BUF_1024K\":0,\"SMC_INT_TX_BUF_G_1024K\":0,"
		"\"SMC_INT_RX_BUF_8K\":0,\"SMC_INT_RX_BUF_16K\":0,\"SMC_INT_RX_BUF_32K\":0,"
		"\"SMC_INT_RX_BUF_64K\":0,\"SMC_INT_RX_BUF_128K\":0,\"SMC_INT_RX_BUF_256K\":0,"
		"\"SMC_INT_RX_BUF_512K\":0,\"SMC_INT_RX_BUF_1024K\":0,\"SMC_INT_RX_BUF_G_1024K\":0,"
		"\"SMC_USR_TX_BUF_8K\":0,\"SMC_USR_TX_BUF_16K\":0,\"SMC_USR_TX_BUF_32K\":0,"
		"\"SMC_USR_TX_BUF_64K\":0,\"SMC_USR_TX_BUF_128K\":0,\"SMC_USR_TX_BUF_256K\":0,"
		"\"SMC_USR_TX_BUF_512K\":0,\"SMC_USR_TX_BUF_1024K\":0,\"SMC_USR_TX_BUF_G_1024K\":0,"
		"\"SMC_USR_RX_BUF_8K\":0,\"SMC_USR_RX_BUF_16K\":0,\"SMC_USR_RX_BUF_32K\":0,"
		"\"SMC_USR_RX_BUF_64K\":0,\"SMC_USR_RX_BUF_128K\":0,\"SMC_USR_RX_BUF_256K\":0,"
		"\"SMC_USR_RX_BUF_512K\":0,\"SMC_USR_RX_BUF_1024K\":0,\"SMC_USR_RX_BUF_G_1024K\":2,"
		"\"SMC_INT_TX_BUF_SIZE_SM_PEER_CNT\":0,\"SMC_INT_TX_BUF_SIZE_SM_CNT\":0,"
		"\"SMC_INT_TX_BUF_FULL_PEER_CNT\":0,\"SMC_INT_TX_BUF_FULL_CNT\":0,"
		"\"SMC_INT_TX_BUF_REUSE_CNT\":0,\"SMC_INT_TX_BUF_ALLOC_CNT\":0,"
		"\"SMC_INT_TX_BUF_DGRADE_CNT\":0,"
		"\"SMC_INT_RX_BUF_SIZE_SM_PEER_CNT\":0,\"SMC_INT_RX_BUF_SIZE_SM_CNT\":0,"
		"\"SMC_INT_RX_BUF_FULL_PEER_CNT\":0,\"SMC_INT_RX_BUF_FULL_CNT\":0,"
		"\"SMC_INT_RX_BUF_REUSE_CNT\":0,\"SMC_INT_RX_BUF_ALLOC_CNT\":0,"
		"\"SMC_INT_RX_BUF_DGRADE_CNT\":3,"
		"\"SMC_CLNT_V1_SUCC_CNT\":0,\"SMC_CLNT_V2_SUCC_CNT\":0,\"SMC_SRV_V1_SUCC_CNT\":0,"
		"\"SMC_SRV_V2_SUCC_CNT\":0,\"SMC_SENDPAGE_CNT\":0,\"SMC_URG_DATA_CNT\":4,"
		"\"SMC_SPLICE_CNT\":0,\"SMC_CORK_CNT\":0,\"SMC_NDLY_CNT\":0,\"SMC_RX_BYTES\":0,"
		"\"SMC_TX_BYTES\":0,\"SMC_RX_CNT\":0,\"SMC_TX_CNT\":0,\"SMC_RX_RMB_USAGE\":0,"
		"\"SMC_TX_RMB_USAGE\":1048576}}\n");
	cap_free(&c);
}

TEST(stats_legacy_json_via_command)
{
	struct fake f;
	struct run r;

	fake_example(&f);
	run_stats(&r, &f, false, SMC_LVL_ABSOLUTE, false, SMC_STATS_JSON);
	CHECK_PREFIX(r.out.buf, "{\"SMCR\": {\"SMC_INT_TX_BUF_8K\":0,");
	CHECK(strstr(r.out.buf, ",\"SMC_RX_CNT\":654324,\"SMC_TX_CNT\":125472,"
			       "\"SMC_RX_RMB_USAGE\":65536,\"SMC_TX_RMB_USAGE\":1048576}}\n") != NULL);
	CHECK_INT(count_lines(r.out.buf), 1);
	run_free(&r);
	fake_free(&f);
}

TEST(stats_json_document)
{
	struct fb_table fb = {
		.srv = { { RSN_DIFFPREFIX, 1 }, { RSN_PEER_NO_SMC, 2 } }, .nsrv = 2,
		.clnt = { { 0x03030008, 4 } }, .nclnt = 1,
		.srv_total = 3, .clnt_total = 4,
	};
	struct kstats k;
	struct fake f;
	struct run r;

	memset(&k, 0, sizeof(k));
	k.d.v[SMC_ST_CLNT_V1] = 1;
	k.d.v[SMC_ST_SRV_V2] = 2;
	k.d.v[SMC_ST_RX_BYTES] = 10;
	k.d.v[SMC_ST_TX_CNT] = 7;
	k.d.v[SMC_ST_RMB_TX + SMC_RMB_ALLOC] = 8;
	k.d.v[SMC_ST_TX_RMBSIZE + 8] = 9;
	k.d.v[SMC_ST_RX_PD + 1] = 11;
	k.d.v[SMC_ST_NDLY] = 5;
	k.d.v[SMC_ST_CORK] = 1;
	k.r.v[SMC_ST_CLNT_V1] = 100;   /* not in the SMC-D document */
	k.hs_srv = 6;
	fake_init(&f, &fb, &k);
	run_stats(&r, &f, true, SMC_LVL_ABSOLUTE, true, SMC_STATS_SHOW);
	CHECK_INT(r.rc, 0);
	CHECK_STR(r.out.buf,
		"{\"technology\":\"SMC-D\",\"absolute\":true,"
		"\"connections\":{\"total\":16,\"smc\":3,\"client\":1,\"server\":2,\"v1\":1,\"v2\":2},"
		"\"handshake_errors\":{\"client\":0,\"server\":6},"
		"\"fallback\":{\"client\":4,\"server\":3,\"reasons\":["
		"{\"side\":\"server\",\"code\":50397184,\"code_hex\":\"0x03010000\",\"name\":\"PEER_NO_SMC\",\"count\":2},"
		"{\"side\":\"server\",\"code\":50790400,\"code_hex\":\"0x03070000\",\"name\":\"DIFFPREFIX\",\"count\":1},"
		"{\"side\":\"client\",\"code\":50528264,\"code_hex\":\"0x03030008\",\"name\":\"[unknown]\",\"count\":4}]},"
		"\"rx\":{\"bytes\":10,\"requests\":0,\"buffer_usage\":0,\"buffer_full\":0,"
		"\"buffer_full_remote\":0,\"buffer_too_small\":0,\"buffer_too_small_remote\":0,"
		"\"buffer_downgrades\":0,\"buffer_reuses\":0,\"buffer_allocs\":0,"
		"\"buffer_sizes\":{\"8K\":0,\"16K\":0,\"32K\":0,\"64K\":0,\"128K\":0,\"256K\":0,\"512K\":0,\"1024K\":0,\"G_1024K\":0},"
		"\"request_sizes\":{\"8K\":0,\"16K\":11,\"32K\":0,\"64K\":0,\"128K\":0,\"256K\":0,\"512K\":0,\"1024K\":0,\"G_1024K\":0}},"
		"\"tx\":{\"bytes\":0,\"requests\":7,\"buffer_usage\":0,\"buffer_full\":0,"
		"\"buffer_full_remote\":0,\"buffer_too_small\":0,\"buffer_too_small_remote\":0,"
		"\"buffer_downgrades\":0,\"buffer_reuses\":0,\"buffer_allocs\":8,"
		"\"buffer_sizes\":{\"8K\":0,\"16K\":0,\"32K\":0,\"64K\":0,\"128K\":0,\"256K\":0,\"512K\":0,\"1024K\":0,\"G_1024K\":9},"
		"\"request_sizes\":{\"8K\":0,\"16K\":0,\"32K\":0,\"64K\":0,\"128K\":0,\"256K\":0,\"512K\":0,\"1024K\":0,\"G_1024K\":0}},"
		"\"extras\":{\"special_socket_calls\":6,\"cork\":1,\"nodelay\":5,\"sendpage\":0,\"splice\":0,\"urgent_data\":0}}\n");
	run_free(&r);
	fake_free(&f);
}

/* ---- command line and sequence -------------------------------------------------- */

TEST(stats_args)
{
	char *show[] = { "s" }, *reset[] = { "res" }, *json[] = { "j" }, *help[] = { "h" };
	char *two[] = { "show", "show" }, *empty[] = { "" }, *longer[] = { "shows" };
	enum smc_stats_mode m;

	CHECK_INT(smc_stats_parse_args(0, NULL, &m), 0);
	CHECK_INT(m, SMC_STATS_SHOW);
	CHECK_INT(smc_stats_parse_args(1, show, &m), 0);
	CHECK_INT(m, SMC_STATS_SHOW);
	CHECK_INT(smc_stats_parse_args(1, reset, &m), 0);
	CHECK_INT(m, SMC_STATS_RESET);
	CHECK_INT(smc_stats_parse_args(1, json, &m), 0);
	CHECK_INT(m, SMC_STATS_JSON);
	CHECK_INT(smc_stats_parse_args(1, help, &m), -1);
	CHECK_INT(smc_stats_parse_args(2, two, &m), -1);
	CHECK_INT(smc_stats_parse_args(1, empty, &m), -1);
	CHECK_INT(smc_stats_parse_args(1, longer, &m), -1);
}

TEST(stats_usage)
{
	struct fx t;

	fx_init(&t, false, 0);
	CHECK_INT(fx_call(&t, smc_stats_cmd, 1, "help"), 255);
	CHECK_STR(cap_text(&t.out), "");
	CHECK_STR(cap_text(&t.err), "Usage: smcr stats [show | reset]\n");
	fx_free(&t);
}

TEST(stats_netlink_failure_exits_0)
{
	struct tmpcache tc;
	struct fake f;
	struct run r;

	cache_setup(&tc);
	fake_init(&f, NULL, NULL);
	f.fail = -EOPNOTSUPP;
	run_stats(&r, &f, true, SMC_LVL_NONE, false, SMC_STATS_RESET);
	CHECK_INT(r.rc, 0);
	CHECK_STR(r.out.buf, "");
	CHECK_STR(r.err.buf, "Error: Operation not supported by kernel\n");
	run_free(&r);
	f.fail = -EPERM;
	run_stats(&r, &f, true, SMC_LVL_ABSOLUTE, false, SMC_STATS_SHOW);
	CHECK_STR(r.err.buf, "Error: Operation not permitted\n");
	run_free(&r);
	fake_free(&f);
	cache_teardown(&tc);
}

/* ---- cache file ------------------------------------------------------------------- */

TEST(stats_cache_reset_writes_194_lines)
{
	struct tmpcache tc;
	struct fake f;
	struct run r;
	char line[128];
	char *text;

	cache_setup(&tc);
	fake_example(&f);
	run_stats(&r, &f, false, SMC_LVL_DETAILS, false, SMC_STATS_RESET);
	CHECK_INT(r.rc, 0);
	CHECK_STR(r.out.buf, example_details);     /* reset prints what show prints */
	run_free(&r);

	text = read_file(tc.path);
	CHECK(text != NULL);
	CHECK_INT(count_lines(text), 194);
	CHECK_STR(nth_line(text, 1, line, sizeof(line)), "0           0               ");
	CHECK_STR(nth_line(text, 37, line, sizeof(line)), "36          4               ");
	CHECK_STR(nth_line(text, 38, line, sizeof(line)), "37          5               ");
	CHECK_STR(nth_line(text, 51, line, sizeof(line)), "50          11              ");
	CHECK_STR(nth_line(text, 61, line, sizeof(line)), "60          123456789012    ");
	CHECK_STR(nth_line(text, 65, line, sizeof(line)), "64          1048576         ");
	CHECK_STR(nth_line(text, 68, line, sizeof(line)), "67          0               ");
	CHECK_STR(nth_line(text, 131, line, sizeof(line)), "130         1               ");
	CHECK_STR(nth_line(text, 132, line, sizeof(line)), "131         2               ");
	CHECK_STR(nth_line(text, 133, line, sizeof(line)), "0           50790400        2               ");
	CHECK_STR(nth_line(text, 134, line, sizeof(line)), "1           50397184        5               ");
	CHECK_STR(nth_line(text, 135, line, sizeof(line)), "2           0               0               ");
	CHECK_STR(nth_line(text, 163, line, sizeof(line)), "30          50397184        3               ");
	CHECK_STR(nth_line(text, 164, line, sizeof(line)), "31          50528258        20              ");
	CHECK_STR(nth_line(text, 192, line, sizeof(line)), "59          0               0               ");
	CHECK_STR(nth_line(text, 193, line, sizeof(line)), "               7");
	CHECK_STR(nth_line(text, 194, line, sizeof(line)), "              25");
	free(text);
	{
		struct stat st;

		CHECK_INT(stat(tc.path, &st), 0);
		CHECK_INT(st.st_mode & 0777, 0600);
	}
	fake_free(&f);
	cache_teardown(&tc);
}

TEST(stats_cache_round_trip)
{
	struct smc_stats_data org, back;
	struct fake f;
	bool found;
	FILE *fp;

	fake_example(&f);
	parse_fake(&f, &org, stderr);
	org.clnt[5] = (struct smc_stats_rsn){ (int)0x80000001u, 7 };  /* negative code */
	fp = tmpfile();
	CHECK(fp != NULL);
	fputs("garbage that the write truncates\n", fp);
	CHECK_INT(smc_stats_cache_write(fp, &org, stderr), 0);
	rewind(fp);
	CHECK_INT(smc_stats_cache_read(fp, &back, &found, stderr), 0);
	CHECK(found);
	CHECK(!memcmp(&org, &back, sizeof(org)));
	fclose(fp);
	fake_free(&f);
}

/* Reset, then show: the deltas since the reset. */
TEST(stats_cache_delta)
{
	struct tmpcache tc;
	struct kstats k;
	struct fake f;
	struct run r;

	cache_setup(&tc);
	example_kernel(&k);
	fake_init(&f, &example_fb, &k);
	run_stats(&r, &f, false, SMC_LVL_NONE, false, SMC_STATS_RESET);
	run_free(&r);
	fake_free(&f);

	/* nothing happened since: all zero, the reasons stay with count 0 */
	fake_init(&f, &example_fb, &k);
	run_stats(&r, &f, false, SMC_LVL_DETAILS, false, SMC_STATS_SHOW);
	CHECK_PREFIX(r.out.buf,
		"SMC-R Connections Summary\n"
		"  Total connections handled             0\n"
		"  SMC connections                       0 (client 0, server 0)\n"
		"    v1                                  0\n"
		"    v2                                  0\n"
		"  Handshake errors                      0 (client 0, server 0)\n"
		"  Avg requests per SMC conn             0.0\n"
		"  TCP fallback                          0 (client 0, server 0)\n"
		"    Server\n"
		"     DIFFPREFIX                         0\n"
		"     PEER_NO_SMC                        0\n"
		"    Client\n"
		"     PEER_NO_SMC                        0\n"
		"     NOSMCRDEV                          0\n"
		"     PEERDECL                           0\n"
		"\n");
	run_free(&r);
	fake_free(&f);

	/* some activity: new reason, more of an old one, more connections */
	{
		struct fb_table fb = example_fb;

		fb.srv[1].count = 9;                       /* PEER_NO_SMC 5 -> 9 */
		fb.clnt[fb.nclnt++] = (struct fb_slot){ RSN_PEERDECL + 1, 2 };
		fb.srv_total = 11;
		fb.clnt_total = 27;
		k.r.v[SMC_ST_CLNT_V1] += 10;
		k.r.v[SMC_ST_TX_CNT] += 20;
		k.r.v[SMC_ST_RX_CNT] += 30;
		k.hs_srv += 1;
		fake_init(&f, &fb, &k);
	}
	run_stats(&r, &f, false, SMC_LVL_DETAILS, false, SMC_STATS_SHOW);
	CHECK_PREFIX(r.out.buf,
		"SMC-R Connections Summary\n"
		"  Total connections handled            17\n"
		"  SMC connections                      10 (client 10, server 0)\n"
		"    v1                                 10\n"
		"    v2                                  0\n"
		"  Handshake errors                      1 (client 0, server 1)\n"
		"  Avg requests per SMC conn             5.0\n"
		"  TCP fallback                          6 (client 2, server 4)\n"
		"    Server\n"
		"     PEER_NO_SMC                        4\n"
		"     DIFFPREFIX                         0\n"
		"    Client\n"
		"     [unknown]                          2\n"
		"     PEER_NO_SMC                        0\n"
		"     NOSMCRDEV                          0\n"
		"\n"
		"RX Stats\n"
		"  Data transmitted (Bytes)              0 (0)\n"
		"  Total requests                       30\n");
	run_free(&r);
	/* -a ignores the baseline and leaves it alone */
	run_stats(&r, &f, false, SMC_LVL_ABSOLUTE, false, SMC_STATS_SHOW);
	CHECK(strstr(r.out.buf, "  SMC connections                      25\n") != NULL);
	run_free(&r);
	CHECK_INT(access(tc.path, F_OK), 0);
	fake_free(&f);
	cache_teardown(&tc);
}

TEST(stats_cache_inconsistent_deleted)
{
	struct tmpcache tc;
	struct fake f;
	struct run r;

	cache_setup(&tc);
	fake_example(&f);
	/* a baseline above the kernel's value (module reloaded since) */
	write_file(tc.path, "0           0               \n1           1               \n");
	run_stats(&r, &f, false, SMC_LVL_DETAILS, false, SMC_STATS_SHOW);
	CHECK_INT(r.rc, 0);
	CHECK_STR(r.out.buf, example_details);
	CHECK_STR(r.err.buf, "");
	CHECK(access(tc.path, F_OK) != 0);
	run_free(&r);

	/* the same for a reason count above the kernel's */
	write_file(tc.path, "");
	{
		FILE *fp = fopen(tc.path, "w");
		struct smc_stats_data base;

		memset(&base, 0, sizeof(base));
		base.srv[0] = (struct smc_stats_rsn){ RSN_PEER_NO_SMC, 6 };
		smc_stats_cache_write(fp, &base, stderr);
		fclose(fp);
	}
	run_stats(&r, &f, false, SMC_LVL_DETAILS, false, SMC_STATS_SHOW);
	CHECK_STR(r.out.buf, example_details);
	CHECK(access(tc.path, F_OK) != 0);
	run_free(&r);
	fake_free(&f);
	cache_teardown(&tc);
}

TEST(stats_cache_short_file_accepted)
{
	struct smc_stats_data base;
	bool found = true;
	FILE *fp;

	fp = fmemopen((char *)"0 5\n1           6               \n2\t7\n", 36, "r");
	CHECK_INT(smc_stats_cache_read(fp, &base, &found, stderr), 0);
	CHECK(found);
	CHECK_INT(base.cnt[0], 5);
	CHECK_INT(base.cnt[1], 6);
	CHECK_INT(base.cnt[2], 7);
	CHECK_INT(base.cnt[3], 0);
	CHECK_INT(base.srv_fback, 0);
	fclose(fp);

	/* an empty file is no baseline */
	fp = tmpfile();
	CHECK_INT(smc_stats_cache_read(fp, &base, &found, stderr), 0);
	CHECK(!found);
	fclose(fp);
}

/* Run show against a cache file holding text; returns the error output. */
static void run_with_cache(struct run *r, const char *cache_text)
{
	struct tmpcache tc;
	struct fake f;

	cache_setup(&tc);
	write_file(tc.path, cache_text);
	fake_example(&f);
	run_stats(r, &f, true, SMC_LVL_NONE, false, SMC_STATS_SHOW);
	fake_free(&f);
	cache_teardown(&tc);
}

/* run_with_cache with one more line after text. */
static void run_with_cache_line(struct run *r, const char *text, const char *line)
{
	size_t n = strlen(text) + strlen(line) + 1;
	char *both = malloc(n);

	snprintf(both, n, "%s%s", text, line);
	run_with_cache(r, both);
	free(both);
}

static char *cache_lines(int counters, int reasons, int totals, int extra)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	for (int i = 0; i < counters; i++)
		fprintf(f, "%-12d%-16llu\n", i, 0ULL);
	for (int i = 0; i < reasons; i++)
		fprintf(f, "%-12d%-16d%-16d\n", i, 0, 0);
	for (int i = 0; i < totals; i++)
		fprintf(f, "%16llu\n", 0ULL);
	for (int i = 0; i < extra; i++)
		fprintf(f, "%16llu\n", 0ULL);
	fclose(f);
	return buf;
}

TEST(stats_cache_errors)
{
	static const struct { const char *text; const char *err; } t[] = {
		{ "0 0\n2 0\n", "Error: unexpected value in cache file: Success\n" },
		{ "0 0\nxyz\n", "Error: parsing cache file(stats): Success\n" },
		{ "0\n", "Error: parsing cache file(stats): Success\n" },
		{ "\n", "Error: parsing cache file(stats): Success\n" },
	};
	struct run r;
	char *text;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		run_with_cache(&r, t[i].text);
		CHECK_INT(r.rc, 255);
		CHECK_STR(r.out.buf, "");
		CHECK_STR(r.err.buf, t[i].err);
		run_free(&r);
	}

	/* 195 lines */
	text = cache_lines(132, 60, 2, 1);
	run_with_cache(&r, text);
	CHECK_INT(r.rc, 255);
	CHECK_STR(r.err.buf, "Error: cache file corrupt: Success\n");
	run_free(&r);
	free(text);

	/* a cache of smc-tools before 1.8.4: 128 counters */
	text = cache_lines(128, 60, 2, 0);
	run_with_cache(&r, text);
	CHECK_INT(r.rc, 255);
	CHECK_STR(r.err.buf, "Error: unexpected value in cache file: Success\n");
	run_free(&r);
	free(text);

	/* reason lines: short line, index above 60 (60 itself passes, as upstream) */
	text = cache_lines(132, 0, 0, 0);
	run_with_cache_line(&r, text, "0 1\n");
	CHECK_STR(r.err.buf, "Error: parsing cache file (fback stats): Success\n");
	run_free(&r);
	run_with_cache_line(&r, text, "61 1 1\n");
	CHECK_STR(r.err.buf, "Error: unexpected value in cache file (fback stats): Success\n");
	run_free(&r);
	run_with_cache_line(&r, text, "60 0 0\n");
	CHECK_INT(r.rc, 0);
	CHECK_STR(r.err.buf, "");
	run_free(&r);
	free(text);

	/* totals */
	text = cache_lines(132, 60, 0, 0);
	run_with_cache_line(&r, text, "x\n");
	CHECK_STR(r.err.buf, "Error: parsing cache file(fback counters): Success\n");
	run_free(&r);
	free(text);
}

TEST(stats_cache_open_errors)
{
	struct tmpcache tc;
	struct fake f;
	struct run r;
	char target[160];

	cache_setup(&tc);
	snprintf(target, sizeof(target), "%s/target", tc.dir);
	write_file(target, "");
	CHECK_INT(symlink(target, tc.path), 0);
	fake_init(&f, NULL, NULL);
	run_stats(&r, &f, false, SMC_LVL_NONE, false, SMC_STATS_SHOW);
	CHECK_INT(r.rc, 255);
	CHECK_STR(r.err.buf, "Error: open cache file: Too many levels of symbolic links\n");
	run_free(&r);
	unlink(target);
	fake_free(&f);
	cache_teardown(&tc);
}

/* -a reset prints absolute values and rewrites the cache; a bad old cache is no obstacle */
TEST(stats_cache_absolute_reset)
{
	struct smc_stats_data d, back;
	struct tmpcache tc;
	struct fake f;
	struct run r;
	bool found;
	FILE *fp;

	cache_setup(&tc);
	write_file(tc.path, "garbage\n");
	fake_example(&f);
	run_stats(&r, &f, false, SMC_LVL_DETAILS_ABS, false, SMC_STATS_RESET);
	CHECK_INT(r.rc, 0);
	CHECK_STR(r.out.buf, example_details);
	run_free(&r);
	parse_fake(&f, &d, stderr);
	fp = fopen(tc.path, "r");
	CHECK(fp != NULL);
	CHECK_INT(smc_stats_cache_read(fp, &back, &found, stderr), 0);
	fclose(fp);
	CHECK(!memcmp(&d, &back, sizeof(d)));
	fake_free(&f);
	cache_teardown(&tc);
}

TEST(stats_cache_default_path)
{
	char buf[64], want[64];

	unsetenv("SMC_STATS_CACHE");
	smc_stats_cache_path(buf, sizeof(buf));
	snprintf(want, sizeof(want), "/tmp/.smcstats.u%u", (unsigned int)getuid());
	CHECK_STR(buf, want);
	setenv("SMC_STATS_CACHE", "", 1);
	smc_stats_cache_path(buf, sizeof(buf));
	CHECK_STR(buf, want);
	unsetenv("SMC_STATS_CACHE");
}

/* ---- malformed replies ----------------------------------------------------------- */

/* Walk one message through a callback; the error text and the stored data. */
static void parse_one(struct mb *m, smc_msg_cb cb, struct smc_stats_data *d, struct capture *err)
{
	struct smc_stats_parse p = { .d = d };
	struct smc_reply rep;

	smc_reply_init(&rep);
	mb_finish(m, &rep);
	cap_open(err);
	p.err = err->f;
	smc_genl_walk(&rep, cb, &p);
	cap_text(err);
	smc_reply_free(&rep);
}

static void stats_start(struct mb *m)
{
	mb_start(m, FAMILY, NLM_F_MULTI);
	mb_genl(m, SMC_NETLINK_GET_STATS);
	mb_nest(m, SMC_GEN_STATS);
}

TEST(stats_malformed_tech_attribute_size)
{
	struct smc_stats_data d;
	struct capture err;
	struct mb m;

	memset(&d, 0, sizeof(d));
	stats_start(&m);
	mb_nest(&m, SMC_NLA_STATS_SMCR_TECH);
	mb_u32(&m, SMC_NLA_STATS_T_TX_CNT, 5);      /* a u64 sent as 4 bytes */
	mb_end(&m);
	mb_u64(&m, SMC_NLA_STATS_SRV_HS_ERR_CNT, 3);
	mb_end(&m);
	parse_one(&m, smc_stats_cb, &d, &err);
	CHECK_STR(err.buf, "Error: Failed to parse nested attributes: smc_gen_stats_fback_policy\n");
	CHECK_INT(d.cnt[SMC_STATS_HS_SRV], 3);
	cap_free(&err);
}

TEST(stats_malformed_group_sizes)
{
	struct smc_stats_data d;
	struct capture err;
	struct mb m;

	memset(&d, 0, sizeof(d));
	stats_start(&m);
	mb_nest(&m, SMC_NLA_STATS_SMCD_TECH);
	mb_u64(&m, SMC_NLA_STATS_T_TX_CNT, 5);
	mb_nest(&m, SMC_NLA_STATS_T_TX_RMB_STATS);
	mb_u64(&m, SMC_NLA_STATS_RMB_FULL_CNT, 4);
	mb_end(&m);
	mb_nest(&m, SMC_NLA_STATS_T_RXPLOAD_SIZE);
	mb_u16(&m, SMC_NLA_STATS_PLOAD_8K, 1);      /* too short */
	mb_end(&m);
	mb_nest(&m, SMC_NLA_STATS_T_TX_RMB_SIZE);
	mb_u64(&m, SMC_NLA_STATS_PLOAD_8K, 1);
	mb_end(&m);
	mb_end(&m);
	mb_end(&m);
	parse_one(&m, smc_stats_cb, &d, &err);
	CHECK_STR(err.buf, "Error: Failed to parse nested attributes: smc_gen_stats_pload_policy\n");
	/* before the failing nest: parsed; after it: not */
	CHECK_INT(d.cnt[SMC_STATS_TECH_D + SMC_ST_TX_CNT], 5);
	CHECK_INT(d.cnt[SMC_STATS_TECH_D + SMC_ST_RMB_TX + SMC_RMB_FULL], 4);
	CHECK_INT(d.cnt[SMC_STATS_TECH_D + SMC_ST_TX_RMBSIZE], 0);
	cap_free(&err);

	memset(&d, 0, sizeof(d));
	stats_start(&m);
	mb_nest(&m, SMC_NLA_STATS_SMCR_TECH);
	mb_nest(&m, SMC_NLA_STATS_T_RX_RMB_STATS);
	mb_u8(&m, SMC_NLA_STATS_RMB_DGRADE_CNT, 1);
	mb_end(&m);
	mb_end(&m);
	mb_end(&m);
	parse_one(&m, smc_stats_cb, &d, &err);
	CHECK_STR(err.buf, "Error: Failed to parse nested attributes: smc_gen_stats_rmb_policy\n");
	cap_free(&err);
}

TEST(stats_malformed_stats_nest)
{
	struct smc_stats_data d;
	struct capture err;
	struct mb m;

	memset(&d, 0, sizeof(d));
	d.cnt[0] = 77;
	stats_start(&m);
	mb_u16(&m, SMC_NLA_STATS_CLNT_HS_ERR_CNT, 1);
	mb_end(&m);
	parse_one(&m, smc_stats_cb, &d, &err);
	CHECK_STR(err.buf, "failed to parse nested attributes!\n");
	CHECK_INT(d.cnt[0], 77);                    /* untouched */
	cap_free(&err);
}

TEST(stats_malformed_fback)
{
	struct smc_stats_data d;
	struct capture err;
	struct mb m;

	memset(&d, 0, sizeof(d));
	mb_start(&m, FAMILY, NLM_F_MULTI);
	mb_genl(&m, SMC_NETLINK_GET_FBACK_STATS);
	mb_nest(&m, SMC_GEN_FBACK_STATS);
	mb_u8(&m, SMC_NLA_FBACK_STATS_TYPE, 1);
	mb_u16(&m, SMC_NLA_FBACK_STATS_RSN_CODE, 1);  /* u32 expected */
	mb_end(&m);
	parse_one(&m, smc_stats_fback_cb, &d, &err);
	CHECK_STR(err.buf, "failed to parse nested attributes!\n");
	CHECK_INT(d.srv[0].code, 0);
	cap_free(&err);

	/* no TYPE: totals are still taken, nothing is stored in a table */
	mb_start(&m, FAMILY, NLM_F_MULTI);
	mb_genl(&m, SMC_NETLINK_GET_FBACK_STATS);
	mb_nest(&m, SMC_GEN_FBACK_STATS);
	mb_u64(&m, SMC_NLA_FBACK_STATS_SRV_CNT, 9);
	mb_u32(&m, SMC_NLA_FBACK_STATS_RSN_CODE, 1);
	mb_end(&m);
	parse_one(&m, smc_stats_fback_cb, &d, &err);
	CHECK_STR(err.buf, "");
	CHECK_INT(d.srv_fback, 9);
	CHECK_INT(d.clnt_fback, 0);
	CHECK_INT(d.srv[0].code, 0);
	CHECK_INT(d.clnt[0].code, 0);
	cap_free(&err);
}

TEST(stats_malformed_no_genl_header)
{
	struct smc_stats_data d;
	struct capture err;
	struct mb m;

	memset(&d, 0, sizeof(d));
	mb_start(&m, FAMILY, NLM_F_MULTI);
	mb_raw(&m, "\x07", 1);                      /* 1 byte where 4 belong */
	parse_one(&m, smc_stats_cb, &d, &err);
	CHECK_PREFIX(err.buf, "smc: invalid data returned\n");
	CHECK(strlen(err.buf) > 27);                /* followed by libnl's dump */
	cap_free(&err);
	parse_one(&m, smc_stats_fback_cb, &d, &err);
	CHECK_PREFIX(err.buf, "smc: invalid data returned\n");
	cap_free(&err);
}

TEST(stats_malformed_truncated_nests)
{
	struct smc_stats_data d;
	struct capture err;
	struct mb m;
	uint16_t bad = 200;

	/* the tech nest's last attribute claims more bytes than the nest has */
	memset(&d, 0, sizeof(d));
	stats_start(&m);
	mb_nest(&m, SMC_NLA_STATS_SMCR_TECH);
	mb_u64(&m, SMC_NLA_STATS_T_RX_CNT, 12);
	mb_u64(&m, SMC_NLA_STATS_T_TX_CNT, 13);
	memcpy(m.buf + m.len - 12, &bad, 2);
	mb_end(&m);
	mb_u64(&m, SMC_NLA_STATS_CLNT_HS_ERR_CNT, 4);
	mb_end(&m);
	parse_one(&m, smc_stats_cb, &d, &err);
	CHECK_STR(err.buf, "");
	CHECK_INT(d.cnt[SMC_STATS_TECH_R + SMC_ST_RX_CNT], 12);
	CHECK_INT(d.cnt[SMC_STATS_TECH_R + SMC_ST_TX_CNT], 0);
	CHECK_INT(d.cnt[SMC_STATS_HS_CLNT], 4);
	cap_free(&err);

	/* the top nest itself runs past the message: ignored */
	memset(&d, 0, sizeof(d));
	stats_start(&m);
	mb_u64(&m, SMC_NLA_STATS_CLNT_HS_ERR_CNT, 4);
	mb_end(&m);
	bad = 300;
	memcpy(m.buf + NLMSG_HDRLEN + 4, &bad, 2);
	parse_one(&m, smc_stats_cb, &d, &err);
	CHECK_INT(d.cnt[SMC_STATS_HS_CLNT], 0);
	cap_free(&err);

	/* empty nests, a uint of 2 bytes: zeros */
	memset(&d, 0, sizeof(d));
	stats_start(&m);
	mb_nest(&m, SMC_NLA_STATS_SMCD_TECH);
	mb_nest(&m, SMC_NLA_STATS_T_TX_RMB_SIZE);
	mb_end(&m);
	mb_u16(&m, SMC_NLA_STATS_T_RX_RMB_USAGE, 5);
	mb_end(&m);
	mb_end(&m);
	parse_one(&m, smc_stats_cb, &d, &err);
	CHECK_STR(err.buf, "");
	CHECK_INT(d.cnt[SMC_STATS_TECH_D + SMC_ST_RX_RMBUSE], 0);
	cap_free(&err);
}

/* A malformed STATS reply still prints a report (zeros), exit 0. */
TEST(stats_malformed_reply_still_reports)
{
	struct smc_stats_data d;
	struct fake f;
	struct run r;
	struct mb m;

	fake_init(&f, NULL, NULL);
	stats_start(&m);
	mb_nest(&m, SMC_NLA_STATS_SMCR_TECH);
	mb_u8(&m, SMC_NLA_STATS_T_CORK_CNT, 1);
	mb_end(&m);
	mb_end(&m);
	mb_finish(&m, &f.stats);
	run_stats(&r, &f, false, SMC_LVL_ABSOLUTE, false, SMC_STATS_SHOW);
	CHECK_INT(r.rc, 0);
	CHECK_STR(r.err.buf, "Error: Failed to parse nested attributes: smc_gen_stats_fback_policy\n");
	memset(&d, 0, sizeof(d));
	{
		struct capture c;

		cap_open(&c);
		smc_stats_print_text(c.f, &d, false, false);
		CHECK_STR(r.out.buf, cap_text(&c));
		cap_free(&c);
	}
	run_free(&r);
	fake_free(&f);
}

/* ---- baseline arithmetic ---------------------------------------------------------- */

TEST(stats_delta_reasons_by_code)
{
	struct smc_stats_data k, b;

	memset(&k, 0, sizeof(k));
	memset(&b, 0, sizeof(b));
	k.clnt[0] = (struct smc_stats_rsn){ 5, 10 };
	k.clnt[1] = (struct smc_stats_rsn){ 6, 4 };
	b.clnt[0] = (struct smc_stats_rsn){ 6, 3 };   /* other slot order */
	b.clnt[1] = (struct smc_stats_rsn){ 5, 2 };
	b.srv[0] = (struct smc_stats_rsn){ 5, 99 };   /* other side: ignored */
	k.cnt[7] = 9;
	b.cnt[7] = 9;
	CHECK(smc_stats_consistent(&k, &b));
	smc_stats_subtract(&k, &b);
	CHECK_INT(k.clnt[0].count, 8);
	CHECK_INT(k.clnt[1].count, 1);
	CHECK_INT(k.cnt[7], 0);
	b.clnt_fback = 1;
	CHECK(!smc_stats_consistent(&k, &b));
}
