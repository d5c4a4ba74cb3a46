/*
 * Between hook_epoll.c (the waits) and epoll_sets.c (its side table): per
 * epoll fd, the tracked sockets and the nested epoll sets registered in
 * it.  Nothing else includes this; hooks.h has the entry points.
 */
#ifndef SMC_PRELOAD_EPOLL_INT_H
#define SMC_PRELOAD_EPOLL_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>

#include "hooks.h"

struct ep_entry {
	int fd;
	struct sconn *sc;          /* identity only: fd_get(fd) must return it */
	uint32_t events;           /* the application's */
	uint32_t kevents;          /* what the kernel has */
	epoll_data_t data;
	bool disarmed;             /* EPOLLONESHOT fired */
	bool quiet;                /* on shared memory, nothing cut over: see set_quiet() */
	unsigned quiet_disarms;    /* sc->disarms when it became quiet */
	uint64_t last_in, last_out;/* cursor words at the last edge report */
	bool nested;               /* fd is an epoll set: see epset_of() */
	uint64_t inner_born;       /* its set's birth number */
};

struct ep_set {
	pthread_mutex_t lock;
	struct ep_entry *e;
	int n, cap;
	_Atomic int nests;         /* nested entries among them */
	_Atomic bool alive;        /* its fd is an epoll set now: see soft_epoll_closed() */
	_Atomic uint64_t born;     /* tells a set from a later one under the same fd */
};


/* epfd's set (created if create and it has none, or has a closed one), or NULL. */
struct ep_set *epset_get(int epfd, bool create);
/* fd's entry in s, or NULL; the entry dropped (the last one takes its place). */
struct ep_entry *epset_find(struct ep_set *s, int fd);
void epset_drop(struct ep_set *s, struct ep_entry *e);
/* fd's entry in s, new (zeroed, at the end) if it had none; NULL without memory. */
struct ep_entry *epset_put(struct ep_set *s, int fd);
/* Nested entry e's set (of s) if it is still the one registered, else NULL. */
struct ep_set *epset_inner(const struct ep_set *s, const struct ep_entry *e);
/* epset_inner() of entry *i of s; without it the entry is dropped (*i steps back). */
struct ep_set *epset_of(struct ep_set *s, int *i);
/* epoll_ctl(epfd, op, fd, ev) of an untracked fd done: an epoll set of ours is a nested entry. */
void epset_nest(int epfd, int op, int fd, const struct epoll_event *ev);
/* Whether s has a tracked socket, or a nested set that has one. */
bool epset_tracks(struct ep_set *s);

#endif
