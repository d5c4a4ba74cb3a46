/* Process setup of smc_softd: signals, file limit, detaching, pid file. */
#include "daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

void softd_signals_block(sigset_t *stop)
{
	struct sigaction hup;

	sigemptyset(stop);
	sigaddset(stop, SIGTERM);
	sigaddset(stop, SIGINT);
	/* a blocked signal reaches the signalfd even when ignored: keep nohup's wish */
	if (sigaction(SIGHUP, NULL, &hup) == 0 && hup.sa_handler != SIG_IGN)
		sigaddset(stop, SIGHUP);
	sigprocmask(SIG_BLOCK, stop, NULL);
	/* a client that closes before its reply must not kill us */
	signal(SIGPIPE, SIG_IGN);
}

void softd_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int write_pidfile(const char *path, char *err, size_t errlen)
{
	char line[32];
	int fd, n;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "pid file %s: %s", path, strerror(errno));
		return -1;
	}
	n = snprintf(line, sizeof(line), "%d\n", (int)getpid());
	if (write(fd, line, (size_t)n) != n) {
		snprintf(err, errlen, "pid file %s: %s", path, strerror(errno));
		close(fd);
		unlink(path);
		return -1;
	}
	close(fd);
	return 0;
}

static void to_dev_null(void)
{
	int fd = open("/dev/null", O_RDWR);

	if (fd < 0)
		return;
	dup2(fd, STDIN_FILENO);
	dup2(fd, STDOUT_FILENO);
	dup2(fd, STDERR_FILENO);
	if (fd > STDERR_FILENO)
		close(fd);
}

/* The daemon's side: detach, then tell the parent "" (ready) or why not. */
static int become_daemon(int ready, const char *pidfile)
{
	char err[SOFTD_ERRLEN] = "";
	ssize_t n;

	if (setsid() < 0)
		snprintf(err, sizeof(err), "setsid: %s", strerror(errno));
	else if (chdir("/") < 0)
		snprintf(err, sizeof(err), "chdir /: %s", strerror(errno));
	else
		write_pidfile(pidfile, err, sizeof(err));
	to_dev_null();
	n = write(ready, err, strlen(err) + 1);   /* a parent gone meanwhile is no reason to stop */
	(void)n;
	close(ready);
	return err[0] ? -1 : 0;
}

int softd_daemonize(const char *pidfile, char *err, size_t errlen)
{
	int p[2];
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		if (become_daemon(p[1], pidfile) < 0)
			_exit(1);
		return 0;
	}
	close(p[1]);
	do
		n = read(p[0], err, errlen - 1);
	while (n < 0 && errno == EINTR);
	close(p[0]);
	if (n <= 0) {
		snprintf(err, errlen, "daemon: exited while starting");
		return -1;
	}
	err[n] = '\0';
	return err[0] ? -1 : 1;
}
