/*
 * The SMC dump's records of the data path (doc/smc-dump-header.md 9): the
 * daemon never sees our I/O, so we put CDC and DATA records into the ring of
 * our stats memfd while its control line asks for them.  Out of line and
 * cold: the data path pays only soft_dump_on() while the dump is off.
 */
#include <time.h>

#include "conn.h"
#include "dump_fmt.h"
#include "pdump_put.h"

static void *dump_map(struct soft_pdump_ctl *ctl)
{
	return (char *)ctl - SOFT_PDUMP_CTL_OFF;
}

static void head(struct soft_pdump_slot *h, struct sconn *sc, uint8_t type, uint8_t flags)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	h->token = sc->token;
	h->ts_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
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
