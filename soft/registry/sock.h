/*
 * A socket registered with the soft backend: what sock_diag reports for it,
 * as the kernel keeps it for an SMC socket.  The identity comes from the
 * kernel through the socket's fd (sock.c); state and the SMC parts from the
 * registration and, later, the data path.
 */
#ifndef SOFT_SOCK_H
#define SOFT_SOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>

#include "reg.h"

/* Decline codes (SMC_CLC_DECL_*) of the soft data path. */
#define SOFT_DECL_PEERNOSMC  0x03010000u   /* the peer did not offer SMC */
#define SOFT_DECL_NOSMCDEV   0x03030000u   /* no SMC device found (R or D) */
#define SOFT_DECL_NOSMCDDEV  0x03030001u   /* no ISM device in the PNET */
#define SOFT_DECL_PEERDECL   0x05000000u   /* the peer declined (its code: peer_diagnosis) */
#define SOFT_DECL_INTERR     0x09990000u   /* an internal error (no memory for the negotiation) */

/* Host-order forms of the diag extensions (<linux/smc_diag.h>). */
struct soft_cursor {
	uint16_t wrap;
	uint32_t count;
};

struct soft_conninfo {
	uint32_t token, sndbuf_size, rmbe_size, peer_rmbe_size;
	struct soft_cursor rx_prod, rx_cons, tx_prod, tx_cons;
	uint8_t rx_prod_flags, rx_conn_state_flags, tx_prod_flags, tx_conn_state_flags;
	struct soft_cursor tx_prep, tx_sent, tx_fin;
};

struct soft_lgrinfo {
	uint8_t link_id;
	char ibname[64];         /* NUL-padded, need not end in NUL */
	uint8_t ibport;
	char gid[40];
	char peer_gid[40];
	uint8_t role;            /* 0 client, 1 server */
};

struct soft_dmbinfo {
	uint32_t linkid;
	uint64_t peer_gid, my_gid, token, peer_token, peer_gid_ext, my_gid_ext;
};

/* Who the socket is, as the kernel tells it through the fd. */
struct soft_sock_id {
	int family;              /* AF_INET or AF_INET6: IPv4 sockets are listed first */
	uint16_t sport, dport;   /* host order */
	uint8_t src[16], dst[16];/* diag layout: IPv4 in the first 4 bytes */
	uint32_t ifindex;        /* bound device, 0 if none */
	uint64_t cookie;
	uint32_t uid;            /* owner of the socket inode */
	uint64_t inode;
	uint64_t netns;          /* inode of the socket's network namespace */
	uint8_t tcp_state;       /* TCP_ESTABLISHED...: read when checked as ACTIVE, else 0 */
};

struct soft_region;
struct soft_sock;

/* An end whose peer is on another host (service/peer_ask.c). */
struct soft_ask {
	struct soft_sock *next, **pprev;   /* in the list of those still asking */
	bool remote;             /* asked the peer host's daemon */
	bool daemon_there;       /* that daemon answered */
	uint8_t sends;           /* questions sent */
	uint32_t verdict;        /* SMC_CLC_DECL_* this end declines with */
	uint32_t ifindex;        /* an IPv6 link-local peer's scope, else 0 */
	int64_t next_ms, deadline_ms;   /* CLOCK_MONOTONIC */
	/* the negotiation (doc/soft-roce.md section 2.2) */
	uint64_t nonce;          /* ours, random, never 0: in every message of this end */
	uint64_t peer_nonce;     /* the other end's, from its ASK or ANSWER; 0 unknown */
	/* an end that may negotiate: its device, the CLC messages relayed (service/clc_relay.c) */
	struct soft_clc_relay *clc;
	/* once over RDMA: the messages that rebuild the group's only link (service/rebuild_relay.c) */
	struct soft_rebuild_relay *rebuild;
	/* the other end's process ended without closing it (service/gone_relay.c): SOFT_GONE_* */
	uint8_t peer_gone;
};

/* pair_status while the peer host's daemon is asked, and once both ends negotiate */
#define SOFT_PAIR_ASKING    SMC_SOFT_PAIR_ASKING
#define SOFT_PAIR_NEGOTIATE SMC_SOFT_PAIR_NEGOTIATE
/* both libraries connected it over RDMA (soft SMC-R): listed as SMCR */
#define SOFT_PAIR_RDMA      6

struct soft_sock {
	struct soft_sock *next, **pprev;        /* the namespace's list */
	struct soft_sock *tok_next, *ino_next, *tup_next;   /* index chains (regidx.c) */
	struct soft_sock *conn_next, **conn_pprev;
	uint64_t token;          /* names the registration */
	uint64_t conn_id;        /* the control connection that owns it */
	/* one that proved with SOCK_INFO that it holds the socket: may end it by token */
	uint64_t info_conn;
	uint32_t pair_seq;       /* nlmsg_seq of the PAIR request that made it */
	uint32_t conn_uid;       /* that connection's uid */
	struct soft_sock_id id;
	/* SMC view */
	uint8_t state;           /* SMC_SOFT_STATE_* (diag_state) */
	uint8_t mode;            /* SMC_DIAG_MODE_* */
	uint8_t shutdown;        /* bit0 RCV_SHUTDOWN, bit1 SEND_SHUTDOWN */
	uint32_t fallback_reason, peer_diagnosis;
	/* present only when the connection has them (data path) */
	bool has_conn, has_lgr, has_dmb;
	struct soft_conninfo conn;
	struct soft_lgrinfo lgr;
	struct soft_dmbinfo dmb;
	/* PAIR (pair.c): status 0 for SOCK_ADD registrations */
	uint8_t pair_status;     /* SMC_SOFT_PAIR_* */
	uint8_t side, role;
	bool tuple_indexed;
	struct soft_region *region;  /* PENDING and PAIRED */
	struct soft_ask ask;
	/* soft SMC-R once connected: its process's group and link (service/lgr_report.c), its buffers */
	uint32_t lgr_key;
	uint8_t lgr_link;
	uint32_t smcr_rmb, smcr_sndbuf;
};

/*
 * The socket's identity from its fd.  fallback_netns stands in when the
 * kernel does not tell the socket's namespace (SIOCGSKNS needs CAP_NET_ADMIN).
 * 0, or -EINVAL for anything but an AF_INET/AF_INET6 TCP stream socket, or
 * another -errno.
 */
int soft_sock_read(int fd, struct soft_sock_id *id, uint64_t fallback_netns);

/*
 * Whether the kernel's view of the socket (id: soft_sock_read's) allows the
 * state: 0 or -EINVAL.  For ACTIVE it notes the TCP state in id.
 */
int soft_sock_check_state(int fd, struct soft_sock_id *id, uint8_t state);

/* Set the state and what an unpaired socket reports with it (mode, fallback). */
void soft_sock_set_state(struct soft_sock *s, uint8_t state);

/* The interface of a socket (bound device, else the one holding its address). */
void soft_sock_ifname(int fd, const struct soft_sock_id *id, char ifname[IF_NAMESIZE]);

#endif
