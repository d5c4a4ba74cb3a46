/*
 * Build netlink messages byte by byte, as the kernel lays them out, to feed
 * the parsers: header, genl header, attributes (4-byte aligned), nests.
 */
#ifndef MSGBUILD_H
#define MSGBUILD_H

#include <stddef.h>
#include <stdint.h>

#include "nl.h"

struct mb {
	unsigned char buf[16384];
	size_t len;          /* bytes of the current message */
	size_t nest[8];      /* offsets of open nests */
	int depth;
};

/* Start a message: nlmsghdr with type and flags (seq 0). */
void mb_start(struct mb *m, uint16_t type, uint16_t flags);
/* genlmsghdr: cmd, version 1. */
void mb_genl(struct mb *m, uint8_t cmd);
void mb_raw(struct mb *m, const void *p, size_t len);        /* unaligned bytes */
void mb_attr(struct mb *m, uint16_t type, const void *p, size_t len);
void mb_u8(struct mb *m, uint16_t type, uint8_t v);
void mb_u16(struct mb *m, uint16_t type, uint16_t v);
void mb_u32(struct mb *m, uint16_t type, uint32_t v);
void mb_u64(struct mb *m, uint16_t type, uint64_t v);
void mb_str(struct mb *m, uint16_t type, const char *s);     /* with NUL */
void mb_nest(struct mb *m, uint16_t type);
void mb_end(struct mb *m);                                  /* close nest */
/* Finish the message (sets nlmsg_len) and append it to rep. */
void mb_finish(struct mb *m, struct smc_reply *rep);

#endif
