/*
 * Who a client of smc_softd is, read from the kernel when its connection is
 * accepted: credentials, network namespace and CAP_NET_ADMIN.
 */
#ifndef SOFTD_PEER_H
#define SOFTD_PEER_H

#include <stdint.h>

#include "soft_nl.h"

/*
 * Fill peer for the accepted connection fd.  0, or -errno when the client
 * cannot be identified (gone already, or not visible in our /proc): such a
 * connection is refused, since its requests would belong to no namespace.
 */
int softd_peer_read(int fd, uint64_t conn_id, struct soft_peer *peer);

/* CAP_NET_ADMIN in the effective set of /proc/PID/status (bit 12 of CapEff). */
bool softd_peer_cap_net_admin(pid_t pid);

#endif
