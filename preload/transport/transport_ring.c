/*
 * The shared-memory ring of soft SMC-D as a transport (transport.h): the
 * only code of the preload that touches a region's control blocks
 * (wire/dmb.h, doc/soft-ring.md).
 */
#include <stdatomic.h>

#include "base.h"
#include "dmb.h"
#include "transport.h"

/* transport.h's values are the ring's own */
_Static_assert(TP_PS_DONE_WRITING == DMB_CF_DONE_WRITING && TP_PS_CLOSED == DMB_CF_CLOSED &&
	       TP_PS_ABORT == DMB_CF_ABORT && TP_PS_DONE_READING == DMB_CF_DONE_READING,
	       "TP_PS_* are the CDC flags of the ring");
_Static_assert(TP_PEEK == DMB_PEEK && TP_BELL_TCP == DMB_BELL_TCP, "TP_PEEK, TP_BELL_TCP");
_Static_assert(sizeof(struct dmb_conn) <= TRANSPORT_STATE_SIZE &&
	       _Alignof(struct dmb_conn) <= _Alignof(max_align_t),
	       "a ring's end fits in struct transport");

#define RING(t) ((struct dmb_conn *)(void *)(t)->state.bytes)
#define TX_CTRL(t) (RING(t)->tx.ctrl)
#define RX_CTRL(t) (RING(t)->rx.ctrl)

static int ring_map(struct transport *t, int fd, int side)
{
	return dmb_map(fd, side, RING(t));
}

static void ring_unmap(struct transport *t)
{
	dmb_unmap(RING(t));
}

static ssize_t ring_produce(struct transport *t, const struct iovec *iov, int cnt, uint32_t *wake)
{
	return dmb_produce(RING(t), iov, cnt, 0, wake);
}

static ssize_t ring_produce_file(struct transport *t, int fd, off_t off, size_t len,
				 uint32_t *wake)
{
	return dmb_produce_file(RING(t), fd, off, len, wake);
}

static ssize_t ring_consume(struct transport *t, const struct iovec *iov, int cnt,
			    unsigned flags, uint32_t *wake)
{
	return dmb_consume(RING(t), iov, cnt, flags, wake);
}

static void ring_rx_flush(struct transport *t, uint32_t *wake)
{
	dmb_rx_flush(RING(t), wake);
}

static void ring_rx_busy(struct transport *t)
{
	dmb_rx_busy(RING(t));
}

static long ring_readable(struct transport *t)
{
	return dmb_readable(RING(t));
}

static long ring_space(struct transport *t)
{
	return dmb_writable(RING(t));
}

static long ring_unread(struct transport *t)
{
	return dmb_unread(RING(t));
}

static void ring_shutdown_wr(struct transport *t)
{
	dmb_shutdown_wr(RING(t));
}

static void ring_shutdown_rd(struct transport *t)
{
	dmb_shutdown_rd(RING(t));
}

static void ring_close(struct transport *t)
{
	dmb_close(RING(t));
}

static void ring_abort(struct transport *t)
{
	dmb_abort(RING(t));
}

static unsigned ring_peer_state(struct transport *t)
{
	return dmb_peer_state(RING(t));
}

static bool ring_rx_sleep_begin(struct transport *t, uint32_t *wake, uint32_t bell)
{
	return dmb_rx_sleep_begin(RING(t), wake, bell);
}

static void ring_rx_sleep_end(struct transport *t)
{
	dmb_rx_sleep_end(RING(t));
}

static int ring_rx_wait(struct transport *t, const struct timespec *timeout)
{
	return dmb_rx_futex_wait(RING(t), timeout);
}

static bool ring_tx_sleep_begin(struct transport *t, size_t want, uint32_t bell)
{
	return dmb_tx_sleep_begin(RING(t), want, bell);
}

static void ring_tx_sleep_end(struct transport *t)
{
	dmb_tx_sleep_end(RING(t));
}

static void ring_rx_want_bell(struct transport *t)
{
	atomic_store_explicit(&RX_CTRL(t)->cons_sleeping, 1, memory_order_seq_cst);
}

static bool ring_rx_bell_asked(struct transport *t)
{
	return atomic_load_explicit(&RX_CTRL(t)->cons_sleeping, memory_order_acquire) != 0;
}

static bool ring_bell_begin(struct transport *t)
{
	return dmb_bell_begin(RING(t));
}

static void ring_bell_end(struct transport *t)
{
	dmb_bell_end(RING(t));
}

static void ring_wait_bells(struct transport *t)
{
	dmb_wait_bells(RING(t));
}

static uint64_t ring_rx_mark(struct transport *t)
{
	return atomic_load(&RX_CTRL(t)->prod);
}

static uint64_t ring_tx_mark(struct transport *t)
{
	return atomic_load(&TX_CTRL(t)->cons);
}

static void ring_say_attached(struct transport *t)
{
	atomic_store_explicit(&RX_CTRL(t)->attached, 1, memory_order_seq_cst);
}

static bool ring_peer_attached(struct transport *t)
{
	return atomic_load_explicit(&TX_CTRL(t)->attached, memory_order_acquire);
}

static bool ring_tx_fence(struct transport *t, uint64_t *bytes)
{
	return dmb_tx_fence(RING(t), bytes);
}

static bool ring_set_tx_fence(struct transport *t, uint64_t bytes)
{
	return dmb_fence_set(RING(t), bytes);
}

static bool ring_stay_tcp(struct transport *t)
{
	return dmb_stay_tcp(RING(t));
}

static bool ring_on_tcp_for_good(struct transport *t)
{
	return dmb_on_tcp_for_good(RING(t));
}

static bool ring_rx_fence(struct transport *t, uint64_t *bytes)
{
	return dmb_rx_fence(RING(t), bytes);
}

static bool ring_tcp_bells_due(struct transport *t)
{
	return dmb_tcp_bells_due(RING(t));
}

static bool ring_tcp_bells_read(struct transport *t, uint32_t n)
{
	return dmb_tcp_bells_read(RING(t), n);
}

static bool ring_rx_cut_seen(struct transport *t)
{
	return atomic_load_explicit(&RX_CTRL(t)->cons_cut, memory_order_acquire);
}

static void ring_rx_cut_mark(struct transport *t)
{
	atomic_store_explicit(&RX_CTRL(t)->cons_cut, 1, memory_order_release);
}

static uint32_t ring_holders_add(struct transport *t, int delta)
{
	return dmb_holders_add(RING(t), delta);
}

static uint32_t ring_holders(struct transport *t)
{
	return dmb_holders(RING(t));
}

static void ring_holders_first(struct transport *t)
{
	atomic_store(&TX_CTRL(t)->holders, 1);
}

static bool ring_ever_shared(struct transport *t)
{
	return atomic_load_explicit(&TX_CTRL(t)->hold_gen, memory_order_relaxed) != 0;
}

static uint32_t ring_hold_gen(struct transport *t)
{
	return atomic_load_explicit(&TX_CTRL(t)->hold_gen, memory_order_relaxed);
}

static void ring_resync(struct transport *t)
{
	dmb_resync(RING(t));
}

/* Stored only when it changed: the line is the peer's to read. */
static void store_cpu(_Atomic uint32_t *word, uint32_t v)
{
	if (atomic_load_explicit(word, memory_order_relaxed) != v)
		atomic_store_explicit(word, v, memory_order_relaxed);
}

static void ring_note_cpu(struct transport *t, int cpu)
{
	store_cpu(&RX_CTRL(t)->cons_cpu, (uint32_t)cpu + 1);
	store_cpu(&TX_CTRL(t)->prod_cpu, (uint32_t)cpu + 1);
}

/* rx: the producer of what we read; else the consumer of what we write. */
static uint32_t ring_peer_cpu(struct transport *t, bool rx)
{
	return atomic_load_explicit(rx ? &RX_CTRL(t)->prod_cpu : &TX_CTRL(t)->cons_cpu,
				    memory_order_relaxed);
}

static void ring_own_cdc(struct transport *t, struct tp_cdc *cdc)
{
	struct dmb_cdc d = dmb_own_cdc(RING(t));

	*cdc = (struct tp_cdc){ .prod_wrap = d.prod.wrap, .prod_count = d.prod.count,
				.cons_wrap = d.cons.wrap, .cons_count = d.cons.count,
				.prod_flags = d.pflags, .conn_state_flags = d.cflags };
}

static uint64_t ring_tx_pos(struct transport *t)
{
	return dmb_tx_pos(RING(t));
}

static uint64_t ring_rx_pos(struct transport *t)
{
	return dmb_rx_pos(RING(t));
}

static bool ring_rx_published(struct transport *t)
{
	return dmb_rx_published(RING(t));
}

static uint32_t ring_tx_size(struct transport *t)
{
	return dmb_tx_size(RING(t));
}

static uint32_t ring_rx_size(struct transport *t)
{
	return dmb_rx_size(RING(t));
}

const struct transport_ops transport_ring = {
	.name = "ring",
	.tcp_doorbells = true,
	.one_process = false,
	.smcr = false,
	.medium = "shared memory",
	.map = ring_map,
	.unmap = ring_unmap,
	.produce = ring_produce,
	.produce_file = ring_produce_file,
	.consume = ring_consume,
	.rx_flush = ring_rx_flush,
	.rx_busy = ring_rx_busy,
	.readable = ring_readable,
	.space = ring_space,
	.unread = ring_unread,
	.shutdown_wr = ring_shutdown_wr,
	.shutdown_rd = ring_shutdown_rd,
	.close = ring_close,
	.abort = ring_abort,
	.peer_state = ring_peer_state,
	.rx_sleep_begin = ring_rx_sleep_begin,
	.rx_sleep_end = ring_rx_sleep_end,
	.rx_wait = ring_rx_wait,
	.tx_sleep_begin = ring_tx_sleep_begin,
	.tx_sleep_end = ring_tx_sleep_end,
	.drive_begin = tp_no_drive_begin,
	.drive_take = tp_no_drive_take,
	.drive_end = tp_no_drive_end,
	.rx_want_bell = ring_rx_want_bell,
	.rx_bell_asked = ring_rx_bell_asked,
	.bell_begin = ring_bell_begin,
	.bell_end = ring_bell_end,
	.wait_bells = ring_wait_bells,
	.rx_mark = ring_rx_mark,
	.tx_mark = ring_tx_mark,
	.say_attached = ring_say_attached,
	.peer_attached = ring_peer_attached,
	.tx_fence = ring_tx_fence,
	.set_tx_fence = ring_set_tx_fence,
	.stay_tcp = ring_stay_tcp,
	.on_tcp_for_good = ring_on_tcp_for_good,
	.tcp_bells_due = ring_tcp_bells_due,
	.tcp_bells_read = ring_tcp_bells_read,
	.rx_fence = ring_rx_fence,
	.rx_cut_seen = ring_rx_cut_seen,
	.rx_cut_mark = ring_rx_cut_mark,
	.back_offer = tp_no_back_offer,
	.back_say = tp_no_back_say,
	.back_state = tp_no_back_state,
	.back_pending = tp_no_back_pending,
	.back_sent = tp_no_back_sent,
	.holders_add = ring_holders_add,
	.holders = ring_holders,
	.holders_first = ring_holders_first,
	.ever_shared = ring_ever_shared,
	.hold_gen = ring_hold_gen,
	.resync = ring_resync,
	.note_cpu = ring_note_cpu,
	.peer_cpu = ring_peer_cpu,
	.own_cdc = ring_own_cdc,
	.tx_pos = ring_tx_pos,
	.rx_pos = ring_rx_pos,
	.rx_published = ring_rx_published,
	.tx_size = ring_tx_size,
	.rx_size = ring_rx_size,
};

/* The soft backend chosen (or not): its configuration, and the ring readied. */
void soft_mode_start(bool enabled)
{
	soft_config_init(enabled);
	if (enabled)
		dmb_asym_init();
}

void transport_asym_off(void)
{
	dmb_asym_off();
}
