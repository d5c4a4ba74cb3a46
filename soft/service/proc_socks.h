/*
 * The TCP sockets of preloaded processes, found by the daemon itself, so
 * that sock_diag lists them without a message per connection.
 *
 * A preloaded process opens its control connection at its first TCP socket
 * and attaches its counters on it (STATS_ATTACH); such a connection's peer
 * pid (SO_PEERCRED) is remembered until the connection closes.  On a dump,
 * the socket inodes of those processes come from /proc/PID/fd ("socket:[N]"),
 * and state, addresses, ports, owner and inode from /proc/PID/net/tcp and
 * tcp6 of their own network namespace; only lines whose inode the processes
 * hold count, each socket once (forked processes share them).  tcp lines
 * are AF_INET, tcp6 lines AF_INET6 with the address as the kernel keeps it
 * (v4-mapped for IPv4 peers of a dual-stack socket), as a registration
 * reports a socket.  The cookie and the bound interface are not in /proc:
 * both are 0.
 *
 * Bounded: at most PS_MAX_PROCS processes and PS_MAX_INODES sockets per
 * dump, each /proc/net file read in chunks, lines longer than
 * PS_LINE_MAX or malformed skipped.  The kernel resumes each read of such a
 * file at an offset into a hash bucket: a socket that the same bucket's
 * changes shift meanwhile comes twice (listed once) or, rarely, not at all
 * in that dump.
 */
#ifndef SOFT_PROC_SOCKS_H
#define SOFT_PROC_SOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PS_MAX_PROCS  1024
#define PS_MAX_INODES 65536
#define PS_LINE_MAX   512

struct soft_state;

/* One line of /proc/net/tcp or tcp6. */
struct proc_sock {
	int family;                  /* AF_INET (tcp) or AF_INET6 (tcp6) */
	uint8_t tcp_state;           /* TCP_ESTABLISHED .. TCP_CLOSING (netinet/tcp.h) */
	uint16_t sport, dport;       /* host order */
	uint8_t src[16], dst[16];    /* diag layout: IPv4 in the first 4 bytes */
	uint32_t uid;
	uint64_t inode;
	bool here;                   /* in the requester's network namespace */
};

/*
 * Parse one line of /proc/net/tcp (family AF_INET) or tcp6 (AF_INET6):
 * len bytes, no newline, need not end in NUL.  1 parsed into ps, 0 the
 * header or an empty line, -EINVAL anything else.
 */
int proc_sock_parse(const char *line, size_t len, int family, struct proc_sock *ps);

/* The process pid's control connection conn_id of st attached: scan it.  0 or -ENOMEM. */
int proc_socks_attach(const struct soft_state *st, uint64_t conn_id, pid_t pid);
/* The connection closed. */
void proc_socks_gone(const struct soft_state *st, uint64_t conn_id);

struct ps_key;

/* What one dump found. */
struct proc_socks {
	struct proc_sock *v;
	size_t n, cap;
	struct ps_key *keys;         /* 4-tuples of the connected ones, sorted */
	size_t nkeys;
};

/*
 * The sockets of st's scanned processes that st has no registration of, in
 * every namespace; here marks those in the network namespace of req_pid.
 * What cannot be read (a process gone, no memory) is left out.  A process's
 * socket inodes are read from /proc again only when its sock_gen
 * (pstats.h) moved; those that were not in the kernel's TCP table last time
 * are not looked for, so the table is read only until the rest are found.
 */
void proc_socks_scan(const struct soft_state *st, pid_t req_pid, struct proc_socks *ps);
/* Whether the connection src:sport -> dst:dport has a scanned socket as its other end. */
bool proc_socks_peer(const struct proc_socks *ps, int family, const uint8_t src[16],
		     uint16_t sport, const uint8_t dst[16], uint16_t dport);
void proc_socks_free(struct proc_socks *ps);

#endif
