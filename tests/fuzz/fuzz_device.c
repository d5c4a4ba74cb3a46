/*
 * Fuzz target for smcd/smcr device: the input is a reply (netlink messages
 * back to back), printed for both personalities, every -d level, with and
 * without filters, and as JSON.  Called by the shared libFuzzer driver.
 */
#include <stdint.h>

#include "fuzz_util.h"
#include "smc/device.h"

void fuzz_device(const uint8_t *data, size_t size);

static void print_modes(struct smc_ctx *ctx, const struct smc_reply *rep)
{
	static char *modes[][2] = { { "show" }, { "netdev", "if1" }, { "ibdev", "mlx5_0" } };
	static const int argcs[] = { 1, 2, 2 };

	for (size_t m = 0; m < sizeof(argcs) / sizeof(argcs[0]); m++) {
		struct smc_dev_args a;

		if (!smc_device_parse(ctx, argcs[m], modes[m], &a))
			smc_device_print(ctx, &a, rep);
	}
}

void fuzz_device(const uint8_t *data, size_t size)
{
	fuzz_listing(data, size, print_modes);
}
