/* smcd/smcr device: grammar, filters and the examples of smcd(8) and smcr(8). */
#include "fixture.h"
#include "msgbuild.h"
#include "smc_uapi.h"

#include <errno.h>

/* ---- fixtures ---------------------------------------------------------- */

/* The words into the fixture's dev: 0 or -1. */
static int parse(struct smc_ctx *ctx, int argc, char **argv)
{
	return smc_device_parse(ctx, argc, argv, &fx_of(ctx)->dev);
}

/* The words parsed, then the fixture's reply printed: the exit status. */
static int print(struct smc_ctx *ctx, int argc, char **argv)
{
	struct fx *t = fx_of(ctx);

	if (parse(ctx, argc, argv))
		return SMC_EXIT_FAIL;
	return smc_device_print(ctx, &t->dev, &t->rep);
}

struct port {
	bool sent;
	uint8_t usr, state;
	const char *pnet;
	uint32_t ifindex, links;
};

struct dev {
	uint32_t use_cnt, fid;
	uint8_t crit;
	uint16_t chid, device;
	const char *pci_id, *ibname;   /* NULL: not sent */
	struct port port[2];
};

static void add_port(struct mb *m, uint16_t type, const struct port *p, bool smcd)
{
	if (!p->sent)
		return;
	mb_nest(m, type);
	mb_u8(m, SMC_NLA_DEV_PORT_PNET_USR, p->usr);
	mb_str(m, SMC_NLA_DEV_PORT_PNETID, p->pnet);
	if (!smcd) {
		mb_u32(m, SMC_NLA_DEV_PORT_NETDEV, p->ifindex);
		mb_u8(m, SMC_NLA_DEV_PORT_VALID, 1);
		mb_u8(m, SMC_NLA_DEV_PORT_STATE, p->state);
		mb_u32(m, SMC_NLA_DEV_PORT_LNK_CNT, p->links);
	}
	mb_end(m);
}

/* A device message in the kernel's emission order (SMC_NLA_DEV_*, lib/smc_uapi.h). */
static void add_dev(struct smc_reply *rep, bool smcd, const struct dev *d)
{
	struct mb m;

	mb_start(&m, 0x20, NLM_F_MULTI);
	mb_genl(&m, smcd ? SMC_NETLINK_GET_DEV_SMCD : SMC_NETLINK_GET_DEV_SMCR);
	mb_nest(&m, smcd ? SMC_GEN_DEV_SMCD : SMC_GEN_DEV_SMCR);
	if (smcd)
		mb_u32(&m, SMC_NLA_DEV_USE_CNT, d->use_cnt);
	mb_u8(&m, SMC_NLA_DEV_IS_CRIT, d->crit);
	mb_u32(&m, SMC_NLA_DEV_PCI_FID, d->fid);
	mb_u16(&m, SMC_NLA_DEV_PCI_CHID, d->chid);
	mb_u16(&m, SMC_NLA_DEV_PCI_VENDOR, 0x15b3);
	mb_u16(&m, SMC_NLA_DEV_PCI_DEVICE, d->device);
	if (d->pci_id)
		mb_str(&m, SMC_NLA_DEV_PCI_ID, d->pci_id);
	if (d->ibname)
		mb_str(&m, SMC_NLA_DEV_IB_NAME, d->ibname);
	add_port(&m, SMC_NLA_DEV_PORT, &d->port[0], smcd);
	add_port(&m, SMC_NLA_DEV_PORT2, &d->port[1], smcd);
	mb_end(&m);
	mb_finish(&m, rep);
}

/* The two RoCE devices of the 5.4 example; hardware PNET IDs come blank-padded. */
static void add_roce_example(struct smc_reply *rep)
{
	add_dev(rep, false, &(struct dev){
		.crit = 1, .fid = 0x11, .chid = 0x1c4, .device = 0x1016,
		.pci_id = "0000:00:00.0", .ibname = "mlx5_0",
		.port = { { true, 0, 1, "NET1            ", 2, 3 } } });
	add_dev(rep, false, &(struct dev){
		.fid = 0x1021, .chid = 0x2a0, .device = 0x1004,
		.pci_id = "0001:00:00.0", .ibname = "mlx4_verylongname",
		.port = { { true, 0, 1, "NET1            ", 3, 3 },
			  { true, 1, 0, "USERNET", 0, 0 } } });
}

#define SMCR_USAGE                                  \
	"Usage: smcr device [show] [all]\n"         \
	"                          [ibdev <dev>]\n" \
	"                          [netdev <dev>]\n"
#define SMCD_USAGE "Usage: smcd device [show] [all]\n"

#define SMCR_HEADER "Net-Dev         IB-Dev   IB-P  IB-State  Type          Crit  #Links  PNET-ID  \n"
#define SMCD_HEADER "FID  Type  PCI-ID        PCHID  InUse  #LGs  PNET-ID  \n"

/* ---- examples of 5.4 ----------------------------------------------------- */

TEST(device_smcr_details_example)
{
	struct fx t;

	fx_init(&t, false, SMC_LVL_DETAILS);
	add_roce_example(&t.rep);
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK_STR(cap_text(&t.out),
		"Net-Dev         IB-Dev   IB-P  IB-State  Type          Crit   FID   PCI-ID        PCHID  #Links  PNET-ID  \n"
		"eth0            mlx5_0      1    ACTIVE  RoCE_Express2  Yes   0011  0000:00:00.0  01c4        3  NET1             \n"
		"eth1            mlx4_ver    1    ACTIVE  RoCE_Express    No   1021  0001:00:00.0  02a0        3  NET1             \n"
		"                mlx4_ver    2  INACTIVE  RoCE_Express    No   1021  0001:00:00.0  02a0        0  *USERNET         \n");
	CHECK_STR(cap_text(&t.err), "");
	fx_free(&t);
}

TEST(device_smcr_plain)
{
	struct fx t;

	fx_init(&t, false, SMC_LVL_ABSOLUTE);
	add_roce_example(&t.rep);
	CHECK_INT(fx_call(&t, print, 1, "show"), 0);
	CHECK_STR(cap_text(&t.out), SMCR_HEADER
		"eth0            mlx5_0      1    ACTIVE  RoCE_Express2  Yes       3  NET1             \n"
		"eth1            mlx4_ver    1    ACTIVE  RoCE_Express    No       3  NET1             \n"
		"                mlx4_ver    2  INACTIVE  RoCE_Express    No       0  *USERNET         \n");
	fx_free(&t);
}

TEST(device_smcd_example)
{
	struct fx t;

	fx_init(&t, true, SMC_LVL_MORE_DETAILS);      /* the level has no effect */
	add_dev(&t.rep, true, &(struct dev){
		.use_cnt = 2, .crit = 1, .fid = 0x1234, .chid = 0x7c0, .device = 0x04ed,
		.pci_id = "0003:00:00.0", .port = { { true, 0, 0, "NET1            ", 0, 0 } } });
	add_dev(&t.rep, true, &(struct dev){
		.fid = 0x21, .chid = 0x7c1, .device = 0x04ed,
		.pci_id = "0004:00:00.0", .port = { { true, 1, 0, "MYNET", 0, 0 } } });
	CHECK_INT(fx_call(&t, print, 2, "sh", "all"), 0);
	CHECK_STR(cap_text(&t.out), SMCD_HEADER
		"1234 ISM   0003:00:00.0  07c0   Yes       2  NET1             \n"
		"0021 ISM   0004:00:00.0  07c1   No        0  *MYNET           \n");
	fx_free(&t);
}

/* Item 17: no PORT nest (and nothing else) gives an empty PNET ID, not a crash. */
TEST(device_smcd_without_port_nest)
{
	struct fx t;

	fx_init(&t, true, SMC_LVL_NONE);
	add_dev(&t.rep, true, &(struct dev){ .fid = 0x5, .device = 0x04ed, .pci_id = "0005:00:00.0" });
	add_dev(&t.rep, true, &(struct dev){ .device = 0x1017 });
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK_STR(cap_text(&t.out), SMCD_HEADER
		"0005 ISM   0005:00:00.0  0000   No        0                   \n"
		"0000 0x1017                0000   No        0                   \n");
	fx_free(&t);
}

/* Unknown device ids and port states; ports without VALID are not listed. */
TEST(device_smcr_unknown_values_and_invalid_port)
{
	struct fx t;
	struct mb m;

	fx_init(&t, false, SMC_LVL_NONE);
	add_dev(&t.rep, false, &(struct dev){ .device = 0, .ibname = "rxe0",
		.port = { { true, 0, 7, "", 2, 1 } } });
	mb_start(&m, 0x20, NLM_F_MULTI);
	mb_genl(&m, SMC_NETLINK_GET_DEV_SMCR);
	mb_nest(&m, SMC_GEN_DEV_SMCR);
	mb_str(&m, SMC_NLA_DEV_IB_NAME, "noport");
	mb_nest(&m, SMC_NLA_DEV_PORT);
	mb_u8(&m, SMC_NLA_DEV_PORT_STATE, 1);          /* no VALID */
	mb_end(&m);
	mb_end(&m);
	mb_finish(&m, &t.rep);
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK_STR(cap_text(&t.out), SMCR_HEADER
		"eth0            rxe0        1      0x7?  0               No       1                   \n");
	fx_free(&t);
}

/* Item 14 (as in linkgroup): a 16-character PNET ID is kept whole. */
TEST(device_pnetid_16_chars_kept)
{
	struct fx t;

	fx_init(&t, true, SMC_LVL_NONE);
	add_dev(&t.rep, true, &(struct dev){ .fid = 1, .device = 0x04ed, .pci_id = "x",
		.port = { { true, 0, 0, "ABCDEFGHIJKLMNOP", 0, 0 } } });
	add_dev(&t.rep, true, &(struct dev){ .fid = 2, .device = 0x04ed, .pci_id = "y",
		.port = { { true, 1, 0, "ABCDEFGHIJKLMNOP", 0, 0 } } });
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK_STR(cap_text(&t.out), SMCD_HEADER
		"0001 ISM   x             0000   No        0  ABCDEFGHIJKLMNOP \n"
		"0002 ISM   y             0000   No        0  *ABCDEFGHIJKLMNOP \n");
	fx_free(&t);
}

TEST(device_no_devices_no_output)
{
	struct fx t;

	fx_init(&t, false, SMC_LVL_DETAILS);
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK_STR(cap_text(&t.out), "");
	fx_free(&t);
}

/* ---- grammar -------------------------------------------------------------- */

TEST(device_grammar)
{
	struct fx t;
	char *help[] = { "help" };

	fx_init(&t, false, 0);
	CHECK_INT(smc_device_cmd(&t.ctx, 1, help), SMC_EXIT_FAIL);
	CHECK_STR(cap_text(&t.err), SMCR_USAGE);
	CHECK_STR(cap_text(&t.out), "");
	fx_free(&t);

	fx_init(&t, true, 0);
	CHECK_INT(smc_device_cmd(&t.ctx, 1, help), SMC_EXIT_FAIL);
	CHECK_STR(cap_text(&t.err), SMCD_USAGE);
	fx_free(&t);

	fx_init(&t, false, 0);
	CHECK_INT(fx_call(&t, parse, 0), 0);
	CHECK_INT(fx_call(&t, parse, 2, "s", "a"), 0);
	CHECK_INT(fx_call(&t, parse, 5, "show", "all", "all", "all", "all"), -1);
	CHECK_INT(fx_call(&t, parse, 1, "link-show"), -1);
	CHECK_INT(fx_call(&t, parse, 2, "show", "h"), -1);
	CHECK_INT(fx_call(&t, parse, 1, "devices"), -1);
	CHECK_INT(fx_call(&t, parse, 2, "show", "show"), -1);
	CHECK_INT(fx_call(&t, parse, 3, "all", "netdev", "eth0"), 0);
	CHECK_STR(t.dev.netdev, "eth0");
	CHECK_INT(fx_call(&t, parse, 2, "i", "mlx5_0"), 0);
	CHECK_STR(t.dev.ibdev, "mlx5_0");
	CHECK_STR(t.dev.netdev, "");
	CHECK_INT(fx_call(&t, parse, 3, "ibdev", "mlx5_0", "all"), -1);
	CHECK_INT(fx_call(&t, parse, 2, "show", "netdev"), 0);  /* no value: no filter */
	CHECK_STR(t.dev.netdev, "");
	fx_free(&t);

	fx_init(&t, true, 0);
	CHECK_INT(fx_call(&t, parse, 2, "ibdev", "x"), -1);
	CHECK_INT(fx_call(&t, parse, 1, "netdev"), -1);
	CHECK_INT(fx_call(&t, parse, 2, "show", "all"), 0);
	fx_free(&t);
}

/* ---- filters --------------------------------------------------------------- */

TEST(device_smcr_filters)
{
	struct fx t;

	fx_init(&t, false, SMC_LVL_NONE);
	add_roce_example(&t.rep);
	CHECK_INT(fx_call(&t, print, 2, "netdev", "eth1"), 0);
	CHECK_STR(cap_text(&t.out), SMCR_HEADER
		"eth1            mlx4_ver    1    ACTIVE  RoCE_Express    No       3  NET1             \n");
	fx_free(&t);

	/* the IB device filter compares the full name, and lists every port */
	fx_init(&t, false, SMC_LVL_NONE);
	add_roce_example(&t.rep);
	CHECK_INT(fx_call(&t, print, 3, "show", "ibdev", "mlx4_verylongname"), 0);
	CHECK_STR(cap_text(&t.out), SMCR_HEADER
		"eth1            mlx4_ver    1    ACTIVE  RoCE_Express    No       3  NET1             \n"
		"                mlx4_ver    2  INACTIVE  RoCE_Express    No       0  *USERNET         \n");
	fx_free(&t);

	/* no match: the header alone */
	fx_init(&t, false, SMC_LVL_NONE);
	add_roce_example(&t.rep);
	CHECK_INT(fx_call(&t, print, 2, "ibdev", "mlx4_ver"), 0);
	CHECK_STR(cap_text(&t.out), SMCR_HEADER);
	fx_free(&t);
}

/* ---- JSON ------------------------------------------------------------------ */

TEST(device_json)
{
	struct fx t;

	fx_init(&t, false, SMC_LVL_NONE);
	t.ctx.json = true;
	add_roce_example(&t.rep);
	CHECK_INT(fx_call(&t, print, 2, "ibdev", "mlx4_verylongname"), 0);
	CHECK_STR(cap_text(&t.out),
		"{\"devices\":[{\"net_dev\":\"eth1\",\"ib_dev\":\"mlx4_verylongname\",\"ib_port\":1,"
		"\"port_state\":\"ACTIVE\",\"type\":\"RoCE_Express\",\"crit\":false,\"fid\":4129,"
		"\"pci_id\":\"0001:00:00.0\",\"pchid\":672,\"links\":3,\"pnet_id\":\"NET1\","
		"\"pnet_user\":false,\"pci_vendor\":5555,\"pci_device\":4100},"
		"{\"net_dev\":null,\"ib_dev\":\"mlx4_verylongname\",\"ib_port\":2,"
		"\"port_state\":\"INACTIVE\",\"type\":\"RoCE_Express\",\"crit\":false,\"fid\":4129,"
		"\"pci_id\":\"0001:00:00.0\",\"pchid\":672,\"links\":0,\"pnet_id\":\"USERNET\","
		"\"pnet_user\":true,\"pci_vendor\":5555,\"pci_device\":4100}]}\n");
	fx_free(&t);

	fx_init(&t, true, SMC_LVL_NONE);
	t.ctx.json = true;
	add_dev(&t.rep, true, &(struct dev){
		.use_cnt = 2, .crit = 1, .fid = 0x1234, .chid = 0x7c0, .device = 0x04ed,
		.pci_id = "0003:00:00.0", .port = { { true, 1, 0, " NET1 ", 0, 0 } } });
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK_STR(cap_text(&t.out),
		"{\"devices\":[{\"fid\":4660,\"type\":\"ISM\",\"pci_id\":\"0003:00:00.0\","
		"\"pchid\":1984,\"crit\":true,\"use_cnt\":2,\"pnet_id\":\"NET1\","
		"\"pnet_user\":true,\"pci_vendor\":5555,\"pci_device\":1261}]}\n");
	fx_free(&t);

	fx_init(&t, true, SMC_LVL_NONE);
	t.ctx.json = true;
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK_STR(cap_text(&t.out), "{\"devices\":[]}\n");
	fx_free(&t);
}

/* ---- malformed replies ------------------------------------------------------ */

static void check_error(bool smcd, struct mb *m, const char *expect_out, const char *expect_err)
{
	struct fx t;

	fx_init(&t, smcd, SMC_LVL_NONE);
	mb_finish(m, &t.rep);
	CHECK_INT(fx_call(&t, print, 0), SMC_EXIT_FAIL);
	CHECK_STR(cap_text(&t.out), expect_out);
	CHECK_STR(cap_text(&t.err), expect_err);
	fx_free(&t);
}

TEST(device_malformed_replies)
{
	struct mb m;
	uint8_t one = 1;

	mb_start(&m, 0x20, NLM_F_MULTI);
	mb_genl(&m, SMC_NETLINK_GET_DEV_SMCD);
	mb_nest(&m, SMC_GEN_DEV_SMCD);
	mb_attr(&m, SMC_NLA_DEV_PCI_CHID, &one, 1);
	mb_end(&m);
	check_error(true, &m, SMCD_HEADER,
		    "Error: Failed to parse nested attributes: smc_gen_dev_smcd_sock_policy\n");

	mb_start(&m, 0x20, NLM_F_MULTI);
	mb_genl(&m, SMC_NETLINK_GET_DEV_SMCR);
	mb_nest(&m, SMC_GEN_DEV_SMCR);
	mb_nest(&m, SMC_NLA_DEV_PORT2);
	mb_attr(&m, SMC_NLA_DEV_PORT_NETDEV, &one, 1);
	mb_end(&m);
	mb_end(&m);
	check_error(false, &m, SMCR_HEADER,
		    "Error: Failed to parse nested attributes: smc_gen_dev_port_smcd_sock_policy\n");

	mb_start(&m, 0x20, NLM_F_MULTI);
	mb_raw(&m, "\x06\x01", 2);
	check_error(false, &m, SMCR_HEADER, "Error: Invalid data returned: smc_gen_net_policy\n");
}

/* Rows before a bad message stay; a message without a device nest stops quietly. */
TEST(device_error_and_stop)
{
	struct fx t;
	struct mb m;

	fx_init(&t, false, SMC_LVL_NONE);
	add_roce_example(&t.rep);
	mb_start(&m, 0x20, NLM_F_MULTI);
	mb_genl(&m, SMC_NETLINK_GET_DEV_SMCR);
	mb_nest(&m, SMC_GEN_DEV_SMCR);
	mb_attr(&m, SMC_NLA_DEV_IS_CRIT, NULL, 0);
	mb_end(&m);
	mb_finish(&m, &t.rep);
	CHECK_INT(fx_call(&t, print, 0), SMC_EXIT_FAIL);
	CHECK(strstr(cap_text(&t.out), "*USERNET") != NULL);
	fx_free(&t);

	fx_init(&t, true, SMC_LVL_NONE);
	add_dev(&t.rep, true, &(struct dev){ .fid = 1, .device = 0x04ed, .pci_id = "a" });
	mb_start(&m, 0x20, NLM_F_MULTI);
	mb_genl(&m, SMC_NETLINK_GET_DEV_SMCD);
	mb_finish(&m, &t.rep);
	add_dev(&t.rep, true, &(struct dev){ .fid = 2, .device = 0x04ed, .pci_id = "b" });
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK_STR(cap_text(&t.out), SMCD_HEADER
		"0001 ISM   a             0000   No        0                   \n");
	CHECK_STR(cap_text(&t.err), "");
	fx_free(&t);

	/* the other personality's nest is skipped */
	fx_init(&t, true, SMC_LVL_NONE);
	add_roce_example(&t.rep);
	CHECK_INT(fx_call(&t, print, 0), 0);
	CHECK_STR(cap_text(&t.out), SMCD_HEADER);
	fx_free(&t);
}

/* ---- end to end over a transport ------------------------------------------- */

TEST(device_cmd_dump_and_error)
{
	struct mb m, req;
	struct fx t;

	fx_init_peer(&t, true);
	mb_start(&m, 0x20, NLM_F_MULTI);
	mb_genl(&m, SMC_NETLINK_GET_DEV_SMCD);
	mb_nest(&m, SMC_GEN_DEV_SMCD);
	mb_u32(&m, SMC_NLA_DEV_PCI_FID, 0x1234);
	mb_end(&m);
	peer_queue(&t.p, 1, &m);
	peer_done(&t.p, 1);
	CHECK_INT(smc_device_cmd(&t.ctx, 0, NULL), 0);
	CHECK(peer_request(&t.p, &req) >= NLMSG_HDRLEN + 4);
	CHECK_INT(req.buf[NLMSG_HDRLEN], SMC_NETLINK_GET_DEV_SMCD);
	CHECK_STR(cap_text(&t.out), SMCD_HEADER
		  "1234 0                   0000   No        0                   \n");
	cap_free(&t.out);
	cap_open(&t.out);
	t.ctx.out = t.out.f;
	t.ctx.smcd = false;
	t.ctx.prog = "smcr";
	peer_error(&t.p, 1, -EOPNOTSUPP, NULL);
	CHECK_INT(smc_device_cmd(&t.ctx, 0, NULL), SMC_EXIT_FAIL);
	CHECK(peer_request(&t.p, &req) >= NLMSG_HDRLEN + 4);
	CHECK_INT(req.buf[NLMSG_HDRLEN], SMC_NETLINK_GET_DEV_SMCR);
	CHECK_STR(cap_text(&t.out), "");
	CHECK_STR(cap_text(&t.err), "Error: Operation not supported by kernel\n");
	fx_free(&t);
}
