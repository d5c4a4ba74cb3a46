/*
 * Per-process counters of the soft data path, in a memfd the process writes
 * and the daemon maps read-only (SMC_SOFT STATS_ATTACH, reg.h).  The process
 * counts with relaxed atomic adds and sends no message per I/O; the daemon
 * adds the counters of every attached process into the SMC-D part of
 * GET_STATS (protocol.md 5.1), so `smcd stats` shows live figures.
 *
 * The daemon trusts nothing here but the size it checked: a process can only
 * make its own numbers wrong.
 */
#ifndef SOFT_PSTATS_H
#define SOFT_PSTATS_H

#include <stdatomic.h>
#include <stdint.h>

#define SOFT_PSTATS_MAGIC   0x315453504d53ULL  /* "SMPST1" little-endian */
#define SOFT_PSTATS_VERSION 1u
#define SOFT_PSTATS_BUCKETS 9                  /* as soft/stats.h: 8K .. 1024K, more */

struct soft_pstats_rmb {
	_Atomic uint64_t buf_full_peer_cnt;     /* the peer's buffer was full */
	_Atomic uint64_t buf_full_cnt;          /* our buffer was full */
};

struct soft_pstats {
	uint64_t magic;                          /* SOFT_PSTATS_MAGIC */
	uint32_t version;                        /* SOFT_PSTATS_VERSION */
	uint32_t size;                           /* sizeof(struct soft_pstats) */
	/* payload-size histograms of send and receive calls that moved bytes */
	_Atomic uint64_t tx_pd[SOFT_PSTATS_BUCKETS];
	_Atomic uint64_t rx_pd[SOFT_PSTATS_BUCKETS];
	struct soft_pstats_rmb rmb_tx;          /* send side: peer DMB full */
	struct soft_pstats_rmb rmb_rx;          /* receive side: own DMB was full */
	_Atomic uint64_t tx_bytes, rx_bytes;     /* bytes through the rings */
	_Atomic uint64_t tx_cnt, rx_cnt;         /* send and receive calls */
	/* soft-only diagnostics (not in the kernel's layout) */
	_Atomic uint64_t spins, sleeps;          /* waits that spun, waits that slept */
	_Atomic uint64_t doorbells_tx, doorbells_rx;
	_Atomic uint64_t fence_bytes;            /* TCP bytes before cut-overs */
};

#endif
