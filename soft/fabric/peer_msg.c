/*
 * Encoding of the daemon-to-daemon messages (peer_msg.h).  Layout, offsets
 * in bytes: 0 magic "SMCQ", 4 version, 5 type, 6 role, 7 flags (bit 0:
 * have), 8 seq, 12 verdict, 16 family (4 or 6), 17 zero, 18 sport, 20 dport,
 * 22 two zero bytes, 24 src, 40 dst, 56 nonce, 64 echo, 72 index (u8), 73 seven
 * zero bytes, 80 a CLC message's bytes; every number big-endian.
 */
#include "peer_msg.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

static const uint8_t magic[4] = { 'S', 'M', 'C', 'Q' };

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* An address of the family as the layout holds it, and not the unspecified one. */
static bool addr_ok(int family, const uint8_t a[16])
{
	if (family == AF_INET && !all_zero(a + 4, 12))
		return false;
	return !all_zero(a, family == AF_INET ? 4 : 16);
}

/* The nonces, index and bytes each type carries, and only those. */
static bool fields_ok(const struct soft_peer_msg *m)
{
	bool index_ok = m->index >= 1 && m->index <= SOFT_PEER_CLC_INDEX_MAX;

	switch (m->type) {
	case SOFT_PEER_ASK:
		return m->nonce && !m->echo && !m->index && !m->clc_len;
	case SOFT_PEER_ANSWER:
		return m->echo && !m->nonce == !m->have && !m->index && !m->clc_len;
	case SOFT_PEER_CLC:
		return m->nonce && m->echo && !m->verdict && index_ok && m->clc_len &&
		       m->clc_len <= SOFT_PEER_CLC_MAX && m->clc;
	case SOFT_PEER_CLC_SEEN:
		return m->nonce && m->echo && !m->verdict && index_ok && !m->clc_len;
	case SOFT_PEER_REBUILD:
		return m->nonce && m->echo && !m->verdict && m->index && m->clc_len &&
		       m->clc_len <= SOFT_PEER_REBUILD_MAX && m->clc;
	case SOFT_PEER_REBUILD_SEEN:
		return m->nonce && m->echo && !m->verdict && m->index && !m->clc_len;
	case SOFT_PEER_GONE:
		return m->nonce && m->echo && !m->verdict && !m->index && !m->clc_len;
	}
	return false;
}

static bool msg_ok(const struct soft_peer_msg *m)
{
	if (!fields_ok(m))
		return false;
	if (m->role > 1 || (m->have && m->type != SOFT_PEER_ANSWER))
		return false;
	if (m->family != AF_INET && m->family != AF_INET6)
		return false;
	return m->sport && m->dport && addr_ok(m->family, m->src) && addr_ok(m->family, m->dst);
}

int soft_peer_msg_encode(const struct soft_peer_msg *m, uint8_t *out, size_t size)
{
	if (!msg_ok(m) || size < SOFT_PEER_MSG_LEN + (size_t)m->clc_len)
		return -EINVAL;
	memset(out, 0, SOFT_PEER_MSG_LEN);
	memcpy(out, magic, sizeof(magic));
	out[4] = SOFT_PEER_VERSION;
	out[5] = m->type;
	out[6] = m->role;
	out[7] = m->have ? 1 : 0;
	put32(out + 8, m->seq);
	put32(out + 12, m->verdict);
	out[16] = m->family == AF_INET ? 4 : 6;
	put16(out + 18, m->sport);
	put16(out + 20, m->dport);
	memcpy(out + 24, m->src, 16);
	memcpy(out + 40, m->dst, 16);
	put64(out + 56, m->nonce);
	put64(out + 64, m->echo);
	out[72] = m->index;
	if (m->clc_len)
		memcpy(out + SOFT_PEER_MSG_LEN, m->clc, m->clc_len);
	return SOFT_PEER_MSG_LEN + m->clc_len;
}

int soft_peer_msg_decode(const uint8_t *buf, size_t len, struct soft_peer_msg *m)
{
	memset(m, 0, sizeof(*m));
	if (len < SOFT_PEER_MSG_LEN || len > SOFT_PEER_DGRAM_MAX || memcmp(buf, magic, sizeof(magic)) ||
	    buf[4] != SOFT_PEER_VERSION || (buf[7] & ~1u) || buf[17] || buf[22] || buf[23] ||
	    !all_zero(buf + 73, 7))
		return -EBADMSG;
	if (buf[16] != 4 && buf[16] != 6)
		return -EBADMSG;
	m->type = buf[5];
	m->role = buf[6];
	m->have = buf[7] & 1u;
	m->seq = get32(buf + 8);
	m->verdict = get32(buf + 12);
	m->family = buf[16] == 4 ? AF_INET : AF_INET6;
	m->sport = get16(buf + 18);
	m->dport = get16(buf + 20);
	memcpy(m->src, buf + 24, 16);
	memcpy(m->dst, buf + 40, 16);
	m->nonce = get64(buf + 56);
	m->echo = get64(buf + 64);
	m->index = buf[72];
	if (len > SOFT_PEER_MSG_LEN) {
		m->clc = buf + SOFT_PEER_MSG_LEN;
		m->clc_len = (uint16_t)(len - SOFT_PEER_MSG_LEN);
	}
	return msg_ok(m) ? 0 : -EBADMSG;
}
