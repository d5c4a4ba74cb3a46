/*
 * The process around the request core: command line, paths, the listening
 * socket, daemonizing and logging of smc_softd.  Errors are returned as one
 * line "what failed: why" in err; main prints it after "smc_softd: ".
 */
#ifndef SOFTD_DAEMON_H
#define SOFTD_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <sys/types.h>

#define SOFTD_ERRLEN 512
#define SOFTD_SOCKET_ROOT "/run/smc_soft/control"
#define SOFTD_PIDFILE_NAME "smc_softd.pid"

/* daemon_opts.c */
struct softd_opts {
	bool foreground;
	bool syslog;
	bool settings;           /* --settings: print them, do not start */
	const char *socket;      /* -s, or NULL */
	const char *pidfile;     /* -p, or NULL */
	const char *sysfs;       /* --sysfs, else $SMC_SYSFS_ROOT, else NULL (/sys) */
	const char *peer_port;   /* --peer-port, else NULL (the default) */
	char **roce;             /* the raw "NAME=IFACE" of each --roce */
	int n_roce;
};

enum softd_parse { SOFTD_RUN, SOFTD_EXIT_OK, SOFTD_EXIT_USAGE };

/* Prints version, usage or the error itself; free with softd_opts_free(). */
enum softd_parse softd_opts_parse(int argc, char **argv, struct softd_opts *o);
void softd_opts_free(struct softd_opts *o);

/* daemon_path.c: where the socket and the pid file go */
int softd_socket_path(const char *opt, char *buf, size_t len, char *err, size_t errlen);
int softd_pidfile_path(const char *opt, const char *socket, char *buf, size_t len,
		       char *err, size_t errlen);
/* mkdir -p of the directory holding path; new directories get mode. */
int softd_make_parent(const char *path, mode_t mode, char *err, size_t errlen);

/* daemon_listen.c: the control socket, one daemon per path */
struct softd_listener {
	int fd;
	dev_t dev;               /* identity of the socket file, so that only */
	ino_t ino;               /* our own file is removed at exit */
	char path[108];
};

int softd_listen(struct softd_listener *l, const char *path, char *err, size_t errlen);
/* Close; with unlink_path, also remove the socket file if it is still ours. */
void softd_unlisten(struct softd_listener *l, bool unlink_path);

/* daemon_proc.c: process setup */
/* The signals that stop the daemon, blocked (they are read from a signalfd). */
void softd_signals_block(sigset_t *stop);
/* Soft RLIMIT_NOFILE up to the hard limit, so that many clients fit. */
void softd_raise_nofile(void);
/*
 * Fork into the background, detach, write the pid file.  Returns 0 in the
 * daemon, 1 in the parent once the daemon is ready, -1 with err (in the
 * parent) when it could not start.
 */
int softd_daemonize(const char *pidfile, char *err, size_t errlen);

#include "log.h"

#endif
