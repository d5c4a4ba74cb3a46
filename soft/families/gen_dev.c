/*
 * GET_DEV_SMCD and GET_DEV_SMCR: the soft ISM and the soft RoCE devices as
 * smc_ism.c and smc_ib.c list theirs (attributes of <linux/smc.h>).
 */
#include "gen.h"
#include "lgr.h"

#include <errno.h>
#include <libmnl/libmnl.h>

static void put_pnetid(struct nlmsghdr *nlh, const struct soft_dev *d, int idx)
{
	mnl_attr_put_u8(nlh, SMC_NLA_DEV_PORT_PNET_USR, d->pnet_user[idx]);
	mnl_attr_put_strz(nlh, SMC_NLA_DEV_PORT_PNETID, d->pnetid[idx]);
}

/* smc_nl_handle_smcd_dev() */
static int put_smcd(struct soft_req *r, const struct soft_dev *d)
{
	struct nlmsghdr *nlh = soft_gen_msg(r, SMC_NETLINK_GET_DEV_SMCD);
	uint32_t use_cnt = soft_lgr_count_on(r->st, d);
	struct nlattr *nest, *port;

	if (!nlh)
		return -ENOMEM;
	nest = mnl_attr_nest_start(nlh, SMC_GEN_DEV_SMCD);
	mnl_attr_put_u32(nlh, SMC_NLA_DEV_USE_CNT, use_cnt);
	mnl_attr_put_u8(nlh, SMC_NLA_DEV_IS_CRIT, use_cnt > 0);
	mnl_attr_put_u32(nlh, SMC_NLA_DEV_PCI_FID, d->fid);
	mnl_attr_put_u16(nlh, SMC_NLA_DEV_PCI_CHID, d->chid);
	mnl_attr_put_u16(nlh, SMC_NLA_DEV_PCI_VENDOR, d->vendor);
	mnl_attr_put_u16(nlh, SMC_NLA_DEV_PCI_DEVICE, d->device);
	mnl_attr_put_strz(nlh, SMC_NLA_DEV_PCI_ID, d->pci_id);
	port = mnl_attr_nest_start(nlh, SMC_NLA_DEV_PORT);
	put_pnetid(nlh, d, 0);
	mnl_attr_nest_end(nlh, port);
	mnl_attr_nest_end(nlh, nest);
	soft_msg_end(r->out, nlh);
	return 0;
}

int soft_gen_dev_smcd(struct soft_req *r)
{
	for (const struct soft_dev *d = r->st->devs; d; d = d->next)
		if (d->kind == SOFT_DEV_ISM && put_smcd(r, d))
			return -ENOMEM;
	return 0;
}

/* smc_nl_handle_dev_port(): nest PORT for port 1, PORT2 for port 2. */
static void put_port(struct soft_req *r, struct nlmsghdr *nlh, const struct soft_dev *d, int idx)
{
	struct nlattr *port = mnl_attr_nest_start(nlh, SMC_NLA_DEV_PORT + idx);

	put_pnetid(nlh, d, idx);
	mnl_attr_put_u32(nlh, SMC_NLA_DEV_PORT_NETDEV, d->ifindex[idx]);
	mnl_attr_put_u8(nlh, SMC_NLA_DEV_PORT_VALID, 1);
	mnl_attr_put_u8(nlh, SMC_NLA_DEV_PORT_STATE, soft_dev_port_active(d, idx + 1));
	mnl_attr_put_u32(nlh, SMC_NLA_DEV_PORT_LNK_CNT, soft_lgr_links_on(r->st, d, idx + 1));
	mnl_attr_nest_end(nlh, port);
}

/* smc_nl_handle_smcr_dev(): PCI attributes only for a device with a PCI parent. */
static int put_smcr(struct soft_req *r, const struct soft_dev *d)
{
	struct nlmsghdr *nlh = soft_gen_msg(r, SMC_NETLINK_GET_DEV_SMCR);
	struct nlattr *nest;

	if (!nlh)
		return -ENOMEM;
	nest = mnl_attr_nest_start(nlh, SMC_GEN_DEV_SMCR);
	mnl_attr_put_u8(nlh, SMC_NLA_DEV_IS_CRIT, soft_lgr_dev_critical(r->st, d));
	if (d->pci) {
		mnl_attr_put_u32(nlh, SMC_NLA_DEV_PCI_FID, d->fid);
		mnl_attr_put_u16(nlh, SMC_NLA_DEV_PCI_CHID, d->chid);
		mnl_attr_put_u16(nlh, SMC_NLA_DEV_PCI_VENDOR, d->vendor);
		mnl_attr_put_u16(nlh, SMC_NLA_DEV_PCI_DEVICE, d->device);
		mnl_attr_put_strz(nlh, SMC_NLA_DEV_PCI_ID, d->pci_id);
	}
	mnl_attr_put_strz(nlh, SMC_NLA_DEV_IB_NAME, d->name);
	for (int i = 0; i < d->n_ports && i < SOFT_PORTS; i++)
		put_port(r, nlh, d, i);
	mnl_attr_nest_end(nlh, nest);
	soft_msg_end(r->out, nlh);
	return 0;
}

int soft_gen_dev_smcr(struct soft_req *r)
{
	for (const struct soft_dev *d = r->st->devs; d; d = d->next)
		if (soft_dev_roce_usable(d) && put_smcr(r, d))
			return -ENOMEM;
	return 0;
}
