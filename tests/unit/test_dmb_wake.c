/* Wake-ups of the soft SMC-D rings: futex sleepers and the membarrier mode (wire/dmb.c). */
#include "unit.h"
#include "wire/dmb.h"

#include <errno.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RING 16384

struct ends {
	int fd;
	struct dmb_conn a, b;     /* a produces into ring 0, b consumes it */
};

static bool ends_open(struct ends *e)
{
	e->fd = dmb_create(RING, RING);
	if (e->fd < 0)
		return false;
	if (dmb_map(e->fd, 0, &e->a) || dmb_map(e->fd, 1, &e->b)) {
		close(e->fd);
		return false;
	}
	return true;
}

static void ends_close(struct ends *e)
{
	dmb_unmap(&e->a);
	dmb_unmap(&e->b);
	close(e->fd);
}

static ssize_t put(struct dmb_conn *c, const void *buf, size_t len)
{
	struct iovec v = { (void *)buf, len };
	uint32_t wake;

	return dmb_produce(c, &v, 1, 0, &wake);
}

static ssize_t get(struct dmb_conn *c, void *buf, size_t len)
{
	struct iovec v = { buf, len };
	uint32_t wake;

	return dmb_consume(c, &v, 1, 0, &wake);
}

static const struct timespec long_wait = { 10, 0 };

struct sleeper {
	struct dmb_conn *c;
	_Atomic int started;
	int rc;
};

static void *sleep_once(void *arg)
{
	struct sleeper *s = arg;

	atomic_store(&s->started, 1);
	s->rc = dmb_rx_futex_wait(s->c, &long_wait);
	return NULL;
}

/* Start a sleeper and wait until it sleeps in the futex (or is about to). */
static bool sleeper_start(pthread_t *t, struct sleeper *s, struct dmb_conn *c)
{
	s->c = c;
	s->rc = 1;
	atomic_store(&s->started, 0);
	if (pthread_create(t, NULL, sleep_once, s))
		return false;
	while (!atomic_load(&s->started) ||
	       !atomic_load(&c->rx.ctrl->cons_fwait))
		sched_yield();
	return true;
}

TEST(dmb_futex_wait_timeout_and_ready)
{
	struct timespec ms20 = { 0, 20 * 1000000 };
	struct ends e;
	char buf[64] = "x";

	CHECK(ends_open(&e));
	CHECK_INT(dmb_rx_futex_wait(&e.b, &ms20), -ETIMEDOUT);
	CHECK_INT(atomic_load(&e.b.rx.ctrl->cons_fwait), 0);
	/* data already there: no sleep at all */
	CHECK_INT(put(&e.a, buf, 10), 10);
	CHECK_INT(dmb_rx_futex_wait(&e.b, &long_wait), 0);
	CHECK_INT(get(&e.b, buf, sizeof(buf)), 10);
	ends_close(&e);
}

TEST(dmb_futex_woken_by_data_and_state)
{
	struct sleeper s;
	struct ends e;
	pthread_t t;
	char buf[64] = "x";

	CHECK(ends_open(&e));
	/* the producer wakes a futex sleeper itself */
	CHECK(sleeper_start(&t, &s, &e.b));
	CHECK_INT(put(&e.a, buf, 1), 1);
	pthread_join(t, NULL);
	CHECK_INT(s.rc, 0);
	CHECK_INT(get(&e.b, buf, sizeof(buf)), 1);
	CHECK_INT(atomic_load(&e.b.rx.ctrl->cons_fwait), 0);
	/* so does the peer's shutdown ... */
	CHECK(sleeper_start(&t, &s, &e.b));
	dmb_shutdown_wr(&e.a);
	pthread_join(t, NULL);
	CHECK_INT(s.rc, 0);
	CHECK(dmb_peer_state(&e.b) & DMB_CF_DONE_WRITING);
	ends_close(&e);

	/* ... and our own abort, for another thread of ours asleep on rx */
	CHECK(ends_open(&e));
	CHECK(sleeper_start(&t, &s, &e.b));
	dmb_abort(&e.b);
	pthread_join(t, NULL);
	CHECK_INT(s.rc, 0);
	ends_close(&e);
}

static void on_usr2(int sig) { (void)sig; }

TEST(dmb_futex_interrupted)
{
	struct sigaction sa = { .sa_handler = on_usr2 }, old;
	struct sleeper s;
	struct ends e;
	pthread_t t;

	CHECK(ends_open(&e));
	CHECK_INT(sigaction(SIGUSR2, &sa, &old), 0);
	CHECK(sleeper_start(&t, &s, &e.b));
	/* the sleeper may not be in the futex yet: signal until it returns */
	while (s.rc == 1) {
		struct timespec ms = { 0, 1000000 };

		pthread_kill(t, SIGUSR2);
		nanosleep(&ms, NULL);
	}
	pthread_join(t, NULL);
	CHECK_INT(s.rc, -EINTR);
	sigaction(SIGUSR2, &old, NULL);
	ends_close(&e);
}

/*
 * Two processes, as two preloaded programs are: a consumer that sleeps on
 * the futex whenever the ring is empty and a producer that sends bursts with
 * pauses, so that the consumer keeps switching between busy reading (the
 * membarrier mode where the kernel offers it) and sleeping.  A wake-up
 * missed shows as a wait that times out with data in the ring.
 */
#define BURSTS 3000

static int consume_all(struct dmb_conn *c, uint64_t want)
{
	const struct timespec two_s = { 2, 0 };
	uint64_t got = 0;
	char buf[4096];

	while (got < want) {
		ssize_t r = get(c, buf, sizeof(buf));

		if (r > 0) {
			for (ssize_t i = 0; i < r; i++)
				if (buf[i] != (char)((got + (uint64_t)i) * 7))
					return 2;
			got += (uint64_t)r;
			dmb_rx_busy(c);
			continue;
		}
		if (r != -EAGAIN)
			return 3;
		if (dmb_rx_futex_wait(c, &two_s) == -ETIMEDOUT)
			return dmb_readable(c) > 0 ? 4 : 5;
	}
	return 0;
}

TEST(dmb_wakes_across_processes)
{
	uint64_t total = 0, sent = 0;
	struct ends e;
	int status = -1;
	pid_t pid;

	dmb_asym_init();
	CHECK(ends_open(&e));
	for (int i = 0; i < BURSTS; i++)
		total += 1 + (uint64_t)(i * 37 % 2000);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(consume_all(&e.b, total));
	for (int i = 0; i < BURSTS; i++) {
		uint64_t n = 1 + (uint64_t)(i * 37 % 2000);
		char buf[2048];

		for (uint64_t k = 0; k < n; k++)
			buf[k] = (char)((sent + k) * 7);
		for (uint64_t off = 0; off < n;) {
			ssize_t r = put(&e.a, buf + off, n - off);

			if (r > 0)
				off += (uint64_t)r;
			else
				sched_yield();
		}
		sent += n;
		if (i % 4 == 0) {
			/* long enough for the consumer to empty the ring and sleep */
			struct timespec pause = { 0, (i % 3 + 1) * 20000 };

			nanosleep(&pause, NULL);
		}
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status));
	CHECK_INT(WEXITSTATUS(status), 0);
	ends_close(&e);
}

/* In a forked child (one thread again): reads in a row turn the mode on, a sleep off. */
static int asym_child(void)
{
	struct ends e;
	char buf[16] = "x";

	if (!dmb_asym_init())
		return 0;       /* no membarrier here: nothing to see */
	if (!ends_open(&e))
		return 10;
	for (int i = 0; i < 7; i++) {
		if (put(&e.a, buf, 1) != 1 || get(&e.b, buf, sizeof(buf)) != 1)
			return 11;
		dmb_rx_busy(&e.b);
	}
	if (atomic_load(&e.b.rx.ctrl->cons_asym))
		return 12;
	dmb_rx_busy(&e.b);
	if (!atomic_load(&e.b.rx.ctrl->cons_asym))
		return 13;
	/* going to sleep turns it off again, behind a membarrier */
	if (dmb_rx_sleep_begin(&e.b, NULL, DMB_BELL_TCP))
		return 14;
	if (atomic_load(&e.b.rx.ctrl->cons_asym))
		return 15;
	dmb_rx_sleep_end(&e.b);
	ends_close(&e);
	return 0;
}

/*
 * The mode needs a single-threaded process (a fork of one keeps the mark):
 * the tests run in name order, and those that start threads (rdma_io_*,
 * smcr_*, transport_rdma_*) come after this one.
 */
TEST(dmb_asym_mode)
{
	int status = -1;
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0)
		_exit(asym_child());
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status));
	CHECK_INT(WEXITSTATUS(status), 0);
}

/*
 * One end held by two processes (fork): records of 16 bytes written by two
 * producer processes at once each arrive whole and in their writer's order;
 * read by two consumer processes at once, each record is read exactly once.
 */
#define REC 16
#define RECS 20000

struct rec {
	uint32_t who, seq, check, pad;
};

/* A ring that lost its way would spin forever: give up after 20 s instead. */
static time_t give_up_at;

static bool too_long(void)
{
	return time(NULL) > give_up_at;
}

static uint32_t rec_check(uint32_t who, uint32_t seq)
{
	return (who * 2654435761u) ^ (seq * 40503u) ^ 0x5a5a5a5au;
}

static int produce_recs(struct dmb_conn *c, uint32_t who, uint32_t n)
{
	for (uint32_t seq = 0; seq < n; seq++) {
		struct rec r = { who, seq, rec_check(who, seq), 0 };
		ssize_t got;

		while ((got = put(c, &r, REC)) == -EAGAIN && !too_long())
			sched_yield();
		if (got != REC)
			return 1;
	}
	return 0;
}

TEST(dmb_shared_end_two_producers)
{
	uint32_t next[2] = { 0, 0 };
	struct ends e;
	int status = -1;
	pid_t pid[2];

	give_up_at = time(NULL) + 20;
	CHECK(ends_open(&e));
	CHECK_INT(dmb_holders_add(&e.a, 1), 0);     /* as sconn_attach, */
	CHECK_INT(dmb_holders_add(&e.a, 1), 1);     /* and fork */
	for (uint32_t who = 0; who < 2; who++) {
		pid[who] = fork();
		CHECK(pid[who] >= 0);
		if (pid[who] == 0)
			_exit(produce_recs(&e.a, who, RECS));
	}
	while (next[0] + next[1] < 2 * RECS && !too_long()) {
		struct rec r[64];
		ssize_t got = get(&e.b, r, sizeof(r));

		if (got == -EAGAIN) {
			sched_yield();
			continue;
		}
		CHECK(got > 0 && got % REC == 0);
		if (got <= 0 || got % REC)
			break;
		for (ssize_t i = 0; i < got / REC; i++) {
			CHECK(r[i].who < 2 && r[i].seq == next[r[i].who] &&
			      r[i].check == rec_check(r[i].who, r[i].seq));
			if (r[i].who >= 2)
				break;
			next[r[i].who]++;
		}
	}
	for (int who = 0; who < 2; who++) {
		CHECK(waitpid(pid[who], &status, 0) == pid[who]);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	CHECK_INT(next[0], RECS);
	CHECK_INT(next[1], RECS);
	ends_close(&e);
}

/* Counts and sums the records this consumer got, into the pipe. */
static int consume_recs(struct dmb_conn *c, int out)
{
	uint64_t sum[2] = { 0, 0 };

	while (!too_long()) {
		struct rec r[8];
		ssize_t got = get(c, r, sizeof(r));

		if (got == 0)
			break;
		if (got == -EAGAIN) {
			sched_yield();
			continue;
		}
		if (got < 0 || got % REC)
			return 1;
		for (ssize_t i = 0; i < got / REC; i++) {
			if (r[i].check != rec_check(r[i].who, r[i].seq))
				return 2;
			sum[0]++;
			sum[1] += r[i].seq;
		}
	}
	return write(out, sum, sizeof(sum)) == sizeof(sum) ? 0 : 3;
}

TEST(dmb_shared_end_two_consumers)
{
	uint64_t mine[2] = { 0, 0 }, theirs[2] = { 0, 0 };
	struct ends e;
	int status = -1, p[2];
	pid_t pid;

	give_up_at = time(NULL) + 20;
	CHECK(ends_open(&e));
	CHECK(pipe(p) == 0);
	/* holders count the end that reads: b's own tx line */
	dmb_holders_add(&e.b, 1);
	dmb_holders_add(&e.b, 1);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(consume_recs(&e.b, p[1]));
	if (pid > 0) {
		pid_t prod = fork();

		CHECK(prod >= 0);
		if (prod == 0)
			_exit(produce_recs(&e.a, 0, RECS) || (dmb_shutdown_wr(&e.a), 0));
		CHECK_INT(consume_recs(&e.b, p[1]), 0);
		CHECK(read(p[0], mine, sizeof(mine)) == sizeof(mine));
		CHECK(read(p[0], theirs, sizeof(theirs)) == sizeof(theirs));
		CHECK(waitpid(prod, &status, 0) == prod);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		CHECK(waitpid(pid, &status, 0) == pid);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		CHECK_INT(mine[0] + theirs[0], RECS);
		CHECK(mine[1] + theirs[1] == (uint64_t)RECS * (RECS - 1) / 2);
	}
	close(p[0]);
	close(p[1]);
	ends_close(&e);
}
