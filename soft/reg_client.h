/*
 * Client side of the SMC_SOFT family (reg.h) for the preload and the tests:
 * raw netlink over the daemon's control socket, libc only (no libnl, no
 * libmnl), so libsmc-preload.so can link it with nothing but -ldl.
 *
 * A connection is not thread-safe: one request at a time.  Every wait is
 * bounded by the timeout given to soft_reg_open (SO_RCVTIMEO/SO_SNDTIMEO);
 * an expired wait is -ETIMEDOUT.  Errors are negative errnos: the daemon's
 * (reg.h) or the transport's.  Registrations live as long as the connection:
 * closing it (or exiting) drops them all in the daemon.
 */
#ifndef SOFT_REG_CLIENT_H
#define SOFT_REG_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "reg.h"

#include "soft_socket.h"

#define SOFT_REG_TIMEOUT_MS 2000

struct soft_reg_conn {
	int fd;                  /* the control socket, -1 when closed */
	uint16_t family;         /* SMC_SOFT's id, from CTRL_CMD_GETFAMILY */
	uint32_t seq;
};

/*
 * The daemon's control socket, as lib/ finds it: $SMC_SOFT_SOCKET; else,
 * for a user other than root, $XDG_RUNTIME_DIR/smc_soft/control if it is a
 * socket; else SMC_SOFT_SOCKET_DEFAULT.  The environment is not trusted in
 * set-user-ID programs (secure_getenv).  Written into buf.
 */
const char *soft_reg_socket_path(char *buf, size_t len);

/*
 * Connect to the daemon at path (NULL: soft_reg_socket_path()), check that
 * it runs as root or as this user (else -EACCES), and resolve the family
 * (-ENOENT if the daemon has none of that name).  timeout_ms <= 0 means
 * SOFT_REG_TIMEOUT_MS.  0 or -errno; on error c->fd is -1.
 */
int soft_reg_open(struct soft_reg_conn *c, const char *path, int timeout_ms);
void soft_reg_close(struct soft_reg_conn *c);

/* Register socket fd in state (SMC_SOFT_STATE_*); *token names it. */
int soft_reg_add(struct soft_reg_conn *c, int fd, uint8_t state, uint64_t *token);
/* New state; fd (or -1) passes the socket again so the daemon re-reads it. */
int soft_reg_state(struct soft_reg_conn *c, uint64_t token, uint8_t state, int fd);
int soft_reg_del(struct soft_reg_conn *c, uint64_t token);

#endif
