/*
 * This process's soft SMC-R link groups told to the daemon, which lists
 * them as the kernel lists its own (smcr linkgroup, link-show, smcss -R;
 * doc/soft-roce.md section 6): a group's view whenever one changed, and a
 * group that went as gone.  The negotiator thread calls it, with ctl_mu.
 */
#include <string.h>

#include "ctl_int.h"
#include "smcr.h"

#define GROUPS_MAX 64           /* groups told per look; more are told as others go */

static unsigned told_gen;
static bool told_any;
static uint32_t told[GROUPS_MAX];
static int ntold;

static void tell(const struct smcr_lgr_view *v)
{
	struct smc_soft_link l[SMCR_LINKS_MAX];

	memset(l, 0, sizeof(l));
	for (unsigned i = 0; i < v->nlinks && i < SMCR_LINKS_MAX; i++) {
		l[i].link_id = v->link[i].num;
		l[i].ibport = v->link[i].port;
		l[i].conns = v->link[i].conns;
		memcpy(l[i].ibdev, v->link[i].dev, sizeof(l[i].ibdev));
		l[i].ibdev[sizeof(l[i].ibdev) - 1] = 0;
		memcpy(l[i].gid, v->link[i].gid, 16);
		memcpy(l[i].peer_gid, v->link[i].peer_gid, 16);
	}
	/* a group without a link up is gone for the listings: the kernel drops such a group */
	soft_reg_lgr_send(&chan, v->key, v->server, v->peer_host, v->conns, l, v->nlinks);
}

void ctl_lgr_report(void)
{
	static struct smcr_lgr_view v[GROUPS_MAX];
	unsigned gen = smcr_lgr_changes();
	uint32_t now[GROUPS_MAX];
	int n;

	if (chan.fd < 0 || (gen == told_gen && told_any))
		return;
	n = smcr_lgr_views(v, GROUPS_MAX);
	for (int i = 0; i < n; i++) {
		tell(&v[i]);
		now[i] = v[i].key;
	}
	/* those told before and not there any more */
	for (int k = 0; k < ntold; k++) {
		bool there = false;

		for (int i = 0; i < n && !there; i++)
			there = now[i] == told[k];
		if (!there)
			soft_reg_lgr_send(&chan, told[k], 0, NULL, 0, NULL, 0);
	}
	memcpy(told, now, sizeof(now[0]) * (size_t)n);
	ntold = n;
	told_gen = gen;
	told_any = true;
}

bool ctl_lgr_told(void)
{
	return ntold > 0;
}

void ctl_lgr_forget(void)
{
	ntold = 0;
	told_any = false;
}
