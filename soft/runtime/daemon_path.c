/* Where smc_softd puts its control socket and pid file. */
#include "daemon.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int set_path(char *buf, size_t len, const char *what, const char *path,
		    const char *suffix, char *err, size_t errlen)
{
	if (!*path) {
		snprintf(err, errlen, "%s: empty path", what);
		return -1;
	}
	if ((size_t)snprintf(buf, len, "%s%s", path, suffix) >= len) {
		snprintf(err, errlen, "%s%s: %s path too long (at most %zu bytes)",
			 path, suffix, what, len - 1);
		return -1;
	}
	return 0;
}

/* -s, else SMC_SOFT_SOCKET, else the system path for root, else the user's own. */
int softd_socket_path(const char *opt, char *buf, size_t len, char *err, size_t errlen)
{
	const char *env = getenv("SMC_SOFT_SOCKET");
	const char *rt = getenv("XDG_RUNTIME_DIR");
	size_t max = len < sizeof(((struct sockaddr_un *)0)->sun_path) ?
		     len : sizeof(((struct sockaddr_un *)0)->sun_path);

	if (opt)
		return set_path(buf, max, "socket", opt, "", err, errlen);
	if (env && *env)
		return set_path(buf, max, "socket", env, "", err, errlen);
	if (geteuid() == 0)
		return set_path(buf, max, "socket", SOFTD_SOCKET_ROOT, "", err, errlen);
	if (!rt || !*rt) {
		snprintf(err, errlen, "socket: XDG_RUNTIME_DIR is not set "
			 "(name a socket with -s PATH or SMC_SOFT_SOCKET)");
		return -1;
	}
	return set_path(buf, max, "socket", rt, "/smc_soft/control", err, errlen);
}

/*
 * The pid file's path, made absolute against the current directory: the
 * daemon changes to / before it writes the file, and removes it from there.
 */
static int pidfile_at(char *buf, size_t len, const char *dir, const char *name,
		      char *err, size_t errlen)
{
	char cwd[4096];
	int n;

	if (dir[0] == '/')
		n = snprintf(buf, len, "%s%s", dir, name);
	else if (getcwd(cwd, sizeof(cwd)))
		n = snprintf(buf, len, "%s/%s%s", strcmp(cwd, "/") ? cwd : "", dir, name);
	else {
		snprintf(err, errlen, "pid file %s%s: current directory: %s", dir, name,
			 strerror(errno));
		return -1;
	}
	if (n < 0 || (size_t)n >= len) {
		snprintf(err, errlen, "%s%s: pid file path too long (at most %zu bytes)",
			 dir, name, len - 1);
		return -1;
	}
	return 0;
}

/* -p, else smc_softd.pid in the socket's directory; absolute either way. */
int softd_pidfile_path(const char *opt, const char *socket, char *buf, size_t len,
		       char *err, size_t errlen)
{
	const char *slash = strrchr(socket, '/');
	char dir[4096];

	if (opt)
		return *opt ? pidfile_at(buf, len, opt, "", err, errlen) :
			      set_path(buf, len, "pid file", opt, "", err, errlen);
	if (!slash)
		dir[0] = '\0';                  /* the current directory */
	else
		snprintf(dir, sizeof(dir), "%.*s/", (int)(slash - socket), socket);
	return pidfile_at(buf, len, dir, SOFTD_PIDFILE_NAME, err, errlen);
}

int softd_make_parent(const char *path, mode_t mode, char *err, size_t errlen)
{
	char dir[4096];

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir)) {
		snprintf(err, errlen, "%s: path too long", path);
		return -1;
	}
	for (char *p = dir + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(dir, mode) == 0)
			chmod(dir, mode);       /* whatever the umask */
		else if (errno != EEXIST) {
			snprintf(err, errlen, "mkdir %s: %s", dir, strerror(errno));
			return -1;
		}
		*p = '/';
	}
	return 0;
}
