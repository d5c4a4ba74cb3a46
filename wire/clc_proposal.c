/*
 * CLC PROPOSAL (clc.h).  Offsets in bytes: 8 system id, 16 GID, 32 MAC, 38
 * iparea_offset (from 40 to the prefix area); the SMC-D area at 40: ISM GID
 * (64 bits), 48 CHID, 50 v2_ext_offset (from 52 to the v2 extension), 52
 * vendor bytes and reserved to 80.  Prefix area: IPv4 subnet, prefix length,
 * two reserved bytes, IPv6 count, then 17 bytes per IPv6 prefix (16 of
 * address, 1 of length).  v2 extension: EID count, ISM GID count, a reserved
 * byte, flags (release in bits 7-4, SEID in bit 0), two reserved bytes,
 * smcd_v2_ext_offset at +6 (from +8), RoCEv2 GID at +8, max_conns +24,
 * max_links +25, feature mask +26, reserved to +40, then 32 bytes per EID.
 * SMC-Dv2 extension: system EID, 16 reserved bytes, 10 bytes per GID/CHID.
 */
#include "clc_int.h"

#include <errno.h>

#define SMCD_AREA      40   /* where the SMC-D area starts, iparea_offset's origin */
#define SMCD_AREA_LEN  40
#define V2_ORIGIN      52   /* v2_ext_offset's origin */
#define V2_EXT_LEN     40
#define V2_MAX_OFFSET  172  /* Linux: the v2 extension within its 652-byte buffer */
#define SMCD_EXT_LEN   48
#define SMCD_MAX_OFFSET 288
#define PREFIX_LEN     8
#define V6_LEN         17
#define GIDCHID_LEN    10

/* The bytes of the prefix area with n IPv6 prefixes. */
static size_t prefix_len(unsigned n)
{
	return PREFIX_LEN + V6_LEN * n;
}

/* The length a version >= 2 proposal must have (smc_clc_msg_prop_valid). */
static size_t v2_length(uint8_t typev1, uint8_t typev2, unsigned n, unsigned e, unsigned g)
{
	size_t len = SMCD_AREA + SMCD_AREA_LEN + CLC_TRL_LEN;

	if (typev1 != CLC_SMC_N)
		len += prefix_len(n);
	if (typev2 != CLC_SMC_N)
		len += V2_EXT_LEN + (size_t)CLC_EID_LEN * e;
	if (clc_offers_d(typev2))
		len += SMCD_EXT_LEN + (size_t)GIDCHID_LEN * g;
	return len;
}

static bool proposal_ok(const struct clc_proposal *p)
{
	if (p->version < CLC_V1 || p->version > 15 || p->typev1 > 3 || p->typev2 > 3)
		return false;
	if (p->version == CLC_V1 && p->typev1 == CLC_SMC_N)
		return false;
	return p->ipv6_cnt <= CLC_MAX_V6_PREFIX && p->eid_cnt <= CLC_MAX_UEID &&
	       p->ism_gid_cnt <= CLC_MAX_ISM_GIDS && p->release <= 15;
}

static void put_prefix(uint8_t *q, const struct clc_proposal *p)
{
	memcpy(q, p->ipv4_subnet, 4);
	q[4] = p->ipv4_prefix_len;
	q[7] = p->ipv6_cnt;
	for (unsigned i = 0; i < p->ipv6_cnt; i++) {
		memcpy(q + PREFIX_LEN + V6_LEN * i, p->ipv6[i].prefix, 16);
		q[PREFIX_LEN + V6_LEN * i + 16] = p->ipv6[i].len;
	}
}

/* The v2 extension at q, the SMC-Dv2 extension after it when typev2 offers D. */
static void put_v2(uint8_t *q, const struct clc_proposal *p)
{
	bool d = clc_offers_d(p->typev2);
	uint8_t *x = q + V2_EXT_LEN + CLC_EID_LEN * p->eid_cnt;

	q[0] = p->eid_cnt;
	q[1] = d ? p->ism_gid_cnt : 0;
	q[3] = (uint8_t)(p->release << 4 | (p->seid ? 1 : 0));
	if (d && p->smcd_ext)
		wire_put16(q + 6, (uint16_t)(x - (q + 8)));
	memcpy(q + 8, p->roce_gid, CLC_GID_LEN);
	q[24] = p->max_conns;
	q[25] = p->max_links;
	wire_put16(q + 26, p->feature_mask);
	memcpy(q + V2_EXT_LEN, p->eid, (size_t)CLC_EID_LEN * p->eid_cnt);
	if (!d || !p->smcd_ext)
		return;
	memcpy(x, p->system_eid, CLC_EID_LEN);
	for (unsigned i = 0; i < p->ism_gid_cnt; i++) {
		wire_put64(x + SMCD_EXT_LEN + GIDCHID_LEN * i, p->ism_gids[i].gid);
		wire_put16(x + SMCD_EXT_LEN + GIDCHID_LEN * i + 8, p->ism_gids[i].chid);
	}
}

int clc_proposal_encode(const struct clc_proposal *p, uint8_t *buf, size_t size)
{
	struct clc_hdr h = { .type = CLC_PROPOSAL, .version = p->version,
			     .typev1 = p->typev1, .typev2 = p->typev2 };
	bool v1 = p->version == CLC_V1;
	bool smcd_area = !v1 || clc_offers_d(p->typev1);
	uint16_t ipoff;
	size_t len;

	if (!proposal_ok(p))
		return -EINVAL;
	if (v1) {
		ipoff = smcd_area ? SMCD_AREA_LEN : 0;
		len = SMCD_AREA + ipoff + prefix_len(p->ipv6_cnt) + CLC_TRL_LEN;
	} else {
		ipoff = p->typev1 != CLC_SMC_N ? SMCD_AREA_LEN : 0;
		len = v2_length(p->typev1, p->typev2, p->ipv6_cnt, p->eid_cnt, p->ism_gid_cnt);
	}
	if (size < len)
		return -ENOSPC;
	memset(buf, 0, len);
	clc_put_frame(buf, len, &h);
	memcpy(buf + 8, p->system_id, CLC_SYSTEMID_LEN);
	memcpy(buf + 16, p->gid, CLC_GID_LEN);
	memcpy(buf + 32, p->mac, CLC_MAC_LEN);
	wire_put16(buf + 38, ipoff);
	if (smcd_area && clc_offers_d(p->typev1)) {
		wire_put64(buf + SMCD_AREA, p->ism_gid);
		wire_put16(buf + SMCD_AREA + 8, p->ism_chid);
	}
	if (p->typev1 != CLC_SMC_N)
		put_prefix(buf + SMCD_AREA + ipoff, p);
	if (!v1 && p->typev2 != CLC_SMC_N) {
		size_t v2 = SMCD_AREA + SMCD_AREA_LEN;

		if (p->typev1 != CLC_SMC_N)
			v2 += prefix_len(p->ipv6_cnt);
		wire_put16(buf + 50, (uint16_t)(v2 - V2_ORIGIN));
		put_v2(buf + v2, p);
	}
	return (int)len;
}

/* The prefix area at off, its n IPv6 prefixes within end. */
static int get_prefix(const uint8_t *buf, size_t off, size_t end, struct clc_proposal *p)
{
	const uint8_t *q = buf + off;

	if (off + PREFIX_LEN > end || q[7] > CLC_MAX_V6_PREFIX ||
	    off + prefix_len(q[7]) > end)
		return -EPROTO;
	memcpy(p->ipv4_subnet, q, 4);
	p->ipv4_prefix_len = q[4];
	p->ipv6_cnt = q[7];
	for (unsigned i = 0; i < p->ipv6_cnt; i++) {
		memcpy(p->ipv6[i].prefix, q + PREFIX_LEN + V6_LEN * i, 16);
		p->ipv6[i].len = q[PREFIX_LEN + V6_LEN * i + 16];
	}
	return 0;
}

/*
 * The SMC-Dv2 extension, found from the v2 extension at v2: Linux takes an
 * offset of 0 or past its buffer as no extension (a decline, not an error).
 */
static int get_smcd_ext(const uint8_t *buf, size_t v2, size_t end, struct clc_proposal *p)
{
	uint16_t soff = wire_get16(buf + v2 + 6);
	size_t x = v2 + 8 + soff;

	if (!soff || soff > SMCD_MAX_OFFSET)
		return 0;
	if (x + SMCD_EXT_LEN + (size_t)GIDCHID_LEN * p->ism_gid_cnt > end)
		return -EPROTO;
	p->smcd_ext = true;
	memcpy(p->system_eid, buf + x, CLC_EID_LEN);
	for (unsigned i = 0; i < p->ism_gid_cnt; i++) {
		p->ism_gids[i].gid = wire_get64(buf + x + SMCD_EXT_LEN + GIDCHID_LEN * i);
		p->ism_gids[i].chid = wire_get16(buf + x + SMCD_EXT_LEN + GIDCHID_LEN * i + 8);
	}
	return 0;
}

/* The v2 extension (typev2 != none) and what follows it; the length was checked. */
static int get_v2(const uint8_t *buf, size_t end, struct clc_proposal *p)
{
	uint16_t v2off = wire_get16(buf + 50);
	size_t v2 = V2_ORIGIN + v2off;
	const uint8_t *q = buf + v2;

	p->eid_cnt = q[0];
	p->seid = q[3] & 1;
	p->release = q[3] >> 4;
	memcpy(p->roce_gid, q + 8, CLC_GID_LEN);
	p->max_conns = q[24];
	p->max_links = q[25];
	p->feature_mask = wire_get16(q + 26);
	if (v2 + V2_EXT_LEN + (size_t)CLC_EID_LEN * p->eid_cnt > end)
		return -EPROTO;
	memcpy(p->eid, q + V2_EXT_LEN, (size_t)CLC_EID_LEN * p->eid_cnt);
	if (!clc_offers_d(p->typev2))
		return 0;
	p->ism_gid_cnt = q[1];
	return get_smcd_ext(buf, v2, end, p);
}

/*
 * Where the v2 extension's fixed part starts, with its counts in range; 0
 * when there is none to be found (Linux: smc_get_clc_v2_ext() gives NULL).
 */
static size_t find_v2(const uint8_t *buf, size_t end, uint16_t ipoff, const struct clc_proposal *p)
{
	uint16_t v2off = wire_get16(buf + 50);
	size_t v2 = V2_ORIGIN + v2off;

	if (clc_offers_d(p->typev1) && ipoff != SMCD_AREA_LEN)
		return 0;
	if (!v2off || v2off > V2_MAX_OFFSET || v2 + V2_EXT_LEN > end)
		return 0;
	if (buf[v2] > CLC_MAX_UEID || (clc_offers_d(p->typev2) && buf[v2 + 1] > CLC_MAX_ISM_GIDS))
		return 0;
	return v2;
}

/* The length check of a proposal, before any variable part is read. */
static int check_length(const uint8_t *buf, uint16_t len, uint16_t ipoff, const struct clc_proposal *p)
{
	size_t end = (size_t)len - CLC_TRL_LEN;
	size_t pfx = SMCD_AREA + ipoff;
	/* Linux reads the count even when no prefix is offered; past the message its buffer is 0 */
	uint8_t n = pfx + 7 < len ? buf[pfx + 7] : 0;
	size_t v2;

	if (ipoff > SMCD_AREA_LEN || n > CLC_MAX_V6_PREFIX)
		return -EPROTO;
	if (p->version == CLC_V1)
		return len == pfx + prefix_len(n) + CLC_TRL_LEN ? 0 : -EPROTO;
	if (p->typev2 == CLC_SMC_N)
		return len == v2_length(p->typev1, p->typev2, n, 0, 0) ? 0 : -EPROTO;
	v2 = find_v2(buf, end, ipoff, p);
	if (!v2)
		return -EPROTO;
	return len == v2_length(p->typev1, p->typev2, n, buf[v2], buf[v2 + 1]) ? 0 : -EPROTO;
}

int clc_proposal_decode(const uint8_t *buf, size_t len, struct clc_proposal *p)
{
	struct clc_hdr h;
	int rc = clc_frame(buf, len, &h);
	uint16_t ipoff;
	size_t end;

	memset(p, 0, sizeof(*p));
	if (rc)
		return rc;
	if (h.type != CLC_PROPOSAL)
		return -EPROTO;
	p->version = h.version;
	p->typev1 = h.typev1;
	p->typev2 = h.typev2;
	ipoff = wire_get16(buf + 38);
	end = (size_t)h.length - CLC_TRL_LEN;
	rc = check_length(buf, h.length, ipoff, p);
	if (rc)
		goto bad;
	memcpy(p->system_id, buf + 8, CLC_SYSTEMID_LEN);
	memcpy(p->gid, buf + 16, CLC_GID_LEN);
	memcpy(p->mac, buf + 32, CLC_MAC_LEN);
	/* Linux uses the ISM GID of a v1 offer of D only with the SMC-D area where it belongs */
	if (clc_offers_d(h.typev1) && ipoff == SMCD_AREA_LEN) {
		p->ism_gid = wire_get64(buf + SMCD_AREA);
		p->ism_chid = wire_get16(buf + SMCD_AREA + 8);
	}
	if (h.typev1 != CLC_SMC_N && (rc = get_prefix(buf, SMCD_AREA + ipoff, end, p)))
		goto bad;
	if (h.version != CLC_V1 && h.typev2 != CLC_SMC_N && (rc = get_v2(buf, end, p)))
		goto bad;
	return h.length;
bad:
	memset(p, 0, sizeof(*p));
	return rc;
}
