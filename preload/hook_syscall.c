/*
 * prctl() and syscall(): what they tell the library about the process.  A
 * seccomp filter (sandbox.c) and an io_uring instance (uring.c) change what
 * the library may do for its connections.
 */
#include <linux/seccomp.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "preload.h"
#include "soft.h"

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
	long a[6];
	va_list ap;

	PRELOAD_INIT();
	va_start(ap, number);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (number == SYS_seccomp && a[0] == SECCOMP_SET_MODE_FILTER)
		soft_sandbox_enter();
	else if (number == SYS_io_uring_setup)
		soft_uring_note();
	return next.syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
