/*
 * Fuzz target for the SMC-R wire codecs (wire/smcr_cdc.h, wire/smcr_llc.h,
 * wire/smcr_rebuild.h): the input as one received message, given to the
 * CDC decoder, to the LLC decoder in both byte orders of a v2 peer, and to
 * the rebuild message's decoder.  Whatever decodes must
 * re-encode and decode to the same message; the decoded cursors, hostile or
 * not, go through the cursor functions over a small ring, which must keep
 * their invariants.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/smcr_cdc.h"
#include "wire/smcr_llc.h"
#include "wire/smcr_rebuild.h"

void fuzz_smcr_wire(const uint8_t *data, size_t size);

static void check_cursors(struct smcr_curs a, struct smcr_curs b, uint32_t n)
{
	bool valid = smcr_curs_valid(a, n) && smcr_curs_valid(b, n);
	struct smcr_curs c = a;
	int d, space;

	d = smcr_curs_diff(n, a, b);
	if (valid ? d < 0 || d >= 2 * (int)n : d != -EINVAL)
		abort();
	d = smcr_curs_diff_large(n, a, b);
	if (valid ? d < 0 || d > (int)n : d != -EINVAL)
		abort();
	space = smcr_peer_rmbe_space(n, a, b);
	if (valid ? space != -EPROTO && (space < 0 || space > (int)n) : space != -EINVAL)
		abort();
	/* what is not free is what lies from the consumer to the producer */
	if (space >= 0 && smcr_curs_diff(n, b, a) != (int)n - space)
		abort();
	if (smcr_curs_add(&c, n, b.count % (n + 1)) == 0 && !smcr_curs_valid(c, n))
		abort();
	(void)smcr_curs_accept(a, b);
}

static bool same_cdc(const struct smcr_cdc *a, const struct smcr_cdc *b)
{
	return a->seqno == b->seqno && a->token == b->token && a->prod.wrap == b->prod.wrap &&
	       a->prod.count == b->prod.count && a->cons.wrap == b->cons.wrap &&
	       a->cons.count == b->cons.count && a->prod_flags == b->prod_flags &&
	       a->conn_state_flags == b->conn_state_flags && a->data_len == b->data_len &&
	       (!a->data_len || !memcmp(a->data, b->data, a->data_len));
}

static void fuzz_cdc(const uint8_t *data, size_t size)
{
	struct smcr_cdc a, b;
	uint8_t buf[SMCR_CDC_LEN + SMCR_CDC_DATA_MAX];
	/* a small ring, picked by the input, so that hostile cursors are common */
	uint32_t n = size ? data[size - 1] % 17 : 0;

	if (smcr_cdc_decode(data, size, &a))
		return;
	/* the bytes inside, if any, lie within the input and go out again whole */
	if (a.data_len && (a.data < data || a.data + a.data_len > data + size))
		abort();
	if (smcr_cdc_encode(&a, buf, sizeof(buf)) != (int)(SMCR_CDC_LEN + a.data_len))
		abort();
	if (smcr_cdc_decode(buf, SMCR_CDC_LEN + a.data_len, &b) || !same_cdc(&a, &b))
		abort();
	if (smcr_cdc_check(&a, n, n) == 0 && (!smcr_curs_valid(a.prod, n) || !smcr_curs_valid(a.cons, n)))
		abort();
	check_cursors(a.prod, a.cons, n ? n : 1);
	check_cursors(a.cons, a.prod, n);
	if (smcr_seq_before(a.seqno, b.seqno) || smcr_seq_before((uint16_t)(a.seqno + 1), a.seqno))
		abort();
}

static void fuzz_llc(const uint8_t *data, size_t size, enum smcr_llc_ho ho)
{
	static struct smcr_llc_msg a, b;
	static uint8_t buf[SMCR_LLC_V2_MAX_LEN];
	int n;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	if (smcr_llc_decode(data, size, ho, &a))
		return;
	n = smcr_llc_encode(&a, ho, buf, sizeof(buf));
	if (n < (int)SMCR_LLC_LEN)
		abort();
	if (smcr_llc_decode(buf, (size_t)n, ho, &b) || memcmp(&a, &b, sizeof(a)))
		abort();
	if (buf[0] != data[0] || buf[3] != data[3])
		abort();
}

static void fuzz_rebuild(const uint8_t *data, size_t size)
{
	struct smcr_rebuild_wire a, b;
	uint8_t buf[SMCR_REBUILD_LEN];

	if (smcr_rebuild_decode(data, size, &a))
		return;
	if (a.qpn >= 1u << 24 || a.psn >= 1u << 24 || a.mtu < 1 || a.mtu > 5)
		abort();
	/* every byte is a field or a checked zero: the same bytes again */
	if (smcr_rebuild_encode(&a, buf) != SMCR_REBUILD_LEN || memcmp(buf, data, SMCR_REBUILD_LEN))
		abort();
	if (smcr_rebuild_decode(buf, sizeof(buf), &b) || memcmp(&a, &b, sizeof(a)))
		abort();
}

void fuzz_smcr_wire(const uint8_t *data, size_t size)
{
	fuzz_rebuild(data, size);
	fuzz_cdc(data, size);
	fuzz_llc(data, size, SMCR_LLC_HO_LE);
	fuzz_llc(data, size, SMCR_LLC_HO_BE);
	(void)smcr_llc_v2_peer_ho(data, size);
}
