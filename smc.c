/* smcd / smcr: one program, two personalities chosen by its name. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genl.h"
#include "names.h"
#include "smc/smc.h"
#include "smc_uapi.h"
#include "util.h"
#include "version.h"

struct object {
	const char *name;
	int (*fn)(struct smc_ctx *ctx, int argc, char **argv);
	bool smcd_only;
};

/*
 * Matched by prefix in this order, so "s" is stats and "se" is seid; hslimit
 * comes after help, which keeps upstream's "h" (help).
 */
static const struct object objects[] = {
	{ "device", smc_device_cmd, false },
	{ "linkgroup", smc_linkgroup_cmd, false },
	{ "info", smc_info_cmd, false },
	{ "stats", smc_stats_cmd, false },
	{ "ueid", smc_ueid_cmd, false },
	{ "seid", smc_seid_cmd, true },
	{ "help", NULL, false },
	{ "hslimit", smc_hslimit_cmd, false },
};

static void usage(const struct smc_ctx *ctx)
{
	fprintf(stderr, "Usage: %s  [ OPTIONS ] OBJECT {COMMAND | help}\n", ctx->prog);
	if (ctx->smcd)
		fprintf(stderr,
			"where  OBJECT := {info | linkgroup | device | stats | ueid | seid | hslimit}\n"
			"       OPTIONS := {-v[ersion] | -d[etails] | -a[bsolute] | -j[son]}\n");
	else
		fprintf(stderr,
			"where  OBJECT := {info | linkgroup | device | stats | ueid | hslimit}\n"
			"       OPTIONS := {-v[ersion] | -d[etails] | -dd[etails] | -a[bsolute] | -j[son]}\n");
}

/* One global option word (leading "--" already reduced to "-"); exits for -v/-h. */
static void global_option(struct smc_ctx *ctx, const char *w)
{
	if (!strncmp(w, "-ad", 3) || !strncmp(w, "-da", 3))
		ctx->level = SMC_LVL_DETAILS_ABS;
	else if (smc_prefix(w, "-absolute"))
		ctx->level = SMC_LVL_ABSOLUTE;
	else if (smc_prefix(w, "-version")) {
		fprintf(stderr, "%s utility, smc-tools-%s\n", ctx->prog, SMC_TOOLS_RELEASE);
		exit(SMC_EXIT_FAIL);
	} else if (smc_prefix(w, "-details"))
		ctx->level = SMC_LVL_DETAILS;
	else if (smc_prefix(w, "-ddetails"))
		ctx->level = SMC_LVL_MORE_DETAILS;
	else if (smc_prefix(w, "-help")) {
		usage(ctx);
		exit(0);
	} else if (smc_prefix(w, "-json"))
		ctx->json = true;
	else {
		fprintf(stderr, "Error: Option \"%s\" is unknown, try \"%s help\".\n", w, ctx->prog);
		exit(SMC_EXIT_FAIL);
	}
}

/* Consumes the global options; returns the index of the object word. */
static int global_options(struct smc_ctx *ctx, int argc, char **argv)
{
	int i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *w = argv[i];

		if (!strcmp(w, "--"))
			return i + 1;
		if (!strncmp(w, "--", 2))
			w++;
		global_option(ctx, w);
	}
	return i;
}

static const struct object *find_object(const struct smc_ctx *ctx, const char *word)
{
	for (size_t i = 0; i < sizeof(objects) / sizeof(objects[0]); i++) {
		if (!smc_prefix(word, objects[i].name))
			continue;
		if (objects[i].smcd_only && !ctx->smcd) {
			fprintf(stderr, "Error: Object \"%s\" is valid for SMC-D only, try \"smcr help\".\n",
				word);
			exit(1);
		}
		return &objects[i];
	}
	fprintf(stderr, "Error: Object \"%s\" is unknown, try \"%s help\".\n", word, ctx->prog);
	exit(1);
}

static const char *prog_name;

/* Runs on the first request of an object: no backend is fatal (exit 1). */
static int open_backend(struct smc_genl *g)
{
	bool open_failed;
	int rc = smc_genl_open(g, SMC_GENL_FAMILY_NAME, &open_failed);
	char line[512];

	if (!rc)
		return 0;
	if (open_failed) {
		smc_nl_open_strerror(&g->nl, rc, line, sizeof(line));
		fprintf(stderr, "%s: %s\n", prog_name, line);
	} else if (rc == -ENOENT)
		fprintf(stderr, "Error: SMC module not loaded\n");
	else
		fprintf(stderr, "Error: %s\n", smc_nl_errtext(rc));
	smc_genl_close(g);
	fflush(stdout);
	exit(1);
}

int main(int argc, char **argv)
{
	struct smc_ctx ctx = { .out = stdout, .err = stderr };
	const struct object *obj;
	struct smc_genl g;
	int i, rc;

	ctx.smcd = strcmp(smc_basename(argv[0]), "smcr") != 0;
	ctx.prog = ctx.smcd ? "smcd" : "smcr";
	i = global_options(&ctx, argc, argv);
	if (i >= argc) {
		usage(&ctx);
		return 0;
	}
	obj = find_object(&ctx, argv[i]);
	if (!obj->fn) {
		usage(&ctx);
		return 0;
	}
	/* The backend is opened by the object's first request, after its own checks. */
	memset(&g, 0, sizeof(g));
	g.nl.fd = -1;
	g.open_hook = open_backend;
	prog_name = ctx.prog;
	ctx.g = &g;
	rc = obj->fn(&ctx, argc - i - 1, argv + i + 1);
	fflush(stdout);
	smc_genl_close(&g);
	return rc;
}
