/*
 * libsmc-preload.so, soft mode (doc/layers.md: the connection layer): the application's TCP sockets stay real
 * kernel sockets; once both ends of a connection are preloaded and paired by
 * smc_softd, each direction moves its bytes through a shared-memory ring
 * (wire/dmb.h) instead of the TCP stream.
 *
 * Life of a connection (struct sconn, one per socket per process):
 *   NEW      a TCP socket this library created or accepted; plain TCP.
 *            Established, it is offered once it has lived
 *            SMC_SOFT_PAIR_DELAY_USEC (offer.c).
 *   ASKED    offered (or after SMC_SOFT_PAIR_AFTER data calls): PAIR
 *            went to the daemon without waiting; the reply is collected
 *            by later calls.
 *   MAPPED   the reply brought the region; once no call of the plain path
 *            is left running, we say attached in our consumer line.  Each
 *            direction cuts over on its own: the producer
 *            switches to the ring once the peer has attached, writing the
 *            fence (TCP bytes sent so far) first; the consumer reads exactly
 *            that many TCP bytes, then the ring.  After the fence the TCP
 *            stream carries only doorbell bytes, sent when the other side
 *            sleeps; FIN and RST still come from the kernel.
 *   TCP      declined, failed or given up: plain TCP for good.
 *
 * Locks: sc->lock guards the state change to MAPPED; tx_lock serialises
 * senders, rx_lock receivers (rx_lock may be held while taking tx_lock,
 * never the reverse).
 */
#ifndef SMC_PRELOAD_CONN_H
#define SMC_PRELOAD_CONN_H

#include "base.h"
#include "pstats.h"
#include "transport.h"

#pragma GCC visibility push(hidden)

enum sconn_state { SC_NEW, SC_ASKED, SC_MAPPED, SC_TCP };

struct sconn {
	struct sconn *free_next;   /* on the free list (fdtab.c) */
	_Atomic int refs;          /* fds of this process plus calls in flight */
	_Atomic int fds;           /* fds of this process naming it */
	_Atomic bool freed;        /* on the free list: a late put must not free again */
	_Atomic int state;         /* enum sconn_state */
	int role;                  /* 0 client (connect), 1 server (accept) */
	_Atomic unsigned calls;    /* data calls before the PAIR request */
	_Atomic int64_t offer_at;  /* NEW: offered to the daemon from then on (offer.c); 0 not yet timed */
	uint32_t seq;              /* of the PAIR request while ASKED */
	/* SMC_CLC_DECL_* the connection declines the data path with, 0 none */
	_Atomic uint32_t decline;
	uint64_t token;            /* the daemon's registration, 0 if none */
	unsigned token_conn;       /* the control connection that registered it (chan_gen) */
	pthread_mutex_t lock;
	pthread_mutex_t tx_lock, rx_lock;
	struct transport tp;       /* valid from MAPPED on */
	/*
	 * Calls in the plain TCP path (entered before the state was MAPPED):
	 * tx does not cut over and we do not say attached while they run,
	 * because they know nothing of fences.
	 */
	_Atomic int plain_tx, plain_rx;
	_Atomic bool attached;     /* our consumer line says attached */
	/* tx: written under tx_lock; tx_cut read without it */
	_Atomic bool tx_cut;
	_Atomic uint64_t tcp_tx;   /* application bytes sent over TCP */
	/* rx: written under rx_lock; the flags read without it */
	_Atomic bool rx_cut;
	_Atomic unsigned disarms;  /* soft_disarm()s: a quiet epoll entry is one no longer (hook_epoll.c) */
	_Atomic uint64_t tcp_rx;   /* application bytes read from TCP */
	_Atomic uint64_t lost_fence; /* 1 + the fence taken when the transport was lost first, or 0 */
	_Atomic bool rx_eof;       /* the kernel reported FIN */
	unsigned rx_quiet;         /* empty nonblocking reads that did not look at TCP */
	_Atomic int rx_err;        /* a reset the kernel reported once */
	_Atomic int tx_err;        /* one only sends get: a reset after the peer's FIN (EPIPE) */
	_Atomic int rcvlowat;      /* the program's SO_RCVLOWAT (1 by default), kept by the ring */
	_Atomic bool reset_told;   /* a call returned ECONNRESET: then EPIPE and EOF */
	_Atomic bool closed_wr;    /* shutdown(SHUT_WR) done */
	/*
	 * O_NONBLOCK as last seen: -1 unknown.  Refreshed by this process's
	 * fcntl(F_SETFL) and ioctl(FIONBIO); read at every use while another
	 * process holds the socket too (it can change it unseen), and once
	 * more after the holders changed (nonblock_gen: hold_gen then).
	 */
	_Atomic int nonblock;
	_Atomic uint32_t nonblock_gen;
	/* another process got the socket once (fork, spawn, exec, SCM_RIGHTS) */
	_Atomic bool shared;
	/* SO_RCVTIMEO in ms as last read (0 none), -1 unknown: reset by setsockopt */
	_Atomic int rcvtimeo_ms;
	unsigned fork_seen;        /* the fork() that counted us already (dup'ed fds) */
	_Atomic bool let_go;       /* this process no longer holds the ring (close, exit) */
	_Atomic bool past;         /* stdio or io_uring may use it (conn_stdio_check, conn_uring_use) */
	_Atomic bool foreign;      /* the peer wrote past the library: reads fail (conn_foreign_bytes) */
	/*
	 * Back to TCP (back.c): our end said BACK, so reads take the TCP
	 * stream whole; and, said and heard, what the peer did not consume
	 * went by TCP, so writes are TCP's too.
	 */
	_Atomic bool back_rx, back_tx;
	/* we said it first (the daemon lists our end so); the peer did, not told yet */
	_Atomic bool back_ours, back_untold;
	/* MAPPED, both directions on TCP for good at both ends (stay_tcp): what a forked child reads */
	_Atomic bool tcp_for_good;
	unsigned daemon_epoch;     /* ctl_epoch() when mapped */
	/* a forked child may hold a copy (fork_share.c): the slot of its page, NULL none */
	_Atomic(struct fork_page *) fork_page;
	unsigned fork_idx;
	uint32_t fork_gen;
	struct fork_page *fork_exec_page; /* counted out for an execve (conn_fork_share_exec()) */
	/* NEW when its process forked: who may pair it (fork_claim.c), NULL anyone */
	_Atomic(struct claim_slot *) claim;
	unsigned claim_fork;       /* the fork() that counted its copy already (dup'ed fds) */
	struct claim_slot *claim_exec; /* counted out for an execve that closes it */
	uint32_t claim_gen;        /* claim's generation when this copy counted out */
	/* a forked copy may have read or written past our hooks: fences count the kernel's totals */
	_Atomic bool kernel_counts;
};

/* sc's transport does op (transport.h); only from MAPPED on. */
#define TP(sc, op, ...) ((sc)->tp.ops->op(&(sc)->tp, ##__VA_ARGS__))

extern struct soft_pstats *pstats;     /* never NULL: a private copy until attached */
/* never NULL: a line that reads 0 (dump off) until attached */
extern struct soft_pdump_ctl *pdump_ctl;

/* ---- fdtab.c: fd -> struct sconn ---- */
struct sconn *fd_get(int fd);          /* takes a reference; NULL if untracked */
void sconn_put(struct sconn *sc);      /* drops one; the last frees */
int fd_high(void);                     /* highest fd ever tracked, plus one */
/* Whether fd names sc now (no reference taken: sc's memory is never freed). */
bool fd_is(int fd, const struct sconn *sc);
/* Whether descriptor 0, 1 or 2 names sc now (where stdio reads and writes). */
bool fd_names_std(const struct sconn *sc);
/* For one call: a reference only where other threads could close fd (*held). */
struct sconn *fd_hold(int fd, bool *held);
/* errno stays what the call left: a hook's result goes out after this */
static inline void fd_unhold(struct sconn *sc, bool held)
{
	if (held) {
		int saved = errno;

		sconn_put(sc);
		errno = saved;
	}
}
/* A new sconn for fd (a TCP socket of this process); false when out of room. */
bool fd_track(int fd, int role);
/* A tracked socket is in the kernel's TCP table now: the daemon looks again. */
void fd_listed(void);
/* fd now names sc as well (dup); the reference is the table's. */
void fd_alias(int fd, struct sconn *sc);
/* Forget fd; its sconn's last fd closes the connection.  True if tracked. */
bool fd_untrack(int fd);
/* Every live sconn, for fork and exec (called with no locks held). */
void fd_for_each(void (*fn)(int fd, struct sconn *sc, void *arg), void *arg);
/* The O_NONBLOCK of fd's file description changed (if fd is tracked). */
void soft_set_nonblock(int fd, bool on);
/* SO_RCVTIMEO of fd is known without asking (a new socket: 0; accepted:
 * its listener's), in ms; -1 unknown. */
void soft_set_rcvtimeo(int fd, int ms);
/* Only for quick checks: whether anything is tracked at all. */
extern _Atomic long fd_tracked;

/* ---- the control connection to smc_softd: ctl_channel.c, ctl.c, settle.c ---- */
/* The process's first TCP socket: open the connection so the daemon lists its sockets. */
void ctl_hello(void);
/* PAIR sc (socket fd) if its time has come; never waits. */
void ctl_maybe_pair(int fd, struct sconn *sc);
/* sc's connection is established (connect, accept): PAIR it now, or time
 * its offer (SMC_SOFT_PAIR_DELAY_USEC), unless SMC_SOFT_PAIR_AFTER asks for
 * data calls first; never waits. */
void ctl_established(int fd, struct sconn *sc);
/* PAIR sc (socket fd) now if it is still NEW; never waits.  trylock: give
 * up when another thread holds the control lock (in a sleep hook, which a
 * signal handler may call). */
void ctl_offer(int fd, struct sconn *sc, bool trylock);
/* Collect replies that arrived; never waits. */
void ctl_poll(void);
/*
 * Before a wait that cannot be cut (a blocking accept, a sleep): replies
 * due to closed connections' PAIRs are read, and ends of registrations
 * still queued (the daemon was behind) go now, or an idle process would
 * keep them, and the daemon their rows.
 */
void ctl_before_sleep(void);
/* Either is still due: a wait that can be cut looks again soon. */
bool ctl_backlog(void);
/*
 * A pairing of this process may still cut over to RDMA, whose producer
 * rings no doorbell over TCP: a wait in the kernel on such a connection's
 * socket would not see it, so waits look again every SETTLE_LOOK_MS.
 */
bool ctl_rdma_settling(void);
#define SETTLE_LOOK_MS 20
/*
 * A sleep in poll or epoll on a transport that rings nothing over TCP
 * (soft SMC-R) has only our bell to wake it: it looks at the rings again
 * after this long all the same, as a blocking receive's does (io.c).
 */
#define QUIET_LOOK_NS (250 * 1000000LL)
/* Socket fd of sc is closed here; last: no other process holds it, the
 * daemon's registration goes. */
void ctl_forget(int fd, struct sconn *sc, bool last);
/* The process ends holding sc last: a registration of another process's
 * (fork, exec, spawn) goes now; our own go with our control connection. */
void ctl_exit_forget(int fd, struct sconn *sc);
/* sc, paired, stays on TCP for good: the daemon lists it (and its peer) so. */
void ctl_fall_back(int fd, struct sconn *sc, uint32_t reason);
/* The same for an end between hosts whose peer declined: reason PEERDECL, diag its code. */
void ctl_fall_back_diag(int fd, struct sconn *sc, uint32_t reason, uint32_t diag);
void ctl_fall_back_peer(int fd, struct sconn *sc, uint32_t diag);
/* Why sc must stay TCP (SMC_CLC_DECL_*), 0 when it may pair (ctl.c). */
uint32_t ctl_decline_reason(const struct sconn *sc);
/* Whether fd's peer may be on another host (not loopback, not our own address). */
bool ctl_peer_may_be_remote(int fd);
void ctl_after_fork_child(void);
/* The program closes descriptors: ours among them is gone, not ours to close. */
void ctl_fds_closed(unsigned first, unsigned last);
/* How often the daemon went away (or dropped us): a region mapped before is known to none. */
unsigned ctl_epoch(void);
/* BELL requests (bell.c): false when the daemon cannot be asked now; *seq: the set's. */
bool ctl_bell_set(int efd, unsigned slot, _Atomic long *seq);
bool ctl_bell_get(uint32_t id);

/* ---- bell.c: the process's eventfd doorbell ---- */
struct soft_pair_reply;
/*
 * A wait that sleeps in the kernel: the bell to name in its sleeper flags
 * (TP_BELL_TCP, or our bell's id with *efd to wait on beside the sockets).
 * bell_wait_end() after the sleep, rang: *efd was readable.
 */
uint32_t bell_wait_begin(int *efd);
/* A wait sleeps on a ring with TP_BELL_TCP: make our bell for the next ones. */
void bell_wanted(void);
void bell_wait_end(int efd, bool rang);
/* Wake the sleeper of bell id with its eventfd; false: ring over TCP. */
bool bell_ring(uint32_t id);
/*
 * The same for a bell of this process's own, as our RDMA progress thread
 * wakes our sleepers: its eventfd at once, never the daemon's way.
 */
bool bell_ring_own(uint32_t id);
void bell_reply(const struct soft_pair_reply *r);
void bell_fds_closed(unsigned first, unsigned last);
void bell_after_fork_child(void);
/* The daemon went away: its bell ids mean nothing to the next one. */
void bell_daemon_lost(void);
/*
 * No connection attaches to a transport between the two (an execve hands
 * this image's connections over: one attached meanwhile would reach the
 * new image on RDMA, which only this one can use); holds nest.
 */
void ctl_attaches_hold(void);
void ctl_attaches_release(void);
/* execve: the control connection survives it (ctl_mu held from prepare to
 * done); head is "FD:FAMILY:SEQ" for the new image's ctl_exec_adopt(). */
bool ctl_exec_prepare(char *head, size_t len);
void ctl_exec_done(void);
bool ctl_exec_adopt(const char *head);
void ctl_exec_resume(int fd, struct sconn *sc, int state, uint32_t seq);
void ctl_exec_wait(void);
/*
 * Every socket a new process gets paired (or TCP) before it inherits it:
 * ours that reach it, and those child (NULL: none) says its own descriptors name.
 */
struct child_fds;
void ctl_settle(const struct child_fds *child);
/* A seccomp sandbox: pairings still out stay TCP, no message goes any more. */
void ctl_sandboxed(void);

/* ---- uring.c: io_uring, which the library cannot see through ---- */
/* The process has an io_uring instance it cannot watch: new connections stay TCP. */
bool soft_uring_seen(void);
void soft_uring_note(void);
/* A watched instance's request names a connection: the same, whatever SMC_SOFT_URING says. */
void soft_uring_names_conn(void);
/* Inside a liburing function the library watches (its system calls are its own). */
extern _Thread_local bool soft_in_liburing;
/* A descriptor that came from another process: noted if it is an io_uring instance. */
void soft_uring_check_fd(int fd);

/* ---- lifecycle.c: states, cut-over, sharing (doc/soft-lifecycle.md) ---- */
/*
 * The only writers of sc->state besides fd_track() (NEW) and
 * sconn_attach() (ASKED to MAPPED), one per row of the document's first
 * table.  conn_ask(): NEW to ASKED, false if it was not NEW.
 */
bool conn_ask(struct sconn *sc);
/* ASKED back to NEW: the daemon was busy, a later call asks again. */
void conn_ask_later(struct sconn *sc);
/* ASKED for an inherited or passed connection whose region is asked for. */
void conn_asked_again(struct sconn *sc);
/* It came from another process (execve, SCM_RIGHTS): asked for at once, shared. */
void conn_came_shared(struct sconn *sc);
/* TCP for good (declined, failed, given up). */
void conn_stay_tcp(struct sconn *sc);
/* NEW to TCP (no daemon, a sandbox, shared before pairing); others unchanged. */
void conn_stay_tcp_if_new(struct sconn *sc);
/*
 * sc is about to be held by another process too: from now on it is read as
 * shared, and if it is not paired yet it stays TCP, its PAIR (if this
 * process makes one) declining with SMC_SOFT_DECL_SHARED.
 */
void conn_shared(struct sconn *sc);
/*
 * The TCP bytes of the stream left before the peer's fence (0 once read up
 * to it); false while the peer has not set its fence.
 */
bool conn_rx_fence_left(struct sconn *sc, uint64_t *left);
/*
 * A transport without doorbells over TCP lost the connection before the
 * peer's fence: a fence is taken where TCP's bytes end (lifecycle.c).
 */
void conn_rx_lost_fence(int fd, struct sconn *sc);
/*
 * The same loss seen by a writer still on TCP: its bytes could reach no
 * reader, so its sends fail with the reset (lifecycle.c).
 */
bool conn_tx_lost(struct sconn *sc);
/* Held by several processes: tcp_rx from the kernel, what all of them read. */
void conn_rx_count_shared(int fd, struct sconn *sc);
/*
 * Before a wait for POLLIN: the receiving direction cuts over here if the
 * fence is reached; true when it is reached but a reader holds rx_lock (it
 * cuts over), so the wait must not sleep.
 */
bool conn_rx_cut_before_wait(int fd, struct sconn *sc);
/* Whether the fence is behind us (marks rx cut over if it just became so):
 * what TCP still carries are doorbells. */
bool soft_rx_cut_now(int fd, struct sconn *sc);
/*
 * The daemon's reply mapped by the transport of kind (SMC_SOFT_TRANSPORT_*);
 * false: stays as it was (an unknown kind, a refused region).  inherited: a
 * region found again after execve (SOCK_INFO), not a new pairing.
 */
bool sconn_attach(struct sconn *sc, unsigned kind, int shm_fd, int side, bool inherited);
/*
 * A transport set up between hosts (ctl_negotiate.c) carries sc from now
 * on, if sc is still asking and has no reason to decline: t is copied, the
 * caller's to forget.  False: nothing changed.
 */
bool sconn_attach_transport(struct sconn *sc, const struct transport *t);
/* Tell the peer we read fence-aware now, once no plain reader is left. */
void sconn_attach_late(struct sconn *sc);
/* Cut tx over if the peer has attached; with tx_lock held. */
bool sconn_tx_try_cut(int fd, struct sconn *sc);
/* The last fd of sc in this process closes (before the real close). */
void sconn_release(int fd, struct sconn *sc);
/*
 * A program that will not take the connection over gets it (execve,
 * posix_spawn; image is its path, why says why not): it stays on TCP for
 * good at both ends, or is reset if a direction has cut over.  leaving:
 * this process becomes that program.
 */
void sconn_unseen(int fd, struct sconn *sc, const char *image, const char *why, bool leaving);
/*
 * Another process or image is handed sc while its end is this process's
 * own (soft SMC-R's queue pairs) and cut over: both directions go back to
 * TCP first (back.c), for every holder, listed so (SMC_SOFT_DECL_BACK);
 * leaving as for sconn_unseen(); !may_wait: not while another thread
 * sends on it.  False: the transport or the peer cannot (nothing
 * changed), or the peer did not answer or take the bytes in time (the
 * caller resets).
 */
bool sconn_back_for(int fd, struct sconn *sc, bool leaving, bool may_wait);
/*
 * sconn_back_for() in steps, for several ends at once (a fork), each
 * giving up at end (conn_back_deadline()); may_wait: for tx_lock (else
 * the say only tries it, the finish waits for it until end).
 * sconn_back_say() says BACK without waiting for anything: 0, -EAGAIN
 * while the peer has not said whether it can (its first CDC, or its
 * cursor after our shutdown: smcr_conn_back()), -EBUSY
 * (another thread sends), or why not; sconn_back_say_by() says it,
 * asking again while -EAGAIN; sconn_back_say_until() also while
 * -EBUSY, never holding up on tx_lock (the sender may be this thread);
 * sconn_back_finish() waits for the peer's answer and sends what it did
 * not consume.
 */
int sconn_back_say(int fd, struct sconn *sc, bool may_wait);
bool sconn_back_say_by(int fd, struct sconn *sc, bool may_wait, int64_t end);
bool sconn_back_say_until(int fd, struct sconn *sc, int64_t end);
/* SMC_DEBUG: why fd could not go back to TCP (rc from sconn_back_say()) */
void sconn_back_refused(int fd, int rc);
bool sconn_back_finish(int fd, struct sconn *sc, bool leaving, bool may_wait, int64_t end);
/*
 * I/O we cannot see may come (io_uring, a receiver without the library): a
 * mapped connection that has not cut over stays on TCP for good, with
 * reason (SMC_CLC_DECL_*) for smcss.  False if a direction has cut over.
 */
bool sconn_fall_back(int fd, struct sconn *sc, uint32_t reason);
/*
 * Before a data call or a readiness check: a connection that descriptor 0,
 * 1 or 2 names may be read and written by stdio, which calls the kernel
 * from inside libc, past the library.  Not cut over yet, it stays on TCP
 * for good (SMC_SOFT_DECL_STDIO).
 */
void conn_stdio_check(int fd, struct sconn *sc);
/* fdopen(): the same whatever the descriptor; one that has cut over is reset. */
void conn_stdio_open(int fd, struct sconn *sc);
/*
 * An io_uring request names the connection (uring.c): not cut over yet, it
 * stays on TCP for good (SMC_SOFT_DECL_URING); cut over, an end only this
 * process can use (soft SMC-R) goes back to TCP first, else it is reset.
 */
void conn_uring_use(int fd, struct sconn *sc);
/*
 * Ends going back to TCP together (backs.c: a fork, an io_uring instance
 * the library cannot watch).  Each mapped end the rule picks, and not
 * already back, on TCP for good, let go or another process's: nothing cut
 * over, it stays on TCP for good at both ends (reason, for smcss); cut
 * over on a transport only this process can use (soft SMC-R's queue
 * pairs), it says BACK, and then all wait for their peers with one
 * deadline (listed as SMC_SOFT_DECL_BACK once back).  One that another
 * thread is sending on stays as it is, unless the rule waits for senders;
 * one cut over on shared memory keeps its ring.
 */
struct conn_backs_rule {
	uint32_t reason;
	bool one_process_only;  /* only ends of a transport only this process can use */
	bool inherited_only;    /* only descriptors that are not close-on-exec */
	bool others;            /* a forked child's copy of its parent's end: conn_fork_use() */
	bool waits_for_senders; /* an end another thread sends on: asked again until the deadline */
};
void conn_backs_all(const struct conn_backs_rule *rule);
/*
 * An io_uring instance the library cannot watch came (uring.c): every
 * connection as conn_backs_all() says, with SMC_SOFT_DECL_URING; a forked
 * child's copy of its parent's end asks the parent to go back for it.
 */
void conn_uring_unwatched_all(void);
/*
 * SO_RCVLOWAT: set (setsockopt succeeded with val) or asked for (get:
 * *val is the kernel's answer, replaced by the program's own once the ring
 * carries the receiving direction).
 */
void soft_rcvlowat_set(int fd, struct sconn *sc, int val);
/* The kernel's mark back to 1 (the doorbells), the program's kept. */
void soft_rcvlowat_kernel_one(int fd);
void soft_rcvlowat_get(struct sconn *sc, int *val);
/*
 * More bytes came over TCP after the fence than the peer rang: the peer's
 * program wrote past the library.  Those bytes cannot be placed in the
 * stream: the connection is reset at both ends, with one line on stderr.
 */
void conn_foreign_bytes(int fd, struct sconn *sc);
/* The process ends: every ring hears the close the kernel will do. */
void sconn_process_exit(void);
void sconn_free(struct sconn *sc);
/* fork() is about to run: every mapped connection gets its second holder. */
void sconn_before_fork(void);
/* fork() failed: the holders sconn_before_fork() added go again. */
void sconn_fork_failed(void);
/*
 * rx reads the ring from now on, in every process holding the connection.
 * The kernel's SO_RCVLOWAT goes back to 1: TCP carries one-byte doorbells
 * now, and the ring keeps the program's (soft_rcvlowat()).
 */
static inline void sconn_rx_cut_set(int fd, struct sconn *sc)
{
	TP(sc, rx_cut_mark);
	atomic_store(&sc->rx_cut, true);
	if (atomic_load_explicit(&sc->rcvlowat, memory_order_relaxed) > 1)
		soft_rcvlowat_kernel_one(fd);
}

static inline bool sconn_mapped(struct sconn *sc)
{
	return atomic_load_explicit(&sc->state, memory_order_acquire) == SC_MAPPED;
}

/* ---- back.c: back to TCP (doc/soft-roce.md section 4) ---- */
/*
 * Say BACK on sc's transport (its end is to leave RDMA): 0, or -errno
 * (-EOPNOTSUPP where the transport or the peer cannot).  Both directions
 * go on over the TCP stream once the peer answers.
 */
int conn_back_say(int fd, struct sconn *sc);
/*
 * Whether our end said BACK (by itself or answering the peer's), noting
 * it: reads take the TCP stream whole from now on, readiness is the
 * kernel's.  Cheap once true.
 */
bool conn_back_noted(int fd, struct sconn *sc);
/*
 * The peer went back first: the daemon lists our end as TCP, with the
 * peer's reason (SMC_SOFT_DECL_BACK), once; with no lock of sc held.
 */
void conn_back_report(int fd, struct sconn *sc);
/* Whether reads are the TCP stream's (no transport call). */
static inline bool conn_back_reads(struct sconn *sc)
{
	return atomic_load_explicit(&sc->back_rx, memory_order_acquire);
}
/*
 * A send on an end whose transport said -EXDEV (BACK), with tx_lock held:
 * waits for the peer's BACK, sends what it did not consume, then iov by
 * TCP (flags as the program's).  As send() returns.
 */
ssize_t conn_back_send(int fd, struct sconn *sc, const struct iovec *iov, int cnt, int flags,
		       bool nonblock);
/* Without waiting, where no writer is at it: as far as the kernel takes them (poll, epoll, reads). */
void conn_back_flush_try(int fd, struct sconn *sc);
/*
 * Said and heard, and what the peer did not consume not all sent yet: a
 * wait in poll or epoll wakes for room in the kernel, whatever the program
 * asked for, and sends more (the peer may wait for those bytes before it
 * says anything).
 */
bool conn_back_waits_room(struct sconn *sc);
/* Before a blocking read on TCP: the same, on as room comes, until TCP has bytes to read. */
void conn_back_before_read(int fd, struct sconn *sc);
/* What the peer did not consume, by TCP, once it said BACK too: 0 or -errno. */
int conn_back_flush(int fd, struct sconn *sc, bool nonblock);
/* The same before a FIN (shutdown, close, exit), waiting for room whatever O_NONBLOCK says. */
int conn_back_flush_all(int fd, struct sconn *sc);
/* When a wait for the peer's BACK and for room, begun now, gives up (soft_now_ns()'s clock). */
int64_t conn_back_deadline(void);
/* conn_back_flush_all() giving up at end (several ends going back at once: one deadline). */
int conn_back_flush_all_by(int fd, struct sconn *sc, int64_t end);
/*
 * Before the kernel's FIN of a close (tx_lock not held): back to TCP now
 * or while we closed, the bytes the peer did not consume go first.  False
 * when they could not (no answer, no room, a writer of another thread at
 * them): the peer must then get a reset, not a stream cut short.
 */
bool conn_back_before_fin(int fd, struct sconn *sc);

/* ---- io.c: the data path ---- */
/* O_NONBLOCK of fd (sc), as the data path reads it. */
bool soft_nonblocking(int fd, struct sconn *sc);
/* mh: the application's message header (sendmsg/recvmsg), handed to the
 * kernel whole while the socket is plain TCP; NULL for the other calls. */
ssize_t soft_send(int fd, struct sconn *sc, const struct iovec *iov, int iovcnt, int flags,
		  const struct msghdr *mh);
ssize_t soft_recv(int fd, struct sconn *sc, const struct iovec *iov, int iovcnt, int flags,
		  struct msghdr *mh);
/* A send the kernel does on its own (sendfile, splice), op(arg), while the
 * socket is not MAPPED: its bytes are counted for the fence.  Else -2. */
ssize_t soft_kernel_send(int fd, struct sconn *sc, ssize_t (*op)(void *), void *arg);
/* The same on a MAPPED socket whose sending direction has not cut over
 * (tx_lock held meanwhile); -2 once it has. */
ssize_t soft_send_before_cut(int fd, struct sconn *sc, ssize_t (*op)(void *), void *arg);
/*
 * sendfile on a MAPPED socket: up to len bytes of regular file in from off,
 * read straight into the ring; as sendfile returns, or -2 while the sending
 * direction has not cut over.
 */
ssize_t soft_send_file(int fd, struct sconn *sc, int in, off_t off, size_t len);
/* Drain doorbell bytes without blocking (rx cut over, rx_lock not held). */
/* The same with rx_lock held (or no other thread left). */
void soft_drain_held(int fd, struct sconn *sc);
/* Bytes an iovec array holds (SSIZE_MAX at most). */
size_t iov_total(const struct iovec *iov, int cnt);
/* Whether a wait that wants_in (or not) takes the doorbells it sees. */
bool soft_may_drain(struct sconn *sc, bool wants_in);
void soft_drain(int fd, struct sconn *sc);
/* Send one doorbell (tx cut over first). */
void soft_ring_bell(int fd, struct sconn *sc, uint32_t how);
/*
 * A wait for room in the ring saw the TCP socket readable or in error
 * (kernel: the kernel's POLLERR and POLLHUP): the kernel's reset is kept for the data path (true: the
 * send reports it), and once the peer's FIN came a doorbell makes a dead
 * peer's kernel answer RST, as in a blocking send (a SIGKILLed reader).
 */
bool soft_tx_peer_check(int fd, struct sconn *sc, short kernel);
long soft_fionread(int fd, struct sconn *sc);
long soft_outq(struct sconn *sc);
int soft_shutdown(int fd, struct sconn *sc, int how);

/* ---- offer.c: when an established connection is offered to the daemon ---- */
/* Time sc's offer: SMC_SOFT_PAIR_DELAY_USEC from now. */
void offer_defer(struct sconn *sc);
/* A data call on sc while NEW: offered if its time has come. */
void offer_check(int fd, struct sconn *sc);
/* Offer every connection waiting for its offer, now (a decline to tell). */
void offer_all_now(void);
/* Whether a connection of the process waits for its offer (maybe closed since). */
bool offer_pending(void);
/* Before a wait that cannot be cut short (-1: no timeout): offer every
 * connection that would come due during it. */
void offer_before_sleep(int64_t timeout_ns);
/* A wait that can be cut: fn(arg, timeout_ns) is called with the wait cut
 * at the next offer's time, which is then made, and again for the rest;
 * fn's first result that is not 0 (or 0 at the end) is returned. */
int offer_wait(int (*fn)(void *arg, int64_t timeout_ns), void *arg, int64_t timeout_ns);
/* A wait in ns as poll()'s milliseconds, rounded up (-1 stays -1). */
int offer_ns_to_ms(int64_t timeout_ns);

/* ---- dump_io.c: CDC, DATA and LLC records for the SMC dump (pstats.h) ---- */
/* The only cost of the dump while it is off. */
static inline bool soft_dump_on(void)
{
	return __builtin_expect(atomic_load_explicit(&pdump_ctl->types,
						     memory_order_relaxed) != 0, 0);
}
/*
 * After a produce (rx false, tx_lock held) or a consume (rx true, rx_lock
 * held) that moved n > 0 bytes, iov holding them: DATA and CDC records.
 */
void dump_io(struct sconn *sc, bool rx, const struct iovec *iov, int cnt, size_t n);
/* A CDC record of our cursor words as published now (state changes, flushes). */
void dump_cdc(struct sconn *sc);
/* An LLC message of a soft SMC-R link group (smcr_env.llc): an LLC record. */
struct smcr_llc_seen;
void dump_llc(const struct smcr_llc_seen *m);

/* ---- ready.c: readiness for poll and epoll ---- */
#define SOFT_IN_RING  0x1u          /* IN decided by the ring (else the kernel) */
#define SOFT_OUT_RING 0x2u          /* OUT decided by the ring */
/* Which of POLLIN/POLLOUT/POLLRDHUP/POLLHUP/POLLERR the ring says now;
 * *mode tells which directions the ring decides. */
unsigned soft_ready(int fd, struct sconn *sc, unsigned *mode);
/* Ask for a doorbell (bell: how, bell_wait_begin()) when want
 * (POLLIN/POLLOUT) becomes ready; true if it is ready already. */
bool soft_arm(int fd, struct sconn *sc, unsigned want, uint32_t bell);
/* Take back what soft_arm asked for (after the wait). */
void soft_disarm(struct sconn *sc);
/* Whether waiting on sc may spin: the peer last ran on another CPU. */
bool soft_peer_elsewhere(struct sconn *sc);
/* Spin until ready() or the budget is spent (for poll and epoll). */
bool soft_spin_until(bool (*ready)(void *), void *arg);

/* ---- wait.c ---- */
/* Spin until cond(sc) or the budget is spent; true if cond came true. */
bool soft_spin(struct sconn *sc, bool (*cond)(struct sconn *), bool rx);
/* More runnable threads than CPUs on the machine: no spinning then. */
bool soft_cpus_crowded(void);
/* Where we run now, for a peer deciding whether to spin: the CPU, or -1. */
int soft_note_cpu(struct sconn *sc);

/* ---- creds.c: a credential change (setuid, setgroups, ...) is about to come ---- */
void conn_creds_change(void);
/* One came while an RDMA device was open: no negotiation between hosts starts. */
bool soft_creds_stale(void);
void conn_creds_after_fork_child(void);

/* ---- fork_claim.c: an end to another host still NEW at a fork: its first user's ---- */
#define CL_FREE    0u
#define CL_OPEN    1u               /* every copy may claim it */
#define CL_CLAIMED 2u               /* owner pairs it; it cuts over once the only holder */
#define CL_TCP     3u               /* on TCP for every copy */
#define CL_TAKING  4u               /* changing hands (a step of one process) */
#define CL_DONE    5u               /* its claimant cut over alone: free once its count goes */
#define CL_DECIDING 6u              /* a holder looks whether it is the only one (alone_to_done()) */
struct claim_slot {
	_Atomic uint32_t state;     /* CL_* */
	_Atomic int owner;          /* the claimant's pid */
	_Atomic uint32_t kids;      /* processes holding a copy */
	_Atomic uint32_t gen;       /* opened again: a copy of an older end is not its */
};
/* The slot's steps (shared memory, any process): */
bool claim_slot_open(struct claim_slot *s);
bool claim_slot_take(struct claim_slot *s, int pid);
bool claim_slot_mine(struct claim_slot *s, int pid);
void claim_slot_spoil(struct claim_slot *s);
bool claim_slot_done(struct claim_slot *s, int pid);
/* An execve hands our copy on: DONE if it is the only one, open or ours. */
bool claim_slot_hand_on(struct claim_slot *s, int pid);
void claim_slot_kid_gone(struct claim_slot *s, int pid);
/* A copy counted out at gen counts in again, if the slot is still that end's and undecided. */
bool claim_slot_rejoin(struct claim_slot *s, uint32_t gen);
/* fork(): a new fork; fd's end left to its first user (true) or settled as before; it failed. */
void conn_claim_fork_begin(void);
bool conn_claim_fork(int fd, struct sconn *sc);
void conn_claim_fork_failed(void);
/* A data call on a NEW end: false when it stays TCP (another copy is used). */
bool conn_claim_use(int fd, struct sconn *sc);
/* Whether this process may pair sc; whether a fork leaves it to the claim (open, or ours). */
bool conn_claim_pairable(struct sconn *sc);
bool conn_claim_left(struct sconn *sc);
/* In a forked child, for each end. */
void conn_claim_after_fork_child(struct sconn *sc);
/*
 * Whether another copy was used (TCP for every copy: CLAIM_SHARED), or
 * another process still holds one of the end we claimed (CLAIM_WAIT: it may
 * be about to close it; the parent of a fork at accept() may not have run
 * since the fork, with more processes than cores).  No lock held.
 */
enum claim_others { CLAIM_ALONE, CLAIM_WAIT, CLAIM_SHARED };
/* How long a negotiation waits for the others to close, CLAIM_WAIT, before it declines */
#define CLAIM_ALONE_WAIT_MS 200
enum claim_others conn_claim_others(struct sconn *sc);
/* Under sc->lock at its attach: whether it may cut over (no other holder left). */
bool conn_claim_attach(struct sconn *sc);
/* Handed on otherwise (SCM_RIGHTS, a spawn): TCP for every copy. */
void conn_claim_spoil(struct sconn *sc);
/* This process lets go of sc (close, exit). */
void conn_claim_let_go(struct sconn *sc);
/* Before an execve (before): the ends it hands on or closes; after one that failed. */
void conn_claim_exec_all(bool before);

/* ---- fork_share.c: a forked child's first use of an end its owner holds ---- */
struct fork_page;
#define FS_FREE   0u
#define FS_HELD   1u                /* the owner holds it on RDMA */
#define FS_WANTED 2u                /* a child asked for it */
#define FS_GOING  3u                /* the owner takes it back to TCP */
#define FS_TCP    4u                /* on TCP for every holder */
#define FS_LOST   5u                /* could not (yet): the copies meet the reset */
#define FS_TAKING 6u                /* the owner takes the slot for another end */
#define FS_ENDED  7u                /* the owner let go of it on RDMA: the copies meet the reset */
struct fork_slot {
	_Atomic uint32_t state;     /* FS_*, a futex word shared across the processes */
	_Atomic uint32_t kids;      /* copies in processes besides the owner */
	_Atomic uint32_t gen;       /* taken again: copies of an older end are not its */
	_Atomic uint32_t askers;    /* children waiting for an answer */
	_Atomic bool owner_gone;
};
/* The slot's steps (shared memory, any process): */
bool fork_slot_take(struct fork_slot *s);
/* A child asks (HELD or LOST: WANTED), or takes it back after no answer came. */
void fork_slot_ask(struct fork_slot *s);
void fork_slot_unask(struct fork_slot *s);
/* The owner's turn to go back (WANTED, or HELD and LOST too unless only_wanted): true once. */
bool fork_slot_claim(struct fork_slot *s, bool only_wanted);
void fork_slot_settle(struct fork_slot *s, bool tcp);
void fork_slot_kid_gone(struct fork_slot *s);
void fork_slot_owner_gone(struct fork_slot *s);
/* FS_TCP or FS_LOST: the owner's answer, or lost at end (soft_now_ns()) or at its death. */
uint32_t fork_slot_wait(struct fork_slot *s, int owner, int64_t end);
/* fork(): sc reaches the child on RDMA (a slot, a copy more); the fork failed; after it. */
void conn_fork_share_before(struct sconn *sc);
void conn_fork_share_failed(struct sconn *sc);
void conn_fork_share_parent(void);
void conn_fork_share_child(void);
/* An execve closes the close-on-exec copies (before), or failed (after). */
void conn_fork_share_exec(bool before);
/* This process lets go of sc (close, exit): the owner goes back first if a child may use it. */
void conn_fork_share_let_go(int fd, struct sconn *sc);
/* A data call on a child's copy: asks the owner once; on TCP from then on if it went back. */
void conn_fork_use(int fd, struct sconn *sc);

/* ---- child_fds.c ---- */
/* Where a new process's descriptors differ from ours (a vfork() child's
 * dup2/close, posix_spawn's file actions): fd names sc there (a reference),
 * or no connection (sc NULL). */
#define CHILD_FDS_MAX 64
struct child_fds_ent {
	int fd;
	int here;                   /* a descriptor of sc in the process that runs the spawn */
	bool cloexec;
	struct sconn *sc;
};
struct child_fds {
	unsigned n;
	bool lent;                  /* the references are given back for now */
	int from;                   /* child_fds_of_actions: a closefrom's */
	struct child_fds_ent e[CHILD_FDS_MAX];
};
/* This vfork() child's (see soft_vfork_child()). */
struct child_fds *child_fds_vfork(void);
void child_fds_dup(struct child_fds *c, int oldfd, int newfd, bool cloexec);
void child_fds_close(struct child_fds *c, int fd);
/* close_range() in the child (cloexec: CLOSE_RANGE_CLOEXEC) over its entries. */
void child_fds_close_range(struct child_fds *c, unsigned first, unsigned last, bool cloexec);
bool child_fds_has(const struct child_fds *c, int fd);
/* Give the references back; c is empty again. */
void child_fds_release(struct child_fds *c);
/* Give them back for an execve, and take them again when it fails. */
void child_fds_lend(struct child_fds *c);
void child_fds_take_back(struct child_fds *c);
/* What the file actions fa (NULL: none) will do in the child. */
void child_fds_of_actions(struct child_fds *c, const posix_spawn_file_actions_t *fa);
/* posix_spawn's file actions, as the hooks of hook_spawn.c see them added. */
enum fa_op { FA_DUP2, FA_CLOSE, FA_CLOSEFROM };
void child_fds_fa_record(const posix_spawn_file_actions_t *fa, enum fa_op op, int fd, int newfd);
/* fa initialised again or destroyed: what was recorded of it goes. */
void child_fds_fa_forget(const posix_spawn_file_actions_t *fa);


#pragma GCC visibility pop

#endif
