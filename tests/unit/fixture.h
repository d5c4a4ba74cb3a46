/*
 * What the smcd/smcr command tests share: a context whose output and errors
 * are captured, a reply to print (or a peer to dump from), the parsed words,
 * and command lines written out as words.
 */
#ifndef FIXTURE_H
#define FIXTURE_H

#include <stdbool.h>

#include "unit.h"
#include "peer.h"
#include "smc/device.h"
#include "smc/linkgroup.h"

struct fx {
	struct capture out, err;
	struct smc_ctx ctx;
	struct smc_reply rep;           /* the reply a print step is given */
	struct peer p;                  /* ctx.g, after fx_init_peer */
	union {                         /* the words as the command parsed them */
		struct smc_dev_args dev;
		struct smc_lg_args lg;
	};
};

/* smcd or smcr at level, output captured; ifindex 2 is eth0, 3 is eth1. */
void fx_init(struct fx *f, bool smcd, int level);
/* As fx_init at level 0, with requests going to f->p. */
void fx_init_peer(struct fx *f, bool smcd);
void fx_free(struct fx *f);

/* The fixture that holds ctx: for a step that fx_call runs. */
struct fx *fx_of(struct smc_ctx *ctx);

/* Run step on f->ctx with the argc words that follow; what it returns. */
int fx_call(struct fx *f, int (*step)(struct smc_ctx *ctx, int argc, char **argv), int argc, ...);

#endif
