/*
 * The control port: a UDP port on which smc_softd asks the daemons of
 * connections' peer hosts, and answers theirs (doc/soft-roce.md section 2).
 */
#ifndef SOFTD_PEER_PORT_H
#define SOFTD_PEER_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "state.h"

struct softd_peer_port {
	int fd[2];               /* IPv4, IPv6 (IPV6_V6ONLY); -1 when not open */
	uint16_t port;
	int error;               /* why the default port could not be had, 0 */
};

/*
 * Open port on both families (0: off).  A port the user gave that cannot
 * be had fails (-1 with err); the default one is then left off, with the
 * reason in p->error.
 */
int softd_peer_port_open(struct softd_peer_port *p, uint16_t port, bool given,
			 char *err, size_t errlen);
void softd_peer_port_close(struct softd_peer_port *p);
/* Whether the port is open (on either family). */
bool softd_peer_port_on(const struct softd_peer_port *p);
/* Every datagram waiting on fd, each handed to the service. */
void softd_peer_port_read(struct softd_peer_port *p, int fd, struct soft_state *st);
/* st->peer_send: ctx is the port. */
int softd_peer_send(void *ctx, const uint8_t *msg, size_t len, int family,
		    const uint8_t from[16], const uint8_t to[16], uint16_t port, uint32_t ifindex);

#endif
