/*
 * smcd|smcr info: SMC capabilities of the kernel and the hardware.
 * JSON (-j): {"smc_version":"2.1"|null,"hostname":..|null,
 *   "smcd_features":["v1","v2"],"smcr_features":[..],"seid":..|null,
 *   "ism":[..]|null,"roce":[..]|null,"ism_devices":N,"roce_devices":N}
 */
#include "info.h"
#include "smc_uapi.h"
#include "names.h"
#include "util.h"

#include <errno.h>
#include <string.h>

static int count_ism_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct nlattr *tb[SMC_GEN_MAX + 1];
	struct hw_count *c = arg;

	if (genlmsg_parse((struct nlmsghdr *)nlh, 0, tb, SMC_GEN_MAX, NULL) < 0)
		return -EBADMSG;
	if (tb[SMC_GEN_DEV_SMCD])
		c->ism++;
	return 0;
}

static int count_roce_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct nlattr *tb[SMC_GEN_MAX + 1], *dev[SMC_NLA_DEV_MAX + 1];
	struct hw_count *c = arg;

	if (genlmsg_parse((struct nlmsghdr *)nlh, 0, tb, SMC_GEN_MAX, NULL) < 0)
		return -EBADMSG;
	if (!tb[SMC_GEN_DEV_SMCR])
		return 0;
	if (nla_parse_nested(dev, SMC_NLA_DEV_MAX, tb[SMC_GEN_DEV_SMCR], NULL) < 0)
		return -EBADMSG;
	if (dev[SMC_NLA_DEV_PCI_DEVICE] && nla_len(dev[SMC_NLA_DEV_PCI_DEVICE]) >= 2)
		c->roce[smc_roce_generation(nla_get_u16(dev[SMC_NLA_DEV_PCI_DEVICE]))]++;
	return 0;
}

static bool get_u8(struct nlattr *a, unsigned int *v)
{
	if (!a || nla_len(a) < 1)
		return false;
	*v = nla_get_u8(a);
	return true;
}

int smc_info_parse(const struct nlmsghdr *nlh, struct sys_info *si)
{
	struct nlattr *tb[SMC_GEN_MAX + 1], *a[SMC_NLA_SYS_MAX + 1];
	unsigned int v;

	if (genlmsg_parse((struct nlmsghdr *)nlh, 0, tb, SMC_GEN_MAX, NULL) < 0)
		return -EBADMSG;
	if (!tb[SMC_GEN_SYS_INFO])
		return 0;
	if (nla_parse_nested(a, SMC_NLA_SYS_MAX, tb[SMC_GEN_SYS_INFO], NULL) < 0)
		return -EBADMSG;
	memset(si, 0, sizeof(*si));
	si->present = true;
	si->has_ver = get_u8(a[SMC_NLA_SYS_VER], &si->ver);
	si->has_rel = get_u8(a[SMC_NLA_SYS_REL], &si->rel);
	si->ism_v2 = get_u8(a[SMC_NLA_SYS_IS_ISM_V2], &v) && v;
	si->smcr_v2 = get_u8(a[SMC_NLA_SYS_IS_SMCR_V2], &v) && v;
	if (a[SMC_NLA_SYS_LOCAL_HOST])
		smc_nla_strcpy(si->host, sizeof(si->host), a[SMC_NLA_SYS_LOCAL_HOST]);
	/* the kernel blank-pads the CLC host name to 32 characters */
	si->host_len = strlen(si->host);
	while (si->host_len && si->host[si->host_len - 1] == ' ')
		si->host_len--;
	if (a[SMC_NLA_SYS_SEID])
		smc_nla_strcpy(si->seid, sizeof(si->seid), a[SMC_NLA_SYS_SEID]);
	return 1;
}

static int sysinfo_cb(const struct nlmsghdr *nlh, void *arg)
{
	int rc = smc_info_parse(nlh, arg);

	return rc < 0 ? rc : 0;
}

/* A feature list: "v1" or "v1 v2" in text, ["v1"] or ["v1","v2"] in JSON. */
static void put_features(struct smc_out *o, const char *key, bool v2, const char *v1_text)
{
	out_text(o, "%s\n", v2 ? "v1 v2" : v1_text);
	out_open_array(o, key);
	out_json_str(o, NULL, "v1");
	if (v2)
		out_json_str(o, NULL, "v2");
	out_close_array(o);
}

static void print_features(struct smc_out *o, const char *key, const char *label, bool v2)
{
	out_text(o, "%-18s", label);
	put_features(o, key, v2, "v1");
}

/* A value, or n/a (text) and null (JSON) when there is none. */
static void print_text_or_null(struct smc_out *o, const char *key, const char *label,
			       const char *val)
{
	out_text(o, "%-18s", label);
	out_str_or_none(o, key, "%s\n", val, "n/a");
}

static void print_hw(struct smc_out *o, const char *key, const char *label,
		     bool present, bool v2, const char *v1_text)
{
	out_text(o, "%-18s", label);
	if (present)
		put_features(o, key, v2, v1_text);
	else
		out_none(o, key, "%s\n", "n/a");
}

void smc_info_print(struct smc_out *o, const struct sys_info *si, const struct hw_count *c)
{
	bool both = si->has_ver && si->has_rel;
	unsigned int roce = c->roce[1] + c->roce[2] + c->roce[3];
	char ver[16], host[sizeof(si->host)];

	snprintf(ver, sizeof(ver), "%u.%u", si->ver, si->rel);
	/* The text keeps the kernel's blank padding, as upstream; JSON does not. */
	snprintf(host, sizeof(host), "%.*s", out_is_json(o) ? (int)si->host_len : (int)sizeof(host),
		 si->host);
	out_open_object(o, NULL);
	out_text(o, "Kernel Capabilities\n");
	print_text_or_null(o, "smc_version", "SMC Version:", both ? ver : NULL);
	print_text_or_null(o, "hostname", "SMC Hostname:", host);
	print_features(o, "smcd_features", "SMC-D Features:", (both ? si->ver : 1) >= 2);
	print_features(o, "smcr_features", "SMC-R Features:", si->smcr_v2);
	out_text(o, "\nHardware Capabilities\n");
	print_text_or_null(o, "seid", "SEID:", si->seid);
	print_hw(o, "ism", "ISM:", c->ism > 0, si->ism_v2, "v1");
	print_hw(o, "roce", "RoCE:", roce > 0, c->roce[2] + c->roce[3] > 0, "v1 ");
	out_json_u64(o, "ism_devices", c->ism);
	out_json_u64(o, "roce_devices", roce);
	out_close_object(o);
	out_finish(o);
}

static int usage(struct smc_ctx *ctx)
{
	fprintf(ctx->err, "Usage: %s info [show]\n", ctx->prog);
	return SMC_EXIT_FAIL;
}

int smc_info_cmd(struct smc_ctx *ctx, int argc, char **argv)
{
	struct hw_count count = { 0 };
	struct sys_info si = { 0 };
	struct smc_json json;
	struct smc_out out;
	int rc;

	if (argc > 1 || (argc == 1 && !smc_prefix(argv[0], "show")))
		return usage(ctx);
	if (smc_genl_dump(ctx->g, SMC_NETLINK_GET_DEV_SMCD, count_ism_cb, &count)) {
		fprintf(ctx->err, "Error: Failed to retrieve ISM device count\n");
		return SMC_EXIT_FAIL;
	}
	if (smc_genl_dump(ctx->g, SMC_NETLINK_GET_DEV_SMCR, count_roce_cb, &count)) {
		fprintf(ctx->err, "Error: Failed to retrieve RoCE device count\n");
		return SMC_EXIT_FAIL;
	}
	rc = smc_genl_dump(ctx->g, SMC_NETLINK_GET_SYS_INFO, sysinfo_cb, &si);
	if (rc) {
		smc_print_nl_error(ctx, rc);
		return SMC_EXIT_FAIL;
	}
	smc_out_init(ctx, &out, &json);
	if (si.present)
		smc_info_print(&out, &si, &count);
	return 0;
}
