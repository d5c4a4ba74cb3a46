/*
 * smc_softd link groups (test-only ones until the data path creates them):
 * GET_LGR_SMCR, GET_LINK_SMCR, GET_LGR_SMCD byte by byte (in the kernel's
 * smc_core.c emission order), the device counts that follow from them, and
 * what smcd/smcr print from the replies.
 */
#include "softfx.h"
#include "soft/fabric/lgr.h"
#include "smc/linkgroup.h"
#include "smc/smc.h"
#include "smc_uapi.h"

#include <arpa/inet.h>
#include <string.h>

#define GEN SOFT_ID_GEN

struct lgrs {
	struct soft_lgr *r2, *r1, *d;
	struct soft_link *l1, *l2;
};

static void make_lgrs(struct sfx *f, struct lgrs *g)
{
	struct soft_dev *roce = soft_dev_find_roce(&f->st, "sr_test");
	struct soft_lgr *lgr;

	g->r2 = lgr = soft_lgr_new(&f->st, false);
	lgr->role = 1;
	lgr->type = SOFT_LGR_SINGLE;
	lgr->conns = 3;
	lgr->net_cookie = 0x1122334455667788ULL;
	strcpy(lgr->pnetid, "NET1");
	lgr->sndbuf_alloc = 65536;
	lgr->rmb_alloc = 5ULL << 30;
	lgr->peer_rel = 1;
	lgr->peer_os = SOFT_OS_LINUX;
	snprintf(lgr->peer_host, sizeof(lgr->peer_host), "%-32s", "peerhost");
	snprintf(lgr->neg_eid, sizeof(lgr->neg_eid), "%-32s", "SOME-EID");
	lgr->direct = 1;
	lgr->max_conns = 255;
	lgr->max_links = 2;
	g->l1 = soft_lgr_link_add(lgr, roce, 1);
	g->l1->state = SOFT_LNK_ACTIVE;
	g->l1->conn_cnt = 3;
	memcpy(g->l1->peer_uid, "\x00\x00\x47\x01", 4);
	g->l1->gid[0] = 0xfe;
	g->l1->gid[1] = 0x80;
	g->l1->gid[15] = 1;
	g->l1->peer_gid[0] = 0xfe;
	g->l1->peer_gid[1] = 0x80;
	g->l1->peer_gid[15] = 2;
	g->l2 = soft_lgr_link_add(lgr, roce, 1);
	g->l2->state = SOFT_LNK_INACTIVE;      /* counted on the port, not listed */

	g->r1 = lgr = soft_lgr_new(&f->st, false);
	lgr->version = 1;
	lgr->type = SOFT_LGR_SYMMETRIC;
	lgr->vlan_id = 5;

	g->d = lgr = soft_lgr_new(&f->st, true);
	lgr->conns = 2;
	lgr->peer_gid = soft_dev_ism(&f->st)->gid;
	lgr->peer_gid_ext = soft_dev_ism(&f->st)->gid_ext;
	lgr->sndbuf_alloc = 16384;
	lgr->rmb_alloc = 65568;
	lgr->peer_rel = 1;
	lgr->peer_os = SOFT_OS_LINUX;
	snprintf(lgr->peer_host, sizeof(lgr->peer_host), "%-32s", "vm");
	snprintf(lgr->neg_eid, sizeof(lgr->neg_eid), "%-32s", "SOME-EID");
}

static void exp_v2_common(struct mb *x, uint16_t type, const char *host, const char *eid)
{
	char h[33], e[33];

	snprintf(h, sizeof(h), "%-32s", host);
	snprintf(e, sizeof(e), "%-32s", eid);
	mb_nest(x, type);
	mb_u8(x, SMC_NLA_LGR_V2_VER, 2);
	mb_u8(x, SMC_NLA_LGR_V2_REL, 1);
	mb_u8(x, SMC_NLA_LGR_V2_OS, 2);
	mb_str(x, SMC_NLA_LGR_V2_PEER_HOST, h);
	mb_str(x, SMC_NLA_LGR_V2_NEG_EID, e);
	mb_end(x);
}

/* Both SMC-R link groups' messages (genl cmd 2 also inside GET_LINK_SMCR). */
static void exp_lgr_r2(struct smc_reply *e, uint32_t seq)
{
	struct mb x;

	sfx_exp_genl(&x, GEN, SMC_NETLINK_GET_LGR_SMCR, NLM_F_MULTI, seq);
	mb_nest(&x, SMC_GEN_LGR_SMCR);
	mb_u32(&x, SMC_NLA_LGR_R_ID, 0x100);
	mb_u32(&x, SMC_NLA_LGR_R_CONNS_NUM, 3);
	mb_u8(&x, SMC_NLA_LGR_R_ROLE, 1);
	mb_u8(&x, SMC_NLA_LGR_R_TYPE, 1);
	mb_u8(&x, SMC_NLA_LGR_R_BUF_TYPE, 0);
	mb_u8(&x, SMC_NLA_LGR_R_VLAN_ID, 0);
	mb_u64(&x, SMC_NLA_LGR_R_NET_COOKIE, 0x1122334455667788ULL);
	mb_str(&x, SMC_NLA_LGR_R_PNETID, "NET1");
	mb_u32(&x, SMC_NLA_LGR_R_SNDBUF_ALLOC, 65536);
	mb_u64(&x, SMC_NLA_LGR_R_RMB_ALLOC, 5ULL << 30);
	exp_v2_common(&x, SMC_NLA_LGR_R_V2_COMMON, "peerhost", "SOME-EID");
	mb_nest(&x, SMC_NLA_LGR_R_V2);
	mb_u8(&x, SMC_NLA_LGR_R_V2_DIRECT, 1);
	mb_u8(&x, SMC_NLA_LGR_R_V2_MAX_CONNS, 255);
	mb_u8(&x, SMC_NLA_LGR_R_V2_MAX_LINKS, 2);
	mb_end(&x);
	mb_end(&x);
	mb_finish(&x, e);
}

static void exp_lgr_r1(struct smc_reply *e, uint32_t seq)
{
	struct mb x;

	sfx_exp_genl(&x, GEN, SMC_NETLINK_GET_LGR_SMCR, NLM_F_MULTI, seq);
	mb_nest(&x, SMC_GEN_LGR_SMCR);
	mb_u32(&x, SMC_NLA_LGR_R_ID, 0x200);
	mb_u32(&x, SMC_NLA_LGR_R_CONNS_NUM, 0);
	mb_u8(&x, SMC_NLA_LGR_R_ROLE, 0);
	mb_u8(&x, SMC_NLA_LGR_R_TYPE, 2);
	mb_u8(&x, SMC_NLA_LGR_R_BUF_TYPE, 0);
	mb_u8(&x, SMC_NLA_LGR_R_VLAN_ID, 5);
	mb_u64(&x, SMC_NLA_LGR_R_NET_COOKIE, 0);
	mb_str(&x, SMC_NLA_LGR_R_PNETID, "");
	mb_u32(&x, SMC_NLA_LGR_R_SNDBUF_ALLOC, 0);
	mb_u32(&x, SMC_NLA_LGR_R_RMB_ALLOC, 0);
	mb_end(&x);
	mb_finish(&x, e);
}

TEST(soft_lgr_none_yet)
{
	static const uint8_t cmds[] = { SMC_NETLINK_GET_LGR_SMCR, SMC_NETLINK_GET_LINK_SMCR,
					SMC_NETLINK_GET_LGR_SMCD };
	struct smc_reply e;
	struct sfx f;
	struct mb m;

	sfx_init(&f, true);
	smc_reply_init(&e);
	sfx_exp_done(&e, 9);
	for (size_t i = 0; i < sizeof(cmds); i++) {
		sfx_req(&m, GEN, cmds[i], NLM_F_DUMP, 9);
		sfx_send(&f, &f.user, &m);
		CHECK_REPLY(&f, &e);
	}
	smc_reply_free(&e);
	sfx_free(&f);
}

TEST(soft_lgr_smcr_bytes)
{
	struct smc_reply e;
	struct lgrs g;
	struct sfx f;
	struct mb m;

	sfx_init(&f, true);
	smc_reply_init(&e);
	make_lgrs(&f, &g);
	sfx_req(&m, GEN, SMC_NETLINK_GET_LGR_SMCR, NLM_F_DUMP, 100);
	sfx_send(&f, &f.user, &m);
	exp_lgr_r2(&e, 100);
	exp_lgr_r1(&e, 100);
	sfx_exp_done(&e, 100);
	CHECK_REPLY(&f, &e);
	smc_reply_free(&e);
	sfx_free(&f);
}

TEST(soft_lgr_link_smcr_bytes)
{
	struct smc_reply e;
	struct lgrs g;
	struct sfx f;
	struct mb m, x;
	uint32_t uid;

	sfx_init(&f, true);
	smc_reply_init(&e);
	make_lgrs(&f, &g);
	CHECK_INT(g.l1->link_id, 1);
	CHECK_INT(g.l2->link_id, 2);
	CHECK(!memcmp(g.l1->uid, "\x00\x00\x01\x01", 4));     /* htonl(0x100 + 1) */
	sfx_req(&m, GEN, SMC_NETLINK_GET_LINK_SMCR, NLM_F_DUMP, 101);
	sfx_send(&f, &f.user, &m);
	exp_lgr_r2(&e, 101);
	sfx_exp_genl(&x, GEN, SMC_NETLINK_GET_LINK_SMCR, NLM_F_MULTI, 101);
	mb_nest(&x, SMC_GEN_LINK_SMCR);
	mb_u8(&x, SMC_NLA_LINK_ID, 1);
	mb_u32(&x, SMC_NLA_LINK_STATE, SOFT_LNK_ACTIVE);
	mb_u32(&x, SMC_NLA_LINK_CONN_CNT, 3);
	mb_u8(&x, SMC_NLA_LINK_IB_PORT, 1);
	mb_u32(&x, SMC_NLA_LINK_NET_DEV, 1);
	mb_str(&x, SMC_NLA_LINK_IB_DEV, "sr_test");
	memcpy(&uid, "\x00\x00\x01\x01", 4);
	mb_u32(&x, SMC_NLA_LINK_UID, uid);
	memcpy(&uid, "\x00\x00\x47\x01", 4);
	mb_u32(&x, SMC_NLA_LINK_PEER_UID, uid);
	mb_str(&x, SMC_NLA_LINK_GID, "fe80:0000:0000:0000:0000:0000:0000:0001");
	mb_str(&x, SMC_NLA_LINK_PEER_GID, "fe80:0000:0000:0000:0000:0000:0000:0002");
	mb_end(&x);
	mb_finish(&x, &e);
	exp_lgr_r1(&e, 101);
	sfx_exp_done(&e, 101);
	CHECK_REPLY(&f, &e);
	smc_reply_free(&e);
	sfx_free(&f);
}

TEST(soft_lgr_smcd_bytes)
{
	const struct soft_dev *ism;
	struct smc_reply e;
	struct lgrs g;
	struct sfx f;
	struct mb m, x;

	sfx_init(&f, true);
	smc_reply_init(&e);
	make_lgrs(&f, &g);
	ism = soft_dev_ism(&f.st);
	sfx_req(&m, GEN, SMC_NETLINK_GET_LGR_SMCD, NLM_F_DUMP, 102);
	sfx_send(&f, &f.user, &m);
	sfx_exp_genl(&x, GEN, SMC_NETLINK_GET_LGR_SMCD, NLM_F_MULTI, 102);
	mb_nest(&x, SMC_GEN_LGR_SMCD);
	mb_u32(&x, SMC_NLA_LGR_D_ID, 0x300);
	mb_u64(&x, SMC_NLA_LGR_D_GID, ism->gid);
	mb_u64(&x, SMC_NLA_LGR_D_EXT_GID, ism->gid_ext);
	mb_u64(&x, SMC_NLA_LGR_D_PEER_GID, ism->gid);
	mb_u64(&x, SMC_NLA_LGR_D_PEER_EXT_GID, ism->gid_ext);
	mb_u8(&x, SMC_NLA_LGR_D_VLAN_ID, 0);
	mb_u32(&x, SMC_NLA_LGR_D_CONNS_NUM, 2);
	mb_u32(&x, SMC_NLA_LGR_D_CHID, 0xff01);              /* u32 on the wire */
	mb_u32(&x, SMC_NLA_LGR_D_SNDBUF_ALLOC, 16384);
	mb_u32(&x, SMC_NLA_LGR_D_DMB_ALLOC, 65568);
	mb_str(&x, SMC_NLA_LGR_D_PNETID, "");
	exp_v2_common(&x, SMC_NLA_LGR_D_V2_COMMON, "vm", "SOME-EID");
	mb_end(&x);
	mb_finish(&x, &e);
	sfx_exp_done(&e, 102);
	CHECK_REPLY(&f, &e);
	smc_reply_free(&e);
	sfx_free(&f);
}

TEST(soft_lgr_device_counts)
{
	struct soft_dev *roce, *ism;
	struct lgrs g;
	struct sfx f;

	sfx_init(&f, true);
	roce = soft_dev_find_roce(&f.st, "sr_test");
	ism = soft_dev_ism(&f.st);
	CHECK_INT(soft_lgr_count_on(&f.st, ism), 0);
	CHECK(!soft_lgr_dev_critical(&f.st, roce));
	make_lgrs(&f, &g);
	CHECK_INT(soft_lgr_count_on(&f.st, ism), 1);
	CHECK_INT(soft_lgr_links_on(&f.st, roce, 1), 2);
	CHECK_INT(soft_lgr_links_on(&f.st, roce, 2), 0);
	CHECK(soft_lgr_dev_critical(&f.st, roce));
	g.r2->type = SOFT_LGR_SYMMETRIC;
	CHECK(!soft_lgr_dev_critical(&f.st, roce));
	/* a freed slot is reused; its link id is the next free one */
	g.l1->state = SOFT_LNK_UNUSED;
	CHECK(soft_lgr_link_add(g.r2, roce, 1) == g.l1);
	CHECK_INT(g.l1->link_id, 3);
	CHECK(soft_lgr_link_add(g.r2, roce, 1) != NULL);
	CHECK(soft_lgr_link_add(g.r2, roce, 1) == NULL);     /* three links at most */
	soft_lgr_del(&f.st, g.d);
	CHECK_INT(soft_lgr_count_on(&f.st, ism), 0);
	CHECK(soft_lgr_first(&f.st) == g.r2);
	soft_lgr_del(&f.st, g.r2);
	CHECK(soft_lgr_first(&f.st) == g.r1);
	CHECK_INT(soft_lgr_id(soft_lgr_new(&f.st, false)), 0x400);
	sfx_free(&f);
}

/* What smcd/smcr print from the daemon's reply. */
static const char *print(struct sfx *f, bool smcd, int level, bool links)
{
	static char text[4096];
	struct smc_lg_args a = { .links = links };
	struct capture out, err;
	struct smc_reply rep;
	struct smc_ctx ctx;
	struct mb m;

	cap_open(&out);
	cap_open(&err);
	ctx = (struct smc_ctx){ .prog = smcd ? "smcd" : "smcr", .smcd = smcd, .level = level,
				.out = out.f, .err = err.f };
	sfx_req(&m, GEN, smc_linkgroup_request(&ctx, &a), NLM_F_DUMP, 5);
	sfx_send(f, &f->user, &m);
	smc_reply_init(&rep);
	for (int i = 0; i < sfx_count(f) - 1; i++)          /* all but DONE */
		smc_reply_append(&rep, sfx_msg(f, i), sfx_msg(f, i)->nlmsg_len);
	CHECK_INT(smc_linkgroup_print(&ctx, &a, &rep), 0);
	snprintf(text, sizeof(text), "%s%s", cap_text(&out), cap_text(&err));
	smc_reply_free(&rep);
	cap_free(&out);
	cap_free(&err);
	return text;
}

TEST(soft_lgr_as_the_tools_print_it)
{
	const struct soft_dev *ism;
	char gids[128], block[512];
	struct lgrs g;
	struct sfx f;

	sfx_init(&f, true);
	make_lgrs(&f, &g);
	ism = soft_dev_ism(&f.st);
	CHECK(ism->gid_ext != 0);
	CHECK_STR(print(&f, false, 0, false),
		  "LG-ID    LG-Role  LG-Type  VLAN  #Conns  PNET-ID \n"
		  "00000100 SERV     SINGLE      0       3  NET1             \n"
		  "00000200 CLNT     SYM       0x5       0                   \n");
	CHECK_STR(print(&f, false, 2, true),
		  "LG-ID    LG-Role  LG-Type  Net-Dev         Link-State      #Conns  Link-UID  "
		  "Peer-UID  IB-Dev    IB-P  Local-GID                                 Peer-GID  \n"
		  "00000100 SERV     SINGLE   lo              LINK_ACTIVE          3  00000101  "
		  "00004701  sr_test      1  fe80:0000:0000:0000:0000:0000:0000:0001   "
		  "fe80:0000:0000:0000:0000:0000:0000:0002  \n");
	CHECK_STR(print(&f, true, 0, false),
		  "LG-ID    VLAN  #Conns  PNET-ID \n"
		  "00000300    0       2                   \n");
	/* the soft ISM device's 128-bit GID, its own and (one host) its peer's */
	snprintf(gids, sizeof(gids), "GID      : %016llx%016llx\nPeer-GID : %016llx%016llx\n",
		 (unsigned long long)ism->gid, (unsigned long long)ism->gid_ext,
		 (unsigned long long)ism->gid, (unsigned long long)ism->gid_ext);
	snprintf(block, sizeof(block),
		  "LG-ID    : 00000300\n"
		  "VLAN     : 0\n"
		  "PNET-ID  : \n"
		  "%s"
		  "Version  : 2\n"
		  "Peer-Rel : 1\n"
		  "Peer-Host: vm\n"
		  "Peer-OS  : LINUX\n"
		  "EID      : SOME-EID                        \n"
		  "#Conns   : 2\n"
		  "Sndbuf   : 16384 B\n"
		  "DMB      : 65568 B\n", gids);
	CHECK_STR(print(&f, true, 1, false), block);
	sfx_free(&f);
}
