/*
 * Soft SMC-D transport: the shared memory of one connection.
 *
 * One memfd per connection holds a header page and two receive rings (DMBs),
 * one per direction.  Direction 0 carries side 0's bytes to side 1, direction 1
 * the reverse.  Each direction has a control block mirroring SMC-D's CDC state
 * (the kernel's struct smc_cdc_msg in net/smc/smc_cdc.h; doc/soft-ring.md):
 * a producer cursor and a consumer cursor, each
 * {wrap, count} packed with its flag bytes into one 64-bit word that is
 * published with a single release store, plus sleeper flags for wake-ups.
 *
 * The peer is untrusted: dmb_map() validates the region before use, and every
 * cursor read from the peer is checked again at each use, so a corrupt or
 * hostile peer yields -EPROTO, never an access outside the mapping.
 *
 * A struct dmb_conn is one endpoint; it is single-producer single-consumer:
 * callers serialise produce calls (and consume calls) among themselves.
 */
#ifndef SOFT_DMB_H
#define SOFT_DMB_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

#include "cdc_flags.h"

#define DMB_MAGIC        0x31424d44434d53ULL /* "SMCDMB1" little-endian */
#define DMB_VERSION      1u
#define DMB_MIN_SIZE     (16u * 1024)
#define DMB_MAX_SIZE     (1024u * 1024)       /* SMC-D's cap: compressed size 6 */
#define DMB_DEFAULT_SIZE (256u * 1024)
/*
 * 128, not 64: adjacent-line prefetch pulls cache lines in pairs, so the
 * producer's and the consumer's words would still ping-pong at 64.
 */
#define DMB_LINE         128u
/* Rings start page-aligned after the header page. */
#define DMB_HDR_SIZE     4096u

/* Producer flags: the CDC's (cdc_flags.h), in the same bit positions. */
#define DMB_PF_WRITE_BLOCKED  CDC_PF_WRITE_BLOCKED
#define DMB_PF_URG_PENDING    CDC_PF_URG_PENDING
#define DMB_PF_URG_PRESENT    CDC_PF_URG_PRESENT
#define DMB_PF_CONS_UPD_REQ   CDC_PF_CONS_UPD_REQ
#define DMB_PF_MASK           0xf0u
/* Connection-state flags: the CDC's, sticky, and one of the soft ring's own. */
#define DMB_CF_DONE_WRITING   CDC_CF_DONE_WRITING /* in the producer word */
#define DMB_CF_CLOSED         CDC_CF_CLOSED
#define DMB_CF_ABORT          CDC_CF_ABORT
#define DMB_CF_DONE_READING   0x10u /* shutdown(SHUT_RD); in both our words; not in SMC */
#define DMB_CF_MASK           0xf0u

/*
 * A cursor word: count in bits 0-31, wrap in 32-47, producer flags in 48-55,
 * connection-state flags in 56-63.  One word so that cursor and flags are
 * published together, like one CDC.
 */
struct dmb_cursor {
	uint16_t wrap;
	uint32_t count;
};

/*
 * One direction's control block.  The first line is written only by the
 * producer, the second only by the consumer.
 */
struct dmb_ctrl {
	/* producer-owned */
	_Atomic uint64_t prod;           /* cursor + producer flags + its conn-state */
	_Atomic uint32_t prod_sleeping;  /* producer waits for space: how to wake it */
	_Atomic uint32_t holders;        /* processes holding the producer's end */
	_Atomic uint64_t fence;          /* DMB_FENCE_VALID | TCP bytes before the cut-over */
	_Atomic uint32_t prod_cpu;       /* CPU the producer last ran on, plus 1 */
	_Atomic uint32_t prod_lock;      /* pid inside dmb_produce while the end is shared */
	_Atomic uint32_t hold_gen;       /* bumped by every change of holders */
	_Atomic uint32_t ringing;        /* producer-side threads sending a doorbell now */
	_Atomic uint32_t tcp_bells;      /* doorbell bytes sent over TCP after the fence */
	uint8_t pad0[DMB_LINE - 44];
	/* consumer-owned */
	_Atomic uint64_t cons;           /* cursor + consumer's conn-state */
	_Atomic uint32_t cons_sleeping;  /* consumer waits for data: how to wake it */
	_Atomic uint32_t attached;       /* the consumer has mapped the region */
	_Atomic uint32_t cons_cpu;       /* CPU the consumer last ran on, plus 1 */
	_Atomic uint32_t cons_asym;      /* the consumer orders its sleep with membarrier */
	_Atomic uint32_t cons_fwait;     /* consumer threads asleep on cons_fseq */
	_Atomic uint32_t cons_fseq;      /* futex word: bumped by each wake-up */
	_Atomic uint32_t cons_lock;      /* pid inside dmb_consume while the end is shared */
	_Atomic uint32_t cons_cut;       /* a holder read the TCP stream up to the fence */
	_Atomic uint32_t tcp_bells_read; /* of the producer's tcp_bells, read by our holders */
	uint8_t pad1[DMB_LINE - 44];
};

/*
 * The fence of a direction: set once by its producer when it stops sending
 * the application's bytes over TCP; the consumer reads exactly that many
 * bytes of the TCP stream before the ring.  Later TCP bytes are doorbells.
 */
#define DMB_FENCE_VALID (1ULL << 63)
/*
 * Stored instead by either end while the fence is 0: the direction stays
 * on TCP for good (a holder passes the connection to a program that reads
 * plain TCP).  The producer sets the fence by compare-and-swap from 0.
 */
#define DMB_FENCE_NEVER (1ULL << 62)

/*
 * Offset 0 of the region.  Immutable after dmb_create(); a mapper reads it
 * once and never trusts the shared copy again.
 */
struct dmb_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t hdr_size;       /* DMB_HDR_SIZE */
	uint32_t ring_size[2];   /* data bytes of direction 0 and 1 */
	uint64_t total_size;     /* hdr_size + ring_size[0] + ring_size[1] */
	uint8_t rsvd[DMB_LINE - 32];
	struct dmb_ctrl ctrl[2];
	/*
	 * Direction d's consumer cursor as consumed, published or not (a
	 * cursor word without flags; 0 before the first read), on a line of
	 * its own that the producer never reads: every read stores it, and a
	 * holder that comes without the consuming process's doing
	 * (pidfd_getfd) starts there, not behind.
	 */
	struct {
		_Atomic uint64_t cons_read;
		/* calls of that end inside the ring without the lock (dmb.c's solo_check) */
		_Atomic uint32_t solo_calls;
		uint8_t pad[DMB_LINE - 12];
	} rd[2];
};

/* One endpoint's view of one direction. */
struct dmb_ring {
	struct dmb_ctrl *ctrl;
	_Atomic uint64_t *cons_read;  /* the direction's read cursor (struct dmb_hdr) */
	uint8_t *data;
	uint32_t size;
	struct dmb_cursor own;   /* the cursor this endpoint owns, never re-read */
	uint8_t own_pflags;
	uint8_t own_cflags;
	/*
	 * The peer's cursor word as last loaded: reloaded only when it does
	 * not promise enough (room to produce, bytes to consume), so a busy
	 * ring does not move the peer's cache line on every call.
	 */
	uint64_t peer_word;
	uint32_t unpublished;    /* consumer: bytes consumed but not yet published */
	bool asym;               /* consumer: we said cons_asym */
	uint32_t gen;            /* hold_gen when our cursor was last known good */
	uint32_t busy;           /* consumer: reads with data since the last sleep */
};

struct dmb_conn {
	void *base;
	size_t map_size;
	int side;                /* 0 or 1 */
	struct dmb_ring tx;      /* we produce */
	struct dmb_ring rx;      /* we consume */
	_Atomic uint32_t *solo_calls;  /* our end's, on the line of our read cursor */
};

/*
 * Processes holding one end (fork): the count lives in the end's tx line.
 * While more than one holds it, dmb_produce and dmb_consume of that end take
 * turns through a lock word in the ring's line and start from the shared
 * cursor; after any change of the count a process re-reads its cursors
 * once.  Returns the count before the change.
 */
uint32_t dmb_holders_add(struct dmb_conn *c, int delta);
/* Processes holding the connection now. */
uint32_t dmb_holders(const struct dmb_conn *c);

/* dmb_produce() flags */
#define DMB_URGENT  0x1u     /* the last byte is urgent (MSG_OOB) */
/* dmb_consume() flags */
#define DMB_PEEK    0x1u     /* copy without advancing (MSG_PEEK) */

/* Round a wanted buffer size up to a DMB size (power of two, 16 KiB..1 MiB). */
uint32_t dmb_size_round(size_t want);
/* SMC's compressed buffer size (the CLC accept's rmbe_size: 16 KiB << code) and back. */
uint8_t dmb_size_code(size_t want);
uint32_t dmb_code_size(uint8_t code);

/*
 * A new region (memfd, close-on-exec, size sealed) with rings of the rounded
 * sizes for direction 0 (side 0 -> side 1) and 1.  The fd, or -errno.
 */
int dmb_create(size_t ring0, size_t ring1);
/* The ring sizes and total size dmb_create(ring0, ring1) gives its region. */
void dmb_sizes(size_t ring0, size_t ring1, uint32_t ring[2], uint64_t *total);
/*
 * A copy of the region's two control blocks, read from its fd (no mapping):
 * for a reader that only looks (sock_diag's cursors).  0, or -errno.
 */
int dmb_read_ctrl(int fd, struct dmb_ctrl ctrl[2]);

/*
 * Validate the region behind fd and map it as side 0 or 1.  0, or -errno:
 * -EPROTO for any inconsistency (magic, version, sizes, seals, cursors).
 * The fd may be closed afterwards.
 */
int dmb_map(int fd, int side, struct dmb_conn *c);
void dmb_unmap(struct dmb_conn *c);

/*
 * Copy up to the free space from iov into the tx ring and publish once.
 * A write of up to a quarter of the ring goes whole or not at all (as TCP
 * does with small writes, so that records two processes write to one
 * socket stay whole); a larger one needs a quarter of the ring free and
 * goes in parts.  Bytes written (0 only for an empty iov), -EAGAIN when
 * that much is not free, -EPIPE after our shutdown(SHUT_WR)/close or the peer's
 * SHUT_RD/close, -ECONNRESET when either side aborted, -EPROTO on corruption.
 * *wake (may be NULL) is set when the consumer sleeps and must be woken, to
 * how it asked to be woken (DMB_BELL_TCP or a bell id); the sleeper flag is
 * taken (cleared) then, so one sleep costs one wake-up.
 */
ssize_t dmb_produce(struct dmb_conn *c, const struct iovec *iov, int iovcnt,
		    unsigned flags, uint32_t *wake);
/*
 * dmb_produce() of up to len bytes of file fd from offset off, read
 * straight into the ring (no copy of the caller's): bytes produced, 0 at
 * the end of the file, or as dmb_produce() (and the read's -errno).
 */
ssize_t dmb_produce_file(struct dmb_conn *c, int fd, off_t off, size_t len, uint32_t *wake);

/*
 * Copy out up to the readable bytes into iov; DMB_PEEK does not advance.
 * The consumer cursor is published in batches: when a quarter of the ring
 * was consumed since the last time, when the producer said it is blocked,
 * and before sleeping (dmb_rx_sleep_begin); dmb_rx_flush() forces it.
 * Bytes read, 0 at end of stream (empty and the peer done writing or
 * closed) or for an empty iov, -EAGAIN when empty, -ECONNRESET after an
 * abort, -EPROTO on corruption.  *wake as for dmb_produce (producer sleeps).
 */
ssize_t dmb_consume(struct dmb_conn *c, const struct iovec *iov, int iovcnt,
		    unsigned flags, uint32_t *wake);

/* Publish the consumer cursor now; *wake as for dmb_consume. */
void dmb_rx_flush(struct dmb_conn *c, uint32_t *wake);

/* Bytes readable now (FIONREAD), or -EPROTO. */
long dmb_readable(struct dmb_conn *c);
/* Free bytes in the tx ring, or -EPROTO. */
long dmb_space(struct dmb_conn *c);
/* The same once a quarter of the ring is free (any write can go), else 0: POLLOUT. */
long dmb_writable(struct dmb_conn *c);
/* Bytes written but not yet consumed by the peer (SIOCOUTQ), or -EPROTO. */
long dmb_unread(struct dmb_conn *c);
uint32_t dmb_tx_size(const struct dmb_conn *c);
uint32_t dmb_rx_size(const struct dmb_conn *c);

/* Connection state: each sets sticky flags and publishes them. */
void dmb_shutdown_wr(struct dmb_conn *c);   /* DONE_WRITING */
void dmb_shutdown_rd(struct dmb_conn *c);   /* DONE_READING */
void dmb_close(struct dmb_conn *c);         /* CLOSED (implies both) */
void dmb_abort(struct dmb_conn *c);         /* ABORT */
/* Our cursors from the shared ones, if another process moved them. */
void dmb_resync(struct dmb_conn *c);
/* The peer's connection-state flags (DMB_CF_*, both of its words merged). */
unsigned dmb_peer_state(struct dmb_conn *c);
/* The peer's producer flags on our rx direction (DMB_PF_*). */
unsigned dmb_peer_pflags(struct dmb_conn *c);

/*
 * Sleep protocol: announce, re-check, sleep, end.  *_sleep_begin() sets the
 * sleeper flag and returns true when sleeping is no longer needed (data or
 * space arrived, or the connection state changed); call *_sleep_end() in
 * both cases.  dmb_rx_sleep_begin publishes the consumer cursor first; *wake
 * (may be NULL) as for dmb_consume.
 *
 * bell says how the sleeper wants its wake-up: DMB_BELL_TCP, a doorbell
 * byte on the TCP connection, or the id of its process's bell (an eventfd
 * the daemon hands to peers, doc/soft-ring.md section 4), which it waits on
 * beside the TCP socket.  Two sleepers with different bells make the flag
 * DMB_BELL_TCP: every sleeper waits on TCP too.
 */
#define DMB_BELL_TCP 1u
/* Two wake-ups of one flag taken in one call: one that wakes both. */
uint32_t dmb_wake_merge(uint32_t a, uint32_t b);
bool dmb_rx_sleep_begin(struct dmb_conn *c, uint32_t *wake, uint32_t bell);
/*
 * Wake-up ordering.  A producer must not miss a consumer that goes to sleep
 * as it publishes: by default it pays a full fence after every publication.
 * A process that registered for membarrier(2) (dmb_asym_init) may instead
 * have its consumer say cons_asym while data keeps coming (dmb_rx_busy: a
 * few reads in a row found data without sleeping in between):
 * producers of registered processes then skip the fence, and the consumer
 * pays one membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) when it next goes to
 * sleep, which puts a barrier on every CPU running such a producer.
 */
bool dmb_asym_init(void);
/* No membarrier(2) from now on (a seccomp sandbox): sleepers fence instead. */
void dmb_asym_off(void);
/*
 * Sleep in futex(2) until data, a state change or a wake-up, as an
 * alternative to the caller's own sleep after dmb_rx_sleep_begin: producers
 * and the state changes below wake cons_fseq sleepers themselves.  timeout:
 * relative, NULL for none.  0 (woken, or ready already), -ETIMEDOUT, -EINTR.
 */
int dmb_rx_futex_wait(struct dmb_conn *c, const struct timespec *timeout);
void dmb_rx_busy(struct dmb_conn *c);
void dmb_rx_sleep_end(struct dmb_conn *c);
/* The same for a producer: true if want bytes, and at least a quarter of the ring, are free. */
bool dmb_tx_sleep_begin(struct dmb_conn *c, size_t want, uint32_t bell);
void dmb_tx_sleep_end(struct dmb_conn *c);

/*
 * For the SMC dump (not for the data path).  Our cursors as this endpoint
 * holds them, as stream positions: bytes through the ring modulo 2^16 rings
 * (the wrap is 16 bits).  The tx one with the produce calls serialised, the
 * rx one with the consume calls.
 */
/*
 * A doorbell goes over TCP, where one the peer's last holder has not read
 * when it closes makes the kernel reset the connection (and drop what it
 * still had to send).  So a bell is sent between dmb_bell_begin() (false:
 * the peer closed, no bell) and dmb_bell_end(); the closing end, after
 * dmb_close(), waits in dmb_wait_bells() for bells on their way (bounded),
 * then reads what came.
 */
bool dmb_bell_begin(struct dmb_conn *c);
/*
 * Doorbell bytes the peer sent over TCP that no holder of our end has read
 * yet (counts that wrap; any miscount only makes them look due).
 */
bool dmb_tcp_bells_due(struct dmb_conn *c);
/*
 * n doorbell bytes read from TCP after the fence.  False when our holders
 * have read more than the producer counted before sending: bytes of the
 * application went over TCP past the library (stdio on the socket, a
 * program without it) and would be dropped as doorbells.
 */
bool dmb_tcp_bells_read(struct dmb_conn *c, uint32_t n);
void dmb_bell_end(struct dmb_conn *c);
void dmb_wait_bells(struct dmb_conn *c);
uint64_t dmb_tx_pos(const struct dmb_conn *c);
uint64_t dmb_rx_pos(const struct dmb_conn *c);
/* Whether every byte consumed is in the published consumer cursor. */
bool dmb_rx_published(const struct dmb_conn *c);

/*
 * The fences (DMB_FENCE_VALID): the TCP bytes of a direction before its
 * cut-over, true once its producer set it.  dmb_fence_set: ours, or the
 * one another holder set first; false when the direction stays on TCP for
 * good.  dmb_stay_tcp: DMB_FENCE_NEVER in both directions that have no
 * fence; false when one has.
 */
bool dmb_tx_fence(struct dmb_conn *c, uint64_t *bytes);
bool dmb_rx_fence(struct dmb_conn *c, uint64_t *bytes);
bool dmb_fence_set(struct dmb_conn *c, uint64_t bytes);
bool dmb_stay_tcp(struct dmb_conn *c);
/* Both directions stay on TCP for good (DMB_FENCE_NEVER both ways), without changing them. */
bool dmb_on_tcp_for_good(const struct dmb_conn *c);
/*
 * Our producer word (tx) and consumer word (rx) as published, as one CDC of
 * ours carries them: cflags merges both words' connection-state flags.
 */
struct dmb_cdc {
	struct dmb_cursor prod, cons;
	uint8_t pflags, cflags;
};
struct dmb_cdc dmb_own_cdc(struct dmb_conn *c);

/* For tests and diagnostics: the cursor words as the peer sees them. */
struct dmb_cursor dmb_cursor_of(uint64_t word);
uint64_t dmb_cursor_word(struct dmb_cursor cur, uint8_t pflags, uint8_t cflags);

#endif
