/*
 * Fuzz target for the CLC codec (wire/clc.h): the input as one message from
 * the TCP stream, given to every decoder (in a buffer of exactly its size,
 * so ASan sees any read past it).  Whatever decodes is encoded again and
 * must decode to the same struct, and encode to the same bytes again.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/clc.h"

void fuzz_clc(const uint8_t *data, size_t size);

#define CLC_FUZZ_MAX 1024

/* decode(encode(x)) == x and encode(decode(encode(x))) == encode(x), or abort. */
#define FUZZ_AGAIN(kind, type, x)                                                  \
	do {                                                                      \
		uint8_t b1[CLC_FUZZ_MAX], b2[CLC_FUZZ_MAX];                       \
		type y;                                                           \
		int n1 = clc_##kind##_encode(x, b1, sizeof(b1));                  \
		if (n1 < 0 || clc_##kind##_decode(b1, (size_t)n1, &y) != n1 ||    \
		    memcmp(&y, x, sizeof(y)) ||                                   \
		    clc_##kind##_encode(&y, b2, sizeof(b2)) != n1 ||              \
		    memcmp(b1, b2, (size_t)n1))                                   \
			abort();                                                  \
	} while (0)

void fuzz_clc(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);
	struct clc_hdr h;
	struct clc_proposal p;
	struct clc_smcr_accept r;
	struct clc_smcd_accept d;
	struct clc_decline dc;
	int decoded = 0;

	if (!buf)
		return;
	memcpy(buf, data, size);
	if (clc_proposal_decode(buf, size, &p) > 0) {
		FUZZ_AGAIN(proposal, struct clc_proposal, &p);
		decoded++;
	}
	if (clc_smcr_accept_decode(buf, size, &r) > 0) {
		FUZZ_AGAIN(smcr_accept, struct clc_smcr_accept, &r);
		decoded++;
	}
	if (clc_smcd_accept_decode(buf, size, &d) > 0) {
		FUZZ_AGAIN(smcd_accept, struct clc_smcd_accept, &d);
		decoded++;
	}
	if (clc_decline_decode(buf, size, &dc) > 0) {
		FUZZ_AGAIN(decline, struct clc_decline, &dc);
		decoded++;
	}
	/* one message is one kind, and the header said so */
	if (decoded > 1 || (decoded && (clc_hdr_peek(buf, size, &h) || h.length > size)))
		abort();
	free(buf);
}
