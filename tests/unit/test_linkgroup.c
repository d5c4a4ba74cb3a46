/* smcd/smcr linkgroup: grammar, filters and the examples of smcd(8) and smcr(8). */
#include "fixture.h"
#include "msgbuild.h"
#include "smc_uapi.h"

#include <errno.h>

/* ---- fixtures ---------------------------------------------------------- */

/* The words into the fixture's lg: 0 or -1. */
static int parse(struct smc_ctx *ctx, int argc, char **argv)
{
	return smc_linkgroup_parse(ctx, argc, argv, &fx_of(ctx)->lg);
}

/* The words parsed, then the fixture's reply printed: the exit status. */
static int print(struct smc_ctx *ctx, int argc, char **argv)
{
	struct fx *t = fx_of(ctx);

	if (parse(ctx, argc, argv))
		return SMC_EXIT_FAIL;
	return smc_linkgroup_print(ctx, &t->lg, &t->rep);
}

struct lgr {
	uint32_t id, conns;
	uint8_t role, type, vlan;
	const char *pnet;          /* NULL: attribute not sent */
	int bufsize;               /* SNDBUF/RMB_ALLOC: 0 not sent, 4 or 8 bytes */
	uint64_t sndbuf, rmb;
	bool v2;                   /* V2_COMMON and V2 nests */
	uint8_t ver, rel, os, direct;
	const char *host, *eid;
	bool v2_0;                 /* V2 nest without the v2.1 limits (kernels before 6.6) */
	uint8_t max_conns, max_links;
	bool gids;                 /* SMC-D: GID, PEER_GID and their extensions sent */
	uint64_t gid_ext, peer_gid_ext;
};

static void put_uint(struct mb *m, uint16_t type, int size, uint64_t v)
{
	if (size == 4)
		mb_u32(m, type, (uint32_t)v);
	else if (size == 8)
		mb_u64(m, type, v);
}

static void v2_common(struct mb *m, uint16_t type, const struct lgr *g)
{
	mb_nest(m, type);
	mb_u8(m, SMC_NLA_LGR_V2_VER, g->ver);            /* attribute type 0 */
	mb_u8(m, SMC_NLA_LGR_V2_REL, g->rel);
	mb_u8(m, SMC_NLA_LGR_V2_OS, g->os);
	mb_str(m, SMC_NLA_LGR_V2_PEER_HOST, g->host);
	mb_str(m, SMC_NLA_LGR_V2_NEG_EID, g->eid);
	mb_end(m);
}

/* An SMC-R link group message in the kernel's emission order (SMC_NLA_LGR_R_*, lib/smc_uapi.h). */
static void add_lgr_r(struct smc_reply *rep, const struct lgr *g)
{
	struct mb m;

	mb_start(&m, 0x20, NLM_F_MULTI);
	mb_genl(&m, SMC_NETLINK_GET_LGR_SMCR);
	mb_nest(&m, SMC_GEN_LGR_SMCR);
	mb_u32(&m, SMC_NLA_LGR_R_ID, g->id);
	mb_u32(&m, SMC_NLA_LGR_R_CONNS_NUM, g->conns);
	mb_u8(&m, SMC_NLA_LGR_R_ROLE, g->role);
	mb_u8(&m, SMC_NLA_LGR_R_TYPE, g->type);
	mb_u8(&m, SMC_NLA_LGR_R_BUF_TYPE, 0);
	mb_u8(&m, SMC_NLA_LGR_R_VLAN_ID, g->vlan);
	mb_u64(&m, SMC_NLA_LGR_R_NET_COOKIE, 0x1234);
	if (g->pnet)
		mb_str(&m, SMC_NLA_LGR_R_PNETID, g->pnet);
	put_uint(&m, SMC_NLA_LGR_R_SNDBUF_ALLOC, g->bufsize, g->sndbuf);
	put_uint(&m, SMC_NLA_LGR_R_RMB_ALLOC, g->bufsize, g->rmb);
	if (g->v2) {
		v2_common(&m, SMC_NLA_LGR_R_V2_COMMON, g);
		mb_nest(&m, SMC_NLA_LGR_R_V2);
		mb_u8(&m, SMC_NLA_LGR_R_V2_DIRECT, g->direct);
		if (!g->v2_0) {
			mb_u8(&m, SMC_NLA_LGR_R_V2_MAX_CONNS, g->max_conns);
			mb_u8(&m, SMC_NLA_LGR_R_V2_MAX_LINKS, g->max_links);
		}
		mb_end(&m);
	}
	mb_end(&m);
	mb_finish(&m, rep);
}

static void add_lgr_d(struct smc_reply *rep, const struct lgr *g)
{
	struct mb m;

	mb_start(&m, 0x20, NLM_F_MULTI);
	mb_genl(&m, SMC_NETLINK_GET_LGR_SMCD);
	mb_nest(&m, SMC_GEN_LGR_SMCD);
	mb_u32(&m, SMC_NLA_LGR_D_ID, g->id);
	if (g->gids) {
		mb_u64(&m, SMC_NLA_LGR_D_GID, 0x1111);
		mb_u64(&m, SMC_NLA_LGR_D_EXT_GID, g->gid_ext);
		mb_u64(&m, SMC_NLA_LGR_D_PEER_GID, 0x2222);
		mb_u64(&m, SMC_NLA_LGR_D_PEER_EXT_GID, g->peer_gid_ext);
	}
	mb_u8(&m, SMC_NLA_LGR_D_VLAN_ID, g->vlan);
	mb_u32(&m, SMC_NLA_LGR_D_CONNS_NUM, g->conns);
	mb_u32(&m, SMC_NLA_LGR_D_CHID, 0x7c0);
	put_uint(&m, SMC_NLA_LGR_D_SNDBUF_ALLOC, g->bufsize, g->sndbuf);
	put_uint(&m, SMC_NLA_LGR_D_DMB_ALLOC, g->bufsize, g->rmb);
	if (g->pnet)
		mb_str(&m, SMC_NLA_LGR_D_PNETID, g->pnet);
	if (g->v2)
		v2_common(&m, SMC_NLA_LGR_D_V2_COMMON, g);
	mb_end(&m);
	mb_finish(&m, rep);
}

struct link {
	uint32_t state, conns, ifindex;
	uint8_t port;
	const char *ibdev, *gid, *peer_gid;
	uint8_t uid[4], peer_uid[4];
};

/* A link message (SMC_NETLINK_GET_LINK_SMCR) in the kernel's emission order (SMC_NLA_LINK_*). */
static void add_link(struct smc_reply *rep, const struct link *l)
{
	struct mb m;

	mb_start(&m, 0x20, NLM_F_MULTI);
	mb_genl(&m, SMC_NETLINK_GET_LINK_SMCR);
	mb_nest(&m, SMC_GEN_LINK_SMCR);
	mb_u8(&m, SMC_NLA_LINK_ID, 1);
	mb_u32(&m, SMC_NLA_LINK_STATE, l->state);
	mb_u32(&m, SMC_NLA_LINK_CONN_CNT, l->conns);
	mb_u8(&m, SMC_NLA_LINK_IB_PORT, l->port);
	mb_u32(&m, SMC_NLA_LINK_NET_DEV, l->ifindex);
	mb_str(&m, SMC_NLA_LINK_IB_DEV, l->ibdev);
	mb_attr(&m, SMC_NLA_LINK_UID, l->uid, 4);
	mb_attr(&m, SMC_NLA_LINK_PEER_UID, l->peer_uid, 4);
	mb_str(&m, SMC_NLA_LINK_GID, l->gid);
	mb_str(&m, SMC_NLA_LINK_PEER_GID, l->peer_gid);
	mb_end(&m);
	mb_finish(&m, rep);
}

/* g with the V2 nests of a Linux peer: version 2, release 1, direct. */
static struct lgr linux_v2(struct lgr g, const char *host, const char *eid)
{
	g.v2 = true;
	g.ver = 2;
	g.rel = 1;
	g.os = 2;
	g.direct = 1;
	g.host = host;
	g.eid = eid;
	g.max_conns = 255;
	g.max_links = 3;
	return g;
}

static const struct lgr lgr100 = { .id = 0x100, .role = 0, .type = 1, .vlan = 0, .conns = 3,
				   .pnet = "NET1" };
static const struct lgr lgr200 = { .id = 0x200, .role = 1, .type = 2, .vlan = 5, .conns = 12,
				   .pnet = "PNETABCDEFGHIJK" };

/* smcr at level, its reply the two link groups of 5.3.4 with their links (GET_LINK_SMCR). */
static void init_links_example(struct fx *t, int level)
{
	struct smc_reply *rep = &t->rep;

	fx_init(t, false, level);
	add_lgr_r(rep, &lgr100);
	add_link(rep, &(struct link){ 3, 3, 2, 1, "mlx5_0",
		"fe80:0000:0000:0000:0000:0000:0000:0001",
		"fe80:0000:0000:0000:0000:0000:0000:0002", { 0, 0, 1, 1 }, { 0, 0, 0x47, 1 } });
	add_lgr_r(rep, &lgr200);
	add_link(rep, &(struct link){ 3, 7, 3, 1, "mlx5_verylongname",
		"fe80:0000:0000:0000:0000:0000:0000:0003",
		"fe80:0000:0000:0000:0000:0000:0000:0004", { 0, 0, 2, 1 }, { 0, 0, 0x99, 1 } });
	add_link(rep, &(struct link){ 2, 5, 0, 2, "mlx5_1",
		"fe80:0000:0000:0000:0000:0000:0000:0005",
		"fe80:0000:0000:0000:0000:0000:0000:0006", { 0, 0, 2, 2 }, { 0, 0, 0x99, 2 } });
}

#define SMCR_USAGE                                                  \
	"Usage: smcr linkgroup [show | link-show] [all | LG-ID]\n"  \
	"                                         [ibdev <dev>]\n"  \
	"                                         [netdev <dev>]\n"
#define SMCD_USAGE "Usage: smcd linkgroup [show] [all | LG-ID]\n"

#define SMCR_SHOW_HEADER "LG-ID    LG-Role  LG-Type  VLAN  #Conns  PNET-ID \n"
#define SMCR_LINKS_HEADER "LG-ID    LG-Role  LG-Type  Net-Dev         Link-State      #Conns  \n"
#define SMCD_SHOW_HEADER "LG-ID    VLAN  #Conns  PNET-ID \n"
#define SMCR_ROW_100 "00000100 CLNT     SINGLE      0       3  NET1             \n"
#define SMCR_ROW_200 "00000200 SERV     SYM       0x5      12  PNETABCDEFGHIJK  \n"

/* ---- examples of 5.3.4 / 5.3.5 ------------------------------------------ */

TEST(linkgroup_smcr_show_example)
{
	struct fx t;

	fx_init(&t, false, SMC_LVL_NONE);
	add_lgr_r(&t.rep, &lgr100);
	add_lgr_r(&t.rep, &lgr200);
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK_STR(cap_text(&t.out), SMCR_SHOW_HEADER SMCR_ROW_100 SMCR_ROW_200);
	CHECK_STR(cap_text(&t.err), "");
	fx_free(&t);
}

TEST(linkgroup_smcr_link_show_dd_example)
{
	struct fx t;

	init_links_example(&t, SMC_LVL_MORE_DETAILS);
	CHECK_INT(fx_call(&t, print, 1, "link-show"), 0);
	CHECK_STR(cap_text(&t.out),
		"LG-ID    LG-Role  LG-Type  Net-Dev         Link-State      #Conns  Link-UID  Peer-UID  IB-Dev    IB-P  Local-GID                                 Peer-GID  \n"
		"00000100 CLNT     SINGLE   eth0            LINK_ACTIVE          3  00000101  00004701  mlx5_0       1  fe80:0000:0000:0000:0000:0000:0000:0001   fe80:0000:0000:0000:0000:0000:0000:0002  \n"
		"00000200 SERV     SYM      eth1            LINK_ACTIVE          7  00000201  00009901  mlx5_ver     1  fe80:0000:0000:0000:0000:0000:0000:0003   fe80:0000:0000:0000:0000:0000:0000:0004  \n"
		"00000200 SERV     SYM                      LINK_ACTIVATING      5  00000202  00009902  mlx5_1       2  fe80:0000:0000:0000:0000:0000:0000:0005   fe80:0000:0000:0000:0000:0000:0000:0006  \n");
	fx_free(&t);
}

TEST(linkgroup_smcr_link_show_levels)
{
	struct fx t;

	init_links_example(&t, SMC_LVL_NONE);
	CHECK_INT(fx_call(&t, print, 1, "l"), 0);
	CHECK_STR(cap_text(&t.out), SMCR_LINKS_HEADER
		"00000100 CLNT     SINGLE   eth0            LINK_ACTIVE          3  \n"
		"00000200 SERV     SYM      eth1            LINK_ACTIVE          7  \n"
		"00000200 SERV     SYM                      LINK_ACTIVATING      5  \n");
	fx_free(&t);

	init_links_example(&t, SMC_LVL_DETAILS);
	CHECK_INT(fx_call(&t, print, 1, "link-show"), 0);
	CHECK_STR(cap_text(&t.out),
		"LG-ID    LG-Role  LG-Type  Net-Dev         Link-State      #Conns  Link-UID  Peer-UID  IB-Dev    IB-P  \n"
		"00000100 CLNT     SINGLE   eth0            LINK_ACTIVE          3  00000101  00004701  mlx5_0       1  \n"
		"00000200 SERV     SYM      eth1            LINK_ACTIVE          7  00000201  00009901  mlx5_ver     1  \n"
		"00000200 SERV     SYM                      LINK_ACTIVATING      5  00000202  00009902  mlx5_1       2  \n");
	fx_free(&t);

	/* -a and -ad are "no details" */
	init_links_example(&t, SMC_LVL_DETAILS_ABS);
	CHECK_INT(fx_call(&t, print, 1, "link-show"), 0);
	CHECK(strstr(cap_text(&t.out), "#Conns  \n") != NULL);
	fx_free(&t);
}

TEST(linkgroup_smcd_show_example)
{
	struct fx t;

	fx_init(&t, true, SMC_LVL_NONE);
	add_lgr_d(&t.rep, &(struct lgr){ .id = 0x100, .conns = 2, .pnet = "NET1" });
	add_lgr_d(&t.rep, &(struct lgr){ .id = 0x300, .vlan = 3, .conns = 10, .pnet = "" });
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK_STR(cap_text(&t.out), SMCD_SHOW_HEADER
		"00000100    0       2  NET1             \n"
		"00000300  0x3      10                   \n");
	fx_free(&t);
}

static const struct lgr smcd300 = {
	.id = 0x300, .vlan = 3, .conns = 10, .pnet = "", .bufsize = 4,
	.sndbuf = 16384, .rmb = 65536, .v2 = true, .ver = 2, .rel = 0, .os = 1,
	.host = "ZOSHOST1                        ",
	.eid = "SEID-EXAMPLE                    ",
};

#define SMCD_BLOCK_300                                  \
	"LG-ID    : 00000300\n"                         \
	"VLAN     : 3\n"                                \
	"PNET-ID  : \n"                                 \
	"Version  : 2\n"                                \
	"Peer-Rel : 0\n"                                \
	"Peer-Host: ZOSHOST1\n"                         \
	"Peer-OS  : ZOS\n"                              \
	"EID      : SEID-EXAMPLE                    \n" \
	"#Conns   : 10\n"                               \
	"Sndbuf   : 16384 B\n"                          \
	"DMB      : 65536 B\n"

/*
 * The GIDs (upstream showed none): 16 hex digits, 32 with a non-zero
 * extension (the 128-bit GID of loopback-ism, v6.8); JSON has the numbers,
 * the extensions only when the kernel sent them.
 */
TEST(linkgroup_smcd_gids)
{
	struct fx t;
	struct lgr ism = smcd300, lo = { .id = 0x400, .conns = 1, .gids = true,
					 .gid_ext = 0xabcdef0123456789ull,
					 .peer_gid_ext = 0xabcdef0123456789ull };

	ism.gids = true;
	fx_init(&t, true, SMC_LVL_DETAILS);
	add_lgr_d(&t.rep, &ism);
	add_lgr_d(&t.rep, &lo);
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK(strstr(cap_text(&t.out), "PNET-ID  : \nGID      : 0000000000001111\n"
		     "Peer-GID : 0000000000002222\nVersion  : 2\n") != NULL);
	CHECK(strstr(cap_text(&t.out), "GID      : 0000000000001111abcdef0123456789\n"
		     "Peer-GID : 0000000000002222abcdef0123456789\nVersion  : 1\n") != NULL);
	fx_free(&t);

	fx_init(&t, true, SMC_LVL_NONE);            /* the table stays upstream's */
	add_lgr_d(&t.rep, &lo);
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK_STR(cap_text(&t.out), SMCD_SHOW_HEADER "00000400    0       1                   \n");
	fx_free(&t);

	fx_init(&t, true, SMC_LVL_NONE);
	t.ctx.json = true;
	add_lgr_d(&t.rep, &lo);
	add_lgr_d(&t.rep, &(struct lgr){ .id = 0x500 });
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK_STR(cap_text(&t.out),
		"{\"linkgroups\":[{\"lgr_id\":1024,\"vlan_id\":0,\"pnet_id\":null,"
		"\"gid\":4369,\"gid_ext\":12379813738877118345,\"peer_gid\":8738,"
		"\"peer_gid_ext\":12379813738877118345,\"version\":1,\"conns\":1,"
		"\"sndbuf_alloc\":0,\"dmb_alloc\":0},"
		"{\"lgr_id\":1280,\"vlan_id\":0,\"pnet_id\":null,\"version\":1,\"conns\":0,"
		"\"sndbuf_alloc\":0,\"dmb_alloc\":0}]}\n");
	fx_free(&t);
}

/* 5.3.5: V2_COMMON sent with the version as attribute type 0. */
TEST(linkgroup_smcd_detail_example)
{
	struct fx t;

	fx_init(&t, true, SMC_LVL_DETAILS);
	add_lgr_d(&t.rep, &smcd300);
	CHECK_INT(fx_call(&t, print, 1, "show"), 0);
	CHECK_STR(cap_text(&t.out), SMCD_BLOCK_300);
	fx_free(&t);
}

/* Blocks are separated by one empty line; smcd link-show is show. */
TEST(linkgroup_smcd_detail_two_blocks)
{
	struct fx t;

	fx_init(&t, true, SMC_LVL_MORE_DETAILS);
	add_lgr_d(&t.rep, &(struct lgr){ .id = 0x100, .conns = 2, .pnet = "NET1" });
	add_lgr_d(&t.rep, &smcd300);
	CHECK_INT(fx_call(&t, print, 1, "link-show"), 0);
	CHECK_STR(cap_text(&t.out),
		"LG-ID    : 00000100\n"
		"VLAN     : 0\n"
		"PNET-ID  : NET1\n"
		"Version  : 1\n"
		"#Conns   : 2\n"
		"Sndbuf   : 0 B\n"
		"DMB      : 0 B\n"
		"\n"
		SMCD_BLOCK_300);
	fx_free(&t);
}

TEST(linkgroup_smcr_detail_block)
{
	struct fx t;
	struct lgr g = linux_v2(lgr200, "peerhost                        ",
				"MY-EID                          ");

	g.bufsize = 8;
	g.sndbuf = 0x123456789ULL;              /* needs the 8-byte form */
	g.rmb = 12910592;
	fx_init(&t, false, SMC_LVL_DETAILS);
	add_lgr_r(&t.rep, &lgr100);
	add_lgr_r(&t.rep, &g);
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK_STR(cap_text(&t.out),
		"LG-ID    : 00000100\n"
		"LG-Role  : CLNT\n"
		"LG-Type  : SINGLE\n"
		"VLAN     : 0\n"
		"PNET-ID  : NET1\n"
		"Version  : 1\n"
		"#Conns   : 3\n"
		"Sndbuf   : 0 B\n"
		"RMB      : 0 B\n"
		"\n"
		"LG-ID    : 00000200\n"
		"LG-Role  : SERV\n"
		"LG-Type  : SYM\n"
		"VLAN     : 5\n"
		"PNET-ID  : PNETABCDEFGHIJK\n"
		"Version  : 2\n"
		"Peer-Rel : 1\n"
		"Peer-Host: peerhost\n"
		"Peer-OS  : LINUX\n"
		"Direct   : Yes\n"
		"EID      : MY-EID                          \n"
		"Max-Conns: 255\n"
		"Max-Links: 3\n"
		"#Conns   : 12\n"
		"Sndbuf   : 4886718345 B\n"
		"RMB      : 12910592 B\n");
	fx_free(&t);
}

/*
 * The SMC-Rv2.1 limits (kernels since 6.6) are shown when the kernel sent
 * them, in the block and in JSON; an older kernel's V2 nest has Direct only.
 */
TEST(linkgroup_smcr_v2_1_limits)
{
	struct fx t;
	struct lgr g = linux_v2(lgr100, "h", "E");
	struct lgr old = linux_v2(lgr200, "h", "E");

	g.max_conns = 16;
	g.max_links = 2;
	old.v2_0 = true;
	fx_init(&t, false, SMC_LVL_MORE_DETAILS);
	add_lgr_r(&t.rep, &g);
	add_lgr_r(&t.rep, &old);
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK(strstr(cap_text(&t.out), "EID      : E\nMax-Conns: 16\nMax-Links: 2\n#Conns   : 3\n") != NULL);
	CHECK(strstr(cap_text(&t.out), "EID      : E\n#Conns   : 12\n") != NULL);
	fx_free(&t);

	fx_init(&t, false, SMC_LVL_NONE);           /* the table has no room for them */
	add_lgr_r(&t.rep, &g);
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK_STR(cap_text(&t.out), SMCR_SHOW_HEADER SMCR_ROW_100);
	fx_free(&t);

	fx_init(&t, false, SMC_LVL_NONE);
	t.ctx.json = true;
	add_lgr_r(&t.rep, &old);
	add_lgr_r(&t.rep, &g);
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK(strstr(cap_text(&t.out), "\"eid\":\"E\",\"conns\":12,") != NULL);
	CHECK(strstr(cap_text(&t.out), "\"eid\":\"E\",\"max_conns\":16,\"max_links\":2,\"conns\":3,") != NULL);
	fx_free(&t);
}

TEST(linkgroup_uint_4_and_8_bytes)
{
	struct fx t;

	fx_init(&t, true, SMC_LVL_DETAILS);
	add_lgr_d(&t.rep, &(struct lgr){ .id = 1, .bufsize = 4, .sndbuf = 0xffffffff,
					 .rmb = 7 });
	add_lgr_d(&t.rep, &(struct lgr){ .id = 2, .bufsize = 8, .sndbuf = 0x100000000ULL,
					 .rmb = 8 });
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK(strstr(cap_text(&t.out), "Sndbuf   : 4294967295 B\nDMB      : 7 B\n") != NULL);
	CHECK(strstr(cap_text(&t.out), "Sndbuf   : 4294967296 B\nDMB      : 8 B\n") != NULL);
	fx_free(&t);
}

/* Unknown peer OS and lgr type, V2_COMMON without any attribute (item 17). */
TEST(linkgroup_unknown_names_and_empty_v2)
{
	struct fx t;
	struct mb m;

	fx_init(&t, false, SMC_LVL_DETAILS);
	mb_start(&m, 0x20, NLM_F_MULTI);
	mb_genl(&m, SMC_NETLINK_GET_LGR_SMCR);
	mb_nest(&m, SMC_GEN_LGR_SMCR);
	mb_u32(&m, SMC_NLA_LGR_R_ID, 0x700);
	mb_u8(&m, SMC_NLA_LGR_R_TYPE, 9);
	mb_nest(&m, SMC_NLA_LGR_R_V2_COMMON);
	mb_end(&m);
	mb_end(&m);
	mb_finish(&m, &t.rep);
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK_STR(cap_text(&t.out),
		"LG-ID    : 00000700\n"
		"LG-Role  : CLNT\n"
		"LG-Type  : 0x9?\n"
		"VLAN     : 0\n"
		"PNET-ID  : \n"
		"Version  : 0\n"
		"Peer-Rel : 0\n"
		"Peer-Host: \n"
		"Peer-OS  : Unknown (0)\n"
		"Direct   : No\n"
		"EID      : \n"
		"#Conns   : 0\n"
		"Sndbuf   : 0 B\n"
		"RMB      : 0 B\n");
	fx_free(&t);

	fx_init(&t, false, SMC_LVL_NONE);
	add_lgr_r(&t.rep, &(struct lgr){ .id = 0x900, .type = 9, .vlan = 0xff, .pnet = "X" });
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK_STR(cap_text(&t.out), SMCR_SHOW_HEADER
		  "00000900 CLNT     0x9?     0xff       0  X                \n");
	fx_free(&t);
}

/* Upstream bug fixed: a 16-character PNET ID keeps all 16 characters, then trimmed. */
TEST(linkgroup_pnetid_16_chars_kept)
{
	struct fx t;

	fx_init(&t, false, SMC_LVL_NONE);
	add_lgr_r(&t.rep, &(struct lgr){ .id = 0x100, .pnet = "ABCDEFGHIJKLMNOP" });
	add_lgr_r(&t.rep, &(struct lgr){ .id = 0x200, .pnet = "  NET2          " });
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK_STR(cap_text(&t.out), SMCR_SHOW_HEADER
		  "00000100 CLNT     NONE        0       0  ABCDEFGHIJKLMNOP \n"
		  "00000200 CLNT     NONE        0       0  NET2             \n");
	fx_free(&t);
}

/* Item 17: an attribute missing in the second link group is not the first one's. */
TEST(linkgroup_missing_attributes_not_inherited)
{
	struct fx t;

	fx_init(&t, false, SMC_LVL_NONE);
	add_lgr_r(&t.rep, &lgr200);
	add_lgr_r(&t.rep, &(struct lgr){ .id = 0x300 });
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK_STR(cap_text(&t.out), SMCR_SHOW_HEADER SMCR_ROW_200
		  "00000300 CLNT     NONE        0       0                   \n");
	fx_free(&t);
}

TEST(linkgroup_no_linkgroups_no_output)
{
	struct fx t;

	fx_init(&t, false, SMC_LVL_NONE);
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK_STR(cap_text(&t.out), "");
	fx_free(&t);

	fx_init(&t, true, SMC_LVL_DETAILS);
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK_STR(cap_text(&t.out), "");
	fx_free(&t);
}

/* ---- grammar (5.3.1) ---------------------------------------------------- */

TEST(linkgroup_help_and_too_many_words_usage)
{
	struct fx t;
	char *help[] = { "help" }, *five[] = { "show", "all", "a", "a", "a" };

	fx_init(&t, false, 0);
	CHECK_INT(smc_linkgroup_cmd(&t.ctx, 1, help), SMC_EXIT_FAIL);
	CHECK_STR(cap_text(&t.err), SMCR_USAGE);
	CHECK_STR(cap_text(&t.out), "");
	fx_free(&t);

	fx_init(&t, true, 0);
	CHECK_INT(smc_linkgroup_cmd(&t.ctx, 5, five), SMC_EXIT_FAIL);
	CHECK_STR(cap_text(&t.err), SMCD_USAGE);
	fx_free(&t);

	fx_init(&t, false, 0);
	CHECK_INT(fx_call(&t, parse, 1, "h"), -1);
	CHECK_INT(fx_call(&t, parse, 2, "show", "he"), -1);
	CHECK_INT(fx_call(&t, parse, 3, "link-show", "all", "help"), -1);
	fx_free(&t);
}

TEST(linkgroup_all_and_lgid_exclusive)
{
	struct fx t;

	fx_init(&t, false, 0);
	CHECK_INT(fx_call(&t, parse, 2, "all", "100"), -1);
	CHECK_INT(fx_call(&t, parse, 2, "100", "all"), -1);
	CHECK_INT(fx_call(&t, parse, 3, "show", "100", "200"), -1);
	CHECK_INT(fx_call(&t, parse, 3, "show", "all", "all"), 0);
	CHECK_INT(t.lg.lgid, 0);
	/* "a" and "al" are "all", never hex ids */
	CHECK_INT(fx_call(&t, parse, 1, "a"), 0);
	CHECK_INT(t.lg.lgid, 0);
	CHECK_INT(fx_call(&t, parse, 2, "al", "a"), 0);
	CHECK_INT(t.lg.lgid, 0);
	CHECK_INT(fx_call(&t, parse, 3, "all", "ibdev", "mlx5_0"), 0);
	CHECK_STR(t.lg.ibdev, "mlx5_0");
	fx_free(&t);
}

TEST(linkgroup_lgid_strtol_base16)
{
	struct fx t;

	fx_init(&t, false, 0);
	CHECK_INT(fx_call(&t, parse, 1, "12zz"), 0);
	CHECK_INT(t.lg.lgid, 0x12);
	CHECK_INT(t.lg.lgid_masked, 0);
	CHECK(!t.lg.links);
	CHECK_INT(fx_call(&t, parse, 2, "show", "foo"), 0);
	CHECK_INT(t.lg.lgid, 0xf);
	CHECK_INT(fx_call(&t, parse, 2, "link-show", "0x101"), 0);
	CHECK(t.lg.links);
	CHECK_INT(t.lg.lgid, 0x101);
	CHECK_INT(t.lg.lgid_masked, 0x100);
	CHECK_INT(fx_call(&t, parse, 1, " 200"), 0);
	CHECK_INT(t.lg.lgid, 0x200);
	CHECK_INT(fx_call(&t, parse, 1, "zz"), 0);
	CHECK_INT(t.lg.lgid, 0xFFFFFFFFu);
	CHECK_INT(fx_call(&t, parse, 1, "0"), 0);
	CHECK_INT(t.lg.lgid, 0);
	fx_free(&t);
}

TEST(linkgroup_smcr_lgid_mask_selects_group)
{
	struct fx t;

	fx_init(&t, false, SMC_LVL_NONE);
	add_lgr_r(&t.rep, &lgr100);
	add_lgr_r(&t.rep, &lgr200);
	CHECK_INT(fx_call(&t, print, 2, "show", "101"), 0);
	CHECK_STR(cap_text(&t.out), SMCR_SHOW_HEADER SMCR_ROW_100);
	fx_free(&t);

	/* no match still prints the header */
	fx_init(&t, false, SMC_LVL_NONE);
	add_lgr_r(&t.rep, &lgr100);
	CHECK_INT(fx_call(&t, print, 1, "zz"), 0);
	CHECK_STR(cap_text(&t.out), SMCR_SHOW_HEADER);
	fx_free(&t);
}

TEST(linkgroup_smcd_lgid_exact)
{
	struct fx t;

	fx_init(&t, true, SMC_LVL_NONE);
	add_lgr_d(&t.rep, &(struct lgr){ .id = 0x100, .conns = 2, .pnet = "NET1" });
	add_lgr_d(&t.rep, &(struct lgr){ .id = 0x101, .conns = 1, .pnet = "NET1" });
	CHECK_INT(fx_call(&t, print, 1, "101"), 0);
	CHECK_STR(cap_text(&t.out), SMCD_SHOW_HEADER
		"00000101    0       1  NET1             \n");
	fx_free(&t);

	/* "foo" is LG-ID 0xf */
	fx_init(&t, true, SMC_LVL_NONE);
	add_lgr_d(&t.rep, &(struct lgr){ .id = 0xf, .conns = 1 });
	add_lgr_d(&t.rep, &(struct lgr){ .id = 0x100, .conns = 2 });
	CHECK_INT(fx_call(&t, print, 2, "show", "foo"), 0);
	CHECK_STR(cap_text(&t.out), SMCD_SHOW_HEADER
		"0000000f    0       1                   \n");
	fx_free(&t);
}

TEST(linkgroup_ibdev_netdev_grammar)
{
	struct fx t;

	fx_init(&t, false, 0);
	/* a trailing ibdev/netdev without value sets no filter */
	CHECK_INT(fx_call(&t, parse, 2, "show", "ibdev"), 0);
	CHECK_STR(t.lg.ibdev, "");
	CHECK_INT(smc_linkgroup_request(&t.ctx, &t.lg), SMC_NETLINK_GET_LGR_SMCR);
	CHECK_INT(fx_call(&t, parse, 1, "net"), 0);
	CHECK_STR(t.lg.netdev, "");
	/* parsing stops at the value */
	CHECK_INT(fx_call(&t, parse, 3, "netdev", "eth0", "x"), -1);
	CHECK_INT(fx_call(&t, parse, 3, "ibdev", "mlx5_0", "100"), -1);
	CHECK_INT(fx_call(&t, parse, 3, "link-show", "netdev", "eth0"), 0);
	CHECK_STR(t.lg.netdev, "eth0");
	/* values are cut to the buffers upstream keeps */
	CHECK_INT(fx_call(&t, parse, 2, "netdev", "abcdefghijklmnopqrstuvwxyz"), 0);
	CHECK_STR(t.lg.netdev, "abcdefghijklmno");
	fx_free(&t);

	/* smcd: not keywords, parsed as invalid LG-IDs; a following word is an error */
	fx_init(&t, true, 0);
	CHECK_INT(fx_call(&t, parse, 1, "netdev"), 0);
	CHECK_INT(t.lg.lgid, 0xFFFFFFFFu);
	CHECK_INT(fx_call(&t, parse, 2, "ibdev", "x"), -1);
	CHECK_INT(fx_call(&t, parse, 1, "link-show"), 0);
	CHECK_INT(smc_linkgroup_request(&t.ctx, &t.lg), SMC_NETLINK_GET_LGR_SMCD);
	fx_free(&t);
}

/* ---- filters (5.3.3) ---------------------------------------------------- */

TEST(linkgroup_link_show_filters)
{
	struct fx t;

	init_links_example(&t, SMC_LVL_NONE);
	CHECK_INT(fx_call(&t, print, 3, "link-show", "netdev", "eth1"), 0);
	CHECK_STR(cap_text(&t.out), SMCR_LINKS_HEADER
		"00000200 SERV     SYM      eth1            LINK_ACTIVE          7  \n");
	fx_free(&t);

	init_links_example(&t, SMC_LVL_NONE);
	CHECK_INT(fx_call(&t, print, 3, "link-show", "ibdev", "mlx5_1"), 0);
	CHECK_STR(cap_text(&t.out), SMCR_LINKS_HEADER
		"00000200 SERV     SYM                      LINK_ACTIVATING      5  \n");
	fx_free(&t);

	/* the IB device filter compares the full name */
	init_links_example(&t, SMC_LVL_NONE);
	CHECK_INT(fx_call(&t, print, 3, "link-show", "ibdev", "mlx5_ver"), 0);
	CHECK_STR(cap_text(&t.out), SMCR_LINKS_HEADER);
	fx_free(&t);

	init_links_example(&t, SMC_LVL_NONE);
	CHECK_INT(fx_call(&t, print, 2, "link-show", "201"), 0);
	CHECK_STR(cap_text(&t.out), SMCR_LINKS_HEADER
		"00000200 SERV     SYM      eth1            LINK_ACTIVE          7  \n"
		"00000200 SERV     SYM                      LINK_ACTIVATING      5  \n");
	fx_free(&t);
}

/* Upstream bug fixed: show netdev/ibdev lists the groups with a matching link. */
TEST(linkgroup_show_netdev_filter_applies)
{
	struct fx t;

	init_links_example(&t, SMC_LVL_NONE);
	CHECK_INT(fx_call(&t, parse, 3, "show", "netdev", "eth1"), 0);
	CHECK_INT(smc_linkgroup_request(&t.ctx, &t.lg), SMC_NETLINK_GET_LINK_SMCR);
	CHECK_INT(fx_call(&t, print, 3, "show", "netdev", "eth1"), 0);
	CHECK_STR(cap_text(&t.out), SMCR_SHOW_HEADER SMCR_ROW_200);
	fx_free(&t);

	/* two links match: the group is shown once */
	init_links_example(&t, SMC_LVL_NONE);
	CHECK_INT(fx_call(&t, print, 2, "ibdev", "mlx5_0"), 0);
	CHECK_STR(cap_text(&t.out), SMCR_SHOW_HEADER SMCR_ROW_100);
	fx_free(&t);

	init_links_example(&t, SMC_LVL_NONE);
	add_link(&t.rep, &(struct link){ 3, 1, 2, 1, "mlx5_0", "", "", { 0 }, { 0 } });
	CHECK_INT(fx_call(&t, print, 2, "netdev", "eth0"), 0);
	CHECK_STR(cap_text(&t.out), SMCR_SHOW_HEADER SMCR_ROW_100 SMCR_ROW_200);
	fx_free(&t);

	/* detail blocks too */
	init_links_example(&t, SMC_LVL_DETAILS);
	CHECK_INT(fx_call(&t, print, 2, "netdev", "eth1"), 0);
	CHECK(!strncmp(cap_text(&t.out), "LG-ID    : 00000200\n", 20));
	CHECK(strstr(cap_text(&t.out), "00000100") == NULL);
	fx_free(&t);
}

TEST(linkgroup_request_commands)
{
	struct fx t;

	fx_init(&t, false, 0);
	CHECK_INT(fx_call(&t, parse, 0), 0);
	CHECK_INT(smc_linkgroup_request(&t.ctx, &t.lg), SMC_NETLINK_GET_LGR_SMCR);
	CHECK_INT(fx_call(&t, parse, 1, "link"), 0);
	CHECK_INT(smc_linkgroup_request(&t.ctx, &t.lg), SMC_NETLINK_GET_LINK_SMCR);
	CHECK_INT(fx_call(&t, parse, 2, "s", "100"), 0);
	CHECK_INT(smc_linkgroup_request(&t.ctx, &t.lg), SMC_NETLINK_GET_LGR_SMCR);
	fx_free(&t);
}

/* ---- JSON ---------------------------------------------------------------- */

TEST(linkgroup_json_smcr_show)
{
	struct fx t;
	struct lgr g = linux_v2(lgr100, "h ", "E");

	g.bufsize = 4;
	g.sndbuf = 1;
	g.rmb = 2;
	fx_init(&t, false, SMC_LVL_NONE);
	t.ctx.json = true;
	add_lgr_r(&t.rep, &g);
	add_lgr_r(&t.rep, &lgr200);
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK_STR(cap_text(&t.out),
		"{\"linkgroups\":[{\"lgr_id\":256,\"role\":\"CLNT\",\"type\":\"SINGLE\","
		"\"vlan_id\":0,\"pnet_id\":\"NET1\",\"version\":2,\"peer_release\":1,"
		"\"peer_host\":\"h\",\"peer_os\":\"LINUX\",\"direct\":true,\"eid\":\"E\","
		"\"max_conns\":255,\"max_links\":3,\"conns\":3,\"sndbuf_alloc\":1,\"rmb_alloc\":2},"
		"{\"lgr_id\":512,\"role\":\"SERV\",\"type\":\"SYM\",\"vlan_id\":5,"
		"\"pnet_id\":\"PNETABCDEFGHIJK\",\"version\":1,\"conns\":12,"
		"\"sndbuf_alloc\":0,\"rmb_alloc\":0}]}\n");
	fx_free(&t);
}

TEST(linkgroup_json_links_and_empty)
{
	struct fx t;

	fx_init(&t, false, SMC_LVL_NONE);
	t.ctx.json = true;
	add_lgr_r(&t.rep, &lgr100);
	add_link(&t.rep, &(struct link){ 3, 3, 2, 1, "mlx5_0", "g1", "g2",
					 { 0, 0, 1, 1 }, { 0, 0, 0x47, 1 } });
	CHECK_INT(fx_call(&t, print, 1, "link-show"), 0);
	CHECK_STR(cap_text(&t.out),
		"{\"links\":[{\"lgr_id\":256,\"role\":\"CLNT\",\"type\":\"SINGLE\","
		"\"vlan_id\":0,\"pnet_id\":\"NET1\",\"version\":1,\"conns\":3,"
		"\"sndbuf_alloc\":0,\"rmb_alloc\":0,\"net_dev\":\"eth0\","
		"\"link_state\":\"LINK_ACTIVE\",\"conn_cnt\":3,\"link_uid\":\"00000101\","
		"\"peer_uid\":\"00004701\",\"ib_dev\":\"mlx5_0\",\"ib_port\":1,"
		"\"gid\":\"g1\",\"peer_gid\":\"g2\"}]}\n");
	fx_free(&t);

	fx_init(&t, true, SMC_LVL_DETAILS);
	t.ctx.json = true;
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK_STR(cap_text(&t.out), "{\"linkgroups\":[]}\n");
	fx_free(&t);

	fx_init(&t, true, SMC_LVL_NONE);
	t.ctx.json = true;
	add_lgr_d(&t.rep, &smcd300);
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK_STR(cap_text(&t.out),
		"{\"linkgroups\":[{\"lgr_id\":768,\"vlan_id\":3,\"pnet_id\":null,"
		"\"version\":2,\"peer_release\":0,\"peer_host\":\"ZOSHOST1\",\"peer_os\":\"ZOS\","
		"\"eid\":\"SEID-EXAMPLE\",\"conns\":10,"
		"\"sndbuf_alloc\":16384,\"dmb_alloc\":65536}]}\n");
	fx_free(&t);
}

/* ---- malformed replies --------------------------------------------------- */

/* libnl keeps attribute type 0, which the V2_COMMON nest uses for the version. */
TEST(linkgroup_libnl_keeps_attribute_type_0)
{
	static const struct nla_policy pol[3] = { [0] = { .type = NLA_U8 } };
	struct nlattr *tb[3];
	struct mb m;

	mb_start(&m, 0, 0);
	mb_nest(&m, 1);
	mb_u8(&m, 0, 7);
	mb_u8(&m, 2, 9);
	mb_end(&m);
	CHECK_INT(nla_parse_nested(tb, 2, (struct nlattr *)(m.buf + NLMSG_HDRLEN), pol), 0);
	CHECK(tb[0] != NULL);
	CHECK_INT(tb[0] ? nla_get_u8(tb[0]) : 0, 7);
	CHECK_INT(tb[2] ? nla_get_u8(tb[2]) : 0, 9);
}

static void add_bad_nest(struct smc_reply *rep, uint8_t cmd, uint16_t top, uint16_t type)
{
	struct mb m;
	uint16_t two = 1;

	mb_start(&m, 0x20, NLM_F_MULTI);
	mb_genl(&m, cmd);
	mb_nest(&m, top);
	mb_attr(&m, type, &two, 2);       /* too short for its u32/u8.. policy */
	mb_end(&m);
	mb_finish(&m, rep);
}

static void check_error(bool smcd, bool links, void (*add)(struct smc_reply *),
			const char *expect_err)
{
	struct fx t;

	fx_init(&t, smcd, SMC_LVL_NONE);
	add(&t.rep);
	CHECK_INT(links ? fx_call(&t, print, 1, "link-show") : fx_call(&t, print, 0), SMC_EXIT_FAIL);
	CHECK_STR(cap_text(&t.err), expect_err);
	fx_free(&t);
}

static void bad_lgr_r(struct smc_reply *rep)
{
	add_bad_nest(rep, SMC_NETLINK_GET_LGR_SMCR, SMC_GEN_LGR_SMCR, SMC_NLA_LGR_R_ID);
}

static void bad_lgr_d(struct smc_reply *rep)
{
	add_bad_nest(rep, SMC_NETLINK_GET_LGR_SMCD, SMC_GEN_LGR_SMCD, SMC_NLA_LGR_D_CONNS_NUM);
}

static void bad_link(struct smc_reply *rep)
{
	add_lgr_r(rep, &lgr100);
	add_bad_nest(rep, SMC_NETLINK_GET_LINK_SMCR, SMC_GEN_LINK_SMCR, SMC_NLA_LINK_NET_DEV);
}

static void bad_v2(struct smc_reply *rep)
{
	struct mb m;

	mb_start(&m, 0x20, NLM_F_MULTI);
	mb_genl(&m, SMC_NETLINK_GET_LGR_SMCR);
	mb_nest(&m, SMC_GEN_LGR_SMCR);
	mb_nest(&m, SMC_NLA_LGR_R_V2_COMMON);
	mb_attr(&m, SMC_NLA_LGR_V2_VER, NULL, 0);
	mb_end(&m);
	mb_end(&m);
	mb_finish(&m, rep);
}

static void bad_r_v2(struct smc_reply *rep)
{
	struct mb m;

	mb_start(&m, 0x20, NLM_F_MULTI);
	mb_genl(&m, SMC_NETLINK_GET_LGR_SMCR);
	mb_nest(&m, SMC_GEN_LGR_SMCR);
	mb_nest(&m, SMC_NLA_LGR_R_V2);
	mb_attr(&m, SMC_NLA_LGR_R_V2_DIRECT, NULL, 0);
	mb_end(&m);
	mb_end(&m);
	mb_finish(&m, rep);
}

static void bad_pnetid(struct smc_reply *rep)
{
	add_lgr_r(rep, &(struct lgr){ .id = 1, .pnet = "ABCDEFGHIJKLMNOPQ" });  /* 18 > 17 */
}

static void bad_genl_header(struct smc_reply *rep)
{
	struct mb m;

	mb_start(&m, 0x20, NLM_F_MULTI);
	mb_raw(&m, "\x02", 1);             /* 17 bytes: no room for the genl header */
	mb_finish(&m, rep);
}

TEST(linkgroup_malformed_replies)
{
	check_error(false, false, bad_lgr_r,
		    "Error: Failed to parse nested attributes: smc_gen_lgr_smcr_sock_policy\n");
	check_error(true, false, bad_lgr_d,
		    "Error: Failed to parse nested attributes: smc_gen_lgr_smcd_sock_policy\n");
	check_error(false, true, bad_link,
		    "Error: Failed to parse nested attributes: smc_gen_link_smcr_sock_policy\n");
	check_error(false, false, bad_v2,
		    "Error: Failed to parse nested attributes: smc_gen_lgr_v2_sock_policy\n");
	check_error(false, false, bad_r_v2,
		    "Error: Failed to parse nested attributes: smc_gen_lgr_r_v2_sock_policy\n");
	check_error(false, false, bad_pnetid,
		    "Error: Failed to parse nested attributes: smc_gen_lgr_smcr_sock_policy\n");
	check_error(true, false, bad_genl_header,
		    "Error: Invalid data returned: smc_gen_net_policy\n");
}

/* Rows before the bad message stay printed; processing stops there. */
TEST(linkgroup_error_stops_processing)
{
	struct fx t;

	fx_init(&t, false, SMC_LVL_NONE);
	add_lgr_r(&t.rep, &lgr100);
	bad_lgr_r(&t.rep);
	add_lgr_r(&t.rep, &lgr200);
	CHECK_INT(fx_call(&t, print, 0), SMC_EXIT_FAIL);
	CHECK_STR(cap_text(&t.out), SMCR_SHOW_HEADER SMCR_ROW_100);
	fx_free(&t);

	/* JSON stays one valid document */
	fx_init(&t, true, SMC_LVL_NONE);
	t.ctx.json = true;
	bad_lgr_d(&t.rep);
	CHECK_INT(fx_call(&t, print, 0), SMC_EXIT_FAIL);
	CHECK_STR(cap_text(&t.out), "{\"linkgroups\":[]}\n");
	fx_free(&t);
}

/* A message with none of the link-group nests ends processing, successfully. */
TEST(linkgroup_message_without_nest_stops)
{
	struct fx t;
	struct mb m;

	fx_init(&t, false, SMC_LVL_NONE);
	add_lgr_r(&t.rep, &lgr100);
	mb_start(&m, 0x20, NLM_F_MULTI);
	mb_genl(&m, SMC_NETLINK_GET_LGR_SMCR);
	mb_finish(&m, &t.rep);
	add_lgr_r(&t.rep, &lgr200);
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK_STR(cap_text(&t.out), SMCR_SHOW_HEADER SMCR_ROW_100);
	CHECK_STR(cap_text(&t.err), "");
	fx_free(&t);

	/* the header comes with the first message, even this one */
	fx_init(&t, false, SMC_LVL_NONE);
	mb_start(&m, 0x20, NLM_F_MULTI);
	mb_genl(&m, SMC_NETLINK_GET_LGR_SMCR);
	mb_finish(&m, &t.rep);
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK_STR(cap_text(&t.out), SMCR_SHOW_HEADER);
	fx_free(&t);
}

/* Truncated and garbage attributes inside a nest never crash. */
TEST(linkgroup_truncated_nest)
{
	struct fx t;
	struct mb m;

	fx_init(&t, false, SMC_LVL_MORE_DETAILS);
	add_lgr_r(&t.rep, &lgr100);
	mb_start(&m, 0x20, NLM_F_MULTI);
	mb_genl(&m, SMC_NETLINK_GET_LINK_SMCR);
	mb_nest(&m, SMC_GEN_LINK_SMCR);
	mb_attr(&m, SMC_NLA_LINK_IB_DEV, "mlx5_0", 6);     /* no NUL */
	mb_attr(&m, SMC_NLA_LINK_GID, "", 0);
	mb_raw(&m, "\x40\x00\x04\x00", 4);                 /* claims 64 bytes */
	mb_end(&m);
	mb_finish(&m, &t.rep);
	CHECK_INT(fx_call(&t, print, 1, "link-show"), 0);
	CHECK(strstr(cap_text(&t.out), "mlx5_0   ") != NULL);
	fx_free(&t);
}

/* ---- end to end over a transport ----------------------------------------- */

TEST(linkgroup_cmd_dump_and_errors)
{
	char *words[] = { "show", "netdev", "eth1" };
	struct mb m, req;
	struct fx t;

	fx_init_peer(&t, false);
	mb_start(&m, 0x20, NLM_F_MULTI);
	mb_genl(&m, SMC_NETLINK_GET_LGR_SMCR);
	mb_nest(&m, SMC_GEN_LGR_SMCR);
	mb_u32(&m, SMC_NLA_LGR_R_ID, 0x200);
	mb_end(&m);
	peer_queue(&t.p, 1, &m);
	mb_start(&m, 0x20, NLM_F_MULTI);
	mb_genl(&m, SMC_NETLINK_GET_LINK_SMCR);
	mb_nest(&m, SMC_GEN_LINK_SMCR);
	mb_u32(&m, SMC_NLA_LINK_NET_DEV, 3);
	mb_end(&m);
	peer_queue(&t.p, 1, &m);
	peer_done(&t.p, 1);
	CHECK_INT(smc_linkgroup_cmd(&t.ctx, 3, words), 0);
	CHECK(peer_request(&t.p, &req) >= NLMSG_HDRLEN + 4);
	CHECK_INT(req.buf[NLMSG_HDRLEN], SMC_NETLINK_GET_LINK_SMCR);
	CHECK_STR(cap_text(&t.out), SMCR_SHOW_HEADER
		  "00000200 CLNT     NONE        0       0                   \n");

	cap_free(&t.out);
	cap_open(&t.out);
	t.ctx.out = t.out.f;
	peer_error(&t.p, 1, -EOPNOTSUPP, NULL);
	CHECK_INT(smc_linkgroup_cmd(&t.ctx, 0, words), SMC_EXIT_FAIL);
	CHECK_STR(cap_text(&t.out), "");
	CHECK_STR(cap_text(&t.err), "Error: Operation not supported by kernel\n");

	cap_free(&t.out);
	cap_free(&t.err);
	cap_open(&t.out);
	cap_open(&t.err);
	t.ctx.out = t.out.f;
	t.ctx.err = t.err.f;
	t.ctx.smcd = true;
	t.ctx.prog = "smcd";
	peer_error(&t.p, 1, -EPERM, NULL);
	CHECK_INT(smc_linkgroup_cmd(&t.ctx, 0, words), SMC_EXIT_FAIL);
	CHECK_STR(cap_text(&t.err), "Error: Operation not permitted\n");
	CHECK_STR(cap_text(&t.out), "");
	peer_request(&t.p, &req);
	peer_request(&t.p, &req);
	CHECK_INT(req.buf[NLMSG_HDRLEN], SMC_NETLINK_GET_LGR_SMCD);

	fx_free(&t);
}
