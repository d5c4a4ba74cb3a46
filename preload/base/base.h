/*
 * libsmc-preload.so, its lowest layer (doc/layers.md): the functions
 * behind the hooks, the log, the environment, the library's own system
 * calls, which process this is, the kernel's TCP counters.  Nothing here is
 * exported: the public symbols are the hooks.
 */
#ifndef SMC_PRELOAD_BASE_H
#define SMC_PRELOAD_BASE_H

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#pragma GCC visibility push(hidden)

/* What SMC_BACKEND asks for. */
enum preload_want {
	PRELOAD_WANT_AUTO,	/* kernel SMC when it exists, else TCP */
	PRELOAD_WANT_KERNEL,	/* AF_SMC always; errors go to the application */
	PRELOAD_WANT_SOFT,	/* the user-space backend (smc_softd) */
};

/* The environment, read once at initialisation. */
struct preload_config {
	bool debug;		/* SMC_DEBUG set, non-empty, not starting with '0' */
	int sndbuf;		/* SMC_SNDBUF in bytes, -1 when not set or invalid */
	int rcvbuf;		/* SMC_RCVBUF in bytes, -1 when not set or invalid */
	enum preload_want want;	/* SMC_BACKEND */
};

/* ---- log.c ---- */
void preload_dbg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void preload_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- config.c ---- */
extern struct preload_config preload_cfg;
void preload_config_read(struct preload_config *cfg);
bool preload_parse_debug(const char *value);
int preload_parse_bufsize(const char *value, int *bytes);

/* ---- next.c: the functions this library stands in front of ---- */
struct preload_next {
	ssize_t (*read)(int, void *, size_t);
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*readv)(int, const struct iovec *, int);
	ssize_t (*writev)(int, const struct iovec *, int);
	ssize_t (*recv)(int, void *, size_t, int);
	ssize_t (*send)(int, const void *, size_t, int);
	ssize_t (*recvfrom)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
	ssize_t (*sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
	ssize_t (*recvmsg)(int, struct msghdr *, int);
	ssize_t (*sendmsg)(int, const struct msghdr *, int);
	int (*connect)(int, const struct sockaddr *, socklen_t);
	int (*listen)(int, int);
	int (*accept)(int, struct sockaddr *, socklen_t *);
	int (*accept4)(int, struct sockaddr *, socklen_t *, int);
	int (*close)(int);
	int (*shutdown)(int, int);
	int (*dup)(int);
	int (*dup2)(int, int);
	int (*dup3)(int, int, int);
	int (*fcntl)(int, int, ...);
	int (*fcntl64)(int, int, ...);
	int (*ioctl)(int, unsigned long, ...);
	int (*poll)(struct pollfd *, nfds_t, int);
	int (*ppoll)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
	int (*epoll_create)(int);
	int (*epoll_create1)(int);
	int (*epoll_ctl)(int, int, int, struct epoll_event *);
	int (*epoll_wait)(int, struct epoll_event *, int, int);
	int (*epoll_pwait)(int, struct epoll_event *, int, int, const sigset_t *);
	ssize_t (*sendfile)(int, int, off_t *, size_t);
	ssize_t (*splice)(int, loff_t *, int, loff_t *, size_t, unsigned int);
	int (*sendmmsg)(int, struct mmsghdr *, unsigned int, int);
	int (*recvmmsg)(int, struct mmsghdr *, unsigned int, int, struct timespec *);
	int (*prctl)(int, ...);
	long (*syscall)(long, ...);
	int (*setsockopt)(int, int, int, const void *, socklen_t);
	int (*getsockopt)(int, int, int, void *, socklen_t *);
	int (*execve)(const char *, char *const[], char *const[]);
	pid_t (*fork)(void);
	void (*_exit)(int) __attribute__((noreturn));
	int (*posix_spawn_file_actions_init)(posix_spawn_file_actions_t *);
	int (*posix_spawn_file_actions_destroy)(posix_spawn_file_actions_t *);
	int (*posix_spawn_file_actions_adddup2)(posix_spawn_file_actions_t *, int, int);
	int (*posix_spawn_file_actions_addclose)(posix_spawn_file_actions_t *, int);
	int (*posix_spawn_file_actions_addopen)(posix_spawn_file_actions_t *, int, const char *,
						int, mode_t);
	int (*posix_spawn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			   const posix_spawnattr_t *, char *const[], char *const[]);
	int (*posix_spawnp)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			    const posix_spawnattr_t *, char *const[], char *const[]);
	int (*system)(const char *);
	FILE *(*popen)(const char *, const char *);
	FILE *(*fdopen)(int, const char *);
	int (*select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
	int (*pselect)(int, fd_set *, fd_set *, fd_set *, const struct timespec *,
		       const sigset_t *);
	int (*epoll_pwait2)(int, struct epoll_event *, int, const struct timespec *,
			    const sigset_t *);
	int (*pidfd_getfd)(int, int, unsigned int);
	int (*close_range)(unsigned int, unsigned int, int);
	void (*closefrom)(int);
	/* waits that cannot be cut short (hook_sleep.c) */
	unsigned int (*sleep)(unsigned int);
	int (*usleep)(useconds_t);
	int (*nanosleep)(const struct timespec *, struct timespec *);
	int (*clock_nanosleep)(clockid_t, int, const struct timespec *, struct timespec *);
	int (*pause)(void);
	int (*sigsuspend)(const sigset_t *);
	int (*sigwaitinfo)(const sigset_t *, siginfo_t *);
	int (*sigtimedwait)(const sigset_t *, siginfo_t *, const struct timespec *);
	pid_t (*wait)(int *);
	pid_t (*waitpid)(pid_t, int *, int);
	pid_t (*wait4)(pid_t, int *, int, struct rusage *);
	int (*waitid)(idtype_t, id_t, siginfo_t *, int);
	/* credentials (hook_cred.c) */
	int (*setuid)(uid_t);
	int (*setgid)(gid_t);
	int (*seteuid)(uid_t);
	int (*setegid)(gid_t);
	int (*setreuid)(uid_t, uid_t);
	int (*setregid)(gid_t, gid_t);
	int (*setresuid)(uid_t, uid_t, uid_t);
	int (*setresgid)(gid_t, gid_t, gid_t);
	int (*setgroups)(size_t, const gid_t *);
	int (*initgroups)(const char *, gid_t);
	int (*setfsuid)(uid_t);
	int (*setfsgid)(gid_t);
	int (*capset)(void *, const void *);
	int (*sigaction)(int, const struct sigaction *, struct sigaction *);
};
extern struct preload_next next;

void preload_next_init(void);

/* ---- signals.c: SA_RESTART for the library's own waits ---- */
/* sigaction() as the program calls it. */
int sig_action(int sig, const struct sigaction *act, struct sigaction *old);
/* Taken before a wait; after its EINTR, sig_restarts() says whether recv() would go on. */
unsigned sig_norestart_mark(void);
bool sig_restarts(unsigned mark);

/* ---- soft_config.c ---- */
/* SMC_SOFT_URING (uring.c) */
enum { SOFT_URING_WATCH, SOFT_URING_TCP, SOFT_URING_FILES };
struct soft_config {
	bool enabled;              /* soft mode is on for this process */
	unsigned pair_after;       /* SMC_SOFT_PAIR_AFTER data calls; 0: at connect */
	uint64_t pair_delay_ns;    /* SMC_SOFT_PAIR_DELAY_USEC * 1000; 0: at connect */
	unsigned spin_ns;          /* SMC_SPIN_USEC * 1000; 0 never spins */
	bool multi_cpu;            /* more than one CPU online */
	long ncpus;                /* CPUs online */
	bool futex;                /* SMC_SOFT_FUTEX: blocking receives sleep on a futex */
	bool bells;                /* SMC_SOFT_BELL: poll/epoll waits have an eventfd doorbell */
	bool drive;                /* SMC_SOFT_DRIVE: an RDMA reader takes its link's completions */
	int uring;                 /* SMC_SOFT_URING: SOFT_URING_* (uring.c) */
	/* the daemon's socket, resolved at start: programs such as nginx
	 * clear their environment before they connect anywhere */
	char socket_path[108];
};
extern struct soft_config soft_cfg;
void soft_config_init(bool enabled);

/* ---- sys.c: the library's own system calls, none in a seccomp sandbox ---- */
/* The program installed a seccomp filter: the library adds no system call. */
bool soft_sandboxed(void);
/* The program entered a sandbox: true if it had already. */
bool sys_sandbox_begin(void);
bool sys_bell(int fd);
ssize_t sys_drain(int fd, void *buf, size_t len);
void sys_setsockopt(int fd, int level, int name, const void *val, socklen_t len);
bool sys_tcp_read_total(int fd, uint64_t *out);
bool sys_tcp_sent_total(int fd, int role, uint64_t *out);
/* The socket's stream ended (nothing unread, then FIN); false if unknown. */
bool sys_peek_eof(int fd);
void sys_yield(void);

/* ---- tcp_count.c ---- */
/* Bytes of fd's TCP stream read so far by every process holding it. */
bool soft_tcp_read_total(int fd, uint64_t *out);
/* Bytes of fd's TCP stream written so far by every process holding it (role: sconn's). */
bool soft_tcp_sent_total(int fd, int role, uint64_t *out);

/* ---- image.c ---- */
/* Whether a line of text file path names this library: 1, 0, or -1 unreadable. */
int soft_file_names_library(const char *path);
/* Whether execve(path, ..., envp) starts a program that has this library. */
bool soft_image_has_library(const char *path, char *const envp[]);
/* file as posix_spawnp() finds it along PATH (buf holds it), or file itself. */
const char *soft_image_find(const char *file, char *buf, size_t len);

/* ---- proc.c ---- */
/* Whether this is the child of vfork(): the memory is its parent's. */
bool soft_vfork_child(void);

/* ---- thread.c ---- */
/* A detached thread of the library's, every signal blocked in it (the program's signals are for its own threads): 0 or -errno. */
int lib_thread_start(void *(*fn)(void *), void *arg);

/* ---- wait.c's clock, for every layer ---- */
/* CLOCK_MONOTONIC in nanoseconds (vDSO: no system call). */
static inline int64_t soft_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#pragma GCC visibility pop

#endif
