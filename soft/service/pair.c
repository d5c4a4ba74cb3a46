/*
 * SMC_SOFT PAIR (reg.h): register a connected socket and meet the other end
 * of its connection.  The first end gets a new region, the second joins it;
 * a PNET mismatch on either end declines both.
 */
#include "region.h"
#include "service.h"
#include "regidx.h"
#include "pnettab.h"
#include "lgr.h"
#include "stats.h"
#include "reg.h"
#include "dump.h"
#include "decl_memo.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libmnl/libmnl.h>

#include "smc_uapi.h"

struct pair_attrs {
	uint8_t role;
	uint32_t sndbuf, rcvbuf;
	uint32_t decline;        /* SMC_CLC_DECL_* the caller declines with, or 0 */
	uint32_t transports;     /* 1 << SMC_SOFT_TRANSPORT_* the caller carries; 0: the ring */
};

static int get_u32(const struct nlattr *a, uint32_t *v)
{
	if (!a)
		return 0;
	if (mnl_attr_get_payload_len(a) != sizeof(*v))
		return -EINVAL;
	memcpy(v, mnl_attr_get_payload(a), sizeof(*v));
	return 0;
}

static int parse(struct soft_req *r, struct pair_attrs *a)
{
	const struct nlattr *tb[SMC_SOFT_A_MAX + 1];

	memset(a, 0, sizeof(*a));
	if (soft_genl_attrs(r, tb, SMC_SOFT_A_MAX))
		return -EINVAL;
	if (!tb[SMC_SOFT_A_ROLE] || mnl_attr_get_payload_len(tb[SMC_SOFT_A_ROLE]) != 1) {
		r->ext_ack = "ROLE (u8) required";
		return -EINVAL;
	}
	a->role = *(const uint8_t *)mnl_attr_get_payload(tb[SMC_SOFT_A_ROLE]);
	if (a->role > 1) {
		r->ext_ack = "ROLE is 0 or 1";
		return -EINVAL;
	}
	if (get_u32(tb[SMC_SOFT_A_SNDBUF], &a->sndbuf) || get_u32(tb[SMC_SOFT_A_RCVBUF], &a->rcvbuf) ||
	    get_u32(tb[SMC_SOFT_A_DECLINE], &a->decline) ||
	    get_u32(tb[SMC_SOFT_A_TRANSPORTS], &a->transports))
		return -EINVAL;
	return 0;
}

/*
 * SMC-D's PNET rule for the soft ISM: without a PNET ID it serves every
 * interface; with one, only interfaces the namespace's table gives the same.
 */
static bool pnet_ok(const struct soft_state *st, const struct soft_ns *ns, const char *ifname)
{
	const struct soft_dev *ism = soft_dev_ism(st);
	const char *eth;

	if (!ism)
		return false;
	if (!soft_pnetid_is_set(ism->pnetid[0]))
		return true;
	eth = ifname[0] ? soft_pnet_of_eth(ns, ifname) : NULL;
	return eth && soft_pnet_match(eth, ism->pnetid[0]);
}

/* The other end: same namespace, or another one of the same user. */
static bool may_pair(const struct soft_sock *cand, const struct soft_sock *s)
{
	if (cand->pair_status == SMC_SOFT_PAIR_PAIRED)
		return false;
	return cand->id.netns == s->id.netns || cand->conn_uid == s->conn_uid;
}

/* CLC-equivalent records for smcdump-ex: one test of st->dumps when the dump is off. */
static void dump(struct soft_state *st, const struct soft_sock *s, uint8_t type)
{
	if (st->dumps)
		soft_dump_clc(st, s, type);
}

void soft_pair_decline(struct soft_state *st, struct soft_sock *s, uint32_t reason, uint32_t diag)
{
	struct soft_ns *ns = soft_ns_get(st, s->id.netns);

	soft_peer_unlink(s);
	soft_region_leave(st, s);
	s->pair_status = SMC_SOFT_PAIR_DECLINED;
	s->mode = SMC_DIAG_MODE_FALLBACK_TCP;
	s->fallback_reason = reason;
	s->peer_diagnosis = diag;
	if (ns)
		soft_stats_fallback(ns, s->role == 1, (int)reason);
	dump(st, s, SOFT_DUMP_T_DECLINE);
}

/*
 * After PAIR: the ends stop using the region.  A PAIRED connection was
 * counted as SMC-D and stays counted so; its buffers are in use no more.
 * A PENDING one counts as the fallback it is.
 */
static void leave_late(struct soft_state *st, struct soft_sock *s, uint32_t reason, uint32_t diag)
{
	struct soft_ns *ns = soft_ns_get(st, s->id.netns);

	if (ns && s->pair_status == SMC_SOFT_PAIR_PAIRED) {
		soft_stats_rmb_usage(ns, true, true, -(int64_t)soft_region_tx(s));
		soft_stats_rmb_usage(ns, true, false, -(int64_t)soft_region_rx(s));
	} else if (ns) {
		soft_stats_fallback(ns, s->role == 1, (int)reason);
	}
	soft_region_leave(st, s);
	s->pair_status = SMC_SOFT_PAIR_DECLINED;
	s->mode = SMC_DIAG_MODE_FALLBACK_TCP;
	s->fallback_reason = reason;
	s->peer_diagnosis = diag;
	s->has_conn = s->has_lgr = s->has_dmb = false;
}

void soft_pair_fall_back(struct soft_state *st, struct soft_sock *s, uint32_t reason, uint32_t diag)
{
	struct soft_sock *peer = s->region ? s->region->end[!s->side] : NULL;

	if (s->pair_status == SMC_SOFT_PAIR_DECLINED)
		return;
	if (s->pair_status == SOFT_PAIR_ASKING || s->pair_status == SOFT_PAIR_NEGOTIATE ||
	    s->pair_status == SOFT_PAIR_RDMA) {
		/* what the peer host's daemon hears from now on */
		s->ask.verdict = reason;
		soft_pair_decline(st, s, reason, diag);
		return;
	}
	leave_late(st, s, reason, 0);
	if (peer)
		leave_late(st, peer, SOFT_DECL_PEERDECL, reason);
}

static void put_region(struct nlmsghdr *nlh, const struct soft_sock *s)
{
	const struct soft_region *g = s->region;

	/* the SMC-D fabric's region (fabric/region.c) goes with the reply */
	mnl_attr_put_u8(nlh, SMC_SOFT_A_TRANSPORT, SMC_SOFT_TRANSPORT_RING);
	mnl_attr_put_u8(nlh, SMC_SOFT_A_SIDE, s->side);
	mnl_attr_put_u8(nlh, SMC_SOFT_A_ROLE, s->role);
	mnl_attr_put_u32(nlh, SMC_SOFT_A_LGR_ID, g->lgr ? soft_lgr_id(g->lgr) : 0);
	mnl_attr_put_u64(nlh, SMC_SOFT_A_DMB_TOKEN, g->dmb_token[s->side]);
	mnl_attr_put_u64(nlh, SMC_SOFT_A_SHM_SIZE, g->size);
	mnl_attr_put_u32(nlh, SMC_SOFT_A_RING_SIZE, soft_region_tx(s));
	mnl_attr_put_u32(nlh, SMC_SOFT_A_RING_SIZE, soft_region_rx(s));
}

static int reply_cmd(struct soft_req *r, const struct soft_sock *s, const struct soft_sock *peer,
		     uint8_t cmd)
{
	struct nlmsghdr *nlh = soft_genl_msg(r->out, r->nlh, SOFT_ID_SOFT, cmd, 0);
	int fd = -1;

	if (!nlh)
		return -ENOMEM;
	mnl_attr_put_u64(nlh, SMC_SOFT_A_TOKEN, s->token);
	if ((s->pair_status == SOFT_PAIR_ASKING || s->pair_status == SOFT_PAIR_NEGOTIATE) &&
	    !s->ask.verdict) {
		/* the library asks again with CLC (clc_relay.c) */
		mnl_attr_put_u8(nlh, SMC_SOFT_A_PAIR_STATUS, SMC_SOFT_PAIR_ASKING);
		mnl_attr_put_u8(nlh, SMC_SOFT_A_TRANSPORT, SMC_SOFT_TRANSPORT_RDMA);
	} else if (s->pair_status == SOFT_PAIR_ASKING) {
		/* this end cannot negotiate: it stays TCP whatever the answer */
		mnl_attr_put_u8(nlh, SMC_SOFT_A_PAIR_STATUS, SMC_SOFT_PAIR_DECLINED);
		mnl_attr_put_u32(nlh, SMC_SOFT_A_REASON, s->ask.verdict);
	} else if (s->pair_status == SMC_SOFT_PAIR_DECLINED) {
		mnl_attr_put_u8(nlh, SMC_SOFT_A_PAIR_STATUS, s->pair_status);
		mnl_attr_put_u32(nlh, SMC_SOFT_A_REASON, s->fallback_reason);
		mnl_attr_put_u32(nlh, SMC_SOFT_A_PEER_DIAGNOSIS, s->peer_diagnosis);
	} else {
		mnl_attr_put_u8(nlh, SMC_SOFT_A_PAIR_STATUS, s->pair_status);
		put_region(nlh, s);
		if (peer) {
			mnl_attr_put_u64(nlh, SMC_SOFT_A_PEER_TOKEN, peer->token);
			mnl_attr_put_u64(nlh, SMC_SOFT_A_PEER_DMB_TOKEN, s->region->dmb_token[peer->side]);
		}
		fd = fcntl(s->region->fd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
	}
	soft_msg_end(r->out, nlh);
	if (fd >= 0 && soft_msg_fd(r->out, nlh, fd))
		return -ENOMEM;
	return r->out->failed ? -ENOMEM : 0;
}

static int reply(struct soft_req *r, const struct soft_sock *s, const struct soft_sock *peer)
{
	return reply_cmd(r, s, peer, SMC_SOFT_CMD_PAIR);
}

/*
 * SOCK_INFO: a process that holds the socket (it passes it) gets its region
 * again, after an execve took the old mapping away.  Holding the socket is
 * what PAIR asked too: it makes the caller one of the two ends.
 */
int soft_sock_info(struct soft_req *r)
{
	char ifname[IF_NAMESIZE] = "";
	struct soft_sock_id id;
	struct soft_sock *s, *peer;
	int fd = r->fd, rc;

	r->fd = -1;
	/* also after the FINs: the ring may still hold bytes for this end */
	rc = soft_reg_read_fd(r, fd, SMC_SOFT_STATE_INIT, &id, r->peer->netns, ifname);
	if (rc)
		return rc;
	s = soft_idx_inode(r->st, id.inode);
	if (!s || !s->region || s->region->fd < 0 ||
	    (s->pair_status != SMC_SOFT_PAIR_PENDING && s->pair_status != SMC_SOFT_PAIR_PAIRED)) {
		r->ext_ack = "the socket has no soft SMC-D buffers";
		return -ENOENT;
	}
	peer = s->region->end[!s->side];
	/* its last holder may find the socket closed by then (stdio's fclose at exit) */
	s->info_conn = r->peer->conn_id;
	return reply_cmd(r, s, s->pair_status == SMC_SOFT_PAIR_PAIRED ? peer : NULL,
			 SMC_SOFT_CMD_SOCK_INFO);
}

static int meet(struct soft_req *r, struct soft_sock *s, struct soft_ns *ns,
		const struct pair_attrs *a, const char *ifname)
{
	struct soft_sock *peer = soft_idx_reverse(r->st, s, may_pair);
	uint32_t diag;
	int rc;

	if (soft_idx_tuple_add(r->st, s))
		return -ENOMEM;
	dump(r->st, s, SOFT_DUMP_T_PROPOSAL);
	if (!peer && soft_peer_remote(r->st, ns, s, ifname)) {
		/*
		 * The other end is on another host: its daemon is asked
		 * (peer_ask.c).  A library without the RDMA transport has no
		 * SMC device it can use there.
		 */
		uint32_t verdict = a->decline ? a->decline
				   : a->transports & (1u << SMC_SOFT_TRANSPORT_RDMA) ? 0
				   : SOFT_DECL_NOSMCDEV;

		rc = soft_peer_ask_begin(r->st, ns, s, verdict, ifname, soft_now_ms());
		return rc ? rc : reply(r, s, NULL);
	}
	if (!pnet_ok(r->st, ns, ifname)) {
		soft_pair_decline(r->st, s, SOFT_DECL_NOSMCDDEV, 0);
		if (peer && peer->pair_status == SMC_SOFT_PAIR_PENDING)
			soft_pair_decline(r->st, peer, SOFT_DECL_NOSMCDDEV, SOFT_DECL_NOSMCDDEV);
		return reply(r, s, NULL);
	}
	if (a->decline) {
		soft_pair_decline(r->st, s, a->decline, 0);
		if (peer && peer->pair_status == SMC_SOFT_PAIR_PENDING)
			soft_pair_decline(r->st, peer, SOFT_DECL_PEERDECL, a->decline);
		return reply(r, s, NULL);
	}
	if (peer && peer->pair_status == SMC_SOFT_PAIR_DECLINED) {
		/* the peer's own reason (io_uring) reaches this end as a DECLINE would */
		if (peer->fallback_reason == SOFT_DECL_NOSMCDDEV)
			soft_pair_decline(r->st, s, peer->fallback_reason, peer->fallback_reason);
		else
			soft_pair_decline(r->st, s, SOFT_DECL_PEERDECL, peer->fallback_reason);
		return reply(r, s, NULL);
	}
	if (!peer && (diag = soft_memo_take(r->st, s))) {
		/* the peer declined for a reason of its own and went before we came */
		soft_pair_decline(r->st, s, SOFT_DECL_PEERDECL, diag);
		return reply(r, s, NULL);
	}
	if (!peer && s->id.tcp_state != TCP_ESTABLISHED) {
		/* closing, and the other end gone or never coming: no region for it */
		soft_pair_decline(r->st, s, SOFT_DECL_PEERNOSMC, 0);
		return reply(r, s, NULL);
	}
	if (peer) {
		rc = soft_region_join(r->st, peer, s, ns);
		if (rc)
			return rc;
		dump(r->st, s->role ? s : peer, SOFT_DUMP_T_ACCEPT);
		dump(r->st, s->role ? peer : s, SOFT_DUMP_T_CONFIRM);
		return reply(r, s, peer);
	}
	rc = soft_region_new(r->st, s, ns, a->sndbuf, a->rcvbuf);
	if (rc)
		return rc;
	s->pair_status = SMC_SOFT_PAIR_PENDING;
	return reply(r, s, NULL);
}

int soft_pair(struct soft_req *r)
{
	char ifname[IF_NAMESIZE] = "";
	struct pair_attrs a;
	struct soft_sock *s;
	struct soft_ns *ns = NULL;
	int fd = r->fd, rc;

	r->fd = -1;
	rc = parse(r, &a);
	s = rc ? NULL : calloc(1, sizeof(*s));
	if (!rc && !s)
		rc = -ENOMEM;
	if (rc) {
		if (fd >= 0)
			close(fd);
		return rc;
	}
	rc = soft_reg_read_fd(r, fd, SMC_SOFT_STATE_ACTIVE, &s->id, r->peer->netns, ifname);
	if (!rc)
		rc = soft_reg_check_new(r, &s->id);
	if (!rc && !(ns = soft_ns_get(r->st, s->id.netns)))
		rc = -ENOMEM;
	if (!rc) {
		soft_sock_set_state(s, SMC_SOFT_STATE_ACTIVE);
		s->role = a.role;
		s->pair_seq = r->nlh->nlmsg_seq;
		rc = soft_reg_link(r, ns, s);
	}
	if (rc) {
		free(s);
		return rc;
	}
	rc = meet(r, s, ns, &a, ifname);
	if (rc) {
		s->pair_status = 0;             /* failed here: nothing to count */
		soft_reg_drop(r->st, s);
	}
	return rc;
}
