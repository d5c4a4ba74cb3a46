/*
 * stress: many concurrent TCP connections moving random-size messages in
 * both directions, with random shutdown and abort points, every byte checked
 * against a known pattern and each direction closed by a 64-bit hash of its
 * stream.  Both ends are separate processes so each can run under smc_run.
 *
 *   stress server PORT                       serve until the client's "done"
 *   stress client HOST PORT [OPTIONS]        run the load, then send "done"
 *   stress pair [OPTIONS] [WRAPPER...]       both ends, each as WRAPPER... stress
 *
 *   -c N     connections at a time (default 32)
 *   -v SIZE  payload to move, both directions together (K, M, G suffixes;
 *            default 1G); what aborted connections leave unsent is moved by
 *            later ones
 *   -s SEED  seed of the random plan (default 1)
 *   -t SECS  watchdog (default 300)
 *
 * Each end prints one line of totals; the client's carries the verdict.  Exit
 * 0 only with no mismatch, no unexpected error, equal totals on both ends and
 * as many open fds at the end as after the first connection (the server port
 * 0 is announced as "port N" on stdout, or on fd $STRESS_READY_FD).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KiB 1024ull
#define MiB (1024ull * KiB)
#define GiB (1024ull * MiB)
#define IOBUF (256 * KiB)
#define PAT_SIZE (1 * MiB)		/* period of the pattern table */
#define MAGIC 0x534d4353545253ull	/* "SMCSTRS" */
#define MAX_FDS 4096

enum mode { M_NORMAL, M_CLIENT_ABORTS, M_SERVER_ABORTS, M_DONE };

/* What the client announces at the start of each connection. */
struct plan {
	uint64_t magic;
	uint64_t id;
	uint64_t seed;
	uint64_t c2s, s2c;		/* payload bytes each way */
	uint64_t abort_at;		/* the aborting side closes after this many */
	uint32_t mode;
	uint32_t pad;
};

struct totals {
	atomic_ullong conns, aborted, normal_in, normal_out, in, out;
	atomic_uint errors;
};

static struct totals g_tot;
static unsigned char g_pat[PAT_SIZE + IOBUF];
static const char *g_role = "stress";
static pthread_mutex_t g_print = PTHREAD_MUTEX_INITIALIZER;

static void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void report(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&g_print);
	printf("stress: %s: ", g_role);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	pthread_mutex_unlock(&g_print);
}

/* One error: counted, and the first few printed. */
static void error(uint64_t id, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void error(uint64_t id, const char *fmt, ...)
{
	char msg[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (atomic_fetch_add(&g_tot.errors, 1) < 10)
		report("connection %llu: %s", (unsigned long long)id, msg);
}

static void on_watchdog(int sig)
{
	static const char msg[] = "stress: watchdog: no end in time\n";

	(void)sig;
	(void)!write(STDOUT_FILENO, msg, sizeof(msg) - 1);
	_exit(3);
}

/* ---- pattern, hash, random numbers --------------------------------------- */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static void pat_init(void)
{
	for (size_t i = 0; i < PAT_SIZE; i += 8) {
		uint64_t w = mix(i + 12345);

		memcpy(g_pat + i, &w, 8);
	}
	memcpy(g_pat + PAT_SIZE, g_pat, sizeof(g_pat) - PAT_SIZE);	/* reads may run past the end */
}

/* Byte OFF of stream SEED: the table at a per-stream shift, each MiB of the
 * stream xored with its own byte so that misplaced blocks do not match. */
static void pat_fill(unsigned char *b, uint64_t seed, uint64_t off, size_t n)
{
	while (n) {
		uint64_t pos = (off + seed * 7919) % PAT_SIZE;
		size_t len = PAT_SIZE - (off % PAT_SIZE);
		unsigned char x = (unsigned char)(mix(seed ^ (off / PAT_SIZE)) | 1);

		if (len > n)
			len = n;
		for (size_t i = 0; i < len; i++)
			b[i] = g_pat[pos + i] ^ x;
		b += len;
		off += len;
		n -= len;
	}
}

/* Word-wise FNV-1a over a stream of any chunking. */
struct hash {
	uint64_t h, carry;
	unsigned n;
};

static void hash_init(struct hash *h)
{
	*h = (struct hash){ .h = 0xcbf29ce484222325ull };
}

static void hash_add(struct hash *h, const unsigned char *b, size_t len)
{
	while (len && h->n) {
		h->carry |= (uint64_t)*b++ << (8 * h->n);
		len--;
		if (++h->n == 8) {
			h->h = (h->h ^ h->carry) * 0x100000001b3ull;
			h->carry = 0;
			h->n = 0;
		}
	}
	for (; len >= 8; b += 8, len -= 8) {
		uint64_t w;

		memcpy(&w, b, 8);
		h->h = (h->h ^ w) * 0x100000001b3ull;
	}
	while (len--) {
		h->carry |= (uint64_t)*b++ << (8 * h->n);
		h->n++;
	}
}

static uint64_t hash_end(const struct hash *h)
{
	return ((h->h ^ h->carry) * 0x100000001b3ull) ^ h->n;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Message sizes: mostly small, sometimes large. */
static size_t rnd_size(uint64_t *s)
{
	static const size_t max[] = { 16, 512, 4096, 65536, IOBUF };

	return 1 + rnd(s) % max[rnd(s) % 5];
}

/* ---- one connection: both directions at once ---------------------------- */

struct conn {
	int fd;
	struct plan p;
	int client;
	uint64_t rng;
	unsigned char *tx, *rx, *want;
	/* sending */
	uint64_t tx_len, tx_done, tx_stop;	/* tx_stop: payload bytes before an abort */
	unsigned char trailer[8];
	int tx_finished, aborting;
	struct hash tx_hash;
	/* receiving */
	uint64_t rx_len, rx_done;
	unsigned char rx_trailer[8];
	int rx_eof, peer_aborts;
	struct hash rx_hash;
};

static int conn_send(struct conn *c)
{
	uint64_t total = c->tx_len + (c->aborting ? 0 : 8);
	size_t len = rnd_size(&c->rng);
	unsigned char *src;
	ssize_t r;

	if (c->aborting && c->tx_done >= c->tx_stop)
		return 1;	/* the abort point: close without further ado */
	if (c->tx_done < c->tx_stop) {
		if (len > c->tx_stop - c->tx_done)
			len = c->tx_stop - c->tx_done;
		pat_fill(c->tx, c->p.seed * 2 + !c->client, c->tx_done, len);
		src = c->tx;
	} else {
		if (c->tx_done == c->tx_len && total == c->tx_len + 8) {
			uint64_t h = hash_end(&c->tx_hash);

			memcpy(c->trailer, &h, 8);
		}
		src = c->trailer + (c->tx_done - c->tx_len);
		len = total - c->tx_done;
	}
	r = send(c->fd, src, len, MSG_NOSIGNAL);
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (r < 0) {
		if (!c->peer_aborts)
			error(c->p.id, "send: %s", strerror(errno));
		c->tx_finished = 1;
		return c->peer_aborts ? 0 : -1;
	}
	if (c->tx_done < c->tx_len)
		hash_add(&c->tx_hash, src, (size_t)r);
	c->tx_done += (uint64_t)r;
	atomic_fetch_add(&g_tot.out, (unsigned long long)(c->tx_done <= c->tx_len ? r : 0));
	if (c->aborting && c->tx_done >= c->tx_stop)
		return 1;	/* the abort point: close without further ado */
	if (c->tx_done == total) {
		if (shutdown(c->fd, SHUT_WR) < 0 && !c->peer_aborts) {
			error(c->p.id, "shutdown: %s", strerror(errno));
			return -1;
		}
		c->tx_finished = 1;
	}
	return 0;
}

static int rx_check(struct conn *c, const unsigned char *b, size_t n)
{
	size_t pay = 0;

	if (c->rx_done < c->rx_len) {
		pay = c->rx_len - c->rx_done < n ? c->rx_len - c->rx_done : n;
		pat_fill(c->want, c->p.seed * 2 + c->client, c->rx_done, pay);
		if (memcmp(c->want, b, pay) != 0) {
			for (size_t i = 0; i < pay; i++)
				if (c->want[i] != b[i]) {
					error(c->p.id, "byte %llu of the stream is 0x%02x, want 0x%02x",
					      (unsigned long long)(c->rx_done + i), b[i], c->want[i]);
					break;
				}
			return -1;
		}
		hash_add(&c->rx_hash, b, pay);
		atomic_fetch_add(&g_tot.in, pay);
	}
	if (c->rx_done + n > c->rx_len + 8) {
		error(c->p.id, "%llu bytes beyond the stream's end",
		      (unsigned long long)(c->rx_done + n - c->rx_len - 8));
		return -1;
	}
	memcpy(c->rx_trailer + (c->rx_done + pay - c->rx_len), b + pay, n - pay);
	c->rx_done += n;
	return 0;
}

static int rx_end(struct conn *c)
{
	uint64_t h = hash_end(&c->rx_hash), got;

	c->rx_eof = 1;
	if (c->peer_aborts || c->aborting)
		return 0;
	if (c->rx_done != c->rx_len + 8) {
		error(c->p.id, "EOF after %llu of %llu bytes", (unsigned long long)c->rx_done,
		      (unsigned long long)c->rx_len + 8);
		return -1;
	}
	memcpy(&got, c->rx_trailer, 8);
	if (got != h) {
		error(c->p.id, "hash of %llu bytes: 0x%016llx, the sender's 0x%016llx",
		      (unsigned long long)c->rx_len, (unsigned long long)h, (unsigned long long)got);
		return -1;
	}
	return 0;
}

static int conn_recv(struct conn *c)
{
	size_t len = rnd_size(&c->rng);
	ssize_t r = recv(c->fd, c->rx, len, 0);

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (r < 0) {
		if (c->peer_aborts && errno == ECONNRESET)
			return rx_end(c);
		error(c->p.id, "recv: %s", strerror(errno));
		return -1;
	}
	if (r == 0)
		return rx_end(c);
	return rx_check(c, c->rx, (size_t)r);
}

/* Run the connection to its end; returns 0 or -1 (error counted). */
static int conn_run(struct conn *c)
{
	int fl = fcntl(c->fd, F_GETFL), rc = 0;

	if (fl < 0 || fcntl(c->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		error(c->p.id, "fcntl: %s", strerror(errno));
		return -1;
	}
	while (rc == 0 && !(c->tx_finished && c->rx_eof)) {
		struct pollfd p = { .fd = c->fd, .events = (c->rx_eof ? 0 : POLLIN) |
							    (c->tx_finished ? 0 : POLLOUT) };

		if (poll(&p, 1, -1) < 0 && errno != EINTR) {
			error(c->p.id, "poll: %s", strerror(errno));
			return -1;
		}
		if (p.revents & (POLLIN | POLLHUP | POLLERR) && !c->rx_eof)
			rc = conn_recv(c);
		if (rc == 0 && p.revents & (POLLOUT | POLLERR) && !c->tx_finished)
			rc = conn_send(c);
	}
	return rc < 0 ? -1 : 0;
}

static void conn_setup(struct conn *c, int fd, const struct plan *p, int client)
{
	int i_abort = p->mode == (client ? M_CLIENT_ABORTS : M_SERVER_ABORTS);

	*c = (struct conn){ .fd = fd, .p = *p, .client = client };
	c->rng = mix(p->seed + (uint64_t)client) | 1;
	c->tx_len = client ? p->c2s : p->s2c;
	c->rx_len = client ? p->s2c : p->c2s;
	c->aborting = i_abort;
	c->peer_aborts = p->mode == M_CLIENT_ABORTS || p->mode == M_SERVER_ABORTS ? !i_abort : 0;
	c->tx_stop = i_abort ? p->abort_at : c->tx_len;
	hash_init(&c->tx_hash);
	hash_init(&c->rx_hash);
}

/* One connection with buffers; counts it in the totals.  *moved: the payload
 * bytes this end sent and received. */
static int conn_serve(int fd, const struct plan *p, int client, uint64_t *moved)
{
	struct conn c;
	int rc;

	conn_setup(&c, fd, p, client);
	c.tx = malloc(IOBUF);
	c.rx = malloc(IOBUF);
	c.want = malloc(IOBUF);
	if (!c.tx || !c.rx || !c.want) {
		error(p->id, "out of memory");
		rc = -1;
	} else {
		rc = conn_run(&c);
	}
	free(c.tx);
	free(c.rx);
	free(c.want);
	*moved = (c.tx_done < c.tx_len ? c.tx_done : c.tx_len) +
		 (c.rx_done < c.rx_len ? c.rx_done : c.rx_len);
	atomic_fetch_add(&g_tot.conns, 1);
	if (p->mode != M_NORMAL) {
		atomic_fetch_add(&g_tot.aborted, 1);
	} else if (rc == 0) {
		atomic_fetch_add(&g_tot.normal_in, c.rx_len);
		atomic_fetch_add(&g_tot.normal_out, c.tx_len);
	}
	return rc;
}

/* ---- fds ------------------------------------------------------------------ */

static unsigned char g_fd_base[MAX_FDS];

/*
 * The soft data path's doorbells are eventfds the preload keeps for the
 * process's life (up to 8 of its own and one per peer process, at most 72:
 * smc_run(8), SMC_SOFT_BELL); this program makes none, so they are not
 * counted.
 */
static bool is_doorbell(int fd)
{
	char path[64], target[64];
	ssize_t l;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	l = readlink(path, target, sizeof(target) - 1);
	if (l <= 0)
		return false;
	target[l] = 0;
	return strcmp(target, "anon_inode:[eventfd]") == 0;
}

static int fd_scan(unsigned char *seen)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0, bells = 0;

	if (!d)
		return -1;
	if (seen)
		memset(seen, 0, MAX_FDS);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.') {
			int fd = atoi(e->d_name);

			if (fd == dirfd(d) || (is_doorbell(fd) && ++bells <= 72))
				continue;
			n++;
			if (seen && fd < MAX_FDS)
				seen[fd] = 1;
		}
	closedir(d);
	return n;
}

/* Compare with the baseline; prints what is new. */
static int fd_check(int base)
{
	unsigned char now[MAX_FDS];
	int n = fd_scan(now);

	if (n == base)
		return 0;
	for (int fd = 0; fd < MAX_FDS; fd++)
		if (now[fd] && !g_fd_base[fd]) {
			char path[64], target[256] = "?";
			ssize_t l;

			snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
			if ((l = readlink(path, target, sizeof(target) - 1)) > 0)
				target[l] = 0;
			report("fd %d left open: %s", fd, target);
		}
	report("%d fds open after the first connection, %d at the end", base, n);
	return -1;
}

/* ---- server --------------------------------------------------------------- */

static pthread_mutex_t g_active_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_active_cond = PTHREAD_COND_INITIALIZER;
static int g_active;

static int read_all(int fd, void *b, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, (char *)b + got, n - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

static int write_all(int fd, const void *b, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = send(fd, (const char *)b + done, n - done, MSG_NOSIGNAL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		done += (size_t)r;
	}
	return 0;
}

struct job {
	int fd;
	struct plan p;
};

static void *serve_thread(void *arg)
{
	struct job *j = arg;
	uint64_t moved;

	conn_serve(j->fd, &j->p, 0, &moved);
	close(j->fd);
	free(j);
	pthread_mutex_lock(&g_active_lock);
	g_active--;
	pthread_cond_broadcast(&g_active_cond);
	pthread_mutex_unlock(&g_active_lock);
	return NULL;
}

/* The last connection: the client's totals, answered with ours. */
static int serve_done(int fd, const struct plan *p)
{
	uint64_t mine[3];
	int bad;

	pthread_mutex_lock(&g_active_lock);
	while (g_active > 0)
		pthread_cond_wait(&g_active_cond, &g_active_lock);
	pthread_mutex_unlock(&g_active_lock);
	mine[0] = g_tot.conns;
	mine[1] = g_tot.normal_in;
	mine[2] = g_tot.normal_out;
	bad = mine[0] != p->id || mine[1] != p->c2s || mine[2] != p->s2c;
	if (bad)
		report("totals differ: client %llu connections, %llu bytes out, %llu in; "
		       "server %llu connections, %llu in, %llu out",
		       (unsigned long long)p->id, (unsigned long long)p->c2s,
		       (unsigned long long)p->s2c, (unsigned long long)mine[0],
		       (unsigned long long)mine[1], (unsigned long long)mine[2]);
	write_all(fd, mine, sizeof(mine));
	return bad ? -1 : 0;
}

static int announce(int lfd, const char *port_arg)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	const char *rfd = getenv("STRESS_READY_FD");
	char line[32];
	int n;

	if (getsockname(lfd, (struct sockaddr *)&a, &len) < 0)
		return -1;
	n = snprintf(line, sizeof(line), "%u\n", ntohs(a.sin_port));
	if (rfd && *rfd) {
		int fd = atoi(rfd);

		if (write(fd, line, (size_t)n) != n)
			return -1;
		close(fd);
		unsetenv("STRESS_READY_FD");
	} else if (strcmp(port_arg, "0") == 0) {
		printf("port %s", line);
		fflush(stdout);
	}
	return 0;
}

static int listen_on(const char *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int one = 1, lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (lfd < 0)
		return -1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(lfd, 128) < 0 ||
	    announce(lfd, port) < 0) {
		close(lfd);
		return -1;
	}
	return lfd;
}

static int run_server(const char *port)
{
	int lfd = listen_on(port), base = -1, rc = 0;

	if (lfd < 0)
		return perror("stress: server: listen"), 1;
	for (uint64_t n = 0;; n++) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		struct job *j;
		pthread_t t;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			perror("stress: server: accept");
			return 1;
		}
		if (!(j = malloc(sizeof(*j))) || read_all(fd, &j->p, sizeof(j->p)) ||
		    j->p.magic != MAGIC) {
			error(n, "bad or missing connection header");
			free(j);
			close(fd);
			continue;
		}
		j->fd = fd;
		if (j->p.mode == M_DONE) {
			rc = serve_done(fd, &j->p);
			free(j);
			close(fd);
			break;
		}
		pthread_mutex_lock(&g_active_lock);
		g_active++;
		pthread_mutex_unlock(&g_active_lock);
		if (n == 0) {	/* the warm-up connection, served alone */
			serve_thread(j);
			base = fd_scan(g_fd_base);
		} else if (pthread_create(&t, NULL, serve_thread, j)) {
			error(n, "pthread_create failed");
			serve_thread(j);
		} else {
			pthread_detach(t);
		}
	}
	if (fd_check(base))
		rc = -1;
	close(lfd);
	report("%llu connections (%llu aborted), %llu MiB in, %llu MiB out, %u errors",
	       (unsigned long long)g_tot.conns, (unsigned long long)g_tot.aborted,
	       (unsigned long long)(g_tot.in / MiB), (unsigned long long)(g_tot.out / MiB),
	       g_tot.errors);
	return rc || g_tot.errors ? 1 : 0;
}

/* ---- client --------------------------------------------------------------- */

static struct sockaddr_in g_addr;
static pthread_mutex_t g_plan_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_left, g_next_id, g_plan_rng, g_avg;

/* The next connection's plan; 0 when the volume is used up. */
static int next_plan(struct plan *p)
{
	uint64_t *r = &g_plan_rng;
	int ok = 0;

	pthread_mutex_lock(&g_plan_lock);
	if (g_left > 0) {
		uint64_t k = rnd(r) % 10;

		*p = (struct plan){ .magic = MAGIC, .id = ++g_next_id, .seed = rnd(r) };
		p->c2s = rnd(r) % (g_avg + 1);
		p->s2c = rnd(r) % (g_avg + 1);
		if (k == 0)
			p->c2s = 0;	/* one-way connections */
		if (k == 1)
			p->s2c = 0;
		if (p->c2s + p->s2c > g_left) {
			p->c2s = g_left / 2;
			p->s2c = g_left - p->c2s;
		}
		p->mode = k == 2 ? M_CLIENT_ABORTS : k == 3 ? M_SERVER_ABORTS : M_NORMAL;
		if (p->mode == M_CLIENT_ABORTS)
			p->abort_at = p->c2s ? rnd(r) % p->c2s : 0;
		if (p->mode == M_SERVER_ABORTS)
			p->abort_at = p->s2c ? rnd(r) % p->s2c : 0;
		g_left -= p->c2s + p->s2c;
		ok = 1;
	}
	pthread_mutex_unlock(&g_plan_lock);
	return ok;
}

static int dial(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&g_addr, sizeof(g_addr)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int client_conn(const struct plan *p)
{
	int fd = dial(), rc;
	uint64_t moved = 0;

	if (fd < 0) {
		error(p->id, "connect: %s", strerror(errno));
		return -1;
	}
	if (write_all(fd, p, sizeof(*p))) {
		error(p->id, "write of the header: %s", strerror(errno));
		close(fd);
		return -1;
	}
	rc = conn_serve(fd, p, 1, &moved);
	close(fd);
	if (moved < p->c2s + p->s2c) {	/* an abort: the rest goes to later connections */
		pthread_mutex_lock(&g_plan_lock);
		g_left += p->c2s + p->s2c - moved;
		pthread_mutex_unlock(&g_plan_lock);
	}
	return rc;
}

static void *client_thread(void *arg)
{
	struct plan p;

	(void)arg;
	while (next_plan(&p))
		client_conn(&p);
	return NULL;
}

static int client_done(void)
{
	struct plan p = { .magic = MAGIC, .mode = M_DONE, .id = g_tot.conns,
			  .c2s = g_tot.normal_out, .s2c = g_tot.normal_in };
	uint64_t theirs[3];
	int fd = dial(), rc = 0;

	if (fd < 0 || write_all(fd, &p, sizeof(p)) || read_all(fd, theirs, sizeof(theirs))) {
		report("the final exchange of totals failed: %s", strerror(errno));
		rc = -1;
	} else if (theirs[0] != p.id || theirs[1] != p.c2s || theirs[2] != p.s2c) {
		report("totals differ: client %llu connections, %llu bytes out, %llu in; "
		       "server %llu, %llu in, %llu out",
		       (unsigned long long)p.id, (unsigned long long)p.c2s,
		       (unsigned long long)p.s2c, (unsigned long long)theirs[0],
		       (unsigned long long)theirs[1], (unsigned long long)theirs[2]);
		rc = -1;
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

static int run_client(const char *host, const char *port, unsigned conc, uint64_t volume,
		      uint64_t seed)
{
	struct plan warm = { .magic = MAGIC, .id = 0, .seed = seed, .c2s = 1000, .s2c = 1000 };
	pthread_t t[256];
	struct timespec t0, t1;
	double secs;
	int base, rc = 0;

	g_addr.sin_family = AF_INET;
	g_addr.sin_port = htons((uint16_t)atoi(port));
	if (inet_pton(AF_INET, host, &g_addr.sin_addr) != 1)
		return fprintf(stderr, "stress: %s: not an IPv4 address\n", host), 2;
	/* the warm-up connection opens whatever a preload keeps for the process */
	if (client_conn(&warm))
		return report("the first connection failed"), 1;
	base = fd_scan(g_fd_base);
	g_tot = (struct totals){ 0 };
	g_left = volume;
	g_plan_rng = mix(seed) | 1;
	g_avg = volume / (conc * 8);
	if (g_avg > 64 * MiB)
		g_avg = 64 * MiB;
	if (g_avg < 64 * KiB)
		g_avg = 64 * KiB;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned i = 0; i < conc; i++)
		if (pthread_create(&t[i], NULL, client_thread, NULL))
			return report("pthread_create failed"), 1;
	for (unsigned i = 0; i < conc; i++)
		pthread_join(t[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	g_tot.conns++;	/* the warm-up connection, as the server counts it */
	g_tot.normal_in += warm.s2c;
	g_tot.normal_out += warm.c2s;
	if (client_done())
		rc = -1;
	if (fd_check(base))
		rc = -1;
	report("%llu connections (%llu aborted), %llu MiB out, %llu MiB in, %u errors, "
	       "%.1f s, %.0f MiB/s",
	       (unsigned long long)g_tot.conns, (unsigned long long)g_tot.aborted,
	       (unsigned long long)(g_tot.out / MiB), (unsigned long long)(g_tot.in / MiB),
	       g_tot.errors, secs, (double)(g_tot.in + g_tot.out) / MiB / (secs > 0 ? secs : 1));
	return rc || g_tot.errors ? 1 : 0;
}

/* ---- pair mode and main ---------------------------------------------------- */

static char g_self[PATH_MAX];
static pid_t g_kids[2];

static void on_pair_watchdog(int sig)
{
	for (int i = 0; i < 2; i++)
		if (g_kids[i] > 0)
			kill(g_kids[i], SIGKILL);
	on_watchdog(sig);
}

static pid_t spawn(char **wrap, int nwrap, char **args)
{
	char *argv[64];
	int n = 0;
	pid_t pid;

	for (int i = 0; i < nwrap && n < 40; i++)
		argv[n++] = wrap[i];
	argv[n++] = g_self;
	while (*args && n < 63)
		argv[n++] = *args++;
	argv[n] = NULL;
	if ((pid = fork()) == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "stress: exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

static int run_pair(char **opts, char **wrap, int nwrap, unsigned secs)
{
	struct sigaction sa = { .sa_handler = on_pair_watchdog };
	char rfd[16], port[16] = "";
	char *sargs[] = { (char *)"server", (char *)"0", NULL };
	char *cargs[16] = { (char *)"client", (char *)"127.0.0.1", port };
	int p[2], st, rc = 0, n = 3;
	ssize_t r;

	for (int i = 0; opts[i] && n < 15; i++)
		cargs[n++] = opts[i];
	cargs[n] = NULL;
	if (pipe(p) < 0)
		return perror("pipe"), 2;
	sigaction(SIGALRM, &sa, NULL);
	alarm(secs + 10);
	snprintf(rfd, sizeof(rfd), "%d", p[1]);
	setenv("STRESS_READY_FD", rfd, 1);
	fflush(stdout);
	g_kids[0] = spawn(wrap, nwrap, sargs);
	close(p[1]);
	unsetenv("STRESS_READY_FD");
	r = read(p[0], port, sizeof(port) - 1);
	close(p[0]);
	if (r > 0) {
		port[strcspn(port, "\n")] = 0;
		g_kids[1] = spawn(wrap, nwrap, cargs);
	} else {
		printf("stress: pair: the server did not announce its port\n");
		kill(g_kids[0], SIGKILL);
		rc = 1;
	}
	for (int i = 0; i < 2; i++)
		if (g_kids[i] > 0 && (waitpid(g_kids[i], &st, 0) < 0 || !WIFEXITED(st) ||
				      WEXITSTATUS(st) != 0))
			rc = 1;
	printf(rc ? "stress: FAILED\n" : "stress ok\n");
	return rc;
}

static uint64_t parse_size(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 10);

	switch (*end) {
	case 'k': case 'K': return v * KiB;
	case 'm': case 'M': return v * MiB;
	case 'g': case 'G': return v * GiB;
	default: return *end ? 0 : v;
	}
}

static int usage(void)
{
	fprintf(stderr, "usage: stress server PORT\n"
			"       stress client HOST PORT [-c CONN] [-v SIZE] [-s SEED] [-t SECS]\n"
			"       stress pair [-c CONN] [-v SIZE] [-s SEED] [-t SECS] [WRAPPER...]\n");
	return 2;
}

int main(int argc, char **argv)
{
	unsigned conc = 32, secs = 300;
	uint64_t volume = 1 * GiB, seed = 1;
	char *opts[16] = { NULL };
	int i, nopt = 0, first = argc > 1 && strcmp(argv[1], "client") == 0 ? 4 : 2;
	ssize_t n = readlink("/proc/self/exe", g_self, sizeof(g_self) - 1);

	if (n <= 0 || argc < 2)
		return usage();
	g_self[n] = 0;
	pat_init();
	signal(SIGPIPE, SIG_IGN);
	for (i = first; i + 1 < argc && argv[i][0] == '-' && nopt < 14; i += 2) {
		opts[nopt++] = argv[i];
		opts[nopt++] = argv[i + 1];
		switch (argv[i][1]) {
		case 'c': conc = (unsigned)atoi(argv[i + 1]); break;
		case 'v': volume = parse_size(argv[i + 1]); break;
		case 's': seed = strtoull(argv[i + 1], NULL, 0); break;
		case 't': secs = (unsigned)atoi(argv[i + 1]); break;
		default: return usage();
		}
	}
	if (conc < 1 || conc > 256 || volume == 0 || secs == 0)
		return usage();
	if (strcmp(argv[1], "pair") == 0)
		return run_pair(opts, argv + i, argc - i, secs);
	signal(SIGALRM, on_watchdog);
	alarm(secs);
	if (strcmp(argv[1], "server") == 0 && argc == 3) {
		g_role = "server";
		return run_server(argv[2]);
	}
	if (strcmp(argv[1], "client") == 0 && argc >= 4 && i == argc) {
		g_role = "client";
		return run_client(argv[2], argv[3], conc, volume, seed);
	}
	return usage();
}
