/*
 * A new process and the connections it gets (fork, posix_spawn, a vfork
 * child's execve): each is paired, or declined, before the process starts,
 * and is marked shared (doc/soft-inherit.md section 2); at a fork, one to
 * another host is left to the copy that uses it first (fork_claim.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "conn.h"
#include "ctl_int.h"
#include "reg.h"

/*
 * A connection two processes hold is paired before it is shared: each one
 * pairing it on its own would register it twice (the second gets EEXIST and
 * stays TCP while the first cuts over).  So a socket still NEW is paired
 * before another process gets it, and the daemon answers at once.  One that
 * cannot be (not connected yet, the daemon busy) or whose answer does not
 * come stays TCP (conn_shared).  With ctl_mu held.
 */
static bool inheritable(int fd, bool all)
{
	int fl;

	return all || ((fl = next.fcntl(fd, F_GETFD)) >= 0 && !(fl & FD_CLOEXEC));
}

static void pair_for_sharing(int fd, struct sconn *sc)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (atomic_load(&sc->state) == SC_NEW && !getpeername(fd, (struct sockaddr *)&ss, &len))
		ctl_pair_locked(fd, sc);
}

/* fork(): an end to another host is left to the copy that uses it first (fork_claim.c) */
static void claim_or_pair(int fd, struct sconn *sc)
{
	if (!conn_claim_fork(fd, sc))
		pair_for_sharing(fd, sc);
}

static void share(int fd, struct sconn *sc)
{
	int listening = 0;
	socklen_t len = sizeof(listening);

	/* a listener is no connection: what it accepts is each process's own */
	if (next.getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) || !listening)
		conn_shared(sc);
}

static void share_unless_left(int fd, struct sconn *sc)
{
	if (!conn_claim_left(sc))
		share(fd, sc);
}

/* Which connections a new process gets: settle_locked() below. */
struct reaching {
	bool all;                          /* fork(): every descriptor of ours */
	const struct child_fds *child;     /* its own where not ours (NULL: none) */
	void (*fn)(int fd, struct sconn *sc);
};

static void ours_reaching(int fd, struct sconn *sc, void *arg)
{
	struct reaching *r = arg;

	/* a descriptor the child closed, or made another file (dup2 over it) */
	if (r->child && child_fds_has(r->child, fd))
		return;
	if (inheritable(fd, r->all))
		r->fn(fd, sc);
}

/*
 * fn(fd, sc) for each connection the new process gets: through a
 * descriptor of ours that reaches it, and through one of its own (the dup2
 * of a vfork() child, posix_spawn's adddup2: Python's subprocess hands a
 * connection on as stdin so, its own descriptor close-on-exec or closed in
 * the child).  fd names sc in this process's table (child_fds_ent.here).
 */
static void for_each_reaching(struct reaching *r)
{
	fd_for_each(ours_reaching, r);
	for (unsigned i = 0; r->child && i < r->child->n; i++) {
		const struct child_fds_ent *e = &r->child->e[i];

		if (e->sc && !e->cloexec && e->here >= 0)
			r->fn(e->here, e->sc);
	}
}

/*
 * A vfork() child shares our memory but not our descriptors: before its
 * execve it may have closed the control connection (a close_fds), and a
 * connection it opened would be a number its parent does not have.  Then
 * it asks nothing, and must not take the closed socket for a lost daemon:
 * that would end the parent's regions (execvp tries each PATH directory).
 */
static bool ctl_reachable(void)
{
	int type = 0;
	socklen_t len = sizeof(type);

	if (!soft_vfork_child())
		return true;
	return chan.fd >= 0 && !next.getsockopt(chan.fd, SOL_SOCKET, SO_TYPE, &type, &len) &&
	       type == SOCK_SEQPACKET;
}

/*
 * Every connection the new process gets is paired now (or declined): left
 * NEW, the child would pair it on its own while we, not knowing it shared,
 * paired it later and counted only our own TCP reads towards the peer's
 * fence; what the child read would be missing, and we would wait for it
 * for ever (doc/soft-inherit.md section 2).
 */
static void settle_locked(bool all, const struct child_fds *child)
{
	struct reaching r = { .all = all, .child = child, .fn = all ? claim_or_pair : pair_for_sharing };

	/* what is not paired now is declined below: each end stays TCP */
	if (ctl_reachable()) {
		for_each_reaching(&r);
		ctl_wait_replies(false);
	}
	r.fn = all ? share_unless_left : share;
	for_each_reaching(&r);
}

void ctl_settle(const struct child_fds *child)
{
	pthread_mutex_lock(&ctl_mu);
	settle_locked(false, child);
	pthread_mutex_unlock(&ctl_mu);
}

/*
 * A forked child may use what it gets, or hand it to a program it execs
 * (a shell's commands): an end only this process can use (soft SMC-R's
 * queue pairs) that is not close-on-exec stays on TCP for good if nothing
 * cut over, else goes back to TCP first; else the child's use of it is a
 * reset (doc/soft-roce.md section 4).  One that another thread is sending
 * on stays as it is.
 */
static const struct conn_backs_rule for_child = {
	.reason = SMC_SOFT_DECL_BACK, .one_process_only = true, .inherited_only = true,
};

static void fork_prepare(void)
{
	/* no end attaches from here until the fork is done (fork_parent()) */
	ctl_attaches_hold();
	/* before the control lock, which telling the daemon takes */
	if (atomic_load(&fd_tracked))
		conn_backs_all(&for_child);
	pthread_mutex_lock(&ctl_mu);
	conn_claim_fork_begin();
	if (atomic_load(&fd_tracked))
		settle_locked(true, NULL);
	sconn_before_fork();
}

static void fork_parent(void)
{
	ctl_neg_release_attaches();
	pthread_mutex_unlock(&ctl_mu);
	conn_fork_share_parent();
}

/*
 * The child must not read the parent's replies: it gets its own connection
 * when it needs one.  Requests still out belong to the parent.  Until then
 * it counts, and writes dump records, into the parent's memfd.
 */
static void fork_child(void)
{
	ctl_pend_drop_all();
	conn_fork_share_child();
	ctl_neg_after_fork_child();
	chan_after_fork_child();
	bell_after_fork_child();
	ctl_after_fork_child();
}

__attribute__((constructor))
static void ctl_init(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}
