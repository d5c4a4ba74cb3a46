/*
 * The event loop of smc_softd: one thread, epoll over the listening socket,
 * the clients and a signalfd for the signals that stop it.
 */
#ifndef SOFTD_SERVER_H
#define SOFTD_SERVER_H

#include <signal.h>
#include <stddef.h>

#include "soft_nl.h"

struct softd_server;

/*
 * A server on the listening socket lfd (which stays the caller's), answering
 * from st, stopped by the signals in stop (already blocked).  NULL with err.
 */
struct softd_server *softd_server_new(int lfd, const sigset_t *stop, struct soft_state *st,
				      char *err, size_t errlen);
struct softd_peer_port;
/* Also serve the control port's sockets (peer_port.h): 0 or -1 with err. */
int softd_server_peer_port(struct softd_server *s, struct softd_peer_port *p,
			   char *err, size_t errlen);
/* Serve until a stop signal: its number, or -1 (err) when the loop fails. */
int softd_server_run(struct softd_server *s, char *err, size_t errlen);
/* Close every connection (soft_conn_gone() for each) and free the server. */
void softd_server_free(struct softd_server *s);

#endif
