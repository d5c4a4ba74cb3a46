/*
 * preload/conn/child_fds.c: what a new process's descriptors will name.
 * posix_spawn's file actions run in the child, so a connection they move
 * is still under its old number in the spawning process: the library acts
 * on it there (back to TCP, a doorbell), never on the child's number.
 */
#include "unit.h"
#include "base.h"
#include "conn.h"

#include <spawn.h>
#include <sys/socket.h>
#include <unistd.h>

static const struct child_fds_ent *child_ent(const struct child_fds *c, int fd)
{
	for (unsigned i = 0; i < c->n; i++)
		if (c->e[i].fd == fd)
			return &c->e[i];
	return NULL;
}

TEST(child_fds_spawn_actions_keep_the_spawning_descriptor)
{
	struct soft_config saved = soft_cfg;
	posix_spawn_file_actions_t fa;
	const struct child_fds_ent *e;
	struct child_fds c;
	struct sconn *sc;
	int s, other[2];

	preload_next_init();
	soft_config_init(true);
	s = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(s > 2);
	CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, other), 0);
	CHECK(fd_track(s, 0));
	CHECK((sc = fd_get(s)) != NULL);
	/* the socket by way of 40 to the child's stdin, then everything above 2 closed */
	child_fds_fa_record(&fa, FA_DUP2, s, 40);
	child_fds_fa_record(&fa, FA_DUP2, 40, 0);
	child_fds_fa_record(&fa, FA_DUP2, other[0], 1);
	child_fds_fa_record(&fa, FA_CLOSEFROM, 3, -1);
	child_fds_of_actions(&c, &fa);

	CHECK((e = child_ent(&c, 0)) != NULL);
	if (e) {
		CHECK(e->sc == sc);
		CHECK_INT(e->here, s);
		CHECK(!e->cloexec);
	}
	CHECK((e = child_ent(&c, 40)) != NULL);
	if (e)
		CHECK(e->sc == NULL);
	CHECK((e = child_ent(&c, s)) != NULL);
	if (e)
		CHECK(e->sc == NULL);
	/* no connection over stdout: nothing to act on */
	CHECK(child_ent(&c, 1) == NULL || child_ent(&c, 1)->sc == NULL);

	child_fds_release(&c);
	child_fds_fa_forget(&fa);
	sconn_put(sc);
	CHECK(fd_untrack(s));
	close(s);
	close(other[0]);
	close(other[1]);
	soft_cfg = saved;
}

/* close_range() in a vfork() child: its own dup2'd descriptors in the range go too, or turn close-on-exec. */
TEST(child_fds_close_range_takes_the_child_s_own_descriptors)
{
	struct soft_config saved = soft_cfg;
	posix_spawn_file_actions_t fa;
	const struct child_fds_ent *e;
	struct child_fds c;
	struct sconn *sc;
	int s;

	preload_next_init();
	soft_config_init(true);
	s = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(s > 2);
	CHECK(fd_track(s, 0));
	CHECK((sc = fd_get(s)) != NULL);
	child_fds_fa_record(&fa, FA_DUP2, s, 40);
	child_fds_fa_record(&fa, FA_DUP2, s, 41);
	child_fds_of_actions(&c, &fa);
	child_fds_close_range(&c, 41, 100, true);
	CHECK((e = child_ent(&c, 41)) != NULL);
	if (e)
		CHECK(e->sc == sc && e->cloexec);
	child_fds_close_range(&c, 30, 40, false);
	CHECK((e = child_ent(&c, 40)) != NULL);
	if (e)
		CHECK(e->sc == NULL && e->here == -1);
	CHECK((e = child_ent(&c, 41)) != NULL);
	if (e)
		CHECK(e->sc == sc);

	child_fds_release(&c);
	child_fds_fa_forget(&fa);
	sconn_put(sc);
	CHECK(fd_untrack(s));
	close(s);
	soft_cfg = saved;
}
