/* smcd/smcr stats when the request fails: the cache file is as before the run. */
#include "unit.h"
#include "smc/stats.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static int failing_dump(void *src, uint8_t cmd, smc_msg_cb cb, void *arg)
{
	(void)cmd;
	(void)cb;
	(void)arg;
	return *(int *)src;
}

/* stats reset with every dump failing with err; its exit status. */
static int run_failing(int err)
{
	struct capture out, errout;
	struct smc_ctx ctx = { .prog = "smcd", .smcd = true };
	int rc;

	cap_open(&out);
	cap_open(&errout);
	ctx.out = out.f;
	ctx.err = errout.f;
	rc = smc_stats_run(&ctx, SMC_STATS_RESET, failing_dump, &err);
	CHECK_STR(cap_text(&errout), "Error: Operation not supported by kernel\n");
	cap_free(&out);
	cap_free(&errout);
	return rc;
}

static off_t size_of(const char *path)
{
	struct stat sb;

	return lstat(path, &sb) ? -1 : sb.st_size;
}

TEST(stats_failed_request_leaves_no_new_cache_file)
{
	char dir[] = "/tmp/smcstats-fail.XXXXXX", path[64];
	FILE *f;

	if (!mkdtemp(dir)) {
		unit_fail(__FILE__, __LINE__, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/cache", dir);
	setenv("SMC_STATS_CACHE", path, 1);
	CHECK_INT(run_failing(-EOPNOTSUPP), 0);                /* upstream's exit status */
	CHECK_INT(size_of(path), -1);                           /* none created */
	/* an existing file stays, empty or not */
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f)
		fclose(f);
	CHECK_INT(run_failing(-EOPNOTSUPP), 0);
	CHECK_INT(size_of(path), 0);
	f = fopen(path, "w");
	if (f) {
		fputs("0           7               \n", f);
		fclose(f);
	}
	CHECK_INT(run_failing(-EOPNOTSUPP), 0);
	CHECK_INT(size_of(path), 29);
	unlink(path);
	rmdir(dir);
	unsetenv("SMC_STATS_CACHE");
}
