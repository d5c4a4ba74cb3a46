/*
 * libsmc-preload.so: the replacement socket() and its lazy initialisation.
 *
 * The next socket() is found with dlsym(RTLD_NEXT), not by opening libc.so.6
 * as upstream did: that way the library chains with other preloaded
 * libraries, and tests can place a fake socket() behind it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "preload.h"

typedef int socket_fn(int domain, int type, int protocol);

struct preload_config preload_cfg;

static socket_fn *next_socket;
static atomic_bool initialised;
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;

/* One write(2) per message, so lines of concurrent threads do not mix. */
static void vmsg(const char *fmt, va_list ap)
{
	char buf[512];
	int saved = errno;
	int n;

	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	if (n > 0 && write(STDERR_FILENO, buf, n) < 0) {
		/* nowhere to report it */
	}
	errno = saved;
}

void preload_dbg(const char *fmt, ...)
{
	va_list ap;

	if (!preload_cfg.debug)
		return;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

void preload_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

static void init_once(void)
{
	void *sym;

	preload_config_read(&preload_cfg);
	dlerror();
	sym = dlsym(RTLD_NEXT, "socket");
	if (!sym) {
		const char *why = dlerror();

		/* Always shown: the program cannot create any socket now. */
		preload_err("dlsym failed on socket: %s\n", why ? why : "not found");
	}
	next_socket = (socket_fn *)sym;
	preload_backend_init(&preload_cfg);
}

static void init(void)
{
	if (atomic_load(&initialised))
		return;
	pthread_mutex_lock(&init_lock);
	if (!atomic_load(&initialised)) {
		init_once();
		atomic_store(&initialised, true);
	}
	pthread_mutex_unlock(&init_lock);
}

int preload_next_socket(int domain, int type, int protocol)
{
	if (!next_socket) {
		errno = EINVAL;
		return -1;
	}
	return next_socket(domain, type, protocol);
}

__attribute__((visibility("default")))
int socket(int domain, int type, int protocol)
{
	init();
	if (!next_socket) {
		errno = EINVAL;
		return -1;
	}
	if (!preload_is_tcp(domain, type, protocol))
		return next_socket(domain, type, protocol);
	return preload_stream_socket(domain, type, protocol);
}
