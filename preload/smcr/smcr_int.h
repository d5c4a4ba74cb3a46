/*
 * The link groups' insides, shared by this folder's files only
 * (smcr.h says what each is for).
 */
#ifndef SMC_PRELOAD_SMCR_INT_H
#define SMC_PRELOAD_SMCR_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "smcr.h"

/* Bells of threads asleep on one direction at once (the process has as many). */
#define SMCR_BELLS 8
#include "smcr_conn.h"
#include "smcr_llc.h"

#pragma GCC visibility push(hidden)

/* How long an LLC exchange waits for the peer's message (the kernel's CLC and LLC waits are of this order). */
#define LLC_WAIT_MS 6000

/* LLC messages kept for a caller that waits for one (smcr_llc_wait()). */
#define SMCR_INBOX 8

struct smcr_link {
	struct rdma_dev *dev;
	char dev_name[64];      /* as the caller named it, for the listings */
	uint8_t port;
	struct rdma_qp *qp;
	struct rdma_qp_addr peer;
	uint8_t num;            /* the LLC link number, once confirmed */
	bool connected;         /* to the peer's queue pair */
	bool up;                /* confirmed: connections may use it */
	bool dead;              /* failed; its queue pair stays until the link is added again or the group goes */
	bool dev_gone;          /* its device is gone (fatal): back only as a new device (smcr_link_dev_back()) */
	bool port_down;         /* its port left ACTIVE and did not come back yet */
	bool rebuilding;        /* the group's only link on a new queue pair, not confirmed yet (rebuild.c) */
	bool again;             /* dead, its port back, to be added again once the group can (engine.c) */
	int post_err;           /* a post failed (not for room): the progress thread fails the link */
	bool driven;            /* its channel is lent to a sleeper (smcr_drive_begin()) */
	bool lent_idle;         /* still lent, nobody asleep on it, since lent_ns (smcr_drive_end()) */
	int64_t lent_ns;
	int bell;               /* an eventfd that wakes that sleeper to look again */
	unsigned gen;           /* a new queue pair each time the link is added again */
	/* the watchdog (engine.c): completions last seen, since when, the last kick */
	uint64_t seen_done;
	int64_t since_ns, kicked_ns;
	/* the byte order of the peer's LLC v2 lengths (wire/smcr_llc.h): learned
	 * from its messages of 44 bytes; ours until one came */
	enum smcr_llc_ho peer_ho;
	bool peer_ho_known;
	/* the keepalive: the peer's messages so far, and when the link was last heard or tested */
	uint64_t heard, seen_heard;
	int64_t alive_ns;
	/* probed since (0: not) because the peer's daemon said its process is gone, until posted completes */
	int64_t doubt_ns;
	uint64_t doubt_posted;
};

struct smcr_inmsg {
	int li;                 /* the link it came over */
	uint32_t len;
	uint8_t msg[RDMA_MSG_MAX];
};

struct smcr_lgr {
	pthread_mutex_t mu;     /* everything below, and every connection's data path */
	pthread_cond_t cv;      /* the inbox got a message, a link or rkey changed */
	bool server;
	bool peer_gone;         /* while a link the peer's process left fails: what it resets ends as a close would */
	uint32_t key;           /* names it within the process (smcr_lgr_view) */
	char peer_host[33];     /* the peer's host name, as its CLC message said */
	int refs;               /* the caller's and each connection's */
	struct smcr_link link[SMCR_LINKS_MAX];
	unsigned nlinks;
	bool adding;            /* a link is being added (grow.c): connections wait to start */
	uint8_t last_num;       /* the highest link number so far */
	unsigned failovers;
	int64_t watched_ns;     /* the watchdog's last look (engine.c) */
	uint32_t next_token;
	uint32_t write_max;     /* the largest write a link of the group takes, 0: any */
	/* rebuilding the only link (rebuild.c) */
	struct {
		bool on;                /* under way: li's connections wait */
		bool answer;            /* the peer offered first: ours is the answer */
		bool have_peer;         /* the peer's message came */
		int li;
		struct smcr_rebuild_msg peer;
	} rebuild;
	struct smcr_sock *socks;
	struct smcr_inmsg inbox[SMCR_INBOX];
	unsigned nin;
	struct smcr_lgr *next;  /* in the engine's list */
};

/* The data path's link: a connection on one link of its group. */
struct smcr_path {
	struct smcr_sock *s;
	int li;
};

/* A request of a vfork() child's: asked != done while it waits (sock.c, ask_progress()). */
enum { SMCR_ASK_BACK = 1, SMCR_ASK_STATE, SMCR_ASK_SOFT };
struct smcr_ask {
	uint32_t asked, done;
	uint8_t op, flags;
	uint64_t fence;
	int rc;
};

struct smcr_sock {
	struct smcr_lgr *g;
	struct smcr_sock *next;
	uint8_t *rmb, *snd;
	uint32_t rmb_size, snd_size;
	struct rdma_mr rmb_mr[SMCR_LINKS_MAX], snd_mr[SMCR_LINKS_MAX];
	bool mr_ok[SMCR_LINKS_MAX];
	uint32_t peer_rkey[SMCR_LINKS_MAX];
	bool peer_rkey_ok[SMCR_LINKS_MAX];
	uint64_t peer_rmb_addr;
	uint32_t token;
	int li;                 /* the link it uses */
	struct smcr_path path[SMCR_LINKS_MAX];
	struct smcr_conn c;
	bool live;              /* the data path runs */
	bool starved;           /* a post found the send queue full */
	bool err_told;          /* its error is in the debug log */
	bool released;          /* its owner let go: freed once the peer cannot write (smcr_sock_release) */
	struct smcr_ask ask;    /* what a vfork() child asks the progress thread to post */
	uint8_t early[SMCR_CDC_LEN + SMCR_CDC_DATA_MAX];   /* the peer's last CDC before we started */
	uint32_t early_len;
	_Atomic uint32_t seq[2];   /* futex words: [0] room came, [1] data or state came */
	_Atomic uint32_t sleepers[2];   /* threads in FUTEX_WAIT on seq[] (none: no wake call) */
	_Atomic int drive_li[2];        /* 1 + the link whose channel a sleeper borrowed (its bell wakes it), 0 */
	/* sleepers' bells to ring once each, 0: a free slot (one per waiting thread) */
	_Atomic uint32_t bell[2][SMCR_BELLS];
};

/* engine.c */
extern struct smcr_env smcr_env;
/* The group with key (another reference for the caller), or NULL. */
struct smcr_lgr *smcr_lgr_of_key(uint32_t key);
/* A group's view changed (a link up or down, a connection started or gone): smcr_lgr_changes(). */
void smcr_view_changed(void);
/* *end = now + ms on CLOCK_REALTIME, as pthread_cond_timedwait() takes it (llc.c). */
void smcr_realtime_in(struct timespec *end, int ms);
/* Adds g to the progress thread's groups (starting it once). 0 or -errno. */
int smcr_engine_add(struct smcr_lgr *g);
/* The group's links changed: the progress thread looks again. */
void smcr_engine_kick(void);
/* The links in the progress thread's last poll set. */
unsigned smcr_engine_links_watched(void);
/*
 * Not the process of the progress thread (a vfork() child, which shares
 * our memory): the kernel refuses its posts on our queue pairs.
 */
bool smcr_engine_foreign(void);
/* With g->mu held: the next completion of link li's sends wakes the progress thread. */
void smcr_link_want_sent(struct smcr_lgr *g, int li);
/* Waits until the progress thread woke what it put off: a connection of the caller's may go then. */
void smcr_engine_quiesce(void);
/* Wakes the thread that sleeps on link li's channel (smcr_drive_begin()) to look again. */
void smcr_link_bell(struct smcr_lgr *g, int li);
/* With g->mu held: a channel left lent (smcr_drive_end()) watched by the progress thread again. */
void smcr_link_unlend(struct smcr_lgr *g, int li);
/* The same for every link of g: before a wait on g->cv, which only the progress thread's news ends. */
void smcr_lgr_unlend(struct smcr_lgr *g);
/* Wake the sleepers of direction rx (or tx) of s (on the progress thread: once it let go of g->mu). */
void smcr_sock_wake(struct smcr_sock *s, bool rx);

/* sock.c: with g->mu held, the posts vfork() children asked for (smcr_sock.ask). */
void smcr_lgr_answer_asks(struct smcr_lgr *g);
/* sock.c: whether a connection was released and not freed yet (smcr_lgr_take_released() may find it). */
bool smcr_socks_released(void);
/* sock.c: a released connection the peer can no longer write to, unlinked (g->mu held); NULL if none */
struct smcr_sock *smcr_lgr_take_released(struct smcr_lgr *g);
/* Frees one that smcr_lgr_take_released() gave, without g->mu. */
void smcr_sock_destroy(struct smcr_sock *s);

/* lgr.c, with g->mu held */
struct smcr_sock *smcr_lgr_sock_of_token(struct smcr_lgr *g, uint32_t token);
/* Link li failed (by_peer: the peer said so with DELETE LINK): its connections move or end. */
void smcr_link_fail(struct smcr_lgr *g, int li, bool by_peer);
/*
 * With g->mu held: link li is dead, its queue pair reset, a reader asleep
 * on its channel woken; false if it was dead already.  Its connections
 * are the caller's to move or end.
 */
bool smcr_link_die(struct smcr_lgr *g, int li);
int smcr_link_of_num(struct smcr_lgr *g, uint8_t num);
void smcr_lgr_free(struct smcr_lgr *g);
/* With g->mu held: the group's connections, released or not. */
unsigned smcr_lgr_socks_locked(struct smcr_lgr *g);

/*
 * rebuild.c, with g->mu held: group g's only link li failed while its port
 * is up; whether it is being rebuilt (its connections wait) or not (they
 * end; a group without connections ends with its link).
 */
bool smcr_rebuild_start(struct smcr_lgr *g, int li);

/* llc.c: the server's answer to a client's second GID when it has no port for it (ADD LINK, rejected). */
int smcr_link_refuse(struct smcr_lgr *g, uint8_t num);

/*
 * lgr.c: a dead link's new queue pair on its device, the old one retired (rdma_retire()); the
 * peer's rkeys on it hold if keep_rkeys (a rebuild: neither end's
 * registrations changed).  0 or -errno.
 */
int smcr_link_reopen(struct smcr_lgr *g, int li, bool keep_rkeys);
/*
 * A link whose device was deleted (dev_gone): the device opened again by
 * its name, with a new queue pair and the connections' buffers registered
 * on it; the link stays dead until it is added again.  0, or -errno while
 * the device is not back.  g->mu held, by the progress thread.
 */
int smcr_link_dev_back(struct smcr_lgr *g, int li);
/*
 * lgr.c, with g->mu held: the group's write_max from its links' in-flight
 * limits (each connected link's path MTU: rdma_qp_inflight()), given to
 * every connection; after a link is opened or connected.
 */
void smcr_lgr_write_max(struct smcr_lgr *g);

/*
 * grow.c, with g->mu held: dead link li's device is back (port up, or the
 * peer asked for it with REQ ADD LINK): the server adds it again, to the
 * peer's GID it had; the client, asked by the server's ADD LINK for num,
 * answers on li.  Nothing when a link is being added already.
 */
void smcr_lgr_relink(struct smcr_lgr *g, int li, uint8_t num);
/*
 * engine.c, with g->mu held: failed link li added again on a new queue
 * pair (its port is back, or the client asked with REQ ADD LINK): the
 * server adds it, the client asks the server to.  Not while the group adds
 * or rebuilds a link, nor with no live link to carry the exchange (both
 * links of a group that flapped: the last one's rebuild): the link is
 * marked again and the watchdog tries once the group can.
 */
void smcr_link_again(struct smcr_lgr *g, int li);
/* llc.c, with g->mu held: a live link other than li (-1: any) to carry an LLC exchange, or -1. */
int smcr_lgr_carrier(struct smcr_lgr *g, int li);
/* llc.c, with g->mu held: the client's device for dead link li is back: it asks the server with REQ ADD LINK. */
int smcr_link_request(struct smcr_lgr *g, int li);
/*
 * The link whose own GID is gid: a dead one whose device is there (dead),
 * or one opened and not connected yet (a second link's end awaiting its
 * ADD LINK); its index, or -1.
 */
int smcr_link_of_gid(struct smcr_lgr *g, const uint8_t gid[16], bool dead);

/* llc.c, with g->mu held */
int smcr_llc_send(struct smcr_lgr *g, int li, const struct smcr_llc_msg *m);
/* An LLC DELETE LINK for link number num over link li, if it is up (SMCR_LLC_FLAG_*, SMCR_LLC_DEL_*). */
int smcr_llc_delete_link(struct smcr_lgr *g, int li, uint8_t num, uint8_t flags, uint32_t reason);
/* A message of the peer that is not a CDC: answered here, or kept for a waiter. */
void smcr_llc_in(struct smcr_lgr *g, int li, const uint8_t *msg, uint32_t len);
/* Waits (g->mu held, released while asleep) for a kept message that match() takes. */
int smcr_llc_wait(struct smcr_lgr *g,
		  bool (*match)(struct smcr_lgr *g, int li, const struct smcr_llc_msg *m, const void *arg),
		  const void *arg, struct smcr_llc_msg *m, int ms);
enum smcr_llc_ho smcr_own_ho(void);
/* Decode an LLC message that came over link li in its sender's byte order
 * (learning it from a message of 44 bytes); smcr_llc_decode()'s result. */
int smcr_llc_decode_in(struct smcr_lgr *g, int li, const uint8_t *msg, size_t len, struct smcr_llc_msg *m);
int smcr_rkeys_of(struct smcr_lgr *g, int li, const struct smcr_llc_confirm_rkey *c,
		  uint32_t key[SMCR_LINKS_MAX], bool ok[SMCR_LINKS_MAX]);
bool smcr_rkeys_match(const struct smcr_sock *s, const uint32_t key[SMCR_LINKS_MAX],
		      const bool ok[SMCR_LINKS_MAX]);

/* sock.c, with g->mu held */
int smcr_sock_reg(struct smcr_sock *s, int li);
/* Its buffers' registrations on link li's device go (that device is going). */
void smcr_sock_unreg(struct smcr_sock *s, int li);
/* What the connection's peer sent or what completed: wakes as it says. */
void smcr_sock_rx(struct smcr_sock *s, const uint8_t *msg, uint32_t len);
void smcr_sock_sent(struct smcr_sock *s, uint64_t wr_id);
void smcr_sock_fail(struct smcr_sock *s, int err);
/* The id of a CDC's send as a work request: the connection's token above, the id's low half below. */
#define SMCR_WR_ID(token, id) (((uint64_t)(token) << 32) | ((id) & 0xffffffffu))

#pragma GCC visibility pop

#endif
