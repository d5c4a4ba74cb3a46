/*
 * SMC statistics of a network namespace, laid out as the kernel's
 * struct smc_stats and struct smc_stats_rsn (net/smc/smc_stats.h), and the
 * events that move them.  There is no reset, as in the kernel.  The data
 * path calls the soft_stats_* event functions; GET_STATS and GET_FBACK_STATS
 * read them.  A namespace gets its counters on its first event.
 */
#ifndef SOFT_STATS_H
#define SOFT_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "state.h"

#define SOFT_STATS_BUCKETS     9    /* SMC_BUF_MAX: 8K .. 1024K, > 1024K */
#define SOFT_MAX_FBACK_RSN_CNT 36   /* SMC_MAX_FBACK_RSN_CNT of current kernels */

enum soft_tech { SOFT_TECH_R = 0, SOFT_TECH_D = 1 };   /* SMC_TYPE_R, SMC_TYPE_D */

struct soft_stats_memsize {
	uint64_t buf[SOFT_STATS_BUCKETS];
};

struct soft_stats_rmbcnt {
	uint64_t buf_size_small_peer_cnt;
	uint64_t buf_size_small_cnt;
	uint64_t buf_full_peer_cnt;
	uint64_t buf_full_cnt;
	uint64_t reuse_cnt;
	uint64_t alloc_cnt;
	uint64_t dgrade_cnt;
};

struct soft_stats_tech {
	struct soft_stats_memsize tx_rmbsize;   /* sndbuf sizes allocated/reused */
	struct soft_stats_memsize rx_rmbsize;   /* RMB/DMB sizes allocated/reused */
	struct soft_stats_memsize tx_pd;        /* send payload sizes */
	struct soft_stats_memsize rx_pd;        /* receive payload sizes */
	struct soft_stats_rmbcnt rmb_tx;
	struct soft_stats_rmbcnt rmb_rx;
	uint64_t clnt_v1_succ_cnt;
	uint64_t clnt_v2_succ_cnt;
	uint64_t srv_v1_succ_cnt;
	uint64_t srv_v2_succ_cnt;
	uint64_t urg_data_cnt;
	uint64_t splice_cnt;
	uint64_t cork_cnt;
	uint64_t ndly_cnt;
	uint64_t rx_bytes;
	uint64_t tx_bytes;
	uint64_t rx_cnt;
	uint64_t tx_cnt;
	uint64_t rx_rmbuse;                     /* bytes of RMBs in use */
	uint64_t tx_rmbuse;                     /* bytes of sndbufs in use */
};

struct soft_stats_fback {
	int fback_code;
	uint16_t count;                         /* u16 and wraps, as the kernel's */
};

struct soft_stats {
	struct soft_stats_tech smc[2];          /* [SOFT_TECH_R], [SOFT_TECH_D] */
	uint64_t clnt_hshake_err_cnt;
	uint64_t srv_hshake_err_cnt;
	/* fallback reasons (the kernel's net->smc.fback_rsn) */
	struct soft_stats_fback srv[SOFT_MAX_FBACK_RSN_CNT];
	struct soft_stats_fback clnt[SOFT_MAX_FBACK_RSN_CNT];
	uint64_t srv_fback_cnt;
	uint64_t clnt_fback_cnt;
};

/* The counters of ns, created on first use; NULL when out of memory. */
struct soft_stats *soft_stats_get(struct soft_ns *ns);

/* Bucket of a length: min(fls((len - 1) >> 13), 8); -1 for len <= 0. */
int soft_stats_bucket(int64_t len);

/* ---- events (all no-ops when out of memory) ---- */

/* A switch to TCP fallback with reason code (server: the socket came from a listener). */
void soft_stats_fallback(struct soft_ns *ns, bool server, int code);
/* A handshake that succeeded (v2: negotiated version 2). */
void soft_stats_conn(struct soft_ns *ns, bool smcd, bool server, bool v2);
/* A handshake that ended in an error instead of a fallback. */
void soft_stats_hs_err(struct soft_ns *ns, bool server);
/*
 * A sendmsg (tx) or recvmsg on an SMC socket: the call count always, and when
 * rc > 0 the payload bucket of len and rc bytes.  Send passes the requested
 * length as len, receive the returned one.
 */
void soft_stats_payload(struct soft_ns *ns, bool smcd, bool tx, int64_t len, int64_t rc);

enum soft_rmb_event {
	SOFT_RMB_SIZE_SMALL_PEER, SOFT_RMB_SIZE_SMALL, SOFT_RMB_FULL_PEER, SOFT_RMB_FULL,
	SOFT_RMB_REUSE, SOFT_RMB_ALLOC, SOFT_RMB_DGRADE,
};
/* A buffer counter of the send (tx) or receive side. */
void soft_stats_rmb(struct soft_ns *ns, bool smcd, bool tx, enum soft_rmb_event ev);
/* A buffer of size bytes allocated or reused: its size bucket. */
void soft_stats_rmb_size(struct soft_ns *ns, bool smcd, bool tx, int64_t size);
/* Buffer bytes taken (delta > 0) or released (delta < 0). */
void soft_stats_rmb_usage(struct soft_ns *ns, bool smcd, bool tx, int64_t delta);

enum soft_special { SOFT_SPECIAL_URG, SOFT_SPECIAL_SPLICE, SOFT_SPECIAL_CORK, SOFT_SPECIAL_NDLY };
/* urgent data, splice_read, TCP_CORK off, TCP_NODELAY on (established socket) */
void soft_stats_special(struct soft_ns *ns, bool smcd, enum soft_special what);

/* The namespace's counters freed (soft_state_free). */
void soft_stats_free(struct soft_ns *ns);

#endif
