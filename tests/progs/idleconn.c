/*
 * idleconn: many idle paired connections, and what they cost in memory.
 *
 *   idleconn [-b BATCH] [-w WARM] [-m MSGSIZE] [-T BATCHSECS] [-t SECONDS] N
 *
 * Run it under smc_run with the soft backend.  It forks: the child is the
 * server, the parent the client, both with the preload.  They open WARM
 * connections (default 10) over 127.0.0.1 and exchange small messages on
 * each until every one has moved to its shared-memory ring; then each
 * process reads its /proc/self/smaps_rollup ("before"), opens N more the
 * same way, and reads it again ("after").  Then everything goes idle: the
 * client prints "ready", and both wait until the client gets SIGTERM or
 * SIGINT (exit status 0 then).
 *
 * Connections are opened a batch at a time (default 64): open the batch,
 * then rounds on it until it is on the ring, then the next batch.  So the
 * PAIR requests in flight to the daemon stay at a batch per process (a
 * burst of thousands fills the control socket, and the preload then leaves
 * those connections on TCP), and the listen backlog never overflows.
 *
 * A message is MSGSIZE bytes (default 64) from the client, echoed by the
 * server; a round is one such round trip on every connection of the batch.
 * A connection counts as on the ring when, over its last round trip, the
 * kernel's TCP byte counters (TCP_INFO) moved by less than a message in each
 * direction: after the cut-over the TCP stream carries one-byte doorbells
 * at most.  Rounds go on (at least enough for SMC_SOFT_PAIR_AFTER + 2 data
 * calls per side) until a whole round was on the ring; a batch that is not
 * there after BATCHSECS seconds (default 20) is an error.
 *
 * Output (stdout), one line each, "ready" last:
 *   pid client=PID server=PID
 *   ring ROLE N/N rounds=R   (R: the most rounds a batch needed)
 *   mem ROLE PHASE rss=KB pss=KB private=KB shared=KB shmem=KB anon=KB pte=KB
 *       ROLE client|server, PHASE before|after; from smaps_rollup
 *       (private = Private_Clean + Private_Dirty, shared = Shared_Clean +
 *       Shared_Dirty, shmem = Pss_Shmem, anon = Anonymous) and VmPTE of
 *       /proc/self/status
 * Errors go to stderr; exit status 1, 2 when RLIMIT_NOFILE cannot hold the
 * connections, 3 when not ready within SECONDS (default 100).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define MSG_MAX 4096

static const char *role = "client";
static const char *phase = "setup";
static int warm = 10, batch = 64, msgsize = 64, timeout_s = 100;
static int min_rounds, batch_secs = 20;
static volatile sig_atomic_t stop;

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "idleconn %s (%s): ", role, phase);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void on_alarm(int sig)
{
	static const char m[] = "idleconn: timed out\n";

	(void)sig;
	if (write(STDERR_FILENO, m, sizeof(m) - 1) < 0) {
		/* nothing else to do */
	}
	_exit(3);
}

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/* ---- memory ---------------------------------------------------------- */

struct mem {
	long rss, pss, priv, shared, shmem, anon, pte;  /* kB */
};

/* The file into a static buffer: no allocation between the readings. */
static const char *slurp(const char *path)
{
	static char buf[8192];
	size_t len = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die("%s: %s", path, strerror(errno));
	while (len < sizeof(buf) - 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	return buf;
}

static long field(const char *text, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, name, len) && p[len] == ':')
			return strtol(p + len + 1, NULL, 10);
	die("no %s in /proc", name);
	return 0;
}

static void mem_read(struct mem *m)
{
	const char *s = slurp("/proc/self/smaps_rollup");

	m->rss = field(s, "Rss");
	m->pss = field(s, "Pss");
	m->priv = field(s, "Private_Clean") + field(s, "Private_Dirty");
	m->shared = field(s, "Shared_Clean") + field(s, "Shared_Dirty");
	m->shmem = field(s, "Pss_Shmem");
	m->anon = field(s, "Anonymous");
	m->pte = field(slurp("/proc/self/status"), "VmPTE");
}

static void mem_print(const char *when, const struct mem *m)
{
	printf("mem %s %s rss=%ld pss=%ld private=%ld shared=%ld shmem=%ld anon=%ld pte=%ld\n",
	       role, when, m->rss, m->pss, m->priv, m->shared, m->shmem, m->anon, m->pte);
	fflush(stdout);
}

/* ---- connections ----------------------------------------------------- */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void send_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("send on fd %d: %s", fd, n ? strerror(errno) : "sent nothing");
		p += n;
		len -= (size_t)n;
	}
}

static void recv_all(int fd, char *p, size_t len)
{
	while (len) {
		ssize_t n = recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("recv on fd %d: %s", fd, n ? strerror(errno) : "end of stream");
		p += n;
		len -= (size_t)n;
	}
}

/* The kernel's TCP byte counters of the socket. */
static void tcp_bytes(int fd, uint64_t *sent, uint64_t *received)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0)
		die("TCP_INFO: %s", strerror(errno));
	if (len < offsetof(struct tcp_info, tcpi_bytes_sent) + sizeof(ti.tcpi_bytes_sent))
		die("TCP_INFO has no tcpi_bytes_sent on this kernel (%u bytes)", (unsigned)len);
	*sent = ti.tcpi_bytes_sent;
	*received = ti.tcpi_bytes_received;
}

/* One round trip on fd; true when it moved less than a message over TCP each way. */
static bool round_trip(int fd, bool server, uint32_t idx, uint32_t round, char flag, char *end)
{
	static char out[MSG_MAX], in[MSG_MAX];
	uint64_t s0, r0, s1, r1;
	uint32_t got;

	tcp_bytes(fd, &s0, &r0);
	if (server) {
		recv_all(fd, in, (size_t)msgsize);
		memcpy(&got, in + 1, sizeof(got));
		if (got != idx)
			die("connection %u got a message for %u (accept order)", idx, got);
		*end = in[0];
		send_all(fd, in, (size_t)msgsize);
	} else {
		memset(out, (int)(idx + round) & 0xff, (size_t)msgsize);
		out[0] = flag;
		memcpy(out + 1, &idx, sizeof(idx));
		memcpy(out + 5, &round, sizeof(round));
		send_all(fd, out, (size_t)msgsize);
		recv_all(fd, in, (size_t)msgsize);
		if (memcmp(in, out, (size_t)msgsize))
			die("connection %u: the echo differs from what was sent", idx);
	}
	tcp_bytes(fd, &s1, &r1);
	return s1 - s0 < (uint64_t)msgsize && r1 - r0 < (uint64_t)msgsize;
}

/*
 * Rounds on fds[0..n) until a whole round was on the ring; the client
 * decides, the server follows the flag byte ('C' go on, 'E' the last round).
 * The number of rounds, or minus the connections the last one found off the ring.
 */
static int rounds_until_ring(bool server, int *fds, uint32_t base, int n)
{
	double give_up = now() + batch_secs;
	int rounds, on = 0;
	char end;

	for (rounds = 1;; rounds++) {
		bool last = !server && (now() > give_up ||
					(rounds >= min_rounds && on == n));
		int on_now = 0;

		/*
		 * Still waiting for the daemon: leave it the CPU (the client and
		 * the server take turns spinning on 2 CPUs otherwise).
		 */
		if (!server && rounds > min_rounds && on < n)
			usleep(1000);

		for (int i = 0; i < n; i++) {
			end = 'C';
			on_now += round_trip(fds[i], server, base + (uint32_t)i, (uint32_t)rounds,
					     last ? 'E' : 'C', &end);
			if (server && end == 'E')
				last = true;
		}
		on = on_now;
		if (last)
			return on == n ? rounds + 1 : -(n - on);
	}
}

/*
 * Open n connections into fds[], a batch at a time: open the batch, one
 * round trip on each (round 0), then rounds until the batch is on the ring.
 * Batches keep the PAIR requests in flight to the daemon at a batch per
 * process, and the listen backlog from overflowing.
 */
static void run(bool server, int lfd, const struct sockaddr_in *sa, int *fds, uint32_t base,
		int n)
{
	int most = 0;
	char end;

	for (int lo = 0; lo < n; lo += batch) {
		int hi = lo + batch < n ? lo + batch : n, r;

		for (int i = lo; i < hi; i++) {
			if (server) {
				fds[i] = accept(lfd, NULL, NULL);
				if (fds[i] < 0)
					die("accept (connection %d of %d): %s", i, n, strerror(errno));
			} else {
				fds[i] = socket(AF_INET, SOCK_STREAM, 0);
				if (fds[i] < 0)
					die("socket (connection %d of %d): %s", i, n, strerror(errno));
				if (connect(fds[i], (const struct sockaddr *)sa, sizeof(*sa)) < 0)
					die("connect (connection %d of %d): %s", i, n,
					    strerror(errno));
			}
		}
		for (int i = lo; i < hi; i++)
			round_trip(fds[i], server, base + (uint32_t)i, 0, 'C', &end);
		r = rounds_until_ring(server, fds + lo, base + (uint32_t)lo, hi - lo);
		if (r < 0) {
			printf("ring %s %d/%d\n", role, lo + (hi - lo + r), n);
			fflush(stdout);
			die("%d connections of %d..%d not on the ring after %d s", -r, lo, hi - 1,
			    batch_secs);
		}
		if (r > most)
			most = r;
	}
	printf("ring %s %d/%d rounds=%d\n", role, n, n, most);
	fflush(stdout);
}

/* ---- main ------------------------------------------------------------ */

static void sync_put(int fd)
{
	if (write(fd, "x", 1) != 1)
		die("sync write: %s", strerror(errno));
}

static void sync_get(int fd)
{
	char c;
	ssize_t n;

	do
		n = read(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		die("the other process is gone");
}

static int intarg(const char *s, const char *what, int min, int max)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < min || v > max) {
		fprintf(stderr, "idleconn: bad %s '%s' (%d..%d)\n", what, s, min, max);
		exit(1);
	}
	return (int)v;
}

int main(int argc, char **argv)
{
	int to_parent[2], to_child[2], lfd, opt, n, *fds, one = 1;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t salen = sizeof(sa);
	struct mem before, after;
	struct rlimit rl;
	const char *pa = getenv("SMC_SOFT_PAIR_AFTER");
	rlim_t need;
	pid_t child, parent;
	struct sigaction sig = { .sa_handler = on_stop };
	sigset_t idle, stops;
	bool server;
	char c;
	int pair_after = pa && *pa ? atoi(pa) : 4;

	while ((opt = getopt(argc, argv, "b:w:m:T:t:")) != -1) {
		switch (opt) {
		case 'b': batch = intarg(optarg, "batch size", 1, 4096); break;
		case 'w': warm = intarg(optarg, "warm-up count", 1, 1000); break;
		case 'm': msgsize = intarg(optarg, "message size", 16, MSG_MAX / 2); break;
		case 'T': batch_secs = intarg(optarg, "batch time limit", 1, 3600); break;
		case 't': timeout_s = intarg(optarg, "timeout", 1, 86400); break;
		default:
			fprintf(stderr, "usage: idleconn [-b BATCH] [-w WARM] [-m MSGSIZE] "
					"[-T BATCHSECS] [-t SECONDS] N\n");
			return 1;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: idleconn [-b BATCH] [-w WARM] [-m MSGSIZE] "
				"[-T BATCHSECS] [-t SECONDS] N\n");
		return 1;
	}
	n = intarg(argv[optind], "connection count", 1, 1000000);
	/* SMC_SOFT_PAIR_AFTER + 2 data calls per side at least; a round is two */
	if (pair_after < 1)
		pair_after = 1;
	min_rounds = (pair_after + 2 + 1) / 2;

	/* each process holds warm + n connections and a few fds of its own */
	need = (rlim_t)warm + (rlim_t)n + 64;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
		perror("idleconn: getrlimit");
		return 1;
	}
	if (rl.rlim_cur < need) {
		if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
			fprintf(stderr, "idleconn: %d connections need %lu open files per process, "
					"but the hard RLIMIT_NOFILE is %lu (ulimit -Hn)\n",
				n, (unsigned long)need, (unsigned long)rl.rlim_max);
			return 2;
		}
		rl.rlim_cur = need;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
			fprintf(stderr, "idleconn: cannot raise RLIMIT_NOFILE to %lu: %s\n",
				(unsigned long)need, strerror(errno));
			return 2;
		}
	}

	/* everything per connection is allocated and touched before "before" */
	fds = calloc((size_t)(warm + n), sizeof(*fds));
	if (!fds)
		die("out of memory");
	memset(fds, 0xff, (size_t)(warm + n) * sizeof(*fds));

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, batch + 16) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &salen) < 0)
		die("listen: %s", strerror(errno));
	if (pipe(to_parent) < 0 || pipe(to_child) < 0)
		die("pipe: %s", strerror(errno));

	signal(SIGALRM, on_alarm);
	fflush(stdout);
	parent = getpid();
	child = fork();
	if (child < 0)
		die("fork: %s", strerror(errno));
	server = child == 0;
	alarm((unsigned)timeout_s);             /* not inherited: each process its own */
	if (server) {
		role = "server";
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			return 1;
		close(to_parent[0]);
		close(to_child[1]);
	} else {
		close(lfd);
		close(to_parent[1]);
		close(to_child[0]);
		printf("pid client=%d server=%d\n", (int)getpid(), (int)child);
		fflush(stdout);
	}

	phase = "warm-up";
	run(server, lfd, &sa, fds, 0, warm);
	/* the server reads its memory first: the client's next step changes it */
	phase = "measure before";
	/* twice: the first reading faults in the buffers of the readings */
	if (server) {
		mem_read(&before);
		mem_read(&before);
		sync_put(to_parent[1]);
	} else {
		sync_get(to_parent[0]);
		mem_read(&before);
		mem_read(&before);
	}
	phase = "connections";
	run(server, lfd, &sa, fds + warm, (uint32_t)warm, n);
	phase = "measure after";
	if (server) {
		mem_read(&after);
		mem_print("before", &before);
		mem_print("after", &after);
		sync_put(to_parent[1]);
		alarm(0);
		phase = "idle";
		/* idle until the client goes (end of file) */
		while (read(to_child[0], &c, 1) < 0 && errno == EINTR)
			;
		return 0;
	}
	sync_get(to_parent[0]);
	mem_read(&after);
	mem_print("before", &before);
	mem_print("after", &after);
	alarm(0);
	phase = "idle";
	/* blocked but while sigsuspend() waits: none gets lost before it */
	sigemptyset(&stops);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGINT);
	sigprocmask(SIG_BLOCK, &stops, &idle);
	sigdelset(&idle, SIGTERM);
	sigdelset(&idle, SIGINT);
	sigaction(SIGTERM, &sig, NULL);
	sigaction(SIGINT, &sig, NULL);
	printf("ready\n");
	fflush(stdout);
	while (!stop)
		sigsuspend(&idle);
	close(to_child[1]);
	{
		int status;

		if (waitpid(child, &status, 0) < 0)
			die("waitpid: %s", strerror(errno));
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "idleconn: the server exited with status %d\n", status);
			return 1;
		}
	}
	return 0;
}
