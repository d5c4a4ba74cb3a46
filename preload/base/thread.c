/* The library's own threads: detached, and deaf to the program's signals. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>

#include "base.h"

int lib_thread_start(void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	pthread_attr_t a;
	pthread_t th;
	int rc;

	/* blocked while it is created, so the thread starts with every signal blocked */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	rc = -pthread_create(&th, &a, fn, arg);
	pthread_attr_destroy(&a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}
