/*
 * Which SMC-R device a connection could use, as the kernel's
 * smc_pnet_find_roce_resource() picks one for the interface it runs on.
 */
#include "devices.h"
#include "pnettab.h"

#include <string.h>

const struct soft_dev *soft_dev_roce_for_if(const struct soft_state *st, const struct soft_ns *ns,
					    const char *ifname, int *port)
{
	const char *pnetid = ifname && *ifname && ns ? soft_pnet_of_eth(ns, ifname) : NULL;

	if (!ifname || !*ifname)
		return NULL;
	for (const struct soft_dev *d = st->devs; d; d = d->next) {
		if (d->kind != SOFT_DEV_ROCE || !d->host || !d->present)
			continue;
		for (int i = 0; i < d->n_ports; i++) {
			bool ours = pnetid ? soft_pnet_match(pnetid, d->pnetid[i])
					   : !soft_pnetid_is_set(d->pnetid[i]) &&
					     !strcmp(d->ifname[i], ifname);

			if (ours && soft_dev_port_active(d, i + 1)) {
				if (port)
					*port = i + 1;
				return d;
			}
		}
	}
	return NULL;
}

const struct soft_dev *soft_dev_roce_alt(const struct soft_state *st, const struct soft_ns *ns,
					 const char *ifname, const struct soft_dev *known, int known_port,
					 int *port)
{
	const char *pnetid = ifname && *ifname && ns ? soft_pnet_of_eth(ns, ifname) : NULL;

	if (!pnetid)
		return NULL;
	for (const struct soft_dev *d = st->devs; d; d = d->next) {
		if (d->kind != SOFT_DEV_ROCE || !d->host || !d->present)
			continue;
		for (int i = 0; i < d->n_ports; i++) {
			if ((d == known && i + 1 == known_port) || !soft_pnet_match(pnetid, d->pnetid[i]) ||
			    !soft_dev_port_active(d, i + 1) || d->gid_v2_index[i] < 0)
				continue;
			*port = i + 1;
			return d;
		}
	}
	return NULL;
}
