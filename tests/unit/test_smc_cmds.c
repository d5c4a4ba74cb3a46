/* smcd/smcr info, ueid and seid, run end to end over an in-test transport. */
#include "fixture.h"
#include "smc/eid.h"
#include "smc/info.h"
#include "smc/smc.h"

#include <errno.h>

/* m as the whole reply to the n-th next request. */
static void answer(struct fx *r, int n, struct mb *m)
{
	peer_queue(&r->p, n, m);
	peer_done(&r->p, n);
}

/* A device message (nest top) queued for the n-th next request. */
static void queue_dev(struct fx *r, int n, int top, int pci_device)
{
	struct mb m;

	mb_start(&m, 0x20, NLM_F_MULTI);
	mb_genl(&m, top == SMC_GEN_DEV_SMCD ? SMC_NETLINK_GET_DEV_SMCD : SMC_NETLINK_GET_DEV_SMCR);
	mb_nest(&m, (uint16_t)top);
	mb_u32(&m, SMC_NLA_DEV_USE_CNT, 0);
	mb_u16(&m, SMC_NLA_DEV_PCI_DEVICE, (uint16_t)pci_device);
	mb_end(&m);
	peer_queue(&r->p, n, &m);
}

/* SYS_INFO in the kernel's emission order (SMC_NLA_SYS_*, lib/smc_uapi.h). */
static void sysinfo_msg(struct mb *m, bool ism_v2, const char *seid)
{
	mb_start(m, 0x20, NLM_F_MULTI);
	mb_genl(m, SMC_NETLINK_GET_SYS_INFO);
	mb_nest(m, SMC_GEN_SYS_INFO);
	mb_u8(m, SMC_NLA_SYS_VER, 2);
	mb_u8(m, SMC_NLA_SYS_REL, 1);
	mb_u8(m, SMC_NLA_SYS_IS_ISM_V2, ism_v2);
	mb_u8(m, SMC_NLA_SYS_IS_SMCR_V2, 1);
	mb_str(m, SMC_NLA_SYS_LOCAL_HOST, "myhost                          ");
	if (seid)
		mb_str(m, SMC_NLA_SYS_SEID, seid);
	mb_end(m);
}

/* smcd -j info without devices, m the SYS_INFO reply: the exit status. */
static int info_json(struct fx *r, struct mb *m)
{
	r->ctx.json = true;
	peer_done(&r->p, 1);
	peer_done(&r->p, 2);
	answer(r, 3, m);
	return fx_call(r, smc_info_cmd, 0);
}

#define KERNEL_CAPS                                            \
	"Kernel Capabilities\n"                                \
	"SMC Version:      2.1\n"                              \
	"SMC Hostname:     myhost                          \n" \
	"SMC-D Features:   v1 v2\n"                            \
	"SMC-R Features:   v1 v2\n"                            \
	"\n"

TEST(smc_info_full_example)
{
	struct fx r;
	struct mb m;

	fx_init_peer(&r, true);
	queue_dev(&r, 1, SMC_GEN_DEV_SMCD, 0x04ed);
	peer_done(&r.p, 1);
	queue_dev(&r, 2, SMC_GEN_DEV_SMCR, 0x1004);
	queue_dev(&r, 2, SMC_GEN_DEV_SMCR, 0x1016);
	peer_done(&r.p, 2);
	sysinfo_msg(&m, true, "IBM-SYSZ-ISMSEID00000000001234AB");
	answer(&r, 3, &m);
	CHECK_INT(fx_call(&r, smc_info_cmd, 0), 0);
	CHECK_STR(cap_text(&r.out), KERNEL_CAPS
		  "Hardware Capabilities\n"
		  "SEID:             IBM-SYSZ-ISMSEID00000000001234AB\n"
		  "ISM:              v1 v2\n"
		  "RoCE:             v1 v2\n");
	CHECK_STR(cap_text(&r.err), "");
	fx_free(&r);
}

TEST(smc_info_no_hardware_and_roce_v1_only)
{
	struct fx r;
	struct mb m;

	fx_init_peer(&r, false);
	r.ctx.json = false;
	peer_done(&r.p, 1);
	queue_dev(&r, 2, SMC_GEN_DEV_SMCR, 0x1004);
	queue_dev(&r, 2, SMC_GEN_DEV_SMCR, 0x1017);   /* not a RoCE Express: not counted */
	peer_done(&r.p, 2);
	sysinfo_msg(&m, false, NULL);
	answer(&r, 3, &m);
	CHECK_INT(fx_call(&r, smc_info_cmd, 1, "sh"), 0);
	CHECK_STR(cap_text(&r.out), KERNEL_CAPS
		  "Hardware Capabilities\n"
		  "SEID:             n/a\n"
		  "ISM:              n/a\n"
		  "RoCE:             v1 \n");
	fx_free(&r);
}

TEST(smc_info_missing_attributes_and_json)
{
	struct fx r;
	struct mb m;

	fx_init_peer(&r, true);
	mb_start(&m, 0x20, NLM_F_MULTI);
	mb_genl(&m, SMC_NETLINK_GET_SYS_INFO);
	mb_nest(&m, SMC_GEN_SYS_INFO);
	mb_u8(&m, SMC_NLA_SYS_VER, 2);              /* REL missing: version n/a, v1 only */
	mb_end(&m);
	CHECK_INT(info_json(&r, &m), 0);
	CHECK_STR(cap_text(&r.out),
		  "{\"smc_version\":null,\"hostname\":null,\"smcd_features\":[\"v1\"],"
		  "\"smcr_features\":[\"v1\"],\"seid\":null,\"ism\":null,\"roce\":null,"
		  "\"ism_devices\":0,\"roce_devices\":0}\n");
	fx_free(&r);
}

TEST(smc_info_errors_and_usage)
{
	struct fx r;

	fx_init_peer(&r, true);
	CHECK_INT(fx_call(&r, smc_info_cmd, 1, "help"), 255);
	CHECK_INT(fx_call(&r, smc_info_cmd, 2, "show", "x"), 255);
	CHECK_STR(cap_text(&r.err), "Usage: smcd info [show]\nUsage: smcd info [show]\n");
	fx_free(&r);

	fx_init_peer(&r, false);
	peer_error(&r.p, 1, -EOPNOTSUPP, NULL);
	CHECK_INT(fx_call(&r, smc_info_cmd, 0), 255);
	CHECK_STR(cap_text(&r.err), "Error: Failed to retrieve ISM device count\n");
	fx_free(&r);

	fx_init_peer(&r, false);
	peer_done(&r.p, 1);
	peer_done(&r.p, 2);
	peer_error(&r.p, 3, -EOPNOTSUPP, NULL);
	CHECK_INT(fx_call(&r, smc_info_cmd, 0), 255);
	CHECK_STR(cap_text(&r.err), "Error: Operation not supported by kernel\n");
	CHECK_STR(cap_text(&r.out), "");
	fx_free(&r);
}

TEST(smc_eid_validation_messages)
{
	char eid[SMC_EID_LEN + 1];
	const char *msg;

	CHECK_INT(smc_eid_check("SMC-EID.1", eid, &msg), 0);
	CHECK_STR(eid, "SMC-EID.1                       ");
	CHECK_INT(smc_eid_check("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456", eid, &msg), -1);
	CHECK_STR(msg, "Error: Invalid User EID specified: EID is longer than 32 characters");
	CHECK_INT(smc_eid_check("", eid, &msg), -1);
	CHECK_STR(msg, "Error: Invalid User EID specified: EID is empty");
	CHECK_INT(smc_eid_check("   ", eid, &msg), -1);
	CHECK_STR(msg, "Error: Invalid User EID specified: EID is empty");
	CHECK_INT(smc_eid_check("-ABC", eid, &msg), -1);
	CHECK_STR(msg, "Error: Invalid User EID specified: first character must be alphanumeric");
	CHECK_INT(smc_eid_check("A..B", eid, &msg), -1);
	CHECK_STR(msg, "Error: Invalid User EID specified: consecutive dots not allowed");
	CHECK_INT(smc_eid_check("abc", eid, &msg), -1);
	CHECK_STR(msg, "Error: Invalid User EID specified: unsupported character: 'a'\n"
		  "       Supported characters are: A-Z, 0-9, '.' and '-'");
	CHECK_INT(smc_eid_check("AB C", eid, &msg), -1);
	CHECK_STR(msg, "Error: Invalid User EID specified: unsupported character: ' '\n"
		  "       Supported characters are: A-Z, 0-9, '.' and '-'");
}

/* A User EID of the table, queued for the next request. */
static void queue_eid(struct fx *r, const char *eid)
{
	struct mb m;

	mb_start(&m, 0x20, NLM_F_MULTI);
	mb_genl(&m, SMC_NETLINK_DUMP_UEID);
	mb_str(&m, SMC_NLA_EID_TABLE_ENTRY, eid);
	peer_queue(&r->p, 1, &m);
}

TEST(smc_ueid_show_keeps_padding)
{
	struct fx r;

	fx_init_peer(&r, false);
	queue_eid(&r, "EID1                            ");
	queue_eid(&r, "SMC-EID.2                       ");
	peer_done(&r.p, 1);
	CHECK_INT(fx_call(&r, smc_ueid_cmd, 0), 0);
	CHECK_STR(cap_text(&r.out), "EID1                            \n"
		  "SMC-EID.2                       \n");
	fx_free(&r);

	fx_init_peer(&r, true);
	r.ctx.json = true;
	queue_eid(&r, "EID1                            ");
	peer_done(&r.p, 1);
	CHECK_INT(fx_call(&r, smc_ueid_cmd, 1, "show"), 0);
	CHECK_STR(cap_text(&r.out), "{\"ueids\":[\"EID1\"]}\n");
	fx_free(&r);

	/* a failed request leaves no half document behind */
	fx_init_peer(&r, true);
	r.ctx.json = true;
	queue_eid(&r, "EID1                            ");
	peer_error(&r.p, 1, -EPERM, NULL);
	CHECK_INT(fx_call(&r, smc_ueid_cmd, 0), 255);
	CHECK_STR(cap_text(&r.out), "");
	CHECK_STR(cap_text(&r.err), "Error: Operation not permitted\n");
	fx_free(&r);
}

TEST(smc_ueid_add_sends_padded_eid_and_maps_errors)
{
	static const struct { int err; const char *text; } t[] = {
		{ EINVAL, "Error: specified User EID was rejected by the kernel\n" },
		{ ENOMEM, "Error: kernel reported an out of memory condition\n" },
		{ ERANGE, "Error: specified User EID was rejected because the maximum number of User EIDs is reached\n" },
		{ EEXIST, "Error: specified User EID is already defined\n" },
		{ EPERM, "Error: Operation not permitted\n" },
		{ EOPNOTSUPP, "Error: operation not supported by kernel\n" },
	};
	struct fx r;
	struct mb m;

	fx_init_peer(&r, true);
	peer_error(&r.p, 1, 0, NULL);
	CHECK_INT(fx_call(&r, smc_ueid_cmd, 2, "add", "EID1"), 0);
	peer_request(&r.p, &m);
	/* nlmsghdr, genlmsghdr, then the attribute: 4 + 33 bytes (32 chars and NUL) */
	CHECK_INT(m.len, NLMSG_HDRLEN + 4 + 4 + 36);
	CHECK_INT(*(uint16_t *)(m.buf + NLMSG_HDRLEN + 4), 4 + 33);
	CHECK_STR((char *)m.buf + NLMSG_HDRLEN + 8, "EID1                            ");
	fx_free(&r);

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		fx_init_peer(&r, true);
		peer_error(&r.p, 1, -t[i].err, NULL);
		CHECK_INT(fx_call(&r, smc_ueid_cmd, 2, "a", "EID1"), 255);
		CHECK_STR(cap_text(&r.err), t[i].text);
		fx_free(&r);
	}
}

TEST(smc_ueid_del_flush_and_usage)
{
	struct fx r;

	fx_init_peer(&r, true);
	peer_error(&r.p, 1, -ENOENT, NULL);
	CHECK_INT(fx_call(&r, smc_ueid_cmd, 2, "del", "EID1"), 255);
	CHECK_STR(cap_text(&r.err), "Error: specified User EID is not defined\n");
	fx_free(&r);

	fx_init_peer(&r, true);
	peer_error(&r.p, 1, -EAGAIN, NULL);
	CHECK_INT(fx_call(&r, smc_ueid_cmd, 2, "d", "EID1"), 0);
	CHECK_STR(cap_text(&r.err), "Info: the System EID was activated because the last User EID was removed\n");
	fx_free(&r);

	fx_init_peer(&r, true);
	peer_error(&r.p, 1, -EPERM, NULL);
	CHECK_INT(fx_call(&r, smc_ueid_cmd, 2, "del", "EID1"), 255);
	CHECK_STR(cap_text(&r.err), "Error: Operation not permitted\n");
	fx_free(&r);

	fx_init_peer(&r, false);
	peer_error(&r.p, 1, 0, NULL);
	CHECK_INT(fx_call(&r, smc_ueid_cmd, 1, "fl"), 0);
	CHECK_INT(fx_call(&r, smc_ueid_cmd, 1, "add"), 255);
	CHECK_INT(fx_call(&r, smc_ueid_cmd, 2, "flush", "x"), 255);
	CHECK_INT(fx_call(&r, smc_ueid_cmd, 1, "bogus"), 255);
	CHECK_INT(fx_call(&r, smc_ueid_cmd, 1, "h"), 255);
	CHECK_INT(fx_call(&r, smc_ueid_cmd, 2, "add", "a..b"), 255);
	CHECK_STR(cap_text(&r.err),
		  "Usage: smcd ueid [show]\n       smcd ueid add <eid>\n       smcd ueid del <eid>\n       smcd ueid flush\n"
		  "Usage: smcd ueid [show]\n       smcd ueid add <eid>\n       smcd ueid del <eid>\n       smcd ueid flush\n"
		  "Usage: smcd ueid [show]\n       smcd ueid add <eid>\n       smcd ueid del <eid>\n       smcd ueid flush\n"
		  "Usage: smcd ueid [show]\n       smcd ueid add <eid>\n       smcd ueid del <eid>\n       smcd ueid flush\n"
		  "Error: Invalid User EID specified: consecutive dots not allowed\n");
	fx_free(&r);
}

/* The reply to the SEID dump: the SEID (enabled or not), or no attributes. */
static void answer_seid(struct fx *r, bool with_attrs, bool enabled)
{
	struct mb m;

	mb_start(&m, 0x20, NLM_F_MULTI);
	mb_genl(&m, SMC_NETLINK_DUMP_SEID);
	if (with_attrs) {
		mb_str(&m, SMC_NLA_SEID_ENTRY, "IBM-SYSZ-ISMSEID00000000001234AB");
		mb_u8(&m, SMC_NLA_SEID_ENABLED, enabled);
	}
	answer(r, 1, &m);
}

TEST(smc_seid_show_enable_disable)
{
	struct fx r;

	fx_init_peer(&r, true);
	answer_seid(&r, true, true);
	CHECK_INT(fx_call(&r, smc_seid_cmd, 0), 0);
	CHECK_STR(cap_text(&r.out), "IBM-SYSZ-ISMSEID00000000001234AB [enabled]\n");
	fx_free(&r);

	fx_init_peer(&r, true);
	answer_seid(&r, false, false);
	CHECK_INT(fx_call(&r, smc_seid_cmd, 1, "show"), 0);
	CHECK_STR(cap_text(&r.out), "n/a\n");
	fx_free(&r);

	fx_init_peer(&r, true);
	answer_seid(&r, false, false);
	CHECK_INT(fx_call(&r, smc_seid_cmd, 1, "en"), 255);
	CHECK_STR(cap_text(&r.err), "Error: System EID not available\n");
	CHECK_STR(cap_text(&r.out), "");
	fx_free(&r);

	fx_init_peer(&r, true);
	answer_seid(&r, true, true);
	peer_error(&r.p, 2, -ENOENT, NULL);
	CHECK_INT(fx_call(&r, smc_seid_cmd, 1, "disable"), 255);
	CHECK_STR(cap_text(&r.err), "Error: System EID cannot be disabled because no User EID is defined\n");
	fx_free(&r);

	fx_init_peer(&r, true);
	answer_seid(&r, true, false);
	peer_error(&r.p, 2, -EOPNOTSUPP, NULL);
	CHECK_INT(fx_call(&r, smc_seid_cmd, 1, "enable"), 255);
	CHECK_STR(cap_text(&r.err), "Error: operation not supported by kernel\n");
	fx_free(&r);

	fx_init_peer(&r, true);
	r.ctx.json = true;
	answer_seid(&r, true, false);
	CHECK_INT(fx_call(&r, smc_seid_cmd, 0), 0);
	CHECK_STR(cap_text(&r.out), "{\"seid\":\"IBM-SYSZ-ISMSEID00000000001234AB\",\"enabled\":false}\n");
	CHECK_INT(fx_call(&r, smc_seid_cmd, 2, "show", "x"), 255);
	CHECK_INT(fx_call(&r, smc_seid_cmd, 1, "bogus"), 255);
	fx_free(&r);
}

TEST(smc_info_json_trims_the_host_name)
{
	struct fx r;
	struct mb m;

	fx_init_peer(&r, true);
	sysinfo_msg(&m, true, "");
	CHECK_INT(info_json(&r, &m), 0);
	CHECK_STR(cap_text(&r.out),
		  "{\"smc_version\":\"2.1\",\"hostname\":\"myhost\",\"smcd_features\":[\"v1\",\"v2\"],"
		  "\"smcr_features\":[\"v1\",\"v2\"],\"seid\":null,\"ism\":null,\"roce\":null,"
		  "\"ism_devices\":0,\"roce_devices\":0}\n");
	fx_free(&r);
}

/* The reply to the handshake limitation dump, with or without its attribute. */
static void answer_hslimit(struct fx *r, bool with_attr, bool enabled)
{
	struct mb m;

	mb_start(&m, 0x20, NLM_F_MULTI);
	mb_genl(&m, SMC_NETLINK_DUMP_HS_LIMITATION);
	if (with_attr)
		mb_u8(&m, SMC_NLA_HS_LIMITATION_ENABLED, enabled);
	answer(r, 1, &m);
}

TEST(smc_hslimit_show)
{
	struct fx r;

	fx_init_peer(&r, false);
	answer_hslimit(&r, true, true);
	CHECK_INT(fx_call(&r, smc_hslimit_cmd, 0), 0);
	CHECK_STR(cap_text(&r.out), "Handshake limitation: enabled\n");
	fx_free(&r);

	fx_init_peer(&r, true);
	answer_hslimit(&r, true, false);
	CHECK_INT(fx_call(&r, smc_hslimit_cmd, 1, "sh"), 0);
	CHECK_STR(cap_text(&r.out), "Handshake limitation: disabled\n");
	fx_free(&r);

	fx_init_peer(&r, true);
	r.ctx.json = true;
	answer_hslimit(&r, true, true);
	CHECK_INT(fx_call(&r, smc_hslimit_cmd, 0), 0);
	CHECK_STR(cap_text(&r.out), "{\"enabled\":true}\n");
	fx_free(&r);

	/* a reply without the attribute: n/a, null */
	fx_init_peer(&r, true);
	answer_hslimit(&r, false, false);
	CHECK_INT(fx_call(&r, smc_hslimit_cmd, 0), 0);
	CHECK_STR(cap_text(&r.out), "Handshake limitation: n/a\n");
	fx_free(&r);

	fx_init_peer(&r, true);
	r.ctx.json = true;
	answer_hslimit(&r, false, false);
	CHECK_INT(fx_call(&r, smc_hslimit_cmd, 1, "show"), 0);
	CHECK_STR(cap_text(&r.out), "{\"enabled\":null}\n");
	fx_free(&r);

	/* a kernel before 5.19 does not know the command */
	fx_init_peer(&r, true);
	r.ctx.json = true;
	peer_error(&r.p, 1, -EOPNOTSUPP, NULL);
	CHECK_INT(fx_call(&r, smc_hslimit_cmd, 0), 255);
	CHECK_STR(cap_text(&r.out), "");
	CHECK_STR(cap_text(&r.err), "Error: Operation not supported by kernel\n");
	fx_free(&r);
}

TEST(smc_hslimit_enable_disable_and_usage)
{
	static const struct { const char *word; uint8_t cmd; } t[] = {
		{ "enable", SMC_NETLINK_ENABLE_HS_LIMITATION },
		{ "e", SMC_NETLINK_ENABLE_HS_LIMITATION },
		{ "disable", SMC_NETLINK_DISABLE_HS_LIMITATION },
		{ "dis", SMC_NETLINK_DISABLE_HS_LIMITATION },
	};
	struct fx r;
	struct mb m;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		fx_init_peer(&r, true);
		peer_error(&r.p, 1, 0, NULL);
		CHECK_INT(fx_call(&r, smc_hslimit_cmd, 1, t[i].word), 0);
		peer_request(&r.p, &m);
		/* a do request without attributes */
		CHECK_INT(m.len, NLMSG_HDRLEN + 4);
		CHECK_INT(m.buf[NLMSG_HDRLEN], t[i].cmd);
		CHECK_STR(cap_text(&r.out), "");
		CHECK_STR(cap_text(&r.err), "");
		fx_free(&r);
	}

	/* without CAP_NET_ADMIN: the kernel's EPERM, as for seid and ueid */
	fx_init_peer(&r, true);
	peer_error(&r.p, 1, -EPERM, NULL);
	CHECK_INT(fx_call(&r, smc_hslimit_cmd, 1, "enable"), 255);
	CHECK_STR(cap_text(&r.err), "Error: Operation not permitted\n");
	fx_free(&r);

	fx_init_peer(&r, false);
	r.ctx.prog = "smcr";
	CHECK_INT(fx_call(&r, smc_hslimit_cmd, 1, "help"), 255);
	CHECK_INT(fx_call(&r, smc_hslimit_cmd, 1, "bogus"), 255);
	CHECK_INT(fx_call(&r, smc_hslimit_cmd, 2, "enable", "x"), 255);
	CHECK_INT(fx_call(&r, smc_hslimit_cmd, 1, ""), 255);
	CHECK_STR(cap_text(&r.err),
		  "Usage: smcr hslimit [show]\n       smcr hslimit enable\n       smcr hslimit disable\n"
		  "Usage: smcr hslimit [show]\n       smcr hslimit enable\n       smcr hslimit disable\n"
		  "Usage: smcr hslimit [show]\n       smcr hslimit enable\n       smcr hslimit disable\n"
		  "Usage: smcr hslimit [show]\n       smcr hslimit enable\n       smcr hslimit disable\n");
	fx_free(&r);
}
