/*
 * SMC_SOFT DUMP_SET (reg.h) and the capture sessions it opens: each holds
 * the AF_PACKET socket its client passed and sends the records of the
 * connections of that socket's network namespace to the capture device.
 * A record that cannot be sent is lost: the capture never slows the daemon.
 */
#include "dump.h"
#include "pdump.h"
#include "region.h"
#include "lgr.h"
#include "devices.h"
#include "reg.h"
#include "clc.h"
#include "smc_size.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <sys/socket.h>

struct soft_dump {
	struct soft_dump *next;
	uint64_t conn_id;
	uint64_t netns;          /* of the capture socket */
	int fd;
	uint32_t ifindex;
	uint8_t mode, types;
	bool legacy;
	bool ending;             /* gets the last records, asks for no more */
};

struct set_attrs {
	uint8_t on, mode, types, legacy;
	uint32_t ifindex;
	bool has_on, has_ifindex;
};

static int get_u8(const struct nlattr *a, uint8_t *v, bool *has)
{
	if (!a)
		return 0;
	if (mnl_attr_get_payload_len(a) != 1)
		return -EINVAL;
	*v = *(const uint8_t *)mnl_attr_get_payload(a);
	if (has)
		*has = true;
	return 0;
}

static int parse(struct soft_req *r, struct set_attrs *a)
{
	const struct nlattr *tb[SMC_SOFT_A_MAX + 1], *ifi;

	memset(a, 0, sizeof(*a));
	a->mode = SOFT_DUMP_MODE_SMCD;
	a->types = SOFT_DUMP_TYPE_CLC | SOFT_DUMP_TYPE_CDC | SOFT_DUMP_TYPE_DATA | SOFT_DUMP_TYPE_LLC;
	if (soft_genl_attrs(r, tb, SMC_SOFT_A_MAX) ||
	    get_u8(tb[SMC_SOFT_A_DUMP_ON], &a->on, &a->has_on) ||
	    get_u8(tb[SMC_SOFT_A_DUMP_MODE], &a->mode, NULL) ||
	    get_u8(tb[SMC_SOFT_A_DUMP_TYPES], &a->types, NULL) ||
	    get_u8(tb[SMC_SOFT_A_DUMP_LEGACY], &a->legacy, NULL))
		return -EINVAL;
	ifi = tb[SMC_SOFT_A_IFINDEX];
	if (ifi) {
		if (mnl_attr_get_payload_len(ifi) != sizeof(uint32_t))
			return -EINVAL;
		a->ifindex = mnl_attr_get_u32(ifi);
		a->has_ifindex = a->ifindex != 0;
	}
	if (!a->has_on) {
		r->ext_ack = "DUMP_ON (u8) required";
		return -EINVAL;
	}
	if (a->on && !a->has_ifindex) {
		r->ext_ack = "IFINDEX (u32) of the capture device required";
		return -EINVAL;
	}
	a->types |= SOFT_DUMP_TYPE_CLC;
	return 0;
}

static bool packet_dgram(int fd)
{
	int domain = 0, type = 0;
	socklen_t len = sizeof(int);

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0)
		return false;
	len = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0)
		return false;
	return domain == AF_PACKET && type == SOCK_DGRAM;
}

static struct soft_dump **find(struct soft_state *st, uint64_t conn_id)
{
	struct soft_dump **pp;

	for (pp = &st->dumps; *pp; pp = &(*pp)->next)
		if ((*pp)->conn_id == conn_id)
			return pp;
	return NULL;
}

static void drop(struct soft_dump **pp)
{
	struct soft_dump *d = *pp;

	*pp = d->next;
	close(d->fd);
	free(d);
}

/* The processes of its namespace hear of it before it goes, and hand in what they hold. */
static void session_end(struct soft_state *st, struct soft_dump **pp)
{
	(*pp)->ending = true;
	soft_pdump_sync(st, (*pp)->netns);
	drop(pp);
}

int soft_dump_session_add(struct soft_state *st, uint64_t conn_id, uint64_t netns, int fd,
			  uint32_t ifindex, uint8_t mode, uint8_t types, bool legacy)
{
	struct soft_dump **pp = find(st, conn_id), *d;

	if (pp)
		session_end(st, pp);
	d = calloc(1, sizeof(*d));
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	d->conn_id = conn_id;
	d->netns = netns;
	d->fd = fd;
	d->ifindex = ifindex;
	d->mode = mode;
	d->types = types | SOFT_DUMP_TYPE_CLC;
	d->legacy = legacy;
	d->next = st->dumps;
	st->dumps = d;
	soft_pdump_sync(st, netns);
	return 0;
}

int soft_dump_set(struct soft_req *r)
{
	struct soft_dump **pp;
	struct set_attrs a;
	int fd = r->fd, rc;

	r->fd = -1;
	rc = parse(r, &a);
	if (!rc && (pp = find(r->st, r->peer->conn_id)))
		session_end(r->st, pp);
	if (!rc && a.on && (fd < 0 || !packet_dgram(fd))) {
		r->ext_ack = "an AF_PACKET SOCK_DGRAM socket must come with SCM_RIGHTS";
		rc = -EINVAL;
	}
	if (!rc && a.on) {
		rc = soft_dump_session_add(r->st, r->peer->conn_id, soft_netns_key(fd, r->peer->pid),
					   fd, a.ifindex, a.mode, a.types, a.legacy != 0);
		fd = -1;
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

/* The modes that take a record: SMC-D's or SMC-R's by its flags; a process's LOST record, both. */
static uint8_t mode_of(const struct soft_dump_rec *rec)
{
	if (rec->type == SOFT_DUMP_T_LOST)
		return SOFT_DUMP_MODE_SMCD | SOFT_DUMP_MODE_SMCR;
	return rec->flags & SOFT_DUMP_F_SMCD ? SOFT_DUMP_MODE_SMCD : SOFT_DUMP_MODE_SMCR;
}

static bool captures(const struct soft_dump *d, uint64_t netns, uint8_t types, uint8_t modes)
{
	return d->netns == netns && (d->mode & modes) && (d->types & types);
}

/* An end whose negotiation went between hosts: SMC-R's (service/clc_relay.c). */
static bool smcr_end(const struct soft_sock *s)
{
	return s->ask.clc != NULL;
}

#define IP4_LEN 20
#define IP6_LEN 40
#define UDP_LEN 8

/* Data bytes a DATA record of d can carry in one packet. */
static uint32_t data_room(const struct soft_dump *d, bool v6)
{
	return SOFT_DUMP_MAX_PKT - (v6 ? IP6_LEN : IP4_LEN) - UDP_LEN -
	       (d->legacy ? SOFT_DUMP_V1_HDR_LEN : SOFT_DUMP_V2_HDR_LEN) - SOFT_DUMP_DATA_LEN;
}

uint8_t soft_dump_ns_types(const struct soft_state *st, uint64_t netns, uint32_t *snaplen)
{
	const uint8_t ring = SOFT_DUMP_TYPE_CDC | SOFT_DUMP_TYPE_DATA | SOFT_DUMP_TYPE_LLC;
	uint8_t types = 0, want;

	*snaplen = 0;
	for (const struct soft_dump *d = st->dumps; d; d = d->next) {
		/* the processes record every connection's: the records are sorted as they come */
		if (d->ending ||
		    !captures(d, netns, ring, SOFT_DUMP_MODE_SMCD | SOFT_DUMP_MODE_SMCR))
			continue;
		want = d->types & ring;
		if (!(d->mode & SOFT_DUMP_MODE_SMCR))
			want &= (uint8_t)~SOFT_DUMP_TYPE_LLC;   /* LLC records are SMC-R's only */
		types |= want;
		if ((d->types & SOFT_DUMP_TYPE_DATA) && data_room(d, false) > *snaplen)
			*snaplen = data_room(d, false);
	}
	return types;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void soft_dump_rec_of(const struct soft_sock *s, uint8_t type, struct soft_dump_rec *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->type = type;
	rec->flags = smcr_end(s) ? 0 : SOFT_DUMP_F_SMCD;
	rec->ts_ns = now_ns();
	rec->token = s->token;
	soft_dump_rec_addrs(rec, s->id.family, s->id.src, s->id.dst);
	rec->lport = s->id.sport;
	rec->pport = s->id.dport;
}

static void clc_of(const struct soft_state *st, const struct soft_sock *s,
		   struct soft_dump_clc *c)
{
	const struct soft_region *g = s->region;
	const struct soft_dev *ism = soft_dev_ism(st);
	bool paired = g && s->pair_status == SMC_SOFT_PAIR_PAIRED;

	memset(c, 0, sizeof(*c));
	c->role = s->role;
	c->smc_type = smcr_end(s) ? 0 : 1;
	c->status = s->pair_status;
	if (s->pair_status == SMC_SOFT_PAIR_DECLINED) {
		c->reason = s->fallback_reason;
		c->peer_diagnosis = s->peer_diagnosis;
	}
	c->gid = ism && !smcr_end(s) ? ism->gid : 0;
	if (g) {
		c->lgr_id = g->lgr ? soft_lgr_id(g->lgr) : 0;
		c->dmb_token = g->dmb_token[s->side];
		c->rmbe_size = soft_region_rx(s);
		c->sndbuf_size = soft_region_tx(s);
	}
	if (paired) {
		c->peer_dmb_token = g->dmb_token[!s->side];
		c->peer_token = g->end[!s->side] ? g->end[!s->side]->token : 0;
	}
}

static void send_rec(const struct soft_dump *d, const struct soft_dump_rec *rec,
		     const uint8_t *body, size_t body_len)
{
	uint8_t payload[SOFT_DUMP_MAX_PKT], pkt[SOFT_DUMP_MAX_PKT];
	bool v6 = rec->flags & SOFT_DUMP_F_IPV6;
	struct sockaddr_ll to = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(v6 ? ETH_P_IPV6 : ETH_P_IP),
		.sll_ifindex = (int)d->ifindex,
		.sll_halen = ETH_ALEN,
	};
	ssize_t n = soft_dump_encode(rec, d->legacy, body, body_len, payload, sizeof(payload));

	if (n > 0)
		n = soft_dump_packet(rec, payload, (size_t)n, pkt, sizeof(pkt));
	if (n > 0)
		sendto(d->fd, pkt, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL,
		       (struct sockaddr *)&to, sizeof(to));
}

void soft_dump_send(const struct soft_state *st, uint64_t netns, uint8_t types,
		    const struct soft_dump_rec *rec, const void *body, size_t body_len)
{
	for (const struct soft_dump *d = st->dumps; d; d = d->next)
		if (captures(d, netns, types, mode_of(rec)))
			send_rec(d, rec, body, body_len);
}

void soft_dump_send_data(const struct soft_state *st, uint64_t netns,
			 const struct soft_dump_rec *rec, uint64_t offset, uint32_t len,
			 const uint8_t *data, uint32_t caplen)
{
	uint8_t body[SOFT_DUMP_MAX_PKT];
	struct soft_dump_rec r = *rec;

	for (const struct soft_dump *d = st->dumps; d; d = d->next) {
		uint32_t room = data_room(d, rec->flags & SOFT_DUMP_F_IPV6);
		uint32_t cut = caplen < room ? caplen : room;

		if (!captures(d, netns, SOFT_DUMP_TYPE_DATA, mode_of(rec)))
			continue;
		r.flags = (uint8_t)(rec->flags & ~SOFT_DUMP_F_TRUNC);
		if (cut < len)
			r.flags |= SOFT_DUMP_F_TRUNC;
		soft_dump_data_body(offset, len, cut, body);
		memcpy(body + SOFT_DUMP_DATA_LEN, data, cut);
		send_rec(d, &r, body, SOFT_DUMP_DATA_LEN + cut);
	}
}

void soft_dump_clc(struct soft_state *st, const struct soft_sock *s, uint8_t type)
{
	uint8_t body[SOFT_DUMP_CLC_LEN];
	struct soft_dump_rec rec;
	struct soft_dump_clc c;
	bool built = false;

	for (const struct soft_dump *d = st->dumps; d; d = d->next) {
		if (!captures(d, s->id.netns, SOFT_DUMP_TYPE_CLC,
			      smcr_end(s) ? SOFT_DUMP_MODE_SMCR : SOFT_DUMP_MODE_SMCD))
			continue;
		if (!built) {
			soft_dump_rec_of(s, type, &rec);
			clc_of(st, s, &c);
			soft_dump_clc_body(&c, body);
			built = true;
		}
		send_rec(d, &rec, body, sizeof(body));
	}
}

/* What an SMC-R CLC message says, decoded for its record; false if it does not decode. */
static bool clc_r_of(const uint8_t *msg, size_t len, const struct clc_hdr *h,
		     struct soft_dump_clc *c, struct soft_dump_clc_r *r)
{
	r->version = h->version;
	switch (h->type) {
	case CLC_PROPOSAL: {
		struct clc_proposal p;

		if (clc_proposal_decode(msg, len, &p) < 0)
			return false;
		c->status = 0;          /* an offer */
		memcpy(r->system_id, p.system_id, sizeof(r->system_id));
		memcpy(r->gid, p.gid, sizeof(r->gid));
		memcpy(r->mac, p.mac, sizeof(r->mac));
		return true;
	}
	case CLC_ACCEPT:
	case CLC_CONFIRM: {
		struct clc_smcr_accept a;

		if (h->smcd_eye || clc_smcr_accept_decode(msg, len, &a) < 0)
			return false;
		c->status = h->type == CLC_ACCEPT ? SMC_SOFT_PAIR_PENDING : SMC_SOFT_PAIR_PAIRED;
		c->rmbe_size = smc_code_size(a.rmbe_size);
		memcpy(r->system_id, a.system_id, sizeof(r->system_id));
		memcpy(r->gid, a.gid, sizeof(r->gid));
		memcpy(r->mac, a.mac, sizeof(r->mac));
		r->qp_mtu = a.qp_mtu;
		r->first_contact = a.first_contact;
		r->qpn = a.qpn;
		r->rmb_rkey = a.rmb_rkey;
		r->rmb_addr = a.rmb_addr;
		r->psn = a.psn;
		return true;
	}
	case CLC_DECLINE: {
		struct clc_decline dc;

		if (clc_decline_decode(msg, len, &dc) < 0)
			return false;
		c->status = SMC_SOFT_PAIR_DECLINED;
		c->reason = dc.peer_diagnosis;
		memcpy(r->system_id, dc.system_id, sizeof(r->system_id));
		return true;
	}
	default:
		return false;
	}
}

void soft_dump_clc_msg(struct soft_state *st, const struct soft_sock *s, const uint8_t *msg,
		       size_t len, bool rx)
{
	uint8_t body[SOFT_DUMP_CLC_R_LEN];
	struct soft_dump_clc_r r;
	struct soft_dump_rec rec;
	struct soft_dump_clc c;
	struct clc_hdr h;

	memset(&c, 0, sizeof(c));
	memset(&r, 0, sizeof(r));
	if (clc_hdr_peek(msg, len, &h) || !clc_r_of(msg, len, &h, &c, &r))
		return;

	/* the sender's role: ours, or with rx the peer's */
	c.role = rx ? !s->role : s->role;
	c.smc_type = 0;
	soft_dump_rec_of(s, h.type, &rec);
	rec.flags = (uint8_t)((rec.flags & ~SOFT_DUMP_F_SMCD) | (rx ? SOFT_DUMP_F_RX : 0));
	soft_dump_clc_r_body(&c, &r, body);
	soft_dump_send(st, s->id.netns, SOFT_DUMP_TYPE_CLC, &rec, body, sizeof(body));
}

void soft_dump_conn_gone(struct soft_state *st, uint64_t conn_id)
{
	struct soft_dump **pp = find(st, conn_id);

	if (pp)
		session_end(st, pp);
}

void soft_dumps_free(struct soft_state *st)
{
	while (st->dumps)
		drop(&st->dumps);
}
