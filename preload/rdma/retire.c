/*
 * Queue pairs that go while packets of theirs may still be in the kernel
 * (doc/kernels.md, "Known problems": rxe and a queue pair destroyed under
 * a stalled network, and a guest that freezes when packets keep coming to
 * a queue pair in the error state).  rxe's packets hold a reference of
 * their queue pair until the network device frees them, and destroying
 * the queue pair waits for those references 50 s at most before it frees
 * it anyway; a packet freed later then touches freed memory in
 * rxe_skb_tx_dtor(), a kernel crash.  A device whose port is down holds
 * its packets until the port is back.  And a queue pair in the error state
 * that still receives can deadlock rxe; a destroyed one cannot (rxe marks
 * it invalid before it flushes it, and drops what comes after), nor one
 * in the reset state (rxe drops what comes to it before queueing it).
 *
 * So a queue pair that goes while its port is active is destroyed at
 * once, on a thread of its own (the kernel may take its time); one whose
 * port is down is stopped (the reset state: it sends nothing more, and
 * drops what comes once the port is back) and destroyed once its port is
 * active again, looked at every RDMA_RETIRE_LOOK_NS; its device is held
 * open until then.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "base.h"
#include "rdma.h"

struct retired {
	struct rdma_qp *qp;
	int64_t look_ns;
	struct retired *next;
};

static pthread_mutex_t retired_mu = PTHREAD_MUTEX_INITIALIZER;
static struct retired *retired;
/* taken off the list (or never on it), not yet destroyed */
static unsigned destroying;

static void *destroy_due(void *arg)
{
	struct retired *due = arg;
	unsigned n = 0;

	while (due) {
		struct retired *r = due;
		struct rdma_dev *dev = rdma_qp_dev(r->qp);

		due = r->next;
		rdma_qp_destroy(r->qp);
		rdma_dev_close(dev);
		free(r);
		n++;
	}
	pthread_mutex_lock(&retired_mu);
	destroying -= n;
	pthread_mutex_unlock(&retired_mu);
	return NULL;
}

/* due (a list of destroying ones): destroyed on a thread, or here if none can start */
static void destroy_off_thread(struct retired *due)
{
	if (due && lib_thread_start(destroy_due, due))
		destroy_due(due);
}

/* Whether r's port lets it go now: active, or gone with its device (nothing can come). */
static bool port_lets_go(struct retired *r)
{
	return rdma_dev_port_active(rdma_qp_dev(r->qp)) != 0;
}

void rdma_retire(struct rdma_qp *qp)
{
	struct retired *r = malloc(sizeof(*r)), **p;

	if (!r) {
		/* no memory to wait with: the old way, which rxe survives unless its packets are stuck */
		rdma_qp_stop(qp);
		rdma_qp_destroy(qp);
		return;
	}
	rdma_dev_hold(rdma_qp_dev(qp));
	*r = (struct retired){ qp, soft_now_ns() + RDMA_RETIRE_LOOK_NS, NULL };
	if (port_lets_go(r)) {
		pthread_mutex_lock(&retired_mu);
		destroying++;
		pthread_mutex_unlock(&retired_mu);
		destroy_off_thread(r);
		return;
	}
	rdma_qp_stop(qp);
	pthread_mutex_lock(&retired_mu);
	/* in the order they are looked at */
	for (p = &retired; *p;)
		p = &(*p)->next;
	*p = r;
	pthread_mutex_unlock(&retired_mu);
}

unsigned rdma_retired_reap(int64_t now_ns)
{
	struct retired *due = NULL, **tail = &due, *look = NULL, **p;
	unsigned left = 0;

	/* those whose turn has come, looked at outside the lock (a question to the device) */
	pthread_mutex_lock(&retired_mu);
	while (retired && retired->look_ns <= now_ns) {
		struct retired *r = retired;

		retired = r->next;
		r->next = look;
		look = r;
	}
	pthread_mutex_unlock(&retired_mu);
	while (look) {
		struct retired *r = look;

		look = r->next;
		r->next = NULL;
		if (port_lets_go(r)) {
			*tail = r;
			tail = &r->next;
			continue;
		}
		r->look_ns = now_ns > INT64_MAX - RDMA_RETIRE_LOOK_NS ? INT64_MAX : now_ns + RDMA_RETIRE_LOOK_NS;
		pthread_mutex_lock(&retired_mu);
		for (p = &retired; *p;)
			p = &(*p)->next;
		*p = r;
		pthread_mutex_unlock(&retired_mu);
	}
	pthread_mutex_lock(&retired_mu);
	for (struct retired *r = due; r; r = r->next)
		destroying++;
	for (struct retired *r = retired; r; r = r->next)
		left++;
	left += destroying;
	pthread_mutex_unlock(&retired_mu);
	destroy_off_thread(due);
	return left;
}

void rdma_retired_after_fork_child(void)
{
	struct retired *r = retired;

	/* the parent's queue pairs are the parent's to destroy: only our records of them go */
	pthread_mutex_init(&retired_mu, NULL);
	retired = NULL;
	destroying = 0;
	while (r) {
		struct retired *next = r->next;

		free(r);
		r = next;
	}
}
