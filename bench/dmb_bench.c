/*
 * The soft SMC-D ring (wire/dmb.c) between two threads against loopback TCP
 * and an AF_UNIX socketpair between the same two threads, in one run.
 * Rounds are interleaved and the medians compared, so drift on a shared
 * machine hits every transport alike.  See bench/README.md.
 *
 *   dmb_bench [-r ROUNDS] [-m MiB] [-s]     -s: both threads on one CPU
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "wire/dmb.h"

enum kind { RING, UNIX_SP, TCP_LO, NKINDS };
static const char *const kind_name[NKINDS] = { "ring", "unix", "tcp" };

struct chan {
	enum kind kind;
	struct dmb_conn end[2];
	int fd[2];
};

struct job {
	struct chan *ch;
	int side;
	size_t msg;
	size_t total;      /* bytes (throughput) or round trips (ping-pong) */
	bool pingpong;
	int cpu;
	int err;
};

static bool same_core;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* A TCP loopback connection with the default buffer sizes. */
static int tcp_pair(int fd[2])
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &len))
		return -1;
	fd[0] = socket(AF_INET, SOCK_STREAM, 0);
	if (fd[0] < 0 || connect(fd[0], (struct sockaddr *)&a, sizeof(a)))
		return -1;
	fd[1] = accept(l, NULL, NULL);
	close(l);
	if (fd[1] < 0)
		return -1;
	setsockopt(fd[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
}

static int chan_open(struct chan *ch, enum kind k)
{
	memset(ch, 0, sizeof(*ch));
	ch->kind = k;
	if (k == UNIX_SP)
		return socketpair(AF_UNIX, SOCK_STREAM, 0, ch->fd);
	if (k == TCP_LO)
		return tcp_pair(ch->fd);
	/* 256 KiB rings: the middle of the recommended default range. */
	int fd = dmb_create(256 * 1024, 256 * 1024);
	if (fd < 0 || dmb_map(fd, 0, &ch->end[0]) || dmb_map(fd, 1, &ch->end[1]))
		return -1;
	close(fd);
	return 0;
}

static void chan_close(struct chan *ch)
{
	if (ch->kind == RING) {
		dmb_unmap(&ch->end[0]);
		dmb_unmap(&ch->end[1]);
	} else {
		close(ch->fd[0]);
		close(ch->fd[1]);
	}
}

/* Spin briefly, then yield: no sleeping primitive at this layer yet. */
static void backoff(unsigned *spins)
{
	if (same_core || ++*spins > 64) {
		sched_yield();
		*spins = 0;
	}
}

static ssize_t xfer(struct chan *ch, int side, void *buf, size_t len, bool send)
{
	if (ch->kind != RING)
		return send ? write(ch->fd[side], buf, len) : read(ch->fd[side], buf, len);

	struct iovec v = { buf, len };
	unsigned spins = 0;
	for (;;) {
		ssize_t r = send ? dmb_produce(&ch->end[side], &v, 1, 0, NULL)
				 : dmb_consume(&ch->end[side], &v, 1, 0, NULL);
		if (r != -EAGAIN)
			return r < 0 ? (errno = (int)-r, -1) : r;
		backoff(&spins);
	}
}

static int xfer_all(struct chan *ch, int side, uint8_t *buf, size_t len, bool send)
{
	for (size_t done = 0; done < len;) {
		ssize_t r = xfer(ch, side, buf + done, len - done, send);
		if (r <= 0)
			return -1;
		done += (size_t)r;
	}
	return 0;
}

static void *run(void *arg)
{
	struct job *j = arg;
	uint8_t *buf = calloc(1, j->msg);

	pin(j->cpu);
	if (!buf) {
		j->err = 1;
		return NULL;
	}
	if (j->pingpong) {
		for (size_t i = 0; i < j->total && !j->err; i++) {
			if (j->side == 0)
				j->err = xfer_all(j->ch, 0, buf, j->msg, true) ||
					 xfer_all(j->ch, 0, buf, j->msg, false);
			else
				j->err = xfer_all(j->ch, 1, buf, j->msg, false) ||
					 xfer_all(j->ch, 1, buf, j->msg, true);
		}
	} else if (j->side == 0) {
		for (size_t done = 0; done < j->total && !j->err; done += j->msg)
			j->err = xfer_all(j->ch, 0, buf, j->msg, true);
	} else {
		/* The reader takes whatever is there, up to one message. */
		for (size_t done = 0; done < j->total && !j->err;) {
			ssize_t r = xfer(j->ch, 1, buf, j->msg, false);
			if (r <= 0)
				j->err = 1;
			else
				done += (size_t)r;
		}
	}
	free(buf);
	return NULL;
}

/* Seconds for one round, or -1. */
static double round_once(enum kind k, size_t msg, size_t total, bool pingpong)
{
	struct chan ch;
	struct job j[2];
	pthread_t t[2];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	double t0;

	if (chan_open(&ch, k))
		return -1;
	for (int s = 0; s < 2; s++)
		j[s] = (struct job){ &ch, s, msg, total, pingpong,
				     ncpu >= 2 ? (same_core ? 0 : s) : -1, 0 };
	t0 = now();
	pthread_create(&t[0], NULL, run, &j[0]);
	pthread_create(&t[1], NULL, run, &j[1]);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	t0 = now() - t0;
	chan_close(&ch);
	return j[0].err || j[1].err ? -1 : t0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	int rounds = 5, opt;
	size_t mib = 256;

	while ((opt = getopt(argc, argv, "r:m:s")) != -1) {
		if (opt == 'r')
			rounds = atoi(optarg);
		else if (opt == 'm')
			mib = (size_t)atol(optarg);
		else if (opt == 's')
			same_core = true;
		else {
			fprintf(stderr, "usage: %s [-r ROUNDS] [-m MiB] [-s]\n", argv[0]);
			return 2;
		}
	}
	if (rounds < 1 || rounds > 99 || !mib)
		return 2;

	struct test {
		const char *name, *unit;
		size_t msg, total;
		bool pingpong;
	} tests[] = {
		{ "tp_64KB", "MB/s", 65536, mib << 20, false },
		{ "tp_64B", "Mmsg/s", 64, mib << 14, false },
		{ "pp_14B", "us RTT", 14, 20000, true },
	};

	printf("%-8s %-7s %10s %10s %10s %9s %9s\n", "test", "unit", "ring", "unix", "tcp",
	       "ring/tcp", "ring/unix");
	for (size_t t = 0; t < sizeof(tests) / sizeof(tests[0]); t++) {
		struct test *x = &tests[t];
		double v[NKINDS][99], med[NKINDS];

		for (int r = 0; r < rounds; r++)
			for (int k = 0; k < NKINDS; k++) {
				double s = round_once((enum kind)k, x->msg, x->total, x->pingpong);
				if (s <= 0) {
					fprintf(stderr, "%s %s: failed\n", x->name, kind_name[k]);
					return 1;
				}
				/* Higher is better for throughput; RTT is time per trip. */
				if (x->pingpong)
					v[k][r] = s / (double)x->total * 1e6;
				else if (x->msg >= 4096)
					v[k][r] = (double)x->total / s / 1e6;
				else
					v[k][r] = (double)x->total / (double)x->msg / s / 1e6;
			}
		for (int k = 0; k < NKINDS; k++)
			med[k] = median(v[k], rounds);
		/* Ratios oriented so that higher is better for the ring. */
		double rt = x->pingpong ? med[TCP_LO] / med[RING] : med[RING] / med[TCP_LO];
		double ru = x->pingpong ? med[UNIX_SP] / med[RING] : med[RING] / med[UNIX_SP];
		printf("%-8s %-7s %10.2f %10.2f %10.2f %8.2fx %8.2fx\n", x->name, x->unit,
		       med[RING], med[UNIX_SP], med[TCP_LO], rt, ru);
	}
	return 0;
}
