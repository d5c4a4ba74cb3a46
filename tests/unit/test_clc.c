/*
 * The CLC codec (wire/clc.h): golden messages written from the byte maps of
 * RFC 7609 and Linux's net/smc/smc_clc.h, each rule of the receiver's
 * validation broken once, every truncation, and random round trips.
 */
#include "unit.h"
#include "wire/clc.h"

#include <errno.h>
#include <stdlib.h>

/* prop_v2_r_ueid: 156 bytes */
static const char prop_v2_r_ueid[] =
	"e2d4c3d9 01009c22 00000000 00000000 00000000 00000000 00000000 00000000"
	"00000000 00000000 00000000 00000000 0000001c 00000000 00000000 00000000"
	"00000000 00000000 00000000 00000000 01000010 00000000 00000000 00000000"
	"0000ffff 0a630001 ff020001 00000000 00000000 00000000 534f4654 2d534d43"
	"2d554549 442d3120 20202020 20202020 20202020 20202020 e2d4c3d9"
	;
/* prop_v2_rr: 164 bytes */
static const char prop_v2_rr[] =
	"e2d4c3d9 0100a420 01020203 04050607 fe800000 00000000 0202c9ff fe0a0b0c"
	"0202c90a 0b0c0028 00000000 00000000 00000024 00000000 00000000 00000000"
	"00000000 00000000 00000000 00000000 0a630000 18000000 01000010 00000000"
	"00000000 00000000 0000ffff 0a630001 ff020001 00000000 00000000 00000000"
	"534f4654 2d534d43 2d554549 442d3120 20202020 20202020 20202020 20202020"
	"e2d4c3d9"
	;
/* prop_v1_r6: 69 bytes */
static const char prop_v1_r6[] =
	"e2d4c3d9 01004518 01020203 04050607 fe800000 00000000 0202c9ff fe0a0b0c"
	"0202c90a 0b0c0000 00000000 00000001 fd000001 00000000 00000000 00000000"
	"40e2d4c3 d9"
	;
/* acc_v1_r: 68 bytes */
static const char acc_v1_r[] =
	"e2d4c3d9 02004418 01020203 04050607 fe800000 00000000 0202c9ff fe0a0b0c"
	"0202c90a 0b0c0001 231a2b3c 4d010000 00052300 00007f00 12340000 00abcdef"
	"e2d4c3d9"
	;
/* acc_v2_r_fc: 160 bytes */
static const char acc_v2_r_fc[] =
	"e2d4c3d9 0200a028 01020203 04050607 fe800000 00000000 0202c9ff fe0a0b0c"
	"0202c90a 0b0c0001 231a2b3c 4d010000 00052300 00007f00 12340000 00abcdef"
	"534f4654 2d534d43 2d554549 442d3120 20202020 20202020 20202020 20202020"
	"00000000 00000000 80210000 686f7374 2d612020 20202020 20202020 20202020"
	"20202020 20202020 20202020 ff020001 00000000 00000000 00000000 e2d4c3d9"
	;
/* conf_v2_r_fc1: 180 bytes */
static const char conf_v2_r_fc1[] =
	"e2d4c3d9 0300b428 01020203 04050607 fe800000 00000000 0202c9ff fe0a0b0c"
	"0202c90a 0b0c0001 231a2b3c 4d010000 00052300 00007f00 12340000 00abcdef"
	"534f4654 2d534d43 2d554549 442d3120 20202020 20202020 20202020 20202020"
	"00000000 00000000 00210000 686f7374 2d622020 20202020 20202020 20202020"
	"20202020 20202020 20202020 ff020001 00000000 00000000 00000000 01000000"
	"00000000 00000000 0000ffff 0a630101 e2d4c3d9"
	;
/* acc_v2_d_fc: 130 bytes */
static const char acc_v2_d_fc[] =
	"e2d4c3c4 02008229 11223344 55667788 00000001 00000002 00200000 01020304"
	"ffff534f 46542d53 4d432d55 4549442d 31202020 20202020 20202020 20202020"
	"202099aa bbccddee ff000021 0000686f 73742d61 20202020 20202020 20202020"
	"20202020 20202020 20202020 20200000 00010000 00000000 00000000 0000e2d4"
	"c3c4"
	;
/* decl_v1: 28 bytes */
static const char decl_v1[] =
	"e2d4c3d9 04001c10 01020203 04050607 03030000 00000000 e2d4c3d9"
	;
/* decl_v2_sync: 44 bytes */
static const char decl_v2_sync[] =
	"e2d4c3d9 04002c28 01020203 04050607 04000000 20000000 00000000 00000000"
	"00000000 00000000 e2d4c3d9"
	;

/* Equal bytes, or a failure naming the first that differs. */
#define CHECK_BYTES(got, want, n) check_bytes(__FILE__, __LINE__, got, want, n)
static void check_bytes(const char *file, int line, const uint8_t *got, const uint8_t *want, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (got[i] != want[i]) {
			unit_fail(file, line, "byte %zu is %02x, expected %02x", i, got[i], want[i]);
			return;
		}
}

static const uint8_t eid1[32] = "SOFT-SMC-UEID-1                 ";
static const uint8_t sysid[8] = { 1, 2, 2, 3, 4, 5, 6, 7 };
static const uint8_t gid[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 2, 2, 0xc9, 0xff, 0xfe, 0x0a, 0x0b, 0x0c };
static const uint8_t mac[6] = { 2, 2, 0xc9, 0x0a, 0x0b, 0x0c };
static const uint8_t roce[16] = { [10] = 0xff, 0xff, 10, 99, 0, 1 };

/* The SMC-R v2 part of both golden proposals: one UEID, release 1, max 255 / 2. */
static void prop_v2_r(struct clc_proposal *p)
{
	p->eid_cnt = 1;
	memcpy(p->eid[0], eid1, 32);
	p->release = 1;
	memcpy(p->roce_gid, roce, 16);
	p->max_conns = 255;
	p->max_links = 2;
	p->feature_mask = 1;
}

/* encode(p) is golden, and decode(golden) is p. */
static void check_proposal(const struct clc_proposal *p, const char *golden)
{
	uint8_t want[CLC_PROPOSAL_MAX], got[CLC_PROPOSAL_MAX];
	size_t n = unit_unhex(golden, want, sizeof(want));
	struct clc_proposal d;

	CHECK_INT(clc_proposal_encode(p, got, sizeof(got)), n);
	CHECK_BYTES(got, want, n);
	CHECK_INT(clc_proposal_decode(want, n, &d), n);
	CHECK(!memcmp(&d, p, sizeof(d)));
}

TEST(clc_golden_proposal_v2_smcr_ueid)
{
	struct clc_proposal p;

	memset(&p, 0, sizeof(p));
	p.version = CLC_V2;
	p.typev1 = CLC_SMC_N;
	p.typev2 = CLC_SMC_R;
	prop_v2_r(&p);
	check_proposal(&p, prop_v2_r_ueid);
}

TEST(clc_golden_proposal_v2_smcr_v1_and_v2)
{
	struct clc_proposal p;

	memset(&p, 0, sizeof(p));
	p.version = CLC_V2;
	p.typev1 = CLC_SMC_R;
	p.typev2 = CLC_SMC_R;
	memcpy(p.system_id, sysid, 8);
	memcpy(p.gid, gid, 16);
	memcpy(p.mac, mac, 6);
	memcpy(p.ipv4_subnet, (uint8_t[]){ 10, 99, 0, 0 }, 4);
	p.ipv4_prefix_len = 24;
	prop_v2_r(&p);
	check_proposal(&p, prop_v2_rr);
}

TEST(clc_golden_proposal_v1_ipv6)
{
	static const uint8_t fd00[16] = { 0xfd, 0, 0, 1 };
	struct clc_proposal p;

	memset(&p, 0, sizeof(p));
	p.version = CLC_V1;
	p.typev1 = CLC_SMC_R;
	p.typev2 = CLC_SMC_N;
	memcpy(p.system_id, sysid, 8);
	memcpy(p.gid, gid, 16);
	memcpy(p.mac, mac, 6);
	p.ipv6_cnt = 1;
	memcpy(p.ipv6[0].prefix, fd00, 16);
	p.ipv6[0].len = 64;
	check_proposal(&p, prop_v1_r6);
}

/* The SMC-R fields of the golden ACCEPT/CONFIRMs. */
static void smcr_base(struct clc_smcr_accept *a, uint8_t type, uint8_t version, bool fc)
{
	memset(a, 0, sizeof(*a));
	a->type = type;
	a->version = version;
	a->first_contact = fc;
	memcpy(a->system_id, sysid, 8);
	memcpy(a->gid, gid, 16);
	memcpy(a->mac, mac, 6);
	a->qpn = 0x123;
	a->rmb_rkey = 0x1a2b3c4d;
	a->rmbe_idx = 1;
	a->rmbe_alert_token = 5;
	a->rmbe_size = smc_size_code(65536, SMC_SIZE_CODE_SMCR);
	a->qp_mtu = 3;
	a->rmb_addr = 0x7f0012340000ull;
	a->psn = 0xabcdef;
	if (version > CLC_V1)
		memcpy(a->eid, eid1, 32);
}

static void fce_linux(struct clc_fce *f, const char *host, bool direct)
{
	f->v2_direct = direct;
	f->os_type = CLC_OS_LINUX;
	f->release = 1;
	memset(f->hostname, ' ', sizeof(f->hostname));
	memcpy(f->hostname, host, strlen(host));
	f->max_conns = 255;
	f->max_links = 2;
	f->feature_mask = 1;
}

static void check_smcr(const struct clc_smcr_accept *a, const char *golden)
{
	uint8_t want[256], got[256];
	size_t n = unit_unhex(golden, want, sizeof(want));
	struct clc_smcr_accept d;

	CHECK_INT(clc_smcr_accept_encode(a, got, sizeof(got)), n);
	CHECK_BYTES(got, want, n);
	CHECK_INT(clc_smcr_accept_decode(want, n, &d), n);
	CHECK(!memcmp(&d, a, sizeof(d)));
}

TEST(clc_golden_smcr_accept_v1)
{
	struct clc_smcr_accept a;

	smcr_base(&a, CLC_ACCEPT, CLC_V1, true);
	check_smcr(&a, acc_v1_r);
}

TEST(clc_golden_smcr_accept_v2_first_contact)
{
	struct clc_smcr_accept a;

	smcr_base(&a, CLC_ACCEPT, CLC_V2, true);
	fce_linux(&a.fce, "host-a", true);
	check_smcr(&a, acc_v2_r_fc);
}

TEST(clc_golden_smcr_confirm_v2_first_contact)
{
	struct clc_smcr_accept a;

	smcr_base(&a, CLC_CONFIRM, CLC_V2, true);
	fce_linux(&a.fce, "host-b", false);
	a.gid_cnt = 1;
	memcpy(a.gids[0], (uint8_t[16]){ [10] = 0xff, 0xff, 10, 99, 1, 1 }, 16);
	check_smcr(&a, conf_v2_r_fc1);
}

TEST(clc_golden_smcr_v2_without_first_contact)
{
	uint8_t want[256], got[256];
	size_t n = unit_unhex(acc_v2_r_fc, want, sizeof(want));
	struct clc_smcr_accept a, d;

	smcr_base(&a, CLC_CONFIRM, CLC_V2, false);
	CHECK_INT(clc_smcr_accept_encode(&a, got, sizeof(got)), 108);
	/* the 104 bytes before the extension, as in the first-contact ACCEPT but for type and flags */
	want[4] = CLC_CONFIRM;
	want[6] = 108;
	want[7] = 0x20;
	CHECK_BYTES(got, want, 104);
	CHECK_BYTES(got + 104, want + n - 4, 4);
	CHECK_INT(clc_smcr_accept_decode(got, 108, &d), 108);
	CHECK(!memcmp(&d, &a, sizeof(d)));
}

TEST(clc_golden_smcd_accept_v2_first_contact)
{
	uint8_t want[256], got[256];
	size_t n = unit_unhex(acc_v2_d_fc, want, sizeof(want));
	struct clc_smcd_accept a, d;

	memset(&a, 0, sizeof(a));
	a.type = CLC_ACCEPT;
	a.version = CLC_V2;
	a.first_contact = true;
	a.gid = 0x1122334455667788ull;
	a.token = 0x0000000100000002ull;
	a.dmbe_size = 2;
	a.linkid = 0x01020304;
	a.chid = 0xffff;
	memcpy(a.eid, eid1, 32);
	a.gid_ext = 0x99aabbccddeeff00ull;
	fce_linux(&a.fce, "host-a", false);
	a.fce.max_conns = a.fce.max_links = 0;
	CHECK_INT(clc_smcd_accept_decode(want, n, &d), n);
	CHECK(!memcmp(&d, &a, sizeof(d)));
	CHECK_INT(clc_smcd_accept_encode(&a, got, sizeof(got)), n);
	CHECK_BYTES(got, want, n);
	/* release 0: the 36-byte extension, 114 bytes */
	a.fce.release = 0;
	a.fce.feature_mask = 0;
	CHECK_INT(clc_smcd_accept_encode(&a, got, sizeof(got)), CLC_SMCD_ACCEPT_FC_LEN_R0);
	CHECK_INT(clc_smcd_accept_decode(got, CLC_SMCD_ACCEPT_FC_LEN_R0, &d), CLC_SMCD_ACCEPT_FC_LEN_R0);
	CHECK(!memcmp(&d, &a, sizeof(d)));
}

static void check_decline(const struct clc_decline *dc, const char *golden)
{
	uint8_t want[64], got[64];
	size_t n = unit_unhex(golden, want, sizeof(want));
	struct clc_decline d;

	CHECK_INT(clc_decline_encode(dc, got, sizeof(got)), n);
	CHECK_BYTES(got, want, n);
	CHECK_INT(clc_decline_decode(want, n, &d), n);
	CHECK(!memcmp(&d, dc, sizeof(d)));
}

TEST(clc_golden_decline)
{
	struct clc_decline d;

	memset(&d, 0, sizeof(d));
	d.version = CLC_V1;
	memcpy(d.system_id, sysid, 8);
	d.peer_diagnosis = 0x03030000;          /* NOSMCDEV */
	check_decline(&d, decl_v1);
	d.version = CLC_V2;
	d.out_of_sync = true;
	d.peer_diagnosis = 0x04000000;          /* SYNCERR */
	d.os_type = CLC_OS_LINUX;
	check_decline(&d, decl_v2_sync);
}

TEST(clc_hdr_peek_fields)
{
	uint8_t b[256];
	size_t n = unit_unhex(conf_v2_r_fc1, b, sizeof(b));
	struct clc_hdr h;

	CHECK_INT(clc_hdr_peek(b, CLC_HDR_LEN, &h), 0);
	CHECK_INT(h.type, CLC_CONFIRM);
	CHECK_INT(h.length, n);
	CHECK_INT(h.version, 2);
	CHECK_INT(h.typev1, CLC_SMC_R);
	CHECK_INT(h.typev2, CLC_FIRST_CONTACT);
	CHECK(!h.smcd_eye);
	n = unit_unhex(acc_v2_d_fc, b, sizeof(b));
	CHECK_INT(clc_hdr_peek(b, n, &h), 0);
	CHECK(h.smcd_eye && h.typev1 == CLC_SMC_D && h.length == 130);
	CHECK_INT(clc_hdr_peek(b, 7, &h), -EMSGSIZE);
}

/* The golden messages and their decoders, for the rules every decoder follows. */
static int dec_prop(const uint8_t *b, size_t n)
{
	struct clc_proposal p;

	return clc_proposal_decode(b, n, &p);
}

static int dec_smcr(const uint8_t *b, size_t n)
{
	struct clc_smcr_accept a;

	return clc_smcr_accept_decode(b, n, &a);
}

static int dec_smcd(const uint8_t *b, size_t n)
{
	struct clc_smcd_accept a;

	return clc_smcd_accept_decode(b, n, &a);
}

static int dec_decl(const uint8_t *b, size_t n)
{
	struct clc_decline d;

	return clc_decline_decode(b, n, &d);
}

static const struct golden {
	const char *name, *hex;
	int (*dec)(const uint8_t *b, size_t n);
} goldens[] = {
	{ "prop_v2_r_ueid", prop_v2_r_ueid, dec_prop },
	{ "prop_v2_rr", prop_v2_rr, dec_prop },
	{ "prop_v1_r6", prop_v1_r6, dec_prop },
	{ "acc_v1_r", acc_v1_r, dec_smcr },
	{ "acc_v2_r_fc", acc_v2_r_fc, dec_smcr },
	{ "conf_v2_r_fc1", conf_v2_r_fc1, dec_smcr },
	{ "acc_v2_d_fc", acc_v2_d_fc, dec_smcd },
	{ "decl_v1", decl_v1, dec_decl },
	{ "decl_v2_sync", decl_v2_sync, dec_decl },
};
#define NGOLDEN (sizeof(goldens) / sizeof(goldens[0]))

/* Each length short of the whole, in a buffer of exactly that size (ASan sees any over-read). */
TEST(clc_truncated_every_length)
{
	uint8_t b[256];

	for (size_t g = 0; g < NGOLDEN; g++) {
		size_t n = unit_unhex(goldens[g].hex, b, sizeof(b));

		for (size_t len = 0; len < n; len++) {
			uint8_t *t = malloc(len ? len : 1);
			int rc;

			memcpy(t, b, len);
			rc = goldens[g].dec(t, len);
			free(t);
			if (rc != -EMSGSIZE)
				unit_fail(__FILE__, __LINE__, "%s cut to %zu: %d", goldens[g].name, len, rc);
		}
		/* and a byte more is not read */
		CHECK_INT(goldens[g].dec(b, n), n);
	}
}

/* Damage common to all: header and trailer, version, type, length. */
TEST(clc_rejects_bad_frames)
{
	uint8_t b[260], c[260];

	for (size_t g = 0; g < NGOLDEN; g++) {
		size_t n = unit_unhex(goldens[g].hex, b, sizeof(b));
		bool decline = goldens[g].dec == dec_decl;
		struct { size_t off; uint8_t v; int rc; } bad[] = {
			{ 0, 0xe3, -EPROTO }, { 3, 0xd8, -EPROTO },     /* header eyecatcher */
			{ 7, b[7] & 0x0f, -EPROTO },                    /* version 0 */
			{ 4, 0, -EPROTO }, { 4, 5, -EPROTO },           /* type */
			{ n - 1, 0xd8, decline ? (int)n : -EPROTO },    /* trailer: not for DECLINE */
			{ n - 4, 0, decline ? (int)n : -EPROTO },
			{ 6, (uint8_t)(n - 1), -EPROTO },               /* length one short */
		};
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			int rc;

			memcpy(c, b, n);
			c[bad[i].off] = bad[i].v;
			rc = goldens[g].dec(c, n);
			if (rc != bad[i].rc)
				unit_fail(__FILE__, __LINE__, "%s byte %zu = %02x: %d, expected %d",
					  goldens[g].name, bad[i].off, bad[i].v, rc, bad[i].rc);
		}
		/* one byte longer, said by the header, with the trailer moved along */
		memcpy(c, b, n);
		memcpy(c + n, b + n - 4, 4);
		c[6] = (uint8_t)(n + 1);
		if (goldens[g].dec(c, n + 1) != -EPROTO && goldens[g].dec != dec_smcr &&
		    goldens[g].dec != dec_smcd)
			unit_fail(__FILE__, __LINE__, "%s one byte longer decoded", goldens[g].name);
	}
}

/* The golden at name with byte off set to v, decoded by its decoder. */
static int mutated(const char *hex, int (*dec)(const uint8_t *, size_t), size_t off, uint8_t v)
{
	uint8_t b[256];
	size_t n = unit_unhex(hex, b, sizeof(b));

	b[off] = v;
	return dec(b, n);
}

TEST(clc_rejects_bad_proposals)
{
	/* iparea_offset past the SMC-D area */
	CHECK_INT(mutated(prop_v2_rr, dec_prop, 39, 41), -EPROTO);
	/* 9 IPv6 prefixes; and a count that does not match the length */
	CHECK_INT(mutated(prop_v1_r6, dec_prop, 47, 9), -EPROTO);
	CHECK_INT(mutated(prop_v1_r6, dec_prop, 47, 2), -EPROTO);
	CHECK_INT(mutated(prop_v2_rr, dec_prop, 87, 1), -EPROTO);
	/* eid_cnt 9, and 2 (length) */
	CHECK_INT(mutated(prop_v2_rr, dec_prop, 88, 9), -EPROTO);
	CHECK_INT(mutated(prop_v2_rr, dec_prop, 88, 2), -EPROTO);
	/* v2_ext_offset 0, past Linux's maximum, and with the extension past the message */
	CHECK_INT(mutated(prop_v2_rr, dec_prop, 51, 0), -EPROTO);
	CHECK_INT(mutated(prop_v2_rr, dec_prop, 51, 173), -EPROTO);
	CHECK_INT(mutated(prop_v2_rr, dec_prop, 51, 100), -EPROTO);
	/* version 1 offering no v1 */
	CHECK_INT(mutated(prop_v1_r6, dec_prop, 7, 0x1a), -EPROTO);
	/* typev1 B needs the SMC-D area at offset 40 for the v2 extension to be found */
	CHECK_INT(mutated(prop_v2_r_ueid, dec_prop, 7, 0x2f & ~0x0c), -EPROTO);
	/* offering SMC-Dv2 too: the length lacks the SMC-Dv2 extension */
	CHECK_INT(mutated(prop_v2_rr, dec_prop, 7, 0x2c), -EPROTO);
	/* another message's decoder */
	CHECK_INT(mutated(prop_v2_rr, dec_smcr, 0, 0xe2), -EPROTO);
	CHECK_INT(mutated(prop_v2_rr, dec_decl, 0, 0xe2), -EPROTO);
	/* a proposal Linux accepts: the iparea_offset of a v1 SMC-R offer only moves the prefix */
	{
		uint8_t b[256];
		size_t n = unit_unhex(prop_v1_r6, b, sizeof(b));
		struct clc_proposal p;

		memmove(b + 40 + 8, b + 40, n - 40);
		memset(b + 40, 0, 8);
		b[39] = 8;
		b[6] = (uint8_t)(n + 8);
		CHECK_INT(clc_proposal_decode(b, n + 8, &p), n + 8);
		CHECK(p.ipv6_cnt == 1 && p.ipv6[0].len == 64 && p.ipv6[0].prefix[0] == 0xfd);
	}
}

TEST(clc_proposal_smcd_offers)
{
	struct clc_proposal p, d;
	uint8_t b[CLC_PROPOSAL_MAX];
	int n;

	memset(&p, 0, sizeof(p));
	p.version = CLC_V2;
	p.typev1 = CLC_SMC_B;
	p.typev2 = CLC_SMC_B;
	p.ism_gid = 0x0102030405060708ull;
	p.ism_chid = 0x0304;
	p.ipv6_cnt = CLC_MAX_V6_PREFIX;
	p.eid_cnt = CLC_MAX_UEID;
	p.smcd_ext = true;
	p.ism_gid_cnt = CLC_MAX_ISM_GIDS;
	p.ism_gids[7].gid = 0xfedcba9876543210ull;
	p.ism_gids[7].chid = 0xffff;
	n = clc_proposal_encode(&p, b, sizeof(b));
	CHECK_INT(n, CLC_PROPOSAL_MAX);
	CHECK_INT(clc_proposal_decode(b, (size_t)n, &d), n);
	CHECK(!memcmp(&d, &p, sizeof(d)));
	/* byte 7: version 2, both and both; the SMC-Dv2 extension at 32 + 32 * 8 from +8 */
	CHECK_INT(b[7], 0x2f);
	CHECK_INT(b[38] << 8 | b[39], 40);
	CHECK_INT(b[224 + 6] << 8 | b[224 + 7], 32 + 32 * 8);
	/* ism_gid_cnt 9 */
	b[225] = 9;
	CHECK_INT(clc_proposal_decode(b, (size_t)n, &d), -EPROTO);
	b[225] = 8;
	/* no SMC-Dv2 extension: the counts stay, its fields are not read */
	b[230] = b[231] = 0;
	CHECK_INT(clc_proposal_decode(b, (size_t)n, &d), n);
	CHECK(!d.smcd_ext && d.ism_gid_cnt == 8 && !d.ism_gids[7].gid);
	/* past Linux's maximum offset: none either */
	b[230] = 0x01;
	b[231] = 0x21;
	CHECK_INT(clc_proposal_decode(b, (size_t)n, &d), n);
	CHECK(!d.smcd_ext);
	/* without EIDs, an offset can put the extension past the message */
	p.eid_cnt = 0;
	n = clc_proposal_encode(&p, b, sizeof(b));
	CHECK_INT(n, CLC_PROPOSAL_MAX - 8 * 32);
	CHECK_INT(b[224 + 7], 32);
	b[224 + 7] = 100;
	CHECK_INT(clc_proposal_decode(b, (size_t)n, &d), -EPROTO);
	p.eid_cnt = CLC_MAX_UEID;
	/* encoders' limits */
	p.ipv6_cnt = 9;
	CHECK_INT(clc_proposal_encode(&p, b, sizeof(b)), -EINVAL);
	p.ipv6_cnt = 0;
	p.eid_cnt = 9;
	CHECK_INT(clc_proposal_encode(&p, b, sizeof(b)), -EINVAL);
	p.eid_cnt = 0;
	CHECK_INT(clc_proposal_encode(&p, b, sizeof(b)) > 0, 1);
	CHECK_INT(clc_proposal_encode(&p, b, 100), -ENOSPC);
	p.version = 0;
	CHECK_INT(clc_proposal_encode(&p, b, sizeof(b)), -EINVAL);
}

TEST(clc_rejects_bad_accepts)
{
	uint8_t b[256];
	struct clc_smcr_accept a;
	size_t n;

	/* typev1 none or both; D in an SMC-R message; R in an SMC-D one */
	CHECK_INT(mutated(acc_v1_r, dec_smcr, 7, 0x1a), -EPROTO);
	CHECK_INT(mutated(acc_v1_r, dec_smcr, 7, 0x1b), -EPROTO);
	CHECK_INT(mutated(acc_v2_d_fc, dec_smcr, 0, 0xe2), -EPROTO);
	CHECK_INT(mutated(acc_v2_d_fc, dec_smcd, 7, 0x28), -EPROTO);
	/* version 1 is exactly 68: 69 with the trailer moved */
	n = unit_unhex(acc_v1_r, b, sizeof(b));
	memcpy(b + n, b + n - 4, 4);
	b[6] = 69;
	CHECK_INT(clc_smcr_accept_decode(b, 69, &a), -EPROTO);
	/* version 2 at least 108; longer is fine */
	CHECK_INT(mutated(acc_v2_r_fc, dec_smcr, 6, 107), -EPROTO);
	n = unit_unhex(acc_v2_r_fc, b, sizeof(b));
	memcpy(b + n + 4, b + n - 4, 4);
	b[6] = (uint8_t)(n + 8);
	CHECK_INT(clc_smcr_accept_decode(b, n + 8, &a), n + 8);
	/* first contact without room for the extension */
	n = unit_unhex(acc_v2_r_fc, b, sizeof(b));
	memcpy(b + 120, b + n - 4, 4);
	b[6] = 124;
	CHECK_INT(clc_smcr_accept_decode(b, 124, &a), -EPROTO);
	/* a 144-byte extension of release 0 is fine, of release 1 not */
	memcpy(b + 140, b + n - 4, 4);
	b[6] = 144;
	CHECK_INT(clc_smcr_accept_decode(b, 144, &a), -EPROTO);
	b[105] = 0x20;
	CHECK_INT(clc_smcr_accept_decode(b, 144, &a), 144);
	CHECK(a.fce.release == 0 && a.fce.os_type == 2 && !a.fce.max_conns);
	/* GID list: 3 GIDs, 2 for the length of 1 */
	CHECK_INT(mutated(conf_v2_r_fc1, dec_smcr, 156, 3), -EPROTO);
	CHECK_INT(mutated(conf_v2_r_fc1, dec_smcr, 156, 2), -EPROTO);
	CHECK_INT(mutated(conf_v2_r_fc1, dec_smcr, 156, 0), 180);
	/* SMC-D: 48 exactly in version 1, 78 at least in 2 */
	CHECK_INT(mutated(acc_v2_d_fc, dec_smcd, 6, 77), -EPROTO);
	CHECK_INT(mutated(acc_v2_d_fc, dec_smcd, 7, 0x19), -EPROTO);
	/* encoders' limits */
	smcr_base(&a, CLC_CONFIRM, CLC_V2, true);
	a.gid_cnt = 3;
	CHECK_INT(clc_smcr_accept_encode(&a, b, sizeof(b)), -EINVAL);
	a.gid_cnt = 2;
	CHECK_INT(clc_smcr_accept_encode(&a, b, sizeof(b)), CLC_SMCR_CONFIRM_FC_LEN(2));
	CHECK_INT(clc_smcr_accept_encode(&a, b, CLC_SMCR_CONFIRM_FC_LEN(2) - 1), -ENOSPC);
	a.qpn = 1u << 24;
	CHECK_INT(clc_smcr_accept_encode(&a, b, sizeof(b)), -EINVAL);
	a.qpn = 0;
	a.qp_mtu = 16;
	CHECK_INT(clc_smcr_accept_encode(&a, b, sizeof(b)), -EINVAL);
	a.qp_mtu = 0;
	a.type = CLC_DECLINE;
	CHECK_INT(clc_smcr_accept_encode(&a, b, sizeof(b)), -EINVAL);
}

TEST(clc_rejects_bad_declines)
{
	uint8_t b[64];
	struct clc_decline d;
	size_t n = unit_unhex(decl_v1, b, sizeof(b));

	/* exactly 28 in version 1, 44 in 2 */
	CHECK_INT(mutated(decl_v1, dec_decl, 7, 0x20), -EPROTO);
	CHECK_INT(mutated(decl_v2_sync, dec_decl, 7, 0x18), -EPROTO);
	CHECK_INT(mutated(decl_v1, dec_decl, 6, 29), -EPROTO);
	/* typev1 none or both (Linux: smc_clc_msg_decl_valid) */
	CHECK_INT(mutated(decl_v1, dec_decl, 7, 0x12), -EPROTO);
	CHECK_INT(mutated(decl_v1, dec_decl, 7, 0x13), -EPROTO);
	/* SMC-D's eyecatcher and typev1 are fine */
	CHECK_INT(mutated(decl_v1, dec_decl, 3, 0xc4), 28);
	CHECK_INT(mutated(decl_v1, dec_decl, 7, 0x11), 28);
	CHECK_INT(clc_decline_decode(b, n, &d), 28);
	CHECK(!d.out_of_sync && d.peer_diagnosis == 0x03030000 && !d.os_type);
	d.os_type = 16;
	CHECK_INT(clc_decline_encode(&d, b, sizeof(b)), -EINVAL);
	d.os_type = 2;
	CHECK_INT(clc_decline_encode(&d, b, 27), -ENOSPC);
}

TEST(clc_size_code)
{
	CHECK_INT(smc_size_code(0, SMC_SIZE_CODE_SMCR), 0);
	CHECK_INT(smc_size_code(16384, SMC_SIZE_CODE_SMCR), 0);
	CHECK_INT(smc_size_code(16385, SMC_SIZE_CODE_SMCR), 1);
	CHECK_INT(smc_size_code(65536, SMC_SIZE_CODE_SMCR), 2);
	CHECK_INT(smc_size_code(65537, SMC_SIZE_CODE_SMCR), 3);
	CHECK_INT(smc_size_code(512u << 20, SMC_SIZE_CODE_SMCR), 15);
	CHECK_INT(smc_size_code(1u << 30, SMC_SIZE_CODE_SMCR), 15);
	CHECK_INT(smc_size_code(2u << 20, SMC_SIZE_CODE_SMCD), 6);
	CHECK_INT(smc_code_size(0), 16384);
	CHECK_INT(smc_code_size(15), 512u << 20);
	for (uint8_t c = 0; c <= 15; c++)
		CHECK_INT(smc_size_code(smc_code_size(c), SMC_SIZE_CODE_SMCR), c);
}

/* xorshift64*, fixed seed: the same structs every run. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static unsigned upto(unsigned n)
{
	return (unsigned)(rnd() % (n + 1));
}

static void rnd_bytes(void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		((uint8_t *)p)[i] = (uint8_t)rnd();
}

/* A random proposal, with 0 in whatever its message does not carry. */
static void rnd_proposal(struct clc_proposal *p)
{
	memset(p, 0, sizeof(*p));
	p->version = (uint8_t)(1 + upto(2));
	p->typev1 = (uint8_t)upto(3);
	if (p->version == CLC_V1 && p->typev1 == CLC_SMC_N)
		p->typev1 = CLC_SMC_R;
	p->typev2 = (uint8_t)upto(3);
	rnd_bytes(p->system_id, 8);
	rnd_bytes(p->gid, 16);
	rnd_bytes(p->mac, 6);
	if (p->typev1 == CLC_SMC_D || p->typev1 == CLC_SMC_B) {
		p->ism_gid = rnd();
		p->ism_chid = (uint16_t)rnd();
	}
	if (p->typev1 != CLC_SMC_N) {
		rnd_bytes(p->ipv4_subnet, 4);
		p->ipv4_prefix_len = (uint8_t)rnd();
		p->ipv6_cnt = (uint8_t)upto(CLC_MAX_V6_PREFIX);
		rnd_bytes(p->ipv6, sizeof(p->ipv6[0]) * p->ipv6_cnt);
	}
	if (p->version == CLC_V1 || p->typev2 == CLC_SMC_N)
		return;
	p->eid_cnt = (uint8_t)upto(CLC_MAX_UEID);
	rnd_bytes(p->eid, (size_t)CLC_EID_LEN * p->eid_cnt);
	p->seid = rnd() & 1;
	p->release = (uint8_t)upto(15);
	rnd_bytes(p->roce_gid, 16);
	p->max_conns = (uint8_t)rnd();
	p->max_links = (uint8_t)rnd();
	p->feature_mask = (uint16_t)rnd();
	if (p->typev2 != CLC_SMC_D && p->typev2 != CLC_SMC_B)
		return;
	p->ism_gid_cnt = (uint8_t)upto(CLC_MAX_ISM_GIDS);
	p->smcd_ext = rnd() & 1;
	if (!p->smcd_ext)
		return;
	rnd_bytes(p->system_eid, 32);
	for (unsigned i = 0; i < p->ism_gid_cnt; i++) {
		p->ism_gids[i].gid = rnd();
		p->ism_gids[i].chid = (uint16_t)rnd();
	}
}

static void rnd_fce(struct clc_fce *f, bool smcr)
{
	f->v2_direct = rnd() & 1;
	f->os_type = (uint8_t)upto(15);
	f->release = (uint8_t)upto(2);
	rnd_bytes(f->hostname, sizeof(f->hostname));
	if (!f->release)
		return;
	if (smcr) {
		f->max_conns = (uint8_t)rnd();
		f->max_links = (uint8_t)rnd();
	}
	f->feature_mask = (uint16_t)rnd();
	f->vendor_opts = (uint32_t)rnd();
}

static void rnd_smcr(struct clc_smcr_accept *a)
{
	memset(a, 0, sizeof(*a));
	a->type = rnd() & 1 ? CLC_ACCEPT : CLC_CONFIRM;
	a->version = (uint8_t)(1 + upto(1));
	a->first_contact = rnd() & 1;
	rnd_bytes(a->system_id, 8);
	rnd_bytes(a->gid, 16);
	rnd_bytes(a->mac, 6);
	a->qpn = (uint32_t)rnd() & 0xffffff;
	a->rmb_rkey = (uint32_t)rnd();
	a->rmbe_idx = (uint8_t)rnd();
	a->rmbe_alert_token = (uint32_t)rnd();
	a->rmbe_size = (uint8_t)upto(15);
	a->qp_mtu = (uint8_t)upto(15);
	a->rmb_addr = rnd();
	a->psn = (uint32_t)rnd() & 0xffffff;
	if (a->version == CLC_V1)
		return;
	rnd_bytes(a->eid, 32);
	if (!a->first_contact)
		return;
	rnd_fce(&a->fce, true);
	if (a->type == CLC_CONFIRM) {
		a->gid_cnt = (uint8_t)upto(CLC_MAX_GIDLIST);
		rnd_bytes(a->gids, (size_t)CLC_GID_LEN * a->gid_cnt);
	}
}

static void rnd_smcd(struct clc_smcd_accept *a)
{
	memset(a, 0, sizeof(*a));
	a->type = rnd() & 1 ? CLC_ACCEPT : CLC_CONFIRM;
	a->version = (uint8_t)(1 + upto(1));
	a->first_contact = rnd() & 1;
	a->gid = rnd();
	a->token = rnd();
	a->dmbe_idx = (uint8_t)rnd();
	a->dmbe_size = (uint8_t)upto(15);
	a->linkid = (uint32_t)rnd();
	if (a->version == CLC_V1)
		return;
	a->chid = (uint16_t)rnd();
	rnd_bytes(a->eid, 32);
	a->gid_ext = rnd();
	if (a->first_contact)
		rnd_fce(&a->fce, false);
}

static void rnd_decline(struct clc_decline *d)
{
	memset(d, 0, sizeof(*d));
	d->version = (uint8_t)(1 + upto(1));
	d->out_of_sync = rnd() & 1;
	rnd_bytes(d->system_id, 8);
	d->peer_diagnosis = (uint32_t)rnd();
	d->os_type = (uint8_t)upto(15);
	if (d->version != CLC_V1)
		for (int i = 0; i < CLC_DECL_DIAG_V2; i++)
			d->diag_v2[i] = (uint32_t)rnd();
}

/* encode, decode: the same struct; encode again: the same bytes. */
#define ROUND_TRIP(kind, type, x)                                                       \
	do {                                                                           \
		uint8_t b1[CLC_PROPOSAL_MAX], b2[CLC_PROPOSAL_MAX];                    \
		type rt_;                                                              \
		int n1 = clc_##kind##_encode(x, b1, sizeof(b1)), n2;                   \
		if (n1 < 0 || clc_##kind##_decode(b1, (size_t)n1, &rt_) != n1 ||       \
		    memcmp(&rt_, x, sizeof(rt_)) ||                                    \
		    (n2 = clc_##kind##_encode(&rt_, b2, sizeof(b2))) != n1 ||          \
		    memcmp(b1, b2, (size_t)n1)) {                                      \
			unit_fail(__FILE__, __LINE__, #kind " round trip %d: %d", i, n1); \
			return;                                                        \
		}                                                                      \
	} while (0)

TEST(clc_roundtrip_random)
{
	for (int i = 0; i < 4000; i++) {
		struct clc_proposal p;
		struct clc_smcr_accept r;
		struct clc_smcd_accept d;
		struct clc_decline dc;

		rnd_proposal(&p);
		ROUND_TRIP(proposal, struct clc_proposal, &p);
		rnd_smcr(&r);
		ROUND_TRIP(smcr_accept, struct clc_smcr_accept, &r);
		rnd_smcd(&d);
		ROUND_TRIP(smcd_accept, struct clc_smcd_accept, &d);
		rnd_decline(&dc);
		ROUND_TRIP(decline, struct clc_decline, &dc);
	}
}
