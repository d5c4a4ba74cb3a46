/*
 * smc_rnics: the soft backend's devices (smc_softd's emulated RoCE devices and
 * soft ISM), listed after the RDMA devices of sysfs when the tools use that
 * backend.  They have no sysfs entry: their data comes from SMC_GEN_NETLINK,
 * as `smcr device` and `smcd device` show it.  The host's RDMA devices that
 * the daemon offers too are listed once, by their sysfs rows.
 */
#include "rnics.h"

#include <errno.h>
#include <net/if.h>
#include <string.h>

#include "genl.h"
#include "smc_uapi.h"

enum { C_IBDEV, C_PCI, C_TYPE, C_PORT, C_STATE, C_PNET, C_DEV };

#define CELL(r, c, ...) snprintf((r)->cell[c], RNICS_CELL, __VA_ARGS__)

/* "<id>*" for a user-defined PNET ID, as the software table lookup writes it. */
static void pnet_cell(struct rnics_row *r, struct nlattr **port)
{
	char id[RNICS_PNET_LEN + 1] = "";
	bool usr = port[SMC_NLA_DEV_PORT_PNET_USR] &&
		   nla_len(port[SMC_NLA_DEV_PORT_PNET_USR]) >= 1 &&
		   nla_get_u8(port[SMC_NLA_DEV_PORT_PNET_USR]);

	if (port[SMC_NLA_DEV_PORT_PNETID])
		smc_nla_strcpy(id, sizeof(id), port[SMC_NLA_DEV_PORT_PNETID]);
	if (*id)
		CELL(r, C_PNET, "%s%s", id, usr ? "*" : "");
	else
		CELL(r, C_PNET, "n/a");
}

static int roce_port(struct rnics_table *t, const char *ib, int n, struct nlattr *nest)
{
	struct nlattr *p[SMC_NLA_DEV_PORT_MAX + 1];
	char ifname[IF_NAMESIZE] = "";
	struct rnics_row *r;
	uint32_t ifindex = 0;

	if (nla_parse_nested(p, SMC_NLA_DEV_PORT_MAX, nest, NULL) < 0)
		return -EBADMSG;
	if (!p[SMC_NLA_DEV_PORT_VALID] || nla_len(p[SMC_NLA_DEV_PORT_VALID]) < 1 ||
	    !nla_get_u8(p[SMC_NLA_DEV_PORT_VALID]))
		return 0;
	r = rnics_table_add(t, 0);
	if (!r)
		return -ENOMEM;
	CELL(r, C_IBDEV, "%s", ib);
	CELL(r, C_PCI, "n/a");
	CELL(r, C_TYPE, "soft-roce");
	CELL(r, C_PORT, "%d", n);
	CELL(r, C_STATE, "%s", p[SMC_NLA_DEV_PORT_STATE] && nla_len(p[SMC_NLA_DEV_PORT_STATE]) >= 1 &&
	     nla_get_u8(p[SMC_NLA_DEV_PORT_STATE]) ? "ACTIVE" : "DOWN");
	pnet_cell(r, p);
	if (p[SMC_NLA_DEV_PORT_NETDEV] && nla_len(p[SMC_NLA_DEV_PORT_NETDEV]) >= 4)
		ifindex = nla_get_u32(p[SMC_NLA_DEV_PORT_NETDEV]);
	CELL(r, C_DEV, "%s", ifindex && if_indextoname(ifindex, ifname) ? ifname : "n/a");
	return 0;
}

static int roce_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct rnics_table *t = arg;
	struct nlattr *tb[SMC_GEN_MAX + 1], *d[SMC_NLA_DEV_MAX + 1];
	char ib[64] = "";
	int rc;

	if (genlmsg_parse((struct nlmsghdr *)nlh, 0, tb, SMC_GEN_MAX, NULL) < 0 ||
	    !tb[SMC_GEN_DEV_SMCR] || nla_parse_nested(d, SMC_NLA_DEV_MAX, tb[SMC_GEN_DEV_SMCR], NULL) < 0)
		return -EBADMSG;
	if (d[SMC_NLA_DEV_IB_NAME])
		smc_nla_strcpy(ib, sizeof(ib), d[SMC_NLA_DEV_IB_NAME]);
	/* a host RDMA device the daemon offers: the sysfs rows above list it */
	if (t->lay == &rnics_rdma && rnics_exists("class/infiniband/%s/ports", ib))
		return 0;
	rc = d[SMC_NLA_DEV_PORT] ? roce_port(t, ib, 1, d[SMC_NLA_DEV_PORT]) : 0;
	if (!rc && d[SMC_NLA_DEV_PORT2])
		rc = roce_port(t, ib, 2, d[SMC_NLA_DEV_PORT2]);
	return rc;
}

static int ism_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct nlattr *tb[SMC_GEN_MAX + 1], *d[SMC_NLA_DEV_MAX + 1], *p[SMC_NLA_DEV_PORT_MAX + 1];
	struct rnics_row *r;

	if (genlmsg_parse((struct nlmsghdr *)nlh, 0, tb, SMC_GEN_MAX, NULL) < 0 ||
	    !tb[SMC_GEN_DEV_SMCD] || nla_parse_nested(d, SMC_NLA_DEV_MAX, tb[SMC_GEN_DEV_SMCD], NULL) < 0)
		return -EBADMSG;
	r = rnics_table_add(arg, 0);
	if (!r)
		return -ENOMEM;
	CELL(r, C_IBDEV, "n/a");
	if (d[SMC_NLA_DEV_PCI_ID])
		smc_nla_strcpy(r->cell[C_PCI], RNICS_CELL, d[SMC_NLA_DEV_PCI_ID]);
	else
		CELL(r, C_PCI, "n/a");
	CELL(r, C_TYPE, "soft-ism");
	CELL(r, C_PORT, "n/a");
	CELL(r, C_STATE, "ACTIVE");
	memset(p, 0, sizeof(p));
	if (d[SMC_NLA_DEV_PORT] && nla_parse_nested(p, SMC_NLA_DEV_PORT_MAX, d[SMC_NLA_DEV_PORT], NULL) < 0)
		return -EBADMSG;
	pnet_cell(r, p);
	CELL(r, C_DEV, "n/a");
	return 0;
}

int rnics_soft_rows(struct rnics_table *t, const struct rnics_opts *o)
{
	enum smc_backend backend;
	struct smc_genl g;
	bool open_failed;
	int soft_errno, rc = 0;

	if (o->have_fid || smc_backend_choose(&backend, &soft_errno) || backend != SMC_BACKEND_SOFT)
		return 0;
	if (!smc_genl_open(&g, SMC_GENL_FAMILY_NAME, &open_failed)) {
		rc = smc_genl_dump(&g, SMC_NETLINK_GET_DEV_SMCR, roce_cb, t);
		if (!rc)
			rc = smc_genl_dump(&g, SMC_NETLINK_GET_DEV_SMCD, ism_cb, t);
	}
	smc_genl_close(&g);
	return rc == -ENOMEM ? -1 : 0;
}
