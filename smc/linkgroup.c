/*
 * smcd linkgroup [show] [all | LG-ID]
 * smcr linkgroup [show | link-show] [all | LG-ID] [ibdev <dev>] [netdev <dev>]
 * (smcd(8), smcr(8)): SMC-R and SMC-D link groups, and the links of SMC-R ones.
 *
 * JSON (-j) is one document with every field at every -d level, keys named
 * after the uapi attributes (doc/json-schema/):
 *   smcr show       {"linkgroups":[{LGR_R}]}
 *   smcr link-show  {"links":[{LGR_R, LINK}]}    one entry per link
 *   smcd            {"linkgroups":[{LGR_D}]}
 * LGR_R = "lgr_id":N (hex in text), "role":"CLNT"|"SERV",
 *         "type":"SINGLE".., "vlan_id":N, "pnet_id":".."|null, "version":N (1 without
 *         the V2_COMMON nest), V2, "conns":N, "sndbuf_alloc":N, "rmb_alloc":N
 * LGR_D = "lgr_id", "vlan_id", "pnet_id", GIDS, "version", V2 minus "direct",
 *         "conns", "sndbuf_alloc", "dmb_alloc":N
 * GIDS  = each only when the kernel sent it: "gid":N, "gid_ext":N (v6.8),
 *         "peer_gid":N, "peer_gid_ext":N; the text (-d) shows a GID as 16
 *         hex digits, 32 when its extension (the second half of the 128-bit
 *         GID of a loopback or virtual ISM device) is not 0
 * V2    = only when the kernel sent V2_COMMON: "peer_release":N, "peer_host":"..",
 *         "peer_os":"ZOS".., "direct":bool (SMC-R), "eid":".."|null (trimmed)
 *         SMC-R, only when the kernel sent them (SMC-Rv2.1 limits, v6.6):
 *         "max_conns":N, "max_links":N
 * LINK  = "net_dev":"eth0"|null (ifindex 0), "link_state":"LINK_ACTIVE",
 *         "conn_cnt":N, "link_uid":"00000101", "peer_uid":".." (4 bytes in
 *         hex, as the uapi sends them), "ib_dev":"..",
 *         "ib_port":N, "gid":"..", "peer_gid":".."
 * No link groups: {"linkgroups":[]} (text mode prints nothing at all).
 *
 * Upstream bugs fixed here (the man pages list them):
 *  - a 16-character PNET ID keeps all 16 characters (17-byte buffer).
 *  - smcr "show netdev X" / "show ibdev X" really filter: the links are
 *      dumped as well and a link group is shown when one of its links matches.
 *      (Kept as documented: LG-ID masked with 0xFFFFFF00 for SMC-R, exact for
 *      SMC-D; "a"/"al" mean "all"; LG-IDs parsed by strtol base 16.)
 *  - attributes the kernel did not send read as 0 / empty, never as the
 *      previous link group's values or uninitialised memory.
 */
#include "linkgroup.h"
#include "names.h"
#include "smc_uapi.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

#define LGID_MASK    0xFFFFFF00u  /* SMC-R: the low byte is a link id */
#define LGID_INVALID 0xFFFFFFFFu  /* an LG-ID without any hex digit */

/* Highest attribute this file knows in each nest (never the system header's MAX). */
#define LGR_V2_MAX   SMC_NLA_LGR_V2_PEER_HOST
#define LINK_MAX     SMC_NLA_LINK_STATE
#define GID_LEN      40           /* 39 characters and NUL, as upstream keeps it */

/* ---- what the kernel sent --------------------------------------------- */

struct smc_lgr {
	uint32_t id, conns;
	uint8_t role, type, vlan;
	char pnetid[SMC_MAX_PNETID_LEN + 1];       /* 17 bytes: all 16 characters kept */
	uint64_t sndbuf, rmb;                      /* rmb: DMBs for SMC-D */
	bool v2;                                   /* V2_COMMON nest received */
	uint8_t ver, rel, os, direct;
	bool has_max_conns, has_max_links;         /* LGR_R_V2 limits received (v6.6) */
	uint8_t max_conns, max_links;
	bool has_gid, has_gid_ext, has_peer_gid, has_peer_gid_ext;   /* SMC-D */
	uint64_t gid, gid_ext, peer_gid, peer_gid_ext;
	char eid[SMC_MAX_EID_LEN_ + 1];
	char peer_host[SMC_MAX_EID_LEN_ + 1];
};

struct smc_link {
	uint32_t state, conns;
	uint8_t uid[4], peer_uid[4];               /* raw bytes, printed in memory order */
	uint8_t ib_port;
	char net_dev[IF_NAMESIZE];
	char ib_dev[64];
	char gid[GID_LEN], peer_gid[GID_LEN];
};

/* SNDBUF/RMB/DMB_ALLOC are "uint" (4 or 8 bytes): no policy, smc_nla_get_uint. */
static const struct nla_policy lgr_r_policy[SMCT_LGR_R_MAX + 1] = {
	[SMC_NLA_LGR_R_ID] = { .type = NLA_U32 },
	[SMC_NLA_LGR_R_ROLE] = { .type = NLA_U8 },
	[SMC_NLA_LGR_R_TYPE] = { .type = NLA_U8 },
	[SMC_NLA_LGR_R_PNETID] = { .type = NLA_NUL_STRING, .maxlen = SMC_MAX_PNETID_LEN + 1 },
	[SMC_NLA_LGR_R_VLAN_ID] = { .type = NLA_U8 },
	[SMC_NLA_LGR_R_CONNS_NUM] = { .type = NLA_U32 },
	[SMC_NLA_LGR_R_V2_COMMON] = { .type = NLA_NESTED },
	[SMC_NLA_LGR_R_V2] = { .type = NLA_NESTED },
};

static const struct nla_policy lgr_d_policy[SMCT_LGR_D_MAX + 1] = {
	[SMC_NLA_LGR_D_ID] = { .type = NLA_U32 },
	[SMC_NLA_LGR_D_GID] = { .type = NLA_U64 },
	[SMC_NLA_LGR_D_PEER_GID] = { .type = NLA_U64 },
	[SMC_NLA_LGR_D_EXT_GID] = { .type = NLA_U64 },
	[SMC_NLA_LGR_D_PEER_EXT_GID] = { .type = NLA_U64 },
	[SMC_NLA_LGR_D_VLAN_ID] = { .type = NLA_U8 },
	[SMC_NLA_LGR_D_CONNS_NUM] = { .type = NLA_U32 },
	[SMC_NLA_LGR_D_PNETID] = { .type = NLA_NUL_STRING, .maxlen = SMC_MAX_PNETID_LEN + 1 },
	[SMC_NLA_LGR_D_V2_COMMON] = { .type = NLA_NESTED },
};

/* The V2_COMMON nest numbers its attributes from 0 (SMC_NLA_LGR_V2_VER). */
static const struct nla_policy lgr_v2_policy[LGR_V2_MAX + 1] = {
	[SMC_NLA_LGR_V2_VER] = { .type = NLA_U8 },
	[SMC_NLA_LGR_V2_REL] = { .type = NLA_U8 },
	[SMC_NLA_LGR_V2_OS] = { .type = NLA_U8 },
	[SMC_NLA_LGR_V2_NEG_EID] = { .type = NLA_NUL_STRING },
	[SMC_NLA_LGR_V2_PEER_HOST] = { .type = NLA_NUL_STRING },
};

static const struct nla_policy lgr_r_v2_policy[SMCT_LGR_R_V2_MAX + 1] = {
	[SMC_NLA_LGR_R_V2_DIRECT] = { .type = NLA_U8 },
	[SMC_NLA_LGR_R_V2_MAX_CONNS] = { .type = NLA_U8 },
	[SMC_NLA_LGR_R_V2_MAX_LINKS] = { .type = NLA_U8 },
};

static const struct nla_policy link_policy[LINK_MAX + 1] = {
	[SMC_NLA_LINK_ID] = { .type = NLA_U8 },
	[SMC_NLA_LINK_IB_DEV] = { .type = NLA_NUL_STRING, .maxlen = 64 + 1 },
	[SMC_NLA_LINK_IB_PORT] = { .type = NLA_U8 },
	[SMC_NLA_LINK_GID] = { .type = NLA_NUL_STRING, .maxlen = GID_LEN + 1 },
	[SMC_NLA_LINK_PEER_GID] = { .type = NLA_NUL_STRING, .maxlen = GID_LEN + 1 },
	[SMC_NLA_LINK_CONN_CNT] = { .type = NLA_U32 },
	[SMC_NLA_LINK_NET_DEV] = { .type = NLA_U32 },
	[SMC_NLA_LINK_UID] = { .type = NLA_U32 },
	[SMC_NLA_LINK_PEER_UID] = { .type = NLA_U32 },
	[SMC_NLA_LINK_STATE] = { .type = NLA_U32 },
};

static void get_raw4(uint8_t out[4], const struct nlattr *a)
{
	memset(out, 0, 4);
	if (smc_attr_has(a, 4))
		memcpy(out, nla_data(a), 4);
}

/* An 8-byte attribute: true and its value, false when it was not sent. */
static bool get_u64(const struct nlattr *a, uint64_t *v)
{
	*v = 0;
	if (!smc_attr_has(a, 8))
		return false;
	memcpy(v, nla_data(a), 8);
	return true;
}

/* ---- one run of the command ------------------------------------------- */

struct lg_run {
	struct smc_run run;
	const struct smc_lg_args *a;
	bool blocks;               /* detail blocks instead of a table */
	bool link_filter;          /* smcr show with netdev/ibdev: dump links too */
	unsigned int shown;        /* entries printed */
	struct smc_lgr lgr;        /* the last link-group message (SMC-R) */
	bool lgr_shown;            /* ... already printed for one of its links */
};

static int parse_v2_common(struct lg_run *r, struct nlattr *nest, struct smc_lgr *g)
{
	struct nlattr *a[LGR_V2_MAX + 1];

	if (nla_parse_nested(a, LGR_V2_MAX, nest, lgr_v2_policy) < 0)
		return smc_run_nest_error(&r->run, "smc_gen_lgr_v2_sock_policy");
	g->v2 = true;
	g->ver = smc_attr_u8(a[SMC_NLA_LGR_V2_VER]);
	g->rel = smc_attr_u8(a[SMC_NLA_LGR_V2_REL]);
	g->os = smc_attr_u8(a[SMC_NLA_LGR_V2_OS]);
	smc_attr_str(g->eid, sizeof(g->eid), a[SMC_NLA_LGR_V2_NEG_EID]);
	smc_attr_str(g->peer_host, sizeof(g->peer_host), a[SMC_NLA_LGR_V2_PEER_HOST]);
	return 0;
}

static int parse_r_v2(struct lg_run *r, struct nlattr *nest, struct smc_lgr *g)
{
	struct nlattr *a[SMCT_LGR_R_V2_MAX + 1];

	if (nla_parse_nested(a, SMCT_LGR_R_V2_MAX, nest, lgr_r_v2_policy) < 0)
		return smc_run_nest_error(&r->run, "smc_gen_lgr_r_v2_sock_policy");
	g->direct = smc_attr_u8(a[SMC_NLA_LGR_R_V2_DIRECT]);
	g->has_max_conns = a[SMC_NLA_LGR_R_V2_MAX_CONNS] != NULL;
	g->max_conns = smc_attr_u8(a[SMC_NLA_LGR_R_V2_MAX_CONNS]);
	g->has_max_links = a[SMC_NLA_LGR_R_V2_MAX_LINKS] != NULL;
	g->max_links = smc_attr_u8(a[SMC_NLA_LGR_R_V2_MAX_LINKS]);
	return 0;
}

static int parse_lgr_r(struct lg_run *r, struct nlattr *nest, struct smc_lgr *g)
{
	struct nlattr *a[SMCT_LGR_R_MAX + 1];
	int rc = 0;

	memset(g, 0, sizeof(*g));
	if (nla_parse_nested(a, SMCT_LGR_R_MAX, nest, lgr_r_policy) < 0)
		return smc_run_nest_error(&r->run, "smc_gen_lgr_smcr_sock_policy");
	g->id = smc_attr_u32(a[SMC_NLA_LGR_R_ID]);
	g->role = smc_attr_u8(a[SMC_NLA_LGR_R_ROLE]);
	g->type = smc_attr_u8(a[SMC_NLA_LGR_R_TYPE]);
	g->vlan = smc_attr_u8(a[SMC_NLA_LGR_R_VLAN_ID]);
	g->conns = smc_attr_u32(a[SMC_NLA_LGR_R_CONNS_NUM]);
	smc_attr_str(g->pnetid, sizeof(g->pnetid), a[SMC_NLA_LGR_R_PNETID]);
	g->sndbuf = smc_attr_uint(a[SMC_NLA_LGR_R_SNDBUF_ALLOC]);
	g->rmb = smc_attr_uint(a[SMC_NLA_LGR_R_RMB_ALLOC]);
	if (a[SMC_NLA_LGR_R_V2_COMMON])
		rc = parse_v2_common(r, a[SMC_NLA_LGR_R_V2_COMMON], g);
	if (!rc && a[SMC_NLA_LGR_R_V2])
		rc = parse_r_v2(r, a[SMC_NLA_LGR_R_V2], g);
	return rc;
}

static int parse_lgr_d(struct lg_run *r, struct nlattr *nest, struct smc_lgr *g)
{
	struct nlattr *a[SMCT_LGR_D_MAX + 1];

	memset(g, 0, sizeof(*g));
	if (nla_parse_nested(a, SMCT_LGR_D_MAX, nest, lgr_d_policy) < 0)
		return smc_run_nest_error(&r->run, "smc_gen_lgr_smcd_sock_policy");
	g->id = smc_attr_u32(a[SMC_NLA_LGR_D_ID]);
	g->vlan = smc_attr_u8(a[SMC_NLA_LGR_D_VLAN_ID]);
	g->conns = smc_attr_u32(a[SMC_NLA_LGR_D_CONNS_NUM]);
	smc_attr_str(g->pnetid, sizeof(g->pnetid), a[SMC_NLA_LGR_D_PNETID]);
	g->sndbuf = smc_attr_uint(a[SMC_NLA_LGR_D_SNDBUF_ALLOC]);
	g->rmb = smc_attr_uint(a[SMC_NLA_LGR_D_DMB_ALLOC]);
	g->has_gid = get_u64(a[SMC_NLA_LGR_D_GID], &g->gid);
	g->has_gid_ext = get_u64(a[SMC_NLA_LGR_D_EXT_GID], &g->gid_ext);
	g->has_peer_gid = get_u64(a[SMC_NLA_LGR_D_PEER_GID], &g->peer_gid);
	g->has_peer_gid_ext = get_u64(a[SMC_NLA_LGR_D_PEER_EXT_GID], &g->peer_gid_ext);
	if (a[SMC_NLA_LGR_D_V2_COMMON])
		return parse_v2_common(r, a[SMC_NLA_LGR_D_V2_COMMON], g);
	return 0;
}

static int parse_link(struct lg_run *r, struct nlattr *nest, struct smc_link *l)
{
	struct nlattr *a[LINK_MAX + 1];

	memset(l, 0, sizeof(*l));
	if (nla_parse_nested(a, LINK_MAX, nest, link_policy) < 0)
		return smc_run_nest_error(&r->run, "smc_gen_link_smcr_sock_policy");
	l->state = smc_attr_u32(a[SMC_NLA_LINK_STATE]);
	l->conns = smc_attr_u32(a[SMC_NLA_LINK_CONN_CNT]);
	get_raw4(l->uid, a[SMC_NLA_LINK_UID]);
	get_raw4(l->peer_uid, a[SMC_NLA_LINK_PEER_UID]);
	l->ib_port = smc_attr_u8(a[SMC_NLA_LINK_IB_PORT]);
	smc_nla_ifname(l->net_dev, a[SMC_NLA_LINK_NET_DEV]);
	smc_attr_str(l->ib_dev, sizeof(l->ib_dev), a[SMC_NLA_LINK_IB_DEV]);
	smc_attr_str(l->gid, sizeof(l->gid), a[SMC_NLA_LINK_GID]);
	smc_attr_str(l->peer_gid, sizeof(l->peer_gid), a[SMC_NLA_LINK_PEER_GID]);
	return 0;
}

/* ---- values as printed ------------------------------------------------- */

#define V2     SMC_COL_V2
#define MAXC   SMC_COL_OPT1          /* only with SMC_NLA_LGR_R_V2_MAX_CONNS */
#define MAXL   SMC_COL_OPT2          /* only with SMC_NLA_LGR_R_V2_MAX_LINKS */
#define DGID   SMC_COL_OPT1          /* only with SMC_NLA_LGR_D_GID */
#define DGIDX  SMC_COL_OPT2          /* only with SMC_NLA_LGR_D_EXT_GID */
#define DPGID  SMC_COL_OPT3          /* only with SMC_NLA_LGR_D_PEER_GID */
#define DPGIDX SMC_COL_OPT4          /* only with SMC_NLA_LGR_D_PEER_EXT_GID */

/* An SMC-D GID: 16 hex digits, and its extension's 16 after them when it is not 0. */
static void gid_text(char out[33], uint64_t gid, uint64_t ext)
{
	if (ext)
		snprintf(out, 33, "%016llx%016llx", (unsigned long long)gid,
			 (unsigned long long)ext);
	else
		snprintf(out, 33, "%016llx", (unsigned long long)gid);
}

/* The columns of data the kernel did not send. */
static unsigned int hidden(const struct smc_lgr *g, bool smcd)
{
	unsigned int h = g->v2 ? 0 : V2;

	if (smcd)
		return h | (g->has_gid ? 0 : DGID) | (g->has_gid_ext ? 0 : DGIDX) |
		       (g->has_peer_gid ? 0 : DPGID) | (g->has_peer_gid_ext ? 0 : DPGIDX);
	return h | (g->has_max_conns ? 0 : MAXC) | (g->has_max_links ? 0 : MAXL);
}

enum lg_field {
	F_ID, F_ROLE, F_TYPE, F_VLAN, F_PNETID,
	F_D_GID, F_D_GID_NUM, F_D_GID_EXT, F_D_PEER_GID, F_D_PEER_GID_NUM, F_D_PEER_GID_EXT,
	F_VERSION, F_PEER_REL, F_PEER_HOST, F_PEER_OS, F_DIRECT, F_EID, F_EID_JSON,
	F_MAX_CONNS, F_MAX_LINKS, F_CONNS, F_SNDBUF, F_RMB,
	F_NETDEV, F_STATE, F_LINK_CONNS, F_UID, F_PEER_UID, F_IBDEV, F_IBPORT,
	F_GID, F_PEER_GID,
	F_COUNT
};
#define F_FIRST_LINK F_NETDEV

/* The printable values of one link group (and link); strings point into it or the source. */
struct view {
	struct smc_val v[F_COUNT];
	unsigned int hide;         /* columns of data the kernel did not send */
	char uid[9], peer_uid[9];
	char type[SMC_NAME_BUF], os[SMC_NAME_BUF], state[SMC_NAME_BUF];
	char pnetid[SMC_MAX_PNETID_LEN + 1], peer_host[SMC_MAX_EID_LEN_ + 1];
	char eid[SMC_MAX_EID_LEN_ + 1];
	char gid[33], peer_gid[33];
};

static void view_lgr(struct view *w, const struct smc_lgr *g, bool smcd)
{
	memset(w, 0, sizeof(*w));
	memcpy(w->pnetid, g->pnetid, sizeof(w->pnetid));
	memcpy(w->peer_host, g->peer_host, sizeof(w->peer_host));
	memcpy(w->eid, g->eid, sizeof(w->eid));
	w->hide = hidden(g, smcd);
	gid_text(w->gid, g->gid, g->gid_ext);
	gid_text(w->peer_gid, g->peer_gid, g->peer_gid_ext);
	w->v[F_ID] = smc_num(g->id);
	w->v[F_ROLE] = smc_str(smc_role_name(g->role));
	w->v[F_TYPE] = smc_str(smc_lgr_type_name(g->type, w->type));
	w->v[F_VLAN] = smc_num(g->vlan);
	w->v[F_PNETID] = smc_str_or_none(smc_trim(w->pnetid));
	w->v[F_VERSION] = smc_num(g->v2 ? g->ver : 1);
	w->v[F_PEER_REL] = smc_num(g->rel);
	w->v[F_PEER_HOST] = smc_str(smc_trim(w->peer_host));
	w->v[F_PEER_OS] = smc_str(smc_peer_os_name(g->os, w->os));
	w->v[F_DIRECT] = smc_bool(g->direct);
	w->v[F_MAX_CONNS] = smc_num(g->max_conns);
	w->v[F_MAX_LINKS] = smc_num(g->max_links);
	w->v[F_D_GID] = smc_str(w->gid);
	w->v[F_D_GID_NUM] = smc_num(g->gid);
	w->v[F_D_GID_EXT] = smc_num(g->gid_ext);
	w->v[F_D_PEER_GID] = smc_str(w->peer_gid);
	w->v[F_D_PEER_GID_NUM] = smc_num(g->peer_gid);
	w->v[F_D_PEER_GID_EXT] = smc_num(g->peer_gid_ext);
	w->v[F_EID] = smc_str(g->eid);              /* text: blank-padded, as upstream */
	w->v[F_EID_JSON] = smc_str_or_none(smc_trim(w->eid));
	w->v[F_CONNS] = smc_num(g->conns);
	w->v[F_SNDBUF] = smc_num(g->sndbuf);
	w->v[F_RMB] = smc_num(g->rmb);
}

static void hex4(char out[9], const uint8_t b[4])
{
	snprintf(out, 9, "%02x%02x%02x%02x", b[0], b[1], b[2], b[3]);
}

static void view_link(struct view *w, const struct smc_link *l)
{
	hex4(w->uid, l->uid);
	hex4(w->peer_uid, l->peer_uid);
	w->v[F_NETDEV] = smc_str_or_none(l->net_dev);
	w->v[F_STATE] = smc_str(smc_link_state_name(l->state, w->state));
	w->v[F_LINK_CONNS] = smc_num(l->conns);
	w->v[F_UID] = smc_str(w->uid);
	w->v[F_PEER_UID] = smc_str(w->peer_uid);
	w->v[F_IBDEV] = smc_str(l->ib_dev);
	w->v[F_IBPORT] = smc_num(l->ib_port);
	w->v[F_GID] = smc_str(l->gid);
	w->v[F_PEER_GID] = smc_str(l->peer_gid);
}

/* ---- listings: header cell, text format and JSON key side by side ----- */

static const struct smc_col smcr_table[] = {
	{ "lgr_id", "LG-ID    ", "%08llx ", F_ID, 0, 0, NULL },
	{ "role", "LG-Role  ", "%-8s ", F_ROLE, 0, 0, NULL },
	{ "type", "LG-Type  ", "%-8s ", F_TYPE, 0, 0, NULL },
	{ "vlan_id", "VLAN  ", "%#4llx ", F_VLAN, 0, 0, NULL },
	{ "conns", "#Conns  ", " %6llu ", F_CONNS, 0, 0, NULL },
	{ "pnet_id", "PNET-ID ", " %-16s ", F_PNETID, 0, 0, NULL },
};

static const struct smc_col smcr_links[] = {
	{ "lgr_id", "LG-ID    ", "%08llx ", F_ID, 0, 0, NULL },
	{ "role", "LG-Role  ", "%-8s ", F_ROLE, 0, 0, NULL },
	{ "type", "LG-Type  ", "%-8s ", F_TYPE, 0, 0, NULL },
	{ "net_dev", "Net-Dev         ", "%-15.15s ", F_NETDEV, 0, 0, NULL },
	{ "link_state", "Link-State      ", "%-15s ", F_STATE, 0, 0, NULL },
	{ "conn_cnt", "#Conns  ", "%6llu  ", F_LINK_CONNS, 0, 0, NULL },
	{ "link_uid", "Link-UID  ", "%s  ", F_UID, 1, 0, NULL },
	{ "peer_uid", "Peer-UID  ", "%s  ", F_PEER_UID, 1, 0, NULL },
	{ "ib_dev", "IB-Dev    ", "%-8.8s  ", F_IBDEV, 1, 0, NULL },
	{ "ib_port", "IB-P  ", "%4llu  ", F_IBPORT, 1, 0, NULL },
	{ "gid", "Local-GID                                 ", "%-40s  ", F_GID, 2, 0, NULL },
	{ "peer_gid", "Peer-GID  ", "%s  ", F_PEER_GID, 2, 0, NULL },
};

static const struct smc_col smcr_block[] = {
	{ "lgr_id", NULL, "LG-ID    : %08llx\n", F_ID, 0, 0, NULL },
	{ "role", NULL, "LG-Role  : %s\n", F_ROLE, 0, 0, NULL },
	{ "type", NULL, "LG-Type  : %s\n", F_TYPE, 0, 0, NULL },
	{ "vlan_id", NULL, "VLAN     : %llx\n", F_VLAN, 0, 0, NULL },
	{ "pnet_id", NULL, "PNET-ID  : %s\n", F_PNETID, 0, 0, NULL },
	{ "version", NULL, "Version  : %llu\n", F_VERSION, 0, 0, NULL },
	{ "peer_release", NULL, "Peer-Rel : %llu\n", F_PEER_REL, 0, V2, NULL },
	{ "peer_host", NULL, "Peer-Host: %s\n", F_PEER_HOST, 0, V2, NULL },
	{ "peer_os", NULL, "Peer-OS  : %s\n", F_PEER_OS, 0, V2, NULL },
	{ "direct", NULL, "Direct   : %s\n", F_DIRECT, 0, V2, NULL },
	{ NULL, NULL, "EID      : %s\n", F_EID, 0, V2 | SMC_COL_TEXT, NULL },
	{ "eid", NULL, NULL, F_EID_JSON, 0, V2 | SMC_COL_JSON, NULL },
	{ "max_conns", NULL, "Max-Conns: %llu\n", F_MAX_CONNS, 0, MAXC, NULL },
	{ "max_links", NULL, "Max-Links: %llu\n", F_MAX_LINKS, 0, MAXL, NULL },
	{ "conns", NULL, "#Conns   : %llu\n", F_CONNS, 0, 0, NULL },
	{ "sndbuf_alloc", NULL, "Sndbuf   : %llu B\n", F_SNDBUF, 0, 0, NULL },
	{ "rmb_alloc", NULL, "RMB      : %llu B\n", F_RMB, 0, 0, NULL },
};

static const struct smc_col smcd_table[] = {
	{ "lgr_id", "LG-ID    ", "%08llx ", F_ID, 0, 0, NULL },
	{ "vlan_id", "VLAN  ", "%#4llx  ", F_VLAN, 0, 0, NULL },
	{ "conns", "#Conns  ", "%6llu  ", F_CONNS, 0, 0, NULL },
	{ "pnet_id", "PNET-ID ", "%-16s ", F_PNETID, 0, 0, NULL },
};

static const struct smc_col smcd_block[] = {
	{ "lgr_id", NULL, "LG-ID    : %08llx\n", F_ID, 0, 0, NULL },
	{ "vlan_id", NULL, "VLAN     : %llx\n", F_VLAN, 0, 0, NULL },
	{ "pnet_id", NULL, "PNET-ID  : %s\n", F_PNETID, 0, 0, NULL },
	{ NULL, NULL, "GID      : %s\n", F_D_GID, 0, DGID | SMC_COL_TEXT, NULL },
	{ "gid", NULL, NULL, F_D_GID_NUM, 0, DGID | SMC_COL_JSON, NULL },
	{ "gid_ext", NULL, NULL, F_D_GID_EXT, 0, DGIDX | SMC_COL_JSON, NULL },
	{ NULL, NULL, "Peer-GID : %s\n", F_D_PEER_GID, 0, DPGID | SMC_COL_TEXT, NULL },
	{ "peer_gid", NULL, NULL, F_D_PEER_GID_NUM, 0, DPGID | SMC_COL_JSON, NULL },
	{ "peer_gid_ext", NULL, NULL, F_D_PEER_GID_EXT, 0, DPGIDX | SMC_COL_JSON, NULL },
	{ "version", NULL, "Version  : %llu\n", F_VERSION, 0, 0, NULL },
	{ "peer_release", NULL, "Peer-Rel : %llu\n", F_PEER_REL, 0, V2, NULL },
	{ "peer_host", NULL, "Peer-Host: %s\n", F_PEER_HOST, 0, V2, NULL },
	{ "peer_os", NULL, "Peer-OS  : %s\n", F_PEER_OS, 0, V2, NULL },
	{ NULL, NULL, "EID      : %s\n", F_EID, 0, V2 | SMC_COL_TEXT, NULL },
	{ "eid", NULL, NULL, F_EID_JSON, 0, V2 | SMC_COL_JSON, NULL },
	{ "conns", NULL, "#Conns   : %llu\n", F_CONNS, 0, 0, NULL },
	{ "sndbuf_alloc", NULL, "Sndbuf   : %llu B\n", F_SNDBUF, 0, 0, NULL },
	{ "dmb_alloc", NULL, "DMB      : %llu B\n", F_RMB, 0, 0, NULL },
};

enum { L_TABLE, L_BLOCK, L_LINKS };

/* By personality (SMC-R, SMC-D); SMC-D has no links, link-show shows its table. */
static const struct smc_listing listings[2][3] = {
	{ SMC_LISTING(smcr_table), SMC_LISTING(smcr_block), SMC_LISTING(smcr_links) },
	{ SMC_LISTING(smcd_table), SMC_LISTING(smcd_block), SMC_LISTING(smcd_table) },
};

static void put_cols(struct lg_run *r, int which, const struct view *w, int first)
{
	smc_cols_put(&r->run.out, &listings[r->run.ctx->smcd][which], w->v, r->run.level,
		     w->hide, first);
}

/* ---- printing ---------------------------------------------------------- */

/* JSON has every field of a link group: the block layout, whatever the text shows. */
static void show_lgr(struct lg_run *r, const struct smc_lgr *g)
{
	struct smc_out *o = &r->run.out;
	bool block = r->blocks || out_is_json(o);
	struct view w;

	view_lgr(&w, g, r->run.ctx->smcd);
	if (block && r->shown)
		out_text(o, "\n");
	out_open_object(o, NULL);
	put_cols(r, block ? L_BLOCK : L_TABLE, &w, 0);
	out_close_object(o);
	if (!block)
		out_text(o, "\n");
	r->shown++;
}

/* A link: the text row of the links table; JSON: its link group's block, then the link. */
static void show_link(struct lg_run *r, const struct smc_lgr *g, const struct smc_link *l)
{
	struct smc_out *o = &r->run.out;
	bool json = out_is_json(o);
	struct view w;

	view_lgr(&w, g, r->run.ctx->smcd);
	view_link(&w, l);
	out_open_object(o, NULL);
	if (json)
		put_cols(r, L_BLOCK, &w, 0);
	put_cols(r, L_LINKS, &w, json ? F_FIRST_LINK : 0);
	out_close_object(o);
	out_text(o, "\n");
	r->shown++;
}

/* ---- filters and messages ---------------------------------------------- */

/* SMC-R: netdev, else ibdev (both need a link), else the masked LG-ID. */
static bool smcr_match(const struct smc_lg_args *a, const struct smc_lgr *g,
		       const struct smc_link *l)
{
	if (a->netdev[0])
		return l && !strncmp(a->netdev, l->net_dev, sizeof(a->netdev));
	if (a->ibdev[0])
		return l && !strncmp(a->ibdev, l->ib_dev, sizeof(a->ibdev));
	return !a->lgid || a->lgid_masked == g->id;
}

static int smcr_msg(struct lg_run *r, struct nlattr **tb)
{
	struct smc_link link;
	int rc;

	if (tb[SMC_GEN_LGR_SMCR]) {
		rc = parse_lgr_r(r, tb[SMC_GEN_LGR_SMCR], &r->lgr);
		if (rc)
			return rc;
		r->lgr_shown = false;
		if (!r->a->links && !r->link_filter && smcr_match(r->a, &r->lgr, NULL))
			show_lgr(r, &r->lgr);
		return 0;
	}
	rc = parse_link(r, tb[SMC_GEN_LINK_SMCR], &link);
	if (rc)
		return rc;
	if (r->a->links) {
		if (smcr_match(r->a, &r->lgr, &link))
			show_link(r, &r->lgr, &link);
	} else if (r->link_filter && !r->lgr_shown && smcr_match(r->a, &r->lgr, &link)) {
		show_lgr(r, &r->lgr);
		r->lgr_shown = true;
	}
	return 0;
}

static int smcd_msg(struct lg_run *r, struct nlattr *nest)
{
	struct smc_lgr g;
	int rc = parse_lgr_d(r, nest, &g);

	if (rc)
		return rc;
	if (!r->a->lgid || r->a->lgid == g.id)
		show_lgr(r, &g);
	return 0;
}

static int msg_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct nlattr *tb[SMC_RUN_GEN_MAX + 1];
	struct lg_run *r = arg;
	int rc = smc_run_msg(&r->run, nlh, tb);

	if (rc)
		return rc;
	if (!tb[SMC_GEN_LGR_SMCR] && !tb[SMC_GEN_LINK_SMCR] && !tb[SMC_GEN_LGR_SMCD])
		return 1;          /* upstream stops at such a message */
	if (r->run.ctx->smcd)
		return tb[SMC_GEN_LGR_SMCD] ? smcd_msg(r, tb[SMC_GEN_LGR_SMCD]) : 0;
	if (tb[SMC_GEN_LGR_SMCR] || tb[SMC_GEN_LINK_SMCR])
		return smcr_msg(r, tb);
	return 0;
}

/* ---- command line ------------------------------------------------------ */

static int usage(struct smc_ctx *ctx)
{
	if (ctx->smcd)
		fprintf(ctx->err, "Usage: smcd linkgroup [show] [all | LG-ID]\n");
	else
		fprintf(ctx->err,
			"Usage: smcr linkgroup [show | link-show] [all | LG-ID]\n"
			"                                         [ibdev <dev>]\n"
			"                                         [netdev <dev>]\n");
	return -1;
}

/* strtol base 16 as upstream: "12zz" is 0x12, "foo" 0xf, no hex digit matches nothing. */
static void parse_lgid(const char *w, struct smc_lg_args *a)
{
	char *end;
	long v = strtol(w, &end, 16);

	if (end == w) {
		a->lgid = LGID_INVALID;
		return;
	}
	a->lgid = (uint32_t)v;
	a->lgid_masked = a->lgid & LGID_MASK;
}

int smc_linkgroup_parse(struct smc_ctx *ctx, int argc, char **argv, struct smc_lg_args *a)
{
	enum { WANT_NONE, WANT_IBDEV, WANT_NETDEV } want = WANT_NONE;
	bool all = false;
	int i = 0;

	memset(a, 0, sizeof(*a));
	if ((argc == 1 && smc_prefix(argv[0], "help")) || argc > 4)
		return usage(ctx);
	if (argc > 0 && smc_prefix(argv[0], "show"))
		i = 1;
	else if (argc > 0 && smc_prefix(argv[0], "link-show")) {
		a->links = true;
		i = 1;
	}
	for (; i < argc; i++) {
		const char *w = argv[i];

		if (want == WANT_IBDEV) {
			smc_copy_cut(a->ibdev, sizeof(a->ibdev), w);
			break;
		}
		if (want == WANT_NETDEV) {
			smc_copy_cut(a->netdev, sizeof(a->netdev), w);
			break;
		}
		if (smc_prefix(w, "help"))
			return usage(ctx);
		if (smc_prefix(w, "all"))
			all = true;
		else if (!ctx->smcd && smc_prefix(w, "ibdev"))
			want = WANT_IBDEV;
		else if (!ctx->smcd && smc_prefix(w, "netdev"))
			want = WANT_NETDEV;
		else if (!all) {
			parse_lgid(w, a);
			break;
		} else
			return usage(ctx);
	}
	if (i + 1 < argc)              /* words after the one that ended parsing */
		return usage(ctx);
	return 0;
}

static bool wants_link_filter(const struct smc_ctx *ctx, const struct smc_lg_args *a)
{
	return !ctx->smcd && !a->links && (a->netdev[0] || a->ibdev[0]);
}

uint8_t smc_linkgroup_request(const struct smc_ctx *ctx, const struct smc_lg_args *a)
{
	if (ctx->smcd)
		return SMC_NETLINK_GET_LGR_SMCD;
	if (a->links || wants_link_filter(ctx, a))
		return SMC_NETLINK_GET_LINK_SMCR;
	return SMC_NETLINK_GET_LGR_SMCR;
}

/* Dump (rep NULL) or walk rep, printing as the messages come. */
static int run(struct smc_ctx *ctx, const struct smc_lg_args *a, const struct smc_reply *rep)
{
	bool link_rows = !ctx->smcd && a->links;
	struct lg_run r = {
		.a = a,
		.blocks = ctx->level >= 1 && (ctx->smcd || !a->links),
		.link_filter = wants_link_filter(ctx, a),
	};

	smc_run_init(&r.run, ctx, link_rows ? "links" : "linkgroups",
		     r.blocks ? NULL : &listings[ctx->smcd][link_rows ? L_LINKS : L_TABLE]);
	return smc_run_exec(&r.run, rep, smc_linkgroup_request(ctx, a), msg_cb, &r);
}

int smc_linkgroup_print(struct smc_ctx *ctx, const struct smc_lg_args *a,
			const struct smc_reply *rep)
{
	return run(ctx, a, rep);
}

int smc_linkgroup_cmd(struct smc_ctx *ctx, int argc, char **argv)
{
	struct smc_lg_args a;

	if (smc_linkgroup_parse(ctx, argc, argv, &a))
		return SMC_EXIT_FAIL;
	return run(ctx, &a, NULL);
}
