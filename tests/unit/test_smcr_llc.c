/*
 * SMC-R LLC messages (wire/smcr_llc.h): one golden message per type and
 * version, laid out as Linux's struct smc_llc_msg_* (net/smc/smc_llc.c),
 * every rejection, truncation at every length, fixed-seed round trips.
 */
#include "unit.h"
#include "wire/smcr_llc.h"

#include <errno.h>
#include <stdlib.h>

#define Z8  "0000000000000000"
#define MAC1 "020000000001"
#define MAC2 "020000000002"
#define GID1 "00000000000000000000ffff0a000001"
#define GID2 "00000000000000000000ffff0a000002"
#define GID3 "00000000000000000000ffff0a000003"

static const uint8_t mac1[6] = { 2, 0, 0, 0, 0, 1 }, mac2[6] = { 2, 0, 0, 0, 0, 2 };
static const uint8_t gid1[16] = { [10] = 0xff, 0xff, 10, 0, 0, 1 };
static const uint8_t gid2[16] = { [10] = 0xff, 0xff, 10, 0, 0, 2 };
static const uint8_t gid3[16] = { [10] = 0xff, 0xff, 10, 0, 0, 3 };

static void hd(struct smcr_llc_msg *m, uint8_t type, uint8_t version, uint16_t len, uint8_t flags)
{
	memset(m, 0, sizeof(*m));
	m->hd = (struct smcr_llc_hdr){ .type = type, .version = version, .length = len, .flags = flags };
}

static void confirm_link(struct smcr_llc_msg *m, uint8_t version, uint16_t len, uint8_t flags,
			 uint8_t max_conns)
{
	hd(m, SMCR_LLC_CONFIRM_LINK, version, len, flags);
	memcpy(m->confirm_link.sender_mac, mac1, 6);
	memcpy(m->confirm_link.sender_gid, gid1, 16);
	m->confirm_link.sender_qp_num = 0x11;
	m->confirm_link.link_num = 1;
	memcpy(m->confirm_link.link_uid, "\x01\x02\x03\x04", 4);
	m->confirm_link.max_links = 2;
	m->confirm_link.max_conns = max_conns;
}

static void add_link(struct smcr_llc_msg *m, uint8_t version, uint16_t len, uint8_t flags)
{
	hd(m, SMCR_LLC_ADD_LINK, version, len, flags);
	memcpy(m->add_link.sender_mac, mac2, 6);
	memcpy(m->add_link.sender_gid, gid2, 16);
	m->add_link.sender_qp_num = 0x12;
	m->add_link.link_num = 2;
	m->add_link.qp_mtu = 3;
	m->add_link.initial_psn = 0x123456;
}

static void m_confirm_link_v1(struct smcr_llc_msg *m) { confirm_link(m, 0, 44, 0x03, 0); }
static void m_confirm_link_v2_le(struct smcr_llc_msg *m) { confirm_link(m, 2, 44, 0x83, 0xff); }
static void m_confirm_link_v2_be(struct smcr_llc_msg *m) { confirm_link(m, 2, 44, 0x83, 0xff); }

static void m_add_link_rej(struct smcr_llc_msg *m)
{
	add_link(m, 0, 44, 0xc0);
	m->hd.rej_rsn = SMCR_LLC_REJ_RSN_NO_ALT_PATH;
}

static void m_add_link_v2_ext(struct smcr_llc_msg *m)
{
	add_link(m, 2, 88, 0);
	m->add_link.has_ext = true;
	m->add_link.v2_direct = true;
	memcpy(m->add_link.client_target_gid, gid3, 16);
	m->add_link.num_rkeys = 1;
	m->add_link.rt[0] = (struct smcr_llc_add_link_rt){ 0x11223344, 0x55667788, 0x7f0012345000 };
}

static void m_add_link_cont(struct smcr_llc_msg *m)
{
	hd(m, SMCR_LLC_ADD_LINK_CONT, 0, 44, 0x80);
	m->add_link_cont.link_num = 2;
	m->add_link_cont.num_rkeys = 3;
	m->add_link_cont.rt[0] = (struct smcr_llc_add_link_rt){ 1, 2, 0x1000 };
	m->add_link_cont.rt[1] = (struct smcr_llc_add_link_rt){ 3, 4, 0x2000 };
}

static void m_delete_link_v1(struct smcr_llc_msg *m)
{
	hd(m, SMCR_LLC_DELETE_LINK, 0, 44,
	   SMCR_LLC_FLAG_DEL_LINK_ALL | SMCR_LLC_FLAG_DEL_LINK_ORDERLY);
	m->delete_link.reason = SMCR_LLC_DEL_LOST_PATH;
}

static void m_delete_link_v2_be(struct smcr_llc_msg *m)
{
	hd(m, SMCR_LLC_DELETE_LINK, 2, 44, SMCR_LLC_FLAG_DEL_LINK_ORDERLY);
	m->delete_link.link_num = 3;
	m->delete_link.reason = SMCR_LLC_DEL_PROT_VIOL;
}

static void m_req_add_link_v1(struct smcr_llc_msg *m)
{
	hd(m, SMCR_LLC_REQ_ADD_LINK, 0, 44, 0);
	m->req_add_link.gid_cnt = 1;
	memcpy(m->req_add_link.gid[0], gid1, 16);
}

static void m_req_add_link_v2(struct smcr_llc_msg *m)
{
	hd(m, SMCR_LLC_REQ_ADD_LINK, 2, 60, 0);
	m->req_add_link.gid_cnt = 2;
	memcpy(m->req_add_link.gid[0], gid1, 16);
	memcpy(m->req_add_link.gid[1], gid2, 16);
}

static void confirm_rkey(struct smcr_llc_msg *m, uint8_t version, uint8_t flags)
{
	hd(m, SMCR_LLC_CONFIRM_RKEY, version, 44, flags);
	m->confirm_rkey.rt[0] = (struct smcr_llc_rtoken){ 2, 0xaabbccdd, 0x12340000 };
	m->confirm_rkey.rt[1] = (struct smcr_llc_rtoken){ 2, 0x01020304, 0x56780000 };
	m->confirm_rkey.rt[2] = (struct smcr_llc_rtoken){ 3, 0x05060708, 0x9abc0000 };
}

static void m_confirm_rkey_v1(struct smcr_llc_msg *m) { confirm_rkey(m, 0, 0); }
static void m_confirm_rkey_v2(struct smcr_llc_msg *m) { confirm_rkey(m, 2, 0xb0); }

static void test_link(struct smcr_llc_msg *m, uint8_t version, uint8_t flags)
{
	hd(m, SMCR_LLC_TEST_LINK, version, 44, flags);
	for (int i = 0; i < 16; i++)
		m->test_link.user_data[i] = (uint8_t)i;
}

static void m_test_link_v1(struct smcr_llc_msg *m) { test_link(m, 0, 0); }
static void m_test_link_v2(struct smcr_llc_msg *m) { test_link(m, 2, 0x80); }

static void m_confirm_rkey_cont(struct smcr_llc_msg *m)
{
	hd(m, SMCR_LLC_CONFIRM_RKEY_CONT, 0, 44, 0);
	m->confirm_rkey_cont.num_rkeys = 1;
	m->confirm_rkey_cont.rt[0] = (struct smcr_llc_rtoken){ 1, 0x11111111, 0x2222222222222222 };
}

static void m_delete_rkey_v1(struct smcr_llc_msg *m)
{
	hd(m, SMCR_LLC_DELETE_RKEY, 0, 44, SMCR_LLC_FLAG_RESP | SMCR_LLC_FLAG_RKEY_NEG);
	m->delete_rkey.num_rkeys = 2;
	m->delete_rkey.err_mask = 0x40;
	m->delete_rkey.rkey[0] = 0x101;
	m->delete_rkey.rkey[1] = 0x202;
}

static void m_delete_rkey_v2(struct smcr_llc_msg *m)
{
	hd(m, SMCR_LLC_DELETE_RKEY, 2, 44, 0);
	m->delete_rkey.num_rkeys = 1;
	m->delete_rkey.rkey[0] = 0x707;
}

static const struct golden {
	const char *name;
	enum smcr_llc_ho ho;
	void (*build)(struct smcr_llc_msg *m);
	const char *hex;
} goldens[] = {
	{ "confirm_link v1", SMCR_LLC_HO_LE, m_confirm_link_v1,
	  "01 2c 00 03" MAC1 GID1 "000011 01 01020304 02 00" Z8 },
	{ "confirm_link v2 le", SMCR_LLC_HO_LE, m_confirm_link_v2_le,
	  "21 2c 00 83" MAC1 GID1 "000011 01 01020304 02 ff" Z8 },
	{ "confirm_link v2 be", SMCR_LLC_HO_BE, m_confirm_link_v2_be,
	  "21 00 2c 83" MAC1 GID1 "000011 01 01020304 02 ff" Z8 },
	{ "add_link v1 reject", SMCR_LLC_HO_LE, m_add_link_rej,
	  "02 2c 01 c0" MAC2 "0000" GID2 "000012 02 03 123456" Z8 },
	{ "add_link v2 extension", SMCR_LLC_HO_LE, m_add_link_v2_ext,
	  "22 58 00 00" MAC2 "0000" GID2 "000012 02 03 123456" Z8
	  "80 00" GID3 Z8 "0100" "11223344 55667788 00007f0012345000" },
	{ "add_link_cont", SMCR_LLC_HO_LE, m_add_link_cont,
	  "03 2c 00 80 02 03 0000"
	  "00000001 00000002 0000000000001000"
	  "00000003 00000004 0000000000002000 00000000" },
	{ "delete_link v1", SMCR_LLC_HO_LE, m_delete_link_v1,
	  "04 2c 00 60 00 00010000" Z8 Z8 Z8 Z8 "000000" },
	{ "delete_link v2 be", SMCR_LLC_HO_BE, m_delete_link_v2_be,
	  "24 00 2c 20 03 00040000" Z8 Z8 Z8 Z8 "000000" },
	{ "req_add_link v1", SMCR_LLC_HO_LE, m_req_add_link_v1,
	  "05 2c 00 00" Z8 Z8 "00000000 01 000000" GID1 },
	{ "req_add_link v2", SMCR_LLC_HO_LE, m_req_add_link_v2,
	  "25 3c 00 00" Z8 Z8 "00000000 02 000000" GID1 GID2 },
	{ "confirm_rkey v1", SMCR_LLC_HO_LE, m_confirm_rkey_v1,
	  "06 2c 00 00 02 aabbccdd 0000000012340000 02 01020304 0000000056780000"
	  "03 05060708 000000009abc0000 00" },
	{ "confirm_rkey v2", SMCR_LLC_HO_LE, m_confirm_rkey_v2,
	  "26 2c 00 b0 02 aabbccdd 0000000012340000 02 01020304 0000000056780000"
	  "03 05060708 000000009abc0000 00" },
	{ "test_link v1", SMCR_LLC_HO_LE, m_test_link_v1,
	  "07 2c 00 00 000102030405060708090a0b0c0d0e0f" Z8 Z8 Z8 },
	{ "test_link v2", SMCR_LLC_HO_LE, m_test_link_v2,
	  "27 2c 00 80 000102030405060708090a0b0c0d0e0f" Z8 Z8 Z8 },
	{ "confirm_rkey_cont", SMCR_LLC_HO_LE, m_confirm_rkey_cont,
	  "08 2c 00 00 01 01 11111111 2222222222222222" Z8 Z8 Z8 "0000" },
	{ "delete_rkey v1", SMCR_LLC_HO_LE, m_delete_rkey_v1,
	  "09 2c 00 a0 02 40 0000 00000101 00000202" Z8 Z8 Z8 "00000000" },
	{ "delete_rkey v2", SMCR_LLC_HO_LE, m_delete_rkey_v2,
	  "29 2c 00 00 01 00 0000 00000707" Z8 Z8 Z8 Z8 },
};

#define NGOLDEN (sizeof(goldens) / sizeof(goldens[0]))

TEST(smcr_llc_golden)
{
	static struct smcr_llc_msg want, got;
	uint8_t bytes[256], buf[256];

	for (size_t i = 0; i < NGOLDEN; i++) {
		const struct golden *g = &goldens[i];
		size_t n = unit_unhex(g->hex, bytes, sizeof(bytes));
		int rc;

		g->build(&want);
		memset(&got, 0, sizeof(got));
		rc = smcr_llc_decode(bytes, n, g->ho, &got);
		if (rc || memcmp(&got, &want, sizeof(got)))
			unit_fail(__FILE__, __LINE__, "%s: decode %d, or other fields", g->name, rc);
		memset(buf, 0xaa, sizeof(buf));
		rc = smcr_llc_encode(&want, g->ho, buf, sizeof(buf));
		if (rc != (int)n || memcmp(buf, bytes, n))
			unit_fail(__FILE__, __LINE__, "%s: encode %d bytes, %zu expected, or others",
				  g->name, rc, n);
		if (rc > 0 && buf[rc] != 0xaa)
			unit_fail(__FILE__, __LINE__, "%s: wrote past its message", g->name);
	}
}

TEST(smcr_llc_truncated_and_short_buffers)
{
	static struct smcr_llc_msg m;
	uint8_t bytes[256], buf[256];

	for (size_t i = 0; i < NGOLDEN; i++) {
		const struct golden *g = &goldens[i];
		size_t n = unit_unhex(g->hex, bytes, sizeof(bytes));

		for (size_t len = 0; len < n; len++) {
			int rc = smcr_llc_decode(bytes, len, g->ho, &m);

			if (rc != -EMSGSIZE)
				unit_fail(__FILE__, __LINE__, "%s: %zu bytes decode %d", g->name, len, rc);
		}
		g->build(&m);
		for (size_t size = 0; size < n; size++)
			if (smcr_llc_encode(&m, g->ho, buf, size) != -EMSGSIZE)
				unit_fail(__FILE__, __LINE__, "%s: encode into %zu", g->name, size);
	}
}

static int decode_hex(const char *hex, enum smcr_llc_ho ho)
{
	static struct smcr_llc_msg m;
	uint8_t bytes[300];
	size_t n = unit_unhex(hex, bytes, sizeof(bytes));

	return smcr_llc_decode(bytes, n, ho, &m);
}

TEST(smcr_llc_rejects)
{
	static struct smcr_llc_msg m;
	uint8_t bytes[SMCR_LLC_V2_MAX_LEN + 8];
	size_t n;

	/* every type byte: only the layouts of each version */
	n = unit_unhex(goldens[0].hex, bytes, sizeof(bytes));
	for (unsigned t = 0; t < 256; t++) {
		unsigned type = t & 0xf, version = t >> 4;
		bool ok = (version == 0 && type >= 1 && type <= 9) ||
			  (version == 2 && (type == 1 || type == 2 || (type >= 4 && type <= 7) ||
					    type == 9));
		int want = ok ? 0 : -EPROTO;

		bytes[0] = (uint8_t)t;
		bytes[1] = 44;
		bytes[2] = 0;
		bytes[24] = 0;          /* REQ_ADD_LINK: no GIDs */
		if (smcr_llc_decode(bytes, n, SMCR_LLC_HO_LE, &m) != want)
			unit_fail(__FILE__, __LINE__, "type byte 0x%02x", t);
	}
	/* the CDC type is not an LLC */
	bytes[0] = 0xfe;
	CHECK_INT(smcr_llc_decode(bytes, n, SMCR_LLC_HO_LE, &m), -EPROTO);
	/* v1 length byte: 44 only */
	CHECK_INT(decode_hex("07 2b 00 00" Z8 Z8 Z8 Z8 Z8, SMCR_LLC_HO_LE), -EPROTO);
	CHECK_INT(decode_hex("07 2d 00 00" Z8 Z8 Z8 Z8 Z8, SMCR_LLC_HO_LE), -EPROTO);
	CHECK_INT(decode_hex("07 00 00 00" Z8 Z8 Z8 Z8 Z8, SMCR_LLC_HO_LE), -EPROTO);
	/* v2 length: 44 .. 8192, in the peer's order */
	CHECK_INT(decode_hex("27 2b 00 00" Z8 Z8 Z8 Z8 Z8, SMCR_LLC_HO_LE), -EPROTO);
	CHECK_INT(decode_hex("27 2c 00 00" Z8 Z8 Z8 Z8 Z8, SMCR_LLC_HO_BE), -EPROTO);
	CHECK_INT(decode_hex("27 00 2c 00" Z8 Z8 Z8 Z8 Z8, SMCR_LLC_HO_LE), -EPROTO);
	CHECK_INT(decode_hex("27 00 20 00" Z8 Z8 Z8 Z8 Z8, SMCR_LLC_HO_LE), 0);
	CHECK_INT(decode_hex("27 01 20 00" Z8 Z8 Z8 Z8 Z8, SMCR_LLC_HO_LE), -EPROTO);
	/* the reject reason is v1's: in v2 that byte is the length's */
	CHECK_INT(smcr_llc_decode((const uint8_t *)"\x22\x00\x2c\x00" Z8 Z8 Z8 Z8 Z8, 44,
				  SMCR_LLC_HO_BE, &m), 0);
	CHECK_INT(m.hd.rej_rsn, 0);
	/* counts beyond what Linux sends */
	CHECK_INT(decode_hex("05 2c 00 00" Z8 Z8 "00000000 02 000000" GID1, SMCR_LLC_HO_LE), -EPROTO);
	n = unit_unhex("25 2c 00 00" Z8 Z8 "00000000 09 000000", bytes, sizeof(bytes));
	memset(bytes + n, 0, 9 * 16);
	CHECK_INT(smcr_llc_decode(bytes, n + 9 * 16, SMCR_LLC_HO_LE, &m), -EPROTO);
	bytes[24] = 8;
	CHECK_INT(smcr_llc_decode(bytes, n + 8 * 16, SMCR_LLC_HO_LE, &m), 0);
	CHECK_INT(smcr_llc_decode(bytes, n + 8 * 16 - 1, SMCR_LLC_HO_LE, &m), -EMSGSIZE);
	/* ADD_LINK v2: the extension is there when the length says so */
	n = unit_unhex(goldens[4].hex, bytes, sizeof(bytes));
	bytes[70] = 0;
	bytes[71] = 1;          /* 256 rkeys */
	memset(bytes + n, 0, sizeof(bytes) - n);
	CHECK_INT(smcr_llc_decode(bytes, sizeof(bytes), SMCR_LLC_HO_LE, &m), -EPROTO);
	bytes[71] = 0;
	bytes[70] = 255;
	CHECK_INT(smcr_llc_decode(bytes, 72 + 255 * 16, SMCR_LLC_HO_LE, &m), 0);
	CHECK_INT(m.add_link.num_rkeys, 255);
	CHECK_INT(smcr_llc_decode(bytes, 72 + 255 * 16 - 1, SMCR_LLC_HO_LE, &m), -EMSGSIZE);
	bytes[1] = 44;          /* a 44-byte ADD_LINK v2 (a reject): no extension read */
	CHECK_INT(smcr_llc_decode(bytes, 44, SMCR_LLC_HO_LE, &m), 0);
	CHECK(!m.add_link.has_ext);
	/* DELETE_RKEY v2: the rkeys it counts */
	n = unit_unhex(goldens[NGOLDEN - 1].hex, bytes, sizeof(bytes));
	bytes[4] = 9;
	CHECK_INT(smcr_llc_decode(bytes, n, SMCR_LLC_HO_LE, &m), 0);
	bytes[4] = 10;
	CHECK_INT(smcr_llc_decode(bytes, n, SMCR_LLC_HO_LE, &m), -EMSGSIZE);
	/* v1 counts are Linux's to cap: kept as sent */
	n = unit_unhex(goldens[15].hex, bytes, sizeof(bytes));
	bytes[4] = 200;
	CHECK_INT(smcr_llc_decode(bytes, n, SMCR_LLC_HO_LE, &m), 0);
	CHECK_INT(m.delete_rkey.num_rkeys, 200);
}

TEST(smcr_llc_encode_rejects)
{
	static struct smcr_llc_msg m;
	uint8_t buf[SMCR_LLC_V2_MAX_LEN];

	m_confirm_link_v1(&m);
	m.confirm_link.sender_qp_num = 0x1000000;
	CHECK_INT(smcr_llc_encode(&m, SMCR_LLC_HO_LE, buf, sizeof(buf)), -EINVAL);
	m_add_link_rej(&m);
	m.hd.rej_rsn = 16;
	CHECK_INT(smcr_llc_encode(&m, SMCR_LLC_HO_LE, buf, sizeof(buf)), -EINVAL);
	m_add_link_rej(&m);
	m.add_link.qp_mtu = 16;
	CHECK_INT(smcr_llc_encode(&m, SMCR_LLC_HO_LE, buf, sizeof(buf)), -EINVAL);
	m_add_link_rej(&m);
	m.add_link.initial_psn = 0x1000000;
	CHECK_INT(smcr_llc_encode(&m, SMCR_LLC_HO_LE, buf, sizeof(buf)), -EINVAL);
	m_add_link_rej(&m);
	m.add_link.has_ext = true;      /* v1 has no extension */
	CHECK_INT(smcr_llc_encode(&m, SMCR_LLC_HO_LE, buf, sizeof(buf)), -EINVAL);
	m_add_link_v2_ext(&m);
	m.hd.length = 44;               /* would hide the extension */
	CHECK_INT(smcr_llc_encode(&m, SMCR_LLC_HO_LE, buf, sizeof(buf)), -EINVAL);
	m.hd.length = 0;                /* 0: the bytes written */
	CHECK_INT(smcr_llc_encode(&m, SMCR_LLC_HO_BE, buf, sizeof(buf)), 88);
	CHECK_INT(buf[1] << 8 | buf[2], 88);
	CHECK_INT(buf[70] << 8 | buf[71], 1);
	m.add_link.num_rkeys = 256;
	CHECK_INT(smcr_llc_encode(&m, SMCR_LLC_HO_LE, buf, sizeof(buf)), -EINVAL);
	m_test_link_v2(&m);
	m.hd.length = 8193;
	CHECK_INT(smcr_llc_encode(&m, SMCR_LLC_HO_LE, buf, sizeof(buf)), -EINVAL);
	m.hd.length = 43;
	CHECK_INT(smcr_llc_encode(&m, SMCR_LLC_HO_LE, buf, sizeof(buf)), -EINVAL);
	m_test_link_v1(&m);
	m.hd.version = 1;
	CHECK_INT(smcr_llc_encode(&m, SMCR_LLC_HO_LE, buf, sizeof(buf)), -EINVAL);
	m_add_link_cont(&m);
	m.hd.version = 2;               /* no v2 form */
	CHECK_INT(smcr_llc_encode(&m, SMCR_LLC_HO_LE, buf, sizeof(buf)), -EINVAL);
	m_req_add_link_v1(&m);
	m.req_add_link.gid_cnt = 2;     /* one GID fits in 44 bytes */
	CHECK_INT(smcr_llc_encode(&m, SMCR_LLC_HO_LE, buf, sizeof(buf)), -EINVAL);
	m.hd.type = 0;
	CHECK_INT(smcr_llc_encode(&m, SMCR_LLC_HO_LE, buf, sizeof(buf)), -EINVAL);
	m.hd.type = 10;
	CHECK_INT(smcr_llc_encode(&m, SMCR_LLC_HO_LE, buf, sizeof(buf)), -EINVAL);
}

TEST(smcr_llc_v2_peer_byte_order)
{
	uint8_t bytes[256];

	unit_unhex(goldens[1].hex, bytes, sizeof(bytes));
	CHECK_INT(smcr_llc_v2_peer_ho(bytes, 44), SMCR_LLC_HO_LE);
	CHECK_INT(smcr_llc_v2_peer_ho(bytes, 43), -EPROTO);
	unit_unhex(goldens[2].hex, bytes, sizeof(bytes));
	CHECK_INT(smcr_llc_v2_peer_ho(bytes, 44), SMCR_LLC_HO_BE);
	unit_unhex(goldens[0].hex, bytes, sizeof(bytes));
	CHECK_INT(smcr_llc_v2_peer_ho(bytes, 44), -EPROTO);     /* v1 */
	unit_unhex(goldens[9].hex, bytes, sizeof(bytes));
	CHECK_INT(smcr_llc_v2_peer_ho(bytes, 60), -EPROTO);     /* not 44 long */
}

static uint64_t rng_state;
static uint64_t rng(void)
{
	return unit_xorshift(&rng_state);
}

TEST(smcr_llc_random_roundtrip)
{
	static const uint8_t types[] = { 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09,
					 0x21, 0x22, 0x24, 0x25, 0x26, 0x27, 0x29 };
	static struct smcr_llc_msg a, b;
	static uint8_t in[1200], out[SMCR_LLC_V2_MAX_LEN];
	int decoded = 0;

	rng_state = 0x11cULL * 0x9e3779b97f4a7c15ULL;
	for (int i = 0; i < 20000; i++) {
		enum smcr_llc_ho ho = rng() & 1 ? SMCR_LLC_HO_BE : SMCR_LLC_HO_LE;
		size_t len = SMCR_LLC_LEN + rng() % (sizeof(in) - SMCR_LLC_LEN + 1);
		uint16_t l2;
		int rc;

		for (size_t j = 0; j < len; j++)
			in[j] = (uint8_t)rng();
		in[0] = types[rng() % sizeof(types)];
		if (in[0] >> 4) {
			l2 = (uint16_t)(rng() & 1 ? 44 : 44 + rng() % (len - 43));
			in[ho == SMCR_LLC_HO_BE ? 1 : 2] = (uint8_t)(l2 >> 8);
			in[ho == SMCR_LLC_HO_BE ? 2 : 1] = (uint8_t)l2;
		} else {
			in[1] = 44;
		}
		in[24] %= 9;            /* REQ_ADD_LINK: GIDs that can fit */
		in[rng() & 1 ? 70 : 71] = 0;    /* ADD_LINK v2: rkeys that can fit */
		in[4] = rng() & 1 ? in[4] % 12 : in[4];     /* DELETE_RKEY v2 */
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		if (smcr_llc_decode(in, len, ho, &a))
			continue;
		decoded++;
		rc = smcr_llc_encode(&a, ho, out, sizeof(out));
		CHECK(rc >= (int)SMCR_LLC_LEN);
		if (rc < 0)
			continue;
		CHECK_INT(smcr_llc_decode(out, (size_t)rc, ho, &b), 0);
		if (memcmp(&a, &b, sizeof(a)))
			unit_fail(__FILE__, __LINE__, "type 0x%02x: decode(encode(x)) != x", in[0]);
		/* what is not reserved comes back as it was */
		CHECK_INT(out[0], in[0]);
		CHECK_INT(out[3], in[3]);
	}
	CHECK(decoded > 10000);
}
