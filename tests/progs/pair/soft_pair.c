/*
 * soft_pair: the soft SMC-D pairing (SMC_SOFT PAIR) end to end, as the
 * preload will use it: real TCP connections, control connections per end,
 * the region mapped with dmb_map and bytes moved through it.
 *
 *   soft_pair selftest      everything in one process; "ok ..." per check
 *   soft_pair hold paired | pending | v6 | dump
 *                           a loopback connection whose ends are both paired
 *                           on 16 KiB rings (5000 bytes client to server,
 *                           read; 300 bytes server to client, unread), only
 *                           the client end
 *                           offered (pending), or both over ::1 (v6); prints
 *                           "ready LPORT CPORT CINODE SINODE" and waits for
 *                           a signal; its counters (STATS_ATTACH): 12345
 *                           bytes in 3 sends, 678 bytes in 2 receives.  With
 *                           dump, paired, and once a capture asks for
 *                           records, writes them into its dump ring as the
 *                           preload does: the client's DATA (offset 0, 5000
 *                           bytes 'x') and CDC (producer 0:5000), the
 *                           server's CDC received (consumer 0:5000), and
 *                           one CDC of a token that is none of its own
 *   soft_pair hold llc      no connection: tells a soft SMC-R link group
 *                           (key 7, link 1 on rxe0 port 1 from GID
 *                           ::ffff:10.1.0.1 to ::ffff:10.1.0.2) and, once
 *                           a capture asks for LLC records, writes three
 *                           into its dump ring as the preload does: a
 *                           CONFIRM LINK sent, its response received, and
 *                           a TEST LINK from a GID that is none of this
 *                           host's (10.9.9.9); prints "llc types N" and
 *                           "ready"
 *   soft_pair server ADDR PORT | client ADDR PORT
 *                           one end of a connection across namespaces: prints
 *                           the PAIR status; once paired the client sends
 *                           "ping", the server prints "got ping"; then waits
 *                           for a signal
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "wire/reg_client.h"
#include "wire/dmb.h"
#include "wire/pstats.h"

#define WAIT_MS 5000

static int failures;

static void check(bool ok, const char *what)
{
	printf("%s %s\n", ok ? "ok" : "FAIL", what);
	failures += !ok;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "soft_pair: %s: %s\n", what, strerror(err));
	exit(1);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void ctl_open(struct soft_reg_conn *c)
{
	int rc = soft_reg_open(c, NULL, 0);

	if (rc)
		die("connecting to smc_softd", -rc);
}

/* The reply to seq, polled for up to WAIT_MS. */
static int await(struct soft_reg_conn *c, long seq, struct soft_pair_reply *r)
{
	for (int i = 0; i < WAIT_MS; i++) {
		int rc = soft_reg_pair_poll(c, r);

		if (rc < 0)
			return rc;
		if (rc == 1 && r->seq == (uint32_t)seq)
			return 0;
		if (rc == 1 && r->shm_fd >= 0)
			close(r->shm_fd);
		if (rc == 0)
			sleep_ms(1);
	}
	return -ETIMEDOUT;
}

static int pair(struct soft_reg_conn *c, int fd, uint8_t role, uint32_t snd, uint32_t rcv,
		struct soft_pair_reply *r)
{
	struct soft_pair_req q = { .role = role, .sndbuf = snd, .rcvbuf = rcv };
	long seq = soft_reg_pair_send(c, fd, &q);

	if (seq < 0)
		return (int)seq;
	return await(c, seq, r);
}

static int listener(int family, const char *addr, uint16_t port, uint16_t *bound)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len;
	int one = 1, fd = socket(family, SOCK_STREAM, 0);

	if (fd < 0)
		die("socket", errno);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		inet_pton(AF_INET, addr, &sin->sin_addr);
		len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		inet_pton(AF_INET6, addr, &sin6->sin6_addr);
		len = sizeof(*sin6);
	}
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 8) < 0)
		die("listen", errno);
	len = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &len);
	*bound = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

static int connect_to(int family, const char *addr, uint16_t port)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len;
	int fd = socket(family, SOCK_STREAM, 0);

	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		inet_pton(AF_INET, addr, &sin->sin_addr);
		len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		inet_pton(AF_INET6, addr, &sin6->sin6_addr);
		len = sizeof(*sin6);
	}
	if (fd < 0 || connect(fd, (struct sockaddr *)&ss, len) < 0)
		die("connect", errno);
	return fd;
}

static unsigned long inode(int fd)
{
	struct stat sb;

	return fstat(fd, &sb) ? 0 : (unsigned long)sb.st_ino;
}

static uint16_t local_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	getsockname(fd, (struct sockaddr *)&ss, &len);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

static void map(struct soft_pair_reply *r, struct dmb_conn *d)
{
	int rc = dmb_map(r->shm_fd, r->side, d);

	if (rc)
		die("dmb_map", -rc);
	close(r->shm_fd);
	r->shm_fd = -1;
	/* the preload's part: our consumer line tells the peer we are here */
	atomic_store(&d->rx.ctrl->attached, 1);
}

static ssize_t put(struct dmb_conn *d, const void *p, size_t n)
{
	struct iovec iov = { .iov_base = (void *)p, .iov_len = n };

	return dmb_produce(d, &iov, 1, 0, NULL);
}

static ssize_t get(struct dmb_conn *d, void *p, size_t n)
{
	struct iovec iov = { .iov_base = p, .iov_len = n };

	for (int i = 0; i < WAIT_MS; i++) {
		ssize_t k = dmb_consume(d, &iov, 1, 0, NULL);

		if (k != -EAGAIN)
			return k;
		sleep_ms(1);
	}
	return -ETIMEDOUT;
}

/* 1 MiB each way in chunks, checked byte by byte. */
static bool stream(struct dmb_conn *from, struct dmb_conn *to)
{
	static unsigned char out[7000], in[7000];
	size_t total = 1 << 20, sent = 0, got = 0;

	while (got < total) {
		size_t n = total - sent < sizeof(out) ? total - sent : sizeof(out);
		ssize_t k;

		for (size_t i = 0; i < n; i++)
			out[i] = (unsigned char)((sent + i) * 7);
		k = n ? put(from, out, n) : 0;
		if (k < 0 && k != -EAGAIN)
			return false;
		sent += k > 0 ? (size_t)k : 0;
		k = get(to, in, sizeof(in));
		if (k <= 0)
			return false;
		for (ssize_t i = 0; i < k; i++)
			if (in[i] != (unsigned char)((got + (size_t)i) * 7))
				return false;
		got += (size_t)k;
	}
	return true;
}

/*
 * A sealed pstats memfd with some counts: 12345 bytes in 3 sends, 678 in 2
 * receives.  With map, it stays mapped there, dump ring included.
 */
static int pstats_memfd(bool seal, void **map)
{
	int fd = memfd_create("pstats", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	struct soft_pstats *p;

	if (fd < 0 || ftruncate(fd, SOFT_PSTATS_MAP_LEN) < 0)
		die("memfd", errno);
	p = mmap(NULL, SOFT_PSTATS_MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap", errno);
	p->magic = SOFT_PSTATS_MAGIC;
	p->version = SOFT_PSTATS_VERSION;
	p->size = sizeof(*p);
	atomic_store(&p->io[SOFT_PSTATS_D].tx_bytes, 12345);
	atomic_store(&p->io[SOFT_PSTATS_D].tx_cnt, 3);
	atomic_store(&p->io[SOFT_PSTATS_D].tx_pd[0], 3);
	atomic_store(&p->io[SOFT_PSTATS_D].rx_bytes, 678);
	atomic_store(&p->io[SOFT_PSTATS_D].rx_cnt, 2);
	atomic_store(&p->io[SOFT_PSTATS_D].rx_pd[0], 2);
	if (map)
		*map = p;
	else
		munmap(p, SOFT_PSTATS_MAP_LEN);
	if (seal)
		fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK);
	return fd;
}

static void selftest_stats(struct soft_reg_conn *c)
{
	int fd = pstats_memfd(false, NULL);

	check(soft_reg_stats_attach(c, fd) == -EINVAL, "stats_attach unsealed: EINVAL");
	fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK);
	check(soft_reg_stats_attach(c, fd) == 0, "stats_attach");
	check(soft_reg_stats_attach(c, fd) == 0, "stats_attach again: replaces the first");
	close(fd);
}

static int selftest(void)
{
	struct soft_reg_conn a, b;
	struct soft_pair_reply ra, rb, rx;
	struct dmb_conn da, db;
	char buf[16];
	uint16_t lport;
	int lst = listener(AF_INET, "127.0.0.1", 0, &lport);
	int cli = connect_to(AF_INET, "127.0.0.1", lport);
	int srv = accept(lst, NULL, NULL);

	ctl_open(&a);
	ctl_open(&b);
	selftest_stats(&a);
	check(pair(&a, cli, 0, 16384, 131072, &ra) == 0, "client PAIR answered");
	check(ra.error == 0 && ra.status == SMC_SOFT_PAIR_PENDING && ra.side == 0,
	      "client PENDING side 0");
	check(ra.shm_fd >= 0 && ra.ring_size[0] == 16384 && ra.ring_size[1] == 131072 &&
	      ra.shm_size == 4096 + 16384 + 131072, "client region 16K/128K");
	check(pair(&b, srv, 1, 0, 0, &rb) == 0, "server PAIR answered");
	check(rb.error == 0 && rb.status == SMC_SOFT_PAIR_PAIRED && rb.side == 1,
	      "server PAIRED side 1");
	check(rb.shm_fd >= 0 && rb.ring_size[0] == 131072 && rb.ring_size[1] == 16384 &&
	      rb.shm_size == ra.shm_size, "server region 128K/16K");
	check(rb.peer_dmb_token == ra.dmb_token && rb.lgr_id != 0, "tokens and link group");
	check(pair(&b, srv, 1, 0, 0, &rx) == 0 && rx.error == -EEXIST, "PAIR again: EEXIST");
	map(&ra, &da);
	map(&rb, &db);
	check(put(&da, "hello", 5) == 5 && get(&db, buf, sizeof(buf)) == 5 &&
	      !memcmp(buf, "hello", 5), "client to server");
	check(put(&db, "world!", 6) == 6 && get(&da, buf, sizeof(buf)) == 6 &&
	      !memcmp(buf, "world!", 6), "server to client");
	check(stream(&da, &db) && stream(&db, &da), "1 MiB each way");
	check(soft_reg_del_send(&b, rb.token, -1) == 0 && soft_reg_del_send(&b, rb.token, -1) == 0,
	      "SOCK_DEL sent twice");
	sleep_ms(50);
	check(soft_reg_pair_poll(&b, &rx) == 0, "the second SOCK_DEL's error is skipped");
	dmb_unmap(&da);
	dmb_unmap(&db);
	soft_reg_close(&a);
	soft_reg_close(&b);
	close(cli);
	close(srv);
	close(lst);
	return failures ? 1 : 0;
}

/* The preload's side of the dump ring (pstats.h): reserve, fill, publish. */
static struct soft_pdump_slot *slot_reserve(void *map, uint64_t *idx)
{
	struct soft_pdump_ring *r = soft_pdump_ring_of(map);
	uint64_t prod = atomic_load(&r->prod);
	struct soft_pdump_slot *s;

	do {
		if (prod - atomic_load(&r->cons) >= SOFT_PDUMP_SLOTS) {
			atomic_fetch_add(&r->drops, 1);
			return NULL;
		}
	} while (!atomic_compare_exchange_weak(&r->prod, &prod, prod + 1));
	s = soft_pdump_slot_of(map, prod);
	memset((char *)s + sizeof(s->seq), 0, sizeof(*s) - sizeof(s->seq));
	*idx = prod;
	return s;
}

static void dump_cdc(void *map, uint64_t token, uint8_t flags, uint32_t prod, uint32_t cons)
{
	uint64_t idx;
	struct soft_pdump_slot *s = slot_reserve(map, &idx);
	struct timespec ts;

	if (!s)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	s->token = token;
	s->ts_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	s->type = 16;                           /* SOFT_DUMP_T_CDC */
	s->flags = flags;
	s->prod_count = prod;
	s->cons_count = cons;
	atomic_store_explicit(&s->seq, idx + 1, memory_order_release);
}

static void dump_data(void *map, uint64_t token, const char *buf, uint32_t len, uint32_t snap)
{
	uint64_t idx;
	struct soft_pdump_slot *s = slot_reserve(map, &idx);
	uint32_t cap = len < snap ? len : snap;

	if (!s)
		return;
	if (cap > SOFT_PDUMP_SNAP_MAX)
		cap = SOFT_PDUMP_SNAP_MAX;
	s->token = token;
	s->type = 32;                           /* SOFT_DUMP_T_DATA */
	s->len = len;
	s->caplen = (uint16_t)cap;
	memcpy(s->data, buf, cap);
	atomic_store_explicit(&s->seq, idx + 1, memory_order_release);
}

/* Once a capture asks (types 2 CDC, 4 DATA): the records of the bytes moved. */
static void dump_records(void *map, uint64_t cli, uint64_t srv, const char *buf, uint32_t len)
{
	struct soft_pdump_ctl *c = soft_pdump_ctl_of(map);
	uint32_t types = 0;

	for (int i = 0; i < WAIT_MS && !types; i++) {
		types = atomic_load_explicit(&c->types, memory_order_acquire);
		if (!types)
			sleep_ms(1);
	}
	printf("dump types %u snaplen %u\n", types, atomic_load(&c->snaplen));
	if (types & 4)
		dump_data(map, cli, buf, len, atomic_load(&c->snaplen));
	if (types & 2) {
		dump_cdc(map, cli, 0, len, 0);
		dump_cdc(map, srv, 1, 0, len);  /* SOFT_DUMP_F_RX */
		dump_cdc(map, srv + cli + 1000, 0, 1, 1);
	}
}

/* An LLC slot (type 8): the link's GIDs, then a 44-byte message of type t and flags. */
static void dump_llc(void *map, uint8_t last_octet, uint8_t flags, uint8_t t, uint8_t msg_flags)
{
	uint8_t gid[16] = { [10] = 0xff, [11] = 0xff, 10, 1, 0, 1 };
	uint8_t peer[16] = { [10] = 0xff, [11] = 0xff, 10, 1, 0, 2 };
	uint64_t idx;
	struct soft_pdump_slot *s = slot_reserve(map, &idx);

	if (!s)
		return;
	if (last_octet != 1)
		memcpy(gid + 12, (uint8_t[]){ 10, 9, 9, last_octet }, 4);
	s->token = 7;
	s->type = 8;                            /* SOFT_DUMP_T_LLC */
	s->flags = flags;
	s->link_id = 1;
	s->len = 44;
	s->caplen = SOFT_PDUMP_LLC_GIDS + 44;
	memcpy(s->data, gid, 16);
	memcpy(s->data + 16, peer, 16);
	memset(s->data + 32, 0, 44);
	s->data[32] = t;
	s->data[33] = 44;
	s->data[35] = msg_flags;
	atomic_store_explicit(&s->seq, idx + 1, memory_order_release);
}

static void on_signal(int sig)
{
	(void)sig;
}

static void wait_signal(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigwait(&set, &sig);
}

static void block_signals(void)
{
	sigset_t set;

	signal(SIGTERM, on_signal);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

static int hold_llc(void)
{
	struct smc_soft_link l = { .link_id = 1, .ibport = 1, .conns = 1, .ibdev = "rxe0",
				   .gid = { [10] = 0xff, [11] = 0xff, 10, 1, 0, 1 },
				   .peer_gid = { [10] = 0xff, [11] = 0xff, 10, 1, 0, 2 } };
	struct soft_reg_conn a;
	struct soft_pdump_ctl *c;
	uint32_t types = 0;
	void *ring;
	int fd;

	ctl_open(&a);
	if (soft_reg_lgr_send(&a, 7, 1, "peerhost", 1, &l, 1))
		die("LGR", EPROTO);
	fd = pstats_memfd(true, &ring);
	if (soft_reg_stats_attach(&a, fd))
		die("STATS_ATTACH", EPROTO);
	close(fd);
	c = soft_pdump_ctl_of(ring);
	for (int i = 0; i < WAIT_MS && !(types & 8); i++) {
		types = atomic_load_explicit(&c->types, memory_order_acquire);
		if (!(types & 8))
			sleep_ms(1);
	}
	printf("llc types %u\n", types);
	if (types & 8) {
		dump_llc(ring, 1, 0, 0x01, 0x03);       /* CONFIRM LINK */
		dump_llc(ring, 1, 1, 0x01, 0x83);       /* its response, SOFT_DUMP_F_RX */
		dump_llc(ring, 9, 0, 0x07, 0);          /* TEST LINK from a GID not ours */
	}
	printf("ready\n");
	wait_signal();
	return 0;
}

static const char *status_name(const struct soft_pair_reply *r)
{
	static char text[64];

	if (r->error) {
		snprintf(text, sizeof(text), "error %s", strerror(-r->error));
		return text;
	}
	switch (r->status) {
	case SMC_SOFT_PAIR_PENDING: return "PENDING";
	case SMC_SOFT_PAIR_PAIRED:  return "PAIRED";
	}
	snprintf(text, sizeof(text), "DECLINED 0x%08x", r->reason);
	return text;
}

static int hold(const char *mode)
{
	bool v6 = !strcmp(mode, "v6"), pending = !strcmp(mode, "pending");
	bool dump = !strcmp(mode, "dump");
	void *ring = NULL;
	const char *addr = v6 ? "::1" : "127.0.0.1";
	int family = v6 ? AF_INET6 : AF_INET;
	struct soft_reg_conn a, b;
	struct soft_pair_reply ra, rb;
	struct dmb_conn da, db;
	static char buf[5000];
	uint16_t lport;
	int lst = listener(family, addr, 0, &lport);
	int cli = connect_to(family, addr, lport);
	int srv = accept(lst, NULL, NULL), fd;

	/* as a preloaded process's, its listener would be listed (smcss -a) */
	close(lst);
	ctl_open(&a);
	ctl_open(&b);
	fd = pstats_memfd(true, dump ? &ring : NULL);
	if (soft_reg_stats_attach(&a, fd))
		die("STATS_ATTACH", EPROTO);
	close(fd);
	if (pair(&a, cli, 0, 16384, 16384, &ra))
		die("PAIR", ETIMEDOUT);
	printf("client %s\n", status_name(&ra));
	if (!pending) {
		if (pair(&b, srv, 1, 0, 0, &rb))
			die("PAIR", ETIMEDOUT);
		printf("server %s\n", status_name(&rb));
	}
	if (!pending && !ra.error && !rb.error && rb.status == SMC_SOFT_PAIR_PAIRED) {
		map(&ra, &da);
		map(&rb, &db);
		memset(buf, 'x', sizeof(buf));
		if (put(&da, buf, sizeof(buf)) != sizeof(buf) ||
		    get(&db, buf, sizeof(buf)) != sizeof(buf) || put(&db, buf, 300) != 300)
			die("moving bytes", EPROTO);
		dmb_rx_flush(&db, NULL);
		if (dump)
			dump_records(ring, ra.token, rb.token, buf, sizeof(buf));
	}
	printf("ready %u %u %lu %lu\n", lport, local_port(cli), inode(cli), inode(srv));
	wait_signal();
	return 0;
}

static int one_end(bool server, const char *addr, uint16_t port)
{
	int family = strchr(addr, ':') ? AF_INET6 : AF_INET;
	struct soft_reg_conn c;
	struct soft_pair_reply r;
	struct dmb_conn d;
	char buf[8];
	int fd;

	if (server) {
		uint16_t bound;
		int lst = listener(family, addr, port, &bound);

		printf("listening\n");
		fd = accept(lst, NULL, NULL);
	} else {
		fd = connect_to(family, addr, port);
	}
	ctl_open(&c);
	if (pair(&c, fd, server, 0, 0, &r))
		die("PAIR", ETIMEDOUT);
	printf("%s\n", status_name(&r));
	if (!r.error && r.status != SMC_SOFT_PAIR_DECLINED) {
		map(&r, &d);
		if (server && get(&d, buf, 4) == 4 && !memcmp(buf, "ping", 4))
			printf("got ping\n");
		/* side 0 waits for its peer on the region before it sends */
		for (int i = 0; !server && r.side == 0 && i < WAIT_MS; i++) {
			if (atomic_load(&d.tx.ctrl->attached))
				break;
			sleep_ms(1);
		}
		if (!server && put(&d, "ping", 4) != 4)
			die("send", EPROTO);
	}
	printf("done\n");
	wait_signal();
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	block_signals();
	if (argc == 2 && !strcmp(argv[1], "selftest"))
		return selftest();
	if (argc == 3 && !strcmp(argv[1], "hold") && !strcmp(argv[2], "llc"))
		return hold_llc();
	if (argc == 3 && !strcmp(argv[1], "hold"))
		return hold(argv[2]);
	if (argc == 4 && (!strcmp(argv[1], "server") || !strcmp(argv[1], "client")))
		return one_end(argv[1][0] == 's', argv[2], (uint16_t)atoi(argv[3]));
	fprintf(stderr, "usage: soft_pair selftest | hold paired|pending|v6|dump|llc | "
		"server|client ADDR PORT\n");
	return 2;
}
