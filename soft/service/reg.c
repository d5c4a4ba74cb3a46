/*
 * SMC_SOFT socket registration (reg.h): SOCK_ADD, SOCK_STATE, SOCK_DEL, and
 * the registrations' lifetime.  A registration lives in the list of the
 * socket's namespace, is indexed (regidx.c) and belongs to one control
 * connection.  PAIR (pair.c) and STATS_ATTACH (pstats_att.c) are the
 * family's other operations.
 */
#include "soft_nl.h"
#include "state.h"
#include "reg.h"
#include "sock.h"
#include "decl_memo.h"
#include "regidx.h"
#include "service.h"
#include "proc_socks.h"
#include "dump.h"
#include "pdump.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libmnl/libmnl.h>

struct reg_attrs {
	bool has_token, has_state, has_seq;
	uint64_t token;
	uint8_t state;
	uint32_t pair_seq;
	uint32_t reason;         /* 0: none */
	uint32_t diag;           /* FALLBACK: the peer's code with PEERDECL, 0 none */
};

/* Attributes of fixed size must have exactly it, as a strict policy demands. */
static int parse_attrs(struct soft_req *r, struct reg_attrs *a)
{
	const struct nlattr *tb[SMC_SOFT_A_MAX + 1];

	memset(a, 0, sizeof(*a));
	if (soft_genl_attrs(r, tb, SMC_SOFT_A_MAX))
		return -EINVAL;
	if (tb[SMC_SOFT_A_TOKEN]) {
		if (mnl_attr_get_payload_len(tb[SMC_SOFT_A_TOKEN]) != sizeof(uint64_t))
			return -EINVAL;
		memcpy(&a->token, mnl_attr_get_payload(tb[SMC_SOFT_A_TOKEN]), sizeof(a->token));
		a->has_token = true;
	}
	if (tb[SMC_SOFT_A_STATE]) {
		if (mnl_attr_get_payload_len(tb[SMC_SOFT_A_STATE]) != 1)
			return -EINVAL;
		a->state = *(const uint8_t *)mnl_attr_get_payload(tb[SMC_SOFT_A_STATE]);
		a->has_state = a->state == SMC_SOFT_STATE_INIT ||
			       a->state == SMC_SOFT_STATE_LISTEN ||
			       a->state == SMC_SOFT_STATE_ACTIVE;
		if (!a->has_state)
			return -EINVAL;
	}
	if (tb[SMC_SOFT_A_PAIR_SEQ]) {
		if (mnl_attr_get_payload_len(tb[SMC_SOFT_A_PAIR_SEQ]) != sizeof(uint32_t))
			return -EINVAL;
		memcpy(&a->pair_seq, mnl_attr_get_payload(tb[SMC_SOFT_A_PAIR_SEQ]),
		       sizeof(a->pair_seq));
		a->has_seq = true;
	}
	if (tb[SMC_SOFT_A_REASON]) {
		if (mnl_attr_get_payload_len(tb[SMC_SOFT_A_REASON]) != sizeof(uint32_t))
			return -EINVAL;
		memcpy(&a->reason, mnl_attr_get_payload(tb[SMC_SOFT_A_REASON]), sizeof(a->reason));
	}
	if (tb[SMC_SOFT_A_PEER_DIAGNOSIS]) {
		if (mnl_attr_get_payload_len(tb[SMC_SOFT_A_PEER_DIAGNOSIS]) != sizeof(uint32_t))
			return -EINVAL;
		memcpy(&a->diag, mnl_attr_get_payload(tb[SMC_SOFT_A_PEER_DIAGNOSIS]), sizeof(a->diag));
	}
	return 0;
}

/* The fd is the handler's from here on: no second message reuses it. */
static int take_fd(struct soft_req *r)
{
	int fd = r->fd;

	r->fd = -1;
	return fd;
}

/* A registration of this connection by its token, NULL if none. */
static struct soft_sock *find_token(struct soft_state *st, uint64_t token, uint64_t conn_id)
{
	struct soft_sock *s = soft_idx_token(st, token);

	return s && s->conn_id == conn_id ? s : NULL;
}

int soft_reg_check_new(const struct soft_req *r, const struct soft_sock_id *id)
{
	/* socket inodes are unique host-wide: every namespace counts */
	if (soft_idx_has_inode(r->st, id->inode))
		return -EEXIST;
	if (soft_idx_conn_count(r->st, r->peer->conn_id) >= SMC_SOFT_MAX_SOCKS)
		return -ENOSPC;
	return 0;
}

int soft_reg_read_fd(struct soft_req *r, int fd, uint8_t state, struct soft_sock_id *id,
		     uint64_t fallback_netns, char ifname[IF_NAMESIZE])
{
	int rc;

	if (fd < 0) {
		r->ext_ack = "no socket passed with SCM_RIGHTS";
		return -EINVAL;
	}
	rc = soft_sock_read(fd, id, fallback_netns);
	if (rc == -EINVAL)
		r->ext_ack = "not a TCP socket";
	if (!rc) {
		rc = soft_sock_check_state(fd, id, state);
		if (rc)
			r->ext_ack = "the socket is not in that state";
	}
	if (!rc && ifname)
		soft_sock_ifname(fd, id, ifname);
	close(fd);
	return rc;
}

static int put_add_reply(struct soft_req *r, const struct soft_sock *s)
{
	struct nlmsghdr *nlh = soft_genl_msg(r->out, r->nlh, SOFT_ID_SOFT,
					     SMC_SOFT_CMD_SOCK_ADD, 0);

	if (!nlh)
		return -ENOMEM;
	mnl_attr_put_u64(nlh, SMC_SOFT_A_TOKEN, s->token);
	mnl_attr_put_u64(nlh, SMC_SOFT_A_INODE, s->id.inode);
	mnl_attr_put_u64(nlh, SMC_SOFT_A_COOKIE, s->id.cookie);
	mnl_attr_put_u64(nlh, SMC_SOFT_A_NETNS, s->id.netns);
	soft_msg_end(r->out, nlh);
	return r->out->failed ? -ENOMEM : 0;
}

static void close_fd(int fd)
{
	if (fd >= 0)
		close(fd);
}

int soft_reg_link(struct soft_req *r, struct soft_ns *ns, struct soft_sock *s)
{
	s->token = r->st->next_sock_token;
	s->conn_id = r->peer->conn_id;
	s->conn_uid = (uint32_t)r->peer->uid;
	if (soft_idx_add(r->st, s))
		return -ENOMEM;
	r->st->next_sock_token++;
	/* At the head, as the kernel's hash list: newest first. */
	s->next = ns->socks;
	s->pprev = &ns->socks;
	if (ns->socks)
		ns->socks->pprev = &s->next;
	ns->socks = s;
	return 0;
}

void soft_reg_drop(struct soft_state *st, struct soft_sock *s)
{
	if (s->pair_status == SOFT_PAIR_ASKING || s->pair_status == SOFT_PAIR_NEGOTIATE)
		soft_pair_decline(st, s, soft_clc_undecided_reason(s), 0);   /* gone before it was decided */
	soft_peer_unlink(s);     /* still sending its CLC message */
	free(s->ask.clc);
	soft_rebuild_free(s);
	if (!s->ask.remote)
		soft_memo_note(st, s);
	soft_pair_end(st, s);
	soft_idx_del(st, s);
	if (s->pprev) {
		*s->pprev = s->next;
		if (s->next)
			s->next->pprev = s->pprev;
	}
	free(s);
}

static int sock_add(struct soft_req *r)
{
	struct reg_attrs a;
	struct soft_sock *s;
	struct soft_ns *ns = NULL;
	int fd = take_fd(r), rc;

	rc = parse_attrs(r, &a);
	if (!rc && !a.has_state)
		rc = -EINVAL;
	s = rc ? NULL : calloc(1, sizeof(*s));
	if (!rc && !s)
		rc = -ENOMEM;
	if (rc) {
		close_fd(fd);
		return rc;
	}
	rc = soft_reg_read_fd(r, fd, a.state, &s->id, r->peer->netns, NULL);
	if (!rc)
		rc = soft_reg_check_new(r, &s->id);
	if (!rc && !(ns = soft_ns_get(r->st, s->id.netns)))
		rc = -ENOMEM;
	if (!rc) {
		soft_sock_set_state(s, a.state);
		rc = soft_reg_link(r, ns, s);
	}
	if (rc) {
		free(s);
		return rc;
	}
	rc = put_add_reply(r, s);
	if (rc)
		soft_reg_drop(r->st, s);
	return rc;
}

/* A socket passed again must be the registered one; its namespace stays. */
static int refresh(struct soft_req *r, int fd, struct soft_sock *s, uint8_t state)
{
	struct soft_sock_id id;
	int rc = soft_reg_read_fd(r, fd, state, &id, s->id.netns, NULL);

	if (rc)
		return rc;
	if (id.inode != s->id.inode) {
		r->ext_ack = "another socket than the registered one";
		return -EINVAL;
	}
	id.netns = s->id.netns;
	s->id = id;
	return 0;
}

static int sock_state(struct soft_req *r)
{
	struct soft_sock *s = NULL;
	struct reg_attrs a;
	int fd = take_fd(r), rc;

	rc = parse_attrs(r, &a);
	if (!rc && (!a.has_token || !a.has_state))
		rc = -EINVAL;
	if (!rc && !(s = find_token(r->st, a.token, r->peer->conn_id)))
		rc = -ENOENT;
	if (!rc && s->pair_status) {
		r->ext_ack = "a PAIR registration keeps its state";
		rc = -EINVAL;
	}
	if (rc) {
		close_fd(fd);
		return rc;
	}
	if (fd >= 0 && (rc = refresh(r, fd, s, a.state)))
		return rc;
	soft_sock_set_state(s, a.state);
	return 0;
}

/*
 * A registration of another connection's: the caller proves it holds the
 * socket by passing it (a forked or spawned holder that closes last).
 * Consumes fd.
 */
static struct soft_sock *find_held(struct soft_req *r, uint64_t token, int fd)
{
	struct soft_sock_id id;
	struct soft_sock *s;
	int rc = soft_sock_read(fd, &id, r->peer->netns);

	close(fd);
	if (rc)
		return NULL;
	s = soft_idx_inode(r->st, id.inode);
	return s && s->token == token && s->id.netns == id.netns ? s : NULL;
}

/* The registration this connection's PAIR request seq made, NULL if none. */
static struct soft_sock *find_pair_seq(struct soft_state *st, uint32_t seq, uint64_t conn_id)
{
	for (struct soft_sock *s = soft_idx_conn_first(st, conn_id); s; s = s->conn_next)
		if (s->pair_status && s->pair_seq == seq)
			return s;
	return NULL;
}

/*
 * By token: this connection's, one this connection proved it holds
 * (SOCK_INFO), or another's with the socket as proof.  Consumes fd.
 */
static struct soft_sock *find_mine_or_held(struct soft_req *r, uint64_t token, int fd)
{
	struct soft_sock *s = find_token(r->st, token, r->peer->conn_id);

	if (!s && (s = soft_idx_token(r->st, token)) && s->info_conn != r->peer->conn_id)
		s = NULL;
	if (s || fd < 0) {
		close_fd(fd);
		return s;
	}
	return find_held(r, token, fd);
}

static int sock_del(struct soft_req *r)
{
	struct soft_sock *s;
	struct reg_attrs a;
	int fd = take_fd(r), rc;

	rc = parse_attrs(r, &a);
	if (!rc && !a.has_token && !a.has_seq)
		rc = -EINVAL;
	if (rc) {
		close_fd(fd);
		return rc;
	}
	if (a.has_token) {
		s = find_mine_or_held(r, a.token, fd);
	} else {
		close_fd(fd);
		s = find_pair_seq(r->st, a.pair_seq, r->peer->conn_id);
	}
	if (!s)
		return -ENOENT;
	soft_pdump_sock_gone(r->st, s);
	soft_reg_drop(r->st, s);
	return 0;
}

static int sock_fallback(struct soft_req *r)
{
	struct soft_sock *s;
	struct reg_attrs a;
	int fd = take_fd(r), rc;

	rc = parse_attrs(r, &a);
	if (!rc && (!a.has_token || !a.reason)) {
		r->ext_ack = "TOKEN and REASON required";
		rc = -EINVAL;
	}
	if (rc) {
		close_fd(fd);
		return rc;
	}
	s = find_mine_or_held(r, a.token, fd);
	if (!s)
		return -ENOENT;
	if (!s->pair_status) {
		r->ext_ack = "not a PAIR registration";
		return -EINVAL;
	}
	soft_pair_fall_back(r->st, s, a.reason, a.diag);
	return 0;
}

/* A process that attaches its counters is preloaded: its TCP sockets are listed (proc_socks.h). */
static int stats_attach(struct soft_req *r)
{
	int rc = soft_stats_attach(r);

	if (!rc)
		proc_socks_attach(r->st, r->peer->conn_id, r->peer->pid);
	return rc;
}

static const struct soft_op reg_ops[] = {
	{ .cmd = SMC_SOFT_CMD_SOCK_ADD, .doit = sock_add },
	{ .cmd = SMC_SOFT_CMD_SOCK_STATE, .doit = sock_state },
	{ .cmd = SMC_SOFT_CMD_SOCK_DEL, .doit = sock_del },
	{ .cmd = SMC_SOFT_CMD_PAIR, .doit = soft_pair },
	{ .cmd = SMC_SOFT_CMD_SOCK_INFO, .doit = soft_sock_info },
	{ .cmd = SMC_SOFT_CMD_STATS_ATTACH, .doit = stats_attach },
	{ .cmd = SMC_SOFT_CMD_DUMP_SET, .doit = soft_dump_set, .admin = true },
	{ .cmd = SMC_SOFT_CMD_BELL, .doit = soft_bell },
	{ .cmd = SMC_SOFT_CMD_FALLBACK, .doit = sock_fallback },
	{ .cmd = SMC_SOFT_CMD_CLC, .doit = soft_clc },
	{ .cmd = SMC_SOFT_CMD_LGR, .doit = soft_lgr_report },
	{ .cmd = SMC_SOFT_CMD_REBUILD, .doit = soft_rebuild },
};

const struct soft_family soft_reg_family = {
	.name = SMC_SOFT_FAMILY_NAME,
	.id = SOFT_ID_SOFT,
	.version = SMC_SOFT_VERSION,
	.maxattr = SMC_SOFT_A_MAX,
	.ops = reg_ops,
	.n_ops = sizeof(reg_ops) / sizeof(reg_ops[0]),
};

void soft_conn_gone(struct soft_state *st, uint64_t conn_id)
{
	struct soft_sock *s;

	soft_pdump_conn_gone(st, conn_id);
	while ((s = soft_idx_conn_first(st, conn_id)))
		soft_reg_drop(st, s);
	soft_pstats_conn_gone(st, conn_id);
	soft_bells_conn_gone(st, conn_id);
	proc_socks_gone(st, conn_id);
	soft_dump_conn_gone(st, conn_id);
	soft_lgr_owner_gone(st, conn_id);
}

void soft_socks_free(struct soft_ns *ns)
{
	struct soft_sock *s, *next;

	for (s = ns->socks; s; s = next) {
		next = s->next;
		free(s->ask.clc);
		soft_rebuild_free(s);
		free(s);
	}
	ns->socks = NULL;
}
