/*
 * SMC_SOFT: the soft backend's private generic netlink family (version 1),
 * spoken by the preload and the test clients on the daemon's control socket.
 * It stands for what the kernel's SMC module does inside itself: it knows the
 * sockets of its processes, pairs the two ends of a connection and sets up
 * their buffers.  The family id comes from CTRL_CMD_GETFAMILY with
 * SMC_SOFT_FAMILY_NAME; this header carries no libnl/libmnl types, so both
 * sides include it.  doc/soft-netlink.md describes the family as a whole.
 *
 * Trust: a socket is named by handing the socket itself to the daemon
 * (SCM_RIGHTS on the request's datagram).  The daemon reads its family,
 * addresses, ports, inode, owner, bound interface, cookie and network
 * namespace from the kernel, never from the request, and closes its copy
 * before it answers: it never keeps an application's socket alive.  Anyone
 * may register sockets (no CAP_NET_ADMIN needed); a registration belongs to
 * the control connection that made it: SOCK_STATE and SOCK_DEL from any other
 * connection get ENOENT, and the daemon drops all of a connection's
 * registrations when it closes (the process exited or closed the socket).
 * A registered socket is listed by sock_diag for AF_SMC (smcss) in the
 * network namespace of the socket, which may differ from the registrant's.
 *
 * Errors come back as NLMSG_ERROR with a negative errno:
 *   EINVAL     attribute missing or of the wrong size, unknown state, no fd
 *              where one is needed, an fd that is not a TCP socket (AF_INET
 *              or AF_INET6, SOCK_STREAM, IPPROTO_TCP), an fd whose kernel
 *              state contradicts the claimed one (LISTEN but not listening,
 *              ACTIVE but not connected, INIT but listening), or a
 *              SOCK_STATE fd that is another socket than the registered one
 *   ENOENT     no such token on this connection
 *   EEXIST     the socket is already registered (by any connection)
 *   ENOSPC     the connection holds SMC_SOFT_MAX_SOCKS registrations
 *   EOPNOTSUPP an unknown or reserved command
 */
#ifndef SOFT_REG_H
#define SOFT_REG_H

/* The private family of the soft backend (socket registration, data path). */
#define SMC_SOFT_FAMILY_NAME "SMC_SOFT"
#define SMC_SOFT_VERSION 1

/*
 * Commands.  Requests are doit operations (no NLM_F_DUMP).
 *
 * SOCK_ADD     register a socket.  fd: the socket (SCM_RIGHTS), required.
 *              Attributes: STATE (required).  Reply: one SMC_SOFT message,
 *              cmd SOCK_ADD, with TOKEN, INODE, COOKIE and NETNS of the
 *              registration (then an ack if NLM_F_ACK was asked for).
 * SOCK_STATE   change the state of a registration.  Attributes: TOKEN,
 *              STATE (required).  fd: optional, the same socket again, so
 *              the daemon re-reads its addresses and checks the new state
 *              (after bind+listen, connect); without it only the state
 *              changes.  Acked (NLM_F_ACK) or error.
 * SOCK_DEL     drop a registration (the socket was closed).  Attributes:
 *              TOKEN, or PAIR_SEQ: the registration this control connection
 *              made with the PAIR request of that sequence number (a socket
 *              closed before its PAIR reply was read).  With TOKEN, fd may
 *              be the socket itself (SCM_RIGHTS): a holder that did not
 *              register it (fork, spawn) ends it so.  Acked or error.
 *
 * PAIR         offer a connected socket for the soft SMC-D data path.  fd:
 *              the socket (SCM_RIGHTS), required; it must be connected
 *              (ACTIVE).  Attributes: ROLE (required: 0 client, it came
 *              from connect(); 1 server, it came from accept()), SNDBUF and
 *              RCVBUF (optional wishes in bytes; 0 or absent: the default),
 *              DECLINE (optional: this end cannot use the data path, e.g.
 *              SMC_SOFT_DECL_URING; it is registered DECLINED with that
 *              reason, and its peer, waiting or to come, is declined with
 *              PEERDECL and it as diagnosis).
 *              PAIR registers the socket (as SOCK_ADD with state ACTIVE, so
 *              it must not be registered yet: EEXIST) and looks for the
 *              other end of the same connection: a PAIR registration whose
 *              4-tuple is this one reversed, in the same network namespace,
 *              or in another one when both control connections have the
 *              same uid.  Made for asynchronous use: the preload sends it
 *              without NLM_F_ACK and collects the reply later by its seq.
 *              Reply: one SMC_SOFT message, cmd PAIR, with TOKEN and
 *              PAIR_STATUS, and then:
 *                PENDING   (the first end) SIDE 0, ROLE (as the end
 *                          registered it), LGR_ID (0: the link
 *                          group is known once the peer arrives),
 *                          DMB_TOKEN, SHM_SIZE, RING_SIZE twice (tx then
 *                          rx of this end); the region's memfd rides on
 *                          the reply datagram (SCM_RIGHTS), a datagram of
 *                          its own.  The end learns that its peer arrived
 *                          from the region: the peer's consumer line says
 *                          attached.
 *                PAIRED    (the second end) the same with SIDE 1,
 *                          PEER_TOKEN and PEER_DMB_TOKEN, and the same
 *                          memfd; the daemon passes a region to no one but
 *                          these two ends.
 *                DECLINED  REASON and PEER_DIAGNOSIS (SMC_CLC_DECL_*), no
 *                          fd; the registration stays, listed as TCP with
 *                          the reason, until SOCK_DEL.  NOSMCDDEV when the
 *                          soft ISM has a PNET ID and the socket's
 *                          interface (bound device, else the one holding
 *                          its address; 127/8 and ::1 are lo) has another
 *                          or none in its namespace's table; a waiting
 *                          peer is declined with it, and an end that
 *                          arrives after a declined peer is declined too.
 *              Until paired a registration is listed as INIT when the
 *              other end is a socket of a preloaded process (see
 *              STATS_ATTACH), else as TCP 0x03010000 (and counted as that
 *              fallback if it goes unpaired); paired as SMCD with live
 *              cursors.  Its state is not changed by
 *              SOCK_STATE (EINVAL).  The daemon keeps the memfd (for
 *              SOCK_INFO, and the cursors it reads from it) until the
 *              registrations of both ends are gone.  An end that finds no
 *              peer while its socket is no longer established (the other
 *              end closed first) is DECLINED with 0x03010000: no region.
 *              The region is sized by the first end: ring 0 (side 0 to
 *              side 1) from its SNDBUF, ring 1 from its RCVBUF, each
 *              rounded by dmb_size_round().
 *
 * SOCK_INFO    the region of a socket again, for a process that lost its
 *              mapping in execve().  fd: the socket (SCM_RIGHTS), required,
 *              a TCP socket that is not listening (connected, or closed
 *              since: its ring may still hold bytes);
 *              holding it is the proof of being that end (also for one
 *              that came with SCM_RIGHTS: ROLE tells it which end it is).
 *              Reply: as PAIR's,
 *              cmd SOCK_INFO, with the memfd (PENDING or PAIRED), or ENOENT
 *              when the socket has no region.  From any control connection.
 *
 * DUMP_SET     switch the SMC dump (doc/smc-dump-header.md) on or off for
 *              the calling control connection; admin (CAP_NET_ADMIN, else
 *              EPERM).  Attributes: DUMP_ON (u8, required: 1 on, 0 off);
 *              for on also IFINDEX (u32, required: the capture device),
 *              DUMP_MODE (u8 SOFT_DUMP_MODE_* mask, default SMC-D),
 *              DUMP_TYPES (u8 SOFT_DUMP_TYPE_* mask, default all; CLC
 *              records are always sent) and DUMP_LEGACY (u8 1: the v1
 *              header), and as fd an AF_PACKET SOCK_DGRAM socket, which the
 *              daemon sends the records on, to IFINDEX.  Its network
 *              namespace chooses the connections: those of sockets in it.
 *              On again replaces the session; off without one is no error.
 *              The session ends with the control connection.  CDC and DATA
 *              records (SMC-D sessions) come from the dump rings of the
 *              processes of that namespace (STATS_ATTACH, pdump.h).  Acked or
 *              error: EINVAL for a missing attribute or fd, or an fd that is
 *              not an AF_PACKET datagram socket.
 *
 * FALLBACK     a PAIR registration (PENDING or PAIRED) goes back to TCP for
 *              good, before either direction cut over: an end was handed
 *              to a program that cannot use the region (an execve of an
 *              image without the library), or its process made an
 *              io_uring instance.  Attributes: TOKEN and REASON
 *              (u32 SMC_CLC_DECL_*, not 0), both required; fd as for
 *              SOCK_DEL (the socket, as proof, from a holder that did not
 *              register it).  The registration is listed as TCP with
 *              REASON from then on, its peer as TCP with PEERDECL and
 *              REASON as diagnosis; the daemon leaves the region
 *              (SOCK_INFO: ENOENT) and counts the connection no more in its
 *              link group.  One already DECLINED stays as it is.  Acked
 *              or error: ENOENT (no such registration, or the proof does
 *              not hold), EINVAL (not a PAIR registration, a missing
 *              attribute).
 *
 * BELL         a process's doorbell (doc/soft-ring.md section 4), an
 *              eventfd its poll and epoll waits watch beside the TCP
 *              sockets.  With an eventfd passed (SCM_RIGHTS): it becomes
 *              the control connection's bell in BELL_SLOT (0 if absent; up
 *              to SOFT_BELL_SLOTS, one per thread waiting at once), and the
 *              reply (BELL) names its BELL_ID, which the process writes
 *              into the sleeper flags of its rings.  Slot 0 replaces all the
 *              connection's bells (a new image after execve), another slot
 *              the bell it had.  With BELL_ID and no
 *              fd: the reply (BELL) carries BELL_ID and a duplicate of that
 *              bell, when its process could pair with the caller (same
 *              network namespace or same user), else ENOENT.  The bell is
 *              dropped with its control connection.  Errors: EINVAL for an
 *              fd that is not an eventfd, a BELL_SLOT out of range, or a
 *              missing BELL_ID.
 *
 * Reserved, not implemented (EOPNOTSUPP):
 * BUF_SETUP    a new region for a paired connection (buffer resize).
 *
 * STATS_ATTACH the per-process counters in shared memory (pstats.h): the
 *              process passes a memfd (SCM_RIGHTS) sealed with F_SEAL_SHRINK
 *              of at least SOFT_PSTATS_MAP_LEN bytes, writable (no write
 *              seal), whose counters it writes and the daemon adds into
 *              GET_STATS of the network namespace of the control
 *              connection; the daemon writes only the dump control line and
 *              the dump ring's consumer index there (pdump.h).
 *              STATS_VERSION (u32, required) must be SOFT_PSTATS_VERSION.
 *              One per control connection: another one (the image after
 *              execve) replaces it; acked or error.  The counters stay
 *              counted after the process exits or its memfd is replaced.
 *              The process (SO_PEERCRED pid) counts as preloaded while the
 *              connection lasts: sock_diag lists its TCP sockets that are
 *              not registered too, found in /proc (proc_socks.h): TCP
 *              LISTEN as LISTEN (mode 0, no reason); connecting, or
 *              connected to a socket of a preloaded process (any
 *              namespace), as INIT (mode 0, the soft handshake to come);
 *              connected to anything else as ACTIVE, TCP 0x03010000.
 */
enum {
	SMC_SOFT_CMD_UNSPEC,
	SMC_SOFT_CMD_SOCK_ADD,      /* 1 */
	SMC_SOFT_CMD_SOCK_STATE,    /* 2 */
	SMC_SOFT_CMD_SOCK_DEL,      /* 3 */
	SMC_SOFT_CMD_PAIR,          /* 4 */
	SMC_SOFT_CMD_BUF_SETUP,     /* 5, reserved */
	SMC_SOFT_CMD_STATS_ATTACH,  /* 6 */
	SMC_SOFT_CMD_SOCK_INFO,     /* 7 */
	SMC_SOFT_CMD_DUMP_SET,      /* 8 */
	SMC_SOFT_CMD_BELL,          /* 9 */
	SMC_SOFT_CMD_FALLBACK,      /* 10 */
	SMC_SOFT_CMD_CLC,           /* 11: an end between hosts negotiates (doc/soft-roce.md 2.2) */
	SMC_SOFT_CMD_LGR,           /* 12: a process's soft SMC-R link group, for the listings */
	SMC_SOFT_CMD_REBUILD,       /* 13: a link group's only link rebuilt (doc/soft-roce.md section 5) */
	__SMC_SOFT_CMD_MAX,
};
#define SMC_SOFT_CMD_MAX (__SMC_SOFT_CMD_MAX - 1)

/*
 * Attributes (host byte order; u64 values may be 4-byte aligned: read them
 * with memcpy).
 */
enum {
	SMC_SOFT_A_UNSPEC,
	SMC_SOFT_A_TOKEN,           /* u64: names a registration, never 0 */
	SMC_SOFT_A_STATE,           /* u8: SMC_SOFT_STATE_* */
	SMC_SOFT_A_INODE,           /* u64: socket inode (reply) */
	SMC_SOFT_A_COOKIE,          /* u64: socket cookie (reply) */
	SMC_SOFT_A_NETNS,           /* u64: inode of the socket's netns (reply) */
	/* the data path */
	SMC_SOFT_A_PAD,             /* 6: alignment padding, ignored */
	SMC_SOFT_A_PAIR_STATUS,     /* 7: u8 SMC_SOFT_PAIR_* */
	SMC_SOFT_A_PEER_TOKEN,      /* 8: u64 the other end's registration */
	SMC_SOFT_A_SNDBUF,          /* 9: u32 bytes */
	SMC_SOFT_A_RCVBUF,          /* 10: u32 bytes */
	SMC_SOFT_A_REASON,          /* 11: u32 SMC_CLC_DECL_* of a decline */
	SMC_SOFT_A_PEER_DIAGNOSIS,  /* 12: u32 */
	SMC_SOFT_A_DMB_TOKEN,       /* 13: u64 own DMB token */
	SMC_SOFT_A_PEER_DMB_TOKEN,  /* 14: u64 */
	SMC_SOFT_A_LGR_ID,          /* 15: u32 soft ISM link group */
	SMC_SOFT_A_SHM_SIZE,        /* 16: u64 bytes of the memfd */
	SMC_SOFT_A_RING_OFFSET,     /* 17: u64, twice: tx ring, rx ring */
	SMC_SOFT_A_RING_SIZE,       /* 18: u32, twice: tx ring, rx ring */
	SMC_SOFT_A_FENCE,           /* 19: u64 TCP bytes before the cut-over */
	SMC_SOFT_A_STATS_SIZE,      /* 20: u32 bytes of the stats memfd */
	SMC_SOFT_A_STATS_VERSION,   /* 21: u32 layout version */
	SMC_SOFT_A_SIDE,            /* 22: u8 0 or 1, this end's side of the region */
	SMC_SOFT_A_ROLE,            /* 23: u8 0 client, 1 server */
	SMC_SOFT_A_DUMP_ON,         /* 24: u8 1 on, 0 off */
	SMC_SOFT_A_DUMP_MODE,       /* 25: u8 SOFT_DUMP_MODE_* (dump_fmt.h) */
	SMC_SOFT_A_DUMP_TYPES,      /* 26: u8 SOFT_DUMP_TYPE_* */
	SMC_SOFT_A_DUMP_LEGACY,     /* 27: u8 1: v1 dump header */
	SMC_SOFT_A_IFINDEX,         /* 28: u32 capture device */
	SMC_SOFT_A_PAIR_SEQ,        /* 29: u32 nlmsg_seq of a PAIR request */
	SMC_SOFT_A_DECLINE,         /* 30: u32 SMC_CLC_DECL_* this end declines with */
	SMC_SOFT_A_BELL_ID,         /* 31: u32 a process's doorbell, 2 or more */
	SMC_SOFT_A_BELL_SLOT,       /* 32: u8 which of a process's doorbells, 0-7 */
	SMC_SOFT_A_TRANSPORT,       /* 33: u8 SMC_SOFT_TRANSPORT_*, what carries the bytes */
	SMC_SOFT_A_TRANSPORTS,      /* 34: u32 PAIR: 1 << SMC_SOFT_TRANSPORT_* the library carries */
	SMC_SOFT_A_CLC,             /* 35: binary, one CLC message (at most SMC_SOFT_CLC_MAX bytes) */
	SMC_SOFT_A_CLC_INDEX,       /* 36: u8 request: the peer's messages taken; reply: which this is */
	SMC_SOFT_A_CLC_SEEN,        /* 37: u8 our messages the peer's daemon has */
	SMC_SOFT_A_IBDEV,           /* 38: string, the RDMA device for the connection's interface */
	SMC_SOFT_A_IBPORT,          /* 39: u8 its port */
	SMC_SOFT_A_IBDEV2,          /* 40: string, a second device port in the same PNET, for a second link */
	SMC_SOFT_A_IBPORT2,         /* 41: u8 its port */
	SMC_SOFT_A_GID2,            /* 42: binary, 16 bytes: its RoCE v2 GID */
	SMC_SOFT_A_LGR_KEY,         /* 43: u32 a link group of the process, never 0 */
	SMC_SOFT_A_LINK_ID,         /* 44: u8 the LLC number of the link a connection uses */
	SMC_SOFT_A_PEER_HOST,       /* 45: string, at most 32 characters: the peer's host name */
	SMC_SOFT_A_LGR_CONNS,       /* 46: u32 the group's connections */
	SMC_SOFT_A_LINK,            /* 47: struct smc_soft_link, once per link that is up */
	SMC_SOFT_A_REBUILD,         /* 48: binary, 1 to SMC_SOFT_REBUILD_MAX bytes: a library's rebuild message */
	SMC_SOFT_A_PEER_GONE,       /* 49: u8 1: the other end's process ended without closing it */
	__SMC_SOFT_A_MAX,
};
#define SMC_SOFT_A_MAX (__SMC_SOFT_A_MAX - 1)

#define SOFT_BELL_SLOTS 8       /* SMC_SOFT_A_BELL_SLOT below this */
#define SMC_SOFT_REBUILD_MAX 64 /* SMC_SOFT_A_REBUILD's bytes, at most */

/* SMC_SOFT_A_STATE: the kernel's enum smc_state numbers, as smc_diag_msg.diag_state. */
#define SMC_SOFT_STATE_ACTIVE  1
#define SMC_SOFT_STATE_INIT    2
#define SMC_SOFT_STATE_LISTEN 10

/*
 * The soft backend's own reasons, in the kernel's OPTUNSUPP class (a use SMC
 * cannot carry) with a low half of their own, which no kernel sends: a mask
 * of 0xffff0000 still reads OPTUNSUPP.  names.c names them; af_smc(7) lists
 * them.  As SMC_SOFT_A_DECLINE (PAIR) or FALLBACK's REASON:
 */
#define SMC_SOFT_DECL_URING    0x03060001u /* an io_uring instance that may reach it */
#define SMC_SOFT_DECL_ZEROCOPY 0x03060002u /* SO_ZEROCOPY before it was paired */
#define SMC_SOFT_DECL_SHARED   0x03060003u /* another process got it before it was paired */
#define SMC_SOFT_DECL_UNSEEN   0x03060004u /* an end went to a program without the library */
#define SMC_SOFT_DECL_STDIO    0x03060005u /* stdio may read or write it (fds 0-2, fdopen) */
#define SMC_SOFT_DECL_BACK     0x03060006u /* its RDMA end went back to TCP for another process */
#define SMC_SOFT_DECL_CREDS    0x03060007u /* its process changed credentials with an RDMA device open */

/*
 * SMC_SOFT_A_TRANSPORT of a PENDING or PAIRED reply: the preload maps what
 * came with the reply as that kind says, and stays TCP for a kind it does
 * not know.  A reply without it (a daemon before this attribute) is RING.
 */
#define SMC_SOFT_TRANSPORT_RING 1   /* the region's memfd, shared memory on this host (soft SMC-D) */
#define SMC_SOFT_TRANSPORT_RDMA 2   /* soft SMC-R between hosts: the CLC exchange through CLC */

/*
 * SMC_SOFT_CMD_CLC: an end whose peer is on another host, after a PAIR
 * reply of ASKING (doc/soft-roce.md section 2.2).  Request: TOKEN, with
 * CLC to send our next CLC message, CLC_INDEX the peer's messages the
 * library took so far, PAIR_STATUS PAIRED once its end runs over RDMA (the
 * daemon lists it as SMC-R); with CLC a DECLINE, REASON its code: the end
 * is listed with it if the peer's daemon does not keep that DECLINE (else
 * 0x03010000, the message could not get through).  Reply: TOKEN,
 * PAIR_STATUS; ASKING: ask again later; DECLINED: REASON, PEER_DIAGNOSIS;
 * NEGOTIATE: ROLE, IBDEV, IBPORT, CLC_SEEN, and with CLC and CLC_INDEX the
 * peer's next message, if it came; with IBDEV2, IBPORT2 and GID2 the port a
 * second link of the connection's link group may use (doc/soft-roce.md
 * section 5).
 */
/*
 * SMC_SOFT_CMD_REBUILD: a link group's only link rebuilt on new queue pairs
 * (doc/soft-roce.md section 5).  Request: LGR_KEY and REBUILD, our
 * library's message for the peer's, relayed through one of the
 * connection's ends between hosts whose CLC said PAIRED in that group
 * (ENOENT: none); or no attribute, to take a message that came for one
 * of the connection's ends.  Reply: with a message taken, TOKEN, LGR_KEY
 * (the group its end's library named with PAIRED) and REBUILD; else,
 * once for an end whose peer's process ended without closing it (its
 * daemon said so: doc/soft-roce.md section 4), TOKEN, LGR_KEY and
 * PEER_GONE; else none.
 */
/*
 * SMC_SOFT_CMD_LGR: one of the process's soft SMC-R link groups as it is
 * now, for the kernel's listings (GET_LGR_SMCR, GET_LINK_SMCR, smc_diag's
 * LGRINFO; doc/soft-roce.md section 6).  Request: LGR_KEY, ROLE,
 * PEER_HOST, LGR_CONNS and a LINK per link up; with no LINK the group is
 * gone.  No reply but an error.  The daemon forgets a process's groups
 * with its connection.  CLC with PAIR_STATUS PAIRED names the connection's
 * group and link with LGR_KEY and LINK_ID.
 */
/*
 * Each soft SMC-R connection's RMB and send buffer, at most: halved down to
 * SMC_SOFT_SMCR_BUF_MIN while the device does not register them (a user's
 * RLIMIT_MEMLOCK), as the kernel's smc_buf_create() downgrades.  CLC with
 * PAIR_STATUS PAIRED carries the sizes taken in RCVBUF and SNDBUF.
 */
#define SMC_SOFT_SMCR_BUF (128u * 1024)
#define SMC_SOFT_SMCR_SNDBUF (2 * SMC_SOFT_SMCR_BUF)
#define SMC_SOFT_SMCR_BUF_MIN (16u * 1024)

struct smc_soft_link {
	uint8_t link_id;            /* the LLC link number, never 0 */
	uint8_t ibport;
	uint16_t reserved;
	uint32_t conns;
	char ibdev[64];             /* NUL-terminated */
	uint8_t gid[16];
	uint8_t peer_gid[16];
};

#define SMC_SOFT_CLC_MAX        1024
#define SMC_SOFT_CLC_MSGS       2   /* CLC messages of one end: PROPOSAL, CONFIRM; ACCEPT, DECLINE */

/* SMC_SOFT_A_PAIR_STATUS */
#define SMC_SOFT_PAIR_PENDING  1
#define SMC_SOFT_PAIR_PAIRED   2
#define SMC_SOFT_PAIR_DECLINED 3
#define SMC_SOFT_PAIR_ASKING   4    /* the peer host's daemon is asked: CLC later */
#define SMC_SOFT_PAIR_NEGOTIATE 5   /* both ends can: the CLC messages go through CLC */

/* Registrations one control connection may hold. */
#define SMC_SOFT_MAX_SOCKS 65536

#endif
