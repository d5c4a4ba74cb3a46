/*
 * The shared slot through which a forked child asks the owner of an end
 * (preload/conn/fork_share.c) to take it back to TCP: its steps, in one
 * process (the page is shared memory, the steps are the same in two).
 */
#include "unit.h"
#include "base.h"
#include "conn.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

static struct fork_slot slot;

/* A slot taken for an end, with one child's copy. */
static void one_copy(void)
{
	memset(&slot, 0, sizeof(slot));
	CHECK(fork_slot_take(&slot));
	atomic_fetch_add(&slot.kids, 1);
}

TEST(fork_slot_taken_once_until_free)
{
	uint32_t gen;

	preload_next_init();
	memset(&slot, 0, sizeof(slot));
	CHECK(fork_slot_take(&slot));
	gen = atomic_load(&slot.gen);
	CHECK_INT(atomic_load(&slot.state), FS_HELD);
	CHECK(!fork_slot_take(&slot));
	/* the owner lets go with no copy left: free, and taken again with a new generation */
	fork_slot_owner_gone(&slot);
	CHECK_INT(atomic_load(&slot.state), FS_FREE);
	CHECK(fork_slot_take(&slot));
	CHECK(atomic_load(&slot.gen) != gen);
	CHECK(!atomic_load(&slot.owner_gone));
}

/* The answering thread takes only an asked slot; the owner's own let-go takes a held one too. */
TEST(fork_slot_claimed_once)
{
	preload_next_init();
	one_copy();
	CHECK(!fork_slot_claim(&slot, true));
	fork_slot_ask(&slot);
	CHECK_INT(atomic_load(&slot.state), FS_WANTED);
	CHECK(fork_slot_claim(&slot, true));
	CHECK_INT(atomic_load(&slot.state), FS_GOING);
	CHECK(!fork_slot_claim(&slot, false));
	/* asking again changes nothing */
	fork_slot_ask(&slot);
	CHECK_INT(atomic_load(&slot.state), FS_GOING);

	one_copy();
	CHECK(fork_slot_claim(&slot, false));
	fork_slot_settle(&slot, true);
	CHECK_INT(atomic_load(&slot.state), FS_TCP);
	CHECK(!fork_slot_claim(&slot, false));
	fork_slot_ask(&slot);
	CHECK_INT(atomic_load(&slot.state), FS_TCP);
}

/* A copy that lets go after the owner did frees the slot: the last one only. */
TEST(fork_slot_freed_by_the_last_copy)
{
	preload_next_init();
	one_copy();
	atomic_fetch_add(&slot.kids, 1);
	CHECK(fork_slot_claim(&slot, false));
	fork_slot_settle(&slot, false);
	fork_slot_owner_gone(&slot);
	/* could not, and let go: for good */
	CHECK_INT(atomic_load(&slot.state), FS_ENDED);
	fork_slot_kid_gone(&slot);
	CHECK_INT(atomic_load(&slot.state), FS_ENDED);
	fork_slot_kid_gone(&slot);
	CHECK_INT(atomic_load(&slot.state), FS_FREE);

	/* while the owner holds the end, the slot stays its own */
	one_copy();
	fork_slot_kid_gone(&slot);
	CHECK_INT(atomic_load(&slot.state), FS_HELD);

	/* went back while its owner let go (the answering thread): free once settled */
	one_copy();
	fork_slot_ask(&slot);
	CHECK(fork_slot_claim(&slot, true));
	fork_slot_owner_gone(&slot);
	fork_slot_kid_gone(&slot);
	CHECK_INT(atomic_load(&slot.state), FS_GOING);
	fork_slot_settle(&slot, true);
	CHECK_INT(atomic_load(&slot.state), FS_FREE);
}

static void *owner_answers(void *arg)
{
	(void)arg;
	while (!fork_slot_claim(&slot, true))
		usleep(1000);
	usleep(20000);
	fork_slot_settle(&slot, true);
	return NULL;
}

/* A child waits for the owner's answer (woken through the futex), or gives up. */
TEST(fork_slot_wait_for_the_answer)
{
	pthread_t t;

	preload_next_init();
	one_copy();
	CHECK_INT(pthread_create(&t, NULL, owner_answers, NULL), 0);
	fork_slot_ask(&slot);
	CHECK_INT(fork_slot_wait(&slot, (int)getpid(), soft_now_ns() + 10 * 1000000000LL), FS_TCP);
	pthread_join(t, NULL);

	/* nobody answers: lost at the deadline, the slot as it was */
	one_copy();
	fork_slot_ask(&slot);
	CHECK_INT(fork_slot_wait(&slot, (int)getpid(), soft_now_ns() + 50000000), FS_LOST);
	CHECK_INT(atomic_load(&slot.state), FS_WANTED);
	/* an owner that no longer exists: lost at once */
	CHECK_INT(fork_slot_wait(&slot, 0x3ffffff0, soft_now_ns() + 10 * 1000000000LL), FS_LOST);
}

/* An owner that could not go back may later: a new ask, or its own let-go, claims a lost slot. */
TEST(fork_slot_lost_asked_again)
{
	preload_next_init();
	one_copy();
	fork_slot_ask(&slot);
	CHECK(fork_slot_claim(&slot, true));
	fork_slot_settle(&slot, false);
	fork_slot_unask(&slot);
	CHECK_INT(atomic_load(&slot.state), FS_LOST);
	CHECK(!fork_slot_claim(&slot, true));
	/* two children ask; one gives up: the other's question stays */
	fork_slot_ask(&slot);
	CHECK_INT(atomic_load(&slot.state), FS_WANTED);
	fork_slot_ask(&slot);
	fork_slot_unask(&slot);
	CHECK_INT(atomic_load(&slot.state), FS_WANTED);
	/* the last one: the owner goes back for nobody */
	fork_slot_unask(&slot);
	CHECK_INT(atomic_load(&slot.state), FS_HELD);
	CHECK(!fork_slot_claim(&slot, true));
	fork_slot_settle(&slot, false);
	CHECK(fork_slot_claim(&slot, false));
	CHECK_INT(atomic_load(&slot.state), FS_GOING);
}

/* An owner that let go answers nobody: a lost slot is not asked again, and a waiter is woken. */
TEST(fork_slot_ended_when_its_owner_let_go)
{
	preload_next_init();
	one_copy();
	CHECK(fork_slot_claim(&slot, false));
	fork_slot_settle(&slot, false);
	fork_slot_owner_gone(&slot);
	CHECK_INT(atomic_load(&slot.state), FS_ENDED);
	fork_slot_ask(&slot);
	CHECK_INT(atomic_load(&slot.state), FS_ENDED);
	CHECK_INT(fork_slot_wait(&slot, (int)getpid(), soft_now_ns() + 10 * 1000000000LL), FS_ENDED);
	fork_slot_unask(&slot);
	CHECK_INT(atomic_load(&slot.state), FS_ENDED);
	/* a question asked just before the let-go ends too */
	one_copy();
	fork_slot_ask(&slot);
	fork_slot_owner_gone(&slot);
	CHECK_INT(atomic_load(&slot.state), FS_ENDED);
}
