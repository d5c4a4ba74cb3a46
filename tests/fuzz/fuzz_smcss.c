/*
 * Fuzz smcss: the input is taken as the messages of a sock_diag reply and
 * printed with every combination of options, as text and as JSON.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netlink.h>

#include "nl.h"
#include "smcss_print.h"

void fuzz_smcss(const uint8_t *data, size_t size);

/* Every message of data into rep; false when the framing is rejected. */
static bool wrap_reply(const uint8_t *data, size_t size, struct smc_reply *rep)
{
	/* A copy, so the message headers are aligned whatever data is. */
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

void fuzz_smcss(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	struct smc_reply rep;

	if (!devnull && !(devnull = fopen("/dev/null", "w")))
		return;
	smc_reply_init(&rep);
	if (wrap_reply(data, size, &rep)) {
		for (unsigned int bits = 0; bits < 128; bits++) {
			struct smcss_opts o = {
				.all = bits & 1, .listening = bits & 2, .debug = bits & 4,
				.smcd = bits & 8, .smcr = bits & 16, .wide = bits & 32,
				.json = bits & 64,
			};

			smcss_print_reply(&rep, &o, devnull);
		}
	}
	smc_reply_free(&rep);
}
