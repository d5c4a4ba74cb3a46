/*
 * The descriptors a new process starts with, where they differ from ours:
 * what a vfork() child did with dup2() and close() before its execve (its
 * table is its own, our memory is its parent's, so our table must not
 * change), and what the file actions of posix_spawn(3) will do
 * (posix_spawn_file_actions_adddup2, _addclose, _addopen over a socket's
 * descriptor, _addclosefrom_np).  A program that hands a connection to a
 * child as its stdin gets it there.
 */
#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <stdlib.h>
#include <unistd.h>

#include "conn.h"

static struct child_fds_ent *ent_of(struct child_fds *c, int fd)
{
	for (unsigned i = 0; i < c->n; i++)
		if (c->e[i].fd == fd)
			return &c->e[i];
	return NULL;
}

/*
 * The connection fd names in the child, a reference; NULL if none.  *here:
 * the descriptor of ours it came from.
 */
static struct sconn *lookup(struct child_fds *c, int fd, int *here)
{
	struct child_fds_ent *e = ent_of(c, fd);

	if (!e) {
		*here = fd;
		return fd_get(fd);
	}
	*here = e->here;
	if (e->sc)
		atomic_fetch_add_explicit(&e->sc->refs, 1, memory_order_relaxed);
	return e->sc;
}

/*
 * fd in the child names sc (a reference it takes over), or nothing; with
 * cloexec it does not reach the new image.  An fd that names no connection
 * before or after needs no entry.
 */
static void set(struct child_fds *c, int fd, struct sconn *sc, int here, bool cloexec)
{
	struct child_fds_ent *e = ent_of(c, fd);
	struct sconn *was;

	if (!e && !sc) {
		if (!(was = fd_get(fd)))
			return;
		sconn_put(was);
	}
	if (!e && c->n < CHILD_FDS_MAX) {
		e = &c->e[c->n++];
		e->fd = fd;
		e->sc = NULL;
	}
	if (!e) {               /* past CHILD_FDS_MAX: ours stands for it */
		if (sc)
			sconn_put(sc);
		return;
	}
	if (e->sc)
		sconn_put(e->sc);
	e->sc = sc;
	e->here = here;
	e->cloexec = cloexec;
}

void child_fds_release(struct child_fds *c)
{
	for (unsigned i = 0; !c->lent && i < c->n; i++)
		if (c->e[i].sc)
			sconn_put(c->e[i].sc);
	c->n = 0;
	c->lent = false;
}

/*
 * A vfork() child's references are its parent's, and an execve that works
 * does not return to give them back: they go before it, and come again if
 * it fails (execvp tries the next directory with the same descriptors).
 */
void child_fds_lend(struct child_fds *c)
{
	for (unsigned i = 0; !c->lent && i < c->n; i++)
		if (c->e[i].sc)
			sconn_put(c->e[i].sc);
	c->lent = true;
}

void child_fds_take_back(struct child_fds *c)
{
	for (unsigned i = 0; c->lent && i < c->n; i++)
		if (c->e[i].sc)
			atomic_fetch_add_explicit(&c->e[i].sc->refs, 1, memory_order_relaxed);
	c->lent = false;
}

bool child_fds_has(const struct child_fds *c, int fd)
{
	return ent_of((struct child_fds *)c, fd) != NULL;
}

/* ---- the child of vfork() ---- */

/* The parent's thread waits while its child runs on its stack and TLS. */
static __thread struct child_fds vfork_fds;
static __thread pid_t vfork_fds_pid;

struct child_fds *child_fds_vfork(void)
{
	pid_t pid = getpid();

	if (vfork_fds_pid != pid) {
		/* an earlier child gave its references back at execve or _exit */
		vfork_fds.n = 0;
		vfork_fds.lent = false;
		vfork_fds_pid = pid;
	}
	return &vfork_fds;
}

/* The vfork() child runs the spawn with its own table: newfd is its descriptor. */
void child_fds_dup(struct child_fds *c, int oldfd, int newfd, bool cloexec)
{
	int here;

	if (newfd >= 0 && newfd != oldfd)
		set(c, newfd, lookup(c, oldfd, &here), newfd, cloexec);
}

void child_fds_close(struct child_fds *c, int fd)
{
	set(c, fd, NULL, -1, false);
}

/* Its own descriptors too, which our table does not have (a dup2 above the range's start). */
void child_fds_close_range(struct child_fds *c, unsigned first, unsigned last, bool cloexec)
{
	for (unsigned i = 0; i < c->n; i++) {
		struct child_fds_ent *e = &c->e[i];

		if ((unsigned)e->fd < first || (unsigned)e->fd > last || !e->sc)
			continue;
		if (cloexec) {
			e->cloexec = true;
		} else {
			sconn_put(e->sc);
			e->sc = NULL;
			e->here = -1;
		}
	}
}

/* ---- posix_spawn's file actions ---- */

struct fa_rec {
	const posix_spawn_file_actions_t *fa;
	enum fa_op op;
	int fd, newfd;
	struct fa_rec *next;
};

static pthread_mutex_t fa_mu = PTHREAD_MUTEX_INITIALIZER;
static struct fa_rec *fa_head, **fa_tail = &fa_head;

void child_fds_fa_record(const posix_spawn_file_actions_t *fa, enum fa_op op, int fd, int newfd)
{
	struct fa_rec *r = malloc(sizeof(*r));

	pthread_mutex_lock(&fa_mu);
	if (r) {
		*r = (struct fa_rec){ .fa = fa, .op = op, .fd = fd, .newfd = newfd };
		*fa_tail = r;
		fa_tail = &r->next;
	}
	pthread_mutex_unlock(&fa_mu);
}

void child_fds_fa_forget(const posix_spawn_file_actions_t *fa)
{
	struct fa_rec **pp, *r;

	pthread_mutex_lock(&fa_mu);
	for (pp = &fa_head; (r = *pp);) {
		if (r->fa == fa) {
			*pp = r->next;
			free(r);
		} else {
			pp = &r->next;
		}
	}
	for (fa_tail = &fa_head; *fa_tail; fa_tail = &(*fa_tail)->next)
		;
	pthread_mutex_unlock(&fa_mu);
}

static void close_from(int fd, struct sconn *sc, void *arg)
{
	struct child_fds *c = arg;

	(void)sc;
	if (fd >= c->from && !child_fds_has(c, fd))
		set(c, fd, NULL, -1, false);
}

void child_fds_of_actions(struct child_fds *c, const posix_spawn_file_actions_t *fa)
{
	int here;

	c->n = 0;
	if (!fa)
		return;
	pthread_mutex_lock(&fa_mu);
	for (struct fa_rec *r = fa_head; r; r = r->next) {
		if (r->fa != fa)
			continue;
		if (r->op == FA_CLOSE) {
			set(c, r->fd, NULL, -1, false);
		} else if (r->op == FA_DUP2) {
			struct sconn *sc = lookup(c, r->fd, &here);

			/* adddup2(fd, fd) only clears close-on-exec: set() anyway */
			set(c, r->newfd, sc, here, false);
		} else {
			for (unsigned i = 0; i < c->n; i++)
				if (c->e[i].fd >= r->fd && c->e[i].sc) {
					sconn_put(c->e[i].sc);
					c->e[i].sc = NULL;
				}
			c->from = r->fd;
			fd_for_each(close_from, c);
		}
	}
	pthread_mutex_unlock(&fa_mu);
}
