/*
 * The processes' dump rings as the daemon drains them (soft/pdump.h): the
 * control line written on session changes and at attach, slots written by
 * hand as the preload writes them, and the records that come out of a TUN
 * device (root only; the ring checks run without one too).
 */
#include "unit.h"
#include "regfx.h"
#include "soft/capture/dump.h"
#include "soft/capture/pdump.h"
#include "soft/fabric/devices.h"
#include "soft/fabric/lgr.h"
#include "soft/service/service.h"
#include "wire/pstats.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <linux/if_ether.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>

#define T0 1000000000000ull           /* a CLOCK_MONOTONIC time for the ticks */

/* The process's side: its stats memfd, mapped as it maps it. */
struct proc {
	int fd;
	void *map;
	uint64_t prod;
};

static void proc_open(struct proc *p)
{
	struct soft_pstats *ps;

	p->prod = 0;
	p->fd = memfd_create("pdump", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	CHECK(p->fd >= 0 && ftruncate(p->fd, SOFT_PSTATS_MAP_LEN) == 0);
	p->map = mmap(NULL, SOFT_PSTATS_MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, 0);
	CHECK(p->map != MAP_FAILED);
	ps = p->map;
	ps->magic = SOFT_PSTATS_MAGIC;
	ps->version = SOFT_PSTATS_VERSION;
	ps->size = sizeof(*ps);
	fcntl(p->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW);
}

static void proc_close(struct proc *p)
{
	munmap(p->map, SOFT_PSTATS_MAP_LEN);
	close(p->fd);
}

static int attach(struct regfx *f, const struct soft_peer *peer, struct proc *p)
{
	struct mb m;

	regfx_req(&m, SMC_SOFT_CMD_STATS_ATTACH, NLM_F_ACK);
	mb_u32(&m, SMC_SOFT_A_STATS_VERSION, SOFT_PSTATS_VERSION);
	regfx_run(f, peer, &m, dup(p->fd));
	return regfx_error(f);
}

static uint32_t ctl_types(const struct proc *p)
{
	return atomic_load(&soft_pdump_ctl_of(p->map)->types);
}

static uint32_t ctl_snaplen(const struct proc *p)
{
	return atomic_load(&soft_pdump_ctl_of(p->map)->snaplen);
}

static uint64_t ring_cons(const struct proc *p)
{
	return atomic_load(&soft_pdump_ring_of(p->map)->cons);
}

/* Reserve the next slot as the preload does; publish() makes it visible. */
static struct soft_pdump_slot *reserve(struct proc *p)
{
	struct soft_pdump_slot *s = soft_pdump_slot_of(p->map, p->prod);

	memset((char *)s + sizeof(s->seq), 0, SOFT_PDUMP_SLOT_LEN - sizeof(s->seq));
	atomic_store(&soft_pdump_ring_of(p->map)->prod, ++p->prod);
	return s;
}

/* Publish the slot reserved last. */
static void publish(struct proc *p, struct soft_pdump_slot *s)
{
	atomic_store_explicit(&s->seq, p->prod, memory_order_release);
}

static void put_cdc(struct proc *p, uint64_t token, uint8_t flags, uint32_t prod_count,
		    uint32_t cons_count)
{
	struct soft_pdump_slot *s = reserve(p);

	s->token = token;
	s->ts_ns = 1700000000000000000ull;
	s->type = SOFT_DUMP_T_CDC;
	s->flags = flags;
	s->prod_wrap = 1;
	s->prod_count = prod_count;
	s->cons_wrap = 2;
	s->cons_count = cons_count;
	s->prod_flags = 0x80;
	s->conn_state_flags = 0x40;
	publish(p, s);
}

static void put_data(struct proc *p, uint64_t token, uint64_t offset, uint32_t len,
		     uint16_t caplen)
{
	struct soft_pdump_slot *s = reserve(p);

	s->token = token;
	s->type = SOFT_DUMP_T_DATA;
	s->offset = offset;
	s->len = len;
	s->caplen = caplen;
	for (uint32_t i = 0; i < caplen && i < SOFT_PDUMP_SNAP_MAX; i++)
		s->data[i] = (uint8_t)(offset + i);
	publish(p, s);
}

/* A registered connected socket of f->peer: its token and ports. */
struct conn {
	struct regfx_tcp t;
	uint64_t token;
};

static void conn_open(struct regfx *f, struct conn *c)
{
	regfx_tcp_open(&c->t, AF_INET);
	CHECK_INT(regfx_add(f, &f->peer, c->t.cli, SMC_SOFT_STATE_ACTIVE, &c->token), 0);
}

/* A session without DUMP_SET's checks: its socket sends nowhere. */
static void session(struct regfx *f, uint64_t conn_id, uint8_t mode, uint8_t types)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	CHECK_INT(soft_dump_session_add(&f->st, conn_id, f->peer.netns, fd, 1, mode, types,
					false), 0);
}

TEST(soft_pdump_ctl_follows_sessions)
{
	struct regfx f;
	struct proc a, b;

	regfx_init(&f);
	proc_open(&a);
	proc_open(&b);
	CHECK_INT(attach(&f, &f.peer, &a), 0);
	CHECK_INT(ctl_types(&a), 0);
	/* records of before the capture are skipped */
	atomic_store(&soft_pdump_ring_of(a.map)->prod, 5);
	session(&f, 50, SOFT_DUMP_MODE_SMCD, SOFT_DUMP_TYPE_CLC | SOFT_DUMP_TYPE_CDC);
	CHECK_INT(ctl_types(&a), SOFT_DUMP_TYPE_CDC);
	CHECK_INT(ctl_snaplen(&a), 0);
	CHECK_INT(ring_cons(&a), 5);
	session(&f, 51, SOFT_DUMP_MODE_SMCD, SOFT_DUMP_TYPE_CLC | SOFT_DUMP_TYPE_DATA);
	CHECK_INT(ctl_types(&a), SOFT_DUMP_TYPE_CDC | SOFT_DUMP_TYPE_DATA);
	CHECK_INT(ctl_snaplen(&a), 1500 - 20 - 8 - 64 - 16);
	/* an SMC-R session asks the processes too: their soft SMC-R connections' CDC and DATA */
	session(&f, 52, SOFT_DUMP_MODE_SMCR, SOFT_DUMP_TYPE_CDC);
	/* a process attaching now gets the capture at once */
	{
		struct soft_peer p2 = f.peer;

		p2.conn_id = 2;
		CHECK_INT(attach(&f, &p2, &b), 0);
		CHECK_INT(ctl_types(&b), SOFT_DUMP_TYPE_CDC | SOFT_DUMP_TYPE_DATA);
	}
	soft_dump_conn_gone(&f.st, 51);
	CHECK_INT(ctl_types(&a), SOFT_DUMP_TYPE_CDC);
	soft_dump_conn_gone(&f.st, 50);
	CHECK_INT(ctl_types(&a), SOFT_DUMP_TYPE_CDC);
	soft_dump_conn_gone(&f.st, 52);
	CHECK_INT(ctl_types(&a), 0);
	CHECK_INT(ctl_types(&b), 0);
	session(&f, 52, SOFT_DUMP_MODE_SMCR | SOFT_DUMP_MODE_SMCD, 1);
	CHECK_INT(ctl_types(&a), 0);
	session(&f, 52, SOFT_DUMP_MODE_SMCD, 3);
	CHECK_INT(ctl_types(&a), SOFT_DUMP_TYPE_CDC);
	/* the process leaves: the daemon no longer asks it for records */
	soft_conn_gone(&f.st, f.peer.conn_id);
	CHECK_INT(ctl_types(&a), 0);
	CHECK_INT(ctl_types(&b), SOFT_DUMP_TYPE_CDC);
	regfx_free(&f);
	CHECK_INT(ctl_types(&b), 0);
	proc_close(&a);
	proc_close(&b);
}

TEST(soft_pdump_attach_needs_the_whole_map)
{
	struct regfx f;
	struct proc a;

	regfx_init(&f);
	proc_open(&a);
	close(a.fd);
	a.fd = memfd_create("pdump", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	CHECK(ftruncate(a.fd, SOFT_PSTATS_MAP_LEN - 1) == 0);
	fcntl(a.fd, F_ADD_SEALS, F_SEAL_SHRINK);
	CHECK_INT(attach(&f, &f.peer, &a), -EINVAL);
	close(a.fd);
	/* writable mappings are sealed away: the daemon cannot write the ring */
	a.fd = memfd_create("pdump", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	CHECK(ftruncate(a.fd, SOFT_PSTATS_MAP_LEN) == 0);
	fcntl(a.fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_WRITE);
	CHECK_INT(attach(&f, &f.peer, &a), -EINVAL);
	regfx_free(&f);
	proc_close(&a);
}

TEST(soft_pdump_ring_without_sink)
{
	struct regfx f;
	struct proc a;
	struct conn c;
	struct soft_pdump_slot *s;

	regfx_init(&f);
	proc_open(&a);
	conn_open(&f, &c);
	CHECK_INT(attach(&f, &f.peer, &a), 0);
	/* off: nothing is drained */
	put_cdc(&a, c.token, 0, 1, 2);
	CHECK_INT(soft_pdump_tick(&f.st, T0), 0);
	session(&f, 50, SOFT_DUMP_MODE_SMCD, 7);
	CHECK_INT(ring_cons(&a), 1);
	put_cdc(&a, c.token, 0, 1, 2);
	put_data(&a, c.token, 0, 100, 100);
	CHECK_INT(soft_pdump_tick(&f.st, T0), 2);
	CHECK_INT(ring_cons(&a), 3);
	/* reserved, unpublished: waits a second, then is skipped */
	reserve(&a);
	put_cdc(&a, c.token, 0, 3, 4);
	CHECK_INT(soft_pdump_tick(&f.st, T0), 0);
	CHECK_INT(soft_pdump_tick(&f.st, T0 + SOFT_PDUMP_STALL_NS - 1), 0);
	CHECK_INT(ring_cons(&a), 3);
	CHECK_INT(soft_pdump_tick(&f.st, T0 + SOFT_PDUMP_STALL_NS), 2);
	CHECK_INT(ring_cons(&a), 5);
	/* a seq from the future is not published */
	s = reserve(&a);
	s->type = SOFT_DUMP_T_CDC;
	atomic_store(&s->seq, a.prod + SOFT_PDUMP_SLOTS);
	CHECK_INT(soft_pdump_tick(&f.st, T0 + 2 * SOFT_PDUMP_STALL_NS), 0);
	CHECK_INT(soft_pdump_tick(&f.st, T0 + 4 * SOFT_PDUMP_STALL_NS), 1);
	/* nothing reserved: no stall however long the wait */
	CHECK_INT(soft_pdump_tick(&f.st, T0 + 9 * SOFT_PDUMP_STALL_NS), 0);
	CHECK_INT(ring_cons(&a), a.prod);
	/* nor with a prod behind cons, or more than a ring ahead */
	atomic_store(&soft_pdump_ring_of(a.map)->prod, a.prod - 1);
	CHECK_INT(soft_pdump_tick(&f.st, T0 + 9 * SOFT_PDUMP_STALL_NS), 0);
	CHECK_INT(soft_pdump_tick(&f.st, T0 + 19 * SOFT_PDUMP_STALL_NS), 0);
	atomic_store(&soft_pdump_ring_of(a.map)->prod, a.prod + SOFT_PDUMP_SLOTS + 1);
	CHECK_INT(soft_pdump_tick(&f.st, T0 + 9 * SOFT_PDUMP_STALL_NS), 0);
	CHECK_INT(soft_pdump_tick(&f.st, T0 + 19 * SOFT_PDUMP_STALL_NS), 0);
	CHECK_INT(ring_cons(&a), a.prod);
	atomic_store(&soft_pdump_ring_of(a.map)->prod, a.prod);
	/* the process overwriting cons changes nothing for the daemon */
	atomic_store(&soft_pdump_ring_of(a.map)->cons, 12345);
	put_cdc(&a, c.token, 0, 5, 6);
	CHECK_INT(soft_pdump_tick(&f.st, T0 + 9 * SOFT_PDUMP_STALL_NS), 1);
	CHECK_INT(ring_cons(&a), a.prod);
	/* a full ring: one tick drains it all, the budget shared out */
	for (unsigned i = 0; i < SOFT_PDUMP_SLOTS; i++)
		put_cdc(&a, c.token, 0, i, i);
	CHECK_INT(soft_pdump_tick(&f.st, T0 + 9 * SOFT_PDUMP_STALL_NS), SOFT_PDUMP_SLOTS);
	regfx_tcp_close(&c.t);
	regfx_free(&f);
	proc_close(&a);
}

/* ---- records on a TUN device (root) ---- */

struct sink {
	int tun, pkt;
	unsigned ifindex;
};

static bool sink_open(struct sink *k)
{
	struct ifreq ifr = { .ifr_flags = IFF_TUN | IFF_NO_PI };
	char path[96];
	int s;
	FILE *fp;

	k->pkt = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	k->tun = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (k->pkt < 0 || k->tun < 0)
		goto fail;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "smcpd%%d");
	if (ioctl(k->tun, TUNSETIFF, &ifr) < 0)
		goto fail;
	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6", ifr.ifr_name);
	fp = fopen(path, "w");
	if (fp) {
		fputs("1\n", fp);
		fclose(fp);
	}
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		goto fail_s;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		goto fail_s;
	close(s);
	k->ifindex = if_nametoindex(ifr.ifr_name);
	return k->ifindex != 0;
fail_s:
	if (s >= 0)
		close(s);
fail:
	if (k->pkt >= 0)
		close(k->pkt);
	if (k->tun >= 0)
		close(k->tun);
	return false;
}

static int dump_on(struct regfx *f, struct sink *k, uint8_t types, bool legacy)
{
	struct soft_peer admin = f->peer;
	struct mb m;

	admin.net_admin = true;
	admin.conn_id = 50;
	regfx_req(&m, SMC_SOFT_CMD_DUMP_SET, NLM_F_ACK);
	mb_u8(&m, SMC_SOFT_A_DUMP_ON, 1);
	mb_u32(&m, SMC_SOFT_A_IFINDEX, k->ifindex);
	mb_u8(&m, SMC_SOFT_A_DUMP_TYPES, types);
	if (legacy)
		mb_u8(&m, SMC_SOFT_A_DUMP_LEGACY, 1);
	regfx_run(f, &admin, &m, dup(k->pkt));
	return regfx_error(f);
}

static int dump_off(struct regfx *f)
{
	struct soft_peer admin = f->peer;
	struct mb m;

	admin.net_admin = true;
	admin.conn_id = 50;
	regfx_req(&m, SMC_SOFT_CMD_DUMP_SET, NLM_F_ACK);
	mb_u8(&m, SMC_SOFT_A_DUMP_ON, 0);
	regfx_run(f, &admin, &m, -1);
	return regfx_error(f);
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)be16(p) << 16 | be16(p + 2);
}

static uint64_t be64(const uint8_t *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

/* One packet of the dump (IPv4, v2 header): its length, 0 when none comes. */
struct pkt {
	uint8_t b[2048];
	size_t len;
	uint8_t type, flags;
	uint64_t token;
	uint16_t sport, dport;
	const uint8_t *body;
	size_t body_len;
};

static bool next_pkt(struct sink *k, struct pkt *p)
{
	struct pollfd pfd = { .fd = k->tun, .events = POLLIN };

	for (;;) {
		ssize_t n = read(k->tun, p->b, sizeof(p->b));

		if (n < 0 && errno == EAGAIN) {
			if (poll(&pfd, 1, 200) <= 0)
				return false;
			continue;
		}
		if (n < 28 + 64 || p->b[0] != 0x45 || memcmp(p->b + 28, "SMDH", 4))
			continue;
		p->len = (size_t)n;
		p->sport = be16(p->b + 20);
		p->dport = be16(p->b + 22);
		p->type = p->b[28 + 5];
		p->flags = p->b[28 + 6];
		p->token = be64(p->b + 28 + 16);
		p->body = p->b + 28 + 4 * p->b[28 + 7];
		p->body_len = (size_t)n - (size_t)(p->body - p->b);
		return true;
	}
}

TEST(soft_pdump_records)
{
	struct soft_peer other;
	struct regfx f;
	struct proc a, o;
	struct conn c;
	struct sink k;
	struct pkt p;

	if (!sink_open(&k))
		return;
	regfx_init(&f);
	proc_open(&a);
	proc_open(&o);
	conn_open(&f, &c);
	other = f.peer;
	other.conn_id = 3;
	other.uid = f.peer.uid + 1;
	CHECK_INT(attach(&f, &f.peer, &a), 0);
	CHECK_INT(attach(&f, &other, &o), 0);
	CHECK_INT(dump_on(&f, &k, 7, false), 0);
	CHECK_INT(ctl_types(&a), SOFT_DUMP_TYPE_CDC | SOFT_DUMP_TYPE_DATA);

	put_cdc(&a, c.token, 0, 0x10000, 4096);
	put_cdc(&a, c.token, SOFT_DUMP_F_RX, 7, 8);
	put_data(&a, c.token, 5000, 300, 300);
	put_data(&a, c.token, 6000, 100000, SOFT_PDUMP_SNAP_MAX);
	put_data(&a, c.token, 7000, 50, 20);
	put_cdc(&a, c.token + 1000, 0, 1, 1);          /* no such registration */
	put_cdc(&o, c.token, 0, 1, 1);                 /* another user's connection */
	{
		struct soft_pdump_slot *s = reserve(&a);   /* an unknown type */

		s->token = c.token;
		s->type = 17;
		publish(&a, s);
		s = reserve(&a);                           /* caplen over the slot */
		s->token = c.token;
		s->type = SOFT_DUMP_T_DATA;
		s->len = 60000;
		s->caplen = 60000;
		publish(&a, s);
		s = reserve(&a);                           /* more captured than moved */
		s->token = c.token;
		s->type = SOFT_DUMP_T_DATA;
		s->len = 10;
		s->caplen = 11;
		publish(&a, s);
		s = reserve(&a);                           /* a flag it may not set */
		s->token = c.token;
		s->type = SOFT_DUMP_T_CDC;
		s->flags = SOFT_DUMP_F_IPV6;
		publish(&a, s);
	}
	put_cdc(&a, c.token, 0, 9, 9);
	atomic_store(&soft_pdump_ring_of(a.map)->drops, 3);
	CHECK_INT(soft_pdump_tick(&f.st, T0), 12);
	CHECK_INT(soft_pdump_tick(&f.st, T0), 0);

	CHECK(next_pkt(&k, &p));                       /* o (attached last, drained first) */
	CHECK_INT(p.type, SOFT_DUMP_T_LOST);
	CHECK_INT(be64(p.body + 24), 1);

	CHECK(next_pkt(&k, &p));
	CHECK_INT(p.type, SOFT_DUMP_T_CDC);
	CHECK_INT(p.flags, SOFT_DUMP_F_SMCD);
	CHECK_INT(p.token, c.token);
	CHECK_INT(p.sport, c.t.cport);
	CHECK_INT(p.dport, c.t.lport);
	CHECK_INT(be64(p.b + 28 + 8), 1700000000000000000ull);
	CHECK_INT(p.body_len, SOFT_DUMP_CDC_LEN);
	CHECK_INT(be16(p.body), 1);
	CHECK_INT(be32(p.body + 2), 0x10000);
	CHECK_INT(be16(p.body + 6), 2);
	CHECK_INT(be32(p.body + 8), 4096);
	CHECK_INT(p.body[12], 0x80);
	CHECK_INT(p.body[13], 0x40);

	CHECK(next_pkt(&k, &p));
	CHECK_INT(p.type, SOFT_DUMP_T_CDC);
	CHECK_INT(p.flags, SOFT_DUMP_F_SMCD | SOFT_DUMP_F_RX);
	CHECK_INT(p.sport, c.t.lport);
	CHECK_INT(p.dport, c.t.cport);
	CHECK_INT(be32(p.body + 2), 7);

	CHECK(next_pkt(&k, &p));
	CHECK_INT(p.type, SOFT_DUMP_T_DATA);
	CHECK_INT(p.flags, SOFT_DUMP_F_SMCD);
	CHECK_INT(be64(p.body), 5000);
	CHECK_INT(be32(p.body + 8), 300);
	CHECK_INT(be32(p.body + 12), 300);
	CHECK_INT(p.body_len, 16 + 300);
	CHECK_INT(p.body[16], (uint8_t)5000);
	CHECK_INT(p.body[16 + 299], (uint8_t)5299);

	CHECK(next_pkt(&k, &p));                       /* cut to the packet */
	CHECK_INT(p.flags, SOFT_DUMP_F_SMCD | SOFT_DUMP_F_TRUNC);
	CHECK_INT(be64(p.body), 6000);
	CHECK_INT(be32(p.body + 8), 100000);
	CHECK_INT(be32(p.body + 12), 1392);
	CHECK_INT(p.len, 1500);
	CHECK_INT(p.body[16 + 1391], (uint8_t)(6000 + 1391));

	CHECK(next_pkt(&k, &p));                       /* the snapshot length cut it */
	CHECK_INT(p.flags, SOFT_DUMP_F_SMCD | SOFT_DUMP_F_TRUNC);
	CHECK_INT(be32(p.body + 8), 50);
	CHECK_INT(be32(p.body + 12), 20);
	CHECK_INT(p.body_len, 16 + 20);

	CHECK(next_pkt(&k, &p));                       /* the bad ones are not there */
	CHECK_INT(p.type, SOFT_DUMP_T_CDC);
	CHECK_INT(be32(p.body + 2), 9);

	CHECK(next_pkt(&k, &p));                       /* what a's ring lost */
	CHECK_INT(p.type, SOFT_DUMP_T_LOST);
	CHECK_INT(p.token, 0);
	CHECK_INT(p.body_len, SOFT_DUMP_LOST_LEN);
	CHECK_INT(be32(p.body), (uint32_t)f.peer.pid);
	CHECK_INT(be64(p.body + 8), 3);
	CHECK_INT(be64(p.body + 16), 0);
	CHECK_INT(be64(p.body + 24), 5);
	CHECK(!next_pkt(&k, &p));
	CHECK_INT(ring_cons(&a), a.prod);
	CHECK_INT(ring_cons(&o), o.prod);

	/* a process of another namespace cannot record this one's connections */
	{
		struct soft_peer elsewhere = f.peer;
		struct proc e;

		elsewhere.conn_id = 4;
		elsewhere.netns = f.peer.netns + 1;
		proc_open(&e);
		CHECK_INT(attach(&f, &elsewhere, &e), 0);
		CHECK_INT(soft_dump_session_add(&f.st, 60, elsewhere.netns, dup(k.pkt), k.ifindex,
						SOFT_DUMP_MODE_SMCD, 7, false), 0);
		CHECK_INT(ctl_types(&e), SOFT_DUMP_TYPE_CDC | SOFT_DUMP_TYPE_DATA);
		put_cdc(&e, c.token, 0, 1, 1);
		CHECK_INT(soft_pdump_tick(&f.st, T0), 1);
		CHECK(next_pkt(&k, &p));
		CHECK_INT(p.type, SOFT_DUMP_T_LOST);
		CHECK_INT(be64(p.body + 24), 1);
		CHECK(!next_pkt(&k, &p));
		soft_dump_conn_gone(&f.st, 60);
		CHECK_INT(ctl_types(&e), 0);
		soft_conn_gone(&f.st, elsewhere.conn_id);
		proc_close(&e);
	}

	/* SOCK_DEL: the records written before it go out first */
	put_cdc(&a, c.token, 0, 10, 10);
	CHECK_INT(regfx_del(&f, &f.peer, c.token), 0);
	CHECK(next_pkt(&k, &p));
	CHECK_INT(p.token, c.token);
	CHECK_INT(be32(p.body + 2), 10);

	/* the end of the session: the ring is drained into it, then off */
	regfx_tcp_close(&c.t);
	conn_open(&f, &c);
	put_data(&a, c.token, 0, 10, 10);
	CHECK_INT(dump_off(&f), 0);
	CHECK_INT(ctl_types(&a), 0);
	CHECK(next_pkt(&k, &p));
	CHECK_INT(p.type, SOFT_DUMP_T_DATA);
	CHECK(!next_pkt(&k, &p));
	regfx_tcp_close(&c.t);
	regfx_free(&f);
	proc_close(&a);
	proc_close(&o);
	close(k.pkt);
	close(k.tun);
}

/* -t cdc gets no DATA, -t raw no CDC; --legacy headers leave more room for data. */
TEST(soft_pdump_types_and_legacy)
{
	struct regfx f;
	struct proc a;
	struct conn c;
	struct sink k;
	struct pkt p;

	if (!sink_open(&k))
		return;
	regfx_init(&f);
	proc_open(&a);
	conn_open(&f, &c);
	CHECK_INT(attach(&f, &f.peer, &a), 0);
	CHECK_INT(dump_on(&f, &k, SOFT_DUMP_TYPE_CLC | SOFT_DUMP_TYPE_CDC, false), 0);
	CHECK_INT(ctl_types(&a), SOFT_DUMP_TYPE_CDC);
	put_cdc(&a, c.token, 0, 1, 1);
	put_data(&a, c.token, 0, 10, 10);
	soft_pdump_tick(&f.st, T0);
	CHECK(next_pkt(&k, &p) && p.type == SOFT_DUMP_T_CDC);
	CHECK(!next_pkt(&k, &p));
	CHECK_INT(dump_on(&f, &k, SOFT_DUMP_TYPE_CLC | SOFT_DUMP_TYPE_DATA, true), 0);
	CHECK_INT(ctl_types(&a), SOFT_DUMP_TYPE_DATA);
	CHECK_INT(ctl_snaplen(&a), 1500 - 20 - 8 - 32 - 16);
	put_cdc(&a, c.token, 0, 1, 1);
	put_data(&a, c.token, 0, 5000, SOFT_PDUMP_SNAP_MAX);
	soft_pdump_tick(&f.st, T0);
	CHECK(next_pkt(&k, &p) && p.type == SOFT_DUMP_T_DATA);
	CHECK_INT(p.b[28 + 4], 1);
	CHECK_INT(be32(p.body + 12), 1424);
	CHECK_INT(p.len, 1500);
	CHECK(!next_pkt(&k, &p));
	regfx_tcp_close(&c.t);
	regfx_free(&f);
	proc_close(&a);
	close(k.pkt);
	close(k.tun);
}

/* An LLC slot as the preload puts it (dump_llc()): the link's GIDs, then the message. */
static void put_llc(struct proc *p, uint32_t key, uint8_t link_id, uint8_t flags,
		    const uint8_t gid[16], const uint8_t peer_gid[16], uint8_t llc_type)
{
	struct soft_pdump_slot *s = reserve(p);

	s->token = key;
	s->ts_ns = 1700000000000000000ull;
	s->type = SOFT_DUMP_T_LLC;
	s->flags = flags;
	s->link_id = link_id;
	s->len = 44;
	s->caplen = SOFT_PDUMP_LLC_GIDS + 44;
	memcpy(s->data, gid, 16);
	memcpy(s->data + 16, peer_gid, 16);
	s->data[32] = llc_type;
	s->data[33] = 44;
	s->data[32 + 43] = 0xee;
	publish(p, s);
}

static const uint8_t gid_a[16] = { [10] = 0xff, [11] = 0xff, 10, 1, 0, 1 };
static const uint8_t gid_b[16] = { [10] = 0xff, [11] = 0xff, 10, 1, 0, 2 };
static const uint8_t gid_x[16] = { [10] = 0xff, [11] = 0xff, 10, 9, 9, 9 };

/* A host RDMA device whose port has the RoCE v2 GID gid. */
static void host_dev(struct regfx *f, const uint8_t gid[16])
{
	struct soft_dev *d = calloc(1, sizeof(*d));

	CHECK(d != NULL);
	d->kind = SOFT_DEV_ROCE;
	d->host = d->present = true;
	d->n_ports = 1;
	snprintf(d->name, sizeof(d->name), "rxe0");
	memcpy(d->gid_v2[0], gid, 16);
	d->gid_v2_index[0] = 1;
	d->gid_v1_index[0] = -1;
	d->next = f->st.devs;
	f->st.devs = d;
}

/*
 * LLC records of a process's soft SMC-R link group: addressed GID to GID
 * (IPv4), ports 0, the group's id and the link's number before the
 * message; refused for a process that does not use soft SMC-R, a local GID
 * that is none of this host's, and a slot whose lengths disagree.
 */
TEST(soft_pdump_llc_records)
{
	struct soft_lgr *g;
	struct regfx f;
	struct proc a;
	struct sink k;
	struct pkt p;

	if (!sink_open(&k))
		return;
	regfx_init(&f);
	proc_open(&a);
	CHECK_INT(attach(&f, &f.peer, &a), 0);
	CHECK_INT(soft_dump_session_add(&f.st, 50, f.peer.netns, dup(k.pkt), k.ifindex,
					SOFT_DUMP_MODE_SMCR, 0x0f, false), 0);
	CHECK_INT(ctl_types(&a), SOFT_DUMP_TYPE_CDC | SOFT_DUMP_TYPE_DATA | SOFT_DUMP_TYPE_LLC);
	host_dev(&f, gid_a);
	/* no group told, no connection between hosts: not a soft SMC-R process */
	put_llc(&a, 7, 1, 0, gid_a, gid_b, 0x07);
	CHECK_INT(soft_pdump_tick(&f.st, T0), 1);
	CHECK(next_pkt(&k, &p));
	CHECK_INT(p.type, SOFT_DUMP_T_LOST);
	CHECK_INT(be64(p.body + 24), 1);
	CHECK(!next_pkt(&k, &p));

	g = soft_lgr_new(&f.st, false);
	CHECK(g != NULL);
	g->owner = f.peer.conn_id;
	g->key = 7;
	put_llc(&a, 7, 1, 0, gid_a, gid_b, 0x01);
	put_llc(&a, 7, 2, SOFT_DUMP_F_RX, gid_a, gid_b, 0x87);
	put_llc(&a, 8, 0, 0, gid_a, gid_b, 0x04);      /* a group not told yet */
	CHECK_INT(soft_pdump_tick(&f.st, T0 + 2 * SOFT_PDUMP_LOST_NS), 3);

	CHECK(next_pkt(&k, &p));
	CHECK_INT(p.type, SOFT_DUMP_T_LLC);
	CHECK_INT(p.flags, 0);
	CHECK_INT(p.token, 0);
	CHECK_INT(be32(p.b + 12), 0x0a010001);
	CHECK_INT(be32(p.b + 16), 0x0a010002);
	CHECK_INT(p.sport, 0);
	CHECK_INT(p.dport, 0);
	CHECK_INT(be64(p.b + 28 + 8), 1700000000000000000ull);
	CHECK_INT(p.body_len, SOFT_DUMP_LLC_LEN + 44);
	CHECK_INT(be32(p.body), soft_lgr_id(g));
	CHECK_INT(p.body[4], 1);
	CHECK_INT(p.body[8], 0x01);
	CHECK_INT(p.body[9], 44);
	CHECK_INT(p.body[8 + 43], 0xee);

	CHECK(next_pkt(&k, &p));                       /* toward us: addresses swapped */
	CHECK_INT(p.flags, SOFT_DUMP_F_RX);
	CHECK_INT(be32(p.b + 12), 0x0a010002);
	CHECK_INT(be32(p.b + 16), 0x0a010001);
	CHECK_INT(p.body[4], 2);
	CHECK_INT(p.body[8], 0x87);

	CHECK(next_pkt(&k, &p));
	CHECK_INT(be32(p.body), 0);
	CHECK_INT(p.body[8], 0x04);
	CHECK(!next_pkt(&k, &p));

	/* an SMC-D session does not get them */
	soft_dump_conn_gone(&f.st, 50);
	CHECK_INT(soft_dump_session_add(&f.st, 51, f.peer.netns, dup(k.pkt), k.ifindex,
					SOFT_DUMP_MODE_SMCD, 0x0f, false), 0);
	CHECK_INT(ctl_types(&a), SOFT_DUMP_TYPE_CDC | SOFT_DUMP_TYPE_DATA);
	put_llc(&a, 7, 1, 0, gid_a, gid_b, 0x07);
	CHECK_INT(soft_pdump_tick(&f.st, T0 + 2 * SOFT_PDUMP_LOST_NS), 1);
	CHECK(!next_pkt(&k, &p));
	soft_dump_conn_gone(&f.st, 51);
	CHECK_INT(soft_dump_session_add(&f.st, 52, f.peer.netns, dup(k.pkt), k.ifindex,
					SOFT_DUMP_MODE_SMCR, SOFT_DUMP_TYPE_LLC, false), 0);
	CHECK_INT(ctl_types(&a), SOFT_DUMP_TYPE_LLC);

	/* lengths that disagree, a message too long, a flag it may not set, a GID not ours */
	{
		struct soft_pdump_slot *s;

		put_llc(&a, 7, 1, 0, gid_a, gid_b, 0x07);
		soft_pdump_slot_of(a.map, a.prod - 1)->caplen = 44;
		put_llc(&a, 7, 1, 0, gid_a, gid_b, 0x07);
		s = soft_pdump_slot_of(a.map, a.prod - 1);
		s->len = SOFT_DUMP_LLC_MSG_MAX + 1;
		s->caplen = SOFT_PDUMP_LLC_GIDS + SOFT_DUMP_LLC_MSG_MAX + 1;
		put_llc(&a, 7, 1, SOFT_DUMP_F_TRUNC, gid_a, gid_b, 0x07);
		put_llc(&a, 7, 1, 0, gid_x, gid_b, 0x07);
	}
	CHECK_INT(soft_pdump_tick(&f.st, T0 + 4 * SOFT_PDUMP_LOST_NS), 4);
	CHECK(next_pkt(&k, &p));
	CHECK_INT(p.type, SOFT_DUMP_T_LOST);
	CHECK_INT(be64(p.body + 24), 4);
	CHECK(!next_pkt(&k, &p));
	/* a process that goes hands in its last records, though it has no registration */
	host_dev(&f, gid_a);
	put_llc(&a, 7, 1, 0, gid_a, gid_b, 0x04);
	soft_conn_gone(&f.st, f.peer.conn_id);
	CHECK(next_pkt(&k, &p));
	CHECK_INT(p.type, SOFT_DUMP_T_LLC);
	CHECK_INT(p.body[8], 0x04);
	CHECK(!next_pkt(&k, &p));
	regfx_free(&f);
	proc_close(&a);
	close(k.pkt);
	close(k.tun);
}
