/*
 * smcd seid: the System EID.
 * JSON (-j show): {"seid":"...","enabled":true|false}; "seid" is null (and
 * "enabled" false) when the system has no SEID (not ISMv2-capable).
 */
#include "smc.h"
#include "names.h"
#include "smc_uapi.h"
#include "util.h"

#include <errno.h>

struct seid {
	bool present;
	char text[SMC_MAX_EID_LEN + 1];
	bool enabled;
};

static int usage(struct smc_ctx *ctx)
{
	fprintf(ctx->err, "Usage: smcd seid [show]\n"
		"       smcd seid enable\n"
		"       smcd seid disable\n");
	return SMC_EXIT_FAIL;
}

static int seid_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct nlattr *tb[SMC_NLA_SEID_TABLE_MAX + 1];
	struct seid *s = arg;

	if (genlmsg_parse((struct nlmsghdr *)nlh, 0, tb, SMC_NLA_SEID_TABLE_MAX, NULL) < 0)
		return -EBADMSG;
	if (!tb[SMC_NLA_SEID_ENTRY] || !tb[SMC_NLA_SEID_ENABLED] ||
	    nla_len(tb[SMC_NLA_SEID_ENABLED]) < 1)
		return 1;
	smc_nla_strcpy(s->text, sizeof(s->text), tb[SMC_NLA_SEID_ENTRY]);
	s->enabled = nla_get_u8(tb[SMC_NLA_SEID_ENABLED]) != 0;
	s->present = true;
	return 1;
}

static void print(struct smc_ctx *ctx, const struct seid *s)
{
	struct smc_json j;
	struct smc_out o;

	smc_out_init(ctx, &o, &j);
	out_open_object(&o, NULL);
	if (s->present) {
		out_str_or_none(&o, "seid", "%s ", s->text, "");
		out_bool(&o, "enabled", "[%s]\n", s->enabled, "enabled", "disabled");
	} else {
		out_none(&o, "seid", "%s\n", "n/a");
		out_json_bool(&o, "enabled", false);
	}
	out_close_object(&o);
	out_finish(&o);
}

static int report(struct smc_ctx *ctx, uint8_t cmd, int rc)
{
	if (rc == -EOPNOTSUPP)
		fprintf(ctx->err, "Error: operation not supported by kernel\n");
	else if (cmd == SMC_NETLINK_DISABLE_SEID && rc == -ENOENT)
		fprintf(ctx->err, "Error: System EID cannot be disabled because no User EID is defined\n");
	else
		fprintf(ctx->err, "Error: %s\n", smc_nl_errtext(rc));
	return SMC_EXIT_FAIL;
}

int smc_seid_cmd(struct smc_ctx *ctx, int argc, char **argv)
{
	struct seid s = { 0 };
	uint8_t cmd = 0;
	int rc;

	if (argc > 1 || (argc == 1 && smc_prefix(argv[0], "help")))
		return usage(ctx);
	if (argc == 1 && smc_prefix(argv[0], "enable"))
		cmd = SMC_NETLINK_ENABLE_SEID;
	else if (argc == 1 && smc_prefix(argv[0], "disable"))
		cmd = SMC_NETLINK_DISABLE_SEID;
	else if (argc == 1 && !smc_prefix(argv[0], "show"))
		return usage(ctx);
	rc = smc_genl_dump(ctx->g, SMC_NETLINK_DUMP_SEID, seid_cb, &s);
	if (rc)
		return report(ctx, SMC_NETLINK_DUMP_SEID, rc);
	if (!cmd) {
		print(ctx, &s);
		return 0;
	}
	if (!s.present) {
		/* upstream printed this on stdout */
		fprintf(ctx->err, "Error: System EID not available\n");
		return SMC_EXIT_FAIL;
	}
	rc = smc_genl_do(ctx->g, cmd);
	return rc ? report(ctx, cmd, rc) : 0;
}
