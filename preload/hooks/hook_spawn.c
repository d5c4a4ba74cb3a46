/*
 * New processes the C library makes without fork()'s handlers or our
 * execve(): posix_spawn(3) and, inside glibc, system(3) and popen(3).  They
 * inherit the connections as an exec'd image does (exec.c), and a fork()
 * that fails gives back the holders its prepare handler took.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "hooks.h"

#define EXPORT __attribute__((visibility("default")))

extern char **environ;

EXPORT pid_t fork(void)
{
	pid_t pid;
	int saved;

	PRELOAD_INIT();
	pid = next.fork();
	if (pid < 0 && atomic_load(&fd_tracked)) {
		saved = errno;
		sconn_fork_failed();
		conn_claim_fork_failed();
		errno = saved;
	}
	return pid;
}

typedef int spawn_fn(pid_t *, const char *, const posix_spawn_file_actions_t *,
		     const posix_spawnattr_t *, char *const[], char *const[]);

static int spawn_with(spawn_fn *real, pid_t *pid, const char *file, bool search,
		      const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
		      char *const argv[], char *const envp[])
{
	struct soft_spawn *sp;
	struct child_fds child;
	const char *image = file;
	char buf[PATH_MAX], **env;
	bool unseen;
	int r;

	if (search)
		image = soft_image_find(file, buf, sizeof(buf));
	unseen = !soft_sandboxed() && !soft_image_has_library(image, envp);
	child_fds_of_actions(&child, fa);
	env = soft_spawn_prepare(envp, &child, image, unseen, &sp);
	child_fds_release(&child);
	r = real(pid, file, fa, attr, argv, env ? env : envp);
	soft_spawn_done(sp, r == 0);
	return r;
}

EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
		       const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	PRELOAD_INIT();
	return spawn_with(next.posix_spawn, pid, path, false, fa, attr, argv, envp);
}

EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	PRELOAD_INIT();
	return spawn_with(next.posix_spawnp, pid, file, true, fa, attr, argv, envp);
}

/*
 * system() and popen() hand environ to their shell.  A thread reading
 * environ meanwhile sees ours, one variable longer; the array lives on
 * until the next such call, so no reader is left holding a freed one.  Of
 * two such calls at once, the second passes nothing on.
 */
static pthread_mutex_t env_mu = PTHREAD_MUTEX_INITIALIZER;
static bool env_busy;
static struct soft_spawn *env_retired;
static char **env_saved;

static struct soft_spawn *env_swap_in(void)
{
	struct soft_spawn *sp = NULL, *old = NULL;
	char **env;

	pthread_mutex_lock(&env_mu);
	if (!env_busy && (env = soft_spawn_prepare(environ, NULL, "/bin/sh", false, &sp))) {
		env_busy = true;
		env_saved = environ;
		environ = env;
		old = env_retired;
		env_retired = NULL;
	}
	pthread_mutex_unlock(&env_mu);
	soft_spawn_free(old);
	return sp;
}

static void env_swap_out(struct soft_spawn *sp, bool started)
{
	if (!sp)
		return;
	soft_spawn_settle(sp, started);
	pthread_mutex_lock(&env_mu);
	environ = env_saved;
	env_retired = sp;
	env_busy = false;
	pthread_mutex_unlock(&env_mu);
}

EXPORT int system(const char *cmd)
{
	struct soft_spawn *sp;
	int r, saved;

	PRELOAD_INIT();
	sp = cmd ? env_swap_in() : NULL;
	r = next.system(cmd);
	saved = errno;
	env_swap_out(sp, r != -1);
	errno = saved;
	return r;
}

EXPORT FILE *popen(const char *cmd, const char *type)
{
	struct soft_spawn *sp;
	FILE *f;
	int saved;

	PRELOAD_INIT();
	sp = env_swap_in();
	f = next.popen(cmd, type);
	saved = errno;
	env_swap_out(sp, f != NULL);
	errno = saved;
	return f;
}

/* ---- posix_spawn's file actions: what the child's descriptors will be (child_fds.c) ---- */

EXPORT int posix_spawn_file_actions_init(posix_spawn_file_actions_t *fa)
{
	PRELOAD_INIT();
	child_fds_fa_forget(fa);
	return next.posix_spawn_file_actions_init(fa);
}

EXPORT int posix_spawn_file_actions_destroy(posix_spawn_file_actions_t *fa)
{
	PRELOAD_INIT();
	child_fds_fa_forget(fa);
	return next.posix_spawn_file_actions_destroy(fa);
}

EXPORT int posix_spawn_file_actions_adddup2(posix_spawn_file_actions_t *fa, int fd, int newfd)
{
	int r;

	PRELOAD_INIT();
	r = next.posix_spawn_file_actions_adddup2(fa, fd, newfd);
	if (r == 0)
		child_fds_fa_record(fa, FA_DUP2, fd, newfd);
	return r;
}

EXPORT int posix_spawn_file_actions_addclose(posix_spawn_file_actions_t *fa, int fd)
{
	int r;

	PRELOAD_INIT();
	r = next.posix_spawn_file_actions_addclose(fa, fd);
	if (r == 0)
		child_fds_fa_record(fa, FA_CLOSE, fd, -1);
	return r;
}

/* The descriptor becomes the file: for a connection there, a close. */
EXPORT int posix_spawn_file_actions_addopen(posix_spawn_file_actions_t *fa, int fd,
					    const char *path, int oflag, mode_t mode)
{
	int r;

	PRELOAD_INIT();
	r = next.posix_spawn_file_actions_addopen(fa, fd, path, oflag, mode);
	if (r == 0)
		child_fds_fa_record(fa, FA_CLOSE, fd, -1);
	return r;
}

/* glibc 2.34 and later */
EXPORT int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *fa, int from)
{
	static int (*real)(posix_spawn_file_actions_t *, int);
	int r;

	PRELOAD_INIT();
	if (!real)
		real = (int (*)(posix_spawn_file_actions_t *, int))dlsym(RTLD_NEXT, __func__);
	if (!real)
		return ENOSYS;
	r = real(fa, from);
	if (r == 0)
		child_fds_fa_record(fa, FA_CLOSEFROM, from, -1);
	return r;
}
