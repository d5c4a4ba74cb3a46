/*
 * The shared memory of one paired connection as the daemon keeps it: the
 * memfd (an end that execs gets it again; sock_diag reads the live cursors
 * from it, unmapped), and the link group the connection counts in.
 */
#ifndef SOFT_PAIR_H
#define SOFT_PAIR_H

#include <stdint.h>

#include "state.h"
#include "sock.h"
#include "dmb.h"

struct soft_region {
	int fd;                          /* the memfd, kept for SOCK_INFO after execve */
	uint32_t ring[2];                /* direction 0: side 0 to side 1 */
	uint64_t size;
	uint64_t dmb_token[2];           /* the DMB each side receives into */
	struct soft_sock *end[2];        /* by side; NULL once gone */
	struct soft_ns *ns[2];
	struct soft_lgr *lgr;            /* while both ends are paired */
};

/* A region for s as side 0, sized from its wishes (0: the default): 0 or -errno. */
int soft_region_new(struct soft_state *st, struct soft_sock *s, struct soft_ns *ns,
		    uint32_t sndbuf, uint32_t rcvbuf);
/* s joins peer's region as side 1; both become PAIRED: 0 or -ENOMEM. */
int soft_region_join(struct soft_state *st, struct soft_sock *peer, struct soft_sock *s,
		     struct soft_ns *ns);
/* s leaves its region, which goes when its last end does. */
void soft_region_leave(struct soft_state *st, struct soft_sock *s);

/* Both control blocks of s's region, read now: 0, or -errno (none: -ENOENT). */
int soft_region_ctrl(const struct soft_sock *s, struct dmb_ctrl ctrl[2]);

/* Ring sizes from s's view: transmit and receive. */
uint32_t soft_region_tx(const struct soft_sock *s);
uint32_t soft_region_rx(const struct soft_sock *s);

/* Every region freed (soft_state_free). */
void soft_regions_free(struct soft_state *st);

#endif
