/*
 * liburing as a shared library: its exported functions are the only way a
 * program's io_uring requests reach the kernel, as liburing makes its system
 * calls itself, past the C library.  The submitting functions read the
 * requests they are about to hand over, and the registering functions the
 * descriptors they are given, before liburing does anything: a connection
 * one names leaves the data path (conn_uring_use, doc/soft-lifecycle.md
 * 1.3), and so do the process's others (soft_uring_names_conn).  What they cannot read (a raw io_uring_setup, a raw io_uring_enter
 * that submits, a table of descriptors updated by a request) makes the
 * process's instances unwatched (soft_uring_note).
 *
 * struct io_uring is liburing's ABI (soname 2), taken from its header; its
 * fields read here are the same in every 2.x release.  The submitting
 * functions are those of liburing up to LIBURING_KNOWN: with a later one,
 * which may have more, every instance counts as unwatched.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>

#include "hooks.h"

#define EXPORT __attribute__((visibility("default")))

_Thread_local bool soft_in_liburing;

static void *next_sym(const char *name)
{
	void *sym = dlsym(RTLD_NEXT, name);

	if (!sym)
		preload_dbg("libsmc-preload: dlsym failed on %s\n", name);
	return sym;
}

#define NEXT(type, name) \
	static type *fn; \
	if (!fn) \
		fn = (type *)next_sym(#name)

/* ---- what requests name ---- */

static void use_fd(int fd)
{
	struct sconn *sc;

	if (fd < 0 || !(sc = fd_get(fd)))
		return;
	conn_uring_use(fd, sc);
	sconn_put(sc);
	soft_uring_names_conn();
}

static void use_fds(const int *fds, unsigned n)
{
	if (!fds || !atomic_load_explicit(&fd_tracked, memory_order_relaxed))
		return;
	for (unsigned i = 0; i < n; i++)
		use_fd(fds[i]);
}

static void check_sqe(const struct io_uring_sqe *sqe)
{
	switch (sqe->opcode) {
	case IORING_OP_NOP:
	case IORING_OP_TIMEOUT:
	case IORING_OP_TIMEOUT_REMOVE:
	case IORING_OP_LINK_TIMEOUT:
	case IORING_OP_ASYNC_CANCEL:
		return;
	case IORING_OP_CLOSE:
		/* let go as close() does, before the kernel closes it */
		if (!sqe->file_index && sqe->fd >= 0)
			soft_fds_closing((unsigned)sqe->fd, (unsigned)sqe->fd);
		return;
	case IORING_OP_FILES_UPDATE:
		/* a table in the program's memory, into the registered files */
		soft_uring_note();
		return;
	case IORING_OP_EPOLL_CTL:
		use_fd((int)sqe->off);
		break;
	case IORING_OP_SPLICE:
	case IORING_OP_TEE:
		if (!(sqe->splice_flags & SPLICE_F_FD_IN_FIXED))
			use_fd(sqe->splice_fd_in);
		break;
	default:
		break;
	}
	/* a registered file was looked at when it was registered */
	if (!(sqe->flags & IOSQE_FIXED_FILE))
		use_fd(sqe->fd);
}

/* The requests queued in ring that liburing has not handed to the kernel yet. */
static void check_queued(struct io_uring *ring)
{
	struct io_uring_sq *sq = &ring->sq;
	unsigned n = sq->sqe_tail - sq->sqe_head, mask, shift;

	if (!n || !atomic_load_explicit(&fd_tracked, memory_order_relaxed))
		return;
	mask = *sq->kring_mask;
	if (n > *sq->kring_entries)
		n = *sq->kring_entries;
	shift = (ring->flags & IORING_SETUP_SQE128) ? 1 : 0;
	for (unsigned i = 0; i < n; i++)
		check_sqe(&sq->sqes[((sq->sqe_head + i) & mask) << shift]);
}

/* ---- set-up: a watched instance, unless SMC_SOFT_URING=tcp ---- */

#define LIBURING_KNOWN_MAJOR 2
#define LIBURING_KNOWN_MINOR 12

typedef int version_fn(void);

/* Whether the liburing in use is one whose submitting functions are all known here. */
static bool liburing_known(void)
{
	static int known = -1;
	version_fn *major, *minor;
	int ma, mi;

	if (known >= 0)
		return known;
	/* before 2.4 there is no version to ask */
	major = (version_fn *)dlsym(RTLD_NEXT, "io_uring_major_version");
	minor = (version_fn *)dlsym(RTLD_NEXT, "io_uring_minor_version");
	ma = major ? major() : 2;
	mi = minor ? minor() : 0;
	known = ma < LIBURING_KNOWN_MAJOR ||
		(ma == LIBURING_KNOWN_MAJOR && mi <= LIBURING_KNOWN_MINOR);
	if (!known)
		preload_dbg("libsmc-preload: liburing %d.%d is newer than %d.%d: its io_uring "
			    "instances are not watched\n", ma, mi, LIBURING_KNOWN_MAJOR,
			    LIBURING_KNOWN_MINOR);
	return known;
}

static void set_up(void)
{
	PRELOAD_INIT();
	if (soft_cfg.uring == SOFT_URING_TCP || !liburing_known())
		soft_uring_note();
}

typedef int init_fn(unsigned entries, struct io_uring *ring, unsigned flags);
typedef int init_params_fn(unsigned entries, struct io_uring *ring, struct io_uring_params *p);
typedef int init_mem_fn(unsigned entries, struct io_uring *ring, struct io_uring_params *p,
			void *buf, size_t buf_size);
typedef int queue_mmap_fn(int fd, struct io_uring_params *p, struct io_uring *ring);
typedef int setup_fn(unsigned entries, struct io_uring_params *p);

EXPORT int io_uring_queue_init(unsigned entries, struct io_uring *ring, unsigned flags)
{
	NEXT(init_fn, io_uring_queue_init);
	int r;

	set_up();
	soft_in_liburing = true;
	r = fn ? fn(entries, ring, flags) : -ENOSYS;
	soft_in_liburing = false;
	return r;
}

EXPORT int io_uring_queue_init_params(unsigned entries, struct io_uring *ring,
				      struct io_uring_params *p)
{
	NEXT(init_params_fn, io_uring_queue_init_params);
	int r;

	set_up();
	soft_in_liburing = true;
	r = fn ? fn(entries, ring, p) : -ENOSYS;
	soft_in_liburing = false;
	return r;
}

EXPORT int io_uring_queue_init_mem(unsigned entries, struct io_uring *ring,
				   struct io_uring_params *p, void *buf, size_t buf_size)
{
	NEXT(init_mem_fn, io_uring_queue_init_mem);
	int r;

	set_up();
	soft_in_liburing = true;
	r = fn ? fn(entries, ring, p, buf, buf_size) : -ENOSYS;
	soft_in_liburing = false;
	return r;
}

/* A ring on a descriptor made some other way: watched only as that was. */
EXPORT int io_uring_queue_mmap(int fd, struct io_uring_params *p, struct io_uring *ring)
{
	NEXT(queue_mmap_fn, io_uring_queue_mmap);

	PRELOAD_INIT();
	return fn ? fn(fd, p, ring) : -ENOSYS;
}

/* liburing's raw system call: what goes through the instance is not seen. */
EXPORT int io_uring_setup(unsigned entries, struct io_uring_params *p)
{
	NEXT(setup_fn, io_uring_setup);

	PRELOAD_INIT();
	soft_uring_note();
	return fn ? fn(entries, p) : -ENOSYS;
}

/* ---- submitting: the queued requests are read first ---- */

typedef int submit_fn(struct io_uring *ring);
typedef int submit_wait_fn(struct io_uring *ring, unsigned wait_nr);
typedef int submit_wait_timeout_fn(struct io_uring *ring, struct io_uring_cqe **cqe_ptr,
				   unsigned wait_nr, struct __kernel_timespec *ts, sigset_t *sigmask);
typedef int wait_cqe_timeout_fn(struct io_uring *ring, struct io_uring_cqe **cqe_ptr,
				struct __kernel_timespec *ts);
typedef int get_cqe_fn(struct io_uring *ring, struct io_uring_cqe **cqe_ptr, unsigned submit,
		       unsigned wait_nr, sigset_t *sigmask);
typedef int submit_wait_min_fn(struct io_uring *ring, struct io_uring_cqe **cqe_ptr,
			       unsigned wait_nr, struct __kernel_timespec *ts, unsigned min_wait,
			       sigset_t *sigmask);
typedef int submit_wait_reg_fn(struct io_uring *ring, struct io_uring_cqe **cqe_ptr,
			       unsigned wait_nr, int reg_index);
typedef int enter_fn(unsigned fd, unsigned to_submit, unsigned min_complete, unsigned flags,
		     sigset_t *sig);
typedef int enter2_fn(unsigned fd, unsigned to_submit, unsigned min_complete, unsigned flags,
		      sigset_t *sig, size_t sz);

#define SUBMIT(ring, call) \
	do { \
		int r_; \
		PRELOAD_INIT(); \
		check_queued(ring); \
		soft_in_liburing = true; \
		r_ = fn ? (call) : -ENOSYS; \
		soft_in_liburing = false; \
		return r_; \
	} while (0)

EXPORT int io_uring_submit(struct io_uring *ring)
{
	NEXT(submit_fn, io_uring_submit);
	SUBMIT(ring, fn(ring));
}

EXPORT int io_uring_submit_and_wait(struct io_uring *ring, unsigned wait_nr)
{
	NEXT(submit_wait_fn, io_uring_submit_and_wait);
	SUBMIT(ring, fn(ring, wait_nr));
}

EXPORT int io_uring_submit_and_wait_timeout(struct io_uring *ring, struct io_uring_cqe **cqe_ptr,
					    unsigned wait_nr, struct __kernel_timespec *ts,
					    sigset_t *sigmask)
{
	NEXT(submit_wait_timeout_fn, io_uring_submit_and_wait_timeout);
	SUBMIT(ring, fn(ring, cqe_ptr, wait_nr, ts, sigmask));
}

EXPORT int io_uring_submit_and_get_events(struct io_uring *ring)
{
	NEXT(submit_fn, io_uring_submit_and_get_events);
	SUBMIT(ring, fn(ring));
}

/* with a timeout these queue one more request and submit everything queued */
EXPORT int io_uring_wait_cqes(struct io_uring *ring, struct io_uring_cqe **cqe_ptr,
			      unsigned wait_nr, struct __kernel_timespec *ts, sigset_t *sigmask)
{
	NEXT(submit_wait_timeout_fn, io_uring_wait_cqes);
	SUBMIT(ring, fn(ring, cqe_ptr, wait_nr, ts, sigmask));
}

EXPORT int io_uring_wait_cqe_timeout(struct io_uring *ring, struct io_uring_cqe **cqe_ptr,
				     struct __kernel_timespec *ts)
{
	NEXT(wait_cqe_timeout_fn, io_uring_wait_cqe_timeout);
	SUBMIT(ring, fn(ring, cqe_ptr, ts));
}

/* liburing 2.8 */
EXPORT int io_uring_submit_and_wait_min_timeout(struct io_uring *ring,
						struct io_uring_cqe **cqe_ptr, unsigned wait_nr,
						struct __kernel_timespec *ts, unsigned min_wait,
						sigset_t *sigmask)
{
	NEXT(submit_wait_min_fn, io_uring_submit_and_wait_min_timeout);
	SUBMIT(ring, fn(ring, cqe_ptr, wait_nr, ts, min_wait, sigmask));
}

EXPORT int io_uring_wait_cqes_min_timeout(struct io_uring *ring, struct io_uring_cqe **cqe_ptr,
					  unsigned wait_nr, struct __kernel_timespec *ts,
					  unsigned min_wait, sigset_t *sigmask)
{
	NEXT(submit_wait_min_fn, io_uring_wait_cqes_min_timeout);
	SUBMIT(ring, fn(ring, cqe_ptr, wait_nr, ts, min_wait, sigmask));
}

EXPORT int io_uring_submit_and_wait_reg(struct io_uring *ring, struct io_uring_cqe **cqe_ptr,
					unsigned wait_nr, int reg_index)
{
	NEXT(submit_wait_reg_fn, io_uring_submit_and_wait_reg);
	SUBMIT(ring, fn(ring, cqe_ptr, wait_nr, reg_index));
}

/* what liburing's inline waits call; submit counts requests handed over already */
EXPORT int __io_uring_get_cqe(struct io_uring *ring, struct io_uring_cqe **cqe_ptr,
			      unsigned submit, unsigned wait_nr, sigset_t *sigmask)
{
	NEXT(get_cqe_fn, __io_uring_get_cqe);
	SUBMIT(ring, fn(ring, cqe_ptr, submit, wait_nr, sigmask));
}

/* liburing's raw io_uring_enter: requests it submits were written past liburing */
EXPORT int io_uring_enter(unsigned fd, unsigned to_submit, unsigned min_complete, unsigned flags,
			  sigset_t *sig)
{
	NEXT(enter_fn, io_uring_enter);

	PRELOAD_INIT();
	if (to_submit)
		soft_uring_note();
	return fn ? fn(fd, to_submit, min_complete, flags, sig) : -ENOSYS;
}

EXPORT int io_uring_enter2(unsigned fd, unsigned to_submit, unsigned min_complete,
			   unsigned flags, sigset_t *sig, size_t sz)
{
	NEXT(enter2_fn, io_uring_enter2);

	PRELOAD_INIT();
	if (to_submit)
		soft_uring_note();
	return fn ? fn(fd, to_submit, min_complete, flags, sig, sz) : -ENOSYS;
}

/* ---- registered files: looked at when registered ---- */

typedef int reg_files_fn(struct io_uring *ring, const int *files, unsigned nr);
typedef int reg_files_tags_fn(struct io_uring *ring, const int *files, const __u64 *tags,
			      unsigned nr);
typedef int upd_files_fn(struct io_uring *ring, unsigned off, const int *files, unsigned nr);
typedef int upd_files_tag_fn(struct io_uring *ring, unsigned off, const int *files,
			     const __u64 *tags, unsigned nr);
typedef int register_fn(unsigned fd, unsigned opcode, const void *arg, unsigned nr_args);

EXPORT int io_uring_register_files(struct io_uring *ring, const int *files, unsigned nr)
{
	NEXT(reg_files_fn, io_uring_register_files);

	PRELOAD_INIT();
	use_fds(files, nr);
	return fn ? fn(ring, files, nr) : -ENOSYS;
}

EXPORT int io_uring_register_files_tags(struct io_uring *ring, const int *files,
					const __u64 *tags, unsigned nr)
{
	NEXT(reg_files_tags_fn, io_uring_register_files_tags);

	PRELOAD_INIT();
	use_fds(files, nr);
	return fn ? fn(ring, files, tags, nr) : -ENOSYS;
}

EXPORT int io_uring_register_files_update(struct io_uring *ring, unsigned off, const int *files,
					  unsigned nr)
{
	NEXT(upd_files_fn, io_uring_register_files_update);

	PRELOAD_INIT();
	use_fds(files, nr);
	return fn ? fn(ring, off, files, nr) : -ENOSYS;
}

EXPORT int io_uring_register_files_update_tag(struct io_uring *ring, unsigned off,
					      const int *files, const __u64 *tags, unsigned nr)
{
	NEXT(upd_files_tag_fn, io_uring_register_files_update_tag);

	PRELOAD_INIT();
	use_fds(files, nr);
	return fn ? fn(ring, off, files, tags, nr) : -ENOSYS;
}

/* liburing's raw io_uring_register: the descriptor tables it can be given */
EXPORT int io_uring_register(unsigned fd, unsigned opcode, const void *arg, unsigned nr_args)
{
	NEXT(register_fn, io_uring_register);

	PRELOAD_INIT();
	switch (opcode) {
	case IORING_REGISTER_FILES:
		use_fds(arg, nr_args);
		break;
	case IORING_REGISTER_FILES_UPDATE: {
		const struct io_uring_files_update *u = arg;

		if (u)
			use_fds((const int *)(uintptr_t)u->fds, nr_args);
		break;
	}
	case IORING_REGISTER_FILES2: {
		const struct io_uring_rsrc_register *r = arg;

		if (r && nr_args == sizeof(*r))
			use_fds((const int *)(uintptr_t)r->data, r->nr);
		break;
	}
	case IORING_REGISTER_FILES_UPDATE2: {
		const struct io_uring_rsrc_update2 *u = arg;

		if (u && nr_args == sizeof(*u))
			use_fds((const int *)(uintptr_t)u->data, u->nr);
		break;
	}
	default:
		break;
	}
	return fn ? fn(fd, opcode, arg, nr_args) : -ENOSYS;
}
