/*
 * Fuzz smcd/smcr stats: the input is taken as the messages of a reply and fed
 * to both parsers (FBACK_STATS and STATS), printed in every form, then
 * reduced by an arbitrary baseline and printed again.  No cache file is touched.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fuzz_util.h"
#include "smc/stats.h"

void fuzz_stats(const uint8_t *data, size_t size);

static void print_all(FILE *f, const struct smc_stats_data *d)
{
	for (int smcd = 0; smcd < 2; smcd++) {
		smc_stats_print_text(f, d, smcd, false);
		smc_stats_print_text(f, d, smcd, true);
		smc_stats_print_legacy_json(f, d, smcd);
		smc_stats_print_json(f, d, smcd, smcd);
	}
}

void fuzz_stats(const uint8_t *data, size_t size)
{
	FILE *devnull = fuzz_sink();
	struct smc_stats_data d, base;
	struct smc_stats_parse p = { .d = &d };
	struct smc_reply rep;

	if (!devnull)
		return;
	p.err = devnull;
	smc_reply_init(&rep);
	if (fuzz_reply(&rep, data, size) == 0) {
		memset(&d, 0, sizeof(d));
		smc_genl_walk(&rep, smc_stats_fback_cb, &p);
		smc_genl_walk(&rep, smc_stats_cb, &p);
		print_all(devnull, &d);
		/* a baseline made of the raw input: any values, wrapping included */
		memset(&base, 0, sizeof(base));
		memcpy(&base, data, size < sizeof(base) ? size : sizeof(base));
		(void)smc_stats_consistent(&d, &base);
		smc_stats_subtract(&d, &base);
		print_all(devnull, &d);
	}
	smc_reply_free(&rep);
}
