/*
 * smcd/smcr stats [show | reset | json]: the command line and the sequence of
 * smcd(8) `stats` (baseline in the cache file, two dumps, delta, print, reset).
 */
#include "stats.h"
#include "smc_uapi.h"
#include "util.h"

#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

/* "json" is in the man page but not in the usage text, as upstream. */
static const struct {
	const char *word;
	enum smc_stats_mode mode;
} commands[] = {
	{ "show", SMC_STATS_SHOW },
	{ "reset", SMC_STATS_RESET },
	{ "json", SMC_STATS_JSON },
};

static int usage(struct smc_ctx *ctx)
{
	fprintf(ctx->err, "Usage: %s stats [show | reset]\n", ctx->prog);
	return SMC_EXIT_FAIL;
}

int smc_stats_parse_args(int argc, char **argv, enum smc_stats_mode *mode)
{
	*mode = SMC_STATS_SHOW;
	if (argc == 0)
		return 0;
	if (argc > 1)
		return -1;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (smc_prefix(argv[0], commands[i].word)) {
			*mode = commands[i].mode;
			return 0;
		}
	}
	return -1;
}

/* Both dumps into d; the error is printed here. */
static int fetch(struct smc_ctx *ctx, smc_stats_dump_fn dump, void *src,
		 struct smc_stats_data *d)
{
	struct smc_stats_parse p = { .d = d, .err = ctx->err };
	int rc;

	rc = dump(src, SMC_NETLINK_GET_FBACK_STATS, smc_stats_fback_cb, &p);
	if (!rc)
		rc = dump(src, SMC_NETLINK_GET_STATS, smc_stats_cb, &p);
	if (rc)
		smc_print_nl_error(ctx, rc);
	return rc;
}

/* A fresh file with the kernel's values as the new baseline. */
static int rewrite_cache(struct smc_ctx *ctx, const struct smc_stats_data *org)
{
	struct smc_stats_cache c;
	int rc;

	smc_stats_cache_path(c.path, sizeof(c.path));
	unlink(c.path);
	if (smc_stats_cache_open(&c, ctx->err))
		return -1;
	rc = smc_stats_cache_write(c.fp, org, ctx->err);
	smc_stats_cache_close(&c);
	return rc;
}

static bool cache_exists(void)
{
	char path[sizeof(((struct smc_stats_cache *)0)->path)];
	struct stat sb;

	smc_stats_cache_path(path, sizeof(path));
	return lstat(path, &sb) == 0;
}

/*
 * When the request fails, the cache file this run created goes again, as if
 * it had never been opened: an empty file is no baseline.  Only while it is
 * still ours (the inode we hold locked) and empty.
 */
static void drop_new_cache(const struct smc_stats_cache *c, bool existed)
{
	struct stat held, named;

	if (existed || !c->fp || fstat(fileno(c->fp), &held) || held.st_size != 0 ||
	    lstat(c->path, &named) || named.st_dev != held.st_dev || named.st_ino != held.st_ino)
		return;
	unlink(c->path);
}

static void print(struct smc_ctx *ctx, enum smc_stats_mode mode,
		  const struct smc_stats_data *d, bool absolute, bool details)
{
	if (ctx->json)
		smc_stats_print_json(ctx->out, d, ctx->smcd, absolute);
	else if (mode == SMC_STATS_JSON)
		smc_stats_print_legacy_json(ctx->out, d, ctx->smcd);
	else
		smc_stats_print_text(ctx->out, d, ctx->smcd, details);
}

int smc_stats_run(struct smc_ctx *ctx, enum smc_stats_mode mode,
		  smc_stats_dump_fn dump, void *src)
{
	bool absolute = ctx->level == SMC_LVL_ABSOLUTE || ctx->level == SMC_LVL_DETAILS_ABS;
	bool details = ctx->level != SMC_LVL_NONE && ctx->level != SMC_LVL_ABSOLUTE;
	struct smc_stats_data kern, base, org;
	struct smc_stats_cache cache = { .fp = NULL };
	bool have_base = false, existed = true;
	int rc = 0;

	memset(&kern, 0, sizeof(kern));
	if (!absolute)
		existed = cache_exists();
	/* The lock is held until the end, so a concurrent reset cannot interleave. */
	if (!absolute && (smc_stats_cache_open(&cache, ctx->err) ||
			  smc_stats_cache_read(cache.fp, &base, &have_base, ctx->err))) {
		smc_stats_cache_close(&cache);
		return SMC_EXIT_FAIL;
	}
	/* upstream exits 0 when the kernel cannot be asked */
	if (fetch(ctx, dump, src, &kern)) {
		drop_new_cache(&cache, existed);
		goto out;
	}
	org = kern;
	if (have_base) {
		/* a wrapped counter or a module reload: the baseline is useless */
		if (smc_stats_consistent(&kern, &base))
			smc_stats_subtract(&kern, &base);
		else
			unlink(cache.path);
	}
	print(ctx, mode, &kern, absolute, details);
	if (mode == SMC_STATS_RESET && rewrite_cache(ctx, &org))
		rc = SMC_EXIT_FAIL;
out:
	smc_stats_cache_close(&cache);
	return rc;
}

static int genl_dump(void *src, uint8_t cmd, smc_msg_cb cb, void *arg)
{
	return smc_genl_dump(src, cmd, cb, arg);
}

/*
 * The backend is opened before the cache file, not by the first dump: a tool
 * that finds no backend (or no SMC module) exits there, and must not leave
 * an empty cache file behind.
 */
static int open_backend(struct smc_genl *g)
{
	if (g->nl.fd >= 0 || !g->open_hook)
		return 0;
	return g->open_hook(g);
}

int smc_stats_cmd(struct smc_ctx *ctx, int argc, char **argv)
{
	enum smc_stats_mode mode;
	int rc;

	if (smc_stats_parse_args(argc, argv, &mode))
		return usage(ctx);
	rc = open_backend(ctx->g);
	if (rc) {
		smc_print_nl_error(ctx, rc);
		return 0;               /* as a failed dump: upstream exits 0 */
	}
	return smc_stats_run(ctx, mode, genl_dump, ctx->g);
}
