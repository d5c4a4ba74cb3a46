/*
 * smcd|smcr device: the parsed command line and the printing step, for the
 * tests.  Net device names come from smc_set_ifname_fn (listing.h).
 */
#ifndef SMC_DEVICE_H
#define SMC_DEVICE_H

#include <net/if.h>

#include "smc.h"

struct smc_dev_args {
	char ibdev[64];             /* IB device filter (SMC-R), "" for none */
	char netdev[IF_NAMESIZE];   /* net device filter (SMC-R), "" for none */
};

/* Parse the words after "device"; 0, or -1 after printing the usage. */
int smc_device_parse(struct smc_ctx *ctx, int argc, char **argv, struct smc_dev_args *a);
/* Print a reply that is already in memory; the exit status (0 or SMC_EXIT_FAIL). */
int smc_device_print(struct smc_ctx *ctx, const struct smc_dev_args *a,
		     const struct smc_reply *rep);

#endif
