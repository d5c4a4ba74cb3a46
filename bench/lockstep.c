/*
 * lockstep: 14-byte ping-pong latency of two clients that take turns, for
 * bench/run.sh's onesided_pp.  Loopback latency on a shared 2-core machine
 * drifts by 10 % and more between runs seconds apart; two clients that take
 * turns every few milliseconds see the same machine, so their ratio is
 * measured to well under the 3 % that onesided_pp is judged by.
 *
 *   lockstep server PORT
 *       echo every connection, a thread each, forever
 *   lockstep client HOST PORT SIZE SECONDS TURN_IN TURN_OUT [first]
 *       connect; then, in turns: wait for a byte on the fifo TURN_IN, do
 *       BURST round trips of SIZE bytes, write a byte to TURN_OUT.  The
 *       client started with "first" starts and ends the game after SECONDS
 *       (the first 0.5 s are warm-up).  Prints "p50 P99 p99 P99 n N", the
 *       percentiles of RTT/2 in microseconds.
 *
 * Built by bench/run.sh with cc.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BURST     500
#define SKIP      5          /* round trips of a burst not counted: the wake-up */
#define WARMUP_NS 500000000LL
#define MAX_SIZE  65536
#define MAX_N     (1 << 22)

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int full(ssize_t (*io)(int, void *, size_t), int fd, char *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = io(fd, buf + done, len - done);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return -1;
		}
		done += (size_t)n;
	}
	return 0;
}

static ssize_t rd(int fd, void *b, size_t n) { return read(fd, b, n); }
static ssize_t wr(int fd, void *b, size_t n) { return write(fd, b, n); }

static void *echo(void *arg)
{
	int s = (int)(long)arg;
	char buf[MAX_SIZE];
	ssize_t n;

	while ((n = read(s, buf, sizeof(buf))) > 0)
		if (full(wr, s, buf, (size_t)n))
			break;
	close(s);
	return NULL;
}

static int server(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1, l = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 64)) {
		perror("lockstep server");
		return 1;
	}
	for (;;) {
		int s = accept(l, NULL, NULL);
		pthread_t t;

		if (s < 0)
			continue;
		setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (pthread_create(&t, NULL, echo, (void *)(long)s)) {
			close(s);
			continue;
		}
		pthread_detach(t);
	}
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

static int client(const char *host, int port, size_t size, double secs, const char *in,
		  const char *out, int first)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	static long long lat[MAX_N];
	static char buf[MAX_SIZE];
	long long start, end;
	size_t n = 0;
	int s, one = 1, fin, fout;
	char turn = 'g';

	if (inet_pton(AF_INET, host, &a.sin_addr) != 1 || !size || size > MAX_SIZE) {
		fprintf(stderr, "lockstep: bad host or size\n");
		return 1;
	}
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a))) {
		perror("lockstep: connect");
		return 1;
	}
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* opened in the order that cannot deadlock: the first opens out first */
	if (first) {
		fout = open(out, O_WRONLY);
		fin = open(in, O_RDONLY);
	} else {
		fin = open(in, O_RDONLY);
		fout = open(out, O_WRONLY);
	}
	if (fin < 0 || fout < 0) {
		perror("lockstep: turn fifo");
		return 1;
	}
	memset(buf, 'x', size);
	start = now_ns();
	end = start + (long long)(secs * 1e9);
	for (int mine = first;; mine = 0) {
		if (!mine && (full(rd, fin, &turn, 1) || turn == 'q'))
			break;
		for (int i = 0; i < BURST; i++) {
			long long t0 = now_ns();

			if (full(wr, s, buf, size) || full(rd, s, buf, size)) {
				perror("lockstep: ping-pong");
				return 1;
			}
			if (i >= SKIP && t0 - start > WARMUP_NS && n < MAX_N)
				lat[n++] = now_ns() - t0;
		}
		if (first && now_ns() > end)
			turn = 'q';
		if (full(wr, fout, &turn, 1) || turn == 'q')
			break;
	}
	close(s);
	if (!n) {
		fprintf(stderr, "lockstep: no round trip counted\n");
		return 1;
	}
	qsort(lat, n, sizeof(lat[0]), cmp_ll);
	printf("p50 %.3f p99 %.3f n %zu\n", lat[n / 2] / 2e3, lat[n * 99 / 100] / 2e3, n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "server"))
		return server(atoi(argv[2]));
	if ((argc == 8 || (argc == 9 && !strcmp(argv[8], "first"))) &&
	    !strcmp(argv[1], "client"))
		return client(argv[2], atoi(argv[3]), (size_t)atol(argv[4]), atof(argv[5]),
			      argv[6], argv[7], argc == 9);
	fprintf(stderr, "usage: lockstep server PORT\n"
			"       lockstep client HOST PORT SIZE SECONDS TURN_IN TURN_OUT [first]\n");
	return 2;
}
