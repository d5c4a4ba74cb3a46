/*
 * smc_softd: the soft backend of smc-tools, a user-space stand-in for the
 * kernel's SMC module that answers its netlink messages on a UNIX socket.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"
#include "daemon_client.h"
#include "devices.h"
#include "dmb.h"
#include "peer_msg.h"
#include "peer_port.h"
#include "reg.h"
#include "server.h"
#include "soft_nl.h"
#include "state.h"
#include "teardown.h"

static int fail(const char *err)
{
	fprintf(stderr, "%s: %s\n", SOFTD_PROG, err);
	return 1;
}

static int serve(const struct softd_listener *l, const sigset_t *stop, struct soft_state *st,
		 struct softd_peer_port *pp)
{
	char err[SOFTD_ERRLEN];
	struct softd_server *s;
	int sig;

	s = softd_server_new(l->fd, stop, st, err, sizeof(err));
	if (!s || softd_server_peer_port(s, pp, err, sizeof(err))) {
		softd_log(LOG_ERR, "%s", err);
		softd_server_free(s);
		return 1;
	}
	softd_log(LOG_INFO, "listening on %s", l->path);
	if (softd_peer_port_on(pp))
		softd_log(LOG_INFO, "control port %u/udp: the daemons of connections' peer hosts "
			  "are asked there", pp->port);
	else if (pp->error)
		softd_log(LOG_WARNING, "control port %u/udp: %s: peers on other hosts are not asked",
			  pp->port, strerror(pp->error));
	sig = softd_server_run(s, err, sizeof(err));
	softd_server_free(s);
	if (sig < 0) {
		softd_log(LOG_ERR, "%s", err);
		return 1;
	}
	softd_log(LOG_INFO, "stopped by SIG%s", sigabbrev_np(sig));
	return 0;
}

/*
 * The sysfs root as an absolute path (the daemon leaves its working
 * directory when it detaches): one given must be a directory.
 */
static int sysfs_root(const char *opt, char out[PATH_MAX], char *err, size_t errlen)
{
	struct stat sb;

	if (!opt || !*opt) {
		snprintf(out, PATH_MAX, "%s", SOFT_SYSFS_ROOT);
		return 0;
	}
	if (!realpath(opt, out) || stat(out, &sb) < 0) {
		snprintf(err, errlen, "--sysfs %s: %s", opt, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(sb.st_mode)) {
		snprintf(err, errlen, "--sysfs %s: %s", opt, strerror(ENOTDIR));
		return -1;
	}
	return 0;
}

/*
 * The pid file is opened before detaching, so that a path the daemon could
 * not write fails the start here; the daemon then writes its pid into it.
 * 0 or an errno; *created: the file is new, ours to remove if the start fails.
 */
static int pidfile_check(const char *path, bool *created)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	*created = fd >= 0;
	if (fd < 0 && errno == EEXIST)
		fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* --peer-port: 0 to 65535 (0: off), or the default. */
static int peer_port_of(const char *opt, uint16_t *port, char *err, size_t errlen)
{
	char *end;
	unsigned long v;

	if (!opt) {
		*port = SOFT_PEER_PORT;
		return 0;
	}
	errno = 0;
	v = strtoul(opt, &end, 10);
	if (!*opt || *end || errno || v > 65535 || opt[0] == '-' || opt[0] == '+' || opt[0] == ' ') {
		snprintf(err, errlen, "--peer-port %s: not a port number (0 to 65535, 0: off)", opt);
		return -1;
	}
	*port = (uint16_t)v;
	return 0;
}

/* Everything that can fail is tried before detaching, so that it is reported here. */
static int run(const struct softd_opts *o)
{
	char path[108], pidfile[4096], sysfs[PATH_MAX], err[SOFTD_ERRLEN];
	struct softd_peer_port pp;
	struct softd_listener l;
	struct soft_state st;
	bool pid_created = false;
	uint16_t port;
	sigset_t stop;
	int rc;

	if (peer_port_of(o->peer_port, &port, err, sizeof(err)) ||
	    softd_socket_path(o->socket, path, sizeof(path), err, sizeof(err)) ||
	    (!o->foreground && softd_pidfile_path(o->pidfile, path, pidfile, sizeof(pidfile),
						  err, sizeof(err))))
		return fail(err);
	softd_signals_block(&stop);
	softd_raise_nofile();
	soft_state_init(&st);
	if (sysfs_root(o->sysfs, sysfs, err, sizeof(err)))
		return fail(err);
	st.sysfs = sysfs;
	/* the reason names the --roce value itself ("--roce SPEC: why") */
	if (soft_devs_init(&st, o->roce, o->n_roce, err, sizeof(err)) < 0) {
		soft_state_free(&st);
		return fail(err);
	}
	if (softd_peer_port_open(&pp, port, o->peer_port != NULL, err, sizeof(err)) < 0) {
		soft_state_free(&st);
		return fail(err);
	}
	if (softd_peer_port_on(&pp)) {
		st.peer_send = softd_peer_send;
		st.peer_ctx = &pp;
	}
	if (softd_listen(&l, path, err, sizeof(err)) < 0) {
		softd_peer_port_close(&pp);
		soft_state_free(&st);
		return fail(err);
	}
	if (!o->foreground) {
		rc = pidfile_check(pidfile, &pid_created);
		if (rc) {
			softd_unlisten(&l, true);
			softd_peer_port_close(&pp);
			soft_state_free(&st);
			fprintf(stderr, "%s: pid file %s: %s\n", SOFTD_PROG, pidfile, strerror(rc));
			return 1;
		}
		rc = softd_daemonize(pidfile, err, sizeof(err));
		if (rc != 0) {                  /* the parent: the daemon runs, or failed */
			softd_unlisten(&l, rc < 0);
			if (rc < 0 && pid_created)
				unlink(pidfile);
			softd_peer_port_close(&pp);
			soft_state_free(&st);
			return rc < 0 ? fail(err) : 0;
		}
	}
	softd_log_open(o->syslog || !o->foreground);
	rc = serve(&l, &stop, &st, &pp);
	softd_unlisten(&l, true);
	softd_peer_port_close(&pp);
	if (!o->foreground)
		unlink(pidfile);
	softd_log_close();
	soft_state_free(&st);
	return rc;
}

/*
 * --settings: what a daemon started with these options runs with, as
 * "name = value" lines, without starting one.  smc_dbg(8) prints them
 * beside the kernel's net.smc sysctls: wmem and rmem are what those
 * sysctls are to the kernel, the sizes of a connection's SMC-D rings when
 * it asks for none (SO_SNDBUF/SO_RCVBUF, SMC_SNDBUF/SMC_RCVBUF).
 */
static int print_settings(const struct softd_opts *o)
{
	char path[108], sysfs[PATH_MAX], err[SOFTD_ERRLEN];
	uint16_t port;

	if (peer_port_of(o->peer_port, &port, err, sizeof(err)) ||
	    softd_socket_path(o->socket, path, sizeof(path), err, sizeof(err)) ||
	    sysfs_root(o->sysfs, sysfs, err, sizeof(err)))
		return fail(err);
	printf("socket = %s\n", path);
	printf("peer_port = %u\n", port);
	printf("sysfs = %s\n", sysfs);
	printf("roce =");
	for (int i = 0; i < o->n_roce; i++)
		printf(" %s", o->roce[i]);
	printf("\n");
	printf("wmem = %u\n", DMB_DEFAULT_SIZE);
	printf("rmem = %u\n", DMB_DEFAULT_SIZE);
	printf("smcd_buf_min = %u\n", DMB_MIN_SIZE);
	printf("smcd_buf_max = %u\n", DMB_MAX_SIZE);
	printf("smcr_buf_size = %u\n", SMC_SOFT_SMCR_BUF);
	printf("max_ueids = %d\n", SOFT_MAX_UEID);
	printf("max_sockets_per_client = %u\n", SMC_SOFT_MAX_SOCKS);
	printf("client_queue_max = %u\n", SOFTD_QUEUE_MAX);
	return fflush(stdout) ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct softd_opts o;
	int rc;

	switch (softd_opts_parse(argc, argv, &o)) {
	case SOFTD_EXIT_OK:
		return 0;
	case SOFTD_EXIT_USAGE:
		return 1;
	case SOFTD_RUN:
		break;
	}
	rc = o.settings ? print_settings(&o) : run(&o);
	softd_opts_free(&o);
	return rc;
}
