/*
 * What the SMC_SOFT handlers share: reading a passed socket, filing a new
 * registration, dropping one (reg.c), and the parts of PAIR and
 * STATS_ATTACH that the registration's lifetime calls (pair.c,
 * pstats_att.c).
 */
#ifndef SOFT_REG_INT_H
#define SOFT_REG_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>

#include "soft_nl.h"
#include "state.h"
#include "sock.h"

/*
 * Read the passed socket and check the claimed state; ifname (may be NULL)
 * gets the interface the socket uses, "" when unknown.  The fd is closed
 * either way.
 */
int soft_reg_read_fd(struct soft_req *r, int fd, uint8_t state, struct soft_sock_id *id,
		     uint64_t fallback_netns, char ifname[IF_NAMESIZE]);
/* EEXIST when the socket is registered already, ENOSPC when r's connection is full. */
int soft_reg_check_new(const struct soft_req *r, const struct soft_sock_id *id);
/* Token, owner and indexes for a new registration, at the head of its namespace's list. */
int soft_reg_link(struct soft_req *r, struct soft_ns *ns, struct soft_sock *s);
/* Out of the lists and indexes, its pairing ended, freed. */
void soft_reg_drop(struct soft_state *st, struct soft_sock *s);


/* pair.c */
int soft_pair(struct soft_req *r);
int soft_sock_info(struct soft_req *r);
/* The registration goes away: its side of the region, stats, link group. */
void soft_pair_end(struct soft_state *st, struct soft_sock *s);
/* DECLINED with reason (peer_diagnosis diag), counted as a fallback, its region left. */
void soft_pair_decline(struct soft_state *st, struct soft_sock *s, uint32_t reason, uint32_t diag);
/*
 * TCP for good with reason, and its peer with PEERDECL (FALLBACK); one
 * DECLINED stays.  diag: the peer's code, for an end between hosts whose
 * library heard the peer's DECLINE (reason PEERDECL).
 */
void soft_pair_fall_back(struct soft_state *st, struct soft_sock *s, uint32_t reason, uint32_t diag);
/* The conninfo of a registration, with the live cursors when it is paired. */
void soft_pair_conninfo(const struct soft_sock *s, struct soft_conninfo *ci);

/* peer_ask.c: ends whose peer is on another host (doc/soft-roce.md section 2) */
int64_t soft_now_ms(void);                   /* CLOCK_MONOTONIC */
/* Whether s's peer is on another host, with a control port to ask its daemon. */
bool soft_peer_remote(const struct soft_state *st, const struct soft_ns *ns,
		      const struct soft_sock *s, const char *ifname);
/*
 * s (registered, 4-tuple indexed, on interface ifname of namespace ns)
 * asks, when the interface has an SMC-R device; it declines with verdict
 * (0: no SMC device it can use).  0 or -ENOMEM.
 */
int soft_peer_ask_begin(struct soft_state *st, const struct soft_ns *ns, struct soft_sock *s,
			uint32_t verdict, const char *ifname, int64_t now);
/* Out of the list of ends still asking (a decline does it). */
void soft_peer_unlink(struct soft_sock *s);
struct soft_peer_msg;
/* The connection as s sees it, in a message of the type. */
void soft_peer_msg_of(const struct soft_sock *s, uint8_t type, struct soft_peer_msg *m);
/* To the daemon of m's peer address, at port (0: the control port). */
void soft_peer_send(struct soft_state *st, const struct soft_peer_msg *m, uint16_t port,
		    uint32_t ifindex);
/* m (without bytes) sent once more at the time at, by the tick: a message nothing answers. */
void soft_peer_send_later(struct soft_state *st, const struct soft_peer_msg *m, uint32_t ifindex,
			  int64_t at);
/* s needs the tick at when (in the list of ends with work, once). */
void soft_peer_due(struct soft_state *st, struct soft_sock *s, int64_t when);
/* A datagram that came to the control port from from:port (IPv4 in 4 bytes); answered there. */
void soft_peer_input(struct soft_state *st, const uint8_t *buf, size_t len, int family,
		     const uint8_t from[16], uint16_t port, int64_t now);
/* Questions due again, ends given up, messages sent once more: when to call again (ms), or -1 for never. */
int64_t soft_peer_tick(struct soft_state *st, int64_t now);
void soft_peer_free(struct soft_state *st);

/* clc_relay.c: the CLC messages of a negotiating end (doc/soft-roce.md section 2.2) */
/*
 * s may negotiate over RDMA device dev's port, and add a second link on
 * alt's alt_port (alt NULL: none): its relay.  0 or -ENOMEM.
 */
struct soft_dev;
int soft_clc_relay_new(struct soft_sock *s, const struct soft_dev *dev, int port, const struct soft_dev *alt,
		       int alt_port);
/* CLC or CLC_SEEN from the peer's daemon for s. */
void soft_clc_input(struct soft_state *st, struct soft_sock *s, const struct soft_peer_msg *m);
/* Our message sent again, or given up: when to call again (ms), 0 when nothing is due. */
int64_t soft_clc_tick(struct soft_state *st, struct soft_sock *s, int64_t now);
/*
 * Our library's next CLC message (len bytes): sent now, and again until the
 * peer's daemon keeps it; reason, not 0: it is the library's DECLINE with
 * that code (soft_clc_undecided_reason()).  -EAGAIN: s does not negotiate;
 * -EBUSY: the last is not kept yet; -EINVAL: empty, too long, or a third.
 */
int soft_clc_give(struct soft_state *st, struct soft_sock *s, const void *msg, size_t len, uint32_t reason,
		  int64_t now);
/* The peer's message number index (from 1) if it came, its length in *len; else NULL. */
const uint8_t *soft_clc_peer_msg(const struct soft_sock *s, unsigned index, size_t *len);
/* How many of ours the peer's daemon keeps; whether one was not kept in time. */
unsigned soft_clc_seen(const struct soft_sock *s);
bool soft_clc_failed(const struct soft_sock *s);
/*
 * The code of an end not decided when its CLC message does not get through
 * or it goes: its library's DECLINE's, if that was its last message, else
 * 0x03010000 (as when no daemon answers).
 */
uint32_t soft_clc_undecided_reason(const struct soft_sock *s);
/* SMC_SOFT_CMD_CLC */
int soft_clc(struct soft_req *r);
/* A message of type between s's end and the other, under both nonces, with bytes (len 0: none). */
void soft_relay_msg(const struct soft_sock *s, uint8_t type, uint8_t index, const uint8_t *bytes,
		    uint16_t len, struct soft_peer_msg *m);
/* The same, sent. */
void soft_relay_send(struct soft_state *st, const struct soft_sock *s, uint8_t type, uint8_t index,
		     const uint8_t *bytes, uint16_t len);
/* A message of the other end's: both nonces as this end knows them. */
bool soft_clc_from_other_end(const struct soft_sock *s, const struct soft_peer_msg *m);

/*
 * rebuild_relay.c: once both ends run over RDMA, the messages that rebuild
 * their link group's only link (doc/soft-roce.md section 5)
 */
/*
 * Our library's message (len bytes) for the peer's: sent now, and again
 * until the peer's daemon keeps it; a newer one replaces it.  -EAGAIN: s is
 * no SMC-R end with another host; -EINVAL: empty or too long.
 */
int soft_rebuild_give(struct soft_state *st, struct soft_sock *s, const void *msg, size_t len, int64_t now);
/* REBUILD or REBUILD_SEEN from the peer's daemon for s: whether a new message came. */
bool soft_rebuild_input(struct soft_state *st, struct soft_sock *s, const struct soft_peer_msg *m);
/* Ours sent again, or given up: when to call again (ms), 0 when nothing is due. */
int64_t soft_rebuild_tick(struct soft_state *st, struct soft_sock *s, int64_t now);
/* The end of control connection conn_id's that carries link group key's messages (the newest), or NULL. */
struct soft_sock *soft_rebuild_carrier(struct soft_state *st, uint64_t conn_id, uint32_t key);
/* Whether the peer's daemon keeps our last. */
bool soft_rebuild_kept(const struct soft_sock *s);
/* A peer's message that the library of control connection conn_id did not take yet (now taken), its row in *from; or NULL. */
const uint8_t *soft_rebuild_take(struct soft_state *st, uint64_t conn_id, struct soft_sock **from, size_t *len);
void soft_rebuild_free(struct soft_sock *s);
/* SMC_SOFT_CMD_REBUILD */
int soft_rebuild(struct soft_req *r);
/* Whether the end relays between its libraries: over RDMA with another host's end that asked. */
bool soft_relays(const struct soft_sock *s);

/*
 * gone_relay.c: a process that ended without closing its ends over RDMA
 * with another host (killed): the peer's daemon hears it, and its library
 * with the next REBUILD question (doc/soft-roce.md section 4).
 */
#define SOFT_GONE_HEARD 1
#define SOFT_GONE_TOLD  2
/*
 * The ends of control connection conn_id, which hung up (its process
 * ended; not a client this daemon dropped, nor this daemon's own end),
 * before they are dropped: their peers' daemons told.
 */
void soft_gone_tell(struct soft_state *st, uint64_t conn_id);
void soft_gone_input(struct soft_sock *s, const struct soft_peer_msg *m);
/* An end of conn_id whose peer's process is gone, not told yet (then told), or NULL. */
struct soft_sock *soft_gone_take(struct soft_state *st, uint64_t conn_id);

/* ---- lgr_report.c: the processes' soft SMC-R link groups, for the listings ---- */
/* SMC_SOFT_CMD_LGR. */
int soft_lgr_report(struct soft_req *r);
/* A control connection went: its process's groups go. */
void soft_lgr_owner_gone(struct soft_state *st, uint64_t owner);
/* The processes' groups' buffers counted again from their connections, for a listing. */
void soft_lgr_bufs_recount(struct soft_state *st);
/* s's link (smc_diag's LGRINFO) from its process's group: false when it has none. */
struct soft_lgrinfo;
bool soft_lgr_info_of(const struct soft_state *st, const struct soft_sock *s, struct soft_lgrinfo *li);

/* pstats_att.c */
int soft_stats_attach(struct soft_req *r);
/* The process's count of new TCP sockets (pstats.h sock_gen); false if not attached. */
bool soft_pstats_sock_gen(const struct soft_state *st, uint64_t conn_id, uint64_t *gen);
/* The connection closed: its counters stay counted in its namespace. */
void soft_pstats_conn_gone(struct soft_state *st, uint64_t conn_id);
/* Add the live counters of the processes of namespace netns into s (their SMC-R and SMC-D parts). */
struct soft_stats;
void soft_pstats_sum(const struct soft_state *st, uint64_t netns, struct soft_stats *s);

/* bells.c */
int soft_bell(struct soft_req *r);
/* The connection closed: its bell goes. */
/* Rings the bell in slot of control connection conn_id's process, if it set one. */
void soft_bells_ring(struct soft_state *st, uint64_t conn_id, unsigned slot);
void soft_bells_conn_gone(struct soft_state *st, uint64_t conn_id);

/* Freed at exit (soft_state_free): the namespace's sockets, the processes' counters and doorbells. */
void soft_socks_free(struct soft_ns *ns);
void soft_pstats_free(struct soft_state *st);
void soft_bells_free(struct soft_state *st);

/* The family SMC_SOFT (reg.c), served by families/core.c. */
extern const struct soft_family soft_reg_family;

/* A connection ended: drop what it registered. */
void soft_conn_gone(struct soft_state *st, uint64_t conn_id);

#endif
