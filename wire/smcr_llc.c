/*
 * SMC-R LLC messages (smcr_llc.h).  One pair of functions per layout, picked
 * by type from one table; offsets are Linux's (net/smc/smc_llc.c), summed up
 * in doc/smcr-wire.md.
 */
#include "smcr_llc.h"

#include <errno.h>
#include <string.h>

#include "wire_bytes.h"

#define U24_MAX 0xffffffu

enum { HDR_TYPE = 0, HDR_LEN = 1, HDR_REJ = 2, HDR_FLAGS = 3, BODY = 4 };

/* ADD_LINK v2 extension, from byte 44 */
enum { EXT = 44, EXT_DIRECT = 44, EXT_GID = 46, EXT_NUM = 70, EXT_RT = 72, RT_LEN = 16 };
#define EXT_V2_DIRECT 0x80u

/* REQ_ADD_LINK */
enum { REQ_CNT = 24, REQ_GID = 28 };
/* CONFIRM_RKEY(_CONT): 13-byte rtokens */
enum { RTOK_LEN = 13 };
/* DELETE_RKEY */
enum { DEL_RKEY = 8 };

static uint16_t get16_ho(const uint8_t *p, enum smcr_llc_ho ho)
{
	return ho == SMCR_LLC_HO_BE ? wire_get16(p) : (uint16_t)(p[1] << 8 | p[0]);
}

static void put16_ho(uint8_t *p, uint16_t v, enum smcr_llc_ho ho)
{
	if (ho == SMCR_LLC_HO_BE) {
		wire_put16(p, v);
	} else {
		p[0] = (uint8_t)v;
		p[1] = (uint8_t)(v >> 8);
	}
}

/* Encoding: what one layout needs to know of the header. */
struct enc {
	bool v2;
	enum smcr_llc_ho ho;
	uint8_t *buf;
	size_t size;
};

/* Bytes a layout writes: at least 44, zeroed first.  -EMSGSIZE if they do not fit. */
static int enc_room(const struct enc *e, size_t need)
{
	if (need < SMCR_LLC_LEN)
		need = SMCR_LLC_LEN;
	if (e->size < need)
		return -EMSGSIZE;
	memset(e->buf, 0, need);
	return (int)need;
}

static void get_rt(const uint8_t *p, struct smcr_llc_add_link_rt *rt)
{
	rt->rmb_key = wire_get32(p);
	rt->rmb_key_new = wire_get32(p + 4);
	rt->rmb_vaddr_new = wire_get64(p + 8);
}

static void put_rt(uint8_t *p, const struct smcr_llc_add_link_rt *rt)
{
	wire_put32(p, rt->rmb_key);
	wire_put32(p + 4, rt->rmb_key_new);
	wire_put64(p + 8, rt->rmb_vaddr_new);
}

static void get_rtok(const uint8_t *p, struct smcr_llc_rtoken *rt)
{
	rt->link_id = p[0];
	rt->rmb_key = wire_get32(p + 1);
	rt->rmb_vaddr = wire_get64(p + 5);
}

static void put_rtok(uint8_t *p, const struct smcr_llc_rtoken *rt)
{
	p[0] = rt->link_id;
	wire_put32(p + 1, rt->rmb_key);
	wire_put64(p + 5, rt->rmb_vaddr);
}

/* ---- CONFIRM_LINK: mac 4, gid 10, qp 26, link 29, uid 30, max_links 34, max_conns 35 */

static int dec_confirm_link(const uint8_t *b, size_t len, const struct smcr_llc_hdr *hd,
			    enum smcr_llc_ho ho, struct smcr_llc_msg *m)
{
	struct smcr_llc_confirm_link *c = &m->confirm_link;

	(void)len, (void)hd, (void)ho;
	memcpy(c->sender_mac, b + 4, SMCR_MAC_SIZE);
	memcpy(c->sender_gid, b + 10, SMCR_GID_SIZE);
	c->sender_qp_num = wire_get24(b + 26);
	c->link_num = b[29];
	memcpy(c->link_uid, b + 30, SMCR_LGR_ID_SIZE);
	c->max_links = b[34];
	c->max_conns = b[35];
	return 0;
}

static int enc_confirm_link(const struct smcr_llc_msg *m, const struct enc *e)
{
	const struct smcr_llc_confirm_link *c = &m->confirm_link;
	uint8_t *b = e->buf;
	int n;

	if (c->sender_qp_num > U24_MAX)
		return -EINVAL;
	if ((n = enc_room(e, SMCR_LLC_LEN)) < 0)
		return n;
	memcpy(b + 4, c->sender_mac, SMCR_MAC_SIZE);
	memcpy(b + 10, c->sender_gid, SMCR_GID_SIZE);
	wire_put24(b + 26, c->sender_qp_num);
	b[29] = c->link_num;
	memcpy(b + 30, c->link_uid, SMCR_LGR_ID_SIZE);
	b[34] = c->max_links;
	b[35] = c->max_conns;
	return n;
}

/* ---- ADD_LINK: mac 4, gid 12, qp 28, link 31, mtu 32 (low nibble), psn 33; v2 extension */

static int dec_add_link(const uint8_t *b, size_t len, const struct smcr_llc_hdr *hd,
			enum smcr_llc_ho ho, struct smcr_llc_msg *m)
{
	struct smcr_llc_add_link *a = &m->add_link;

	memcpy(a->sender_mac, b + 4, SMCR_MAC_SIZE);
	memcpy(a->sender_gid, b + 12, SMCR_GID_SIZE);
	a->sender_qp_num = wire_get24(b + 28);
	a->link_num = b[31];
	a->qp_mtu = b[32] & 0x0f;
	a->initial_psn = wire_get24(b + 33);
	if (!hd->version || hd->length <= SMCR_LLC_LEN)
		return 0;
	if (len < EXT_RT)
		return -EMSGSIZE;
	a->has_ext = true;
	a->v2_direct = (b[EXT_DIRECT] & EXT_V2_DIRECT) != 0;
	memcpy(a->client_target_gid, b + EXT_GID, SMCR_GID_SIZE);
	a->num_rkeys = get16_ho(b + EXT_NUM, ho);
	if (a->num_rkeys > SMCR_LLC_RKEYS_V2_MAX)
		return -EPROTO;
	if ((len - EXT_RT) / RT_LEN < a->num_rkeys)
		return -EMSGSIZE;
	for (unsigned i = 0; i < a->num_rkeys; i++)
		get_rt(b + EXT_RT + i * RT_LEN, &a->rt[i]);
	return 0;
}

static int enc_add_link(const struct smcr_llc_msg *m, const struct enc *e)
{
	const struct smcr_llc_add_link *a = &m->add_link;
	uint8_t *b = e->buf;
	size_t need = SMCR_LLC_LEN;
	int n;

	if (a->sender_qp_num > U24_MAX || a->initial_psn > U24_MAX || a->qp_mtu > 0x0f)
		return -EINVAL;
	/* a v2 length above 44 is what tells the receiver of the extension */
	if (e->v2 && m->hd.length && (m->hd.length > SMCR_LLC_LEN) != a->has_ext)
		return -EINVAL;
	if (a->has_ext) {
		if (!e->v2 || a->num_rkeys > SMCR_LLC_RKEYS_V2_MAX)
			return -EINVAL;
		need = EXT_RT + (size_t)a->num_rkeys * RT_LEN;
	}
	if ((n = enc_room(e, need)) < 0)
		return n;
	memcpy(b + 4, a->sender_mac, SMCR_MAC_SIZE);
	memcpy(b + 12, a->sender_gid, SMCR_GID_SIZE);
	wire_put24(b + 28, a->sender_qp_num);
	b[31] = a->link_num;
	b[32] = a->qp_mtu;
	wire_put24(b + 33, a->initial_psn);
	if (!a->has_ext)
		return n;
	b[EXT_DIRECT] = a->v2_direct ? EXT_V2_DIRECT : 0;
	memcpy(b + EXT_GID, a->client_target_gid, SMCR_GID_SIZE);
	put16_ho(b + EXT_NUM, a->num_rkeys, e->ho);
	for (unsigned i = 0; i < a->num_rkeys; i++)
		put_rt(b + EXT_RT + i * RT_LEN, &a->rt[i]);
	return n;
}

/* ---- ADD_LINK_CONT: link 4, num_rkeys 5, rt[2] at 8 */

static int dec_add_link_cont(const uint8_t *b, size_t len, const struct smcr_llc_hdr *hd,
			     enum smcr_llc_ho ho, struct smcr_llc_msg *m)
{
	struct smcr_llc_add_link_cont *c = &m->add_link_cont;

	(void)len, (void)hd, (void)ho;
	c->link_num = b[4];
	c->num_rkeys = b[5];
	for (unsigned i = 0; i < SMCR_LLC_RKEYS_PER_CONT_MSG; i++)
		get_rt(b + 8 + i * RT_LEN, &c->rt[i]);
	return 0;
}

static int enc_add_link_cont(const struct smcr_llc_msg *m, const struct enc *e)
{
	const struct smcr_llc_add_link_cont *c = &m->add_link_cont;
	int n;

	if ((n = enc_room(e, SMCR_LLC_LEN)) < 0)
		return n;
	e->buf[4] = c->link_num;
	e->buf[5] = c->num_rkeys;
	for (unsigned i = 0; i < SMCR_LLC_RKEYS_PER_CONT_MSG; i++)
		put_rt(e->buf + 8 + i * RT_LEN, &c->rt[i]);
	return n;
}

/* ---- DELETE_LINK: link 4, reason 5 (unaligned) */

static int dec_delete_link(const uint8_t *b, size_t len, const struct smcr_llc_hdr *hd,
			   enum smcr_llc_ho ho, struct smcr_llc_msg *m)
{
	(void)len, (void)hd, (void)ho;
	m->delete_link.link_num = b[4];
	m->delete_link.reason = wire_get32(b + 5);
	return 0;
}

static int enc_delete_link(const struct smcr_llc_msg *m, const struct enc *e)
{
	int n;

	if ((n = enc_room(e, SMCR_LLC_LEN)) < 0)
		return n;
	e->buf[4] = m->delete_link.link_num;
	wire_put32(e->buf + 5, m->delete_link.reason);
	return n;
}

/* ---- REQ_ADD_LINK: gid_cnt 24, GIDs from 28 */

static unsigned req_gids_max(bool v2)
{
	return v2 ? SMCR_LLC_GIDS_MAX : (SMCR_LLC_LEN - REQ_GID) / SMCR_GID_SIZE;
}

static int dec_req_add_link(const uint8_t *b, size_t len, const struct smcr_llc_hdr *hd,
			    enum smcr_llc_ho ho, struct smcr_llc_msg *m)
{
	struct smcr_llc_req_add_link *r = &m->req_add_link;

	(void)ho;
	r->gid_cnt = b[REQ_CNT];
	if (r->gid_cnt > req_gids_max(hd->version != 0))
		return -EPROTO;
	if ((len - REQ_GID) / SMCR_GID_SIZE < r->gid_cnt)
		return -EMSGSIZE;
	for (unsigned i = 0; i < r->gid_cnt; i++)
		memcpy(r->gid[i], b + REQ_GID + i * SMCR_GID_SIZE, SMCR_GID_SIZE);
	return 0;
}

static int enc_req_add_link(const struct smcr_llc_msg *m, const struct enc *e)
{
	const struct smcr_llc_req_add_link *r = &m->req_add_link;
	int n;

	if (r->gid_cnt > req_gids_max(e->v2))
		return -EINVAL;
	if ((n = enc_room(e, REQ_GID + (size_t)r->gid_cnt * SMCR_GID_SIZE)) < 0)
		return n;
	e->buf[REQ_CNT] = r->gid_cnt;
	for (unsigned i = 0; i < r->gid_cnt; i++)
		memcpy(e->buf + REQ_GID + i * SMCR_GID_SIZE, r->gid[i], SMCR_GID_SIZE);
	return n;
}

/* ---- CONFIRM_RKEY: rtokens at 4; CONFIRM_RKEY_CONT: num_rkeys 4, rtokens at 5 */

static int dec_confirm_rkey(const uint8_t *b, size_t len, const struct smcr_llc_hdr *hd,
			    enum smcr_llc_ho ho, struct smcr_llc_msg *m)
{
	(void)len, (void)hd, (void)ho;
	for (unsigned i = 0; i < SMCR_LLC_RKEYS_PER_MSG; i++)
		get_rtok(b + 4 + i * RTOK_LEN, &m->confirm_rkey.rt[i]);
	return 0;
}

static int enc_confirm_rkey(const struct smcr_llc_msg *m, const struct enc *e)
{
	int n;

	if ((n = enc_room(e, SMCR_LLC_LEN)) < 0)
		return n;
	for (unsigned i = 0; i < SMCR_LLC_RKEYS_PER_MSG; i++)
		put_rtok(e->buf + 4 + i * RTOK_LEN, &m->confirm_rkey.rt[i]);
	return n;
}

static int dec_confirm_rkey_cont(const uint8_t *b, size_t len, const struct smcr_llc_hdr *hd,
				 enum smcr_llc_ho ho, struct smcr_llc_msg *m)
{
	(void)len, (void)hd, (void)ho;
	m->confirm_rkey_cont.num_rkeys = b[4];
	for (unsigned i = 0; i < SMCR_LLC_RKEYS_PER_MSG; i++)
		get_rtok(b + 5 + i * RTOK_LEN, &m->confirm_rkey_cont.rt[i]);
	return 0;
}

static int enc_confirm_rkey_cont(const struct smcr_llc_msg *m, const struct enc *e)
{
	int n;

	if ((n = enc_room(e, SMCR_LLC_LEN)) < 0)
		return n;
	e->buf[4] = m->confirm_rkey_cont.num_rkeys;
	for (unsigned i = 0; i < SMCR_LLC_RKEYS_PER_MSG; i++)
		put_rtok(e->buf + 5 + i * RTOK_LEN, &m->confirm_rkey_cont.rt[i]);
	return n;
}

/* ---- TEST_LINK: user data 4..19 */

static int dec_test_link(const uint8_t *b, size_t len, const struct smcr_llc_hdr *hd,
			 enum smcr_llc_ho ho, struct smcr_llc_msg *m)
{
	(void)len, (void)hd, (void)ho;
	memcpy(m->test_link.user_data, b + 4, sizeof(m->test_link.user_data));
	return 0;
}

static int enc_test_link(const struct smcr_llc_msg *m, const struct enc *e)
{
	int n;

	if ((n = enc_room(e, SMCR_LLC_LEN)) < 0)
		return n;
	memcpy(e->buf + 4, m->test_link.user_data, sizeof(m->test_link.user_data));
	return n;
}

/* ---- DELETE_RKEY: num_rkeys 4, err_mask 5, rkeys from 8 (v1: 8 of them) */

static unsigned del_rkey_slots(bool v2, uint8_t num_rkeys)
{
	return v2 ? num_rkeys : SMCR_LLC_DEL_RKEY_MAX;
}

static int dec_delete_rkey(const uint8_t *b, size_t len, const struct smcr_llc_hdr *hd,
			   enum smcr_llc_ho ho, struct smcr_llc_msg *m)
{
	struct smcr_llc_delete_rkey *d = &m->delete_rkey;
	unsigned slots;

	(void)ho;
	d->num_rkeys = b[4];
	d->err_mask = b[5];
	slots = del_rkey_slots(hd->version != 0, d->num_rkeys);
	if ((len - DEL_RKEY) / 4 < slots)
		return -EMSGSIZE;
	for (unsigned i = 0; i < slots; i++)
		d->rkey[i] = wire_get32(b + DEL_RKEY + 4 * i);
	return 0;
}

static int enc_delete_rkey(const struct smcr_llc_msg *m, const struct enc *e)
{
	const struct smcr_llc_delete_rkey *d = &m->delete_rkey;
	unsigned slots = del_rkey_slots(e->v2, d->num_rkeys);
	int n;

	if ((n = enc_room(e, DEL_RKEY + (size_t)slots * 4)) < 0)
		return n;
	e->buf[4] = d->num_rkeys;
	e->buf[5] = d->err_mask;
	for (unsigned i = 0; i < slots; i++)
		wire_put32(e->buf + DEL_RKEY + 4 * i, d->rkey[i]);
	return n;
}

/* ---- the table */

static const struct layout {
	bool v1, v2;            /* which versions have this type */
	int (*dec)(const uint8_t *b, size_t len, const struct smcr_llc_hdr *hd,
		   enum smcr_llc_ho ho, struct smcr_llc_msg *m);
	int (*enc)(const struct smcr_llc_msg *m, const struct enc *e);
	size_t size;            /* of the union member */
} layouts[] = {
	[SMCR_LLC_CONFIRM_LINK] = { true, true, dec_confirm_link, enc_confirm_link,
				    sizeof(struct smcr_llc_confirm_link) },
	[SMCR_LLC_ADD_LINK] = { true, true, dec_add_link, enc_add_link,
				sizeof(struct smcr_llc_add_link) },
	[SMCR_LLC_ADD_LINK_CONT] = { true, false, dec_add_link_cont, enc_add_link_cont,
				     sizeof(struct smcr_llc_add_link_cont) },
	[SMCR_LLC_DELETE_LINK] = { true, true, dec_delete_link, enc_delete_link,
				   sizeof(struct smcr_llc_delete_link) },
	[SMCR_LLC_REQ_ADD_LINK] = { true, true, dec_req_add_link, enc_req_add_link,
				    sizeof(struct smcr_llc_req_add_link) },
	[SMCR_LLC_CONFIRM_RKEY] = { true, true, dec_confirm_rkey, enc_confirm_rkey,
				    sizeof(struct smcr_llc_confirm_rkey) },
	[SMCR_LLC_TEST_LINK] = { true, true, dec_test_link, enc_test_link,
				 sizeof(struct smcr_llc_test_link) },
	[SMCR_LLC_CONFIRM_RKEY_CONT] = { true, false, dec_confirm_rkey_cont, enc_confirm_rkey_cont,
					 sizeof(struct smcr_llc_confirm_rkey_cont) },
	[SMCR_LLC_DELETE_RKEY] = { true, true, dec_delete_rkey, enc_delete_rkey,
				   sizeof(struct smcr_llc_delete_rkey) },
};

static const struct layout *layout_of(unsigned type, unsigned version)
{
	const struct layout *l;

	if (type >= sizeof(layouts) / sizeof(layouts[0]))
		return NULL;
	l = &layouts[type];
	if (version == 0 ? !l->v1 : version != SMCR_LLC_VERSION_V2 || !l->v2)
		return NULL;
	return l;
}

static int dec_hdr(const uint8_t *b, enum smcr_llc_ho ho, struct smcr_llc_hdr *hd)
{
	hd->type = b[HDR_TYPE] & 0x0f;
	hd->version = b[HDR_TYPE] >> 4;
	hd->flags = b[HDR_FLAGS];
	if (hd->version == 0) {
		hd->length = b[HDR_LEN];
		hd->rej_rsn = b[HDR_REJ] & 0x0f;
		return hd->length == SMCR_LLC_LEN ? 0 : -EPROTO;
	}
	hd->length = get16_ho(b + HDR_LEN, ho);
	hd->rej_rsn = 0;
	if (hd->length < SMCR_LLC_LEN || hd->length > SMCR_LLC_V2_MAX_LEN)
		return -EPROTO;
	return 0;
}

int smcr_llc_decode(const uint8_t *buf, size_t len, enum smcr_llc_ho ho, struct smcr_llc_msg *m)
{
	const struct layout *l;
	int rc;

	if (len < SMCR_LLC_LEN)
		return -EMSGSIZE;
	if (len > SMCR_LLC_V2_MAX_LEN)
		len = SMCR_LLC_V2_MAX_LEN;      /* nothing of a message lies beyond */
	l = layout_of(buf[HDR_TYPE] & 0x0f, buf[HDR_TYPE] >> 4);
	if (!l)
		return -EPROTO;
	if ((rc = dec_hdr(buf, ho, &m->hd)))
		return rc;
	memset((uint8_t *)m + offsetof(struct smcr_llc_msg, confirm_link), 0, l->size);
	return l->dec(buf, len, &m->hd, ho, m);
}

int smcr_llc_encode(const struct smcr_llc_msg *m, enum smcr_llc_ho ho, uint8_t *buf, size_t size)
{
	const struct layout *l = layout_of(m->hd.type, m->hd.version);
	struct enc e = { .v2 = m->hd.version != 0, .ho = ho, .buf = buf, .size = size };
	int n;

	if (!l || (!e.v2 && m->hd.rej_rsn > 0x0f))
		return -EINVAL;
	if (e.v2 && m->hd.length &&
	    (m->hd.length < SMCR_LLC_LEN || m->hd.length > SMCR_LLC_V2_MAX_LEN))
		return -EINVAL;
	if ((n = l->enc(m, &e)) < 0)
		return n;
	buf[HDR_TYPE] = (uint8_t)(m->hd.version << 4 | m->hd.type);
	buf[HDR_FLAGS] = m->hd.flags;
	if (e.v2) {
		put16_ho(buf + HDR_LEN, m->hd.length ? m->hd.length : (uint16_t)n, ho);
	} else {
		buf[HDR_LEN] = SMCR_LLC_LEN;
		buf[HDR_REJ] = m->hd.rej_rsn;
	}
	return n;
}

int smcr_llc_v2_peer_ho(const uint8_t *buf, size_t len)
{
	if (len < SMCR_LLC_LEN || buf[HDR_TYPE] >> 4 != SMCR_LLC_VERSION_V2)
		return -EPROTO;
	if (buf[HDR_LEN] == SMCR_LLC_LEN && buf[HDR_LEN + 1] == 0)
		return SMCR_LLC_HO_LE;
	if (buf[HDR_LEN] == 0 && buf[HDR_LEN + 1] == SMCR_LLC_LEN)
		return SMCR_LLC_HO_BE;
	return -EPROTO;
}
