/*
 * What the CLC codec's files share (clc.c, clc_proposal.c, clc_accept.c):
 * big-endian byte access and the header and trailer.  Not an interface.
 */
#ifndef SOFT_CLC_INT_H
#define SOFT_CLC_INT_H

#include "clc.h"

#include <string.h>

static inline void clc_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void clc_put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	clc_put16(p + 1, (uint16_t)v);
}

static inline void clc_put32(uint8_t *p, uint32_t v)
{
	clc_put16(p, (uint16_t)(v >> 16));
	clc_put16(p + 2, (uint16_t)v);
}

static inline void clc_put64(uint8_t *p, uint64_t v)
{
	clc_put32(p, (uint32_t)(v >> 32));
	clc_put32(p + 4, (uint32_t)v);
}

static inline uint16_t clc_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t clc_get24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | clc_get16(p + 1);
}

static inline uint32_t clc_get32(const uint8_t *p)
{
	return (uint32_t)clc_get16(p) << 16 | clc_get16(p + 2);
}

static inline uint64_t clc_get64(const uint8_t *p)
{
	return (uint64_t)clc_get32(p) << 32 | clc_get32(p + 4);
}

/* SMC-R or SMC-D offered: the 2-bit types B include both. */
static inline bool clc_offers_r(uint8_t t)
{
	return t == CLC_SMC_R || t == CLC_SMC_B;
}

static inline bool clc_offers_d(uint8_t t)
{
	return t == CLC_SMC_D || t == CLC_SMC_B;
}

/* Header and trailer of a len-byte message of buf (size checked by the caller). */
void clc_put_frame(uint8_t *buf, size_t len, const struct clc_hdr *h);
/*
 * The header (clc_hdr_peek) of a message whose h->length bytes are all within
 * len, with a trailer eyecatcher unless it is a DECLINE: 0, or -EMSGSIZE /
 * -EPROTO.
 */
int clc_frame(const uint8_t *buf, size_t len, struct clc_hdr *h);

#endif
