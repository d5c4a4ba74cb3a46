/*
 * The transport under a paired connection: what carries a direction's bytes
 * once it has cut over from TCP, and the few words the two ends and the
 * holders of one end share about it (doc/soft-transport.md).
 *
 * Two implementations: the shared-memory ring of soft SMC-D
 * (transport_ring.c over wire/dmb.h), and soft SMC-R (transport_rdma.c:
 * RDMA WRITE into the peer's buffer, CDC messages for cursors, flags and
 * the cut-over's words); the lifecycle (lifecycle.c) and the data path
 * (io.c) call nothing else, and only a transport touches what it shares.
 */
#ifndef SMC_PRELOAD_TRANSPORT_H
#define SMC_PRELOAD_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

struct transport;

/*
 * TP_PS_*: the peer's connection state, as the flags of SMC's CDC message
 * say it (its conn_state_flags byte, RFC 7609 section 4.3).
 */
#define TP_PS_DONE_WRITING 0x80u    /* shutdown(SHUT_WR) */
#define TP_PS_CLOSED       0x40u    /* orderly close */
#define TP_PS_ABORT        0x20u    /* reset */
#define TP_PS_DONE_READING 0x10u    /* shutdown(SHUT_RD) */
#define TP_PS_ENDED        (TP_PS_DONE_WRITING | TP_PS_CLOSED | TP_PS_ABORT)
/* consume() flag: copy without moving the cursor (MSG_PEEK) */
#define TP_PEEK            0x1u
/* *wake: a doorbell byte over TCP (else the id of the sleeper's bell) */
#define TP_BELL_TCP        1u
/* peer_cpu(): the peer runs on another host */
#define TP_PEER_REMOTE     UINT32_MAX
/* back_state(): we said BACK (our buffer is read no more); the peer did (its cursor is final) */
#define TP_BACK_SAID       0x1u
#define TP_BACK_HEARD      0x2u
#define TP_BACK_DONE       (TP_BACK_SAID | TP_BACK_HEARD)

/* A sleeper's own way to its transport's completions (drive_begin()). */
struct tp_drive {
	int fd;                      /* to sleep on beside the others (POLLIN) */
	uint64_t state[3];           /* the transport's */
};

/* Our end's cursors and flags as a CDC message carries them (for the dump). */
struct tp_cdc {
	uint16_t prod_wrap, cons_wrap;
	uint32_t prod_count, cons_count;
	uint8_t prod_flags;          /* write blocked, urgent data */
	uint8_t conn_state_flags;    /* TP_PS_* */
};

struct transport_ops {
	const char *name;
	/*
	 * The producer rings a doorbell byte over TCP once it has cut over,
	 * for a reader asleep in the TCP stream (rx_want_bell): the ring does;
	 * without, such a reader waits for the fence on the transport itself.
	 */
	bool tcp_doorbells;
	/*
	 * Only the process that set the end up can use it (queue pairs do not
	 * cross fork, SCM_RIGHTS or execve): another process's copy is reset.
	 */
	bool one_process;
	/* the kernel's SMC-R statistics count its bytes, else SMC-D's */
	bool smcr;
	bool not_ours;             /* such an end, another process's (rdma_elsewhere.c) */
	const char *medium;        /* where the bytes are, for messages: "shared memory" */
	/* Map what the daemon's reply brought (fd) as end side; 0 or -errno. */
	int (*map)(struct transport *t, int fd, int side);
	void (*unmap)(struct transport *t);

	/*
	 * Bytes: the count moved, 0 at the end of the stream, or -errno
	 * (doc/soft-transport.md).  *wake says the other end sleeps and needs
	 * a doorbell, and which (TP_BELL_TCP or the id of its process's bell).
	 */
	ssize_t (*produce)(struct transport *t, const struct iovec *iov, int cnt, uint32_t *wake);
	/*
	 * The same from up to len bytes of file fd at offset off, read into
	 * the transport's buffer without a copy of ours (sendfile): 0 at the
	 * end of the file, -errno of the read.
	 */
	ssize_t (*produce_file)(struct transport *t, int fd, off_t off, size_t len, uint32_t *wake);
	ssize_t (*consume)(struct transport *t, const struct iovec *iov, int cnt, unsigned flags,
			   uint32_t *wake);
	void (*rx_flush)(struct transport *t, uint32_t *wake);   /* publish our consumer cursor */
	void (*rx_busy)(struct transport *t);                /* a read found data */
	long (*readable)(struct transport *t);
	/* Room any write can use now (POLLOUT), else 0: a produce may need more than 1 byte. */
	long (*space)(struct transport *t);
	long (*unread)(struct transport *t);                 /* sent, not consumed yet */

	/* Connection state, each sticky and published at once. */
	void (*shutdown_wr)(struct transport *t);
	void (*shutdown_rd)(struct transport *t);
	void (*close)(struct transport *t);
	void (*abort)(struct transport *t);
	unsigned (*peer_state)(struct transport *t);         /* TP_PS_* */

	/*
	 * Sleeping: announce, check again, sleep, end (dmb.h's protocol).
	 * bell: how the sleeper is woken, TP_BELL_TCP or its process's bell.
	 */
	bool (*rx_sleep_begin)(struct transport *t, uint32_t *wake, uint32_t bell);
	void (*rx_sleep_end)(struct transport *t);
	int (*rx_wait)(struct transport *t, const struct timespec *timeout);
	bool (*tx_sleep_begin)(struct transport *t, size_t want, uint32_t bell);
	void (*tx_sleep_end)(struct transport *t);
	/*
	 * A sleeper that takes the transport's completions itself (soft SMC-R:
	 * its link's completion channel, lent while it sleeps, so that the
	 * news wakes one thread, not a progress thread and then it): false
	 * where there is none now.  bell: the sleeper's own (its wakes need
	 * not ring it).  After the sleep, drive_take() (woken: d->fd was
	 * readable), then drive_end().
	 */
	bool (*drive_begin)(struct transport *t, bool rx, uint32_t bell, struct tp_drive *d);
	void (*drive_take)(struct transport *t, const struct tp_drive *d, bool woken);
	void (*drive_end)(struct transport *t, const struct tp_drive *d);
	/* Before our receiving cut-over: the producer rings once it has cut. */
	void (*rx_want_bell)(struct transport *t);
	/* Whether a sleeper's bell is still asked for (the producer takes it when it rings). */
	bool (*rx_bell_asked)(struct transport *t);
	/* A doorbell is on its way over TCP between these; false: no bell. */
	bool (*bell_begin)(struct transport *t);
	void (*bell_end)(struct transport *t);
	/* Doorbells the peer sent over TCP that none of our holders read yet. */
	bool (*tcp_bells_due)(struct transport *t);
	/* n bytes read after the fence; false: more than the peer rang (foreign bytes) */
	bool (*tcp_bells_read)(struct transport *t, uint32_t n);
	/* Closing: wait (bounded) for the peer's doorbells on their way. */
	void (*wait_bells)(struct transport *t);
	/*
	 * Values that change whenever the peer produced or changed its state
	 * (rx), or consumed (tx): edge-triggered epoll compares them.
	 */
	uint64_t (*rx_mark)(struct transport *t);
	uint64_t (*tx_mark)(struct transport *t);

	/* The cut-over (doc/soft-lifecycle.md section 2). */
	void (*say_attached)(struct transport *t);           /* we read fence-aware */
	bool (*peer_attached)(struct transport *t);
	/* The TCP bytes before the cut-over of a direction, once its producer set it. */
	bool (*tx_fence)(struct transport *t, uint64_t *bytes);
	/* False when the direction stays on TCP for good (stay_tcp at either end). */
	bool (*set_tx_fence)(struct transport *t, uint64_t bytes);
	/* Both directions on TCP for good, at both ends; false if one has cut over. */
	bool (*stay_tcp)(struct transport *t);
	/* Whether they are so already (a fallback), changing nothing. */
	bool (*on_tcp_for_good)(struct transport *t);
	bool (*rx_fence)(struct transport *t, uint64_t *bytes);
	/* A holder of our end read the TCP stream up to the fence. */
	bool (*rx_cut_seen)(struct transport *t);
	void (*rx_cut_mark)(struct transport *t);

	/*
	 * Back to TCP (doc/soft-transport.md), for an end another process is
	 * to hold: back_offer before our first byte (our bytes are kept until
	 * the peer consumed them; false where the transport cannot);
	 * back_say (0, -EOPNOTSUPP where it or the peer cannot, -EAGAIN while
	 * the peer has not said yet whether it can, -errno);
	 * back_state (TP_BACK_*); once done, back_pending copies the bytes
	 * the peer did not consume (at most size), to go by TCP before any
	 * other, and back_sent says n of them went.  After back_say, produce
	 * and consume return -EXDEV: both directions are TCP's.
	 */
	bool (*back_offer)(struct transport *t);
	int (*back_say)(struct transport *t);
	unsigned (*back_state)(struct transport *t);
	ssize_t (*back_pending)(struct transport *t, void *buf, size_t size);
	void (*back_sent)(struct transport *t, size_t n);

	/* Processes holding our end: the count before the change. */
	uint32_t (*holders_add)(struct transport *t, int delta);
	uint32_t (*holders)(struct transport *t);
	void (*holders_first)(struct transport *t);          /* the registering process: 1 */
	bool (*ever_shared)(struct transport *t);            /* held by more than one once */
	uint32_t (*hold_gen)(struct transport *t);           /* bumped by every change of holders */
	void (*resync)(struct transport *t);                 /* cursors from the shared ones */

	/* Where each end last ran (CPU + 1, 0 unknown, TP_PEER_REMOTE), for spinning. */
	void (*note_cpu)(struct transport *t, int cpu);
	uint32_t (*peer_cpu)(struct transport *t, bool rx);

	/* For the SMC dump (doc/smc-dump-header.md). */
	void (*own_cdc)(struct transport *t, struct tp_cdc *cdc);
	uint64_t (*tx_pos)(struct transport *t);
	uint64_t (*rx_pos)(struct transport *t);
	bool (*rx_published)(struct transport *t);
	uint32_t (*tx_size)(struct transport *t);
	uint32_t (*rx_size)(struct transport *t);
};

/*
 * Every operation of struct transport_ops, in its order: a table without
 * one is refused (transport_ops_complete()), not called through NULL.
 */
#define TRANSPORT_OPS(X) \
	X(map) X(unmap) X(produce) X(produce_file) X(consume) X(rx_flush) X(rx_busy) \
	X(readable) X(space) X(unread) X(shutdown_wr) X(shutdown_rd) X(close) X(abort) \
	X(peer_state) X(rx_sleep_begin) X(rx_sleep_end) X(rx_wait) X(tx_sleep_begin) \
	X(tx_sleep_end) X(drive_begin) X(drive_take) X(drive_end) X(rx_want_bell) \
	X(rx_bell_asked) X(bell_begin) X(bell_end) X(tcp_bells_due) X(tcp_bells_read) \
	X(wait_bells) X(rx_mark) X(tx_mark) X(say_attached) X(peer_attached) X(tx_fence) \
	X(set_tx_fence) X(stay_tcp) X(on_tcp_for_good) X(rx_fence) X(rx_cut_seen) \
	X(rx_cut_mark) X(back_offer) X(back_say) X(back_state) X(back_pending) X(back_sent) \
	X(holders_add) X(holders) X(holders_first) X(ever_shared) \
	X(hold_gen) X(resync) X(note_cpu) X(peer_cpu) X(own_cdc) X(tx_pos) X(rx_pos) \
	X(rx_published) X(tx_size) X(rx_size)
#define TRANSPORT_OP_ONE(op) +1
_Static_assert(sizeof(struct transport_ops) - offsetof(struct transport_ops, map) ==
	       (0 TRANSPORT_OPS(TRANSPORT_OP_ONE)) * sizeof(void (*)(void)),
	       "TRANSPORT_OPS names every operation of struct transport_ops");

/* A transport's state, its own layout inside (each asserts that it fits). */
#define TRANSPORT_STATE_SIZE 256

struct transport {
	const struct transport_ops *ops;   /* NULL until mapped */
	union {
		unsigned char bytes[TRANSPORT_STATE_SIZE];
		max_align_t align;
	} state;
};

/* The shared-memory ring of soft SMC-D. */
extern const struct transport_ops transport_ring;
/* Soft SMC-R: RDMA WRITE into the peer's RMB (transport_rdma.c). */
extern const struct transport_ops transport_rdma;
/* A soft SMC-R end in a forked child, the parent's (rdma_elsewhere.c). */
extern const struct transport_ops transport_rdma_elsewhere;
struct smcr_sock;
/*
 * t carries connection s of a link group (smcr.h), whose peer's RMB has
 * peer_rmb_size bytes: the RDMA end's map(), once the CLC exchange named
 * the peer.  0 or -EINVAL.
 */
int transport_rdma_bind(struct transport *t, struct smcr_sock *s, uint32_t peer_rmb_size);
/* The key of t's link group and the number of the link it uses (smcr_sock_where()). */
void transport_rdma_where(struct transport *t, uint32_t *key, uint8_t *link);
/* The links of t's link group in one line each (smcr_lgr_describe()): the length written. */
int transport_rdma_links(struct transport *t, char *buf, size_t size);

/*
 * Soft SMC-R's set-up of one connection from its CLC messages
 * (rdma_clc.c, doc/soft-roce.md section 2.2), on the daemon's device ports
 * for the connection's own IPv4 address local.  Messages go into msg (at
 * most size bytes): the functions that make one return its length, the
 * others 0; -errno when the set-up failed (the caller declines).
 *   client: rdma_neg_propose (PROPOSAL), rdma_neg_accepted (the server's
 *           ACCEPT in, our CONFIRM out), rdma_neg_confirm_link once the
 *           CONFIRM is on its way (waits for the first link's CONFIRM LINK);
 *   server: rdma_neg_answer (PROPOSAL in, ACCEPT out), rdma_neg_confirmed
 *           (the client's CONFIRM: the first link confirmed, waiting);
 *   both:   rdma_neg_bufs (the buffers' sizes it got), rdma_neg_bind (the
 *           connection into t), rdma_neg_free.
 * rdma_neg_answer and rdma_neg_accepted say -EAGAIN while a first contact
 * with the same peer process is under way here: the same message again
 * later joins its group.  Buffers are as large as the device registers them
 * (SMC_SOFT_SMCR_BUF down to SMC_SOFT_SMCR_BUF_MIN).
 */
struct rdma_neg;
/*
 * The device ports the daemon names for a connection: its interface's,
 * and another in the same PNET for the link group's second link (alt_port
 * 0: none), with that port's RoCE v2 GID.
 */
struct rdma_ports {
	char dev[64];
	uint8_t port;
	char alt_dev[64];
	uint8_t alt_port;
	uint8_t alt_gid[16];
};
int rdma_neg_propose(const struct rdma_ports *ports, struct in_addr local, struct rdma_neg **out,
		     uint8_t *msg, size_t size);
int rdma_neg_answer(const struct rdma_ports *ports, struct in_addr local, const uint8_t *proposal,
		    size_t len, struct rdma_neg **out, uint8_t *msg, size_t size);
int rdma_neg_accepted(struct rdma_neg *n, const uint8_t *accept, size_t len, uint8_t *msg, size_t size);
int rdma_neg_confirmed(struct rdma_neg *n, const uint8_t *confirm, size_t len);
int rdma_neg_confirm_link(struct rdma_neg *n);
void rdma_neg_bufs(struct rdma_neg *n, uint32_t *rmb_size, uint32_t *snd_size);
int rdma_neg_bind(struct rdma_neg *n, struct transport *t);
void rdma_neg_free(struct rdma_neg *n);
/*
 * The kernel's decline code (SMC_CLC_DECL_*) for a set-up that failed with
 * rc, named by the step as the kernel's af_smc.c and smc_core.c name it.
 */
uint32_t rdma_neg_reason(int rc);
/* In a forked child: none of the parent's link groups. */
void rdma_clc_after_fork_child(void);
/*
 * Once a group changed: the groups that ended (no link up, none being
 * rebuilt or added: their peer process ended and said so, or every link
 * failed) leave the list, so that the progress thread frees each, with
 * its queue pairs and message slots, once its connections went; before,
 * only the next negotiation or a shortage of memory let them go.
 */
void rdma_clc_groups_prune(void);
/* A DECLINE of ours with reason (SMC_CLC_DECL_*) into msg: its length. */
int rdma_clc_decline(uint32_t reason, uint8_t *msg, size_t size);
/* Whether msg is a DECLINE: 1 with its reason, 0 if not, -EPROTO for a bad one. */
int rdma_clc_declined(const uint8_t *msg, size_t len, uint32_t *reason);
/*
 * In a forked child, for its copy of a mapped t: a transport whose state
 * does not cross fork (soft SMC-R's queue pairs) becomes process parent's,
 * reset here on use (rdma_elsewhere.c): true; a ring's stays shared.
 */
bool transport_after_fork_child(struct transport *t, int parent);
/*
 * The process ends: its soft SMC-R connections, closed or not, give their
 * peers the bytes still in their send buffers first (a ring's bytes outlive
 * the process; these would not), giving up after 5 s without progress.
 */
void transport_linger_all(void);
/* Whether this process has soft SMC-R connections or link groups (RDMA devices open). */
bool transport_rdma_live(void);
/* The back operations of a transport that needs none or cannot (no_back.c). */
bool tp_no_back_offer(struct transport *t);
int tp_no_back_say(struct transport *t);
unsigned tp_no_back_state(struct transport *t);
ssize_t tp_no_back_pending(struct transport *t, void *buf, size_t size);
void tp_no_back_sent(struct transport *t, size_t n);
/* The drive operations of a transport without any (no_drive.c). */
bool tp_no_drive_begin(struct transport *t, bool rx, uint32_t bell, struct tp_drive *d);
void tp_no_drive_take(struct transport *t, const struct tp_drive *d, bool woken);
void tp_no_drive_end(struct transport *t, const struct tp_drive *d);
/* The transport of a kind the daemon offers (SMC_SOFT_TRANSPORT_*), NULL if none here. */
const struct transport_ops *transport_of_kind(unsigned kind);
/* Whether every operation is there; false says which is missing on stderr, once per table. */
bool transport_ops_complete(const struct transport_ops *ops);

/*
 * soft_config_init(), then with enabled: the process may skip the
 * producer's fence at wake-ups (membarrier, see dmb.h); off again inside a
 * seccomp sandbox.  For every transport on this host.
 */
void soft_mode_start(bool enabled);
void transport_asym_off(void);

#endif
