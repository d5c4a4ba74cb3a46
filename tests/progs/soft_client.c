/*
 * soft_client: registers real sockets with the soft backend (SMC_SOFT), as
 * the preload will, so the command-line tests can list them with smcss.
 *
 *   soft_client [-n] [-s] WHAT...
 *     init | init6            a socket that is only created (INIT)
 *     listen PORT | listen6 PORT
 *                             registered INIT, then bound to 127.0.0.1 (::1)
 *                             and listening, then LISTEN with the fd again
 *     connect PORT | connect6 PORT
 *                             a private listener on PORT (0: any), a client
 *                             registered INIT and then ACTIVE after connect,
 *                             and the accepted socket registered ACTIVE
 *     bell | bell-pipe        an eventfd (a pipe) as our doorbell (BELL) in
 *                             slot 0: prints "bell ID" or "bell: ERRNO"
 *     bell-slot N             the same in slot N
 *     bell-get ID             asks for the doorbell ID: prints "bell-get ID:
 *                             ID KIND" (KIND as /proc/self/fd shows what
 *                             came) or "bell-get ID: ERRNO"
 *     del-elsewhere           ends the registrations made so far from a
 *                             second connection, the socket as proof (as a
 *                             forked holder that exits), sent behind a reply
 *                             that connection leaves unread before it closes;
 *                             prints "deleted elsewhere N"
 *     lgr KEY ROLE HOST LINKS a soft SMC-R link group of this process as the
 *                             preload tells it (LGR): LINKS is "-" (gone) or
 *                             ID:DEV:PORT:CONNS:IPV4:PEER-IPV4[,...], the
 *                             GIDs ::ffff:IPV4; prints "lgr KEY" or "lgr: ERRNO"
 *     -n  exit without deregistering (the daemon drops them with the connection)
 *     -s  wait for a signal only (stdin is not read)
 *
 * Prints "TOKEN STATE INODE LOCAL PEER" per registration, then "ready"; waits
 * for the end of stdin or SIGTERM/SIGINT/SIGHUP; then deregisters (prints
 * "deleted N") unless -n.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wire/reg_client.h"

#define MAX_REGS 64

struct reg {
	uint64_t token;
	int fd;
};

static struct soft_reg_conn conn;
static struct reg regs[MAX_REGS];
static int n_regs;
static int keep[2 * MAX_REGS];    /* sockets not registered (private listeners, ended) */
static int n_keep;
static volatile sig_atomic_t stop;

static void die(const char *what, int err)
{
	fprintf(stderr, "soft_client: %s: %s\n", what, strerror(err));
	exit(1);
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static socklen_t loopback(int family, uint16_t port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return sizeof(*sin);
	}
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(port);
	sin6->sin6_addr = in6addr_loopback;
	return sizeof(*sin6);
}

/* "ADDR:PORT"; an unconnected peer prints as the family's any address, port 0. */
static void addr_text(int fd, int family, bool peer, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char a[INET6_ADDRSTRLEN];
	int rc;

	memset(&ss, 0, sizeof(ss));
	rc = peer ? getpeername(fd, (struct sockaddr *)&ss, &sl)
		  : getsockname(fd, (struct sockaddr *)&ss, &sl);
	if (rc < 0)
		ss.ss_family = (sa_family_t)family;
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &sin->sin_addr, a, sizeof(a));
		snprintf(buf, len, "%s:%u", a, ntohs(sin->sin_port));
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &sin6->sin6_addr, a, sizeof(a));
		snprintf(buf, len, "%s:%u", a, ntohs(sin6->sin6_port));
	}
}

static uint64_t token_add(int fd, uint8_t state)
{
	uint64_t token;
	int rc = soft_reg_add(&conn, fd, state, &token);

	if (rc)
		die("register", -rc);
	if (n_regs == MAX_REGS)
		die("register", ENOSPC);
	regs[n_regs].token = token;
	regs[n_regs].fd = fd;
	n_regs++;
	return token;
}

static void report(uint64_t token, int fd, int family, const char *state)
{
	char l[80], p[80];
	struct stat sb;

	fstat(fd, &sb);
	addr_text(fd, family, false, l, sizeof(l));
	addr_text(fd, family, true, p, sizeof(p));
	printf("%llu %s %llu %s %s\n", (unsigned long long)token, state,
	       (unsigned long long)sb.st_ino, l, p);
}

static int tcp_socket(int family)
{
	int fd = socket(family, SOCK_STREAM, 0);

	if (fd < 0)
		die("socket", errno);
	return fd;
}

static void do_init(int family)
{
	int fd = tcp_socket(family);

	report(token_add(fd, SMC_SOFT_STATE_INIT), fd, family, "INIT");
}

static int listen_on(int fd, int family, uint16_t port)
{
	struct sockaddr_storage ss;
	socklen_t len = loopback(family, port, &ss);
	int one = 1;

	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0)
		die("bind", errno);
	if (listen(fd, 16) < 0)
		die("listen", errno);
	return fd;
}

static void set_state(uint64_t token, uint8_t state, int fd)
{
	int rc = soft_reg_state(&conn, token, state, fd);

	if (rc)
		die("state", -rc);
}

static void do_listen(int family, uint16_t port)
{
	int fd = tcp_socket(family);
	uint64_t token = token_add(fd, SMC_SOFT_STATE_INIT);

	listen_on(fd, family, port);
	set_state(token, SMC_SOFT_STATE_LISTEN, fd);
	report(token, fd, family, "LISTEN");
}

static void do_connect(int family, uint16_t port)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int lst = listen_on(tcp_socket(family), family, port);
	int cli = tcp_socket(family), srv;
	uint64_t token = token_add(cli, SMC_SOFT_STATE_INIT);

	if (getsockname(lst, (struct sockaddr *)&ss, &len) < 0)
		die("getsockname", errno);
	if (connect(cli, (struct sockaddr *)&ss, len) < 0)
		die("connect", errno);
	srv = accept(lst, NULL, NULL);
	if (srv < 0)
		die("accept", errno);
	keep[n_keep++] = lst;
	set_state(token, SMC_SOFT_STATE_ACTIVE, cli);
	report(token, cli, family, "ACTIVE");
	report(token_add(srv, SMC_SOFT_STATE_ACTIVE), srv, family, "ACTIVE");
}

/* The BELL reply to our last request: its id and descriptor, or -errno. */
static long bell_answer(int *fd)
{
	struct soft_pair_reply r;
	struct pollfd p = { .fd = conn.fd, .events = POLLIN };

	for (;;) {
		int rc = soft_reg_pair_poll(&conn, &r);

		if (rc < 0)
			die("BELL reply", -rc);
		if (rc == 1 && r.cmd == SMC_SOFT_CMD_BELL)
			break;
		if (poll(&p, 1, 5000) != 1)
			die("BELL reply", ETIMEDOUT);
	}
	*fd = r.bell_fd;
	return r.error ? r.error : (long)r.bell_id;
}

/* What a descriptor is, as /proc/self/fd says ("anon_inode:[eventfd]"). */
static void fd_kind(int fd, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, buf, len - 1);
	buf[n < 0 ? 0 : n] = '\0';
}

static void do_bell(bool pipe_instead, unsigned slot)
{
	int p[2], fd = -1, got;
	long rc;

	if (pipe_instead) {
		if (pipe2(p, O_CLOEXEC) < 0)
			die("pipe", errno);
		fd = p[0];
	} else if ((fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		die("eventfd", errno);
	}
	if ((rc = soft_reg_bell_set_send(&conn, fd, (uint8_t)slot)) < 0)
		die("BELL", (int)-rc);
	rc = bell_answer(&got);
	if (rc < 0)
		printf("bell: %s\n", strerrorname_np((int)-rc));
	else
		printf("bell %ld\n", rc);
	if (got >= 0)
		close(got);
}

static void do_bell_get(const char *id)
{
	char kind[64];
	long rc;
	int fd;

	if ((rc = soft_reg_bell_get_send(&conn, (uint32_t)strtoul(id, NULL, 10))) < 0)
		die("BELL", (int)-rc);
	rc = bell_answer(&fd);
	if (rc < 0) {
		printf("bell-get %s: %s\n", id, strerrorname_np((int)-rc));
		return;
	}
	fd_kind(fd, kind, sizeof(kind));
	printf("bell-get %s: %ld %s\n", id, rc, kind);
	close(fd);
}

/*
 * The daemon's reply to a BELL is in the queue, unread, when the SOCK_DELs
 * go and the connection closes: the kernel then reports ECONNRESET to the
 * daemon ahead of them.
 */
static void do_del_elsewhere(void)
{
	struct pollfd p;
	struct soft_reg_conn other;
	int rc, efd = eventfd(0, EFD_CLOEXEC);
	long seq;

	if (efd < 0)
		die("eventfd", errno);
	if ((rc = soft_reg_open(&other, NULL, 0)))
		die("cannot reach the soft backend", -rc);
	if ((seq = soft_reg_bell_set_send(&other, efd, 0)) < 0)
		die("BELL", (int)-seq);
	p = (struct pollfd){ .fd = other.fd, .events = POLLIN };
	if (poll(&p, 1, 5000) != 1)
		die("BELL reply", ETIMEDOUT);
	for (int i = 0; i < n_regs; i++) {
		if ((rc = soft_reg_del_send(&other, regs[i].token, regs[i].fd)))
			die("deregister", -rc);
		keep[n_keep++] = regs[i].fd;
	}
	soft_reg_close(&other);
	close(efd);
	printf("deleted elsewhere %d\n", n_regs);
	n_regs = 0;
}

static void do_lgr(char **w)
{
	struct smc_soft_link l[2];
	uint32_t conns = 0;
	unsigned n = 0;
	char spec[512], *save = NULL;
	long rc;

	memset(l, 0, sizeof(l));
	snprintf(spec, sizeof(spec), "%s", w[3]);
	for (char *t = strcmp(spec, "-") ? strtok_r(spec, ",", &save) : NULL; t && n < 2;
	     t = strtok_r(NULL, ",", &save), n++) {
		char dev[64], ip[16], peer[16];
		unsigned id, port, c;

		if (sscanf(t, "%u:%63[^:]:%u:%u:%15[^:]:%15s", &id, dev, &port, &c, ip, peer) != 6) {
			fprintf(stderr, "soft_client: a link is ID:DEV:PORT:CONNS:IPV4:PEER-IPV4\n");
			exit(2);
		}
		l[n].link_id = (uint8_t)id;
		l[n].ibport = (uint8_t)port;
		l[n].conns = c;
		conns += c;
		snprintf(l[n].ibdev, sizeof(l[n].ibdev), "%s", dev);
		l[n].gid[10] = l[n].gid[11] = l[n].peer_gid[10] = l[n].peer_gid[11] = 0xff;
		if (inet_pton(AF_INET, ip, l[n].gid + 12) != 1 || inet_pton(AF_INET, peer, l[n].peer_gid + 12) != 1) {
			fprintf(stderr, "soft_client: bad IPv4 address in %s\n", t);
			exit(2);
		}
	}
	rc = soft_reg_lgr_send(&conn, (uint32_t)strtoul(w[0], NULL, 10), (uint8_t)atoi(w[1]), w[2], conns, l, n);
	/* no reply but an error: a SOCK_INFO round trip shows one, if any, came first */
	if (rc < 0)
		printf("lgr: %s\n", strerror((int)-rc));
	else
		printf("lgr %s\n", w[0]);
}

static uint16_t port_arg(const char *s)
{
	char *end;
	unsigned long v = s ? strtoul(s, &end, 10) : 0;

	if (!s || *end || v > 65535) {
		fprintf(stderr, "soft_client: a port number is needed\n");
		exit(2);
	}
	return (uint16_t)v;
}

static void run(char **argv)
{
	for (; *argv; argv++) {
		const char *w = *argv;
		int family = strchr(w, '6') ? AF_INET6 : AF_INET;

		if (!strcmp(w, "init") || !strcmp(w, "init6")) {
			do_init(family);
		} else if (!strcmp(w, "listen") || !strcmp(w, "listen6")) {
			do_listen(family, port_arg(argv[1]));
			argv++;
		} else if (!strcmp(w, "connect") || !strcmp(w, "connect6")) {
			do_connect(family, port_arg(argv[1]));
			argv++;
		} else if (!strcmp(w, "bell") || !strcmp(w, "bell-pipe")) {
			do_bell(!strcmp(w, "bell-pipe"), 0);
		} else if (!strcmp(w, "bell-slot") && argv[1]) {
			do_bell(false, (unsigned)strtoul(*++argv, NULL, 10));
		} else if (!strcmp(w, "lgr") && argv[1] && argv[2] && argv[3] && argv[4]) {
			do_lgr(argv + 1);
			argv += 4;
		} else if (!strcmp(w, "del-elsewhere")) {
			do_del_elsewhere();
		} else if (!strcmp(w, "bell-get") && argv[1]) {
			do_bell_get(argv[1]);
			argv++;
		} else {
			fprintf(stderr, "soft_client: unknown word '%s'\n", w);
			exit(2);
		}
	}
}

/* The signals stay blocked but while waiting, so none is lost before the wait. */
static void wait_end(bool signal_only, const sigset_t *orig)
{
	struct pollfd p = { .fd = 0, .events = POLLIN };
	char buf[256];

	while (!stop) {
		if (ppoll(&p, signal_only ? 0 : 1, NULL, orig) < 0)
			continue;                       /* EINTR: stop is set */
		if (read(0, buf, sizeof(buf)) <= 0)
			break;
	}
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block, orig;
	bool no_del = false, signal_only = false;
	int opt, rc;

	while ((opt = getopt(argc, argv, "+ns")) != -1) {
		if (opt == 'n')
			no_del = true;
		else if (opt == 's')
			signal_only = true;
		else
			return 2;
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: soft_client [-n] [-s] init|init6|listen[6] PORT|connect[6] PORT...\n");
		return 2;
	}
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &orig);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	rc = soft_reg_open(&conn, NULL, 0);
	if (rc)
		die("cannot reach the soft backend", -rc);
	run(argv + optind);
	printf("ready\n");
	fflush(stdout);
	wait_end(signal_only, &orig);
	if (no_del)
		return 0;
	for (int i = 0; i < n_regs; i++) {
		rc = soft_reg_del(&conn, regs[i].token);
		if (rc)
			die("deregister", -rc);
		close(regs[i].fd);
	}
	for (int i = 0; i < n_keep; i++)
		close(keep[i]);
	printf("deleted %d\n", n_regs);
	soft_reg_close(&conn);
	return 0;
}
