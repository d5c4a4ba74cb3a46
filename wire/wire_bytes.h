/*
 * Big-endian loads and stores at any alignment, for the wire formats of
 * SMC-R (RFC 7609: every multi-byte field is in network byte order).  Byte
 * by byte, so they are right on any host (s390x included) and never rely on
 * a packed struct laid over a buffer.
 */
#ifndef WIRE_BYTES_H
#define WIRE_BYTES_H

#include <stdint.h>

static inline uint16_t wire_get16(const uint8_t *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

static inline uint32_t wire_get24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static inline uint32_t wire_get32(const uint8_t *p)
{
	return (uint32_t)wire_get16(p) << 16 | wire_get16(p + 2);
}

static inline uint64_t wire_get64(const uint8_t *p)
{
	return (uint64_t)wire_get32(p) << 32 | wire_get32(p + 4);
}

static inline void wire_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void wire_put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static inline void wire_put32(uint8_t *p, uint32_t v)
{
	wire_put16(p, (uint16_t)(v >> 16));
	wire_put16(p + 2, (uint16_t)v);
}

static inline void wire_put64(uint8_t *p, uint64_t v)
{
	wire_put32(p, (uint32_t)(v >> 32));
	wire_put32(p + 4, (uint32_t)v);
}

#endif
