/*
 * Queue pairs that go while packets of theirs may still sit in the
 * network device's transmit queue (doc/kernels.md, "Known problems": rxe
 * and a queue pair destroyed under a stalled network).  rxe's packets hold
 * a reference of their queue pair until the network device frees them,
 * and destroying the queue pair waits for those references 50 s at most
 * before it frees it anyway; a packet freed later then touches freed
 * memory in rxe_skb_tx_dtor(), a kernel crash.  So a queue pair that is
 * replaced, or that goes with work outstanding, is stopped at once (the
 * error state: it sends nothing more and its work is flushed) and
 * destroyed RDMA_RETIRE_NS later, its device held open until then.
 */
#include <pthread.h>
#include <stdlib.h>

#include "base.h"
#include "rdma.h"

struct retired {
	struct rdma_qp *qp;
	int64_t due_ns;
	struct retired *next;
};

static pthread_mutex_t retired_mu = PTHREAD_MUTEX_INITIALIZER;
static struct retired *retired;

void rdma_retire(struct rdma_qp *qp)
{
	struct retired *r = malloc(sizeof(*r)), **p;

	rdma_qp_stop(qp);
	if (!r) {
		/* no memory to wait with: the old way, which rxe survives unless its packets are stuck */
		rdma_qp_destroy(qp);
		return;
	}
	rdma_dev_hold(rdma_qp_dev(qp));
	*r = (struct retired){ qp, soft_now_ns() + RDMA_RETIRE_NS, NULL };
	pthread_mutex_lock(&retired_mu);
	/* in the order they are due */
	for (p = &retired; *p;)
		p = &(*p)->next;
	*p = r;
	pthread_mutex_unlock(&retired_mu);
}

/* taken off the list by rdma_retired_reap(), not yet destroyed */
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

unsigned rdma_retired_reap(int64_t now_ns)
{
	struct retired *due = NULL, **tail = &due;
	unsigned left = 0;

	pthread_mutex_lock(&retired_mu);
	while (retired && retired->due_ns <= now_ns) {
		*tail = retired;
		tail = &retired->next;
		retired = retired->next;
		destroying++;
	}
	*tail = NULL;
	for (struct retired *r = retired; r; r = r->next)
		left++;
	left += destroying;
	pthread_mutex_unlock(&retired_mu);
	/*
	 * A destroy waits for the kernel, up to 50 s for packets that a network
	 * device which went down still holds (doc/kernels.md): on a thread of
	 * its own, not the caller's (the progress thread of every connection).
	 */
	if (due && lib_thread_start(destroy_due, due))
		destroy_due(due);
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
