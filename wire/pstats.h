/*
 * Per-process counters of the soft data path, in a memfd the process writes
 * and the daemon reads (SMC_SOFT STATS_ATTACH, reg.h); of its own, the
 * daemon writes only the dump's control line and ring cursor.  The process
 * counts with relaxed atomic adds and sends no message per I/O, soft
 * SMC-R's connections apart from soft SMC-D's; the daemon adds the
 * counters of every attached process into the SMC-R and SMC-D parts of
 * GET_STATS (soft/base/stats.h), so `smcr stats` and `smcd stats` show
 * live figures.
 *
 * The daemon trusts nothing here but the size it checked: a process can only
 * make its own numbers wrong, or its own dump records (checked like any
 * other bytes from a process).
 */
#ifndef SOFT_PSTATS_H
#define SOFT_PSTATS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define SOFT_PSTATS_MAGIC   0x315453504d53ULL  /* "SMPST1" little-endian */
#define SOFT_PSTATS_VERSION 4u
#define SOFT_PSTATS_BUCKETS 9                  /* as soft/base/stats.h: 8K .. 1024K, more */

struct soft_pstats_rmb {
	_Atomic uint64_t buf_full_peer_cnt;     /* the peer's buffer was full */
	_Atomic uint64_t buf_full_cnt;          /* our buffer was full */
};

/* One SMC type's share: the counters the kernel keeps per type (SMC_NLA_STATS_T_*). */
struct soft_pstats_io {
	/* payload-size histograms of send and receive calls that moved bytes */
	_Atomic uint64_t tx_pd[SOFT_PSTATS_BUCKETS];
	_Atomic uint64_t rx_pd[SOFT_PSTATS_BUCKETS];
	struct soft_pstats_rmb rmb_tx;          /* send side: the peer's buffer full */
	struct soft_pstats_rmb rmb_rx;          /* receive side: our buffer was full */
	_Atomic uint64_t tx_bytes, rx_bytes;     /* bytes through the rings or RMBs */
	_Atomic uint64_t tx_cnt, rx_cnt;         /* send and receive calls */
};

/* io[]'s index, as the kernel's SMC_TYPE_R and SMC_TYPE_D */
#define SOFT_PSTATS_R 0
#define SOFT_PSTATS_D 1

struct soft_pstats {
	uint64_t magic;                          /* SOFT_PSTATS_MAGIC */
	uint32_t version;                        /* SOFT_PSTATS_VERSION */
	uint32_t size;                           /* sizeof(struct soft_pstats) */
	struct soft_pstats_io io[2];             /* soft SMC-R's connections, soft SMC-D's */
	/* soft-only diagnostics (not in the kernel's layout) */
	_Atomic uint64_t spins, sleeps;          /* waits that spun, waits that slept */
	_Atomic uint64_t doorbells_tx, doorbells_rx;
	_Atomic uint64_t fence_bytes;            /* TCP bytes before cut-overs */
	/*
	 * Bumped when a TCP socket of the process is new, listens or connects:
	 * its fds and the kernel's TCP table are worth a new look.
	 */
	_Atomic uint64_t sock_gen;
	_Atomic uint64_t bells_tx;               /* doorbells through a peer's eventfd */
};

/*
 * The SMC dump's share of the same memfd (doc/smc-dump-header.md 9): a
 * control line only the daemon writes, then a ring of fixed-size record
 * slots the process writes and the daemon drains while a capture session
 * of the process's namespace is on.  The memfd is SOFT_PSTATS_MAP_LEN long;
 * the slots' pages are touched only once the dump is on.
 */
#define SOFT_PDUMP_CTL_OFF   4096u                  /* struct soft_pdump_ctl */
#define SOFT_PDUMP_RING_OFF  8192u                  /* struct soft_pdump_ring */
#define SOFT_PDUMP_SLOTS     512u                   /* a power of two */
#define SOFT_PDUMP_SLOT_LEN  2048u
#define SOFT_PSTATS_MAP_LEN  (SOFT_PDUMP_RING_OFF + 64u * 3 + \
			      SOFT_PDUMP_SLOTS * SOFT_PDUMP_SLOT_LEN)

struct soft_pdump_ctl {                     /* written by the daemon only */
	_Atomic uint32_t types;                  /* SOFT_DUMP_TYPE_CDC, _DATA, _LLC; 0: off */
	_Atomic uint32_t snaplen;                /* data bytes kept per DATA record */
};

struct soft_pdump_slot {
	_Atomic uint64_t seq;                    /* reserved index + 1 once published */
	uint64_t token;                          /* the sconn's registration token; LLC: the group's key */
	uint64_t ts_ns;                          /* CLOCK_REALTIME */
	uint64_t offset;                         /* DATA: ring bytes of this direction before it */
	uint32_t len;                            /* DATA: bytes moved; LLC: the message's (after the GIDs) */
	uint16_t caplen;                         /* DATA, LLC: bytes that follow the slot header */
	uint8_t type;                            /* SOFT_DUMP_T_CDC, _DATA or _LLC */
	uint8_t flags;                           /* SOFT_DUMP_F_RX: consumed, else produced */
	uint16_t prod_wrap, cons_wrap;           /* CDC: our producer cursor (tx ring) */
	uint32_t prod_count, cons_count;         /*      and consumer cursor (rx ring) */
	uint8_t prod_flags, conn_state_flags;    /* CDC: as our cursor words carry them */
	uint8_t link_id;                         /* LLC: the number of the link it went over */
	uint8_t pad[9];
	uint8_t data[];                          /* DATA, LLC: caplen bytes */
};

_Static_assert(sizeof(struct soft_pstats) <= SOFT_PDUMP_CTL_OFF, "pstats outgrew its page");
_Static_assert(sizeof(struct soft_pdump_slot) == 64 &&
	       offsetof(struct soft_pdump_slot, data) == 64, "slot header is one line");

#define SOFT_PDUMP_SNAP_MAX  (SOFT_PDUMP_SLOT_LEN - sizeof(struct soft_pdump_slot))
/* An LLC slot's data: the link's local and peer RoCE GIDs, then the message (len bytes). */
#define SOFT_PDUMP_LLC_GIDS  32u

/*
 * A slot is reserved by a compare-and-swap of prod that keeps prod - cons
 * below SOFT_PDUMP_SLOTS (else the record is dropped and counted), filled,
 * then published with a release store of seq.  The daemon reads slots from
 * cons in order, stops at one not yet published, and stores cons after it.
 */
struct soft_pdump_ring {
	_Alignas(64) _Atomic uint64_t prod;     /* the process */
	_Alignas(64) _Atomic uint64_t cons;     /* the daemon */
	_Alignas(64) _Atomic uint64_t drops;    /* the process: ring full */
};

static inline struct soft_pdump_ctl *soft_pdump_ctl_of(void *map)
{
	return (struct soft_pdump_ctl *)((char *)map + SOFT_PDUMP_CTL_OFF);
}

static inline struct soft_pdump_ring *soft_pdump_ring_of(void *map)
{
	return (struct soft_pdump_ring *)((char *)map + SOFT_PDUMP_RING_OFF);
}

static inline struct soft_pdump_slot *soft_pdump_slot_of(void *map, uint64_t idx)
{
	return (struct soft_pdump_slot *)((char *)map + SOFT_PDUMP_RING_OFF + 64u * 3 +
					  (idx & (SOFT_PDUMP_SLOTS - 1)) * SOFT_PDUMP_SLOT_LEN);
}

#endif
