/* The smcd/smcr front end and the interface of its objects (one file each). */
#ifndef SMC_SMC_H
#define SMC_SMC_H

#include <stdbool.h>
#include <stdio.h>

#include "genl.h"
#include "output.h"

/* Global option levels as upstream passes them to the objects. */
enum smc_level {
	SMC_LVL_DETAILS_ABS = -2,  /* -ad */
	SMC_LVL_ABSOLUTE = -1,     /* -a */
	SMC_LVL_NONE = 0,
	SMC_LVL_DETAILS = 1,       /* -d */
	SMC_LVL_MORE_DETAILS = 2,  /* -dd */
};

struct smc_ctx {
	const char *prog;          /* "smcd" or "smcr" */
	bool smcd;                 /* personality: SMC-D (true) or SMC-R */
	int level;                 /* enum smc_level */
	bool json;                 /* -j/--json: one JSON document instead of text */
	struct smc_genl *g;        /* SMC_GEN_NETLINK, resolved */
	FILE *out;                 /* stdout (a memory stream in tests) */
	FILE *err;                 /* stderr */
};

/* Exit status of the objects: 0, or 255 as upstream (negated -1). */
#define SMC_EXIT_FAIL 255

/* Each object gets the words after its name and returns the exit status. */
int smc_info_cmd(struct smc_ctx *ctx, int argc, char **argv);
int smc_linkgroup_cmd(struct smc_ctx *ctx, int argc, char **argv);
int smc_device_cmd(struct smc_ctx *ctx, int argc, char **argv);
int smc_stats_cmd(struct smc_ctx *ctx, int argc, char **argv);
int smc_ueid_cmd(struct smc_ctx *ctx, int argc, char **argv);
int smc_seid_cmd(struct smc_ctx *ctx, int argc, char **argv);
int smc_hslimit_cmd(struct smc_ctx *ctx, int argc, char **argv);

/* "Error: Operation not supported by kernel" or "Error: <libnl text>" on ctx->err. */
void smc_print_nl_error(struct smc_ctx *ctx, int rc);

/* Set up text or JSON output for ctx (json must outlive out). */
void smc_out_init(struct smc_ctx *ctx, struct smc_out *out, struct smc_json *json);

#endif
