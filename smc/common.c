#include "smc.h"
#include "names.h"

#include <errno.h>

void smc_print_nl_error(struct smc_ctx *ctx, int rc)
{
	if (rc == -EOPNOTSUPP)
		fprintf(ctx->err, "Error: Operation not supported by kernel\n");
	else
		fprintf(ctx->err, "Error: %s\n", smc_nl_errtext(rc));
}

void smc_out_init(struct smc_ctx *ctx, struct smc_out *out, struct smc_json *json)
{
	out->f = ctx->out;
	out->j = NULL;
	if (ctx->json) {
		json_init(json, ctx->out);
		out->j = json;
	}
}
