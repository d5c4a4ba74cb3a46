/*
 * smc_softd's netlink layer: what a request is to a handler and how replies
 * are built (the families that answer are in families/).  The daemon answers the same netlink messages as the kernel's SMC
 * module: requests arrive as datagrams on a SOCK_SEQPACKET socket, each
 * holding one or more netlink messages, and the replies go back the same way.
 */
#ifndef SOFTD_H
#define SOFTD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/netlink.h>
#include <linux/genetlink.h>

#include "reg.h"          /* the family SMC_SOFT: SMC_SOFT_FAMILY_NAME */

struct soft_state;
struct soft_ns;

/* Generic netlink family ids the daemon hands out (never 16 = nlctrl, 20 = sock_diag). */
#define SOFT_ID_PNETID   0x1a
#define SOFT_ID_GEN      0x1b
#define SOFT_ID_SOFT     0x1c

/* Who sent a request: read from the connection when it was accepted. */
struct soft_peer {
	pid_t pid;
	uid_t uid;
	gid_t gid;
	uint64_t netns;          /* inode of /proc/PID/ns/net */
	bool net_admin;          /* CAP_NET_ADMIN in the effective set */
	uint64_t conn_id;        /* unique per connection, for what it registers */
};

/* A descriptor that goes out with the reply message at offset off. */
struct soft_out_fd {
	size_t off;
	int fd;
};

/*
 * Replies: complete netlink messages back to back (split into datagrams when
 * sent).  A message with a descriptor is sent as a datagram of its own, the
 * descriptor riding on it with SCM_RIGHTS; the reply owns the descriptor
 * until then, and closes it when the reply is dropped.
 */
struct soft_out {
	unsigned char *buf;
	size_t len;
	size_t cap;
	bool failed;             /* out of memory: the connection is dropped */
	struct soft_out_fd *fds; /* ascending offsets */
	size_t n_fds, fds_cap;
};

#define SOFT_MSG_ROOM 16384  /* room one reply message may use */

void soft_out_init(struct soft_out *o);
void soft_out_free(struct soft_out *o);
/*
 * Start a reply message to req (its seq and port id): nlmsghdr with type and
 * flags; fill it with libmnl (mnl_attr_put_*), at most SOFT_MSG_ROOM bytes,
 * then soft_msg_end().  NULL when out of memory.
 */
struct nlmsghdr *soft_msg(struct soft_out *o, const struct nlmsghdr *req,
			  uint16_t type, uint16_t flags);
/* The same with a genlmsghdr (cmd, version 1) after the header. */
struct nlmsghdr *soft_genl_msg(struct soft_out *o, const struct nlmsghdr *req,
			       uint16_t family, uint8_t cmd, uint16_t flags);
void soft_msg_end(struct soft_out *o, struct nlmsghdr *nlh);
/*
 * Attach fd to the message nlh (the last one started); the reply owns fd
 * from here on, also when this fails (-ENOMEM, o->failed set).
 */
int soft_msg_fd(struct soft_out *o, const struct nlmsghdr *nlh, int fd);
/* Drop the replies from offset len on, closing their descriptors. */
void soft_out_trim(struct soft_out *o, size_t len);
/* NLMSG_ERROR for req (error 0 is an ack); text, if not NULL, as extended ack. */
void soft_error(struct soft_out *o, const struct nlmsghdr *req, int error, const char *text);
/* NLMSG_DONE (flags NLM_F_MULTI, payload int 0). */
void soft_done(struct soft_out *o, const struct nlmsghdr *req);

/* One request as a handler sees it. */
struct soft_req {
	struct soft_state *st;
	struct soft_ns *ns;              /* the caller's namespace (created on demand) */
	const struct soft_peer *peer;
	const struct nlmsghdr *nlh;
	const struct genlmsghdr *genl;   /* NULL for sock_diag */
	const void *data;                /* after the genl header (or the diag request) */
	size_t data_len;
	struct soft_out *out;
	int fd;                          /* passed with SCM_RIGHTS, else -1; a handler
					    that keeps it sets this to -1 */
	const char *ext_ack;             /* a handler may set an extended-ack text */
};

/*
 * Generic netlink operations: a doit returns 0 (acked when NLM_F_ACK) or
 * -errno; a dumpit appends its messages with soft_genl_msg(..., NLM_F_MULTI)
 * and returns 0 or -errno.  The core adds NLMSG_DONE, checks the dump flag
 * (EOPNOTSUPP when it does not fit the operation, as genetlink does) and the
 * privilege of admin operations (EPERM without CAP_NET_ADMIN).
 */
struct soft_op {
	uint8_t cmd;
	int (*doit)(struct soft_req *r);
	int (*dumpit)(struct soft_req *r);
	bool admin;
};

struct soft_family {
	const char *name;
	uint16_t id;
	uint8_t version;
	uint16_t maxattr;
	const struct soft_op *ops;
	size_t n_ops;
};

/*
 * Top-level attributes of a genl request, type-indexed up to maxtype (types
 * above are ignored, as the kernel's liberal validation does).  tb must have
 * maxtype + 1 entries.  0, or -EINVAL for attributes that overrun the message.
 */
int soft_genl_attrs(const struct soft_req *r, const struct nlattr **tb, unsigned int maxtype);

#endif
