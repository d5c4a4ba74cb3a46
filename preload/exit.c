/*
 * The end of a process: exit() (a destructor) and _exit()/_Exit(), which
 * forked servers and the children of multiprocessing end with.  The kernel
 * closes the sockets after us; the rings hear it first, so the peer reads
 * its EOF at once, not from the FIN a sleeping reader sees late, and no
 * doorbell left unread makes the kernel's close a reset.
 */
#include <stdlib.h>
#include <unistd.h>

#include "preload.h"
#include "soft.h"

#define EXPORT __attribute__((visibility("default")))

__attribute__((destructor))
static void at_exit(void)
{
	sconn_process_exit();
}

EXPORT void _exit(int status)
{
	PRELOAD_INIT();
	if (atomic_load(&fd_tracked) && soft_vfork_child())
		child_fds_release(child_fds_vfork());
	sconn_process_exit();
	next._exit(status);
}

EXPORT void _Exit(int status)
{
	_exit(status);
}
