/*
 * What the CLC codec's files share (clc.c, clc_proposal.c, clc_accept.c):
 * the header and trailer (big-endian byte access is wire_bytes.h).  Not an
 * interface.
 */
#ifndef SOFT_CLC_INT_H
#define SOFT_CLC_INT_H

#include "clc.h"
#include "wire_bytes.h"

#include <string.h>

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
