/*
 * Which process this is: the child of vfork() runs in its parent's memory
 * (and thread) until it execs, and must not take the parent's locks or
 * speak on its control connection.
 */
#include <pthread.h>
#include <unistd.h>

#include "base.h"

static pid_t self_pid;                      /* this process's, to tell a vfork child */

static void note_pid(void)
{
	self_pid = getpid();
}

__attribute__((constructor))
static void exec_init(void)
{
	note_pid();
	pthread_atfork(NULL, NULL, note_pid);
}

bool soft_vfork_child(void)
{
	return getpid() != self_pid;
}
