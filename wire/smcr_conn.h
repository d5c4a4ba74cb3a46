/*
 * One end of an SMC-R connection's data path, as RFC 7609 section 4 and
 * Linux's SMC-R run it (doc/soft-roce.md section 3): the application's bytes
 * go into our send buffer, from there by RDMA WRITE into the peer's RMB, and
 * a CDC message after each push tells the peer our producer cursor; we read
 * our own RMB up to the peer's producer cursor and tell it our consumer
 * cursor back in CDC messages, under RFC 7609's window rule.
 *
 * Pure and single-threaded: the link is two operations the caller gives
 * (an RDMA WRITE and a SEND, both posted, not waited for), completions come
 * back through smcr_conn_sent() and the peer's CDC messages through
 * smcr_conn_rx(); the caller serialises every call on one connection.
 *
 * Positions are kept as absolute byte counts; cursors exist only on the
 * wire.  Every cursor of the peer is checked before it is used: a peer that
 * lies gets -EPROTO for good (smcr_conn_error()), never an access outside
 * the buffers.
 *
 * Failover: smcr_conn_switch() moves the connection to another link of its
 * group.  What was written but whose CDC did not complete is written again
 * to the same places of the peer's RMB (the same bytes, so the peer sees
 * each byte once), unless the peer's consumer cursor shows it read them.
 *
 * Bytes inside CDCs (smcr_cdc.h CDC_SOFT_DATA): a push of at most
 * SMCR_CDC_DATA_MAX bytes, all that waits, goes inside its CDC instead of an
 * RDMA WRITE, to a peer that said CDC_SOFT_DATA_OK, and only while we keep
 * our bytes until the peer consumed them (CDC_SOFT_BACK_OK): a delivered
 * CDC is in the peer's receive queue, not yet in its RMB, and after a
 * failover the old link's CDC may be taken after the new link's or never,
 * so once bytes went inside a CDC, smcr_conn_switch() sends again from the
 * peer's consumer cursor (the receiver ignores producer cursors behind its
 * own, a lap back included, until the resend caught up).  The receiver puts
 * the bytes its producer cursor makes new into its RMB as it takes the
 * cursor.
 *
 * Back to TCP (doc/soft-roce.md section 4, "Back to TCP"): an end that
 * said CDC_SOFT_BACK_OK keeps its bytes in the send buffer until the peer
 * consumed them, not only until they were delivered.  Either end may then
 * say BACK (smcr_conn_back()): it reads no more of its RMB, and the CDC
 * that says it carries its final consumer cursor.  The other end answers
 * with its own BACK when the CDC arrives.  Once said and heard, each
 * direction goes on over TCP from its reader's consumer cursor: the
 * writer sends the bytes the reader did not consume
 * (smcr_conn_back_pending()) before any other, and neither end writes to
 * or reads from the RMBs again.
 */
#ifndef WIRE_SMCR_CONN_H
#define WIRE_SMCR_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "smcr_cdc.h"

struct smcr_link_ops {
	/*
	 * RDMA WRITE of len bytes of the send buffer at off into the peer's RMB
	 * at rmb_off.  0; -ENOBUFS: no room in the send queue now, the
	 * connection tries again at the next completion; -ENOLINK: the link is
	 * going down, smcr_conn_switch() follows; another -errno: the
	 * connection fails with it.  The same for send.
	 */
	int (*write)(void *link, uint32_t off, uint32_t len, uint32_t rmb_off);
	/* SEND of a CDC message; id comes back through smcr_conn_sent() once it is delivered. */
	int (*send)(void *link, const uint8_t *msg, size_t len, uint64_t id);
	/*
	 * Optional: the link may hold writes back until a send or this call,
	 * to post them at once (one doorbell); 0, -ENOLINK (the link is going
	 * down: the held ones never went, smcr_conn_switch() follows), or the
	 * error the held ones failed with.
	 */
	int (*flush)(void *link);
};

/* What smcr_conn_rx() found new, as bits. */
#define SMCR_RX_DATA      0x1u  /* bytes to read */
#define SMCR_RX_ROOM      0x2u  /* the peer consumed: room to send */
#define SMCR_RX_STATE     0x4u  /* the peer's connection-state flags changed */
#define SMCR_RX_SOFT      0x8u  /* the peer's soft words changed (smcr_cdc.h CDC_SOFT_*) */
#define SMCR_RX_BACK      0x10u /* the peer said BACK (answered already): both directions go by TCP */

/* smcr_conn_back_state() */
#define SMCR_CONS_ASK      1u      /* a CDC with CDC_PF_CONS_UPD_REQ is to go or went */
#define SMCR_CONS_ASKED    2u      /* it went */
#define SMCR_CONS_ANSWERED 3u      /* a CDC of the peer's came after it */
#define SMCR_CONS_ASKS     3        /* answers with bytes unread before BACK is refused */
#define SMCR_BACK_SAID    0x1u  /* we said BACK: our RMB is read no more */
#define SMCR_BACK_HEARD   0x2u  /* the peer said BACK: its consumer cursor is final */

struct smcr_conn {
	const struct smcr_link_ops *ops;
	void *link;
	uint8_t *sndbuf;
	uint32_t sndbuf_size;
	uint8_t *rmb;                   /* the peer writes it (by RDMA) while we read; we put bytes of CDCs in */
	uint32_t rmb_size, peer_rmb_size;
	uint32_t token, peer_token;     /* alert tokens: ours, in the peer's CDCs; the peer's, in ours */
	uint32_t write_max;             /* the link's largest write, 0: any (set after init) */
	int err;                        /* sticky -EPROTO or the link's error */

	/* sending, in bytes of the stream */
	uint64_t tx_prep;               /* given by the application */
	uint64_t tx_sent;               /* posted to the peer's RMB */
	uint64_t tx_hi;                 /* the most ever posted (tx_sent goes back at a failover) */
	uint64_t tx_fin;                /* covered by a delivered CDC: the send buffer is free below */
	uint64_t peer_cons;             /* how far the peer read */
	struct smcr_curs peer_cons_curs;
	uint16_t seq;                   /* CDCs sent */
	uint8_t own_cflags;             /* CDC_CF_*, sticky */
	uint8_t own_soft;               /* CDC_SOFT_*, sticky, in every CDC */
	uint64_t own_fence;
	bool cdc_due;                   /* a CDC waits for room in the send queue */
	uint8_t inside;                 /* the bytes before tx_sent that go inside the next CDC */
	bool inside_used;               /* bytes went inside a CDC: a failover sends again from peer_cons */
	bool write_blocked;             /* the last push left bytes for lack of room */

	/* receiving */
	uint64_t rx_cons;               /* read by the application */
	uint64_t rx_told;               /* the consumer position last sent */
	uint64_t peer_prod;             /* how far the peer wrote into our RMB */
	struct smcr_curs peer_prod_curs;
	uint16_t peer_seq;
	bool peer_seq_seen;
	uint8_t peer_pflags, peer_cflags;
	uint8_t peer_soft;              /* CDC_SOFT_* the peer said, sticky */
	uint64_t peer_fence;

	/* back to TCP */
	uint8_t back;                   /* SMCR_BACK_* */
	uint8_t cons_ask;               /* SMCR_CONS_*: our view of the peer's cursor asked for before BACK */
	uint8_t cons_asks;              /* answers that still showed bytes unread */
	uint64_t back_out;              /* handed out for TCP up to here (from the peer's final cursor) */
};

/*
 * sndbuf is registered with the link's device; rmb is ours, registered for
 * the peer's writes; sizes from the CLC exchange (peer_rmb_size).
 */
void smcr_conn_init(struct smcr_conn *c, const struct smcr_link_ops *ops, void *link,
		    uint8_t *sndbuf, uint32_t sndbuf_size, uint8_t *rmb,
		    uint32_t rmb_size, uint32_t peer_rmb_size, uint32_t token, uint32_t peer_token);

/*
 * Copies up to the send buffer's room into it and pushes: the count taken,
 * -EAGAIN when there is no room, -EPIPE after our shutdown_wr or the peer's
 * abort, or the connection's error.
 */
ssize_t smcr_conn_send(struct smcr_conn *c, const struct iovec *iov, int cnt);
/* Writes what the peer has room for and sends a CDC (and a CDC that is due). 0 or the error. */
int smcr_conn_push(struct smcr_conn *c);
/* Room in the send buffer (with CDC_SOFT_BACK_OK said: freed as the peer consumes). */
uint32_t smcr_conn_space(const struct smcr_conn *c);
/*
 * Whether our sends' completions free room in the send buffer: not with
 * CDC_SOFT_BACK_OK said, where only the peer's consumer cursor (its CDC) does.
 */
bool smcr_conn_room_on_delivery(const struct smcr_conn *c);
/* Bytes given but not yet read by the peer. */
uint64_t smcr_conn_unread(const struct smcr_conn *c);

/*
 * Copies up to what is readable out of our RMB (peek: without consuming),
 * telling the peer our consumer cursor when RFC 7609's rule says so.  The
 * count; 0 when nothing is there (the caller looks at the peer's state for
 * the end of the stream); the connection's error.
 */
ssize_t smcr_conn_recv(struct smcr_conn *c, const struct iovec *iov, int cnt, bool peek);
/*
 * No link left (-ECONNRESET) after the peer closed, and no abort:
 * smcr_conn_recv() still gives what is in the RMB, telling nothing.
 */
bool smcr_conn_lost_after_end(const struct smcr_conn *c);
/*
 * The peer's process ended without a word (killed): taken as CLOSED, so
 * that our reader reads every byte that came, then EOF.  Whether it left
 * bytes of ours unread (its kernel's reset) is not known here: its
 * consumer cursor is told lazily; the TCP connection under ours says it.
 * A peer that said CLOSED or ABORT keeps what it said.
 */
void smcr_conn_peer_vanished(struct smcr_conn *c);
uint32_t smcr_conn_readable(const struct smcr_conn *c);

/* A message from the link: SMCR_RX_* bits, 0 for a stale CDC, or -EPROTO (sticky). */
int smcr_conn_rx(struct smcr_conn *c, const uint8_t *msg, size_t len);
/* The CDC with this id was delivered; pushes what waited for room. 0 or the error. */
int smcr_conn_sent(struct smcr_conn *c, uint64_t id);

/* Sets our connection-state flags (CDC_CF_*) and sends them after what is queued. */
int smcr_conn_set_state(struct smcr_conn *c, uint8_t cflags);
uint8_t smcr_conn_peer_state(const struct smcr_conn *c);
/*
 * Soft SMC-R's cut-over words (smcr_cdc.h): ours are sticky and go in every
 * CDC from now on (one now); fence with CDC_SOFT_FENCE.  A peer that
 * changes a fence it said is -EPROTO.  CDC_SOFT_BACK_OK is taken only while
 * every byte the peer did not consume is still in the send buffer (-EINVAL,
 * nothing changed); CDC_SOFT_BACK only through smcr_conn_back().
 */
int smcr_conn_set_soft(struct smcr_conn *c, uint8_t flags, uint64_t fence);
uint8_t smcr_conn_peer_soft(const struct smcr_conn *c, uint64_t *fence);

/*
 * Moves the connection to another link: what was written but not covered
 * by a delivered CDC goes again, then a CDC.  0 or the error.
 */
int smcr_conn_switch(struct smcr_conn *c, void *link);

int smcr_conn_error(const struct smcr_conn *c);

/*
 * Says BACK (once; again is 0).  -EOPNOTSUPP, nothing changed, when either
 * end did not say CDC_SOFT_BACK_OK, or an end ended writing with bytes its
 * peer did not consume (its TCP stream ended: they could not follow);
 * -EAGAIN, nothing else changed, while no CDC of the peer's came (its
 * first, sent once it attached, says whether it can), and when we ended
 * writing and the peer may have consumed more than it told: a CDC asks it
 * for its cursor (CDC_PF_CONS_UPD_REQ), and the peer's next CDC decides;
 * -ECONNRESET after an abort; or the connection's error.  From then on
 * smcr_conn_send() and smcr_conn_recv() return -EXDEV.  When the peer's
 * BACK (said first or as the answer) shows that we ended writing with bytes
 * it did not consume, the connection aborts (-ECONNRESET).
 */
int smcr_conn_back(struct smcr_conn *c);
unsigned smcr_conn_back_state(const struct smcr_conn *c);
/*
 * Once BACK was said and heard: the bytes the peer did not consume and no
 * call to smcr_conn_back_sent() took, as up to two pieces of the send buffer
 * in iov (the second may be empty); their count, 0 when none are left,
 * -EAGAIN before.
 */
ssize_t smcr_conn_back_pending(const struct smcr_conn *c, struct iovec iov[2]);
/* n bytes of smcr_conn_back_pending() went by TCP (at most what it gave). */
void smcr_conn_back_sent(struct smcr_conn *c, size_t n);

#endif
