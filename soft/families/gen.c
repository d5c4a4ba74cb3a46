/*
 * Family SMC_GEN_NETLINK: its operations as the kernel's smc_netlink.c
 * registers them (dump or doit, admin flags), the helpers of gen_*.c and the
 * per-namespace handshake limitation.
 */
#include "families.h"
#include "gen.h"
#include "state.h"
#include "policy.h"

#include <errno.h>
#include <libmnl/libmnl.h>

#define SMC_CMD_MAX_ATTR 1

struct nlmsghdr *soft_gen_msg(struct soft_req *r, uint8_t cmd)
{
	return soft_genl_msg(r->out, r->nlh, SOFT_ID_GEN, cmd, NLM_F_MULTI);
}

void soft_put_uint(struct nlmsghdr *nlh, uint16_t type, uint64_t v)
{
	if (v == (uint32_t)v)
		mnl_attr_put_u32(nlh, type, (uint32_t)v);
	else
		mnl_attr_put_u64(nlh, type, v);
}

int soft_gen_check_attrs(struct soft_req *r)
{
	const struct nlattr *tb[SMC_CMD_MAX_ATTR + 1];

	if (soft_genl_attrs(r, tb, SMC_CMD_MAX_ATTR))
		return -EINVAL;
	if (tb[SMC_CMD_MAX_ATTR]) {
		r->ext_ack = SOFT_POLICY_MSG;
		return -EINVAL;
	}
	return 0;
}

int soft_gen_hs_dump(struct soft_req *r)
{
	struct nlmsghdr *nlh = soft_gen_msg(r, SMC_NETLINK_DUMP_HS_LIMITATION);

	if (!nlh)
		return -ENOMEM;
	mnl_attr_put_u8(nlh, SMC_NLA_HS_LIMITATION_ENABLED, r->ns->hs_limit);
	soft_msg_end(r->out, nlh);
	return 0;
}

static int hs_set(struct soft_req *r, bool on)
{
	int rc = soft_gen_check_attrs(r);

	if (!rc)
		r->ns->hs_limit = on;
	return rc;
}

int soft_gen_hs_enable(struct soft_req *r)
{
	return hs_set(r, true);
}

int soft_gen_hs_disable(struct soft_req *r)
{
	return hs_set(r, false);
}

static const struct soft_op gen_ops[] = {
	{ SMC_NETLINK_GET_SYS_INFO, NULL, soft_gen_sys_info, false },
	{ SMC_NETLINK_GET_LGR_SMCR, NULL, soft_gen_lgr_smcr, false },
	{ SMC_NETLINK_GET_LINK_SMCR, NULL, soft_gen_link_smcr, false },
	{ SMC_NETLINK_GET_LGR_SMCD, NULL, soft_gen_lgr_smcd, false },
	{ SMC_NETLINK_GET_DEV_SMCD, NULL, soft_gen_dev_smcd, false },
	{ SMC_NETLINK_GET_DEV_SMCR, NULL, soft_gen_dev_smcr, false },
	{ SMC_NETLINK_GET_STATS, NULL, soft_gen_stats, false },
	{ SMC_NETLINK_GET_FBACK_STATS, NULL, soft_gen_fback_stats, false },
	{ SMC_NETLINK_DUMP_UEID, NULL, soft_gen_ueid_dump, false },
	{ SMC_NETLINK_ADD_UEID, soft_gen_ueid_add, NULL, true },
	{ SMC_NETLINK_REMOVE_UEID, soft_gen_ueid_remove, NULL, true },
	{ SMC_NETLINK_FLUSH_UEID, soft_gen_ueid_flush, NULL, true },
	{ SMC_NETLINK_DUMP_SEID, NULL, soft_gen_seid_dump, false },
	{ SMC_NETLINK_ENABLE_SEID, soft_gen_seid_enable, NULL, true },
	{ SMC_NETLINK_DISABLE_SEID, soft_gen_seid_disable, NULL, true },
	{ SMC_NETLINK_DUMP_HS_LIMITATION, NULL, soft_gen_hs_dump, false },
	{ SMC_NETLINK_ENABLE_HS_LIMITATION, soft_gen_hs_enable, NULL, true },
	{ SMC_NETLINK_DISABLE_HS_LIMITATION, soft_gen_hs_disable, NULL, true },
};

const struct soft_family soft_gen_family = {
	.name = SMC_GENL_FAMILY_NAME,
	.id = SOFT_ID_GEN,
	.version = SMC_GENL_FAMILY_VERSION,
	.maxattr = SMC_CMD_MAX_ATTR,
	.ops = gen_ops,
	.n_ops = sizeof(gen_ops) / sizeof(gen_ops[0]),
};
