/* The control socket: one daemon per path, published only once it listens. */
#include "daemon.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define SOFTD_BACKLOG 1024

static void set_addr(struct sockaddr_un *sun, const char *path)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	snprintf(sun->sun_path, sizeof(sun->sun_path), "%s", path);
}

/* 0 when path is free or stale, -1 (err) when it is taken or cannot be checked. */
static int check_free(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun;
	struct stat sb;
	int fd, rc, e;

	if (lstat(path, &sb) < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISSOCK(sb.st_mode)) {
		snprintf(err, errlen, "%s: exists and is not a socket", path);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	set_addr(&sun, path);
	rc = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	e = errno;
	close(fd);
	/* a full backlog (EAGAIN) still means somebody listens */
	if (rc == 0 || e == EAGAIN || e == EINPROGRESS) {
		snprintf(err, errlen, "%s: another %s is running", path, SOFTD_PROG);
		return -1;
	}
	if (e == ECONNREFUSED || e == ENOENT)
		return 0;
	snprintf(err, errlen, "%s: %s", path, strerror(e));
	return -1;
}

/* A private name beside path to bind to; false when none fits. */
static bool temp_name(const char *path, char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;

	return snprintf(buf, len, "%.*s.%s.%d", dirlen, path, SOFTD_PROG, (int)getpid()) <
	       (int)len;
}

static int fail(struct softd_listener *l, char *err, size_t errlen, const char *what,
		const char *path)
{
	snprintf(err, errlen, "%s %s: %s", what, path, strerror(errno));
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	return -1;
}

int softd_listen(struct softd_listener *l, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun;
	char tmp[sizeof(sun.sun_path)];
	const char *bind_path = path;
	struct stat sb;

	memset(l, 0, sizeof(*l));
	l->fd = -1;
	snprintf(l->path, sizeof(l->path), "%s", path);
	if (check_free(path, err, errlen) ||
	    softd_make_parent(path, geteuid() ? 0700 : 0755, err, errlen))
		return -1;
	/*
	 * Bound under a temporary name and renamed once listening, the socket
	 * never appears at path while connect() would be refused; the rename
	 * also replaces a stale socket in one step.
	 */
	if (temp_name(path, tmp, sizeof(tmp)))
		bind_path = tmp;
	if (unlink(bind_path) < 0 && errno != ENOENT)
		return fail(l, err, errlen, "unlink", bind_path);
	l->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (l->fd < 0)
		return fail(l, err, errlen, "socket", path);
	set_addr(&sun, bind_path);
	if (bind(l->fd, (struct sockaddr *)&sun, sizeof(sun)) < 0)
		return fail(l, err, errlen, "bind", path);
	/* any local user may query; privileged requests are checked one by one */
	if (chmod(bind_path, 0666) < 0 || listen(l->fd, SOFTD_BACKLOG) < 0 ||
	    (bind_path != path && rename(bind_path, path) < 0) || stat(path, &sb) < 0) {
		int e = errno;

		unlink(bind_path);
		errno = e;
		return fail(l, err, errlen, "listen on", path);
	}
	l->dev = sb.st_dev;
	l->ino = sb.st_ino;
	return 0;
}

void softd_unlisten(struct softd_listener *l, bool unlink_path)
{
	struct stat sb;

	if (l->fd < 0)
		return;
	if (unlink_path && stat(l->path, &sb) == 0 && sb.st_dev == l->dev && sb.st_ino == l->ino)
		unlink(l->path);
	close(l->fd);
	l->fd = -1;
}
