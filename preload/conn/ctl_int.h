/*
 * Between the files of the control connection: the messenger
 * (ctl_channel.c), the pairing (ctl.c), the negotiation between hosts
 * (ctl_negotiate.c), new processes (settle.c) and the link groups told
 * to the daemon (lgr_report.c).  Nothing outside them includes this;
 * their entry points are in conn.h.
 */
#ifndef SMC_PRELOAD_CTL_INT_H
#define SMC_PRELOAD_CTL_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "conn.h"
#include "reg_client.h"

/* How long a wait for the daemon may take. */
#define CTL_TIMEOUT_MS 1000
/* a negotiation between hosts, at most (ctl_negotiate.c) */
#define CTL_NEG_MS 10000
/* how long our DECLINE is kept by the peer's daemon, a declining negotiation's time past CTL_NEG_MS */
#define CTL_NEG_DECLINE_MS 2000

/* Held for every use of chan and of the pairing's state. */
extern pthread_mutex_t ctl_mu;
/* The control connection (fd -1: none). */
extern struct soft_reg_conn chan;
/* Bumped by each control connection we use (a token's sconn.token_conn). */
extern unsigned chan_gen;

/* ---- ctl_channel.c, each with ctl_mu held ---- */
/* Open it unless open, at most once a second after a failure. */
bool chan_open(void);
/* The daemon's socket file exists (looked at once a second at most; no lock needed). */
bool chan_daemon_there(void);
/* The next chan_open() tries at once. */
void chan_retry_now(void);
/* The connection broke: closed, its bells and backlog forgotten. */
void chan_lost(void);
/* The daemon died or dropped us: chan_lost() and a new daemon epoch. */
void chan_gone(void);
/* The daemon hung up since (its regions went with it). */
bool chan_broken(void);
/* The SOCK_DEL backlog, in order, while the daemon takes it. */
void chan_del_flush(void);
/* A SOCK_DEL by token (proof: the socket, or -1) or by PAIR sequence number. */
void chan_del_send(uint64_t token, uint32_t seq, int proof);
/* The connection the image before execve() left, its counters attached again. */
void chan_adopt(int fd, uint16_t family, uint32_t seq);
/* In a forked child: none of the parent's connection or replies. */
void chan_after_fork_child(void);
/* Without the lock: SOCK_DELs wait in the backlog; BELL replies are due. */
bool chan_dels_due(void);
bool chan_bells_due(void);
/* A BELL reply was read. */
void chan_bell_taken(void);

/* ---- lgr_report.c, with ctl_mu held ---- */
/* The process's soft SMC-R link groups to the daemon, if any changed since. */
void ctl_lgr_report(void);
/* Some are told: a change may come without anything to wake the negotiator. */
bool ctl_lgr_told(void);
/* Nothing told (a new daemon connection, or a forked child whose groups are its own). */
void ctl_lgr_forget(void);

/* ---- ctl.c, each with ctl_mu held ---- */
/* PAIR sc (socket fd) if it is still NEW. */
void ctl_pair_locked(int fd, struct sconn *sc);
/* Replies until none (exec_only: no SOCK_INFO) is due, each wait bounded. */
void ctl_wait_replies(bool exec_only);
/* Every request still out is given up: its socket stays TCP. */
void ctl_pend_drop_all(void);
/* The daemon died or dropped us: requests given up, chan_gone(). */
void ctl_daemon_gone(void);
/* The replies that came, without waiting, each to its request's owner. */
void ctl_replies_locked(void);

/* ---- ctl_negotiate.c: connections between hosts negotiate SMC-R, with ctl_mu held ---- */
/* A PAIR reply of ASKING for sc: its negotiation starts, with the caller's reference. */
void ctl_neg_start(struct sconn *sc, const struct soft_pair_reply *r);
/* A CLC reply (or its error). */
void ctl_neg_reply(const struct soft_pair_reply *r);
/* Every negotiation ends on TCP: the daemon went. */
void ctl_neg_drop_all(void);
/* Without the lock: CLC questions are out, their replies due. */
bool ctl_neg_due(void);
/* Negotiations of this process not over yet. */
bool ctl_neg_running(void);
/* ctl_attaches_release() with ctl_mu held (a fork's parent: settle.c). */
void ctl_neg_release_attaches(void);
/* In a forked child: the parent's requests are not counted as ours. */
void ctl_pend_after_fork_child(void);
/* The control thread runs (started once), woken: false if it cannot start. */
bool ctl_thread_wake(void);
/* In a forked child: none of the parent's negotiations or its thread. */
void ctl_neg_after_fork_child(void);
/* PAIR or CLC replies are due (ctl.c). */
bool ctl_replies_due(void);

/* ---- ctl_rebuild.c: a link group's only link rebuilt through the daemons, with ctl_mu held ---- */
struct smcr_rebuild_msg;
/* The link groups' env.rebuild: group key's message for the peer (without ctl_mu). */
void ctl_rebuild_out(uint32_t key, const struct smcr_rebuild_msg *m);
/* The control thread's: our messages to the daemon, and the question for the peer's when due. */
void ctl_rebuild_work(void);
/* Without the lock: REBUILD replies are due. */
bool ctl_rebuild_due(void);
/* A REBUILD reply (or its error). */
void ctl_rebuild_reply(const struct soft_pair_reply *r);
/* The peer's messages that came, to their groups, ctl_mu let go meanwhile: whether there were any. */
bool ctl_rebuild_deliver(void);
/* Nothing given, asked or kept (the daemon went, a forked child). */
void ctl_rebuild_drop(void);

#endif
