/*
 * smcd|smcr ueid: the User EID table.
 * JSON (-j show): {"ueids":["EID1",...]} with the blank padding removed.
 */
#include "smc.h"
#include "eid.h"
#include "names.h"
#include "smc_uapi.h"
#include "util.h"

#include <errno.h>
#include <string.h>

enum ueid_op { UEID_SHOW, UEID_ADD, UEID_DEL, UEID_FLUSH };

static int usage(struct smc_ctx *ctx)
{
	/* Upstream prints "smcd" here for both personalities. */
	fprintf(ctx->err, "Usage: smcd ueid [show]\n"
		"       smcd ueid add <eid>\n"
		"       smcd ueid del <eid>\n"
		"       smcd ueid flush\n");
	return SMC_EXIT_FAIL;
}

struct show_state {
	struct smc_out out;
};

static int show_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct nlattr *tb[SMC_NLA_EID_TABLE_MAX + 1];
	struct show_state *st = arg;
	char eid[SMC_EID_LEN + 2];

	if (genlmsg_parse((struct nlmsghdr *)nlh, 0, tb, SMC_NLA_EID_TABLE_MAX, NULL) < 0 ||
	    !tb[SMC_NLA_EID_TABLE_ENTRY])
		return 1;
	smc_nla_strcpy(eid, sizeof(eid), tb[SMC_NLA_EID_TABLE_ENTRY]);
	/* The text keeps the kernel's blank padding, as upstream; JSON does not. */
	if (out_is_json(&st->out))
		for (size_t n = strlen(eid); n && eid[n - 1] == ' '; n--)
			eid[n - 1] = '\0';
	out_str(&st->out, NULL, "%s\n", eid);
	return 0;
}

static int show(struct smc_ctx *ctx)
{
	struct smc_held held = { 0 };
	struct show_state st;
	struct smc_json json;
	int rc;

	smc_out_init(ctx, &st.out, &json);
	if (ctx->json)         /* the document goes out once the dump succeeded */
		json_init(&json, held_open(&held) ? held.f : ctx->out);
	out_doc_begin(&st.out, "ueids");
	rc = smc_genl_dump(ctx->g, SMC_NETLINK_DUMP_UEID, show_cb, &st);
	out_doc_end(&st.out);
	if (ctx->json)
		held_close(&held, ctx->out, !rc);
	return rc;
}

static int change(struct smc_ctx *ctx, uint8_t cmd, const char *eid)
{
	struct nl_msg *msg = smc_genl_msg(ctx->g, cmd, 0);

	if (msg && eid && nla_put_string(msg, SMC_NLA_EID_TABLE_ENTRY, eid) < 0) {
		nlmsg_free(msg);
		msg = NULL;
	}
	return smc_genl_request(ctx->g, msg, NULL, NULL);
}

static const char *add_error(int rc)
{
	switch (-rc) {
	case EINVAL: return "Error: specified User EID was rejected by the kernel";
	case ENOMEM: return "Error: kernel reported an out of memory condition";
	case ERANGE: return "Error: specified User EID was rejected because the maximum number of User EIDs is reached";
	case EEXIST: return "Error: specified User EID is already defined";
	default: return NULL;
	}
}

/* Upstream reports "not defined" for every error and exits 255 on EAGAIN: fixed. */
static int report(struct smc_ctx *ctx, enum ueid_op op, int rc)
{
	const char *text = NULL;

	if (!rc)
		return 0;
	if (rc == -EOPNOTSUPP)
		text = "Error: operation not supported by kernel";
	else if (op == UEID_DEL && rc == -EAGAIN) {
		fprintf(ctx->err, "Info: the System EID was activated because the last User EID was removed\n");
		return 0;
	} else if (op == UEID_DEL && rc == -ENOENT)
		text = "Error: specified User EID is not defined";
	else if (op == UEID_ADD)
		text = add_error(rc);
	if (text)
		fprintf(ctx->err, "%s\n", text);
	else
		fprintf(ctx->err, "Error: %s\n", smc_nl_errtext(rc));
	return SMC_EXIT_FAIL;
}

static int parse(int argc, char **argv, enum ueid_op *op, const char **eid)
{
	if (argc == 0) {
		*op = UEID_SHOW;
		return 0;
	}
	if (smc_prefix(argv[0], "help"))
		return -1;
	if (smc_prefix(argv[0], "add") || smc_prefix(argv[0], "del")) {
		*op = smc_prefix(argv[0], "add") ? UEID_ADD : UEID_DEL;
		if (argc != 2)
			return -1;
		*eid = argv[1];
		return 0;
	}
	if (argc != 1)
		return -1;
	if (smc_prefix(argv[0], "flush"))
		*op = UEID_FLUSH;
	else if (smc_prefix(argv[0], "show"))
		*op = UEID_SHOW;
	else
		return -1;
	return 0;
}

int smc_ueid_cmd(struct smc_ctx *ctx, int argc, char **argv)
{
	char eid[SMC_EID_LEN + 1];
	const char *arg = NULL, *msg;
	enum ueid_op op;

	if (parse(argc, argv, &op, &arg))
		return usage(ctx);
	if (arg && smc_eid_check(arg, eid, &msg)) {
		fprintf(ctx->err, "%s\n", msg);
		return SMC_EXIT_FAIL;
	}
	switch (op) {
	case UEID_SHOW: return report(ctx, op, show(ctx));
	case UEID_ADD: return report(ctx, op, change(ctx, SMC_NETLINK_ADD_UEID, eid));
	case UEID_DEL: return report(ctx, op, change(ctx, SMC_NETLINK_REMOVE_UEID, eid));
	case UEID_FLUSH: return report(ctx, op, change(ctx, SMC_NETLINK_FLUSH_UEID, NULL));
	}
	return SMC_EXIT_FAIL;
}
