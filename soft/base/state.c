/* Per-namespace and host-wide state of the soft backend. */
#include "state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t netns_inode(pid_t pid)
{
	char path[64];
	struct stat sb;

	if (pid < 0)
		return 0;
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/net");
	if (stat(path, &sb) < 0)
		return 0;
	return (uint64_t)sb.st_ino;
}

uint64_t soft_netns_key(int sock_fd, pid_t pid)
{
	uint64_t cookie;
	socklen_t len = sizeof(cookie);

	if (sock_fd >= 0 && getsockopt(sock_fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len) == 0 &&
	    len == sizeof(cookie))
		return cookie;
	return netns_inode(pid);
}

void soft_state_init(struct soft_state *st)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	memset(st, 0, sizeof(*st));
	st->init_netns = soft_netns_key(fd, 0);
	if (fd >= 0)
		close(fd);
	st->next_sock_token = 1;
}

struct soft_ns *soft_ns_get(struct soft_state *st, uint64_t netns)
{
	struct soft_ns *ns;

	for (ns = st->ns; ns; ns = ns->next)
		if (ns->netns == netns)
			return ns;
	ns = calloc(1, sizeof(*ns));
	if (!ns)
		return NULL;
	ns->netns = netns;
	ns->init = netns == st->init_netns;
	ns->next = st->ns;
	st->ns = ns;
	return ns;
}
