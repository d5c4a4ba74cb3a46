/*
 * libsmc-preload.so: connections handed to other images and processes
 * (execve, posix_spawn, a vfork child's descriptors, SCM_RIGHTS) and a
 * seccomp sandbox's rules (doc/layers.md, doc/soft-inherit.md).
 */
#ifndef SMC_PRELOAD_SHARE_H
#define SMC_PRELOAD_SHARE_H

#include "conn.h"

#pragma GCC visibility push(hidden)

/* ---- fdpass.c: SCM_RIGHTS ---- */
/* sendmsg() on a socket the library does not carry: connections in it travel. */
ssize_t soft_fdpass_send(int fd, const struct msghdr *mh, int flags);
/* After recvmsg(): connections that arrived are taken over. */
void soft_fdpass_received(const struct msghdr *mh);
/* The same for sendmmsg() and recvmmsg(). */
int soft_fdpass_sendmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags);
void soft_fdpass_mmsg_received(const struct mmsghdr *vec, int n);
/*
 * pidfd_getfd(2) gave us fd, a dup of another process's descriptor: a
 * connection in it is taken over as from SCM_RIGHTS, with a holder of our
 * own (the other process added none).
 */
void soft_fd_taken(int fd);
/* The sender pairs a connection before it travels; the receiver asks for its region. */
void ctl_pair_now(int fd, struct sconn *sc);
bool ctl_owns(int fd);
void ctl_adopt(int fd, struct sconn *sc);

/* setsockopt(SO_ZEROCOPY) on a connection of ours (lifecycle.c). */
int soft_zerocopy(int fd, struct sconn *sc, const void *val, socklen_t len);

/* ---- exec.c ---- */
/* execve() with the hand-over of this image's connections. */
int soft_execve(const char *path, char *const argv[], char *const envp[]);
/* Take over what the image before execve left in SMC_SOFT_INHERIT. */
void soft_exec_inherit(void);
/*
 * A new process (hook_spawn.c) inherits the connections, ours as child (NULL:
 * none) changes them: envp plus SMC_SOFT_INHERIT, every mapped one with one more holder; NULL when there
 * is nothing to pass.  soft_spawn_done() with whether the process started
 * (false: the holders go again) frees it.
 */
struct soft_spawn;
/* image: the program; unseen: it has no libsmc-preload (then NULL is returned) */
char **soft_spawn_prepare(char *const envp[], const struct child_fds *child, const char *image,
			  bool unseen,
			  struct soft_spawn **sp);
void soft_spawn_done(struct soft_spawn *sp, bool started);
/* The two halves of soft_spawn_done(): the holders now, the memory later. */
void soft_spawn_settle(struct soft_spawn *sp, bool started);
void soft_spawn_free(struct soft_spawn *sp);

/* ---- sandbox.c ---- */
/* sandbox.c: what the library does then */
void soft_sandbox_enter(void);

#pragma GCC visibility pop

#endif
