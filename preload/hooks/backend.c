/*
 * libsmc-preload.so: the backends and the one place that chooses between them.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hooks.h"
#include "smc_uapi.h"

/* The kernel's SOCK_TYPE_MASK: the bits of type below the flags. */
#define SOCK_TYPE_MASK 0xf

static _Atomic(const struct preload_backend *) active;

bool preload_is_tcp(int domain, int type, int protocol)
{
	return (domain == AF_INET || domain == AF_INET6) &&
	       (type & SOCK_TYPE_MASK) == SOCK_STREAM &&
	       (protocol == IPPROTO_IP || protocol == IPPROTO_TCP);
}

static void set_bufsize(int fd, int optname, int bytes)
{
	if (bytes < 0)
		return;
	if (next.setsockopt(fd, SOL_SOCKET, optname, &bytes, sizeof(bytes)) < 0)
		preload_dbg("libsmc-preload: sockopt %d: cannot set %d: %m\n",
			    optname, bytes);
	else
		preload_dbg("sockopt %d set to %d\n", optname, bytes);
}

/* The sizes apply to the sockets the library maps, not to every socket. */
static int kernel_stream_socket(int domain, int type, int protocol)
{
	int saved, fd;

	(void)protocol;
	preload_dbg("libsmc-preload: map sock to AF_SMC\n");
	fd = preload_next_socket(AF_SMC, type,
				 domain == AF_INET ? SMCPROTO_SMC : SMCPROTO_SMC6);
	if (fd < 0)
		return fd;
	saved = errno;
	set_bufsize(fd, SO_SNDBUF, preload_cfg.sndbuf);
	set_bufsize(fd, SO_RCVBUF, preload_cfg.rcvbuf);
	errno = saved;
	return fd;
}

const struct preload_backend preload_backend_kernel = {
	.name = "kernel",
	.stream_socket = kernel_stream_socket,
	.needs_kernel_smc = true,
};

/* A TCP socket the soft data path may take over once it is connected. */
static int soft_stream_socket(int domain, int type, int protocol)
{
	int fd = preload_next_socket(domain, type, protocol);

	if (fd >= 0 && fd_track(fd, -1)) {
		soft_set_nonblock(fd, (type & SOCK_NONBLOCK) != 0);
		soft_set_rcvtimeo(fd, 0);
	}
	return fd;
}

const struct preload_backend preload_backend_soft = {
	.name = "soft",
	.stream_socket = soft_stream_socket,
};

/*
 * The decision, all of it.  smc_errno is 0 at initialisation, or the errno of
 * a failed socket(AF_SMC, ...) that says the kernel has no SMC.
 *
 *   SMC_BACKEND=kernel  AF_SMC, and its errors reach the application (upstream)
 *   SMC_BACKEND=soft    TCP sockets that the soft data path takes over when
 *                       both ends are preloaded and smc_softd pairs them
 *   auto                AF_SMC until the kernel turns it down, then the soft
 *                       way for the rest of the process (documented
 *                       deviation: upstream returned the error to the
 *                       application); without smc_softd that is plain TCP
 */
const struct preload_backend *
preload_backend_choose(const struct preload_config *cfg, int smc_errno)
{
	switch (cfg->want) {
	case PRELOAD_WANT_KERNEL:
		return &preload_backend_kernel;
	case PRELOAD_WANT_SOFT:
		return &preload_backend_soft;
	case PRELOAD_WANT_AUTO:
		break;
	}
	return smc_errno ? &preload_backend_soft : &preload_backend_kernel;
}

void preload_backend_init(const struct preload_config *cfg)
{
	const struct preload_backend *b = preload_backend_choose(cfg, 0);

	soft_mode_start(b == &preload_backend_soft);
	atomic_store(&active, b);
}

static bool no_kernel_smc(int err)
{
	return err == EAFNOSUPPORT || err == EPROTONOSUPPORT;
}

/*
 * Create the socket of a TCP socket() call with the active backend.  When the
 * kernel turns AF_SMC down, ask preload_backend_choose() again; the first
 * thread to switch reports it, and every later call goes straight to the new
 * backend.
 */
int preload_stream_socket(int domain, int type, int protocol)
{
	const struct preload_backend *b = atomic_load(&active);
	const struct preload_backend *next;
	int fd;

	fd = b->stream_socket(domain, type, protocol);
	if (fd >= 0 || !b->needs_kernel_smc || !no_kernel_smc(errno))
		return fd;
	next = preload_backend_choose(&preload_cfg, errno);
	if (next == b)
		return fd;
	if (atomic_compare_exchange_strong(&active, &b, next)) {
		soft_mode_start(next == &preload_backend_soft);
		preload_dbg("libsmc-preload: AF_SMC not available, using TCP\n");
	}
	return next->stream_socket(domain, type, protocol);
}
