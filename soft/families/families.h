/*
 * The netlink families the daemon answers, as the kernel's SMC module does,
 * and the entry that hands a request datagram to them (core.c).
 */
#ifndef SOFT_FAMILIES_H
#define SOFT_FAMILIES_H

#include "soft_nl.h"

extern const struct soft_family soft_pnet_family;   /* pnet.c:  SMC_PNETID */
extern const struct soft_family soft_gen_family;    /* gen*.c:  SMC_GEN_NETLINK */

/* sock_diag: SOCK_DIAG_BY_FAMILY for AF_SMC (diag.c); the core adds NLMSG_DONE. */
int soft_diag_dump(struct soft_req *r);

/*
 * Handle one request datagram from peer; replies are appended to out.
 * fd is an SCM_RIGHTS descriptor that came with it (or -1): consumed.
 */
void soft_handle(struct soft_state *st, const struct soft_peer *peer,
		 const void *data, size_t len, int fd, struct soft_out *out);
/* The same, but fd is returned (-1 when a handler took it) instead of closed. */
int soft_handle_keep(struct soft_state *st, const struct soft_peer *peer,
		     const void *data, size_t len, int fd, struct soft_out *out);

#endif
