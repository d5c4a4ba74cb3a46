/*
 * CLC ACCEPT and CONFIRM (clc.h); both have one layout.  SMC-R, offsets in
 * bytes: 8 system id, 16 GID, 32 MAC, 38 QP number (24 bits), 41 RMB rkey,
 * 45 RMBE index, 46 alert token, 50 RMBE size in bits 7-4 and QP MTU in bits
 * 3-0, 51 reserved, 52 RMB address (64 bits), 60 reserved, 61 initial PSN
 * (24 bits); version 2: 64 EID, 96 reserved, 104 the first-contact
 * extension, and in a first-contact CONFIRM the GID list after it (count, 3
 * reserved bytes, 16 bytes per GID).  SMC-D: 8 ISM GID, 16 DMB token, 24
 * DMBE index, 25 DMBE size in bits 7-4, 26 reserved, 28 link id, then 12
 * reserved bytes (version 1) or 32 CHID, 34 EID, 66 extended GID, 74 the
 * first-contact extension.  First-contact extension: v2_direct in bit 7,
 * OS type and release in the nibbles of +1, 2 reserved bytes, hostname at
 * +4; from release 1 on, +36 max_conns, +37 max_links, +38 feature mask,
 * +40 vendor options, 8 reserved bytes to +52.
 */
#include "clc_int.h"

#include <errno.h>

#define R_FCE  104
#define D_FCE  74
#define GIDLIST_HDR 4

static bool fce_ok(const struct clc_fce *f)
{
	return f->os_type <= 15 && f->release <= 15;
}

/* The extension at q: 36 bytes, or 52 when the release is 1 or more. */
static size_t fce_len(const struct clc_fce *f)
{
	return f->release ? CLC_FCE_LEN : CLC_FCE_LEN_R0;
}

/* smcr: max_conns and max_links are SMC-R's; SMC-D keeps those bytes reserved. */
static void put_fce(uint8_t *q, const struct clc_fce *f, bool smcr)
{
	q[0] = f->v2_direct ? 0x80 : 0;
	q[1] = (uint8_t)(f->os_type << 4 | f->release);
	memcpy(q + 4, f->hostname, CLC_HOSTNAME_LEN);
	if (!f->release)
		return;
	if (smcr) {
		q[36] = f->max_conns;
		q[37] = f->max_links;
	}
	wire_put16(q + 38, f->feature_mask);
	wire_put32(q + 40, f->vendor_opts);
}

/* The extension at off, within end: its release tells its length. */
static int get_fce(const uint8_t *buf, size_t off, size_t end, struct clc_fce *f, bool smcr)
{
	const uint8_t *q = buf + off;

	if (off + CLC_FCE_LEN_R0 > end)
		return -EPROTO;
	f->v2_direct = q[0] >> 7;
	f->os_type = q[1] >> 4;
	f->release = q[1] & 0xf;
	memcpy(f->hostname, q + 4, CLC_HOSTNAME_LEN);
	if (!f->release)
		return 0;
	if (off + CLC_FCE_LEN > end)
		return -EPROTO;
	if (smcr) {
		f->max_conns = q[36];
		f->max_links = q[37];
	}
	f->feature_mask = wire_get16(q + 38);
	f->vendor_opts = wire_get32(q + 40);
	return 0;
}

static bool smcr_ok(const struct clc_smcr_accept *a)
{
	if (a->type != CLC_ACCEPT && a->type != CLC_CONFIRM)
		return false;
	if (a->version < CLC_V1 || a->version > 15 || a->qpn > 0xffffff || a->psn > 0xffffff)
		return false;
	return a->rmbe_size <= 15 && a->qp_mtu <= 15 && fce_ok(&a->fce) &&
	       a->gid_cnt <= CLC_MAX_GIDLIST;
}

static size_t smcr_len(const struct clc_smcr_accept *a)
{
	if (a->version == CLC_V1)
		return CLC_SMCR_ACCEPT_LEN_V1;
	if (!a->first_contact)
		return CLC_SMCR_ACCEPT_LEN_V2;
	if (a->type == CLC_ACCEPT)
		return CLC_SMCR_ACCEPT_FC_LEN;
	return CLC_SMCR_CONFIRM_FC_LEN(a->gid_cnt);
}

int clc_smcr_accept_encode(const struct clc_smcr_accept *a, uint8_t *buf, size_t size)
{
	struct clc_hdr h = { .type = a->type, .version = a->version, .typev1 = CLC_SMC_R,
			     .typev2 = a->first_contact ? CLC_FIRST_CONTACT : 0 };
	size_t len;

	if (!smcr_ok(a))
		return -EINVAL;
	len = smcr_len(a);
	if (size < len)
		return -ENOSPC;
	memset(buf, 0, len);
	clc_put_frame(buf, len, &h);
	memcpy(buf + 8, a->system_id, CLC_SYSTEMID_LEN);
	memcpy(buf + 16, a->gid, CLC_GID_LEN);
	memcpy(buf + 32, a->mac, CLC_MAC_LEN);
	wire_put24(buf + 38, a->qpn);
	wire_put32(buf + 41, a->rmb_rkey);
	buf[45] = a->rmbe_idx;
	wire_put32(buf + 46, a->rmbe_alert_token);
	buf[50] = (uint8_t)(a->rmbe_size << 4 | a->qp_mtu);
	wire_put64(buf + 52, a->rmb_addr);
	wire_put24(buf + 61, a->psn);
	if (a->version == CLC_V1)
		return (int)len;
	memcpy(buf + 64, a->eid, CLC_EID_LEN);
	if (!a->first_contact)
		return (int)len;
	/* SMC-R always sends all 52 bytes, the release 1 part 0 at release 0 */
	put_fce(buf + R_FCE, &a->fce, true);
	if (a->type == CLC_CONFIRM) {
		buf[R_FCE + CLC_FCE_LEN] = a->gid_cnt;
		memcpy(buf + R_FCE + CLC_FCE_LEN + GIDLIST_HDR, a->gids,
		       (size_t)CLC_GID_LEN * a->gid_cnt);
	}
	return (int)len;
}

/* What follows the SMC-R base of a version 2 message, within end. */
static int smcr_get_v2(const uint8_t *buf, size_t end, struct clc_smcr_accept *a)
{
	size_t gl = R_FCE + CLC_FCE_LEN;
	int rc;

	memcpy(a->eid, buf + 64, CLC_EID_LEN);
	if (!a->first_contact)
		return 0;
	if ((rc = get_fce(buf, R_FCE, end, &a->fce, true)))
		return rc;
	if (a->type != CLC_CONFIRM)
		return 0;
	/* release 0 peers put 16 reserved bytes first: the count is at the same place */
	if (gl + GIDLIST_HDR > end || buf[gl] > CLC_MAX_GIDLIST ||
	    gl + GIDLIST_HDR + (size_t)CLC_GID_LEN * buf[gl] > end)
		return -EPROTO;
	a->gid_cnt = buf[gl];
	memcpy(a->gids, buf + gl + GIDLIST_HDR, (size_t)CLC_GID_LEN * a->gid_cnt);
	return 0;
}

int clc_smcr_accept_decode(const uint8_t *buf, size_t len, struct clc_smcr_accept *a)
{
	struct clc_hdr h;
	int rc = clc_frame(buf, len, &h);

	memset(a, 0, sizeof(*a));
	if (rc)
		return rc;
	if ((h.type != CLC_ACCEPT && h.type != CLC_CONFIRM) || h.typev1 != CLC_SMC_R)
		return -EPROTO;
	a->type = h.type;
	a->version = h.version;
	a->first_contact = h.typev2 & CLC_FIRST_CONTACT;
	memcpy(a->system_id, buf + 8, CLC_SYSTEMID_LEN);
	memcpy(a->gid, buf + 16, CLC_GID_LEN);
	memcpy(a->mac, buf + 32, CLC_MAC_LEN);
	a->qpn = wire_get24(buf + 38);
	a->rmb_rkey = wire_get32(buf + 41);
	a->rmbe_idx = buf[45];
	a->rmbe_alert_token = wire_get32(buf + 46);
	a->rmbe_size = buf[50] >> 4;
	a->qp_mtu = buf[50] & 0xf;
	a->rmb_addr = wire_get64(buf + 52);
	a->psn = wire_get24(buf + 61);
	if (h.version != CLC_V1 && (rc = smcr_get_v2(buf, h.length - CLC_TRL_LEN, a))) {
		memset(a, 0, sizeof(*a));
		return rc;
	}
	return h.length;
}

static bool smcd_ok(const struct clc_smcd_accept *a)
{
	if (a->type != CLC_ACCEPT && a->type != CLC_CONFIRM)
		return false;
	return a->version >= CLC_V1 && a->version <= 15 && a->dmbe_size <= 15 && fce_ok(&a->fce);
}

int clc_smcd_accept_encode(const struct clc_smcd_accept *a, uint8_t *buf, size_t size)
{
	struct clc_hdr h = { .type = a->type, .version = a->version, .typev1 = CLC_SMC_D,
			     .typev2 = a->first_contact ? CLC_FIRST_CONTACT : 0, .smcd_eye = true };
	size_t len = CLC_SMCD_ACCEPT_LEN_V1;

	if (!smcd_ok(a))
		return -EINVAL;
	if (a->version != CLC_V1)
		len = CLC_SMCD_ACCEPT_LEN_V2 + (a->first_contact ? fce_len(&a->fce) : 0);
	if (size < len)
		return -ENOSPC;
	memset(buf, 0, len);
	clc_put_frame(buf, len, &h);
	wire_put64(buf + 8, a->gid);
	wire_put64(buf + 16, a->token);
	buf[24] = a->dmbe_idx;
	buf[25] = (uint8_t)(a->dmbe_size << 4);
	wire_put32(buf + 28, a->linkid);
	if (a->version == CLC_V1)
		return (int)len;
	wire_put16(buf + 32, a->chid);
	memcpy(buf + 34, a->eid, CLC_EID_LEN);
	wire_put64(buf + 66, a->gid_ext);
	if (a->first_contact)
		put_fce(buf + D_FCE, &a->fce, false);
	return (int)len;
}

int clc_smcd_accept_decode(const uint8_t *buf, size_t len, struct clc_smcd_accept *a)
{
	struct clc_hdr h;
	int rc = clc_frame(buf, len, &h);

	memset(a, 0, sizeof(*a));
	if (rc)
		return rc;
	if ((h.type != CLC_ACCEPT && h.type != CLC_CONFIRM) || h.typev1 != CLC_SMC_D)
		return -EPROTO;
	a->type = h.type;
	a->version = h.version;
	a->first_contact = h.typev2 & CLC_FIRST_CONTACT;
	a->gid = wire_get64(buf + 8);
	a->token = wire_get64(buf + 16);
	a->dmbe_idx = buf[24];
	a->dmbe_size = buf[25] >> 4;
	a->linkid = wire_get32(buf + 28);
	if (h.version == CLC_V1)
		return h.length;
	a->chid = wire_get16(buf + 32);
	memcpy(a->eid, buf + 34, CLC_EID_LEN);
	a->gid_ext = wire_get64(buf + 66);
	if (a->first_contact &&
	    (rc = get_fce(buf, D_FCE, h.length - CLC_TRL_LEN, &a->fce, false))) {
		memset(a, 0, sizeof(*a));
		return rc;
	}
	return h.length;
}
