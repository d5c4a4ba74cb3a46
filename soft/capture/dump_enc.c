/*
 * Encoding SMC dump records (doc/smc-dump-header.md): the headers, the
 * bodies, and the IP/UDP packet around them.  All fields big-endian.
 */
#include "dump.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

static uint8_t *put8(uint8_t *p, uint8_t v)
{
	*p = v;
	return p + 1;
}

static uint8_t *put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
	return p + 2;
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
	p = put16(p, (uint16_t)(v >> 16));
	return put16(p, (uint16_t)v);
}

static uint8_t *put64(uint8_t *p, uint64_t v)
{
	p = put32(p, (uint32_t)(v >> 32));
	return put32(p, (uint32_t)v);
}

static uint8_t *put_bytes(uint8_t *p, const void *v, size_t n)
{
	memcpy(p, v, n);
	return p + n;
}

static uint8_t *head(uint8_t *p, const struct soft_dump_rec *r, uint8_t version, size_t hdr_len)
{
	p = put32(p, SOFT_DUMP_MAGIC);
	p = put8(p, version);
	p = put8(p, r->type);
	p = put8(p, r->flags);
	return put8(p, (uint8_t)(hdr_len / 4));
}

static void v2_header(uint8_t *p, const struct soft_dump_rec *r, size_t body_len)
{
	p = head(p, r, SOFT_DUMP_V2, SOFT_DUMP_V2_HDR_LEN);
	p = put64(p, r->ts_ns);
	p = put64(p, r->token);
	p = put_bytes(p, r->local, 16);
	p = put_bytes(p, r->peer, 16);
	p = put16(p, r->lport);
	p = put16(p, r->pport);
	put32(p, (uint32_t)body_len);
}

/* The legacy header has room for IPv4 only: IPv6 records carry zeros there. */
static void v1_header(uint8_t *p, const struct soft_dump_rec *r)
{
	static const uint8_t none[4];
	bool v6 = r->flags & SOFT_DUMP_F_IPV6;

	p = head(p, r, SOFT_DUMP_V1, SOFT_DUMP_V1_HDR_LEN);
	p = put32(p, (uint32_t)(r->ts_ns / 1000000000u));
	p = put32(p, (uint32_t)(r->ts_ns % 1000000000u / 1000u));
	p = put32(p, (uint32_t)r->token);
	p = put_bytes(p, v6 ? none : r->local, 4);
	p = put_bytes(p, v6 ? none : r->peer, 4);
	p = put16(p, r->lport);
	put16(p, r->pport);
}

static bool v4mapped(const uint8_t a[16])
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(a, prefix, sizeof(prefix));
}

void soft_dump_rec_addrs(struct soft_dump_rec *r, int family, const uint8_t src[16],
			 const uint8_t dst[16])
{
	memset(r->local, 0, sizeof(r->local));
	memset(r->peer, 0, sizeof(r->peer));
	r->flags &= (uint8_t)~SOFT_DUMP_F_IPV6;
	if (family == AF_INET6 && v4mapped(src) && v4mapped(dst)) {
		memcpy(r->local, src + 12, 4);
		memcpy(r->peer, dst + 12, 4);
	} else {
		memcpy(r->local, src, sizeof(r->local));
		memcpy(r->peer, dst, sizeof(r->peer));
		if (family == AF_INET6)
			r->flags |= SOFT_DUMP_F_IPV6;
	}
}

ssize_t soft_dump_encode(const struct soft_dump_rec *r, bool legacy, const void *body,
			 size_t body_len, uint8_t *buf, size_t len)
{
	size_t hdr_len = legacy ? SOFT_DUMP_V1_HDR_LEN : SOFT_DUMP_V2_HDR_LEN;

	if (len < hdr_len || body_len > len - hdr_len)
		return -ENOSPC;
	if (legacy)
		v1_header(buf, r);
	else
		v2_header(buf, r, body_len);
	if (body_len)
		memcpy(buf + hdr_len, body, body_len);
	return (ssize_t)(hdr_len + body_len);
}

void soft_dump_clc_body(const struct soft_dump_clc *c, uint8_t out[SOFT_DUMP_CLC_LEN])
{
	uint8_t *p = out;

	p = put8(p, c->role);
	p = put8(p, c->smc_type);
	p = put8(p, c->status);
	p = put8(p, 0);
	p = put32(p, c->reason);
	p = put32(p, c->peer_diagnosis);
	p = put32(p, c->lgr_id);
	p = put64(p, c->gid);
	p = put64(p, c->dmb_token);
	p = put64(p, c->peer_dmb_token);
	p = put32(p, c->rmbe_size);
	p = put32(p, c->sndbuf_size);
	put64(p, c->peer_token);
}

void soft_dump_clc_r_body(const struct soft_dump_clc *c, const struct soft_dump_clc_r *r,
			  uint8_t out[SOFT_DUMP_CLC_R_LEN])
{
	uint8_t *p = out + SOFT_DUMP_CLC_LEN;

	soft_dump_clc_body(c, out);
	p = put_bytes(p, r->system_id, sizeof(r->system_id));
	p = put_bytes(p, r->gid, sizeof(r->gid));
	p = put_bytes(p, r->mac, sizeof(r->mac));
	p = put8(p, r->qp_mtu);
	p = put8(p, r->first_contact);
	p = put32(p, r->qpn);
	p = put32(p, r->rmb_rkey);
	p = put64(p, r->rmb_addr);
	p = put32(p, r->psn);
	p = put8(p, r->version);
	p = put8(p, 0);
	put16(p, 0);
}

void soft_dump_cdc_body(const struct soft_dump_cdc *c, uint8_t out[SOFT_DUMP_CDC_LEN])
{
	uint8_t *p = out;

	p = put16(p, c->prod_wrap);
	p = put32(p, c->prod_count);
	p = put16(p, c->cons_wrap);
	p = put32(p, c->cons_count);
	p = put8(p, c->prod_flags);
	p = put8(p, c->conn_state_flags);
	put16(p, 0);
}

void soft_dump_data_body(uint64_t offset, uint32_t len, uint32_t caplen,
			 uint8_t out[SOFT_DUMP_DATA_LEN])
{
	uint8_t *p = out;

	p = put64(p, offset);
	p = put32(p, len);
	put32(p, caplen);
}

void soft_dump_lost_body(const struct soft_dump_lost *l, uint8_t out[SOFT_DUMP_LOST_LEN])
{
	uint8_t *p = out;

	p = put32(p, l->pid);
	p = put32(p, 0);
	p = put64(p, l->full);
	p = put64(p, l->stalled);
	put64(p, l->rejected);
}

void soft_dump_llc_body(uint32_t lgr_id, uint8_t link_id, const uint8_t *msg, size_t len,
			uint8_t *out)
{
	uint8_t *p = out;

	p = put32(p, lgr_id);
	p = put8(p, link_id);
	p = put8(p, 0);
	p = put16(p, 0);
	memcpy(p, msg, len);
}

/* RFC 1071 sum of n bytes, folded into 16 bits by the caller. */
static uint32_t sum16(const uint8_t *p, size_t n, uint32_t sum)
{
	for (; n > 1; p += 2, n -= 2)
		sum += (uint32_t)p[0] << 8 | p[1];
	if (n)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

static uint16_t fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

#define IP4_LEN  20
#define IP6_LEN  40
#define UDP_LEN  8

static void ip4(uint8_t *p, const uint8_t *src, const uint8_t *dst, size_t total)
{
	uint8_t *h = p;

	p = put8(p, 0x45);
	p = put8(p, 0);
	p = put16(p, (uint16_t)total);
	p = put32(p, 0x4000);           /* id 0, don't fragment */
	p = put8(p, 64);
	p = put8(p, 17);                /* UDP */
	p = put16(p, 0);
	p = put_bytes(p, src, 4);
	put_bytes(p, dst, 4);
	put16(h + 10, fold(sum16(h, IP4_LEN, 0)));
}

static void ip6(uint8_t *p, const uint8_t *src, const uint8_t *dst, size_t payload)
{
	p = put32(p, 0x60000000);
	p = put16(p, (uint16_t)payload);
	p = put8(p, 17);
	p = put8(p, 64);
	p = put_bytes(p, src, 16);
	put_bytes(p, dst, 16);
}

/* IPv6 needs the UDP checksum; IPv4 may leave it 0. */
static uint16_t udp6_sum(const uint8_t *src, const uint8_t *dst, const uint8_t *udp, size_t n)
{
	uint32_t sum = sum16(src, 16, 0);
	uint16_t c;

	sum = sum16(dst, 16, sum);
	sum += (uint32_t)(n >> 16) + (uint32_t)(n & 0xffff) + 17;
	c = fold(sum16(udp, n, sum));
	return c ? c : 0xffff;
}

ssize_t soft_dump_packet(const struct soft_dump_rec *r, const uint8_t *payload, size_t plen,
			 uint8_t *buf, size_t len)
{
	bool v6 = r->flags & SOFT_DUMP_F_IPV6, rx = r->flags & SOFT_DUMP_F_RX;
	const uint8_t *src = rx ? r->peer : r->local, *dst = rx ? r->local : r->peer;
	size_t ip_len = v6 ? IP6_LEN : IP4_LEN, total = ip_len + UDP_LEN + plen;
	uint8_t *udp = buf + ip_len, *p;

	if (total > len || total > 0xffff)
		return -ENOSPC;
	p = put16(udp, rx ? r->pport : r->lport);
	p = put16(p, rx ? r->lport : r->pport);
	p = put16(p, (uint16_t)(UDP_LEN + plen));
	p = put16(p, 0);
	memcpy(p, payload, plen);
	if (v6) {
		ip6(buf, src, dst, UDP_LEN + plen);
		put16(udp + 6, udp6_sum(src, dst, udp, UDP_LEN + plen));
	} else {
		ip4(buf, src, dst, total);
	}
	return (ssize_t)total;
}
