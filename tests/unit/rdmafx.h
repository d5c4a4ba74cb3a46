/*
 * Two ends of one soft SMC-R connection over the fake RDMA (fake_rdma.c):
 * a link group each way with one link, a connection on it, each end bound
 * into a transport (preload/transport/transport_rdma.c).
 */
#ifndef UNIT_RDMAFX_H
#define UNIT_RDMAFX_H

#include <stdatomic.h>
#include <stdint.h>

#include "fake_rdma.h"
#include "smcr.h"
#include "transport.h"

#define RDMAFX_RMB (8u * 1024)

struct rdmafx_end {
	const char *dev;
	struct smcr_lgr *g;
	struct smcr_sock *s;
	struct transport t;
};

/* The last bell the progress thread rang (smcr_env.ring). */
extern _Atomic uint32_t rdmafx_rung;

/* Sleepers take their links' completions themselves (smcr_env.drive) in the next pair. */
extern bool rdmafx_drive;

/* srv and cli joined on devices of their own network net (every test its own). */
void rdmafx_pair_up(struct rdmafx_end *srv, struct rdmafx_end *cli, uint8_t net);

#endif
