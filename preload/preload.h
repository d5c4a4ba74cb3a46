/*
 * libsmc-preload.so: internal interfaces.
 *
 * socket() calls that create a TCP socket (AF_INET/AF_INET6, SOCK_STREAM,
 * protocol 0 or IPPROTO_TCP) go to the active backend; everything else goes
 * unchanged to the next socket() in the lookup order (libc, or another
 * preloaded library).  The soft backend's hooks of the other socket calls
 * (soft.h) pass every descriptor they do not track straight on.
 *
 * Nothing here is exported: the public symbols are the hooks.
 */
#ifndef SMC_PRELOAD_H
#define SMC_PRELOAD_H

#include <stdatomic.h>
#include <stdbool.h>

#pragma GCC visibility push(hidden)

/* What SMC_BACKEND asks for. */
enum preload_want {
	PRELOAD_WANT_AUTO,	/* kernel SMC when it exists, else TCP */
	PRELOAD_WANT_KERNEL,	/* AF_SMC always; errors go to the application */
	PRELOAD_WANT_SOFT,	/* the user-space backend (smc_softd) */
};

/* The environment, read once at initialisation. */
struct preload_config {
	bool debug;		/* SMC_DEBUG set, non-empty, not starting with '0' */
	int sndbuf;		/* SMC_SNDBUF in bytes, -1 when not set or invalid */
	int rcvbuf;		/* SMC_RCVBUF in bytes, -1 when not set or invalid */
	enum preload_want want;	/* SMC_BACKEND */
};

/*
 * A backend creates the sockets of the application's TCP socket() calls.
 *
 * kernel: maps the call to AF_SMC and applies SMC_SNDBUF/SMC_RCVBUF.
 * tcp:    passes the call through unchanged (no SMC on this system).
 *
 * soft:   a TCP socket that the soft data path (soft.h) tracks; the other
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

/* config.c */
extern struct preload_config preload_cfg;

/* log.c */
void preload_dbg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void preload_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

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

void preload_config_read(struct preload_config *cfg);
bool preload_parse_debug(const char *value);
int preload_parse_bufsize(const char *value, int *bytes);

/* backend.c */
bool preload_is_tcp(int domain, int type, int protocol);
const struct preload_backend *
preload_backend_choose(const struct preload_config *cfg, int smc_errno);
void preload_backend_init(const struct preload_config *cfg);
int preload_stream_socket(int domain, int type, int protocol);

#pragma GCC visibility pop

#endif
