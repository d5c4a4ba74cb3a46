/*
 * The descriptors behind the process's RDMA resources (a device's command
 * and event descriptors, completion channels, the progress thread's
 * eventfd): a program that closes every descriptor it does not know
 * (closefrom, close_range, a close loop, as sshd and daemons do) must not
 * close these, or its connections on them would stop.  The hooks leave
 * them open (hook_fd.c).
 */
#include <pthread.h>
#include <stdatomic.h>

#include "rdma.h"

#define KEPT_MAX 256

static pthread_mutex_t kept_mu = PTHREAD_MUTEX_INITIALIZER;
static int kept[KEPT_MAX];
static _Atomic unsigned nkept;

void rdma_fd_keep(int fd)
{
	if (fd < 0)
		return;
	pthread_mutex_lock(&kept_mu);
	if (nkept < KEPT_MAX)
		kept[nkept++] = fd;
	pthread_mutex_unlock(&kept_mu);
}

void rdma_fd_drop(int fd)
{
	pthread_mutex_lock(&kept_mu);
	for (unsigned i = 0; i < nkept; i++)
		if (kept[i] == fd) {
			kept[i] = kept[--nkept];
			break;
		}
	pthread_mutex_unlock(&kept_mu);
}

unsigned rdma_fds_kept_in(unsigned first, unsigned last, int *out, unsigned max)
{
	unsigned n = 0;

	if (!atomic_load_explicit(&nkept, memory_order_relaxed))
		return 0;
	pthread_mutex_lock(&kept_mu);
	for (unsigned i = 0; i < nkept && n < max; i++)
		if ((unsigned)kept[i] >= first && (unsigned)kept[i] <= last)
			out[n++] = kept[i];
	pthread_mutex_unlock(&kept_mu);
	/* in order, for the ranges between them */
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && out[j - 1] > out[j]; j--) {
			int t = out[j];

			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}

void rdma_fds_after_fork_child(void)
{
	/* the parent's resources are of no use here: the child may close them */
	pthread_mutex_init(&kept_mu, NULL);
	atomic_store(&nkept, 0);
}
