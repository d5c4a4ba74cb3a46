/* The rebuild message's bytes (smcr_rebuild.h). */
#include "smcr_rebuild.h"

#include <errno.h>
#include <string.h>

#define VERSION 1
#define FLAG_ANSWER 1u

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static bool fields_ok(const struct smcr_rebuild_wire *m)
{
	static const uint8_t zero[16];

	return m->qpn && m->qpn < (1u << 24) && m->psn < (1u << 24) && m->mtu >= 1 && m->mtu <= 5 &&
	       memcmp(m->gid, zero, sizeof(zero));
}

int smcr_rebuild_encode(const struct smcr_rebuild_wire *m, uint8_t out[SMCR_REBUILD_LEN])
{
	if (!fields_ok(m))
		return -EINVAL;
	memset(out, 0, SMCR_REBUILD_LEN);
	out[0] = 'R';
	out[1] = 'B';
	out[2] = VERSION;
	out[3] = m->answer ? FLAG_ANSWER : 0;
	put32(out + 4, m->qpn);
	put32(out + 8, m->psn);
	memcpy(out + 12, m->gid, 16);
	out[28] = m->mtu;
	out[29] = m->num;
	return SMCR_REBUILD_LEN;
}

int smcr_rebuild_decode(const uint8_t *buf, size_t len, struct smcr_rebuild_wire *m)
{
	memset(m, 0, sizeof(*m));
	if (len != SMCR_REBUILD_LEN || buf[0] != 'R' || buf[1] != 'B' || buf[2] != VERSION ||
	    (buf[3] & ~FLAG_ANSWER) || buf[30] || buf[31])
		return -EBADMSG;
	m->answer = buf[3] & FLAG_ANSWER;
	m->qpn = get32(buf + 4);
	m->psn = get32(buf + 8);
	memcpy(m->gid, buf + 12, 16);
	m->mtu = buf[28];
	m->num = buf[29];
	return fields_ok(m) ? 0 : -EBADMSG;
}
