/*
 * Credential changes: before one, a process's soft SMC-R ends go back to
 * TCP, as the devices it opened refuse its posts after it (conn/creds.c).
 * Any change counts: the kernel compares the opener's credentials with the
 * caller's, not their ids.  prctl() and syscall() name theirs in
 * hook_syscall.c (prctl_changes_creds(), syscall_changes_creds()).
 */
#include <grp.h>
#include <sys/fsuid.h>
#include <unistd.h>

#include "hooks.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int setuid(uid_t uid)
{
	PRELOAD_INIT();
	conn_creds_change();
	return next.setuid(uid);
}

EXPORT int setgid(gid_t gid)
{
	PRELOAD_INIT();
	conn_creds_change();
	return next.setgid(gid);
}

EXPORT int seteuid(uid_t uid)
{
	PRELOAD_INIT();
	conn_creds_change();
	return next.seteuid(uid);
}

EXPORT int setegid(gid_t gid)
{
	PRELOAD_INIT();
	conn_creds_change();
	return next.setegid(gid);
}

EXPORT int setreuid(uid_t r, uid_t e)
{
	PRELOAD_INIT();
	conn_creds_change();
	return next.setreuid(r, e);
}

EXPORT int setregid(gid_t r, gid_t e)
{
	PRELOAD_INIT();
	conn_creds_change();
	return next.setregid(r, e);
}

EXPORT int setresuid(uid_t r, uid_t e, uid_t s)
{
	PRELOAD_INIT();
	conn_creds_change();
	return next.setresuid(r, e, s);
}

EXPORT int setresgid(gid_t r, gid_t e, gid_t s)
{
	PRELOAD_INIT();
	conn_creds_change();
	return next.setresgid(r, e, s);
}

EXPORT int setgroups(size_t n, const gid_t *list)
{
	PRELOAD_INIT();
	conn_creds_change();
	return next.setgroups(n, list);
}

EXPORT int initgroups(const char *user, gid_t group)
{
	PRELOAD_INIT();
	conn_creds_change();
	return next.initgroups(user, group);
}

EXPORT int setfsuid(uid_t uid)
{
	PRELOAD_INIT();
	/* -1 only asks */
	if (uid != (uid_t)-1)
		conn_creds_change();
	return next.setfsuid(uid);
}

EXPORT int setfsgid(gid_t gid)
{
	PRELOAD_INIT();
	if (gid != (gid_t)-1)
		conn_creds_change();
	return next.setfsgid(gid);
}

/* glibc's wrapper, which no header declares (libcap's cap_set_proc()) */
EXPORT int capset(void *hdr, const void *data);
EXPORT int capset(void *hdr, const void *data)
{
	PRELOAD_INIT();
	conn_creds_change();
	return next.capset(hdr, data);
}
