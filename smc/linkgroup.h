/*
 * smcd|smcr linkgroup: the parsed command line, and the steps the command
 * runs (parse the words, choose the dump, print a reply), for the tests.
 */
#ifndef SMC_LINKGROUP_H
#define SMC_LINKGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <net/if.h>

#include "listing.h"
#include "smc.h"

struct smc_lg_args {
	bool links;                 /* link-show (SMC-R only has an effect) */
	uint32_t lgid;              /* LG-ID as typed; 0: no LG-ID filter */
	uint32_t lgid_masked;       /* SMC-R compares this one (low byte cleared) */
	char ibdev[64];             /* IB device filter, "" for none */
	char netdev[IF_NAMESIZE];   /* net device filter, "" for none */
};

/* Parse the words after "linkgroup"; 0, or -1 after printing the usage. */
int smc_linkgroup_parse(struct smc_ctx *ctx, int argc, char **argv, struct smc_lg_args *a);
/* The dump command the arguments need (SMC_NETLINK_GET_LGR_SMCR, _LINK_SMCR, _LGR_SMCD). */
uint8_t smc_linkgroup_request(const struct smc_ctx *ctx, const struct smc_lg_args *a);
/* Print a reply that is already in memory; the exit status (0 or SMC_EXIT_FAIL). */
int smc_linkgroup_print(struct smc_ctx *ctx, const struct smc_lg_args *a,
			const struct smc_reply *rep);

#endif
