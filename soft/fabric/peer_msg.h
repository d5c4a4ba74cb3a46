/*
 * The messages smc_softd exchanges with the smc_softd of a connection's
 * peer host, on its control port (doc/soft-roce.md section 2): whether the
 * other end of a TCP connection is registered there, and what that end
 * declines with; then, for a connection both ends negotiate, the CLC
 * messages of the two ends' libraries (CLC), under the two ends' nonces,
 * and once they run over RDMA the messages that rebuild their link
 * group's only link (REBUILD).
 * One UDP datagram of SOFT_PEER_MSG_LEN bytes, big-endian; a CLC message
 * has its bytes after them.
 */
#ifndef SOFT_PEER_MSG_H
#define SOFT_PEER_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SOFT_PEER_PORT    7609      /* default control port (UDP) */
#define SOFT_PEER_MSG_LEN 80
#define SOFT_PEER_VERSION 3
#define SOFT_PEER_CLC_MAX 1024      /* the bytes of one CLC message, at most */
#define SOFT_PEER_DGRAM_MAX (SOFT_PEER_MSG_LEN + SOFT_PEER_CLC_MAX)
#define SOFT_PEER_CLC_INDEX_MAX 2   /* an end's messages: the first (PROPOSAL, ACCEPT), the second (CONFIRM, DECLINE) */

enum soft_peer_type {
	SOFT_PEER_ASK = 1,      /* "I hold this end: do you hold the other?" */
	SOFT_PEER_ANSWER = 2,   /* the reply: have says whether the sender does */
	SOFT_PEER_CLC = 3,      /* "my library's CLC message number index" and its bytes */
	SOFT_PEER_CLC_SEEN = 4, /* the reply: that message is kept here */
	/* once both ends run over RDMA: a library's message that rebuilds its link group's only link */
	SOFT_PEER_REBUILD = 5,  /* "my library's rebuild message number index" and its bytes */
	SOFT_PEER_REBUILD_SEEN = 6,     /* the reply: that message is kept here */
	/* once both ends run over RDMA: "the process of my end ended without closing it" */
	SOFT_PEER_GONE = 7,
};

#define SOFT_PEER_REBUILD_MAX 64    /* the bytes of one rebuild message, at most */

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
	 * ASK's).  CLC and CLC_SEEN carry both: a host off the path cannot
	 * forge them, as it cannot guess a TCP sequence number.
	 */
	uint64_t nonce, echo;
	/*
	 * CLC, CLC_SEEN: which message of the exchange (1 to
	 * SOFT_PEER_CLC_INDEX_MAX); REBUILD, REBUILD_SEEN: the sender's count
	 * of rebuild messages (1 to 255, then 1 again); else 0
	 */
	uint8_t index;
	/* CLC, REBUILD: its bytes (1 to SOFT_PEER_CLC_MAX, SOFT_PEER_REBUILD_MAX; decoding points into the datagram) */
	const uint8_t *clc;
	uint16_t clc_len;
};

/* Into out (size bytes): the datagram's length, or -EINVAL for a message that would not decode. */
int soft_peer_msg_encode(const struct soft_peer_msg *m, uint8_t *out, size_t size);
/* 0, or -EBADMSG for anything but one well-formed message of this version. */
int soft_peer_msg_decode(const uint8_t *buf, size_t len, struct soft_peer_msg *m);

#endif
