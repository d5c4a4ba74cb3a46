/*
 * stats: the per-user baseline file (smcd(8) FILES).  It is shared by smcd
 * and smcr and its text format is upstream's, byte for byte:
 *
 *   132 lines "%-12d%-16llu"      index, counter (SMC-R block, SMC-D block,
 *                                 client and server handshake errors)
 *    60 lines "%-12d%-16d%-16d"   index, reason code, count (30 server slots,
 *                                 then 30 client slots)
 *     2 lines "%16llu"            server, client fallback totals
 *
 * Errors are reported perror-style ("<text>: <strerror(errno)>").
 */
#include "stats.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>

#define RSN_LINES   (2 * SMC_STATS_RSN_SLOTS)

static int cache_error(FILE *err, const char *text)
{
	fprintf(err, "%s: %s\n", text, strerror(errno));
	return -1;
}

void smc_stats_cache_path(char *buf, size_t len)
{
	const char *env = getenv("SMC_STATS_CACHE");

	if (env && *env)
		snprintf(buf, len, "%s", env);
	else
		snprintf(buf, len, "/tmp/.smcstats.u%u", (unsigned int)getuid());
}

int smc_stats_cache_open(struct smc_stats_cache *c, FILE *err)
{
	int fd, e;

	c->fp = NULL;
	smc_stats_cache_path(c->path, sizeof(c->path));
	/* O_NOFOLLOW: the default lives in world-writable /tmp */
	fd = open(c->path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return cache_error(err, "Error: open cache file");
	c->fp = fdopen(fd, "r+");
	if (!c->fp) {
		e = errno;
		close(fd);
		errno = e;
		return cache_error(err, "Error: cache file r+");
	}
	if (flock(fileno(c->fp), LOCK_EX)) {
		cache_error(err, "Error: cache file lock");
		smc_stats_cache_close(c);
		return -1;
	}
	return 0;
}

void smc_stats_cache_close(struct smc_stats_cache *c)
{
	if (c->fp)
		fclose(c->fp);
	c->fp = NULL;
}

static int read_counter(const char *line, int n, struct smc_stats_data *base, FILE *err)
{
	unsigned long long val;
	int idx;

	if (sscanf(line, "%d%llu", &idx, &val) < 2)
		return cache_error(err, "Error: parsing cache file(stats)");
	/* also what a pre-1.8.4 cache (128 counters) runs into */
	if (idx != n)
		return cache_error(err, "Error: unexpected value in cache file");
	base->cnt[n] = val;
	return 0;
}

static int read_reason(const char *line, int n, struct smc_stats_data *base, FILE *err)
{
	struct smc_stats_rsn *slot;
	int idx, code, count;

	if (sscanf(line, "%d%d%d", &idx, &code, &count) < 3)
		return cache_error(err, "Error: parsing cache file (fback stats)");
	/* upstream checks only the upper bound and fills the slots in line order */
	if (idx > RSN_LINES)
		return cache_error(err, "Error: unexpected value in cache file (fback stats)");
	slot = n < SMC_STATS_RSN_SLOTS ? &base->srv[n] : &base->clnt[n - SMC_STATS_RSN_SLOTS];
	slot->code = code;
	slot->count = count;
	return 0;
}

static int read_total(const char *line, int n, struct smc_stats_data *base, FILE *err)
{
	unsigned long long val;

	if (sscanf(line, "%llu", &val) < 1)
		return cache_error(err, "Error: parsing cache file(fback counters)");
	if (n == 0)
		base->srv_fback = val;
	else
		base->clnt_fback = val;
	return 0;
}

static int read_line(const char *line, int n, struct smc_stats_data *base, FILE *err)
{
	if (n < SMC_STATS_CNT)
		return read_counter(line, n, base, err);
	n -= SMC_STATS_CNT;
	if (n < RSN_LINES)
		return read_reason(line, n, base, err);
	n -= RSN_LINES;
	if (n < 2)
		return read_total(line, n, base, err);
	return cache_error(err, "Error: cache file corrupt");
}

int smc_stats_cache_read(FILE *fp, struct smc_stats_data *base, bool *found, FILE *err)
{
	char line[4096];         /* as upstream: longer lines count as several */
	int n = 0;

	memset(base, 0, sizeof(*base));
	*found = false;
	errno = 0;               /* parse errors report whatever errno then holds */
	while (fgets(line, sizeof(line), fp)) {
		if (read_line(line, n, base, err))
			return -1;
		*found = true;
		n++;
	}
	return 0;
}

int smc_stats_cache_write(FILE *fp, const struct smc_stats_data *org, FILE *err)
{
	int i;

	if (ftruncate(fileno(fp), 0) < 0)
		cache_error(err, "Error: ftruncate");   /* not fatal, as upstream */
	rewind(fp);
	for (i = 0; i < SMC_STATS_CNT; i++)
		fprintf(fp, "%-12d%-16llu\n", i, (unsigned long long)org->cnt[i]);
	for (i = 0; i < RSN_LINES; i++) {
		const struct smc_stats_rsn *r = i < SMC_STATS_RSN_SLOTS ?
			&org->srv[i] : &org->clnt[i - SMC_STATS_RSN_SLOTS];

		fprintf(fp, "%-12d%-16d%-16d\n", i, r->code, r->count);
	}
	fprintf(fp, "%16llu\n", (unsigned long long)org->srv_fback);
	fprintf(fp, "%16llu\n", (unsigned long long)org->clnt_fback);
	if (fflush(fp) || ferror(fp))
		return cache_error(err, "Error: write cache file");
	return 0;
}
