/*
 * sockfuzz: a randomized stress test of the socket model.  For each seed two
 * processes, a server and a client (each started as WRAPPER... sockfuzz, for
 * example under smc_run), share one loopback TCP connection and run a seeded
 * random sequence of operations on it: every send and receive call with
 * random sizes and flags, blocking and non-blocking, waits with poll, select
 * and epoll, dup, fork and fd passing, short sleeps.  Both directions carry
 * data at once; byte N of a direction is a function of (seed, direction, N),
 * so the receiver checks every byte, and the exact length: each direction
 * ends with shutdown(SHUT_WR) or close, and end of stream.
 *
 *   sockfuzz [OPTIONS] [WRAPPER...]
 *
 *   -s SEED    run this one seed
 *   -S FIRST   the first seed (default 1)
 *   -n COUNT   run seeds FIRST..FIRST+COUNT-1 one after the other (default 1),
 *              each with a fresh pair of processes and a fresh connection
 *   -v BYTES   at most this much per direction (K, M, G suffixes; default
 *              4M); each seed draws its two lengths up to it
 *   -x KINDS   leave out these operation kinds (comma separated, see -l)
 *   -o KINDS   use only these kinds (waits fall back to poll; a direction
 *              left without a call uses send or recv)
 *   -t SECS    timeout per seed (default 30)
 *   -k         go on after a failed seed
 *   -V         verbose: a line per seed, and every operation on stderr
 *   -H         history: each process keeps its last 64 operations and
 *              prints them when it fails or times out
 *   -l         list the operation kinds
 *
 * A failed seed prints one line, "sockfuzz: seed N: ROLE: CALL: what went
 * wrong (tx SENT/LEN, rx RECEIVED/LEN, FD MODE)", the first failure of the
 * two ends, with what the other end saw after it in brackets; a run without
 * failure ends with "sockfuzz ok: N seeds".  Exit status 0 only then.
 * Replaying a seed makes the same random choices until timing (EAGAIN,
 * partial transfers) differs.
 *
 * The two ends also share a small memory region (a memfd the driver makes):
 * the configuration, failure messages, what each end is doing (for the
 * timeout report), and the blocking token (see token_take).  It carries no
 * stream data.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KiB 1024ull
#define MiB (1024ull * KiB)
#define MAXIO (256 * KiB)	/* the largest single call */
#define PIPEIO (64 * KiB)	/* what a pipe holds */
/*
 * MSG_PEEK|MSG_WAITALL waits for bytes nothing takes out, which TCP does not
 * promise to bring: a receive queue of 1-byte segments closes the window
 * with a few hundred bytes in it, and bytes sent with MSG_MORE stay corked
 * in the sender until it sends again, shuts down, or an ACK comes, which a
 * receiver that only peeks never causes (seed 345 waited for ever on plain
 * TCP).  So such a call asks for at most PEEK_WAITALL_MAX bytes, and only
 * for those the peer has pushed: sent by a call without MSG_MORE (tx_pushed).
 * Pushed bytes need not arrive either while the receiver's window is shut
 * (a queue of small segments nobody drains; seed 373 waited on plain TCP
 * under load): a call asks for no more than the queue holds, or for one
 * byte when it holds none (an empty queue's window is open).
 */
#define PEEK_WAITALL_MAX 32
#define MAXKIDS 64

/* ---- operation kinds ------------------------------------------------------ */

enum kind {
	K_WRITE, K_WRITEV, K_SEND, K_SENDTO, K_SENDMSG, K_SENDMMSG, K_SENDFILE, K_SPLICE_OUT,
	K_READ, K_READV, K_RECV, K_RECVFROM, K_RECVMSG, K_RECVMMSG, K_SPLICE_IN,
	K_PEEK, K_WAITALL, K_DONTWAIT, K_MORE, K_WAITFORONE, K_SPLICENB,
	K_NONBLOCK, K_POLL, K_SELECT, K_EPOLL, K_SLEEP, K_DUP, K_FORK, K_FDPASS,
	K_COUNT
};

static const char *const kind_name[K_COUNT] = {
	"write", "writev", "send", "sendto", "sendmsg", "sendmmsg", "sendfile", "splice_out",
	"read", "readv", "recv", "recvfrom", "recvmsg", "recvmmsg", "splice_in",
	"peek", "waitall", "dontwait", "more", "waitforone", "splicenb",
	"nonblock", "poll", "select", "epoll", "sleep", "dup", "fork", "fdpass",
};

static const char *const kind_help[K_COUNT] = {
	"write(2)", "writev(2), random iovecs", "send(2)", "sendto(2), sometimes with the peer's address",
	"sendmsg(2), random iovecs", "sendmmsg(2), up to 4 messages",
	"sendfile(2) from a temporary file, with or without an offset",
	"splice(2) from a pipe into the socket",
	"read(2)", "readv(2), random iovecs", "recv(2)", "recvfrom(2)", "recvmsg(2), random iovecs",
	"recvmmsg(2), up to 4 messages, sometimes MSG_WAITFORONE",
	"splice(2) from the socket into a pipe",
	"MSG_PEEK on recv, recvfrom, recvmsg", "MSG_WAITALL on the receive calls",
	"MSG_DONTWAIT on the send and receive calls", "MSG_MORE (SPLICE_F_MORE) on the send calls",
	"MSG_WAITFORONE on recvmmsg", "SPLICE_F_NONBLOCK on splice (the socket still blocks)",
	"toggle O_NONBLOCK (fcntl or FIONBIO)", "poll(2), ppoll(2) after EAGAIN",
	"select(2), pselect(2) after EAGAIN", "epoll_wait(2), epoll_pwait(2) after EAGAIN",
	"sleep 0-5 ms", "dup, dup2, dup3, F_DUPFD, F_DUPFD_CLOEXEC; the old fd closed or kept",
	"fork(2): the child takes over the stream for a while, then exits",
	"fork(2), the fd passed to the child with SCM_RIGHTS, the parent's copy closed; "
	"the child hands it back the same way",
};

#define BIT(k) (1u << (k))
#define TX_KINDS (BIT(K_WRITE) | BIT(K_WRITEV) | BIT(K_SEND) | BIT(K_SENDTO) | BIT(K_SENDMSG) | \
		  BIT(K_SENDMMSG) | BIT(K_SENDFILE) | BIT(K_SPLICE_OUT))
#define RX_KINDS (BIT(K_READ) | BIT(K_READV) | BIT(K_RECV) | BIT(K_RECVFROM) | BIT(K_RECVMSG) | \
		  BIT(K_RECVMMSG) | BIT(K_SPLICE_IN))
#define WAIT_KINDS (BIT(K_POLL) | BIT(K_SELECT) | BIT(K_EPOLL))

/* ---- memory shared by the driver and both ends ----------------------------- */

struct side {
	_Atomic unsigned failed;	/* 0, or the order of this end's first failure */
	char msg[512];
	/* what the end is doing, for the timeout report */
	_Atomic int pid;
	_Atomic unsigned long long tx_off, rx_off;
	/* tx_off after the last send without MSG_MORE (see PEEK_WAITALL_MAX) */
	_Atomic unsigned long long tx_pushed;
	char doing[160];
};

struct shared {
	uint64_t seed, volume;
	unsigned allowed;	/* BIT(kind) of the kinds in use */
	int verbose;
	unsigned timeout;
	_Atomic int port;
	_Atomic int token;	/* 0, or 1 + the role of the end that may block */
	_Atomic unsigned failures;
	struct side side[2];
};

static struct shared *g_sh;

enum { VERBOSE_ALL = 1, VERBOSE_HISTORY = 2 };

/* ---- random numbers and the stream pattern ---------------------------------- */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Byte OFF.. of the stream that end ROLE sends in seed SEED. */
static void pat_fill(unsigned char *b, uint64_t seed, int role, uint64_t off, size_t n)
{
	uint64_t key = mix(seed * 0x9e3779b97f4a7c15ull + (uint64_t)role + 1);
	size_t i = 0;

	while (i < n) {
		uint64_t o = off + i, w = mix(key + (o >> 3));

		for (unsigned k = o & 7; k < 8 && i < n; k++, i++)
			b[i] = (unsigned char)(w >> (k * 8));
	}
}

enum { SERVER, CLIENT };
static const char *const role_name[2] = { "server", "client" };

/* The length of the stream end ROLE sends: 0, short, or up to VOLUME. */
static uint64_t stream_len(uint64_t seed, uint64_t volume, int role)
{
	uint64_t r = mix(mix(seed) + 0x5eed0000ull + (uint64_t)role) | 1;

	switch (rnd(&r) % 8) {
	case 0: return 0;
	case 1: return rnd(&r) % (volume < 1000 ? volume + 1 : 1000);
	default: return rnd(&r) % (volume + 1);
	}
}

/* Sizes of single calls: 1 byte to 256 KiB, evenly spread over the powers of two. */
static size_t rnd_size(uint64_t *r)
{
	return 1 + (size_t)(rnd(r) % (1ull << (rnd(r) % 19)));
}

/* ---- one end ------------------------------------------------------------------- */

/* What a fork or fdpass child hands back to its parent. */
struct progress {
	uint64_t tx_off, rx_off, rng;
	size_t tx_inpipe;	/* bytes of the stream in the splice pipe, not sent yet */
	int tx_shut, rx_eof, closed;
	unsigned long ops;
};

struct end {
	int role;
	uint64_t seed, tx_len, rx_len;
	unsigned allowed;
	int verbose;
	struct progress p;
	int fd, alias;		/* the connection, and a second fd of it (or -1) */
	int nonblock;		/* O_NONBLOCK of the connection's file description */
	short ready;		/* POLLIN/POLLOUT from the last wait */
	int in_child;
	int epfd, ep_reg;	/* epoll set and the fd registered in it */
	int pipe_out[2], pipe_in[2], file;
	struct sockaddr_in peer;
	pid_t kids[MAXKIDS];	/* fork children not reaped yet */
	int nkids;
	char doing[160];
};

/* One send or receive call, as prepared for it. */
struct call {
	int fd, flags, blocking;
	size_t n;
};

static unsigned char g_tx[MAXIO], g_rx[MAXIO + 8];

static int allowed(const struct end *e, enum kind k)
{
	return (e->allowed & BIT(k)) != 0;
}

static int tx_complete(const struct end *e)
{
	return e->p.tx_off == e->tx_len && e->p.tx_inpipe == 0;
}

static int tx_pending(const struct end *e)
{
	return !tx_complete(e);
}

static int rx_pending(const struct end *e)
{
	return !e->p.rx_eof;
}

static const char *flag_names(int fl)
{
	static char s[80];

	snprintf(s, sizeof(s), "%s%s%s%s%s", fl & MSG_PEEK ? "|MSG_PEEK" : "",
		 fl & MSG_WAITALL ? "|MSG_WAITALL" : "", fl & MSG_DONTWAIT ? "|MSG_DONTWAIT" : "",
		 fl & MSG_MORE ? "|MSG_MORE" : "", fl & MSG_WAITFORONE ? "|MSG_WAITFORONE" : "");
	return s[0] ? s + 1 : "0";
}

static void doing(struct end *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void doing(struct end *e, const char *fmt, ...)
{
	struct side *s = &g_sh->side[e->role];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->doing, sizeof(e->doing), fmt, ap);
	va_end(ap);
	memcpy(s->doing, e->doing, sizeof(s->doing));
	atomic_store(&s->pid, (int)getpid());
}

static void progress_shown(struct end *e)
{
	struct side *s = &g_sh->side[e->role];

	atomic_store(&s->tx_off, e->p.tx_off);
	atomic_store(&s->rx_off, e->p.rx_off);
}

/* -H: the last lines -V would print, kept per process, printed on a failure */
#define HISTORY 64
static char g_hist[HISTORY][512];
static unsigned g_nhist;

static void history_print(void)
{
	for (unsigned i = g_nhist > HISTORY ? g_nhist - HISTORY : 0; i < g_nhist; i++) {
		const char *l = g_hist[i % HISTORY];

		if (write(2, l, strlen(l)) < 0)
			break;
	}
	g_nhist = 0;
}

static void on_history(int sig)
{
	(void)sig;
	history_print();
}

static void say(struct end *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct end *e, const char *fmt, ...)
{
	char line[400];
	va_list ap;

	if (!e->verbose)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (e->verbose == VERBOSE_HISTORY) {
		snprintf(g_hist[g_nhist++ % HISTORY], sizeof(g_hist[0]),
			 "sockfuzz: history: %s %d #%lu: %s (tx %llu rx %llu)\n",
			 role_name[e->role], (int)getpid(), e->p.ops, line,
			 (unsigned long long)e->p.tx_off, (unsigned long long)e->p.rx_off);
		return;
	}
	fprintf(stderr, "sockfuzz: %s %d #%lu: %s (tx %llu/%llu rx %llu/%llu)\n",
		role_name[e->role], (int)getpid(), e->p.ops, line, (unsigned long long)e->p.tx_off,
		(unsigned long long)e->tx_len, (unsigned long long)e->p.rx_off,
		(unsigned long long)e->rx_len);
}

/* Record a failure of this end (the first one counts) and return -1. */
static int fail(struct end *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct end *e, const char *fmt, ...)
{
	struct side *s = &g_sh->side[e->role];
	char what[300];
	unsigned none = 0, order = atomic_fetch_add(&g_sh->failures, 1) + 1;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (atomic_compare_exchange_strong(&s->failed, &none, order))
		snprintf(s->msg, sizeof(s->msg), "%s%s: %s: %s (tx %llu/%llu, rx %llu/%llu, %s)",
			 role_name[e->role], e->in_child ? " child" : "", e->doing, what,
			 (unsigned long long)e->p.tx_off, (unsigned long long)e->tx_len,
			 (unsigned long long)e->p.rx_off, (unsigned long long)e->rx_len,
			 e->nonblock ? "O_NONBLOCK" : "blocking fd");
	say(e, "FAILED: %s", what);
	if (e->verbose == VERBOSE_HISTORY)
		history_print();
	return -1;
}

/* The call in e->doing failed with errno; WHAT names another step. */
static int fail_errno(struct end *e, const char *what)
{
	const char *err = strerror(errno);

	return what ? fail(e, "%s: %s", what, err) : fail(e, "%s", err);
}

/* ---- checking received bytes -------------------------------------------------- */

/* Where the LEN bytes at B come from: a place in either stream near OFF. */
static void locate(const struct end *e, const unsigned char *b, size_t len, uint64_t off,
		   char *out, size_t outlen)
{
	const uint64_t win = 2 * MiB;
	uint64_t from = off > win ? off - win : 0;
	size_t n = (size_t)(2 * win);
	unsigned char *s = malloc(n);

	snprintf(out, outlen, "; they are from neither stream near there");
	if (!s)
		return;
	for (int who = 0; who < 2; who++) {
		int role = who == 0 ? !e->role : e->role;
		unsigned char *hit;

		pat_fill(s, e->seed, role, from, n);
		hit = memmem(s, n, b, len);
		if (hit) {
			snprintf(out, outlen, "; the %zu bytes from there match %s at byte %llu",
				 len, who == 0 ? "the stream" : "this end's own outgoing stream",
				 (unsigned long long)(from + (uint64_t)(hit - s)));
			break;
		}
	}
	free(s);
}

/* The N bytes at B should be the stream's bytes from the receive offset. */
static int check_bytes(struct end *e, const unsigned char *b, size_t n)
{
	unsigned char want[4096];
	uint64_t off = e->p.rx_off;

	for (size_t i = 0; i < n; i += sizeof(want)) {
		size_t len = n - i < sizeof(want) ? n - i : sizeof(want), j = 0;
		char where[160];

		pat_fill(want, e->seed, !e->role, off + i, len);
		if (memcmp(want, b + i, len) == 0)
			continue;
		while (want[j] == b[i + j])
			j++;
		locate(e, b + i + j, n - i - j < 16 ? n - i - j : 16, off + i + j, where, sizeof(where));
		return fail(e, "byte %llu of the stream is 0x%02x, want 0x%02x%s",
			    (unsigned long long)(off + i + j), b[i + j], want[j], where);
	}
	return 0;
}

/* ---- accounting of one call's result ------------------------------------------ */

enum { DONE = 0, AGAIN = 1 };

static int call_error(struct end *e, const struct call *c)
{
	if (errno == EAGAIN || errno == EWOULDBLOCK) {
		if (c->blocking)
			return fail(e, "EAGAIN from a blocking call");
		return AGAIN;
	}
	return fail_errno(e, NULL);
}

static int tx_finish(struct end *e);

/* R bytes of the N offered went out; STRICT: a blocking call sends them all. */
static int sent(struct end *e, const struct call *c, ssize_t r, int strict)
{
	if (r < 0)
		return call_error(e, c);
	say(e, "%s -> %zd", e->doing, r);
	if ((size_t)r > c->n)
		return fail(e, "sent %zd bytes, more than the %zu offered", r, c->n);
	if (r == 0)
		return fail(e, "sent nothing");
	if (strict && c->blocking && (size_t)r < c->n)
		return fail(e, "a blocking call sent only %zd of %zu bytes", r, c->n);
	e->p.tx_off += (uint64_t)r;
	if (!(c->flags & MSG_MORE))
		atomic_store(&g_sh->side[e->role].tx_pushed, e->p.tx_off);
	progress_shown(e);
	return tx_complete(e) ? tx_finish(e) : DONE;
}

static int at_eof(struct end *e)
{
	if (e->p.rx_off != e->rx_len)
		return fail(e, "end of stream after %llu of %llu bytes",
			    (unsigned long long)e->p.rx_off, (unsigned long long)e->rx_len);
	e->p.rx_eof = 1;
	return DONE;
}

/* R bytes arrived at B for a call that asked for N (MSG_PEEK: they stay). */
static int got(struct end *e, const struct call *c, const unsigned char *b, ssize_t r)
{
	if (r < 0)
		return call_error(e, c);
	say(e, "%s -> %zd", e->doing, r);
	if ((size_t)r > c->n)
		return fail(e, "received %zd bytes, more than the %zu asked for", r, c->n);
	if (r == 0)
		return at_eof(e);
	if (e->p.rx_off + (uint64_t)r > e->rx_len)
		return fail(e, "%llu bytes past the end of the stream",
			    (unsigned long long)(e->p.rx_off + (uint64_t)r - e->rx_len));
	if (check_bytes(e, b, (size_t)r))
		return -1;
	if (c->blocking && (c->flags & MSG_WAITALL) && (size_t)r < c->n)
		return fail(e, "MSG_WAITALL returned %zd of %zu bytes", r, c->n);
	if (!(c->flags & MSG_PEEK))
		e->p.rx_off += (uint64_t)r;
	progress_shown(e);
	return DONE;
}

/* Cut N bytes at B into 1..MAX consecutive pieces of random lengths, some empty. */
static int split(struct end *e, unsigned char *b, size_t n, struct iovec *iov, int max)
{
	int k = 1 + (int)(rnd(&e->p.rng) % (unsigned)max), i;
	size_t left = n;

	for (i = 0; i < k - 1; i++) {
		size_t l = left ? (size_t)(rnd(&e->p.rng) % (left + 1)) : 0;

		if (rnd(&e->p.rng) % 2)
			l /= 8;		/* short pieces more often */
		iov[i] = (struct iovec){ .iov_base = b, .iov_len = l };
		b += l;
		left -= l;
	}
	iov[i] = (struct iovec){ .iov_base = b, .iov_len = left };
	return k;
}

/* ---- send calls ------------------------------------------------------------------ */

static int op_write(struct end *e, const struct call *c)
{
	doing(e, "write(%d, %zu)", c->fd, c->n);
	return sent(e, c, write(c->fd, g_tx, c->n), 1);
}

static int op_writev(struct end *e, const struct call *c)
{
	struct iovec iov[8];
	int k = split(e, g_tx, c->n, iov, 8);

	doing(e, "writev(%d, %zu in %d iovecs)", c->fd, c->n, k);
	return sent(e, c, writev(c->fd, iov, k), 1);
}

static int op_send(struct end *e, const struct call *c)
{
	doing(e, "send(%d, %zu, %s)", c->fd, c->n, flag_names(c->flags));
	return sent(e, c, send(c->fd, g_tx, c->n, c->flags), 1);
}

static int op_sendto(struct end *e, const struct call *c)
{
	int to = rnd(&e->p.rng) % 4 == 0;

	doing(e, "sendto(%d, %zu, %s, %s)", c->fd, c->n, flag_names(c->flags),
	      to ? "the peer's address" : "NULL");
	return sent(e, c, sendto(c->fd, g_tx, c->n, c->flags, to ? (struct sockaddr *)&e->peer : NULL,
				 to ? sizeof(e->peer) : 0), 1);
}

static int op_sendmsg(struct end *e, const struct call *c)
{
	struct iovec iov[8];
	struct msghdr m = { .msg_iov = iov };

	m.msg_iovlen = (size_t)split(e, g_tx, c->n, iov, 8);
	doing(e, "sendmsg(%d, %zu in %zu iovecs, %s)", c->fd, c->n, (size_t)m.msg_iovlen,
	      flag_names(c->flags));
	return sent(e, c, sendmsg(c->fd, &m, c->flags), 1);
}

static int op_sendmmsg(struct end *e, const struct call *c)
{
	struct mmsghdr mm[4];
	struct iovec iov[4][3], whole[4];
	int k = split(e, g_tx, c->n, whole, 4), r;
	size_t total = 0;

	memset(mm, 0, sizeof(mm));
	for (int i = 0; i < k; i++) {
		mm[i].msg_hdr.msg_iov = iov[i];
		mm[i].msg_hdr.msg_iovlen = (size_t)split(e, whole[i].iov_base, whole[i].iov_len, iov[i], 3);
	}
	doing(e, "sendmmsg(%d, %zu in %d messages, %s)", c->fd, c->n, k, flag_names(c->flags));
	r = sendmmsg(c->fd, mm, (unsigned)k, c->flags);
	if (r < 0)
		return sent(e, c, -1, 1);
	if (r > k)
		return fail(e, "returned %d of %d messages", r, k);
	for (int i = 0; i < r; i++) {
		if (mm[i].msg_len > whole[i].iov_len)
			return fail(e, "message %d: %u bytes sent of %zu", i, mm[i].msg_len,
				    whole[i].iov_len);
		if (i < r - 1 && mm[i].msg_len < whole[i].iov_len)
			return fail(e, "message %d went out in part (%u of %zu bytes), yet message %d too",
				    i, mm[i].msg_len, whole[i].iov_len, i + 1);
		total += mm[i].msg_len;
	}
	if (c->blocking && r < k)
		return fail(e, "a blocking call sent %d of %d messages", r, k);
	if (total == 0) {	/* empty messages only: no bytes, but progress */
		say(e, "%s -> %d empty messages", e->doing, r);
		return DONE;
	}
	return sent(e, c, (ssize_t)total, 1);
}

/* The file's pages go out by reference (zero copy on TCP): bytes still in
 * flight must not be overwritten, so each call writes to a fresh place. */
#define SENDFILE_SPAN (64 * MiB)
static int op_sendfile(struct end *e, const struct call *c)
{
	off_t at = (off_t)(e->p.tx_off % SENDFILE_SPAN), off = at, pos;
	int with_off = rnd(&e->p.rng) % 2;
	ssize_t r;

	if (pwrite(e->file, g_tx, c->n, at) != (ssize_t)c->n)
		return fail_errno(e, "pwrite of the temporary file");
	if (!with_off && lseek(e->file, at, SEEK_SET) != at)
		return fail_errno(e, "lseek of the temporary file");
	doing(e, "sendfile(%d, file at %lld, %zu, %s)", c->fd, (long long)at, c->n,
	      with_off ? "offset" : "file position");
	r = sendfile(c->fd, e->file, with_off ? &off : NULL, c->n);
	if (r >= 0) {
		pos = with_off ? off : lseek(e->file, 0, SEEK_CUR);
		if (pos != at + r)
			return fail(e, "returned %zd but the offset moved by %lld", r,
				    (long long)(pos - at));
	}
	return sent(e, c, r, 0);
}

/* The stream's next bytes go through a pipe; what the socket does not take
 * stays there and goes first (the next send call is this one again). */
static int op_splice_out(struct end *e, const struct call *c)
{
	unsigned fl = (c->flags & MSG_MORE ? SPLICE_F_MORE : 0) |
		      (allowed(e, K_SPLICENB) && rnd(&e->p.rng) % 4 == 0 ? SPLICE_F_NONBLOCK : 0);
	int rc;

	if (e->p.tx_inpipe == 0) {
		if (write(e->pipe_out[1], g_tx, c->n) != (ssize_t)c->n)
			return fail_errno(e, "write into the pipe");
		e->p.tx_inpipe = c->n;
	}
	do {
		struct call part = *c;
		ssize_t r;

		part.n = e->p.tx_inpipe;
		doing(e, "splice(pipe -> %d, %zu, %s%s)", c->fd, part.n,
		      fl & SPLICE_F_MORE ? "SPLICE_F_MORE" : "0",
		      fl & SPLICE_F_NONBLOCK ? "|SPLICE_F_NONBLOCK" : "");
		r = splice(e->pipe_out[0], NULL, c->fd, NULL, part.n, fl);
		if (r > 0)
			e->p.tx_inpipe -= (size_t)r;
		rc = sent(e, &part, r, 0);
	} while (rc == DONE && c->blocking && e->p.tx_inpipe > 0);
	return rc;
}

/* ---- receive calls ------------------------------------------------------------- */

static int op_read(struct end *e, const struct call *c)
{
	doing(e, "read(%d, %zu)", c->fd, c->n);
	return got(e, c, g_rx, read(c->fd, g_rx, c->n));
}

static int op_readv(struct end *e, const struct call *c)
{
	struct iovec iov[8];
	int k = split(e, g_rx, c->n, iov, 8);

	doing(e, "readv(%d, %zu in %d iovecs)", c->fd, c->n, k);
	return got(e, c, g_rx, readv(c->fd, iov, k));
}

static int op_recv(struct end *e, const struct call *c)
{
	doing(e, "recv(%d, %zu, %s)", c->fd, c->n, flag_names(c->flags));
	return got(e, c, g_rx, recv(c->fd, g_rx, c->n, c->flags));
}

static int op_recvfrom(struct end *e, const struct call *c)
{
	struct sockaddr_in from;
	socklen_t len = sizeof(from);
	int with = rnd(&e->p.rng) % 2;

	doing(e, "recvfrom(%d, %zu, %s)", c->fd, c->n, flag_names(c->flags));
	return got(e, c, g_rx, recvfrom(c->fd, g_rx, c->n, c->flags,
					 with ? (struct sockaddr *)&from : NULL, with ? &len : NULL));
}

static int op_recvmsg(struct end *e, const struct call *c)
{
	struct iovec iov[8];
	struct sockaddr_in from;
	struct msghdr m = { .msg_iov = iov };

	if (rnd(&e->p.rng) % 2) {
		m.msg_name = &from;
		m.msg_namelen = sizeof(from);
	}
	m.msg_iovlen = (size_t)split(e, g_rx, c->n, iov, 8);
	doing(e, "recvmsg(%d, %zu in %zu iovecs, %s)", c->fd, c->n, (size_t)m.msg_iovlen,
	      flag_names(c->flags));
	return got(e, c, g_rx, recvmsg(c->fd, &m, c->flags));
}

static int op_recvmmsg(struct end *e, const struct call *c)
{
	struct mmsghdr mm[4];
	struct iovec iov[4][3], whole[4];
	int k = split(e, g_rx, c->n, whole, 4), fl = c->flags, r, rc = DONE;

	memset(mm, 0, sizeof(mm));
	for (int i = 0; i < k; i++) {
		if (whole[i].iov_len == 0) {	/* an empty message reads as end of stream */
			whole[i].iov_len = 1;
			whole[i].iov_base = g_rx + c->n + i;
		}
		mm[i].msg_hdr.msg_iov = iov[i];
		mm[i].msg_hdr.msg_iovlen = (size_t)split(e, whole[i].iov_base, whole[i].iov_len, iov[i], 3);
	}
	if (allowed(e, K_WAITFORONE) && rnd(&e->p.rng) % 3 == 0)
		fl |= MSG_WAITFORONE;
	doing(e, "recvmmsg(%d, %zu in %d messages, %s)", c->fd, c->n, k, flag_names(fl));
	r = recvmmsg(c->fd, mm, (unsigned)k, fl, NULL);
	if (r < 0)
		return got(e, c, g_rx, -1);
	say(e, "%s -> %d messages", e->doing, r);
	if (r > k || r == 0)
		return fail(e, "returned %d of %d messages", r, k);
	if (c->blocking && !(fl & MSG_WAITFORONE) && r < k)
		return fail(e, "a blocking call returned %d of %d messages", r, k);
	for (int i = 0; i < r && rc == DONE; i++) {
		struct call one = *c;
		unsigned len = mm[i].msg_len;

		one.n = whole[i].iov_len;
		if (len == 0 && e->p.rx_eof)
			continue;
		if (e->p.rx_eof)
			return fail(e, "message %d: %u bytes after the end of stream", i, len);
		/* MSG_WAITALL: checked here, per message; after MSG_WAITFORONE's
		 * first message the call does not wait */
		one.flags &= ~MSG_WAITALL;
		if ((fl & MSG_WAITALL) && c->blocking && (i == 0 || !(fl & MSG_WAITFORONE)) &&
		    len < one.n && e->p.rx_off + len < e->rx_len)
			return fail(e, "message %d: MSG_WAITALL returned %u of %zu bytes", i, len, one.n);
		rc = got(e, &one, whole[i].iov_base, (ssize_t)len);
	}
	return rc;
}

static int read_pipe(struct end *e, unsigned char *b, size_t n)
{
	while (n > 0) {
		ssize_t r = read(e->pipe_in[0], b, n);

		if (r <= 0)
			return fail(e, "read of the pipe: %s", r ? strerror(errno) : "end of file");
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

static int op_splice_in(struct end *e, const struct call *c)
{
	unsigned fl = (rnd(&e->p.rng) % 2 ? SPLICE_F_MOVE : 0) |
		      (allowed(e, K_SPLICENB) && rnd(&e->p.rng) % 4 == 0 ? SPLICE_F_NONBLOCK : 0);
	ssize_t r;

	doing(e, "splice(%d -> pipe, %zu, %s%s)", c->fd, c->n, fl & SPLICE_F_MOVE ? "SPLICE_F_MOVE" : "0",
	      fl & SPLICE_F_NONBLOCK ? "|SPLICE_F_NONBLOCK" : "");
	r = splice(c->fd, NULL, e->pipe_in[1], NULL, c->n, fl);
	if (r > 0 && ((size_t)r > c->n || read_pipe(e, g_rx, (size_t)r)))
		return (size_t)r > c->n ? fail(e, "moved %zd bytes of %zu", r, c->n) : -1;
	return got(e, c, g_rx, r);
}

/* ---- waits after EAGAIN -------------------------------------------------------- */

static short wanted(const struct end *e)
{
	return (short)((rx_pending(e) ? POLLIN : 0) | (tx_pending(e) ? POLLOUT : 0));
}

static int wait_poll(struct end *e, short ev, int ms)
{
	struct pollfd p = { .fd = e->fd, .events = ev };
	int r;

	if (rnd(&e->p.rng) % 2) {
		struct timespec ts = { 0, ms * 1000000L };

		doing(e, "ppoll(%d, %s%s, %d ms)", e->fd, ev & POLLIN ? "IN" : "", ev & POLLOUT ? "OUT" : "", ms);
		r = ppoll(&p, 1, ms < 0 ? NULL : &ts, NULL);
	} else {
		doing(e, "poll(%d, %s%s, %d ms)", e->fd, ev & POLLIN ? "IN" : "", ev & POLLOUT ? "OUT" : "", ms);
		r = poll(&p, 1, ms);
	}
	if (r < 0)
		return fail_errno(e, NULL);
	if (r && (p.revents & POLLNVAL))
		return fail(e, "POLLNVAL");
	if (r && (p.revents & (POLLIN | POLLHUP | POLLERR | POLLRDHUP)))
		e->ready |= POLLIN;
	if (r && (p.revents & (POLLOUT | POLLERR)))
		e->ready |= POLLOUT;
	return r;
}

static int wait_select(struct end *e, short ev, int ms)
{
	fd_set rd, wr;
	struct timeval tv = { 0, ms * 1000L };
	struct timespec ts = { 0, ms * 1000000L };
	int r, p = rnd(&e->p.rng) % 2;

	FD_ZERO(&rd);
	FD_ZERO(&wr);
	if (ev & POLLIN)
		FD_SET(e->fd, &rd);
	if (ev & POLLOUT)
		FD_SET(e->fd, &wr);
	doing(e, "%s(%d, %s%s, %d ms)", p ? "pselect" : "select", e->fd, ev & POLLIN ? "rd" : "",
	      ev & POLLOUT ? "wr" : "", ms);
	if (p)
		r = pselect(e->fd + 1, &rd, &wr, NULL, ms < 0 ? NULL : &ts, NULL);
	else
		r = select(e->fd + 1, &rd, &wr, NULL, ms < 0 ? NULL : &tv);
	if (r < 0)
		return fail_errno(e, NULL);
	if (FD_ISSET(e->fd, &rd))
		e->ready |= POLLIN;
	if (FD_ISSET(e->fd, &wr))
		e->ready |= POLLOUT;
	return r;
}

static int wait_epoll(struct end *e, short ev, int ms)
{
	struct epoll_event want = { .events = EPOLLRDHUP, .data.fd = e->fd }, got[4];
	int r, max = 1 + (int)(rnd(&e->p.rng) % 4), pw = rnd(&e->p.rng) % 2;

	want.events |= (ev & POLLIN ? EPOLLIN : 0) | (ev & POLLOUT ? EPOLLOUT : 0);
	if (e->epfd < 0 && (e->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		return fail_errno(e, "epoll_create1");
	if (e->ep_reg >= 0 && e->ep_reg != e->fd) {
		doing(e, "epoll_ctl(DEL, %d)", e->ep_reg);
		if (epoll_ctl(e->epfd, EPOLL_CTL_DEL, e->ep_reg, NULL) < 0)
			return fail_errno(e, NULL);
		e->ep_reg = -1;
	}
	doing(e, "epoll_ctl(%s, %d)", e->ep_reg < 0 ? "ADD" : "MOD", e->fd);
	if (epoll_ctl(e->epfd, e->ep_reg < 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, e->fd, &want) < 0)
		return fail_errno(e, NULL);
	e->ep_reg = e->fd;
	doing(e, "%s(%d, %s%s, %d ms)", pw ? "epoll_pwait" : "epoll_wait", e->fd,
	      ev & POLLIN ? "IN" : "", ev & POLLOUT ? "OUT" : "", ms);
	r = pw ? epoll_pwait(e->epfd, got, max, ms, NULL) : epoll_wait(e->epfd, got, max, ms);
	if (r < 0)
		return fail_errno(e, NULL);
	for (int i = 0; i < r; i++) {
		if (got[i].data.fd != e->fd)
			return fail(e, "an event for fd %d", got[i].data.fd);
		if (got[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
			e->ready |= POLLIN;
		if (got[i].events & (EPOLLOUT | EPOLLERR))
			e->ready |= POLLOUT;
	}
	return r;
}

/* Until the connection is ready for one of the directions still open. */
static int wait_ready(struct end *e)
{
	static int (*const fn[])(struct end *, short, int) = { wait_poll, wait_select, wait_epoll };
	static const enum kind kinds[] = { K_POLL, K_SELECT, K_EPOLL };
	short ev = wanted(e);
	unsigned i;
	int r;

	do {
		int ms = rnd(&e->p.rng) % 2 ? -1 : (int)(rnd(&e->p.rng) % 10);

		i = (unsigned)(rnd(&e->p.rng) % 3);
		while (!allowed(e, kinds[i]) && (e->allowed & WAIT_KINDS))
			i = (i + 1) % 3;
		if (!(e->allowed & WAIT_KINDS))
			i = 0;
		r = fn[i](e, ev, ms);
	} while (r == 0);
	if (r > 0)
		say(e, "%s -> %s%s", e->doing, e->ready & POLLIN ? "IN" : "", e->ready & POLLOUT ? "OUT" : "");
	return r < 0 ? -1 : DONE;
}

/* ---- the blocking token --------------------------------------------------------- */

struct op;
static int do_call(struct end *e, const struct op *op, int force_flags);
static const struct op *pick_io(struct end *e, int dir, int flagged_only);

enum { TX, RX, MISC };

static int dir_pending(const struct end *e, int dir)
{
	return dir == TX ? tx_pending(e) : rx_pending(e);
}

/*
 * A blocking call waits only for the peer.  Two at once (both ends sending
 * into full buffers, or both waiting for data) might never end, so at most
 * one end makes one at a time: the end that holds the token.  The other keeps
 * the stream moving with MSG_DONTWAIT calls until it gets the token.  Returns
 * 1 with the token, 0 when direction DIR ended meanwhile, -1 on failure.
 */
static int token_take(struct end *e, int dir)
{
	int me = e->role + 1;

	for (;;) {
		int none = 0;
		struct pollfd p;

		if (!dir_pending(e, dir))
			return 0;
		if (atomic_compare_exchange_strong(&g_sh->token, &none, me))
			return 1;
		p = (struct pollfd){ .fd = e->fd, .events = wanted(e) };
		doing(e, "poll(%d) while the peer holds the token", e->fd);
		if (poll(&p, 1, 1) < 0)
			return fail_errno(e, NULL);
		if (p.revents & (POLLIN | POLLHUP | POLLERR | POLLRDHUP) && rx_pending(e) &&
		    do_call(e, pick_io(e, RX, 1), MSG_DONTWAIT) < 0)
			return -1;
		if (p.revents & (POLLOUT | POLLERR) && tx_pending(e) && !e->p.tx_inpipe &&
		    do_call(e, pick_io(e, TX, 1), MSG_DONTWAIT) < 0)
			return -1;
	}
}

static void token_give(struct end *e)
{
	int me = e->role + 1;

	atomic_compare_exchange_strong(&g_sh->token, &me, 0);
}

/* ---- fds ---------------------------------------------------------------------------- */

static int fd_close(struct end *e, int fd, const char *why)
{
	if (fd == e->ep_reg) {
		doing(e, "epoll_ctl(DEL, %d) before close", fd);
		if (epoll_ctl(e->epfd, EPOLL_CTL_DEL, fd, NULL) < 0)
			return fail_errno(e, NULL);
		e->ep_reg = -1;
	}
	doing(e, "close(%d) %s", fd, why);
	say(e, "%s", e->doing);
	if (close(fd) < 0)
		return fail_errno(e, NULL);
	return 0;
}

static int conn_close(struct end *e)
{
	int first = e->fd, second = e->alias;

	if (e->alias >= 0 && rnd(&e->p.rng) % 2) {
		first = e->alias;
		second = e->fd;
	}
	e->fd = e->alias = -1;
	if (first >= 0 && fd_close(e, first, "the connection"))
		return -1;
	if (second >= 0 && fd_close(e, second, "the connection's other fd"))
		return -1;
	e->p.closed = 1;
	return 0;
}

static int refresh_nonblock(struct end *e)
{
	int fl = fcntl(e->fd, F_GETFL);

	if (fl < 0)
		return fail_errno(e, "fcntl(F_GETFL)");
	e->nonblock = (fl & O_NONBLOCK) != 0;
	return 0;
}

/* The direction's last byte went out: shutdown(SHUT_WR), or when the other
 * direction has ended too, sometimes nothing (close will end it). */
static int tx_finish(struct end *e)
{
	if (e->p.tx_shut || (e->p.rx_eof && rnd(&e->p.rng) % 2))
		return DONE;
	doing(e, "shutdown(%d, SHUT_WR)", e->fd);
	say(e, "%s", e->doing);
	if (shutdown(e->fd, SHUT_WR) < 0)
		return fail_errno(e, NULL);
	e->p.tx_shut = 1;
	return DONE;
}

/* ---- other operations ------------------------------------------------------------------- */

static int op_nonblock(struct end *e)
{
	int on = !e->nonblock, fl;

	if (!on && e->p.tx_inpipe)
		return DONE;	/* a blocking splice would need the token for the pipe's rest */
	if (rnd(&e->p.rng) % 3 == 0) {
		doing(e, "ioctl(%d, FIONBIO, %d)", e->fd, on);
		if (ioctl(e->fd, FIONBIO, &on) < 0)
			return fail_errno(e, NULL);
	} else {
		doing(e, "fcntl(%d, F_SETFL, %sO_NONBLOCK)", e->fd, on ? "" : "~");
		fl = fcntl(e->fd, F_GETFL);
		if (fl < 0 || fcntl(e->fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK) < 0)
			return fail_errno(e, NULL);
	}
	say(e, "%s", e->doing);
	if (refresh_nonblock(e))
		return -1;
	if (e->nonblock != on)
		return fail(e, "F_GETFL says O_NONBLOCK is %s", e->nonblock ? "on" : "off");
	return DONE;
}

static int op_sleep(struct end *e)
{
	long us = (long)(rnd(&e->p.rng) % 5001);
	struct timespec ts = { 0, us * 1000 };

	doing(e, "sleep %ld us", us);
	say(e, "%s", e->doing);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return DONE;
}

static int unused_fd(struct end *e)
{
	for (;;) {
		int fd = 10 + (int)(rnd(&e->p.rng) % 1000);	/* below FD_SETSIZE, for select */

		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF)
			return fd;
	}
}

/* A new fd for the connection; the old one closed, or kept as a second name. */
static int op_dup(struct end *e)
{
	int old = e->fd, nfd, to = unused_fd(e), min = 3 + (int)(rnd(&e->p.rng) % 1000);
	unsigned how = (unsigned)(rnd(&e->p.rng) % 6);

	if (how == 5 && e->alias < 0)
		how = 0;
	switch (how) {
	case 0: doing(e, "dup(%d)", old); nfd = dup(old); break;
	case 1: doing(e, "dup2(%d, %d)", old, to); nfd = dup2(old, to); break;
	case 2: doing(e, "dup3(%d, %d, O_CLOEXEC)", old, to); nfd = dup3(old, to, O_CLOEXEC); break;
	case 3: doing(e, "fcntl(%d, F_DUPFD, %d)", old, min); nfd = fcntl(old, F_DUPFD, min); break;
	case 4: doing(e, "fcntl(%d, F_DUPFD_CLOEXEC, %d)", old, min);
		nfd = fcntl(old, F_DUPFD_CLOEXEC, min);
		break;
	default:	/* over the other fd of the same connection */
		doing(e, "dup2(%d, %d) over the connection's other fd", old, e->alias);
		nfd = dup2(old, e->alias);
		e->alias = -1;
		break;
	}
	say(e, "%s -> %d", e->doing, nfd);
	if (nfd < 0)
		return fail_errno(e, NULL);
	if ((how == 1 || how == 2) && nfd != to)
		return fail(e, "returned %d", nfd);
	if (e->alias >= 0 && fd_close(e, e->alias, "the other fd, before a new one"))
		return -1;
	e->fd = nfd;
	e->alias = -1;
	if (rnd(&e->p.rng) % 3 == 0)
		e->alias = old;
	else if (fd_close(e, old, "after dup"))
		return -1;
	return DONE;
}

static void reap_later(struct end *e, pid_t pid);
static int reap(struct end *e, pid_t pid);
static int run(struct end *e, long budget);

static int read_full(int fd, void *b, size_t n)
{
	for (size_t got = 0; got < n;) {
		ssize_t r = read(fd, (char *)b + got, n - got);

		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

/* In a fork or fdpass child: its own epoll set and a random stream of choices. */
static void child_enter(struct end *e)
{
	e->in_child = 1;
	e->nkids = 0;
	if (e->epfd >= 0)
		close(e->epfd);		/* the parent's set: its registration stays */
	e->epfd = e->ep_reg = -1;
	e->p.rng = mix(e->p.rng ^ (uint64_t)getpid()) | 1;
	alarm(g_sh->timeout + 10);
}

/* The end of a child's turn: the ways a process lets go of a connection. */
static void child_exit(struct end *e)
{
	switch (rnd(&e->p.rng) % 4) {
	case 0: exit(0);
	case 1: _exit(0);
	case 2: _Exit(0);
	default:
		if (conn_close(e))
			_exit(1);
		_exit(0);
	}
}

static long child_budget(struct end *e)
{
	return 1 + (long)(rnd(&e->p.rng) % 40);
}

/* The child takes over the stream for a while; the parent waits for its
 * progress on a pipe, then goes on where it stopped. */
static int op_fork(struct end *e)
{
	struct progress st;
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return fail_errno(e, "pipe2");
	doing(e, "fork");
	say(e, "%s", e->doing);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return fail_errno(e, NULL);
	if (pid == 0) {
		close(p[0]);
		child_enter(e);
		if (run(e, child_budget(e)))
			_exit(1);
		if (write(p[1], &e->p, sizeof(e->p)) != sizeof(e->p))
			_exit(1);
		child_exit(e);
	}
	close(p[1]);
	doing(e, "waiting for the fork child %d", (int)pid);
	if (read_full(p[0], &st, sizeof(st))) {
		close(p[0]);
		reap(e, pid);
		return fail(e, "the child ended without handing the stream back");
	}
	close(p[0]);
	e->p = st;
	if (rnd(&e->p.rng) % 2) {
		if (reap(e, pid))
			return -1;
	} else {
		reap_later(e, pid);
	}
	say(e, "the fork child %d is done", (int)pid);
	return e->p.closed ? DONE : refresh_nonblock(e);
}

static int send_fd(int sock, int fd, const void *data, size_t len)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)data, .iov_len = len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (fd >= 0) {
		struct cmsghdr *c;

		m.msg_control = u.buf;
		m.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	return sendmsg(sock, &m, 0) == (ssize_t)len ? 0 : -1;
}

/* DATA and the fd that comes with it (-1: none). */
static int recv_fd(int sock, int *fd, void *data, size_t len)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = data, .iov_len = len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;

	*fd = -1;
	if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != (ssize_t)len)
		return -1;
	c = CMSG_FIRSTHDR(&m);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
		memcpy(fd, CMSG_DATA(c), sizeof(int));
	return 0;
}

static int fdpass_child(struct end *e, int sock)
{
	struct progress st;
	int fd;

	child_enter(e);
	/* only the fd that comes over the socket names the connection here */
	if (e->alias >= 0 && fd_close(e, e->alias, "(inherited, before the fd passing)"))
		return -1;
	if (fd_close(e, e->fd, "(inherited, before the fd passing)"))
		return -1;
	e->fd = e->alias = -1;
	doing(e, "recvmsg(SCM_RIGHTS) of the connection");
	if (write(sock, "r", 1) != 1 || recv_fd(sock, &fd, &st, sizeof(st)) || fd < 0)
		return fail_errno(e, NULL);
	e->fd = fd;
	say(e, "got the connection as fd %d", fd);
	if (refresh_nonblock(e) || run(e, child_budget(e)))
		return -1;
	if (tx_complete(e) && !rx_pending(e) && conn_close(e))
		return -1;
	doing(e, "sendmsg(SCM_RIGHTS) of the connection back");
	if (send_fd(sock, e->fd, &e->p, sizeof(e->p)))
		return fail_errno(e, NULL);
	return 0;
}

/* Like op_fork, but the child gets the connection over a UNIX socket
 * (SCM_RIGHTS) after it closed what it inherited, and the parent closes its
 * copy; the child hands it back the same way. */
static int op_fdpass(struct end *e)
{
	struct progress st;
	int sp[2], fd;
	char c;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return fail_errno(e, "socketpair");
	doing(e, "fork for fd passing");
	say(e, "%s", e->doing);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return fail_errno(e, NULL);
	if (pid == 0) {
		close(sp[0]);
		if (fdpass_child(e, sp[1]))
			_exit(1);
		child_exit(e);
	}
	close(sp[1]);
	doing(e, "waiting for the fdpass child %d to close what it inherited", (int)pid);
	if (read(sp[0], &c, 1) != 1)
		goto child_failed;
	doing(e, "sendmsg(SCM_RIGHTS) of fd %d to the child", e->fd);
	if (send_fd(sp[0], e->fd, &e->p, sizeof(e->p))) {
		fail_errno(e, NULL);
		close(sp[0]);
		reap(e, pid);
		return -1;
	}
	if (conn_close(e))
		return -1;
	e->p.closed = 0;
	doing(e, "waiting for the fdpass child %d to hand the connection back", (int)pid);
	if (recv_fd(sp[0], &fd, &st, sizeof(st)) || (fd < 0 && !st.closed))
		goto child_failed;
	close(sp[0]);
	e->p = st;
	e->fd = fd;
	say(e, "the fdpass child %d handed back fd %d", (int)pid, fd);
	if (reap(e, pid))
		return -1;
	return e->p.closed ? DONE : refresh_nonblock(e);

child_failed:
	close(sp[0]);
	reap(e, pid);
	return fail(e, "the fdpass child ended without handing the connection back");
}

/* ---- the operation table -------------------------------------------------------------- */

struct op {
	enum kind kind;
	int dir;
	int flags;		/* the MSG_* flags the call takes */
	unsigned weight;	/* of the other operations, out of 100 */
	int (*io)(struct end *e, const struct call *c);
	int (*other)(struct end *e);
};

#define TXF (MSG_DONTWAIT | MSG_MORE)
#define RXF (MSG_DONTWAIT | MSG_WAITALL)
static const struct op ops[] = {
	{ K_WRITE, TX, 0, 0, op_write, NULL },
	{ K_WRITEV, TX, 0, 0, op_writev, NULL },
	{ K_SEND, TX, TXF, 0, op_send, NULL },
	{ K_SENDTO, TX, TXF, 0, op_sendto, NULL },
	{ K_SENDMSG, TX, TXF, 0, op_sendmsg, NULL },
	{ K_SENDMMSG, TX, TXF, 0, op_sendmmsg, NULL },
	{ K_SENDFILE, TX, 0, 0, op_sendfile, NULL },
	{ K_SPLICE_OUT, TX, MSG_MORE, 0, op_splice_out, NULL },
	{ K_READ, RX, 0, 0, op_read, NULL },
	{ K_READV, RX, 0, 0, op_readv, NULL },
	{ K_RECV, RX, RXF | MSG_PEEK, 0, op_recv, NULL },
	{ K_RECVFROM, RX, RXF | MSG_PEEK, 0, op_recvfrom, NULL },
	{ K_RECVMSG, RX, RXF | MSG_PEEK, 0, op_recvmsg, NULL },
	{ K_RECVMMSG, RX, RXF, 0, op_recvmmsg, NULL },
	{ K_SPLICE_IN, RX, 0, 0, op_splice_in, NULL },
	{ K_NONBLOCK, MISC, 0, 35, NULL, op_nonblock },
	{ K_SLEEP, MISC, 0, 15, NULL, op_sleep },
	{ K_DUP, MISC, 0, 30, NULL, op_dup },
	{ K_FORK, MISC, 0, 10, NULL, op_fork },
	{ K_FDPASS, MISC, 0, 10, NULL, op_fdpass },
};
#define NOPS (sizeof(ops) / sizeof(ops[0]))
#define MISC_PERCENT 8

static const struct op *find_op(enum kind k)
{
	for (size_t i = 0; i < NOPS; i++)
		if (ops[i].kind == k)
			return &ops[i];
	return NULL;
}

/* A random call for direction DIR (FLAGGED_ONLY: one that takes MSG_DONTWAIT). */
static const struct op *pick_io(struct end *e, int dir, int flagged_only)
{
	const struct op *c[NOPS];
	size_t n = 0;

	if (dir == TX && e->p.tx_inpipe)
		return find_op(K_SPLICE_OUT);	/* the pipe's rest first */
	for (size_t i = 0; i < NOPS; i++)
		if (ops[i].dir == dir && allowed(e, ops[i].kind) &&
		    (!flagged_only || (ops[i].flags & MSG_DONTWAIT)))
			c[n++] = &ops[i];
	if (n == 0)
		return find_op(dir == TX ? K_SEND : K_RECV);
	return c[rnd(&e->p.rng) % n];
}

static const struct op *pick_other(struct end *e)
{
	unsigned total = 0, r;

	for (size_t i = 0; i < NOPS; i++)
		if (ops[i].dir == MISC && allowed(e, ops[i].kind) &&
		    !(e->in_child && (ops[i].kind == K_FORK || ops[i].kind == K_FDPASS)))
			total += ops[i].weight;
	if (total == 0)
		return NULL;
	r = (unsigned)(rnd(&e->p.rng) % total);
	for (size_t i = 0; i < NOPS; i++)
		if (ops[i].dir == MISC && allowed(e, ops[i].kind) &&
		    !(e->in_child && (ops[i].kind == K_FORK || ops[i].kind == K_FDPASS))) {
			if (r < ops[i].weight)
				return &ops[i];
			r -= ops[i].weight;
		}
	return NULL;
}

static int pick_flags(struct end *e, const struct op *op)
{
	static const struct { int flag; enum kind kind; unsigned one_in; } f[] = {
		{ MSG_PEEK, K_PEEK, 6 }, { MSG_WAITALL, K_WAITALL, 4 },
		{ MSG_DONTWAIT, K_DONTWAIT, 4 }, { MSG_MORE, K_MORE, 4 },
	};
	int fl = 0;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if ((op->flags & f[i].flag) && allowed(e, f[i].kind) && rnd(&e->p.rng) % f[i].one_in == 0)
			fl |= f[i].flag;
	return fl;
}

/* Bytes of our receiving direction the peer has pushed and we have not read. */
static uint64_t peer_pushed(const struct end *e)
{
	uint64_t pushed = atomic_load(&g_sh->side[!e->role].tx_pushed);

	return pushed > e->p.rx_off ? pushed - e->p.rx_off : 0;
}

/* Bytes in the receive queue of fd now (FIONREAD), 0 if it cannot say. */
static size_t queued(int fd)
{
	int n = 0;

	return ioctl(fd, FIONREAD, &n) == 0 && n > 0 ? (size_t)n : 0;
}

/* The call's size, and for a send its bytes in g_tx. */
static size_t call_size(struct end *e, const struct op *op, int fl)
{
	size_t n = rnd_size(&e->p.rng);
	uint64_t left = op->dir == TX ? e->tx_len - e->p.tx_off : e->rx_len - e->p.rx_off;

	if (op->kind == K_SPLICE_OUT || op->kind == K_SPLICE_IN)
		n = n > PIPEIO ? PIPEIO : n;
	if (op->dir == TX || (fl & MSG_WAITALL)) {
		/* a send has no more to send; MSG_WAITALL must not wait past the end */
		if (n > left)
			n = left ? (size_t)left : 1;
		if ((fl & MSG_PEEK) && n > PEEK_WAITALL_MAX)
			n = PEEK_WAITALL_MAX;
		if ((fl & MSG_PEEK) && n > peer_pushed(e))
			n = (size_t)peer_pushed(e);
		if ((fl & MSG_PEEK) && n > 1) {
			size_t q = queued(e->fd); /* once: more may come meanwhile */

			if (n > q)
				n = q ? q : 1;
		}
	}
	if (op->dir == TX && !(op->kind == K_SPLICE_OUT && e->p.tx_inpipe))
		pat_fill(g_tx, e->seed, e->role, e->p.tx_off, n);
	return n;
}

/* One send or receive call: FORCE_FLAGS are added (MSG_DONTWAIT while
 * waiting for the token). */
static int do_call(struct end *e, const struct op *op, int force_flags)
{
	struct call c = { .flags = (pick_flags(e, op) | force_flags) & op->flags };
	int rc, held = 0;

	c.blocking = !e->nonblock && !(c.flags & MSG_DONTWAIT);
	if (c.blocking && (held = token_take(e, op->dir)) <= 0)
		return held;
	if (dir_pending(e, op->dir)) {
		c.fd = e->alias >= 0 && rnd(&e->p.rng) % 2 ? e->alias : e->fd;
		/*
		 * Nothing pushed to wait for: a plain peek (see PEEK_WAITALL_MAX).
		 * After the token: waiting for it may have read meanwhile.
		 */
		if ((c.flags & (MSG_PEEK | MSG_WAITALL)) == (MSG_PEEK | MSG_WAITALL) &&
		    !peer_pushed(e))
			c.flags &= ~MSG_WAITALL;
		c.n = call_size(e, op, c.flags);
		e->p.ops++;
		rc = op->io(e, &c);
		if (rc == AGAIN)
			say(e, "%s -> EAGAIN", e->doing);
	} else {
		rc = DONE;
	}
	if (held)
		token_give(e);
	if (rc == AGAIN && force_flags)
		rc = DONE;
	else if (rc == AGAIN)
		rc = wait_ready(e);
	return rc;
}

/* Which way the next call goes: preferably one the last wait found ready. */
static int pick_dir(struct end *e)
{
	int tx = tx_pending(e), rx = rx_pending(e);

	if (e->ready) {
		int rtx = tx && (e->ready & POLLOUT), rrx = rx && (e->ready & POLLIN);

		e->ready = 0;
		if (rtx || rrx) {
			tx = rtx;
			rx = rrx;
		}
	}
	if (tx && rx)
		return rnd(&e->p.rng) % 2 ? TX : RX;
	return tx ? TX : RX;
}

/* Run operations until both directions are done (or BUDGET of them, >= 0). */
static int run(struct end *e, long budget)
{
	while (tx_pending(e) || rx_pending(e)) {
		int rc;

		if (budget >= 0 && budget-- == 0)
			return 0;
		if (tx_complete(e) && !e->p.tx_shut && rx_pending(e) && tx_finish(e))
			return -1;
		if (rnd(&e->p.rng) % 100 < MISC_PERCENT) {
			const struct op *op = pick_other(e);

			if (!op)
				continue;
			e->p.ops++;
			rc = op->other(e);
			if (rc == 0 && e->p.closed)
				return 0;	/* a child finished the stream */
		} else {
			rc = do_call(e, pick_io(e, pick_dir(e), 0), 0);
		}
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* ---- fork children ------------------------------------------------------------------ */

static int reap(struct end *e, pid_t pid)
{
	int st;

	doing(e, "waitpid(%d)", (int)pid);
	if (waitpid(pid, &st, 0) < 0)
		return fail_errno(e, NULL);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFSIGNALED(st))
		return fail(e, "the child was killed by signal %d", WTERMSIG(st));
	return fail(e, "the child exited with %d", WEXITSTATUS(st));
}

static void reap_later(struct end *e, pid_t pid)
{
	if (e->nkids == MAXKIDS) {
		reap(e, e->kids[0]);
		memmove(e->kids, e->kids + 1, sizeof(e->kids[0]) * (MAXKIDS - 1));
		e->nkids--;
	}
	e->kids[e->nkids++] = pid;
}

/* ---- the two ends ------------------------------------------------------------------ */

/* The driver's timeout comes first; this one ends an end left alone. */
static void on_end_watchdog(int sig)
{
	(void)sig;
	_exit(3);
}

static int setup_end(struct end *e, int role)
{
	char tmpl[PATH_MAX];
	const char *dir = getenv("TMPDIR");

	*e = (struct end){ .role = role, .seed = g_sh->seed, .allowed = g_sh->allowed,
			   .verbose = g_sh->verbose, .fd = -1, .alias = -1, .epfd = -1, .ep_reg = -1 };
	e->tx_len = stream_len(e->seed, g_sh->volume, role);
	e->rx_len = stream_len(e->seed, g_sh->volume, !role);
	e->p.rng = mix(e->seed * 2 + (uint64_t)role + 77) | 1;
	snprintf(e->doing, sizeof(e->doing), "setting up");
	if (e->verbose == VERBOSE_HISTORY) {
		struct sigaction sa = { .sa_handler = on_history, .sa_flags = SA_RESTART };

		sigaction(SIGUSR1, &sa, NULL);
	}
	if (pipe2(e->pipe_out, O_CLOEXEC) < 0 || pipe2(e->pipe_in, O_CLOEXEC) < 0)
		return fail_errno(e, "pipe2");
	snprintf(tmpl, sizeof(tmpl), "%s/sockfuzz.XXXXXX", dir && *dir ? dir : "/tmp");
	if ((e->file = mkostemp(tmpl, O_CLOEXEC)) < 0)
		return fail_errno(e, "mkostemp");
	unlink(tmpl);
	return 0;
}

static int wait_fd(struct end *e, int fd, short ev)
{
	struct pollfd p = { .fd = fd, .events = ev };

	if (poll(&p, 1, -1) < 0)
		return fail_errno(e, "poll");
	return 0;
}

static int server_connect(struct end *e, int readyfd)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int nb = rnd(&e->p.rng) % 4 == 0, lfd;

	doing(e, "listen");
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nb ? SOCK_NONBLOCK : 0), 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(lfd, 1) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &len) < 0)
		return fail_errno(e, NULL);
	atomic_store(&g_sh->port, ntohs(a.sin_port));
	if (write(readyfd, "p", 1) != 1)
		return fail_errno(e, "write of the ready byte");
	close(readyfd);
	doing(e, "accept");
	if (nb && wait_fd(e, lfd, POLLIN))
		return -1;
	if (rnd(&e->p.rng) % 2)
		e->fd = accept(lfd, NULL, NULL);
	else
		e->fd = accept4(lfd, NULL, NULL, rnd(&e->p.rng) % 2 ? SOCK_NONBLOCK : 0);
	if (e->fd < 0)
		return fail_errno(e, NULL);
	close(lfd);
	return 0;
}

static int client_connect(struct end *e)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				 .sin_port = htons((uint16_t)atomic_load(&g_sh->port)) };
	int nb = rnd(&e->p.rng) % 4 == 0, err = 0;
	socklen_t len = sizeof(err);

	doing(e, "connect%s", nb ? " (non-blocking)" : "");
	e->fd = socket(AF_INET, SOCK_STREAM | (nb ? SOCK_NONBLOCK : 0), 0);
	if (e->fd < 0)
		return fail_errno(e, "socket");
	if (connect(e->fd, (struct sockaddr *)&a, sizeof(a)) == 0)
		return 0;
	if (errno != EINPROGRESS)
		return fail_errno(e, NULL);
	if (wait_fd(e, e->fd, POLLOUT) ||
	    getsockopt(e->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		return -1;
	if (err)
		return fail(e, "%s", strerror(err));
	return 0;
}

static int end_main(int role, int shmfd, int readyfd)
{
	struct sigaction sa = { .sa_handler = on_end_watchdog };
	socklen_t len = sizeof(struct sockaddr_in);
	struct end e;
	int rc;

	g_sh = mmap(NULL, sizeof(*g_sh), PROT_READ | PROT_WRITE, MAP_SHARED, shmfd, 0);
	if (g_sh == MAP_FAILED)
		return perror("sockfuzz: mmap"), 2;
	close(shmfd);
	signal(SIGPIPE, SIG_IGN);
	sigaction(SIGALRM, &sa, NULL);
	alarm(g_sh->timeout + 10);
	if (setup_end(&e, role))
		return 1;
	if (role == SERVER ? server_connect(&e, readyfd) : client_connect(&e))
		return 1;
	if (getpeername(e.fd, (struct sockaddr *)&e.peer, &len) < 0)
		return fail_errno(&e, "getpeername"), 1;
	if (refresh_nonblock(&e))
		return 1;
	say(&e, "connected, fd %d%s, sending %llu bytes, receiving %llu", e.fd,
	    e.nonblock ? " (O_NONBLOCK)" : "", (unsigned long long)e.tx_len,
	    (unsigned long long)e.rx_len);
	if (tx_complete(&e) && tx_finish(&e))
		return 1;
	rc = run(&e, -1);
	if (rc == 0 && !e.p.closed)
		rc = conn_close(&e);
	while (e.nkids > 0)
		if (reap(&e, e.kids[--e.nkids]))
			rc = -1;
	doing(&e, "done");
	say(&e, "done");
	return rc ? 1 : 0;
}

/* ---- the driver -------------------------------------------------------------------- */

static char g_self[PATH_MAX];
static volatile sig_atomic_t g_timed_out;

static void on_timeout(int sig)
{
	(void)sig;
	g_timed_out = 1;
}

static pid_t spawn(char **wrap, int nwrap, char **args)
{
	char *argv[64];
	int n = 0;
	pid_t pid;

	for (int i = 0; i < nwrap && n < 56; i++)
		argv[n++] = wrap[i];
	argv[n++] = g_self;
	while (*args)
		argv[n++] = *args++;
	argv[n] = NULL;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		setpgid(0, 0);	/* the end and its children, to kill them on a timeout */
		execvp(argv[0], argv);
		fprintf(stderr, "sockfuzz: exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (pid > 0)
		setpgid(pid, pid);
	return pid;
}

static void describe_exit(char *out, size_t len, int st)
{
	if (WIFSIGNALED(st))
		snprintf(out, len, "killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
	else if (WEXITSTATUS(st) == 3)
		snprintf(out, len, "its own watchdog fired");
	else
		snprintf(out, len, "exited with status %d", WEXITSTATUS(st));
}

/* One seed: both ends, then one line if anything went wrong.  Returns 0 ok. */
static int run_seed(char **wrap, int nwrap, int shmfd)
{
	char shm_arg[16], ready_arg[16], why[2][700];
	char *sargs[] = { (char *)"server", shm_arg, ready_arg, NULL };
	char *cargs[] = { (char *)"client", shm_arg, NULL };
	pid_t kid[2] = { -1, -1 };
	int st[2] = { 0, 0 }, done[2] = { 0, 0 }, ready[2], bad = 0;
	char c;

	snprintf(shm_arg, sizeof(shm_arg), "%d", shmfd);
	if (pipe(ready) < 0)
		return perror("sockfuzz: pipe"), -1;
	fcntl(ready[0], F_SETFD, FD_CLOEXEC);
	snprintf(ready_arg, sizeof(ready_arg), "%d", ready[1]);
	g_timed_out = 0;
	alarm(g_sh->timeout);
	kid[SERVER] = spawn(wrap, nwrap, sargs);
	close(ready[1]);
	if (read(ready[0], &c, 1) == 1)
		kid[CLIENT] = spawn(wrap, nwrap, cargs);
	close(ready[0]);
	while (!g_timed_out && (!done[0] || (kid[1] > 0 && !done[1]))) {
		int s;
		pid_t p = wait(&s);

		for (int i = 0; i < 2; i++)
			if (p > 0 && p == kid[i]) {
				st[i] = s;
				done[i] = 1;
			}
	}
	alarm(0);
	for (int i = 0; i < 2; i++) {
		struct side *sd = &g_sh->side[i];

		why[i][0] = 0;
		if (kid[i] > 0 && !done[i]) {
			if (g_sh->verbose == VERBOSE_HISTORY) {
				kill(-kid[i], SIGUSR1);
				usleep(300000);
			}
			kill(-kid[i], SIGKILL);
			waitpid(kid[i], NULL, 0);
			snprintf(why[i], sizeof(why[i]), "%s %d: timeout after %u s in %s (tx %llu, rx %llu)",
				 role_name[i], atomic_load(&sd->pid), g_sh->timeout, sd->doing,
				 (unsigned long long)atomic_load(&sd->tx_off),
				 (unsigned long long)atomic_load(&sd->rx_off));
		} else if (kid[i] < 0) {
			snprintf(why[i], sizeof(why[i]), "%s: never started (the server gave no port)",
				 role_name[i]);
		} else if (sd->failed) {
			snprintf(why[i], sizeof(why[i]), "%s", sd->msg);
		} else if (!WIFEXITED(st[i]) || WEXITSTATUS(st[i]) != 0) {
			char how[80];

			describe_exit(how, sizeof(how), st[i]);
			snprintf(why[i], sizeof(why[i]), "%s: %s in %s", role_name[i], how, sd->doing);
		}
		if (kid[i] > 0)
			kill(-kid[i], SIGKILL);	/* children left behind, if any */
	}
	if (why[0][0] || why[1][0]) {
		/* the end that failed first leads; the other is often a consequence */
		int first = !why[0][0] ? 1 : !why[1][0] ? 0 :
			    (g_sh->side[1].failed && (!g_sh->side[0].failed ||
						      g_sh->side[1].failed < g_sh->side[0].failed));
		printf("sockfuzz: seed %llu: %s%s%s%s\n", (unsigned long long)g_sh->seed, why[first],
		       why[!first][0] ? " [then " : "", why[!first], why[!first][0] ? "]" : "");
		bad = 1;
	}
	return bad;
}

static uint64_t parse_size(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 10);

	switch (*end) {
	case 'k': case 'K': return v * KiB;
	case 'm': case 'M': return v * MiB;
	case 'g': case 'G': return v * 1024 * MiB;
	default: return *end ? UINT64_MAX : v;
	}
}

/* A comma separated list of kind names as a mask; UINT_MAX if one is unknown. */
static unsigned parse_kinds(const char *list)
{
	char buf[512], *save, *t;
	unsigned m = 0;

	snprintf(buf, sizeof(buf), "%s", list);
	for (t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int k;

		for (k = 0; k < K_COUNT && strcmp(kind_name[k], t) != 0; k++)
			;
		if (k == K_COUNT) {
			fprintf(stderr, "sockfuzz: unknown operation kind '%s' (see sockfuzz -l)\n", t);
			return UINT_MAX;
		}
		m |= BIT(k);
	}
	return m;
}

static int usage(void)
{
	fprintf(stderr, "usage: sockfuzz [-s SEED | -S FIRST -n COUNT] [-v BYTES] [-x KINDS] "
			"[-o KINDS] [-t SECS] [-k] [-V | -H] [WRAPPER...]\n"
			"       sockfuzz -l\n");
	return 2;
}

int main(int argc, char **argv)
{
	uint64_t first = 1, count = 1, volume = 4 * MiB, failed = 0, ran = 0, bytes[2] = { 0, 0 };
	unsigned allowed = BIT(K_COUNT) - 1, timeout = 30;
	int keep_going = 0, verbose = 0, shmfd, opt;
	struct sigaction sa = { .sa_handler = on_timeout };
	struct timespec t0, t1;
	ssize_t n = readlink("/proc/self/exe", g_self, sizeof(g_self) - 1);

	if (n <= 0)
		return perror("sockfuzz: readlink /proc/self/exe"), 2;
	g_self[n] = 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && strcmp(argv[1], "server") == 0)
		return end_main(SERVER, atoi(argv[2]), atoi(argv[3]));
	if (argc == 3 && strcmp(argv[1], "client") == 0)
		return end_main(CLIENT, atoi(argv[2]), -1);
	while ((opt = getopt(argc, argv, "+s:S:n:v:x:o:t:kVHl")) != -1) {
		unsigned m;

		switch (opt) {
		case 's': first = strtoull(optarg, NULL, 0); count = 1; break;
		case 'S': first = strtoull(optarg, NULL, 0); break;
		case 'n': count = strtoull(optarg, NULL, 0); break;
		case 'v':
			if ((volume = parse_size(optarg)) == UINT64_MAX)
				return usage();
			break;
		case 'x':
		case 'o':
			if ((m = parse_kinds(optarg)) == UINT_MAX)
				return 2;
			allowed = opt == 'x' ? allowed & ~m : m;
			break;
		case 't': timeout = (unsigned)atoi(optarg); break;
		case 'k': keep_going = 1; break;
		case 'V': verbose = VERBOSE_ALL; break;
		case 'H': verbose = VERBOSE_HISTORY; break;
		case 'l':
			for (int k = 0; k < K_COUNT; k++)
				printf("%-11s %s\n", kind_name[k], kind_help[k]);
			return 0;
		default: return usage();
		}
	}
	if (count == 0 || timeout == 0)
		return usage();
	shmfd = memfd_create("sockfuzz", 0);
	if (shmfd < 0 || ftruncate(shmfd, sizeof(struct shared)) < 0)
		return perror("sockfuzz: memfd"), 2;
	g_sh = mmap(NULL, sizeof(*g_sh), PROT_READ | PROT_WRITE, MAP_SHARED, shmfd, 0);
	if (g_sh == MAP_FAILED)
		return perror("sockfuzz: mmap"), 2;
	sigaction(SIGALRM, &sa, NULL);	/* no SA_RESTART: the wait for the ends ends */
	signal(SIGPIPE, SIG_IGN);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint64_t s = first; s < first + count; s++) {
		struct timespec s0, s1;
		int bad;

		memset(g_sh, 0, sizeof(*g_sh));
		g_sh->seed = s;
		g_sh->volume = volume;
		g_sh->allowed = allowed;
		g_sh->verbose = verbose;
		g_sh->timeout = timeout;
		clock_gettime(CLOCK_MONOTONIC, &s0);
		bad = run_seed(argv + optind, argc - optind, shmfd);
		clock_gettime(CLOCK_MONOTONIC, &s1);
		ran++;
		bytes[CLIENT] += stream_len(s, volume, CLIENT);
		bytes[SERVER] += stream_len(s, volume, SERVER);
		if (verbose == VERBOSE_ALL && !bad)
			printf("sockfuzz: seed %llu ok: %llu bytes client to server, %llu server to client, "
			       "%.2f s\n", (unsigned long long)s,
			       (unsigned long long)stream_len(s, volume, CLIENT),
			       (unsigned long long)stream_len(s, volume, SERVER),
			       (double)(s1.tv_sec - s0.tv_sec) + (double)(s1.tv_nsec - s0.tv_nsec) / 1e9);
		if (bad) {
			failed++;
			if (!keep_going)
				break;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("sockfuzz: %llu seeds, %llu bytes client to server, %llu server to client, %.1f s\n",
	       (unsigned long long)ran, (unsigned long long)bytes[CLIENT],
	       (unsigned long long)bytes[SERVER],
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	if (failed) {
		printf("sockfuzz: FAILED: %llu of %llu seeds\n", (unsigned long long)failed,
		       (unsigned long long)ran);
		return 1;
	}
	printf("sockfuzz ok: %llu seeds\n", (unsigned long long)ran);
	return 0;
}
