/*
 * Where the soft backend listens and whether to trust it: shared by the
 * tools (lib/nl.c) and the registration client of the preload
 * (wire/reg_client.c), so it uses nothing but libc.
 */
#ifndef SMC_SOFT_SOCKET_H
#define SMC_SOFT_SOCKET_H

#include <stddef.h>

#define SMC_SOFT_SOCKET_DEFAULT "/run/smc_soft/control"

/*
 * SMC_SOFT_SOCKET; else, for a user other than root, the per-user daemon's
 * socket $XDG_RUNTIME_DIR/smc_soft/control when it exists; else the system
 * daemon's.  The environment is not trusted in set-user-ID programs.
 * Written into buf, which is returned.
 */
const char *smc_soft_socket_find(char *buf, size_t len);

/* 0 when the daemon on fd runs as root or as the calling user, else -EACCES or -errno. */
int smc_soft_peer_trusted(int fd);

#endif
