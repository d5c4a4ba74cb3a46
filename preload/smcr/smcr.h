/*
 * Soft SMC-R in the application process (doc/soft-roce.md section 4): link
 * groups between this process and a peer process, each with up to
 * SMCR_LINKS_MAX links (an RC queue pair on a device of ours to one of the
 * peer's), the connections of a group (an RMB the peer writes into, a send
 * buffer, wire/smcr_conn.h's data path), the LLC messages that confirm and
 * add links, exchange rkeys and delete links, and one progress thread that
 * takes every completion, feeds the connections, fails them over to
 * another link of their group, adds a failed link again when its port
 * comes back, and wakes their sleepers.
 *
 * The application's threads post their own RDMA WRITEs and CDCs; one mutex
 * per group serialises them with the progress thread.  Nothing here knows
 * of sockets, the daemon or the CLC exchange: the caller brings the peer's
 * queue pair, RMB and token from the CLC messages.
 */
#ifndef SMC_PRELOAD_SMCR_H
#define SMC_PRELOAD_SMCR_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

#include "rdma.h"

#pragma GCC visibility push(hidden)

#define SMCR_LINKS_MAX 2

/* An LLC message as it went over a link of group key (rx: it came from the peer). */
struct smcr_llc_seen {
	uint32_t key;
	uint8_t link_id;        /* its LLC number (0 before CONFIRM LINK) */
	bool rx;
	const uint8_t *gid, *peer_gid;  /* the link's RoCE GIDs, 16 bytes each */
	const uint8_t *msg;     /* as on the wire */
	size_t len;
};

struct smcr_rebuild_msg;

/*
 * What the layer calls outside itself, given once before any group: the
 * process's real poll() and syscall() (inside the preload, those behind
 * its hooks), how to wake a sleeper's bell (NULL: sleepers use the futex
 * words only), and its debug log.
 */
struct smcr_env {
	int (*poll)(struct pollfd *fds, nfds_t n, int ms);
	long (*syscall)(long nr, ...);
	bool (*ring)(uint32_t bell);
	/* a sleeping reader takes its link's completions itself (smcr_engine_drive()) */
	bool drive;
	/* a line for the debug log (NULL: none) */
	void (*log)(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
	/* an LLC message went over a link, for smcdump-ex (NULL: none) */
	void (*llc)(const struct smcr_llc_seen *m);
	/*
	 * Hands group key's rebuild message to the peer outside the link
	 * (NULL: no rebuild); called without the group's lock, on a thread
	 * of the layer's (struct smcr_rebuild_msg below).
	 */
	void (*rebuild)(uint32_t key, const struct smcr_rebuild_msg *msg);
};
void smcr_env_set(const struct smcr_env *env);
/* A line for the debug log through env.log, if there is one. */
void smcr_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* In a forked child: none of the parent's groups, and no progress thread until a group of its own. */
void smcr_after_fork_child(void);

/* ---- lgr.c: a link group and its links ---- */
struct smcr_lgr;

/* server: the end that confirms and adds links (as the kernel's server does). */
int smcr_lgr_new(bool server, struct smcr_lgr **out);
/* Another reference for the caller. */
void smcr_lgr_hold(struct smcr_lgr *g);
/* Drops the caller's reference; the progress thread frees the group with its last one. */
void smcr_lgr_put(struct smcr_lgr *g);

/*
 * A link's local end on device dev's port with the RoCE v2 GID gid: its
 * index in the group (>= 0) or -errno.  The RMBs and send buffers of the
 * group's connections are registered with the new device.
 */
int smcr_link_open(struct smcr_lgr *g, const char *dev, uint8_t port, const uint8_t gid[16]);
void smcr_link_local(struct smcr_lgr *g, int li, struct rdma_qp_addr *a);
/* Connects link li to the peer's queue pair. */
int smcr_link_connect(struct smcr_lgr *g, int li, const struct rdma_qp_addr *peer);
/* LLC CONFIRM LINK of link li as number num: the server asks, the client answers.  0 or -errno. */
int smcr_link_confirm(struct smcr_lgr *g, int li, uint8_t num);
/*
 * LLC ADD LINK over the group's first live link for the new link li: the
 * server offers it to the client's GID peer_gid with the rkeys of every
 * connection's RMB on li, the client answers with its own; both connect
 * li and confirm it (number num).  0 or -errno.
 */
int smcr_link_add(struct smcr_lgr *g, int li, uint8_t num, const uint8_t peer_gid[16]);
/*
 * After the first contact's connection started: the group's second link in
 * the background (grow.c), li the link the caller opened for it (-1: none).
 * The server offers li to the client's GID peer_gid, or with li -1 rejects
 * it (peer_gid NULL: the client named none, nothing happens); the client
 * (peer_gid NULL) waits for the server's ADD LINK for li.  Connections that
 * start meanwhile wait until the link is up or given up.  0 or -errno.
 */
int smcr_lgr_grow(struct smcr_lgr *g, int li, const uint8_t peer_gid[16]);
/* The group's links in one line each, for a report (cut at size): the length written. */
int smcr_lgr_describe(struct smcr_lgr *g, char *buf, size_t size);
/* The peer's host name for the listings (at most 32 characters are kept). */
void smcr_lgr_set_peer_host(struct smcr_lgr *g, const char *host);

/*
 * A group's only link rebuilt on new queue pairs when it fails (rxe
 * parked it, or its port went down and comes back within SMCR_REBUILD_MS;
 * doc/soft-roce.md section 5, "The only link"): a queue pair that cannot
 * send cannot say where the new one is,
 * so the two ends exchange their new queue pairs' addresses outside the
 * link, through the caller (env.rebuild: the daemons' relay).  The
 * group's connections wait meanwhile and go on over the new link from
 * their last delivered CDC; no peer's message within SMCR_REBUILD_MS, or
 * no CONFIRM LINK, and they end with ECONNRESET.  Without env.rebuild a
 * group's only link that fails ends its connections at once.
 */
#define SMCR_REBUILD_MS 10000
struct smcr_rebuild_msg {
	struct rdma_qp_addr qp; /* the sender's new queue pair */
	uint8_t num;            /* the link number the server gives it (0 from the client) */
	bool answer;            /* the reply to the peer's: an offer that crossed ours is none */
};
/*
 * The peer's message for our group key: the answer to ours, or an offer
 * (its link failed first), which fails our end of that link and answers.
 * 0; -ENOENT when no group has that key or no link of it goes to the
 * peer's GID (an answer nobody waits for too); -EBUSY when the group is
 * adding a link or has another link up (the peer's offer makes no sense
 * then).
 */
int smcr_rebuild_in(uint32_t key, const struct smcr_rebuild_msg *msg);
/*
 * The peer's daemon says the process at group key's other end ended
 * without closing its connections (doc/soft-roce.md section 4): its links
 * are probed now, and fail if the peer does not answer.  0 or -ENOENT.
 */
int smcr_lgr_peer_gone(uint32_t key);
/* The message's bytes (wire/smcr_rebuild.h, 32 of them): the count, or -EINVAL. */
int smcr_rebuild_msg_encode(const struct smcr_rebuild_msg *msg, uint8_t *out, size_t size);
/* The message of len bytes: 0, or -EBADMSG. */
int smcr_rebuild_msg_decode(const uint8_t *buf, size_t len, struct smcr_rebuild_msg *msg);

/* A link group as the listings show it: its links that are up. */
struct smcr_link_view {
	uint8_t num;            /* the LLC link number */
	char dev[64];
	uint8_t port;
	uint8_t gid[16], peer_gid[16];
	unsigned conns;
};
struct smcr_lgr_view {
	uint32_t key;           /* names the group within the process, never 0 */
	bool server;
	char peer_host[33];
	unsigned conns;
	unsigned nlinks;
	struct smcr_link_view link[SMCR_LINKS_MAX];
};
/* The process's link groups, at most max of them: how many. */
int smcr_lgr_views(struct smcr_lgr_view *v, int max);
/* A count that moves whenever a view would change (a link up or down, a connection started or gone). */
unsigned smcr_lgr_changes(void);

/* Live links of the group, and failovers so far. */
unsigned smcr_lgr_links_up(struct smcr_lgr *g);
/*
 * A group holds at most SMCR_LGR_CONNS_MAX connections (the kernel's
 * SMC_RMBS_PER_LGR_MAX): an ADD LINK names each one's rkey, in one message.
 */
#define SMCR_LGR_CONNS_MAX 255u
bool smcr_lgr_full(struct smcr_lgr *g);
/*
 * No connection (a released one with bytes to deliver counts), no link
 * being added or rebuilt, and no reference but the caller's one.
 */
bool smcr_lgr_unused(struct smcr_lgr *g);
/* No link up, none being added or rebuilt: the group carries nothing more, for good. */
bool smcr_lgr_ended(struct smcr_lgr *g);
/* Groups the progress thread has freed so far, with their queue pairs and registrations. */
unsigned smcr_lgrs_freed(void);
/* A sleep of ms milliseconds through the environment's poll (not the preload's hooks). */
void smcr_nap_ms(int ms);
/* One of the group's links is connected to the peer's queue pair p. */
bool smcr_lgr_links_to(struct smcr_lgr *g, const struct rdma_qp_addr *p);
unsigned smcr_lgr_failovers(struct smcr_lgr *g);

/* ---- sock.c: a connection of a group ---- */
struct smcr_sock;

/* What the CLC message of our end names. */
struct smcr_sock_local {
	struct rdma_qp_addr qp; /* the link the connection uses */
	uint32_t rkey;          /* our RMB's rkey on that link */
	uint64_t rmb_addr;
	uint32_t rmb_size;
	uint32_t snd_size;      /* our send buffer */
	uint32_t token;         /* our alert token: the peer's CDCs carry it */
};

/* What the peer's CLC message named. */
struct smcr_sock_peer {
	uint32_t rkey;          /* its RMB's rkey on the connection's link */
	uint64_t rmb_addr;
	uint32_t rmb_size;
	uint32_t token;
};

/*
 * A connection with an RMB of rmb_size and a send buffer of snd_size,
 * registered on every link.  Its link: the server's choice (peer NULL),
 * the live link that carries fewest connections; the client's is the one
 * to the queue pair the server's ACCEPT named (peer: its GID and number).
 * -ENOMEM: no memory for the buffers; -EKEYREJECTED: a link's device did not
 * register them (its error in smcr_log); -ENOSPC: the group is full;
 * -ENOLINK: no such link.
 */
int smcr_sock_new(struct smcr_lgr *g, const struct rdma_qp_addr *peer, uint32_t rmb_size, uint32_t snd_size,
		  struct smcr_sock **out);
void smcr_sock_local(struct smcr_sock *s, struct smcr_sock_local *l);
/*
 * Starts the data path toward the peer's RMB; with more than one live link,
 * first LLC CONFIRM RKEY (our RMB's rkeys on the other links) both ways.
 * 0 or -errno.
 */
int smcr_sock_connect(struct smcr_sock *s, const struct smcr_sock_peer *p);
/*
 * Frees the connection, once the peer cannot write into its RMB any more
 * (it said CLOSED or ABORT, or no link is left): a write into a
 * deregistered RMB would break the link for every connection of the group.
 */
void smcr_sock_free(struct smcr_sock *s);
/*
 * The owner lets go of the connection: freed now when the peer can no
 * longer write into its RMB, else by the progress thread once the peer
 * says CLOSED or ABORT, or the connection fails.
 */
void smcr_sock_release(struct smcr_sock *s);
/* Connections of this process not freed yet (released ones included). */
unsigned smcr_socks(void);
void smcr_socks_after_fork_child(void);

/* Non-blocking: the count, -EAGAIN (no room), -EPIPE, or the connection's error. */
ssize_t smcr_sock_send(struct smcr_sock *s, const struct iovec *iov, int cnt);
/* Non-blocking: the count, 0 when nothing is there, or the connection's error. */
ssize_t smcr_sock_recv(struct smcr_sock *s, const struct iovec *iov, int cnt, bool peek);
/*
 * smcr_sock_recv() under the same lock as what a reader decides with: the
 * peer's CDC_CF_* flags and the sticky error as they were before the read,
 * and the bytes still readable after it.
 */
struct smcr_recv_seen {
	uint8_t peer_state;
	int error;
	bool lost_after_end;     /* smcr_conn_lost_after_end() */
	long left;
};
ssize_t smcr_sock_recv_seen(struct smcr_sock *s, const struct iovec *iov, int cnt, bool peek,
			   struct smcr_recv_seen *seen);
long smcr_sock_readable(struct smcr_sock *s);
long smcr_sock_space(struct smcr_sock *s);
long smcr_sock_unread(struct smcr_sock *s);
/* Our CDC_CF_* flags, sent after what is queued; the peer's; the sticky error (-errno, 0). */
int smcr_sock_set_state(struct smcr_sock *s, uint8_t cflags);
uint8_t smcr_sock_peer_state(struct smcr_sock *s);
int smcr_sock_error(struct smcr_sock *s);
/* What a waiter looks at, under one lock: all 0 for a connection not live. */
struct smcr_sock_view {
	long readable, space;
	uint8_t peer_state;      /* the peer's CDC_CF_* flags */
	uint8_t back;            /* SMCR_BACK_* */
	int error;
	bool lost_after_end;     /* smcr_conn_lost_after_end() */
};
void smcr_sock_view(struct smcr_sock *s, struct smcr_sock_view *v);
/* Soft SMC-R's cut-over words (wire/smcr_cdc.h CDC_SOFT_*): ours, sent now and sticky; the peer's. */
int smcr_sock_set_soft(struct smcr_sock *s, uint8_t flags, uint64_t fence);
uint8_t smcr_sock_peer_soft(struct smcr_sock *s, uint64_t *fence);
uint8_t smcr_sock_own_soft(struct smcr_sock *s, uint64_t *fence);
/* Our CDC_CF_* flags so far. */
uint8_t smcr_sock_own_state(struct smcr_sock *s);
/*
 * Back to TCP (wire/smcr_conn.h, smcr_conn_back()): say BACK; its state
 * (SMCR_BACK_*); the bytes the peer did not consume, copied into buf (at
 * most size; -EAGAIN before BACK was said and heard), and n of them gone
 * by TCP.  Once said and heard, the loss of the group's links is no error.
 */
int smcr_sock_back(struct smcr_sock *s);
unsigned smcr_sock_back_state(struct smcr_sock *s);
ssize_t smcr_sock_back_pending(struct smcr_sock *s, void *buf, size_t size);
void smcr_sock_back_sent(struct smcr_sock *s, size_t n);

/*
 * Sleeping: a futex word per direction that the progress thread bumps when
 * the peer produced or changed its state (rx), or room came (tx).  Read the
 * word, check, then wait with the value read: 0 when it changed (or was
 * woken), -ETIMEDOUT, -EINTR.
 */
uint32_t smcr_sock_seq(struct smcr_sock *s, bool rx);
int smcr_sock_wait(struct smcr_sock *s, bool rx, uint32_t seq, const struct timespec *timeout);
/*
 * A sleeper that takes its link's completions itself (doc/soft-roce.md
 * section 4): smcr_drive_begin() lends it the channel d->fd (-EAGAIN: not
 * now, sleep as usual; bell: its own bell, which its wakes need not ring,
 * or 0); after each sleep on it, smcr_drive_take() (woken:
 * d->fd was readable) takes what the group's links completed and wakes
 * whom it concerns: false once the link changed (stop, end, look again);
 * smcr_drive_end() gives the channel back.
 */
struct smcr_drive {
	int fd;
	int li;
	unsigned gen;
	uint32_t bell;
	int bell_fd;            /* the link's: wakes a sleeper without a bell of its own */
	bool rx;
};
int smcr_drive_begin(struct smcr_sock *s, bool rx, uint32_t bell, struct smcr_drive *d);
bool smcr_drive_take(struct smcr_sock *s, const struct smcr_drive *d, bool woken);
void smcr_drive_end(struct smcr_sock *s, const struct smcr_drive *d);
/* smcr_sock_wait()'s sleep with the channel lent; -EAGAIN when it cannot be. */
int smcr_engine_drive(struct smcr_sock *s, bool rx, uint32_t seq, const struct timespec *timeout);
/*
 * The process ends: wait while its connections (released ones too) still
 * have bytes for their peers or a last CDC on its way, giving up after
 * idle_ns without progress.  Those bytes end with the process.  Not for
 * a peer that closed or aborted: it reads nothing more.
 */
void smcr_linger_all(int64_t idle_ns);
/*
 * The process ends (after smcr_linger_all()): each of its groups whose
 * connections were all let go tells its peer that its links go, an LLC
 * DELETE LINK each, orderly (smcr_lgr_goodbye(): the links told), and
 * waits up to wait_ms for them to be delivered.  The peer frees the group
 * at once instead of finding it dead at its next TEST LINK, and reads
 * what our closed connections left it (smcr_conn_lost_after_end()).
 */
unsigned smcr_lgr_goodbye(struct smcr_lgr *g);
void smcr_goodbye_all(int wait_ms);
/*
 * Whether this process has a link group (its queue pairs, its device):
 * no lock, async-signal-safe (a credential change libpsx makes in a signal
 * handler on every thread: conn/creds.c).
 */
bool smcr_groups_any(void);
/* The key of s's group and the number of the link s uses now. */
void smcr_sock_where(struct smcr_sock *s, uint32_t *key, uint8_t *num);
/* The group the connection belongs to (no reference of its own). */
struct smcr_lgr *smcr_sock_lgr(struct smcr_sock *s);
/* The connection's positions and state in one line, for a report: snprintf's count. */
int smcr_sock_describe(struct smcr_sock *s, char *buf, size_t size);
/*
 * A poll-style sleeper's bell (env.ring), rung once at the next change of
 * that direction, beside the bells of other threads asleep on it; 0 does
 * nothing.  A bell left after its sleeper woke costs one spurious wake-up.
 */
void smcr_sock_bell(struct smcr_sock *s, bool rx, uint32_t bell);
/*
 * Before a sleep that does not take its link's completions itself (a bell,
 * a futex): the channel a driver left lent goes back to the progress thread.
 */
void smcr_sock_unlend(struct smcr_sock *s);
/* A writer is about to sleep for room: the completions of its writes are to wake the layer. */
void smcr_sock_want_room(struct smcr_sock *s);

#pragma GCC visibility pop

#endif
