/*
 * smc_rnics: the soft backend's devices (smc_softd's emulated RoCE devices and
 * soft ISM), listed after the RDMA devices of sysfs (on s390 after the PCI
 * functions, in that listing's columns) when the tools use that backend.
 * They have no sysfs entry: their data comes from SMC_GEN_NETLINK, as
 * `smcr device` and `smcd device` show it.  The host's RDMA devices that the
 * daemon offers too are listed once: by their sysfs rows, or on s390, where
 * those list PCI functions, here when they are none (rxe, siw).
 */
#include "rnics.h"

#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <string.h>

#include "genl.h"
#include "smc_uapi.h"

/* One port of a soft device, as both listings show it. */
struct soft_port {
	const char *ib;                 /* "n/a" for soft ISM */
	char pci[RNICS_CELL];
	const char *type;
	int port;                       /* 1-based; 0: none (soft ISM) */
	bool active;
	char pnet[RNICS_CELL];          /* "<id>*" for a user-defined PNET ID, or "n/a" */
	char dev[IF_NAMESIZE];          /* the net device, or "n/a" */
};

#define CELL(r, c, ...) snprintf((r)->cell[c], RNICS_CELL, __VA_ARGS__)

/* Other architectures: IB-Dev PCI_ID Type IPrt State PNET_ID Net-Dev, after the sysfs rows. */
static int rdma_row(struct rnics_table *t, const struct soft_port *s)
{
	enum { C_IBDEV, C_PCI, C_TYPE, C_PORT, C_STATE, C_PNET, C_DEV };
	struct rnics_row *r = rnics_table_add(t, 0);

	if (!r)
		return -ENOMEM;
	CELL(r, C_IBDEV, "%s", s->ib);
	CELL(r, C_PCI, "%s", s->pci);
	CELL(r, C_TYPE, "%s", s->type);
	if (s->port)
		CELL(r, C_PORT, "%d", s->port);
	else
		CELL(r, C_PORT, "n/a");
	CELL(r, C_STATE, "%s", s->active ? "ACTIVE" : "DOWN");
	CELL(r, C_PNET, "%s", s->pnet);
	CELL(r, C_DEV, "%s", s->dev);
	return 0;
}

/*
 * s390: no FID, no PCI function (FID, Power, PCHID, PFT and VF are n/a),
 * after the PCI functions; the port as the listing counts it (0-based by
 * net device, 1-based with -I), the device the listing names.
 */
static int s390_row(struct rnics_table *t, const struct soft_port *s)
{
	enum { C_FID, C_POWER, C_PCI, C_PCHID, C_TYPE, C_PFT, C_VF, C_PORT, C_PNET, C_DEV };
	bool ib = t->lay == &rnics_s390_ib || t->lay == &rnics_s390_ib_raw;
	struct rnics_row *r = rnics_table_add(t, ULONG_MAX);

	if (!r)
		return -ENOMEM;
	for (int c = 0; c < RNICS_MAX_COLS; c++)
		CELL(r, c, "n/a");
	CELL(r, C_PCI, "%s", s->pci);
	CELL(r, C_TYPE, "%s", s->type);
	if (s->port)
		CELL(r, C_PORT, "%d", ib ? s->port : s->port - 1);
	CELL(r, C_PNET, "%s", s->pnet);
	CELL(r, C_DEV, "%s", ib ? s->ib : s->dev);
	return 0;
}

static int put(struct rnics_table *t, const struct soft_port *s)
{
	return t->lay == &rnics_rdma ? rdma_row(t, s) : s390_row(t, s);
}

static void port_pnet(struct soft_port *s, struct nlattr **port)
{
	char id[RNICS_PNET_LEN + 1] = "";
	bool usr = port[SMC_NLA_DEV_PORT_PNET_USR] &&
		   nla_len(port[SMC_NLA_DEV_PORT_PNET_USR]) >= 1 &&
		   nla_get_u8(port[SMC_NLA_DEV_PORT_PNET_USR]);

	if (port[SMC_NLA_DEV_PORT_PNETID])
		smc_nla_strcpy(id, sizeof(id), port[SMC_NLA_DEV_PORT_PNETID]);
	if (*id)
		snprintf(s->pnet, sizeof(s->pnet), "%s%s", id, usr ? "*" : "");
	else
		snprintf(s->pnet, sizeof(s->pnet), "n/a");
}

static int roce_port(struct rnics_table *t, const char *ib, const char *type, int n, struct nlattr *nest)
{
	struct nlattr *p[SMC_NLA_DEV_PORT_MAX + 1];
	struct soft_port s = { .ib = ib, .pci = "n/a", .type = type, .port = n };
	uint32_t ifindex = 0;

	if (nla_parse_nested(p, SMC_NLA_DEV_PORT_MAX, nest, NULL) < 0)
		return -EBADMSG;
	if (!p[SMC_NLA_DEV_PORT_VALID] || nla_len(p[SMC_NLA_DEV_PORT_VALID]) < 1 ||
	    !nla_get_u8(p[SMC_NLA_DEV_PORT_VALID]))
		return 0;
	s.active = p[SMC_NLA_DEV_PORT_STATE] && nla_len(p[SMC_NLA_DEV_PORT_STATE]) >= 1 &&
		   nla_get_u8(p[SMC_NLA_DEV_PORT_STATE]);
	port_pnet(&s, p);
	if (p[SMC_NLA_DEV_PORT_NETDEV] && nla_len(p[SMC_NLA_DEV_PORT_NETDEV]) >= 4)
		ifindex = nla_get_u32(p[SMC_NLA_DEV_PORT_NETDEV]);
	if (!ifindex || !if_indextoname(ifindex, s.dev))
		snprintf(s.dev, sizeof(s.dev), "n/a");
	return put(t, &s);
}

static int roce_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct rnics_table *t = arg;
	struct nlattr *tb[SMC_GEN_MAX + 1], *d[SMC_NLA_DEV_MAX + 1];
	char ib[64] = "", type[RNICS_CELL] = "soft-roce";
	int rc;

	if (genlmsg_parse((struct nlmsghdr *)nlh, 0, tb, SMC_GEN_MAX, NULL) < 0 ||
	    !tb[SMC_GEN_DEV_SMCR] || nla_parse_nested(d, SMC_NLA_DEV_MAX, tb[SMC_GEN_DEV_SMCR], NULL) < 0)
		return -EBADMSG;
	if (d[SMC_NLA_DEV_IB_NAME])
		smc_nla_strcpy(ib, sizeof(ib), d[SMC_NLA_DEV_IB_NAME]);
	/*
	 * A host RDMA device the daemon offers: elsewhere the sysfs rows list
	 * it; on s390 they list PCI functions, so one that is a PCI function is
	 * there, and another (rxe, siw) is listed here as the sysfs rows would
	 * name it.
	 */
	if (rnics_exists("class/infiniband/%s/ports", ib)) {
		if (t->lay == &rnics_rdma || rnics_exists("class/infiniband/%s/device/function_id", ib))
			return 0;
		rnics_driver(ib, type);
	}
	rc = d[SMC_NLA_DEV_PORT] ? roce_port(t, ib, type, 1, d[SMC_NLA_DEV_PORT]) : 0;
	if (!rc && d[SMC_NLA_DEV_PORT2])
		rc = roce_port(t, ib, type, 2, d[SMC_NLA_DEV_PORT2]);
	return rc;
}

static int ism_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct nlattr *tb[SMC_GEN_MAX + 1], *d[SMC_NLA_DEV_MAX + 1], *p[SMC_NLA_DEV_PORT_MAX + 1];
	struct soft_port s = { .ib = "n/a", .pci = "n/a", .type = "soft-ism", .active = true, .dev = "n/a" };

	if (genlmsg_parse((struct nlmsghdr *)nlh, 0, tb, SMC_GEN_MAX, NULL) < 0 ||
	    !tb[SMC_GEN_DEV_SMCD] || nla_parse_nested(d, SMC_NLA_DEV_MAX, tb[SMC_GEN_DEV_SMCD], NULL) < 0)
		return -EBADMSG;
	if (d[SMC_NLA_DEV_PCI_ID])
		smc_nla_strcpy(s.pci, sizeof(s.pci), d[SMC_NLA_DEV_PCI_ID]);
	memset(p, 0, sizeof(p));
	if (d[SMC_NLA_DEV_PORT] && nla_parse_nested(p, SMC_NLA_DEV_PORT_MAX, d[SMC_NLA_DEV_PORT], NULL) < 0)
		return -EBADMSG;
	port_pnet(&s, p);
	return put(arg, &s);
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
