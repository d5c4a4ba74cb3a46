/* smcd/smcr info, ueid and seid, run end to end over an in-test transport. */
#include "unit.h"
#include "peer.h"
#include "smc/eid.h"
#include "smc/info.h"
#include "smc/smc.h"

#include <errno.h>
#include <stdarg.h>

struct run {
	struct peer p;
	struct capture out, err;
	struct smc_ctx ctx;
};

static void run_init(struct run *r, bool smcd)
{
	peer_init(&r->p);
	cap_open(&r->out);
	cap_open(&r->err);
	r->ctx = (struct smc_ctx){ .prog = smcd ? "smcd" : "smcr", .smcd = smcd,
				   .g = &r->p.g, .out = r->out.f, .err = r->err.f };
}

static void run_free(struct run *r)
{
	cap_free(&r->out);
	cap_free(&r->err);
	peer_close(&r->p);
}

static int call(struct run *r, int (*fn)(struct smc_ctx *, int, char **), int argc, ...)
{
	char *argv[8];
	va_list ap;

	va_start(ap, argc);
	for (int i = 0; i < argc; i++)
		argv[i] = va_arg(ap, char *);
	va_end(ap);
	return fn(&r->ctx, argc, argv);
}

static void dev_msg(struct mb *m, int top, int pci_device)
{
	mb_start(m, 0x20, NLM_F_MULTI);
	mb_genl(m, top == SMC_GEN_DEV_SMCD ? SMC_NETLINK_GET_DEV_SMCD : SMC_NETLINK_GET_DEV_SMCR);
	mb_nest(m, (uint16_t)top);
	mb_u32(m, SMC_NLA_DEV_USE_CNT, 0);
	mb_u16(m, SMC_NLA_DEV_PCI_DEVICE, (uint16_t)pci_device);
	mb_end(m);
}

/* SYS_INFO in the kernel's emission order (protocol.md 1.3.2). */
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

TEST(smc_info_full_example)
{
	struct run r;
	struct mb m;

	run_init(&r, true);
	dev_msg(&m, SMC_GEN_DEV_SMCD, 0x04ed);
	peer_queue(&r.p, 1, &m);
	peer_done(&r.p, 1);
	dev_msg(&m, SMC_GEN_DEV_SMCR, 0x1004);
	peer_queue(&r.p, 2, &m);
	dev_msg(&m, SMC_GEN_DEV_SMCR, 0x1016);
	peer_queue(&r.p, 2, &m);
	peer_done(&r.p, 2);
	sysinfo_msg(&m, true, "IBM-SYSZ-ISMSEID00000000001234AB");
	peer_queue(&r.p, 3, &m);
	peer_done(&r.p, 3);
	CHECK_INT(call(&r, smc_info_cmd, 0), 0);
	CHECK_STR(cap_text(&r.out),
		  "Kernel Capabilities\n"
		  "SMC Version:      2.1\n"
		  "SMC Hostname:     myhost                          \n"
		  "SMC-D Features:   v1 v2\n"
		  "SMC-R Features:   v1 v2\n"
		  "\n"
		  "Hardware Capabilities\n"
		  "SEID:             IBM-SYSZ-ISMSEID00000000001234AB\n"
		  "ISM:              v1 v2\n"
		  "RoCE:             v1 v2\n");
	CHECK_STR(cap_text(&r.err), "");
	run_free(&r);
}

TEST(smc_info_no_hardware_and_roce_v1_only)
{
	struct run r;
	struct mb m;

	run_init(&r, false);
	r.ctx.json = false;
	peer_done(&r.p, 1);
	dev_msg(&m, SMC_GEN_DEV_SMCR, 0x1004);
	peer_queue(&r.p, 2, &m);
	dev_msg(&m, SMC_GEN_DEV_SMCR, 0x1017);      /* not a RoCE Express: not counted */
	peer_queue(&r.p, 2, &m);
	peer_done(&r.p, 2);
	sysinfo_msg(&m, false, NULL);
	peer_queue(&r.p, 3, &m);
	peer_done(&r.p, 3);
	CHECK_INT(call(&r, smc_info_cmd, 1, "sh"), 0);
	CHECK_STR(cap_text(&r.out),
		  "Kernel Capabilities\n"
		  "SMC Version:      2.1\n"
		  "SMC Hostname:     myhost                          \n"
		  "SMC-D Features:   v1 v2\n"
		  "SMC-R Features:   v1 v2\n"
		  "\n"
		  "Hardware Capabilities\n"
		  "SEID:             n/a\n"
		  "ISM:              n/a\n"
		  "RoCE:             v1 \n");
	run_free(&r);
}

TEST(smc_info_missing_attributes_and_json)
{
	struct run r;
	struct mb m;

	run_init(&r, true);
	r.ctx.json = true;
	peer_done(&r.p, 1);
	peer_done(&r.p, 2);
	mb_start(&m, 0x20, NLM_F_MULTI);
	mb_genl(&m, SMC_NETLINK_GET_SYS_INFO);
	mb_nest(&m, SMC_GEN_SYS_INFO);
	mb_u8(&m, SMC_NLA_SYS_VER, 2);              /* REL missing: version n/a, v1 only */
	mb_end(&m);
	peer_queue(&r.p, 3, &m);
	peer_done(&r.p, 3);
	CHECK_INT(call(&r, smc_info_cmd, 0), 0);
	CHECK_STR(cap_text(&r.out),
		  "{\"smc_version\":null,\"hostname\":null,\"smcd_features\":[\"v1\"],"
		  "\"smcr_features\":[\"v1\"],\"seid\":null,\"ism\":null,\"roce\":null,"
		  "\"ism_devices\":0,\"roce_devices\":0}\n");
	run_free(&r);
}

TEST(smc_info_errors_and_usage)
{
	struct run r;

	run_init(&r, true);
	CHECK_INT(call(&r, smc_info_cmd, 1, "help"), 255);
	CHECK_INT(call(&r, smc_info_cmd, 2, "show", "x"), 255);
	CHECK_STR(cap_text(&r.err), "Usage: smcd info [show]\nUsage: smcd info [show]\n");
	run_free(&r);

	run_init(&r, false);
	peer_error(&r.p, 1, -EOPNOTSUPP, NULL);
	CHECK_INT(call(&r, smc_info_cmd, 0), 255);
	CHECK_STR(cap_text(&r.err), "Error: Failed to retrieve ISM device count\n");
	run_free(&r);

	run_init(&r, false);
	peer_done(&r.p, 1);
	peer_done(&r.p, 2);
	peer_error(&r.p, 3, -EOPNOTSUPP, NULL);
	CHECK_INT(call(&r, smc_info_cmd, 0), 255);
	CHECK_STR(cap_text(&r.err), "Error: Operation not supported by kernel\n");
	CHECK_STR(cap_text(&r.out), "");
	run_free(&r);
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

static void eid_msg(struct mb *m, const char *eid)
{
	mb_start(m, 0x20, NLM_F_MULTI);
	mb_genl(m, SMC_NETLINK_DUMP_UEID);
	mb_str(m, SMC_NLA_EID_TABLE_ENTRY, eid);
}

TEST(smc_ueid_show_keeps_padding)
{
	struct run r;
	struct mb m;

	run_init(&r, false);
	eid_msg(&m, "EID1                            ");
	peer_queue(&r.p, 1, &m);
	eid_msg(&m, "SMC-EID.2                       ");
	peer_queue(&r.p, 1, &m);
	peer_done(&r.p, 1);
	CHECK_INT(call(&r, smc_ueid_cmd, 0), 0);
	CHECK_STR(cap_text(&r.out), "EID1                            \n"
		  "SMC-EID.2                       \n");
	run_free(&r);

	run_init(&r, true);
	r.ctx.json = true;
	eid_msg(&m, "EID1                            ");
	peer_queue(&r.p, 1, &m);
	peer_done(&r.p, 1);
	CHECK_INT(call(&r, smc_ueid_cmd, 1, "show"), 0);
	CHECK_STR(cap_text(&r.out), "{\"ueids\":[\"EID1\"]}\n");
	run_free(&r);

	/* a failed request leaves no half document behind */
	run_init(&r, true);
	r.ctx.json = true;
	eid_msg(&m, "EID1                            ");
	peer_queue(&r.p, 1, &m);
	peer_error(&r.p, 1, -EPERM, NULL);
	CHECK_INT(call(&r, smc_ueid_cmd, 0), 255);
	CHECK_STR(cap_text(&r.out), "");
	CHECK_STR(cap_text(&r.err), "Error: Operation not permitted\n");
	run_free(&r);
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
	struct run r;
	struct mb m;

	run_init(&r, true);
	peer_error(&r.p, 1, 0, NULL);
	CHECK_INT(call(&r, smc_ueid_cmd, 2, "add", "EID1"), 0);
	peer_request(&r.p, &m);
	/* nlmsghdr, genlmsghdr, then the attribute: 4 + 33 bytes (32 chars and NUL) */
	CHECK_INT(m.len, NLMSG_HDRLEN + 4 + 4 + 36);
	CHECK_INT(*(uint16_t *)(m.buf + NLMSG_HDRLEN + 4), 4 + 33);
	CHECK_STR((char *)m.buf + NLMSG_HDRLEN + 8, "EID1                            ");
	run_free(&r);

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		run_init(&r, true);
		peer_error(&r.p, 1, -t[i].err, NULL);
		CHECK_INT(call(&r, smc_ueid_cmd, 2, "a", "EID1"), 255);
		CHECK_STR(cap_text(&r.err), t[i].text);
		run_free(&r);
	}
}

TEST(smc_ueid_del_flush_and_usage)
{
	struct run r;

	run_init(&r, true);
	peer_error(&r.p, 1, -ENOENT, NULL);
	CHECK_INT(call(&r, smc_ueid_cmd, 2, "del", "EID1"), 255);
	CHECK_STR(cap_text(&r.err), "Error: specified User EID is not defined\n");
	run_free(&r);

	run_init(&r, true);
	peer_error(&r.p, 1, -EAGAIN, NULL);
	CHECK_INT(call(&r, smc_ueid_cmd, 2, "d", "EID1"), 0);
	CHECK_STR(cap_text(&r.err), "Info: the System EID was activated because the last User EID was removed\n");
	run_free(&r);

	run_init(&r, true);
	peer_error(&r.p, 1, -EPERM, NULL);
	CHECK_INT(call(&r, smc_ueid_cmd, 2, "del", "EID1"), 255);
	CHECK_STR(cap_text(&r.err), "Error: Operation not permitted\n");
	run_free(&r);

	run_init(&r, false);
	peer_error(&r.p, 1, 0, NULL);
	CHECK_INT(call(&r, smc_ueid_cmd, 1, "fl"), 0);
	CHECK_INT(call(&r, smc_ueid_cmd, 1, "add"), 255);
	CHECK_INT(call(&r, smc_ueid_cmd, 2, "flush", "x"), 255);
	CHECK_INT(call(&r, smc_ueid_cmd, 1, "bogus"), 255);
	CHECK_INT(call(&r, smc_ueid_cmd, 1, "h"), 255);
	CHECK_INT(call(&r, smc_ueid_cmd, 2, "add", "a..b"), 255);
	CHECK_STR(cap_text(&r.err),
		  "Usage: smcd ueid [show]\n       smcd ueid add <eid>\n       smcd ueid del <eid>\n       smcd ueid flush\n"
		  "Usage: smcd ueid [show]\n       smcd ueid add <eid>\n       smcd ueid del <eid>\n       smcd ueid flush\n"
		  "Usage: smcd ueid [show]\n       smcd ueid add <eid>\n       smcd ueid del <eid>\n       smcd ueid flush\n"
		  "Usage: smcd ueid [show]\n       smcd ueid add <eid>\n       smcd ueid del <eid>\n       smcd ueid flush\n"
		  "Error: Invalid User EID specified: consecutive dots not allowed\n");
	run_free(&r);
}

static void seid_msg(struct mb *m, bool with_attrs, bool enabled)
{
	mb_start(m, 0x20, NLM_F_MULTI);
	mb_genl(m, SMC_NETLINK_DUMP_SEID);
	if (with_attrs) {
		mb_str(m, SMC_NLA_SEID_ENTRY, "IBM-SYSZ-ISMSEID00000000001234AB");
		mb_u8(m, SMC_NLA_SEID_ENABLED, enabled);
	}
}

TEST(smc_seid_show_enable_disable)
{
	struct run r;
	struct mb m;

	run_init(&r, true);
	seid_msg(&m, true, true);
	peer_queue(&r.p, 1, &m);
	peer_done(&r.p, 1);
	CHECK_INT(call(&r, smc_seid_cmd, 0), 0);
	CHECK_STR(cap_text(&r.out), "IBM-SYSZ-ISMSEID00000000001234AB [enabled]\n");
	run_free(&r);

	run_init(&r, true);
	seid_msg(&m, false, false);
	peer_queue(&r.p, 1, &m);
	peer_done(&r.p, 1);
	CHECK_INT(call(&r, smc_seid_cmd, 1, "show"), 0);
	CHECK_STR(cap_text(&r.out), "n/a\n");
	run_free(&r);

	run_init(&r, true);
	seid_msg(&m, false, false);
	peer_queue(&r.p, 1, &m);
	peer_done(&r.p, 1);
	CHECK_INT(call(&r, smc_seid_cmd, 1, "en"), 255);
	CHECK_STR(cap_text(&r.err), "Error: System EID not available\n");
	CHECK_STR(cap_text(&r.out), "");
	run_free(&r);

	run_init(&r, true);
	seid_msg(&m, true, true);
	peer_queue(&r.p, 1, &m);
	peer_done(&r.p, 1);
	peer_error(&r.p, 2, -ENOENT, NULL);
	CHECK_INT(call(&r, smc_seid_cmd, 1, "disable"), 255);
	CHECK_STR(cap_text(&r.err), "Error: System EID cannot be disabled because no User EID is defined\n");
	run_free(&r);

	run_init(&r, true);
	seid_msg(&m, true, false);
	peer_queue(&r.p, 1, &m);
	peer_done(&r.p, 1);
	peer_error(&r.p, 2, -EOPNOTSUPP, NULL);
	CHECK_INT(call(&r, smc_seid_cmd, 1, "enable"), 255);
	CHECK_STR(cap_text(&r.err), "Error: operation not supported by kernel\n");
	run_free(&r);

	run_init(&r, true);
	r.ctx.json = true;
	seid_msg(&m, true, false);
	peer_queue(&r.p, 1, &m);
	peer_done(&r.p, 1);
	CHECK_INT(call(&r, smc_seid_cmd, 0), 0);
	CHECK_STR(cap_text(&r.out), "{\"seid\":\"IBM-SYSZ-ISMSEID00000000001234AB\",\"enabled\":false}\n");
	CHECK_INT(call(&r, smc_seid_cmd, 2, "show", "x"), 255);
	CHECK_INT(call(&r, smc_seid_cmd, 1, "bogus"), 255);
	run_free(&r);
}

TEST(smc_info_json_trims_the_host_name)
{
	struct run r;
	struct mb m;

	run_init(&r, true);
	r.ctx.json = true;
	peer_done(&r.p, 1);
	peer_done(&r.p, 2);
	sysinfo_msg(&m, true, "");
	peer_queue(&r.p, 3, &m);
	peer_done(&r.p, 3);
	CHECK_INT(call(&r, smc_info_cmd, 0), 0);
	CHECK_STR(cap_text(&r.out),
		  "{\"smc_version\":\"2.1\",\"hostname\":\"myhost\",\"smcd_features\":[\"v1\",\"v2\"],"
		  "\"smcr_features\":[\"v1\",\"v2\"],\"seid\":null,\"ism\":null,\"roce\":null,"
		  "\"ism_devices\":0,\"roce_devices\":0}\n");
	run_free(&r);
}
