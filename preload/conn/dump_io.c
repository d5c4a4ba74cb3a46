/*
 * The SMC dump's records of the data path (doc/smc-dump-header.md 9): the
 * daemon never sees our I/O nor our soft SMC-R link groups' LLC messages, so
 * we put CDC, DATA and LLC records into the ring of our stats memfd while its
 * control line asks for them.  Out of line and
 * cold: the data path pays only soft_dump_on() while the dump is off.
 */
#include <time.h>

#include "conn.h"
#include "dump_fmt.h"
#include "pdump_put.h"
#include "smcr.h"

static void *dump_map(struct soft_pdump_ctl *ctl)
{
	return (char *)ctl - SOFT_PDUMP_CTL_OFF;
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void head(struct soft_pdump_slot *h, struct sconn *sc, uint8_t type, uint8_t flags)
{
	h->token = sc->token;
	h->ts_ns = realtime_ns();
	h->type = type;
	h->flags = flags;
}

static void put_cdc(void *map, struct sconn *sc)
{
	struct soft_pdump_slot h = { 0 };
	struct tp_cdc d;

	TP(sc, own_cdc, &d);
	head(&h, sc, SOFT_DUMP_T_CDC, 0);
	h.prod_wrap = d.prod_wrap;
	h.prod_count = d.prod_count;
	h.cons_wrap = d.cons_wrap;
	h.cons_count = d.cons_count;
	h.prod_flags = d.prod_flags;
	h.conn_state_flags = d.conn_state_flags;
	soft_pdump_put(map, &h, NULL, 0, 0, 0);
}

/* The stream position of the block before it: its ring cursor minus n. */
static uint64_t block_offset(uint64_t pos, uint32_t size, size_t n)
{
	uint64_t span = (uint64_t)size << 16;

	return (pos + span - n) % span;
}

__attribute__((noinline, cold))
void dump_io(struct sconn *sc, bool rx, const struct iovec *iov, int cnt, size_t n)
{
	struct soft_pdump_ctl *ctl = pdump_ctl;
	uint32_t types = atomic_load_explicit(&ctl->types, memory_order_relaxed);
	void *map = dump_map(ctl);

	if (types & SOFT_DUMP_TYPE_DATA) {
		struct soft_pdump_slot h = { 0 };
		size_t cap = atomic_load_explicit(&ctl->snaplen, memory_order_relaxed);

		head(&h, sc, SOFT_DUMP_T_DATA, rx ? SOFT_DUMP_F_RX : 0);
		h.offset = rx ? block_offset(TP(sc, rx_pos), TP(sc, rx_size), n)
			      : block_offset(TP(sc, tx_pos), TP(sc, tx_size), n);
		h.len = (uint32_t)n;
		soft_pdump_put(map, &h, iov, cnt, 0, cap < n ? cap : n);
	}
	/* a consume sends its CDC only when it published the consumer cursor */
	if (types & SOFT_DUMP_TYPE_CDC && (!rx || TP(sc, rx_published)))
		put_cdc(map, sc);
}

__attribute__((noinline, cold))
void dump_cdc(struct sconn *sc)
{
	struct soft_pdump_ctl *ctl = pdump_ctl;

	if (atomic_load_explicit(&ctl->types, memory_order_relaxed) & SOFT_DUMP_TYPE_CDC)
		put_cdc(dump_map(ctl), sc);
}

__attribute__((noinline, cold))
static void put_llc(struct soft_pdump_ctl *ctl, const struct smcr_llc_seen *m)
{
	struct soft_pdump_slot h = { 0 };
	struct iovec iov[3] = {
		{ (void *)m->gid, 16 }, { (void *)m->peer_gid, 16 }, { (void *)m->msg, m->len },
	};

	if (m->len > SOFT_DUMP_LLC_MSG_MAX)
		return;
	h.token = m->key;
	h.ts_ns = realtime_ns();
	h.type = SOFT_DUMP_T_LLC;
	h.flags = m->rx ? SOFT_DUMP_F_RX : 0;
	h.link_id = m->link_id;
	h.len = (uint32_t)m->len;
	soft_pdump_put(dump_map(ctl), &h, iov, 3, 0, SOFT_PDUMP_LLC_GIDS + m->len);
}

void dump_llc(const struct smcr_llc_seen *m)
{
	/* read once: a lost control connection points it at a private line meanwhile */
	struct soft_pdump_ctl *ctl = pdump_ctl;

	if (atomic_load_explicit(&ctl->types, memory_order_relaxed) & SOFT_DUMP_TYPE_LLC)
		put_llc(ctl, m);
}
