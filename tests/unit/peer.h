/*
 * The other end of a transport inside the test: a SOCK_SEQPACKET pair whose
 * far side holds reply datagrams queued before the request is made.  It tests
 * the real receive path (framing, sequence numbers, acks, errors) without any
 * daemon.
 */
#ifndef PEER_H
#define PEER_H

#include "genl.h"
#include "msgbuild.h"

struct peer {
	int fd;                  /* far end */
	struct smc_genl g;       /* near end, as a tool would have it */
};

void peer_init(struct peer *p);
void peer_close(struct peer *p);
/* Queue message m as a reply to the n-th next request (n = 1 for the next). */
void peer_queue(struct peer *p, int n, struct mb *m);
/* Queue NLMSG_DONE / an NLMSG_ERROR (error 0 = ack) for the n-th next request. */
void peer_done(struct peer *p, int n);
void peer_error(struct peer *p, int n, int error, const char *ext_ack);
/* Read the next request the near end sent (into m), return its length. */
size_t peer_request(struct peer *p, struct mb *m);

#endif
