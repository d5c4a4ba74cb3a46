/*
 * The messages smc_softd exchanges with the smc_softd of a connection's
 * peer host, on its control port (doc/soft-roce.md section 2): whether the
 * other end of a TCP connection is registered there, and what that end
 * declines with; then, for a connection both ends negotiate, where each
 * direction's CLC message starts in the TCP stream (FENCE), under the two
 * ends' nonces.  One UDP datagram of SOFT_PEER_MSG_LEN bytes, big-endian.
 */
#ifndef SOFT_PEER_MSG_H
#define SOFT_PEER_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SOFT_PEER_PORT    7609      /* default control port (UDP) */
#define SOFT_PEER_MSG_LEN 80
#define SOFT_PEER_VERSION 2

enum soft_peer_type {
	SOFT_PEER_ASK = 1,      /* "I hold this end: do you hold the other?" */
	SOFT_PEER_ANSWER = 2,   /* the reply: have says whether the sender does */
	SOFT_PEER_FENCE = 3,    /* "my CLC message starts after fence bytes of TCP" */
	SOFT_PEER_FENCE_SEEN = 4,   /* the reply: that fence is known here */
};

struct soft_peer_msg {
	uint8_t type;            /* SOFT_PEER_* */
	uint8_t role;            /* the sender's end: 0 client, 1 server */
	bool have;               /* ANSWER: the sender holds its end */
	uint32_t seq;            /* an ASK's number, repeated by its ANSWER */
	uint32_t verdict;        /* SMC_CLC_DECL_* the sender's end declines with, 0 none */
	int family;              /* AF_INET or AF_INET6 */
	/* the connection as the sender sees it: src:sport its own end */
	uint16_t sport, dport;
	uint8_t src[16], dst[16];   /* IPv4 in the first 4 bytes, the rest 0 */
	/*
	 * The sender's end's random nonce (an ANSWER without have: 0), and the
	 * receiver's as the sender learned it (an ASK: 0; an ANSWER: its
	 * ASK's).  FENCE and FENCE_SEEN carry both: a host off the path cannot
	 * forge them, as it cannot guess a TCP sequence number.
	 */
	uint64_t nonce, echo;
	uint64_t fence;          /* FENCE, FENCE_SEEN: TCP bytes before the CLC message; else 0 */
};

/* Into out; -EINVAL for a message that would not decode. */
int soft_peer_msg_encode(const struct soft_peer_msg *m, uint8_t out[SOFT_PEER_MSG_LEN]);
/* 0, or -EBADMSG for anything but one well-formed message of this version. */
int soft_peer_msg_decode(const uint8_t *buf, size_t len, struct soft_peer_msg *m);

#endif
