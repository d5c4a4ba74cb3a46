/*
 * sockcheck: the socket semantics an application relies on, one named case
 * at a time, so that the soft SMC data path (libsmc-preload.so under
 * smc_run) is held to what plain TCP does.
 *
 *   sockcheck server PORT CASE         listen on 127.0.0.1:PORT (0: any port,
 *                                      printed as "port N" on stdout, or
 *                                      written to fd $SOCKCHECK_READY_FD);
 *                                      $SOCKCHECK_BIND: another IPv4 address
 *   sockcheck client HOST PORT CASE    connect and run the client's half
 *   sockcheck pair CASE [WRAPPER...]   start both ends as separate processes,
 *                                      each as WRAPPER... sockcheck server|client
 *   sockcheck list                     the case names
 *
 * Each end exchanges data with a known pattern, checks every byte, and
 * prints one line: "CASE ok" (exit 0) or "CASE: ROLE: what failed: why"
 * (exit 1).  A client tries a refused connect again for
 * $SOCKCHECK_CONNECT_RETRY seconds (default 0), for a server on another
 * host that may not listen yet.  $SOCKCHECK_SETTLE: see settle().  A watchdog ($SOCKCHECK_TIMEOUT seconds, default 60) turns any
 * hang into a failure line (exit 3).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/errqueue.h>
#include <linux/io_uring.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* glibc's fortified entry points, as a -D_FORTIFY_SOURCE=2 build calls them. */
extern ssize_t __read_chk(int fd, void *buf, size_t nbytes, size_t buflen);
extern ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags);
extern ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen, int flags,
			      struct sockaddr *from, socklen_t *fromlen);
extern int __poll_chk(struct pollfd *fds, nfds_t nfds, int timeout, size_t fdslen);
extern int __ppoll_chk(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout,
		       const sigset_t *ss, size_t fdslen);
extern long int __fdelt_chk(long int d);

#define KiB 1024u
#define MiB (1024u * 1024u)
#define MSG 10000		/* bytes of one round of ping/echo */
#define SMALLBUF (32 * 1024)	/* SO_SNDBUF/SO_RCVBUF of the buffer-filling cases */
#define EPOLL_TAG 0x5eedf00d00000000ull

static const char *g_case = "?";
static const char *g_role = "?";
static const char *g_doing = "starting";	/* what the watchdog reports */
static char g_err[512];

/* ---- failure reporting ------------------------------------------------- */

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(g_err, sizeof(g_err), fmt, ap);
	va_end(ap);
	return -1;
}

static int fail_errno(const char *what)
{
	return fail("%s: %s", what, strerror(errno));
}

static void on_watchdog(int sig)
{
	char line[256];
	int n;

	(void)sig;
	n = snprintf(line, sizeof(line), "%s: %s: watchdog: no progress while %s\n",
		     g_case, g_role, g_doing);
	if (n > 0)
		(void)!write(STDOUT_FILENO, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	_exit(3);
}

static unsigned watchdog_secs(void)
{
	const char *s = getenv("SOCKCHECK_TIMEOUT");
	int v = s ? atoi(s) : 0;

	return v > 0 ? (unsigned)v : 60;
}

static void watchdog_arm(void)
{
	struct sigaction sa = { .sa_handler = on_watchdog };

	sigaction(SIGALRM, &sa, NULL);
	alarm(watchdog_secs());
}

static void msleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- the data pattern: byte OFF of a stream with seed SEED ------------- */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static void pat_fill(unsigned char *b, uint64_t seed, uint64_t off, size_t n)
{
	size_t i = 0;

	while (i < n) {
		uint64_t o = off + i, w = mix(seed * 0x9e3779b97f4a7c15ull + (o >> 3));

		for (unsigned k = o & 7; k < 8 && i < n; k++, i++)
			b[i] = (unsigned char)(w >> (k * 8));
	}
}

static int pat_check(const unsigned char *b, uint64_t seed, uint64_t off, size_t n,
		     const char *what)
{
	unsigned char want[4096];

	for (size_t i = 0; i < n; i += sizeof(want)) {
		size_t len = n - i < sizeof(want) ? n - i : sizeof(want);

		pat_fill(want, seed, off + i, len);
		if (memcmp(want, b + i, len) == 0)
			continue;
		for (size_t j = 0; j < len; j++)
			if (want[j] != b[i + j])
				return fail("%s: byte %llu of the stream is 0x%02x, want 0x%02x", what,
					    (unsigned long long)(off + i + j), b[i + j], want[j]);
	}
	return 0;
}

static uint64_t fnv1a(uint64_t h, const unsigned char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}
#define FNV_INIT 0xcbf29ce484222325ull

/* ---- I/O helpers --------------------------------------------------------- */

typedef ssize_t (*tx_fn)(int fd, const void *b, size_t n);
typedef ssize_t (*rx_fn)(int fd, void *b, size_t n);

static ssize_t tx_write(int fd, const void *b, size_t n) { return write(fd, b, n); }
static ssize_t rx_read(int fd, void *b, size_t n) { return read(fd, b, n); }

static int write_all(int fd, const void *b, size_t n, const char *what)
{
	const char *p = b;

	while (n) {
		ssize_t r = write(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return fail_errno(what);
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static int read_all(int fd, void *b, size_t n, const char *what)
{
	char *p = b;
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, p + got, n - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return fail_errno(what);
		if (r == 0)
			return fail("%s: EOF after %zu of %zu bytes", what, got, n);
		got += (size_t)r;
	}
	return 0;
}

/* Chunk sizes that cross every boundary a ring might have. */
static size_t chunk(unsigned i, size_t left)
{
	static const size_t sizes[] = { 1, 7, 100, 4096, 65536, 3, 1500, 200000, 8191, 131072 };
	size_t c = sizes[i % (sizeof(sizes) / sizeof(sizes[0]))];

	return c < left ? c : left;
}

static int send_with(int fd, tx_fn tx, uint64_t seed, uint64_t off, size_t n, const char *what)
{
	static unsigned char buf[256 * KiB];
	size_t done = 0;

	for (unsigned i = 0; done < n; i++) {
		size_t len = chunk(i, n - done);
		ssize_t r;

		if (len > sizeof(buf))
			len = sizeof(buf);
		pat_fill(buf, seed, off + done, len);
		for (size_t p = 0; p < len; p += (size_t)r) {
			r = tx(fd, buf + p, len - p);
			if (r < 0 && errno == EINTR) {
				r = 0;
				continue;
			}
			if (r <= 0)
				return fail_errno(what);
		}
		done += len;
	}
	return 0;
}

static int recv_with(int fd, rx_fn rx, uint64_t seed, uint64_t off, size_t n, const char *what)
{
	static unsigned char buf[256 * KiB];
	size_t done = 0;

	for (unsigned i = 3; done < n; i++) {
		size_t len = chunk(i, n - done);
		ssize_t r;

		if (len > sizeof(buf))
			len = sizeof(buf);
		r = rx(fd, buf, len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return fail_errno(what);
		if (r == 0)
			return fail("%s: EOF after %zu of %zu bytes", what, done, n);
		if (pat_check(buf, seed, off + done, (size_t)r, what))
			return -1;
		done += (size_t)r;
	}
	return 0;
}

static int send_pat(int fd, uint64_t seed, size_t n)
{
	return send_with(fd, tx_write, seed, 0, n, "write");
}

static int recv_pat(int fd, uint64_t seed, size_t n)
{
	return recv_with(fd, rx_read, seed, 0, n, "read");
}

static int expect_eof(int fd, const char *what)
{
	char c;
	ssize_t r;

	while ((r = read(fd, &c, 1)) < 0 && errno == EINTR)
		;
	if (r < 0)
		return fail("%s: read: %s, want EOF", what, strerror(errno));
	if (r > 0)
		return fail("%s: read a byte, want EOF", what);
	return 0;
}

/*
 * EOF, or ECONNRESET: a byte sent to a peer that closed draws its reset,
 * and Linux's TCP reports a reset that came before the read even after
 * the peer's FIN (tcp_recvmsg() looks at the error first).
 */
static int expect_end(int fd, const char *what)
{
	char c;
	ssize_t r;

	while ((r = read(fd, &c, 1)) < 0 && errno == EINTR)
		;
	if (r < 0 && errno != ECONNRESET)
		return fail("%s: read: %s, want EOF or ECONNRESET", what, strerror(errno));
	if (r > 0)
		return fail("%s: read a byte, want EOF", what);
	return 0;
}

static int send_tok(int fd, char c)
{
	return write_all(fd, &c, 1, "write of a token");
}

static int recv_tok(int fd, char want)
{
	char c;

	if (read_all(fd, &c, 1, "read of a token"))
		return -1;
	if (c != want)
		return fail("token: got '%c', want '%c'", c, want);
	return 0;
}

/* One round of request and reply: the client pings, the server echoes. */
static int ping(int fd, unsigned round)
{
	if (send_pat(fd, 100 + round, MSG))
		return -1;
	return recv_pat(fd, 200 + round, MSG);
}

static int echo(int fd, unsigned round)
{
	if (recv_pat(fd, 100 + round, MSG))
		return -1;
	return send_pat(fd, 200 + round, MSG);
}

static int set_nonblock(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK) < 0)
		return fail_errno("fcntl O_NONBLOCK");
	return 0;
}

static int inq(int fd)
{
	int n = -1;

	if (ioctl(fd, FIONREAD, &n) < 0)
		return -1;
	return n;
}

/* Wait until the peer's data has stopped arriving for QUIET_MS (the sender is
 * blocked on a full buffer); returns the bytes waiting.  Only decides when to
 * start reading. */
static int wait_quiet_ms(int fd, int quiet_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int last = -1, same = 0, n;

	g_doing = "waiting for the peer to fill the buffers";
	if (poll(&p, 1, -1) < 0)
		return fail_errno("poll");
	while (same < quiet_ms / 50) {
		if ((n = inq(fd)) < 0)
			return fail_errno("ioctl FIONREAD");
		same = n == last ? same + 1 : 0;
		last = n;
		msleep(50);
	}
	return last;
}

static int wait_quiet(int fd)
{
	return wait_quiet_ms(fd, 200);
}

/* Write nonblocking until EAGAIN; returns the bytes written, -1 on error. */
static long fill_until_eagain(int fd, uint64_t seed, long cap)
{
	unsigned char buf[16 * KiB];
	long total = 0;

	g_doing = "filling the send buffer";
	while (total < cap) {
		ssize_t r;

		pat_fill(buf, seed, (uint64_t)total, sizeof(buf));
		r = send(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return total;
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return fail_errno("send while filling");
		total += r;
	}
	return fail("%ld bytes accepted without EAGAIN", total);
}

/* Read and check LEN pattern bytes from a nonblocking socket, waiting with poll. */
static int recv_pat_nb(int fd, uint64_t seed, uint64_t off, size_t n, int *eagains)
{
	static unsigned char buf[64 * KiB];
	size_t done = 0;

	while (done < n) {
		size_t len = n - done < sizeof(buf) ? n - done : sizeof(buf);
		ssize_t r = read(fd, buf, len);

		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd p = { .fd = fd, .events = POLLIN };

			(*eagains)++;
			if (poll(&p, 1, -1) < 0 && errno != EINTR)
				return fail_errno("poll");
			continue;
		}
		if (r < 0)
			return fail_errno("read");
		if (r == 0)
			return fail("read: EOF after %zu of %zu bytes", done, n);
		if (pat_check(buf, seed, off + done, (size_t)r, "read"))
			return -1;
		done += (size_t)r;
	}
	return 0;
}

static int send_pat_nb(int fd, uint64_t seed, uint64_t off, size_t n, int *eagains)
{
	static unsigned char buf[64 * KiB];
	size_t done = 0;

	while (done < n) {
		size_t len = n - done < sizeof(buf) ? n - done : sizeof(buf);
		ssize_t r;

		pat_fill(buf, seed, off + done, len);
		r = write(fd, buf, len);
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };

			(*eagains)++;
			if (poll(&p, 1, -1) < 0 && errno != EINTR)
				return fail_errno("poll");
			continue;
		}
		if (r <= 0)
			return fail_errno("write");
		done += (size_t)r;
	}
	return 0;
}

/* ---- cases: blocking and nonblocking I/O -------------------------------- */

static int blocking_c(int *fd)
{
	if (send_pat(*fd, 1, 3 * MiB) || recv_pat(*fd, 2, 3 * MiB))
		return -1;
	if (shutdown(*fd, SHUT_WR) < 0)
		return fail_errno("shutdown");
	return expect_eof(*fd, "after the exchange");
}

static int blocking_s(int *fd)
{
	if (recv_pat(*fd, 1, 3 * MiB) || send_pat(*fd, 2, 3 * MiB))
		return -1;
	return expect_eof(*fd, "after the exchange");
}

/* The server reads an empty socket (EAGAIN), then lets the client fill the
 * buffers (EAGAIN on write) before draining them. */
static int nonblock_s(int *fd)
{
	char c;
	int ea = 0;

	if (set_nonblock(*fd, 1))
		return -1;
	if (read(*fd, &c, 1) != -1 || (errno != EAGAIN && errno != EWOULDBLOCK))
		return fail("read of an empty nonblocking socket: want EAGAIN, got %s",
			    strerror(errno));
	if (send_tok(*fd, 'g') || wait_quiet(*fd) < 0)
		return -1;
	if (recv_pat_nb(*fd, 3, 0, 4 * MiB, &ea))
		return -1;
	return send_pat_nb(*fd, 4, 0, 4 * MiB, &ea);
}

static int nonblock_c(int *fd)
{
	int ea_w = 0, ea_r = 0;
	long n;

	if (recv_tok(*fd, 'g') || set_nonblock(*fd, 1))
		return -1;
	if ((n = fill_until_eagain(*fd, 3, 4 * MiB)) < 0)
		return -1;
	if (send_pat_nb(*fd, 3, (uint64_t)n, 4 * MiB - (size_t)n, &ea_w))
		return -1;
	if (recv_pat_nb(*fd, 4, 0, 4 * MiB, &ea_r))
		return -1;
	if (ea_r == 0)
		return fail("4 MiB read from a nonblocking socket without one EAGAIN");
	return 0;
}

/* ---- case: every send and receive call, crossed ------------------------ */

static ssize_t tx_send(int fd, const void *b, size_t n) { return send(fd, b, n, 0); }
static ssize_t tx_sendto(int fd, const void *b, size_t n) { return sendto(fd, b, n, 0, NULL, 0); }

static ssize_t tx_sendmsg(int fd, const void *b, size_t n)
{
	struct iovec iov[3];
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 3 };
	size_t a = n / 3, c = n / 2;

	iov[0] = (struct iovec){ (void *)b, a };
	iov[1] = (struct iovec){ (char *)b + a, c - a };
	iov[2] = (struct iovec){ (char *)b + c, n - c };
	return sendmsg(fd, &m, 0);
}

static ssize_t tx_writev(int fd, const void *b, size_t n)
{
	struct iovec iov[2] = { { (void *)b, n / 4 }, { (char *)b + n / 4, n - n / 4 } };

	return writev(fd, iov, 2);
}

static ssize_t rx_recv(int fd, void *b, size_t n) { return recv(fd, b, n, 0); }

static ssize_t rx_recvfrom(int fd, void *b, size_t n)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	return recvfrom(fd, b, n, 0, (struct sockaddr *)&ss, &len);
}

static ssize_t rx_recvmsg(int fd, void *b, size_t n)
{
	struct iovec iov[3];
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 3 };
	size_t a = n / 3, c = n / 2;
	ssize_t r;

	iov[0] = (struct iovec){ b, a };
	iov[1] = (struct iovec){ (char *)b + a, c - a };
	iov[2] = (struct iovec){ (char *)b + c, n - c };
	r = recvmsg(fd, &m, 0);
	if (r >= 0 && (m.msg_flags & MSG_TRUNC)) {
		errno = EPROTO;
		return -1;
	}
	return r;
}

static ssize_t rx_readv(int fd, void *b, size_t n)
{
	struct iovec iov[4];
	size_t q = n / 4;

	for (int i = 0; i < 4; i++)
		iov[i] = (struct iovec){ (char *)b + i * q, i == 3 ? n - 3 * q : q };
	return readv(fd, iov, 4);
}

static const struct {
	const char *name;
	tx_fn tx;
} txs[] = { { "write", tx_write }, { "send", tx_send }, { "sendto", tx_sendto },
	    { "sendmsg", tx_sendmsg }, { "writev", tx_writev } };
static const struct {
	const char *name;
	rx_fn rx;
} rxs[] = { { "recv", rx_recv }, { "recvfrom", rx_recvfrom }, { "recvmsg", rx_recvmsg },
	    { "readv", rx_readv }, { "read", rx_read }, { "recv", rx_recv } };
#define NTX (sizeof(txs) / sizeof(txs[0]))
#define NRX (sizeof(rxs) / sizeof(rxs[0]))
#define CALLS_MSG (300 * KiB)

static int calls_send(int fd, uint64_t seed)
{
	char what[64];

	for (unsigned i = 0; i < NTX * 2; i++) {
		snprintf(what, sizeof(what), "%s", txs[i % NTX].name);
		if (send_with(fd, txs[i % NTX].tx, seed + i, 0, CALLS_MSG, what))
			return -1;
	}
	return 0;
}

static int calls_recv(int fd, uint64_t seed)
{
	char what[64];

	for (unsigned i = 0; i < NTX * 2; i++) {
		snprintf(what, sizeof(what), "%s of what %s sent", rxs[i % NRX].name,
			 txs[i % NTX].name);
		if (recv_with(fd, rxs[i % NRX].rx, seed + i, 0, CALLS_MSG, what))
			return -1;
	}
	return 0;
}

static int calls_c(int *fd)
{
	return calls_send(*fd, 10) || calls_recv(*fd, 30) ? -1 : 0;
}

static int calls_s(int *fd)
{
	return calls_recv(*fd, 10) || calls_send(*fd, 30) ? -1 : 0;
}

/* ---- case: the fortified _chk entry points ------------------------------ */

static ssize_t rx_read_chk(int fd, void *b, size_t n) { return __read_chk(fd, b, n, n); }
static ssize_t rx_recv_chk(int fd, void *b, size_t n) { return __recv_chk(fd, b, n, n, 0); }

static ssize_t rx_recvfrom_chk(int fd, void *b, size_t n)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	return __recvfrom_chk(fd, b, n, n, 0, (struct sockaddr *)&ss, &len);
}

static int fortify_waits(int fd)
{
	struct pollfd p[1] = { { .fd = fd, .events = POLLIN } };
	struct timespec ts = { 5, 0 };
	fd_set rd;
	int r;

	if ((r = __poll_chk(p, 1, 5000, sizeof(p))) != 1 || !(p[0].revents & POLLIN))
		return fail("__poll_chk: returned %d revents 0x%x, want POLLIN", r, p[0].revents);
	p[0].revents = 0;
	if ((r = __ppoll_chk(p, 1, &ts, NULL, sizeof(p))) != 1 || !(p[0].revents & POLLIN))
		return fail("__ppoll_chk: returned %d revents 0x%x, want POLLIN", r, p[0].revents);
	FD_ZERO(&rd);
	rd.fds_bits[__fdelt_chk(fd)] |= (__fd_mask)1 << (fd % __NFDBITS);
	if ((r = select(fd + 1, &rd, NULL, NULL, NULL)) != 1 || !FD_ISSET(fd, &rd))
		return fail("select with __fdelt_chk: returned %d", r);
	return 0;
}

static int fortify_c(int *fd)
{
	if (send_tok(*fd, 'g') || fortify_waits(*fd))
		return -1;
	if (recv_with(*fd, rx_read_chk, 40, 0, MiB, "__read_chk") ||
	    recv_with(*fd, rx_recv_chk, 41, 0, MiB, "__recv_chk") ||
	    recv_with(*fd, rx_recvfrom_chk, 42, 0, MiB, "__recvfrom_chk"))
		return -1;
	return send_pat(*fd, 43, MiB);
}

static int fortify_s(int *fd)
{
	if (recv_tok(*fd, 'g'))
		return -1;
	msleep(20);	/* the client waits in the fortified poll first */
	if (send_pat(*fd, 40, MiB) || send_pat(*fd, 41, MiB) || send_pat(*fd, 42, MiB))
		return -1;
	return recv_with(*fd, rx_read_chk, 43, 0, MiB, "__read_chk");
}

/* ---- case: sendfile ----------------------------------------------------- */

static int sendfile_c(int *fd)
{
	char path[] = "/tmp/sockcheck.XXXXXX";
	unsigned char *buf = malloc(2 * MiB);
	int f = mkstemp(path), rc = -1;
	off_t off = 0;

	if (f < 0 || !buf) {
		fail_errno("mkstemp");
		goto out;
	}
	unlink(path);
	pat_fill(buf, 50, 0, 2 * MiB);
	if (write_all(f, buf, 2 * MiB, "write of the file"))
		goto out;
	/* first half with an offset pointer, second half from the file position */
	while (off < (off_t)MiB) {
		ssize_t r = sendfile(*fd, f, &off, MiB - (size_t)off);

		if (r <= 0 && !(r < 0 && errno == EINTR)) {
			fail_errno("sendfile with an offset");
			goto out;
		}
	}
	if (lseek(f, (off_t)MiB, SEEK_SET) < 0) {
		fail_errno("lseek");
		goto out;
	}
	for (size_t left = MiB; left;) {
		ssize_t r = sendfile(*fd, f, NULL, left);

		if (r <= 0 && !(r < 0 && errno == EINTR)) {
			fail_errno("sendfile from the file position");
			goto out;
		}
		left -= r > 0 ? (size_t)r : 0;
	}
	rc = recv_tok(*fd, 'k');
out:
	if (f >= 0)
		close(f);
	free(buf);
	return rc;
}

static int sendfile_s(int *fd)
{
	if (recv_pat(*fd, 50, 2 * MiB))
		return -1;
	return send_tok(*fd, 'k');
}

/* ---- cases: splice and the mmsg calls ------------------------------------ */

/* A token each way: under smc_run both ends have read from their ring by
 * then, so the bytes that follow go on the ring, not on TCP. */
static int sync_c(int fd) { return send_tok(fd, 'a') || recv_tok(fd, 'b') ? -1 : 0; }
static int sync_s(int fd) { return recv_tok(fd, 'a') || send_tok(fd, 'b') ? -1 : 0; }

/* A file through a pipe into the socket, as a file server does: after a
 * first MiB written as usual (so the connection is on the ring by then). */
static int splice_out_c(int *fd)
{
	char path[] = "/tmp/sockcheck.XXXXXX";
	unsigned char *buf = malloc(2 * MiB);
	int f = mkstemp(path), p[2] = { -1, -1 }, rc = -1;
	loff_t off = MiB;

	if (f < 0 || !buf || pipe(p) < 0) {
		fail_errno("mkstemp/pipe");
		goto out;
	}
	unlink(path);
	pat_fill(buf, 52, 0, 2 * MiB);
	if (write_all(f, buf, 2 * MiB, "write of the file") || sync_c(*fd) ||
	    write_all(*fd, buf, MiB, "write of the first MiB"))
		goto out;
	while (off < (loff_t)(2 * MiB)) {
		ssize_t in = splice(f, &off, p[1], NULL, 2 * MiB - (size_t)off, 0);

		if (in <= 0) {
			fail_errno("splice from the file into the pipe");
			goto out;
		}
		while (in > 0) {
			ssize_t r = splice(p[0], NULL, *fd, NULL, (size_t)in, SPLICE_F_MORE);

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				fail_errno("splice from the pipe into the socket");
				goto out;
			}
			in -= r;
		}
	}
	rc = recv_tok(*fd, 'k');
out:
	free(buf);
	if (f >= 0)
		close(f);
	for (int i = 0; i < 2; i++)
		if (p[i] >= 0)
			close(p[i]);
	return rc;
}

static int splice_out_s(int *fd)
{
	if (sync_s(*fd) || recv_pat(*fd, 52, 2 * MiB))
		return -1;
	return send_tok(*fd, 'k');
}

/* The socket through a pipe: a first MiB read as usual, then splice out of
 * it and read the pipe. */
static int splice_in_c(int *fd)
{
	static unsigned char buf[64 * KiB];
	int p[2], rc = -1;
	size_t done = MiB;

	if (sync_c(*fd) || recv_with(*fd, rx_read, 53, 0, MiB, "read of the first MiB"))
		return -1;
	if (pipe(p) < 0)
		return fail_errno("pipe");
	while (done < 2 * MiB) {
		ssize_t r = splice(*fd, NULL, p[1], NULL, 2 * MiB - done, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				fail("splice: EOF after %zu of %u bytes", done, 2 * MiB);
			else
				fail_errno("splice from the socket into the pipe");
			goto out;
		}
		if ((size_t)r > sizeof(buf)) {
			fail("splice moved %zd bytes, more than the pipe holds", r);
			goto out;
		}
		if (read_all(p[0], buf, (size_t)r, "read of the pipe") ||
		    pat_check(buf, 53, done, (size_t)r, "splice"))
			goto out;
		done += (size_t)r;
	}
	rc = send_tok(*fd, 'k');
out:
	close(p[0]);
	close(p[1]);
	return rc;
}

static int splice_in_s(int *fd)
{
	if (sync_s(*fd) || send_pat(*fd, 53, 2 * MiB))
		return -1;
	return recv_tok(*fd, 'k');
}

/* Two threads splice one connection on the ring into a pipe each, until the
 * end of stream: together they must get every byte once (count and sum). */
#define SPLICE2_TOTAL (4 * MiB)
struct splicer {
	int fd;
	uint64_t bytes, sum;
	int rc;
	char err[sizeof(g_err)];
};

static void *splicer_thread(void *arg)
{
	static _Thread_local unsigned char buf[64 * KiB];
	struct splicer *x = arg;
	int p[2];

	if (pipe(p) < 0) {
		x->rc = fail_errno("pipe");
		goto out;
	}
	for (;;) {
		ssize_t r = splice(x->fd, NULL, p[1], NULL, sizeof(buf), 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			x->rc = fail_errno("splice from the socket into the pipe");
			break;
		}
		if (r == 0)
			break;
		if ((size_t)r > sizeof(buf) || read_all(p[0], buf, (size_t)r, "read of the pipe")) {
			x->rc = fail("splice moved %zd bytes, more than asked or the pipe had", r);
			break;
		}
		x->bytes += (uint64_t)r;
		for (ssize_t i = 0; i < r; i++)
			x->sum += buf[i];
	}
	close(p[0]);
	close(p[1]);
out:
	if (x->rc)
		memcpy(x->err, g_err, sizeof(g_err));
	return NULL;
}

static int splice_threads_c(int *fd)
{
	static unsigned char want[64 * KiB];
	struct splicer x[2] = { { .fd = *fd }, { .fd = *fd } };
	uint64_t sum = 0, bytes;
	pthread_t t[2];

	if (sync_c(*fd) || recv_with(*fd, rx_read, 57, 0, MiB, "read of the first MiB"))
		return -1;
	for (size_t off = MiB; off < MiB + SPLICE2_TOTAL; off += sizeof(want)) {
		pat_fill(want, 57, off, sizeof(want));
		for (size_t i = 0; i < sizeof(want); i++)
			sum += want[i];
	}
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, splicer_thread, &x[i]))
			return fail("pthread_create failed");
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 2; i++)
		if (x[i].rc)
			return fail("%s", x[i].err);
	bytes = x[0].bytes + x[1].bytes;
	if (bytes != SPLICE2_TOTAL || x[0].sum + x[1].sum != sum)
		return fail("two splicing threads got %llu bytes (%llu + %llu) of %u, byte sum %s",
			    (unsigned long long)bytes, (unsigned long long)x[0].bytes,
			    (unsigned long long)x[1].bytes, SPLICE2_TOTAL,
			    x[0].sum + x[1].sum == sum ? "equal" : "differs");
	return send_tok(*fd, 'k');
}

static int splice_threads_s(int *fd)
{
	if (sync_s(*fd) || send_with(*fd, tx_write, 57, 0, MiB + SPLICE2_TOTAL, "write"))
		return -1;
	if (shutdown(*fd, SHUT_WR) < 0)
		return fail_errno("shutdown(SHUT_WR)");
	return recv_tok(*fd, 'k');
}

/* After a first 64 KiB written and read as usual: sendmmsg of three
 * messages at a time, recvmmsg into four buffers. */
#define MMSG_TOTAL (1 * MiB)
static int mmsg_c(int *fd)
{
	static unsigned char buf[3 * 5000];
	static const size_t len[3] = { 1, 4999, 3000 };
	size_t done = 64 * KiB;

	if (sync_c(*fd) || send_with(*fd, tx_write, 54, 0, done, "write of the first 64 KiB"))
		return -1;
	while (done < MMSG_TOTAL) {
		struct iovec v[3];
		struct mmsghdr m[3];
		unsigned n = 0;
		size_t at = 0;
		int r;

		memset(m, 0, sizeof(m));
		for (; n < 3 && done + at < MMSG_TOTAL; n++) {
			size_t l = len[n] < MMSG_TOTAL - done - at ? len[n] : MMSG_TOTAL - done - at;

			pat_fill(buf + at, 54, done + at, l);
			v[n].iov_base = buf + at;
			v[n].iov_len = l;
			m[n].msg_hdr.msg_iov = &v[n];
			m[n].msg_hdr.msg_iovlen = 1;
			at += l;
		}
		r = sendmmsg(*fd, m, n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return fail_errno("sendmmsg");
		for (int i = 0; i < r; i++) {
			if (m[i].msg_len != v[i].iov_len)
				return fail("sendmmsg: message %d sent %u of %zu bytes", i,
					    m[i].msg_len, v[i].iov_len);
			done += m[i].msg_len;
		}
		if (r < (int)n)
			return fail("sendmmsg sent %d of %u messages", r, n);
	}
	return recv_tok(*fd, 'k');
}

static int mmsg_s(int *fd)
{
	static unsigned char buf[4][2000];
	size_t done = 64 * KiB;

	if (sync_s(*fd) || recv_with(*fd, rx_read, 54, 0, done, "read of the first 64 KiB"))
		return -1;
	while (done < MMSG_TOTAL) {
		struct iovec v[4];
		struct mmsghdr m[4];
		int r;

		memset(m, 0, sizeof(m));
		for (int i = 0; i < 4; i++) {
			v[i].iov_base = buf[i];
			v[i].iov_len = sizeof(buf[i]);
			m[i].msg_hdr.msg_iov = &v[i];
			m[i].msg_hdr.msg_iovlen = 1;
		}
		r = recvmmsg(*fd, m, 4, MSG_WAITFORONE, NULL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r ? fail_errno("recvmmsg") : fail("recvmmsg: no message");
		for (int i = 0; i < r; i++) {
			if (m[i].msg_len == 0)
				return fail("recvmmsg: EOF after %zu bytes", done);
			if (pat_check(buf[i], 54, done, m[i].msg_len, "recvmmsg"))
				return -1;
			done += m[i].msg_len;
		}
	}
	return send_tok(*fd, 'k');
}

/* ---- cases: recv flags -------------------------------------------------- */

/* Wait until at least N bytes are waiting (the sender sent them all). */
static int wait_inq(int fd, int n)
{
	int have;

	g_doing = "waiting for FIONREAD to reach the bytes sent";
	while ((have = inq(fd)) < n) {
		if (have < 0)
			return fail_errno("ioctl FIONREAD");
		msleep(2);
	}
	return have;
}

static int peek_c(int *fd)
{
	unsigned char a[200], b[200];
	ssize_t r;

	r = recv(*fd, a, sizeof(a), MSG_PEEK | MSG_DONTWAIT);
	if (r != -1 || (errno != EAGAIN && errno != EWOULDBLOCK))
		return fail("MSG_PEEK|MSG_DONTWAIT on an empty socket: want EAGAIN");
	if (send_tok(*fd, 'g') || wait_inq(*fd, 200) < 0)
		return -1;
	if ((r = recv(*fd, a, 50, MSG_PEEK)) != 50 || pat_check(a, 60, 0, 50, "first peek"))
		return r == 50 ? -1 : fail("first peek of 50: returned %zd", r);
	if ((r = recv(*fd, b, 200, MSG_PEEK)) != 200 || pat_check(b, 60, 0, 200, "second peek"))
		return r == 200 ? -1 : fail("second peek of 200: returned %zd", r);
	if (inq(*fd) != 200)
		return fail("FIONREAD after peeking: %d, want 200", inq(*fd));
	if (recv_pat(*fd, 60, 120))
		return -1;
	if ((r = recv(*fd, a, 200, MSG_PEEK)) != 80 || pat_check(a, 60, 120, 80, "peek after a read"))
		return r == 80 ? -1 : fail("peek after reading 120: returned %zd, want 80", r);
	if (recv_with(*fd, rx_read, 60, 120, 80, "read after peeking"))
		return -1;
	return send_tok(*fd, 'k');
}

static int peek_s(int *fd)
{
	if (recv_tok(*fd, 'g') || send_pat(*fd, 60, 200))
		return -1;
	return recv_tok(*fd, 'k');
}

static int waitall_c(int *fd)
{
	unsigned char *buf = malloc(4 * MiB);
	ssize_t r;
	int rc = -1;

	if (!buf)
		return fail("out of memory");
	if (send_tok(*fd, 'g'))
		goto out;
	if ((r = recv(*fd, buf, 64 * KiB, MSG_WAITALL)) != 64 * KiB) {
		fail("MSG_WAITALL of 64 KiB sent in 16 pieces: returned %zd (%s)", r,
		     r < 0 ? strerror(errno) : "short");
		goto out;
	}
	if (pat_check(buf, 70, 0, 64 * KiB, "MSG_WAITALL"))
		goto out;
	if ((r = recv(*fd, buf, 4 * MiB, MSG_WAITALL)) != 4 * MiB) {
		fail("MSG_WAITALL of 4 MiB: returned %zd", r);
		goto out;
	}
	if (pat_check(buf, 71, 0, 4 * MiB, "MSG_WAITALL of 4 MiB"))
		goto out;
	if ((r = recv(*fd, buf, 100, MSG_WAITALL)) != 10) {
		fail("MSG_WAITALL of 100 with 10 bytes before EOF: returned %zd, want 10", r);
		goto out;
	}
	rc = pat_check(buf, 72, 0, 10, "MSG_WAITALL before EOF");
out:
	free(buf);
	return rc;
}

static int waitall_s(int *fd)
{
	if (recv_tok(*fd, 'g'))
		return -1;
	for (unsigned i = 0; i < 16; i++) {
		if (send_with(*fd, tx_write, 70, i * 4 * KiB, 4 * KiB, "write"))
			return -1;
		msleep(5);
	}
	if (send_pat(*fd, 71, 4 * MiB) || send_pat(*fd, 72, 10))
		return -1;
	if (shutdown(*fd, SHUT_WR) < 0)
		return fail_errno("shutdown");
	return expect_eof(*fd, "at the end");
}

static int dontwait_c(int *fd)
{
	char c;
	long n;
	uint64_t got;

	if (recv(*fd, &c, 1, MSG_DONTWAIT) != -1 || (errno != EAGAIN && errno != EWOULDBLOCK))
		return fail("recv MSG_DONTWAIT on an empty socket: want EAGAIN");
	if (fcntl(*fd, F_GETFL) & O_NONBLOCK)
		return fail("MSG_DONTWAIT left the socket O_NONBLOCK");
	if ((n = fill_until_eagain(*fd, 80, 64 * MiB)) < 0)
		return -1;
	if (fcntl(*fd, F_GETFL) & O_NONBLOCK)
		return fail("send MSG_DONTWAIT left the socket O_NONBLOCK");
	if (shutdown(*fd, SHUT_WR) < 0)
		return fail_errno("shutdown");
	g_doing = "waiting for the byte count";
	if (read_all(*fd, &got, sizeof(got), "read of the count"))
		return -1;
	if (got != (uint64_t)n)
		return fail("the server received %llu bytes, %ld were sent", (unsigned long long)got, n);
	return 0;
}

static int dontwait_s(int *fd)
{
	static unsigned char buf[64 * KiB];
	uint64_t total = 0;
	ssize_t r;

	if (wait_quiet(*fd) < 0)
		return -1;
	g_doing = "reading";
	while ((r = recv(*fd, buf, sizeof(buf), MSG_DONTWAIT)) != 0) {
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd p = { .fd = *fd, .events = POLLIN };

			poll(&p, 1, -1);
			continue;
		}
		if (r < 0)
			return fail_errno("recv MSG_DONTWAIT");
		if (pat_check(buf, 80, total, (size_t)r, "recv MSG_DONTWAIT"))
			return -1;
		total += (uint64_t)r;
	}
	return write_all(*fd, &total, sizeof(total), "write of the count");
}

/* ---- cases: EPIPE and SIGPIPE ------------------------------------------ */

static volatile sig_atomic_t g_sigpipes;
static void on_sigpipe(int sig) { (void)sig; g_sigpipes++; }

/* After the peer closed: returns the errno of the first failing send. */
static int send_until_error(int fd, int flags, int use_write)
{
	char buf[1000] = { 0 };

	for (int i = 0; i < 1000; i++) {
		ssize_t r = use_write ? write(fd, buf, sizeof(buf)) : send(fd, buf, sizeof(buf), flags);

		if (r < 0)
			return errno;
		msleep(2);
	}
	return 0;
}

static int peer_closed(int fd)
{
	struct sigaction sa = { .sa_handler = on_sigpipe };

	sigaction(SIGPIPE, &sa, NULL);
	if (send_tok(fd, 'x'))
		return -1;
	g_doing = "waiting for the peer's close";
	return expect_eof(fd, "after the peer's close");
}

static int nosignal_c(int *fd)
{
	int e;

	if (peer_closed(*fd))
		return -1;
	if ((e = send_until_error(*fd, MSG_NOSIGNAL, 0)) != EPIPE)
		return fail("send MSG_NOSIGNAL to a closed peer: %s, want EPIPE",
			    e ? strerror(e) : "never failed");
	if ((e = send_until_error(*fd, MSG_NOSIGNAL, 0)) != EPIPE)
		return fail("second send MSG_NOSIGNAL: %s, want EPIPE", e ? strerror(e) : "no error");
	if (g_sigpipes)
		return fail("MSG_NOSIGNAL: %d SIGPIPE delivered", (int)g_sigpipes);
	return 0;
}

static int sigpipe_c(int *fd)
{
	int e;

	if (peer_closed(*fd))
		return -1;
	if ((e = send_until_error(*fd, 0, 0)) != EPIPE)
		return fail("send to a closed peer: %s, want EPIPE", e ? strerror(e) : "never failed");
	if (g_sigpipes != 1)
		return fail("send without MSG_NOSIGNAL: %d SIGPIPE, want 1", (int)g_sigpipes);
	if ((e = send_until_error(*fd, 0, 1)) != EPIPE)
		return fail("write to a closed peer: %s, want EPIPE", e ? strerror(e) : "no error");
	if (g_sigpipes != 2)
		return fail("write: %d SIGPIPE in all, want 2", (int)g_sigpipes);
	return 0;
}

static int closer_s(int *fd)
{
	return recv_tok(*fd, 'x');
}

/* ---- cases: poll, ppoll, select, pselect -------------------------------- */

enum { W_POLL, W_PPOLL, W_SELECT, W_PSELECT };

/* Wait on FD for IN (and OUT); returns the ready mask (1 = in, 2 = out, 4 = rdhup). */
static int wait_one(int how, int fd, int out, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDHUP | (out ? POLLOUT : 0) };
	struct timespec ts = { timeout_ms / 1000, (timeout_ms % 1000) * 1000000L };
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	sigset_t mask;
	fd_set rd, wr;
	int r;

	sigemptyset(&mask);
	FD_ZERO(&rd);
	FD_ZERO(&wr);
	FD_SET(fd, &rd);
	if (out)
		FD_SET(fd, &wr);
	switch (how) {
	case W_POLL:
		r = poll(&p, 1, timeout_ms);
		break;
	case W_PPOLL:
		r = ppoll(&p, 1, timeout_ms < 0 ? NULL : &ts, &mask);
		break;
	case W_SELECT:
		r = select(fd + 1, &rd, &wr, NULL, timeout_ms < 0 ? NULL : &tv);
		break;
	default:
		r = pselect(fd + 1, &rd, &wr, NULL, timeout_ms < 0 ? NULL : &ts, &mask);
		break;
	}
	if (r < 0)
		return fail_errno("wait");
	if (how == W_POLL || how == W_PPOLL)
		return r == 0 ? 0 : (p.revents & POLLIN ? 1 : 0) | (p.revents & POLLOUT ? 2 : 0) |
					    (p.revents & POLLRDHUP ? 4 : 0);
	return (FD_ISSET(fd, &rd) ? 1 : 0) | (out && FD_ISSET(fd, &wr) ? 2 : 0);
}

static int waits_c(int fd, int how)
{
	int m;

	if ((m = wait_one(how, fd, 0, 100)) != 0)
		return m < 0 ? -1 : fail("empty socket reported ready (mask %d)", m);
	if ((m = wait_one(how, fd, 1, 100)) != 2)
		return m < 0 ? -1 : fail("idle socket: mask %d, want writable only", m);
	if (send_tok(fd, 'g'))
		return -1;
	g_doing = "waiting for readability";
	if ((m = wait_one(how, fd, 0, -1)) < 0 || !(m & 1))
		return m < 0 ? -1 : fail("no readability after the peer sent (mask %d)", m);
	if (recv_pat(fd, 90, 1000))
		return -1;
	if ((m = wait_one(how, fd, 0, 50)) != 0)
		return m < 0 ? -1 : fail("drained socket reported ready (mask %d)", m);
	if (send_tok(fd, 'h'))
		return -1;
	g_doing = "waiting for the peer's shutdown";
	if ((m = wait_one(how, fd, 0, -1)) < 0 || !(m & 1))
		return m < 0 ? -1 : fail("no readability after the peer's shutdown (mask %d)", m);
	if (how <= W_PPOLL) {
		while (!(m & 4)) {	/* the FIN can follow the readable data */
			if ((m = wait_one(how, fd, 0, -1)) < 0)
				return -1;
			if (!(m & 4)) {
				char c;
				ssize_t r = recv(fd, &c, 1, MSG_DONTWAIT);

				if (r != 0 && !(r < 0 && errno == EAGAIN))
					return fail("unexpected data before the shutdown");
				msleep(1);
			}
		}
	}
	return expect_eof(fd, "after the peer's shutdown");
}

static int waits_s(int *fd)
{
	if (recv_tok(*fd, 'g'))
		return -1;
	msleep(30);
	if (send_pat(*fd, 90, 1000) || recv_tok(*fd, 'h'))
		return -1;
	msleep(30);
	if (shutdown(*fd, SHUT_WR) < 0)
		return fail_errno("shutdown");
	return expect_eof(*fd, "at the end");
}

static int poll_c(int *fd) { return waits_c(*fd, W_POLL); }
static int ppoll_c(int *fd) { return waits_c(*fd, W_PPOLL); }
static int select_c(int *fd) { return waits_c(*fd, W_SELECT); }
static int pselect_c(int *fd) { return waits_c(*fd, W_PSELECT); }

/* ---- cases: epoll ------------------------------------------------------ */

static int ep_add(int ep, int op, int fd, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.u64 = EPOLL_TAG | (unsigned)fd };

	if (epoll_ctl(ep, op, fd, &ev) < 0)
		return fail_errno("epoll_ctl");
	return 0;
}

/* epoll_wait for one event; returns its events, 0 on timeout, -1 on error. */
static int ep_wait1(int ep, int fd, int timeout_ms)
{
	struct epoll_event ev[4];
	int n = epoll_wait(ep, ev, 4, timeout_ms);

	if (n < 0)
		return fail_errno("epoll_wait");
	if (n == 0)
		return 0;
	if (n != 1)
		return fail("epoll_wait: %d events for one fd", n);
	if (ev[0].data.u64 != (EPOLL_TAG | (unsigned)fd))
		return fail("epoll_wait: data 0x%llx, want 0x%llx (data not preserved)",
			    (unsigned long long)ev[0].data.u64,
			    (unsigned long long)(EPOLL_TAG | (unsigned)fd));
	return (int)ev[0].events;
}

static int ep_expect(int ep, int fd, int timeout_ms, uint32_t want, const char *when)
{
	int e;

	g_doing = when;
	if ((e = ep_wait1(ep, fd, timeout_ms)) < 0)
		return -1;
	if (want == 0 && e != 0)
		return fail("%s: events 0x%x, want none", when, e);
	if (want != 0 && ((uint32_t)e & want) != want)
		return fail("%s: events 0x%x, want 0x%x", when, e, want);
	return 0;
}

static int epoll_lt_c(int *fd)
{
	int ep = epoll_create1(EPOLL_CLOEXEC), rc = -1;

	if (ep < 0)
		return fail_errno("epoll_create1");
	if (ep_add(ep, EPOLL_CTL_ADD, *fd, EPOLLIN) ||
	    ep_expect(ep, *fd, 100, 0, "level-triggered, empty") || send_tok(*fd, 'g') ||
	    wait_inq(*fd, 1000) < 0 || ep_expect(ep, *fd, -1, EPOLLIN, "level-triggered, data"))
		goto out;
	if (recv_pat(*fd, 91, 10) || ep_expect(ep, *fd, 0, EPOLLIN, "level-triggered, data left"))
		goto out;
	if (recv_with(*fd, rx_read, 91, 10, 990, "read") ||
	    ep_expect(ep, *fd, 50, 0, "level-triggered, drained"))
		goto out;
	if (ep_add(ep, EPOLL_CTL_MOD, *fd, EPOLLIN | EPOLLOUT) ||
	    ep_expect(ep, *fd, 0, EPOLLOUT, "level-triggered, EPOLLOUT"))
		goto out;
	rc = send_tok(*fd, 'k');
out:
	close(ep);
	return rc;
}

static int sender_s(int *fd, uint64_t seed, size_t n)
{
	if (recv_tok(*fd, 'g') || send_pat(*fd, seed, n))
		return -1;
	return recv_tok(*fd, 'k');
}

static int epoll_lt_s(int *fd) { return sender_s(fd, 91, 1000); }

/* Read until EAGAIN; returns the bytes read. */
static long drain_nb(int fd, uint64_t seed, uint64_t off)
{
	unsigned char buf[4096];
	long total = 0;
	ssize_t r;

	while ((r = read(fd, buf, sizeof(buf))) > 0) {
		if (pat_check(buf, seed, off + (uint64_t)total, (size_t)r, "read"))
			return -1;
		total += r;
	}
	if (r == 0)
		return fail("read: EOF while draining");
	if (errno != EAGAIN && errno != EWOULDBLOCK)
		return fail_errno("read");
	return total;
}

static int epoll_et_c(int *fd)
{
	int ep = epoll_create1(0), rc = -1;
	long n;

	if (ep < 0)
		return fail_errno("epoll_create1");
	if (set_nonblock(*fd, 1) || ep_add(ep, EPOLL_CTL_ADD, *fd, EPOLLIN | EPOLLET) ||
	    send_tok(*fd, 'g') || wait_inq(*fd, 1000) < 0 ||
	    ep_expect(ep, *fd, -1, EPOLLIN, "edge-triggered, first edge"))
		goto out;
	if (recv_pat(*fd, 92, 10) || ep_expect(ep, *fd, 50, 0, "edge-triggered, no new data"))
		goto out;
	if ((n = drain_nb(*fd, 92, 10)) < 0)
		goto out;
	if (n != 990) {
		fail("edge-triggered: drained %ld bytes, want 990", n);
		goto out;
	}
	if (ep_expect(ep, *fd, 50, 0, "edge-triggered, drained") || send_tok(*fd, 'm') ||
	    ep_expect(ep, *fd, -1, EPOLLIN, "edge-triggered, second edge"))
		goto out;
	if (wait_inq(*fd, 500) < 0 || (n = drain_nb(*fd, 92, 1000)) < 0)
		goto out;
	if (n != 500) {
		fail("edge-triggered: second drain %ld bytes, want 500", n);
		goto out;
	}
	if (set_nonblock(*fd, 0) == 0)
		rc = send_tok(*fd, 'k');
out:
	close(ep);
	return rc;
}

static int epoll_et_s(int *fd)
{
	if (recv_tok(*fd, 'g') || send_pat(*fd, 92, 1000) || recv_tok(*fd, 'm'))
		return -1;
	if (send_with(*fd, tx_write, 92, 1000, 500, "write"))
		return -1;
	return recv_tok(*fd, 'k');
}

static int epoll_oneshot_c(int *fd)
{
	int ep = epoll_create1(0), rc = -1;

	if (ep < 0)
		return fail_errno("epoll_create1");
	if (ep_add(ep, EPOLL_CTL_ADD, *fd, EPOLLIN | EPOLLONESHOT) || send_tok(*fd, 'g') ||
	    ep_expect(ep, *fd, -1, EPOLLIN, "one-shot, first report") ||
	    ep_expect(ep, *fd, 100, 0, "one-shot, after the report"))
		goto out;
	if (send_tok(*fd, 'm') || wait_inq(*fd, 2000) < 0 ||
	    ep_expect(ep, *fd, 100, 0, "one-shot, more data before re-arming"))
		goto out;
	if (ep_add(ep, EPOLL_CTL_MOD, *fd, EPOLLIN | EPOLLONESHOT) ||
	    ep_expect(ep, *fd, 0, EPOLLIN, "one-shot, re-armed with data waiting") ||
	    ep_expect(ep, *fd, 50, 0, "one-shot, after the second report"))
		goto out;
	if (recv_pat(*fd, 93, 2000) == 0)
		rc = send_tok(*fd, 'k');
out:
	close(ep);
	return rc;
}

static int epoll_oneshot_s(int *fd)
{
	if (recv_tok(*fd, 'g') || send_pat(*fd, 93, 1000) || recv_tok(*fd, 'm'))
		return -1;
	if (send_with(*fd, tx_write, 93, 1000, 1000, "write"))
		return -1;
	return recv_tok(*fd, 'k');
}

static int epoll_rdhup_c(int *fd)
{
	int ep = epoll_create1(0), rc = -1, e = 0;

	if (ep < 0)
		return fail_errno("epoll_create1");
	if (ep_add(ep, EPOLL_CTL_ADD, *fd, EPOLLIN | EPOLLRDHUP) ||
	    ep_expect(ep, *fd, 50, 0, "EPOLLRDHUP, open") || send_tok(*fd, 'g'))
		goto out;
	g_doing = "waiting for EPOLLRDHUP";
	while (!(e & EPOLLRDHUP))
		if ((e = ep_wait1(ep, *fd, -1)) < 0)
			goto out;
		else if (!(e & EPOLLRDHUP))
			msleep(1);	/* data came before the FIN: leave it unread */
	if (!(e & EPOLLIN)) {
		fail("EPOLLRDHUP without EPOLLIN (events 0x%x)", e);
		goto out;
	}
	if (recv_pat(*fd, 94, 10) || expect_eof(*fd, "after EPOLLRDHUP"))
		goto out;
	rc = send_pat(*fd, 95, 100);	/* the other direction is still open */
out:
	close(ep);
	return rc;
}

static int epoll_rdhup_s(int *fd)
{
	if (recv_tok(*fd, 'g') || send_pat(*fd, 94, 10))
		return -1;
	if (shutdown(*fd, SHUT_WR) < 0)
		return fail_errno("shutdown");
	if (recv_pat(*fd, 95, 100))
		return -1;
	return expect_eof(*fd, "at the end");
}

/*
 * The socket in an epoll set inside another.  first: the outer set gets
 * the inner one first, edge-triggered, and the socket joins the inner set
 * after (the order of the calls does not matter).  Either way a drained
 * inner set is not reported.
 */
static int nested_c(int *fd, bool first, uint64_t seed)
{
	int inner = epoll_create1(0), outer = epoll_create1(0), rc = -1;

	if (inner < 0 || outer < 0) {
		fail_errno("epoll_create1");
		goto out;
	}
	if (first ? ep_add(outer, EPOLL_CTL_ADD, inner, EPOLLIN | EPOLLET) ||
			    ep_add(inner, EPOLL_CTL_ADD, *fd, EPOLLIN)
		  : ep_add(inner, EPOLL_CTL_ADD, *fd, EPOLLIN) ||
			    ep_add(outer, EPOLL_CTL_ADD, inner, EPOLLIN))
		goto out;
	if (ep_expect(outer, inner, 100, 0, "nested, empty") || send_tok(*fd, 'g') ||
	    ep_expect(outer, inner, -1, EPOLLIN, "nested, outer set") ||
	    ep_expect(inner, *fd, 0, EPOLLIN, "nested, inner set"))
		goto out;
	if (recv_pat(*fd, seed, 1000) || ep_expect(outer, inner, 50, 0, "nested, drained"))
		goto out;
	rc = send_tok(*fd, 'k');
out:
	if (inner >= 0)
		close(inner);
	if (outer >= 0)
		close(outer);
	return rc;
}

static int epoll_nested_c(int *fd) { return nested_c(fd, false, 96); }
static int epoll_nested_s(int *fd) { return sender_s(fd, 96, 1000); }
static int epoll_nested_et_c(int *fd) { return nested_c(fd, true, 98); }
static int epoll_nested_et_s(int *fd) { return sender_s(fd, 98, 1000); }

/*
 * A (the socket) in B, then dup2(C, a): A is gone, and B empty.  The
 * number a names C now, and B goes into it, no loop for the kernel: a
 * wait on B neither hangs nor reports anything.
 */
static int epoll_nested_dup2_c(int *fd)
{
	int a = epoll_create1(0), b = epoll_create1(0), c = epoll_create1(0), rc = -1;

	if (ep_add(a, EPOLL_CTL_ADD, *fd, EPOLLIN) || ep_add(b, EPOLL_CTL_ADD, a, EPOLLIN))
		goto out;
	if (dup2(c, a) < 0) {
		fail_errno("dup2");
		goto out;
	}
	if (ep_add(a, EPOLL_CTL_ADD, b, EPOLLIN) || ep_expect(b, a, 200, 0, "dup2 over the inner set, B empty"))
		goto out;
	rc = send_tok(*fd, 'k');
out:
	close(a), close(b), close(c);
	return rc;
}
static int epoll_nested_dup2_s(int *fd) { return recv_tok(*fd, 'k'); }

/* An epoll set with the socket, a pipe and a UNIX socket: each reported alone. */
static int mixed_wait(int ep, int fd, int want_fd, const char *when)
{
	struct epoll_event ev[8];
	int n;

	g_doing = when;
	if ((n = epoll_wait(ep, ev, 8, -1)) < 0)
		return fail_errno("epoll_wait");
	if (n != 1 || ev[0].data.u64 != (EPOLL_TAG | (unsigned)want_fd))
		return fail("%s: %d events, first data 0x%llx, want only fd %d (socket is fd %d)",
			    when, n, (unsigned long long)ev[0].data.u64, want_fd, fd);
	return 0;
}

static int epoll_mixed_c(int *fd)
{
	int ep = epoll_create1(0), pfd[2] = { -1, -1 }, un[2] = { -1, -1 }, rc = -1;
	struct epoll_event ev[8];
	char c;

	if (ep < 0 || pipe(pfd) < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, un) < 0) {
		fail_errno("epoll_create1/pipe/socketpair");
		goto out;
	}
	if (ep_add(ep, EPOLL_CTL_ADD, *fd, EPOLLIN) || ep_add(ep, EPOLL_CTL_ADD, pfd[0], EPOLLIN) ||
	    ep_add(ep, EPOLL_CTL_ADD, un[0], EPOLLIN))
		goto out;
	if (write_all(pfd[1], "p", 1, "pipe write") || mixed_wait(ep, *fd, pfd[0], "pipe only") ||
	    read_all(pfd[0], &c, 1, "pipe read"))
		goto out;
	if (send_tok(*fd, 'g') || wait_inq(*fd, 1000) < 0 ||
	    mixed_wait(ep, *fd, *fd, "socket only") || recv_pat(*fd, 97, 1000))
		goto out;
	if (write_all(un[1], "u", 1, "unix write") || mixed_wait(ep, *fd, un[0], "unix only"))
		goto out;
	if (write_all(pfd[1], "p", 1, "pipe write") || send_tok(*fd, 'h') ||
	    wait_inq(*fd, 1000) < 0)
		goto out;
	if (epoll_wait(ep, ev, 8, -1) != 3) {
		fail("all three ready: epoll_wait did not report 3 fds");
		goto out;
	}
	if (recv_pat(*fd, 98, 1000) == 0)
		rc = send_tok(*fd, 'k');
out:
	for (int i = 0; i < 2; i++) {
		if (pfd[i] >= 0)
			close(pfd[i]);
		if (un[i] >= 0)
			close(un[i]);
	}
	if (ep >= 0)
		close(ep);
	return rc;
}

static int epoll_mixed_s(int *fd)
{
	if (recv_tok(*fd, 'g') || send_pat(*fd, 97, 1000) || recv_tok(*fd, 'h') ||
	    send_pat(*fd, 98, 1000))
		return -1;
	return recv_tok(*fd, 'k');
}

/* The client fills the send buffer: no EPOLLOUT until the server reads. */
#define EPOLLOUT_TOTAL (8 * MiB)
static int epollout_c(int *fd)
{
	int ep = epoll_create1(0), rc = -1, ea = 0;
	long n;

	if (ep < 0)
		return fail_errno("epoll_create1");
	if (set_nonblock(*fd, 1) || ep_add(ep, EPOLL_CTL_ADD, *fd, EPOLLOUT) ||
	    ep_expect(ep, *fd, 0, EPOLLOUT, "EPOLLOUT, empty buffers"))
		goto out;
	if ((n = fill_until_eagain(*fd, 99, EPOLLOUT_TOTAL)) < 0 ||
	    ep_expect(ep, *fd, 0, 0, "EPOLLOUT, send buffer full") ||
	    ep_expect(ep, *fd, -1, EPOLLOUT, "EPOLLOUT, after the peer read"))
		goto out;
	if (send_pat_nb(*fd, 99, (uint64_t)n, EPOLLOUT_TOTAL - (size_t)n, &ea) || set_nonblock(*fd, 0))
		goto out;
	rc = recv_tok(*fd, 'k');
out:
	close(ep);
	return rc;
}

static int epollout_s(int *fd)
{
	if (wait_quiet(*fd) < 0)
		return -1;
	if (recv_pat(*fd, 99, EPOLLOUT_TOTAL))
		return -1;
	return send_tok(*fd, 'k');
}

/* ---- cases: shutdown and close ----------------------------------------- */

static int shut_wr_c(int *fd)
{
	char c = 0;
	int e;

	if (send_pat(*fd, 110, 100 * KiB))
		return -1;
	if (shutdown(*fd, SHUT_WR) < 0)
		return fail_errno("shutdown SHUT_WR");
	if (send(*fd, &c, 1, MSG_NOSIGNAL) != -1 || (e = errno) != EPIPE)
		return fail("send after SHUT_WR: want EPIPE");
	if (recv_pat(*fd, 111, 100 * KiB))
		return -1;
	return expect_eof(*fd, "after the server's close");
}

static int shut_wr_s(int *fd)
{
	if (recv_pat(*fd, 110, 100 * KiB) || expect_eof(*fd, "after the client's SHUT_WR"))
		return -1;
	if (expect_eof(*fd, "a second read after EOF"))
		return -1;
	return send_pat(*fd, 111, 100 * KiB);
}

/* After SHUT_RD with nothing waiting: reads return 0 at once, writes go on. */
static int shut_rd_c(int *fd)
{
	struct pollfd p = { .fd = *fd, .events = POLLIN | POLLRDHUP };
	char c;
	ssize_t r;

	if (recv_pat(*fd, 112, 1000))
		return -1;
	if (shutdown(*fd, SHUT_RD) < 0)
		return fail_errno("shutdown SHUT_RD");
	if ((r = read(*fd, &c, 1)) != 0)
		return fail("read after SHUT_RD: returned %zd (%s), want 0", r,
			    r < 0 ? strerror(errno) : "data");
	if (poll(&p, 1, 0) != 1 || !(p.revents & POLLIN))
		return fail("poll after SHUT_RD: revents 0x%x, want POLLIN", p.revents);
	return send_pat(*fd, 113, 64 * KiB);
}

static int shut_rd_s(int *fd)
{
	if (send_pat(*fd, 112, 1000) || recv_pat(*fd, 113, 64 * KiB))
		return -1;
	return expect_eof(*fd, "after the client's close");
}

/* The client closes with unread data: the server's read gets ECONNRESET. */
static int reset_c(int *fd)
{
	if (send_tok(*fd, 'g') || wait_inq(*fd, 64 * KiB) < 0)
		return -1;
	close(*fd);
	*fd = -1;
	return 0;
}

static int reset_after(int *fd, long nap_ms)
{
	char c;
	ssize_t r;
	int e;

	if (recv_tok(*fd, 'g') || send_pat(*fd, 114, 64 * KiB))
		return -1;
	msleep(nap_ms);
	g_doing = "waiting for the reset";
	if ((r = read(*fd, &c, 1)) != -1 || errno != ECONNRESET)
		return fail("read after the peer closed with unread data: %s, want ECONNRESET",
			    r < 0 ? strerror(errno) : r ? "data" : "EOF");
	if ((e = send_until_error(*fd, MSG_NOSIGNAL, 0)) != EPIPE)
		return fail("send after the reset: %s, want EPIPE", e ? strerror(e) : "no error");
	return 0;
}

static int reset_s(int *fd)
{
	return reset_after(fd, 0);
}

/* The reset is there before the read: the kernel's socket has it too. */
static int reset_late_s(int *fd)
{
	return reset_after(fd, 300);
}

/* ---- cases: dup, fork, exec -------------------------------------------- */

/*
 * From now on fork() fails with EAGAIN: a seccomp filter refuses clone()
 * without CLONE_VM (threads, vfork and the sanitizers' helpers keep it) and
 * sends clone3() back to clone().
 */
static int forbid_fork(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_VM, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EAGAIN),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return fail_errno("seccomp");
	return 0;
}

/* After a fork() that failed the connection is ours alone: a close with unread data resets. */
static int forkfail_c(int *fd)
{
	pid_t pid;

	for (unsigned i = 0; i < 10; i++)
		if (ping(*fd, 0))
			return -1;
	if (forbid_fork())
		return -1;
	if ((pid = fork()) == 0)
		_exit(0);
	if (pid > 0 || errno != EAGAIN)
		return fail("fork under the filter: %s, want EAGAIN",
			    pid > 0 ? "a child" : strerror(errno));
	return reset_c(fd);
}

static int forkfail_s(int *fd)
{
	for (unsigned i = 0; i < 10; i++)
		if (echo(*fd, 0))
			return -1;
	return reset_s(fd);
}

/*
 * A seccomp sandbox like sshd's pre-authentication child: only the calls a
 * network process makes are allowed, any other traps.  The library must make
 * none of its own once the filter is in (a trap records the call's number).
 */
static volatile sig_atomic_t g_trapped = -1;

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (g_trapped < 0)
		g_trapped = si->si_syscall;
}

static int enter_sandbox(void)
{
	static const int allow[] = {
		SYS_read, SYS_write, SYS_readv, SYS_writev, SYS_poll, SYS_ppoll, SYS_futex,
		SYS_exit, SYS_exit_group, SYS_clock_gettime, SYS_clock_nanosleep, SYS_nanosleep,
		SYS_rt_sigreturn, SYS_rt_sigprocmask, SYS_brk, SYS_mmap, SYS_munmap,
		SYS_mprotect, SYS_madvise, SYS_mremap, SYS_getpid, SYS_gettid, SYS_close,
		SYS_restart_syscall, SYS_shutdown, SYS_getrandom, SYS_sigaltstack,
	};
	enum { N = sizeof(allow) / sizeof(allow[0]) };
	struct sock_filter f[2 * N + 2];
	struct sock_fprog prog = { .len = 2 * N + 2, .filter = f };
	struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO };
	unsigned k = 0;

	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
	for (unsigned i = 0; i < N; i++) {
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						      (unsigned)allow[i], 0, 1);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	}
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP);
	if (sigaction(SIGSYS, &sa, NULL) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return fail_errno("seccomp");
	return 0;
}

static int seccomp_c(int *fd)
{
	for (unsigned i = 0; i < 10; i++)
		if (ping(*fd, i))
			return -1;
	if (enter_sandbox())
		return -1;
	for (unsigned i = 10; i < 40; i++)
		if (ping(*fd, i))
			return -1;
	if (g_trapped >= 0)
		return fail("system call %d trapped in the sandbox", (int)g_trapped);
	return 0;
}

static int seccomp_s(int *fd)
{
	for (unsigned i = 0; i < 40; i++)
		if (echo(*fd, i))
			return -1;
	return 0;
}

/*
 * io_uring, through its system calls (as liburing does): an instance made
 * before the connection exists (F_URING), receives done with IORING_OP_RECV.
 * The library cannot see those reads, so the connection must stay TCP.
 */
struct uring {
	int fd;
	unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};
static struct uring g_uring = { .fd = -1 };

/* The rings of instance u->fd, made with params p. */
static int uring_map(struct uring *u, const struct io_uring_params *p)
{
	unsigned char *sq, *cq;
	size_t sq_len, cq_len;

	sq_len = p->sq_off.array + p->sq_entries * sizeof(unsigned);
	cq_len = p->cq_off.cqes + p->cq_entries * sizeof(struct io_uring_cqe);
	sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd,
		  IORING_OFF_SQ_RING);
	cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd,
		  IORING_OFF_CQ_RING);
	u->sqes = mmap(NULL, p->sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || u->sqes == MAP_FAILED)
		return fail_errno("mmap of the io_uring rings");
	u->sq_tail = (unsigned *)(sq + p->sq_off.tail);
	u->sq_mask = (unsigned *)(sq + p->sq_off.ring_mask);
	u->sq_array = (unsigned *)(sq + p->sq_off.array);
	u->cq_head = (unsigned *)(cq + p->cq_off.head);
	u->cq_tail = (unsigned *)(cq + p->cq_off.tail);
	u->cq_mask = (unsigned *)(cq + p->cq_off.ring_mask);
	u->cqes = (struct io_uring_cqe *)(cq + p->cq_off.cqes);
	return 0;
}

static int uring_setup(struct uring *u)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	u->fd = (int)syscall(SYS_io_uring_setup, 4, &p);
	if (u->fd < 0)
		return fail_errno("io_uring_setup");
	return uring_map(u, &p);
}

/* One IORING_OP_RECV of up to len bytes, waited for: its result. */
static ssize_t uring_recv(struct uring *u, int fd, void *buf, size_t len)
{
	unsigned tail = atomic_load_explicit((_Atomic unsigned *)u->sq_tail, memory_order_relaxed);
	unsigned idx = tail & *u->sq_mask, head;
	struct io_uring_sqe *sqe = &u->sqes[idx];
	ssize_t res;

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_RECV;
	sqe->fd = fd;
	sqe->addr = (uint64_t)(uintptr_t)buf;
	sqe->len = (unsigned)len;
	u->sq_array[idx] = idx;
	atomic_store_explicit((_Atomic unsigned *)u->sq_tail, tail + 1, memory_order_release);
	while (syscall(SYS_io_uring_enter, u->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		if (errno != EINTR)
			return fail_errno("io_uring_enter");
	head = atomic_load_explicit((_Atomic unsigned *)u->cq_head, memory_order_relaxed);
	if (head == atomic_load_explicit((_Atomic unsigned *)u->cq_tail, memory_order_acquire))
		return fail("io_uring_enter returned without a completion");
	res = u->cqes[head & *u->cq_mask].res;
	atomic_store_explicit((_Atomic unsigned *)u->cq_head, head + 1, memory_order_release);
	if (res < 0) {
		errno = (int)-res;
		return fail_errno("IORING_OP_RECV");
	}
	return res;
}

/* 1 MiB of pattern pat received with io_uring, then the token 'k' sent. */
static int uring_recv_pat(int fd, int pat)
{
	static unsigned char buf[64 * KiB];
	size_t done = 0;

	while (done < MiB) {
		ssize_t r = uring_recv(&g_uring, fd, buf, sizeof(buf));

		if (r < 0)
			return -1;
		if (r == 0)
			return fail("EOF after %zu of %u bytes", done, MiB);
		if (pat_check(buf, pat, done, (size_t)r, "io_uring receive"))
			return -1;
		done += (size_t)r;
	}
	return send_tok(fd, 'k');
}

/* The server reads 1 MiB with io_uring, the client writes it with write(). */
static int uring_s(int *fd)
{
	return sync_s(*fd) ? -1 : uring_recv_pat(*fd, 55);
}

static int uring_c(int *fd)
{
	if (sync_c(*fd) || send_pat(*fd, 55, MiB))
		return -1;
	return recv_tok(*fd, 'k');
}

/* Whether this process maps a memfd whose name holds what (smc-dmb, smc-rmb). */
static bool mapped(const char *what)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, what) != NULL;
	if (f)
		fclose(f);
	return found;
}

/*
 * Whether the process maps a ring region or an RMB (the connection is on
 * shared memory, soft SMC-D, or on RDMA, soft SMC-R).
 */
static bool region_mapped(void)
{
	return mapped("smc-dmb") || mapped("smc-rmb");
}

/*
 * Under the library: wait until the connection is on shared memory, with
 * nothing written (empty reads collect the daemon's answer).
 */
static int wait_region(int fd)
{
	char c;

	if (!getenv("LD_PRELOAD"))
		return 0;
	for (int i = 0; i < 500 && !region_mapped(); i++) {
		if (recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) >= 0)
			return fail("data before anyone wrote");
		msleep(10);
	}
	return region_mapped() ? 0 : fail("the connection never came on shared memory");
}

/*
 * io_uring_late: the instance comes after the connection is on shared
 * memory, before either end wrote: it stays on TCP for good, and the
 * client runs $SOCKCHECK_PROBE (smcss) at that point.
 */
static int uring_late_s(int *fd)
{
	if (wait_region(*fd) || uring_setup(&g_uring) || send_tok(*fd, 'u'))
		return -1;
	return uring_recv_pat(*fd, 56);
}

/* " ADDR:PORT ", as smcss writes an address column. */
static bool addr_text(const struct sockaddr_in *a, char *out, size_t n)
{
	char ip[INET_ADDRSTRLEN];

	return inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip)) &&
	       (size_t)snprintf(out, n, " %s:%u ", ip, ntohs(a->sin_port)) < n;
}

/*
 * Every descriptor above stdio close-on-exec while a child runs smcss: a
 * connection it inherited would go back to TCP for it (the preload's spawn
 * hook, doc/soft-roce.md section 4), and the case would test less.
 */
struct cloexec_held {
	int n;
	int fd[1024];
};

static bool cloexec_hold(struct cloexec_held *h)
{
	int fl;

	h->n = 0;
	for (int fd = 3; fd < 1024; fd++) {
		if ((fl = fcntl(fd, F_GETFD)) < 0 || (fl & FD_CLOEXEC))
			continue;
		if (fcntl(fd, F_SETFD, fl | FD_CLOEXEC) < 0)
			return false;
		h->fd[h->n++] = fd;
	}
	return true;
}

static void cloexec_release(struct cloexec_held *h)
{
	for (int i = 0; i < h->n; i++) {
		int fl = fcntl(h->fd[i], F_GETFD);

		if (fl >= 0)
			fcntl(h->fd[i], F_SETFD, fl & ~FD_CLOEXEC);
	}
	h->n = 0;
}

/*
 * Whether smcss lists fd's connection as SMCR.  Soft SMC-R maps an end's
 * buffers (smc-rmb) when it sets the connection up, before the connection
 * is on RDMA; the daemon lists it as SMCR once it is.
 */
static bool listed_smcr(int fd)
{
	struct sockaddr_in me, peer;
	socklen_t ml = sizeof(me), pl = sizeof(peer);
	char mine[64], theirs[64], line[512];
	static struct cloexec_held held;
	bool found = false;
	FILE *f = NULL;

	if (getsockname(fd, (struct sockaddr *)&me, &ml) < 0 ||
	    getpeername(fd, (struct sockaddr *)&peer, &pl) < 0 || me.sin_family != AF_INET ||
	    !addr_text(&me, mine, sizeof(mine)) || !addr_text(&peer, theirs, sizeof(theirs)))
		return false;
	if (cloexec_hold(&held))
		f = popen("smcss -a 2>/dev/null", "r");
	while (f && fgets(line, sizeof(line), f))
		found |= strstr(line, mine) && strstr(line, theirs) && strstr(line, " SMCR");
	if (f)
		pclose(f);
	cloexec_release(&held);
	return found;
}

/*
 * With $SOCKCHECK_SETTLE (seconds): before the case, wait that long at
 * most for the connection to come on shared memory (its region mapped) or
 * on RDMA (smcss lists it as SMCR, asked every 200 ms once its buffers
 * are mapped), so that the case runs there from its first byte (a case
 * whose connection stays TCP just starts later).
 */
static void settle_for(int fd, int secs)
{
	int tries = secs * 100;
	char c;

	if (tries <= 0 || !getenv("LD_PRELOAD"))
		return;
	g_doing = "settling";
	for (int i = 0; i < tries && !mapped("smc-dmb"); i++) {
		if (i % 20 == 19 && mapped("smc-rmb") && listed_smcr(fd))
			return;
		/* an empty read offers the connection, and collects the answers */
		if (recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) >= 0)
			return;
		msleep(10);
	}
}

static void settle(int fd)
{
	const char *v = getenv("SOCKCHECK_SETTLE");

	settle_for(fd, v && *v ? atoi(v) : 0);
}

/* Runs $SOCKCHECK_PROBE (smcss), if set, while fd's connection is open. */
static int run_probe(int fd)
{
	const char *probe = getenv("SOCKCHECK_PROBE");
	int fl;

	if (!probe)
		return 0;
	/* the probe must not get the connection: a program without the library would keep it TCP */
	fl = fcntl(fd, F_GETFD);
	if (fl < 0 || fcntl(fd, F_SETFD, fl | FD_CLOEXEC) < 0 || system(probe) != 0 ||
	    fcntl(fd, F_SETFD, fl) < 0)
		return fail("SOCKCHECK_PROBE failed");
	return 0;
}

static int uring_late_c(int *fd)
{
	if (recv_tok(*fd, 'u') || run_probe(*fd))
		return -1;
	if (send_pat(*fd, 56, MiB))
		return -1;
	return recv_tok(*fd, 'k');
}

/*
 * SCM_RIGHTS: the client passes its connection, on the ring, to a process
 * forked before the connection existed (so it inherited nothing), closes
 * its own copy and waits; that process goes on with the stream.
 */
static int g_pass[2] = { -1, -1 };
static bool g_pass_mmsg;        /* sendmmsg and recvmmsg instead of sendmsg and recvmsg */

static int pass_fd(int via, int fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	char byte = 'f';
	struct iovec v = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

	memset(u.buf, 0, sizeof(u.buf));
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	if (g_pass_mmsg) {
		struct mmsghdr mm = { .msg_hdr = m };

		return sendmmsg(via, &mm, 1, 0) == 1 && mm.msg_len == 1 ? 0
			: fail_errno("sendmmsg SCM_RIGHTS");
	}
	return sendmsg(via, &m, 0) == 1 ? 0 : fail_errno("sendmsg SCM_RIGHTS");
}

static int take_fd(int via)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	char byte;
	struct iovec v = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm;
	int fd;

	if (g_pass_mmsg) {
		struct mmsghdr mm = { .msg_hdr = m };

		if (recvmmsg(via, &mm, 1, 0, NULL) != 1 || mm.msg_len != 1)
			return fail_errno("recvmmsg SCM_RIGHTS");
		m = mm.msg_hdr;
	} else if (recvmsg(via, &m, 0) != 1) {
		return fail_errno("recvmsg SCM_RIGHTS");
	}
	cm = CMSG_FIRSTHDR(&m);
	if (!cm || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof(int)))
		return fail("no descriptor came with the message");
	memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	return fd;
}

/*
 * io_uring_taken: the instance comes from a child that made it (with its
 * descriptors closed), taken with pidfd_getfd (the kernel
 * refuses to pass one with SCM_RIGHTS), once the connection is on shared
 * memory and before either end wrote: both ends stay on TCP, as for an
 * instance made here (the client as io_uring_late's).
 */
static int uring_taken_s(int *fd)
{
	struct io_uring_params p;
	int sv[2], status, u = -1, pidfd;
	pid_t pid;

	if (wait_region(*fd))
		return -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return fail_errno("socketpair");
	pid = fork();
	if (pid < 0)
		return fail_errno("fork");
	if (pid == 0) {
		char c;

		/* no copy of the connection here (the runner may hold one too) */
		for (int i = 3; i < 1024; i++)
			if (i != sv[1])
				close(i);
		memset(&p, 0, sizeof(p));
		u = (int)syscall(SYS_io_uring_setup, 4, &p);
		/* the parent takes it, then lets us go */
		_exit(u < 0 || write(sv[1], &u, sizeof(u)) != sizeof(u) ||
		      write(sv[1], &p, sizeof(p)) != sizeof(p) || read(sv[1], &c, 1) != 1);
	}
	close(sv[1]);
	if (read(sv[0], &u, sizeof(u)) != sizeof(u) || read(sv[0], &p, sizeof(p)) != sizeof(p))
		return fail("the child made no io_uring instance");
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	g_uring.fd = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, u, 0);
	if (g_uring.fd < 0)
		return fail_errno("pidfd_getfd of the child's io_uring instance");
	close(pidfd);
	if (write(sv[0], "x", 1) != 1 || waitpid(pid, &status, 0) != pid || status)
		return fail("the child that made the io_uring instance failed");
	close(sv[0]);
	if (uring_map(&g_uring, &p) || send_tok(*fd, 'u'))
		return -1;
	return uring_recv_pat(*fd, 56);
}

static bool g_pass_back;        /* the child passes the connection back (fdpass_back) */
static bool g_pass_pidfd;       /* the child takes the connection with pidfd_getfd */

/*
 * pidfd_getfd: the other process takes the connection out of its parent
 * (pidfd_getfd(2)) and goes on with it while the parent, which has read
 * the first MiB, keeps its copy (idle) until the other process is done.
 */
static int pidfd_take(void)
{
	int target, pidfd, fd;

	g_doing = "taking the connection with pidfd_getfd";
	if (read(g_pass[1], &target, sizeof(target)) != (ssize_t)sizeof(target))
		return fail_errno("read of the fd number");
	pidfd = pidfd_open(getppid(), 0);
	if (pidfd < 0)
		return fail_errno("pidfd_open");
	fd = pidfd_getfd(pidfd, target, 0);
	close(pidfd);
	if (fd < 0)
		return fail_errno("pidfd_getfd");
	/* the parent keeps its copy until we are done, idle: we start where it stopped */
	if (write(g_pass[1], "t", 1) != 1)
		return fail_errno("write");
	return fd;
}

/*
 * fdpass_back: the other process names the connection twice (dup), passes
 * it back and ends without closing either: its exit must not end the
 * registration the first process needs to take the connection back.
 */
static int fdpass_back_child(int fd)
{
	g_doing = "passing the connection back, named twice";
	if (dup(fd) < 0)
		return fail_errno("dup");
	return pass_fd(g_pass[1], fd);
}

/* The process that takes the connection over: started before connect(). */
static int fdpass_child(void)
{
	int fd = g_pass_pidfd ? pidfd_take() : take_fd(g_pass[1]);

	if (fd < 0)
		return -1;
	if (g_pass_back)
		return fdpass_back_child(fd);
	g_doing = "going on with the connection it was passed";
	if (send_pat(fd, 58, MiB) || recv_tok(fd, 'k'))
		return -1;
	return close(fd) < 0 ? fail_errno("close") : 0;
}

/* The client's first MiB each way, before another process gets the connection. */
static int pass_exchange(int fd)
{
	static unsigned char buf[MiB];

	return sync_c(fd) || send_pat(fd, 56, MiB) ||
	       read_all(fd, buf, MiB, "read of the answer") || pat_check(buf, 57, 0, MiB, "answer")
		       ? -1 : 0;
}

/* The other process (F_PASS_CHILD) ended well. */
static int pass_wait(void)
{
	int st;

	g_doing = "waiting for the process that got the connection";
	while (wait(&st) < 0)
		if (errno != EINTR)
			return fail_errno("wait");
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		return fail("the process that got the connection failed (status 0x%x)", st);
	return 0;
}

static int fdpass_c(int *fd)
{
	if (pass_exchange(*fd) || pass_fd(g_pass[0], *fd))
		return -1;
	close(*fd);
	*fd = -1;
	return pass_wait();
}

static int fdpass_back_c(int *fd)
{
	if (pass_exchange(*fd) || pass_fd(g_pass[0], *fd))
		return -1;
	close(*fd);
	*fd = -1;
	if (pass_wait())
		return -1;
	*fd = take_fd(g_pass[0]);
	if (*fd < 0)
		return -1;
	g_doing = "going on with the connection it got back";
	return send_pat(*fd, 58, MiB) || recv_tok(*fd, 'k') ? -1 : 0;
}

static int pidfd_getfd_c(int *fd)
{
	char c;

	if (pass_exchange(*fd))
		return -1;
	g_doing = "letting the other process take the connection";
	if (write(g_pass[0], fd, sizeof(*fd)) != (ssize_t)sizeof(*fd) || read(g_pass[0], &c, 1) != 1)
		return fail("the other process did not take the connection");
	if (pass_wait())
		return -1;
	close(*fd);
	*fd = -1;
	return 0;
}

static int fdpass_mmsg_c(int *fd)
{
	g_pass_mmsg = true;
	return fdpass_c(fd);
}

static int fdpass_s(int *fd)
{
	static unsigned char buf[MiB];

	if (sync_s(*fd) || read_all(*fd, buf, MiB, "read of the first MiB") ||
	    pat_check(buf, 56, 0, MiB, "first MiB") || send_pat(*fd, 57, MiB) ||
	    read_all(*fd, buf, MiB, "read of what the other process sent") ||
	    pat_check(buf, 58, 0, MiB, "from the other process") || send_tok(*fd, 'k'))
		return -1;
	return expect_eof(*fd, "after the other process closed");
}

/*
 * MSG_ZEROCOPY: each send's completion comes on the socket's error queue,
 * from the kernel's TCP path.  zerocopy: SO_ZEROCOPY before connect();
 * zerocopy_late: after the connection is up, where SMC refuses it
 * (EOPNOTSUPP) and the sends are plain; the error queue is never the stream.
 */
#define ZC_CHUNK (64 * KiB)

/* Completions until sends 0..n-1 are all done. */
static int zc_completions(int fd, uint32_t n)
{
	uint32_t done = 0;

	while (done < n) {
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(sizeof(struct sock_extended_err)) + 64];
		} u;
		struct msghdr m = { .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
		struct pollfd p = { .fd = fd, .events = 0 };
		struct cmsghdr *cm;
		struct sock_extended_err ee;

		if (recvmsg(fd, &m, MSG_ERRQUEUE) < 0) {
			if (errno != EAGAIN && errno != EINTR)
				return fail_errno("recvmsg MSG_ERRQUEUE");
			if (poll(&p, 1, -1) < 0 && errno != EINTR)
				return fail_errno("poll for POLLERR");
			continue;
		}
		for (cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
			if (cm->cmsg_len < CMSG_LEN(sizeof(ee)))
				continue;
			memcpy(&ee, CMSG_DATA(cm), sizeof(ee));
			if (ee.ee_origin != SO_EE_ORIGIN_ZEROCOPY)
				return fail("error queue: origin %u, want zerocopy", ee.ee_origin);
			if (ee.ee_info != done)
				return fail("completion of sends %u..%u, want from %u", ee.ee_info,
					    ee.ee_data, done);
			done = ee.ee_data + 1;
		}
	}
	return 0;
}

static int zc_send(int fd, bool zc)
{
	static unsigned char buf[MiB];
	uint32_t sends = 0;

	pat_fill(buf, 59, 0, MiB);
	for (size_t off = 0; off < MiB; off += ZC_CHUNK) {
		if (send(fd, buf + off, ZC_CHUNK, zc ? MSG_ZEROCOPY : 0) != ZC_CHUNK)
			return fail_errno(zc ? "send MSG_ZEROCOPY" : "send");
		sends++;
	}
	return zc ? zc_completions(fd, sends) : 0;
}

static int zerocopy_c(int *fd)
{
	if (sync_c(*fd) || zc_send(*fd, true))
		return -1;
	return recv_tok(*fd, 'k');
}

static int zerocopy_late_c(int *fd)
{
	static const int one = 1;
	char c;
	bool zc = true;

	if (sync_c(*fd))
		return -1;
	if (setsockopt(*fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)) < 0) {
		if (errno != EOPNOTSUPP)
			return fail_errno("setsockopt SO_ZEROCOPY");
		zc = false;
	}
	/* the server's token is there now: the error queue must not return it */
	if (recv_tok(*fd, 'c'))
		return -1;
	if (send_tok(*fd, 'd'))
		return -1;
	while (recv(*fd, &c, 1, MSG_PEEK) < 0)
		if (errno != EINTR)
			return fail_errno("recv MSG_PEEK");
	if (recv(*fd, &c, 1, MSG_ERRQUEUE | MSG_DONTWAIT) >= 0 || errno != EAGAIN)
		return fail("recv MSG_ERRQUEUE with nothing queued: got %s, want EAGAIN",
			    errno == EAGAIN ? "a byte" : strerror(errno));
	if (recv_tok(*fd, 'e') || zc_send(*fd, zc))
		return -1;
	return recv_tok(*fd, 'k');
}

static int zc_recv(int fd)
{
	static unsigned char buf[MiB];

	if (read_all(fd, buf, MiB, "read") || pat_check(buf, 59, 0, MiB, "stream"))
		return -1;
	return send_tok(fd, 'k');
}

static int zerocopy_s(int *fd)
{
	return sync_s(*fd) ? -1 : zc_recv(*fd);
}

static int zerocopy_late_s(int *fd)
{
	if (sync_s(*fd) || send_tok(*fd, 'c') || recv_tok(*fd, 'd') || send_tok(*fd, 'e'))
		return -1;
	return zc_recv(*fd);
}

static int dup_c(int *fd)
{
	int n;

	if (ping(*fd, 0))
		return -1;
	/* dup, dup2, dup3, F_DUPFD, F_DUPFD_CLOEXEC, each closing the old fd */
	for (unsigned i = 1; i <= 5; i++) {
		switch (i) {
		case 1: n = dup(*fd); break;
		case 2: n = dup2(*fd, 200); break;
		case 3: n = dup3(*fd, 201, O_CLOEXEC); break;
		case 4: n = fcntl(*fd, F_DUPFD, 300); break;
		default: n = fcntl(*fd, F_DUPFD_CLOEXEC, 400); break;
		}
		if (n < 0)
			return fail("dup variant %u: %s", i, strerror(errno));
		close(*fd);
		*fd = n;
		if (ping(*fd, i))
			return fail("through dup variant %u: %s", i, g_err);
	}
	/* two fds of one socket used in turn */
	if ((n = dup(*fd)) < 0)
		return fail_errno("dup");
	if (send_pat(n, 106, MSG) || recv_pat(*fd, 206, MSG)) {
		close(n);
		return -1;
	}
	close(n);
	return 0;
}

static int dup_s(int *fd)
{
	for (unsigned i = 0; i <= 6; i++)
		if (echo(*fd, i))
			return -1;
	return 0;
}

static int child_status(pid_t pid, const char *what)
{
	int st;

	g_doing = what;
	if (waitpid(pid, &st, 0) < 0)
		return fail_errno("waitpid");
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return fail("%s: status 0x%x", what, st);
	return 0;
}

/* A forked child of a case ends, its failure said on stdout (which the parent's report shares). */
static _Noreturn void child_end(int failed)
{
	if (failed) {
		printf("%s: %s: %s\n", g_case, g_role, g_err);
		fflush(stdout);
		_exit(1);
	}
	_exit(0);
}

static int fork_c(int *fd)
{
	for (unsigned i = 0; i < 6; i++)
		if (ping(*fd, i))
			return -1;
	return expect_eof(*fd, "after the serving child exited");
}

/* accept-then-fork: the child serves, the parent closes its copy at once. */
/* Accept-then-fork: the child echoes (after waiting for the ring if ring_first), the parent closes its copy. */
static int serve_forked(int *fd, bool ring_first)
{
	pid_t pid = fork();

	if (pid < 0)
		return fail_errno("fork");
	if (pid == 0) {
		alarm(watchdog_secs());
		if (ring_first) {
			settle_for(*fd, 15);
			if (send_tok(*fd, 's'))
				_exit(1);
		}
		for (unsigned i = 0; i < 6; i++)
			if (echo(*fd, i))
				_exit(1);
		_exit(0);
	}
	close(*fd);
	*fd = -1;
	return child_status(pid, "the serving child");
}

static int fork_s(int *fd)
{
	return serve_forked(fd, false);
}

/*
 * A server that forks at accept() and closes its copy (rsync's daemon,
 * PostgreSQL): the child's end is its own, and may come on RDMA (or shared
 * memory) even though the parent held it when it was new.  The child waits
 * for that, then echoes; the client starts once the child says so.
 */
static int fork_accept_s(int *fd)
{
	return serve_forked(fd, true);
}

static int fork_accept_c(int *fd)
{
	if (recv_tok(*fd, 's'))
		return -1;
	return fork_c(fd);
}

/*
 * A server that changes its credentials mid-connection (setgid to its own
 * group: rsync's daemon and sshd do, in the child serving a connection):
 * the RDMA device it opened refuses its posts from then on, so its end goes
 * back to TCP first; every byte arrives either way.
 */
static int creds_late_by(int *fd, int (*change)(void), const char *what)
{
	settle_for(*fd, 15);
	if (send_tok(*fd, 's'))
		return -1;
	for (unsigned i = 0; i < 6; i++) {
		if (i == 3 && change() < 0)
			return fail_errno(what);
		if (echo(*fd, i))
			return -1;
	}
	return 0;
}

static int own_gid(void)
{
	return setgid(getgid());
}

static int creds_late_s(int *fd)
{
	return creds_late_by(fd, own_gid, "setgid");
}

/* Any change of credentials, not only of ids: a capability bit (prctl). */
static int keep_caps(void)
{
	return prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0);
}

static int creds_prctl_s(int *fd)
{
	return creds_late_by(fd, keep_caps, "prctl(PR_SET_KEEPCAPS)");
}

/*
 * The last holder ends with _exit() and unread data, as a forked server's
 * child may: the kernel's close of a socket with unread data is a reset.
 * The parent lets go of its copy first and says so through a pipe.
 */
static int exit_unread_c(int *fd)
{
	char c;
	ssize_t r;

	for (unsigned i = 0; i < 6; i++)
		if (ping(*fd, i))
			return -1;
	if (send_pat(*fd, 115, 64 * KiB))
		return -1;
	g_doing = "waiting for the reset";
	if ((r = read(*fd, &c, 1)) != -1 || errno != ECONNRESET)
		return fail("read after the peer's _exit() with unread data: %s, want ECONNRESET",
			    r < 0 ? strerror(errno) : r ? "data" : "EOF");
	return 0;
}

static int exit_unread_s(int *fd)
{
	int p[2];
	pid_t pid;
	char c;

	for (unsigned i = 0; i < 6; i++)
		if (echo(*fd, i))
			return -1;
	if (pipe(p))
		return fail_errno("pipe");
	pid = fork();
	if (pid < 0)
		return fail_errno("fork");
	if (pid == 0) {
		alarm(watchdog_secs());
		close(p[1]);
		if (read(p[0], &c, 1) != 0 || wait_inq(*fd, 64 * KiB) < 0)
			_exit(1);
		_exit(0);
	}
	close(p[0]);
	close(*fd);
	*fd = -1;
	close(p[1]);
	return child_status(pid, "the child that ends with _exit()");
}

/*
 * The client writes, closes and its process ends, while the server has
 * read nothing: TCP keeps the bytes for a reader that comes late.  On soft
 * SMC-R the client's link group ends with its process (its DELETE LINK,
 * or the server's TEST LINK later); the bytes are in the server's RMB and
 * must be read all, then the end, however late (a reset lost them).  The
 * server reads once the client's close is there and CLOSED_GONE_WAIT_MS
 * later, time for the client's process to end (s8.sh looks in the
 * server's log for its links' end).
 */
#define CLOSED_GONE_BYTES (32 * KiB)
#define CLOSED_GONE_WAIT_MS 8000

/* The client's half: n bytes of pattern seed, then close (the process ends after the case). */
static int write_and_close_c(int *fd, uint64_t seed, size_t n)
{
	if (sync_c(*fd) || send_pat(*fd, seed, n))
		return -1;
	close(*fd);
	*fd = -1;
	return 0;
}

static int closed_then_gone_c(int *fd)
{
	return write_and_close_c(fd, 117, CLOSED_GONE_BYTES);
}

static int closed_then_gone_s(int *fd)
{
	struct pollfd p = { .fd = *fd, .events = POLLRDHUP };

	if (sync_s(*fd))
		return -1;
	g_doing = "poll() for the client's close";
	while (!(p.revents & (POLLRDHUP | POLLHUP)))
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			return fail_errno("poll");
	msleep(CLOSED_GONE_WAIT_MS);
	if (recv_pat(*fd, 117, CLOSED_GONE_BYTES))
		return -1;
	return expect_eof(*fd, "after the bytes of a client that closed and ended");
}

/*
 * The client writes more than the server's buffers hold, closes and its
 * process ends while the server sleeps: TCP's kernel keeps sending after
 * the process is gone, so a server that reads SLEEPER_NAP_MS later still
 * gets every byte, then the end.
 */
#define SLEEPER_BYTES (200 * KiB)
#define SLEEPER_NAP_MS 8000

static int exit_sleeping_peer_c(int *fd)
{
	return write_and_close_c(fd, 118, SLEEPER_BYTES);
}

static int exit_sleeping_peer_s(int *fd)
{
	if (sync_s(*fd))
		return -1;
	g_doing = "asleep while the client writes and ends";
	msleep(SLEEPER_NAP_MS);
	if (recv_pat(*fd, 118, SLEEPER_BYTES))
		return -1;
	return expect_eof(*fd, "after the bytes of a client that ended while we slept");
}

/*
 * The connection goes back to TCP while the server is idle in poll() for
 * input: on soft SMC-R the client's fork() says BACK with the server's
 * 192 KiB unconsumed (its RMB full, the rest in the server's send buffer),
 * and the server's end must send them again by TCP through kernel buffers
 * of a few KiB, as room comes, though its program asked poll() for input
 * only.
 */
#define IDLE_PEER_BYTES (192 * KiB)

static int tiny_buf(int fd, int opt)
{
	int v = 4096;

	if (setsockopt(fd, SOL_SOCKET, opt, &v, sizeof(v)))
		return fail_errno(opt == SO_SNDBUF ? "setsockopt SO_SNDBUF" : "setsockopt SO_RCVBUF");
	return 0;
}

static int idle_peer_c(int *fd)
{
	pid_t pid;
	int n = 0;

	if (sync_c(*fd) || tiny_buf(*fd, SO_RCVBUF))
		return -1;
	g_doing = "waiting for the server's bytes to arrive";
	while (ioctl(*fd, FIONREAD, &n) == 0 && n == 0)
		msleep(5);
	msleep(300);            /* the server's writes are done, or wait for our reads */
	pid = fork();
	if (pid < 0)
		return fail_errno("fork");
	if (pid == 0)
		_exit(0);
	if (child_status(pid, "the child") || recv_pat(*fd, 116, IDLE_PEER_BYTES) ||
	    send_tok(*fd, 'd') || recv_tok(*fd, 'e'))
		return -1;
	return expect_eof(*fd, "at the end");
}

static int idle_peer_s(int *fd)
{
	struct pollfd p = { .fd = *fd, .events = POLLIN };

	if (sync_s(*fd) || tiny_buf(*fd, SO_SNDBUF) || send_pat(*fd, 116, IDLE_PEER_BYTES))
		return -1;
	g_doing = "poll() for input while the client reads";
	while (poll(&p, 1, -1) < 0)
		if (errno != EINTR)
			return fail_errno("poll");
	return recv_tok(*fd, 'd') || send_tok(*fd, 'e') ? -1 : 0;
}


/*
 * After fork both processes keep the socket and write to it at once, each
 * its own 16-byte records.  TCP keeps no write whole against another's: a
 * write that waits for room in the send buffer lets the other's in between
 * its pieces (tcp_sendmsg() sleeps unlocked), so every byte names its
 * writer in its top bit and the reader checks each writer's bytes as one
 * stream: none lost, doubled, altered or out of its order.
 */
#define FW_RECS 20000
#define FW_REC 16
#define FW_BYTES (FW_RECS * FW_REC)

static unsigned char fw_byte(unsigned who, uint32_t k)
{
	return (unsigned char)(who << 7 | ((k * 2654435761u) >> 25));
}

static int fw_write(int fd, unsigned who)
{
	unsigned char rec[FW_REC];

	for (uint32_t k = 0; k < FW_BYTES; k += FW_REC) {
		for (unsigned i = 0; i < FW_REC; i++)
			rec[i] = fw_byte(who, k + i);
		if (write_all(fd, rec, sizeof(rec), "write of a record"))
			return -1;
	}
	return 0;
}

static int fork_writers_s(int *fd)
{
	pid_t pid;

	for (unsigned i = 0; i < 6; i++)
		if (echo(*fd, i))
			return -1;
	if (recv_tok(*fd, 'g'))
		return -1;
	pid = fork();
	if (pid < 0)
		return fail_errno("fork");
	if (pid == 0) {
		alarm(watchdog_secs());
		_exit(fw_write(*fd, 1) ? 1 : 0);
	}
	if (fw_write(*fd, 0))
		return -1;
	close(*fd);
	*fd = -1;
	return child_status(pid, "the second writer");
}

static int fork_writers_c(int *fd)
{
	uint32_t next[2] = { 0, 0 };
	unsigned char buf[4096];

	/* past the pairing threshold first, so that the ring is in use */
	for (unsigned i = 0; i < 6; i++)
		if (ping(*fd, i))
			return -1;
	if (send_tok(*fd, 'g'))
		return -1;
	g_doing = "reading the bytes of two writers";
	for (;;) {
		ssize_t n = recv(*fd, buf, sizeof(buf), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail_errno("recv");
		if (n == 0)
			break;
		for (ssize_t i = 0; i < n; i++) {
			unsigned who = buf[i] >> 7;

			if (next[who] == FW_BYTES || buf[i] != fw_byte(who, next[who]))
				return fail("byte %u: 0x%02x, want writer %u's byte %u (0x%02x)",
					    next[0] + next[1], buf[i], who, next[who],
					    next[who] == FW_BYTES ? 0 : fw_byte(who, next[who]));
			next[who]++;
		}
	}
	if (next[0] != FW_BYTES || next[1] != FW_BYTES)
		return fail("end of the stream after %u and %u bytes of the writers, want %u each",
			    next[0], next[1], FW_BYTES);
	return 0;
}

/*
 * A server that forks right after accept() and whose two processes both
 * write over TCP before the client has looked at its connection (so before
 * either can cut over); the client looks, and they go on taking turns.  The
 * cut-over's fence must count what both wrote.
 */
#define FEW_REC (64 * KiB)
#define FEW_RECS 6

/* Record i of the stream, written by the process whose turn it is. */
static int few_turns(int fd, int turn_in, int turn_out, unsigned first, unsigned last, bool wait_go)
{
	for (unsigned i = first; i <= last; i += 2) {
		char t;

		if (i > 0 && read_all(turn_in, &t, 1, "turn"))
			return -1;
		if (i == 2 && wait_go && recv_tok(fd, 'g'))
			return -1;
		if (send_with(fd, tx_write, 61, (uint64_t)i * FEW_REC, FEW_REC, "write") ||
		    write(turn_out, "t", 1) != 1)
			return fail_errno("write of a record or a turn");
	}
	return 0;
}

static int fork_early_s(int *fd)
{
	int p2c[2], c2p[2], rc;
	pid_t pid;

	if (pipe(p2c) < 0 || pipe(c2p) < 0)
		return fail_errno("pipe");
	pid = fork();
	if (pid < 0)
		return fail_errno("fork");
	if (pid == 0) {
		alarm(watchdog_secs());
		_exit(few_turns(*fd, p2c[0], c2p[1], 1, FEW_RECS - 1, false) ? 1 : 0);
	}
	rc = few_turns(*fd, c2p[0], p2c[1], 0, FEW_RECS - 2, true);
	if (!rc)
		rc = recv_tok(*fd, 'k');
	close(*fd);
	*fd = -1;
	return rc ? rc : child_status(pid, "the second writer");
}

static int fork_early_c(int *fd)
{
	static unsigned char buf[FEW_REC * FEW_RECS];
	struct timespec nap = { .tv_sec = 0, .tv_nsec = 300000000 };

	/* no call on the connection until both server processes wrote */
	nanosleep(&nap, NULL);
	if (read_all(*fd, buf, 2 * FEW_REC, "read of the first two records") || send_tok(*fd, 'g') ||
	    read_all(*fd, buf + 2 * FEW_REC, (FEW_RECS - 2) * FEW_REC, "read of the rest") ||
	    pat_check(buf, 61, 0, sizeof(buf), "records of two writers"))
		return -1;
	return send_tok(*fd, 'k');
}

/*
 * Two processes share the client's end: the child sleeps in select() for
 * data while the parent only checks, in a loop, that the socket is
 * writable (rsync's generator and receiver).  The parent's checks must not
 * take the wake-up meant for the child (it slept until its timeout before).
 */
static int shared_wait_c(int *fd)
{
	struct timespec nap = { .tv_sec = 0, .tv_nsec = 1000000 };
	pid_t pid;
	int st;

	if (sync_c(*fd))
		return -1;
	pid = fork();
	if (pid < 0)
		return fail_errno("fork");
	if (pid == 0) {
		fd_set rd;

		alarm(watchdog_secs());
		FD_ZERO(&rd);
		FD_SET(*fd, &rd);
		if (select(*fd + 1, &rd, NULL, NULL, NULL) != 1 || recv_pat(*fd, 62, 10) ||
		    send_tok(*fd, 'z'))
			_exit(1);
		_exit(0);
	}
	if (send_tok(*fd, 'f'))
		return -1;
	g_doing = "checking writability while the other process waits to read";
	while (waitpid(pid, &st, WNOHANG) == 0) {
		fd_set wr;
		struct timeval zero = { 0, 0 };

		FD_ZERO(&wr);
		FD_SET(*fd, &wr);
		if (select(*fd + 1, NULL, &wr, NULL, &zero) < 0)
			return fail_errno("select for writing");
		nanosleep(&nap, NULL);
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		return fail("the reading process failed (status 0x%x)", st);
	return 0;
}

static int shared_wait_s(int *fd)
{
	struct timespec later = { .tv_sec = 0, .tv_nsec = 300000000 };

	if (sync_s(*fd) || recv_tok(*fd, 'f'))
		return -1;
	nanosleep(&later, NULL);          /* the reader is asleep by now */
	if (send_pat(*fd, 62, 10))
		return -1;
	return recv_tok(*fd, 'z');
}

/*
 * Cases with more than one connection (F_MORE_CONNS): the server keeps
 * listening, the client knows where it connected.
 */
static int g_lfd = -1;
static struct sockaddr_in g_server;

static int more_conns_c(int *c, int n)
{
	for (int i = 0; i < n; i++) {
		c[i] = socket(AF_INET, SOCK_STREAM, 0);
		if (c[i] < 0)
			return fail_errno("socket of another connection");
		if (connect(c[i], (struct sockaddr *)&g_server, sizeof(g_server)) < 0)
			return fail_errno("connect of another connection");
		settle(c[i]);
	}
	return 0;
}

static int more_conns_s(int *c, int n)
{
	for (int i = 0; i < n; i++) {
		c[i] = accept(g_lfd, NULL, NULL);
		if (c[i] < 0)
			return fail_errno("accept of another connection");
		settle(c[i]);
	}
	return 0;
}

/*
 * A client with a connection on RDMA forks; its child changes its
 * credentials (to its own group), then opens a connection of its own.  The
 * devices the child opens are opened with the credentials it has, so that
 * connection comes on RDMA as its parent's did (a child's credential change
 * is not its parent's).
 */
static int creds_child_of(bool parent_rdma)
{
	int c = -1, rc = -1;

	g_role = "client's child";
	if (setgid(getgid()) < 0)
		return fail_errno("setgid");
	if (more_conns_c(&c, 1))
		return -1;
	settle_for(c, 15);
	if (parent_rdma && !listed_smcr(c)) {
		fail("its own connection after its credential change is not on RDMA as its parent's");
		goto out;
	}
	for (unsigned i = 0; i < 6; i++)
		if (ping(c, i))
			goto out;
	rc = 0;
out:
	close(c);
	return rc;
}

static int creds_child_c(int *fd)
{
	bool parent_rdma;
	pid_t pid;

	settle_for(*fd, 15);
	parent_rdma = listed_smcr(*fd);
	pid = fork();
	if (pid < 0)
		return fail_errno("fork");
	if (pid == 0) {
		alarm(watchdog_secs());
		child_end(creds_child_of(parent_rdma));
	}
	if (child_status(pid, "the child that changed its credentials"))
		return -1;
	for (unsigned i = 0; i < 3; i++)
		if (ping(*fd, i))
			return -1;
	return 0;
}

static int creds_child_s(int *fd)
{
	int c = -1, rc = -1;

	settle_for(*fd, 15);
	if (more_conns_s(&c, 1))
		return -1;
	for (unsigned i = 0; i < 6; i++)
		if (echo(c, i))
			goto out;
	for (unsigned i = 0; i < 3; i++)
		if (echo(*fd, i))
			goto out;
	rc = 0;
out:
	close(c);
	return rc;
}

/*
 * fork_many: a client forks with four connections, each with bytes of the
 * server's it has not read; the child reads the rest of each (on soft
 * SMC-R every end goes back to TCP at the fork, all at once, and the
 * server sends those bytes again by TCP).
 */
#define MANY_CONNS 4
#define MANY_BYTES 8192
#define MANY_READ 1024

static int fork_many_child(const int *c)
{
	g_role = "client's child";
	for (int i = 0; i < MANY_CONNS; i++)
		if (recv_with(c[i], rx_read, 70 + (uint64_t)i, MANY_READ, MANY_BYTES - MANY_READ,
			      "the child's read of the rest") ||
		    send_tok(c[i], 'k'))
			return -1;
	return 0;
}

static int fork_many_c(int *fd)
{
	int c[MANY_CONNS] = { *fd, -1, -1, -1 }, rc = -1;
	pid_t pid;

	if (more_conns_c(c + 1, MANY_CONNS - 1))
		goto out;
	for (int i = 0; i < MANY_CONNS; i++)
		if (sync_c(c[i]))
			goto out;
	for (int i = 0; i < MANY_CONNS; i++)
		if (recv_with(c[i], rx_read, 70 + (uint64_t)i, 0, MANY_READ, "read of the first KiB"))
			goto out;
	pid = fork();
	if (pid < 0) {
		fail_errno("fork");
		goto out;
	}
	if (pid == 0)
		child_end(fork_many_child(c));
	rc = child_status(pid, "the child that read the rest");
out:
	for (int i = 1; i < MANY_CONNS; i++)
		if (c[i] >= 0)
			close(c[i]);
	return rc;
}

static int fork_many_s(int *fd)
{
	int c[MANY_CONNS] = { *fd, -1, -1, -1 }, rc = -1;

	if (more_conns_s(c + 1, MANY_CONNS - 1))
		goto out;
	for (int i = 0; i < MANY_CONNS; i++)
		if (sync_s(c[i]) || send_pat(c[i], 70 + (uint64_t)i, MANY_BYTES))
			goto out;
	for (int i = 0; i < MANY_CONNS; i++)
		if (recv_tok(c[i], 'k'))
			goto out;
	rc = 0;
out:
	for (int i = 1; i < MANY_CONNS; i++)
		if (c[i] >= 0)
			close(c[i]);
	return rc;
}

/*
 * fork_cloexec: a client forks holding a close-on-exec connection with
 * bytes of the server's it has not read; the child reads them and talks
 * on while the parent waits for it, then the parent talks on.  On soft
 * SMC-R the fork leaves such an end on RDMA (the child may never use it),
 * and the child's first read asks the parent to take it back to TCP.
 * fork_exit: the parent ends at once instead (ssh -f, daemon()): its exit
 * takes the end back to TCP, and the server checks the child's words.
 */
#define CLOEXEC_BYTES 8192
#define CLOEXEC_READ 1024

static int cloexec_before_fork(int fd)
{
	if (fcntl(fd, F_SETFD, FD_CLOEXEC))
		return fail_errno("fcntl FD_CLOEXEC");
	for (unsigned i = 0; i < 4; i++)
		if (ping(fd, i))
			return -1;
	return recv_with(fd, rx_read, 80, 0, CLOEXEC_READ, "read of the first KiB");
}

static void cloexec_child(int fd, bool to_the_end)
{
	alarm(watchdog_secs());
	g_role = "client's child";
	if (recv_with(fd, rx_read, 80, CLOEXEC_READ, CLOEXEC_BYTES - CLOEXEC_READ,
		      "the child's read of the rest") ||
	    send_tok(fd, 'c') || recv_tok(fd, 'd') ||
	    (to_the_end && (send_tok(fd, 'e') || expect_eof(fd, "at the end"))))
		child_end(1);
	child_end(0);
}

/* The child's pid, or -1; the child talks and ends (to_the_end: until EOF). */
static pid_t cloexec_fork(int fd, bool to_the_end)
{
	pid_t pid;

	if (cloexec_before_fork(fd))
		return -1;
	pid = fork();
	if (pid < 0)
		return fail_errno("fork");
	if (pid == 0)
		cloexec_child(fd, to_the_end);
	return pid;
}

/* The server's part up to the child's words. */
static int cloexec_serve(int fd)
{
	for (unsigned i = 0; i < 4; i++)
		if (echo(fd, i))
			return -1;
	return send_pat(fd, 80, CLOEXEC_BYTES) || recv_tok(fd, 'c') || send_tok(fd, 'd') ? -1 : 0;
}

static int fork_cloexec_c(int *fd)
{
	pid_t pid = cloexec_fork(*fd, false);

	if (pid < 0 || child_status(pid, "the child that talked"))
		return -1;
	/* the parent's turn, on the same connection */
	return ping(*fd, 10);
}

static int fork_cloexec_s(int *fd)
{
	return cloexec_serve(*fd) || echo(*fd, 10) ? -1 : 0;
}

static int fork_exit_c(int *fd)
{
	/* as daemon() does: this process ends now, the child talks on */
	return cloexec_fork(*fd, true) < 0 ? -1 : 0;
}

static int fork_exit_s(int *fd)
{
	return cloexec_serve(*fd) || recv_tok(*fd, 'e') ? -1 : 0;
}

/*
 * fork_two: two children hold the close-on-exec connection; one talks on
 * it (on soft SMC-R it goes back to TCP for every holder), the other ends
 * without a word while the server's second part waits in the kernel's
 * receive queue: not a byte of it may go with the silent one.
 */
#define TWO_PART2 3000

static void two_talker(int fd, int go)
{
	int n = 0;
	char c;

	alarm(watchdog_secs());
	g_role = "client's talking child";
	if (recv_with(fd, rx_read, 80, CLOEXEC_READ, CLOEXEC_BYTES - CLOEXEC_READ,
		      "the child's read of the rest") || send_tok(fd, 'c'))
		goto bad;
	g_doing = "waiting for the second part in the kernel";
	while (ioctl(fd, FIONREAD, &n) == 0 && n < TWO_PART2)
		msleep(5);
	/* the silent child ends now (fork_two_c()) */
	if (write(go, "x", 1) != 1 || read(go, &c, 1) != 1)
		goto bad;
	if (recv_with(fd, rx_read, 81, 0, TWO_PART2, "read of the second part") || send_tok(fd, 'd'))
		goto bad;
	child_end(0);
bad:
	child_end(1);
}

static int fork_two_c(int *fd)
{
	int quiet[2], go[2];
	pid_t silent, talker;
	char c;

	if (cloexec_before_fork(*fd))
		return -1;
	if (pipe(quiet) || socketpair(AF_UNIX, SOCK_STREAM, 0, go))
		return fail_errno("pipe");
	silent = fork();
	if (silent < 0)
		return fail_errno("fork");
	if (silent == 0) {
		alarm(watchdog_secs());
		close(quiet[1]);
		/* holds a copy, never uses it, and ends when told (its exit lets go of it) */
		_exit(read(quiet[0], &c, 1) == 0 ? 0 : 1);
	}
	close(quiet[0]);
	talker = fork();
	if (talker < 0)
		return fail_errno("fork");
	if (talker == 0) {
		close(quiet[1]);
		two_talker(*fd, go[1]);
	}
	g_doing = "waiting for the talking child's word";
	if (read(go[0], &c, 1) != 1)
		return fail("the talking child said nothing");
	close(quiet[1]);
	if (child_status(silent, "the silent child") || write(go[0], "y", 1) != 1)
		return -1;
	return child_status(talker, "the talking child");
}

static int fork_two_s(int *fd)
{
	for (unsigned i = 0; i < 4; i++)
		if (echo(*fd, i))
			return -1;
	return send_pat(*fd, 80, CLOEXEC_BYTES) || recv_tok(*fd, 'c') ||
	       send_pat(*fd, 81, TWO_PART2) || recv_tok(*fd, 'd') ? -1 : 0;
}

extern char **environ;
static char g_self[PATH_MAX];

static pid_t spawn_self(char *const argv[])
{
	pid_t pid = fork();

	if (pid == 0) {
		execv(g_self, argv);
		_exit(127);
	}
	return pid;
}

enum start { BY_FORK_EXEC, BY_POSIX_SPAWN, BY_SYSTEM, BY_VFORK, BY_SPAWN_STDIN };

/*
 * posix_spawn with the socket moved to the child's stdin by file actions,
 * the original close-on-exec (as Python's subprocess does), stdout
 * replaced by a file opened over it, and everything above 2 closed.
 */
static int spawn_stdin(pid_t *pid, int fd, char *argv[])
{
	posix_spawn_file_actions_t fa;
	int rc, fl = fcntl(fd, F_GETFD);

	if (fl < 0 || fcntl(fd, F_SETFD, fl | FD_CLOEXEC) < 0)
		return errno;
	if ((rc = posix_spawn_file_actions_init(&fa)))
		return rc;
	if (!(rc = posix_spawn_file_actions_adddup2(&fa, fd, 0)) &&
	    !(rc = posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0)) &&
	    !(rc = posix_spawn_file_actions_addclosefrom_np(&fa, 3)))
		rc = posix_spawn(pid, g_self, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	fcntl(fd, F_SETFD, fl);
	return rc;
}

static int start_child(char *argv[], enum start how, int fd)
{
	char cmd[PATH_MAX + 64];
	pid_t pid = -1;
	int rc;

	switch (how) {
	case BY_FORK_EXEC:
		pid = spawn_self(argv);
		break;
	case BY_POSIX_SPAWN:
		if ((rc = posix_spawn(&pid, g_self, NULL, NULL, argv, environ))) {
			errno = rc;
			return fail_errno("posix_spawn");
		}
		break;
	case BY_SPAWN_STDIN:
		argv[3] = (char *)"0";
		if ((rc = spawn_stdin(&pid, fd, argv))) {
			errno = rc;
			return fail_errno("posix_spawn with file actions");
		}
		break;
	case BY_VFORK:
		pid = vfork();
		if (pid == 0) {
			execv(g_self, argv);
			_exit(127);
		}
		break;
	case BY_SYSTEM:
		snprintf(cmd, sizeof(cmd), "'%s' %s %s %s", g_self, argv[1], argv[2], argv[3]);
		rc = system(cmd);
		if (rc != 0)
			return fail("system: the child's status is %#x", (unsigned)rc);
		return 0;
	}
	if (pid < 0)
		return fail_errno("fork");
	return child_status(pid, "the exec'd image");
}

/* A new image of this program with the socket's fd number in argv. */
static int exec_run(int fd, const char *role, enum start how)
{
	char num[16], name[] = "sockcheck";
	char *argv[] = { name, (char *)"exec-child", (char *)role, num, NULL };

	snprintf(num, sizeof(num), "%d", fd);
	return start_child(argv, how, fd);
}

/*
 * Which end hands its image over with a byte the other has not read yet
 * (the other reads it 300 ms later, before its own hand-over): on soft
 * SMC-R that end's connection goes back to TCP from RDMA and sends the
 * byte again by TCP, from the descriptor it has, whatever number the new
 * image gets.  The server for the spawns, the client for exec and vfork
 * (a vfork() child cannot post on its parent's queue pairs); for system()
 * both at once, each right after the first round.
 */
static char unread_first(enum start how)
{
	if (how == BY_POSIX_SPAWN || how == BY_SPAWN_STDIN)
		return 's';
	return how == BY_SYSTEM ? 0 : 'c';
}

static int exec_c_by(int *fd, enum start how)
{
	char first = unread_first(how);

	if (ping(*fd, 0))
		return -1;
	if (first == 's') {
		msleep(300);
		if (recv_tok(*fd, 'x'))
			return -1;
	} else if (first == 'c' && send_tok(*fd, 'y')) {
		return -1;
	}
	if (exec_run(*fd, "client", how))
		return -1;
	/* the parent kept its fd: it goes on where the exec'd image stopped */
	if (ping(*fd, 5))
		return -1;
	return expect_eof(*fd, "at the end");
}

static int exec_s_by(int *fd, enum start how)
{
	char first = unread_first(how);

	if (echo(*fd, 0))
		return -1;
	if (first == 's' && send_tok(*fd, 'x'))
		return -1;
	if (first == 'c') {
		msleep(300);
		if (recv_tok(*fd, 'y'))
			return -1;
	}
	return exec_run(*fd, "server", how);
}

static int exec_c(int *fd) { return exec_c_by(fd, BY_FORK_EXEC); }
static int exec_s(int *fd) { return exec_s_by(fd, BY_FORK_EXEC); }
static int spawn_c(int *fd) { return exec_c_by(fd, BY_POSIX_SPAWN); }
static int spawn_s(int *fd) { return exec_s_by(fd, BY_POSIX_SPAWN); }
static int system_c(int *fd) { return exec_c_by(fd, BY_SYSTEM); }
static int system_s(int *fd) { return exec_s_by(fd, BY_SYSTEM); }
static int spawn_stdin_c(int *fd) { return exec_c_by(fd, BY_SPAWN_STDIN); }
static int spawn_stdin_s(int *fd) { return exec_s_by(fd, BY_SPAWN_STDIN); }
static int vfork_c(int *fd) { return exec_c_by(fd, BY_VFORK); }
static int vfork_s(int *fd) { return exec_s_by(fd, BY_VFORK); }

/*
 * A vfork() child that closes its copy of the socket (as a child that
 * closes every descriptor above 2 does) and execs a program of its own:
 * the parent's connection goes on as before.
 */
static int vfork_close_c(int *fd)
{
	for (unsigned i = 0; i < 12; i++)
		if (ping(*fd, i))
			return -1;
	return expect_eof(*fd, "at the end");
}

static int vfork_close_s(int *fd)
{
	pid_t pid;

	for (unsigned i = 0; i < 6; i++)
		if (echo(*fd, i))
			return -1;
	pid = vfork();
	if (pid == 0) {
		close(*fd);
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (pid < 0)
		return fail_errno("vfork");
	if (child_status(pid, "the vfork child"))
		return -1;
	for (unsigned i = 6; i < 12; i++)
		if (echo(*fd, i))
			return -1;
	return 0;
}

/* The exec'd image: rounds 1..4 (client), or 1..5 and close (server). */
static int exec_child(const char *role, const char *fdstr)
{
	int fd = atoi(fdstr);
	int server = strcmp(role, "server") == 0;

	g_case = "exec";
	g_role = server ? "exec'd server" : "exec'd client";
	watchdog_arm();
	for (unsigned i = 1; i <= (server ? 5u : 4u); i++)
		if (server ? echo(fd, i) : ping(fd, i)) {
			printf("%s: %s: %s\n", g_case, g_role, g_err);
			/* a spawn's stdout may be /dev/null (spawn_stdin) */
			fprintf(stderr, "%s: %s: round %u: %s\n", g_case, g_role, i, g_err);
			return 1;
		}
	return 0;
}

/*
 * fork_owner_exec: the client forks holding a close-on-exec connection,
 * then execs itself ("owner-exec-done", which says the case's ok line):
 * the new image has no part in the end, and the child talks on it once
 * the exec is done.  On soft SMC-R the owner's execve takes the end back
 * to TCP for the child first.
 */
static int owner_exec_done(const char *fdstr)
{
	if (write(atoi(fdstr), "x", 1) != 1) {
		printf("fork_owner_exec: client's new image: write to the child: %s\n", strerror(errno));
		return 1;
	}
	printf("fork_owner_exec ok\n");
	return 0;
}

static int fork_owner_exec_c(int *fd)
{
	char num[16], c;
	char *argv[] = { g_self, "owner-exec-done", num, NULL };
	int go[2];
	pid_t pid;

	if (cloexec_before_fork(*fd))
		return -1;
	if (pipe(go))
		return fail_errno("pipe");
	pid = fork();
	if (pid < 0)
		return fail_errno("fork");
	if (pid == 0) {
		close(go[1]);
		alarm(watchdog_secs());
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		cloexec_child(*fd, true);
	}
	close(go[0]);
	snprintf(num, sizeof(num), "%d", go[1]);
	fflush(stdout);
	execv(g_self, argv);
	return fail_errno("execv");
}

/* ---- cases: threads ------------------------------------------------------ */

static void *blocked_reader(void *arg)
{
	char c;

	/* data, EOF or an error: only returning matters */
	(void)read(*(int *)arg, &c, 1);
	return NULL;
}

/* close() while another thread sleeps in read() on the socket: both return, the peer sees EOF. */
static int close_reader_c(int *fd)
{
	pthread_t t;
	int rfd = *fd;

	for (unsigned i = 0; i < 10; i++)
		if (ping(*fd, 0))
			return -1;
	if (pthread_create(&t, NULL, blocked_reader, &rfd))
		return fail("pthread_create");
	msleep(100);
	if (send_tok(*fd, 'c'))
		return -1;
	g_doing = "closing while a thread reads";
	close(*fd);
	*fd = -1;
	g_doing = "waiting for the reader";
	pthread_join(t, NULL);
	return 0;
}

static int close_reader_s(int *fd)
{
	for (unsigned i = 0; i < 10; i++)
		if (echo(*fd, 0))
			return -1;
	if (recv_tok(*fd, 'c'))
		return -1;
	/* the reader's byte: gone with the socket, or read by it */
	(void)send(*fd, "x", 1, MSG_NOSIGNAL);
	return expect_end(*fd, "after the peer's close");
}

struct xfer {
	int fd;
	uint64_t seed;
	size_t n;
	int rc;
	char err[sizeof(g_err)];
};

static void *writer_thread(void *arg)
{
	struct xfer *x = arg;

	x->rc = send_with(x->fd, tx_send, x->seed, 0, x->n, "writer thread");
	return NULL;
}

/* One thread writes while the calling thread reads, on one socket. */
static int duplex(int fd, uint64_t wseed, uint64_t rseed, size_t n)
{
	static _Thread_local unsigned char buf[64 * KiB];
	struct xfer x = { .fd = fd, .seed = wseed, .n = n };
	pthread_t t;
	size_t done = 0;
	int rc = 0;

	if (pthread_create(&t, NULL, writer_thread, &x))
		return fail("pthread_create failed");
	while (done < n && rc == 0) {
		ssize_t r = recv(fd, buf, n - done < sizeof(buf) ? n - done : sizeof(buf), 0);

		if (r <= 0)
			rc = r < 0 ? fail_errno("reader thread: recv") : fail("reader thread: EOF");
		else if (pat_check(buf, rseed, done, (size_t)r, "reader thread"))
			rc = -1;
		else
			done += (size_t)r;
	}
	if (rc)
		shutdown(fd, SHUT_RDWR);	/* unblock the writer */
	pthread_join(t, NULL);
	return rc ? rc : x.rc;
}

static int threads_rw_c(int *fd) { return duplex(*fd, 120, 121, 16 * MiB); }
static int threads_rw_s(int *fd) { return duplex(*fd, 121, 120, 16 * MiB); }

/* Two writers frame their messages under a mutex: header, then payload. */
struct frame {
	uint32_t writer, seq, len;
};
#define FRAMES 2000
static pthread_mutex_t g_frame_lock = PTHREAD_MUTEX_INITIALIZER;

static void *frame_writer(void *arg)
{
	struct xfer *x = arg;
	static _Thread_local unsigned char buf[sizeof(struct frame) + 9000];

	for (uint32_t seq = 0; seq < FRAMES && x->rc == 0; seq++) {
		struct frame h = { (uint32_t)x->seed, seq, (seq * 7919u + (uint32_t)x->seed) % 9000 };

		memcpy(buf, &h, sizeof(h));
		pat_fill(buf + sizeof(h), x->seed * 1000000 + seq, 0, h.len);
		pthread_mutex_lock(&g_frame_lock);
		x->rc = write_all(x->fd, buf, sizeof(h) + h.len, "frame writer");
		pthread_mutex_unlock(&g_frame_lock);
	}
	if (x->rc)
		memcpy(x->err, g_err, sizeof(g_err));
	return NULL;
}

static int threads_writers_c(int *fd)
{
	struct xfer x[2] = { { .fd = *fd, .seed = 1 }, { .fd = *fd, .seed = 2 } };
	pthread_t t[2];

	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, frame_writer, &x[i]))
			return fail("pthread_create failed");
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 2; i++)
		if (x[i].rc)
			return fail("%s", x[i].err);
	return recv_tok(*fd, 'k');
}

static int threads_writers_s(int *fd)
{
	static unsigned char buf[9000];
	uint32_t next[3] = { 0, 0, 0 };

	for (unsigned i = 0; i < 2 * FRAMES; i++) {
		struct frame h;

		if (read_all(*fd, &h, sizeof(h), "frame header"))
			return -1;
		if (h.writer < 1 || h.writer > 2 || h.seq != next[h.writer] || h.len >= 9000)
			return fail("frame %u: writer %u seq %u len %u, want seq %u (interleaved?)", i,
				    h.writer, h.seq, h.len, h.writer <= 2 ? next[h.writer] : 0);
		if (read_all(*fd, buf, h.len, "frame payload") ||
		    pat_check(buf, h.writer * 1000000ull + h.seq, 0, h.len, "frame payload"))
			return -1;
		next[h.writer]++;
	}
	return send_tok(*fd, 'k');
}

/* ---- cases: timeouts and signals ---------------------------------------- */

static int set_timeo(int fd, int opt, long ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	if (setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof(tv)) < 0)
		return fail_errno("setsockopt timeout");
	return 0;
}

static int rcvtimeo_c(int *fd)
{
	double t0;
	char c;
	ssize_t r;

	if (set_timeo(*fd, SO_RCVTIMEO, 200))
		return -1;
	t0 = now_ms();
	r = read(*fd, &c, 1);
	if (r != -1 || (errno != EAGAIN && errno != EWOULDBLOCK))
		return fail("read with SO_RCVTIMEO on an empty socket: %s, want EAGAIN",
			    r < 0 ? strerror(errno) : "data");
	if (now_ms() - t0 < 150)
		return fail("SO_RCVTIMEO of 200 ms returned after %.0f ms", now_ms() - t0);
	if (send_tok(*fd, 'g') || recv_pat(*fd, 130, 1000))
		return -1;
	return send_tok(*fd, 'k');
}

static int rcvtimeo_s(int *fd) { return sender_s(fd, 130, 1000); }

/*
 * SO_RCVLOWAT set once the connection has carried a few rounds (paired and
 * cut over under smc_run): a blocking read of 100 bytes with a mark of 60
 * returns once 60 are there, not at the first 30, and not at the end.
 * getsockopt gives the mark back.  (poll() may say readable before: Linux
 * does on loopback, whose receive window is below one MSS.)  Nothing else
 * is read once the mark is set, and the read starts before any byte is
 * there: Linux TCP wakes a sleeping reader only when the unread bytes reach
 * the socket's mark (tcp_data_ready()), whatever the read asked for and
 * whatever it has copied already, so a token read after the mark, or a read
 * that starts late, would sleep to the end on a loaded machine.
 */
static int rcvlowat_c(int *fd)
{
	unsigned char buf[100];
	int low = 60, got = 0;
	socklen_t len = sizeof(got);
	ssize_t r;

	for (unsigned i = 1; i <= 5; i++)
		if (ping(*fd, i))
			return -1;
	if (setsockopt(*fd, SOL_SOCKET, SO_RCVLOWAT, &low, sizeof(low)))
		return fail_errno("setsockopt SO_RCVLOWAT");
	if (getsockopt(*fd, SOL_SOCKET, SO_RCVLOWAT, &got, &len) || got != low)
		return fail("getsockopt SO_RCVLOWAT: %d, want %d", got, low);
	/* 30 bytes come 300 ms after the 'r', 30 more 300 ms later */
	if (send_tok(*fd, 'r'))
		return -1;
	g_doing = "a read of 100 bytes with SO_RCVLOWAT 60";
	r = read(*fd, buf, sizeof(buf));
	if (r < 0)
		return fail_errno("read with SO_RCVLOWAT");
	if (r != 60)
		return fail("read with SO_RCVLOWAT 60: %zd bytes, want 60", r);
	if (pat_check(buf, 140, 0, 60, "the read with SO_RCVLOWAT"))
		return -1;
	return send_tok(*fd, 'k');
}

static int rcvlowat_s(int *fd)
{
	static unsigned char buf[60];

	for (unsigned i = 1; i <= 5; i++)
		if (echo(*fd, i))
			return -1;
	if (recv_tok(*fd, 'r'))
		return -1;
	pat_fill(buf, 140, 0, sizeof(buf));
	msleep(300);
	if (write_all(*fd, buf, 30, "write of the first half"))
		return -1;
	msleep(300);
	if (write_all(*fd, buf + 30, 30, "write of the second half"))
		return -1;
	return recv_tok(*fd, 'k');
}

/* A blocking write with SO_SNDTIMEO to a peer that does not read. */
/* The client's end of a fill: shut down, and the server's count of what it read must be total. */
static int sent_all_counted(int fd, uint64_t total)
{
	uint64_t got;

	if (shutdown(fd, SHUT_WR) < 0)
		return fail_errno("shutdown");
	if (read_all(fd, &got, sizeof(got), "read of the count"))
		return -1;
	if (got != total)
		return fail("the server received %llu bytes, %llu were sent",
			    (unsigned long long)got, (unsigned long long)total);
	return 0;
}

/* The server's end: pattern seed's bytes checked up to EOF, their count back. */
static int count_to_eof(int fd, uint64_t seed)
{
	static unsigned char buf[64 * KiB];
	uint64_t total = 0;
	ssize_t r;

	g_doing = "reading to EOF";
	while ((r = read(fd, buf, sizeof(buf))) > 0) {
		if (pat_check(buf, seed, total, (size_t)r, "read"))
			return -1;
		total += (uint64_t)r;
	}
	if (r < 0)
		return fail_errno("read");
	return write_all(fd, &total, sizeof(total), "write of the count");
}

static int sndtimeo_c(int *fd)
{
	static unsigned char buf[64 * KiB];
	uint64_t total = 0;
	ssize_t r;

	if (set_timeo(*fd, SO_SNDTIMEO, 100))
		return -1;
	g_doing = "writing until SO_SNDTIMEO expires";
	for (;;) {
		pat_fill(buf, 131, total, sizeof(buf));
		r = write(*fd, buf, sizeof(buf));
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (r <= 0)
			return fail_errno("write with SO_SNDTIMEO");
		total += (uint64_t)r;
		if (total > 256 * MiB)
			return fail("256 MiB written to a peer that does not read");
	}
	return sent_all_counted(*fd, total);
}

static int sndtimeo_s(int *fd)
{
	/*
	 * Well past the client's 100 ms, and past a stall of a loaded
	 * guest's link (rxe parked, until the watchdog's probe): a wait that
	 * ended within such a stall read on, and the client never met a full
	 * buffer (s8 beside two busy loops).
	 */
	if (wait_quiet_ms(*fd, 3000) < 0)
		return -1;
	return count_to_eof(*fd, 131);
}

static volatile sig_atomic_t g_usr1;
static atomic_int g_stop_signaller;
static pthread_t g_main_thread;

static void on_usr1(int sig) { (void)sig; g_usr1++; }

static void *signaller(void *arg)
{
	(void)arg;
	while (!atomic_load(&g_stop_signaller)) {
		msleep(40);
		pthread_kill(g_main_thread, SIGUSR1);
	}
	return NULL;
}

/* recv while a thread signals the main thread every 40 ms. */
/*
 * One blocking call (a MSG_WAITALL recv of n bytes, or a send of one byte
 * with send set) while another thread sends SIGUSR1 to this one, whose
 * handler has SA_RESTART or not.
 */
static ssize_t call_signalled(int fd, void *b, size_t n, bool send_it, int restart, int *err)
{
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = restart ? SA_RESTART : 0 };
	pthread_t t;
	ssize_t r;

	sigaction(SIGUSR1, &sa, NULL);
	g_main_thread = pthread_self();
	atomic_store(&g_stop_signaller, 0);
	g_usr1 = 0;
	if (pthread_create(&t, NULL, signaller, NULL)) {
		*err = EAGAIN;
		return -2;
	}
	r = send_it ? send(fd, b, n, MSG_NOSIGNAL) : recv(fd, b, n, MSG_WAITALL);
	*err = errno;
	atomic_store(&g_stop_signaller, 1);
	pthread_join(t, NULL);
	return r;
}

static int eintr_c(int *fd)
{
	unsigned char buf[1000];
	ssize_t r;
	int e;

	g_doing = "recv without SA_RESTART";
	if ((r = call_signalled(*fd, buf, sizeof(buf), false, 0, &e)) != -1 || e != EINTR)
		return fail("recv interrupted by a handler without SA_RESTART: %s, want EINTR",
			    r >= 0 ? "data" : strerror(e));
	if (send_tok(*fd, 'g'))
		return -1;
	g_doing = "recv with SA_RESTART";
	if ((r = call_signalled(*fd, buf, sizeof(buf), false, 1, &e)) != (ssize_t)sizeof(buf))
		return fail("recv with SA_RESTART: returned %zd (%s), want the data", r,
			    r < 0 ? strerror(e) : "short");
	if (g_usr1 == 0)
		return fail("SA_RESTART: no signal arrived during the recv");
	if (pat_check(buf, 132, 0, sizeof(buf), "recv with SA_RESTART"))
		return -1;
	return send_tok(*fd, 'k');
}

static int eintr_s(int *fd)
{
	unsigned char b[1000];

	if (recv_tok(*fd, 'g'))
		return -1;
	msleep(300);	/* let signals interrupt the client's recv a few times */
	/*
	 * One write (send_pat() writes pieces: its first byte alone): a signal
	 * after part of it would end the recv.
	 */
	pat_fill(b, 132, 0, sizeof(b));
	if (write_all(*fd, b, sizeof(b), "write of the 1000 bytes"))
		return -1;
	return recv_tok(*fd, 'k');
}

/* send of one byte on a full connection while a thread signals the main thread every 40 ms. */
/*
 * Fill from *total on until not even one byte goes for 100 ms (the peer's
 * window shut; a large send may find less room than it wants first).
 */
static int fill_shut(int fd, uint64_t seed, uint64_t *total)
{
	unsigned char buf[16 * KiB];
	size_t len = sizeof(buf);
	int quiet = 0;

	g_doing = "filling the connection";
	while (quiet < 2) {
		ssize_t r;

		pat_fill(buf, seed, *total, len);
		r = send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (len > 1) {
				len = 1;
				continue;
			}
			quiet++;
			msleep(50);
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return fail_errno("send while filling");
		quiet = 0;
		*total += (uint64_t)r;
		if (*total > 256 * MiB)
			return fail("256 MiB sent to a peer that does not read");
	}
	return 0;
}

/*
 * fill_shut(), and again while half a second later one more byte goes: a
 * connection that cut over to shared memory or RDMA meanwhile (its
 * negotiation outlasted the first words, as on a loaded host) has room on
 * its new path.
 */
static int fill_full(int fd, uint64_t seed, uint64_t *total)
{
	for (int tries = 0; tries < 20; tries++) {
		unsigned char b;
		ssize_t r;

		if (fill_shut(fd, seed, total))
			return -1;
		msleep(500);
		pat_fill(&b, seed, *total, 1);
		r = send(fd, &b, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (r < 0 && errno != EINTR)
			return fail_errno("send after filling");
		if (r > 0)
			*total += (uint64_t)r;
	}
	return fail("the connection never stayed full");
}

/*
 * The client fills the connection, then sends one more byte: a handler
 * without SA_RESTART interrupts that send (nothing of it was sent), one
 * with SA_RESTART lets it wait until the server reads (after 1.5 s of quiet).
 */
static int eintr_send_c(int *fd)
{
	unsigned char b;
	uint64_t total = 0;
	ssize_t r;
	int e;

	/* a word each way first: the server reads (its end attaches, our sends cut over) */
	if (send_tok(*fd, 'g') || recv_tok(*fd, 'r') || fill_full(*fd, 133, &total))
		return -1;
	pat_fill(&b, 133, total, 1);
	g_doing = "send without SA_RESTART";
	if ((r = call_signalled(*fd, &b, 1, true, 0, &e)) != -1 || e != EINTR)
		return fail("send on a full connection interrupted by a handler without SA_RESTART: "
			    "%s, want EINTR", r >= 0 ? "sent" : strerror(e));
	if (fill_full(*fd, 133, &total))
		return -1;
	pat_fill(&b, 133, total, 1);
	g_doing = "send with SA_RESTART";
	if ((r = call_signalled(*fd, &b, 1, true, 1, &e)) != 1)
		return fail("send with SA_RESTART: returned %zd (%s), want 1", r,
			    r < 0 ? strerror(e) : "nothing");
	if (g_usr1 == 0)
		return fail("SA_RESTART: no signal arrived during the send");
	return sent_all_counted(*fd, total + 1);
}

static int eintr_send_s(int *fd)
{
	if (recv_tok(*fd, 'g') || send_tok(*fd, 'r'))
		return -1;
	/* the client's first send was interrupted (and a stall, as in sndtimeo_s()) */
	if (wait_quiet_ms(*fd, 3000) < 0)
		return -1;
	return count_to_eof(*fd, 133);
}

/* ---- cases: ioctls ------------------------------------------------------- */

static int fionread_c(int *fd)
{
	int n;

	if ((n = inq(*fd)) != 0)
		return fail("FIONREAD of an empty socket: %d", n);
	if (send_tok(*fd, 'g') || (n = wait_inq(*fd, 12345)) < 0)
		return -1;
	if (n != 12345)
		return fail("FIONREAD: %d, want the 12345 bytes sent", n);
	if (ioctl(*fd, SIOCINQ, &n) < 0 || n != 12345)
		return fail("SIOCINQ: %d, want 12345", n);
	if (recv_pat(*fd, 140, 345))
		return -1;
	if ((n = inq(*fd)) != 12000)
		return fail("FIONREAD after reading 345: %d, want 12000", n);
	if (recv_with(*fd, rx_read, 140, 345, 12000, "read") || (n = inq(*fd)) != 0)
		return n ? fail("FIONREAD after reading all: %d, want 0", n) : -1;
	return send_tok(*fd, 'k');
}

static int fionread_s(int *fd) { return sender_s(fd, 140, 12345); }

static int outq(int fd)
{
	int n = -1;

	if (ioctl(fd, SIOCOUTQ, &n) < 0)
		return -1;
	return n;
}

static int siocoutq_c(int *fd)
{
	long n;
	int q;

	if ((q = outq(*fd)) != 0)
		return fail("SIOCOUTQ of an idle socket: %d, want 0", q);
	if ((n = fill_until_eagain(*fd, 141, 64 * MiB)) < 0)
		return -1;
	if ((q = outq(*fd)) <= 0 || q > n)
		return fail("SIOCOUTQ with a full send buffer: %d, want 1..%ld", q, n);
	if (shutdown(*fd, SHUT_WR) < 0)
		return fail_errno("shutdown");
	g_doing = "waiting for SIOCOUTQ to drop to 0";
	if (recv_tok(*fd, 'k'))
		return -1;
	while ((q = outq(*fd)) != 0) {
		if (q < 0)
			return fail_errno("ioctl SIOCOUTQ");
		msleep(2);
	}
	return 0;
}

static int siocoutq_s(int *fd)
{
	static unsigned char buf[64 * KiB];
	uint64_t total = 0;
	ssize_t r;

	if (wait_quiet(*fd) < 0)
		return -1;
	while ((r = read(*fd, buf, sizeof(buf))) > 0) {
		if (pat_check(buf, 141, total, (size_t)r, "read"))
			return -1;
		total += (uint64_t)r;
	}
	if (r < 0)
		return fail_errno("read");
	return send_tok(*fd, 'k');
}

/* ---- cases: peer death, large transfer ---------------------------------- */

/* The serving child reads a little of a stream, then is SIGKILLed. */
static int peerkill_s(int *fd)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return fail_errno("fork");
	if (pid == 0) {
		alarm(watchdog_secs());
		if (send_pat(*fd, 150, 256 * KiB) || recv_pat(*fd, 151, 256 * KiB))
			_exit(1);
		raise(SIGKILL);
		_exit(1);
	}
	close(*fd);
	*fd = -1;
	g_doing = "waiting for the killed child";
	if (waitpid(pid, &st, 0) < 0)
		return fail_errno("waitpid");
	if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
		return fail("the serving child did not die of SIGKILL (status 0x%x)", st);
	return 0;
}

static int peerkill_c(int *fd)
{
	static unsigned char buf[64 * KiB];
	uint64_t sent = 0;
	ssize_t r;

	if (recv_pat(*fd, 150, 256 * KiB))
		return -1;
	/* write until the peer's death shows; its unread data makes it a reset */
	g_doing = "writing to a peer that gets killed";
	for (;;) {
		pat_fill(buf, 151, sent, sizeof(buf));
		r = send(*fd, buf, sizeof(buf), MSG_NOSIGNAL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		sent += (uint64_t)r;
	}
	if (errno != ECONNRESET && errno != EPIPE)
		return fail("send to a killed peer: %s, want ECONNRESET or EPIPE", strerror(errno));
	g_doing = "reading from a killed peer";
	r = read(*fd, buf, 1);
	if (r > 0 || (r < 0 && errno != ECONNRESET))
		return fail("read from a killed peer: %s, want EOF or ECONNRESET",
			    r > 0 ? "data" : strerror(errno));
	return 0;
}

/* The same, a non-blocking writer that waits for room in poll(POLLOUT). */
static int peerkill_poll_c(int *fd)
{
	static unsigned char buf[64 * KiB];
	uint64_t sent = 0;
	ssize_t r;

	if (recv_pat(*fd, 150, 256 * KiB) || set_nonblock(*fd, 1))
		return -1;
	g_doing = "poll(POLLOUT) on a full connection whose peer gets killed";
	for (;;) {
		struct pollfd p = { .fd = *fd, .events = POLLOUT };

		pat_fill(buf, 151, sent, sizeof(buf));
		r = send(*fd, buf, sizeof(buf), MSG_NOSIGNAL);
		if (r > 0) {
			sent += (uint64_t)r;
			continue;
		}
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
			if (poll(&p, 1, -1) < 0 && errno != EINTR)
				return fail_errno("poll");
			continue;
		}
		break;
	}
	if (r == 0 || (errno != ECONNRESET && errno != EPIPE))
		return fail("send to a killed peer: %s, want ECONNRESET or EPIPE",
			    r == 0 ? "0 bytes" : strerror(errno));
	return 0;
}

/* The same, waiting in epoll_wait(EPOLLOUT), level- or edge-triggered. */
static int peerkill_epoll(int fd, uint32_t trigger)
{
	static unsigned char buf[64 * KiB];
	struct epoll_event ev = { .events = EPOLLOUT | trigger };
	uint64_t sent = 0;
	ssize_t r;
	int ep;

	if (recv_pat(fd, 150, 256 * KiB) || set_nonblock(fd, 1))
		return -1;
	if ((ep = epoll_create1(0)) < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
		return fail_errno("epoll");
	g_doing = "epoll_wait(EPOLLOUT) on a full connection whose peer gets killed";
	for (;;) {
		pat_fill(buf, 151, sent, sizeof(buf));
		r = send(fd, buf, sizeof(buf), MSG_NOSIGNAL);
		if (r > 0) {
			sent += (uint64_t)r;
			continue;
		}
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
			if (epoll_wait(ep, &ev, 1, -1) < 0 && errno != EINTR) {
				close(ep);
				return fail_errno("epoll_wait");
			}
			continue;
		}
		break;
	}
	close(ep);
	if (r == 0 || (errno != ECONNRESET && errno != EPIPE))
		return fail("send to a killed peer: %s, want ECONNRESET or EPIPE",
			    r == 0 ? "0 bytes" : strerror(errno));
	return 0;
}

static int peerkill_epoll_c(int *fd) { return peerkill_epoll(*fd, 0); }
static int peerkill_epollet_c(int *fd) { return peerkill_epoll(*fd, EPOLLET); }

/*
 * The peer dies while we sleep in a blocking read on a connection that is
 * past its cut-over: the read ends with EOF or ECONNRESET within a second.
 */
#define PINGS 20

static int peerkill_rd_s(int *fd)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return fail_errno("fork");
	if (pid == 0) {
		alarm(watchdog_secs());
		for (int i = 0; i < PINGS; i++)
			if (recv_tok(*fd, 'p') || send_tok(*fd, 'q'))
				_exit(1);
		msleep(300);
		raise(SIGKILL);
		_exit(1);
	}
	close(*fd);
	*fd = -1;
	g_doing = "waiting for the killed child";
	if (waitpid(pid, &st, 0) < 0)
		return fail_errno("waitpid");
	if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
		return fail("the serving child did not die of SIGKILL (status 0x%x)", st);
	return 0;
}

static int peerkill_rd_c(int *fd)
{
	double t0;
	ssize_t r;
	char c;

	for (int i = 0; i < PINGS; i++)
		if (send_tok(*fd, 'p') || recv_tok(*fd, 'q'))
			return -1;
	g_doing = "a blocking read while the peer gets killed";
	t0 = now_ms();
	r = read(*fd, &c, 1);
	if (r > 0 || (r < 0 && errno != ECONNRESET))
		return fail("read from a killed peer: %s, want EOF or ECONNRESET",
			    r > 0 ? "data" : strerror(errno));
	/*
	 * The peer dies 300 ms in; its death must show soon after, not at the
	 * watchdog's minute (a loaded machine or a TCG guest may take seconds).
	 */
	if (now_ms() - t0 > 5000)
		return fail("the read returned %.0f ms after it began, want < 5000",
			    now_ms() - t0);
	return 0;
}

#define LARGE (64 * MiB)

static int large_send(int fd, uint64_t seed)
{
	static unsigned char buf[1 * MiB];
	uint64_t h = FNV_INIT;

	for (size_t off = 0; off < LARGE; off += sizeof(buf)) {
		pat_fill(buf, seed, off, sizeof(buf));
		h = fnv1a(h, buf, sizeof(buf));
		if (write_all(fd, buf, sizeof(buf), "write"))
			return -1;
	}
	return write_all(fd, &h, sizeof(h), "write of the hash");
}

static int large_recv(int fd, uint64_t seed)
{
	static unsigned char buf[1 * MiB];
	uint64_t h = FNV_INIT, want;

	for (size_t off = 0; off < LARGE;) {
		ssize_t r = read(fd, buf, sizeof(buf) < LARGE - off ? sizeof(buf) : LARGE - off);

		if (r <= 0)
			return r < 0 ? fail_errno("read") : fail("EOF after %zu bytes", off);
		if (pat_check(buf, seed, off, (size_t)r, "read"))
			return -1;
		h = fnv1a(h, buf, (size_t)r);
		off += (size_t)r;
	}
	if (read_all(fd, &want, sizeof(want), "read of the hash"))
		return -1;
	if (h != want)
		return fail("FNV-1a of 64 MiB: 0x%016llx, the sender's 0x%016llx",
			    (unsigned long long)h, (unsigned long long)want);
	return 0;
}

static int large_c(int *fd)
{
	return large_send(*fd, 160) || large_recv(*fd, 161) ? -1 : 0;
}

static int large_s(int *fd)
{
	return large_recv(*fd, 160) || large_send(*fd, 161) ? -1 : 0;
}

/* ---- cases: request and answer, both ends asleep between them ---------- */

/*
 * PONGS small messages each way, the server waiting in epoll_wait, the
 * client in poll (pgbench's and PostgreSQL's waits).  Each end then says on
 * stderr how many bytes its TCP socket received in the last round trips
 * (the second half, long after pairing and cut-over): the soft data path
 * sends the messages on the ring, and wakes a sleeping peer with its
 * eventfd, so next to nothing comes over TCP (the bats test asserts it).
 */
#define PONGS 2000
static bool g_closefrom, g_other_waiter;
/* tcpi_bytes_received in <linux/tcp.h>'s struct tcp_info (glibc's stops before it) */
#define TCPI_BYTES_RECEIVED_OFF 128

/* The bytes the kernel received on fd, or -1 if it does not say. */
static int64_t tcp_received(int fd)
{
	unsigned char ti[256];
	socklen_t len = sizeof(ti);
	uint64_t got;

	memset(ti, 0, sizeof(ti));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, ti, &len) || len < TCPI_BYTES_RECEIVED_OFF + sizeof(got))
		return -1;
	memcpy(&got, ti + TCPI_BYTES_RECEIVED_OFF, sizeof(got));
	return (int64_t)got;
}

static void say_tcp_bytes(int fd, const char *end, int64_t before, unsigned rounds)
{
	int64_t now = tcp_received(fd);

	if (now >= 0 && before >= 0)
		fprintf(stderr, "pingpong %s: TCP received %lld bytes in the last %u round trips\n",
			end, (long long)(now - before), rounds);
}

static int pong_wait(int fd, int ep)
{
	struct epoll_event ev;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n = ep >= 0 ? epoll_wait(ep, &ev, 1, 10000) : poll(&p, 1, 10000);

	if (n < 0)
		return fail_errno(ep >= 0 ? "epoll_wait" : "poll");
	if (n == 0)
		return fail("no message within 10 s");
	return 0;
}

static int ping_one(int fd, int ep, unsigned i, bool first)
{
	uint32_t msg[4] = { i, ~i, i * 7, 0 }, got[4];
	size_t have = 0;

	if (first && write_all(fd, msg, sizeof(msg), "write"))
		return -1;
	while (have < sizeof(got)) {
		ssize_t r = read(fd, (char *)got + have, sizeof(got) - have);

		if (r > 0) {
			have += (size_t)r;
		} else if (r == 0) {
			return fail("EOF at message %u", i);
		} else if (errno == EAGAIN) {
			if (pong_wait(fd, ep))
				return -1;
		} else if (errno != EINTR) {
			return fail_errno("read");
		}
	}
	if (memcmp(got, msg, sizeof(msg)))
		return fail("message %u came back as %u", i, got[0]);
	if (!first && write_all(fd, msg, sizeof(msg), "write"))
		return -1;
	return 0;
}

/* Files opened where the library's descriptors were: none may grow. */
#define REUSED_FILES 4

static int ping_range(int fd, int ep, bool server, unsigned from, unsigned to)
{
	int rc = 0;

	for (unsigned i = from; i < to && !rc; i++)
		rc = ping_one(fd, ep, i, !server);
	return rc;
}

/*
 * The client closes every descriptor above its socket (closefrom(3), as
 * sshd does before exec): the library's control connection and doorbells
 * go, and files take their numbers.  The round trips go on, and nothing of
 * the library's may land in those files.
 */
static int closefrom_files(int fd, int ep)
{
	FILE *f[REUSED_FILES];
	struct stat sb;
	int rc = 0;

	closefrom(fd + 1);
	for (int i = 0; i < REUSED_FILES; i++)
		if (!(f[i] = tmpfile()))
			return fail_errno("tmpfile");
	rc = ping_range(fd, ep, false, PONGS / 2, PONGS);
	for (int i = 0; i < REUSED_FILES; i++) {
		if (!rc && fstat(fileno(f[i]), &sb) == 0 && sb.st_size)
			rc = fail("fd %d, a file opened after closefrom, has %lld bytes it was never "
				  "given", fileno(f[i]), (long long)sb.st_size);
		fclose(f[i]);
	}
	return rc;
}

/*
 * Another thread of the client asleep in poll() on the connection (for
 * POLLPRI, which never comes) and a pipe, until the pipe is written: its
 * bell is taken all that time.
 */
struct other_waiter {
	int fd, pipe[2];
	pthread_t t;
};

static void *other_waits(void *arg)
{
	struct other_waiter *w = arg;
	struct pollfd p[2] = { { .fd = w->fd, .events = POLLPRI }, { .fd = w->pipe[0], .events = POLLIN } };

	while (poll(p, 2, -1) < 0 && errno == EINTR)
		;
	return NULL;
}

static int other_waiter_start(struct other_waiter *w, int fd)
{
	w->fd = fd;
	if (pipe2(w->pipe, O_CLOEXEC))
		return fail_errno("pipe2");
	if (pthread_create(&w->t, NULL, other_waits, w))
		return fail("pthread_create");
	/* so that it sleeps before the round trips go on */
	usleep(100000);
	return 0;
}

static void other_waiter_end(struct other_waiter *w)
{
	if (write(w->pipe[1], "x", 1) != 1)
		return;
	pthread_join(w->t, NULL);
	close(w->pipe[0]);
	close(w->pipe[1]);
}

static int pingpong(int fd, bool server)
{
	struct other_waiter w;
	int fl = fcntl(fd, F_GETFL), ep = -1, rc = 0;
	int64_t half = -1;
	unsigned from = PONGS / 2;

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return fail_errno("fcntl");
	if (server) {
		ep = epoll_create1(EPOLL_CLOEXEC);
		if (ep < 0)
			return fail_errno("epoll_create1");
		if (ep_add(ep, EPOLL_CTL_ADD, fd, EPOLLIN)) {
			close(ep);
			return -1;
		}
	}
	rc = ping_range(fd, ep, server, 0, PONGS / 2);
	half = tcp_received(fd);
	if (rc) {
		/* counted for nothing */
	} else if (!server && g_other_waiter) {
		/*
		 * The first half made the process's bell, the second one waits
		 * beside a thread on it: the first waits of the second half ring
		 * over TCP until the daemon has named the second thread's bell
		 * (later on a loaded machine), so only its second half counts.
		 */
		if (!(rc = other_waiter_start(&w, fd))) {
			from = PONGS * 3 / 4;
			if (!(rc = ping_range(fd, ep, server, PONGS / 2, from))) {
				half = tcp_received(fd);
				rc = ping_range(fd, ep, server, from, PONGS);
			}
			other_waiter_end(&w);
		}
	} else if (server || !g_closefrom) {
		rc = ping_range(fd, ep, server, PONGS / 2, PONGS);
	} else {
		rc = closefrom_files(fd, ep);
	}
	if (ep >= 0)
		close(ep);
	if (rc || fcntl(fd, F_SETFL, fl) < 0)
		return rc ? rc : fail_errno("fcntl");
	say_tcp_bytes(fd, server ? "server" : "client", half, PONGS - from);
	return 0;
}

static int pingpong_s(int *fd) { return pingpong(*fd, true); }
static int pingpong_c(int *fd) { return pingpong(*fd, false); }

static int pingpong_threads_c(int *fd)
{
	g_other_waiter = true;
	return pingpong(*fd, false);
}

static int closefrom_c(int *fd)
{
	g_closefrom = true;
	return pingpong(*fd, false);
}


/* ---- cases: stdio on the socket (glibc's stdio calls the kernel past the library) ---- */

#define STDIO_LINES 20
#define STDIO_ROUNDS 30
#define STDIO_TAIL 100000

/* A request answered, then lines echoed, then the end: a CGI or inetd client. */
static int stdio_c(int *fd)
{
	char line[64], want[64];

	if (ping(*fd, 0))
		return -1;
	for (unsigned i = 0; i < STDIO_LINES; i++) {
		int n = snprintf(want, sizeof(want), "line %u of the stdio case\n", i);

		if (write_all(*fd, want, (size_t)n, "write of a line") ||
		    read_all(*fd, line, (size_t)n, "read of a line back"))
			return -1;
		if (memcmp(line, want, (size_t)n))
			return fail("line %u came back as '%.*s'", i, n, line);
		msleep(5);
	}
	if (run_probe(*fd))
		return -1;
	if (shutdown(*fd, SHUT_WR))
		return fail_errno("shutdown");
	return expect_eof(*fd, "after the lines");
}

/* Lines from in back to out until the end of stream, through stdio only. */
static int stdio_echo_lines(FILE *in, FILE *out)
{
	char line[128];

	while (fgets(line, sizeof(line), in))
		if (fputs(line, out) == EOF || fflush(out))
			return fail_errno("fputs to the socket");
	return ferror(in) ? fail_errno("fgets from the socket") : 0;
}

/*
 * The image a server starts with the connection as its stdin and stdout
 * (git daemon's upload-pack, inetd, CGI): the request through read() and
 * write(), the rest through stdio.  Reports on stderr: stdout is the peer.
 */
static int stdio_child(void)
{
	g_case = "stdio_exec";
	g_role = "exec'd server";
	watchdog_arm();
	if (echo(0, 0) || stdio_echo_lines(stdin, stdout)) {
		fprintf(stderr, "%s: %s: %s\n", g_case, g_role, g_err);
		return 1;
	}
	return 0;
}

static int stdio_exec_s(int *fd)
{
	char *argv[] = { (char *)"sockcheck", (char *)"stdio-child", NULL };
	pid_t pid = fork();

	if (pid == 0) {
		if (dup2(*fd, 0) < 0 || dup2(*fd, 1) < 0)
			_exit(126);
		close(*fd);
		execv(g_self, argv);
		_exit(127);
	}
	if (pid < 0)
		return fail_errno("fork");
	close(*fd);
	*fd = -1;
	return child_status(pid, "the stdio child");
}

/*
 * A server that lets the connection be offered (a sleep), reads the request
 * with read(), then fdopen()s it and speaks stdio only.
 */
static int stdio_fdopen_s(int *fd)
{
	static unsigned char buf[MSG];
	FILE *in, *out;
	int wfd, rc;

	msleep(20);
	if (recv_pat(*fd, 100, MSG))
		return -1;
	wfd = dup(*fd);
	in = fdopen(*fd, "r");
	out = wfd >= 0 ? fdopen(wfd, "w") : NULL;
	if (!in || !out)
		return fail_errno("fdopen");
	*fd = -1;
	pat_fill(buf, 200, 0, MSG);
	if (fwrite(buf, 1, MSG, out) != MSG || fflush(out))
		rc = fail_errno("fwrite of the reply");
	else
		rc = stdio_echo_lines(in, out);
	fclose(out);
	fclose(in);
	return rc;
}

/*
 * stdio on a connection that has cut over to shared memory: what it writes
 * goes past the library.  On TCP the client gets it all; under smc_run it
 * must be told (ECONNRESET) instead of waiting for bytes that never come.
 */
static int stdio_late_s(int *fd)
{
	static unsigned char buf[STDIO_TAIL];
	int saved;

	for (unsigned i = 1; i <= STDIO_ROUNDS; i++)
		if (echo(*fd, i))
			return -1;
	if ((saved = dup(1)) < 0 || dup2(*fd, 1) < 0)
		return fail_errno("dup2 to stdout");
	pat_fill(buf, 300, 0, sizeof(buf));
	/* a reset peer is an outcome here, not a failure */
	(void)!fwrite(buf, 1, sizeof(buf), stdout);
	(void)fflush(stdout);
	if (dup2(saved, 1) < 0)
		return fail_errno("dup2 back to stdout");
	close(saved);
	return 0;
}

static int stdio_late_c(int *fd)
{
	for (unsigned i = 1; i <= STDIO_ROUNDS; i++) {
		if (ping(*fd, i))
			return -1;
		msleep(3);
	}
	static unsigned char buf[STDIO_TAIL];
	size_t got = 0;

	while (got < sizeof(buf)) {
		ssize_t r = read(*fd, buf + got, sizeof(buf) - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == ECONNRESET) {
			fprintf(stderr, "stdio_late client: ECONNRESET after %zu bytes\n", got);
			return 0;
		}
		if (r < 0)
			return fail_errno("read of the stdio bytes");
		if (r == 0)
			return fail("EOF after %zu of %d stdio bytes", got, STDIO_TAIL);
		if (pat_check(buf + got, 300, got, (size_t)r, "the stdio bytes"))
			return -1;
		got += (size_t)r;
	}
	return expect_eof(*fd, "after the stdio bytes");
}

/* ---- the case table ------------------------------------------------------ */

enum { F_SMALLBUF = 1, F_NOSIGPIPE_IGN = 2, F_URING = 4, F_PASS_CHILD = 8, F_ZEROCOPY = 16, F_MORE_CONNS = 32 };

static const struct scase {
	const char *name;
	int (*server)(int *fd);
	int (*client)(int *fd);
	unsigned flags;
} cases[] = {
	{ "blocking", blocking_s, blocking_c, 0 },
	{ "nonblock", nonblock_s, nonblock_c, F_SMALLBUF },
	{ "calls", calls_s, calls_c, 0 },
	{ "fortify", fortify_s, fortify_c, 0 },
	{ "sendfile", sendfile_s, sendfile_c, 0 },
	{ "splice_out", splice_out_s, splice_out_c, 0 },
	{ "splice_in", splice_in_s, splice_in_c, 0 },
	{ "splice_threads", splice_threads_s, splice_threads_c, 0 },
	{ "mmsg", mmsg_s, mmsg_c, 0 },
	{ "peek", peek_s, peek_c, 0 },
	{ "waitall", waitall_s, waitall_c, 0 },
	{ "dontwait", dontwait_s, dontwait_c, F_SMALLBUF },
	{ "nosignal", closer_s, nosignal_c, F_NOSIGPIPE_IGN },
	{ "sigpipe", closer_s, sigpipe_c, F_NOSIGPIPE_IGN },
	{ "poll", waits_s, poll_c, 0 },
	{ "ppoll", waits_s, ppoll_c, 0 },
	{ "select", waits_s, select_c, 0 },
	{ "pselect", waits_s, pselect_c, 0 },
	{ "epoll_lt", epoll_lt_s, epoll_lt_c, 0 },
	{ "epoll_et", epoll_et_s, epoll_et_c, 0 },
	{ "epoll_oneshot", epoll_oneshot_s, epoll_oneshot_c, 0 },
	{ "epoll_rdhup", epoll_rdhup_s, epoll_rdhup_c, 0 },
	{ "epoll_nested", epoll_nested_s, epoll_nested_c, 0 },
	{ "epoll_nested_et", epoll_nested_et_s, epoll_nested_et_c, 0 },
	{ "epoll_nested_dup2", epoll_nested_dup2_s, epoll_nested_dup2_c, 0 },
	{ "epoll_mixed", epoll_mixed_s, epoll_mixed_c, 0 },
	{ "epollout", epollout_s, epollout_c, F_SMALLBUF },
	{ "shut_wr", shut_wr_s, shut_wr_c, 0 },
	{ "shut_rd", shut_rd_s, shut_rd_c, 0 },
	{ "reset", reset_s, reset_c, 0 },
	{ "reset_late", reset_late_s, reset_c, 0 },
	{ "dup", dup_s, dup_c, 0 },
	{ "fork", fork_s, fork_c, 0 },
	{ "fork_accept", fork_accept_s, fork_accept_c, 0 },
	{ "creds_late", creds_late_s, fork_accept_c, 0 },
	{ "creds_prctl", creds_prctl_s, fork_accept_c, 0 },
	{ "creds_child", creds_child_s, creds_child_c, F_MORE_CONNS },
	{ "exit_unread", exit_unread_s, exit_unread_c, 0 },
	{ "closed_then_gone", closed_then_gone_s, closed_then_gone_c, 0 },
	{ "exit_sleeping_peer", exit_sleeping_peer_s, exit_sleeping_peer_c, 0 },
	{ "idle_peer", idle_peer_s, idle_peer_c, 0 },
	{ "fork_writers", fork_writers_s, fork_writers_c, 0 },
	{ "fork_early", fork_early_s, fork_early_c, 0 },
	{ "shared_wait", shared_wait_s, shared_wait_c, 0 },
	{ "fork_many", fork_many_s, fork_many_c, F_MORE_CONNS },
	{ "fork_cloexec", fork_cloexec_s, fork_cloexec_c, 0 },
	{ "fork_exit", fork_exit_s, fork_exit_c, 0 },
	{ "fork_two", fork_two_s, fork_two_c, 0 },
	{ "fork_owner_exec", fork_exit_s, fork_owner_exec_c, 0 },
	{ "exec", exec_s, exec_c, 0 },
	{ "spawn", spawn_s, spawn_c, 0 },
	{ "system", system_s, system_c, 0 },
	{ "vfork", vfork_s, vfork_c, 0 },
	{ "spawn_stdin", spawn_stdin_s, spawn_stdin_c, 0 },
	{ "vfork_close", vfork_close_s, vfork_close_c, 0 },
	{ "forkfail", forkfail_s, forkfail_c, 0 },
	{ "seccomp", seccomp_s, seccomp_c, 0 },
	{ "io_uring", uring_s, uring_c, F_URING },
	{ "io_uring_late", uring_late_s, uring_late_c, 0 },
	{ "io_uring_taken", uring_taken_s, uring_late_c, 0 },
	{ "fdpass", fdpass_s, fdpass_c, F_PASS_CHILD },
	{ "fdpass_mmsg", fdpass_s, fdpass_mmsg_c, F_PASS_CHILD },
	{ "fdpass_back", fdpass_s, fdpass_back_c, F_PASS_CHILD },
	{ "pidfd_getfd", fdpass_s, pidfd_getfd_c, F_PASS_CHILD },
	{ "zerocopy", zerocopy_s, zerocopy_c, F_ZEROCOPY },
	{ "zerocopy_late", zerocopy_late_s, zerocopy_late_c, 0 },
	{ "threads_rw", threads_rw_s, threads_rw_c, 0 },
	{ "close_reader", close_reader_s, close_reader_c, 0 },
	{ "threads_writers", threads_writers_s, threads_writers_c, 0 },
	{ "rcvtimeo", rcvtimeo_s, rcvtimeo_c, 0 },
	{ "rcvlowat", rcvlowat_s, rcvlowat_c, 0 },
	{ "sndtimeo", sndtimeo_s, sndtimeo_c, F_SMALLBUF },
	{ "eintr", eintr_s, eintr_c, 0 },
	{ "eintr_send", eintr_send_s, eintr_send_c, F_SMALLBUF },
	{ "fionread", fionread_s, fionread_c, 0 },
	{ "siocoutq", siocoutq_s, siocoutq_c, F_SMALLBUF },
	{ "peerkill", peerkill_s, peerkill_c, 0 },
	{ "peerkill_poll", peerkill_s, peerkill_poll_c, 0 },
	{ "peerkill_epoll", peerkill_s, peerkill_epoll_c, 0 },
	{ "peerkill_epollet", peerkill_s, peerkill_epollet_c, 0 },
	{ "peerkill_rd", peerkill_rd_s, peerkill_rd_c, 0 },
	{ "large", large_s, large_c, 0 },
	{ "pingpong", pingpong_s, pingpong_c, 0 },
	{ "stdio_exec", stdio_exec_s, stdio_c, 0 },
	{ "stdio_fdopen", stdio_fdopen_s, stdio_c, 0 },
	{ "stdio_late", stdio_late_s, stdio_late_c, 0 },
	{ "pingpong_threads", pingpong_s, pingpong_threads_c, 0 },
	{ "closefrom", pingpong_s, closefrom_c, 0 },
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static const struct scase *find_case(const char *name)
{
	for (size_t i = 0; i < NCASES; i++)
		if (strcmp(cases[i].name, name) == 0)
			return &cases[i];
	return NULL;
}

/* ---- the two ends -------------------------------------------------------- */

static int small_bufs(int fd)
{
	int v = SMALLBUF;

	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)) < 0)
		return fail_errno("setsockopt SO_SNDBUF/SO_RCVBUF");
	return 0;
}

static int announce_port(int lfd, const char *port_arg)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	const char *rfd = getenv("SOCKCHECK_READY_FD");
	char line[32];
	int n;

	if (getsockname(lfd, (struct sockaddr *)&a, &len) < 0)
		return fail_errno("getsockname");
	n = snprintf(line, sizeof(line), "%u\n", ntohs(a.sin_port));
	if (rfd && *rfd) {
		int fd = atoi(rfd);

		if (write_all(fd, line, (size_t)n, "write of the port"))
			return -1;
		close(fd);
	} else if (strcmp(port_arg, "0") == 0) {
		printf("port %s", line);
		fflush(stdout);
	}
	return 0;
}

static int run_server(const char *port, const struct scase *c, int *fd)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	const char *bind_to = getenv("SOCKCHECK_BIND");
	int one = 1, lfd = socket(AF_INET, SOCK_STREAM, 0);

	if (lfd < 0)
		return fail_errno("socket");
	if (bind_to && *bind_to && inet_pton(AF_INET, bind_to, &a.sin_addr) != 1)
		return fail("SOCKCHECK_BIND: not an IPv4 address: %s", bind_to);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if ((c->flags & F_SMALLBUF) && small_bufs(lfd))
		return -1;
	if (bind(lfd, (struct sockaddr *)&a, sizeof(a)) < 0)
		return fail_errno("bind");
	if (listen(lfd, 8) < 0)
		return fail_errno("listen");
	if ((c->flags & F_URING) && uring_setup(&g_uring))
		return -1;
	if (announce_port(lfd, port))
		return -1;
	g_doing = "waiting for the client to connect";
	*fd = accept(lfd, NULL, NULL);
	if (*fd < 0)
		return fail_errno("accept");
	if (c->flags & F_MORE_CONNS)
		g_lfd = lfd;
	else
		close(lfd);
	settle(*fd);
	g_doing = "running the case";
	return c->server(fd);
}

static int run_client(const char *host, const char *port, const struct scase *c, int *fd)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)) };
	const char *retry;
	int tries;

	if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
		return fail("%s: not an IPv4 address", host);
	if (c->flags & F_PASS_CHILD) {
		pid_t pid;

		if (socketpair(AF_UNIX, SOCK_STREAM, 0, g_pass) < 0)
			return fail_errno("socketpair");
		pid = fork();
		if (pid < 0)
			return fail_errno("fork");
		if (pid == 0) {
			close(g_pass[0]);
			g_role = "client's other process";
			g_pass_mmsg = c->client == fdpass_mmsg_c;
			g_pass_back = c->client == fdpass_back_c;
			g_pass_pidfd = c->client == pidfd_getfd_c;
			child_end(fdpass_child());
		}
		close(g_pass[1]);
	}
	retry = getenv("SOCKCHECK_CONNECT_RETRY");
	tries = retry && *retry ? atoi(retry) * 5 : 0;
	for (;;) {
		*fd = socket(AF_INET, SOCK_STREAM, 0);
		if (*fd < 0)
			return fail_errno("socket");
		if ((c->flags & F_SMALLBUF) && small_bufs(*fd))
			return -1;
		if (c->flags & F_ZEROCOPY) {
			static const int one = 1;

			if (setsockopt(*fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)) < 0)
				return fail_errno("setsockopt SO_ZEROCOPY");
		}
		g_doing = "connecting";
		if (connect(*fd, (struct sockaddr *)&a, sizeof(a)) == 0)
			break;
		if ((errno != ECONNREFUSED && errno != EHOSTUNREACH) || tries-- <= 0)
			return fail_errno("connect");
		close(*fd);
		usleep(200000);
	}
	g_server = a;
	settle(*fd);
	g_doing = "running the case";
	return c->client(fd);
}

/* ---- pair mode: both ends as separate processes -------------------------- */

static pid_t g_kids[2];

static void on_pair_watchdog(int sig)
{
	static const char msg[] = "pair: watchdog: the ends did not finish, killed\n";

	(void)sig;
	for (int i = 0; i < 2; i++)
		if (g_kids[i] > 0)
			kill(g_kids[i], SIGKILL);
	(void)!write(STDOUT_FILENO, msg, sizeof(msg) - 1);
	_exit(3);
}

static pid_t spawn_end(char **wrap, int nwrap, char **args, int nargs)
{
	char *argv[32];
	int n = 0;
	pid_t pid;

	for (int i = 0; i < nwrap && n < 20; i++)
		argv[n++] = wrap[i];
	argv[n++] = g_self;
	for (int i = 0; i < nargs; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	pid = fork();
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "sockcheck: exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

static int run_pair(const char *name, char **wrap, int nwrap)
{
	struct sigaction sa = { .sa_handler = on_pair_watchdog };
	char rfd[16], port[16] = "", *sargs[] = { (char *)"server", (char *)"0", (char *)name };
	char *cargs[] = { (char *)"client", (char *)"127.0.0.1", port, (char *)name };
	int p[2], st, rc = 0;
	ssize_t r;

	if (pipe(p) < 0)
		return perror("pipe"), 2;
	sigaction(SIGALRM, &sa, NULL);
	alarm(watchdog_secs() + 5);
	snprintf(rfd, sizeof(rfd), "%d", p[1]);
	setenv("SOCKCHECK_READY_FD", rfd, 1);
	fflush(stdout);
	g_kids[0] = spawn_end(wrap, nwrap, sargs, 3);
	close(p[1]);
	unsetenv("SOCKCHECK_READY_FD");
	r = read(p[0], port, sizeof(port) - 1);
	close(p[0]);
	if (r > 0) {
		port[r] = 0;
		port[strcspn(port, "\n")] = 0;
		g_kids[1] = spawn_end(wrap, nwrap, cargs, 4);
	} else {
		printf("%s: pair: the server did not announce its port\n", name);
		rc = 1;
	}
	for (int i = 0; i < 2; i++)
		if (g_kids[i] > 0 && (waitpid(g_kids[i], &st, 0) < 0 || !WIFEXITED(st) ||
				      WEXITSTATUS(st) != 0))
			rc = 1;
	return rc;
}

/* ---- main ---------------------------------------------------------------- */

static int usage(void)
{
	fprintf(stderr, "usage: sockcheck server PORT CASE\n"
			"       sockcheck client HOST PORT CASE\n"
			"       sockcheck pair CASE [WRAPPER...]\n"
			"       sockcheck list\n");
	return 2;
}

int main(int argc, char **argv)
{
	const struct scase *c;
	int fd = -1, rc;

	ssize_t n = readlink("/proc/self/exe", g_self, sizeof(g_self) - 1);
	if (n <= 0)
		return perror("readlink /proc/self/exe"), 2;
	g_self[n] = 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && strcmp(argv[1], "list") == 0) {
		for (size_t i = 0; i < NCASES; i++)
			puts(cases[i].name);
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "exec-child") == 0)
		return exec_child(argv[2], argv[3]);
	if (argc == 2 && strcmp(argv[1], "stdio-child") == 0)
		return stdio_child();
	if (argc == 3 && strcmp(argv[1], "owner-exec-done") == 0)
		return owner_exec_done(argv[2]);
	if (argc >= 3 && strcmp(argv[1], "pair") == 0)
		return find_case(argv[2]) ? run_pair(argv[2], argv + 3, argc - 3) : usage();
	if (!((argc == 4 && strcmp(argv[1], "server") == 0) ||
	      (argc == 5 && strcmp(argv[1], "client") == 0)))
		return usage();
	if (!(c = find_case(argv[argc - 1]))) {
		fprintf(stderr, "sockcheck: unknown case '%s' (see sockcheck list)\n", argv[argc - 1]);
		return 2;
	}
	g_case = c->name;
	g_role = argv[1];
	if (!(c->flags & F_NOSIGPIPE_IGN))
		signal(SIGPIPE, SIG_IGN);	/* a failure is reported, not a silent death */
	watchdog_arm();
	if (argc == 4)
		rc = run_server(argv[2], c, &fd);
	else
		rc = run_client(argv[2], argv[3], c, &fd);
	if (fd >= 0)
		close(fd);
	if (rc) {
		printf("%s: %s: %s\n", g_case, g_role, g_err);
		return 1;
	}
	printf("%s ok\n", g_case);
	return 0;
}
