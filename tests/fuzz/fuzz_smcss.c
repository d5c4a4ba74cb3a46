/*
 * Fuzz smcss: the input is taken as the messages of a sock_diag reply and
 * printed with every combination of options, as text and as JSON.
 */
#include <stdint.h>
#include <stdio.h>

#include "fuzz_util.h"
#include "smcss_print.h"

void fuzz_smcss(const uint8_t *data, size_t size);

void fuzz_smcss(const uint8_t *data, size_t size)
{
	FILE *devnull = fuzz_sink();
	struct smc_reply rep;

	if (!devnull)
		return;
	smc_reply_init(&rep);
	if (fuzz_reply(&rep, data, size) == 0) {
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
