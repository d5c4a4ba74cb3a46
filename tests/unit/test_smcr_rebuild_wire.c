/* The rebuild message's bytes (wire/smcr_rebuild.h): a golden message, every rejection, every length. */
#include "unit.h"
#include "wire/smcr_rebuild.h"

#include <errno.h>
#include <string.h>

TEST(smcr_rebuild_wire_golden_and_rejections)
{
	static const uint8_t golden[SMCR_REBUILD_LEN] = {
		'R', 'B', 1, 1, 0x00, 0x00, 0x01, 0x11, 0x00, 0xab, 0xcd, 0xef,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2,
		3, 4, 0, 0,
	};
	struct smcr_rebuild_wire m = { .qpn = 0x111, .psn = 0xabcdef, .mtu = 3, .num = 4, .answer = true };
	struct smcr_rebuild_wire d;
	uint8_t b[SMCR_REBUILD_LEN], c[SMCR_REBUILD_LEN];

	memcpy(m.gid, golden + 12, 16);
	CHECK_INT(smcr_rebuild_encode(&m, b), SMCR_REBUILD_LEN);
	CHECK(!memcmp(b, golden, sizeof(golden)));
	CHECK_INT(smcr_rebuild_decode(b, sizeof(b), &d), 0);
	CHECK(!memcmp(&d, &m, sizeof(m)));
	for (size_t len = 0; len < sizeof(b) + 2; len++)
		if (len != sizeof(b) && smcr_rebuild_decode(b, len, &d) != -EBADMSG)
			unit_fail(__FILE__, __LINE__, "%zu bytes decoded", len);
	/* each byte out of its range, one at a time */
	static const struct { int off; uint8_t v; } bad[] = {
		{ 0, 'X' }, { 1, 'X' }, { 2, 2 }, { 3, 2 }, { 4, 1 }, { 8, 1 }, { 28, 0 }, { 28, 6 },
		{ 30, 1 }, { 31, 1 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(c, b, sizeof(c));
		c[bad[i].off] = bad[i].v;
		if (smcr_rebuild_decode(c, sizeof(c), &d) != -EBADMSG)
			unit_fail(__FILE__, __LINE__, "byte %d = %u decoded", bad[i].off, bad[i].v);
	}
	memcpy(c, b, sizeof(c));
	memset(c + 4, 0, 4);            /* queue pair 0 */
	CHECK_INT(smcr_rebuild_decode(c, sizeof(c), &d), -EBADMSG);
	memcpy(c, b, sizeof(c));
	memset(c + 12, 0, 16);          /* no GID */
	CHECK_INT(smcr_rebuild_decode(c, sizeof(c), &d), -EBADMSG);
	/* what would not decode is not encoded */
	m.qpn = 1u << 24;
	CHECK_INT(smcr_rebuild_encode(&m, b), -EINVAL);
	m.qpn = 5;
	m.mtu = 0;
	CHECK_INT(smcr_rebuild_encode(&m, b), -EINVAL);
	m.mtu = 5;
	m.answer = false;
	CHECK_INT(smcr_rebuild_encode(&m, b), SMCR_REBUILD_LEN);
	CHECK_INT(b[3], 0);
	CHECK_INT(smcr_rebuild_decode(b, sizeof(b), &d), 0);
	CHECK(!d.answer && d.qpn == 5 && d.mtu == 5);
}
