/*
 * Every system call the data path makes beyond the application's own
 * (sandbox.c says why): none of them once the program is in a seccomp
 * sandbox, where only read, write and poll are sure to be allowed.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base.h"

static _Atomic bool sandboxed;

bool soft_sandboxed(void)
{
	return atomic_load_explicit(&sandboxed, memory_order_relaxed);
}

/* The program entered a sandbox: true if it had already. */
bool sys_sandbox_begin(void)
{
	return atomic_exchange(&sandboxed, true);
}

/* One wake-up byte; false if it could not go now. */
bool sys_bell(int fd)
{
	static const char bell = 0;
	struct pollfd p = { .fd = fd, .events = POLLOUT };

	if (!soft_sandboxed())
		return next.send(fd, &bell, 1, MSG_DONTWAIT | MSG_NOSIGNAL) == 1;
	/* write(2) waits when the socket is full: only when poll says it won't */
	return next.poll(&p, 1, 0) == 1 && !(p.revents & (POLLERR | POLLHUP)) &&
	       next.write(fd, &bell, 1) == 1;
}

/* Wake-up bytes waiting in the socket, without waiting: recv's result. */
ssize_t sys_drain(int fd, void *buf, size_t len)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (!soft_sandboxed())
		return next.recv(fd, buf, len, MSG_DONTWAIT);
	if (next.poll(&p, 1, 0) != 1) {
		errno = EAGAIN;
		return -1;
	}
	return next.read(fd, buf, len);
}

/* A socket option the library sets for itself (TCP_NODELAY, SO_LINGER). */
void sys_setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	if (!soft_sandboxed())
		next.setsockopt(fd, level, name, val, len);
}

/* soft_tcp_sent_total(), unless sandboxed (then no cut-over of a shared end). */
bool sys_tcp_sent_total(int fd, int role, uint64_t *out)
{
	return !soft_sandboxed() && soft_tcp_sent_total(fd, role, out);
}

/* soft_tcp_read_total(), unless sandboxed (then the caller's own count). */
bool sys_tcp_read_total(int fd, uint64_t *out)
{
	return !soft_sandboxed() && soft_tcp_read_total(fd, out);
}

bool sys_peek_eof(int fd)
{
	char c;

	return !soft_sandboxed() && next.recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

void sys_yield(void)
{
	if (!soft_sandboxed())
		sched_yield();
}
