#include "fixture.h"

#include <stdarg.h>
#include <stddef.h>

#define MAX_WORDS 8

static char *fake_ifname(unsigned int ifindex, char *name)
{
	if (ifindex != 2 && ifindex != 3)
		return NULL;
	snprintf(name, IF_NAMESIZE, "eth%u", ifindex - 2);
	return name;
}

void fx_init(struct fx *f, bool smcd, int level)
{
	memset(f, 0, sizeof(*f));
	cap_open(&f->out);
	cap_open(&f->err);
	f->ctx = (struct smc_ctx){ .prog = smcd ? "smcd" : "smcr", .smcd = smcd,
				   .level = level, .out = f->out.f, .err = f->err.f };
	smc_reply_init(&f->rep);
	smc_set_ifname_fn(fake_ifname);
}

void fx_init_peer(struct fx *f, bool smcd)
{
	fx_init(f, smcd, 0);
	peer_init(&f->p);
	f->ctx.g = &f->p.g;
}

void fx_free(struct fx *f)
{
	cap_free(&f->out);
	cap_free(&f->err);
	smc_reply_free(&f->rep);
	smc_set_ifname_fn(NULL);
	if (f->ctx.g)
		peer_close(&f->p);
}

struct fx *fx_of(struct smc_ctx *ctx)
{
	return (struct fx *)((char *)ctx - offsetof(struct fx, ctx));
}

int fx_call(struct fx *f, int (*step)(struct smc_ctx *ctx, int argc, char **argv), int argc, ...)
{
	char *argv[MAX_WORDS];
	va_list ap;

	va_start(ap, argc);
	for (int i = 0; i < argc && i < MAX_WORDS; i++)
		argv[i] = va_arg(ap, char *);
	va_end(ap);
	return step(&f->ctx, argc, argv);
}
