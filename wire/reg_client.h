/*
 * Client side of the SMC_SOFT family (reg.h) for the preload and the tests:
 * raw netlink over the daemon's control socket, libc only (no libnl, no
 * libmnl), so libsmc-preload.so can link it with nothing but -ldl.
 *
 * A connection is not thread-safe: one request at a time.  Every wait is
 * bounded by the timeout given to soft_reg_open (SO_RCVTIMEO/SO_SNDTIMEO);
 * an expired wait is -ETIMEDOUT.  Errors are negative errnos: the daemon's
 * (reg.h) or the transport's.  Registrations live as long as the connection:
 * closing it (or exiting) drops them all in the daemon.
 */
#ifndef SOFT_REG_CLIENT_H
#define SOFT_REG_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "reg.h"

#include "soft_socket.h"

#define SOFT_REG_TIMEOUT_MS 2000

struct soft_reg_conn {
	int fd;                  /* the control socket, -1 when closed */
	uint16_t family;         /* SMC_SOFT's id, from CTRL_CMD_GETFAMILY */
	uint32_t seq;
};

/*
 * The daemon's control socket, as lib/ finds it: $SMC_SOFT_SOCKET; else,
 * for a user other than root, $XDG_RUNTIME_DIR/smc_soft/control if it is a
 * socket; else SMC_SOFT_SOCKET_DEFAULT.  The environment is not trusted in
 * set-user-ID programs (secure_getenv).  Written into buf.
 */
const char *soft_reg_socket_path(char *buf, size_t len);

/*
 * Connect to the daemon at path (NULL: soft_reg_socket_path()), check that
 * it runs as root or as this user (else -EACCES), and resolve the family
 * (-ENOENT if the daemon has none of that name).  timeout_ms <= 0 means
 * SOFT_REG_TIMEOUT_MS.  0 or -errno; on error c->fd is -1.
 */
int soft_reg_open(struct soft_reg_conn *c, const char *path, int timeout_ms);
/*
 * The close() for the connection's own socket: the preload gives its real
 * close(), past its hook, which forgets the control connection when the
 * program closes that descriptor (and would wait for the lock the caller
 * of soft_reg_open holds).  NULL: close().
 */
void soft_reg_close_with(int (*fn)(int));
void soft_reg_close(struct soft_reg_conn *c);

/* Register socket fd in state (SMC_SOFT_STATE_*); *token names it. */
int soft_reg_add(struct soft_reg_conn *c, int fd, uint8_t state, uint64_t *token);
/* New state; fd (or -1) passes the socket again so the daemon re-reads it. */
int soft_reg_state(struct soft_reg_conn *c, uint64_t token, uint8_t state, int fd);
int soft_reg_del(struct soft_reg_conn *c, uint64_t token);

/*
 * Pass the per-process counters (pstats.h): memfd sealed F_SEAL_SHRINK.
 * Synchronous; call it before the first asynchronous request.
 */
int soft_reg_stats_attach(struct soft_reg_conn *c, int memfd);
/*
 * The same without waiting, on a connection that may have asynchronous
 * replies on their way (one inherited across execve): a failure comes back
 * as an error soft_reg_pair_poll() reads for no request of ours.
 */
int soft_reg_stats_attach_send(struct soft_reg_conn *c, int memfd);

/*
 * Asynchronous use, for the preload: requests go out without waiting and
 * their replies are collected later, so pairing never delays the
 * application.  Once an asynchronous request is out, use no synchronous
 * call on the connection (it would swallow replies).  Sends never block:
 * a full socket is -EAGAIN and the caller gives the socket up (it stays TCP).
 */

/* What a PAIR asks for; 0 sizes: the default; decline 0: none. */
struct soft_pair_req {
	uint8_t role;            /* 0 client, 1 server */
	uint32_t sndbuf, rcvbuf;
	uint32_t decline;        /* SMC_CLC_DECL_* this end declines with */
	uint32_t transports;     /* 1 << SMC_SOFT_TRANSPORT_* the library carries (0: the ring) */
};

/* PAIR (reg.h) for connected socket fd.  The request's seq (> 0), or -errno. */
long soft_reg_pair_send(struct soft_reg_conn *c, int fd, const struct soft_pair_req *q);

/* SOCK_INFO (reg.h) for socket fd, after an execve; the reply comes as a
 * PAIR reply does (soft_reg_pair_poll).  The request's seq, or -errno. */
long soft_reg_info_send(struct soft_reg_conn *c, int fd);

/*
 * CLC (reg.h) for the registration token, an end between hosts: our next
 * CLC message (clc, len; NULL: none), and how many of the peer's we took;
 * reason, when clc is our DECLINE: its code (0: none).
 * The reply comes as a PAIR reply does (soft_reg_pair_poll, cmd
 * SMC_SOFT_CMD_CLC), an error too.  The request's seq, or -errno.
 */
long soft_reg_clc_send(struct soft_reg_conn *c, uint64_t token, const void *clc, size_t len,
		       uint8_t taken, uint32_t reason);
/*
 * CLC saying our end runs over RDMA now, in link group key on link number
 * link_id, with an RMB and a send buffer of those sizes (0: not said): the
 * daemon lists it as SMC-R.  seq or -errno.
 */
long soft_reg_clc_connected_send(struct soft_reg_conn *c, uint64_t token, uint32_t key, uint8_t link_id,
				 uint32_t rmb_size, uint32_t sndbuf_size);
/*
 * REBUILD (reg.h): link group key's rebuild message (msg, len) for the
 * peer's library; msg NULL: take one that came for us.  The reply comes
 * as a PAIR reply does (soft_reg_pair_poll, cmd SMC_SOFT_CMD_REBUILD), an
 * error too.  The request's seq, or -errno.
 */
long soft_reg_rebuild_send(struct soft_reg_conn *c, uint32_t key, const void *msg, size_t len);
/*
 * LGR: link group key as it is now (role 0 client, 1 server), with its n
 * links up; n 0: it is gone.  Asynchronous, without a reply but an error.
 * 0 or -errno.
 */
long soft_reg_lgr_send(struct soft_reg_conn *c, uint32_t key, uint8_t role, const char *peer_host,
		       uint32_t conns, const struct smc_soft_link *links, unsigned n);

/*
 * DUMP_SET (doc/smc-dump-header.md 8): with pkt, an AF_PACKET SOCK_DGRAM
 * socket, a capture session of mode and types (SOFT_DUMP_MODE_*, _TYPE_*)
 * sending to interface ifindex; with pkt -1, this connection's session
 * ends.  0 or -errno (-EPERM without CAP_NET_ADMIN).
 */
int soft_reg_dump_set(struct soft_reg_conn *c, uint8_t mode, uint8_t types, uint32_t ifindex,
		      int pkt);

/* SOCK_DEL without NLM_F_ACK: no answer unless it fails (then ignored). */
/* sock (-1: none) proves a holder that did not register it may end it. */
int soft_reg_del_send(struct soft_reg_conn *c, uint64_t token, int sock);
/* The same for the registration of our PAIR request seq, its reply unread. */
int soft_reg_del_seq_send(struct soft_reg_conn *c, uint32_t seq);
/* FALLBACK (reg.h) as SOCK_DEL is sent: no answer unless it fails. */
int soft_reg_fallback_send(struct soft_reg_conn *c, uint64_t token, uint32_t reason, int sock);
/* The same with the peer's own code (PEERDECL's diagnosis), 0 none. */
int soft_reg_fallback_diag_send(struct soft_reg_conn *c, uint64_t token, uint32_t reason, uint32_t diag,
				int sock);

/* BELL (reg.h), without waiting for the reply (soft_reg_pair_poll): set
 * the eventfd efd as our bell in slot (SOFT_BELL_SLOTS), or ask for the
 * bell of id.  seq or -errno. */
long soft_reg_bell_set_send(struct soft_reg_conn *c, int efd, uint8_t slot);
long soft_reg_bell_get_send(struct soft_reg_conn *c, uint32_t id);

struct soft_pair_reply {
	uint8_t cmd;             /* SMC_SOFT_CMD_BELL: a BELL reply (bell_id,
				    bell_fd, nothing else); SMC_SOFT_CMD_CLC: a CLC
				    reply (or its error); SMC_SOFT_CMD_REBUILD: a
				    REBUILD reply (or its error); 0: PAIR, SOCK_INFO */
	uint32_t bell_id;
	int bell_fd;             /* a peer's bell asked for, else -1; the caller owns it */
	uint32_t seq;            /* of the request */
	int error;               /* 0, or the daemon's -errno (nothing else set),
				    or -EBADMSG for a reply not taken (token set
				    when the registration exists) */
	uint64_t token;
	uint8_t status;          /* SMC_SOFT_PAIR_* */
	uint8_t side;            /* 0 or 1 */
	uint8_t role;            /* as registered: 0 client, 1 server; SOFT_ROLE_UNSAID */
	uint32_t reason, peer_diagnosis;        /* DECLINED */
	uint32_t lgr_id;
	uint64_t dmb_token, peer_dmb_token;
	uint64_t shm_size;
	uint32_t ring_size[2];   /* tx, rx of this end */
	uint8_t transport;       /* SMC_SOFT_TRANSPORT_* (RING when the daemon said none) */
	int shm_fd;              /* the region (PENDING, PAIRED), else -1; the
				    caller owns it */
	/* CLC replies: status ASKING, NEGOTIATE (these set) or DECLINED */
	char ibdev[64];          /* the RDMA device for the connection's interface */
	uint8_t ibport;
	char ibdev2[64];         /* a second port for a second link ("" none) */
	uint8_t ibport2;
	uint8_t gid2[16];
	uint8_t clc_seen;        /* our messages the peer's daemon keeps */
	uint8_t clc_index;       /* with clc: which of the peer's messages (from 1) */
	uint16_t clc_len;
	uint8_t clc[SMC_SOFT_CLC_MAX];
	/*
	 * REBUILD replies: a message taken (rebuild_len 0: none), or peer_gone
	 * (the other end's process ended without closing it), for group
	 * lgr_key through end token
	 */
	uint32_t lgr_key;
	uint8_t rebuild_len;
	uint8_t rebuild[SMC_SOFT_REBUILD_MAX];
	uint8_t peer_gone;
};

/*
 * The next PAIR, SOCK_INFO or BELL reply that has arrived, without waiting:
 * 1 with *r filled, 0 when none is waiting, -errno when the connection
 * failed.  Other messages (errors of SOCK_DEL and BELL) are skipped, and
 * descriptors that do not belong to a reply taken are closed.
 */
#define SOFT_ROLE_UNSAID 0xff
int soft_reg_pair_poll(struct soft_reg_conn *c, struct soft_pair_reply *r);

#endif
