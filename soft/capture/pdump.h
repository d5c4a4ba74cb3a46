/*
 * The daemon's side of the processes' dump rings (pstats.h): the control
 * line it writes into every attached stats memfd of a captured namespace,
 * and the drain that turns the slots the processes publish into CDC, DATA
 * and LLC records of the sessions (dump.h).  Nothing in a ring is trusted: a
 * slot is copied out, then checked, and a process can only make records
 * about connections of its own user in its own namespace.
 */
#ifndef SOFT_PDUMP_H
#define SOFT_PDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "state.h"

#define SOFT_PDUMP_TICK_NS   5000000ull       /* drain period while a session is on */
#define SOFT_PDUMP_BUDGET    4096u            /* records per tick, all rings together */
#define SOFT_PDUMP_STALL_NS  1000000000ull    /* an unpublished slot is skipped after this */
#define SOFT_PDUMP_LOST_NS   1000000000ull    /* LOST records and log lines at most this often */
#define SOFT_PDUMP_GIDS_NS   1000000000ull    /* the RDMA devices read again for an LLC record at most this often */

/* What the daemon keeps of a ring; the ring's own cons is only ever written. */
struct soft_pdump_drain {
	uint32_t types, snaplen;         /* as last written into the control line */
	uint64_t cons;                   /* the next slot to read */
	uint64_t drops;                  /* the process's drop counter, last seen */
	bool stalling;                   /* the slot at cons stays unpublished */
	uint64_t stall_ns;               /* since then */
	uint64_t full, stalled, rejected;   /* lost since the last report */
	bool reported;
	uint64_t report_ns;              /* of the last report */
};

/* A STATS_ATTACH (pstats_att.c). */
struct soft_pstats_att {
	struct soft_pstats_att *next;
	uint64_t conn_id;
	uint64_t netns;                  /* of the control connection */
	uid_t uid;                       /* of the control connection */
	pid_t pid;
	void *map;                       /* SOFT_PSTATS_MAP_LEN bytes, shared with the process */
	struct soft_pdump_drain dr;
};

/*
 * The sessions of netns changed: the control lines of its processes get
 * the types and snapshot length they ask for now.  A ring that is switched
 * on skips what it held; one switched off is drained into the sessions
 * still listed (a session that ends is, until this returns).
 */
void soft_pdump_sync(struct soft_state *st, uint64_t netns);
/* A process attached: a capture of its namespace reaches it now. */
void soft_pdump_attached(struct soft_state *st, struct soft_pstats_att *a);
/* It detaches: its control line back to off. */
void soft_pdump_detach(struct soft_pstats_att *a);
/*
 * Drain every switched-on ring, at most SOFT_PDUMP_BUDGET records in all;
 * now_ns is CLOCK_MONOTONIC.  The number of records drained.
 */
size_t soft_pdump_tick(struct soft_state *st, uint64_t now_ns);
struct soft_sock;
/* A registration goes: what processes wrote about it goes out first. */
void soft_pdump_sock_gone(struct soft_state *st, const struct soft_sock *s);
/* The same for every registration of control connection conn_id. */
void soft_pdump_conn_gone(struct soft_state *st, uint64_t conn_id);

#endif
