/*
 * CLC header, trailer and DECLINE (clc.h).  Header, offsets in bytes: 0
 * eyecatcher, 4 type, 5 length (16 bits), 7 version in bits 7-4, typev2 in
 * bits 3-2, typev1 in bits 1-0.  The last 4 bytes of a message repeat an
 * eyecatcher.  DECLINE: 8 system id, 16 peer diagnosis (32 bits), 20 OS
 * type in bits 7-4, 21 three reserved bytes, then in version 2 four more
 * diagnosis codes at 24; 28 bytes (version 1) or 44 in all.
 */
#include "clc_int.h"

#include <errno.h>

const uint8_t clc_eye_smcr[4] = { 0xe2, 0xd4, 0xc3, 0xd9 };
const uint8_t clc_eye_smcd[4] = { 0xe2, 0xd4, 0xc3, 0xc4 };

static bool eye_ok(const uint8_t *p)
{
	return !memcmp(p, clc_eye_smcr, 4) || !memcmp(p, clc_eye_smcd, 4);
}

/* The lengths a message of h's type, version and typev1 may have (smc_clc_msg_hdr_valid). */
static bool length_ok(const struct clc_hdr *h)
{
	bool v1 = h->version == CLC_V1;
	bool r = h->typev1 == CLC_SMC_R;

	switch (h->type) {
	case CLC_PROPOSAL:
		/* the exact length needs the body: clc_proposal_decode */
		if (v1)
			return h->typev1 != CLC_SMC_N && h->length >= CLC_PROPOSAL_MIN_V1 &&
			       h->length <= CLC_PROPOSAL_MAX_V1;
		return h->length >= CLC_PROPOSAL_MIN_V2 && h->length <= CLC_PROPOSAL_MAX;
	case CLC_ACCEPT:
	case CLC_CONFIRM:
		if (h->typev1 != CLC_SMC_R && h->typev1 != CLC_SMC_D)
			return false;
		if (v1)
			return h->length == (r ? CLC_SMCR_ACCEPT_LEN_V1 : CLC_SMCD_ACCEPT_LEN_V1);
		return h->length >= (r ? CLC_SMCR_ACCEPT_LEN_V2 : CLC_SMCD_ACCEPT_LEN_V2);
	case CLC_DECLINE:
		if (h->typev1 != CLC_SMC_R && h->typev1 != CLC_SMC_D)
			return false;
		return h->length == (v1 ? CLC_DECLINE_LEN_V1 : CLC_DECLINE_LEN_V2);
	}
	return false;
}

int clc_hdr_peek(const uint8_t *buf, size_t len, struct clc_hdr *h)
{
	memset(h, 0, sizeof(*h));
	if (len < CLC_HDR_LEN)
		return -EMSGSIZE;
	if (!eye_ok(buf))
		return -EPROTO;
	h->smcd_eye = !memcmp(buf, clc_eye_smcd, 4);
	h->type = buf[4];
	h->length = wire_get16(buf + 5);
	h->version = buf[7] >> 4;
	h->typev2 = (buf[7] >> 2) & 3;
	h->typev1 = buf[7] & 3;
	if (h->version < CLC_V1 || !length_ok(h))
		return -EPROTO;
	return 0;
}

int clc_frame(const uint8_t *buf, size_t len, struct clc_hdr *h)
{
	int rc = clc_hdr_peek(buf, len, h);

	if (rc)
		return rc;
	if (len < h->length)
		return -EMSGSIZE;
	if (h->type != CLC_DECLINE && !eye_ok(buf + h->length - CLC_TRL_LEN))
		return -EPROTO;
	return 0;
}

void clc_put_frame(uint8_t *buf, size_t len, const struct clc_hdr *h)
{
	const uint8_t *eye = h->smcd_eye ? clc_eye_smcd : clc_eye_smcr;

	memcpy(buf, eye, 4);
	buf[4] = h->type;
	wire_put16(buf + 5, (uint16_t)len);
	buf[7] = (uint8_t)(h->version << 4 | (h->typev2 & 3) << 2 | (h->typev1 & 3));
	memcpy(buf + len - CLC_TRL_LEN, eye, 4);
}

int clc_decline_encode(const struct clc_decline *d, uint8_t *buf, size_t size)
{
	struct clc_hdr h = {
		.type = CLC_DECLINE, .version = d->version, .typev1 = CLC_SMC_R,
		.typev2 = d->out_of_sync ? CLC_OUT_OF_SYNC : 0,
	};
	size_t len = d->version == CLC_V1 ? CLC_DECLINE_LEN_V1 : CLC_DECLINE_LEN_V2;

	if (d->version < CLC_V1 || d->version > 15 || d->os_type > 15)
		return -EINVAL;
	if (size < len)
		return -ENOSPC;
	memset(buf, 0, len);
	clc_put_frame(buf, len, &h);
	memcpy(buf + 8, d->system_id, CLC_SYSTEMID_LEN);
	wire_put32(buf + 16, d->peer_diagnosis);
	buf[20] = (uint8_t)(d->os_type << 4);
	if (d->version != CLC_V1)
		for (int i = 0; i < CLC_DECL_DIAG_V2; i++)
			wire_put32(buf + 24 + 4 * i, d->diag_v2[i]);
	return (int)len;
}

int clc_decline_decode(const uint8_t *buf, size_t len, struct clc_decline *d)
{
	struct clc_hdr h;
	int rc = clc_frame(buf, len, &h);

	memset(d, 0, sizeof(*d));
	if (rc)
		return rc;
	if (h.type != CLC_DECLINE)
		return -EPROTO;
	d->version = h.version;
	d->out_of_sync = h.typev2 & CLC_OUT_OF_SYNC;
	memcpy(d->system_id, buf + 8, CLC_SYSTEMID_LEN);
	d->peer_diagnosis = wire_get32(buf + 16);
	d->os_type = buf[20] >> 4;
	if (h.version != CLC_V1)
		for (int i = 0; i < CLC_DECL_DIAG_V2; i++)
			d->diag_v2[i] = wire_get32(buf + 24 + 4 * i);
	return h.length;
}
