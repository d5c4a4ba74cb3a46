/*
 * sockthreads: many threads create TCP sockets at once, the first of them
 * racing through libsmc-preload.so's lazy initialisation.
 *
 *   sockthreads THREADS SOCKETS_PER_THREAD
 *
 * Prints "created N failed M" and exits 1 when any socket() failed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

static pthread_barrier_t start;
static int per_thread;

static void *worker(void *arg)
{
	long failed = 0;

	(void)arg;
	pthread_barrier_wait(&start);
	for (int i = 0; i < per_thread; i++) {
		int fd = socket(i % 2 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);

		if (fd < 0)
			failed++;
		else
			close(fd);
	}
	return (void *)failed;
}

int main(int argc, char **argv)
{
	pthread_t tid[64];
	long failed = 0;
	int n;

	if (argc != 3 || (n = atoi(argv[1])) < 1 || n > 64 ||
	    (per_thread = atoi(argv[2])) < 1) {
		fprintf(stderr, "usage: sockthreads THREADS(1-64) SOCKETS\n");
		return 2;
	}
	pthread_barrier_init(&start, NULL, n);
	for (int i = 0; i < n; i++)
		if (pthread_create(&tid[i], NULL, worker, NULL)) {
			fprintf(stderr, "sockthreads: pthread_create failed\n");
			return 2;
		}
	for (int i = 0; i < n; i++) {
		void *ret;

		pthread_join(tid[i], &ret);
		failed += (long)ret;
	}
	printf("created %ld failed %ld\n", (long)n * per_thread - failed, failed);
	return failed ? 1 : 0;
}
