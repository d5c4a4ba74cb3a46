/*
 * Credential changes: before one, a process's soft SMC-R ends go back to
 * TCP, as the devices it opened refuse its posts after it (conn/creds.c).
 */
#include <grp.h>
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
