/*
 * STATS_ATTACH (reg.h): processes' own counters of the soft data path
 * (pstats.h), added into GET_STATS of the namespace of their control
 * connection.  When a connection closes or attaches another memfd, the last
 * figures are folded into the namespace's counters, so no total goes
 * backwards.  The same memfd holds the process's dump ring (pdump.h): the
 * daemon maps it writable for the ring's control line and consumer index,
 * and writes nothing else.
 */
#include "service.h"
#include "stats.h"
#include "pstats.h"
#include "pdump.h"
#include "reg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libmnl/libmnl.h>

static int check_memfd(struct soft_req *r, int fd)
{
	struct stat sb;
	int seals = fcntl(fd, F_GET_SEALS);

	if (seals < 0 || !(seals & F_SEAL_SHRINK)) {
		r->ext_ack = "not a memfd sealed against shrinking";
		return -EINVAL;
	}
	if (fstat(fd, &sb) < 0 || sb.st_size < (off_t)SOFT_PSTATS_MAP_LEN) {
		r->ext_ack = "stats memfd too small";
		return -EINVAL;
	}
	return 0;
}

static int map_stats(struct soft_req *r, int fd, void **out)
{
	const struct soft_pstats *p;
	int rc = check_memfd(r, fd);

	if (rc)
		return rc;
	p = mmap(NULL, SOFT_PSTATS_MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		r->ext_ack = "stats memfd not writable";
		return -EINVAL;
	}
	if (p->magic != SOFT_PSTATS_MAGIC || p->version != SOFT_PSTATS_VERSION) {
		munmap((void *)p, SOFT_PSTATS_MAP_LEN);
		r->ext_ack = "stats memfd without the pstats header";
		return -EINVAL;
	}
	*out = (void *)p;
	return 0;
}

static const struct soft_pstats *stats_of(const struct soft_pstats_att *a)
{
	return a->map;
}

static struct soft_pstats_att **find(struct soft_state *st, uint64_t conn_id)
{
	struct soft_pstats_att **pp;

	for (pp = &st->pstats; *pp; pp = &(*pp)->next)
		if ((*pp)->conn_id == conn_id)
			return pp;
	return NULL;
}

int soft_stats_attach(struct soft_req *r)
{
	const struct nlattr *tb[SMC_SOFT_A_MAX + 1];
	const struct nlattr *v;
	struct soft_pstats_att *a = NULL;
	int fd = r->fd, rc = 0;

	r->fd = -1;
	if (soft_genl_attrs(r, tb, SMC_SOFT_A_MAX))
		rc = -EINVAL;
	v = rc ? NULL : tb[SMC_SOFT_A_STATS_VERSION];
	if (!rc && (!v || mnl_attr_get_payload_len(v) != sizeof(uint32_t) ||
		    mnl_attr_get_u32(v) != SOFT_PSTATS_VERSION))
		rc = -EINVAL;
	if (!rc && fd < 0) {
		r->ext_ack = "no memfd passed with SCM_RIGHTS";
		rc = -EINVAL;
	}
	if (!rc && !(a = calloc(1, sizeof(*a))))
		rc = -ENOMEM;
	if (!rc)
		rc = map_stats(r, fd, &a->map);
	if (fd >= 0)
		close(fd);
	if (rc) {
		free(a);
		return rc;
	}
	/* again on one connection: an execve()d image, whose memfd replaces the old one */
	soft_pstats_conn_gone(r->st, r->peer->conn_id);
	a->conn_id = r->peer->conn_id;
	a->netns = r->peer->netns;
	a->uid = r->peer->uid;
	a->pid = r->peer->pid;
	a->next = r->st->pstats;
	r->st->pstats = a;
	soft_pdump_attached(r->st, a);
	return 0;
}

static uint64_t rd(const _Atomic uint64_t *v)
{
	return atomic_load_explicit((_Atomic uint64_t *)v, memory_order_relaxed);
}

static void add(struct soft_stats_tech *t, const struct soft_pstats_io *p)
{
	for (int i = 0; i < SOFT_PSTATS_BUCKETS && i < SOFT_STATS_BUCKETS; i++) {
		t->tx_pd.buf[i] += rd(&p->tx_pd[i]);
		t->rx_pd.buf[i] += rd(&p->rx_pd[i]);
	}
	t->rmb_tx.buf_full_peer_cnt += rd(&p->rmb_tx.buf_full_peer_cnt);
	t->rmb_tx.buf_full_cnt += rd(&p->rmb_tx.buf_full_cnt);
	t->rmb_rx.buf_full_peer_cnt += rd(&p->rmb_rx.buf_full_peer_cnt);
	t->rmb_rx.buf_full_cnt += rd(&p->rmb_rx.buf_full_cnt);
	t->tx_bytes += rd(&p->tx_bytes);
	t->rx_bytes += rd(&p->rx_bytes);
	t->tx_cnt += rd(&p->tx_cnt);
	t->rx_cnt += rd(&p->rx_cnt);
}

/* A process's counters into the statistics of both SMC types. */
static void add_both(struct soft_stats *s, const struct soft_pstats *p)
{
	add(&s->smc[SOFT_TECH_R], &p->io[SOFT_PSTATS_R]);
	add(&s->smc[SOFT_TECH_D], &p->io[SOFT_PSTATS_D]);
}

void soft_pstats_sum(const struct soft_state *st, uint64_t netns, struct soft_stats *s)
{
	for (const struct soft_pstats_att *a = st->pstats; a; a = a->next)
		if (a->netns == netns)
			add_both(s, stats_of(a));
}

static void detach(struct soft_pstats_att **pp)
{
	struct soft_pstats_att *a = *pp;

	*pp = a->next;
	soft_pdump_detach(a);
	munmap(a->map, SOFT_PSTATS_MAP_LEN);
	free(a);
}

bool soft_pstats_sock_gen(const struct soft_state *st, uint64_t conn_id, uint64_t *gen)
{
	for (const struct soft_pstats_att *a = st->pstats; a; a = a->next)
		if (a->conn_id == conn_id) {
			*gen = rd(&stats_of(a)->sock_gen);
			return true;
		}
	return false;
}

void soft_pstats_conn_gone(struct soft_state *st, uint64_t conn_id)
{
	struct soft_pstats_att **pp = find(st, conn_id);
	struct soft_ns *ns;
	struct soft_stats *s;

	if (!pp)
		return;
	ns = soft_ns_get(st, (*pp)->netns);
	s = ns ? soft_stats_get(ns) : NULL;
	if (s)
		add_both(s, stats_of(*pp));
	detach(pp);
}

void soft_pstats_free(struct soft_state *st)
{
	while (st->pstats)
		detach(&st->pstats);
}
