/*
 * smc_softd, family SMC_GEN_NETLINK: system info, devices, EIDs, HS
 * limitation and the dispatch rules, byte by byte (smc_netlink.c, <linux/smc.h>).
 */
#include "softfx.h"
#include "soft/fabric/devices.h"
#include "smc_uapi.h"

#include <errno.h>
#include <string.h>
#include <sys/utsname.h>
#include <libmnl/libmnl.h>

#define GEN SOFT_ID_GEN

/* Commands as the kernel's smc_netlink.c registers them: dump (true) or doit, admin. */
static const struct { uint8_t cmd; bool dump, admin; } gen_cmds[] = {
	{ SMC_NETLINK_GET_SYS_INFO, true, false },
	{ SMC_NETLINK_GET_LGR_SMCR, true, false },
	{ SMC_NETLINK_GET_LINK_SMCR, true, false },
	{ SMC_NETLINK_GET_LGR_SMCD, true, false },
	{ SMC_NETLINK_GET_DEV_SMCD, true, false },
	{ SMC_NETLINK_GET_DEV_SMCR, true, false },
	{ SMC_NETLINK_GET_STATS, true, false },
	{ SMC_NETLINK_GET_FBACK_STATS, true, false },
	{ SMC_NETLINK_DUMP_UEID, true, false },
	{ SMC_NETLINK_ADD_UEID, false, true },
	{ SMC_NETLINK_REMOVE_UEID, false, true },
	{ SMC_NETLINK_FLUSH_UEID, false, true },
	{ SMC_NETLINK_DUMP_SEID, true, false },
	{ SMC_NETLINK_ENABLE_SEID, false, true },
	{ SMC_NETLINK_DISABLE_SEID, false, true },
	{ SMC_NETLINK_DUMP_HS_LIMITATION, true, false },
	{ SMC_NETLINK_ENABLE_HS_LIMITATION, false, true },
	{ SMC_NETLINK_DISABLE_HS_LIMITATION, false, true },
};

TEST(soft_gen_dispatch_rules)
{
	struct sfx f;

	sfx_init(&f, true);
	for (size_t i = 0; i < sizeof(gen_cmds) / sizeof(gen_cmds[0]); i++) {
		uint8_t cmd = gen_cmds[i].cmd;
		int wrong = gen_cmds[i].dump ? 0 : NLM_F_DUMP;

		/* the wrong flag: EOPNOTSUPP, privileged or not */
		CHECK_INT(sfx_simple(&f, &f.admin, GEN, cmd, (uint16_t)wrong), -EOPNOTSUPP);
		CHECK_INT(sfx_simple(&f, &f.user, GEN, cmd, (uint16_t)wrong), -EOPNOTSUPP);
		if (gen_cmds[i].admin) {
			CHECK_INT(sfx_simple(&f, &f.user, GEN, cmd, 0), -EPERM);
			CHECK_INT(sfx_simple(&f, &f.other_user, GEN, cmd, 0), -EPERM);
		} else {
			struct mb m;

			/* every dump answers unprivileged, and ends with DONE */
			sfx_req(&m, GEN, cmd, NLM_F_DUMP, 3);
			sfx_send(&f, &f.other_user, &m);
			CHECK(sfx_count(&f) >= 1);
			CHECK_INT(sfx_msg(&f, sfx_count(&f) - 1)->nlmsg_type, NLMSG_DONE);
		}
	}
	CHECK_INT(sfx_simple(&f, &f.admin, GEN, 0, NLM_F_DUMP), -EOPNOTSUPP);
	CHECK_INT(sfx_simple(&f, &f.admin, GEN, 19, 0), -EOPNOTSUPP);
	CHECK_INT(sfx_simple(&f, &f.admin, GEN, 19, NLM_F_DUMP), -EOPNOTSUPP);
	sfx_free(&f);
}

/* CTRL_CMD_GETFAMILY: the families' ids, versions and maxattr. */
TEST(soft_gen_families_resolve)
{
	static const struct { const char *name; uint16_t id; uint32_t maxattr; } fams[] = {
		{ "SMC_PNETID", SOFT_ID_PNETID, 4 },
		{ "SMC_GEN_NETLINK", SOFT_ID_GEN, 1 },
	};
	struct sfx f;

	sfx_init(&f, true);
	for (size_t i = 0; i < 2; i++) {
		const struct nlattr *a;
		struct mb m;
		uint16_t id = 0;
		uint32_t version = 0, maxattr = 99;

		sfx_req(&m, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0, 1);
		mb_str(&m, CTRL_ATTR_FAMILY_NAME, fams[i].name);
		sfx_send(&f, &f.user, &m);
		CHECK_INT(sfx_count(&f), 2);
		mnl_attr_for_each(a, sfx_msg(&f, 0), GENL_HDRLEN) {
			if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID)
				id = mnl_attr_get_u16(a);
			if (mnl_attr_get_type(a) == CTRL_ATTR_VERSION)
				version = mnl_attr_get_u32(a);
			if (mnl_attr_get_type(a) == CTRL_ATTR_MAXATTR)
				maxattr = mnl_attr_get_u32(a);
		}
		CHECK_INT(id, fams[i].id);
		CHECK_INT(version, 1);
		CHECK_INT(maxattr, fams[i].maxattr);
	}
	sfx_free(&f);
}

TEST(soft_gen_sys_info_bytes)
{
	char host[33];
	struct smc_reply e;
	struct utsname u;
	struct sfx f;
	struct mb m, x;

	sfx_init(&f, true);
	smc_reply_init(&e);
	uname(&u);
	snprintf(host, sizeof(host), "%-32.32s", u.nodename);
	sfx_req(&m, GEN, SMC_NETLINK_GET_SYS_INFO, NLM_F_DUMP, 40);
	sfx_send(&f, &f.user, &m);
	sfx_exp_genl(&x, GEN, SMC_NETLINK_GET_SYS_INFO, NLM_F_MULTI, 40);
	mb_nest(&x, SMC_GEN_SYS_INFO);
	mb_u8(&x, SMC_NLA_SYS_VER, 2);
	mb_u8(&x, SMC_NLA_SYS_REL, 1);
	mb_u8(&x, SMC_NLA_SYS_IS_ISM_V2, 1);
	mb_u8(&x, SMC_NLA_SYS_IS_SMCR_V2, 1);
	mb_str(&x, SMC_NLA_SYS_LOCAL_HOST, host);
	mb_str(&x, SMC_NLA_SYS_SEID, "");
	mb_end(&x);
	mb_finish(&x, &e);
	sfx_exp_done(&e, 40);
	CHECK_REPLY(&f, &e);
	CHECK_INT(strlen(host), 32);
	smc_reply_free(&e);
	sfx_free(&f);
}

TEST(soft_gen_dev_smcd_bytes)
{
	struct smc_reply e;
	struct sfx f;
	struct mb m, x;

	sfx_init(&f, true);
	smc_reply_init(&e);
	sfx_req(&m, GEN, SMC_NETLINK_GET_DEV_SMCD, NLM_F_DUMP, 41);
	sfx_send(&f, &f.user, &m);
	sfx_exp_genl(&x, GEN, SMC_NETLINK_GET_DEV_SMCD, NLM_F_MULTI, 41);
	mb_nest(&x, SMC_GEN_DEV_SMCD);
	mb_u32(&x, SMC_NLA_DEV_USE_CNT, 0);
	mb_u8(&x, SMC_NLA_DEV_IS_CRIT, 0);
	mb_u32(&x, SMC_NLA_DEV_PCI_FID, 0);
	mb_u16(&x, SMC_NLA_DEV_PCI_CHID, 0xff01);
	mb_u16(&x, SMC_NLA_DEV_PCI_VENDOR, 0x1014);
	mb_u16(&x, SMC_NLA_DEV_PCI_DEVICE, 0x04ed);
	mb_str(&x, SMC_NLA_DEV_PCI_ID, "ffff:00:00.0");
	mb_nest(&x, SMC_NLA_DEV_PORT);
	mb_u8(&x, SMC_NLA_DEV_PORT_PNET_USR, 0);
	mb_str(&x, SMC_NLA_DEV_PORT_PNETID, "");
	mb_end(&x);
	mb_end(&x);
	mb_finish(&x, &e);
	sfx_exp_done(&e, 41);
	CHECK_REPLY(&f, &e);

	/* a user-defined PNET ID */
	strcpy(soft_dev_ism(&f.st)->pnetid[0], "NETD");
	soft_dev_ism(&f.st)->pnet_user[0] = true;
	sfx_send(&f, &f.user, &m);
	smc_reply_free(&e);
	smc_reply_init(&e);
	sfx_exp_genl(&x, GEN, SMC_NETLINK_GET_DEV_SMCD, NLM_F_MULTI, 41);
	mb_nest(&x, SMC_GEN_DEV_SMCD);
	mb_u32(&x, SMC_NLA_DEV_USE_CNT, 0);
	mb_u8(&x, SMC_NLA_DEV_IS_CRIT, 0);
	mb_u32(&x, SMC_NLA_DEV_PCI_FID, 0);
	mb_u16(&x, SMC_NLA_DEV_PCI_CHID, 0xff01);
	mb_u16(&x, SMC_NLA_DEV_PCI_VENDOR, 0x1014);
	mb_u16(&x, SMC_NLA_DEV_PCI_DEVICE, 0x04ed);
	mb_str(&x, SMC_NLA_DEV_PCI_ID, "ffff:00:00.0");
	mb_nest(&x, SMC_NLA_DEV_PORT);
	mb_u8(&x, SMC_NLA_DEV_PORT_PNET_USR, 1);
	mb_str(&x, SMC_NLA_DEV_PORT_PNETID, "NETD");
	mb_end(&x);
	mb_end(&x);
	mb_finish(&x, &e);
	sfx_exp_done(&e, 41);
	CHECK_REPLY(&f, &e);
	smc_reply_free(&e);
	sfx_free(&f);
}

TEST(soft_gen_dev_smcr_bytes)
{
	struct soft_dev *d;
	struct smc_reply e;
	struct sfx f;
	struct mb m, x;

	sfx_init(&f, true);
	smc_reply_init(&e);
	d = soft_dev_find_roce(&f.st, "sr_test");
	strcpy(d->pnetid[0], "NET1");
	d->pnet_user[0] = true;
	sfx_req(&m, GEN, SMC_NETLINK_GET_DEV_SMCR, NLM_F_DUMP, 42);
	sfx_send(&f, &f.user, &m);
	/* no PCI attributes: the device has no PCI parent, as rxe */
	sfx_exp_genl(&x, GEN, SMC_NETLINK_GET_DEV_SMCR, NLM_F_MULTI, 42);
	mb_nest(&x, SMC_GEN_DEV_SMCR);
	mb_u8(&x, SMC_NLA_DEV_IS_CRIT, 0);
	mb_str(&x, SMC_NLA_DEV_IB_NAME, "sr_test");
	mb_nest(&x, SMC_NLA_DEV_PORT);
	mb_u8(&x, SMC_NLA_DEV_PORT_PNET_USR, 1);
	mb_str(&x, SMC_NLA_DEV_PORT_PNETID, "NET1");
	mb_u32(&x, SMC_NLA_DEV_PORT_NETDEV, 1);            /* lo */
	mb_u8(&x, SMC_NLA_DEV_PORT_VALID, 1);
	mb_u8(&x, SMC_NLA_DEV_PORT_STATE, soft_dev_port_active(d, 1));
	mb_u32(&x, SMC_NLA_DEV_PORT_LNK_CNT, 0);
	mb_end(&x);
	mb_end(&x);
	mb_finish(&x, &e);
	sfx_exp_done(&e, 42);
	CHECK_REPLY(&f, &e);
	smc_reply_free(&e);
	sfx_free(&f);
}

TEST(soft_gen_no_devices_no_messages)
{
	struct sfx f;
	struct mb m;

	memset(&f, 0, sizeof(f));
	soft_state_init(&f.st);
	soft_out_init(&f.out);
	f.user.netns = f.st.init_netns;
	sfx_req(&m, GEN, SMC_NETLINK_GET_DEV_SMCD, NLM_F_DUMP, 1);
	sfx_send(&f, &f.user, &m);
	CHECK_INT(sfx_count(&f), 1);
	sfx_req(&m, GEN, SMC_NETLINK_GET_DEV_SMCR, NLM_F_DUMP, 1);
	sfx_send(&f, &f.user, &m);
	CHECK_INT(sfx_count(&f), 1);
	/* nothing ISMv2-capable: SEID message without attributes, no SEID in SYS_INFO */
	sfx_req(&m, GEN, SMC_NETLINK_DUMP_SEID, NLM_F_DUMP, 1);
	sfx_send(&f, &f.user, &m);
	CHECK_INT(sfx_count(&f), 2);
	CHECK_INT(sfx_msg(&f, 0)->nlmsg_len, NLMSG_LENGTH(GENL_HDRLEN));
	sfx_free(&f);
}

/* ---- UEID ---------------------------------------------------------- */

/* ADD/REMOVE_UEID as smcd sends them: the EID blank-padded to 32, with NUL. */
static int ueid(struct sfx *f, const struct soft_peer *p, uint8_t cmd, const char *eid)
{
	char padded[64];
	struct mb m;

	snprintf(padded, sizeof(padded), "%-32s", eid);
	sfx_req(&m, GEN, cmd, 0, 50);
	mb_str(&m, SMC_NLA_EID_TABLE_ENTRY, padded);
	sfx_send(f, p, &m);
	return sfx_error(f);
}

static void exp_ueid(struct smc_reply *e, uint32_t seq, const char *eid)
{
	char padded[33];
	struct mb x;

	snprintf(padded, sizeof(padded), "%-32s", eid);
	sfx_exp_genl(&x, GEN, SMC_NETLINK_DUMP_UEID, NLM_F_MULTI, seq);
	mb_str(&x, SMC_NLA_EID_TABLE_ENTRY, padded);
	mb_finish(&x, e);
}

TEST(soft_gen_ueid_table)
{
	struct smc_reply e;
	struct sfx f;
	struct mb m;

	sfx_init(&f, false);
	smc_reply_init(&e);
	CHECK_INT(ueid(&f, &f.admin, SMC_NETLINK_ADD_UEID, "SOME-EID"), 0);
	CHECK_INT(ueid(&f, &f.other, SMC_NETLINK_ADD_UEID, "EID.2"), 0);   /* host-wide */
	CHECK_INT(ueid(&f, &f.admin, SMC_NETLINK_ADD_UEID, "SOME-EID"), -EEXIST);
	CHECK_INT(ueid(&f, &f.admin, SMC_NETLINK_ADD_UEID, "E3"), 0);
	CHECK_INT(ueid(&f, &f.admin, SMC_NETLINK_ADD_UEID, "E4"), 0);
	CHECK_INT(ueid(&f, &f.admin, SMC_NETLINK_ADD_UEID, "E5"), -ERANGE);
	/* a full table answers ERANGE before it looks for duplicates */
	CHECK_INT(ueid(&f, &f.admin, SMC_NETLINK_ADD_UEID, "E4"), -ERANGE);
	sfx_req(&m, GEN, SMC_NETLINK_DUMP_UEID, NLM_F_DUMP, 51);
	sfx_send(&f, &f.user, &m);
	exp_ueid(&e, 51, "SOME-EID");
	exp_ueid(&e, 51, "EID.2");
	exp_ueid(&e, 51, "E3");
	exp_ueid(&e, 51, "E4");
	sfx_exp_done(&e, 51);
	CHECK_REPLY(&f, &e);

	CHECK_INT(ueid(&f, &f.admin, SMC_NETLINK_REMOVE_UEID, "NOPE"), -ENOENT);
	CHECK_INT(ueid(&f, &f.admin, SMC_NETLINK_REMOVE_UEID, "EID.2"), 0);
	CHECK_INT(ueid(&f, &f.admin, SMC_NETLINK_REMOVE_UEID, "EID.2"), -ENOENT);
	sfx_send(&f, &f.user, &m);
	smc_reply_free(&e);
	smc_reply_init(&e);
	exp_ueid(&e, 51, "SOME-EID");
	exp_ueid(&e, 51, "E3");
	exp_ueid(&e, 51, "E4");
	sfx_exp_done(&e, 51);
	CHECK_REPLY(&f, &e);

	CHECK_INT(sfx_simple(&f, &f.admin, GEN, SMC_NETLINK_FLUSH_UEID, 0), 0);
	CHECK_INT(sfx_simple(&f, &f.admin, GEN, SMC_NETLINK_FLUSH_UEID, 0), 0);
	sfx_send(&f, &f.user, &m);
	CHECK_INT(sfx_count(&f), 1);
	smc_reply_free(&e);
	sfx_free(&f);
}

TEST(soft_gen_ueid_validation)
{
	struct sfx f;
	struct mb m;

	sfx_init(&f, false);
	CHECK_INT(ueid(&f, &f.admin, SMC_NETLINK_ADD_UEID, "lower"), -EINVAL);
	CHECK_INT(ueid(&f, &f.admin, SMC_NETLINK_ADD_UEID, ""), -EINVAL);
	CHECK_INT(ueid(&f, &f.admin, SMC_NETLINK_ADD_UEID, ".EID"), -EINVAL);
	CHECK_INT(ueid(&f, &f.admin, SMC_NETLINK_ADD_UEID, "-EID"), -EINVAL);
	CHECK_INT(ueid(&f, &f.admin, SMC_NETLINK_ADD_UEID, "A B"), -EINVAL);
	CHECK_INT(ueid(&f, &f.admin, SMC_NETLINK_ADD_UEID, "A_B"), -EINVAL);
	/* consecutive dots are the tool's rule, not the kernel's */
	CHECK_INT(ueid(&f, &f.admin, SMC_NETLINK_ADD_UEID, "A..B"), 0);
	CHECK_INT(ueid(&f, &f.admin, SMC_NETLINK_ADD_UEID, "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"), 0);
	/* not blank-padded: the payload must be exactly 33 bytes */
	sfx_req(&m, GEN, SMC_NETLINK_ADD_UEID, 0, 52);
	mb_str(&m, SMC_NLA_EID_TABLE_ENTRY, "SHORT");
	sfx_send(&f, &f.admin, &m);
	CHECK_INT(sfx_error(&f), -EINVAL);
	sfx_req(&m, GEN, SMC_NETLINK_REMOVE_UEID, 0, 52);
	mb_str(&m, SMC_NLA_EID_TABLE_ENTRY, "A..B");
	sfx_send(&f, &f.admin, &m);
	CHECK_INT(sfx_error(&f), -EINVAL);
	/* 33 characters break the policy (NLA_STRING of at most 32) */
	sfx_req(&m, GEN, SMC_NETLINK_ADD_UEID, 0, 52);
	mb_str(&m, SMC_NLA_EID_TABLE_ENTRY, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456");
	sfx_send(&f, &f.admin, &m);
	CHECK_INT(sfx_error(&f), -ERANGE);
	/* 33 bytes without a NUL at the end are a string of 33 */
	sfx_req(&m, GEN, SMC_NETLINK_ADD_UEID, 0, 52);
	mb_attr(&m, SMC_NLA_EID_TABLE_ENTRY, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456", 33);
	sfx_send(&f, &f.admin, &m);
	CHECK_INT(sfx_error(&f), -ERANGE);
	/* no entry */
	CHECK_INT(sfx_simple(&f, &f.admin, GEN, SMC_NETLINK_ADD_UEID, 0), -EINVAL);
	CHECK_INT(sfx_simple(&f, &f.admin, GEN, SMC_NETLINK_REMOVE_UEID, 0), -EINVAL);
	/* unprivileged: refused, table unchanged */
	CHECK_INT(ueid(&f, &f.user, SMC_NETLINK_ADD_UEID, "NEW"), -EPERM);
	CHECK_INT(ueid(&f, &f.user, SMC_NETLINK_REMOVE_UEID, "A..B"), -EPERM);
	CHECK_INT(sfx_simple(&f, &f.user, GEN, SMC_NETLINK_FLUSH_UEID, 0), -EPERM);
	CHECK_INT(f.st.n_ueid, 2);
	CHECK_STR(f.st.ueid[0], "A..B                            ");
	/* the family policy rejects attribute 1 on the other doits */
	sfx_req(&m, GEN, SMC_NETLINK_FLUSH_UEID, 0, 53);
	mb_u8(&m, 1, 0);
	sfx_send(&f, &f.admin, &m);
	CHECK_INT(sfx_error(&f), -EINVAL);
	CHECK_INT(f.st.n_ueid, 2);
	sfx_free(&f);
}

TEST(soft_gen_seid)
{
	struct smc_reply e;
	struct sfx f;
	struct mb m, x;

	sfx_init(&f, false);
	smc_reply_init(&e);
	sfx_req(&m, GEN, SMC_NETLINK_DUMP_SEID, NLM_F_DUMP, 60);
	sfx_send(&f, &f.user, &m);
	sfx_exp_genl(&x, GEN, SMC_NETLINK_DUMP_SEID, NLM_F_MULTI, 60);
	mb_str(&x, SMC_NLA_SEID_ENTRY, "");
	mb_u8(&x, SMC_NLA_SEID_ENABLED, 0);
	mb_finish(&x, &e);
	sfx_exp_done(&e, 60);
	CHECK_REPLY(&f, &e);
	/* x86: nothing to switch */
	sfx_req(&m, GEN, SMC_NETLINK_ENABLE_SEID, 0, 61);
	sfx_send(&f, &f.admin, &m);
	smc_reply_free(&e);
	smc_reply_init(&e);
	sfx_exp_ack(&e, &m, -EOPNOTSUPP, NULL);
	CHECK_REPLY(&f, &e);
	CHECK_INT(sfx_simple(&f, &f.admin, GEN, SMC_NETLINK_DISABLE_SEID, 0), -EOPNOTSUPP);
	CHECK_INT(sfx_simple(&f, &f.user, GEN, SMC_NETLINK_ENABLE_SEID, 0), -EPERM);
	smc_reply_free(&e);
	sfx_free(&f);
}

static int hs_value(struct sfx *f, const struct soft_peer *p)
{
	const struct nlattr *a;
	struct mb m;
	int v = -1;

	sfx_req(&m, GEN, SMC_NETLINK_DUMP_HS_LIMITATION, NLM_F_DUMP, 70);
	sfx_send(f, p, &m);
	CHECK_INT(sfx_count(f), 2);
	CHECK_INT(sfx_msg(f, 0)->nlmsg_flags, NLM_F_MULTI);
	mnl_attr_for_each(a, sfx_msg(f, 0), GENL_HDRLEN)
		if (mnl_attr_get_type(a) == SMC_NLA_HS_LIMITATION_ENABLED &&
		    mnl_attr_get_payload_len(a) == 1)
			v = mnl_attr_get_u8(a);
	return v;
}

TEST(soft_gen_hs_limitation_per_namespace)
{
	struct sfx f;

	sfx_init(&f, false);
	CHECK_INT(hs_value(&f, &f.user), 0);
	CHECK_INT(sfx_simple(&f, &f.user, GEN, SMC_NETLINK_ENABLE_HS_LIMITATION, 0), -EPERM);
	CHECK_INT(hs_value(&f, &f.user), 0);
	CHECK_INT(sfx_simple(&f, &f.admin, GEN, SMC_NETLINK_ENABLE_HS_LIMITATION, 0), 0);
	CHECK_INT(hs_value(&f, &f.user), 1);
	CHECK_INT(hs_value(&f, &f.other_user), 0);
	CHECK_INT(sfx_simple(&f, &f.other, GEN, SMC_NETLINK_ENABLE_HS_LIMITATION, 0), 0);
	CHECK_INT(sfx_simple(&f, &f.admin, GEN, SMC_NETLINK_DISABLE_HS_LIMITATION, 0), 0);
	CHECK_INT(hs_value(&f, &f.user), 0);
	CHECK_INT(hs_value(&f, &f.other_user), 1);
	sfx_free(&f);
}
