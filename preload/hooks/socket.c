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
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hooks.h"

typedef int socket_fn(int domain, int type, int protocol);

static socket_fn *next_socket;
atomic_bool preload_initialised;
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * The functions behind the hooks first: reading the configuration may print
 * (write() is a hook) and the other steps make hooked calls too.
 */
static void init_once(void)
{
	void *sym;

	/* first: the log writes through next.syscall */
	preload_next_init();
	dlerror();
	sym = dlsym(RTLD_NEXT, "socket");
	if (!sym) {
		const char *why = dlerror();

		/* Always shown: the program cannot create any socket now. */
		preload_err("dlsym failed on socket: %s\n", why ? why : "not found");
	}
	next_socket = (socket_fn *)sym;
	preload_config_read(&preload_cfg);
	preload_backend_init(&preload_cfg);
}

/*
 * After an execve the inherited connections are taken over once init is
 * complete: that talks to the daemon through hooked calls, which must find
 * the library initialised.
 */
void preload_init(void)
{
	static _Thread_local bool initialising;
	bool first = false;

	/* a hooked call made while this thread initialises: go on without */
	if (atomic_load(&preload_initialised) || initialising)
		return;
	initialising = true;
	pthread_mutex_lock(&init_lock);
	if (!atomic_load(&preload_initialised)) {
		init_once();
		atomic_store(&preload_initialised, true);
		first = true;
	}
	pthread_mutex_unlock(&init_lock);
	if (first)
		soft_exec_inherit();
	initialising = false;
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
	int fd;

	PRELOAD_INIT();
	if (!next_socket) {
		errno = EINVAL;
		return -1;
	}
	if (!preload_is_tcp(domain, type, protocol))
		return next_socket(domain, type, protocol);
	fd = preload_stream_socket(domain, type, protocol);
	if (fd >= 0 && soft_cfg.enabled) {
		int saved = errno;

		ctl_hello();
		errno = saved;
	}
	return fd;
}
