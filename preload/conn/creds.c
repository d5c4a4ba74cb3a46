/*
 * A process that changes its credentials (setuid, setgid, setgroups, even
 * to the ids it has: rsync's daemon and sshd do, in the child that serves
 * a connection) can no longer use an RDMA device it opened before: the
 * kernel refuses every post on it (uverbs checks the opener's credentials:
 * EACCES), and a link that cannot post fails with its connections.  So
 * before the change its soft SMC-R ends go back to TCP, and from then on
 * its connections between hosts stay TCP (SMC_SOFT_DECL_CREDS).  A process
 * with no device open loses nothing: what it opens later has the new
 * credentials.  doc/soft-roce.md section 4.
 */
#include <time.h>

#include "ctl_int.h"
#include "reg.h"

/*
 * A negotiation under way when the change comes declines at its next step
 * (ctl_negotiate.c reason_now()), or one past its last one attaches and
 * goes back: it ends within its own limit, and must before the change,
 * which would fail whatever it still posts.
 */
#define CREDS_NEG_WAIT_MS (CTL_NEG_MS + CTL_NEG_DECLINE_MS + 1000)

static _Atomic bool stale;

bool soft_creds_stale(void)
{
	return atomic_load_explicit(&stale, memory_order_relaxed);
}

void conn_creds_after_fork_child(void)
{
	/* the devices it opens are its own, opened with the credentials it has */
	atomic_store(&stale, false);
}

static const struct conn_backs_rule for_creds = {
	.reason = SMC_SOFT_DECL_CREDS, .one_process_only = true, .waits_for_senders = true,
};

/*
 * Up to the first change that finds something on RDMA, no lock and no wait:
 * libcap's libpsx makes the change through syscall() in a signal handler
 * on every thread, after its caller made it (and took the ends back here).
 */
void conn_creds_change(void)
{
	struct timespec ms = { 0, 1000000 };

	/* a vfork() child's change is its own: the devices are its parent's */
	if (atomic_load(&stale) || soft_vfork_child() || (!ctl_neg_running() && !transport_rdma_live()))
		return;
	/* no negotiation starts from here (ctl_negotiate.c act()) */
	atomic_store(&stale, true);
	for (int i = 0; i < CREDS_NEG_WAIT_MS && ctl_neg_running(); i++)
		next.nanosleep(&ms, NULL);
	if (atomic_load(&fd_tracked))
		conn_backs_all(&for_creds);
	preload_dbg("libsmc-preload: soft SMC-R: the process changes its credentials: "
		    "its connections between hosts go on over TCP\n");
}
