/*
 * smc_softd statistics: counted events show up in GET_STATS and
 * GET_FBACK_STATS, laid out as the kernel's smc_stats.c emits them
 * (attributes of <linux/smc.h>), and read back by
 * the smcd/smcr parsers.
 */
#include "softfx.h"
#include "soft/base/stats.h"
#include "smc/stats.h"
#include "smc_uapi.h"

#include <errno.h>

#define GEN SOFT_ID_GEN

/* One technology nest in the kernel's emission order (smc_stats.c). */
static void exp_tech(struct mb *x, uint16_t type, const struct soft_stats_tech *t)
{
	const struct soft_stats_rmbcnt *rmb[2] = { &t->rmb_tx, &t->rmb_rx };
	const struct soft_stats_memsize *sz[4] = { &t->tx_pd, &t->rx_pd, &t->tx_rmbsize,
						   &t->rx_rmbsize };
	static const uint16_t sz_type[4] = { SMC_NLA_STATS_T_TXPLOAD_SIZE, SMC_NLA_STATS_T_RXPLOAD_SIZE,
					     SMC_NLA_STATS_T_TX_RMB_SIZE, SMC_NLA_STATS_T_RX_RMB_SIZE };

	mb_nest(x, type);
	for (int i = 0; i < 2; i++) {
		mb_nest(x, i ? SMC_NLA_STATS_T_RX_RMB_STATS : SMC_NLA_STATS_T_TX_RMB_STATS);
		mb_u64(x, SMC_NLA_STATS_RMB_REUSE_CNT, rmb[i]->reuse_cnt);
		mb_u64(x, SMC_NLA_STATS_RMB_SIZE_SM_PEER_CNT, rmb[i]->buf_size_small_peer_cnt);
		mb_u64(x, SMC_NLA_STATS_RMB_SIZE_SM_CNT, rmb[i]->buf_size_small_cnt);
		mb_u64(x, SMC_NLA_STATS_RMB_FULL_PEER_CNT, rmb[i]->buf_full_peer_cnt);
		mb_u64(x, SMC_NLA_STATS_RMB_FULL_CNT, rmb[i]->buf_full_cnt);
		mb_u64(x, SMC_NLA_STATS_RMB_ALLOC_CNT, rmb[i]->alloc_cnt);
		mb_u64(x, SMC_NLA_STATS_RMB_DGRADE_CNT, rmb[i]->dgrade_cnt);
		mb_end(x);
	}
	for (int i = 0; i < 4; i++) {
		mb_nest(x, sz_type[i]);
		for (int k = 0; k < 9; k++)
			mb_u64(x, (uint16_t)(SMC_NLA_STATS_PLOAD_8K + k), sz[i]->buf[k]);
		mb_end(x);
	}
	mb_u64(x, SMC_NLA_STATS_T_CLNT_V1_SUCC, t->clnt_v1_succ_cnt);
	mb_u64(x, SMC_NLA_STATS_T_CLNT_V2_SUCC, t->clnt_v2_succ_cnt);
	mb_u64(x, SMC_NLA_STATS_T_SRV_V1_SUCC, t->srv_v1_succ_cnt);
	mb_u64(x, SMC_NLA_STATS_T_SRV_V2_SUCC, t->srv_v2_succ_cnt);
	mb_u64(x, SMC_NLA_STATS_T_RX_BYTES, t->rx_bytes);
	mb_u64(x, SMC_NLA_STATS_T_TX_BYTES, t->tx_bytes);
	/* uint: 4 bytes while the value fits */
	if (t->rx_rmbuse > UINT32_MAX)
		mb_u64(x, SMC_NLA_STATS_T_RX_RMB_USAGE, t->rx_rmbuse);
	else
		mb_u32(x, SMC_NLA_STATS_T_RX_RMB_USAGE, (uint32_t)t->rx_rmbuse);
	if (t->tx_rmbuse > UINT32_MAX)
		mb_u64(x, SMC_NLA_STATS_T_TX_RMB_USAGE, t->tx_rmbuse);
	else
		mb_u32(x, SMC_NLA_STATS_T_TX_RMB_USAGE, (uint32_t)t->tx_rmbuse);
	mb_u64(x, SMC_NLA_STATS_T_RX_CNT, t->rx_cnt);
	mb_u64(x, SMC_NLA_STATS_T_TX_CNT, t->tx_cnt);
	mb_u64(x, SMC_NLA_STATS_T_SENDPAGE_CNT, 0);
	mb_u64(x, SMC_NLA_STATS_T_CORK_CNT, t->cork_cnt);
	mb_u64(x, SMC_NLA_STATS_T_NDLY_CNT, t->ndly_cnt);
	mb_u64(x, SMC_NLA_STATS_T_SPLICE_CNT, t->splice_cnt);
	mb_u64(x, SMC_NLA_STATS_T_URG_DATA_CNT, t->urg_data_cnt);
	mb_end(x);
}

static void exp_stats(struct smc_reply *e, uint32_t seq, const struct soft_stats *s)
{
	struct mb x;

	sfx_exp_genl(&x, GEN, SMC_NETLINK_GET_STATS, NLM_F_MULTI, seq);
	mb_nest(&x, SMC_GEN_STATS);
	exp_tech(&x, SMC_NLA_STATS_SMCD_TECH, &s->smc[SOFT_TECH_D]);
	exp_tech(&x, SMC_NLA_STATS_SMCR_TECH, &s->smc[SOFT_TECH_R]);
	mb_u64(&x, SMC_NLA_STATS_CLNT_HS_ERR_CNT, s->clnt_hshake_err_cnt);
	mb_u64(&x, SMC_NLA_STATS_SRV_HS_ERR_CNT, s->srv_hshake_err_cnt);
	mb_end(&x);
	mb_finish(&x, e);
	sfx_exp_done(e, seq);
}

/* GET_FBACK_STATS then GET_STATS, as `smcd stats` asks, through the tool's parsers. */
static void tool_read(struct sfx *f, const struct soft_peer *p, struct smc_stats_data *d)
{
	struct smc_stats_parse parse = { .d = d, .err = stderr };
	struct mb m;

	memset(d, 0, sizeof(*d));
	sfx_req(&m, GEN, SMC_NETLINK_GET_FBACK_STATS, NLM_F_DUMP, 90);
	sfx_send(f, p, &m);
	for (int i = 0; i < sfx_count(f) - 1; i++)
		CHECK_INT(smc_stats_fback_cb(sfx_msg(f, i), &parse), 0);
	sfx_req(&m, GEN, SMC_NETLINK_GET_STATS, NLM_F_DUMP, 91);
	sfx_send(f, p, &m);
	CHECK_INT(sfx_count(f), 2);
	CHECK_INT(smc_stats_cb(sfx_msg(f, 0), &parse), 0);
}

TEST(soft_stats_zero_layout)
{
	static const struct soft_stats zero;
	struct smc_reply e;
	struct sfx f;
	struct mb m;

	sfx_init(&f, false);
	smc_reply_init(&e);
	sfx_req(&m, GEN, SMC_NETLINK_GET_STATS, NLM_F_DUMP, 80);
	sfx_send(&f, &f.user, &m);
	exp_stats(&e, 80, &zero);
	CHECK_REPLY(&f, &e);
	/* no fallback yet: an empty dump, no totals */
	sfx_req(&m, GEN, SMC_NETLINK_GET_FBACK_STATS, NLM_F_DUMP, 81);
	sfx_send(&f, &f.user, &m);
	smc_reply_free(&e);
	smc_reply_init(&e);
	sfx_exp_done(&e, 81);
	CHECK_REPLY(&f, &e);
	smc_reply_free(&e);
	sfx_free(&f);
}

TEST(soft_stats_buckets)
{
	CHECK_INT(soft_stats_bucket(0), -1);
	CHECK_INT(soft_stats_bucket(1), 0);
	CHECK_INT(soft_stats_bucket(8192), 0);
	CHECK_INT(soft_stats_bucket(8193), 1);
	CHECK_INT(soft_stats_bucket(16384), 1);
	CHECK_INT(soft_stats_bucket(16385), 2);
	CHECK_INT(soft_stats_bucket(32768), 2);
	CHECK_INT(soft_stats_bucket(32769), 3);
	CHECK_INT(soft_stats_bucket(65536), 3);
	CHECK_INT(soft_stats_bucket(1048576), 7);
	CHECK_INT(soft_stats_bucket(1048577), 8);
	CHECK_INT(soft_stats_bucket(1LL << 40), 8);
}

TEST(soft_stats_events_show_up)
{
	struct smc_stats_data d;
	struct soft_ns *ns;
	struct smc_reply e;
	struct sfx f;
	struct mb m;
	const uint64_t *D, *R;

	sfx_init(&f, false);
	smc_reply_init(&e);
	ns = soft_ns_get(&f.st, f.st.init_netns);
	soft_stats_conn(ns, true, false, true);          /* SMC-D client v2 */
	soft_stats_conn(ns, true, true, true);           /* SMC-D server v2 */
	soft_stats_conn(ns, true, true, false);          /* SMC-D server v1 */
	soft_stats_conn(ns, false, false, false);        /* SMC-R client v1 */
	soft_stats_hs_err(ns, false);
	soft_stats_hs_err(ns, true);
	soft_stats_hs_err(ns, true);
	soft_stats_payload(ns, true, true, 100, 100);
	soft_stats_payload(ns, true, true, 70000, 65536);     /* bucket of the request */
	soft_stats_payload(ns, true, true, 10, -EAGAIN);      /* counted, no bytes */
	soft_stats_payload(ns, true, false, 16384, 16384);
	soft_stats_payload(ns, true, false, 0, 0);            /* EOF: a call, no bytes */
	soft_stats_rmb_size(ns, true, false, 65536);
	soft_stats_rmb_size(ns, true, true, 1 << 20);
	soft_stats_rmb(ns, true, false, SOFT_RMB_ALLOC);
	soft_stats_rmb(ns, true, true, SOFT_RMB_REUSE);
	soft_stats_rmb(ns, true, true, SOFT_RMB_FULL_PEER);
	soft_stats_rmb(ns, true, false, SOFT_RMB_DGRADE);
	soft_stats_rmb_usage(ns, true, false, 65536);
	soft_stats_rmb_usage(ns, true, true, 5LL << 30);       /* > 4 GiB: 8-byte uint */
	soft_stats_rmb_usage(ns, true, false, -16384);
	soft_stats_special(ns, true, SOFT_SPECIAL_CORK);
	soft_stats_special(ns, true, SOFT_SPECIAL_NDLY);
	soft_stats_special(ns, true, SOFT_SPECIAL_NDLY);
	soft_stats_special(ns, false, SOFT_SPECIAL_SPLICE);
	soft_stats_special(ns, false, SOFT_SPECIAL_URG);

	sfx_req(&m, GEN, SMC_NETLINK_GET_STATS, NLM_F_DUMP, 82);
	sfx_send(&f, &f.user, &m);
	exp_stats(&e, 82, ns->stats);
	CHECK_REPLY(&f, &e);

	tool_read(&f, &f.user, &d);
	D = smc_stats_tech(&d, true);
	R = smc_stats_tech(&d, false);
	CHECK_INT(D[SMC_ST_CLNT_V2], 1);
	CHECK_INT(D[SMC_ST_SRV_V2], 1);
	CHECK_INT(D[SMC_ST_SRV_V1], 1);
	CHECK_INT(D[SMC_ST_CLNT_V1], 0);
	CHECK_INT(R[SMC_ST_CLNT_V1], 1);
	CHECK_INT(d.cnt[SMC_STATS_HS_CLNT], 1);
	CHECK_INT(d.cnt[SMC_STATS_HS_SRV], 2);
	CHECK_INT(D[SMC_ST_TX_CNT], 3);
	CHECK_INT(D[SMC_ST_TX_BYTES], 100 + 65536);
	CHECK_INT(D[SMC_ST_TX_PD + 0], 1);
	CHECK_INT(D[SMC_ST_TX_PD + 4], 1);                     /* 70000: <= 128K */
	CHECK_INT(D[SMC_ST_RX_CNT], 2);
	CHECK_INT(D[SMC_ST_RX_BYTES], 16384);
	CHECK_INT(D[SMC_ST_RX_PD + 1], 1);
	CHECK_INT(D[SMC_ST_RX_RMBSIZE + 3], 1);
	CHECK_INT(D[SMC_ST_TX_RMBSIZE + 7], 1);
	CHECK_INT(D[SMC_ST_RMB_RX + SMC_RMB_ALLOC], 1);
	CHECK_INT(D[SMC_ST_RMB_RX + SMC_RMB_DGRADE], 1);
	CHECK_INT(D[SMC_ST_RMB_TX + SMC_RMB_REUSE], 1);
	CHECK_INT(D[SMC_ST_RMB_TX + SMC_RMB_FULL_PEER], 1);
	CHECK_INT(D[SMC_ST_RX_RMBUSE], 65536 - 16384);
	CHECK_INT(D[SMC_ST_TX_RMBUSE], 5LL << 30);
	CHECK_INT(D[SMC_ST_CORK], 1);
	CHECK_INT(D[SMC_ST_NDLY], 2);
	CHECK_INT(R[SMC_ST_SPLICE], 1);
	CHECK_INT(R[SMC_ST_URG_DATA], 1);
	CHECK_INT(R[SMC_ST_TX_CNT], 0);

	/* another namespace has its own counters */
	tool_read(&f, &f.other_user, &d);
	CHECK_INT(smc_stats_tech(&d, true)[SMC_ST_CLNT_V2], 0);
	CHECK_INT(d.cnt[SMC_STATS_HS_SRV], 0);
	smc_reply_free(&e);
	sfx_free(&f);
}

static void exp_reason(struct smc_reply *e, uint32_t seq, bool srv, const uint64_t *totals,
		       uint32_t code, uint16_t cnt)
{
	struct mb x;

	sfx_exp_genl(&x, GEN, SMC_NETLINK_GET_FBACK_STATS, NLM_F_MULTI, seq);
	mb_nest(&x, SMC_GEN_FBACK_STATS);
	mb_u8(&x, SMC_NLA_FBACK_STATS_TYPE, srv);
	if (totals) {
		mb_u64(&x, SMC_NLA_FBACK_STATS_SRV_CNT, totals[0]);
		mb_u64(&x, SMC_NLA_FBACK_STATS_CLNT_CNT, totals[1]);
	}
	mb_u32(&x, SMC_NLA_FBACK_STATS_RSN_CODE, code);
	mb_u16(&x, SMC_NLA_FBACK_STATS_RSN_CNT, cnt);
	mb_end(&x);
	mb_finish(&x, e);
}

TEST(soft_stats_fallback_reasons)
{
	static const uint64_t totals[2] = { 2, 4 };
	struct smc_stats_data d;
	struct soft_ns *ns;
	struct smc_reply e;
	struct sfx f;
	struct mb m;

	sfx_init(&f, false);
	smc_reply_init(&e);
	ns = soft_ns_get(&f.st, SFX_OTHERNS);
	/* client: three reasons, server: one; slot 1 and 2 have no server entry */
	soft_stats_fallback(ns, false, 0x03030001);
	soft_stats_fallback(ns, false, 0x03010000);
	soft_stats_fallback(ns, false, 0x03030001);
	soft_stats_fallback(ns, false, 0x05000000);
	soft_stats_fallback(ns, true, 0x03010000);
	soft_stats_fallback(ns, true, 0x03010000);
	sfx_req(&m, GEN, SMC_NETLINK_GET_FBACK_STATS, NLM_F_DUMP, 83);
	sfx_send(&f, &f.other_user, &m);
	exp_reason(&e, 83, true, totals, 0x03010000, 2);
	exp_reason(&e, 83, false, NULL, 0x03030001, 2);
	exp_reason(&e, 83, false, NULL, 0x03010000, 1);
	exp_reason(&e, 83, false, NULL, 0x05000000, 1);
	sfx_exp_done(&e, 83);
	CHECK_REPLY(&f, &e);

	tool_read(&f, &f.other_user, &d);
	CHECK_INT(d.srv_fback, 2);
	CHECK_INT(d.clnt_fback, 4);
	CHECK_INT(d.srv[0].code, 0x03010000);
	CHECK_INT(d.srv[0].count, 2);
	CHECK_INT(d.clnt[2].code, 0x05000000);
	/* the initial namespace saw none */
	tool_read(&f, &f.user, &d);
	CHECK_INT(d.clnt_fback, 0);
	smc_reply_free(&e);
	sfx_free(&f);
}

TEST(soft_stats_fallback_table_full_and_wrap)
{
	struct soft_ns ns = { 0 };

	for (int i = 1; i <= SOFT_MAX_FBACK_RSN_CNT + 3; i++)
		soft_stats_fallback(&ns, true, 0x100 + i);
	CHECK_INT(ns.stats->srv_fback_cnt, SOFT_MAX_FBACK_RSN_CNT + 3);
	CHECK_INT(ns.stats->srv[SOFT_MAX_FBACK_RSN_CNT - 1].fback_code, 0x100 + SOFT_MAX_FBACK_RSN_CNT);
	for (int i = 0; i < 65536; i++)
		soft_stats_fallback(&ns, false, 0x03010000);
	CHECK_INT(ns.stats->clnt[0].count, 0);               /* u16, as the kernel's */
	CHECK_INT(ns.stats->clnt_fback_cnt, 65536);
	soft_stats_free(&ns);
	CHECK(ns.stats == NULL);
}
