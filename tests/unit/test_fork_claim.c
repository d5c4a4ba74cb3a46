/*
 * The shared slot through which the copies of an end a fork left NEW
 * decide which one pairs it (preload/conn/fork_claim.c): its steps, in one
 * process with pids for the processes (the page is shared memory, the
 * steps are the same in several).
 */
#include "unit.h"
#include "base.h"
#include "conn.h"

#include <string.h>

static struct claim_slot slot;

/* A slot opened at a fork: the parent's copy and the child's. */
static void two_copies(void)
{
	memset(&slot, 0, sizeof(slot));
	CHECK(claim_slot_open(&slot));
	atomic_fetch_add(&slot.kids, 1);
}

TEST(claim_slot_parent_closes_child_claims_and_cuts_over)
{
	two_copies();
	CHECK(!claim_slot_open(&slot));
	/* the child's first use claims it; the parent may no longer */
	CHECK(claim_slot_take(&slot, 200));
	CHECK(claim_slot_mine(&slot, 200));
	CHECK(!claim_slot_mine(&slot, 100));
	CHECK(!claim_slot_take(&slot, 100));
	/* the parent still holds its copy: no cut-over yet */
	two_copies();
	CHECK(claim_slot_take(&slot, 200));
	CHECK(!claim_slot_done(&slot, 200));
	claim_slot_kid_gone(&slot, 100);
	CHECK_INT(atomic_load(&slot.state), CL_CLAIMED);
	CHECK(claim_slot_done(&slot, 200));
	/* no one takes it while its claimant's count goes */
	CHECK_INT(atomic_load(&slot.state), CL_DONE);
	CHECK(!claim_slot_open(&slot));
	claim_slot_spoil(&slot);
	CHECK_INT(atomic_load(&slot.state), CL_DONE);
	claim_slot_kid_gone(&slot, 200);
	/* free for another end */
	CHECK_INT(atomic_load(&slot.state), CL_FREE);
	CHECK_INT(atomic_load(&slot.kids), 0);
	CHECK(claim_slot_open(&slot));
}

TEST(claim_slot_second_user_makes_it_tcp_for_every_copy)
{
	uint32_t st;

	two_copies();
	CHECK(claim_slot_take(&slot, 200));
	/* the parent uses its copy too (conn_claim_use() spoils it) */
	CHECK(!claim_slot_take(&slot, 100));
	claim_slot_spoil(&slot);
	st = atomic_load(&slot.state);
	CHECK_INT(st, CL_TCP);
	claim_slot_kid_gone(&slot, 100);
	/* the claimant, alone now, still may not cut over */
	CHECK(!claim_slot_done(&slot, 200));
	CHECK(!claim_slot_take(&slot, 200));
	claim_slot_kid_gone(&slot, 200);
	CHECK_INT(atomic_load(&slot.state), CL_FREE);
}

TEST(claim_slot_claimant_gone_first_leaves_the_others_tcp)
{
	two_copies();
	CHECK(claim_slot_take(&slot, 200));
	claim_slot_kid_gone(&slot, 200);
	CHECK_INT(atomic_load(&slot.state), CL_TCP);
	CHECK_INT(atomic_load(&slot.kids), 1);
	CHECK(!claim_slot_take(&slot, 100));
	claim_slot_kid_gone(&slot, 100);
	CHECK_INT(atomic_load(&slot.state), CL_FREE);
}

TEST(claim_slot_unused_copy_gone_leaves_it_open)
{
	two_copies();
	claim_slot_kid_gone(&slot, 100);
	CHECK_INT(atomic_load(&slot.state), CL_OPEN);
	CHECK(claim_slot_take(&slot, 200));
	CHECK(claim_slot_done(&slot, 200));
}

TEST(claim_slot_rejoin_only_the_same_undecided_end)
{
	uint32_t gen;

	/* a close-on-exec copy counted out; its execve failed: in again */
	two_copies();
	gen = atomic_load(&slot.gen);
	claim_slot_kid_gone(&slot, 100);
	CHECK(claim_slot_rejoin(&slot, gen));
	CHECK_INT(atomic_load(&slot.kids), 2);
	/* the other copy cut over alone meanwhile: not again */
	claim_slot_kid_gone(&slot, 100);
	CHECK(claim_slot_take(&slot, 200));
	CHECK(claim_slot_done(&slot, 200));
	CHECK(!claim_slot_rejoin(&slot, gen));
	CHECK_INT(atomic_load(&slot.kids), 1);
	claim_slot_kid_gone(&slot, 200);
	/* freed, then opened for another end: neither counts it in */
	CHECK(!claim_slot_rejoin(&slot, gen));
	CHECK_INT(atomic_load(&slot.kids), 0);
	CHECK(claim_slot_open(&slot));
	CHECK(!claim_slot_rejoin(&slot, gen));
	CHECK_INT(atomic_load(&slot.kids), 1);
	CHECK_INT(atomic_load(&slot.state), CL_OPEN);
}

TEST(claim_slot_a_copy_counted_in_again_stops_the_cut_over)
{
	uint32_t gen;

	/* counted in again before the claimant looks: it is not alone */
	two_copies();
	gen = atomic_load(&slot.gen);
	CHECK(claim_slot_take(&slot, 200));
	claim_slot_kid_gone(&slot, 100);
	CHECK(claim_slot_rejoin(&slot, gen));
	CHECK(!claim_slot_done(&slot, 200));
	CHECK_INT(atomic_load(&slot.state), CL_CLAIMED);
	CHECK(claim_slot_mine(&slot, 200));
	/* counted out again; the claimant decides (DECIDING) and stops there: TCP for both */
	claim_slot_kid_gone(&slot, 100);
	atomic_store(&slot.state, CL_DECIDING);
	CHECK(claim_slot_mine(&slot, 200));
	CHECK(!claim_slot_mine(&slot, 100));
	CHECK(claim_slot_rejoin(&slot, gen));
	CHECK_INT(atomic_load(&slot.state), CL_TCP);
	CHECK_INT(atomic_load(&slot.kids), 2);
	claim_slot_kid_gone(&slot, 100);
	CHECK(!claim_slot_done(&slot, 200));
	/* decided alone: no copy counts in after */
	two_copies();
	gen = atomic_load(&slot.gen);
	CHECK(claim_slot_take(&slot, 200));
	claim_slot_kid_gone(&slot, 100);
	CHECK(claim_slot_done(&slot, 200));
	CHECK(!claim_slot_rejoin(&slot, gen));
	CHECK_INT(atomic_load(&slot.kids), 1);
}

TEST(claim_slot_execve_hands_on_only_the_one_copy)
{
	/* another copy holds it: neither open nor ours may be handed on */
	two_copies();
	CHECK(!claim_slot_hand_on(&slot, 100));
	CHECK_INT(atomic_load(&slot.state), CL_OPEN);
	CHECK_INT(atomic_load(&slot.owner), 0);
	claim_slot_kid_gone(&slot, 200);
	CHECK(claim_slot_hand_on(&slot, 100));
	CHECK_INT(atomic_load(&slot.state), CL_DONE);
	claim_slot_kid_gone(&slot, 100);
	CHECK_INT(atomic_load(&slot.state), CL_FREE);
	/* claimed by another process (killed: its count stays out of the way here): not ours */
	two_copies();
	CHECK(claim_slot_take(&slot, 200));
	atomic_fetch_sub(&slot.kids, 1);
	CHECK(!claim_slot_hand_on(&slot, 100));
	CHECK_INT(atomic_load(&slot.state), CL_CLAIMED);
	CHECK_INT(atomic_load(&slot.owner), 200);
	/* ours: handed on */
	CHECK(claim_slot_hand_on(&slot, 200));
	CHECK_INT(atomic_load(&slot.state), CL_DONE);
	/* spoiled: TCP stays */
	two_copies();
	claim_slot_spoil(&slot);
	claim_slot_kid_gone(&slot, 200);
	CHECK(!claim_slot_hand_on(&slot, 100));
	CHECK_INT(atomic_load(&slot.state), CL_TCP);
}
