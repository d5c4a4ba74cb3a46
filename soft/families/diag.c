/*
 * sock_diag for AF_SMC: the sockets of the caller's namespace, as smc_diag.ko
 * reports SMC sockets (<linux/smc_diag.h>): the registered ones, then the other
 * TCP sockets of preloaded processes (proc_socks.h), per family.  The
 * structures are laid out byte by byte at the kernel's offsets rather than
 * through the uapi structs, whose sizes differ between kernel versions
 * (smcd_diag_dmbinfo).
 */
#include "families.h"
#include "state.h"
#include "sock.h"
#include "reg.h"
#include "service.h"
#include "regidx.h"
#include "proc_socks.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/tcp.h>
#include <libmnl/libmnl.h>
#include <linux/sock_diag.h>

#include "smc_uapi.h"

#define EXT_BIT(ext) (1u << ((ext) - 1))

static void put16be(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, sizeof(v)); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, sizeof(v)); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, sizeof(v)); }

static void fill_msg(uint8_t m[SMC_DIAG_MSG_LEN], const struct soft_sock *s)
{
	memset(m, 0, SMC_DIAG_MSG_LEN);
	m[0] = AF_SMC;
	m[1] = s->state;
	m[2] = s->mode;
	/* m[3] diag_shutdown: always 0, the state is in SMC_DIAG_SHUTDOWN */
	put16be(m + 4, s->id.sport);
	put16be(m + 6, s->id.dport);
	memcpy(m + 8, s->id.src, 16);
	memcpy(m + 24, s->id.dst, 16);
	put32(m + 40, s->id.ifindex);
	/* idiag_cookie[2]: low word first, as sock_diag_save_cookie() */
	put32(m + 44, (uint32_t)s->id.cookie);
	put32(m + 48, (uint32_t)(s->id.cookie >> 32));
	put32(m + 52, s->id.uid);
	put64(m + 56, s->id.inode);
}

/* struct smc_diag_cursor: u16 reserved, u16 wrap, u32 count */
static void put_cursor(uint8_t *p, struct soft_cursor c)
{
	put16(p, 0);
	put16(p + 2, c.wrap);
	put32(p + 4, c.count);
}

static void put_conninfo(struct nlmsghdr *nlh, const struct soft_conninfo *c)
{
	uint8_t p[SMC_DIAG_CONNINFO_LEN];

	put32(p, c->token);
	put32(p + 4, c->sndbuf_size);
	put32(p + 8, c->rmbe_size);
	put32(p + 12, c->peer_rmbe_size);
	put_cursor(p + 16, c->rx_prod);
	put_cursor(p + 24, c->rx_cons);
	put_cursor(p + 32, c->tx_prod);
	put_cursor(p + 40, c->tx_cons);
	p[48] = c->rx_prod_flags;
	p[49] = c->rx_conn_state_flags;
	p[50] = c->tx_prod_flags;
	p[51] = c->tx_conn_state_flags;
	put_cursor(p + 52, c->tx_prep);
	put_cursor(p + 60, c->tx_sent);
	put_cursor(p + 68, c->tx_fin);
	mnl_attr_put(nlh, SMC_DIAG_CONNINFO, sizeof(p), p);
}

static void put_lgrinfo(struct nlmsghdr *nlh, const struct soft_lgrinfo *l)
{
	uint8_t p[SMC_DIAG_LGRINFO_LEN];

	p[0] = l->link_id;
	memcpy(p + 1, l->ibname, 64);
	p[65] = l->ibport;
	memcpy(p + 66, l->gid, 40);
	memcpy(p + 106, l->peer_gid, 40);
	p[146] = l->role;
	mnl_attr_put(nlh, SMC_DIAG_LGRINFO, sizeof(p), p);
}

/* The 56-byte form of kernels since 6.8 (extended GIDs appended). */
static void put_dmbinfo(struct nlmsghdr *nlh, const struct soft_dmbinfo *d)
{
	uint8_t p[SMC_DIAG_DMBINFO_EXT_LEN] = { 0 };

	put32(p, d->linkid);
	put64(p + 8, d->peer_gid);
	put64(p + 16, d->my_gid);
	put64(p + 24, d->token);
	put64(p + 32, d->peer_token);
	put64(p + 40, d->peer_gid_ext);
	put64(p + 48, d->my_gid_ext);
	mnl_attr_put(nlh, SMC_DIAG_DMBINFO, sizeof(p), p);
}

/* One socket, attributes in __smc_diag_dump()'s order. */
static int put_sock(struct soft_req *r, const struct soft_sock *s, uint8_t ext)
{
	struct nlmsghdr *nlh = soft_msg(r->out, r->nlh, SOCK_DIAG_BY_FAMILY, NLM_F_MULTI);
	uint8_t fb[SMC_DIAG_FALLBACK_LEN];

	if (!nlh)
		return -ENOMEM;
	fill_msg(mnl_nlmsg_put_extra_header(nlh, SMC_DIAG_MSG_LEN), s);
	mnl_attr_put_u8(nlh, SMC_DIAG_SHUTDOWN, s->shutdown);
	put32(fb, s->fallback_reason);
	put32(fb + 4, s->peer_diagnosis);
	mnl_attr_put(nlh, SMC_DIAG_FALLBACK, sizeof(fb), fb);
	if ((ext & EXT_BIT(SMC_DIAG_CONNINFO)) && s->has_conn) {
		struct soft_conninfo ci;

		soft_pair_conninfo(s, &ci);
		put_conninfo(nlh, &ci);
	}
	if ((ext & EXT_BIT(SMC_DIAG_LGRINFO)) && s->has_lgr) {
		put_lgrinfo(nlh, &s->lgr);
	} else if (ext & EXT_BIT(SMC_DIAG_LGRINFO)) {
		struct soft_lgrinfo li;

		/* soft SMC-R: its link as its process told it */
		if (soft_lgr_info_of(r->st, s, &li))
			put_lgrinfo(nlh, &li);
	}
	if ((ext & EXT_BIT(SMC_DIAG_DMBINFO)) && s->has_dmb)
		put_dmbinfo(nlh, &s->dmb);
	soft_msg_end(r->out, nlh);
	return r->out->failed ? -ENOMEM : 0;
}

/* Until the soft handshake (PAIR) is done, as a kernel SMC socket whose CLC handshake runs. */
static void set_handshake(struct soft_sock *s)
{
	s->state = SMC_SOFT_STATE_INIT;
	s->mode = SMC_DIAG_MODE_SMCR;
	s->fallback_reason = 0;
	s->peer_diagnosis = 0;
}

static bool peer_preloaded(const struct proc_socks *ps, const struct soft_sock_id *id)
{
	return proc_socks_peer(ps, id->family, id->src, id->sport, id->dst, id->dport);
}

/*
 * A TCP socket of a preloaded process that is not registered: LISTEN as
 * it is, connecting or talking to a preloaded peer INIT, else a fallback
 * because the peer has no SMC.
 */
static bool any_registration(const struct soft_sock *cand, const struct soft_sock *s)
{
	(void)cand;
	(void)s;
	return true;
}

static void found_sock(const struct soft_state *st, struct soft_sock *s,
		       const struct proc_sock *p, const struct proc_socks *ps)
{
	memset(s, 0, sizeof(*s));
	s->id.family = p->family;
	s->id.sport = p->sport;
	s->id.dport = p->dport;
	memcpy(s->id.src, p->src, 16);
	memcpy(s->id.dst, p->dst, 16);
	s->id.uid = p->uid;
	s->id.inode = p->inode;
	if (p->tcp_state == TCP_LISTEN)
		soft_sock_set_state(s, SMC_SOFT_STATE_LISTEN);
	/* the peer: a socket of a preloaded process, listed or registered (proc_socks.h) */
	else if (p->tcp_state == TCP_SYN_SENT || p->tcp_state == TCP_SYN_RECV ||
		 p->tcp_state == TCP_CLOSE || peer_preloaded(ps, &s->id) ||
		 soft_idx_reverse(st, s, any_registration))
		set_handshake(s);
	else
		soft_sock_set_state(s, SMC_SOFT_STATE_ACTIVE);
}

static int dump_registered(struct soft_req *r, int family, uint8_t ext,
			   const struct proc_socks *ps)
{
	for (const struct soft_sock *s = r->ns->socks; s; s = s->next) {
		struct soft_sock pending;
		const struct soft_sock *out = s;
		int rc;

		if (s->id.family != family)
			continue;
		if ((s->pair_status == SMC_SOFT_PAIR_PENDING && peer_preloaded(ps, &s->id)) ||
		    s->pair_status == SOFT_PAIR_ASKING || s->pair_status == SOFT_PAIR_NEGOTIATE) {
			pending = *s;
			set_handshake(&pending);
			out = &pending;
		}
		rc = put_sock(r, out, ext);
		if (rc)
			return rc;
	}
	return 0;
}

static int dump_found(struct soft_req *r, int family, uint8_t ext, const struct proc_socks *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		const struct proc_sock *p = &ps->v[i];
		struct soft_sock s;
		int rc;

		if (p->family != family || !p->here || soft_idx_has_inode(r->st, p->inode))
			continue;
		found_sock(r->st, &s, p, ps);
		rc = put_sock(r, &s, ext);
		if (rc)
			return rc;
	}
	return 0;
}

int soft_diag_dump(struct soft_req *r)
{
	static const int families[] = { AF_INET, AF_INET6 };
	uint8_t ext = ((const uint8_t *)r->data)[3];   /* smc_diag_req.diag_ext */
	struct proc_socks ps;
	int rc = 0;

	proc_socks_scan(r->st, r->peer->pid, &ps);
	for (size_t i = 0; !rc && i < sizeof(families) / sizeof(families[0]); i++) {
		rc = dump_registered(r, families[i], ext, &ps);
		if (!rc)
			rc = dump_found(r, families[i], ext, &ps);
	}
	proc_socks_free(&ps);
	return rc;
}
