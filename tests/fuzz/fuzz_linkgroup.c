/*
 * Fuzz target for smcd/smcr linkgroup: the input is a reply (netlink
 * messages back to back), printed in every mode, personality, -d level
 * and as JSON.  Called by the shared libFuzzer driver.
 */
#include <stdint.h>

#include "fuzz_util.h"
#include "smc/linkgroup.h"

void fuzz_linkgroup(const uint8_t *data, size_t size);

static void print_modes(struct smc_ctx *ctx, const struct smc_reply *rep)
{
	static char *modes[][3] = {
		{ "show" }, { "link-show" }, { "show", "netdev", "if1" },
		{ "link-show", "ibdev", "mlx5_0" }, { "101" },
	};
	static const int argcs[] = { 1, 1, 3, 3, 1 };

	for (size_t m = 0; m < sizeof(argcs) / sizeof(argcs[0]); m++) {
		struct smc_lg_args a;

		if (!smc_linkgroup_parse(ctx, argcs[m], modes[m], &a))
			smc_linkgroup_print(ctx, &a, rep);
	}
}

void fuzz_linkgroup(const uint8_t *data, size_t size)
{
	fuzz_listing(data, size, print_modes);
}
