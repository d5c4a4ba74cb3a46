/* What the fuzz targets share: the input as a reply, and somewhere to print. */
#ifndef FUZZ_UTIL_H
#define FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "nl.h"
#include "smc/smc.h"

/*
 * The messages of data appended to rep, up to the first one whose framing
 * is rejected; 0 when every byte was taken, -1 otherwise.
 */
int fuzz_reply(struct smc_reply *rep, const uint8_t *data, size_t size);
/* /dev/null, opened once; NULL if it cannot be. */
FILE *fuzz_sink(void);

/*
 * A listing command's target: the messages of data that frame, printed by
 * print for each personality, -d level and output form (text, JSON).
 */
void fuzz_listing(const uint8_t *data, size_t size,
		  void (*print)(struct smc_ctx *ctx, const struct smc_reply *rep));

#endif
