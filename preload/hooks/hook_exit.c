/*
 * The end of a process: exit() (a destructor) and _exit()/_Exit(), which
 * forked servers and the children of multiprocessing end with.  The kernel
 * closes the sockets after us; the rings hear it first, so the peer reads
 * its EOF at once, not from the FIN a sleeping reader sees late, and no
 * doorbell left unread makes the kernel's close a reset.
 */
#include <stdlib.h>
#include <unistd.h>

#include "hooks.h"

#define EXPORT __attribute__((visibility("default")))

/*
 * A new image takes its inherited connections over at its first hooked
 * call; one that made none (a child that only exits) takes them now, so
 * that it gives back the holder its parent counted for it.
 */
static void inherited_now(void)
{
	if (!atomic_load(&preload_initialised) && getenv("SMC_SOFT_INHERIT"))
		preload_init();
}

__attribute__((destructor))
static void at_exit(void)
{
	inherited_now();
	sconn_process_exit();
}

EXPORT void _exit(int status)
{
	inherited_now();
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
