/* The functions behind this library's hooks, found once with dlsym(RTLD_NEXT). */
#include <dlfcn.h>

#include "base.h"

struct preload_next next;

#define RESOLVE(name) resolve((void **)&next.name, #name)

static void resolve(void **slot, const char *name)
{
	void *sym = dlsym(RTLD_NEXT, name);

	if (!sym)
		preload_err("libsmc-preload: dlsym failed on %s\n", name);
	*slot = sym;
}

void preload_next_init(void)
{
	/* first: the log writes with it */
	RESOLVE(syscall);
	RESOLVE(read);
	RESOLVE(write);
	RESOLVE(readv);
	RESOLVE(writev);
	RESOLVE(recv);
	RESOLVE(send);
	RESOLVE(recvfrom);
	RESOLVE(sendto);
	RESOLVE(recvmsg);
	RESOLVE(sendmsg);
	RESOLVE(connect);
	RESOLVE(listen);
	RESOLVE(accept);
	RESOLVE(accept4);
	RESOLVE(close);
	RESOLVE(shutdown);
	RESOLVE(dup);
	RESOLVE(dup2);
	RESOLVE(dup3);
	RESOLVE(fcntl);
	RESOLVE(fcntl64);
	RESOLVE(ioctl);
	RESOLVE(poll);
	RESOLVE(ppoll);
	RESOLVE(epoll_create);
	RESOLVE(epoll_create1);
	RESOLVE(epoll_ctl);
	RESOLVE(epoll_wait);
	RESOLVE(epoll_pwait);
	RESOLVE(sendfile);
	RESOLVE(splice);
	RESOLVE(sendmmsg);
	RESOLVE(recvmmsg);
	RESOLVE(prctl);
	RESOLVE(setsockopt);
	RESOLVE(getsockopt);
	RESOLVE(execve);
	RESOLVE(fork);
	RESOLVE(_exit);
	RESOLVE(posix_spawn_file_actions_init);
	RESOLVE(posix_spawn_file_actions_destroy);
	RESOLVE(posix_spawn_file_actions_adddup2);
	RESOLVE(posix_spawn_file_actions_addclose);
	RESOLVE(posix_spawn_file_actions_addopen);
	RESOLVE(posix_spawn);
	RESOLVE(posix_spawnp);
	RESOLVE(system);
	RESOLVE(popen);
	RESOLVE(fdopen);
	RESOLVE(select);
	RESOLVE(pselect);
	RESOLVE(sleep);
	RESOLVE(usleep);
	RESOLVE(nanosleep);
	RESOLVE(clock_nanosleep);
	RESOLVE(pause);
	RESOLVE(sigsuspend);
	RESOLVE(sigwaitinfo);
	RESOLVE(sigtimedwait);
	RESOLVE(wait);
	RESOLVE(waitpid);
	RESOLVE(wait4);
	RESOLVE(setuid);
	RESOLVE(setgid);
	RESOLVE(seteuid);
	RESOLVE(setegid);
	RESOLVE(setreuid);
	RESOLVE(setregid);
	RESOLVE(setresuid);
	RESOLVE(setresgid);
	RESOLVE(setgroups);
	RESOLVE(initgroups);
	RESOLVE(setfsuid);
	RESOLVE(setfsgid);
	RESOLVE(capset);
	RESOLVE(waitid);
	RESOLVE(sigaction);
	/* glibc 2.35 and later */
	next.epoll_pwait2 = dlsym(RTLD_NEXT, "epoll_pwait2");
	/* glibc 2.36 and later */
	next.pidfd_getfd = dlsym(RTLD_NEXT, "pidfd_getfd");
	/* glibc 2.34 and later */
	next.close_range = dlsym(RTLD_NEXT, "close_range");
	next.closefrom = dlsym(RTLD_NEXT, "closefrom");
}
