/*
 * The control connection to smc_softd as a messenger: opened at the
 * process's first TCP socket (ctl_hello: the daemon then lists the process's
 * sockets in smcss) or else at the first PAIR, the counters and dump ring
 * it attaches, the SOCK_DELs it sends or keeps in a backlog, the doorbell
 * requests, and losing it.  When the daemon cannot be reached, a new
 * attempt is made at most once a second.  What is asked over it, and when,
 * is ctl.c's (the pairing) and settle.c's (new processes).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "conn.h"
#include "ctl_int.h"
#include "reg_client.h"

#define CTL_RETRY_SEC  1
/*
 * The daemon takes only a few requests ahead from one connection (the
 * socket's queue, net.unix.max_dgram_qlen): a SOCK_DEL it cannot take at
 * once is waited for this long, then kept until the next request.
 */
#define DEL_WAIT_MS    500
#define DEL_BACKLOG    256

pthread_mutex_t ctl_mu = PTHREAD_MUTEX_INITIALIZER;
struct soft_reg_conn chan = { .fd = -1 };
unsigned chan_gen;                          /* bumped by each control connection we use */
static time_t retry_at;
static struct soft_pstats private_stats = {
	.magic = SOFT_PSTATS_MAGIC, .version = SOFT_PSTATS_VERSION,
	.size = sizeof(struct soft_pstats),
};
struct soft_pstats *pstats = &private_stats;
static struct soft_pdump_ctl pdump_off;       /* the dump while no daemon reads ours */
struct soft_pdump_ctl *pdump_ctl = &pdump_off;
static bool stats_shared;
static _Atomic bool said_hello;             /* the connection is open since ctl_hello */
static _Atomic time_t hello_at;             /* no daemon: ctl_hello tries again then */

struct del_req {
	uint64_t token;            /* by token, else by the PAIR's sequence number */
	uint32_t seq;
};
static struct del_req del_backlog[DEL_BACKLOG];
static size_t ndel;
static _Atomic size_t ndel_hint;
static _Atomic size_t nbell_hint;          /* BELL replies still due */
static _Atomic unsigned lost_epoch;         /* chan_gone() calls */

static time_t now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/*
 * Counters in a sealed memfd the daemon reads, ours copied over; the dump's
 * control line and ring (pstats.h) in the same memfd.  A forked child
 * counted into its parent's memfd so far: those counts stay there.  wait:
 * for the daemon's answer; not on a connection inherited across execve,
 * where the old image's PAIR replies may come first (a synchronous call
 * would swallow them, and their connections would stay TCP).
 */
static void stats_attach(bool wait)
{
	struct soft_pstats *p;
	void *map;
	int fd, rc;

	if (stats_shared)
		return;
	fd = memfd_create("smc-soft-stats", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return;
	if (ftruncate(fd, SOFT_PSTATS_MAP_LEN) < 0 ||
	    next.fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		next.close(fd);
		return;
	}
	map = mmap(NULL, SOFT_PSTATS_MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		next.close(fd);
		return;
	}
	p = map;
	if (pstats == &private_stats) {
		memcpy(p, pstats, sizeof(*p));
	} else {
		p->magic = SOFT_PSTATS_MAGIC;
		p->version = SOFT_PSTATS_VERSION;
		p->size = sizeof(*p);
	}
	rc = wait ? soft_reg_stats_attach(&chan, fd) : soft_reg_stats_attach_send(&chan, fd);
	next.close(fd);
	if (rc) {
		preload_dbg("libsmc-preload: soft stats not attached: %s\n", strerror(-rc));
		munmap(map, SOFT_PSTATS_MAP_LEN);
		return;
	}
	pstats = p;
	pdump_ctl = soft_pdump_ctl_of(map);
	stats_shared = true;
}

/* With ctl_mu held. */
bool chan_open(void)
{
	int rc;

	if (chan.fd >= 0)
		return true;
	if (retry_at && now_sec() < retry_at)
		return false;
	soft_reg_close_with(next.close);
	rc = soft_reg_open(&chan, soft_cfg.socket_path, CTL_TIMEOUT_MS);
	if (rc) {
		retry_at = now_sec() + CTL_RETRY_SEC;
		preload_dbg("libsmc-preload: soft backend not reachable: %s, using TCP\n",
			    strerror(-rc));
		return false;
	}
	retry_at = 0;
	chan_gen++;
	stats_attach(true);
	return true;
}

/*
 * No daemon is not worth a socket or a word until a connection could pair:
 * without the control socket's file, look again a second later.
 */
bool chan_daemon_there(void)
{
	time_t now = now_sec();
	struct stat sb;

	if (now < atomic_load_explicit(&hello_at, memory_order_relaxed))
		return false;
	if (stat(soft_cfg.socket_path, &sb) == 0 && S_ISSOCK(sb.st_mode))
		return true;
	atomic_store_explicit(&hello_at, now + CTL_RETRY_SEC, memory_order_relaxed);
	return false;
}

void ctl_hello(void)
{
	if (atomic_load_explicit(&said_hello, memory_order_relaxed) || soft_sandboxed() ||
	    !chan_daemon_there())
		return;
	/* a thread in the middle of a PAIR has it open already, or will */
	if (pthread_mutex_trylock(&ctl_mu))
		return;
	if (chan_open())
		atomic_store(&said_hello, true);
	pthread_mutex_unlock(&ctl_mu);
}

/* With ctl_mu held: the connection broke (the caller drops the requests waiting on it). */
void chan_lost(void)
{
	/* the daemon drops the connection's registrations itself */
	bell_daemon_lost();
	atomic_store(&nbell_hint, 0);
	ndel = 0;
	atomic_store(&ndel_hint, 0);
	soft_reg_close(&chan);
	retry_at = now_sec() + CTL_RETRY_SEC;
	atomic_store(&said_hello, false);
	/* no daemon drains our ring any more */
	pdump_ctl = &pdump_off;
	/* the next daemon hears of our link groups afresh */
	ctl_lgr_forget();
}

/*
 * With ctl_mu held: the connection broke on the daemon's side (it died, or
 * dropped us): the regions it knew of ours are known to no daemon now.
 */
void chan_gone(void)
{
	atomic_fetch_add(&lost_epoch, 1);
	chan_lost();
}

static int del_try(const struct del_req *d, int proof)
{
	return d->token ? soft_reg_del_send(&chan, d->token, proof)
			: soft_reg_del_seq_send(&chan, d->seq);
}

/* With ctl_mu held: true once the daemon's queue has room, within DEL_WAIT_MS. */
static bool del_room(void)
{
	struct pollfd p = { .fd = chan.fd, .events = POLLOUT };
	int rc;

	do
		rc = next.poll(&p, 1, DEL_WAIT_MS);
	while (rc < 0 && errno == EINTR);
	return rc == 1 && !(p.revents & (POLLERR | POLLHUP));
}

/*
 * With ctl_mu held: the backlog, in order.  While the daemon takes some,
 * it drains its queue: wait for room and go on; a daemon that takes none
 * is not waited for here.
 */
void chan_del_flush(void)
{
	size_t i = 0, sent;

	do {
		sent = i;
		while (i < ndel && chan.fd >= 0 && del_try(&del_backlog[i], -1) != -EAGAIN)
			i++;
	} while (i < ndel && i > sent && chan.fd >= 0 && del_room());
	memmove(del_backlog, del_backlog + i, (ndel - i) * sizeof(del_backlog[0]));
	ndel -= i;
	atomic_store(&ndel_hint, ndel);
}

/*
 * With ctl_mu held: a SOCK_DEL, by token (proof: the socket, when another
 * process registered it, else -1) or by PAIR sequence number.  A request
 * the daemon cannot take after a short wait waits in the backlog; one with
 * a proof cannot (the socket is being closed), it is lost with a word.
 */
void chan_del_send(uint64_t token, uint32_t seq, int proof)
{
	struct del_req d = { .token = token, .seq = seq };
	int rc = -EAGAIN;

	if (chan.fd < 0)
		return;
	chan_del_flush();
	if (ndel && proof >= 0 && del_room())
		chan_del_flush();
	/* behind a backlog that did not go, a wait would not help */
	if (!ndel) {
		rc = del_try(&d, proof);
		if (rc == -EAGAIN && del_room())
			rc = del_try(&d, proof);
	}
	if (rc == -EAGAIN && proof < 0 && ndel < DEL_BACKLOG) {
		del_backlog[ndel++] = d;
		atomic_store(&ndel_hint, ndel);
	} else if (rc) {
		preload_dbg("libsmc-preload: registration not ended: %s\n", strerror(-rc));
	}
}

static bool bell_send(long seq)
{
	if (seq <= 0)
		return false;
	atomic_fetch_add(&nbell_hint, 1);
	return true;
}

/* Both without waiting for ctl_mu: callers may hold a connection's locks. */
bool ctl_bell_set(int efd, unsigned slot, _Atomic long *seq)
{
	long s;
	bool ok = false;

	if (pthread_mutex_trylock(&ctl_mu))
		return false;
	if (chan_open()) {
		s = soft_reg_bell_set_send(&chan, efd, (uint8_t)slot);
		/* before any thread can read the reply */
		if ((ok = bell_send(s)))
			atomic_store(seq, s);
	}
	pthread_mutex_unlock(&ctl_mu);
	return ok;
}

bool ctl_bell_get(uint32_t id)
{
	bool ok;

	if (pthread_mutex_trylock(&ctl_mu))
		return false;
	ok = chan.fd >= 0 && bell_send(soft_reg_bell_get_send(&chan, id));
	pthread_mutex_unlock(&ctl_mu);
	return ok;
}

unsigned ctl_epoch(void)
{
	return atomic_load_explicit(&lost_epoch, memory_order_relaxed);
}

bool ctl_owns(int fd)
{
	return fd >= 0 && fd == __atomic_load_n(&chan.fd, __ATOMIC_RELAXED);
}

/* With ctl_mu held: the daemon went away since (its regions went with it). */
bool chan_broken(void)
{
	struct pollfd p = { .fd = chan.fd, .events = POLLIN };

	return chan.fd >= 0 && next.poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR));
}

void chan_retry_now(void)
{
	retry_at = 0;
}

bool chan_dels_due(void)
{
	return atomic_load_explicit(&ndel_hint, memory_order_relaxed) != 0;
}

bool chan_bells_due(void)
{
	return atomic_load_explicit(&nbell_hint, memory_order_relaxed) != 0;
}

void chan_bell_taken(void)
{
	if (atomic_load(&nbell_hint))
		atomic_fetch_sub(&nbell_hint, 1);
}

/* With ctl_mu held: the connection the image before execve() left us. */
void chan_adopt(int fd, uint16_t family, uint32_t seq)
{
	soft_reg_close_with(next.close);
	chan.fd = fd;
	chan.family = family;
	chan.seq = seq;
	chan_gen++;
	stats_attach(false);
}

/*
 * The child must not read the parent's replies: it gets its own connection
 * when it needs one.  Until then it counts, and writes dump records, into
 * the parent's memfd.
 */
void chan_after_fork_child(void)
{
	atomic_store(&nbell_hint, 0);
	if (chan.fd >= 0)
		next.close(chan.fd);
	chan.fd = -1;
	/* the parent's registrations are another process's now: ended with proof */
	chan_gen++;
	retry_at = 0;
	stats_shared = false;
	atomic_store(&said_hello, false);
	atomic_store(&hello_at, 0);
	pthread_mutex_init(&ctl_mu, NULL);
}
