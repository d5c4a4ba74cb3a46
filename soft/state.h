/*
 * The soft backend's state: what the kernel keeps per network namespace
 * (PNET table, statistics, HS limitation, sockets) and host-wide (devices,
 * UEIDs, SEID).  Each part belongs to the file that serves it.
 */
#ifndef SOFT_STATE_H
#define SOFT_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct soft_pnet_entry;   /* pnet.c */
struct soft_stats;        /* stats.c */
struct soft_sock;         /* reg.c */
struct soft_dev;          /* devices.c */

struct soft_ns {
	struct soft_ns *next;
	uint64_t netns;                  /* inode of the namespace */
	bool init;                       /* the initial namespace (IB/ISM PNET entries allowed) */
	struct soft_pnet_entry *pnet;    /* PNET table, insertion order */
	struct soft_stats *stats;        /* counters, NULL until the first event */
	bool hs_limit;                   /* handshake limitation */
	struct soft_sock *socks;         /* registered sockets */
};

#define SOFT_MAX_UEID 4
#define SOFT_EID_LEN 32

struct soft_state {
	struct soft_ns *ns;
	uint64_t init_netns;
	/* host-wide */
	char ueid[SOFT_MAX_UEID][SOFT_EID_LEN + 1];   /* blank-padded, insertion order */
	int n_ueid;
	bool seid_enabled;
	struct soft_dev *devs;           /* the soft ISM device first, then soft RoCE */
	uint64_t next_sock_token;
};

/* Empty state; the initial namespace is the daemon's own. */
void soft_state_init(struct soft_state *st);
/* Inode of the network namespace of a process (0 for self), or 0 on failure. */
uint64_t soft_netns_of(pid_t pid);

/* The namespace's state, created on first use (NULL when out of memory). */
struct soft_ns *soft_ns_get(struct soft_state *st, uint64_t netns);
void soft_state_free(struct soft_state *st);

/* Freeing the parts, by their owners. */
void soft_pnet_free(struct soft_ns *ns);
void soft_stats_free(struct soft_ns *ns);
void soft_socks_free(struct soft_ns *ns);
void soft_devs_free(struct soft_state *st);

#endif
