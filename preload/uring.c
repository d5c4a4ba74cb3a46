/*
 * io_uring: reads and writes the library does not see.  Once the process
 * has an io_uring instance, its connections are not cut over to the ring:
 * each is offered to the daemon as declined (SMC_CLC_DECL_OPTUNSUPP, shown
 * by smcss; the peer falls back with PEERDECL), so both ends stay TCP.
 *
 * Seen: io_uring_setup through syscall() (hook_syscall.c), and liburing's
 * set-up functions when liburing is a shared library; a forked child
 * inherits what its parent saw, and no instance survives execve (its
 * descriptor is always close-on-exec), and an instance received with
 * SCM_RIGHTS or taken with pidfd_getfd.  A connection on shared memory that
 * has not cut over when the instance comes stays on TCP for good, with the
 * same reason.  Not seen: raw system calls (liburing built without libc,
 * static programs), and a connection already cut over when the instance
 * comes.  smc_run(8) says so.
 */
#include <errno.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "preload.h"
#include "soft.h"
#include "reg.h"

#define EXPORT __attribute__((visibility("default")))

static _Atomic bool uring_seen;

bool soft_uring_seen(void)
{
	return atomic_load_explicit(&uring_seen, memory_order_relaxed);
}

static void uring_fall_back(int fd, struct sconn *sc, void *arg)
{
	(void)arg;
	sconn_fall_back(fd, sc, SMC_SOFT_DECL_URING);
}

void soft_uring_note(void)
{
	if (atomic_exchange(&uring_seen, true))
		return;
	preload_dbg("libsmc-preload: io_uring in use: new connections stay TCP\n");
	if (atomic_load(&fd_tracked) && !soft_sandboxed()) {
		fd_for_each(uring_fall_back, NULL);
		/* those waiting for their offer decline now, so that their peers know */
		offer_all_now();
	}
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

static void *next_sym(const char *name)
{
	void *sym = dlsym(RTLD_NEXT, name);

	if (!sym)
		preload_dbg("libsmc-preload: dlsym failed on %s\n", name);
	return sym;
}

/*
 * liburing's ways in; its types stay opaque here.  Only a program that
 * links liburing calls these, so the next definition exists.
 */
typedef int setup_fn(unsigned entries, void *params);
typedef int init_fn(unsigned entries, void *ring, unsigned flags);
typedef int init_params_fn(unsigned entries, void *ring, void *params);
typedef int init_mem_fn(unsigned entries, void *ring, void *params, void *buf, size_t len);

EXPORT int io_uring_setup(unsigned entries, void *params)
{
	static setup_fn *fn;

	soft_uring_note();
	if (!fn)
		fn = (setup_fn *)next_sym("io_uring_setup");
	return fn ? fn(entries, params) : -ENOSYS;
}

EXPORT int io_uring_queue_init(unsigned entries, void *ring, unsigned flags)
{
	static init_fn *fn;

	soft_uring_note();
	if (!fn)
		fn = (init_fn *)next_sym("io_uring_queue_init");
	return fn ? fn(entries, ring, flags) : -ENOSYS;
}

EXPORT int io_uring_queue_init_params(unsigned entries, void *ring, void *params)
{
	static init_params_fn *fn;

	soft_uring_note();
	if (!fn)
		fn = (init_params_fn *)next_sym("io_uring_queue_init_params");
	return fn ? fn(entries, ring, params) : -ENOSYS;
}

EXPORT int io_uring_queue_init_mem(unsigned entries, void *ring, void *params, void *buf,
				   size_t len)
{
	static init_mem_fn *fn;

	soft_uring_note();
	if (!fn)
		fn = (init_mem_fn *)next_sym("io_uring_queue_init_mem");
	return fn ? fn(entries, ring, params, buf, len) : -ENOSYS;
}
