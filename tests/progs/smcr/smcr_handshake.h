/*
 * The SMC-R CLC handshake over a TCP connection and the first link's LLC
 * CONFIRM LINK, as blocking steps for smcr_stream.c: the order of the
 * kernel's first contact (client PROPOSAL, server ACCEPT, client CONFIRM,
 * then CONFIRM LINK request and response over the new queue pair).
 */
#ifndef SMCR_HANDSHAKE_H
#define SMCR_HANDSHAKE_H

#include <stdint.h>

#include "rdma.h"

/* One end's link resources, as its ACCEPT or CONFIRM names them. */
struct smcr_link_end {
	struct rdma_qp_addr qp;
	uint32_t rkey;
	uint64_t rmb_addr;
	uint32_t rmb_size;
	uint32_t token;         /* the RMBE alert token: CDCs to this end carry it */
};

/* 0 or -errno; -EPROTO: the peer's message is malformed or unexpected. */
int smcr_handshake_server(int fd, const struct smcr_link_end *me, struct smcr_link_end *peer);
/* Connects qp to the server's between ACCEPT and CONFIRM, as the kernel's client does. */
int smcr_handshake_client(int fd, const struct smcr_link_end *me, struct smcr_link_end *peer,
			  struct rdma_qp *qp);
int smcr_confirm_link_server(struct rdma_qp *qp, const struct smcr_link_end *me);
int smcr_confirm_link_client(struct rdma_qp *qp, const struct smcr_link_end *me);
/* Sleeps until something completed on qp or ms passed: 1, 0, or -errno. */
int smcr_qp_wait(struct rdma_qp *qp, int ms);

#endif
