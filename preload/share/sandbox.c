/*
 * Seccomp sandboxes.  Once the program has installed a filter (prctl
 * PR_SET_SECCOMP, or the seccomp system call through syscall():
 * hook_syscall.c), the library makes no system call of its own that the
 * program would not make: connections not yet on the ring stay TCP (no more
 * pairing, no message to the daemon), and on the ring the wake-ups use
 * read, write and poll, what every sandbox lets a network process do
 * (sshd's pre-authentication child allows no recvfrom, sendto, getsockopt,
 * setsockopt or membarrier).  Those calls are in sys.c.
 */
#include "share.h"

static void leave_tcp_alone(int fd, struct sconn *sc, void *arg)
{
	(void)fd;
	(void)arg;
	conn_stay_tcp_if_new(sc);
}

void soft_sandbox_enter(void)
{
	if (sys_sandbox_begin())
		return;
	transport_asym_off();
	ctl_sandboxed();
	fd_for_each(leave_tcp_alone, NULL);
}
