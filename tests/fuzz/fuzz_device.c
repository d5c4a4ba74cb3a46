/*
 * Fuzz target for smcd/smcr device: the input is a reply (netlink messages
 * back to back), printed for both personalities, every -d level, with and
 * without filters, and as JSON.  Called by the shared libFuzzer driver.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nl.h"
#include "smc/device.h"
#include "smc/linkgroup.h"

void fuzz_device(const uint8_t *data, size_t size);

/* Deterministic names without system calls; some indexes are unknown. */
static char *fuzz_ifname(unsigned int ifindex, char *name)
{
	if (ifindex % 3 == 0)
		return NULL;
	snprintf(name, IF_NAMESIZE, "if%u", ifindex % 100);
	return name;
}

/* The messages of data as a reply; 0, or -1 when the first one is rejected. */
static int load(struct smc_reply *rep, const uint8_t *data, size_t size)
{
	/* a copy, so the message headers are aligned whatever data is */
	unsigned char *copy = malloc(size ? size : 1);
	size_t off = 0;

	if (!copy)
		return -1;
	if (size)
		memcpy(copy, data, size);
	while (size - off >= sizeof(struct nlmsghdr)) {
		const struct nlmsghdr *h = (const struct nlmsghdr *)(copy + off);

		if (smc_reply_append(rep, h, size - off))
			break;
		off += NLMSG_ALIGN(h->nlmsg_len);
		if (off >= size)
			break;
	}
	free(copy);
	return rep->len ? 0 : -1;
}

static void run(struct smc_ctx *ctx, const struct smc_reply *rep, int argc, char **argv)
{
	struct smc_dev_args a;

	if (!smc_device_parse(ctx, argc, argv, &a))
		smc_device_print(ctx, &a, rep);
}

void fuzz_device(const uint8_t *data, size_t size)
{
	static FILE *null;
	static char *modes[][2] = { { "show" }, { "netdev", "if1" }, { "ibdev", "mlx5_0" } };
	static const int argcs[] = { 1, 2, 2 };
	struct smc_reply rep;

	if (!null)
		null = fopen("/dev/null", "w");
	if (!null)
		return;
	smc_reply_init(&rep);
	if (load(&rep, data, size) == 0) {
		smc_set_ifname_fn(fuzz_ifname);
		for (int smcd = 0; smcd < 2; smcd++)
			for (int level = -1; level <= 2; level++)
				for (int json = 0; json < 2; json++)
					for (size_t m = 0; m < sizeof(argcs) / sizeof(argcs[0]); m++) {
						struct smc_ctx ctx = {
							.prog = smcd ? "smcd" : "smcr", .smcd = smcd,
							.level = level, .json = json,
							.out = null, .err = null,
						};

						run(&ctx, &rep, argcs[m], modes[m]);
					}
		smc_set_ifname_fn(NULL);
	}
	smc_reply_free(&rep);
}
