/*
 * Ends whose peer is on another host: smc_softd asks the daemon at the
 * connection's peer address whether it holds the other end, and each end
 * declines as the kernel's SMC would after its CLC handshake
 * (doc/soft-roce.md section 2).  A question is answered only when it comes
 * from the connection's peer address, and the answer is yes or no with the
 * other end's decline code: it opens no buffer and changes no data path.
 */
#include "service.h"
#include "devices.h"
#include "peer_msg.h"
#include "regidx.h"

#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ASK_AGAIN_MS     250     /* the first question again, then ASK_AGAIN_MS * 4 */
#define ASK_SENDS        3
#define ASK_NO_DAEMON_MS 2000    /* no daemon answered: the peer is not preloaded */
#define ASK_NO_END_MS    2500    /* its daemon answered, its end did not come */
#define MEMO_MAX         256     /* questions for ends that had not come yet */
#define MEMO_PER_SOURCE  32
#define MEMO_MS          ASK_NO_END_MS
#define LATER_MAX        64      /* unanswered messages to send once more */
#define DEVS_FRESH_MS    1000    /* the host's RDMA devices, looked at again after this */

struct ask_memo {
	int64_t until;           /* 0: free */
	uint8_t from[16];        /* IPv4-mapped */
	struct soft_peer_msg m;
};

/* An unanswered message without bytes, sent once more at a time. */
struct peer_later {
	int64_t at;              /* 0: free */
	uint32_t ifindex;
	struct soft_peer_msg m;
};

struct soft_asks {
	struct soft_sock *list;
	int64_t due;             /* no end needs the tick before this */
	int64_t devs_seen;       /* when the RDMA devices were last looked at */
	uint32_t seq;
	struct ask_memo memo[MEMO_MAX];
	struct peer_later later[LATER_MAX];
};

int64_t soft_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The wire's form of an address: an IPv4-mapped IPv6 one as IPv4. */
static int wire_addr(int family, const uint8_t *a, uint8_t out[16])
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	memset(out, 0, 16);
	if (family == AF_INET6 && !memcmp(a, v4mapped, sizeof(v4mapped))) {
		memcpy(out, a + 12, 4);
		return AF_INET;
	}
	memcpy(out, a, family == AF_INET ? 4 : 16);
	return family;
}

/* Whether the address is one of this host's (in the daemon's namespace). */
static bool addr_local(int family, const uint8_t a[16], uint32_t ifindex)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_scope_id = ifindex };
	static const uint8_t v6_loopback[16] = { [15] = 1 };
	int fd, rc;

	if (family == AF_INET ? a[0] == 127 : !memcmp(a, v6_loopback, 16))
		return true;
	fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return true;            /* cannot tell: do not ask anyone */
	if (family == AF_INET) {
		memcpy(&sin.sin_addr, a, 4);
		rc = bind(fd, (struct sockaddr *)&sin, sizeof(sin));
	} else {
		memcpy(&sin6.sin6_addr, a, 16);
		rc = bind(fd, (struct sockaddr *)&sin6, sizeof(sin6));
	}
	close(fd);
	return rc == 0 || errno != EADDRNOTAVAIL;
}

/* The interface index an IPv6 link-local address needs (its scope), else 0. */
static uint32_t scope_of(const struct soft_sock *s, const uint8_t dst[16], int family,
			 const char *ifname)
{
	if (family != AF_INET6 || dst[0] != 0xfe || (dst[1] & 0xc0) != 0x80)
		return 0;
	return s->id.ifindex ? s->id.ifindex : ifname && *ifname ? if_nametoindex(ifname) : 0;
}

bool soft_peer_remote(const struct soft_state *st, const struct soft_ns *ns,
		      const struct soft_sock *s, const char *ifname)
{
	uint8_t dst[16];
	int family;

	if (!st->peer_send || !ns || !ns->init)
		return false;
	family = wire_addr(s->id.family, s->id.dst, dst);
	return !addr_local(family, dst, scope_of(s, dst, family, ifname));
}

static struct soft_asks *asks(struct soft_state *st)
{
	if (!st->asks)
		st->asks = calloc(1, sizeof(*st->asks));
	return st->asks;
}

static void link_end(struct soft_asks *a, struct soft_sock *s)
{
	if (s->ask.pprev)
		return;
	s->ask.next = a->list;
	s->ask.pprev = &a->list;
	if (a->list)
		a->list->ask.pprev = &s->ask.next;
	a->list = s;
}

void soft_peer_unlink(struct soft_sock *s)
{
	if (!s->ask.pprev)
		return;
	*s->ask.pprev = s->ask.next;
	if (s->ask.next)
		s->ask.next->ask.pprev = s->ask.pprev;
	s->ask.next = NULL;
	s->ask.pprev = NULL;
}

void soft_peer_due(struct soft_state *st, struct soft_sock *s, int64_t when)
{
	struct soft_asks *a = asks(st);

	if (!a)
		return;
	link_end(a, s);
	if (!a->due || when < a->due)
		a->due = when;
}

void soft_peer_msg_of(const struct soft_sock *s, uint8_t type, struct soft_peer_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	m->role = s->role;
	m->verdict = s->ask.verdict;
	m->family = wire_addr(s->id.family, s->id.src, m->src);
	wire_addr(s->id.family, s->id.dst, m->dst);
	m->sport = s->id.sport;
	m->dport = s->id.dport;
	m->nonce = s->ask.nonce;
}

/*
 * A random nonce, never 0; 0: no random bytes (doc/soft-roce.md, threat
 * model).  Before the kernel's generator is seeded (a guest just booted)
 * its output, as the kernel's own TCP sequence numbers take it then: a
 * blocking call would hold the daemon for as long as seeding takes.
 */
static uint64_t new_nonce(void)
{
	uint64_t n = 0;

	while (!n)
		if (getrandom(&n, sizeof(n), GRND_NONBLOCK) != (ssize_t)sizeof(n) &&
		    getrandom(&n, sizeof(n), GRND_INSECURE) != (ssize_t)sizeof(n))
			return 0;
	return n;
}

void soft_peer_send(struct soft_state *st, const struct soft_peer_msg *m, uint16_t port,
		    uint32_t ifindex)
{
	uint8_t buf[SOFT_PEER_DGRAM_MAX];
	int len = soft_peer_msg_encode(m, buf, sizeof(buf));

	if (st->peer_send && len > 0)
		st->peer_send(st->peer_ctx, buf, (size_t)len, m->family, m->src, m->dst, port, ifindex);
}

static void ask(struct soft_state *st, struct soft_sock *s, int64_t now)
{
	struct soft_peer_msg m;

	soft_peer_msg_of(s, SOFT_PEER_ASK, &m);
	m.seq = ++st->asks->seq;
	soft_peer_send(st, &m, 0, s->ask.ifindex);
	s->ask.sends++;
	s->ask.next_ms = now + ((int64_t)ASK_AGAIN_MS << (2 * (s->ask.sends - 1)));
}

/*
 * Both ends known: the client's decline comes first, as a kernel client
 * that finds no device declines before the server looks at anything; the
 * other end lists PEERDECL with that code.  Without the other end:
 * PEERNOSMC, as when a peer's SYN carries no SMC option.
 */
static void decide(struct soft_state *st, struct soft_sock *s, bool found, uint8_t peer_role,
		   uint32_t peer_verdict)
{
	uint32_t client, server, first;
	bool mine;

	if (!found || peer_role == s->role) {
		soft_pair_decline(st, s, SOFT_DECL_PEERNOSMC, 0);
		return;
	}
	client = s->role ? peer_verdict : s->ask.verdict;
	server = s->role ? s->ask.verdict : peer_verdict;
	if (!client && !server) {
		/* both can: their libraries exchange the CLC messages (clc_relay.c) */
		soft_peer_unlink(s);
		s->pair_status = SOFT_PAIR_NEGOTIATE;
		return;
	}
	first = client ? client : server;
	mine = client ? s->role == 0 : s->role == 1;
	if (mine)
		soft_pair_decline(st, s, first, 0);
	else
		soft_pair_decline(st, s, SOFT_DECL_PEERDECL, first);
}

static bool same_source(const struct soft_peer_msg *m, int family, const uint8_t from[16])
{
	uint8_t a[16], b[16];

	soft_addr_canon(m->family, m->src, a);
	soft_addr_canon(family, from, b);
	return !memcmp(a, b, 16);
}

/* A question that came for src:sport-dst:dport from the address from, remembered. */
static void memo_put(struct soft_asks *a, const struct soft_peer_msg *m, const uint8_t from[16],
		     int64_t now)
{
	struct ask_memo *slot = NULL, *oldest_src = NULL, *oldest = &a->memo[0];
	int n_src = 0;

	for (int i = 0; i < MEMO_MAX; i++) {
		struct ask_memo *e = &a->memo[i];

		if (e->until <= now) {
			if (!slot)
				slot = e;
			continue;
		}
		if (e->until < oldest->until)
			oldest = e;
		if (!memcmp(e->from, from, 16)) {
			n_src++;
			if (!oldest_src || e->until < oldest_src->until)
				oldest_src = e;
		}
	}
	/* one source fills at most its share, then replaces its own */
	if (n_src >= MEMO_PER_SOURCE)
		slot = oldest_src;
	else if (!slot)
		slot = oldest;
	slot->until = now + MEMO_MS;
	memcpy(slot->from, from, 16);
	slot->m = *m;
}

/* A question for s's connection that came before s did, taken. */
static bool memo_take(struct soft_asks *a, const struct soft_sock *s, int64_t now,
		      struct soft_peer_msg *out)
{
	struct soft_sock probe;

	for (int i = 0; i < MEMO_MAX; i++) {
		struct ask_memo *e = &a->memo[i];

		if (e->until <= now)
			continue;
		memset(&probe, 0, sizeof(probe));
		probe.id.family = e->m.family;
		memcpy(probe.id.src, e->m.src, 16);
		memcpy(probe.id.dst, e->m.dst, 16);
		probe.id.sport = e->m.sport;
		probe.id.dport = e->m.dport;
		if (soft_ids_reversed(&probe.id, &s->id)) {
			*out = e->m;
			e->until = 0;
			return true;
		}
	}
	return false;
}

/* An SMC-R device for the connection's interface (the devices looked at again when stale). */
static const struct soft_dev *roce_for(struct soft_state *st, struct soft_asks *a,
				       const struct soft_ns *ns, const char *ifname, int64_t now,
				       int *port)
{
	if (!a->devs_seen || now - a->devs_seen >= DEVS_FRESH_MS) {
		soft_rdma_refresh(st);
		a->devs_seen = now;
	}
	return soft_dev_roce_for_if(st, ns, ifname, port);
}

int soft_peer_ask_begin(struct soft_state *st, const struct soft_ns *ns, struct soft_sock *s,
			uint32_t verdict, const char *ifname, int64_t now)
{
	struct soft_asks *a = asks(st);
	struct soft_peer_msg early;
	const struct soft_dev *dev;
	bool early_came;
	int port = 0;
	uint8_t dst[16];
	int family = wire_addr(s->id.family, s->id.dst, dst);

	if (!a)
		return -ENOMEM;
	memset(&s->ask, 0, sizeof(s->ask));
	s->ask.remote = true;
	s->ask.nonce = new_nonce();
	s->ask.verdict = verdict;
	s->ask.ifindex = scope_of(s, dst, family, ifname);
	s->ask.deadline_ms = now + ASK_NO_DAEMON_MS;
	s->pair_status = SOFT_PAIR_ASKING;
	link_end(a, s);
	early_came = memo_take(a, s, now, &early);
	dev = roce_for(st, a, ns, ifname, now, &port);
	/* an end that can negotiate keeps its device for it */
	if (dev && !verdict) {
		int alt_port = 0;
		const struct soft_dev *alt = soft_dev_roce_alt(st, ns, ifname, dev, port, &alt_port);

		if (soft_clc_relay_new(s, dev, port, alt, alt_port))
			s->ask.verdict = SOFT_DECL_INTERR;
	}
	if (!dev && !s->ask.verdict)
		s->ask.verdict = SOFT_DECL_NOSMCDEV;
	if (!s->ask.nonce) {
		/* a guessable nonce would let an off-path host in: no question */
		soft_pair_decline(st, s, SOFT_DECL_INTERR, 0);
		return 0;
	}
	if (!early_came && !dev) {
		/*
		 * No SMC-R device on its interface: nothing to ask for, and no
		 * datagram to a host that may know nothing of SMC.  The peer's
		 * daemon, if it asks, hears this end's code.
		 */
		soft_pair_decline(st, s, s->ask.verdict, 0);
		return 0;
	}
	ask(st, s, now);
	if (early_came) {
		/* its question came first: this one told it ours */
		s->ask.peer_nonce = early.nonce;
		decide(st, s, true, early.role, early.verdict);
		return 0;
	}
	if (s->ask.next_ms < a->due || !a->due)
		a->due = s->ask.next_ms;
	return 0;
}

static bool remote_end(const struct soft_sock *cand, const struct soft_sock *probe)
{
	(void)probe;
	return cand->ask.remote;
}

void soft_peer_input(struct soft_state *st, const uint8_t *buf, size_t len, int family,
		     const uint8_t from[16], uint16_t port, int64_t now)
{
	struct soft_peer_msg m, reply;
	struct soft_sock probe, *s;
	struct soft_asks *a;
	uint8_t from16[16];

	if (soft_peer_msg_decode(buf, len, &m) || !same_source(&m, family, from) || !(a = asks(st)))
		return;
	memset(&probe, 0, sizeof(probe));
	probe.id.family = m.family;
	memcpy(probe.id.src, m.src, 16);
	memcpy(probe.id.dst, m.dst, 16);
	probe.id.sport = m.sport;
	probe.id.dport = m.dport;
	s = soft_idx_reverse(st, &probe, remote_end);
	if (m.type == SOFT_PEER_CLC || m.type == SOFT_PEER_CLC_SEEN) {
		if (s)
			soft_clc_input(st, s, &m);
		return;
	}
	if (m.type == SOFT_PEER_REBUILD || m.type == SOFT_PEER_REBUILD_SEEN) {
		if (s)
			soft_rebuild_input(st, s, &m);
		return;
	}
	if (m.type == SOFT_PEER_GONE) {
		if (s)
			soft_gone_input(s, &m);
		return;
	}
	/* an answer to another question (an old end's, or forged) says nothing of this one */
	if (s && m.type == SOFT_PEER_ANSWER && m.echo != s->ask.nonce)
		return;
	if (s && (m.type == SOFT_PEER_ASK || m.have))
		s->ask.peer_nonce = m.nonce;
	if (s && s->pair_status == SOFT_PAIR_ASKING && (m.type == SOFT_PEER_ASK || m.have))
		decide(st, s, true, m.role, m.verdict);
	else if (s && s->pair_status == SOFT_PAIR_ASKING)
		s->ask.daemon_there = true;     /* no end there yet: wait for its question */
	if (m.type != SOFT_PEER_ASK)
		return;
	if (s) {
		soft_peer_msg_of(s, SOFT_PEER_ANSWER, &reply);
		reply.have = true;
	} else {
		soft_addr_canon(family, from, from16);
		memo_put(a, &m, from16, now);
		memset(&reply, 0, sizeof(reply));
		reply.type = SOFT_PEER_ANSWER;
		reply.role = m.role ^ 1;
		reply.family = m.family;
		memcpy(reply.src, m.dst, 16);
		memcpy(reply.dst, m.src, 16);
		reply.sport = m.dport;
		reply.dport = m.sport;
	}
	reply.seq = m.seq;
	reply.echo = m.nonce;
	soft_peer_send(st, &reply, port, s ? s->ask.ifindex : 0);
}

void soft_peer_send_later(struct soft_state *st, const struct soft_peer_msg *m, uint32_t ifindex,
			  int64_t at)
{
	struct soft_asks *a = asks(st);

	for (int i = 0; a && !m->clc_len && i < LATER_MAX; i++)
		if (!a->later[i].at) {
			a->later[i] = (struct peer_later){ .at = at, .ifindex = ifindex, .m = *m };
			return;
		}
	soft_peer_send(st, m, 0, ifindex);      /* no room: now, not never */
}

/* The messages due sent; when the next is due, 0 for none. */
static int64_t later_tick(struct soft_state *st, struct soft_asks *a, int64_t now)
{
	int64_t due = 0;

	for (int i = 0; i < LATER_MAX; i++) {
		struct peer_later *e = &a->later[i];

		if (!e->at)
			continue;
		if (e->at <= now) {
			e->at = 0;
			soft_peer_send(st, &e->m, 0, e->ifindex);
		} else if (!due || e->at < due) {
			due = e->at;
		}
	}
	return due;
}

static int64_t ends_tick(struct soft_state *st, struct soft_asks *a, int64_t now)
{
	struct soft_sock *s, *next;
	int64_t due = 0;

	if (!a->list)
		return -1;
	if (a->due && now < a->due)
		return a->due;
	for (s = a->list; s; s = next) {
		int64_t give_up = s->ask.deadline_ms;

		next = s->ask.next;
		if (s->pair_status == SOFT_PAIR_NEGOTIATE || s->pair_status == SOFT_PAIR_RDMA) {
			int64_t d = s->pair_status == SOFT_PAIR_RDMA ? soft_rebuild_tick(st, s, now)
								     : soft_clc_tick(st, s, now);

			if (d && (!due || d < due))
				due = d;
			continue;
		}
		if (s->ask.daemon_there)
			give_up += ASK_NO_END_MS - ASK_NO_DAEMON_MS;
		if (now >= give_up) {
			decide(st, s, false, 0, 0);
			continue;
		}
		/* a daemon that answered asks us itself when its end comes */
		if (!s->ask.daemon_there && s->ask.sends < ASK_SENDS && now >= s->ask.next_ms)
			ask(st, s, now);
		if (!s->ask.daemon_there && s->ask.sends < ASK_SENDS && (!due || s->ask.next_ms < due))
			due = s->ask.next_ms;
		if (!due || give_up < due)
			due = give_up;
	}
	a->due = due;
	return a->list ? due : -1;
}

int64_t soft_peer_tick(struct soft_state *st, int64_t now)
{
	int64_t later, ends;

	if (!st->asks)
		return -1;
	later = later_tick(st, st->asks, now);
	ends = ends_tick(st, st->asks, now);
	return later && (ends < 0 || later < ends) ? later : ends;
}

void soft_peer_free(struct soft_state *st)
{
	free(st->asks);
	st->asks = NULL;
}
