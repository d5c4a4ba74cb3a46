/*
 * The message that rebuilds a link group's only link (doc/soft-roce.md
 * section 5, "The only link"), from one end's library to the other's
 * through the daemons, who do not read it: the sender's new queue pair.
 * SMCR_REBUILD_LEN bytes, big-endian: 0 "RB", 2 version 1, 3 flags (bit 0:
 * the answer to the peer's), 4 queue pair number, 8 packet sequence
 * number (24 bits each), 12 the RoCE v2 GID, 28 path MTU (IB enum, 1 to
 * 5), 29 the link number the server gives the new link (0 from the
 * client), 30 two zero bytes.
 */
#ifndef WIRE_SMCR_REBUILD_H
#define WIRE_SMCR_REBUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SMCR_REBUILD_LEN 32

struct smcr_rebuild_wire {
	uint32_t qpn, psn;
	uint8_t gid[16];
	uint8_t mtu;
	uint8_t num;
	bool answer;
};

/* Into out: SMCR_REBUILD_LEN, or -EINVAL for a message that would not decode. */
int smcr_rebuild_encode(const struct smcr_rebuild_wire *m, uint8_t out[SMCR_REBUILD_LEN]);
/* 0, or -EBADMSG for anything but one well-formed message of this version. */
int smcr_rebuild_decode(const uint8_t *buf, size_t len, struct smcr_rebuild_wire *m);

#endif
