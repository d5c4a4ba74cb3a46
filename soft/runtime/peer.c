/* Identifying the client of a connection to smc_softd. */
#include "peer.h"
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

#define CAP_NET_ADMIN_BIT 12

bool softd_peer_cap_net_admin(pid_t pid)
{
	char path[64], buf[4096];
	const char *line;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	line = strstr(buf, "\nCapEff:");
	if (!line)
		return false;
	return (strtoull(line + strlen("\nCapEff:"), NULL, 16) >> CAP_NET_ADMIN_BIT) & 1;
}

/*
 * Capabilities count only in our user namespace: inside a child namespace a
 * process may hold every capability and still not be privileged here, as
 * the kernel checks GENL_ADMIN_PERM against the initial namespace.
 */
static bool same_userns(pid_t pid)
{
	struct stat peer, self;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	return stat(path, &peer) == 0 && stat("/proc/self/ns/user", &self) == 0 &&
	       peer.st_dev == self.st_dev && peer.st_ino == self.st_ino;
}

/* The peer's pidfd, -1 when the kernel has none to give (before 6.5), -2 when it is gone. */
static int peer_pidfd(int fd)
{
	socklen_t len = sizeof(int);
	int pidfd;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) == 0)
		return pidfd;
	return errno == ENOPROTOOPT ? -1 : -2;
}

/* Still running: its pid was not reused while /proc was read. */
static bool alive(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return poll(&p, 1, 0) == 0;
}

int softd_peer_read(int fd, uint64_t conn_id, struct soft_peer *peer)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int pidfd, rc = 0;

	memset(peer, 0, sizeof(*peer));
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	if (cred.pid <= 0)
		return -ESRCH;              /* not visible in our pid namespace */
	pidfd = peer_pidfd(fd);
	if (pidfd == -2)
		return -ESRCH;
	peer->pid = cred.pid;
	peer->uid = cred.uid;
	peer->gid = cred.gid;
	peer->conn_id = conn_id;
	/* the accepted end lives in the client's namespace */
	peer->netns = soft_netns_key(fd, cred.pid);
	/*
	 * The capability is read from /proc now, but the uid is the one the
	 * kernel recorded at connect(): requiring it to be root (or the
	 * daemon's own user) keeps a client from connecting unprivileged and
	 * then exec'ing a privileged program to borrow its capabilities.
	 */
	peer->net_admin = (cred.uid == 0 || cred.uid == geteuid()) &&
			  same_userns(cred.pid) && softd_peer_cap_net_admin(cred.pid);
	if (!peer->netns)
		rc = -ESRCH;
	if (pidfd >= 0) {
		if (!alive(pidfd))
			rc = -ESRCH;
		close(pidfd);
	}
	return rc;
}
