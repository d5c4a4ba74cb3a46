/*
 * io_uring: reads and writes the library does not see itself
 * (doc/soft-lifecycle.md 1.3).
 *
 * Watched: an instance made with liburing's set-up functions when liburing
 * is a shared library.  Its requests reach the kernel only through
 * liburing's submitting functions, which read them first
 * (uring_liburing.c): while none names a connection, the connections keep
 * the data path.  The first that does shows a program that uses io_uring for
 * its sockets: that connection leaves the data path (conn_uring_use), and
 * every other one as if the instance were not watched.
 *
 * Not watched (soft_uring_note): an instance made with io_uring_setup
 * through syscall() (hook_syscall.c) or liburing's raw io_uring_setup,
 * requests handed over with a raw io_uring_enter, an instance received with
 * SCM_RIGHTS or taken with pidfd_getfd.  Then the process's connections
 * are not cut over to the ring: each is offered to the daemon as declined
 * (SMC_SOFT_DECL_URING, shown by smcss; the peer falls back with PEERDECL),
 * so both ends stay TCP, and one on shared memory or RDMA that has not cut
 * over when the instance comes stays on TCP for good, with the same reason;
 * one on RDMA that has cut over goes back to TCP first, all such ends
 * together (conn_uring_unwatched_all()), a forked child's copy of its parent's
 * through the parent.  A
 * forked child inherits what its parent saw; no instance survives execve
 * (its descriptor is always close-on-exec).
 *
 * SMC_SOFT_URING (soft_config.c) changes this: "tcp" treats every instance
 * as not watched, "files" takes the program's word that its instances not
 * watched never reach a connection.
 *
 * Not seen at all: raw system calls made without the C library (liburing
 * linked statically, static programs), and a connection already cut over
 * to shared memory when an instance not watched comes.  smc_run(8) says so.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "conn.h"
#include "reg.h"

static _Atomic bool uring_seen;

bool soft_uring_seen(void)
{
	return atomic_load_explicit(&uring_seen, memory_order_relaxed);
}

void conn_uring_unwatched_all(void)
{
	static const struct conn_backs_rule unwatched = {
		.reason = SMC_SOFT_DECL_URING, .others = true, .waits_for_senders = true,
	};

	conn_backs_all(&unwatched);
}

static void uring_all_tcp(const char *why)
{
	if (atomic_exchange(&uring_seen, true))
		return;
	preload_dbg("libsmc-preload: %s: new connections stay TCP\n", why);
	if (atomic_load(&fd_tracked) && !soft_sandboxed()) {
		conn_uring_unwatched_all();
		/* those waiting for their offer decline now, so that their peers know */
		offer_all_now();
	}
}

void soft_uring_note(void)
{
	if (soft_cfg.uring == SOFT_URING_FILES) {
		preload_dbg("libsmc-preload: io_uring instance not watched, taken as for files "
			    "only (SMC_SOFT_URING=files)\n");
		return;
	}
	uring_all_tcp("io_uring instance not watched");
}

void soft_uring_names_conn(void)
{
	uring_all_tcp("an io_uring request names a connection");
}

#define URING_LINK "anon_inode:[io_uring]"

void soft_uring_check_fd(int fd)
{
	char path[40], link[sizeof(URING_LINK)];
	struct stat st;
	ssize_t n;

	/* anonymous inodes (eventfd, epoll, io_uring...) have no file type */
	if (soft_uring_seen() || fstat(fd, &st) < 0 || (st.st_mode & S_IFMT))
		return;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link));
	if (n == (ssize_t)strlen(URING_LINK) && !memcmp(link, URING_LINK, (size_t)n))
		soft_uring_note();
}
