/*
 * Regions of paired connections (pair.h): creation, the link group of each
 * pair of namespaces, the counters of a connection, and the live cursors
 * sock_diag reports.
 */
#include "region.h"
#include "lgr.h"
#include "stats.h"
#include "reg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "smc_uapi.h"

uint32_t soft_region_tx(const struct soft_sock *s)
{
	return s->region ? s->region->ring[s->side] : 0;
}

uint32_t soft_region_rx(const struct soft_sock *s)
{
	return s->region ? s->region->ring[!s->side] : 0;
}

int soft_region_new(struct soft_state *st, struct soft_sock *s, struct soft_ns *ns,
		    uint32_t sndbuf, uint32_t rcvbuf)
{
	struct soft_region *g = calloc(1, sizeof(*g));
	size_t tx = sndbuf ? sndbuf : DMB_DEFAULT_SIZE, rx = rcvbuf ? rcvbuf : DMB_DEFAULT_SIZE;

	if (!g)
		return -ENOMEM;
	g->fd = dmb_create(tx, rx);
	if (g->fd < 0) {
		int rc = g->fd;

		free(g);
		return rc;
	}
	dmb_sizes(tx, rx, g->ring, &g->size);
	g->dmb_token[0] = ++st->next_dmb_token;
	g->dmb_token[1] = ++st->next_dmb_token;
	g->end[0] = s;
	g->ns[0] = ns;
	s->region = g;
	s->side = 0;
	return 0;
}

/* The CLC host name, blank-padded to 32 (as gen_sys.c reports it). */
static void host_name(char out[SOFT_HOSTNAME_LEN + 1])
{
	struct utsname u;

	memset(out, ' ', SOFT_HOSTNAME_LEN);
	out[SOFT_HOSTNAME_LEN] = '\0';
	if (uname(&u) == 0)
		memcpy(out, u.nodename, strnlen(u.nodename, SOFT_HOSTNAME_LEN));
}

/* One SMC-D link group per pair of namespaces, in either order. */
static struct soft_lgr *lgr_for(struct soft_state *st, uint64_t a, uint64_t b)
{
	struct soft_lgr *lgr;
	struct soft_dev *ism = soft_dev_ism(st);

	for (lgr = soft_lgr_first(st); lgr; lgr = lgr->next)
		if (lgr->smcd && ((lgr->netns[0] == a && lgr->netns[1] == b) ||
				  (lgr->netns[0] == b && lgr->netns[1] == a)))
			return lgr;
	lgr = soft_lgr_new(st, true);
	if (!lgr)
		return NULL;
	lgr->netns[0] = a;
	lgr->netns[1] = b;
	/* both ends on this host: the peer's GID is our own */
	lgr->peer_gid = ism->gid;
	lgr->peer_gid_ext = ism->gid_ext;
	lgr->peer_rel = 1;
	lgr->peer_os = SOFT_OS_LINUX;
	host_name(lgr->peer_host);
	memset(lgr->neg_eid, ' ', SOFT_EID_LEN);
	lgr->neg_eid[SOFT_EID_LEN] = '\0';
	return lgr;
}

static void count_conn(struct soft_ns *ns, const struct soft_sock *s)
{
	uint32_t tx = soft_region_tx(s), rx = soft_region_rx(s);

	soft_stats_conn(ns, true, s->role == 1, true);
	soft_stats_rmb(ns, true, true, SOFT_RMB_ALLOC);
	soft_stats_rmb(ns, true, false, SOFT_RMB_ALLOC);
	soft_stats_rmb_size(ns, true, true, tx);
	soft_stats_rmb_size(ns, true, false, rx);
	soft_stats_rmb_usage(ns, true, true, tx);
	soft_stats_rmb_usage(ns, true, false, rx);
}

static void set_paired(struct soft_sock *s, const struct soft_region *g,
		       const struct soft_dev *ism)
{
	s->pair_status = SMC_SOFT_PAIR_PAIRED;
	s->mode = SMC_DIAG_MODE_SMCD;
	s->fallback_reason = 0;
	s->peer_diagnosis = 0;
	s->has_conn = true;
	s->has_dmb = true;
	memset(&s->conn, 0, sizeof(s->conn));
	s->conn.token = (uint32_t)s->token;
	s->conn.sndbuf_size = soft_region_tx(s);
	s->conn.rmbe_size = soft_region_rx(s);
	s->conn.peer_rmbe_size = soft_region_tx(s);
	memset(&s->dmb, 0, sizeof(s->dmb));
	s->dmb.linkid = soft_lgr_id(g->lgr);
	s->dmb.my_gid = ism->gid;
	s->dmb.my_gid_ext = ism->gid_ext;
	s->dmb.peer_gid = g->lgr->peer_gid;
	s->dmb.peer_gid_ext = g->lgr->peer_gid_ext;
	s->dmb.token = g->dmb_token[s->side];
	s->dmb.peer_token = g->dmb_token[!s->side];
}

int soft_region_join(struct soft_state *st, struct soft_sock *peer, struct soft_sock *s,
		     struct soft_ns *ns)
{
	struct soft_region *g = peer->region;
	struct soft_lgr *lgr = lgr_for(st, peer->id.netns, s->id.netns);

	if (!lgr)
		return -ENOMEM;
	g->end[1] = s;
	g->ns[1] = ns;
	g->lgr = lgr;
	s->region = g;
	s->side = 1;
	lgr->conns++;
	lgr->rmb_alloc += (uint64_t)g->ring[0] + g->ring[1];
	lgr->sndbuf_alloc += (uint64_t)g->ring[0] + g->ring[1];
	set_paired(peer, g, soft_dev_ism(st));
	set_paired(s, g, soft_dev_ism(st));
	count_conn(g->ns[0], peer);
	count_conn(ns, s);
	return 0;
}

/* The connection is over once either end goes: its link group counts it no more. */
static void break_pair(struct soft_state *st, struct soft_region *g)
{
	struct soft_lgr *lgr = g->lgr;

	if (!lgr)
		return;
	g->lgr = NULL;
	lgr->conns--;
	lgr->rmb_alloc -= (uint64_t)g->ring[0] + g->ring[1];
	lgr->sndbuf_alloc -= (uint64_t)g->ring[0] + g->ring[1];
	if (!lgr->conns)
		soft_lgr_del(st, lgr);
}

static void region_free(struct soft_region *g)
{
	if (g->fd >= 0)
		close(g->fd);
	free(g);
}

void soft_region_leave(struct soft_state *st, struct soft_sock *s)
{
	struct soft_region *g = s->region;

	if (!g)
		return;
	s->region = NULL;
	g->end[s->side] = NULL;
	break_pair(st, g);
	if (!g->end[0] && !g->end[1])
		region_free(g);
}

void soft_pair_end(struct soft_state *st, struct soft_sock *s)
{
	struct soft_ns *ns = soft_ns_get(st, s->id.netns);

	if (ns && s->pair_status == SMC_SOFT_PAIR_PENDING)
		soft_stats_fallback(ns, s->role == 1, SOFT_DECL_PEERNOSMC);
	if (ns && s->pair_status == SMC_SOFT_PAIR_PAIRED) {
		soft_stats_rmb_usage(ns, true, true, -(int64_t)soft_region_tx(s));
		soft_stats_rmb_usage(ns, true, false, -(int64_t)soft_region_rx(s));
	}
	soft_region_leave(st, s);
	s->pair_status = 0;
}

static struct soft_cursor cursor(const _Atomic uint64_t *w, uint8_t *pflags, uint8_t *cflags)
{
	uint64_t v = atomic_load_explicit((_Atomic uint64_t *)w, memory_order_relaxed);
	struct dmb_cursor c = dmb_cursor_of(v);

	if (pflags)
		*pflags = (uint8_t)(v >> 48);
	if (cflags)
		*cflags = (uint8_t)(v >> 56);
	return (struct soft_cursor){ .wrap = c.wrap, .count = c.count };
}

void soft_pair_conninfo(const struct soft_sock *s, struct soft_conninfo *ci)
{
	struct dmb_ctrl c[2];
	const struct dmb_ctrl *tx, *rx;

	*ci = s->conn;
	if (s->pair_status != SMC_SOFT_PAIR_PAIRED || soft_region_ctrl(s, c))
		return;
	tx = &c[s->side];
	rx = &c[!s->side];
	ci->rx_prod = cursor(&rx->prod, &ci->rx_prod_flags, &ci->rx_conn_state_flags);
	ci->rx_cons = cursor(&rx->cons, NULL, NULL);
	ci->tx_prod = cursor(&tx->prod, &ci->tx_prod_flags, &ci->tx_conn_state_flags);
	ci->tx_cons = cursor(&tx->cons, NULL, NULL);
	ci->tx_prep = ci->tx_sent = ci->tx_fin = ci->tx_prod;
}

int soft_region_ctrl(const struct soft_sock *s, struct dmb_ctrl ctrl[2])
{
	return s->region && s->region->fd >= 0 ? dmb_read_ctrl(s->region->fd, ctrl) : -ENOENT;
}

void soft_regions_free(struct soft_state *st)
{
	for (struct soft_ns *ns = st->ns; ns; ns = ns->next)
		for (struct soft_sock *s = ns->socks; s; s = s->next)
			soft_region_leave(st, s);
}
