/*
 * Soft SMC-R as a transport (transport.h): a connection of a link group of
 * preload/smcr/, whose bytes go by RDMA WRITE into the peer's RMB
 * (doc/soft-roce.md section 4).  The cut-over's words that the ring keeps in
 * shared memory (attached, the fences, staying on TCP) travel in every CDC
 * instead (wire/smcr_cdc.h, CDC_SOFT_*); the peer's progress thread wakes
 * our sleepers, so the TCP stream carries no doorbell after a fence.
 *
 * An end is bound to its connection once the CLC exchange named the peer
 * (transport_rdma_bind()); map() is the ring's and refuses.  One process
 * holds an end: the count of holders is this process's own.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "base.h"
#include "smcr.h"
#include "smcr_cdc.h"
#include "smcr_conn.h"
#include "transport.h"

_Static_assert(TP_PS_DONE_WRITING == CDC_CF_DONE_WRITING && TP_PS_CLOSED == CDC_CF_CLOSED &&
	       TP_PS_ABORT == CDC_CF_ABORT, "TP_PS_* are the CDC's connection-state flags");

struct rdma_end {
	struct smcr_sock *s;
	uint32_t rmb_size, peer_rmb_size;
	uint64_t tx_pos, rx_pos;     /* bytes this end produced, consumed */
	uint32_t holders, hold_gen;
	bool rx_cut;
	bool shut_rd;
};

_Static_assert(TP_BACK_SAID == SMCR_BACK_SAID && TP_BACK_HEARD == SMCR_BACK_HEARD,
	       "TP_BACK_* are smcr_conn's");
_Static_assert(sizeof(struct rdma_end) <= TRANSPORT_STATE_SIZE, "an RDMA end fits in struct transport");

#define END(t) ((struct rdma_end *)(void *)(t)->state.bytes)
#define SOCK(t) (END(t)->s)

/* The largest part of a file read at once for sendfile(). */
#define FILE_CHUNK 65536u

static void no_wake(uint32_t *wake)
{
	if (wake)
		*wake = 0;
}

static int rdma_map(struct transport *t, int fd, int side)
{
	(void)t;
	(void)fd;
	(void)side;
	return -EOPNOTSUPP;
}

static void rdma_unmap(struct transport *t)
{
	if (SOCK(t))
		smcr_sock_release(SOCK(t));
	SOCK(t) = NULL;
}

static unsigned view_peer_state(const struct smcr_sock_view *v)
{
	unsigned f = v->peer_state & TP_PS_ENDED;

	/*
	 * No link left: as an abort of the peer's; after the peer's close (a
	 * client that closed and exited), as TCP's FIN with the peer's
	 * reading over too: its bytes are read to the end, a write is EPIPE.
	 */
	if (v->lost_after_end)
		f |= TP_PS_DONE_READING;
	else if (v->error == -ECONNRESET)
		f |= TP_PS_ABORT;
	return f;
}

static unsigned rdma_peer_state(struct transport *t)
{
	struct smcr_sock_view v;

	smcr_sock_view(SOCK(t), &v);
	return view_peer_state(&v);
}

static ssize_t rdma_produce(struct transport *t, const struct iovec *iov, int cnt, uint32_t *wake)
{
	ssize_t n;

	no_wake(wake);
	if (rdma_peer_state(t) & TP_PS_ABORT)
		return -ECONNRESET;
	n = smcr_sock_send(SOCK(t), iov, cnt);
	if (n > 0)
		END(t)->tx_pos += (uint64_t)n;
	return n;
}

static ssize_t rdma_produce_file(struct transport *t, int fd, off_t off, size_t len, uint32_t *wake)
{
	unsigned char buf[FILE_CHUNK];
	long room = smcr_sock_space(SOCK(t));
	struct iovec v;
	ssize_t got;

	no_wake(wake);
	if (room <= 0) {
		unsigned ps = rdma_peer_state(t);
		int err = smcr_sock_error(SOCK(t));

		if (ps & TP_PS_ABORT)
			return -ECONNRESET;
		/* the link's loss after the peer's end reads as its reading over */
		if (err && !(ps & TP_PS_DONE_READING))
			return err;
		return ps & (TP_PS_CLOSED | TP_PS_DONE_READING) ? -EPIPE : -EAGAIN;
	}
	/* only this end's sender adds to the send buffer: the room read stays */
	if (len > (size_t)room)
		len = (size_t)room;
	if (len > sizeof(buf))
		len = sizeof(buf);
	got = pread(fd, buf, len, off);
	if (got <= 0)
		return got < 0 ? -errno : 0;
	v = (struct iovec){ .iov_base = buf, .iov_len = (size_t)got };
	return rdma_produce(t, &v, 1, wake);
}

static ssize_t rdma_consume(struct transport *t, const struct iovec *iov, int cnt, unsigned flags,
			    uint32_t *wake)
{
	struct smcr_recv_seen seen;
	size_t want = 0;
	unsigned ps;
	bool lost;
	ssize_t n;

	no_wake(wake);
	for (int i = 0; i < cnt; i++)
		want += iov[i].iov_len;
	if (!want)
		return 0;
	/*
	 * The state first: the peer ends its writing after its last byte's
	 * CDC, so an end seen before a read that found nothing leaves nothing.
	 * The peer's own words before the link's fate: an orderly end the peer
	 * said is the end of the stream even if its process (and our link to
	 * it) went afterwards, as TCP's FIN is read before a later reset.
	 * One lock for all of it: this is every read's path.
	 */
	n = smcr_sock_recv_seen(SOCK(t), iov, cnt, flags & TP_PEEK, &seen);
	ps = seen.peer_state & TP_PS_ENDED;
	lost = seen.error == -ECONNRESET;
	if (n > 0) {
		if (!(flags & TP_PEEK))
			END(t)->rx_pos += (uint64_t)n;
		return n;
	}
	/*
	 * The link's loss before the peer's end with bytes unread is not an
	 * orderly end: the reset (after it, smcr_conn_recv() gives them all).
	 */
	if (n < 0 && (!lost || seen.left > 0))
		return n;
	if (ps & TP_PS_ABORT)
		return -ECONNRESET;
	if (ps & (TP_PS_DONE_WRITING | TP_PS_CLOSED))
		return 0;
	if (lost)
		return -ECONNRESET;
	return -EAGAIN;
}

/* The consumer cursor goes back under RFC 7609's rule (smcr_conn_recv()); the peer asks when short. */
static void rdma_rx_flush(struct transport *t, uint32_t *wake)
{
	(void)t;
	no_wake(wake);
}

static void rdma_rx_busy(struct transport *t)
{
	(void)t;
}

static long rdma_readable(struct transport *t)
{
	return smcr_sock_readable(SOCK(t));
}

static long rdma_space(struct transport *t)
{
	return smcr_sock_space(SOCK(t));
}

static long rdma_unread(struct transport *t)
{
	return smcr_sock_unread(SOCK(t));
}

static void rdma_shutdown_wr(struct transport *t)
{
	smcr_sock_set_state(SOCK(t), CDC_CF_DONE_WRITING);
}

/* SMC-R's CDC has no flag for it: the kernel's shutdown(SHUT_RD) sends nothing either. */
static void rdma_shutdown_rd(struct transport *t)
{
	END(t)->shut_rd = true;
}

static void rdma_close(struct transport *t)
{
	smcr_sock_set_state(SOCK(t), CDC_CF_CLOSED);
}

static void rdma_abort(struct transport *t)
{
	smcr_sock_set_state(SOCK(t), CDC_CF_ABORT);
}

static bool rx_ready(struct transport *t)
{
	struct smcr_sock_view v;

	smcr_sock_view(SOCK(t), &v);
	/* after our BACK the reader goes to the TCP stream */
	return v.readable > 0 || view_peer_state(&v) || v.error || (v.back & SMCR_BACK_SAID);
}

static bool tx_ready(struct transport *t, size_t want)
{
	struct smcr_sock_view v;

	smcr_sock_view(SOCK(t), &v);
	/* back said and heard, the writer goes to the TCP stream */
	return (v.space > 0 && (size_t)v.space >= want) || view_peer_state(&v) || v.error ||
	       v.back == (SMCR_BACK_SAID | SMCR_BACK_HEARD);
}

/*
 * The peer's progress thread rings a sleeper's bell (smcr_sock_bell());
 * nothing wakes a sleeper that has none (TP_BELL_TCP: no doorbell ever comes
 * over TCP), so such a sleeper is told to look again instead.
 */
static bool rdma_rx_sleep_begin(struct transport *t, uint32_t *wake, uint32_t bell)
{
	no_wake(wake);
	/* a bell only for a sleeper: one left behind wakes its thread for nothing */
	if (bell == TP_BELL_TCP || rx_ready(t))
		return true;
	smcr_sock_bell(SOCK(t), true, bell);
	smcr_sock_unlend(SOCK(t));
	return rx_ready(t);
}

static void rdma_rx_sleep_end(struct transport *t)
{
	/* the bell stays: another thread's may be beside it (smcr_sock_bell()) */
	(void)t;
}

static int rdma_rx_wait(struct transport *t, const struct timespec *timeout)
{
	uint32_t seq = smcr_sock_seq(SOCK(t), true);

	/* the peer's soft words (its fence) wake it as data does */
	if (rx_ready(t))
		return 0;
	return smcr_sock_wait(SOCK(t), true, seq, timeout);
}

static bool rdma_tx_sleep_begin(struct transport *t, size_t want, uint32_t bell)
{
	if (tx_ready(t, want))
		return true;
	smcr_sock_want_room(SOCK(t));
	if (bell == TP_BELL_TCP)
		return true;
	smcr_sock_bell(SOCK(t), false, bell);
	smcr_sock_unlend(SOCK(t));
	return tx_ready(t, want);
}

static void rdma_tx_sleep_end(struct transport *t)
{
	/* the bell stays: another thread's may be beside it (smcr_sock_bell()) */
	(void)t;
}

_Static_assert(sizeof(struct smcr_drive) <= sizeof(((struct tp_drive *)0)->state), "fits in tp_drive");

static bool rdma_drive_begin(struct transport *t, bool rx, uint32_t bell, struct tp_drive *d)
{
	struct smcr_drive sd;

	if (smcr_drive_begin(SOCK(t), rx, bell, &sd))
		return false;
	d->fd = sd.fd;
	memcpy(d->state, &sd, sizeof(sd));
	return true;
}

static void rdma_drive_take(struct transport *t, const struct tp_drive *d, bool woken)
{
	struct smcr_drive sd;

	memcpy(&sd, d->state, sizeof(sd));
	smcr_drive_take(SOCK(t), &sd, woken);
}

static void rdma_drive_end(struct transport *t, const struct tp_drive *d)
{
	struct smcr_drive sd;

	memcpy(&sd, d->state, sizeof(sd));
	smcr_drive_end(SOCK(t), &sd);
}

/* The peer's fence CDC wakes our readers itself. */
static void rdma_rx_want_bell(struct transport *t)
{
	(void)t;
}

static bool rdma_rx_bell_asked(struct transport *t)
{
	(void)t;
	return false;
}

/* No doorbell travels over TCP: after a fence, a TCP byte is foreign. */
static bool rdma_bell_begin(struct transport *t)
{
	(void)t;
	return false;
}

static void rdma_bell_end(struct transport *t)
{
	(void)t;
}

static bool rdma_tcp_bells_due(struct transport *t)
{
	(void)t;
	return false;
}

static bool rdma_tcp_bells_read(struct transport *t, uint32_t n)
{
	(void)t;
	return n == 0;
}

static void rdma_wait_bells(struct transport *t)
{
	(void)t;
}

/*
 * How long the peer may take nothing of ours before an ending process
 * gives up on it: TCP's kernel keeps an orphan's bytes for a peer whose
 * window stays shut about as long (its zero-window probes with
 * tcp_orphan_retries), and a reader that sleeps a while must get them.
 * A peer that is gone fails the link within seconds (its probes go
 * unanswered), and one that closed reads nothing more: no wait for either.
 */
#define LINGER_IDLE_NS (60 * 1000000000LL)

/* How long an ending process waits for its peers to take its last word (smcr_goodbye_all()). */
#define GOODBYE_WAIT_MS 500

void transport_linger_all(void)
{
	if (smcr_socks())
		smcr_linger_all(LINGER_IDLE_NS);
	smcr_goodbye_all(GOODBYE_WAIT_MS);
}

bool transport_rdma_live(void)
{
	return smcr_socks() || smcr_groups_any();
}

static uint64_t rdma_rx_mark(struct transport *t)
{
	return smcr_sock_seq(SOCK(t), true);
}

static uint64_t rdma_tx_mark(struct transport *t)
{
	return smcr_sock_seq(SOCK(t), false);
}

static uint8_t said(struct transport *t, uint64_t *fence)
{
	return smcr_sock_own_soft(SOCK(t), fence);
}

static uint8_t heard(struct transport *t, uint64_t *fence)
{
	return smcr_sock_peer_soft(SOCK(t), fence);
}

static void rdma_say_attached(struct transport *t)
{
	/* the link's message slots hold a CDC with bytes inside (smcr/lgr.c link_size) */
	smcr_sock_set_soft(SOCK(t), CDC_SOFT_ATTACHED | CDC_SOFT_DATA_OK, 0);
}

static bool rdma_peer_attached(struct transport *t)
{
	uint64_t f;

	return heard(t, &f) & CDC_SOFT_ATTACHED;
}

static bool rdma_tx_fence(struct transport *t, uint64_t *bytes)
{
	return said(t, bytes) & CDC_SOFT_FENCE;
}

static bool rdma_set_tx_fence(struct transport *t, uint64_t bytes)
{
	uint64_t f;

	if (said(t, &f) & CDC_SOFT_FENCE)
		return true;
	if ((said(t, &f) | heard(t, &f)) & CDC_SOFT_STAY_TCP)
		return false;
	return smcr_sock_set_soft(SOCK(t), CDC_SOFT_FENCE, bytes) == 0;
}

/*
 * The ring decides both fences in one shared word; here the peer cuts its
 * writing over once it heard us attached, and its fence may be on its way:
 * both directions stay on TCP only while neither end can have cut over.
 */
static bool rdma_stay_tcp(struct transport *t)
{
	uint64_t f;
	uint8_t ours = said(t, &f), theirs = heard(t, &f);

	if ((ours | theirs) & CDC_SOFT_STAY_TCP)
		return true;
	if ((ours & (CDC_SOFT_FENCE | CDC_SOFT_ATTACHED)) || (theirs & CDC_SOFT_FENCE))
		return false;
	return smcr_sock_set_soft(SOCK(t), CDC_SOFT_STAY_TCP, 0) == 0;
}

static bool rdma_on_tcp_for_good(struct transport *t)
{
	uint64_t f;

	return (said(t, &f) | heard(t, &f)) & CDC_SOFT_STAY_TCP;
}

static bool rdma_rx_fence(struct transport *t, uint64_t *bytes)
{
	return heard(t, bytes) & CDC_SOFT_FENCE;
}

static bool rdma_rx_cut_seen(struct transport *t)
{
	return END(t)->rx_cut;
}

/* Back to TCP: wire/smcr_conn.h, smcr_conn_back(). */
static bool rdma_back_offer(struct transport *t)
{
	return smcr_sock_set_soft(SOCK(t), CDC_SOFT_BACK_OK, 0) == 0;
}

static int rdma_back_say(struct transport *t)
{
	return smcr_sock_back(SOCK(t));
}

static unsigned rdma_back_state(struct transport *t)
{
	return smcr_sock_back_state(SOCK(t));
}

static ssize_t rdma_back_pending(struct transport *t, void *buf, size_t size)
{
	return smcr_sock_back_pending(SOCK(t), buf, size);
}

static void rdma_back_sent(struct transport *t, size_t n)
{
	smcr_sock_back_sent(SOCK(t), n);
}

static void rdma_rx_cut_mark(struct transport *t)
{
	END(t)->rx_cut = true;
}

/* Another process never holds this end (rdma_elsewhere.c): the count stays ours alone. */
static uint32_t rdma_holders_add(struct transport *t, int delta)
{
	(void)delta;
	return END(t)->holders;
}

static uint32_t rdma_holders(struct transport *t)
{
	return END(t)->holders;
}

static void rdma_holders_first(struct transport *t)
{
	END(t)->holders = 1;
}

static bool rdma_ever_shared(struct transport *t)
{
	return END(t)->hold_gen != 0;
}

static uint32_t rdma_hold_gen(struct transport *t)
{
	return END(t)->hold_gen;
}

static void rdma_resync(struct transport *t)
{
	(void)t;
}

static void rdma_note_cpu(struct transport *t, int cpu)
{
	(void)t;
	(void)cpu;
}

/* The peer runs on another host: never worth spinning for. */
static uint32_t rdma_peer_cpu(struct transport *t, bool rx)
{
	(void)t;
	(void)rx;
	return TP_PEER_REMOTE;
}

static void rdma_own_cdc(struct transport *t, struct tp_cdc *cdc)
{
	const struct rdma_end *e = END(t);

	*cdc = (struct tp_cdc){
		.prod_wrap = (uint16_t)(e->tx_pos / e->peer_rmb_size),
		.prod_count = (uint32_t)(e->tx_pos % e->peer_rmb_size),
		.cons_wrap = (uint16_t)(e->rx_pos / e->rmb_size),
		.cons_count = (uint32_t)(e->rx_pos % e->rmb_size),
		.conn_state_flags = (uint8_t)smcr_sock_own_state(SOCK(t)),
	};
}

static uint64_t rdma_tx_pos(struct transport *t)
{
	return END(t)->tx_pos;
}

static uint64_t rdma_rx_pos(struct transport *t)
{
	return END(t)->rx_pos;
}

static bool rdma_rx_published(struct transport *t)
{
	(void)t;
	return true;
}

static uint32_t rdma_tx_size(struct transport *t)
{
	return END(t)->peer_rmb_size;
}

static uint32_t rdma_rx_size(struct transport *t)
{
	return END(t)->rmb_size;
}

const struct transport_ops transport_rdma = {
	.name = "rdma",
	.tcp_doorbells = false,
	.one_process = true,
	.smcr = true,
	.medium = "RDMA",
	.map = rdma_map,
	.unmap = rdma_unmap,
	.produce = rdma_produce,
	.produce_file = rdma_produce_file,
	.consume = rdma_consume,
	.rx_flush = rdma_rx_flush,
	.rx_busy = rdma_rx_busy,
	.readable = rdma_readable,
	.space = rdma_space,
	.unread = rdma_unread,
	.shutdown_wr = rdma_shutdown_wr,
	.shutdown_rd = rdma_shutdown_rd,
	.close = rdma_close,
	.abort = rdma_abort,
	.peer_state = rdma_peer_state,
	.rx_sleep_begin = rdma_rx_sleep_begin,
	.rx_sleep_end = rdma_rx_sleep_end,
	.rx_wait = rdma_rx_wait,
	.tx_sleep_begin = rdma_tx_sleep_begin,
	.tx_sleep_end = rdma_tx_sleep_end,
	.drive_begin = rdma_drive_begin,
	.drive_take = rdma_drive_take,
	.drive_end = rdma_drive_end,
	.rx_want_bell = rdma_rx_want_bell,
	.rx_bell_asked = rdma_rx_bell_asked,
	.bell_begin = rdma_bell_begin,
	.bell_end = rdma_bell_end,
	.wait_bells = rdma_wait_bells,
	.rx_mark = rdma_rx_mark,
	.tx_mark = rdma_tx_mark,
	.say_attached = rdma_say_attached,
	.peer_attached = rdma_peer_attached,
	.tx_fence = rdma_tx_fence,
	.set_tx_fence = rdma_set_tx_fence,
	.stay_tcp = rdma_stay_tcp,
	.on_tcp_for_good = rdma_on_tcp_for_good,
	.tcp_bells_due = rdma_tcp_bells_due,
	.tcp_bells_read = rdma_tcp_bells_read,
	.rx_fence = rdma_rx_fence,
	.rx_cut_seen = rdma_rx_cut_seen,
	.rx_cut_mark = rdma_rx_cut_mark,
	.back_offer = rdma_back_offer,
	.back_say = rdma_back_say,
	.back_state = rdma_back_state,
	.back_pending = rdma_back_pending,
	.back_sent = rdma_back_sent,
	.holders_add = rdma_holders_add,
	.holders = rdma_holders,
	.holders_first = rdma_holders_first,
	.ever_shared = rdma_ever_shared,
	.hold_gen = rdma_hold_gen,
	.resync = rdma_resync,
	.note_cpu = rdma_note_cpu,
	.peer_cpu = rdma_peer_cpu,
	.own_cdc = rdma_own_cdc,
	.tx_pos = rdma_tx_pos,
	.rx_pos = rdma_rx_pos,
	.rx_published = rdma_rx_published,
	.tx_size = rdma_tx_size,
	.rx_size = rdma_rx_size,
};

int transport_rdma_bind(struct transport *t, struct smcr_sock *s, uint32_t peer_rmb_size)
{
	struct smcr_sock_local l;

	smcr_sock_local(s, &l);
	if (!l.rmb_size || !peer_rmb_size)
		return -EINVAL;
	memset(t->state.bytes, 0, sizeof(t->state.bytes));
	*END(t) = (struct rdma_end){ .s = s, .rmb_size = l.rmb_size, .peer_rmb_size = peer_rmb_size };
	t->ops = &transport_rdma;
	return 0;
}

int transport_rdma_links(struct transport *t, char *buf, size_t size)
{
	return smcr_lgr_describe(smcr_sock_lgr(SOCK(t)), buf, size);
}

void transport_rdma_where(struct transport *t, uint32_t *key, uint8_t *link)
{
	smcr_sock_where(SOCK(t), key, link);
}
