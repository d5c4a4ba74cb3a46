/* smc_rnics: the software PNET table (SMC_PNETID family), when a backend answers. */
#include "rnics.h"

#include <stdlib.h>
#include <string.h>
#include <linux/smc.h>

#include "genl.h"

int rnics_pnet_add(struct rnics_pnet *t, const struct rnics_pnet_entry *e)
{
	struct rnics_pnet_entry *n = realloc(t->e, (t->n + 1) * sizeof(*n));

	if (!n)
		return -1;
	t->e = n;
	t->e[t->n++] = *e;
	return 0;
}

void rnics_pnet_free(struct rnics_pnet *t)
{
	free(t->e);
	t->e = NULL;
	t->n = 0;
}

static int dump_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct nlattr *tb[SMC_PNETID_MAX + 1];
	struct rnics_pnet_entry e = { .port = 255 };

	if (genlmsg_parse((struct nlmsghdr *)nlh, 0, tb, SMC_PNETID_MAX, NULL) < 0 ||
	    !tb[SMC_PNETID_NAME])
		return 0;       /* a broken entry only loses its PNET ID */
	smc_nla_strcpy(e.id, sizeof(e.id), tb[SMC_PNETID_NAME]);
	if (tb[SMC_PNETID_ETHNAME])
		smc_nla_strcpy(e.eth, sizeof(e.eth), tb[SMC_PNETID_ETHNAME]);
	if (tb[SMC_PNETID_IBNAME])
		smc_nla_strcpy(e.ib, sizeof(e.ib), tb[SMC_PNETID_IBNAME]);
	if (tb[SMC_PNETID_IBPORT] && nla_len(tb[SMC_PNETID_IBPORT]) >= 1)
		e.port = nla_get_u8(tb[SMC_PNETID_IBPORT]);
	return rnics_pnet_add(arg, &e) ? -12 : 0;
}

void rnics_pnet_load(struct rnics_pnet *t)
{
	struct smc_genl g;
	bool open_failed;

	memset(t, 0, sizeof(*t));
	if (!smc_genl_open(&g, SMCR_GENL_FAMILY_NAME, &open_failed))
		smc_genl_dump(&g, SMC_PNETID_GET, dump_cb, t);
	smc_genl_close(&g);
}

/* n/a (and nothing) never matches. */
static bool usable(const char *name)
{
	return name && *name && strcmp(name, "n/a");
}

bool rnics_pnet_lookup(const struct rnics_pnet *t, const char *netdev, const char *dev,
		       unsigned int port, char *out, size_t outlen)
{
	const struct rnics_pnet_entry *hit = NULL;

	for (size_t i = 0; i < t->n; i++) {
		const struct rnics_pnet_entry *e = &t->e[i];
		bool eth = usable(netdev) && !strcmp(e->eth, netdev);
		bool ib = usable(dev) && !strcmp(e->ib, dev);

		if ((eth || ib) && (e->port == 255 || e->port == port))
			hit = e;
	}
	if (hit)
		snprintf(out, outlen, "%s*", hit->id);
	return hit != NULL;
}
