/*
 * Pairing over the control connection (ctl_channel.c): which connection is
 * offered when (the PAIR requests and the replies still due), what a reply
 * makes of it (mapped through the transport it names, or TCP for good),
 * ending registrations, telling the daemon of a fallback, and the control
 * connection across execve.  Pairing never makes the application wait
 * (reg_client.h): replies are read at the next look, except where a new
 * process must find its connections settled (settle.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "conn.h"
#include "ctl_int.h"
#include "reg_client.h"

struct pending {
	uint32_t seq;
	struct sconn *sc;          /* holds a reference */
	bool exec;                 /* a SOCK_INFO after execve */
	bool remote;               /* its peer may be on another host */
};

static struct pending *pend;
static size_t npend, cap;
static _Atomic size_t npend_hint;
static _Atomic size_t npend_remote_hint;   /* of them with remote */

/* With ctl_mu held, after npend changed. */
static void pend_counted(void)
{
	size_t r = 0;

	for (size_t i = 0; i < npend; i++)
		r += pend[i].remote;
	atomic_store(&npend_hint, npend);
	atomic_store(&npend_remote_hint, r);
}

bool ctl_rdma_settling(void)
{
	return atomic_load_explicit(&npend_remote_hint, memory_order_relaxed) || ctl_neg_running();
}

void ctl_pend_after_fork_child(void)
{
	/* the parent's requests are answered to the parent */
	for (size_t i = 0; i < npend; i++)
		pend[i].remote = false;
	atomic_store(&npend_remote_hint, 0);
}
/*
 * Replies still due to PAIRs whose socket closed first (pend_orphan): read
 * and let go at the next look, or a process that asks nothing more would
 * leave them in its socket until the daemon's sends to it block, and with
 * them its reading of this process's requests, their sockets in flight
 * kept open (no FIN), and its rows.
 */
static size_t norphan;
static _Atomic size_t norphan_hint;
static int exec_waiting;                   /* SOCK_INFO replies still due */

/* Every request still out is given up: its socket stays TCP. */
void ctl_pend_drop_all(void)
{
	for (size_t i = 0; i < npend; i++) {
		conn_stay_tcp(pend[i].sc);
		sconn_put(pend[i].sc);
	}
	npend = 0;
	pend_counted();
	norphan = 0;
	atomic_store(&norphan_hint, 0);
}

/*
 * With ctl_mu held: the connection broke on the daemon's side (it died, or
 * dropped us): every request waiting on it is given up.
 */
void ctl_daemon_gone(void)
{
	ctl_pend_drop_all();
	ctl_neg_drop_all();
	chan_gone();
}

/*
 * Whether the connection on fd may lead to another host: only then can its
 * pairing become a negotiation that needs the control thread before the
 * program's next call.  A loopback peer, or one at our own address, is
 * this host's (and so a ring's).
 */
bool ctl_peer_may_be_remote(int fd)
{
	struct sockaddr_storage peer, self;
	socklen_t plen = sizeof(peer), slen = sizeof(self);

	if (getpeername(fd, (struct sockaddr *)&peer, &plen) ||
	    getsockname(fd, (struct sockaddr *)&self, &slen) || peer.ss_family != self.ss_family)
		return true;
	if (peer.ss_family == AF_INET) {
		const struct in_addr *p = &((struct sockaddr_in *)&peer)->sin_addr;
		const struct in_addr *s = &((struct sockaddr_in *)&self)->sin_addr;

		return (ntohl(p->s_addr) >> 24) != 127 && p->s_addr != s->s_addr;
	}
	if (peer.ss_family == AF_INET6) {
		const struct in6_addr *p = &((struct sockaddr_in6 *)&peer)->sin6_addr;
		const struct in6_addr *s = &((struct sockaddr_in6 *)&self)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(p) && p->s6_addr[12] == 127)
			return false;
		return !IN6_IS_ADDR_LOOPBACK(p) && memcmp(p, s, sizeof(*p));
	}
	return true;
}

static bool pend_add(uint32_t seq, struct sconn *sc, bool remote)
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
	pend[npend].remote = remote;
	npend++;
	pend_counted();
	/* a reply that may start a negotiation is read even if the program
	 * makes no call again; a local one at its next call, as ever */
	if (remote)
		ctl_thread_wake();
	return true;
}

bool ctl_replies_due(void)
{
	return npend || norphan || ctl_neg_due() || ctl_rebuild_due();
}

/*
 * The hints stay as they were until the caller's pend_counted(): a
 * connection whose reply starts its negotiation is counted there first
 * (ctl_rdma_settling() never reads zero between the two).
 */
static struct sconn *pend_take(uint32_t seq, bool *exec)
{
	for (size_t i = 0; i < npend; i++)
		if (pend[i].seq == seq) {
			struct sconn *sc = pend[i].sc;

			*exec = pend[i].exec;
			if (pend[i].exec)
				exec_waiting--;
			pend[i] = pend[--npend];
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
		.transports = (1u << SMC_SOFT_TRANSPORT_RING) | (1u << SMC_SOFT_TRANSPORT_RDMA),
	};

	return soft_reg_pair_send(&chan, fd, &q);
}

/* With ctl_mu held: PAIR sc (socket fd) if it is still NEW. */
void ctl_pair_locked(int fd, struct sconn *sc)
{
	long seq;

	if (!conn_ask(sc))
		return;
	if (soft_sandboxed() || !chan_open()) {
		conn_stay_tcp(sc);
		return;
	}
	chan_del_flush();
	seq = pair_send(fd, sc);
	if (seq == -EPIPE || seq == -ECONNRESET || seq == -ENOTCONN) {
		/* the daemon restarted since our connection opened: a new one, at once */
		ctl_daemon_gone();
		chan_retry_now();
		seq = chan_open() ? pair_send(fd, sc) : -ENOTCONN;
	}
	if (seq == -EAGAIN) {
		/* the daemon is behind a burst of connections: ask again later */
		conn_ask_later(sc);
	} else if (seq <= 0) {
		preload_dbg("libsmc-preload: soft pairing not asked: %s\n", strerror((int)-seq));
		conn_stay_tcp(sc);
		ctl_daemon_gone();
	} else {
		sc->seq = (uint32_t)seq;
		if (!pend_add(sc->seq, sc, ctl_peer_may_be_remote(fd)))
			conn_stay_tcp(sc);
	}
}


void ctl_offer(int fd, struct sconn *sc, bool trylock)
{
	/* no daemon: TCP for good, without a word (a data call would try again) */
	if (soft_sandboxed() || !chan_daemon_there()) {
		conn_stay_tcp_if_new(sc);
		return;
	}
	if (trylock ? pthread_mutex_trylock(&ctl_mu) != 0 : pthread_mutex_lock(&ctl_mu) != 0)
		return;
	/* a server that only accepts collects its replies here */
	ctl_replies_locked();
	ctl_pair_locked(fd, sc);
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
	uint32_t late = 0;
	struct sconn *sc;

	if (r->cmd == SMC_SOFT_CMD_BELL) {
		chan_bell_taken();
		bell_reply(r);
		return;
	}
	if (r->cmd == SMC_SOFT_CMD_CLC) {
		ctl_neg_reply(r);
		return;
	}
	if (r->cmd == SMC_SOFT_CMD_REBUILD) {
		ctl_rebuild_reply(r);
		return;
	}
	sc = pend_take(r->seq, &inherited);
	if (!sc && norphan)
		atomic_store(&norphan_hint, --norphan);

	if (sc && !r->error && r->shm_fd >= 0)
		late = ctl_decline_reason(sc);
	if (late && inherited) {
		/*
		 * Asked before a reason came (stdio, an io_uring instance,
		 * SO_ZEROCOPY): ours goes back to TCP with that reason, which
		 * both ends' rows then give (the peer, never seeing us
		 * attach, stays TCP).  An inherited end's is not ours to give.
		 */
		r->error = -EOPNOTSUPP;
		late = 0;
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
			chan_del_send(r->token, 0, -1);
	}
	if (sc) {
		/* a connection that came with SCM_RIGHTS learns which end it is */
		if (inherited && r->role <= 1)
			sc->role = r->role;
		if (!r->error) {
			sc->token = r->token;
			/* a region found again after execve: registered by another */
			sc->token_conn = inherited ? 0 : chan_gen;
		}
		if (late && !r->error) {
			int rc = soft_reg_fallback_diag_send(&chan, r->token, late, 0, -1);

			preload_dbg("libsmc-preload: fd stays TCP: reason 0x%08x came before its reply%s\n",
				    late, rc ? ", not told" : "");
			conn_stay_tcp(sc);
		} else if (!r->error && r->status == SMC_SOFT_PAIR_ASKING && !inherited) {
			/* between hosts: the negotiation takes our reference */
			ctl_neg_start(sc, r);
			pend_counted();
			return;
		} else if (r->error || r->status == SMC_SOFT_PAIR_DECLINED || r->shm_fd < 0) {
			preload_dbg("libsmc-preload: fd stays TCP: %s reason 0x%08x\n",
				    r->error ? strerror(-r->error) : "declined", r->reason);
			conn_stay_tcp(sc);
		} else if (!sconn_attach(sc, r->transport, r->shm_fd, r->side, inherited)) {
			conn_stay_tcp(sc);
		}
		sconn_put(sc);
	}
	pend_counted();
	if (r->shm_fd >= 0)
		next.close(r->shm_fd);
}

/* With ctl_mu held: the replies that came, without waiting. */
void ctl_replies_locked(void)
{
	struct soft_pair_reply r;
	int rc = 0;

	while ((npend || norphan || chan_bells_due() || ctl_neg_due() || ctl_rebuild_due()) && chan.fd >= 0 &&
	       (rc = soft_reg_pair_poll(&chan, &r)) == 1)
		take_reply(&r);
	if (chan.fd >= 0 && rc < 0)
		ctl_daemon_gone();
}

void ctl_before_sleep(void)
{
	if ((!chan_dels_due() && !atomic_load_explicit(&norphan_hint, memory_order_relaxed)) ||
	    soft_sandboxed())
		return;
	if (pthread_mutex_trylock(&ctl_mu))
		return;
	ctl_replies_locked();
	/* waits only while the daemon takes them: a stopped one must not delay an accept */
	chan_del_flush();
	pthread_mutex_unlock(&ctl_mu);
}

bool ctl_backlog(void)
{
	return chan_dels_due() || atomic_load_explicit(&norphan_hint, memory_order_relaxed) != 0;
}

void ctl_poll(void)
{
	if ((!atomic_load_explicit(&npend_hint, memory_order_relaxed) &&
	     !atomic_load_explicit(&norphan_hint, memory_order_relaxed) &&
	     !chan_dels_due() && !chan_bells_due() && !ctl_neg_due()) || soft_sandboxed())
		return;
	if (pthread_mutex_trylock(&ctl_mu))
		return;
	chan_del_flush();
	ctl_replies_locked();
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
	pend_counted();
	if (!inherited)
		chan_del_send(0, sc->seq, -1);
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
		if (sc->token_conn == chan_gen && chan.fd >= 0)
			chan_del_send(sc->token, 0, -1);
		else if (chan_open())
			chan_del_send(sc->token, 0, proof(fd));
	}
	sc->token = 0;
	pthread_mutex_unlock(&ctl_mu);
}

void ctl_exit_forget(int fd, struct sconn *sc)
{
	if (!sc->token || soft_sandboxed())
		return;
	pthread_mutex_lock(&ctl_mu);
	if (sc->token && sc->token_conn != chan_gen && chan_open())
		chan_del_send(sc->token, 0, proof(fd));
	sc->token = 0;
	pthread_mutex_unlock(&ctl_mu);
}

void ctl_fall_back(int fd, struct sconn *sc, uint32_t reason)
{
	ctl_fall_back_diag(fd, sc, reason, 0);
}

void ctl_fall_back_diag(int fd, struct sconn *sc, uint32_t reason, uint32_t diag)
{
	int rc = 0;

	if (soft_sandboxed())
		return;
	pthread_mutex_lock(&ctl_mu);
	if (sc->token && sc->daemon_epoch == ctl_epoch()) {
		if (sc->token_conn == chan_gen && chan.fd >= 0)
			rc = soft_reg_fallback_diag_send(&chan, sc->token, reason, diag, -1);
		/* a vfork() child's new descriptor would not be its parent's */
		else if (!soft_vfork_child() && chan_open())
			rc = soft_reg_fallback_diag_send(&chan, sc->token, reason, diag, fd);
	}
	pthread_mutex_unlock(&ctl_mu);
	if (rc)
		preload_dbg("libsmc-preload: fallback not told: %s\n", strerror(-rc));
}

bool ctl_exec_prepare(char *head, size_t len)
{
	int fl;

	pthread_mutex_lock(&ctl_mu);
	if (chan_broken()) {
		/* a new daemon could not find our regions for the new image */
		ctl_daemon_gone();
		pthread_mutex_unlock(&ctl_mu);
		return false;
	}
	/* a forked child has none: SOCK_INFO works from any connection */
	if (chan.fd < 0)
		chan_open();
	if (chan.fd < 0 || (fl = next.fcntl(chan.fd, F_GETFD)) < 0 ||
	    next.fcntl(chan.fd, F_SETFD, fl & ~FD_CLOEXEC) < 0) {
		pthread_mutex_unlock(&ctl_mu);
		return false;
	}
	snprintf(head, len, "%d:%u:%u", chan.fd, chan.family, chan.seq);
	return true;                            /* ctl_mu stays held */
}

void ctl_exec_done(void)
{
	int fl = next.fcntl(chan.fd, F_GETFD);

	if (fl >= 0)
		next.fcntl(chan.fd, F_SETFD, fl | FD_CLOEXEC);
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
		ok = chan_open();
		pthread_mutex_unlock(&ctl_mu);
		return ok;
	}
	if (sscanf(head, "%d:%u:%u", &fd, &family, &seq) != 3 || fd < 0 || family > UINT16_MAX ||
	    next.getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) || type != SOCK_SEQPACKET ||
	    (fl = next.fcntl(fd, F_GETFD)) < 0)
		return false;
	next.fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
	pthread_mutex_lock(&ctl_mu);
	/* the sequence clear of any inherited request */
	chan_adopt(fd, (uint16_t)family, seq + 1000);
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
		s = soft_reg_info_send(&chan, fd);
		if (s > 0 && pend_add((uint32_t)s, sc, false)) {
			sc->seq = (uint32_t)s;
			pend[npend - 1].exec = true;
			exec_waiting++;
		} else {
			conn_stay_tcp(sc);
		}
	} else if (!pend_add(seq, sc, ctl_peer_may_be_remote(fd))) {
		conn_stay_tcp(sc);
	} else {
		sc->seq = seq;
	}
	pthread_mutex_unlock(&ctl_mu);
}

/* With ctl_mu held: replies until none (or no SOCK_INFO) is due, each wait bounded. */
void ctl_wait_replies(bool exec_only)
{
	struct soft_pair_reply r;
	struct pollfd p;
	int rc;

	while (chan.fd >= 0 && (exec_only ? exec_waiting > 0 : npend > 0)) {
		p.fd = chan.fd;
		p.events = POLLIN;
		if (next.poll(&p, 1, CTL_TIMEOUT_MS) <= 0)
			break;
		while ((rc = soft_reg_pair_poll(&chan, &r)) == 1)
			take_reply(&r);
		if (rc < 0) {
			ctl_daemon_gone();
			break;
		}
	}
}

/* ---- SCM_RIGHTS (fdpass.c) ---- */

/* The control connection's own messages carry descriptors too. */
void ctl_fds_closed(unsigned first, unsigned last)
{
	int fd = __atomic_load_n(&chan.fd, __ATOMIC_RELAXED);

	if (fd < 0 || (unsigned)fd < first || (unsigned)fd > last)
		return;
	pthread_mutex_lock(&ctl_mu);
	if (chan.fd == fd) {
		chan.fd = -1;           /* the program closes it */
		ctl_pend_drop_all();
		chan_lost();
	}
	pthread_mutex_unlock(&ctl_mu);
}

void ctl_pair_now(int fd, struct sconn *sc)
{
	pthread_mutex_lock(&ctl_mu);
	if (atomic_load(&sc->state) == SC_NEW && !soft_sandboxed() && chan_daemon_there())
		ctl_pair_locked(fd, sc);
	if (atomic_load(&sc->state) == SC_ASKED)
		ctl_wait_replies(false);
	pthread_mutex_unlock(&ctl_mu);
}

void ctl_adopt(int fd, struct sconn *sc)
{
	long seq = -ENOTCONN;

	pthread_mutex_lock(&ctl_mu);
	conn_asked_again(sc);
	if (!soft_sandboxed() && chan_daemon_there() && chan_open())
		seq = soft_reg_info_send(&chan, fd);
	if (seq > 0 && pend_add((uint32_t)seq, sc, false)) {
		sc->seq = (uint32_t)seq;
		pend[npend - 1].exec = true;
		exec_waiting++;
		ctl_wait_replies(true);
		exec_waiting = 0;
	}
	if (atomic_load(&sc->state) == SC_ASKED)
		conn_stay_tcp(sc);
	pthread_mutex_unlock(&ctl_mu);
}

void ctl_exec_wait(void)
{
	pthread_mutex_lock(&ctl_mu);
	ctl_wait_replies(true);
	exec_waiting = 0;
	pthread_mutex_unlock(&ctl_mu);
}

void ctl_sandboxed(void)
{
	pthread_mutex_lock(&ctl_mu);
	ctl_pend_drop_all();
	pthread_mutex_unlock(&ctl_mu);
}
