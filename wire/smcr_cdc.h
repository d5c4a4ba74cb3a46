/*
 * SMC-R CDC (Connection Data Control) messages and the cursor arithmetic
 * behind them (RFC 7609; doc/smcr-wire.md).
 *
 * A CDC travels as an RDMA SEND of SMCR_CDC_LEN bytes on a link's QP and
 * shares the receive path with LLC (smcr_llc.h): byte 0 is the type, 0xFE
 * for a CDC.  Byte map, every number big-endian:
 *
 *    0  type 0xFE            8  producer cursor: u16 0, u16 wrap, u32 count
 *    1  length 44           16  consumer cursor: same
 *    2  u16 sequence number 24  producer flags (cdc_flags.h CDC_PF_*)
 *    4  u32 alert token     25  connection-state flags (CDC_CF_*)
 *                           26  18 reserved bytes
 *
 * Soft SMC-R's cut-over words (doc/smcr-wire.md section 1.1) ride in the
 * reserved bytes, where a kernel peer neither reads nor sets them:
 *
 *   26  u32 SMCR_CDC_SOFT_MAGIC   31  count of bytes inside (with CDC_SOFT_DATA)
 *   30  soft flags (CDC_SOFT_*)   32  u64 fence (with CDC_SOFT_FENCE), 40-43 0
 *
 * An older library reads the flags it knows and drops the others.
 *
 * Bytes inside a CDC (doc/smcr-wire.md section 1.1): to a peer
 * that said CDC_SOFT_DATA_OK, a CDC with CDC_SOFT_DATA is followed by the
 * count (byte 31, at most SMCR_CDC_DATA_MAX) of stream bytes that end at its
 * producer cursor, instead of their RDMA WRITE: the SEND is 44 + count bytes.
 * A kernel peer never says DATA_OK, so it never gets one.
 *
 * Linux sends the 44 bytes out of a 48-byte work-request buffer
 * (SMCR_WR_BUF_SIZE) and receives into such buffers.
 *
 * Decoding takes what Linux's receiver takes (net/smc/smc_cdc.c,
 * smc_cdc_rx_handler): fewer than SMCR_CDC_MIN_LEN bytes is -EMSGSIZE, a
 * type other than 0xFE or a length byte other than 44 is -EPROTO.  Reserved
 * bits and bytes are ignored, as Linux does: the cursors' reserved halves and
 * bytes 26-43 are not read, and the flag bytes are kept whole, reserved bits
 * included (Linux copies them whole too), so that a newer peer's flags are not
 * a reason to drop its data.
 *
 * Cursors from the peer are not trusted by decoding: a receiver calls
 * smcr_cdc_check() (or smcr_curs_valid()) before using them.
 */
#ifndef WIRE_SMCR_CDC_H
#define WIRE_SMCR_CDC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cdc_flags.h"

#define SMCR_CDC_TYPE        0xFEu
#define SMCR_CDC_LEN         44u    /* the length byte, and the bytes sent (SMC_WR_TX_SIZE) */
#define SMCR_CDC_MIN_LEN     26u    /* shorter is dropped: the fields end here */
#define SMCR_WR_BUF_SIZE     48u    /* Linux's send/receive buffer of a CDC or v1 LLC */
#define SMCR_WR_BUF_V2_SIZE  8192u  /* its buffer of an SMC-Rv2 LLC message */

/* Largest ring the cursor functions take: Linux's RMBs stop at 512 MiB. */
#define SMCR_CURS_MAX_SIZE   (1u << 30)

/* A position in a ring of size N: count in [0, N), wrap counts the laps mod 2^16. */
struct smcr_curs {
	uint16_t wrap;
	uint32_t count;
};

struct smcr_cdc {
	uint16_t seqno;           /* per connection, +1 for each CDC sent, first 1 */
	uint32_t token;           /* the receiver's alert token */
	struct smcr_curs prod;    /* how far the sender wrote into the receiver's RMBE */
	struct smcr_curs cons;    /* how far the sender consumed its own RMBE */
	uint8_t prod_flags;       /* CDC_PF_* (reserved bits kept) */
	uint8_t conn_state_flags; /* CDC_CF_* (reserved bits kept) */
	uint8_t soft_flags;       /* CDC_SOFT_*: 0, and no magic on the wire, for none */
	uint64_t soft_fence;      /* with CDC_SOFT_FENCE: the sender's TCP bytes before its cut-over */
	uint8_t data_len;         /* with CDC_SOFT_DATA: bytes inside, ending at prod */
	const uint8_t *data;      /* them: in the decoded message, or the encoder's source */
};

#define SMCR_CDC_SOFT_MAGIC  0x736f6674u   /* "soft" */
#define SMCR_CDC_SOFT_LEN    40u           /* a CDC shorter than this carries no soft words */
#define CDC_SOFT_ATTACHED    0x01u  /* the sender reads the TCP stream up to our fence only */
#define CDC_SOFT_FENCE       0x02u  /* the sender's data go by RDMA after soft_fence TCP bytes */
#define CDC_SOFT_STAY_TCP    0x04u  /* both directions stay on TCP for good */
#define CDC_SOFT_BACK_OK     0x08u  /* the sender keeps its bytes until consumed: it may be told BACK */
#define CDC_SOFT_BACK        0x10u  /* both directions go back to TCP from the consumer cursors */
#define CDC_SOFT_DATA_OK     0x20u  /* the sender takes CDCs with bytes inside (its slots hold them) */
#define CDC_SOFT_DATA        0x40u  /* this CDC carries data_len bytes after its 44 (not sticky) */
#define CDC_SOFT_KNOWN       0x7fu
#define SMCR_CDC_DATA_MAX    84u    /* bytes inside one CDC: a 128-byte message slot */

/*
 * SMCR_CDC_LEN bytes into buf (reserved ones zero), then with CDC_SOFT_DATA
 * the data_len bytes at data: the message's length; -EMSGSIZE if size is
 * less, -EINVAL for a count of 0 or above SMCR_CDC_DATA_MAX.
 */
int smcr_cdc_encode(const struct smcr_cdc *m, uint8_t *buf, size_t size);
/*
 * 0; -EMSGSIZE if len < SMCR_CDC_MIN_LEN; -EPROTO for another type or
 * length byte; -EBADMSG for bytes inside counted 0, more than
 * SMCR_CDC_DATA_MAX or more than the message holds, with every other field
 * decoded: unlike a malformed CDC, which Linux drops, this one fails the
 * connection of its token (a later cursor would cover bytes never put in
 * the RMB).  m->data points into buf.
 */
int smcr_cdc_decode(const uint8_t *buf, size_t len, struct smcr_cdc *m);
/*
 * Whether a decoded CDC's cursors fit: the producer cursor indexes our RMBE
 * (rmbe_size), the consumer cursor the peer's (peer_rmbe_size).  0 or -EPROTO.
 */
int smcr_cdc_check(const struct smcr_cdc *m, uint32_t rmbe_size, uint32_t peer_rmbe_size);

/* Sequence numbers (16 bits, wrapping): a is before b if (s16)(a - b) < 0. */
bool smcr_seq_before(uint16_t a, uint16_t b);

/*
 * Cursor arithmetic over a ring of size N (0 < N <= SMCR_CURS_MAX_SIZE).
 * Every function checks its cursors: one with count >= N, or a bad N, gives
 * false or -EINVAL, never a wrong number.
 */
bool smcr_curs_valid(struct smcr_curs c, uint32_t size);
/* Advance c by len <= N (count += len, one lap at most).  0 or -EINVAL. */
int smcr_curs_add(struct smcr_curs *c, uint32_t size, uint32_t len);
/*
 * Bytes from old to new, for old <= new at most N apart (Linux's
 * smc_curs_diff: when the wraps differ, one lap is assumed; never negative).
 * In [0, 2N); -EINVAL for invalid cursors.
 */
int smcr_curs_diff(uint32_t size, struct smcr_curs old, struct smcr_curs new);
/*
 * Like smcr_curs_diff() but counting every lap between the wraps, including
 * over the 0xFFFF -> 0 wrap, capped at N (Linux's smc_curs_diff_large).
 */
int smcr_curs_diff_large(uint32_t size, struct smcr_curs old, struct smcr_curs new);
/*
 * Whether a receiver holding old takes the peer's cursor new: Linux's rule
 * (net/smc/smc_cdc.h, smc_cdc_cursor_to_host) keeps old when new.wrap is
 * below old.wrap (unless new.wrap is 0: the 0xFFFF -> 0 wrap), or the wraps
 * are equal and new.count is below old.count.  An equal cursor is taken.
 * Counts are not checked here: smcr_curs_valid() first.
 */
bool smcr_curs_accept(struct smcr_curs old, struct smcr_curs new);
/*
 * Free space in the peer's RMBE of size N: N minus the bytes we produced
 * (prod, our producer cursor) that the peer has not consumed (cons, its
 * consumer cursor), as the sender's flow control counts it.  In [0, N];
 * -EPROTO if cons is ahead of prod or more than N behind (a peer's lie),
 * -EINVAL for invalid cursors.
 */
int smcr_peer_rmbe_space(uint32_t size, struct smcr_curs prod, struct smcr_curs cons);

#endif
