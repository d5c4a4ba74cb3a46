/*
 * The exec family: each lands in execve(), which hands this image's
 * connections over to the new one (soft_execve(), exec.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hooks.h"

#define EXPORT __attribute__((visibility("default")))

extern char **environ;

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	PRELOAD_INIT();
	return soft_execve(path, argv, envp);
}

EXPORT int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

/* The PATH search of execvp(3), landing in execve() above. */
EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	const char *path = getenv("PATH");
	char buf[4096];
	bool eacces = false;

	if (!*file) {
		errno = ENOENT;
		return -1;
	}
	if (strchr(file, '/'))
		return execve(file, argv, envp);
	if (!path)
		path = "/bin:/usr/bin";
	for (const char *p = path;; p++) {
		const char *end = strchrnul(p, ':');
		int n = end == p ? snprintf(buf, sizeof(buf), "%s", file)
				 : snprintf(buf, sizeof(buf), "%.*s/%s", (int)(end - p), p, file);

		if (n > 0 && (size_t)n < sizeof(buf)) {
			execve(buf, argv, envp);
			if (errno == EACCES)
				eacces = true;
			else if (errno != ENOENT && errno != ENOTDIR && errno != ENAMETOOLONG)
				return -1;
		}
		p = end;
		if (!*end)
			break;
	}
	errno = eacces ? EACCES : ENOENT;
	return -1;
}

EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

/* argv of the execl family, from arg0 up to the NULL; envp for execle. */
static char **list_args(const char *arg0, va_list ap, bool want_env, char ***envp)
{
	size_t n = 1, cap = 16;
	char **argv = malloc(cap * sizeof(*argv));
	char *a;

	if (!argv)
		return NULL;
	argv[0] = (char *)arg0;
	do {
		a = arg0 ? va_arg(ap, char *) : NULL;
		if (n == cap) {
			char **p = realloc(argv, (cap *= 2) * sizeof(*argv));

			if (!p) {
				free(argv);
				return NULL;
			}
			argv = p;
		}
		argv[n++] = a;
	} while (a);
	if (want_env)
		*envp = va_arg(ap, char **);
	return argv;
}

#define EXECL_BODY(call, want_env)					\
	va_list ap;							\
	char **argv, **envp = environ;					\
	int r;								\
									\
	va_start(ap, arg);						\
	argv = list_args(arg, ap, want_env, &envp);			\
	va_end(ap);							\
	if (!argv) {							\
		errno = ENOMEM;						\
		return -1;						\
	}								\
	r = call;							\
	free(argv);							\
	return r

EXPORT int execl(const char *path, const char *arg, ...)
{
	EXECL_BODY(execve(path, argv, envp), false);
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
	EXECL_BODY(execvpe(file, argv, envp), false);
}

EXPORT int execle(const char *path, const char *arg, ...)
{
	EXECL_BODY(execve(path, argv, envp), true);
}
