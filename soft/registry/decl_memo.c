/*
 * Declines remembered.  An end that declined with a reason of its own (an
 * io_uring instance, stdio, SO_ZEROCOPY: the OPTUNSUPP class, wire/reg.h)
 * may close before its peer is offered (the peer waits out its pairing
 * delay, or pairs after N calls); the peer then finds no one and would read
 * PEERNOSMC.  Its 4-tuple and reason stay here for MEMO_NS, so that the
 * peer's PAIR is declined with PEERDECL and the reason, as it would have
 * been a moment earlier.  A fixed table, the oldest entry overwritten
 * first: a burst of declines costs no memory, only older memories.
 */
#include <stdlib.h>
#include <time.h>

#include "decl_memo.h"
#include "regidx.h"
#include "sock.h"
#include "state.h"
#include "reg.h"

#define MEMO_N 256
#define MEMO_NS (10ull * 1000000000ull)
#define OWN_CLASS 0x03060000u

struct soft_memo {
	struct soft_sock_id id;
	uint32_t uid;            /* the registering connection's */
	uint32_t reason;         /* 0: a free slot */
	uint64_t at_ns;
};

struct soft_memos {
	struct soft_memo m[MEMO_N];
	unsigned next;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void soft_memo_note(struct soft_state *st, const struct soft_sock *s)
{
	struct soft_memo *e;

	if (s->pair_status != SMC_SOFT_PAIR_DECLINED ||
	    (s->fallback_reason & 0xffff0000u) != OWN_CLASS)
		return;
	if (!st->memos && !(st->memos = calloc(1, sizeof(*st->memos))))
		return;
	e = &st->memos->m[st->memos->next++ % MEMO_N];
	e->id = s->id;
	e->uid = s->conn_uid;
	e->reason = s->fallback_reason;
	e->at_ns = now_ns();
}

uint32_t soft_memo_take(struct soft_state *st, const struct soft_sock *s)
{
	uint64_t now;

	if (!st->memos)
		return 0;
	now = now_ns();
	for (unsigned i = 0; i < MEMO_N; i++) {
		struct soft_memo *e = &st->memos->m[i];
		uint32_t reason = e->reason;

		if (!reason || now - e->at_ns > MEMO_NS)
			continue;
		/* as PAIR pairs: the same namespace, or the same user */
		if ((e->id.netns != s->id.netns && e->uid != s->conn_uid) ||
		    !soft_ids_reversed(&e->id, &s->id))
			continue;
		e->reason = 0;
		return reason;
	}
	return 0;
}

void soft_memo_free(struct soft_state *st)
{
	free(st->memos);
	st->memos = NULL;
}
