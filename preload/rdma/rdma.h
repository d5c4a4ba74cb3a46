/*
 * RDMA as the application process uses it for soft SMC-R (doc/soft-roce.md
 * sections 3 and 4): libibverbs opened at run time, a device port with its
 * protection domain, reliable-connected queue pairs, memory registrations,
 * posting and completions.  A program on a host without rdma-core never
 * loads libibverbs; nothing here knows SMC's messages (wire/ does).
 */
#ifndef SMC_PRELOAD_RDMA_H
#define SMC_PRELOAD_RDMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#pragma GCC visibility push(hidden)

/*
 * A message slot: SMC-R's CDC and LLC messages are 44 bytes in a 48-byte
 * work-request buffer (the kernel's SMC_WR_BUF_SIZE); SMC-Rv2's ADD_LINK
 * with its rkeys is longer (up to 4152 bytes for 255 connections), so a
 * queue pair may take longer messages, up to RDMA_MSG_MAX, in slots of
 * their own or, when rare, partly in a few shared buffers (slot_size).
 */
#define RDMA_MSG_SIZE 48u
#define RDMA_MSG_MAX  4160u

/* ---- verbs_lib.c: libibverbs, opened once ---- */
/*
 * The library's functions this folder calls, found by dlsym: never its
 * exported names, which verbs.h wraps in inline functions and macros that
 * a dlopen'd library cannot satisfy.  Posting and polling go through the
 * context's operations (ibv_post_send() and its kin are inline).
 */
struct rdma_verbs {
	struct ibv_device **(*get_device_list)(int *num);
	void (*free_device_list)(struct ibv_device **list);
	const char *(*get_device_name)(struct ibv_device *dev);
	struct ibv_context *(*open_device)(struct ibv_device *dev);
	int (*close_device)(struct ibv_context *ctx);
	/* fills the fields of the old struct ibv_port_attr, a prefix of today's */
	int (*query_port)(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr);
	int (*query_device)(struct ibv_context *ctx, struct ibv_device_attr *attr);
	int (*query_gid_ex)(struct ibv_context *ctx, uint32_t port, uint32_t index,
			    struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *ctx);
	int (*dealloc_pd)(struct ibv_pd *pd);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t len, int access);
	int (*dereg_mr)(struct ibv_mr *mr);
	struct ibv_comp_channel *(*create_comp_channel)(struct ibv_context *ctx);
	int (*destroy_comp_channel)(struct ibv_comp_channel *ch);
	struct ibv_cq *(*create_cq)(struct ibv_context *ctx, int cqe, void *cq_context,
				    struct ibv_comp_channel *ch, int comp_vector);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*get_cq_event)(struct ibv_comp_channel *ch, struct ibv_cq **cq, void **cq_context);
	void (*ack_cq_events)(struct ibv_cq *cq, unsigned int nevents);
	int (*get_async_event)(struct ibv_context *ctx, struct ibv_async_event *event);
	void (*ack_async_event)(struct ibv_async_event *event);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
	int (*destroy_qp)(struct ibv_qp *qp);
	/* the C library's, past the preload's hooks: for the folder's own descriptors */
	long (*syscall)(long nr, ...);
};
extern struct rdma_verbs rdma_v;

/* 0, or -ENOSYS when libibverbs cannot be used (rdma_lib_error() says why). */
int rdma_lib_load(void);
const char *rdma_lib_error(void);

/* ---- verbs_dev.c: a device port ---- */
struct rdma_dev;

/* What a link needs to know of its local port. */
struct rdma_port {
	uint8_t gid[16];        /* the RoCE v2 GID the link uses */
	uint32_t gid_index;
	uint8_t mtu;            /* active MTU, IB enum: 1 = 256 ... 5 = 4096 */
	uint32_t ifindex;       /* the Ethernet interface of the GID, 0 unknown */
	bool soft;              /* soft-RoCE (rxe): see RDMA_SOFT_INFLIGHT_PKTS */
};

/*
 * On a soft-RoCE device a link keeps at most this many packets of its path
 * MTU in flight, and at most RDMA_SOFT_INFLIGHT_MAX bytes
 * (rdma_qp_size.max_inflight: rdma_soft_inflight()), in writes of at most
 * half of that.  rxe sends no more than 64 packets of a queue pair at once
 * and holds back the rest; 192 KiB is what was measured under load
 * (doc/soft-roce.md section 4).
 */
#define RDMA_SOFT_INFLIGHT_PKTS 192u
#define RDMA_SOFT_INFLIGHT_MAX (192u * 1024)

/* The bytes a soft-RoCE queue pair of path MTU mtu (IB enum) keeps in flight at most. */
static inline uint32_t rdma_soft_inflight(uint8_t mtu)
{
	uint32_t b = RDMA_SOFT_INFLIGHT_PKTS * (128u << mtu);

	return b < RDMA_SOFT_INFLIGHT_MAX ? b : RDMA_SOFT_INFLIGHT_MAX;
}

/*
 * Opens device name's port, with the RoCE v2 GID gid (an IPv4 address as
 * ::ffff:a.b.c.d).  -ENODEV: no such device, -EADDRNOTAVAIL: no such GID
 * on the port, -ENETDOWN: the port is not active.
 */
int rdma_dev_open(const char *name, uint8_t port, const uint8_t gid[16], struct rdma_dev **out);
/* One more hold of d: each rdma_dev_close() lets go of one, the last closes it. */
void rdma_dev_hold(struct rdma_dev *d);
void rdma_dev_close(struct rdma_dev *d);
const struct rdma_port *rdma_dev_port(const struct rdma_dev *d);
/* Whether our port is ACTIVE now (asked of the device, not of its events): 1, 0, or -errno. */
int rdma_dev_port_active(struct rdma_dev *d);
/* What the device says of itself, for our port. */
enum rdma_dev_event {
	RDMA_DEV_NONE,          /* nothing for our port */
	RDMA_DEV_PORT_DOWN,     /* the port left ACTIVE: its links fail */
	RDMA_DEV_PORT_UP,       /* the port is ACTIVE again */
	RDMA_DEV_FATAL,         /* the device is gone or broken */
};
/* The device's event descriptor: readable when an event waits. */
int rdma_dev_event_fd(const struct rdma_dev *d);
/* Takes the waiting event, once rdma_dev_event_fd() was readable (it sleeps otherwise). */
enum rdma_dev_event rdma_dev_event(struct rdma_dev *d);
/* For the queue pairs of verbs_qp.c. */
struct ibv_context *rdma_dev_ctx(const struct rdma_dev *d);
struct ibv_pd *rdma_dev_pd(const struct rdma_dev *d);
uint8_t rdma_dev_port_num(const struct rdma_dev *d);

/* Memory registered with the device: lkey for our posts, rkey for the peer's writes. */
struct rdma_mr {
	void *addr;
	size_t len;
	uint32_t lkey, rkey;
	void *handle;
};
/* remote_write: the peer may RDMA WRITE into it (an RMB); else local use only. */
int rdma_mr_reg(struct rdma_dev *d, void *addr, size_t len, bool remote_write, struct rdma_mr *mr);
void rdma_mr_dereg(struct rdma_mr *mr);
/*
 * pin_room.c: bytes the process may still register on device dev before
 * its RLIMIT_MEMLOCK is reached (what it pinned already counts); SIZE_MAX
 * without a limit, with CAP_IPC_LOCK, or when it cannot tell.
 */
size_t rdma_mr_room(const char *dev);

/* ---- verbs_qp.c: a reliable-connected queue pair ---- */
struct rdma_qp;

/* One end of a queue pair as the CLC messages carry it. */
struct rdma_qp_addr {
	uint32_t qpn;           /* 24 bits */
	uint32_t psn;           /* initial packet sequence number, 24 bits */
	uint8_t gid[16];
	uint8_t mtu;            /* IB enum */
};

/* Sizes of a queue pair: work requests in flight, receive slots for messages, and their size. */
struct rdma_qp_size {
	uint32_t send_wr;
	uint32_t recv_slots;
	uint32_t msg_size;      /* 0: RDMA_MSG_SIZE; at most RDMA_MSG_MAX */
	uint32_t max_inflight;  /* bytes of writes and messages in flight, 0: no limit */
	/*
	 * 0, or the bytes of a message a slot holds itself, below msg_size:
	 * the rest of a longer one, which must be rare (one at a time each
	 * way), goes through RDMA_QP_SPILLS receive and RDMA_QP_BIGS send
	 * buffers of msg_size shared by the queue pair, so that its
	 * registration, which RLIMIT_MEMLOCK counts, is small.  A device that
	 * cannot scatter a receive gets full slots.
	 */
	uint32_t slot_size;
};

#define RDMA_QP_SPILLS 4u
#define RDMA_QP_BIGS   2u

/* A queue pair's message slot: slot_size where asked for and smaller than a message. */
static inline size_t rdma_qp_slot(const struct rdma_qp_size *s)
{
	size_t msg = s->msg_size ? s->msg_size : RDMA_MSG_SIZE;

	return s->slot_size && s->slot_size < msg ? s->slot_size : msg;
}

/* The bytes of a queue pair's registered message buffers. */
static inline size_t rdma_qp_reg_bytes(const struct rdma_qp_size *s)
{
	size_t msg = s->msg_size ? s->msg_size : RDMA_MSG_SIZE;
	size_t slot = rdma_qp_slot(s);
	size_t bytes = ((size_t)s->recv_slots + s->send_wr) * slot;

	if (slot < msg)
		bytes += RDMA_QP_SPILLS * (msg - slot) + RDMA_QP_BIGS * msg;
	return bytes;
}

int rdma_qp_create(struct rdma_dev *d, const struct rdma_qp_size *size, struct rdma_qp **out);
void rdma_qp_destroy(struct rdma_qp *qp);
void rdma_qp_local(const struct rdma_qp *qp, struct rdma_qp_addr *a);
/* Connects to the peer's end: the path MTU is the smaller of the two. */
int rdma_qp_connect(struct rdma_qp *qp, const struct rdma_qp_addr *peer);
/*
 * The descriptor to sleep on: readable once armed (rdma_qp_arm()) and
 * something completed, unless the channel is lent.
 */
int rdma_qp_fd(const struct rdma_qp *qp);
/*
 * Lends the completion channel to one thread that sleeps on it itself
 * (rdma_qp_chan_fd()): rdma_qp_fd() no longer reports it until it is
 * given back (lend false).  0 or -errno.
 */
int rdma_qp_lend(struct rdma_qp *qp, bool lend);
int rdma_qp_chan_fd(const struct rdma_qp *qp);

/*
 * RDMA WRITE of len bytes at off in src into the peer's raddr (its rkey);
 * signaled: an RDMA_EV_WRITTEN event reports it.  -ENOBUFS: the send queue
 * is full but for its control slots (wait for completions).
 */
int rdma_post_write(struct rdma_qp *qp, const struct rdma_mr *src, size_t off, size_t len,
		    uint64_t raddr, uint32_t rkey, uint64_t wr_id, bool signaled);
/*
 * SEND of a message of at most the queue pair's msg_size; always signaled
 * (RDMA_EV_SENT).  The last two slots of the send queue are kept for
 * rdma_post_ctl(): a control message (LLC) finds room on a queue that data
 * filled.
 */
int rdma_post_msg(struct rdma_qp *qp, const void *msg, size_t len, uint64_t wr_id);
int rdma_post_ctl(struct rdma_qp *qp, const void *msg, size_t len, uint64_t wr_id);
/*
 * A zero-byte RDMA WRITE: it needs no address, key or receive slot at the
 * peer (IBTA C9-88) and leaves no completion there, and the peer's device
 * acknowledges it whether its program runs or not.  Signaled (it counts
 * in rdma_qp_counts()), reported to nobody; it may take a control slot, never the last.
 */
int rdma_post_probe(struct rdma_qp *qp);
/*
 * Holds the next posts back until rdma_qp_flush() or a control message,
 * which post them with one doorbell (on rxe, one system call).  Flush:
 * 0 or -errno (the queue pair is broken).
 */
void rdma_qp_hold(struct rdma_qp *qp);
int rdma_qp_flush(struct rdma_qp *qp);
/* Work requests posted and completed so far (the difference: outstanding). */
void rdma_qp_counts(const struct rdma_qp *qp, uint64_t *posted, uint64_t *completed);
/*
 * The bytes of work it keeps in flight at most (rdma_qp_size.max_inflight,
 * 0: no limit); rdma_qp_connect() lowers a limit to what the path MTU
 * gives (rdma_soft_inflight()).
 */
uint32_t rdma_qp_inflight(const struct rdma_qp *qp);

enum rdma_ev_kind {
	RDMA_EV_SENT,           /* a message of ours was delivered */
	RDMA_EV_WRITTEN,        /* a signaled write of ours was delivered */
	RDMA_EV_MSG,            /* a message of the peer arrived: len bytes in msg */
	RDMA_EV_ERROR,          /* a work request failed: status, the link is broken */
};

struct rdma_event {
	enum rdma_ev_kind kind;
	uint64_t wr_id;
	int status;             /* the completion's status, 0: success */
	uint32_t len;
	uint8_t msg[RDMA_MSG_MAX];
};

/*
 * Up to max completions, without sleeping: the count, or -errno.  A
 * message's receive slot is posted again before it returns.
 */
int rdma_qp_poll(struct rdma_qp *qp, struct rdma_event *ev, int max);
/*
 * Before sleeping on rdma_qp_fd() (with the caller's own poll: inside the
 * preload, the one behind its hooks): asks for the next message of the
 * peer (or error) to make it readable, and with sent for the next
 * completion of a send of ours as well (which otherwise wakes nobody:
 * rdma_qp_poll() takes it when it comes to it).  An event asked for stays
 * asked for until rdma_qp_woken() takes it.  1: something completed
 * meanwhile, rdma_qp_poll() it instead of sleeping; 0: sleep; -errno.
 */
int rdma_qp_arm(struct rdma_qp *qp, bool sent);
/* Its number and send-queue counts in one line, for a report: snprintf's count. */
int rdma_qp_describe(const struct rdma_qp *qp, char *buf, size_t size);
/* After rdma_qp_fd() was readable: takes the channel's event.  0, -EAGAIN (another took it) or -errno. */
int rdma_qp_woken(struct rdma_qp *qp);

/*
 * Moves the queue pair to the reset state: it sends nothing more, drops
 * what comes to it, and completes nothing for its owner any more (its
 * work is dropped, not flushed).
 */
void rdma_qp_stop(struct rdma_qp *qp);
struct rdma_dev *rdma_qp_dev(const struct rdma_qp *qp);

/* ---- retire.c: queue pairs destroyed only once no packet of theirs can be left in the kernel ---- */
#define RDMA_RETIRE_LOOK_NS (250ll * 1000000)
/*
 * Destroys qp at once, on a thread, if its port is active; else stops it
 * now and destroys it once its port is active again (rdma_retired_reap()).
 * Its device stays open until then (a hold of its own).  qp is no longer
 * the caller's.
 */
void rdma_retire(struct rdma_qp *qp);
/*
 * Destroys, on a thread of its own (the kernel may take long), those whose
 * port is active again, asked of the device at most every
 * RDMA_RETIRE_LOOK_NS (now_ns: CLOCK_MONOTONIC): how many still wait or
 * are being destroyed.
 */
unsigned rdma_retired_reap(int64_t now_ns);
/* In a forked child: the parent's are not ours to destroy. */
void rdma_retired_after_fork_child(void);

/*
 * Descriptors of the process's RDMA resources (fds.c), which the program's
 * close-everything loops must leave open: kept from their making to their
 * end.  rdma_fds_kept_in() fills out with those in [first, last], in order
 * (at most max): their count.
 */
void rdma_fd_keep(int fd);
void rdma_fd_drop(int fd);
unsigned rdma_fds_kept_in(unsigned first, unsigned last, int *out, unsigned max);
/* In a forked child: none (the parent's are no use to it). */
void rdma_fds_after_fork_child(void);

#pragma GCC visibility pop

#endif
