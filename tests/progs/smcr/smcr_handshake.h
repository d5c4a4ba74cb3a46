/*
 * The SMC-R CLC handshake over a TCP connection and the first link's LLC
 * CONFIRM LINK, as blocking steps for smcr_stream.c and smcr_conns.c: the order of the
 * kernel's first contact (client PROPOSAL, server ACCEPT, client CONFIRM,
 * then CONFIRM LINK request and response over the new queue pair).
 */
#ifndef SMCR_HANDSHAKE_H
#define SMCR_HANDSHAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <netinet/in.h>

#include "rdma.h"

/* One end's link resources, as its ACCEPT or CONFIRM names them. */
struct smcr_link_end {
	struct rdma_qp_addr qp;
	uint32_t rkey;
	uint64_t rmb_addr;
	uint32_t rmb_size;
	uint32_t token;         /* the RMBE alert token: CDCs to this end carry it */
	bool first_contact;     /* the link group's first connection */
	bool has_gid2;          /* a second device: its GID, in CONFIRM's GID list */
	uint8_t gid2[16];
};

/* SMC-Rv2: the RoCE v2 GID of an IPv4 address (::ffff:a.b.c.d). */
void smcr_gid_of(struct in_addr a, uint8_t gid[16]);
/* 0 or -errno; -EPROTO: the peer's message is malformed or unexpected. */
int smcr_handshake_server(int fd, const struct smcr_link_end *me, struct smcr_link_end *peer);
/*
 * The client's step between the server's ACCEPT and its CONFIRM, as the
 * kernel's client takes it: connect its queue pair to the server's, and
 * fill in what its CONFIRM names (me).  0 or -errno.
 */
typedef int (*smcr_accepted_fn)(void *arg, const struct smcr_link_end *peer, struct smcr_link_end *me);
int smcr_handshake_client(int fd, struct smcr_link_end *me, struct smcr_link_end *peer,
			  smcr_accepted_fn accepted, void *arg);
/* LLC CONFIRM LINK of link link_num over qp, as the server asks and the client answers. */
int smcr_confirm_link_server(struct rdma_qp *qp, const struct smcr_link_end *me, uint8_t link_num);
int smcr_confirm_link_client(struct rdma_qp *qp, const struct smcr_link_end *me, uint8_t link_num);
/*
 * LLC ADD LINK (SMC-Rv2, with the RMB's rkey on the new link) over the first
 * link's qp1: the server offers its second link me2 (its rkey on the first
 * link: rkey1) to the client's second GID; the client connects its qp2 and
 * answers with its own.  peer_rkey1: the other end's rkey on the first
 * link, which its message must name.  peer2: the other end's second link.
 * The server connects its own qp2 after the answer.
 */
int smcr_add_link_server(struct rdma_qp *qp1, struct rdma_qp *qp2, const struct smcr_link_end *me2,
			 uint32_t rkey1, uint32_t peer_rkey1, const uint8_t client_gid2[16],
			 struct smcr_link_end *peer2);
int smcr_add_link_client(struct rdma_qp *qp1, struct rdma_qp *qp2, const struct smcr_link_end *me2,
			 uint32_t rkey1, uint32_t peer_rkey1, struct smcr_link_end *peer2);
/*
 * LLC DELETE LINK of link_num over another link's qp (reason: lost path),
 * as the end that saw the link fail tells the other; resp: the answer.
 */
int smcr_delete_link_send(struct rdma_qp *qp, uint8_t link_num, bool resp);
/* Whether msg is a DELETE LINK: 1 with its link number and whether it answers, 0 if not, -EPROTO. */
int smcr_delete_link_of(const uint8_t *msg, size_t len, uint8_t *link_num, bool *resp);
/* Sleeps until something completed on qp or ms passed: 1, 0, or -errno. */
int smcr_qp_wait(struct rdma_qp *qp, int ms);

#endif
