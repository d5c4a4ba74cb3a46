/* The dump ring's writer (wire/pdump_put.c) against a reader playing the daemon. */
#include "unit.h"
#include "wire/pdump_put.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *map_new(void)
{
	void *m = mmap(NULL, SOFT_PSTATS_MAP_LEN, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return m == MAP_FAILED ? NULL : m;
}

static struct iovec iov_of(const char *s)
{
	struct iovec v = { .iov_base = (void *)s, .iov_len = strlen(s) };

	return v;
}

static uint64_t seq_at(void *m, uint64_t idx)
{
	return atomic_load(&soft_pdump_slot_of(m, idx)->seq);
}

TEST(pdump_put_fills_and_publishes_in_order)
{
	void *m = map_new();
	struct soft_pdump_ring *r;
	struct soft_pdump_slot h = { .token = 7, .ts_ns = 11, .offset = 100, .len = 3,
				     .caplen = 999, .type = 32, .flags = 1,
				     .prod_wrap = 2, .cons_wrap = 3, .prod_count = 4,
				     .cons_count = 5, .prod_flags = 0x80, .conn_state_flags = 0x40 };
	struct iovec v = iov_of("xyz");
	struct soft_pdump_slot *s;

	CHECK(m);
	if (!m)
		return;
	r = soft_pdump_ring_of(m);
	atomic_store(&h.seq, 42);
	for (int i = 0; i < 3; i++) {
		h.offset = 100 + (uint64_t)i;
		CHECK(soft_pdump_put(m, &h, &v, 1, 0, 3));
	}
	CHECK_INT(atomic_load(&r->prod), 3);
	CHECK_INT(atomic_load(&r->drops), 0);
	for (uint64_t i = 0; i < 3; i++) {
		s = soft_pdump_slot_of(m, i);
		CHECK_INT(seq_at(m, i), i + 1);
		CHECK_INT(s->offset, 100 + i);
	}
	CHECK_INT(seq_at(m, 3), 0);
	s = soft_pdump_slot_of(m, 1);
	CHECK_INT(s->token, 7);
	CHECK_INT(s->ts_ns, 11);
	CHECK_INT(s->len, 3);
	CHECK_INT(s->caplen, 3);
	CHECK_INT(s->type, 32);
	CHECK_INT(s->flags, 1);
	CHECK_INT(s->prod_wrap, 2);
	CHECK_INT(s->cons_wrap, 3);
	CHECK_INT(s->prod_count, 4);
	CHECK_INT(s->cons_count, 5);
	CHECK_INT(s->prod_flags, 0x80);
	CHECK_INT(s->conn_state_flags, 0x40);
	CHECK(!memcmp(s->data, "xyz", 3));
	munmap(m, SOFT_PSTATS_MAP_LEN);
}

TEST(pdump_put_gathers_after_skip_and_truncates)
{
	void *m = map_new();
	struct soft_pdump_slot h = { .type = 32 }, *s;
	struct iovec v[4] = { iov_of("abc"), iov_of(""), iov_of("defgh"), iov_of("ij") };
	static char big[3000];

	CHECK(m);
	if (!m)
		return;
	CHECK(soft_pdump_put(m, &h, v, 4, 2, 6));
	s = soft_pdump_slot_of(m, 0);
	CHECK_INT(s->caplen, 6);
	CHECK(!memcmp(s->data, "cdefgh", 6));
	/* skip inside the third buffer, more wanted than there is */
	CHECK(soft_pdump_put(m, &h, v, 4, 4, 100));
	s = soft_pdump_slot_of(m, 1);
	CHECK_INT(s->caplen, 6);
	CHECK(!memcmp(s->data, "efghij", 6));
	/* a CDC record: no data at all */
	CHECK(soft_pdump_put(m, &h, NULL, 0, 0, 0));
	CHECK_INT(soft_pdump_slot_of(m, 2)->caplen, 0);
	/* never more than a slot holds; the next slot is untouched */
	memset(big, 'q', sizeof(big));
	v[0].iov_base = big;
	v[0].iov_len = sizeof(big);
	CHECK(soft_pdump_put(m, &h, v, 1, 0, sizeof(big)));
	s = soft_pdump_slot_of(m, 3);
	CHECK_INT(s->caplen, SOFT_PDUMP_SNAP_MAX);
	CHECK(s->data[SOFT_PDUMP_SNAP_MAX - 1] == 'q');
	CHECK_INT(seq_at(m, 4), 0);
	CHECK_INT(soft_pdump_slot_of(m, 4)->type, 0);
	/* skip beyond the end: nothing to copy */
	CHECK(soft_pdump_put(m, &h, v, 1, sizeof(big) + 5, 10));
	CHECK_INT(soft_pdump_slot_of(m, 4)->caplen, 0);
	munmap(m, SOFT_PSTATS_MAP_LEN);
}

TEST(pdump_put_full_ring_drops)
{
	void *m = map_new();
	struct soft_pdump_ring *r;
	struct soft_pdump_slot h = { .type = 16 };
	struct iovec v = iov_of("new");

	CHECK(m);
	if (!m)
		return;
	r = soft_pdump_ring_of(m);
	for (uint64_t i = 0; i < SOFT_PDUMP_SLOTS; i++) {
		h.token = i;
		CHECK(soft_pdump_put(m, &h, NULL, 0, 0, 0));
	}
	h.token = 999;
	CHECK(!soft_pdump_put(m, &h, &v, 1, 0, 3));
	CHECK(!soft_pdump_put(m, &h, &v, 1, 0, 3));
	CHECK_INT(atomic_load(&r->drops), 2);
	CHECK_INT(atomic_load(&r->prod), SOFT_PDUMP_SLOTS);
	CHECK_INT(soft_pdump_slot_of(m, 0)->token, 0);
	CHECK_INT(soft_pdump_slot_of(m, 0)->caplen, 0);
	CHECK_INT(seq_at(m, 0), 1);
	/* the daemon read two: two more fit, in the freed slots */
	atomic_store(&r->cons, 2);
	CHECK(soft_pdump_put(m, &h, &v, 1, 0, 3));
	CHECK(soft_pdump_put(m, &h, &v, 1, 0, 3));
	CHECK(!soft_pdump_put(m, &h, &v, 1, 0, 3));
	CHECK_INT(atomic_load(&r->drops), 3);
	CHECK_INT(seq_at(m, SOFT_PDUMP_SLOTS), SOFT_PDUMP_SLOTS + 1);
	CHECK_INT(seq_at(m, SOFT_PDUMP_SLOTS + 1), SOFT_PDUMP_SLOTS + 2);
	CHECK_INT(soft_pdump_slot_of(m, 0)->token, 999);
	CHECK(!memcmp(soft_pdump_slot_of(m, 1)->data, "new", 3));
	CHECK_INT(soft_pdump_slot_of(m, 2)->token, 2);
	/* a cons that makes no sense drops, it does not write */
	atomic_store(&r->cons, atomic_load(&r->prod) + 5);
	CHECK(!soft_pdump_put(m, &h, &v, 1, 0, 3));
	CHECK_INT(atomic_load(&r->prod), SOFT_PDUMP_SLOTS + 2);
	munmap(m, SOFT_PSTATS_MAP_LEN);
}

/*
 * Writers put RECS records each, retrying a full ring; the reader drains
 * like the daemon and checks every record once, with its own bytes.
 */
#define WRITERS 4
#define RECS    3000

struct writer {
	void *map;
	unsigned id;
	uint64_t retries;
};

static uint8_t byte_of(uint64_t w, uint64_t k, size_t i)
{
	return (uint8_t)(w * 31 + k * 7 + i);
}

static void *write_recs(void *arg)
{
	struct writer *w = arg;
	uint8_t buf[200];

	for (uint64_t k = 0; k < RECS; k++) {
		struct soft_pdump_slot h = { .token = w->id, .offset = k, .type = 32,
					     .len = (uint32_t)(k % sizeof(buf)) + 1 };
		struct iovec v[2] = { { buf, 10 }, { buf + 10, sizeof(buf) - 10 } };

		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = byte_of(w->id, k, i);
		while (!soft_pdump_put(w->map, &h, v, 2, 0, h.len)) {
			w->retries++;
			sched_yield();
		}
	}
	return NULL;
}

/* False when a record is wrong or the writers stall for seconds. */
static bool drain_all(void *m, unsigned nw, unsigned *bad)
{
	struct soft_pdump_ring *r = soft_pdump_ring_of(m);
	static uint8_t seen[WRITERS][RECS];
	time_t end = time(NULL) + 30;

	memset(seen, 0, sizeof(seen));
	for (uint64_t c = 0; c < (uint64_t)nw * RECS; c++) {
		struct soft_pdump_slot *s = soft_pdump_slot_of(m, c);

		while (atomic_load_explicit(&s->seq, memory_order_acquire) != c + 1) {
			if (time(NULL) > end)
				return false;
			sched_yield();
		}
		if (s->token >= nw || s->offset >= RECS || s->len != s->offset % 200 + 1 ||
		    s->caplen != s->len) {
			(*bad)++;
		} else {
			for (size_t i = 0; i < s->caplen; i++)
				if (s->data[i] != byte_of(s->token, s->offset, i)) {
					(*bad)++;
					break;
				}
			seen[s->token][s->offset]++;
		}
		atomic_store_explicit(&r->cons, c + 1, memory_order_release);
	}
	for (unsigned w = 0; w < nw; w++)
		for (unsigned k = 0; k < RECS; k++)
			if (seen[w][k] != 1)
				(*bad)++;
	return true;
}

TEST(pdump_put_threads_write_every_record_once)
{
	void *m = map_new();
	struct writer w[WRITERS];
	pthread_t t[WRITERS];
	uint64_t retries = 0;
	unsigned bad = 0;

	CHECK(m);
	if (!m)
		return;
	for (unsigned i = 0; i < WRITERS; i++) {
		w[i] = (struct writer){ .map = m, .id = i };
		CHECK(!pthread_create(&t[i], NULL, write_recs, &w[i]));
	}
	CHECK(drain_all(m, WRITERS, &bad));
	for (unsigned i = 0; i < WRITERS; i++) {
		pthread_join(t[i], NULL);
		retries += w[i].retries;
	}
	CHECK_INT(bad, 0);
	CHECK_INT(atomic_load(&soft_pdump_ring_of(m)->prod), WRITERS * RECS);
	CHECK_INT(atomic_load(&soft_pdump_ring_of(m)->drops), retries);
	munmap(m, SOFT_PSTATS_MAP_LEN);
}

TEST(pdump_put_processes_write_every_record_once)
{
	void *m = map_new();
	pid_t pid[WRITERS];
	unsigned bad = 0;
	int st;

	CHECK(m);
	if (!m)
		return;
	for (unsigned i = 0; i < WRITERS; i++) {
		pid[i] = fork();
		if (pid[i] == 0) {
			struct writer w = { .map = m, .id = i };

			write_recs(&w);
			_exit(0);
		}
		CHECK(pid[i] > 0);
	}
	CHECK(drain_all(m, WRITERS, &bad));
	for (unsigned i = 0; i < WRITERS; i++)
		if (pid[i] > 0) {
			CHECK(waitpid(pid[i], &st, 0) == pid[i]);
			CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		}
	CHECK_INT(bad, 0);
	CHECK_INT(atomic_load(&soft_pdump_ring_of(m)->prod), WRITERS * RECS);
	munmap(m, SOFT_PSTATS_MAP_LEN);
}
