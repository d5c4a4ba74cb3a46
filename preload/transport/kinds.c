/* Which transport carries the kind a PAIR reply offers (SMC_SOFT_A_TRANSPORT). */
#include "base.h"
#include "reg.h"
#include "transport.h"

const struct transport_ops *transport_of_kind(unsigned kind)
{
	switch (kind) {
	case SMC_SOFT_TRANSPORT_RING:
		return &transport_ring;
	case SMC_SOFT_TRANSPORT_RDMA:
		return &transport_rdma;
	}
	return NULL;
}
