/*
 * GET_STATS and GET_FBACK_STATS from the caller's namespace counters, in the
 * kernel's emission order (smc_stats.c's smc_nl_get_stats() and
 * smc_nl_get_fback_stats(); attributes of <linux/smc.h>).  u64 values carry
 * no pad attribute, as on x86-64.
 */
#include "gen.h"
#include "stats.h"
#include "service.h"

#include <errno.h>
#include <stdlib.h>
#include <libmnl/libmnl.h>

/* smc_nl_fill_stats_rmb_data(): reuse first. */
static void put_rmb(struct nlmsghdr *nlh, uint16_t type, const struct soft_stats_rmbcnt *c)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, type);

	mnl_attr_put_u64(nlh, SMC_NLA_STATS_RMB_REUSE_CNT, c->reuse_cnt);
	mnl_attr_put_u64(nlh, SMC_NLA_STATS_RMB_SIZE_SM_PEER_CNT, c->buf_size_small_peer_cnt);
	mnl_attr_put_u64(nlh, SMC_NLA_STATS_RMB_SIZE_SM_CNT, c->buf_size_small_cnt);
	mnl_attr_put_u64(nlh, SMC_NLA_STATS_RMB_FULL_PEER_CNT, c->buf_full_peer_cnt);
	mnl_attr_put_u64(nlh, SMC_NLA_STATS_RMB_FULL_CNT, c->buf_full_cnt);
	mnl_attr_put_u64(nlh, SMC_NLA_STATS_RMB_ALLOC_CNT, c->alloc_cnt);
	mnl_attr_put_u64(nlh, SMC_NLA_STATS_RMB_DGRADE_CNT, c->dgrade_cnt);
	mnl_attr_nest_end(nlh, nest);
}

/* smc_nl_fill_stats_bufsize_data(): 8K .. G_1024K. */
static void put_sizes(struct nlmsghdr *nlh, uint16_t type, const struct soft_stats_memsize *m)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, type);

	for (int i = 0; i < SOFT_STATS_BUCKETS; i++)
		mnl_attr_put_u64(nlh, (uint16_t)(SMC_NLA_STATS_PLOAD_8K + i), m->buf[i]);
	mnl_attr_nest_end(nlh, nest);
}

/* smc_nl_fill_stats_tech_data() */
static void put_tech(struct nlmsghdr *nlh, uint16_t type, const struct soft_stats_tech *t)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, type);

	put_rmb(nlh, SMC_NLA_STATS_T_TX_RMB_STATS, &t->rmb_tx);
	put_rmb(nlh, SMC_NLA_STATS_T_RX_RMB_STATS, &t->rmb_rx);
	put_sizes(nlh, SMC_NLA_STATS_T_TXPLOAD_SIZE, &t->tx_pd);
	put_sizes(nlh, SMC_NLA_STATS_T_RXPLOAD_SIZE, &t->rx_pd);
	put_sizes(nlh, SMC_NLA_STATS_T_TX_RMB_SIZE, &t->tx_rmbsize);
	put_sizes(nlh, SMC_NLA_STATS_T_RX_RMB_SIZE, &t->rx_rmbsize);
	mnl_attr_put_u64(nlh, SMC_NLA_STATS_T_CLNT_V1_SUCC, t->clnt_v1_succ_cnt);
	mnl_attr_put_u64(nlh, SMC_NLA_STATS_T_CLNT_V2_SUCC, t->clnt_v2_succ_cnt);
	mnl_attr_put_u64(nlh, SMC_NLA_STATS_T_SRV_V1_SUCC, t->srv_v1_succ_cnt);
	mnl_attr_put_u64(nlh, SMC_NLA_STATS_T_SRV_V2_SUCC, t->srv_v2_succ_cnt);
	mnl_attr_put_u64(nlh, SMC_NLA_STATS_T_RX_BYTES, t->rx_bytes);
	mnl_attr_put_u64(nlh, SMC_NLA_STATS_T_TX_BYTES, t->tx_bytes);
	soft_put_uint(nlh, SMC_NLA_STATS_T_RX_RMB_USAGE, t->rx_rmbuse);
	soft_put_uint(nlh, SMC_NLA_STATS_T_TX_RMB_USAGE, t->tx_rmbuse);
	mnl_attr_put_u64(nlh, SMC_NLA_STATS_T_RX_CNT, t->rx_cnt);
	mnl_attr_put_u64(nlh, SMC_NLA_STATS_T_TX_CNT, t->tx_cnt);
	mnl_attr_put_u64(nlh, SMC_NLA_STATS_T_SENDPAGE_CNT, 0);
	mnl_attr_put_u64(nlh, SMC_NLA_STATS_T_CORK_CNT, t->cork_cnt);
	mnl_attr_put_u64(nlh, SMC_NLA_STATS_T_NDLY_CNT, t->ndly_cnt);
	mnl_attr_put_u64(nlh, SMC_NLA_STATS_T_SPLICE_CNT, t->splice_cnt);
	mnl_attr_put_u64(nlh, SMC_NLA_STATS_T_URG_DATA_CNT, t->urg_data_cnt);
	mnl_attr_nest_end(nlh, nest);
}

/* One message: SMC-D block, SMC-R block, handshake errors. */
int soft_gen_stats(struct soft_req *r)
{
	static const struct soft_stats zero;
	const struct soft_stats *live = r->ns->stats ? r->ns->stats : &zero;
	struct nlmsghdr *nlh = soft_gen_msg(r, SMC_NETLINK_GET_STATS);
	struct soft_stats *s;
	struct nlattr *nest;

	if (!nlh)
		return -ENOMEM;
	s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	*s = *live;
	soft_pstats_sum(r->st, r->ns->netns, s);
	nest = mnl_attr_nest_start(nlh, SMC_GEN_STATS);
	put_tech(nlh, SMC_NLA_STATS_SMCD_TECH, &s->smc[SOFT_TECH_D]);
	put_tech(nlh, SMC_NLA_STATS_SMCR_TECH, &s->smc[SOFT_TECH_R]);
	mnl_attr_put_u64(nlh, SMC_NLA_STATS_CLNT_HS_ERR_CNT, s->clnt_hshake_err_cnt);
	mnl_attr_put_u64(nlh, SMC_NLA_STATS_SRV_HS_ERR_CNT, s->srv_hshake_err_cnt);
	mnl_attr_nest_end(nlh, nest);
	soft_msg_end(r->out, nlh);
	free(s);
	return 0;
}

/* smc_nl_get_fback_details(): the totals ride on the first message only. */
static int put_reason(struct soft_req *r, const struct soft_stats *s,
		      const struct soft_stats_fback *f, bool srv, bool *totals_sent)
{
	struct nlmsghdr *nlh = soft_gen_msg(r, SMC_NETLINK_GET_FBACK_STATS);
	struct nlattr *nest;

	if (!nlh)
		return -ENOMEM;
	nest = mnl_attr_nest_start(nlh, SMC_GEN_FBACK_STATS);
	mnl_attr_put_u8(nlh, SMC_NLA_FBACK_STATS_TYPE, srv);
	if (!*totals_sent) {
		mnl_attr_put_u64(nlh, SMC_NLA_FBACK_STATS_SRV_CNT, s->srv_fback_cnt);
		mnl_attr_put_u64(nlh, SMC_NLA_FBACK_STATS_CLNT_CNT, s->clnt_fback_cnt);
		*totals_sent = true;
	}
	mnl_attr_put_u32(nlh, SMC_NLA_FBACK_STATS_RSN_CODE, (uint32_t)f->fback_code);
	mnl_attr_put_u16(nlh, SMC_NLA_FBACK_STATS_RSN_CNT, f->count);
	mnl_attr_nest_end(nlh, nest);
	soft_msg_end(r->out, nlh);
	return 0;
}

/* Slot by slot, server before client, until a slot is empty on both sides. */
int soft_gen_fback_stats(struct soft_req *r)
{
	const struct soft_stats *s = r->ns->stats;
	bool totals_sent = false;

	for (int k = 0; s && k < SOFT_MAX_FBACK_RSN_CNT; k++) {
		bool srv = s->srv[k].fback_code != 0, clnt = s->clnt[k].fback_code != 0;

		if (srv && put_reason(r, s, &s->srv[k], true, &totals_sent))
			return -ENOMEM;
		if (clnt && put_reason(r, s, &s->clnt[k], false, &totals_sent))
			return -ENOMEM;
		if (!srv && !clnt)
			break;
	}
	return 0;
}
