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
struct soft_lgr;          /* lgr.c */
struct soft_regidx;       /* regidx.c */
struct soft_pstats_att;   /* pstats_att.c */
struct soft_bell;         /* bells.c */
struct soft_dump;         /* dump.c */

struct soft_ns {
	struct soft_ns *next;
	uint64_t netns;                  /* the namespace's key (soft_netns_key) */
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
	struct soft_dev *devs;           /* the soft ISM device first, then RoCE devices */
	const char *sysfs;               /* where sysfs is (the host's RDMA devices), NULL: none */
	struct soft_lgr *lgrs;           /* link groups, SMC-R and SMC-D */
	uint32_t lgr_num;                /* last link group id handed out */
	uint64_t next_sock_token;
	struct soft_regidx *idx;         /* registrations by token, inode, connection, 4-tuple */
	uint64_t next_dmb_token;
	struct soft_pstats_att *pstats;  /* processes' counters (STATS_ATTACH) */
	struct soft_dump *dumps;         /* capture sessions (DUMP_SET), NULL: dump off */
	struct soft_bell *bells;         /* processes' doorbells (BELL) */
	struct soft_memos *memos;        /* declines remembered (decl_memo.c), NULL: none yet */
	uint32_t next_bell_id;
	struct soft_asks *asks;          /* ends asking a peer host's daemon (peer_ask.c) */
	/*
	 * The control port (runtime/peer_port.c), NULL when it is off: sends
	 * msg from our address from to the peer host's daemon at to:port (IPv4
	 * in the first 4 bytes; port 0: the control port); 0 or -errno.
	 */
	int (*peer_send)(void *ctx, const uint8_t *msg, size_t len, int family,
			 const uint8_t from[16], const uint8_t to[16], uint16_t port,
			 uint32_t ifindex);
	void *peer_ctx;
};

/* Empty state; the initial namespace is the daemon's own. */
void soft_state_init(struct soft_state *st);
/*
 * The key of a network namespace: its cookie (SO_NETNS_COOKIE, never reused)
 * read from a socket that lives in it, e.g. the accepted end of a client's
 * connection or a registered TCP socket.  Kernels before 5.14 have no
 * cookie: then the inode of the namespace of the socket's process (pid, 0 for
 * the daemon).  0 when neither can be read.
 */
uint64_t soft_netns_key(int sock_fd, pid_t pid);

/* The namespace's state, created on first use (NULL when out of memory). */
struct soft_ns *soft_ns_get(struct soft_state *st, uint64_t netns);

#endif
