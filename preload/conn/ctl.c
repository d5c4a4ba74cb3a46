/*
 * The control connection to smc_softd: one per process, opened at the
 * process's first TCP socket (ctl_hello: the daemon then lists the process's
 * sockets in smcss) or else at the first PAIR, used only asynchronously
 * after that (reg_client.h), so pairing never makes the application wait.
 * When the daemon cannot be reached, sockets stay TCP and a new attempt is
 * made at most once a second.
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
#include "reg_client.h"

#define CTL_TIMEOUT_MS 1000
#define CTL_RETRY_SEC  1
/*
 * The daemon takes only a few requests ahead from one connection (the
 * socket's queue, net.unix.max_dgram_qlen): a SOCK_DEL it cannot take at
 * once is waited for this long, then kept until the next request.
 */
#define DEL_WAIT_MS    500
#define DEL_BACKLOG    256

struct pending {
	uint32_t seq;
	struct sconn *sc;          /* holds a reference */
	bool exec;                 /* a SOCK_INFO after execve */
};

static pthread_mutex_t ctl_mu = PTHREAD_MUTEX_INITIALIZER;
static struct soft_reg_conn conn = { .fd = -1 };
static time_t retry_at;
static struct pending *pend;
static size_t npend, cap;
static _Atomic size_t npend_hint;
/*
 * Replies still due to PAIRs whose socket closed first (pend_orphan): read
 * and let go at the next look, or a process that asks nothing more would
 * leave them in its socket until the daemon's sends to it block, and with
 * them its reading of this process's requests, their sockets in flight
 * kept open (no FIN), and its rows.
 */
static size_t norphan;
static _Atomic size_t norphan_hint;
static struct soft_pstats private_stats = {
	.magic = SOFT_PSTATS_MAGIC, .version = SOFT_PSTATS_VERSION,
	.size = sizeof(struct soft_pstats),
};
struct soft_pstats *pstats = &private_stats;
static struct soft_pdump_ctl pdump_off;       /* the dump while no daemon reads ours */
struct soft_pdump_ctl *pdump_ctl = &pdump_off;
static bool stats_shared;
static unsigned conn_gen;                   /* bumped by each control connection we use */
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
static _Atomic unsigned lost_epoch;         /* daemon_gone() calls */

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
	rc = wait ? soft_reg_stats_attach(&conn, fd) : soft_reg_stats_attach_send(&conn, fd);
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
static bool ctl_open(void)
{
	int rc;

	if (conn.fd >= 0)
		return true;
	if (retry_at && now_sec() < retry_at)
		return false;
	soft_reg_close_with(next.close);
	rc = soft_reg_open(&conn, soft_cfg.socket_path, CTL_TIMEOUT_MS);
	if (rc) {
		retry_at = now_sec() + CTL_RETRY_SEC;
		preload_dbg("libsmc-preload: soft backend not reachable: %s, using TCP\n",
			    strerror(-rc));
		return false;
	}
	retry_at = 0;
	conn_gen++;
	stats_attach(true);
	return true;
}

/*
 * No daemon is not worth a socket or a word until a connection could pair:
 * without the control socket's file, look again a second later.
 */
static bool daemon_there(void)
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
	    !daemon_there())
		return;
	/* a thread in the middle of a PAIR has it open already, or will */
	if (pthread_mutex_trylock(&ctl_mu))
		return;
	if (ctl_open())
		atomic_store(&said_hello, true);
	pthread_mutex_unlock(&ctl_mu);
}

/* Every request still out is given up: its socket stays TCP. */
static void pend_drop_all(void)
{
	for (size_t i = 0; i < npend; i++) {
		conn_stay_tcp(pend[i].sc);
		sconn_put(pend[i].sc);
	}
	npend = 0;
	atomic_store(&npend_hint, 0);
	norphan = 0;
	atomic_store(&norphan_hint, 0);
}

/* With ctl_mu held: the connection broke, every waiting request with it. */
static void ctl_lost(void)
{
	/* the daemon drops the connection's registrations itself */
	bell_daemon_lost();
	atomic_store(&nbell_hint, 0);
	ndel = 0;
	atomic_store(&ndel_hint, 0);
	pend_drop_all();
	soft_reg_close(&conn);
	retry_at = now_sec() + CTL_RETRY_SEC;
	atomic_store(&said_hello, false);
	/* no daemon drains our ring any more */
	pdump_ctl = &pdump_off;
}

/*
 * With ctl_mu held: the connection broke on the daemon's side (it died, or
 * dropped us): the regions it knew of ours are known to no daemon now.
 */
static void daemon_gone(void)
{
	atomic_fetch_add(&lost_epoch, 1);
	ctl_lost();
}

static int del_try(const struct del_req *d, int proof)
{
	return d->token ? soft_reg_del_send(&conn, d->token, proof)
			: soft_reg_del_seq_send(&conn, d->seq);
}

/* With ctl_mu held: true once the daemon's queue has room, within DEL_WAIT_MS. */
static bool del_room(void)
{
	struct pollfd p = { .fd = conn.fd, .events = POLLOUT };
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
static void del_flush(void)
{
	size_t i = 0, sent;

	do {
		sent = i;
		while (i < ndel && conn.fd >= 0 && del_try(&del_backlog[i], -1) != -EAGAIN)
			i++;
	} while (i < ndel && i > sent && conn.fd >= 0 && del_room());
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
static void del_send(uint64_t token, uint32_t seq, int proof)
{
	struct del_req d = { .token = token, .seq = seq };
	int rc = -EAGAIN;

	if (conn.fd < 0)
		return;
	del_flush();
	if (ndel && proof >= 0 && del_room())
		del_flush();
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

static bool pend_add(uint32_t seq, struct sconn *sc)
{
	if (npend == cap) {
		size_t ncap = cap ? cap * 2 : 16;
		struct pending *p = realloc(pend, ncap * sizeof(*p));

		if (!p)
			return false;
		pend = p;
		cap = ncap;
	}
	atomic_fetch_add(&sc->refs, 1);
	pend[npend].seq = seq;
	pend[npend].sc = sc;
	pend[npend].exec = false;
	npend++;
	atomic_store(&npend_hint, npend);
	return true;
}

static int exec_waiting;                   /* SOCK_INFO replies still due */

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
	if (ctl_open()) {
		s = soft_reg_bell_set_send(&conn, efd, (uint8_t)slot);
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
	ok = conn.fd >= 0 && bell_send(soft_reg_bell_get_send(&conn, id));
	pthread_mutex_unlock(&ctl_mu);
	return ok;
}

static struct sconn *pend_take(uint32_t seq, bool *exec)
{
	for (size_t i = 0; i < npend; i++)
		if (pend[i].seq == seq) {
			struct sconn *sc = pend[i].sc;

			*exec = pend[i].exec;
			if (pend[i].exec)
				exec_waiting--;
			pend[i] = pend[--npend];
			atomic_store(&npend_hint, npend);
			return sc;
		}
	return NULL;
}

uint32_t ctl_decline_reason(const struct sconn *sc)
{
	uint32_t d = atomic_load(&sc->decline);

	if (d)
		return d;
	return soft_uring_seen() ? SMC_SOFT_DECL_URING : 0;
}

static long pair_send(int fd, struct sconn *sc)
{
	struct soft_pair_req q = {
		.role = sc->role == 1 ? 1 : 0,
		.sndbuf = preload_cfg.sndbuf > 0 ? (uint32_t)preload_cfg.sndbuf : 0,
		.rcvbuf = preload_cfg.rcvbuf > 0 ? (uint32_t)preload_cfg.rcvbuf : 0,
		.decline = ctl_decline_reason(sc),
	};

	return soft_reg_pair_send(&conn, fd, &q);
}

/* With ctl_mu held: PAIR sc (socket fd) if it is still NEW. */
static void pair_locked(int fd, struct sconn *sc)
{
	long seq;

	if (!conn_ask(sc))
		return;
	if (soft_sandboxed() || !ctl_open()) {
		conn_stay_tcp(sc);
		return;
	}
	del_flush();
	seq = pair_send(fd, sc);
	if (seq == -EPIPE || seq == -ECONNRESET || seq == -ENOTCONN) {
		/* the daemon restarted since our connection opened: a new one, at once */
		daemon_gone();
		retry_at = 0;
		seq = ctl_open() ? pair_send(fd, sc) : -ENOTCONN;
	}
	if (seq == -EAGAIN) {
		/* the daemon is behind a burst of connections: ask again later */
		conn_ask_later(sc);
	} else if (seq <= 0) {
		preload_dbg("libsmc-preload: soft pairing not asked: %s\n", strerror((int)-seq));
		conn_stay_tcp(sc);
		daemon_gone();
	} else {
		sc->seq = (uint32_t)seq;
		if (!pend_add(sc->seq, sc))
			conn_stay_tcp(sc);
	}
}

static void replies_locked(void);

void ctl_offer(int fd, struct sconn *sc, bool trylock)
{
	/* no daemon: TCP for good, without a word (a data call would try again) */
	if (soft_sandboxed() || !daemon_there()) {
		conn_stay_tcp_if_new(sc);
		return;
	}
	if (trylock ? pthread_mutex_trylock(&ctl_mu) != 0 : pthread_mutex_lock(&ctl_mu) != 0)
		return;
	/* a server that only accepts collects its replies here */
	replies_locked();
	pair_locked(fd, sc);
	pthread_mutex_unlock(&ctl_mu);
}

void ctl_maybe_pair(int fd, struct sconn *sc)
{
	if (!soft_cfg.pair_after && soft_cfg.pair_delay_ns) {
		/* a non-blocking connect is timed from its first data call; the
		 * call's own entry looked whether a timed one is due */
		if (!atomic_load_explicit(&sc->offer_at, memory_order_relaxed))
			offer_defer(sc);
		return;
	}
	if (atomic_fetch_add_explicit(&sc->calls, 1, memory_order_relaxed) + 1 <
	    soft_cfg.pair_after)
		return;
	ctl_offer(fd, sc, false);
}

void ctl_established(int fd, struct sconn *sc)
{
	if (soft_cfg.pair_after)
		return;
	/* a decline is told at once: the peer lists it with our reason */
	if (soft_cfg.pair_delay_ns && !ctl_decline_reason(sc)) {
		offer_defer(sc);
		ctl_poll();
		return;
	}
	ctl_offer(fd, sc, false);
}

static void take_reply(struct soft_pair_reply *r)
{
	bool inherited = false;
	struct sconn *sc;

	if (r->cmd == SMC_SOFT_CMD_BELL) {
		if (atomic_load(&nbell_hint))
			atomic_fetch_sub(&nbell_hint, 1);
		bell_reply(r);
		return;
	}
	sc = pend_take(r->seq, &inherited);
	if (!sc && norphan)
		atomic_store(&norphan_hint, --norphan);

	if (sc && !r->error && r->shm_fd >= 0 && ctl_decline_reason(sc)) {
		/* asked before a reason came (io_uring instance, SO_ZEROCOPY) */
		r->error = -EOPNOTSUPP;
	}
	if (sc && !r->error && r->status != SMC_SOFT_PAIR_DECLINED &&
	    !transport_of_kind(r->transport)) {
		/* a transport this library does not have: as a decline of ours */
		preload_dbg("libsmc-preload: the daemon offers transport %u, which this library "
			    "does not have\n", r->transport);
		r->error = -EPROTONOSUPPORT;
	}
	if (!sc || (r->error && r->token)) {
		/*
		 * Closed meanwhile, or a reply we could not take (its region
		 * fd did not fit under RLIMIT_NOFILE, a decline): the daemon
		 * forgets it too, and the peer, never seeing us attach, stays
		 * TCP.
		 */
		if (r->token)
			del_send(r->token, 0, -1);
	}
	if (sc) {
		/* a connection that came with SCM_RIGHTS learns which end it is */
		if (inherited && r->role <= 1)
			sc->role = r->role;
		if (!r->error) {
			sc->token = r->token;
			/* a region found again after execve: registered by another */
			sc->token_conn = inherited ? 0 : conn_gen;
		}
		if (r->error || r->status == SMC_SOFT_PAIR_DECLINED || r->shm_fd < 0) {
			preload_dbg("libsmc-preload: fd stays TCP: %s reason 0x%08x\n",
				    r->error ? strerror(-r->error) : "declined", r->reason);
			conn_stay_tcp(sc);
		} else if (!sconn_attach(sc, r->transport, r->shm_fd, r->side, inherited)) {
			conn_stay_tcp(sc);
		}
		sconn_put(sc);
	}
	if (r->shm_fd >= 0)
		next.close(r->shm_fd);
}

/* With ctl_mu held: the replies that came, without waiting. */
static void replies_locked(void)
{
	struct soft_pair_reply r;
	int rc = 0;

	while ((npend || norphan || atomic_load(&nbell_hint)) && conn.fd >= 0 &&
	       (rc = soft_reg_pair_poll(&conn, &r)) == 1)
		take_reply(&r);
	if (conn.fd >= 0 && rc < 0)
		daemon_gone();
}

void ctl_before_sleep(void)
{
	if ((!atomic_load_explicit(&ndel_hint, memory_order_relaxed) &&
	     !atomic_load_explicit(&norphan_hint, memory_order_relaxed)) || soft_sandboxed())
		return;
	if (pthread_mutex_trylock(&ctl_mu))
		return;
	replies_locked();
	/* waits only while the daemon takes them: a stopped one must not delay an accept */
	del_flush();
	pthread_mutex_unlock(&ctl_mu);
}

bool ctl_backlog(void)
{
	return atomic_load_explicit(&ndel_hint, memory_order_relaxed) != 0 ||
	       atomic_load_explicit(&norphan_hint, memory_order_relaxed) != 0;
}

void ctl_poll(void)
{
	if ((!atomic_load_explicit(&npend_hint, memory_order_relaxed) &&
	     !atomic_load_explicit(&norphan_hint, memory_order_relaxed) &&
	     !atomic_load_explicit(&ndel_hint, memory_order_relaxed) &&
	     !atomic_load_explicit(&nbell_hint, memory_order_relaxed)) || soft_sandboxed())
		return;
	if (pthread_mutex_trylock(&ctl_mu))
		return;
	del_flush();
	replies_locked();
	pthread_mutex_unlock(&ctl_mu);
}

/*
 * With ctl_mu held: sc is closed while its PAIR is out.  The daemon drops
 * the registration that request makes, by its sequence number, without
 * waiting for the reply (a reply read later finds no one and is let go).
 */
static void pend_orphan(struct sconn *sc)
{
	bool inherited;
	struct sconn *p = pend_take(sc->seq, &inherited);

	if (!p)
		return;
	if (!inherited)
		del_send(0, sc->seq, -1);
	atomic_store(&norphan_hint, ++norphan);
	sconn_put(p);
}

/*
 * The socket as proof that we hold it; -1 if the descriptor is closed
 * already (stdio's fclose() at exit closes it past us): the daemon then
 * takes the word of the connection that found the region (SOCK_INFO).
 */
static int proof(int fd)
{
	return next.fcntl(fd, F_GETFD) >= 0 ? fd : -1;
}

void ctl_forget(int fd, struct sconn *sc, bool last)
{
	if (soft_sandboxed())
		return;          /* the daemon hears of it when the holders exit */
	pthread_mutex_lock(&ctl_mu);
	if (atomic_load(&sc->state) == SC_ASKED)
		pend_orphan(sc);
	else
		/* a sweep's offer (offer.c) through its duplicate must not come after us */
		conn_stay_tcp_if_new(sc);
	if (sc->token && last) {
		/* registered by another process (fork, spawn): the socket proves we hold it */
		if (sc->token_conn == conn_gen && conn.fd >= 0)
			del_send(sc->token, 0, -1);
		else if (ctl_open())
			del_send(sc->token, 0, proof(fd));
	}
	sc->token = 0;
	pthread_mutex_unlock(&ctl_mu);
}

void ctl_exit_forget(int fd, struct sconn *sc)
{
	if (!sc->token || soft_sandboxed())
		return;
	pthread_mutex_lock(&ctl_mu);
	if (sc->token && sc->token_conn != conn_gen && ctl_open())
		del_send(sc->token, 0, proof(fd));
	sc->token = 0;
	pthread_mutex_unlock(&ctl_mu);
}

void ctl_fall_back(int fd, struct sconn *sc, uint32_t reason)
{
	int rc = 0;

	if (soft_sandboxed())
		return;
	pthread_mutex_lock(&ctl_mu);
	if (sc->token && sc->daemon_epoch == ctl_epoch()) {
		if (sc->token_conn == conn_gen && conn.fd >= 0)
			rc = soft_reg_fallback_send(&conn, sc->token, reason, -1);
		/* a vfork() child's new descriptor would not be its parent's */
		else if (!soft_vfork_child() && ctl_open())
			rc = soft_reg_fallback_send(&conn, sc->token, reason, fd);
	}
	pthread_mutex_unlock(&ctl_mu);
	if (rc)
		preload_dbg("libsmc-preload: fallback not told: %s\n", strerror(-rc));
}

/* ---- execve (exec.c) ---- */

/* With ctl_mu held: the daemon went away since (its regions went with it). */
static bool conn_broken(void)
{
	struct pollfd p = { .fd = conn.fd, .events = POLLIN };

	return conn.fd >= 0 && next.poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR));
}

bool ctl_exec_prepare(char *head, size_t len)
{
	int fl;

	pthread_mutex_lock(&ctl_mu);
	if (conn_broken()) {
		/* a new daemon could not find our regions for the new image */
		daemon_gone();
		pthread_mutex_unlock(&ctl_mu);
		return false;
	}
	/* a forked child has none: SOCK_INFO works from any connection */
	if (conn.fd < 0)
		ctl_open();
	if (conn.fd < 0 || (fl = next.fcntl(conn.fd, F_GETFD)) < 0 ||
	    next.fcntl(conn.fd, F_SETFD, fl & ~FD_CLOEXEC) < 0) {
		pthread_mutex_unlock(&ctl_mu);
		return false;
	}
	snprintf(head, len, "%d:%u:%u", conn.fd, conn.family, conn.seq);
	return true;                            /* ctl_mu stays held */
}

void ctl_exec_done(void)
{
	int fl = next.fcntl(conn.fd, F_GETFD);

	if (fl >= 0)
		next.fcntl(conn.fd, F_SETFD, fl | FD_CLOEXEC);
	pthread_mutex_unlock(&ctl_mu);
}

bool ctl_exec_adopt(const char *head)
{
	unsigned family, seq;
	int fd, type = 0, fl;
	socklen_t len = sizeof(type);
	bool ok;

	if (!strcmp(head, "-")) {
		/* a new process (posix_spawn, system, vfork): a connection of its own */
		pthread_mutex_lock(&ctl_mu);
		ok = ctl_open();
		pthread_mutex_unlock(&ctl_mu);
		return ok;
	}
	if (sscanf(head, "%d:%u:%u", &fd, &family, &seq) != 3 || fd < 0 || family > UINT16_MAX ||
	    next.getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) || type != SOCK_SEQPACKET ||
	    (fl = next.fcntl(fd, F_GETFD)) < 0)
		return false;
	next.fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
	pthread_mutex_lock(&ctl_mu);
	soft_reg_close_with(next.close);
	conn.fd = fd;
	conn.family = (uint16_t)family;
	conn.seq = seq + 1000;               /* clear of any inherited request */
	conn_gen++;
	stats_attach(false);
	pthread_mutex_unlock(&ctl_mu);
	return true;
}

void ctl_exec_resume(int fd, struct sconn *sc, int state, uint32_t seq)
{
	long s;

	if (state == SC_NEW)
		return;
	pthread_mutex_lock(&ctl_mu);
	conn_asked_again(sc);
	if (state == SC_MAPPED) {
		s = soft_reg_info_send(&conn, fd);
		if (s > 0 && pend_add((uint32_t)s, sc)) {
			sc->seq = (uint32_t)s;
			pend[npend - 1].exec = true;
			exec_waiting++;
		} else {
			conn_stay_tcp(sc);
		}
	} else if (!pend_add(seq, sc)) {
		conn_stay_tcp(sc);
	} else {
		sc->seq = seq;
	}
	pthread_mutex_unlock(&ctl_mu);
}

/* With ctl_mu held: replies until none (or no SOCK_INFO) is due, each wait bounded. */
static void wait_replies(bool exec_only)
{
	struct soft_pair_reply r;
	struct pollfd p;
	int rc;

	while (conn.fd >= 0 && (exec_only ? exec_waiting > 0 : npend > 0)) {
		p.fd = conn.fd;
		p.events = POLLIN;
		if (next.poll(&p, 1, CTL_TIMEOUT_MS) <= 0)
			break;
		while ((rc = soft_reg_pair_poll(&conn, &r)) == 1)
			take_reply(&r);
		if (rc < 0) {
			daemon_gone();
			break;
		}
	}
}

/*
 * The regions of the inherited paired sockets, before the program touches
 * them: they must not be read as plain TCP.  Bounded like every wait for
 * the daemon; a socket whose answer does not come stays unusable TCP.
 */
/* ---- SCM_RIGHTS (fdpass.c) ---- */

/* The control connection's own messages carry descriptors too. */
void ctl_fds_closed(unsigned first, unsigned last)
{
	int fd = __atomic_load_n(&conn.fd, __ATOMIC_RELAXED);

	if (fd < 0 || (unsigned)fd < first || (unsigned)fd > last)
		return;
	pthread_mutex_lock(&ctl_mu);
	if (conn.fd == fd) {
		conn.fd = -1;           /* the program closes it */
		ctl_lost();
	}
	pthread_mutex_unlock(&ctl_mu);
}

unsigned ctl_epoch(void)
{
	return atomic_load_explicit(&lost_epoch, memory_order_relaxed);
}

bool ctl_owns(int fd)
{
	return fd >= 0 && fd == __atomic_load_n(&conn.fd, __ATOMIC_RELAXED);
}

void ctl_pair_now(int fd, struct sconn *sc)
{
	pthread_mutex_lock(&ctl_mu);
	if (atomic_load(&sc->state) == SC_NEW && !soft_sandboxed() && daemon_there())
		pair_locked(fd, sc);
	if (atomic_load(&sc->state) == SC_ASKED)
		wait_replies(false);
	pthread_mutex_unlock(&ctl_mu);
}

void ctl_adopt(int fd, struct sconn *sc)
{
	long seq = -ENOTCONN;

	pthread_mutex_lock(&ctl_mu);
	conn_asked_again(sc);
	if (!soft_sandboxed() && daemon_there() && ctl_open())
		seq = soft_reg_info_send(&conn, fd);
	if (seq > 0 && pend_add((uint32_t)seq, sc)) {
		sc->seq = (uint32_t)seq;
		pend[npend - 1].exec = true;
		exec_waiting++;
		wait_replies(true);
		exec_waiting = 0;
	}
	if (atomic_load(&sc->state) == SC_ASKED)
		conn_stay_tcp(sc);
	pthread_mutex_unlock(&ctl_mu);
}

void ctl_exec_wait(void)
{
	pthread_mutex_lock(&ctl_mu);
	wait_replies(true);
	exec_waiting = 0;
	pthread_mutex_unlock(&ctl_mu);
}

/*
 * A connection two processes hold is paired before it is shared: each one
 * pairing it on its own would register it twice (the second gets EEXIST and
 * stays TCP while the first cuts over).  So a socket still NEW is paired
 * before another process gets it, and the daemon answers at once.  One that
 * cannot be (not connected yet, the daemon busy) or whose answer does not
 * come stays TCP (conn_shared).  With ctl_mu held.
 */
static bool inheritable(int fd, bool all)
{
	int fl;

	return all || ((fl = next.fcntl(fd, F_GETFD)) >= 0 && !(fl & FD_CLOEXEC));
}

static void pair_for_sharing(int fd, struct sconn *sc)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (atomic_load(&sc->state) == SC_NEW && !getpeername(fd, (struct sockaddr *)&ss, &len))
		pair_locked(fd, sc);
}

static void share(int fd, struct sconn *sc)
{
	int listening = 0;
	socklen_t len = sizeof(listening);

	/* a listener is no connection: what it accepts is each process's own */
	if (next.getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) || !listening)
		conn_shared(sc);
}

/* Which connections a new process gets: settle_locked() below. */
struct reaching {
	bool all;                          /* fork(): every descriptor of ours */
	const struct child_fds *child;     /* its own where not ours (NULL: none) */
	void (*fn)(int fd, struct sconn *sc);
};

static void ours_reaching(int fd, struct sconn *sc, void *arg)
{
	struct reaching *r = arg;

	/* a descriptor the child closed, or made another file (dup2 over it) */
	if (r->child && child_fds_has(r->child, fd))
		return;
	if (inheritable(fd, r->all))
		r->fn(fd, sc);
}

struct named_by {
	struct sconn *sc;
	int fd;
};

static void find_named(int fd, struct sconn *sc, void *arg)
{
	struct named_by *n = arg;

	if (n->fd < 0 && sc == n->sc)
		n->fd = fd;
}

/*
 * fn(fd, sc) for each connection the new process gets: through a
 * descriptor of ours that reaches it, and through one of its own (the dup2
 * of a vfork() child, posix_spawn's adddup2: Python's subprocess hands a
 * connection on as stdin so, its own descriptor close-on-exec or closed in
 * the child).  fd names sc in this process's table: in a vfork() child its
 * own, else one of ours.
 */
static void for_each_reaching(struct reaching *r)
{
	fd_for_each(ours_reaching, r);
	for (unsigned i = 0; r->child && i < r->child->n; i++) {
		const struct child_fds_ent *e = &r->child->e[i];
		struct named_by n = { .sc = e->sc, .fd = -1 };

		if (!e->sc || e->cloexec)
			continue;
		if (soft_vfork_child())
			n.fd = e->fd;
		else
			fd_for_each(find_named, &n);
		if (n.fd >= 0)
			r->fn(n.fd, e->sc);
	}
}

/*
 * A vfork() child shares our memory but not our descriptors: before its
 * execve it may have closed the control connection (a close_fds), and a
 * connection it opened would be a number its parent does not have.  Then
 * it asks nothing, and must not take the closed socket for a lost daemon:
 * that would end the parent's regions (execvp tries each PATH directory).
 */
static bool ctl_reachable(void)
{
	int type = 0;
	socklen_t len = sizeof(type);

	if (!soft_vfork_child())
		return true;
	return conn.fd >= 0 && !next.getsockopt(conn.fd, SOL_SOCKET, SO_TYPE, &type, &len) &&
	       type == SOCK_SEQPACKET;
}

/*
 * Every connection the new process gets is paired now (or declined): left
 * NEW, the child would pair it on its own while we, not knowing it shared,
 * paired it later and counted only our own TCP reads towards the peer's
 * fence; what the child read would be missing, and we would wait for it
 * for ever (doc/soft-inherit.md section 2).
 */
static void settle_locked(bool all, const struct child_fds *child)
{
	struct reaching r = { .all = all, .child = child, .fn = pair_for_sharing };

	/* what is not paired now is declined below: each end stays TCP */
	if (ctl_reachable()) {
		for_each_reaching(&r);
		wait_replies(false);
	}
	r.fn = share;
	for_each_reaching(&r);
}

void ctl_sandboxed(void)
{
	pthread_mutex_lock(&ctl_mu);
	pend_drop_all();
	pthread_mutex_unlock(&ctl_mu);
}

void ctl_settle(const struct child_fds *child)
{
	pthread_mutex_lock(&ctl_mu);
	settle_locked(false, child);
	pthread_mutex_unlock(&ctl_mu);
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&ctl_mu);
	if (atomic_load(&fd_tracked))
		settle_locked(true, NULL);
	sconn_before_fork();
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&ctl_mu);
}

/*
 * The child must not read the parent's replies: it gets its own connection
 * when it needs one.  Requests still out belong to the parent.  Until then
 * it counts, and writes dump records, into the parent's memfd.
 */
static void fork_child(void)
{
	pend_drop_all();
	atomic_store(&nbell_hint, 0);
	if (conn.fd >= 0)
		next.close(conn.fd);
	conn.fd = -1;
	/* the parent's registrations are another process's now: ended with proof */
	conn_gen++;
	retry_at = 0;
	stats_shared = false;
	atomic_store(&said_hello, false);
	atomic_store(&hello_at, 0);
	pthread_mutex_init(&ctl_mu, NULL);
	bell_after_fork_child();
	ctl_after_fork_child();
}

__attribute__((constructor))
static void ctl_init(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}
