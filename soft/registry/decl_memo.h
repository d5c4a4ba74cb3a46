/*
 * Declines remembered (decl_memo.c): the reason of an end that declined for
 * a reason of its own and went before its peer asked, for that peer's PAIR.
 */
#ifndef SOFT_DECL_MEMO_H
#define SOFT_DECL_MEMO_H

#include <stdint.h>

struct soft_state;
struct soft_sock;

/* s goes: remembered if it declined for a reason of its own (OPTUNSUPP's class). */
void soft_memo_note(struct soft_state *st, const struct soft_sock *s);
/* The reason of a remembered end whose connection is s's, taken (0: none). */
uint32_t soft_memo_take(struct soft_state *st, const struct soft_sock *s);
void soft_memo_free(struct soft_state *st);

#endif
