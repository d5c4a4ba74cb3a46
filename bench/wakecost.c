/*
 * wakecost: what one doorbell costs its two ends, without the sleep:
 * a one-byte send on a loopback TCP connection and the recv that drains it,
 * against an eventfd write and the read that resets it (doc/soft-ring.md
 * section 4.1).  Build and run by hand:
 *
 *   cc -O2 -o wakecost bench/wakecost.c && ./wakecost [ROUNDS]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int tcp_pair(int *tx, int *rx)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int one = 1, l = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &len))
		return -1;
	*tx = socket(AF_INET, SOCK_STREAM, 0);
	if (*tx < 0 || connect(*tx, (struct sockaddr *)&a, sizeof(a)))
		return -1;
	*rx = accept(l, NULL, NULL);
	close(l);
	setsockopt(*tx, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return *rx < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	uint64_t v = 1;
	char buf[16];
	int tx, rx, efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	double t;

	if (n <= 0 || efd < 0 || tcp_pair(&tx, &rx)) {
		perror("wakecost");
		return 1;
	}
	t = now();
	for (long i = 0; i < n; i++) {
		if (send(tx, "", 1, MSG_DONTWAIT | MSG_NOSIGNAL) != 1 ||
		    recv(rx, buf, sizeof(buf), MSG_DONTWAIT) != 1) {
			perror("wakecost: tcp");
			return 1;
		}
	}
	printf("tcp doorbell (send + recv of one byte): %.2f us\n", (now() - t) / n * 1e6);
	t = now();
	for (long i = 0; i < n; i++) {
		if (write(efd, &v, sizeof(v)) != sizeof(v) || read(efd, &v, sizeof(v)) != sizeof(v)) {
			perror("wakecost: eventfd");
			return 1;
		}
		v = 1;
	}
	printf("eventfd doorbell (write + read):        %.2f us\n", (now() - t) / n * 1e6);
	return 0;
}
