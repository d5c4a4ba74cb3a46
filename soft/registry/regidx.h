/*
 * Registrations found without walking them all: by token, by socket inode
 * (unique host-wide), by control connection, and the PAIR ones by 4-tuple,
 * so that neither requests nor pairing slow down with the number of sockets.
 * The namespace lists (state.h) stay the order sock_diag reports.
 */
#ifndef SOFT_REGIDX_H
#define SOFT_REGIDX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "state.h"
#include "sock.h"

/* Index s by token, inode and connection: 0 or -ENOMEM. */
int soft_idx_add(struct soft_state *st, struct soft_sock *s);
/* Out of every index, the 4-tuple one included. */
void soft_idx_del(struct soft_state *st, struct soft_sock *s);

struct soft_sock *soft_idx_token(const struct soft_state *st, uint64_t token);
bool soft_idx_has_inode(const struct soft_state *st, uint64_t inode);
/* The registration of the socket with that inode, or NULL. */
struct soft_sock *soft_idx_inode(const struct soft_state *st, uint64_t inode);
size_t soft_idx_conn_count(const struct soft_state *st, uint64_t conn_id);
/* The connection's registrations, chained by conn_next. */
struct soft_sock *soft_idx_conn_first(const struct soft_state *st, uint64_t conn_id);

/* The 4-tuple index: 0 or -ENOMEM. */
int soft_idx_tuple_add(struct soft_state *st, struct soft_sock *s);
/*
 * A registration of the 4-tuple index whose 4-tuple is s's reversed and
 * which ok() accepts, or NULL.
 */
/*
 * An address as an IPv6 one: an IPv4 socket's (diag layout, the address in
 * the first 4 bytes) as ::ffff:a.b.c.d, so that it and a dual-stack IPv6
 * socket's v4-mapped one are the same end of a connection.
 */
void soft_addr_canon(int family, const uint8_t *a, uint8_t out[16]);
/* Whether b's 4-tuple is a's reversed (IPv4-mapped IPv6 as IPv4). */
bool soft_ids_reversed(const struct soft_sock_id *a, const struct soft_sock_id *b);
struct soft_sock *soft_idx_reverse(const struct soft_state *st, const struct soft_sock *s,
				   bool (*ok)(const struct soft_sock *cand,
					      const struct soft_sock *s));

/* The index freed (soft_state_free). */
void soft_idx_free(struct soft_state *st);

#endif
