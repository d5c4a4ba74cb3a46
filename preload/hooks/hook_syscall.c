/*
 * prctl(), syscall() and pidfd_getfd(): what they tell the library about the
 * process.  A seccomp filter (sandbox.c) and an io_uring instance (uring.c)
 * change what the library may do for its connections; a descriptor taken
 * from another process may be one of them (fdpass.c); close_range closes
 * some (hook_fd.c); a credential change takes soft SMC-R ends back to
 * TCP first (conn/creds.c).
 */
#include <linux/close_range.h>
#include <linux/keyctl.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "hooks.h"

#define EXPORT __attribute__((visibility("default")))

/* prctl() options that give the process new credentials (cred.h's securebits, capabilities) */
static bool prctl_changes_creds(int option, unsigned long arg2)
{
	switch (option) {
	case PR_SET_SECUREBITS:
	case PR_SET_KEEPCAPS:
	case PR_CAPBSET_DROP:
		return true;
	case PR_CAP_AMBIENT:
		return arg2 != PR_CAP_AMBIENT_IS_SET;
	default:
		return false;
	}
}

/* System calls that give the process new credentials, made through syscall() */
static bool syscall_changes_creds(long number, const long *a)
{
	switch (number) {
	case SYS_setuid:
	case SYS_setgid:
	case SYS_setreuid:
	case SYS_setregid:
	case SYS_setresuid:
	case SYS_setresgid:
	case SYS_setgroups:
	case SYS_capset:
		return true;
	case SYS_setfsuid:
	case SYS_setfsgid:
		return (int)a[0] != -1;
	case SYS_keyctl:
		/* pam_keyinit's new session keyring (libkeyutils calls syscall()) */
		return a[0] == KEYCTL_JOIN_SESSION_KEYRING;
	case SYS_prctl:
		return prctl_changes_creds((int)a[0], (unsigned long)a[1]);
	default:
		return false;
	}
}

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
	else if (prctl_changes_creds(option, a[0]))
		conn_creds_change();
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
	else if (syscall_changes_creds(number, a))
		conn_creds_change();
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
