#include "fuzz_util.h"

#include <stdlib.h>
#include <string.h>

#include "smc/listing.h"

int fuzz_reply(struct smc_reply *rep, const uint8_t *data, size_t size)
{
	/* a copy, so the message headers are aligned whatever data is */
	unsigned char *copy = malloc(size ? size : 1);
	size_t off = 0;
	int rc = copy ? 0 : -1;

	if (copy && size)
		memcpy(copy, data, size);
	while (!rc && off < size) {
		const struct nlmsghdr *h = (const struct nlmsghdr *)(copy + off);

		rc = smc_reply_append(rep, h, size - off) ? -1 : 0;
		if (!rc)
			off += NLMSG_ALIGN(h->nlmsg_len);
	}
	free(copy);
	return rc;
}

FILE *fuzz_sink(void)
{
	static FILE *f;

	if (!f)
		f = fopen("/dev/null", "w");
	return f;
}

/* Deterministic names without system calls; some indexes are unknown. */
static char *fuzz_ifname(unsigned int ifindex, char *name)
{
	if (ifindex % 3 == 0)
		return NULL;
	snprintf(name, IF_NAMESIZE, "if%u", ifindex % 100);
	return name;
}

static void print_each_ctx(FILE *out, const struct smc_reply *rep,
			   void (*print)(struct smc_ctx *ctx, const struct smc_reply *rep))
{
	for (int smcd = 0; smcd < 2; smcd++)
		for (int level = -1; level <= 2; level++)
			for (int json = 0; json < 2; json++) {
				struct smc_ctx ctx = {
					.prog = smcd ? "smcd" : "smcr", .smcd = smcd,
					.level = level, .json = json, .out = out, .err = out,
				};

				print(&ctx, rep);
			}
}

void fuzz_listing(const uint8_t *data, size_t size,
		  void (*print)(struct smc_ctx *ctx, const struct smc_reply *rep))
{
	FILE *out = fuzz_sink();
	struct smc_reply rep;

	if (!out)
		return;
	smc_reply_init(&rep);
	fuzz_reply(&rep, data, size);     /* what frames is printed, even before junk */
	if (rep.len) {
		smc_set_ifname_fn(fuzz_ifname);
		print_each_ctx(out, &rep, print);
		smc_set_ifname_fn(NULL);
	}
	smc_reply_free(&rep);
}
