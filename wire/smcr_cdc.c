/*
 * SMC-R CDC messages and cursors (smcr_cdc.h): the byte map is in the
 * header, the rules in doc/smcr-wire.md.
 */
#include "smcr_cdc.h"

#include <errno.h>
#include <string.h>

#include "wire_bytes.h"

enum {
	OFF_TYPE = 0, OFF_LEN = 1, OFF_SEQ = 2, OFF_TOKEN = 4,
	OFF_PROD = 8, OFF_CONS = 16, OFF_PFLAGS = 24, OFF_CFLAGS = 25,
	OFF_SOFT_MAGIC = 26, OFF_SOFT_FLAGS = 30, OFF_SOFT_DATA_LEN = 31, OFF_SOFT_FENCE = 32,
};

static void put_curs(uint8_t *p, struct smcr_curs c)
{
	wire_put16(p, 0);
	wire_put16(p + 2, c.wrap);
	wire_put32(p + 4, c.count);
}

static struct smcr_curs get_curs(const uint8_t *p)
{
	return (struct smcr_curs){ .wrap = wire_get16(p + 2), .count = wire_get32(p + 4) };
}

int smcr_cdc_encode(const struct smcr_cdc *m, uint8_t *buf, size_t size)
{
	size_t data_len = (m->soft_flags & CDC_SOFT_DATA) ? m->data_len : 0;

	if ((m->soft_flags & CDC_SOFT_DATA) && (!data_len || data_len > SMCR_CDC_DATA_MAX))
		return -EINVAL;
	if (size < SMCR_CDC_LEN + data_len)
		return -EMSGSIZE;
	memset(buf, 0, SMCR_CDC_LEN);
	buf[OFF_TYPE] = SMCR_CDC_TYPE;
	buf[OFF_LEN] = SMCR_CDC_LEN;
	wire_put16(buf + OFF_SEQ, m->seqno);
	wire_put32(buf + OFF_TOKEN, m->token);
	put_curs(buf + OFF_PROD, m->prod);
	put_curs(buf + OFF_CONS, m->cons);
	buf[OFF_PFLAGS] = m->prod_flags;
	buf[OFF_CFLAGS] = m->conn_state_flags;
	if (m->soft_flags & CDC_SOFT_KNOWN) {
		wire_put32(buf + OFF_SOFT_MAGIC, SMCR_CDC_SOFT_MAGIC);
		buf[OFF_SOFT_FLAGS] = m->soft_flags & CDC_SOFT_KNOWN;
		if (m->soft_flags & CDC_SOFT_FENCE)
			wire_put64(buf + OFF_SOFT_FENCE, m->soft_fence);
		if (data_len) {
			buf[OFF_SOFT_DATA_LEN] = (uint8_t)data_len;
			memcpy(buf + SMCR_CDC_LEN, m->data, data_len);
		}
	}
	return (int)(SMCR_CDC_LEN + data_len);
}

int smcr_cdc_decode(const uint8_t *buf, size_t len, struct smcr_cdc *m)
{
	if (len < SMCR_CDC_MIN_LEN)
		return -EMSGSIZE;
	if (buf[OFF_TYPE] != SMCR_CDC_TYPE || buf[OFF_LEN] != SMCR_CDC_LEN)
		return -EPROTO;
	m->seqno = wire_get16(buf + OFF_SEQ);
	m->token = wire_get32(buf + OFF_TOKEN);
	m->prod = get_curs(buf + OFF_PROD);
	m->cons = get_curs(buf + OFF_CONS);
	m->prod_flags = buf[OFF_PFLAGS];
	m->conn_state_flags = buf[OFF_CFLAGS];
	m->soft_flags = 0;
	m->soft_fence = 0;
	m->data_len = 0;
	m->data = NULL;
	/* a kernel peer's reserved bytes are zero: without the magic they say nothing */
	if (len >= SMCR_CDC_SOFT_LEN && wire_get32(buf + OFF_SOFT_MAGIC) == SMCR_CDC_SOFT_MAGIC) {
		m->soft_flags = buf[OFF_SOFT_FLAGS] & CDC_SOFT_KNOWN;
		if (m->soft_flags & CDC_SOFT_FENCE)
			m->soft_fence = wire_get64(buf + OFF_SOFT_FENCE);
		if (m->soft_flags & CDC_SOFT_DATA) {
			m->data_len = buf[OFF_SOFT_DATA_LEN];
			if (!m->data_len || m->data_len > SMCR_CDC_DATA_MAX || len < SMCR_CDC_LEN + m->data_len) {
				m->data_len = 0;
				return -EBADMSG;
			}
			m->data = buf + SMCR_CDC_LEN;
		}
	}
	return 0;
}

int smcr_cdc_check(const struct smcr_cdc *m, uint32_t rmbe_size, uint32_t peer_rmbe_size)
{
	if (!smcr_curs_valid(m->prod, rmbe_size) || !smcr_curs_valid(m->cons, peer_rmbe_size))
		return -EPROTO;
	return 0;
}

bool smcr_seq_before(uint16_t a, uint16_t b)
{
	/* (s16)(a - b) < 0 without an implementation-defined conversion */
	return (uint16_t)(a - b) >= 0x8000u;
}

static bool size_ok(uint32_t size)
{
	return size > 0 && size <= SMCR_CURS_MAX_SIZE;
}

bool smcr_curs_valid(struct smcr_curs c, uint32_t size)
{
	return size_ok(size) && c.count < size;
}

int smcr_curs_add(struct smcr_curs *c, uint32_t size, uint32_t len)
{
	if (!smcr_curs_valid(*c, size) || len > size)
		return -EINVAL;
	/* count + len < 2N <= 2^31: no overflow */
	c->count += len;
	if (c->count >= size) {
		c->wrap++;
		c->count -= size;
	}
	return 0;
}

int smcr_curs_diff(uint32_t size, struct smcr_curs old, struct smcr_curs new)
{
	if (!smcr_curs_valid(old, size) || !smcr_curs_valid(new, size))
		return -EINVAL;
	if (old.wrap != new.wrap)
		return (int)(size - old.count + new.count);
	return new.count > old.count ? (int)(new.count - old.count) : 0;
}

int smcr_curs_diff_large(uint32_t size, struct smcr_curs old, struct smcr_curs new)
{
	uint64_t laps, d;

	if (!smcr_curs_valid(old, size) || !smcr_curs_valid(new, size))
		return -EINVAL;
	if (old.wrap == new.wrap)
		return new.count > old.count ? (int)(new.count - old.count) : 0;
	/* full laps between the two, the 0xFFFF -> 0 wrap included */
	laps = (uint16_t)(new.wrap - old.wrap) - 1u;
	d = (uint64_t)(size - old.count) + new.count + laps * size;
	return d > size ? (int)size : (int)d;
}

bool smcr_curs_accept(struct smcr_curs old, struct smcr_curs new)
{
	if (old.wrap > new.wrap && new.wrap != 0)
		return false;
	if (old.wrap == new.wrap && old.count > new.count)
		return false;
	return true;
}

int smcr_peer_rmbe_space(uint32_t size, struct smcr_curs prod, struct smcr_curs cons)
{
	uint16_t laps;
	uint32_t used;

	if (!smcr_curs_valid(prod, size) || !smcr_curs_valid(cons, size))
		return -EINVAL;
	laps = (uint16_t)(prod.wrap - cons.wrap);
	if (laps == 0 && cons.count <= prod.count)
		used = prod.count - cons.count;
	else if (laps == 1 && prod.count <= cons.count)
		used = size - cons.count + prod.count;
	else
		return -EPROTO;
	return (int)(size - used);
}
