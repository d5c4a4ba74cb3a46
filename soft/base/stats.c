/* Per-namespace SMC counters and the events that move them (smc_stats.h). */
#include "stats.h"

#include <stdlib.h>

struct soft_stats *soft_stats_get(struct soft_ns *ns)
{
	if (!ns->stats)
		ns->stats = calloc(1, sizeof(*ns->stats));
	return ns->stats;
}

int soft_stats_bucket(int64_t len)
{
	uint64_t v;
	int pos = 0;

	if (len <= 0)
		return -1;
	for (v = (uint64_t)(len - 1) >> 13; v; v >>= 1)
		pos++;
	return pos < SOFT_STATS_BUCKETS - 1 ? pos : SOFT_STATS_BUCKETS - 1;
}

static struct soft_stats_tech *tech(struct soft_ns *ns, bool smcd)
{
	struct soft_stats *s = soft_stats_get(ns);

	return s ? &s->smc[smcd ? SOFT_TECH_D : SOFT_TECH_R] : NULL;
}

/* smc_stat_inc_fback_rsn_cnt(): the code's slot, else the first empty one. */
static void count_reason(struct soft_stats_fback *arr, int code)
{
	for (int i = 0; i < SOFT_MAX_FBACK_RSN_CNT; i++) {
		if (arr[i].fback_code == code) {
			arr[i].count++;
			return;
		}
		if (!arr[i].fback_code) {
			arr[i].fback_code = code;
			arr[i].count++;
			return;
		}
	}
}

void soft_stats_fallback(struct soft_ns *ns, bool server, int code)
{
	struct soft_stats *s = soft_stats_get(ns);

	if (!s)
		return;
	if (server) {
		count_reason(s->srv, code);
		s->srv_fback_cnt++;
	} else {
		count_reason(s->clnt, code);
		s->clnt_fback_cnt++;
	}
}

void soft_stats_conn(struct soft_ns *ns, bool smcd, bool server, bool v2)
{
	struct soft_stats_tech *t = tech(ns, smcd);

	if (!t)
		return;
	if (server)
		(*(v2 ? &t->srv_v2_succ_cnt : &t->srv_v1_succ_cnt))++;
	else
		(*(v2 ? &t->clnt_v2_succ_cnt : &t->clnt_v1_succ_cnt))++;
}

void soft_stats_hs_err(struct soft_ns *ns, bool server)
{
	struct soft_stats *s = soft_stats_get(ns);

	if (s)
		(*(server ? &s->srv_hshake_err_cnt : &s->clnt_hshake_err_cnt))++;
}

void soft_stats_payload(struct soft_ns *ns, bool smcd, bool tx, int64_t len, int64_t rc)
{
	struct soft_stats_tech *t = tech(ns, smcd);
	int pos = soft_stats_bucket(len);

	if (!t)
		return;
	(*(tx ? &t->tx_cnt : &t->rx_cnt))++;
	if (rc <= 0 || pos < 0)
		return;
	(tx ? &t->tx_pd : &t->rx_pd)->buf[pos]++;
	*(tx ? &t->tx_bytes : &t->rx_bytes) += (uint64_t)rc;
}

void soft_stats_rmb(struct soft_ns *ns, bool smcd, bool tx, enum soft_rmb_event ev)
{
	struct soft_stats_tech *t = tech(ns, smcd);
	struct soft_stats_rmbcnt *c;

	if (!t)
		return;
	c = tx ? &t->rmb_tx : &t->rmb_rx;
	switch (ev) {
	case SOFT_RMB_SIZE_SMALL_PEER: c->buf_size_small_peer_cnt++; break;
	case SOFT_RMB_SIZE_SMALL: c->buf_size_small_cnt++; break;
	case SOFT_RMB_FULL_PEER: c->buf_full_peer_cnt++; break;
	case SOFT_RMB_FULL: c->buf_full_cnt++; break;
	case SOFT_RMB_REUSE: c->reuse_cnt++; break;
	case SOFT_RMB_ALLOC: c->alloc_cnt++; break;
	case SOFT_RMB_DGRADE: c->dgrade_cnt++; break;
	}
}

void soft_stats_rmb_size(struct soft_ns *ns, bool smcd, bool tx, int64_t size)
{
	struct soft_stats_tech *t;
	int pos = soft_stats_bucket(size);

	if (pos < 0 || !(t = tech(ns, smcd)))
		return;
	(tx ? &t->tx_rmbsize : &t->rx_rmbsize)->buf[pos]++;
}

void soft_stats_rmb_usage(struct soft_ns *ns, bool smcd, bool tx, int64_t delta)
{
	struct soft_stats_tech *t = tech(ns, smcd);

	if (t)
		*(tx ? &t->tx_rmbuse : &t->rx_rmbuse) += (uint64_t)delta;
}

void soft_stats_special(struct soft_ns *ns, bool smcd, enum soft_special what)
{
	struct soft_stats_tech *t = tech(ns, smcd);

	if (!t)
		return;
	switch (what) {
	case SOFT_SPECIAL_URG: t->urg_data_cnt++; break;
	case SOFT_SPECIAL_SPLICE: t->splice_cnt++; break;
	case SOFT_SPECIAL_CORK: t->cork_cnt++; break;
	case SOFT_SPECIAL_NDLY: t->ndly_cnt++; break;
	}
}

void soft_stats_free(struct soft_ns *ns)
{
	free(ns->stats);
	ns->stats = NULL;
}
