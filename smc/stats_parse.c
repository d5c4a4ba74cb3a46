/*
 * stats: parse SMC_NETLINK_GET_FBACK_STATS and SMC_NETLINK_GET_STATS replies
 * into struct smc_stats_data (the SMC_NLA_STATS_* attributes of
 * <linux/smc.h>, lib/smc_uapi.h, in the kernel's emission order).
 *
 * Like upstream, a message that fails validation prints one error line and
 * stops the rest of its reply (the callbacks return 1); what was parsed so
 * far is still shown.  Unlike upstream, a missing nest reads as zeros.
 */
#include "stats.h"
#include "smc_uapi.h"

#include <netlink/msg.h>

/* Top level of both replies: only the two statistics nests matter. */
static const struct nla_policy gen_policy[SMC_GEN_MAX + 1] = {
	[SMC_GEN_STATS] = { .type = NLA_NESTED },
	[SMC_GEN_FBACK_STATS] = { .type = NLA_NESTED },
};

static const struct nla_policy stats_policy[SMC_NLA_STATS_MAX + 1] = {
	[SMC_NLA_STATS_SMCD_TECH] = { .type = NLA_NESTED },
	[SMC_NLA_STATS_SMCR_TECH] = { .type = NLA_NESTED },
	[SMC_NLA_STATS_CLNT_HS_ERR_CNT] = { .type = NLA_U64 },
	[SMC_NLA_STATS_SRV_HS_ERR_CNT] = { .type = NLA_U64 },
};

static const struct nla_policy fback_policy[SMC_NLA_FBACK_STATS_MAX + 1] = {
	[SMC_NLA_FBACK_STATS_TYPE] = { .type = NLA_U8 },
	[SMC_NLA_FBACK_STATS_SRV_CNT] = { .type = NLA_U64 },
	[SMC_NLA_FBACK_STATS_CLNT_CNT] = { .type = NLA_U64 },
	[SMC_NLA_FBACK_STATS_RSN_CODE] = { .type = NLA_U32 },
	[SMC_NLA_FBACK_STATS_RSN_CNT] = { .type = NLA_U16 },
};

/* The usage attributes are "uint" (4 or 8 bytes): no policy, read by size. */
static const struct nla_policy tech_policy[SMCT_STATS_T_MAX + 1] = {
	[SMC_NLA_STATS_T_TX_RMB_SIZE] = { .type = NLA_NESTED },
	[SMC_NLA_STATS_T_RX_RMB_SIZE] = { .type = NLA_NESTED },
	[SMC_NLA_STATS_T_TXPLOAD_SIZE] = { .type = NLA_NESTED },
	[SMC_NLA_STATS_T_RXPLOAD_SIZE] = { .type = NLA_NESTED },
	[SMC_NLA_STATS_T_CLNT_V1_SUCC] = { .type = NLA_U64 },
	[SMC_NLA_STATS_T_CLNT_V2_SUCC] = { .type = NLA_U64 },
	[SMC_NLA_STATS_T_SRV_V1_SUCC] = { .type = NLA_U64 },
	[SMC_NLA_STATS_T_SRV_V2_SUCC] = { .type = NLA_U64 },
	[SMC_NLA_STATS_T_SENDPAGE_CNT] = { .type = NLA_U64 },
	[SMC_NLA_STATS_T_SPLICE_CNT] = { .type = NLA_U64 },
	[SMC_NLA_STATS_T_CORK_CNT] = { .type = NLA_U64 },
	[SMC_NLA_STATS_T_NDLY_CNT] = { .type = NLA_U64 },
	[SMC_NLA_STATS_T_URG_DATA_CNT] = { .type = NLA_U64 },
	[SMC_NLA_STATS_T_RX_BYTES] = { .type = NLA_U64 },
	[SMC_NLA_STATS_T_TX_BYTES] = { .type = NLA_U64 },
	[SMC_NLA_STATS_T_RX_CNT] = { .type = NLA_U64 },
	[SMC_NLA_STATS_T_TX_CNT] = { .type = NLA_U64 },
};

#define U64 { .type = NLA_U64 }
/* Buffer counters and size buckets: every attribute after PAD is a u64. */
static const struct nla_policy rmb_policy[SMC_NLA_STATS_RMB_MAX + 1] = {
	[1] = U64, [2] = U64, [3] = U64, [4] = U64, [5] = U64, [6] = U64, [7] = U64,
};
static const struct nla_policy pload_policy[SMC_NLA_STATS_PLOAD_MAX + 1] = {
	[1] = U64, [2] = U64, [3] = U64, [4] = U64, [5] = U64, [6] = U64, [7] = U64,
	[8] = U64, [9] = U64,
};

/* Technology attribute -> offset in the block, for the plain counters. */
static const struct { int attr; int off; bool uint; } tech_counters[] = {
	{ SMC_NLA_STATS_T_SRV_V1_SUCC, SMC_ST_SRV_V1, false },
	{ SMC_NLA_STATS_T_SRV_V2_SUCC, SMC_ST_SRV_V2, false },
	{ SMC_NLA_STATS_T_CLNT_V1_SUCC, SMC_ST_CLNT_V1, false },
	{ SMC_NLA_STATS_T_CLNT_V2_SUCC, SMC_ST_CLNT_V2, false },
	{ SMC_NLA_STATS_T_RX_BYTES, SMC_ST_RX_BYTES, false },
	{ SMC_NLA_STATS_T_TX_BYTES, SMC_ST_TX_BYTES, false },
	{ SMC_NLA_STATS_T_RX_CNT, SMC_ST_RX_CNT, false },
	{ SMC_NLA_STATS_T_TX_CNT, SMC_ST_TX_CNT, false },
	{ SMC_NLA_STATS_T_SENDPAGE_CNT, SMC_ST_SENDPAGE, false },
	{ SMC_NLA_STATS_T_SPLICE_CNT, SMC_ST_SPLICE, false },
	{ SMC_NLA_STATS_T_CORK_CNT, SMC_ST_CORK, false },
	{ SMC_NLA_STATS_T_NDLY_CNT, SMC_ST_NDLY, false },
	{ SMC_NLA_STATS_T_URG_DATA_CNT, SMC_ST_URG_DATA, false },
	{ SMC_NLA_STATS_T_RX_RMB_USAGE, SMC_ST_RX_RMBUSE, true },
	{ SMC_NLA_STATS_T_TX_RMB_USAGE, SMC_ST_TX_RMBUSE, true },
};

/* The nests of a technology block, in upstream's parse order. */
static const struct {
	int attr;
	int off;
	int max;
	const struct nla_policy *policy;
	const char *name;
} tech_nests[] = {
	{ SMC_NLA_STATS_T_TX_RMB_STATS, SMC_ST_RMB_TX, SMC_NLA_STATS_RMB_MAX, rmb_policy, "smc_gen_stats_rmb_policy" },
	{ SMC_NLA_STATS_T_RX_RMB_STATS, SMC_ST_RMB_RX, SMC_NLA_STATS_RMB_MAX, rmb_policy, "smc_gen_stats_rmb_policy" },
	{ SMC_NLA_STATS_T_TXPLOAD_SIZE, SMC_ST_TX_PD, SMC_NLA_STATS_PLOAD_MAX, pload_policy, "smc_gen_stats_pload_policy" },
	{ SMC_NLA_STATS_T_RXPLOAD_SIZE, SMC_ST_RX_PD, SMC_NLA_STATS_PLOAD_MAX, pload_policy, "smc_gen_stats_pload_policy" },
	{ SMC_NLA_STATS_T_TX_RMB_SIZE, SMC_ST_TX_RMBSIZE, SMC_NLA_STATS_PLOAD_MAX, pload_policy, "smc_gen_stats_pload_policy" },
	{ SMC_NLA_STATS_T_RX_RMB_SIZE, SMC_ST_RX_RMBSIZE, SMC_NLA_STATS_PLOAD_MAX, pload_policy, "smc_gen_stats_pload_policy" },
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* "smc: invalid data returned" and libnl's dump of the message. */
static void invalid_data(const struct nlmsghdr *nlh, FILE *err)
{
	struct nl_msg *msg;

	fprintf(err, "smc: invalid data returned\n");
	msg = nlmsg_convert((struct nlmsghdr *)nlh);
	if (msg) {
		nl_msg_dump(msg, err);
		nlmsg_free(msg);
	}
}

/* The top-level nest of type, NULL when absent; -1 when the message is invalid. */
static int top_nest(const struct nlmsghdr *nlh, int type, struct nlattr **nest, FILE *err)
{
	struct nlattr *tb[SMC_GEN_MAX + 1];

	if (genlmsg_parse((struct nlmsghdr *)nlh, 0, tb, SMC_GEN_MAX, gen_policy) < 0) {
		invalid_data(nlh, err);
		return -1;
	}
	*nest = tb[type];
	return 0;
}

/* Upstream appends to the first free slot; the last slot when all are taken. */
static struct smc_stats_rsn *free_slot(struct smc_stats_rsn *t)
{
	for (int k = 0; k < SMC_STATS_RSN_SLOTS; k++)
		if (t[k].code == 0)
			return &t[k];
	return &t[SMC_STATS_RSN_SLOTS - 1];
}

int smc_stats_fback_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct smc_stats_parse *p = arg;
	struct nlattr *tb[SMC_NLA_FBACK_STATS_MAX + 1];
	struct smc_stats_rsn *slot;
	struct nlattr *nest;

	if (top_nest(nlh, SMC_GEN_FBACK_STATS, &nest, p->err) || !nest)
		return 1;
	if (nla_parse_nested(tb, SMC_NLA_FBACK_STATS_MAX, nest, fback_policy)) {
		fprintf(p->err, "failed to parse nested attributes!\n");
		return 1;
	}
	/* The totals come with the first message only: both or none. */
	if (tb[SMC_NLA_FBACK_STATS_SRV_CNT]) {
		p->d->srv_fback = nla_get_u64(tb[SMC_NLA_FBACK_STATS_SRV_CNT]);
		p->d->clnt_fback = tb[SMC_NLA_FBACK_STATS_CLNT_CNT] ?
				   nla_get_u64(tb[SMC_NLA_FBACK_STATS_CLNT_CNT]) : 0;
	}
	if (!tb[SMC_NLA_FBACK_STATS_TYPE])
		return 0;
	slot = free_slot(nla_get_u8(tb[SMC_NLA_FBACK_STATS_TYPE]) ? p->d->srv : p->d->clnt);
	if (tb[SMC_NLA_FBACK_STATS_RSN_CODE])
		slot->code = (int)nla_get_u32(tb[SMC_NLA_FBACK_STATS_RSN_CODE]);
	if (tb[SMC_NLA_FBACK_STATS_RSN_CNT])
		slot->count = nla_get_u16(tb[SMC_NLA_FBACK_STATS_RSN_CNT]);
	return 0;
}

/* One bucket or buffer-counter nest: attribute k goes to base[k - 1]. */
static int parse_group(struct nlattr *nest, int max, const struct nla_policy *policy, uint64_t *base)
{
	struct nlattr *tb[SMC_NLA_STATS_PLOAD_MAX + 1];

	if (nla_parse_nested(tb, max, nest, policy))
		return -1;
	for (int k = 1; k <= max; k++)
		if (tb[k])
			base[k - 1] = nla_get_u64(tb[k]);
	return 0;
}

static int parse_tech(struct nlattr *nest, uint64_t *block, FILE *err)
{
	struct nlattr *tb[SMCT_STATS_T_MAX + 1];

	if (nla_parse_nested(tb, SMCT_STATS_T_MAX, nest, tech_policy)) {
		/* sic: upstream names the wrong policy here */
		fprintf(err, "Error: Failed to parse nested attributes: smc_gen_stats_fback_policy\n");
		return -1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(tech_counters); i++) {
		const struct nlattr *a = tb[tech_counters[i].attr];

		if (a)
			block[tech_counters[i].off] = tech_counters[i].uint ?
				smc_nla_get_uint(a) : nla_get_u64((struct nlattr *)a);
	}
	for (size_t i = 0; i < ARRAY_SIZE(tech_nests); i++) {
		struct nlattr *a = tb[tech_nests[i].attr];

		if (!a)
			continue;
		if (parse_group(a, tech_nests[i].max, tech_nests[i].policy,
				block + tech_nests[i].off)) {
			fprintf(err, "Error: Failed to parse nested attributes: %s\n",
				tech_nests[i].name);
			return -1;
		}
	}
	return 0;
}

int smc_stats_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct smc_stats_parse *p = arg;
	struct nlattr *tb[SMC_NLA_STATS_MAX + 1];
	uint64_t *cnt = p->d->cnt;
	struct nlattr *nest;
	int rc = 0;

	if (top_nest(nlh, SMC_GEN_STATS, &nest, p->err) || !nest)
		return 1;
	if (nla_parse_nested(tb, SMC_NLA_STATS_MAX, nest, stats_policy)) {
		fprintf(p->err, "failed to parse nested attributes!\n");
		return 1;
	}
	for (int i = 0; i < SMC_STATS_CNT; i++)
		cnt[i] = 0;
	if (tb[SMC_NLA_STATS_CLNT_HS_ERR_CNT])
		cnt[SMC_STATS_HS_CLNT] = nla_get_u64(tb[SMC_NLA_STATS_CLNT_HS_ERR_CNT]);
	if (tb[SMC_NLA_STATS_SRV_HS_ERR_CNT])
		cnt[SMC_STATS_HS_SRV] = nla_get_u64(tb[SMC_NLA_STATS_SRV_HS_ERR_CNT]);
	/* SMC-R first, then SMC-D; the SMC-D result decides, as upstream. */
	if (tb[SMC_NLA_STATS_SMCR_TECH])
		rc = parse_tech(tb[SMC_NLA_STATS_SMCR_TECH], cnt + SMC_STATS_TECH_R, p->err);
	if (tb[SMC_NLA_STATS_SMCD_TECH])
		rc = parse_tech(tb[SMC_NLA_STATS_SMCD_TECH], cnt + SMC_STATS_TECH_D, p->err);
	return rc ? 1 : 0;
}
