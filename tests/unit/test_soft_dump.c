/*
 * The SMC dump (soft/dump.h, doc/smc-dump-header.md): record headers v2 and
 * v1, the bodies, the IP/UDP packet around them, and DUMP_SET's checks.
 */
#include "unit.h"
#include "regfx.h"
#include "soft/capture/dump.h"

#include <errno.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <sys/socket.h>

static void rec_v4(struct soft_dump_rec *r)
{
	memset(r, 0, sizeof(*r));
	r->type = SOFT_DUMP_T_ACCEPT;
	r->flags = SOFT_DUMP_F_SMCD;
	r->ts_ns = 1700000000123456789ull;
	r->token = 0x0102030405060708ull;
	memcpy(r->local, (uint8_t[]){ 10, 0, 0, 1 }, 4);
	memcpy(r->peer, (uint8_t[]){ 10, 0, 0, 2 }, 4);
	r->lport = 5201;
	r->pport = 40000;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

TEST(soft_dump_v2_header)
{
	static const uint8_t want[SOFT_DUMP_V2_HDR_LEN] = {
		'S', 'M', 'D', 'H', 2, SOFT_DUMP_T_ACCEPT, SOFT_DUMP_F_SMCD, 16,
		0x17, 0x97, 0x9c, 0xfe, 0x3d, 0x85, 0xcd, 0x15,
		1, 2, 3, 4, 5, 6, 7, 8,
		10, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		10, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0x14, 0x51, 0x9c, 0x40, 0, 0, 0, 3,
	};
	struct soft_dump_rec r;
	uint8_t buf[128];

	rec_v4(&r);
	CHECK_INT(soft_dump_encode(&r, false, "abc", 3, buf, sizeof(buf)), 67);
	CHECK(!memcmp(buf, want, sizeof(want)));
	CHECK(!memcmp(buf + 64, "abc", 3));
	CHECK_INT(soft_dump_encode(&r, false, "abc", 3, buf, 66), -ENOSPC);
}

TEST(soft_dump_v1_header)
{
	static const uint8_t want[SOFT_DUMP_V1_HDR_LEN] = {
		'S', 'M', 'D', 'H', 1, SOFT_DUMP_T_ACCEPT, SOFT_DUMP_F_SMCD, 8,
		0x65, 0x53, 0xf1, 0x00, 0x00, 0x01, 0xe2, 0x40,
		5, 6, 7, 8, 10, 0, 0, 1, 10, 0, 0, 2, 0x14, 0x51, 0x9c, 0x40,
	};
	struct soft_dump_rec r;
	uint8_t buf[64];

	rec_v4(&r);
	CHECK_INT(soft_dump_encode(&r, true, NULL, 0, buf, sizeof(buf)), 32);
	CHECK(!memcmp(buf, want, sizeof(want)));
	r.flags |= SOFT_DUMP_F_IPV6;
	CHECK_INT(soft_dump_encode(&r, true, NULL, 0, buf, sizeof(buf)), 32);
	CHECK_INT(be32(buf + 20), 0);
	CHECK_INT(be32(buf + 24), 0);
}

TEST(soft_dump_bodies)
{
	struct soft_dump_clc c = {
		.role = 1, .smc_type = 1, .status = SMC_SOFT_PAIR_DECLINED,
		.reason = 0x03030001, .peer_diagnosis = 0x03010000, .lgr_id = 0x100,
		.gid = 0x1122334455667788ull, .dmb_token = 7, .peer_dmb_token = 8,
		.rmbe_size = 65536, .sndbuf_size = 32768, .peer_token = 9,
	};
	struct soft_dump_cdc d = {
		.prod_wrap = 1, .prod_count = 0x10000, .cons_wrap = 2, .cons_count = 5,
		.prod_flags = 0x80, .conn_state_flags = 0x40,
	};
	uint8_t clc[SOFT_DUMP_CLC_LEN], cdc[SOFT_DUMP_CDC_LEN], data[SOFT_DUMP_DATA_LEN];

	soft_dump_clc_body(&c, clc);
	CHECK_INT(clc[0], 1);
	CHECK_INT(clc[1], 1);
	CHECK_INT(clc[2], SMC_SOFT_PAIR_DECLINED);
	CHECK_INT(be32(clc + 4), 0x03030001);
	CHECK_INT(be32(clc + 8), 0x03010000);
	CHECK_INT(be32(clc + 12), 0x100);
	CHECK_INT(be32(clc + 16), 0x11223344);
	CHECK_INT(be32(clc + 28), 7);
	CHECK_INT(be32(clc + 36), 8);
	CHECK_INT(be32(clc + 40), 65536);
	CHECK_INT(be32(clc + 44), 32768);
	CHECK_INT(be32(clc + 52), 9);
	soft_dump_cdc_body(&d, cdc);
	CHECK_INT(be16(cdc), 1);
	CHECK_INT(be32(cdc + 2), 0x10000);
	CHECK_INT(be16(cdc + 6), 2);
	CHECK_INT(be32(cdc + 8), 5);
	CHECK_INT(cdc[12], 0x80);
	CHECK_INT(cdc[13], 0x40);
	soft_dump_data_body(0x100000000ull, 1000, 600, data);
	CHECK_INT(be32(data), 1);
	CHECK_INT(be32(data + 4), 0);
	CHECK_INT(be32(data + 8), 1000);
	CHECK_INT(be32(data + 12), 600);
}

/* An SMC-R CLC record: the CLC body, then its SMC-R part at 56 (doc/smc-dump-header.md 6.1). */
TEST(soft_dump_smcr_clc_body)
{
	struct soft_dump_clc c = { .role = 1, .smc_type = 0, .status = SMC_SOFT_PAIR_PENDING,
				   .rmbe_size = 65536 };
	struct soft_dump_clc_r r = {
		.system_id = { 1, 2, 3, 4, 5, 6, 7, 8 }, .gid = { [10] = 0xff, [11] = 0xff, 10, 9, 0, 2 },
		.mac = { 2, 0, 0, 0, 0, 2 }, .qp_mtu = 3, .first_contact = 1, .qpn = 0x124,
		.rmb_rkey = 0x1234abcd, .rmb_addr = 0x7f0000001000ull, .psn = 0x777, .version = 2,
	};
	uint8_t b[SOFT_DUMP_CLC_R_LEN];

	CHECK_INT(SOFT_DUMP_CLC_R_LEN, 112);
	memset(b, 0xee, sizeof(b));
	soft_dump_clc_r_body(&c, &r, b);
	CHECK_INT(b[0], 1);
	CHECK_INT(b[1], 0);
	CHECK_INT(b[2], SMC_SOFT_PAIR_PENDING);
	CHECK_INT(be32(b + 40), 65536);
	CHECK(!memcmp(b + 56, r.system_id, 8));
	CHECK(!memcmp(b + 64, r.gid, 16));
	CHECK(!memcmp(b + 80, r.mac, 6));
	CHECK_INT(b[86], 3);
	CHECK_INT(b[87], 1);
	CHECK_INT(be32(b + 88), 0x124);
	CHECK_INT(be32(b + 92), 0x1234abcd);
	CHECK_INT(be32(b + 96), 0x7f00);
	CHECK_INT(be32(b + 100), 0x1000);
	CHECK_INT(be32(b + 104), 0x777);
	CHECK_INT(b[108], 2);
	CHECK_INT(b[109], 0);
	CHECK_INT(be16(b + 110), 0);
}

/* The ones' complement sum over a correct header or pseudo-header is 0xffff. */
static uint16_t csum(const uint8_t *p, size_t n, uint32_t sum)
{
	for (; n > 1; p += 2, n -= 2)
		sum += be16(p);
	if (n)
		sum += (uint32_t)p[0] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

TEST(soft_dump_packet_ipv4)
{
	struct soft_dump_rec r;
	uint8_t pkt[128];

	rec_v4(&r);
	CHECK_INT(soft_dump_packet(&r, (const uint8_t *)"xyz", 3, pkt, sizeof(pkt)), 31);
	CHECK_INT(pkt[0], 0x45);
	CHECK_INT(be16(pkt + 2), 31);
	CHECK_INT(pkt[9], 17);
	CHECK_INT(csum(pkt, 20, 0), 0xffff);
	CHECK_INT(be32(pkt + 12), 0x0a000001);
	CHECK_INT(be32(pkt + 16), 0x0a000002);
	CHECK_INT(be16(pkt + 20), 5201);
	CHECK_INT(be16(pkt + 22), 40000);
	CHECK_INT(be16(pkt + 24), 11);
	CHECK(!memcmp(pkt + 28, "xyz", 3));
	r.flags |= SOFT_DUMP_F_RX;
	soft_dump_packet(&r, (const uint8_t *)"xyz", 3, pkt, sizeof(pkt));
	CHECK_INT(be32(pkt + 12), 0x0a000002);
	CHECK_INT(be16(pkt + 20), 40000);
	CHECK_INT(soft_dump_packet(&r, (const uint8_t *)"xyz", 3, pkt, 30), -ENOSPC);
}

TEST(soft_dump_packet_ipv6)
{
	struct soft_dump_rec r;
	uint8_t pkt[128];
	uint32_t pseudo;

	rec_v4(&r);
	r.flags |= SOFT_DUMP_F_IPV6;
	memset(r.local, 0, 16);
	memset(r.peer, 0, 16);
	r.local[15] = 1;
	r.peer[15] = 1;
	CHECK_INT(soft_dump_packet(&r, (const uint8_t *)"hello", 5, pkt, sizeof(pkt)), 53);
	CHECK_INT(pkt[0] >> 4, 6);
	CHECK_INT(be16(pkt + 4), 13);
	CHECK_INT(pkt[6], 17);
	pseudo = csum(pkt + 8, 32, 0) + 13 + 17;
	CHECK_INT(csum(pkt + 40, 13, pseudo), 0xffff);
}

TEST(soft_dump_v4mapped_is_ipv4)
{
	uint8_t a[16] = { [10] = 0xff, [11] = 0xff, 127, 0, 0, 1 };
	uint8_t b[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 };
	uint8_t v6[16] = { [15] = 1 };
	struct soft_dump_rec r = { .flags = SOFT_DUMP_F_SMCD };

	soft_dump_rec_addrs(&r, AF_INET6, a, b);
	CHECK_INT(r.flags, SOFT_DUMP_F_SMCD);
	CHECK_INT(be32(r.local), 0x7f000001);
	CHECK_INT(be32(r.peer), 0x0a000002);
	CHECK_INT(be32(r.local + 4), 0);
	soft_dump_rec_addrs(&r, AF_INET6, a, v6);
	CHECK_INT(r.flags, SOFT_DUMP_F_SMCD | SOFT_DUMP_F_IPV6);
	CHECK(!memcmp(r.local, a, 16));
	CHECK(!memcmp(r.peer, v6, 16));
	soft_dump_rec_addrs(&r, AF_INET, (uint8_t[16]){ 10, 0, 0, 3 }, (uint8_t[16]){ 10, 0, 0, 2 });
	CHECK_INT(r.flags, SOFT_DUMP_F_SMCD);
	CHECK_INT(be32(r.local), 0x0a000003);
}

static int dump_set(struct regfx *f, const struct soft_peer *p, uint8_t on, uint32_t ifindex,
		    int fd)
{
	struct mb m;

	regfx_req(&m, SMC_SOFT_CMD_DUMP_SET, NLM_F_ACK);
	mb_u8(&m, SMC_SOFT_A_DUMP_ON, on);
	if (ifindex)
		mb_u32(&m, SMC_SOFT_A_IFINDEX, ifindex);
	regfx_run(f, p, &m, fd);
	return regfx_error(f);
}

TEST(soft_dump_set_checks)
{
	struct soft_peer admin;
	struct regfx f;
	int sp[2];

	regfx_init(&f);
	admin = f.peer;
	admin.net_admin = true;
	CHECK_INT(dump_set(&f, &f.peer, 1, 1, -1), -EPERM);
	CHECK_INT(dump_set(&f, &admin, 1, 1, -1), -EINVAL);
	CHECK_INT(dump_set(&f, &admin, 1, 0, -1), -EINVAL);
	CHECK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sp) == 0);
	CHECK_INT(dump_set(&f, &admin, 1, 1, sp[0]), -EINVAL);
	close(sp[1]);
	CHECK(f.st.dumps == NULL);
	CHECK_INT(dump_set(&f, &admin, 0, 0, -1), 0);
	regfx_free(&f);
}

/* With CAP_NET_RAW (root): a session per connection, gone with it. */
TEST(soft_dump_set_session)
{
	int fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, htons(ETH_P_IP));
	struct soft_peer admin;
	struct regfx f;

	if (fd < 0)
		return;
	regfx_init(&f);
	admin = f.peer;
	admin.net_admin = true;
	CHECK_INT(dump_set(&f, &admin, 1, 1, fd), 0);
	CHECK(f.st.dumps != NULL);
	soft_dump_conn_gone(&f.st, admin.conn_id);
	CHECK(f.st.dumps == NULL);
	fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, htons(ETH_P_IP));
	CHECK_INT(dump_set(&f, &admin, 1, 1, fd), 0);
	CHECK_INT(dump_set(&f, &admin, 0, 0, -1), 0);
	CHECK(f.st.dumps == NULL);
	fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, htons(ETH_P_IP));
	CHECK_INT(dump_set(&f, &admin, 1, 1, fd), 0);
	regfx_free(&f);                  /* frees the session and its socket */
}
