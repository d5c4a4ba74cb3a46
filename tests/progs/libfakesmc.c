/*
 * libfakesmc.so: a stand-in for the kernel's AF_SMC, for testing
 * libsmc-preload.so on a machine without SMC.
 *
 * Preload it AFTER the library under test:
 *   LD_PRELOAD=.../libsmc-preload.so:.../libfakesmc.so PROGRAM
 * so that libsmc-preload's dlsym(RTLD_NEXT, "socket") finds this socket().
 *
 * Every call is appended to the file named by FAKESMC_LOG as
 *   socket domain=D type=0xT protocol=P
 * A call for AF_SMC (43) creates a real TCP socket instead (AF_INET for
 * protocol 0, AF_INET6 for protocol 1) with the same type flags, so the
 * program keeps working; with FAKESMC_ERRNO=N it fails with errno N instead,
 * as a kernel without SMC would (97 = EAFNOSUPPORT).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#define FAKE_AF_SMC 43

typedef int socket_fn(int domain, int type, int protocol);

static void log_call(int domain, int type, int protocol)
{
	const char *path = getenv("FAKESMC_LOG");
	char line[96];
	int fd, n;

	if (!path)
		return;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	n = snprintf(line, sizeof(line), "socket domain=%d type=%#x protocol=%d\n",
		     domain, (unsigned int)type, protocol);
	if (write(fd, line, n) != n)
		perror("libfakesmc: log");
	close(fd);
}

int socket(int domain, int type, int protocol)
{
	socket_fn *next = (socket_fn *)dlsym(RTLD_NEXT, "socket");
	const char *fail;
	int saved = errno;

	log_call(domain, type, protocol);
	errno = saved;
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	if (domain != FAKE_AF_SMC)
		return next(domain, type, protocol);
	fail = getenv("FAKESMC_ERRNO");
	if (fail) {
		errno = atoi(fail);
		return -1;
	}
	if (protocol != 0 && protocol != 1) {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	return next(protocol ? AF_INET6 : AF_INET, type, 0);
}
