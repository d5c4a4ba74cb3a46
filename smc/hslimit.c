/*
 * smcd|smcr hslimit: the handshake limitation of the caller's network
 * namespace (the kernel's net.smc.limit_smc_hs, SMC_NETLINK_*_HS_LIMITATION;
 * not in upstream smc-tools).  While it is on, the kernel lets a listening
 * SMC socket fall back to TCP when its handshake queue is congested.
 * JSON (-j show): {"enabled":true|false}, null when the reply lacks it.
 */
#include "smc.h"
#include "smc_uapi.h"
#include "util.h"

#include <errno.h>

enum hslimit_op { HS_SHOW, HS_ENABLE, HS_DISABLE };

struct hslimit {
	bool present;
	bool enabled;
};

static int usage(struct smc_ctx *ctx)
{
	fprintf(ctx->err, "Usage: %s hslimit [show]\n"
		"       %s hslimit enable\n"
		"       %s hslimit disable\n", ctx->prog, ctx->prog, ctx->prog);
	return SMC_EXIT_FAIL;
}

static int parse(int argc, char **argv, enum hslimit_op *op)
{
	static const struct { const char *word; enum hslimit_op op; } words[] = {
		{ "show", HS_SHOW }, { "enable", HS_ENABLE }, { "disable", HS_DISABLE },
	};

	*op = HS_SHOW;
	if (argc == 0)
		return 0;
	if (argc > 1)
		return -1;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (smc_prefix(argv[0], words[i].word)) {
			*op = words[i].op;
			return 0;
		}
	return -1;
}

static int hslimit_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct nlattr *tb[SMC_NLA_HS_LIMITATION_MAX + 1];
	struct hslimit *h = arg;

	if (genlmsg_parse((struct nlmsghdr *)nlh, 0, tb, SMC_NLA_HS_LIMITATION_MAX, NULL) < 0)
		return -EBADMSG;
	if (tb[SMC_NLA_HS_LIMITATION_ENABLED] && nla_len(tb[SMC_NLA_HS_LIMITATION_ENABLED]) >= 1) {
		h->enabled = nla_get_u8(tb[SMC_NLA_HS_LIMITATION_ENABLED]) != 0;
		h->present = true;
	}
	return 1;
}

static void print(struct smc_ctx *ctx, const struct hslimit *h)
{
	static const char fmt[] = "Handshake limitation: %s\n";
	struct smc_json j;
	struct smc_out o;

	smc_out_init(ctx, &o, &j);
	out_open_object(&o, NULL);
	if (h->present)
		out_bool(&o, "enabled", fmt, h->enabled, "enabled", "disabled");
	else
		out_none(&o, "enabled", fmt, "n/a");
	out_close_object(&o);
	out_finish(&o);
}

static int show(struct smc_ctx *ctx)
{
	struct hslimit h = { 0 };
	int rc = smc_genl_dump(ctx->g, SMC_NETLINK_DUMP_HS_LIMITATION, hslimit_cb, &h);

	if (!rc)
		print(ctx, &h);
	return rc;
}

int smc_hslimit_cmd(struct smc_ctx *ctx, int argc, char **argv)
{
	enum hslimit_op op;
	int rc;

	if (parse(argc, argv, &op))
		return usage(ctx);
	switch (op) {
	case HS_SHOW:
		rc = show(ctx);
		break;
	case HS_ENABLE:
		rc = smc_genl_do(ctx->g, SMC_NETLINK_ENABLE_HS_LIMITATION);
		break;
	default:
		rc = smc_genl_do(ctx->g, SMC_NETLINK_DISABLE_HS_LIMITATION);
		break;
	}
	if (!rc)
		return 0;
	smc_print_nl_error(ctx, rc);
	return SMC_EXIT_FAIL;
}
