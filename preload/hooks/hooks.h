/*
 * libsmc-preload.so, its top layer: the exported hooks (doc/layers.md).
 *
 * socket() calls that create a TCP socket (AF_INET/AF_INET6, SOCK_STREAM,
 * protocol 0 or IPPROTO_TCP) go to the active backend; everything else goes
 * unchanged to the next socket() in the lookup order (libc, or another
 * preloaded library).  The soft backend's hooks of the other socket calls
 * (conn.h) pass every descriptor they do not track straight on.
 *
 * Nothing here is exported: the public symbols are the hooks.
 */
#ifndef SMC_PRELOAD_HOOKS_H
#define SMC_PRELOAD_HOOKS_H

#include "share.h"

#pragma GCC visibility push(hidden)

/*
 * A backend creates the sockets of the application's TCP socket() calls.
 *
 * kernel: maps the call to AF_SMC and applies SMC_SNDBUF/SMC_RCVBUF.
 * tcp:    passes the call through unchanged (no SMC on this system).
 *
 * soft:   a TCP socket that the soft data path (conn.h) tracks; the other
 *         hooks take it over once it is connected and paired.
 */
struct preload_backend {
	const char *name;
	/* Like socket(2) for a call that passed preload_is_tcp(). */
	int (*stream_socket)(int domain, int type, int protocol);
	/* True when a failure with EAFNOSUPPORT/EPROTONOSUPPORT means "this
	 * system has no SMC" and preload_backend_choose() may pick another. */
	bool needs_kernel_smc;
};

extern const struct preload_backend preload_backend_kernel;
extern const struct preload_backend preload_backend_soft;

/* socket.c */
extern atomic_bool preload_initialised;
void preload_init(void);
#define PRELOAD_INIT() \
	do { \
		if (__builtin_expect(!atomic_load_explicit(&preload_initialised, \
							   memory_order_acquire), 0)) \
			preload_init(); \
	} while (0)
int preload_next_socket(int domain, int type, int protocol);

/* backend.c */
bool preload_is_tcp(int domain, int type, int protocol);
const struct preload_backend *
preload_backend_choose(const struct preload_config *cfg, int smc_errno);
void preload_backend_init(const struct preload_config *cfg);
int preload_stream_socket(int domain, int type, int protocol);

/* ---- hook_epoll.c ---- */
/* fd was closed: forget the epoll set it was (if an epoll fd). */
void soft_epoll_closed(int fd);
void soft_epoll_closed_range(unsigned first, unsigned last);
/* hook_fd.c: the program closes the descriptors first..last (close_range). */
void soft_fds_closing(unsigned first, unsigned last);

#pragma GCC visibility pop

#endif
