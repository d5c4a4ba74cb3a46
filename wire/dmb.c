/* Soft SMC-D transport: per-connection shared-memory rings (see dmb.h). */
#include "dmb.h"
#include "smc_size.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/single_threaded.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Cursors and flags live in memory shared with another process. */
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "64-bit atomics must be lock-free");
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "32-bit atomics must be lock-free");
_Static_assert(sizeof(_Atomic uint64_t) == 8, "cursor word is 8 bytes");
_Static_assert(sizeof(struct dmb_ctrl) == 2 * DMB_LINE, "ctrl is two lines");
_Static_assert(offsetof(struct dmb_ctrl, cons) == DMB_LINE, "consumer line");
_Static_assert(offsetof(struct dmb_ctrl, tcp_bells) == 40 &&
	       offsetof(struct dmb_ctrl, tcp_bells_read) == DMB_LINE + 40,
	       "doc/soft-ring.md's table");
_Static_assert(offsetof(struct dmb_hdr, rsvd) == 32, "fixed header is 32 bytes");
_Static_assert(offsetof(struct dmb_hdr, ctrl) == DMB_LINE, "ctrl after a line");
_Static_assert(sizeof(struct dmb_hdr) == 7 * DMB_LINE, "header size");
_Static_assert(sizeof(struct dmb_hdr) <= DMB_HDR_SIZE, "header fits its page");

#define FIXED_HDR offsetof(struct dmb_hdr, rsvd)

struct dmb_cursor dmb_cursor_of(uint64_t word)
{
	struct dmb_cursor c = { .wrap = (uint16_t)(word >> 32), .count = (uint32_t)word };

	return c;
}

uint64_t dmb_cursor_word(struct dmb_cursor cur, uint8_t pflags, uint8_t cflags)
{
	return (uint64_t)cur.count | (uint64_t)cur.wrap << 32 |
	       (uint64_t)pflags << 48 | (uint64_t)cflags << 56;
}

static uint8_t word_pflags(uint64_t w) { return (uint8_t)(w >> 48); }
static uint8_t word_cflags(uint64_t w) { return (uint8_t)(w >> 56); }

/*
 * Bytes from older to newer (SMC's cursor difference, doc/soft-ring.md 2.1),
 * or -1 when newer is not within one ring of older: the peer's word is
 * corrupt or hostile.
 */
static long cursor_dist(struct dmb_cursor older, struct dmb_cursor newer, uint32_t n)
{
	if (older.count >= n || newer.count >= n)
		return -1;
	if (newer.wrap == older.wrap)
		return newer.count >= older.count ? (long)(newer.count - older.count) : -1;
	if (newer.wrap == (uint16_t)(older.wrap + 1))
		return newer.count <= older.count ? (long)(n - older.count + newer.count) : -1;
	return -1;
}

static void cursor_add(struct dmb_cursor *c, uint32_t len, uint32_t n)
{
	c->count += len;
	if (c->count >= n) {
		c->wrap++;
		c->count -= n;
	}
}

uint32_t dmb_code_size(uint8_t code)
{
	return smc_code_size(code > SMC_SIZE_CODE_SMCD ? SMC_SIZE_CODE_SMCD : code);
}

uint8_t dmb_size_code(size_t want)
{
	return smc_size_code(want, SMC_SIZE_CODE_SMCD);
}

uint32_t dmb_size_round(size_t want)
{
	return dmb_code_size(dmb_size_code(want));
}

static bool valid_ring_size(uint32_t s)
{
	return s >= DMB_MIN_SIZE && s <= DMB_MAX_SIZE && !(s & (s - 1));
}

void dmb_sizes(size_t ring0, size_t ring1, uint32_t ring[2], uint64_t *total)
{
	ring[0] = dmb_size_round(ring0);
	ring[1] = dmb_size_round(ring1);
	*total = (uint64_t)DMB_HDR_SIZE + ring[0] + ring[1];
}

int dmb_read_ctrl(int fd, struct dmb_ctrl ctrl[2])
{
	const size_t len = 2 * sizeof(struct dmb_ctrl);
	ssize_t n = pread(fd, ctrl, len, offsetof(struct dmb_hdr, ctrl));

	if (n < 0)
		return -errno;
	return n == (ssize_t)len ? 0 : -EPROTO;
}

int dmb_create(size_t ring0, size_t ring1)
{
	struct dmb_hdr h;
	int fd, err;

	memset(&h, 0, FIXED_HDR);
	h.magic = DMB_MAGIC;
	h.version = DMB_VERSION;
	h.hdr_size = DMB_HDR_SIZE;
	dmb_sizes(ring0, ring1, h.ring_size, &h.total_size);

	fd = memfd_create("smc-dmb", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	/* The rest of the header, cursors included, starts as ftruncate's zeroes. */
	if (ftruncate(fd, (off_t)h.total_size) < 0 ||
	    pwrite(fd, &h, FIXED_HDR, 0) != (ssize_t)FIXED_HDR ||
	    /* A peer that could shrink the file would turn our accesses into SIGBUS. */
	    fcntl(fd, F_ADD_SEALS, F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0) {
		err = errno ? errno : EIO;
		close(fd);
		return -err;
	}
	return fd;
}

static bool valid_dir(struct dmb_ctrl *ctl, uint32_t n)
{
	uint64_t p = atomic_load_explicit(&ctl->prod, memory_order_acquire);
	uint64_t q = atomic_load_explicit(&ctl->cons, memory_order_acquire);

	if ((word_pflags(p) & ~DMB_PF_MASK) || (word_cflags(p) & ~DMB_CF_MASK))
		return false;
	/* The consumer has no producer flags. */
	if (word_pflags(q) || (word_cflags(q) & ~DMB_CF_MASK))
		return false;
	return cursor_dist(dmb_cursor_of(q), dmb_cursor_of(p), n) >= 0;
}

static struct dmb_cursor rx_shared(struct dmb_conn *c, uint64_t w);

int dmb_map(int fd, int side, struct dmb_conn *c)
{
	struct dmb_hdr h;
	struct stat st;
	uint8_t *base;
	uint64_t w;
	int seals;

	if (!c || (side != 0 && side != 1))
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EPROTO;
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK))
		return -EPROTO;
	if (st.st_size < (off_t)DMB_HDR_SIZE)
		return -EPROTO;
	/* Read once into private memory: the shared copy may change under us. */
	if (pread(fd, &h, FIXED_HDR, 0) != (ssize_t)FIXED_HDR)
		return -EPROTO;
	if (h.magic != DMB_MAGIC || h.version != DMB_VERSION || h.hdr_size != DMB_HDR_SIZE ||
	    !valid_ring_size(h.ring_size[0]) || !valid_ring_size(h.ring_size[1]) ||
	    h.total_size != (uint64_t)DMB_HDR_SIZE + h.ring_size[0] + h.ring_size[1] ||
	    (uint64_t)st.st_size != h.total_size)
		return -EPROTO;

	base = mmap(NULL, h.total_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		return -errno;
	struct dmb_hdr *sh = (struct dmb_hdr *)base;
	if (!valid_dir(&sh->ctrl[0], h.ring_size[0]) || !valid_dir(&sh->ctrl[1], h.ring_size[1])) {
		munmap(base, h.total_size);
		return -EPROTO;
	}

	c->base = base;
	c->map_size = h.total_size;
	c->side = side;
	uint8_t *ring[2] = { base + DMB_HDR_SIZE, base + DMB_HDR_SIZE + h.ring_size[0] };
	c->tx.ctrl = &sh->ctrl[side];
	c->tx.cons_read = &sh->rd[side].cons_read;
	c->rx.cons_read = &sh->rd[!side].cons_read;
	c->solo_calls = &sh->rd[!side].solo_calls;
	c->tx.data = ring[side];
	c->tx.size = h.ring_size[side];
	c->rx.ctrl = &sh->ctrl[!side];
	c->rx.data = ring[!side];
	c->rx.size = h.ring_size[!side];

	/*
	 * Our own cursors are taken over once (a re-attach after exec continues
	 * where the last holder stopped) and kept privately from now on.
	 */
	w = atomic_load_explicit(&c->tx.ctrl->prod, memory_order_acquire);
	c->tx.own = dmb_cursor_of(w);
	c->tx.own_pflags = word_pflags(w);
	c->tx.own_cflags = word_cflags(w);
	w = atomic_load_explicit(&c->rx.ctrl->cons, memory_order_acquire);
	c->rx.own = rx_shared(c, w);
	c->rx.own_pflags = 0;
	c->rx.own_cflags = word_cflags(w);
	c->tx.peer_word = atomic_load_explicit(&c->tx.ctrl->cons, memory_order_acquire);
	c->rx.peer_word = atomic_load_explicit(&c->rx.ctrl->prod, memory_order_acquire);
	c->rx.unpublished = 0;
	/* Validated above, but the peer may have moved since; recheck ours. */
	if (dmb_readable(c) < 0 || dmb_space(c) < 0) {
		dmb_unmap(c);
		return -EPROTO;
	}
	return 0;
}

void dmb_unmap(struct dmb_conn *c)
{
	if (c && c->base) {
		munmap(c->base, c->map_size);
		memset(c, 0, sizeof(*c));
	}
}

uint32_t dmb_tx_size(const struct dmb_conn *c) { return c->tx.size; }
uint32_t dmb_rx_size(const struct dmb_conn *c) { return c->rx.size; }

static void publish_tx(struct dmb_conn *c)
{
	atomic_store_explicit(&c->tx.ctrl->prod,
			      dmb_cursor_word(c->tx.own, c->tx.own_pflags, c->tx.own_cflags),
			      memory_order_release);
}

static void publish_rx(struct dmb_conn *c)
{
	atomic_store_explicit(&c->rx.ctrl->cons,
			      dmb_cursor_word(c->rx.own, 0, c->rx.own_cflags),
			      memory_order_release);
}

/* Unconsumed bytes in our tx ring per the peer's consumer word w. */
static long tx_used(struct dmb_conn *c, uint64_t w)
{
	return cursor_dist(dmb_cursor_of(w), c->tx.own, c->tx.size);
}

static long rx_avail(struct dmb_conn *c, uint64_t w)
{
	return cursor_dist(c->rx.own, dmb_cursor_of(w), c->rx.size);
}

/*
 * The end's consumer cursor as its holders left it: the published word w,
 * or the read cursor when that is further and still behind the producer
 * (a value outside that range is ignored: it is never trusted further).
 */
static struct dmb_cursor rx_shared(struct dmb_conn *c, uint64_t w)
{
	struct dmb_cursor pub = dmb_cursor_of(w);
	struct dmb_cursor read = dmb_cursor_of(atomic_load_explicit(c->rx.cons_read,
								    memory_order_acquire));
	struct dmb_cursor prod = dmb_cursor_of(atomic_load_explicit(&c->rx.ctrl->prod,
								    memory_order_acquire));

	if (cursor_dist(pub, read, c->rx.size) > 0 && cursor_dist(read, prod, c->rx.size) >= 0)
		return read;
	return pub;
}

/*
 * Our cursors as another holder of the end (fork, spawn) may have moved
 * them: the private ones are good only while the end is ours alone and no
 * holder came or went since our last call.
 */
static bool own_current(struct dmb_conn *c, const struct dmb_ring *r)
{
	return atomic_load_explicit(&c->tx.ctrl->holders, memory_order_relaxed) <= 1 &&
	       atomic_load_explicit(&c->tx.ctrl->hold_gen, memory_order_acquire) == r->gen;
}

static struct dmb_cursor tx_view(struct dmb_conn *c)
{
	if (own_current(c, &c->tx))
		return c->tx.own;
	return dmb_cursor_of(atomic_load_explicit(&c->tx.ctrl->prod, memory_order_acquire));
}

/* As resync_rx() would take it, without taking it. */
static struct dmb_cursor rx_view(struct dmb_conn *c)
{
	struct dmb_cursor shared;
	long ahead;

	if (own_current(c, &c->rx))
		return c->rx.own;
	shared = rx_shared(c, atomic_load_explicit(&c->rx.ctrl->cons, memory_order_acquire));
	ahead = cursor_dist(shared, c->rx.own, c->rx.size);
	return ahead < 0 || (uint64_t)ahead > c->rx.unpublished ? shared : c->rx.own;
}

long dmb_readable(struct dmb_conn *c)
{
	long n = cursor_dist(rx_view(c),
			     dmb_cursor_of(atomic_load_explicit(&c->rx.ctrl->prod,
								memory_order_acquire)),
			     c->rx.size);

	return n < 0 ? -EPROTO : n;
}

long dmb_unread(struct dmb_conn *c)
{
	long n = cursor_dist(dmb_cursor_of(atomic_load_explicit(&c->tx.ctrl->cons,
								 memory_order_acquire)),
			     tx_view(c), c->tx.size);

	return n < 0 ? -EPROTO : n;
}

long dmb_space(struct dmb_conn *c)
{
	long n = dmb_unread(c);

	return n < 0 ? n : (long)c->tx.size - n;
}

/*
 * A write of up to a quarter of the ring goes whole or waits, as TCP's do
 * for small writes: two processes writing records to one socket (a
 * forked server) would otherwise find them cut and interleaved.  A larger
 * write waits for a quarter of the ring and goes in parts.
 */
static uint32_t tx_granule(const struct dmb_conn *c)
{
	return c->tx.size / 4;
}

long dmb_writable(struct dmb_conn *c)
{
	long n = dmb_space(c);

	return n < 0 || n >= (long)tx_granule(c) ? n : 0;
}

/* Sum of iov lengths, saturated at max (all we can move anyway). */
static size_t iov_total(const struct iovec *iov, int iovcnt, size_t max)
{
	size_t t = 0;

	for (int i = 0; i < iovcnt && t < max; i++)
		t += iov[i].iov_len < max - t ? iov[i].iov_len : max - t;
	return t;
}

/* Copy len bytes between iov and the ring at off, wrapping at n. */
static void ring_copy(uint8_t *ring, uint32_t n, uint32_t off, const struct iovec *iov,
		      size_t len, bool to_ring)
{
	size_t done = 0, in_iov = 0;

	while (done < len) {
		size_t chunk = iov->iov_len - in_iov;

		if (!chunk) {
			iov++;
			in_iov = 0;
			continue;
		}
		if (chunk > len - done)
			chunk = len - done;
		if (chunk > n - off)
			chunk = n - off;
		uint8_t *p = (uint8_t *)iov->iov_base + in_iov;
		if (to_ring)
			memcpy(ring + off, p, chunk);
		else
			memcpy(p, ring + off, chunk);
		done += chunk;
		in_iov += chunk;
		off += (uint32_t)chunk;
		if (off == n)
			off = 0;
	}
}

/* len bytes of file fd from off into the ring at its offset (one or two pieces): read, or -errno. */
static ssize_t ring_read_file(uint8_t *ring, uint32_t n, uint32_t off, int fd, off_t at,
			      size_t len)
{
	struct iovec v[2] = { { ring + off, len } };
	int cnt = 1;
	ssize_t r;

	if (len > n - off) {
		v[0].iov_len = n - off;
		v[1] = (struct iovec){ ring, len - (n - off) };
		cnt = 2;
	}
	do {
		r = preadv(fd, v, cnt, at);
	} while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : r;
}

static _Atomic bool asym_ok;

static long membarrier_cmd(int cmd)
{
	return syscall(__NR_membarrier, cmd, 0, 0);
}

static void futex_wake_all(_Atomic uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* After a change the consumer of ring r waits for, and a full fence. */
static void wake_fwaiters(struct dmb_ring *r)
{
	if (atomic_load_explicit(&r->ctrl->cons_fwait, memory_order_relaxed)) {
		atomic_fetch_add_explicit(&r->ctrl->cons_fseq, 1, memory_order_relaxed);
		futex_wake_all(&r->ctrl->cons_fseq);
	}
}

/* Our state changed: the peer's sleepers on tx, our other threads' on rx. */
static void wake_state(struct dmb_conn *c)
{
	atomic_thread_fence(memory_order_seq_cst);
	wake_fwaiters(&c->tx);
	wake_fwaiters(&c->rx);
}

static void asym_register(void)
{
	long q = membarrier_cmd(MEMBARRIER_CMD_QUERY);

	atomic_store(&asym_ok, q > 0 && (q & MEMBARRIER_CMD_GLOBAL_EXPEDITED) &&
		     (q & MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) &&
		     membarrier_cmd(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0);
}

/* A child of fork has a new mm, registered or not: ask again. */
static _Atomic bool asym_never;            /* dmb_asym_off() was called */

static void asym_fork_child(void)
{
	atomic_store(&asym_ok, false);
	if (!atomic_load(&asym_never))
		asym_register();
}

void dmb_asym_off(void)
{
	atomic_store(&asym_never, true);
	atomic_store(&asym_ok, false);
}

bool dmb_asym_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	if (pthread_once(&once, asym_register) == 0 && atomic_load(&asym_ok))
		pthread_atfork(NULL, NULL, asym_fork_child);
	return atomic_load(&asym_ok);
}

#define ASYM_AFTER 8u

/*
 * Only in a process of one thread: a second thread could be going to sleep
 * on the same ring between our decision and our store.
 */
void dmb_rx_busy(struct dmb_conn *c)
{
	if (c->rx.asym || ++c->rx.busy < ASYM_AFTER || !__libc_single_threaded ||
	    !atomic_load_explicit(&asym_ok, memory_order_relaxed))
		return;
	c->rx.asym = true;
	atomic_store_explicit(&c->rx.ctrl->cons_asym, 1, memory_order_relaxed);
}

/* The flag of a sleeper to wake, for one waker only: how to wake it, or 0. */
static uint32_t take_sleeper(_Atomic uint32_t *flag)
{
	if (!atomic_load_explicit(flag, memory_order_relaxed))
		return 0;
	return atomic_exchange_explicit(flag, 0, memory_order_relaxed);
}

/*
 * A sleeper says how to wake it.  A second sleeper that finds another's bell
 * turns the flag into DMB_BELL_TCP, which every sleeper also waits for.
 */
static void set_sleeper(_Atomic uint32_t *flag, uint32_t bell)
{
	uint32_t cur = atomic_load_explicit(flag, memory_order_relaxed);

	if (bell < DMB_BELL_TCP)
		bell = DMB_BELL_TCP;
	while (!atomic_compare_exchange_weak_explicit(flag, &cur,
						      cur == 0 || cur == bell ? bell : DMB_BELL_TCP,
						      memory_order_relaxed, memory_order_relaxed))
		;
}

uint32_t dmb_wake_merge(uint32_t a, uint32_t b)
{
	if (!a || a == b)
		return b;
	return b ? DMB_BELL_TCP : a;
}

/* What a produce copies: the caller's iovecs, or a file's bytes read straight into the ring. */
struct tx_source {
	const struct iovec *iov;
	int iovcnt;
	int fd;                  /* -1: iov */
	off_t off;
	size_t len;              /* of the file */
};

static ssize_t produce(struct dmb_conn *c, const struct tx_source *src, unsigned flags,
		       uint32_t *wake)
{
	uint64_t peer, rxp;
	size_t total;
	long used;
	uint32_t len;
	uint8_t pflags;

	if (wake)
		*wake = 0;
	if (src->fd < 0 && (src->iovcnt < 0 || (src->iovcnt > 0 && !src->iov)))
		return -EINVAL;
	total = src->fd < 0 ? iov_total(src->iov, src->iovcnt, c->tx.size)
			    : src->len < c->tx.size ? src->len : c->tx.size;
	/* the peer's close or abort also shows in its producer word */
	rxp = atomic_load_explicit(&c->rx.ctrl->prod, memory_order_relaxed);
	peer = c->tx.peer_word;
	used = tx_used(c, peer);
	if (used < 0 || c->tx.size - (size_t)used < total || !total ||
	    word_cflags(rxp) & (DMB_CF_ABORT | DMB_CF_CLOSED | DMB_CF_DONE_READING)) {
		peer = atomic_load_explicit(&c->tx.ctrl->cons, memory_order_acquire);
		c->tx.peer_word = peer;
		used = tx_used(c, peer);
	}
	if ((word_cflags(peer) | word_cflags(rxp) | c->tx.own_cflags | c->rx.own_cflags) &
	    DMB_CF_ABORT)
		return -ECONNRESET;
	if (c->tx.own_cflags & (DMB_CF_DONE_WRITING | DMB_CF_CLOSED) ||
	    (word_cflags(peer) | word_cflags(rxp)) & (DMB_CF_DONE_READING | DMB_CF_CLOSED))
		return -EPIPE;
	if (used < 0)
		return -EPROTO;
	if (!total)
		return 0;
	len = c->tx.size - (uint32_t)used;
	pflags = c->tx.own_pflags & ~(DMB_PF_WRITE_BLOCKED | DMB_PF_URG_PRESENT | DMB_PF_URG_PENDING);
	if (len < (total < tx_granule(c) ? total : tx_granule(c))) {
		/* Tell the consumer, as SMC's write_blocked does, then give up. */
		if (!(c->tx.own_pflags & DMB_PF_WRITE_BLOCKED)) {
			c->tx.own_pflags |= DMB_PF_WRITE_BLOCKED;
			publish_tx(c);
		}
		return -EAGAIN;
	}
	if (len >= total)
		len = (uint32_t)total;
	else
		pflags |= DMB_PF_WRITE_BLOCKED;
	if (flags & DMB_URGENT)
		/* The urgent byte is the one before the cursor that carries the flag. */
		pflags |= len == total ? DMB_PF_URG_PRESENT : DMB_PF_URG_PENDING;

	if (src->fd < 0) {
		ring_copy(c->tx.data, c->tx.size, c->tx.own.count, src->iov, len, true);
	} else {
		ssize_t got = ring_read_file(c->tx.data, c->tx.size, c->tx.own.count, src->fd,
					     src->off, len);

		if (got <= 0)
			return got;          /* the end of the file, or its error: nothing sent */
		if ((uint32_t)got < len)
			pflags &= ~DMB_PF_WRITE_BLOCKED;     /* the file ran short, not the room */
		len = (uint32_t)got;
	}
	cursor_add(&c->tx.own, len, c->tx.size);
	c->tx.own_pflags = pflags;
	publish_tx(c);
	if (wake) {
		/* Pairs with the fence or membarrier in dmb_rx_sleep_begin. */
		if (atomic_load_explicit(&c->tx.ctrl->cons_asym, memory_order_relaxed) &&
		    atomic_load_explicit(&asym_ok, memory_order_relaxed))
			atomic_signal_fence(memory_order_seq_cst);
		else
			atomic_thread_fence(memory_order_seq_cst);
		*wake = take_sleeper(&c->tx.ctrl->cons_sleeping);
		wake_fwaiters(&c->tx);
	}
	return len;
}

/* Our consumer cursor is the end's: it is ours alone, or we hold its lock. */
static void flush_rx(struct dmb_conn *c, uint32_t *wake)
{
	c->rx.unpublished = 0;
	publish_rx(c);
	if (wake) {
		/* Pairs with the fence in dmb_tx_sleep_begin. */
		atomic_thread_fence(memory_order_seq_cst);
		*wake = take_sleeper(&c->rx.ctrl->prod_sleeping);
	}
}

static int end_check(struct dmb_conn *c, struct dmb_ring *r, bool tx);
static void end_unlock(_Atomic uint32_t *w);

/*
 * A call that finds the end its process's alone works without the lock,
 * counted in solo_calls from before it looks at the holders until it is
 * done; a process that counts itself a holder (pidfd_getfd, fork) then
 * waits for those calls (dmb_holders_add).  Both the count's increment and
 * the holders' are seq_cst, and so are the loads after them: either the
 * call sees the new holder and takes the lock, or the holder sees the call.
 */
static int solo_check(struct dmb_conn *c, struct dmb_ring *r, bool tx)
{
	int locked;

	atomic_fetch_add_explicit(c->solo_calls, 1, memory_order_seq_cst);
	locked = end_check(c, r, tx);
	if (locked)
		atomic_fetch_sub_explicit(c->solo_calls, 1, memory_order_release);
	return locked;
}

static void solo_done(struct dmb_conn *c, int locked)
{
	if (!locked)
		atomic_fetch_sub_explicit(c->solo_calls, 1, memory_order_release);
}

void dmb_rx_flush(struct dmb_conn *c, uint32_t *wake)
{
	/* another holder may have consumed since: never publish a cursor back */
	int locked = solo_check(c, &c->rx, false);

	if (wake)
		*wake = 0;
	if (locked < 0)
		return;
	flush_rx(c, wake);
	if (locked > 0)
		end_unlock(&c->rx.ctrl->cons_lock);
	solo_done(c, locked);
}

static ssize_t consume(struct dmb_conn *c, const struct iovec *iov, int iovcnt,
		       unsigned flags, uint32_t *wake)
{
	uint64_t peer;
	size_t total;
	long avail;

	if (wake)
		*wake = 0;
	if (iovcnt < 0 || (iovcnt > 0 && !iov))
		return -EINVAL;
	total = iov_total(iov, iovcnt, c->rx.size);
	peer = c->rx.peer_word;
	avail = rx_avail(c, peer);
	if (avail < 0 || (size_t)avail < total || !total) {
		peer = atomic_load_explicit(&c->rx.ctrl->prod, memory_order_acquire);
		c->rx.peer_word = peer;
		avail = rx_avail(c, peer);
	}
	if ((word_cflags(peer) | c->rx.own_cflags | c->tx.own_cflags) & DMB_CF_ABORT ||
	    word_cflags(atomic_load_explicit(&c->tx.ctrl->cons, memory_order_relaxed)) & DMB_CF_ABORT)
		return -ECONNRESET;
	if (c->rx.own_cflags & (DMB_CF_DONE_READING | DMB_CF_CLOSED))
		return 0;
	if (avail < 0)
		return -EPROTO;
	if (!total)
		return 0;
	if (!avail)
		/* Flags and cursor come from one word: no data can follow the EOF. */
		return word_cflags(peer) & (DMB_CF_DONE_WRITING | DMB_CF_CLOSED) ? 0 : -EAGAIN;
	if ((size_t)avail > total)
		avail = (long)total;

	ring_copy(c->rx.data, c->rx.size, c->rx.own.count, iov, (size_t)avail, false);
	if (!(flags & DMB_PEEK)) {
		cursor_add(&c->rx.own, (uint32_t)avail, c->rx.size);
		atomic_store_explicit(c->rx.cons_read, dmb_cursor_word(c->rx.own, 0, 0),
				      memory_order_release);
		c->rx.unpublished += (uint32_t)avail;
		if (c->rx.unpublished >= c->rx.size / 4 || word_pflags(peer) & DMB_PF_WRITE_BLOCKED)
			flush_rx(c, wake);
	}
	return avail;
}

/* ---- one end held by several processes ---- */

uint32_t dmb_holders(const struct dmb_conn *c)
{
	return atomic_load(&c->tx.ctrl->holders);
}

static long long mono_ns(void);
#define SOLO_WAIT_NS 200000000LL

uint32_t dmb_holders_add(struct dmb_conn *c, int delta)
{
	uint32_t old = atomic_fetch_add(&c->tx.ctrl->holders, (uint32_t)delta);
	long long end = 0;

	atomic_fetch_add(&c->tx.ctrl->hold_gen, 1);
	/* a new holder: the calls that found the end alone finish first (solo_check) */
	while (delta > 0 && atomic_load_explicit(c->solo_calls, memory_order_seq_cst)) {
		if (!end)
			end = mono_ns() + SOLO_WAIT_NS;
		else if (mono_ns() > end)
			break;               /* one stopped inside a copy: go on */
		sched_yield();
	}
	return old;
}

/*
 * A process that dies inside gives the lock up with its life; one that
 * lives holds it only for one copy, so a short spin, then yields.  The word
 * is in shared memory: a value that is no pid is taken over, and a holder
 * that keeps it for END_LOCK_MAX_NS (stopped inside a copy, or a hostile
 * peer) fails the call.
 */
#define END_LOCK_MAX_NS 2000000000LL
#define PID_LIMIT 4194304u        /* PID_MAX_LIMIT */

static long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static bool end_lock(_Atomic uint32_t *w)
{
	uint32_t me = (uint32_t)getpid();
	long long end = 0;

	for (unsigned i = 0;; i++) {
		uint32_t cur = 0;

		if (atomic_compare_exchange_weak_explicit(w, &cur, me, memory_order_acquire,
							  memory_order_relaxed))
			return true;
		if (i < 100)
			continue;
		if (cur > PID_LIMIT || (cur != me && kill((pid_t)cur, 0) < 0 && errno == ESRCH)) {
			atomic_compare_exchange_strong(w, &cur, 0);
			continue;
		}
		if (!end)
			end = mono_ns() + END_LOCK_MAX_NS;
		else if (mono_ns() > end)
			return false;
		sched_yield();
	}
}

static void end_unlock(_Atomic uint32_t *w)
{
	atomic_store_explicit(w, 0, memory_order_release);
}

/* Another holder may have produced: continue from the shared cursor. */
static void resync_tx(struct dmb_conn *c)
{
	uint64_t w = atomic_load_explicit(&c->tx.ctrl->prod, memory_order_acquire);

	c->tx.own = dmb_cursor_of(w);
	c->tx.own_pflags = word_pflags(w);
	c->tx.own_cflags |= word_cflags(w);
}

/*
 * Another holder may have consumed: take the shared cursor, unless ours is
 * ahead of it by no more than what we consumed and did not publish yet.
 */
static void resync_rx(struct dmb_conn *c)
{
	uint64_t w = atomic_load_explicit(&c->rx.ctrl->cons, memory_order_acquire);
	struct dmb_cursor shared = rx_shared(c, w);
	long ahead = cursor_dist(shared, c->rx.own, c->rx.size);

	if (ahead < 0 || (uint64_t)ahead > c->rx.unpublished) {
		c->rx.own = shared;
		c->rx.unpublished = 0;
	}
	c->rx.own_cflags |= word_cflags(w);
}

/*
 * 0 if the end is ours alone, 1 if shared and locked (resynced either way
 * if it is or was shared since our last call), -1 if the lock was not had.
 */
static int end_check(struct dmb_conn *c, struct dmb_ring *r, bool tx)
{
	uint32_t gen = atomic_load_explicit(&c->tx.ctrl->hold_gen, memory_order_seq_cst);
	bool shared = atomic_load_explicit(&c->tx.ctrl->holders, memory_order_seq_cst) > 1;

	if (!shared && gen == r->gen)
		return 0;
	if (shared && !end_lock(tx ? &r->ctrl->prod_lock : &r->ctrl->cons_lock))
		return -1;
	if (tx)
		resync_tx(c);
	else
		resync_rx(c);
	r->gen = gen;
	return shared;
}

static ssize_t produce_locked(struct dmb_conn *c, const struct tx_source *src, unsigned flags,
			      uint32_t *wake)
{
	int locked = solo_check(c, &c->tx, true);
	ssize_t r;

	if (locked < 0)
		return -EPROTO;
	r = produce(c, src, flags, wake);
	if (locked)
		end_unlock(&c->tx.ctrl->prod_lock);
	solo_done(c, locked);
	return r;
}

ssize_t dmb_produce(struct dmb_conn *c, const struct iovec *iov, int iovcnt,
		    unsigned flags, uint32_t *wake)
{
	const struct tx_source src = { .iov = iov, .iovcnt = iovcnt, .fd = -1 };

	return produce_locked(c, &src, flags, wake);
}

ssize_t dmb_produce_file(struct dmb_conn *c, int fd, off_t off, size_t len, uint32_t *wake)
{
	const struct tx_source src = { .fd = fd, .off = off, .len = len };

	if (fd < 0 || off < 0)
		return -EINVAL;
	return produce_locked(c, &src, 0, wake);
}

ssize_t dmb_consume(struct dmb_conn *c, const struct iovec *iov, int iovcnt,
		    unsigned flags, uint32_t *wake)
{
	int locked = solo_check(c, &c->rx, false);
	uint32_t more = 0;
	ssize_t r;

	if (locked < 0)
		return -EPROTO;
	r = consume(c, iov, iovcnt, flags, wake);
	if (!locked) {
		solo_done(c, locked);
		return r;
	}
	/* the next holder starts from the shared cursor: publish it all */
	if (c->rx.unpublished)
		flush_rx(c, wake ? &more : NULL);
	if (wake)
		*wake = dmb_wake_merge(*wake, more);
	end_unlock(&c->rx.ctrl->cons_lock);
	return r;
}

/*
 * A state change publishes both our cursor words: from the shared cursors
 * when another process holds the end too, so that no word goes back.
 */
static void state_change(struct dmb_conn *c, uint8_t txf, uint8_t rxf)
{
	int tx_locked = solo_check(c, &c->tx, true);
	int rx_locked = solo_check(c, &c->rx, false);

	c->tx.own_cflags |= txf;
	c->rx.own_cflags |= rxf;
	if (txf)
		publish_tx(c);
	if (rxf)
		publish_rx(c);
	if (rx_locked > 0)
		end_unlock(&c->rx.ctrl->cons_lock);
	if (tx_locked > 0)
		end_unlock(&c->tx.ctrl->prod_lock);
	solo_done(c, rx_locked);
	solo_done(c, tx_locked);
	if (txf | rxf)
		wake_state(c);
}

void dmb_resync(struct dmb_conn *c)
{
	state_change(c, 0, 0);
}

void dmb_shutdown_wr(struct dmb_conn *c)
{
	state_change(c, DMB_CF_DONE_WRITING, 0);
}

/* Also in our producer word, which the peer's producer looks at each time. */
void dmb_shutdown_rd(struct dmb_conn *c)
{
	state_change(c, DMB_CF_DONE_READING, DMB_CF_DONE_READING);
}

void dmb_close(struct dmb_conn *c)
{
	state_change(c, DMB_CF_DONE_WRITING | DMB_CF_CLOSED, DMB_CF_DONE_READING | DMB_CF_CLOSED);
}

void dmb_abort(struct dmb_conn *c)
{
	state_change(c, DMB_CF_ABORT, DMB_CF_ABORT);
}

uint64_t dmb_tx_pos(const struct dmb_conn *c)
{
	return (uint64_t)c->tx.own.wrap * c->tx.size + c->tx.own.count;
}

uint64_t dmb_rx_pos(const struct dmb_conn *c)
{
	return (uint64_t)c->rx.own.wrap * c->rx.size + c->rx.own.count;
}

bool dmb_rx_published(const struct dmb_conn *c)
{
	return !c->rx.unpublished;
}

struct dmb_cdc dmb_own_cdc(struct dmb_conn *c)
{
	uint64_t p = atomic_load_explicit(&c->tx.ctrl->prod, memory_order_relaxed);
	uint64_t q = atomic_load_explicit(&c->rx.ctrl->cons, memory_order_relaxed);
	struct dmb_cdc d = {
		.prod = dmb_cursor_of(p), .cons = dmb_cursor_of(q),
		.pflags = word_pflags(p) & DMB_PF_MASK,
		.cflags = (word_cflags(p) | word_cflags(q)) & DMB_CF_MASK,
	};

	return d;
}

unsigned dmb_peer_state(struct dmb_conn *c)
{
	return (word_cflags(atomic_load_explicit(&c->rx.ctrl->prod, memory_order_acquire)) |
		word_cflags(atomic_load_explicit(&c->tx.ctrl->cons, memory_order_acquire))) &
	       DMB_CF_MASK;
}

unsigned dmb_peer_pflags(struct dmb_conn *c)
{
	return word_pflags(atomic_load_explicit(&c->rx.ctrl->prod, memory_order_acquire)) &
	       DMB_PF_MASK;
}

/*
 * A sleeper announced (cons_sleeping or cons_fwait): order that against the
 * producer's publication, then true if there is no need to sleep after all.
 */
static bool rx_sleep_ordered(struct dmb_conn *c)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&c->rx.ctrl->cons_asym, memory_order_relaxed)) {
		/* from now on producers fence again; the one running may not have seen it */
		c->rx.asym = false;
		atomic_store_explicit(&c->rx.ctrl->cons_asym, 0, memory_order_relaxed);
		if (!atomic_load_explicit(&asym_ok, memory_order_relaxed) ||
		    membarrier_cmd(MEMBARRIER_CMD_GLOBAL_EXPEDITED)) {
			/* cannot happen once registered; a nap lets any store land */
			struct timespec nap = { 0, 1000000 };

			nanosleep(&nap, NULL);
			return true;
		}
	}
	uint64_t p = atomic_load_explicit(&c->rx.ctrl->prod, memory_order_acquire);
	if (rx_avail(c, p) != 0 || word_cflags(p) ||
	    word_cflags(atomic_load_explicit(&c->tx.ctrl->cons, memory_order_acquire)) & DMB_CF_ABORT)
		return true;
	return false;
}

bool dmb_rx_sleep_begin(struct dmb_conn *c, uint32_t *wake, uint32_t bell)
{
	if (c->rx.unpublished)
		dmb_rx_flush(c, wake);
	else if (wake)
		*wake = false;
	c->rx.busy = 0;
	set_sleeper(&c->rx.ctrl->cons_sleeping, bell);
	return rx_sleep_ordered(c);
}

int dmb_rx_futex_wait(struct dmb_conn *c, const struct timespec *timeout)
{
	_Atomic uint32_t *word = &c->rx.ctrl->cons_fseq;
	uint32_t seq = atomic_load_explicit(word, memory_order_relaxed);
	long r = 0;
	int err = 0;

	c->rx.busy = 0;
	atomic_fetch_add_explicit(&c->rx.ctrl->cons_fwait, 1, memory_order_relaxed);
	if (!rx_sleep_ordered(c)) {
		r = syscall(SYS_futex, word, FUTEX_WAIT, seq, timeout, NULL, 0);
		err = errno;
	}
	atomic_fetch_sub_explicit(&c->rx.ctrl->cons_fwait, 1, memory_order_relaxed);
	/* EAGAIN: the word moved on before we slept, a wake-up */
	return r < 0 && err != EAGAIN ? -err : 0;
}

void dmb_rx_sleep_end(struct dmb_conn *c)
{
	atomic_store_explicit(&c->rx.ctrl->cons_sleeping, 0, memory_order_relaxed);
}

bool dmb_tx_sleep_begin(struct dmb_conn *c, size_t want, uint32_t bell)
{
	set_sleeper(&c->tx.ctrl->prod_sleeping, bell);
	atomic_thread_fence(memory_order_seq_cst);
	uint64_t q = atomic_load_explicit(&c->tx.ctrl->cons, memory_order_acquire);
	/* the end's cursor: another holder may have produced since our last call */
	long used = cursor_dist(dmb_cursor_of(q), tx_view(c), c->tx.size);

	/* a write goes once a quarter of the ring is free (produce) */
	if (want < tx_granule(c))
		want = tx_granule(c);
	if (want > c->tx.size)
		want = c->tx.size;
	if (used < 0 || c->tx.size - (size_t)used >= want || word_cflags(q) ||
	    word_cflags(atomic_load_explicit(&c->rx.ctrl->prod, memory_order_acquire)) & DMB_CF_ABORT)
		return true;
	return false;
}

void dmb_tx_sleep_end(struct dmb_conn *c)
{
	atomic_store_explicit(&c->tx.ctrl->prod_sleeping, 0, memory_order_relaxed);
}

/* ---- doorbells against the peer's close ---- */

#define BELL_WAIT_NS 20000000LL

bool dmb_bell_begin(struct dmb_conn *c)
{
	atomic_fetch_add_explicit(&c->tx.ctrl->ringing, 1, memory_order_seq_cst);
	if (word_cflags(atomic_load_explicit(&c->tx.ctrl->cons, memory_order_seq_cst)) &
	    DMB_CF_CLOSED) {
		atomic_fetch_sub_explicit(&c->tx.ctrl->ringing, 1, memory_order_release);
		return false;
	}
	/* counted before it goes: a reader that sees it not due finds nothing */
	atomic_fetch_add_explicit(&c->tx.ctrl->tcp_bells, 1, memory_order_seq_cst);
	return true;
}

bool dmb_tcp_bells_due(struct dmb_conn *c)
{
	uint32_t rung = atomic_load_explicit(&c->rx.ctrl->tcp_bells, memory_order_seq_cst);

	return (int32_t)(rung - atomic_load_explicit(&c->rx.ctrl->tcp_bells_read,
						     memory_order_relaxed)) > 0;
}

bool dmb_tcp_bells_read(struct dmb_conn *c, uint32_t n)
{
	uint32_t read = atomic_fetch_add_explicit(&c->rx.ctrl->tcp_bells_read, n,
						  memory_order_relaxed) + n;
	/* each bell is counted before it is sent, so it is seen after its byte came */
	uint32_t rung = atomic_load_explicit(&c->rx.ctrl->tcp_bells, memory_order_seq_cst);

	return (int32_t)(read - rung) <= 0;
}

void dmb_bell_end(struct dmb_conn *c)
{
	atomic_fetch_sub_explicit(&c->tx.ctrl->ringing, 1, memory_order_release);
}

void dmb_wait_bells(struct dmb_conn *c)
{
	long long end = 0;

	/* our CLOSED (dmb_close) before the peer's count: one of us sees the other */
	atomic_thread_fence(memory_order_seq_cst);
	while (atomic_load_explicit(&c->rx.ctrl->ringing, memory_order_acquire)) {
		if (!end)
			end = mono_ns() + BELL_WAIT_NS;
		else if (mono_ns() > end)
			break;
		sched_yield();
	}
}

static bool fence_of(_Atomic uint64_t *word, uint64_t *bytes)
{
	uint64_t f = atomic_load_explicit(word, memory_order_seq_cst);

	*bytes = f & ~(DMB_FENCE_VALID | DMB_FENCE_NEVER);
	return f & DMB_FENCE_VALID;
}

bool dmb_tx_fence(struct dmb_conn *c, uint64_t *bytes)
{
	return fence_of(&c->tx.ctrl->fence, bytes);
}

bool dmb_rx_fence(struct dmb_conn *c, uint64_t *bytes)
{
	return fence_of(&c->rx.ctrl->fence, bytes);
}

bool dmb_fence_set(struct dmb_conn *c, uint64_t bytes)
{
	uint64_t f = 0;

	if (atomic_compare_exchange_strong_explicit(&c->tx.ctrl->fence, &f, DMB_FENCE_VALID | bytes,
						    memory_order_seq_cst, memory_order_seq_cst))
		return true;
	return f & DMB_FENCE_VALID;
}

static bool never_cut(_Atomic uint64_t *word)
{
	uint64_t f = 0;

	return atomic_compare_exchange_strong(word, &f, DMB_FENCE_NEVER) || !(f & DMB_FENCE_VALID);
}

bool dmb_on_tcp_for_good(const struct dmb_conn *c)
{
	return atomic_load(&c->tx.ctrl->fence) == DMB_FENCE_NEVER &&
	       atomic_load(&c->rx.ctrl->fence) == DMB_FENCE_NEVER;
}

bool dmb_stay_tcp(struct dmb_conn *c)
{
	bool tx = never_cut(&c->tx.ctrl->fence);

	return never_cut(&c->rx.ctrl->fence) && tx;
}
