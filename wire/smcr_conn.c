/* One end of an SMC-R connection's data path over a link's operations (smcr_conn.h). */
#include "smcr_conn.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

/*
 * RFC 7609's window rule: the consumer cursor is told once a tenth of the
 * RMB was read, and at least this much (Linux: SOCK_MIN_SNDBUF / 2).
 */
#define CONS_UPDATE_MIN 2304u

static struct smcr_curs curs_at(uint64_t pos, uint32_t size)
{
	return (struct smcr_curs){ .wrap = (uint16_t)(pos / size), .count = (uint32_t)(pos % size) };
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

void smcr_conn_init(struct smcr_conn *c, const struct smcr_link_ops *ops, void *link,
		    uint8_t *sndbuf, uint32_t sndbuf_size, uint8_t *rmb,
		    uint32_t rmb_size, uint32_t peer_rmb_size, uint32_t token, uint32_t peer_token)
{
	memset(c, 0, sizeof(*c));
	c->ops = ops;
	c->link = link;
	c->sndbuf = sndbuf;
	c->sndbuf_size = sndbuf_size;
	c->rmb = rmb;
	c->rmb_size = rmb_size;
	c->peer_rmb_size = peer_rmb_size;
	c->token = token;
	c->peer_token = peer_token;
	if (!sndbuf_size || !rmb_size || !peer_rmb_size || rmb_size > SMCR_CURS_MAX_SIZE ||
	    peer_rmb_size > SMCR_CURS_MAX_SIZE)
		c->err = -EINVAL;
}

static int fail(struct smcr_conn *c, int err)
{
	if (!c->err)
		c->err = err;
	return c->err;
}

/* n bytes of a ring of size at pos into out (n at most size). */
static void ring_copy_out(uint8_t *out, const uint8_t *ring, uint32_t size, uint64_t pos, uint32_t n)
{
	uint32_t off = (uint32_t)(pos % size), first = n < size - off ? n : size - off;

	memcpy(out, ring + off, first);
	memcpy(out + first, ring, n - first);
}

static void ring_copy_in(uint8_t *ring, uint32_t size, uint64_t pos, const uint8_t *in, uint32_t n)
{
	uint32_t off = (uint32_t)(pos % size), first = n < size - off ? n : size - off;

	memcpy(ring + off, in, first);
	memcpy(ring, in + first, n - first);
}

/* A CDC with our cursors and flags; one that finds no room in the send queue is due later. */
static int send_cdc(struct smcr_conn *c)
{
	uint8_t buf[SMCR_CDC_LEN + SMCR_CDC_DATA_MAX], data[SMCR_CDC_DATA_MAX];
	struct smcr_cdc m = {
		.seqno = (uint16_t)(c->seq + 1),
		.token = c->peer_token,
		.prod = curs_at(c->tx_sent, c->peer_rmb_size),
		.cons = curs_at(c->rx_cons, c->rmb_size),
		.prod_flags = (c->write_blocked ? CDC_PF_WRITE_BLOCKED : 0) |
			      (c->cons_ask == SMCR_CONS_ASK ? CDC_PF_CONS_UPD_REQ : 0),
		.conn_state_flags = c->own_cflags,
		.soft_flags = c->own_soft,
		.soft_fence = c->own_fence,
	};
	int rc;

	/* the end of our writing goes with the last byte, not before it */
	if (c->tx_sent < c->tx_prep)
		m.conn_state_flags &= (uint8_t)~(CDC_CF_DONE_WRITING | CDC_CF_CLOSED);
	if (c->inside) {
		ring_copy_out(data, c->sndbuf, c->sndbuf_size, c->tx_sent - c->inside, c->inside);
		m.soft_flags |= CDC_SOFT_DATA;
		m.data_len = c->inside;
		m.data = data;
	}
	rc = smcr_cdc_encode(&m, buf, sizeof(buf));
	if (rc < 0)
		return fail(c, rc);
	rc = c->ops->send(c->link, buf, (size_t)rc, c->tx_sent);
	if (rc == -ENOBUFS || rc == -ENOLINK) {
		c->cdc_due = true;
		return 0;
	}
	if (rc)
		return fail(c, rc);
	c->inside = 0;
	c->seq++;
	c->rx_told = c->rx_cons;
	c->cdc_due = false;
	if (c->cons_ask == SMCR_CONS_ASK)
		c->cons_ask = SMCR_CONS_ASKED;
	return 0;
}

/*
 * A push of len bytes goes inside its CDC: all that waits, small enough, to
 * a peer that takes it, while our bytes are kept until consumed.
 */
static bool goes_inside(const struct smcr_conn *c, uint64_t len)
{
	return len && len <= SMCR_CDC_DATA_MAX && len == c->tx_prep - c->tx_sent &&
	       (c->peer_soft & CDC_SOFT_DATA_OK) && (c->own_soft & CDC_SOFT_BACK_OK);
}

static int push_posts(struct smcr_conn *c)
{
	uint64_t len, posted = 0;

	if (c->err)
		return c->err;
	if (c->peer_cons > c->tx_sent)
		c->tx_sent = c->peer_cons;      /* read by the peer already: not again */
	len = min64(c->tx_prep - c->tx_sent, c->peer_rmb_size - (c->tx_sent - c->peer_cons));
	if (c->back || c->inside)
		len = 0;                        /* the bytes go by TCP; bytes wait inside a CDC due */
	if (goes_inside(c, len)) {
		c->tx_sent += len;
		if (c->tx_sent > c->tx_hi)
			c->tx_hi = c->tx_sent;
		c->inside = (uint8_t)len;
		c->inside_used = true;
		c->write_blocked = false;
		return send_cdc(c);
	}
	while (posted < len) {
		uint64_t pos = c->tx_sent + posted;
		uint32_t s_off = (uint32_t)(pos % c->sndbuf_size);
		uint32_t d_off = (uint32_t)(pos % c->peer_rmb_size);
		uint64_t l = min64(len - posted, min64(c->sndbuf_size - s_off, c->peer_rmb_size - d_off));
		int rc;

		if (c->write_max && l > c->write_max)
			l = c->write_max;
		rc = c->ops->write(c->link, s_off, (uint32_t)l, d_off);

		if (rc == -ENOBUFS || rc == -ENOLINK)
			break;
		if (rc)
			return fail(c, rc);
		posted += l;
	}
	c->tx_sent += posted;
	if (c->tx_sent > c->tx_hi)
		c->tx_hi = c->tx_sent;
	c->write_blocked = c->tx_sent < c->tx_prep;
	if (posted || c->cdc_due)
		return send_cdc(c);
	return 0;
}

int smcr_conn_push(struct smcr_conn *c)
{
	int rc = push_posts(c), held = c->ops->flush ? c->ops->flush(c->link) : 0;

	/*
	 * A link that could not ring for what it held is failing: the move
	 * to another link sends again all that no delivered CDC covers.
	 */
	if (held == -ENOLINK)
		held = 0;
	if (held && !rc)
		rc = fail(c, held);
	return rc;
}

uint32_t smcr_conn_space(const struct smcr_conn *c)
{
	uint64_t kept_from = (c->own_soft & CDC_SOFT_BACK_OK) ? c->peer_cons : c->tx_fin;

	return c->sndbuf_size - (uint32_t)(c->tx_prep - kept_from);
}

bool smcr_conn_room_on_delivery(const struct smcr_conn *c)
{
	return !(c->own_soft & CDC_SOFT_BACK_OK);
}

uint64_t smcr_conn_unread(const struct smcr_conn *c)
{
	return c->tx_prep - c->peer_cons;
}

ssize_t smcr_conn_send(struct smcr_conn *c, const struct iovec *iov, int cnt)
{
	uint32_t room = smcr_conn_space(c);
	size_t taken = 0;
	int rc;

	if (c->err)
		return smcr_conn_lost_after_end(c) ? -EPIPE : c->err;
	if (c->back)
		return -EXDEV;
	if (c->peer_cflags & CDC_CF_ABORT)
		return -ECONNRESET;
	if ((c->own_cflags & (CDC_CF_DONE_WRITING | CDC_CF_CLOSED | CDC_CF_ABORT)) ||
	    (c->peer_cflags & CDC_CF_CLOSED))
		return -EPIPE;
	for (int i = 0; i < cnt && taken < room; i++) {
		const uint8_t *p = iov[i].iov_base;
		size_t n = iov[i].iov_len < room - taken ? iov[i].iov_len : room - taken;

		while (n) {
			uint32_t off = (uint32_t)((c->tx_prep + taken) % c->sndbuf_size);
			size_t l = n < c->sndbuf_size - off ? n : c->sndbuf_size - off;

			memcpy(c->sndbuf + off, p, l);
			p += l;
			n -= l;
			taken += l;
		}
	}
	if (!taken)
		return room ? 0 : -EAGAIN;
	c->tx_prep += taken;
	rc = smcr_conn_push(c);
	return rc ? rc : (ssize_t)taken;
}

uint32_t smcr_conn_readable(const struct smcr_conn *c)
{
	return (uint32_t)(c->peer_prod - c->rx_cons);
}

/* RFC 7609's rule for telling the consumer cursor (Linux's smc_tx_consumer_update()). */
static int tell_cons(struct smcr_conn *c)
{
	uint64_t to_confirm = c->rx_cons - c->rx_told;
	uint32_t limit = c->rmb_size / 10 > CONS_UPDATE_MIN ? c->rmb_size / 10 : CONS_UPDATE_MIN;
	/* the room the peer believes it has in our RMB */
	uint64_t peer_room = c->rmb_size - (c->peer_prod - c->rx_told);

	if ((c->peer_pflags & CDC_PF_CONS_UPD_REQ) ||
	    (to_confirm > limit &&
	     (peer_room <= c->rmb_size / 2 || (c->peer_pflags & CDC_PF_WRITE_BLOCKED))))
		return send_cdc(c);
	return 0;
}

/*
 * The link group lost its last link (-ECONNRESET, the group's word for it)
 * after the peer closed, neither end having aborted: its CLOSED came after
 * its last byte, so all of them are in our RMB, to be read as TCP's before
 * a FIN, and it reads nothing more.  A peer that only shut its writing
 * still reads: for it the loss is a reset, as before.
 */
bool smcr_conn_lost_after_end(const struct smcr_conn *c)
{
	return c->err == -ECONNRESET && !((c->peer_cflags | c->own_cflags) & CDC_CF_ABORT) &&
	       (c->peer_cflags & CDC_CF_CLOSED);
}

void smcr_conn_peer_vanished(struct smcr_conn *c)
{
	/* one that said how it ended ended so */
	if (!(c->peer_cflags & (CDC_CF_CLOSED | CDC_CF_ABORT)))
		c->peer_cflags |= CDC_CF_CLOSED;
}

ssize_t smcr_conn_recv(struct smcr_conn *c, const struct iovec *iov, int cnt, bool peek)
{
	uint32_t avail = smcr_conn_readable(c);
	size_t got = 0;
	int rc;

	if (c->err && !smcr_conn_lost_after_end(c))
		return c->err;
	if (c->back)
		return -EXDEV;
	/* the bytes the peer's producer cursor covers, not older ones */
	atomic_thread_fence(memory_order_acquire);
	for (int i = 0; i < cnt && got < avail; i++) {
		uint8_t *p = iov[i].iov_base;
		size_t n = iov[i].iov_len < avail - got ? iov[i].iov_len : avail - got;

		while (n) {
			uint32_t off = (uint32_t)((c->rx_cons + got) % c->rmb_size);
			size_t l = n < c->rmb_size - off ? n : c->rmb_size - off;

			memcpy(p, c->rmb + off, l);
			p += l;
			n -= l;
			got += l;
		}
	}
	if (peek || !got)
		return (ssize_t)got;
	c->rx_cons += got;
	if (c->err)
		return (ssize_t)got;
	rc = tell_cons(c);
	return rc ? rc : (ssize_t)got;
}

/*
 * Whether cursor new is behind old, counting laps as a signed 16-bit
 * difference.  Stricter than Linux's rule (smcr_curs_accept(), which takes
 * wrap 0 after any wrap): after a failover that sends again from our
 * consumer cursor (bytes went inside CDCs), the peer's CDCs carry producer
 * cursors behind ours, up to a lap back, until it caught up.
 */
static bool curs_behind(struct smcr_curs old, struct smcr_curs new)
{
	uint16_t laps = (uint16_t)(new.wrap - old.wrap);

	return laps >= 0x8000u || (laps == 0 && new.count < old.count);
}

/* The peer's producer cursor into our RMB: the new bytes, or -EPROTO. */
static int take_prod(struct smcr_conn *c, struct smcr_curs p)
{
	int d;

	if (curs_behind(c->peer_prod_curs, p))
		return 0;
	d = smcr_curs_diff(c->rmb_size, c->peer_prod_curs, p);
	if (d < 0 || c->peer_prod + (uint64_t)d - c->rx_cons > c->rmb_size)
		return -EPROTO;
	c->peer_prod_curs = p;
	c->peer_prod += (uint64_t)d;
	return d;
}

/*
 * The bytes inside a CDC end at its producer cursor: those of them that the
 * cursor made new (the last d) go into our RMB, where a write would have put
 * them, as the cursor is taken (a reader sees neither before our caller's
 * lock is let go).  take_prod() bounded the new bytes by the RMB's free room.
 */
static void put_inside(struct smcr_conn *c, const struct smcr_cdc *m, int d)
{
	uint32_t n = m->data_len < (uint32_t)d ? m->data_len : (uint32_t)d;

	ring_copy_in(c->rmb, c->rmb_size, c->peer_prod - n, m->data + (m->data_len - n), n);
}

/* The peer's consumer cursor of our bytes: the bytes it read now, or -EPROTO. */
static int take_cons(struct smcr_conn *c, struct smcr_curs p)
{
	int d;

	if (!smcr_curs_accept(c->peer_cons_curs, p))
		return 0;
	d = smcr_curs_diff(c->peer_rmb_size, c->peer_cons_curs, p);
	if (d < 0 || c->peer_cons + (uint64_t)d > c->tx_hi || (d && (c->back & SMCR_BACK_HEARD)))
		return -EPROTO;
	c->peer_cons_curs = p;
	c->peer_cons += (uint64_t)d;
	if (c->tx_fin < c->peer_cons)
		c->tx_fin = c->peer_cons;       /* read, so delivered */
	return d;
}

static bool ended_with_unread(const struct smcr_conn *c)
{
	return (c->own_cflags & (CDC_CF_DONE_WRITING | CDC_CF_CLOSED)) && c->tx_prep > c->peer_cons;
}

static int say_back(struct smcr_conn *c)
{
	c->back |= SMCR_BACK_SAID;
	c->own_soft |= CDC_SOFT_BACK;
	c->cdc_due = true;
	return smcr_conn_push(c);
}

/*
 * The peer's first BACK: its consumer cursor (taken already) is final.  We
 * follow, or abort if our TCP stream ended with bytes it did not consume
 * (whether we said BACK first: our own view of its cursor may have lagged).
 */
static int hear_back(struct smcr_conn *c)
{
	if (!(c->own_soft & CDC_SOFT_BACK_OK))
		return -EPROTO;                 /* we never said we keep our bytes */
	c->back |= SMCR_BACK_HEARD;
	c->back_out = c->peer_cons;
	if (ended_with_unread(c)) {
		/* our TCP stream ended: the bytes it did not consume cannot follow */
		c->own_cflags |= CDC_CF_ABORT;
		send_cdc(c);
		return fail(c, -ECONNRESET);
	}
	return (c->back & SMCR_BACK_SAID) ? 0 : say_back(c);
}

int smcr_conn_rx(struct smcr_conn *c, const uint8_t *msg, size_t len)
{
	struct smcr_cdc m;
	int prod, cons, what = 0, rc;

	if (c->err)
		return c->err;
	if (smcr_cdc_decode(msg, len, &m) || smcr_cdc_check(&m, c->rmb_size, c->peer_rmb_size))
		return fail(c, -EPROTO);
	if (m.token != c->token)
		return 0;       /* another connection's, as Linux drops it */
	if (c->peer_seq_seen && smcr_seq_before(m.seqno, c->peer_seq))
		return 0;
	/* bytes inside a CDC only to an end whose slots take them */
	if ((m.soft_flags & CDC_SOFT_DATA) && !(c->own_soft & CDC_SOFT_DATA_OK))
		return fail(c, -EPROTO);
	c->peer_seq = m.seqno;
	c->peer_seq_seen = true;
	prod = take_prod(c, m.prod);
	cons = take_cons(c, m.cons);
	if (prod < 0 || cons < 0)
		return fail(c, -EPROTO);
	if (prod && m.data_len)
		put_inside(c, &m, prod);
	if (c->cons_ask == SMCR_CONS_ASKED)
		c->cons_ask = SMCR_CONS_ANSWERED;
	if (prod)
		what |= SMCR_RX_DATA;
	if (cons)
		what |= SMCR_RX_ROOM;
	if (m.conn_state_flags & ~c->peer_cflags & (CDC_CF_DONE_WRITING | CDC_CF_CLOSED | CDC_CF_ABORT))
		what |= SMCR_RX_STATE;
	c->peer_cflags |= m.conn_state_flags & (CDC_CF_DONE_WRITING | CDC_CF_CLOSED | CDC_CF_ABORT);
	c->peer_pflags = m.prod_flags;
	if ((c->peer_soft & CDC_SOFT_FENCE) && (m.soft_flags & CDC_SOFT_FENCE) &&
	    m.soft_fence != c->peer_fence)
		return fail(c, -EPROTO);
	m.soft_flags &= (uint8_t)~CDC_SOFT_DATA;  /* of this CDC only */
	if (m.soft_flags & ~c->peer_soft) {
		what |= SMCR_RX_SOFT;
		if (m.soft_flags & ~c->peer_soft & CDC_SOFT_FENCE)
			c->peer_fence = m.soft_fence;
		c->peer_soft |= m.soft_flags;
	}
	rc = 0;
	if ((m.soft_flags & CDC_SOFT_BACK) && !(c->back & SMCR_BACK_HEARD)) {
		rc = hear_back(c);
		if (rc)
			return fail(c, rc);
		what |= SMCR_RX_BACK;
	}
	if ((cons && c->tx_prep > c->tx_sent) || c->cdc_due)
		rc = smcr_conn_push(c);
	if (!rc)
		rc = tell_cons(c);
	return rc ? rc : what;
}

int smcr_conn_sent(struct smcr_conn *c, uint64_t id)
{
	if (c->err)
		return c->err;
	if (id > c->tx_fin && id <= c->tx_hi)
		c->tx_fin = id;
	if (c->tx_prep > c->tx_sent || c->cdc_due)
		return smcr_conn_push(c);
	return 0;
}

int smcr_conn_set_state(struct smcr_conn *c, uint8_t cflags)
{
	c->own_cflags |= cflags & (CDC_CF_DONE_WRITING | CDC_CF_CLOSED | CDC_CF_ABORT);
	c->cdc_due = true;
	return smcr_conn_push(c);
}

uint8_t smcr_conn_peer_state(const struct smcr_conn *c)
{
	return c->peer_cflags;
}

int smcr_conn_set_soft(struct smcr_conn *c, uint8_t flags, uint64_t fence)
{
	if (c->err)
		return c->err;
	flags &= CDC_SOFT_KNOWN & ~(CDC_SOFT_BACK | CDC_SOFT_DATA);
	/* a promise about bytes given before it: only if none was let go yet */
	if ((flags & ~c->own_soft & CDC_SOFT_BACK_OK) && c->tx_prep - c->peer_cons > c->sndbuf_size)
		return -EINVAL;
	if (flags & ~c->own_soft & CDC_SOFT_FENCE)
		c->own_fence = fence;
	c->own_soft |= flags;
	c->cdc_due = true;
	return smcr_conn_push(c);
}

uint8_t smcr_conn_peer_soft(const struct smcr_conn *c, uint64_t *fence)
{
	*fence = c->peer_fence;
	return c->peer_soft;
}

int smcr_conn_switch(struct smcr_conn *c, void *link)
{
	if (c->err)
		return c->err;
	c->link = link;
	/* a question the old link may have lost goes again */
	if (c->cons_ask == SMCR_CONS_ASKED)
		c->cons_ask = SMCR_CONS_ASK;
	c->tx_sent = c->tx_fin > c->peer_cons ? c->tx_fin : c->peer_cons;
	/* a delivered CDC's bytes may never reach the peer's RMB (smcr_conn.h) */
	if (c->inside_used)
		c->tx_sent = c->peer_cons;
	c->inside = 0;
	c->cdc_due = true;
	return smcr_conn_push(c);
}

int smcr_conn_error(const struct smcr_conn *c)
{
	return c->err;
}

/*
 * We ended writing, and the peer had not consumed all as far as it told
 * (it tells only when its window needs it): ask it, and let its next CDC
 * decide.  -EAGAIN until then, -EOPNOTSUPP if it still had not.
 */
static int ask_cons(struct smcr_conn *c)
{
	int rc;

	if (c->cons_ask == SMCR_CONS_ANSWERED) {
		/* the answer may have crossed our question: asked again, a few times */
		if (++c->cons_asks >= SMCR_CONS_ASKS) {
			c->cons_ask = 0;
			c->cons_asks = 0;       /* a later BACK asks again */
			return -EOPNOTSUPP;
		}
		c->cons_ask = 0;
	}
	if (!c->cons_ask) {
		c->cons_ask = SMCR_CONS_ASK;
		c->cdc_due = true;
		if ((rc = smcr_conn_push(c)))
			return rc;
	}
	return -EAGAIN;
}

int smcr_conn_back(struct smcr_conn *c)
{
	if (c->err)
		return c->err;
	if (c->back & SMCR_BACK_SAID)
		return 0;
	if ((c->peer_cflags | c->own_cflags) & CDC_CF_ABORT)
		return -ECONNRESET;
	if ((c->own_soft & CDC_SOFT_BACK_OK) && !c->peer_seq_seen)
		return -EAGAIN;
	/* a TCP stream that ended (ours or the peer's) cannot carry the bytes not read yet */
	if (!(c->own_soft & c->peer_soft & CDC_SOFT_BACK_OK) ||
	    ((c->peer_cflags & (CDC_CF_DONE_WRITING | CDC_CF_CLOSED)) && c->peer_prod > c->rx_cons))
		return -EOPNOTSUPP;
	if (ended_with_unread(c))
		return ask_cons(c);
	c->cons_ask = 0;
	c->cons_asks = 0;
	return say_back(c);
}

unsigned smcr_conn_back_state(const struct smcr_conn *c)
{
	return c->back;
}

ssize_t smcr_conn_back_pending(const struct smcr_conn *c, struct iovec iov[2])
{
	uint64_t n;
	uint32_t off, first;

	if (c->back != (SMCR_BACK_SAID | SMCR_BACK_HEARD))
		return -EAGAIN;
	n = c->tx_prep - c->back_out;
	off = (uint32_t)(c->back_out % c->sndbuf_size);
	first = (uint32_t)min64(n, c->sndbuf_size - off);
	iov[0] = (struct iovec){ c->sndbuf + off, first };
	iov[1] = (struct iovec){ c->sndbuf, (size_t)(n - first) };
	return (ssize_t)n;
}

void smcr_conn_back_sent(struct smcr_conn *c, size_t n)
{
	c->back_out += min64(n, c->tx_prep - c->back_out);
}
