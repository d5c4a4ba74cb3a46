/* The daemon's state freed at exit, each part by its owner. */
#include "teardown.h"
#include "decl_memo.h"
#include "devices.h"
#include "dump.h"
#include "pnettab.h"
#include "region.h"
#include "regidx.h"
#include "service.h"
#include "stats.h"

#include <stdlib.h>

void soft_state_free(struct soft_state *st)
{
	struct soft_ns *ns, *next;

	soft_regions_free(st);
	soft_pstats_free(st);
	soft_bells_free(st);
	soft_peer_free(st);
	soft_dumps_free(st);
	soft_idx_free(st);
	for (ns = st->ns; ns; ns = next) {
		next = ns->next;
		soft_pnet_free(ns);
		soft_stats_free(ns);
		soft_socks_free(ns);
		free(ns);
	}
	st->ns = NULL;
	soft_devs_free(st);
	soft_memo_free(st);
}
