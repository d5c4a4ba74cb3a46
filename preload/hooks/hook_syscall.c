/*
 * prctl(), syscall() and pidfd_getfd(): what they tell the library about the
 * process.  A seccomp filter (sandbox.c) and an io_uring instance (uring.c)
 * change what the library may do for its connections; a descriptor taken
 * from another process may be one of them (fdpass.c); close_range closes
 * some (hook_fd.c).
 */
#include <linux/close_range.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "hooks.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int prctl(int option, ...)
{
	unsigned long a[4];
	va_list ap;

	PRELOAD_INIT();
	va_start(ap, option);
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (option == PR_SET_SECCOMP && a[0] == SECCOMP_MODE_FILTER)
		soft_sandbox_enter();   /* before: the filter may forbid what entering does */
	return next.prctl(option, a[0], a[1], a[2], a[3]);
}

EXPORT long syscall(long number, ...)
{
	long a[6], r;
	va_list ap;

	PRELOAD_INIT();
	va_start(ap, number);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (number == SYS_seccomp && a[0] == SECCOMP_SET_MODE_FILTER)
		soft_sandbox_enter();
	else if ((number == SYS_io_uring_setup || (number == SYS_io_uring_enter && a[1] > 0)) &&
		 !soft_in_liburing)
		soft_uring_note();   /* requests the library cannot read (uring.c) */
	else if (number == SYS_close_range && (unsigned long)a[0] <= (unsigned long)a[1] &&
		 !(a[2] & CLOSE_RANGE_CLOEXEC))
		soft_fds_closing((unsigned)a[0], (unsigned)a[1]);
	r = next.syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (number == SYS_pidfd_getfd && r >= 0) {
		int saved = errno;

		soft_fd_taken((int)r);
		errno = saved;
	}
	return r;
}

EXPORT int pidfd_getfd(int pidfd, int targetfd, unsigned int flags)
{
	int fd, saved;

	PRELOAD_INIT();
	fd = next.pidfd_getfd ? next.pidfd_getfd(pidfd, targetfd, flags)
			      : (int)next.syscall(SYS_pidfd_getfd, pidfd, targetfd, flags);
	if (fd >= 0) {
		saved = errno;
		soft_fd_taken(fd);
		errno = saved;
	}
	return fd;
}
