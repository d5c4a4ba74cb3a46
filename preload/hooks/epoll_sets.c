/*
 * The side table of epoll sets (epoll_int.h): one per epoll fd the
 * library saw created or given a tracked socket, kept for the fd's next
 * set when it is closed (a wait of an outer set may still look at it),
 * and told from that next one by its birth number.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "epoll_int.h"

#define EPTAB_MAX (1 << 20)

static _Atomic uint64_t births;

static _Atomic(struct ep_set *) *eptab;
static _Atomic int eptab_high;         /* highest epoll fd with a set, plus one */
static pthread_mutex_t eptab_lock = PTHREAD_MUTEX_INITIALIZER;

struct ep_set *epset_get(int epfd, bool create)
{
	struct ep_set *s;

	if (epfd < 0 || epfd >= EPTAB_MAX)
		return NULL;
	if (!atomic_load_explicit(&eptab, memory_order_acquire)) {
		void *p;

		if (!create)
			return NULL;
		pthread_mutex_lock(&eptab_lock);
		if (!eptab) {
			p = mmap(NULL, EPTAB_MAX * sizeof(*eptab), PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
			if (p != MAP_FAILED)
				atomic_store(&eptab, p);
		}
		pthread_mutex_unlock(&eptab_lock);
		if (!eptab)
			return NULL;
	}
	s = atomic_load_explicit(&eptab[epfd], memory_order_acquire);
	if (s) {
		if (atomic_load(&s->alive))
			return s;
		if (!create)
			return NULL;
		pthread_mutex_lock(&s->lock);
		if (!atomic_load(&s->alive)) {
			atomic_store(&s->born, atomic_fetch_add(&births, 1) + 1);
			atomic_store(&s->alive, true);
		}
		pthread_mutex_unlock(&s->lock);
		return s;
	}
	if (!create)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	pthread_mutex_init(&s->lock, NULL);
	atomic_store(&s->born, atomic_fetch_add(&births, 1) + 1);
	atomic_store(&s->alive, true);
	for (int h = atomic_load(&eptab_high); h <= epfd;)
		if (atomic_compare_exchange_weak(&eptab_high, &h, epfd + 1))
			break;
	struct ep_set *none = NULL;
	if (!atomic_compare_exchange_strong(&eptab[epfd], &none, s)) {
		pthread_mutex_destroy(&s->lock);
		free(s);
		return epset_get(epfd, create);
	}
	return s;
}

void soft_epoll_closed(int fd)
{
	struct ep_set *s;

	if (!atomic_load_explicit(&eptab, memory_order_relaxed) || fd < 0 || fd >= EPTAB_MAX)
		return;
	s = atomic_load_explicit(&eptab[fd], memory_order_acquire);
	/*
	 * Emptied, not freed: an outer set's wait may be looking at it (a
	 * nested entry), and the fd's next epoll set takes it again.
	 */
	if (s && atomic_load(&s->alive)) {
		pthread_mutex_lock(&s->lock);
		atomic_store(&s->alive, false);
		free(s->e);
		s->e = NULL;
		s->n = s->cap = 0;
		atomic_store(&s->nests, 0);
		pthread_mutex_unlock(&s->lock);
	}
}

void soft_epoll_closed_range(unsigned first, unsigned last)
{
	int high = atomic_load(&eptab_high);

	for (unsigned fd = first; fd <= last && fd < (unsigned)high; fd++)
		soft_epoll_closed((int)fd);
}

struct ep_entry *epset_find(struct ep_set *s, int fd)
{
	for (int i = 0; i < s->n; i++)
		if (s->e[i].fd == fd)
			return &s->e[i];
	return NULL;
}

void epset_drop(struct ep_set *s, struct ep_entry *e)
{
	if (e->nested)
		atomic_fetch_sub(&s->nests, 1);
	*e = s->e[--s->n];
}

struct ep_entry *epset_put(struct ep_set *s, int fd)
{
	struct ep_entry *e = epset_find(s, fd);

	if (!e && s->n == s->cap) {
		int ncap = s->cap ? s->cap * 2 : 8;
		struct ep_entry *ne = realloc(s->e, (size_t)ncap * sizeof(*ne));

		if (ne) {
			s->e = ne;
			s->cap = ncap;
		}
	}
	if (!e && s->n < s->cap)
		e = &s->e[s->n++];
	else if (e && e->nested)
		atomic_fetch_sub(&s->nests, 1);
	if (e) {
		memset(e, 0, sizeof(*e));
		e->fd = fd;
		e->last_in = e->last_out = UINT64_MAX;
	}
	return e;
}

struct ep_set *epset_inner(const struct ep_set *s, const struct ep_entry *e)
{
	struct ep_set *in = epset_get(e->fd, false);

	return in && in != s && in->born == e->inner_born ? in : NULL;
}

struct ep_set *epset_of(struct ep_set *s, int *i)
{
	struct ep_entry *e = &s->e[*i];
	struct ep_set *in = epset_inner(s, e);

	if (in)
		return in;
	epset_drop(s, e);
	(*i)--;
	return NULL;
}

/*
 * Whether set from holds set to, itself or through the sets nested in it
 * (at most depth levels: the kernel nests 5 deep at most).  Without to's
 * lock: a set is never nested in one it holds (the kernel refuses the
 * loop, ELOOP), so the walk takes its locks from outer to inner, as a
 * wait does.
 */
static bool holds(struct ep_set *from, const struct ep_set *to, int depth)
{
	bool yes = false;

	if (from == to)
		return true;
	if (depth <= 0 || !atomic_load_explicit(&from->nests, memory_order_relaxed))
		return false;
	pthread_mutex_lock(&from->lock);
	for (int i = 0; i < from->n && !yes; i++) {
		struct ep_set *in = from->e[i].nested ? epset_inner(from, &from->e[i]) : NULL;

		yes = in && holds(in, to, depth - 1);
	}
	pthread_mutex_unlock(&from->lock);
	return yes;
}

#define NEST_MAX 5

void epset_nest(int epfd, int op, int fd, const struct epoll_event *ev)
{
	struct ep_set *s, *in;
	struct ep_entry *e;

	if (op == EPOLL_CTL_DEL) {
		if ((s = epset_get(epfd, false))) {
			pthread_mutex_lock(&s->lock);
			if ((e = epset_find(s, fd)))
				epset_drop(s, e);
			pthread_mutex_unlock(&s->lock);
		}
		return;
	}
	if (!ev || fd == epfd || !(in = epset_get(fd, false)) || !(s = epset_get(epfd, true)))
		return;
	/* a loop the kernel would have refused: our table is behind (a set's number reused) */
	if (holds(in, s, NEST_MAX))
		return;
	pthread_mutex_lock(&s->lock);
	if ((e = epset_put(s, fd))) {
		e->nested = true;
		atomic_fetch_add(&s->nests, 1);
		e->inner_born = in->born;
		e->events = e->kevents = ev->events;
		e->data = ev->data;
	}
	pthread_mutex_unlock(&s->lock);
}

bool epset_tracks(struct ep_set *s)
{
	bool yes = false;

	if (!s->n)
		return false;
	/* the common case, without the lock: sockets only */
	if (!atomic_load_explicit(&s->nests, memory_order_relaxed))
		return true;
	pthread_mutex_lock(&s->lock);
	for (int i = 0; i < s->n && !yes; i++) {
		const struct ep_entry *e = &s->e[i];
		struct ep_set *in;

		if (!e->nested)
			yes = true;
		else if ((in = epset_inner(s, e)))
			yes = epset_tracks(in);
	}
	pthread_mutex_unlock(&s->lock);
	return yes;
}
