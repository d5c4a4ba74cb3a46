/*
 * smcd device [show] [all]
 * smcr device [show] [all] [ibdev <dev>] [netdev <dev>]
 * (smcd(8), smcr(8)): ISM devices (SMC-D), RoCE devices and their ports (SMC-R).
 *
 * JSON (-j) is one document, {"devices":[...]}, with every field at every
 * -d level, keys named after the uapi attributes (doc/json-schema/):
 *   smcd  one entry per device: "fid":N, "type":"ISM"|null (unknown device),
 *         "pci_id":"0003:00:00.0"|null, "pchid":N, "crit":bool (InUse),
 *         "use_cnt":N (#LGs), "pnet_id":"NET1"|null (trimmed, without "*"),
 *         "pnet_user":bool, "pci_vendor":N, "pci_device":N
 *   smcr  one entry per listed port, as the text rows, the device's fields
 *         repeated: "net_dev":"eth0"|null, "ib_dev":"mlx5_0" (full name),
 *         "ib_port":1|2, "port_state":"ACTIVE", "type", "crit", "fid",
 *         "pci_id", "pchid", "links":N (#Links), "pnet_id", "pnet_user",
 *         "pci_vendor", "pci_device"
 * No devices: {"devices":[]} (text mode prints nothing at all).
 *
 * Upstream bugs fixed here (the man pages list them):
 *  - (as in linkgroup) a 16-character PNET ID keeps all 16 characters; the
 *    "*" of a user-defined one comes on top (18-byte cell buffer).
 *  - attributes the kernel did not send read as 0 / empty instead of
 *    uninitialised memory; an SMC-D reply without the PORT nest prints an
 *    empty PNET ID instead of crashing.
 */
#include "device.h"
#include "listing.h"
#include "names.h"
#include "smc_uapi.h"
#include "util.h"

#include <string.h>

/* Highest attribute this file knows in each nest (never the system header's MAX). */
#define DEV_MAX  SMC_NLA_DEV_IB_NAME
#define PORT_MAX SMC_NLA_DEV_PORT_LNK_CNT

/* ---- what the kernel sent --------------------------------------------- */

struct smc_dev_port {
	bool valid;                                /* nest received, VALID != 0 */
	uint8_t pnet_usr, state;
	uint32_t lnk_cnt;
	char pnetid[SMC_MAX_PNETID_LEN + 1];       /* 17 bytes: all 16 characters kept */
	char net_dev[IF_NAMESIZE];
};

struct smc_dev {
	uint32_t use_cnt, fid;
	uint8_t crit;
	uint16_t chid, vendor, device;
	char pci_id[16];                           /* 15 characters, as upstream */
	char ib_name[64];
	struct smc_dev_port port[SMC_MAX_PORTS];
};

/* Upstream names these policies "smcd" and uses them for SMC-R too. */
static const struct nla_policy dev_policy[DEV_MAX + 1] = {
	[SMC_NLA_DEV_USE_CNT] = { .type = NLA_U32 },
	[SMC_NLA_DEV_IS_CRIT] = { .type = NLA_U8 },
	[SMC_NLA_DEV_PCI_FID] = { .type = NLA_U32 },
	[SMC_NLA_DEV_PCI_CHID] = { .type = NLA_U16 },
	[SMC_NLA_DEV_PCI_VENDOR] = { .type = NLA_U16 },
	[SMC_NLA_DEV_PCI_DEVICE] = { .type = NLA_U16 },
	[SMC_NLA_DEV_PCI_ID] = { .type = NLA_NUL_STRING },
	[SMC_NLA_DEV_PORT] = { .type = NLA_NESTED },
	[SMC_NLA_DEV_PORT2] = { .type = NLA_NESTED },
	[SMC_NLA_DEV_IB_NAME] = { .type = NLA_NUL_STRING },
};

static const struct nla_policy port_policy[PORT_MAX + 1] = {
	[SMC_NLA_DEV_PORT_PNET_USR] = { .type = NLA_U8 },
	[SMC_NLA_DEV_PORT_PNETID] = { .type = NLA_NUL_STRING },
	[SMC_NLA_DEV_PORT_NETDEV] = { .type = NLA_U32 },
	[SMC_NLA_DEV_PORT_STATE] = { .type = NLA_U8 },
	[SMC_NLA_DEV_PORT_VALID] = { .type = NLA_U8 },
	[SMC_NLA_DEV_PORT_LNK_CNT] = { .type = NLA_U32 },
};

/* ---- one run of the command ------------------------------------------- */

struct dev_run {
	struct smc_run run;
	const struct smc_dev_args *a;
};

static int parse_port(struct dev_run *r, struct nlattr *nest, struct smc_dev_port *p)
{
	struct nlattr *a[PORT_MAX + 1];

	if (nla_parse_nested(a, PORT_MAX, nest, port_policy) < 0)
		return smc_run_nest_error(&r->run, "smc_gen_dev_port_smcd_sock_policy");
	p->pnet_usr = smc_attr_u8(a[SMC_NLA_DEV_PORT_PNET_USR]);
	smc_attr_str(p->pnetid, sizeof(p->pnetid), a[SMC_NLA_DEV_PORT_PNETID]);
	p->valid = smc_attr_u8(a[SMC_NLA_DEV_PORT_VALID]) != 0;
	p->state = smc_attr_u8(a[SMC_NLA_DEV_PORT_STATE]);
	p->lnk_cnt = smc_attr_u32(a[SMC_NLA_DEV_PORT_LNK_CNT]);
	if (!r->run.ctx->smcd)       /* SMC-D reads only the PNET ID of its port */
		smc_nla_ifname(p->net_dev, a[SMC_NLA_DEV_PORT_NETDEV]);
	return 0;
}

static int parse_dev(struct dev_run *r, struct nlattr *nest, struct smc_dev *d)
{
	struct nlattr *a[DEV_MAX + 1];
	int rc = 0;

	memset(d, 0, sizeof(*d));
	if (nla_parse_nested(a, DEV_MAX, nest, dev_policy) < 0)
		return smc_run_nest_error(&r->run, "smc_gen_dev_smcd_sock_policy");
	d->use_cnt = smc_attr_u32(a[SMC_NLA_DEV_USE_CNT]);
	d->crit = smc_attr_u8(a[SMC_NLA_DEV_IS_CRIT]);
	d->fid = smc_attr_u32(a[SMC_NLA_DEV_PCI_FID]);
	d->chid = smc_attr_u16(a[SMC_NLA_DEV_PCI_CHID]);
	d->vendor = smc_attr_u16(a[SMC_NLA_DEV_PCI_VENDOR]);
	d->device = smc_attr_u16(a[SMC_NLA_DEV_PCI_DEVICE]);
	smc_attr_str(d->pci_id, sizeof(d->pci_id), a[SMC_NLA_DEV_PCI_ID]);
	smc_attr_str(d->ib_name, sizeof(d->ib_name), a[SMC_NLA_DEV_IB_NAME]);
	if (a[SMC_NLA_DEV_PORT])
		rc = parse_port(r, a[SMC_NLA_DEV_PORT], &d->port[0]);
	if (!rc && !r->run.ctx->smcd && a[SMC_NLA_DEV_PORT2])
		rc = parse_port(r, a[SMC_NLA_DEV_PORT2], &d->port[1]);
	return rc;
}

/* ---- values as printed ------------------------------------------------- */

enum dev_field {
	D_NETDEV, D_IBDEV, D_PORT, D_STATE, D_TYPE, D_CRIT, D_FID, D_PCI_ID, D_PCHID,
	D_LINKS, D_USE_CNT, D_PNET_CELL, D_PNETID, D_PNET_USR, D_VENDOR, D_DEVICE,
	D_COUNT
};

/* The printable values of one device (port); strings point into it or the source. */
struct view {
	struct smc_val v[D_COUNT];
	char type[SMC_NAME_BUF], state[SMC_NAME_BUF];
	char cell[SMC_MAX_PNETID_LEN + 2];         /* "*" + 16 characters */
	char pnetid[SMC_MAX_PNETID_LEN + 1];
};

/* The PNET ID cell: "*" when set by the user, then trimmed (hardware IDs are blank-padded). */
static void view_pnet(struct view *w, const struct smc_dev_port *p)
{
	snprintf(w->cell, sizeof(w->cell), "%s%s", p->pnet_usr ? "*" : "", p->pnetid);
	memcpy(w->pnetid, p->pnetid, sizeof(w->pnetid));
	w->v[D_PNET_CELL] = smc_str(smc_trim(w->cell));
	w->v[D_PNETID] = smc_str_or_none(smc_trim(w->pnetid));
	w->v[D_PNET_USR] = smc_bool(p->pnet_usr);
}

static void view_dev(struct view *w, const struct smc_dev *d, int port)
{
	const struct smc_dev_port *p = &d->port[port];

	const char *type;

	memset(w, 0, sizeof(*w));
	type = smc_dev_type_name(d->device, w->type);
	w->v[D_NETDEV] = smc_str_or_none(p->net_dev);
	w->v[D_IBDEV] = smc_str(d->ib_name);
	w->v[D_PORT] = smc_num((unsigned int)port + 1);
	w->v[D_STATE] = smc_str(smc_port_state_name(p->state, w->state));
	/* An unknown type: its number in text, null in JSON (pci_device has it). */
	w->v[D_TYPE] = type == w->type ? smc_none_as(type) : smc_str(type);
	w->v[D_CRIT] = smc_bool(d->crit);
	w->v[D_FID] = smc_num(d->fid);
	w->v[D_PCI_ID] = smc_str_or_none(d->pci_id);
	w->v[D_PCHID] = smc_num(d->chid);
	w->v[D_LINKS] = smc_num(p->lnk_cnt);
	w->v[D_USE_CNT] = smc_num(d->use_cnt);
	w->v[D_VENDOR] = smc_num(d->vendor);
	w->v[D_DEVICE] = smc_num(d->device);
	view_pnet(w, p);
}

/* ---- listings: header cell, text format and JSON key side by side ----- */

#define TEXT SMC_COL_TEXT
#define JSON SMC_COL_JSON

static const struct smc_col smcr_cols[] = {
	{ "net_dev", "Net-Dev         ", "%-15.15s ", D_NETDEV, 0, 0, NULL },
	{ "ib_dev", "IB-Dev   ", "%-8.8s ", D_IBDEV, 0, 0, NULL },
	{ "ib_port", "IB-P  ", "%4llu  ", D_PORT, 0, 0, NULL },
	{ "port_state", "IB-State  ", "%8s  ", D_STATE, 0, 0, NULL },
	{ "type", "Type          ", "%-13s  ", D_TYPE, 0, 0, NULL },
	{ "crit", "Crit  ", "%3s   ", D_CRIT, 0, 0, NULL },
	{ "fid", " FID   ", "%04llx  ", D_FID, 1, 0, NULL },
	{ "pci_id", "PCI-ID        ", "%-12s  ", D_PCI_ID, 1, 0, NULL },
	{ "pchid", "PCHID  ", "%04llx    ", D_PCHID, 1, 0, NULL },
	{ "links", "#Links  ", "%5llu ", D_LINKS, 0, 0, NULL },
	{ NULL, "PNET-ID  ", " %-16s ", D_PNET_CELL, 0, TEXT, NULL },
	{ "pnet_id", NULL, NULL, D_PNETID, 0, JSON, NULL },
	{ "pnet_user", NULL, NULL, D_PNET_USR, 0, JSON, NULL },
	{ "pci_vendor", NULL, NULL, D_VENDOR, 0, JSON, NULL },
	{ "pci_device", NULL, NULL, D_DEVICE, 0, JSON, NULL },
};

static const struct smc_col smcd_cols[] = {
	{ "fid", "FID  ", "%04llx ", D_FID, 0, 0, NULL },
	{ "type", "Type  ", "%-4s  ", D_TYPE, 0, 0, NULL },
	{ "pci_id", "PCI-ID        ", "%-12s  ", D_PCI_ID, 0, 0, NULL },
	{ "pchid", "PCHID  ", "%04llx   ", D_PCHID, 0, 0, NULL },
	{ "crit", "InUse  ", "%-4s  ", D_CRIT, 0, 0, NULL },
	{ "use_cnt", "#LGs  ", "%5llu ", D_USE_CNT, 0, 0, NULL },
	{ NULL, "PNET-ID  ", " %-16s ", D_PNET_CELL, 0, TEXT, NULL },
	{ "pnet_id", NULL, NULL, D_PNETID, 0, JSON, NULL },
	{ "pnet_user", NULL, NULL, D_PNET_USR, 0, JSON, NULL },
	{ "pci_vendor", NULL, NULL, D_VENDOR, 0, JSON, NULL },
	{ "pci_device", NULL, NULL, D_DEVICE, 0, JSON, NULL },
};

/* By personality: SMC-R, SMC-D. */
static const struct smc_listing listings[2] = { SMC_LISTING(smcr_cols), SMC_LISTING(smcd_cols) };

/* ---- printing ---------------------------------------------------------- */

static void show_row(struct dev_run *r, const struct smc_dev *d, int port)
{
	struct smc_out *o = &r->run.out;
	struct view w;

	view_dev(&w, d, port);
	out_open_object(o, NULL);
	smc_cols_put(o, &listings[r->run.ctx->smcd], w.v, r->run.level, 0, 0);
	out_close_object(o);
	out_text(o, "\n");
}

/* SMC-R: the port's net device, else the full IB device name. */
static bool port_match(const struct smc_dev_args *a, const struct smc_dev *d, int port)
{
	if (a->netdev[0])
		return !strncmp(a->netdev, d->port[port].net_dev, sizeof(a->netdev));
	if (a->ibdev[0])
		return !strncmp(a->ibdev, d->ib_name, sizeof(a->ibdev));
	return true;
}

static int dev_msg(struct dev_run *r, struct nlattr *nest)
{
	struct smc_dev d;
	int rc = parse_dev(r, nest, &d);

	if (rc)
		return rc;
	if (r->run.ctx->smcd) {
		show_row(r, &d, 0);
		return 0;
	}
	for (int port = 0; port < SMC_MAX_PORTS; port++)
		if (d.port[port].valid && port_match(r->a, &d, port))
			show_row(r, &d, port);
	return 0;
}

static int msg_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct nlattr *tb[SMC_RUN_GEN_MAX + 1];
	struct dev_run *r = arg;
	int top = r->run.ctx->smcd ? SMC_GEN_DEV_SMCD : SMC_GEN_DEV_SMCR;
	int rc = smc_run_msg(&r->run, nlh, tb);

	if (rc)
		return rc;
	if (!tb[SMC_GEN_DEV_SMCD] && !tb[SMC_GEN_DEV_SMCR])
		return 1;          /* as linkgroup: stop at a message without a device */
	return tb[top] ? dev_msg(r, tb[top]) : 0;
}

/* ---- command line ------------------------------------------------------ */

static int usage(struct smc_ctx *ctx)
{
	if (ctx->smcd)
		fprintf(ctx->err, "Usage: smcd device [show] [all]\n");
	else
		fprintf(ctx->err,
			"Usage: smcr device [show] [all]\n"
			"                          [ibdev <dev>]\n"
			"                          [netdev <dev>]\n");
	return -1;
}

int smc_device_parse(struct smc_ctx *ctx, int argc, char **argv, struct smc_dev_args *a)
{
	char *want = NULL;         /* the filter the next word fills */
	size_t want_len = 0;
	int i = 0;

	memset(a, 0, sizeof(*a));
	if ((argc == 1 && smc_prefix(argv[0], "help")) || argc > 4)
		return usage(ctx);
	if (argc > 0 && smc_prefix(argv[0], "show"))
		i = 1;
	for (; i < argc; i++) {
		const char *w = argv[i];

		if (want) {
			smc_copy_cut(want, want_len, w);
			break;
		}
		if (smc_prefix(w, "help"))
			return usage(ctx);
		if (smc_prefix(w, "all"))
			continue;
		if (!ctx->smcd && smc_prefix(w, "ibdev")) {
			want = a->ibdev;
			want_len = sizeof(a->ibdev);
		} else if (!ctx->smcd && smc_prefix(w, "netdev")) {
			want = a->netdev;
			want_len = sizeof(a->netdev);
		} else {
			return usage(ctx);
		}
	}
	if (i + 1 < argc)              /* words after the filter value */
		return usage(ctx);
	return 0;
}

/* Dump (rep NULL) or walk rep, printing as the messages come. */
static int run(struct smc_ctx *ctx, const struct smc_dev_args *a, const struct smc_reply *rep)
{
	struct dev_run r = { .a = a };
	uint8_t cmd = ctx->smcd ? SMC_NETLINK_GET_DEV_SMCD : SMC_NETLINK_GET_DEV_SMCR;

	smc_run_init(&r.run, ctx, "devices", &listings[ctx->smcd]);
	return smc_run_exec(&r.run, rep, cmd, msg_cb, &r);
}

int smc_device_print(struct smc_ctx *ctx, const struct smc_dev_args *a,
		     const struct smc_reply *rep)
{
	return run(ctx, a, rep);
}

int smc_device_cmd(struct smc_ctx *ctx, int argc, char **argv)
{
	struct smc_dev_args a;

	if (smc_device_parse(ctx, argc, argv, &a))
		return SMC_EXIT_FAIL;
	return run(ctx, &a, NULL);
}
