/*
 * Fuzz smcd/smcr stats: the input is taken as the messages of a reply and fed
 * to both parsers (FBACK_STATS and STATS), printed in every form, then
 * reduced by an arbitrary baseline and printed again.  No cache file is touched.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netlink.h>

#include "nl.h"
#include "smc/stats.h"

void fuzz_stats(const uint8_t *data, size_t size);

/* Every message of data into rep; false when the framing is rejected. */
static bool wrap_reply(const uint8_t *data, size_t size, struct smc_reply *rep)
{
	/* a copy, so the message headers are aligned whatever data is */
	unsigned char *copy = malloc(size ? size : 1);
	size_t off = 0;
	bool ok = copy != NULL;

	if (ok)
		memcpy(copy, data, size);
	while (ok && off < size) {
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)(copy + off);

		ok = smc_reply_append(rep, copy + off, size - off) == 0;
		if (ok)
			off += NLMSG_ALIGN(nlh->nlmsg_len);
	}
	free(copy);
	return ok;
}

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
	static FILE *devnull;
	struct smc_stats_data d, base;
	struct smc_stats_parse p = { .d = &d };
	struct smc_reply rep;

	if (!devnull && !(devnull = fopen("/dev/null", "w")))
		return;
	p.err = devnull;
	smc_reply_init(&rep);
	if (wrap_reply(data, size, &rep)) {
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
