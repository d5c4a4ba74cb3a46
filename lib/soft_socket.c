#include "soft_socket.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static bool user_path(char *buf, size_t len)
{
	const char *rt = secure_getenv("XDG_RUNTIME_DIR");
	struct stat sb;

	if (getuid() == 0 || !rt || !*rt)
		return false;
	if (snprintf(buf, len, "%s/smc_soft/control", rt) >= (int)len)
		return false;
	return stat(buf, &sb) == 0 && S_ISSOCK(sb.st_mode);
}

const char *smc_soft_socket_find(char *buf, size_t len)
{
	const char *p = secure_getenv("SMC_SOFT_SOCKET");

	if (p && *p)
		snprintf(buf, len, "%s", p);
	else if (!user_path(buf, len))
		snprintf(buf, len, "%s", SMC_SOFT_SOCKET_DEFAULT);
	return buf;
}

int smc_soft_peer_trusted(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	if (cred.uid != 0 && cred.uid != getuid())
		return -EACCES;
	return 0;
}
