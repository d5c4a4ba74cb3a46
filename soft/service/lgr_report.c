/*
 * Soft SMC-R link groups as the processes that hold them tell them
 * (SMC_SOFT_CMD_LGR, doc/soft-roce.md section 6): the daemon keeps no RDMA
 * state of its own, but lists each process's groups and links as the
 * kernel lists its own (GET_LGR_SMCR, GET_LINK_SMCR, the device counts),
 * and a connection's link in smc_diag's LGRINFO.  A process's groups go
 * with its control connection.
 */
#include "service.h"
#include "devices.h"
#include "lgr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <libmnl/libmnl.h>

#include "smc_uapi.h"

#define SOFT_SMCR_EID "SMC-TOOLS-SOFT-SMCR-V1"     /* the EID the libraries negotiate */

struct lgr_attrs {
	uint32_t key, conns;
	uint8_t role;
	char host[SOFT_HOSTNAME_LEN + 1];
	struct smc_soft_link link[2];
	unsigned nlinks;
};

static int bad(struct soft_req *r, const char *why)
{
	r->ext_ack = why;
	return -EINVAL;
}

static int one_attr(struct soft_req *r, const struct nlattr *a, struct lgr_attrs *la)
{
	const void *p = mnl_attr_get_payload(a);
	size_t len = mnl_attr_get_payload_len(a);

	switch (mnl_attr_get_type(a)) {
	case SMC_SOFT_A_LGR_KEY:
		if (len != 4)
			return bad(r, "LGR_KEY is a u32");
		memcpy(&la->key, p, 4);
		return 0;
	case SMC_SOFT_A_LGR_CONNS:
		if (len != 4)
			return bad(r, "LGR_CONNS is a u32");
		memcpy(&la->conns, p, 4);
		return 0;
	case SMC_SOFT_A_ROLE:
		if (len != 1 || *(const uint8_t *)p > 1)
			return bad(r, "ROLE is 0 or 1");
		la->role = *(const uint8_t *)p;
		return 0;
	case SMC_SOFT_A_PEER_HOST:
		if (!len || len > sizeof(la->host) || ((const char *)p)[len - 1] || strlen(p) != len - 1)
			return bad(r, "PEER_HOST is a string of at most 32 characters");
		memcpy(la->host, p, len);
		return 0;
	case SMC_SOFT_A_LINK: {
		struct smc_soft_link l;

		if (len != sizeof(l))
			return bad(r, "LINK is a struct smc_soft_link");
		if (la->nlinks == 2)
			return bad(r, "at most 2 LINKs");
		memcpy(&l, p, sizeof(l));
		if (!l.link_id || !l.ibport || l.ibport > SOFT_PORTS || !memchr(l.ibdev, 0, sizeof(l.ibdev)))
			return bad(r, "a LINK needs a link id, a port 1 or 2 and a device name");
		la->link[la->nlinks++] = l;
		return 0;
	}
	}
	return 0;
}

static int parse(struct soft_req *r, struct lgr_attrs *la)
{
	const struct nlattr *attr;
	int rc;

	memset(la, 0, sizeof(*la));
	mnl_attr_for_each_payload(r->data, r->data_len) {
		rc = one_attr(r, attr, la);
		if (rc)
			return rc;
	}
	return la->key ? 0 : bad(r, "LGR_KEY (not 0) required");
}

/* A text field of the kernel's: blank-padded to n. */
static void padded(char *out, const char *in, size_t n)
{
	snprintf(out, n + 1, "%-*s", (int)n, in);
}

/*
 * The group's buffers as a listing shows them: those its process's
 * connections over RDMA now said they have (clc_relay.c), and the full
 * sizes for the rest of the connections its last report counts.
 */
static void bufs_sum(const struct soft_state *st, struct soft_lgr *g)
{
	uint32_t known = 0;

	g->sndbuf_alloc = g->rmb_alloc = 0;
	for (const struct soft_ns *ns = st->ns; ns; ns = ns->next) {
		for (const struct soft_sock *s = ns->socks; s; s = s->next) {
			if (s->conn_id != g->owner || s->lgr_key != g->key || s->pair_status != SOFT_PAIR_RDMA)
				continue;
			g->rmb_alloc += s->smcr_rmb;
			g->sndbuf_alloc += s->smcr_sndbuf;
			known++;
		}
	}
	if (g->conns > known) {
		g->rmb_alloc += (uint64_t)(g->conns - known) * SMC_SOFT_SMCR_BUF;
		g->sndbuf_alloc += (uint64_t)(g->conns - known) * SMC_SOFT_SMCR_SNDBUF;
	}
}

void soft_lgr_bufs_recount(struct soft_state *st)
{
	for (struct soft_lgr *g = soft_lgr_first(st); g; g = g->next)
		if (g->owner && !g->smcd)
			bufs_sum(st, g);
}

static void fill(struct soft_state *st, struct soft_lgr *g, const struct lgr_attrs *la)
{
	g->role = la->role;
	g->conns = la->conns;
	g->type = la->nlinks > 1 ? SOFT_LGR_SYMMETRIC : SOFT_LGR_SINGLE;
	g->peer_os = SOFT_OS_LINUX;
	g->peer_rel = 1;
	padded(g->peer_host, la->host, SOFT_HOSTNAME_LEN);
	padded(g->neg_eid, SOFT_SMCR_EID, SOFT_EID_LEN);
	g->direct = 1;
	g->max_conns = 255;
	g->max_links = 2;
	memset(g->lnk, 0, sizeof(g->lnk));
	g->pnetid[0] = 0;
	for (unsigned i = 0; i < la->nlinks; i++) {
		const struct smc_soft_link *l = &la->link[i];
		struct soft_link *k = &g->lnk[i];
		struct soft_dev *d = soft_dev_find_roce(st, l->ibdev);
		uint32_t uid = htonl(soft_lgr_id(g) + l->link_id);

		k->link_id = l->link_id;
		k->state = SOFT_LNK_ACTIVE;
		k->conn_cnt = l->conns;
		k->dev = d;
		k->ib_port = l->ibport;
		k->ndev_ifindex = d ? d->ifindex[l->ibport - 1] : 0;
		memcpy(k->uid, &uid, 4);
		memcpy(k->gid, l->gid, SOFT_GID_SIZE);
		memcpy(k->peer_gid, l->peer_gid, SOFT_GID_SIZE);
		if (d && !g->pnetid[0])
			snprintf(g->pnetid, sizeof(g->pnetid), "%s", d->pnetid[l->ibport - 1]);
	}
}

int soft_lgr_report(struct soft_req *r)
{
	struct lgr_attrs la;
	struct soft_lgr *g;
	int rc = parse(r, &la);

	if (rc)
		return rc;
	g = soft_lgr_of_owner(r->st, r->peer->conn_id, la.key);
	if (!la.nlinks) {
		if (g)
			soft_lgr_del(r->st, g);
		return 0;
	}
	if (!g) {
		g = soft_lgr_new(r->st, false);
		if (!g)
			return -ENOMEM;
		g->owner = r->peer->conn_id;
		g->key = la.key;
	}
	fill(r->st, g, &la);
	return 0;
}

void soft_lgr_owner_gone(struct soft_state *st, uint64_t owner)
{
	struct soft_lgr *g = soft_lgr_first(st);

	while (g) {
		struct soft_lgr *next = g->next;

		if (!g->smcd && g->owner == owner)
			soft_lgr_del(st, g);
		g = next;
	}
}

bool soft_lgr_info_of(const struct soft_state *st, const struct soft_sock *s, struct soft_lgrinfo *li)
{
	const struct soft_lgr *g = s->lgr_key ? soft_lgr_of_owner(st, s->conn_id, s->lgr_key) : NULL;
	const struct soft_link *k = NULL;

	if (!g)
		return false;
	/* its link, or where a failover took it */
	for (int i = 0; i < SOFT_LINKS_PER_LGR; i++) {
		if (soft_link_usable(&g->lnk[i]) && (!k || g->lnk[i].link_id == s->lgr_link))
			k = &g->lnk[i];
	}
	if (!k)
		return false;
	memset(li, 0, sizeof(*li));
	li->link_id = k->link_id;
	if (k->dev)
		memcpy(li->ibname, k->dev->name, sizeof(li->ibname));
	li->ibport = k->ib_port;
	soft_gid_text(li->gid, k->gid);
	soft_gid_text(li->peer_gid, k->peer_gid);
	li->role = g->role;
	return true;
}
