/*
 * A forked child's copy of a soft SMC-R end (transport_rdma.c): the queue
 * pairs, the RMB's registration and the progress thread stay with the
 * process that set the connection up, so this copy must never read the
 * RMB's stale pages or post on the parent's queue pair.  It is another
 * process's connection here: every read and write gets ECONNRESET (one
 * line on stderr, once), poll reports an error, closing it does nothing to
 * the parent's.  doc/soft-roce.md section 4 says what is still missing
 * (handing an end over to another process).
 */
#include <errno.h>
#include <unistd.h>

#include "base.h"
#include "transport.h"

struct elsewhere {
	int owner;                 /* the pid that holds the end */
	bool told;
};

_Static_assert(sizeof(struct elsewhere) <= TRANSPORT_STATE_SIZE, "fits in struct transport");

#define ELSE(t) ((struct elsewhere *)(void *)(t)->state.bytes)

static ssize_t reset_here(struct transport *t)
{
	if (!ELSE(t)->told) {
		ELSE(t)->told = true;
		preload_err("libsmc-preload: a connection on soft SMC-R stays with process %d, which "
			    "set it up; process %d cannot use it yet: it is reset here\n",
			    ELSE(t)->owner, (int)getpid());
	}
	return -ECONNRESET;
}

static int e_map(struct transport *t, int fd, int side)
{
	(void)t; (void)fd; (void)side;
	return -EOPNOTSUPP;
}

static void e_none(struct transport *t)
{
	(void)t;
}

static ssize_t e_produce(struct transport *t, const struct iovec *iov, int cnt, uint32_t *wake)
{
	(void)iov; (void)cnt;
	*wake = 0;
	return reset_here(t);
}

static ssize_t e_produce_file(struct transport *t, int fd, off_t off, size_t len, uint32_t *wake)
{
	(void)fd; (void)off; (void)len;
	*wake = 0;
	return reset_here(t);
}

static ssize_t e_consume(struct transport *t, const struct iovec *iov, int cnt, unsigned flags,
			 uint32_t *wake)
{
	(void)iov; (void)cnt; (void)flags;
	*wake = 0;
	return reset_here(t);
}

static void e_rx_flush(struct transport *t, uint32_t *wake)
{
	(void)t;
	if (wake)
		*wake = 0;
}

static long e_zero(struct transport *t)
{
	(void)t;
	return 0;
}

static unsigned e_peer_state(struct transport *t)
{
	(void)t;
	return TP_PS_ABORT;
}

static bool e_rx_sleep_begin(struct transport *t, uint32_t *wake, uint32_t bell)
{
	(void)t; (void)bell;
	if (wake)
		*wake = 0;
	return true;
}

static int e_rx_wait(struct transport *t, const struct timespec *timeout)
{
	(void)t; (void)timeout;
	return 0;
}

static bool e_tx_sleep_begin(struct transport *t, size_t want, uint32_t bell)
{
	(void)t; (void)want; (void)bell;
	return true;
}

static bool e_false(struct transport *t)
{
	(void)t;
	return false;
}

static bool e_true(struct transport *t)
{
	(void)t;
	return true;
}

static bool e_bells_read(struct transport *t, uint32_t n)
{
	(void)t;
	return n == 0;
}

static uint64_t e_mark(struct transport *t)
{
	(void)t;
	return 1;
}

/* Both directions cut over at once: every call goes to the transport, and fails. */
static bool e_fence(struct transport *t, uint64_t *bytes)
{
	(void)t;
	*bytes = 0;
	return true;
}

static bool e_set_fence(struct transport *t, uint64_t bytes)
{
	(void)t; (void)bytes;
	return true;
}

static uint32_t e_holders_add(struct transport *t, int delta)
{
	(void)t; (void)delta;
	return 1;
}

static uint32_t e_one(struct transport *t)
{
	(void)t;
	return 1;
}

static uint32_t e_gen(struct transport *t)
{
	(void)t;
	return 0;
}

static void e_note_cpu(struct transport *t, int cpu)
{
	(void)t; (void)cpu;
}

static uint32_t e_peer_cpu(struct transport *t, bool rx)
{
	(void)t; (void)rx;
	return 0;
}

static void e_own_cdc(struct transport *t, struct tp_cdc *cdc)
{
	(void)t;
	*cdc = (struct tp_cdc){ .conn_state_flags = TP_PS_ABORT };
}

static uint64_t e_pos(struct transport *t)
{
	(void)t;
	return 0;
}

static uint32_t e_size(struct transport *t)
{
	(void)t;
	return 0;
}

const struct transport_ops transport_rdma_elsewhere = {
	.name = "rdma-elsewhere",
	.tcp_doorbells = false,
	.one_process = true,
	.smcr = true,
	.not_ours = true,
	.medium = "RDMA",
	.map = e_map,
	.unmap = e_none,
	.produce = e_produce,
	.produce_file = e_produce_file,
	.consume = e_consume,
	.rx_flush = e_rx_flush,
	.rx_busy = e_none,
	.readable = e_zero,
	.space = e_zero,
	.unread = e_zero,
	.shutdown_wr = e_none,
	.shutdown_rd = e_none,
	.close = e_none,
	.abort = e_none,
	.peer_state = e_peer_state,
	.rx_sleep_begin = e_rx_sleep_begin,
	.rx_sleep_end = e_none,
	.rx_wait = e_rx_wait,
	.tx_sleep_begin = e_tx_sleep_begin,
	.tx_sleep_end = e_none,
	.drive_begin = tp_no_drive_begin,
	.drive_take = tp_no_drive_take,
	.drive_end = tp_no_drive_end,
	.rx_want_bell = e_none,
	.rx_bell_asked = e_false,
	.bell_begin = e_false,
	.bell_end = e_none,
	.wait_bells = e_none,
	.rx_mark = e_mark,
	.tx_mark = e_mark,
	.say_attached = e_none,
	.peer_attached = e_true,
	.tx_fence = e_fence,
	.set_tx_fence = e_set_fence,
	.stay_tcp = e_false,
	.on_tcp_for_good = e_false,
	.tcp_bells_due = e_false,
	.tcp_bells_read = e_bells_read,
	.rx_fence = e_fence,
	.rx_cut_seen = e_true,
	.rx_cut_mark = e_none,
	.back_offer = tp_no_back_offer,
	.back_say = tp_no_back_say,
	.back_state = tp_no_back_state,
	.back_pending = tp_no_back_pending,
	.back_sent = tp_no_back_sent,
	.holders_add = e_holders_add,
	.holders = e_one,
	.holders_first = e_none,
	.ever_shared = e_false,
	.hold_gen = e_gen,
	.resync = e_none,
	.note_cpu = e_note_cpu,
	.peer_cpu = e_peer_cpu,
	.own_cdc = e_own_cdc,
	.tx_pos = e_pos,
	.rx_pos = e_pos,
	.rx_published = e_true,
	.tx_size = e_size,
	.rx_size = e_size,
};

bool transport_after_fork_child(struct transport *t, int parent)
{
	if (t->ops != &transport_rdma)
		return false;
	*ELSE(t) = (struct elsewhere){ .owner = parent };
	t->ops = &transport_rdma_elsewhere;
	return true;
}
