/*
 * GET_LGR_SMCR, GET_LINK_SMCR and GET_LGR_SMCD: link groups and links as the
 * kernel's smc_core.c emits them (attributes of <linux/smc.h>).
 */
#include "gen.h"
#include "lgr.h"
#include "service.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <libmnl/libmnl.h>

/* A fixed-width field as the kernel sends it: at most n bytes, then NUL. */
static void put_field(struct nlmsghdr *nlh, uint16_t type, const char *s, size_t n)
{
	char buf[64];

	n = strnlen(s, n < sizeof(buf) ? n : sizeof(buf) - 1);
	memcpy(buf, s, n);
	buf[n] = '\0';
	mnl_attr_put_strz(nlh, type, buf);
}

/* smc_nl_fill_lgr_v2_common(): attribute types from 0, host before EID. */
static void put_v2_common(struct nlmsghdr *nlh, uint16_t type, const struct soft_lgr *lgr)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, type);

	mnl_attr_put_u8(nlh, SMC_NLA_LGR_V2_VER, lgr->version);
	mnl_attr_put_u8(nlh, SMC_NLA_LGR_V2_REL, lgr->peer_rel);
	mnl_attr_put_u8(nlh, SMC_NLA_LGR_V2_OS, lgr->peer_os);
	put_field(nlh, SMC_NLA_LGR_V2_PEER_HOST, lgr->peer_host, SOFT_HOSTNAME_LEN);
	put_field(nlh, SMC_NLA_LGR_V2_NEG_EID, lgr->neg_eid, SOFT_EID_LEN);
	mnl_attr_nest_end(nlh, nest);
}

/* smc_nl_fill_lgr() */
static void fill_lgr_r(struct nlmsghdr *nlh, const struct soft_lgr *lgr)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, SMC_GEN_LGR_SMCR);

	mnl_attr_put_u32(nlh, SMC_NLA_LGR_R_ID, soft_lgr_id(lgr));
	mnl_attr_put_u32(nlh, SMC_NLA_LGR_R_CONNS_NUM, lgr->conns);
	mnl_attr_put_u8(nlh, SMC_NLA_LGR_R_ROLE, lgr->role);
	mnl_attr_put_u8(nlh, SMC_NLA_LGR_R_TYPE, lgr->type);
	mnl_attr_put_u8(nlh, SMC_NLA_LGR_R_BUF_TYPE, lgr->buf_type);
	mnl_attr_put_u8(nlh, SMC_NLA_LGR_R_VLAN_ID, lgr->vlan_id);
	mnl_attr_put_u64(nlh, SMC_NLA_LGR_R_NET_COOKIE, lgr->net_cookie);
	put_field(nlh, SMC_NLA_LGR_R_PNETID, lgr->pnetid, SOFT_PNETID_LEN);
	soft_put_uint(nlh, SMC_NLA_LGR_R_SNDBUF_ALLOC, lgr->sndbuf_alloc);
	soft_put_uint(nlh, SMC_NLA_LGR_R_RMB_ALLOC, lgr->rmb_alloc);
	if (lgr->version > 1) {
		struct nlattr *v2;

		put_v2_common(nlh, SMC_NLA_LGR_R_V2_COMMON, lgr);
		v2 = mnl_attr_nest_start(nlh, SMC_NLA_LGR_R_V2);
		mnl_attr_put_u8(nlh, SMC_NLA_LGR_R_V2_DIRECT, lgr->direct);
		mnl_attr_put_u8(nlh, SMC_NLA_LGR_R_V2_MAX_CONNS, lgr->max_conns);
		mnl_attr_put_u8(nlh, SMC_NLA_LGR_R_V2_MAX_LINKS, lgr->max_links);
		mnl_attr_nest_end(nlh, v2);
	}
	mnl_attr_nest_end(nlh, nest);
}

/* Also inside GET_LINK_SMCR, where the kernel keeps the cmd GET_LGR_SMCR. */
static int put_lgr_r(struct soft_req *r, const struct soft_lgr *lgr)
{
	struct nlmsghdr *nlh = soft_gen_msg(r, SMC_NETLINK_GET_LGR_SMCR);

	if (!nlh)
		return -ENOMEM;
	fill_lgr_r(nlh, lgr);
	soft_msg_end(r->out, nlh);
	return 0;
}

/* smc_nl_fill_lgr_link() */
static int put_link(struct soft_req *r, const struct soft_link *l)
{
	struct nlmsghdr *nlh = soft_gen_msg(r, SMC_NETLINK_GET_LINK_SMCR);
	struct nlattr *nest;
	char gid[40];
	uint32_t uid;

	if (!nlh)
		return -ENOMEM;
	nest = mnl_attr_nest_start(nlh, SMC_GEN_LINK_SMCR);
	mnl_attr_put_u8(nlh, SMC_NLA_LINK_ID, l->link_id);
	mnl_attr_put_u32(nlh, SMC_NLA_LINK_STATE, l->state);
	mnl_attr_put_u32(nlh, SMC_NLA_LINK_CONN_CNT, l->conn_cnt);
	mnl_attr_put_u8(nlh, SMC_NLA_LINK_IB_PORT, l->ib_port);
	mnl_attr_put_u32(nlh, SMC_NLA_LINK_NET_DEV, l->ndev_ifindex);
	mnl_attr_put_strz(nlh, SMC_NLA_LINK_IB_DEV, l->dev ? l->dev->name : "");
	memcpy(&uid, l->uid, sizeof(uid));
	mnl_attr_put_u32(nlh, SMC_NLA_LINK_UID, uid);
	memcpy(&uid, l->peer_uid, sizeof(uid));
	mnl_attr_put_u32(nlh, SMC_NLA_LINK_PEER_UID, uid);
	soft_gid_text(gid, l->gid);
	mnl_attr_put_strz(nlh, SMC_NLA_LINK_GID, gid);
	soft_gid_text(gid, l->peer_gid);
	mnl_attr_put_strz(nlh, SMC_NLA_LINK_PEER_GID, gid);
	mnl_attr_nest_end(nlh, nest);
	soft_msg_end(r->out, nlh);
	return 0;
}

int soft_gen_lgr_smcr(struct soft_req *r)
{
	soft_lgr_bufs_recount(r->st);
	for (const struct soft_lgr *lgr = soft_lgr_first(r->st); lgr; lgr = lgr->next)
		if (!lgr->smcd && put_lgr_r(r, lgr))
			return -ENOMEM;
	return 0;
}

int soft_gen_link_smcr(struct soft_req *r)
{
	soft_lgr_bufs_recount(r->st);
	for (const struct soft_lgr *lgr = soft_lgr_first(r->st); lgr; lgr = lgr->next) {
		if (lgr->smcd)
			continue;
		if (put_lgr_r(r, lgr))
			return -ENOMEM;
		for (int i = 0; i < SOFT_LINKS_PER_LGR; i++)
			if (soft_link_usable(&lgr->lnk[i]) && put_link(r, &lgr->lnk[i]))
				return -ENOMEM;
	}
	return 0;
}

/* smc_nl_fill_smcd_lgr(): the GIDs and the PNET ID come from the device. */
static int put_lgr_d(struct soft_req *r, const struct soft_lgr *lgr)
{
	struct nlmsghdr *nlh = soft_gen_msg(r, SMC_NETLINK_GET_LGR_SMCD);
	const struct soft_dev *d = lgr->dev;
	struct nlattr *nest;

	if (!nlh)
		return -ENOMEM;
	nest = mnl_attr_nest_start(nlh, SMC_GEN_LGR_SMCD);
	mnl_attr_put_u32(nlh, SMC_NLA_LGR_D_ID, soft_lgr_id(lgr));
	mnl_attr_put_u64(nlh, SMC_NLA_LGR_D_GID, d->gid);
	mnl_attr_put_u64(nlh, SMC_NLA_LGR_D_EXT_GID, d->gid_ext);
	mnl_attr_put_u64(nlh, SMC_NLA_LGR_D_PEER_GID, lgr->peer_gid);
	mnl_attr_put_u64(nlh, SMC_NLA_LGR_D_PEER_EXT_GID, lgr->peer_gid_ext);
	mnl_attr_put_u8(nlh, SMC_NLA_LGR_D_VLAN_ID, lgr->vlan_id);
	mnl_attr_put_u32(nlh, SMC_NLA_LGR_D_CONNS_NUM, lgr->conns);
	mnl_attr_put_u32(nlh, SMC_NLA_LGR_D_CHID, d->chid);
	soft_put_uint(nlh, SMC_NLA_LGR_D_SNDBUF_ALLOC, lgr->sndbuf_alloc);
	soft_put_uint(nlh, SMC_NLA_LGR_D_DMB_ALLOC, lgr->rmb_alloc);
	put_field(nlh, SMC_NLA_LGR_D_PNETID, d->pnetid[0], SOFT_PNETID_LEN);
	if (lgr->version > 1)
		put_v2_common(nlh, SMC_NLA_LGR_D_V2_COMMON, lgr);
	mnl_attr_nest_end(nlh, nest);
	soft_msg_end(r->out, nlh);
	return 0;
}

/* Device by device, as the kernel walks smcd_dev_list and each lgr_list. */
int soft_gen_lgr_smcd(struct soft_req *r)
{
	for (const struct soft_dev *d = r->st->devs; d; d = d->next) {
		if (d->kind != SOFT_DEV_ISM)
			continue;
		for (const struct soft_lgr *lgr = soft_lgr_first(r->st); lgr; lgr = lgr->next)
			if (lgr->smcd && lgr->dev == d && put_lgr_d(r, lgr))
				return -ENOMEM;
	}
	return 0;
}
