/*
 * Connections across execve(): the mappings vanish with the old image, the
 * sockets do not (unless close-on-exec).  Before the exec this library puts
 * what the new image needs into SMC_SOFT_INHERIT and keeps the control
 * connection open across it (its registrations stay with the daemon); the
 * new image, preloaded again, reads the variable at its first call, takes
 * the control connection back and asks the daemon (SOCK_INFO, passing each
 * socket) for the regions of the paired ones before it touches them.
 *
 *   SMC_SOFT_INHERIT=ctl=FD:FAMILY:SEQ;FD,STATE,ROLE,SEQ,TCP_TX,TCP_RX,TX_CUT,RX_CUT;...
 *
 * (the grammar and every field: doc/soft-inherit.md)
 *
 * A new process (posix_spawn, system, popen, the child of vfork) shares
 * neither our memory's locks nor our control connection: it gets "ctl=-"
 * and opens its own, each mapped connection one more holder (as fork()
 * gives), and a connection still waiting for its pairing stays TCP there
 * (as in a forked child).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "share.h"
#include "reg.h"

#define INHERIT_ENV "SMC_SOFT_INHERIT"
/* The hand-over's format and the ring layout it refers to (doc/soft-inherit.md). */
#define INHERIT_VERSION "v2"
#define ENTRY_MAX 128

#define UNSEEN_NO_LIBRARY "the program has no libsmc-preload"

struct inherit_buf {
	char *s;
	size_t len, cap;
	int count;
	bool spawn;                 /* for a new process */
	const char *image;          /* the program started */
	const char *unseen;         /* why it will not take the connections over, or NULL */
	const struct child_fds *child;  /* its descriptors where not ours */
	struct sconn **held;        /* spawn: the holders we added */
	size_t nheld;
};

/*
 * spawn: one more holder of sc's ring, once per connection; from_child:
 * the child's list holds a reference already, else fd still names sc.
 */
static bool spawn_hold(struct inherit_buf *b, int fd, struct sconn *sc, bool from_child)
{
	struct sconn **p, *ref;

	for (size_t i = 0; i < b->nheld; i++)
		if (b->held[i] == sc)
			return true;
	p = realloc(b->held, (b->nheld + 1) * sizeof(*p));
	if (!p)
		return false;
	b->held = p;
	if (from_child) {
		atomic_fetch_add_explicit(&sc->refs, 1, memory_order_relaxed);
	} else if ((ref = fd_get(fd)) != sc) {
		if (ref)
			sconn_put(ref);
		return false;
	}
	b->held[b->nheld++] = sc;
	TP(sc, holders_add, 1);
	return true;
}

/*
 * fd of the new process names sc, here of ours (they differ where the file
 * actions of a spawn moved it); cloexec: -1 to ask ours.
 */
static void add(struct inherit_buf *b, int fd, int here, struct sconn *sc, int cloexec)
{
	char e[ENTRY_MAX];
	int st = atomic_load(&sc->state), n;

	if (cloexec < 0) {
		int fl = next.fcntl(here, F_GETFD);

		cloexec = fl < 0 || (fl & FD_CLOEXEC);
	}
	if (cloexec || st == SC_TCP)
		return;
	/*
	 * A forked child's copy of an end its owner holds on RDMA: the owner
	 * goes back to TCP for it first (then the new image gets plain TCP),
	 * or it stays another process's; never reset here, where the socket
	 * is the owner's too.
	 */
	if (st == SC_MAPPED && sc->tp.ops->not_ours) {
		conn_fork_use(here, sc);
		return;
	}
	/* a region made before our daemon was lost: no daemon can find it for the new image */
	if (!b->unseen && st == SC_MAPPED && sc->daemon_epoch != ctl_epoch()) {
		sconn_unseen(here, sc, b->image, "its daemon is gone", !b->spawn);
		return;
	}
	if (b->unseen) {
		sconn_unseen(here, sc, b->image, b->unseen, !b->spawn);
		return;
	}
	/*
	 * Its queue pairs stay with this image: TCP for good if nothing cut
	 * over, else back to TCP, else a reset, when the new image is handed
	 * it (an exec, or a spawn that names it).  A spawn that merely
	 * inherits it may use it too: TCP for good, or back to TCP, if it
	 * can, else it is left to its holder, as another process's end is.
	 */
	if (st == SC_MAPPED && sc->tp.ops->one_process) {
		/* an execve with the hand-over did it before (let_own_go()): the control lock is held */
		if (sc->tp.ops->not_ours || (!b->spawn && !b->unseen))
			return;
		if (!b->spawn || (b->child && child_fds_has(b->child, fd)))
			sconn_unseen(here, sc, b->image, "a new image cannot take it over yet", !b->spawn);
		else if (!sconn_fall_back(here, sc, SMC_SOFT_DECL_UNSEEN))
			sconn_back_for(here, sc, false, true);
		return;
	}
	if (!b->s)
		return;
	/* fallen back (stdio, io_uring): plain TCP for the new image, no part in the region */
	if (st == SC_MAPPED && TP(sc, on_tcp_for_good))
		return;
	/* one another process may pair, or with a reason to stay TCP, stays TCP here */
	if (st == SC_NEW && atomic_load(&sc->decline))
		return;
	if (b->spawn && (st == SC_ASKED ||
			 (st == SC_MAPPED && !spawn_hold(b, here, sc, b->child && child_fds_has(b->child, fd)))))
		return;
	if (st == SC_MAPPED) {
		uint32_t wake = 0;

		pthread_mutex_lock(&sc->rx_lock);
		TP(sc, rx_flush, &wake);
		pthread_mutex_unlock(&sc->rx_lock);
		if (wake)
			soft_ring_bell(here, sc, wake);
	}
	n = snprintf(e, sizeof(e), ";%d,%d,%d,%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%d,%d", fd, st,
		     sc->role, sc->seq, (uint64_t)atomic_load(&sc->tcp_tx),
		     (uint64_t)atomic_load(&sc->tcp_rx), (int)atomic_load(&sc->tx_cut),
		     (int)atomic_load(&sc->rx_cut));
	if (b->len + (size_t)n + 1 > b->cap) {
		size_t ncap = b->cap * 2 + (size_t)n + 1;
		char *p = realloc(b->s, ncap);

		if (!p) {
			free(b->s);
			b->s = NULL;
			return;
		}
		b->s = p;
		b->cap = ncap;
	}
	memcpy(b->s + b->len, e, (size_t)n + 1);
	b->len += (size_t)n;
	b->count++;
}

static void add_entry(int fd, struct sconn *sc, void *arg)
{
	struct inherit_buf *b = arg;

	if (!b->child || !child_fds_has(b->child, fd))
		add(b, fd, fd, sc, -1);
}

/* Ours, except where the child's differ; then the child's own. */
static void add_entries(struct inherit_buf *b)
{
	fd_for_each(add_entry, b);
	for (unsigned i = 0; b->child && i < b->child->n; i++)
		if (b->child->e[i].sc)
			add(b, b->child->e[i].fd, b->child->e[i].here, b->child->e[i].sc,
			    b->child->e[i].cloexec);
}

/*
 * Connections the new image will not have (each of their descriptors is
 * close-on-exec) stop counting us as a holder when the execve succeeds:
 * else their other holders would share the ring with no one for good.
 * The last holder stays counted; the kernel's close tells the peer.
 */
struct exec_drop {
	struct { struct sconn *sc; bool passed; } *e;
	size_t n;
};

static void note_passed(int fd, struct sconn *sc, void *arg)
{
	struct exec_drop *d = arg;
	int fl = next.fcntl(fd, F_GETFD);
	size_t i;

	for (i = 0; i < d->n && d->e[i].sc != sc; i++)
		;
	if (i == d->n) {
		void *p = realloc(d->e, (d->n + 1) * sizeof(*d->e));

		if (!p)
			return;
		d->e = p;
		atomic_fetch_add(&sc->refs, 1);
		d->e[d->n].sc = sc;
		d->e[d->n++].passed = false;
	}
	if (fl >= 0 && !(fl & FD_CLOEXEC))
		d->e[i].passed = true;
}

/* Our holders of what the new image will not have go (back: delta 1). */
static void exec_drop_holders(struct exec_drop *d, int delta)
{
	for (size_t i = 0; i < d->n; i++) {
		struct sconn *sc = d->e[i].sc;

		if (d->e[i].passed || !sconn_mapped(sc) || atomic_load(&sc->let_go))
			continue;
		if (delta < 0 && TP(sc, holders) < 2) {
			d->e[i].passed = true;        /* the last one: nothing to give back */
			continue;
		}
		TP(sc, holders_add, delta);
	}
}

static void exec_drop_free(struct exec_drop *d)
{
	for (size_t i = 0; i < d->n; i++)
		sconn_put(d->e[i].sc);
	free(d->e);
}

/* envp without an old SMC_SOFT_INHERIT, plus var; NULL when out of memory. */
static char **env_with(char *const envp[], char *var)
{
	size_t n = 0, k = 0;
	char **out;

	while (envp && envp[n])
		n++;
	out = malloc((n + 2) * sizeof(*out));
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(envp[i], INHERIT_ENV "=", sizeof(INHERIT_ENV)))
			out[k++] = envp[i];
	out[k++] = var;
	out[k] = NULL;
	return out;
}

struct soft_spawn {
	struct inherit_buf b;
	char **env;
	bool unref;                 /* the holders' references given back already */
};

char **soft_spawn_prepare(char *const envp[], const struct child_fds *child,
			  const char *image, bool unseen, struct soft_spawn **out)
{
	struct soft_spawn *sp;

	*out = NULL;
	if (!atomic_load(&fd_tracked))
		return NULL;
	if (unseen) {
		struct inherit_buf b = { .spawn = true, .child = child, .image = image,
					 .unseen = UNSEEN_NO_LIBRARY };

		add_entries(&b);
		return NULL;
	}
	if (!(sp = calloc(1, sizeof(*sp))))
		return NULL;
	sp->b.image = image;
	/*
	 * A vfork() child too: the parent's thread waits for us, the other
	 * threads run on and release what they hold, and what settling
	 * changes is the parent's memory, as it should be.
	 */
	ctl_settle(child);
	sp->b.spawn = true;
	sp->b.child = child;
	sp->b.cap = 256;
	sp->b.s = malloc(sp->b.cap);
	if (sp->b.s) {
		sp->b.len = (size_t)snprintf(sp->b.s, sp->b.cap, INHERIT_ENV "=" INHERIT_VERSION ";ctl=-");
		add_entries(&sp->b);
	}
	sp->b.child = NULL;
	if (sp->b.s && sp->b.count)
		sp->env = env_with(envp, sp->b.s);
	if (!sp->env) {
		soft_spawn_done(sp, false);
		return NULL;
	}
	*out = sp;
	return sp->env;
}

void soft_spawn_settle(struct soft_spawn *sp, bool started)
{
	if (!sp)
		return;
	for (size_t i = 0; i < sp->b.nheld; i++) {
		if (!started)
			TP(sp->b.held[i], holders_add, -1);
		if (!sp->unref)
			sconn_put(sp->b.held[i]);
	}
	sp->b.nheld = 0;
}

/* As child_fds_lend(), for the holders' references; the holders stay. */
static void spawn_unref(struct soft_spawn *sp)
{
	if (!sp)
		return;
	for (size_t i = 0; i < sp->b.nheld; i++)
		sconn_put(sp->b.held[i]);
	sp->unref = true;
}

void soft_spawn_free(struct soft_spawn *sp)
{
	if (!sp)
		return;
	soft_spawn_settle(sp, true);
	free(sp->b.held);
	free(sp->b.s);
	free(sp->env);
	free(sp);
}

void soft_spawn_done(struct soft_spawn *sp, bool started)
{
	soft_spawn_settle(sp, started);
	soft_spawn_free(sp);
}

/* Per thread of the parent: its vfork() children run on it one at a time. */
static __thread struct soft_spawn *vfork_spawned;

/* The program, without us, reads the connections it gets as plain TCP. */
static void leave_unseen(int fd, struct sconn *sc, void *arg)
{
	struct inherit_buf *b = arg;

	add(b, fd, fd, sc, -1);
}

/*
 * A connection that fell back (both ways TCP for good) goes to the new
 * image as plain TCP: this image lets go of its part in the region now,
 * the last holder ending the daemon's row while the socket can prove it
 * (a new image could not find the region again to end it: git daemon's
 * upload-pack).  Not inside add(), which runs with the control lock held.
 */
static void let_fallen_go(int fd, struct sconn *sc, void *arg)
{
	int fl;

	if (!sconn_mapped(sc) || atomic_load(&sc->let_go) || !TP(sc, on_tcp_for_good))
		return;
	fl = next.fcntl(fd, F_GETFD);
	if (fl >= 0 && !(fl & FD_CLOEXEC))
		sconn_unseen(fd, sc, (const char *)arg, "it fell back to TCP", true);
}

/*
 * An end only this image can use (soft SMC-R's queue pairs go with it) that
 * the new image gets: TCP for good, back to TCP, or reset (add()'s rule),
 * before the hand-over, which holds the control lock that telling the
 * daemon takes.
 */
static void let_own_go(int fd, struct sconn *sc, void *arg)
{
	int fl;

	if (!sconn_mapped(sc) || !sc->tp.ops->one_process || sc->tp.ops->not_ours ||
	    atomic_load(&sc->let_go))
		return;
	fl = next.fcntl(fd, F_GETFD);
	if (fl >= 0 && !(fl & FD_CLOEXEC))
		sconn_unseen(fd, sc, (const char *)arg, "a new image cannot take it over yet", true);
}

/* An execve without the hand-over: what the new image will not have lets go. */
static int exec_alone(const char *path, char *const argv[], char *const envp[])
{
	struct exec_drop drop = { 0 };
	int r, saved;

	fd_for_each(note_passed, &drop);
	exec_drop_holders(&drop, -1);
	r = next.execve(path, argv, envp);
	saved = errno;
	exec_drop_holders(&drop, 1);
	exec_drop_free(&drop);
	errno = saved;
	return r;
}

/* execve() with the hand-over of this image's connections (the hook: hook_exec.c). */
int soft_execve(const char *path, char *const argv[], char *const envp[])
{
	struct inherit_buf b = { 0 };
	struct exec_drop drop = { 0 };
	struct soft_spawn *sp;
	char **env = NULL, *var = NULL;
	const char *unseen = NULL;
	char head[64];
	int r, saved;

	/* inside a seccomp sandbox we make no call the program did not make */
	if (!atomic_load(&fd_tracked) || soft_sandboxed())
		return next.execve(path, argv, envp);
	if (!soft_image_has_library(path, envp))
		unseen = path;
	if (soft_vfork_child()) {
		/* our memory and its locks are the parent's; our table too */
		struct child_fds *child = child_fds_vfork();

		env = soft_spawn_prepare(envp, child, path, unseen != NULL, &sp);
		child_fds_lend(child);
		spawn_unref(sp);
		/* the memory of the child before, which exec'd and left it to us */
		soft_spawn_free(vfork_spawned);
		vfork_spawned = sp;
		r = next.execve(path, argv, env ? env : envp);
		saved = errno;
		vfork_spawned = NULL;
		soft_spawn_done(sp, false);
		child_fds_take_back(child);
		errno = saved;
		return r;
	}
	/* until the execve failed: none attaches after the pass over them below */
	ctl_attaches_hold();
	conn_fork_share_exec(true);
	conn_claim_exec_all(true);
	fd_for_each(let_fallen_go, (void *)path);
	if (!unseen)
		fd_for_each(let_own_go, (void *)path);
	if (unseen || !ctl_exec_prepare(head, sizeof(head))) {
		/* a program without us, or no daemon to hand over through: plain sockets there */
		struct inherit_buf gone = { .image = path,
					    .unseen = unseen ? UNSEEN_NO_LIBRARY : "no daemon to hand it over" };

		fd_for_each(leave_unseen, &gone);
		r = exec_alone(path, argv, envp);
		saved = errno;
		conn_fork_share_exec(false);
		conn_claim_exec_all(false);
		ctl_attaches_release();
		errno = saved;
		return r;
	}
	b.image = path;
	b.cap = 256;
	b.s = malloc(b.cap);
	if (b.s) {
		b.len = (size_t)snprintf(b.s, b.cap, INHERIT_ENV "=" INHERIT_VERSION ";ctl=%s", head);
		add_entries(&b);
	}
	if (b.s && b.count) {
		var = b.s;
		env = env_with(envp, var);
	}
	fd_for_each(note_passed, &drop);
	exec_drop_holders(&drop, -1);
	if (!env) {
		ctl_exec_done();
		free(b.s);
		r = next.execve(path, argv, envp);
	} else {
		r = next.execve(path, argv, env);
	}
	saved = errno;
	exec_drop_holders(&drop, 1);
	exec_drop_free(&drop);
	if (env) {
		ctl_exec_done();
		free(env);
		free(var);
	}
	conn_fork_share_exec(false);
	conn_claim_exec_all(false);
	ctl_attaches_release();
	errno = saved;
	return r;
}

/* ---- the new image ---- */

static bool parse_entry(const char *s, int *fd, int *st, int *role, uint32_t *seq,
			uint64_t *tx, uint64_t *rx, int *txcut, int *rxcut)
{
	return sscanf(s, "%d,%d,%d,%" SCNu32 ",%" SCNu64 ",%" SCNu64 ",%d,%d", fd, st, role, seq,
		      tx, rx, txcut, rxcut) == 8 && *fd >= 0 && *st >= SC_NEW && *st <= SC_MAPPED;
}

struct same_socket {
	struct stat st;
	struct sconn *sc;            /* the connection found, a reference */
};

static void find_same(int fd, struct sconn *sc, void *arg)
{
	struct same_socket *w = arg;
	struct stat other;

	if (!w->sc && !fstat(fd, &other) && other.st_ino == w->st.st_ino &&
	    other.st_dev == w->st.st_dev) {
		atomic_fetch_add(&sc->refs, 1);
		w->sc = sc;
	}
}

/*
 * fd is another descriptor of a socket an earlier entry brought (dup2 of a
 * connection to 0 and 1): it names that connection too, one holder of the
 * ring, not a second one.
 */
static bool inherit_alias(int fd)
{
	struct same_socket w = { .sc = NULL };

	if (fstat(fd, &w.st) || !S_ISSOCK(w.st.st_mode))
		return false;
	fd_for_each(find_same, &w);
	if (!w.sc)
		return false;
	fd_alias(fd, w.sc);
	sconn_put(w.sc);
	return true;
}

void soft_exec_inherit(void)
{
	const char *v = getenv(INHERIT_ENV);
	char *copy, *save = NULL, *tok;
	if (!v)
		return;
	copy = strdup(v);
	unsetenv(INHERIT_ENV);
	if (!copy)
		return;
	soft_mode_start(true);
	tok = strtok_r(copy, ";", &save);
	if (!tok || strcmp(tok, INHERIT_VERSION)) {
		/* its connections may be on rings we cannot read: say so, touch nothing */
		preload_err("libsmc-preload: SMC_SOFT_INHERIT of another library version (%s, this is %s): "
			    "inherited connections not taken over\n",
			    tok && tok[0] == 'v' ? tok : "v1", INHERIT_VERSION);
		free(copy);
		return;
	}
	tok = strtok_r(NULL, ";", &save);
	if (!tok || strncmp(tok, "ctl=", 4) || !ctl_exec_adopt(tok + 4)) {
		free(copy);
		return;
	}
	while ((tok = strtok_r(NULL, ";", &save))) {
		int fd, st, role, txcut, rxcut;
		uint32_t seq;
		uint64_t tx, rx;
		struct sconn *sc;

		if (!parse_entry(tok, &fd, &st, &role, &seq, &tx, &rx, &txcut, &rxcut) ||
		    inherit_alias(fd) || !fd_track(fd, role) || !(sc = fd_get(fd)))
			continue;
		atomic_store(&sc->tcp_tx, tx);
		atomic_store(&sc->tcp_rx, rx);
		atomic_store(&sc->tx_cut, txcut != 0);
		atomic_store(&sc->rx_cut, rxcut != 0);
		conn_came_shared(sc);
		ctl_exec_resume(fd, sc, st, seq);
		sconn_put(sc);
	}
	free(copy);
	ctl_exec_wait();
}
