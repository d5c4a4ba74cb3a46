/* Which transport carries the kind a PAIR reply offers (SMC_SOFT_A_TRANSPORT). */
#include <stdatomic.h>

#include "base.h"
#include "reg.h"
#include "transport.h"

bool transport_ops_complete(const struct transport_ops *ops)
{
	static const struct transport_ops *_Atomic told;
	const char *missing = NULL;

#define TRANSPORT_OP_MISSING(op) \
	if (!missing && !ops->op) \
		missing = #op;
	TRANSPORT_OPS(TRANSPORT_OP_MISSING)
#undef TRANSPORT_OP_MISSING
	if (missing && atomic_exchange(&told, ops) != ops)
		preload_err("libsmc-preload: transport %s has no operation %s: not used\n", ops->name,
			    missing);
	return !missing;
}

const struct transport_ops *transport_of_kind(unsigned kind)
{
	const struct transport_ops *ops = NULL;

	switch (kind) {
	case SMC_SOFT_TRANSPORT_RING:
		ops = &transport_ring;
		break;
	case SMC_SOFT_TRANSPORT_RDMA:
		/* its end in a forked child has a table of its own: both or neither */
		if (!transport_ops_complete(&transport_rdma_elsewhere))
			return NULL;
		ops = &transport_rdma;
		break;
	}
	return ops && transport_ops_complete(ops) ? ops : NULL;
}
