/*
 * The sockets the soft data path tracks: a flat table indexed by fd, one
 * load per hook call for the fds it does not track.
 *
 * struct sconn memory is never given back to malloc, only recycled, so a
 * thread that loads a pointer just as another closes the fd touches a valid
 * object; it then sees that the slot changed and lets go.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/single_threaded.h>

#include "conn.h"

#define FDTAB_MAX (1 << 20)
#define POOL_BATCH 64

static _Atomic(struct sconn *) *tab;
static int tab_size;
static _Atomic int tab_high;           /* highest fd tracked so far, plus one */
static pthread_mutex_t tab_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sconn *free_list;
_Atomic long fd_tracked;

static bool tab_init(void)
{
	struct rlimit rl;
	size_t n = FDTAB_MAX;
	void *p;

	if (tab)
		return true;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_max != RLIM_INFINITY && rl.rlim_max < n)
		n = rl.rlim_max;
	/* Untouched pages cost nothing. */
	p = mmap(NULL, n * sizeof(*tab), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return false;
	tab_size = (int)n;
	atomic_store(&tab, (_Atomic(struct sconn *) *)p);
	return true;
}

static struct sconn *sconn_alloc(void)
{
	struct sconn *sc;

	if (!free_list) {
		struct sconn *batch = calloc(POOL_BATCH, sizeof(*batch));

		if (!batch)
			return NULL;
		for (int i = 0; i < POOL_BATCH; i++) {
			atomic_init(&batch[i].freed, true);
			batch[i].free_next = free_list;
			free_list = &batch[i];
		}
	}
	sc = free_list;
	free_list = sc->free_next;
	return sc;
}

struct sconn *fd_get(int fd)
{
	_Atomic(struct sconn *) *t = atomic_load_explicit(&tab, memory_order_acquire);
	struct sconn *sc;

	if (!t || fd < 0 || fd >= tab_size)
		return NULL;
	for (;;) {
		sc = atomic_load_explicit(&t[fd], memory_order_acquire);
		if (!sc)
			return NULL;
		atomic_fetch_add_explicit(&sc->refs, 1, memory_order_acquire);
		if (atomic_load_explicit(&t[fd], memory_order_acquire) == sc &&
		    !atomic_load_explicit(&sc->freed, memory_order_acquire))
			return sc;
		sconn_put(sc);
	}
}

bool fd_is(int fd, const struct sconn *sc)
{
	_Atomic(struct sconn *) *t = atomic_load_explicit(&tab, memory_order_acquire);

	return t && fd >= 0 && fd < tab_size &&
	       atomic_load_explicit(&t[fd], memory_order_acquire) == sc;
}

bool fd_names_std(const struct sconn *sc)
{
	_Atomic(struct sconn *) *t = atomic_load_explicit(&tab, memory_order_relaxed);

	if (!t)
		return false;
	for (int fd = 0; fd <= 2 && fd < tab_size; fd++)
		if (atomic_load_explicit(&t[fd], memory_order_relaxed) == sc)
			return true;
	return false;
}

/*
 * A call's hold on fd's sconn.  With one thread nothing can close fd while
 * the call runs (a signal handler that closes a socket another call of its
 * thread is using is not supported), so no reference is taken: two locked
 * operations less on every call.
 */
struct sconn *fd_hold(int fd, bool *held)
{
	_Atomic(struct sconn *) *t;

	if (!__libc_single_threaded) {
		*held = true;
		return fd_get(fd);
	}
	*held = false;
	t = atomic_load_explicit(&tab, memory_order_relaxed);
	if (!t || fd < 0 || fd >= tab_size)
		return NULL;
	return atomic_load_explicit(&t[fd], memory_order_relaxed);
}

void sconn_put(struct sconn *sc)
{
	bool no = false;

	if (atomic_fetch_sub_explicit(&sc->refs, 1, memory_order_acq_rel) != 1)
		return;
	if (!atomic_compare_exchange_strong(&sc->freed, &no, true))
		return;
	sconn_free(sc);
	pthread_mutex_lock(&tab_lock);
	sc->free_next = free_list;
	free_list = sc;
	pthread_mutex_unlock(&tab_lock);
	atomic_fetch_sub(&fd_tracked, 1);
}

static void sconn_init(struct sconn *sc, int role)
{
	/* refs may carry a late getter's +1 that it will take back */
	sc->free_next = NULL;
	atomic_store(&sc->fds, 1);
	atomic_store(&sc->state, SC_NEW);
	atomic_store(&sc->calls, 0);
	atomic_store(&sc->offer_at, 0);
	atomic_store(&sc->decline, 0);
	atomic_store(&sc->closed_wr, false);
	sc->role = role;
	sc->seq = 0;
	sc->token = 0;
	pthread_mutex_init(&sc->lock, NULL);
	pthread_mutex_init(&sc->tx_lock, NULL);
	pthread_mutex_init(&sc->rx_lock, NULL);
	memset(&sc->tp, 0, sizeof(sc->tp));
	atomic_store(&sc->plain_tx, 0);
	atomic_store(&sc->plain_rx, 0);
	atomic_store(&sc->attached, false);
	atomic_store(&sc->tx_cut, false);
	atomic_store(&sc->rx_cut, false);
	atomic_store(&sc->tcp_tx, 0);
	atomic_store(&sc->tcp_rx, 0);
	atomic_store(&sc->lost_fence, 0);
	atomic_store(&sc->rx_eof, false);
	sc->rx_quiet = 0;
	atomic_store(&sc->rx_err, 0);
	atomic_store(&sc->tx_err, 0);
	atomic_store(&sc->rcvlowat, 1);
	atomic_store(&sc->reset_told, false);
	atomic_store(&sc->let_go, false);
	atomic_store(&sc->past, false);
	atomic_store(&sc->foreign, false);
	atomic_store(&sc->back_rx, false);
	atomic_store(&sc->back_tx, false);
	atomic_store(&sc->back_ours, false);
	atomic_store(&sc->back_untold, false);
	atomic_store(&sc->tcp_for_good, false);
	atomic_store(&sc->nonblock, -1);
	atomic_store(&sc->shared, false);
	atomic_store(&sc->rcvtimeo_ms, -1);
	atomic_store(&sc->fork_page, NULL);
	sc->fork_exec_page = NULL;
	atomic_store(&sc->claim, NULL);
	sc->claim_fork = 0;
	sc->claim_exec = NULL;
	sc->claim_gen = 0;
	atomic_store(&sc->kernel_counts, false);
	atomic_fetch_add(&sc->refs, 1);
	atomic_store(&sc->freed, false);
}

static void slot_set(int fd, struct sconn *sc)
{
	struct sconn *old = atomic_exchange(&tab[fd], sc);
	int high = atomic_load(&tab_high);

	while (fd >= high && !atomic_compare_exchange_weak(&tab_high, &high, fd + 1))
		;
	if (old) {
		/* the fd number was reused behind our back (a raw close) */
		atomic_fetch_sub(&old->fds, 1);
		sconn_put(old);
	}
}

bool fd_track(int fd, int role)
{
	struct sconn *sc;

	if (!soft_cfg.enabled || fd < 0)
		return false;
	pthread_mutex_lock(&tab_lock);
	if (!tab_init() || fd >= tab_size || !(sc = sconn_alloc())) {
		pthread_mutex_unlock(&tab_lock);
		return false;
	}
	pthread_mutex_unlock(&tab_lock);
	sconn_init(sc, role);
	atomic_fetch_add(&fd_tracked, 1);
	slot_set(fd, sc);
	fd_listed();
	return true;
}

/* The daemon lists our sockets from /proc (pstats.h sock_gen). */
void fd_listed(void)
{
	atomic_fetch_add_explicit(&pstats->sock_gen, 1, memory_order_relaxed);
}

void fd_alias(int fd, struct sconn *sc)
{
	if (!tab || fd < 0 || fd >= tab_size)
		return;
	atomic_fetch_add(&sc->fds, 1);
	atomic_fetch_add(&sc->refs, 1);
	slot_set(fd, sc);
}

int fd_high(void)
{
	return atomic_load(&tab_high);
}

bool fd_untrack(int fd)
{
	_Atomic(struct sconn *) *t = atomic_load_explicit(&tab, memory_order_acquire);
	struct sconn *sc;

	if (!t || fd < 0 || fd >= tab_size)
		return false;
	sc = atomic_exchange(&t[fd], NULL);
	if (!sc)
		return false;
	if (atomic_fetch_sub(&sc->fds, 1) == 1)
		sconn_release(fd, sc);
	sconn_put(sc);
	return true;
}

void fd_for_each(void (*fn)(int fd, struct sconn *sc, void *arg), void *arg)
{
	int high = atomic_load(&tab_high);

	for (int fd = 0; tab && fd < high; fd++) {
		struct sconn *sc = fd_get(fd);

		if (sc) {
			fn(fd, sc, arg);
			sconn_put(sc);
		}
	}
}

void soft_set_nonblock(int fd, bool on)
{
	struct sconn *sc = fd_get(fd);

	if (sc) {
		atomic_store(&sc->nonblock, on);
		sconn_put(sc);
	}
}

void soft_set_rcvtimeo(int fd, int ms)
{
	struct sconn *sc = fd_get(fd);

	if (sc) {
		atomic_store(&sc->rcvtimeo_ms, ms);
		sconn_put(sc);
	}
}
