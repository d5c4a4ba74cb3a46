/* smc_rnics: RDMA devices of class/infiniband, for architectures without FIDs. */
#include "rnics.h"
#include "ifname.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

enum { C_IBDEV, C_PCI, C_TYPE, C_PORT, C_STATE, C_PNET, C_DEV };

#define CELL(r, c, ...) snprintf((r)[c], RNICS_CELL, __VA_ARGS__)

void rnics_driver(const char *ib, char *out)
{
	size_t i = 0;

	if (!rnics_link_base(out, RNICS_CELL, "class/infiniband/%s/device/driver", ib))
		return;
	while (ib[i] && ib[i] != '_' && !isdigit((unsigned char)ib[i]) && i + 1 < RNICS_CELL) {
		out[i] = ib[i];
		i++;
	}
	out[i] = '\0';
}

static void netdev(const char *ib, const char *port, char *out)
{
	char **net;
	int n;

	if (rnics_read(out, RNICS_CELL, "class/infiniband/%s/ports/%s/gid_attrs/ndevs/0", ib, port) > 0)
		return;
	n = rnics_list(&net, "class/infiniband/%s/device/net", ib);
	snprintf(out, RNICS_CELL, "%s", n > 0 ? net[0] : "n/a");
	rnics_list_free(net, n);
}

static void state(const char *ib, const char *port, char *out)
{
	char buf[RNICS_CELL];
	const char *s;

	if (rnics_read(buf, sizeof(buf), "class/infiniband/%s/ports/%s/state", ib, port) <= 0) {
		snprintf(out, RNICS_CELL, "n/a");
		return;
	}
	s = strchr(buf, ':');   /* "4: ACTIVE" */
	s = s ? s + 1 : buf;
	while (*s == ' ')
		s++;
	snprintf(out, RNICS_CELL, "%s", s);
}

static int device_rows(struct rnics_table *t, const struct rnics_pnet *pnet, const char *ib)
{
	char pci[RNICS_CELL], type[RNICS_CELL], **ports;
	int np = rnics_list(&ports, "class/infiniband/%s/ports", ib), rc = 0;

	if (rnics_link_base(pci, sizeof(pci), "class/infiniband/%s/device", ib) || !smc_is_pci_name(pci))
		snprintf(pci, sizeof(pci), "n/a");
	rnics_driver(ib, type);
	for (int i = 0; i < np && !rc; i++) {
		struct rnics_row *r = rnics_table_add(t, 0);

		if (!r) {
			rc = -1;
			break;
		}
		CELL(r->cell, C_IBDEV, "%s", ib);
		CELL(r->cell, C_PCI, "%s", pci);
		CELL(r->cell, C_TYPE, "%s", type);
		CELL(r->cell, C_PORT, "%s", ports[i]);
		state(ib, ports[i], r->cell[C_STATE]);
		netdev(ib, ports[i], r->cell[C_DEV]);
		if (!rnics_pnet_lookup(pnet, r->cell[C_DEV], ib, (unsigned int)atoi(ports[i]),
				       r->cell[C_PNET], RNICS_CELL))
			CELL(r->cell, C_PNET, "n/a");
	}
	rnics_list_free(ports, np);
	return rc;
}

int rnics_rdma_rows(struct rnics_table *t, const struct rnics_opts *o,
		    const struct rnics_pnet *pnet)
{
	char **dev;
	int n, rc = 0;

	if (o->have_fid)        /* RDMA devices have no FID here: nothing matches */
		return 0;
	n = rnics_list(&dev, "class/infiniband");
	for (int i = 0; i < n && !rc; i++)
		rc = device_rows(t, pnet, dev[i]);
	rnics_list_free(dev, n);
	return rc;
}
