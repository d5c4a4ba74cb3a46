/*
 * Draining the processes' dump rings (pdump.h, pstats.h): slots in order
 * from our own cons while their seq says published, each copied out of the
 * shared memory before it is checked, completed with its connection's
 * addresses and sent as a CDC or DATA record to the namespace's sessions,
 * or as an LLC record of a process's soft SMC-R link group.
 */
#include "pdump.h"
#include "pstats.h"
#include "dump.h"
#include "regidx.h"
#include "region.h"
#include "lgr.h"
#include "devices.h"
#include "log.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdatomic.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <sys/socket.h>

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void write_ctl(struct soft_pstats_att *a, uint32_t types, uint32_t snaplen)
{
	struct soft_pdump_ctl *c = soft_pdump_ctl_of(a->map);

	atomic_store_explicit(&c->snaplen, snaplen, memory_order_relaxed);
	atomic_store_explicit(&c->types, types, memory_order_release);
	a->dr.types = types;
	a->dr.snaplen = snaplen;
}

/* A capture starts with what is published from now on, and the drops from now on. */
static void skip_old(struct soft_pstats_att *a)
{
	struct soft_pdump_ring *r = soft_pdump_ring_of(a->map);

	a->dr.cons = atomic_load_explicit(&r->prod, memory_order_relaxed);
	a->dr.drops = atomic_load_explicit(&r->drops, memory_order_relaxed);
	a->dr.stalling = false;
	a->dr.full = a->dr.stalled = a->dr.rejected = 0;
	atomic_store_explicit(&r->cons, a->dr.cons, memory_order_release);
}

static bool slot_ok(const struct soft_pdump_slot *h)
{
	if (h->flags & ~(SOFT_DUMP_F_RX | SOFT_DUMP_F_TRUNC))
		return false;
	if (h->type == SOFT_DUMP_T_CDC)
		return true;
	if (h->type == SOFT_DUMP_T_LLC)
		return !(h->flags & SOFT_DUMP_F_TRUNC) && h->len && h->len <= SOFT_DUMP_LLC_MSG_MAX &&
		       h->caplen == SOFT_PDUMP_LLC_GIDS + h->len;
	return h->type == SOFT_DUMP_T_DATA && h->caplen <= SOFT_PDUMP_SNAP_MAX &&
	       h->caplen <= h->len;
}

/* A process records only connections of its own user in its own namespace. */
static const struct soft_sock *owner(const struct soft_state *st,
				     const struct soft_pstats_att *a, uint64_t token)
{
	const struct soft_sock *s = token ? soft_idx_token(st, token) : NULL;

	if (!s || s->id.netns != a->netns || s->conn_uid != (uint32_t)a->uid)
		return NULL;
	return s;
}

/*
 * A ring offset counts the bytes of its direction through the ring; the
 * record's stream offset adds those that went over TCP before the cut-over:
 * the direction's fence, which its producer set in the region header.
 */
static uint64_t fence_of(const struct soft_sock *s, bool rx)
{
	struct dmb_ctrl c[2];
	uint64_t f;

	if (soft_region_ctrl(s, c))
		return 0;
	f = atomic_load_explicit(&c[rx ? !s->side : s->side].fence, memory_order_relaxed);
	return f & DMB_FENCE_VALID ? f & ~DMB_FENCE_VALID : 0;
}

static void emit(struct soft_state *st, const struct soft_sock *s,
		 const struct soft_pdump_slot *h, const uint8_t *data)
{
	struct soft_dump_rec rec;

	soft_dump_rec_of(s, h->type, &rec);
	if (h->ts_ns)
		rec.ts_ns = h->ts_ns;
	rec.flags |= h->flags & SOFT_DUMP_F_RX;
	if (h->type == SOFT_DUMP_T_CDC) {
		struct soft_dump_cdc c = {
			.prod_wrap = h->prod_wrap, .prod_count = h->prod_count,
			.cons_wrap = h->cons_wrap, .cons_count = h->cons_count,
			.prod_flags = h->prod_flags, .conn_state_flags = h->conn_state_flags,
		};
		uint8_t body[SOFT_DUMP_CDC_LEN];

		soft_dump_cdc_body(&c, body);
		soft_dump_send(st, s->id.netns, SOFT_DUMP_TYPE_CDC, &rec, body, sizeof(body));
	} else {
		soft_dump_send_data(st, s->id.netns, &rec,
				    h->offset + fence_of(s, h->flags & SOFT_DUMP_F_RX), h->len,
				    data, h->caplen);
	}
}

/* When an LLC record's unknown GID last had the RDMA devices read again. */
static bool gids_read;
static uint64_t gids_ns;

/* A process that uses soft SMC-R: it told a link group, or negotiated a connection between hosts. */
static bool smcr_user(const struct soft_state *st, const struct soft_pstats_att *a)
{
	for (const struct soft_lgr *g = soft_lgr_first(st); g; g = g->next)
		if (!g->smcd && g->owner == a->conn_id)
			return true;
	for (const struct soft_sock *s = soft_idx_conn_first(st, a->conn_id); s; s = s->conn_next)
		if (s->ask.clc)
			return true;
	return false;
}

/*
 * An LLC record of a process's link group: its addresses are the link's
 * RoCE GIDs (IPv4-mapped ones as IPv4), its ports 0 (not 4791, where
 * Wireshark would take the packet for RoCE).  Refused
 * unless the process uses soft SMC-R and the local GID is one of this
 * host's RDMA ports' (read again when it is not, at most once a second in
 * all); the peer's GID is the process's word (doc/smc-dump-header.md 9.3).
 */
static bool emit_llc(struct soft_state *st, struct soft_pstats_att *a,
		     const struct soft_pdump_slot *h, const uint8_t *data, uint64_t now)
{
	uint8_t body[SOFT_DUMP_LLC_LEN + SOFT_DUMP_LLC_MSG_MAX];
	const struct soft_lgr *g;
	struct soft_dump_rec rec = {
		.type = SOFT_DUMP_T_LLC, .flags = h->flags & SOFT_DUMP_F_RX, .ts_ns = h->ts_ns,
	};

	if (!smcr_user(st, a))
		return false;
	if (!soft_dev_roce_has_gid(st, data)) {
		/* a GID the devices got since the last look; the processes cannot make us look often */
		if (gids_read && now - gids_ns < SOFT_PDUMP_GIDS_NS)
			return false;
		gids_read = true;
		gids_ns = now;
		if (soft_rdma_refresh(st) || !soft_dev_roce_has_gid(st, data))
			return false;
	}
	if (!rec.ts_ns)
		rec.ts_ns = clock_ns(CLOCK_REALTIME);
	g = h->token <= UINT32_MAX ? soft_lgr_of_owner(st, a->conn_id, (uint32_t)h->token) : NULL;
	soft_dump_rec_addrs(&rec, AF_INET6, data, data + 16);
	soft_dump_llc_body(g ? soft_lgr_id(g) : 0, h->link_id, data + SOFT_PDUMP_LLC_GIDS, h->len,
			   body);
	soft_dump_send(st, a->netns, SOFT_DUMP_TYPE_LLC, &rec, body, SOFT_DUMP_LLC_LEN + h->len);
	return true;
}

/* One published slot: copied out first, as the process may still change it. */
static void take(struct soft_state *st, struct soft_pstats_att *a,
		 const struct soft_pdump_slot *slot, uint64_t now)
{
	uint8_t data[SOFT_PDUMP_SNAP_MAX];
	struct soft_pdump_slot h;
	const struct soft_sock *s;

	memcpy(&h, slot, sizeof(h));
	memcpy(data, slot->data, h.caplen < sizeof(data) ? h.caplen : sizeof(data));
	if (!slot_ok(&h)) {
		a->dr.rejected++;
	} else if (h.type == SOFT_DUMP_T_LLC) {
		if (!emit_llc(st, a, &h, data, now))
			a->dr.rejected++;
	} else if (!(s = owner(st, a, h.token))) {
		a->dr.rejected++;
	} else {
		emit(st, s, &h, data);
	}
}

/*
 * The slot at cons is unpublished: true once it has stayed so too long
 * while reserved (a prod more than a ring ahead, or behind, reserves
 * nothing).
 */
static bool stalled(struct soft_pstats_att *a, uint64_t now)
{
	struct soft_pdump_ring *r = soft_pdump_ring_of(a->map);
	uint64_t ahead = atomic_load_explicit(&r->prod, memory_order_relaxed) - a->dr.cons;

	if (!ahead || ahead > SOFT_PDUMP_SLOTS) {
		a->dr.stalling = false;
		return false;
	}
	if (!a->dr.stalling || now < a->dr.stall_ns) {
		a->dr.stalling = true;
		a->dr.stall_ns = now;
		return false;
	}
	if (now - a->dr.stall_ns < SOFT_PDUMP_STALL_NS)
		return false;
	a->dr.stalling = false;
	return true;
}

static void report(struct soft_state *st, struct soft_pstats_att *a, uint64_t now, bool force)
{
	struct soft_dump_lost l = {
		.pid = (uint32_t)a->pid, .full = a->dr.full, .stalled = a->dr.stalled,
		.rejected = a->dr.rejected,
	};
	struct soft_dump_rec rec = { .type = SOFT_DUMP_T_LOST, .flags = SOFT_DUMP_F_SMCD };
	uint8_t body[SOFT_DUMP_LOST_LEN];

	if (!l.full && !l.stalled && !l.rejected)
		return;
	if (!force && a->dr.reported && now - a->dr.report_ns < SOFT_PDUMP_LOST_NS)
		return;
	softd_log(LOG_NOTICE, "smc dump: pid %d lost records: %" PRIu64 " ring full, %" PRIu64
		  " unfinished, %" PRIu64 " rejected", (int)a->pid, l.full, l.stalled, l.rejected);
	rec.ts_ns = clock_ns(CLOCK_REALTIME);
	soft_dump_lost_body(&l, body);
	soft_dump_send(st, a->netns, SOFT_DUMP_TYPE_CDC | SOFT_DUMP_TYPE_DATA | SOFT_DUMP_TYPE_LLC,
		       &rec, body, sizeof(body));
	a->dr.full = a->dr.stalled = a->dr.rejected = 0;
	a->dr.reported = true;
	a->dr.report_ns = now;
}

/* Up to budget slots of a's ring: the number consumed. */
static size_t drain(struct soft_state *st, struct soft_pstats_att *a, size_t budget,
		    uint64_t now, bool force)
{
	struct soft_pdump_ring *r = soft_pdump_ring_of(a->map);
	uint64_t drops;
	size_t n;

	for (n = 0; n < budget; n++) {
		const struct soft_pdump_slot *slot = soft_pdump_slot_of(a->map, a->dr.cons);

		if (atomic_load_explicit(&slot->seq, memory_order_acquire) == a->dr.cons + 1) {
			a->dr.stalling = false;
			take(st, a, slot, now);
		} else if (stalled(a, now)) {
			a->dr.stalled++;
		} else {
			break;
		}
		a->dr.cons++;
	}
	if (n)
		atomic_store_explicit(&r->cons, a->dr.cons, memory_order_release);
	drops = atomic_load_explicit(&r->drops, memory_order_relaxed);
	if (drops > a->dr.drops)
		a->dr.full += drops - a->dr.drops;
	a->dr.drops = drops;
	report(st, a, now, force);
	return n;
}

static void set(struct soft_state *st, struct soft_pstats_att *a, uint8_t types,
		uint32_t snaplen)
{
	if (types == a->dr.types && snaplen == a->dr.snaplen)
		return;
	if (!a->dr.types)
		skip_old(a);
	write_ctl(a, types, snaplen);
	if (!types)
		drain(st, a, SOFT_PDUMP_SLOTS, clock_ns(CLOCK_MONOTONIC), true);
}

void soft_pdump_sync(struct soft_state *st, uint64_t netns)
{
	uint32_t snaplen;
	uint8_t types = soft_dump_ns_types(st, netns, &snaplen);

	for (struct soft_pstats_att *a = st->pstats; a; a = a->next)
		if (a->netns == netns)
			set(st, a, types, snaplen);
}

void soft_pdump_attached(struct soft_state *st, struct soft_pstats_att *a)
{
	uint32_t snaplen;
	uint8_t types = st->dumps ? soft_dump_ns_types(st, a->netns, &snaplen) : 0;

	if (types)
		set(st, a, types, snaplen);
}

void soft_pdump_detach(struct soft_pstats_att *a)
{
	if (a->dr.types)
		write_ctl(a, 0, 0);
}

/* The list starts at a from now on, so that the next tick begins where this one stopped. */
static void rotate(struct soft_state *st, struct soft_pstats_att *a)
{
	struct soft_pstats_att **pp = &st->pstats, *tail;

	while (*pp != a)
		pp = &(*pp)->next;
	if (pp == &st->pstats)
		return;
	*pp = NULL;
	for (tail = a; tail->next; tail = tail->next)
		;
	tail->next = st->pstats;
	st->pstats = a;
}

size_t soft_pdump_tick(struct soft_state *st, uint64_t now)
{
	struct soft_pstats_att *a;
	size_t n = 0;

	for (a = st->pstats; a && n < SOFT_PDUMP_BUDGET; a = a->next)
		if (a->dr.types)
			n += drain(st, a, SOFT_PDUMP_BUDGET - n, now, false);
	if (a)
		rotate(st, a);
	return n;
}

static void drain_owner(struct soft_state *st, uint64_t netns, uint32_t uid, uint64_t now)
{
	for (struct soft_pstats_att *a = st->pstats; a; a = a->next)
		if (a->dr.types && a->netns == netns && (uint32_t)a->uid == uid)
			drain(st, a, SOFT_PDUMP_SLOTS, now, false);
}

void soft_pdump_sock_gone(struct soft_state *st, const struct soft_sock *s)
{
	if (st->dumps)
		drain_owner(st, s->id.netns, s->conn_uid, clock_ns(CLOCK_MONOTONIC));
}

void soft_pdump_conn_gone(struct soft_state *st, uint64_t conn_id)
{
	const struct soft_sock *prev = NULL;
	uint64_t now;

	if (!st->dumps)
		return;
	now = clock_ns(CLOCK_MONOTONIC);
	/* its own ring first: LLC records (a group's last DELETE LINK) name no registration */
	for (struct soft_pstats_att *a = st->pstats; a; a = a->next)
		if (a->dr.types && a->conn_id == conn_id)
			drain(st, a, SOFT_PDUMP_SLOTS, now, false);
	for (const struct soft_sock *s = soft_idx_conn_first(st, conn_id); s; s = s->conn_next) {
		if (!prev || s->id.netns != prev->id.netns || s->conn_uid != prev->conn_uid)
			drain_owner(st, s->id.netns, s->conn_uid, now);
		prev = s;
	}
}
