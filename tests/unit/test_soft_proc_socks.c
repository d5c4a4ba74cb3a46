/*
 * The TCP sockets of preloaded processes (soft/proc_socks.h): the
 * /proc/net/tcp and tcp6 line parser on lines copied from a real machine
 * and on broken ones, the scan of this process's own sockets, and what
 * sock_diag makes of them beside the registrations.
 */
#include "unit.h"
#include "regfx.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
#include <netinet/tcp.h>

#include "diag.h"
#include "soft/fabric/devices.h"
#include "soft/service/proc_socks.h"
#include "soft/base/state.h"
#include "soft/service/service.h"

#define HDR4 "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   " \
	     "uid  timeout inode                                                     "
#define HDR6 "  sl  local_address                         remote_address                        " \
	     "st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode"
#define LISTEN4 "   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     " \
		"0        0 565 1 000000006e0e3b32 100 0 0 10 0                       "
#define TIMEWAIT4 "   1: 0100007F:9411 0100007F:87CA 06 00000000:00000000 03:0000105E 00000000  " \
		  "   0        0 0 3 000000008bd420dc                                      "
#define EST4 " 108: 0100007F:8C30 0100007F:D505 01 00000000:00000000 00:00000000 00000000     " \
	     "0        0 13123425 2 00000000327d717d 20 0 0 10 -1                  "
#define LISTEN6 "   0: 00000000000000000000000000000000:D505 00000000000000000000000000000000:0000 " \
		"0A 00000000:00000000 00:00000000 00000000     0        0 13123424 1 " \
		"0000000026592cd6 100 0 0 10 0"
#define MAPPED6 "   1: 0000000000000000FFFF00000100007F:D505 0000000000000000FFFF00000100007F:8C30 " \
		"01 00000000:00000000 00:00000000 00000000     0        0 13123426 1 " \
		"000000004fc2b599 20 0 0 10 -1"
#define LOOP6 "   1: 00000000000000000000000001000000:D2A6 00000000000000000000000001000000:8207 " \
	      "01 00000000:00000000 00:00000000 00000000  1000        0 13131718 2 " \
	      "00000000c1606bb0 20 0 0 10 -1"

/*
 * The lines above are as an x86_64 kernel printed them: each 32-bit word of
 * an address is %08X of the word as it lies in memory, so the text depends
 * on the byte order.  host_line() writes a line as this host's kernel would.
 */
static void host_words(char *hex, size_t len)
{
	for (size_t i = 0; i + 8 <= len; i += 8) {
		char text[9];
		uint32_t printed, word;
		uint8_t bytes[4];

		memcpy(text, hex + i, 8);
		text[8] = '\0';
		printed = (uint32_t)strtoul(text, NULL, 16);
		for (int b = 0; b < 4; b++)
			bytes[b] = (uint8_t)(printed >> (8 * b));
		memcpy(&word, bytes, 4);
		snprintf(text, sizeof(text), "%08X", word);
		memcpy(hex + i, text, 8);
	}
}

#define LINE_MAX_LEN 320
#define H(line) host_line(line, (char[LINE_MAX_LEN]){ 0 })

static const char *host_line(const char *x86, char *out)
{
	char *p = out, *colon;

	snprintf(out, LINE_MAX_LEN, "%s", x86);
	while (*p == ' ')
		p++;
	p = strchr(p, ' ');
	for (int end = 0; p && end < 2; end++) {
		while (*p == ' ')
			p++;
		colon = strchr(p, ':');
		if (!colon)
			break;
		host_words(p, (size_t)(colon - p));
		p = strchr(colon, ' ');
	}
	return out;
}

static int parse(const char *line, int family, struct proc_sock *ps)
{
	return proc_sock_parse(line, strlen(line), family, ps);
}

static uint64_t pow10u(size_t n)
{
	uint64_t v = 1;

	while (n--)
		v *= 10;
	return v;
}

static bool addr_is(const uint8_t *a, int family, const char *text)
{
	uint8_t want[16] = { 0 };

	return inet_pton(family, text, want) == 1 && !memcmp(a, want, 16);
}

TEST(soft_proc_socks_parse_tcp)
{
	struct proc_sock ps;

	CHECK_INT(parse(HDR4, AF_INET, &ps), 0);
	CHECK_INT(parse("", AF_INET, &ps), 0);
	CHECK_INT(parse("   ", AF_INET, &ps), 0);

	CHECK_INT(parse(LISTEN4, AF_INET, &ps), 1);
	CHECK_INT(ps.family, AF_INET);
	CHECK_INT(ps.tcp_state, TCP_LISTEN);
	CHECK_INT(ps.sport, 2024);
	CHECK_INT(ps.dport, 0);
	CHECK(addr_is(ps.src, AF_INET, "0.0.0.0") && addr_is(ps.dst, AF_INET, "0.0.0.0"));
	CHECK_INT(ps.uid, 0);
	CHECK_INT(ps.inode, 565);

	CHECK_INT(parse(H(EST4), AF_INET, &ps), 1);
	CHECK_INT(ps.tcp_state, TCP_ESTABLISHED);
	CHECK(addr_is(ps.src, AF_INET, "127.0.0.1") && addr_is(ps.dst, AF_INET, "127.0.0.1"));
	CHECK_INT(ps.sport, 35888);
	CHECK_INT(ps.dport, 54533);
	CHECK_INT(ps.inode, 13123425);

	/* TIME_WAIT has no socket inode: parsed, never held by a process */
	CHECK_INT(parse(H(TIMEWAIT4), AF_INET, &ps), 1);
	CHECK_INT(ps.tcp_state, TCP_TIME_WAIT);
	CHECK_INT(ps.inode, 0);
}

TEST(soft_proc_socks_parse_tcp6)
{
	struct proc_sock ps;

	CHECK_INT(parse(HDR6, AF_INET6, &ps), 0);

	CHECK_INT(parse(LISTEN6, AF_INET6, &ps), 1);
	CHECK_INT(ps.family, AF_INET6);
	CHECK_INT(ps.tcp_state, TCP_LISTEN);
	CHECK(addr_is(ps.src, AF_INET6, "::"));
	CHECK_INT(ps.sport, 54533);
	CHECK_INT(ps.inode, 13123424);

	/* an IPv4 peer of a dual-stack socket stays AF_INET6, v4-mapped */
	CHECK_INT(parse(H(MAPPED6), AF_INET6, &ps), 1);
	CHECK_INT(ps.family, AF_INET6);
	CHECK(addr_is(ps.src, AF_INET6, "::ffff:127.0.0.1"));
	CHECK(addr_is(ps.dst, AF_INET6, "::ffff:127.0.0.1"));
	CHECK_INT(ps.sport, 54533);
	CHECK_INT(ps.dport, 35888);
	CHECK_INT(ps.inode, 13123426);

	CHECK_INT(parse(H(LOOP6), AF_INET6, &ps), 1);
	CHECK(addr_is(ps.src, AF_INET6, "::1") && addr_is(ps.dst, AF_INET6, "::1"));
	CHECK_INT(ps.sport, 0xd2a6);
	CHECK_INT(ps.dport, 0x8207);
	CHECK_INT(ps.uid, 1000);
	CHECK_INT(ps.inode, 13131718);
}

TEST(soft_proc_socks_parse_rejects)
{
	static const char *const bad4[] = {
		"   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0",
		"   0 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 5",
		"   0: 0000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 5",
		"   0: 00000000:07E 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 5",
		"   0: 0000000G:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 5",
		"   0: 00000000-07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 5",
		"   0: 00000000:07E8 00000000:0000 00 00000000:00000000 00:00000000 00000000 0 0 5",
		"   0: 00000000:07E8 00000000:0000 0C 00000000:00000000 00:00000000 00000000 0 0 5",
		"   0: 00000000:07E8 00000000:0000 A 00000000:00000000 00:00000000 00000000 0 0 5",
		"   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000 "
		"4294967296 0 5",
		"   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000 -1 0 5",
		"   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 "
		"18446744073709551616",
		"   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 5x",
		"garbage",
	};
	struct proc_sock ps;

	for (size_t i = 0; i < sizeof(bad4) / sizeof(bad4[0]); i++)
		if (parse(bad4[i], AF_INET, &ps) != -EINVAL)
			unit_fail(__FILE__, __LINE__, "accepted: %s", bad4[i]);
	/* a tcp6 line is not a tcp line, nor the other way round */
	CHECK_INT(parse(H(MAPPED6), AF_INET, &ps), -EINVAL);
	CHECK_INT(parse(H(EST4), AF_INET6, &ps), -EINVAL);
	CHECK_INT(parse(H(EST4), AF_UNIX, &ps), -EINVAL);
	/* the largest values still fit */
	CHECK_INT(parse("0: 00000000:FFFF 00000000:0000 0A 0:0 0:0 0 4294967295 0 "
			"18446744073709551615", AF_INET, &ps), 1);
	CHECK_INT(ps.uid, 4294967295u);
	CHECK(ps.inode == UINT64_MAX);
}

/*
 * Every cut of a line: not a socket line before the inode, from there on
 * the line with the inode's digits so far.  Each copy is exactly len bytes,
 * so a read past it would be caught by ASan.
 */
static void check_cuts(const char *line, int family, const char *inode)
{
	size_t n = strlen(line), at = (size_t)(strstr(line, inode) - line);
	struct proc_sock ps;

	for (size_t len = 0; len <= n; len++) {
		char *copy = malloc(len ? len : 1);
		size_t digits = len > at ? len - at : 0;
		int rc;

		memcpy(copy, line, len);
		rc = proc_sock_parse(copy, len, family, &ps);
		if (digits > strlen(inode))
			digits = strlen(inode);
		if (!digits ? rc == 1 : rc != 1 ||
		    ps.inode != strtoull(inode, NULL, 10) / (uint64_t)pow10u(strlen(inode) - digits))
			unit_fail(__FILE__, __LINE__, "cut at %zu: %d", len, rc);
		free(copy);
	}
}

TEST(soft_proc_socks_parse_bounds)
{
	struct proc_sock ps;
	unsigned seed = 12345;

	check_cuts(H(EST4), AF_INET, "13123425");
	check_cuts(H(MAPPED6), AF_INET6, "13123426");
	for (int i = 0; i < 5000; i++) {
		size_t len = (size_t)(rand_r(&seed) % 200);
		char *buf = malloc(len ? len : 1);

		for (size_t j = 0; j < len; j++)
			buf[j] = rand_r(&seed) % 4 ? "0123456789ABCDEF: "[rand_r(&seed) % 18]
						   : (char)rand_r(&seed);
		CHECK(proc_sock_parse(buf, len, i & 1 ? AF_INET6 : AF_INET, &ps) <= 1);
		free(buf);
	}
}

/* ---- the scan of this process ----------------------------------------- */

static const struct proc_sock *by_inode(const struct proc_socks *ps, uint64_t inode)
{
	for (size_t i = 0; i < ps->n; i++)
		if (ps->v[i].inode == inode)
			return &ps->v[i];
	return NULL;
}

static bool peer_of(const struct proc_socks *ps, int family, int fd)
{
	struct sockaddr_storage l, r;
	socklen_t ll = sizeof(l), rl = sizeof(r);
	uint8_t la[16] = { 0 }, ra[16] = { 0 };
	uint16_t lp, rp;

	if (getsockname(fd, (struct sockaddr *)&l, &ll) || getpeername(fd, (struct sockaddr *)&r, &rl))
		return false;
	if (family == AF_INET) {
		memcpy(la, &((struct sockaddr_in *)&l)->sin_addr, 4);
		memcpy(ra, &((struct sockaddr_in *)&r)->sin_addr, 4);
		lp = ntohs(((struct sockaddr_in *)&l)->sin_port);
		rp = ntohs(((struct sockaddr_in *)&r)->sin_port);
	} else {
		memcpy(la, &((struct sockaddr_in6 *)&l)->sin6_addr, 16);
		memcpy(ra, &((struct sockaddr_in6 *)&r)->sin6_addr, 16);
		lp = ntohs(((struct sockaddr_in6 *)&l)->sin6_port);
		rp = ntohs(((struct sockaddr_in6 *)&r)->sin6_port);
	}
	return proc_socks_peer(ps, family, la, lp, ra, rp);
}

TEST(soft_proc_socks_scan_own_sockets)
{
	static const struct soft_state none;     /* a daemon state with no registration */
	const struct soft_state *st = &none;
	struct regfx_tcp t;
	struct proc_socks ps;
	const struct proc_sock *p;

	regfx_tcp_open(&t, AF_INET);
	proc_socks_scan(st, getpid(), &ps);
	CHECK_INT(ps.n, 0);                      /* nobody attached */
	proc_socks_free(&ps);

	CHECK_INT(proc_socks_attach(st, 7, getpid()), 0);
	CHECK_INT(proc_socks_attach(st, 8, getpid()), 0);   /* a second connection: once each */
	proc_socks_scan(st, getpid(), &ps);
	p = by_inode(&ps, regfx_inode(t.lst));
	CHECK(p && p->tcp_state == TCP_LISTEN && p->sport == t.lport && p->here &&
	      p->family == AF_INET && p->uid == geteuid());
	p = by_inode(&ps, regfx_inode(t.cli));
	CHECK(p && p->tcp_state == TCP_ESTABLISHED && p->sport == t.cport && p->dport == t.lport);
	CHECK(by_inode(&ps, regfx_inode(t.srv)) != NULL);
	for (size_t i = 0; i < ps.n; i++)
		for (size_t j = i + 1; j < ps.n; j++)
			if (ps.v[i].inode == ps.v[j].inode)
				unit_fail(__FILE__, __LINE__, "inode %llu twice",
					  (unsigned long long)ps.v[i].inode);
	CHECK(peer_of(&ps, AF_INET, t.cli) && peer_of(&ps, AF_INET, t.srv));
	proc_socks_free(&ps);

	/* a requester whose namespace is unknown: found, but not here */
	proc_socks_scan(st, 0, &ps);
	p = by_inode(&ps, regfx_inode(t.lst));
	CHECK(!p || !p->here);
	proc_socks_free(&ps);

	/* the peer is gone: no preloaded other end */
	close(t.srv);
	t.srv = -1;
	proc_socks_scan(st, getpid(), &ps);
	CHECK(by_inode(&ps, regfx_inode(t.cli)) != NULL);
	CHECK(!peer_of(&ps, AF_INET, t.cli));
	proc_socks_free(&ps);

	proc_socks_gone(st, 7);
	proc_socks_gone(st, 8);
	proc_socks_scan(st, getpid(), &ps);
	CHECK_INT(ps.n, 0);
	proc_socks_free(&ps);
	regfx_tcp_close(&t);
}

/*
 * The image after execve() attaches again on the same connection: still one
 * mark, gone with the connection (a second one outlived it, and filled the
 * PS_MAX_PROCS scanned with dead processes).
 */
TEST(soft_proc_socks_attach_again)
{
	static const struct soft_state none;
	const struct soft_state *st = &none;
	struct regfx_tcp t;
	struct proc_socks ps;

	regfx_tcp_open(&t, AF_INET);
	CHECK_INT(proc_socks_attach(st, 9, getpid()), 0);
	CHECK_INT(proc_socks_attach(st, 9, getpid()), 0);
	proc_socks_scan(st, getpid(), &ps);
	CHECK(by_inode(&ps, regfx_inode(t.lst)) != NULL);
	proc_socks_free(&ps);
	proc_socks_gone(st, 9);
	proc_socks_scan(st, getpid(), &ps);
	CHECK_INT(ps.n, 0);
	proc_socks_free(&ps);
	regfx_tcp_close(&t);
}

/* An IPv4 client of a dual-stack listener: the accepted end is v4-mapped in tcp6. */
TEST(soft_proc_socks_scan_v4_mapped)
{
	static const struct soft_state none;     /* a daemon state with no registration */
	const struct soft_state *st = &none;
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT };
	struct sockaddr_in a4 = { .sin_family = AF_INET };
	socklen_t len = sizeof(a6);
	int lst = socket(AF_INET6, SOCK_STREAM, 0), cli = socket(AF_INET, SOCK_STREAM, 0), srv;
	int off = 0;
	struct proc_socks ps;
	const struct proc_sock *p;

	setsockopt(lst, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	CHECK(bind(lst, (struct sockaddr *)&a6, sizeof(a6)) == 0 && listen(lst, 1) == 0);
	getsockname(lst, (struct sockaddr *)&a6, &len);
	a4.sin_port = a6.sin6_port;
	a4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(connect(cli, (struct sockaddr *)&a4, sizeof(a4)) == 0);
	srv = accept(lst, NULL, NULL);
	CHECK(srv >= 0);
	CHECK_INT(proc_socks_attach(st, 1, getpid()), 0);
	proc_socks_scan(st, getpid(), &ps);
	p = by_inode(&ps, regfx_inode(srv));
	CHECK(p && p->family == AF_INET6 && addr_is(p->src, AF_INET6, "::ffff:127.0.0.1"));
	p = by_inode(&ps, regfx_inode(cli));
	CHECK(p && p->family == AF_INET && addr_is(p->src, AF_INET, "127.0.0.1"));
	CHECK(peer_of(&ps, AF_INET, cli) && peer_of(&ps, AF_INET6, srv));
	proc_socks_free(&ps);
	proc_socks_gone(st, 1);
	close(srv);
	close(cli);
	close(lst);
}

/* ---- what sock_diag lists ------------------------------------------------ */

struct rows {
	uint64_t inode[3];
	struct smc_diag_sock got[3];
	int seen[3];
	int total;
};

static int collect(const struct smc_diag_sock *s, void *arg)
{
	struct rows *r = arg;

	r->total++;
	for (int i = 0; i < 3; i++)
		if (s->inode == r->inode[i]) {
			r->got[i] = *s;
			r->seen[i]++;
		}
	return 0;
}

static void dump_rows(struct regfx *f, struct rows *r, const struct regfx_tcp *t)
{
	memset(r, 0, sizeof(*r));
	r->inode[0] = regfx_inode(t->lst);
	r->inode[1] = regfx_inode(t->cli);
	r->inode[2] = t->srv >= 0 ? regfx_inode(t->srv) : 0;
	CHECK_INT(regfx_dump(f, &f->peer, 0), 0);
	smc_diag_walk(&f->rep, collect, r);
}

static void pair_client(struct regfx *f, int fd)
{
	char *const roce[] = { "sr_unit=lo" };
	char err[256];
	struct mb m;

	CHECK_INT(soft_devs_init(&f->st, roce, 1, err, sizeof(err)), 0);

	regfx_req(&m, SMC_SOFT_CMD_PAIR, 0);
	mb_u8(&m, SMC_SOFT_A_ROLE, 0);
	regfx_run(f, &f->peer, &m, dup(fd));
}

TEST(soft_proc_socks_diag_rows)
{
	struct regfx f;
	struct regfx_tcp t;
	struct rows r;
	uint64_t tok;

	regfx_init(&f);
	regfx_tcp_open(&t, AF_INET);
	dump_rows(&f, &r, &t);
	CHECK_INT(r.total, 0);                   /* not attached: registrations only */

	CHECK_INT(proc_socks_attach(&f.st, f.peer.conn_id, getpid()), 0);
	dump_rows(&f, &r, &t);
	CHECK(r.seen[0] == 1 && r.got[0].state == 10 && r.got[0].mode == 0 &&
	      r.got[0].fallback_reason == 0 && r.got[0].sport == t.lport &&
	      r.got[0].uid == geteuid() && r.got[0].cookie == 0);
	/* both ends are this (preloaded) process's: the handshake is to come */
	CHECK(r.seen[1] == 1 && r.got[1].state == 2 && r.got[1].mode == 0);
	CHECK(r.seen[2] == 1 && r.got[2].state == 2 && r.got[2].mode == 0);

	/* a registered socket is listed once, as registered */
	CHECK_INT(regfx_add(&f, &f.peer, t.cli, SMC_SOFT_STATE_ACTIVE, &tok), 0);
	dump_rows(&f, &r, &t);
	CHECK(r.seen[1] == 1 && r.got[1].state == 1 && r.got[1].mode == 1 &&
	      r.got[1].fallback_reason == 0x03010000 && r.got[1].cookie != 0);
	CHECK_INT(regfx_del(&f, &f.peer, tok), 0);

	/* PAIR pending with a preloaded peer: INIT, not a fallback */
	pair_client(&f, t.cli);
	CHECK_INT(regfx_error(&f), 1);
	dump_rows(&f, &r, &t);
	CHECK(r.seen[1] == 1 && r.got[1].state == 2 && r.got[1].mode == 0 &&
	      r.got[1].fallback_reason == 0);

	/* the peer closed: no preloaded other end, a fallback */
	close(t.srv);
	t.srv = -1;
	dump_rows(&f, &r, &t);
	CHECK(r.seen[1] == 1 && r.got[1].state == 1 && r.got[1].mode == 1 &&
	      r.got[1].fallback_reason == 0x03010000);

	soft_conn_gone(&f.st, f.peer.conn_id);
	dump_rows(&f, &r, &t);
	CHECK_INT(r.total, 0);
	regfx_tcp_close(&t);
	regfx_free(&f);
}

/* A socket of the process that is not connected to a preloaded peer. */
TEST(soft_proc_socks_diag_fallback)
{
	struct regfx f;
	struct regfx_tcp t;
	struct rows r;

	regfx_init(&f);
	regfx_tcp_open(&t, AF_INET6);
	CHECK_INT(proc_socks_attach(&f.st, f.peer.conn_id, getpid()), 0);
	close(t.srv);
	t.srv = -1;
	dump_rows(&f, &r, &t);
	CHECK(r.seen[0] == 1 && r.got[0].state == 10);
	CHECK(r.seen[1] == 1 && r.got[1].state == 1 && r.got[1].mode == 1 &&
	      r.got[1].fallback_reason == 0x03010000 && r.got[1].dport == t.lport &&
	      addr_is(r.got[1].src, AF_INET6, "::1"));
	soft_conn_gone(&f.st, f.peer.conn_id);
	regfx_tcp_close(&t);
	regfx_free(&f);
}
