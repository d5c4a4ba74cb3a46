/*
 * SMC-R CDC messages and cursors (wire/smcr_cdc.h): a golden message laid
 * out as Linux's struct smc_cdc_msg, every rejection, and the cursor
 * functions against a model of absolute byte positions.
 */
#include "unit.h"
#include "wire/smcr_cdc.h"

#include <errno.h>
#include <stdlib.h>

/* seqno 0x1234, token 0xa1b2c3d4, prod {0x0102, 0x10203}, cons {0xffff, 0xfffe}, flags 0x90 0x80 */
static const char golden_hex[] =
	"fe 2c 1234 a1b2c3d4"
	"0000 0102 00010203"
	"0000 ffff 0000fffe"
	"90 80"
	"0000 0000 0000 0000 0000 0000 0000 0000 0000";

static const struct smcr_cdc golden = {
	.seqno = 0x1234, .token = 0xa1b2c3d4,
	.prod = { .wrap = 0x0102, .count = 0x00010203 },
	.cons = { .wrap = 0xffff, .count = 0x0000fffe },
	.prod_flags = CDC_PF_WRITE_BLOCKED | CDC_PF_CONS_UPD_REQ,
	.conn_state_flags = CDC_CF_DONE_WRITING,
};

static bool cdc_eq(const struct smcr_cdc *a, const struct smcr_cdc *b)
{
	return a->seqno == b->seqno && a->token == b->token && a->prod.wrap == b->prod.wrap &&
	       a->prod.count == b->prod.count && a->cons.wrap == b->cons.wrap &&
	       a->cons.count == b->cons.count && a->prod_flags == b->prod_flags &&
	       a->conn_state_flags == b->conn_state_flags;
}

TEST(smcr_cdc_golden)
{
	uint8_t want[64], buf[SMCR_WR_BUF_SIZE];
	struct smcr_cdc m;

	CHECK_INT(unit_unhex(golden_hex, want, sizeof(want)), SMCR_CDC_LEN);
	memset(buf, 0xaa, sizeof(buf));
	CHECK_INT(smcr_cdc_encode(&golden, buf, sizeof(buf)), SMCR_CDC_LEN);
	CHECK(!memcmp(buf, want, SMCR_CDC_LEN));
	CHECK_INT(buf[SMCR_CDC_LEN], 0xaa);     /* the rest of the buffer is not ours */
	memset(&m, 0, sizeof(m));
	CHECK_INT(smcr_cdc_decode(want, SMCR_CDC_LEN, &m), 0);
	CHECK(cdc_eq(&m, &golden));
	CHECK_INT(m.prod.count, 0x10203);
	CHECK_INT(m.cons.wrap, 0xffff);
	CHECK_INT(smcr_cdc_encode(&golden, buf, SMCR_CDC_LEN - 1), -EMSGSIZE);
}

TEST(smcr_cdc_rejects)
{
	uint8_t want[64], bad[64];
	struct smcr_cdc m;

	unit_unhex(golden_hex, want, sizeof(want));
	/* Linux drops fewer bytes than its fields need, and takes the rest */
	for (size_t len = 0; len <= SMCR_CDC_LEN; len++)
		CHECK_INT(smcr_cdc_decode(want, len, &m), len < SMCR_CDC_MIN_LEN ? -EMSGSIZE : 0);
	for (unsigned v = 0; v < 256; v++) {
		memcpy(bad, want, SMCR_CDC_LEN);
		bad[0] = (uint8_t)v;
		CHECK_INT(smcr_cdc_decode(bad, SMCR_CDC_LEN, &m), v == SMCR_CDC_TYPE ? 0 : -EPROTO);
		memcpy(bad, want, SMCR_CDC_LEN);
		bad[1] = (uint8_t)v;
		CHECK_INT(smcr_cdc_decode(bad, SMCR_CDC_LEN, &m), v == SMCR_CDC_LEN ? 0 : -EPROTO);
	}
}

TEST(smcr_cdc_reserved_ignored)
{
	uint8_t buf[64];
	struct smcr_cdc m;

	unit_unhex(golden_hex, buf, sizeof(buf));
	buf[8] = buf[9] = buf[16] = buf[17] = 0xff;     /* the cursors' reserved halves */
	for (int i = 26; i < 44; i++)
		buf[i] = (uint8_t)i;
	buf[24] |= CDC_PF_RESERVED;
	buf[25] |= CDC_CF_RESERVED;
	CHECK_INT(smcr_cdc_decode(buf, SMCR_CDC_LEN, &m), 0);
	CHECK_INT(m.prod.wrap, 0x0102);
	CHECK_INT(m.cons.wrap, 0xffff);
	CHECK_INT(m.prod_flags, 0x97);
	CHECK_INT(m.conn_state_flags, 0x9f);
	CHECK_INT(smcr_cdc_encode(&m, buf, sizeof(buf)), SMCR_CDC_LEN);
	CHECK_INT(buf[8] | buf[9] | buf[16] | buf[17] | buf[30] | buf[43], 0);
}

/* Soft SMC-R's words in the reserved bytes: a magic, the flags, the fence. */
TEST(smcr_cdc_soft_words)
{
	uint8_t want[64], buf[SMCR_WR_BUF_SIZE];
	struct smcr_cdc m = golden, d;

	m.soft_flags = CDC_SOFT_ATTACHED | CDC_SOFT_FENCE;
	m.soft_fence = 0x0102030405060708ULL;
	CHECK_INT(unit_unhex(golden_hex, want, sizeof(want)), SMCR_CDC_LEN);
	memcpy(want + 26, "soft\x03\x00\x01\x02\x03\x04\x05\x06\x07\x08", 14);
	CHECK_INT(smcr_cdc_encode(&m, buf, sizeof(buf)), SMCR_CDC_LEN);
	CHECK(!memcmp(buf, want, SMCR_CDC_LEN));
	CHECK_INT(smcr_cdc_decode(buf, SMCR_CDC_LEN, &d), 0);
	CHECK(cdc_eq(&d, &golden));
	CHECK_INT(d.soft_flags, CDC_SOFT_ATTACHED | CDC_SOFT_FENCE);
	CHECK(d.soft_fence == 0x0102030405060708ULL);
	/* too short to hold them: none */
	CHECK_INT(smcr_cdc_decode(buf, SMCR_CDC_SOFT_LEN - 1, &d), 0);
	CHECK_INT(d.soft_flags, 0);
	/* without the magic (a kernel's zeros, anything else): none */
	buf[26] ^= 1;
	CHECK_INT(smcr_cdc_decode(buf, SMCR_CDC_LEN, &d), 0);
	CHECK_INT(d.soft_flags, 0);
	CHECK(d.soft_fence == 0);
	/* unknown flag bits are dropped; a fence without its flag is not read */
	buf[26] ^= 1;
	buf[30] = 0x81;
	CHECK_INT(smcr_cdc_decode(buf, SMCR_CDC_LEN, &d), 0);
	CHECK_INT(d.soft_flags, CDC_SOFT_ATTACHED);
	CHECK(d.soft_fence == 0);
	/* BACK_OK and BACK are bits 3 and 4 */
	buf[30] = 0x19;
	CHECK_INT(smcr_cdc_decode(buf, SMCR_CDC_LEN, &d), 0);
	CHECK_INT(d.soft_flags, CDC_SOFT_ATTACHED | CDC_SOFT_BACK_OK | CDC_SOFT_BACK);
	/* no words: the reserved bytes stay zero, as Linux sends them */
	m.soft_flags = 0;
	CHECK_INT(smcr_cdc_encode(&m, buf, sizeof(buf)), SMCR_CDC_LEN);
	unit_unhex(golden_hex, want, sizeof(want));
	CHECK(!memcmp(buf, want, SMCR_CDC_LEN));
}

/* Bytes inside a CDC: the count in byte 31, the bytes after the 44; counts that lie are refused. */
TEST(smcr_cdc_data_inside)
{
	uint8_t data[SMCR_CDC_DATA_MAX + 1], buf[SMCR_CDC_LEN + SMCR_CDC_DATA_MAX + 8];
	struct smcr_cdc m = golden, d;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(0xa0 + i);
	m.soft_flags = CDC_SOFT_DATA_OK | CDC_SOFT_DATA;
	m.data = data;
	m.data_len = 14;
	CHECK_INT(smcr_cdc_encode(&m, buf, SMCR_CDC_LEN + 13), -EMSGSIZE);
	CHECK_INT(smcr_cdc_encode(&m, buf, sizeof(buf)), SMCR_CDC_LEN + 14);
	CHECK(!memcmp(buf + 26, "soft\x60\x0e", 6));
	CHECK(!memcmp(buf + SMCR_CDC_LEN, data, 14));
	CHECK_INT(smcr_cdc_decode(buf, SMCR_CDC_LEN + 14, &d), 0);
	CHECK(cdc_eq(&d, &golden));
	CHECK_INT(d.soft_flags, CDC_SOFT_DATA_OK | CDC_SOFT_DATA);
	CHECK_INT(d.data_len, 14);
	CHECK(d.data == buf + SMCR_CDC_LEN);
	/* fewer bytes than the count says, no count, or more than a slot holds */
	CHECK_INT(smcr_cdc_decode(buf, SMCR_CDC_LEN + 13, &d), -EBADMSG);
	CHECK_INT(d.token, golden.token);
	buf[31] = 0;
	CHECK_INT(smcr_cdc_decode(buf, sizeof(buf), &d), -EBADMSG);
	buf[31] = SMCR_CDC_DATA_MAX + 1;
	CHECK_INT(smcr_cdc_decode(buf, sizeof(buf), &d), -EBADMSG);
	CHECK_INT(d.data_len, 0);
	m.data_len = SMCR_CDC_DATA_MAX + 1;
	CHECK_INT(smcr_cdc_encode(&m, buf, sizeof(buf)), -EINVAL);
	m.data_len = 0;
	CHECK_INT(smcr_cdc_encode(&m, buf, sizeof(buf)), -EINVAL);
	/* the most a slot holds */
	m.data_len = SMCR_CDC_DATA_MAX;
	CHECK_INT(smcr_cdc_encode(&m, buf, sizeof(buf)), SMCR_CDC_LEN + SMCR_CDC_DATA_MAX);
	CHECK_INT(smcr_cdc_decode(buf, SMCR_CDC_LEN + SMCR_CDC_DATA_MAX, &d), 0);
	CHECK(!memcmp(d.data, data, SMCR_CDC_DATA_MAX));
	/* the count is not read without the flag, nor the flag without the magic */
	m.soft_flags = CDC_SOFT_DATA_OK;
	CHECK_INT(smcr_cdc_encode(&m, buf, sizeof(buf)), SMCR_CDC_LEN);
	CHECK_INT(buf[31], 0);
	buf[31] = 9;
	CHECK_INT(smcr_cdc_decode(buf, SMCR_CDC_LEN, &d), 0);
	CHECK_INT(d.data_len, 0);
	CHECK(d.data == NULL);
	buf[30] |= CDC_SOFT_DATA;
	buf[26] = 0;
	CHECK_INT(smcr_cdc_decode(buf, SMCR_CDC_LEN, &d), 0);
	CHECK_INT(d.soft_flags, 0);
	CHECK_INT(d.data_len, 0);
}

static uint64_t rng_state;
static uint64_t rng(void)
{
	return unit_xorshift(&rng_state);
}

TEST(smcr_cdc_random_roundtrip)
{
	uint8_t buf[SMCR_CDC_LEN], again[SMCR_CDC_LEN];
	struct smcr_cdc a, b;

	rng_state = 0x5eed5eed5eedULL;
	for (int i = 0; i < 20000; i++) {
		a = (struct smcr_cdc){
			.seqno = (uint16_t)rng(), .token = (uint32_t)rng(),
			.prod = { (uint16_t)rng(), (uint32_t)rng() },
			.cons = { (uint16_t)rng(), (uint32_t)rng() },
			.prod_flags = (uint8_t)rng(), .conn_state_flags = (uint8_t)rng(),
		};
		CHECK_INT(smcr_cdc_encode(&a, buf, sizeof(buf)), SMCR_CDC_LEN);
		CHECK_INT(smcr_cdc_decode(buf, sizeof(buf), &b), 0);
		CHECK(cdc_eq(&a, &b));
		/* any bytes with the right type and length decode, and re-encode the same */
		for (size_t j = 0; j < sizeof(buf); j++)
			buf[j] = (uint8_t)rng();
		buf[0] = SMCR_CDC_TYPE;
		buf[1] = SMCR_CDC_LEN;
		CHECK_INT(smcr_cdc_decode(buf, sizeof(buf), &a), 0);
		smcr_cdc_encode(&a, again, sizeof(again));
		CHECK(!memcmp(buf + 2, again + 2, 6) && !memcmp(buf + 10, again + 10, 6) &&
		      !memcmp(buf + 18, again + 18, 8));
	}
}

TEST(smcr_cdc_check_hostile)
{
	struct smcr_cdc m = golden;

	m.prod = (struct smcr_curs){ 7, 65535 };
	m.cons = (struct smcr_curs){ 7, 16383 };
	CHECK_INT(smcr_cdc_check(&m, 65536, 16384), 0);
	m.prod.count = 65536;
	CHECK_INT(smcr_cdc_check(&m, 65536, 16384), -EPROTO);
	m.prod.count = 0;
	m.cons.count = 16384;
	CHECK_INT(smcr_cdc_check(&m, 65536, 16384), -EPROTO);
	m.cons.count = UINT32_MAX;
	CHECK_INT(smcr_cdc_check(&m, 65536, 16384), -EPROTO);
	m.cons.count = 0;
	CHECK_INT(smcr_cdc_check(&m, 0, 16384), -EPROTO);
	CHECK_INT(smcr_cdc_check(&m, 65536, SMCR_CURS_MAX_SIZE + 1), -EPROTO);
}

TEST(smcr_seq_before_wrap)
{
	CHECK(smcr_seq_before(0xffff, 0));
	CHECK(!smcr_seq_before(0, 0xffff));
	CHECK(!smcr_seq_before(5, 5));
	CHECK(smcr_seq_before(4, 5));
	CHECK(!smcr_seq_before(0x7fff, 0));
	CHECK(smcr_seq_before(0x8000, 0));
	CHECK(smcr_seq_before(0xfff0, 0x0010));
	CHECK(!smcr_seq_before(0x0010, 0xfff0));
	for (uint32_t a = 0; a < 0x10000; a += 0x101)
		for (uint32_t b = 0; b < 0x10000; b += 0x0fb) {
			int32_t d = (int32_t)a - (int32_t)b;

			/* the model: the shorter way round the circle */
			if (d > 32767)
				d -= 65536;
			else if (d < -32768)
				d += 65536;
			CHECK_INT(smcr_seq_before((uint16_t)a, (uint16_t)b), d < 0);
		}
}

/* The model: a cursor is an absolute byte position p in a ring of size n. */
static struct smcr_curs at(uint64_t p, uint32_t n)
{
	return (struct smcr_curs){ .wrap = (uint16_t)(p / n), .count = (uint32_t)(p % n) };
}

static bool curs_eq(struct smcr_curs a, struct smcr_curs b)
{
	return a.wrap == b.wrap && a.count == b.count;
}

/* Positions near 0 and near the 0xFFFF -> 0 wrap of the wrap counter. */
static uint64_t pos(int i, uint32_t n)
{
	uint64_t lap = 65536ull * n;

	return i < 4 * (int)n ? (uint64_t)i : lap - 4ull * n + (uint64_t)(i - 4 * (int)n);
}

TEST(smcr_curs_model)
{
	static const uint32_t sizes[] = { 1, 2, 3, 5, 8, 13 };

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint32_t n = sizes[s];

		for (int i = 0; i < 8 * (int)n; i++) {
			uint64_t p = pos(i, n);

			for (uint32_t len = 0; len <= n; len++) {
				struct smcr_curs c = at(p, n);

				CHECK_INT(smcr_curs_add(&c, n, len), 0);
				CHECK(curs_eq(c, at(p + len, n)));
				CHECK_INT(smcr_curs_diff(n, at(p, n), at(p + len, n)), len);
				CHECK_INT(smcr_curs_accept(at(p, n), at(p + len, n)), true);
				/* our producer len ahead of the peer's consumer */
				CHECK_INT(smcr_peer_rmbe_space(n, at(p + len, n), at(p, n)), n - len);
			}
			for (uint32_t d = 0; d <= 3 * n; d++)
				CHECK_INT(smcr_curs_diff_large(n, at(p, n), at(p + d, n)), d < n ? d : n);
			for (uint32_t d = n + 1; d <= 3 * n; d++)      /* the peer consumed more than we sent */
				CHECK_INT(smcr_peer_rmbe_space(n, at(p + d, n), at(p, n)), -EPROTO);
			for (uint32_t d = 1; d <= 2 * n && d <= p; d++) /* its consumer ahead of our producer */
				CHECK_INT(smcr_peer_rmbe_space(n, at(p - d, n), at(p, n)), -EPROTO);
		}
	}
}

TEST(smcr_curs_accept_linux_rule)
{
	const struct smcr_curs old = { 5, 100 };

	CHECK(smcr_curs_accept(old, (struct smcr_curs){ 5, 100 }));     /* equal: taken */
	CHECK(smcr_curs_accept(old, (struct smcr_curs){ 5, 101 }));
	CHECK(!smcr_curs_accept(old, (struct smcr_curs){ 5, 99 }));     /* backwards */
	CHECK(smcr_curs_accept(old, (struct smcr_curs){ 6, 0 }));
	CHECK(!smcr_curs_accept(old, (struct smcr_curs){ 4, 200 }));    /* wrap backwards */
	CHECK(smcr_curs_accept((struct smcr_curs){ 0xffff, 7 }, (struct smcr_curs){ 0, 3 }));
	CHECK(!smcr_curs_accept((struct smcr_curs){ 0xffff, 7 }, (struct smcr_curs){ 1, 3 }));
	CHECK(!smcr_curs_accept((struct smcr_curs){ 0xffff, 7 }, (struct smcr_curs){ 0xfffe, 9 }));
	/* Linux's quirks: wrap 0 is taken after any wrap, 0xFFFF after 0 */
	CHECK(smcr_curs_accept(old, (struct smcr_curs){ 0, 0 }));
	CHECK(smcr_curs_accept((struct smcr_curs){ 0, 7 }, (struct smcr_curs){ 0xffff, 0 }));
}

TEST(smcr_curs_hostile)
{
	struct smcr_curs c = { 3, 16 }, ok = { 3, 15 };

	CHECK(!smcr_curs_valid(c, 16));
	CHECK(smcr_curs_valid(ok, 16));
	CHECK(!smcr_curs_valid(ok, 0));
	CHECK(!smcr_curs_valid((struct smcr_curs){ 0, 0 }, SMCR_CURS_MAX_SIZE + 1));
	CHECK(smcr_curs_valid((struct smcr_curs){ 0, SMCR_CURS_MAX_SIZE - 1 }, SMCR_CURS_MAX_SIZE));
	CHECK_INT(smcr_curs_add(&c, 16, 1), -EINVAL);
	CHECK_INT(c.count, 16);                 /* untouched */
	CHECK_INT(smcr_curs_add(&ok, 16, 17), -EINVAL);
	CHECK_INT(smcr_curs_add(&ok, 0, 0), -EINVAL);
	CHECK_INT(smcr_curs_diff(16, c, ok), -EINVAL);
	CHECK_INT(smcr_curs_diff(16, ok, c), -EINVAL);
	CHECK_INT(smcr_curs_diff_large(16, ok, (struct smcr_curs){ 9, UINT32_MAX }), -EINVAL);
	CHECK_INT(smcr_peer_rmbe_space(16, c, ok), -EINVAL);
	CHECK_INT(smcr_peer_rmbe_space(16, ok, (struct smcr_curs){ 3, UINT32_MAX }), -EINVAL);
	/* the largest ring: no overflow at the edges */
	struct smcr_curs big = { 0xffff, SMCR_CURS_MAX_SIZE - 1 };

	CHECK_INT(smcr_curs_add(&big, SMCR_CURS_MAX_SIZE, SMCR_CURS_MAX_SIZE), 0);
	CHECK(curs_eq(big, (struct smcr_curs){ 0, SMCR_CURS_MAX_SIZE - 1 }));
	CHECK_INT(smcr_curs_diff(SMCR_CURS_MAX_SIZE, (struct smcr_curs){ 0, 0 },
				 (struct smcr_curs){ 1, SMCR_CURS_MAX_SIZE - 1 }),
		  2 * (int64_t)SMCR_CURS_MAX_SIZE - 1);
	CHECK_INT(smcr_peer_rmbe_space(SMCR_CURS_MAX_SIZE, (struct smcr_curs){ 1, 0 },
				       (struct smcr_curs){ 0, 0 }), 0);
}
