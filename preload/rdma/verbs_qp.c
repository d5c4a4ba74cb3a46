/*
 * A reliable-connected queue pair for a soft SMC-R link: its completion
 * queue and channel, receive slots for the peer's messages, and the send
 * queue's accounting.  Writes may go unsignaled, as the kernel's SMC posts
 * its data; every send_wr / 2 posts one is signaled anyway, so that the
 * send queue's slots come back.
 */
#include "rdma.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>

#define RECV_TAG (1ull << 63)
#define STASH 32
/* Send-queue slots only control messages may take (rdma_post_ctl()): a stalled link can still be kicked. */
#define CTL_RESERVE 2

/* What a post was, by its sequence number modulo send_wr. */
struct posted {
	uint64_t wr_id;
	uint64_t bytes_end;          /* bytes posted up to and with it */
	bool reported;               /* the caller asked for its completion */
};

struct rdma_qp {
	struct rdma_dev *dev;
	struct ibv_comp_channel *ch;    /* both queues' events; non-blocking */
	int watch;                      /* an epoll set of ch, unless lent (rdma_qp_lend()) */
	bool lent;
	struct ibv_cq *cq;              /* the peer's messages (and every error) */
	struct ibv_cq *scq;             /* our sends: armed only when asked (rdma_qp_arm()) */
	bool armed, sarmed;             /* asked for an event not taken yet */
	struct ibv_qp *qp;
	/*
	 * recv_slots receive slots, send_wr send slots, of slot bytes each;
	 * with slot < msg_size, RDMA_QP_SPILLS buffers for the rest of a
	 * long message received and RDMA_QP_BIGS for a long one sent
	 */
	struct rdma_mr slots_mr;
	uint8_t *slots;
	size_t slots_len;
	uint32_t slot;
	uint64_t recvs_posted;       /* the spill buffer of a receive: its number modulo RDMA_QP_SPILLS */
	uint64_t big_seq[RDMA_QP_BIGS];   /* the post (its sequence number + 1) that holds it, 0: none */
	struct rdma_qp_size size;
	uint32_t psn;
	uint32_t max_inline;
	uint64_t seq;                /* posts so far */
	uint64_t done;               /* posts completed (in order on an RC send queue) */
	uint32_t unsignaled;         /* posts since the last signaled one */
	uint64_t bytes_seq;          /* bytes posted so far */
	uint64_t bytes_done;         /* bytes of the completed posts */
	uint64_t unsig_bytes;        /* bytes posted since the last signaled one */
	struct posted *posts;
	/* posts held back for one doorbell (rdma_qp_hold()): by sequence number modulo send_wr */
	struct ibv_send_wr *wrs;
	struct ibv_sge *sges;
	struct ibv_send_wr *held_first, *held_last;
	bool holding;
	struct ibv_wc stash[STASH];  /* completions taken while arming, of either queue */
	int nstash, stash_pos;
};

static uint8_t *spill_at(const struct rdma_qp *q, uint64_t n)
{
	return q->slots + ((size_t)q->size.recv_slots + q->size.send_wr) * q->slot +
	       (size_t)(n % RDMA_QP_SPILLS) * (q->size.msg_size - q->slot);
}

static uint8_t *big_at(const struct rdma_qp *q, unsigned i)
{
	return spill_at(q, 0) + (size_t)RDMA_QP_SPILLS * (q->size.msg_size - q->slot) + (size_t)i * q->size.msg_size;
}

/*
 * A receive's spill buffer is that of its place in the receive queue,
 * which completes in order: a long message's rest is overwritten only by
 * the RDMA_QP_SPILLS-th message after it, long too, before it was taken.
 */
static int post_recv(struct rdma_qp *q, uint32_t slot)
{
	struct ibv_sge sge[2] = {
		{ .addr = (uintptr_t)(q->slots + (size_t)slot * q->slot), .length = q->slot, .lkey = q->slots_mr.lkey },
		{ .addr = (uintptr_t)spill_at(q, q->recvs_posted), .length = q->size.msg_size - q->slot,
		  .lkey = q->slots_mr.lkey },
	};
	struct ibv_recv_wr wr = {
		.wr_id = RECV_TAG | (q->recvs_posted % RDMA_QP_SPILLS) << 32 | slot,
		.sg_list = sge,
		.num_sge = q->slot < q->size.msg_size ? 2 : 1,
	}, *bad;
	int rc = -ibv_post_recv(q->qp, &wr, &bad);

	if (!rc)
		q->recvs_posted++;
	return rc;
}

static int to_init(struct rdma_qp *q)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = rdma_dev_port_num(q->dev),
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};

	return -rdma_v.modify_qp(q->qp, &a,
				 IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static struct ibv_qp *create(struct rdma_qp *q, uint32_t inline_size, uint32_t recv_sge)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = q->scq,
		.recv_cq = q->cq,
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 0,
		.cap = {
			.max_send_wr = q->size.send_wr,
			.max_recv_wr = q->size.recv_slots,
			.max_send_sge = 1,
			.max_recv_sge = recv_sge,
			.max_inline_data = inline_size,
		},
	};
	struct ibv_qp *qp = rdma_v.create_qp(rdma_dev_pd(q->dev), &ia);

	if (qp)
		q->max_inline = ia.cap.max_inline_data;
	return qp;
}

/* Past the preload's epoll_ctl(): the watch set is the library's own. */
static int watch_ctl(struct rdma_qp *q, int op)
{
	struct epoll_event ev = { .events = EPOLLIN };

	return (int)rdma_v.syscall(SYS_epoll_ctl, q->watch, op, q->ch->fd, &ev);
}

static int setup(struct rdma_qp *q)
{
	struct ibv_context *ctx = rdma_dev_ctx(q->dev);
	long flags;
	int rc;

	q->posts = calloc(q->size.send_wr, sizeof(*q->posts));
	q->wrs = calloc(q->size.send_wr, sizeof(*q->wrs));
	q->sges = calloc(q->size.send_wr, sizeof(*q->sges));
	if (!q->posts || !q->wrs || !q->sges)
		return -ENOMEM;
	q->ch = rdma_v.create_comp_channel(ctx);
	if (!q->ch)
		return errno ? -errno : -ENOMEM;
	rdma_fd_keep(q->ch->fd);
	/* two threads may look at the channel: the one that finds it empty must not block */
	flags = rdma_v.syscall(SYS_fcntl, q->ch->fd, F_GETFL);
	if (flags < 0 || rdma_v.syscall(SYS_fcntl, q->ch->fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -errno;
	q->watch = (int)rdma_v.syscall(SYS_epoll_create1, EPOLL_CLOEXEC);
	if (q->watch < 0)
		return -errno;
	rdma_fd_keep(q->watch);
	if (watch_ctl(q, EPOLL_CTL_ADD))
		return -errno;
	q->cq = rdma_v.create_cq(ctx, (int)q->size.recv_slots, q, q->ch, 0);
	if (q->cq)
		q->scq = rdma_v.create_cq(ctx, (int)q->size.send_wr, &q->scq, q->ch, 0);
	if (!q->cq || !q->scq)
		return errno ? -errno : -ENOMEM;
	/* a device without inline sends, or that cannot scatter a receive (full slots then) */
	for (unsigned i = q->slot < q->size.msg_size ? 0 : 2; !q->qp && i < 4; i++) {
		uint32_t sge = i < 2 ? 2 : 1;

		if (sge == 1)
			q->slot = q->size.msg_size;
		q->qp = create(q, i % 2 ? 0 : q->size.msg_size, sge);
	}
	if (!q->qp)
		return errno ? -errno : -ENOMEM;
	q->size.slot_size = q->slot;
	/* pages of their own: no other data shares what the registration pins */
	q->slots_len = rdma_qp_reg_bytes(&q->size);
	q->slots = mmap(NULL, q->slots_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (q->slots == MAP_FAILED) {
		q->slots = NULL;
		return -ENOMEM;
	}
	rc = rdma_mr_reg(q->dev, q->slots, q->slots_len, false, &q->slots_mr);
	if (!rc)
		rc = to_init(q);
	for (uint32_t i = 0; !rc && i < q->size.recv_slots; i++)
		rc = post_recv(q, i);
	if (getrandom(&q->psn, sizeof(q->psn), 0) != sizeof(q->psn))
		q->psn = (uint32_t)(uintptr_t)q;
	q->psn &= 0xffffff;
	return rc;
}

int rdma_qp_create(struct rdma_dev *d, const struct rdma_qp_size *size, struct rdma_qp **out)
{
	struct rdma_qp *q;
	int rc;

	/* room for data beside the control slots */
	if (size->send_wr <= CTL_RESERVE || !size->recv_slots || size->msg_size > RDMA_MSG_MAX)
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->dev = d;
	q->watch = -1;
	q->size = *size;
	if (!q->size.msg_size)
		q->size.msg_size = RDMA_MSG_SIZE;
	q->slot = (uint32_t)rdma_qp_slot(&q->size);
	rc = setup(q);
	if (rc) {
		rdma_qp_destroy(q);
		return rc;
	}
	*out = q;
	return 0;
}

void rdma_qp_destroy(struct rdma_qp *q)
{
	if (!q)
		return;
	if (q->qp)
		rdma_v.destroy_qp(q->qp);
	if (q->cq)
		rdma_v.destroy_cq(q->cq);
	if (q->scq)
		rdma_v.destroy_cq(q->scq);
	if (q->watch >= 0) {
		rdma_fd_drop(q->watch);
		rdma_v.syscall(SYS_close, q->watch);
	}
	if (q->ch) {
		rdma_fd_drop(q->ch->fd);
		rdma_v.destroy_comp_channel(q->ch);
	}
	rdma_mr_dereg(&q->slots_mr);
	if (q->slots)
		munmap(q->slots, q->slots_len);
	free(q->posts);
	free(q->wrs);
	free(q->sges);
	free(q);
}

struct rdma_dev *rdma_qp_dev(const struct rdma_qp *q)
{
	return q->dev;
}

void rdma_qp_stop(struct rdma_qp *q)
{
	/*
	 * not the error state, where rxe may deadlock on what still comes; the
	 * reset drains what waited, safe only where nothing comes (doc/kernels.md)
	 */
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	/* a queue pair the device lost cannot be moved: it sends nothing anyway */
	if (q->qp)
		rdma_v.modify_qp(q->qp, &a, IBV_QP_STATE);
}

void rdma_qp_local(const struct rdma_qp *q, struct rdma_qp_addr *a)
{
	const struct rdma_port *p = rdma_dev_port(q->dev);

	a->qpn = q->qp->qp_num;
	a->psn = q->psn;
	memcpy(a->gid, p->gid, 16);
	a->mtu = p->mtu;
}

int rdma_qp_connect(struct rdma_qp *q, const struct rdma_qp_addr *peer)
{
	const struct rdma_port *p = rdma_dev_port(q->dev);
	struct ibv_qp_attr rtr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = (enum ibv_mtu)(peer->mtu < p->mtu ? peer->mtu : p->mtu),
		.dest_qp_num = peer->qpn & 0xffffff,
		.rq_psn = peer->psn & 0xffffff,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1,
			.port_num = rdma_dev_port_num(q->dev),
			.grh = { .sgid_index = (uint8_t)p->gid_index, .hop_limit = 64 },
		},
	};
	struct ibv_qp_attr rts = {
		.qp_state = IBV_QPS_RTS,
		/*
		 * 0.54 s, so that a guest that is slow to answer is not retried
		 * for nothing; 6 retries, as 7 never ends on rxe (it does not
		 * count them): a peer gone silent fails the link in about 4 s.
		 */
		.timeout = 17,
		.retry_cnt = 6,
		.rnr_retry = 7,
		.sq_psn = q->psn,
		.max_rd_atomic = 1,
	};
	int rc;

	if (peer->mtu < IBV_MTU_256 || peer->mtu > IBV_MTU_4096)
		return -EINVAL;
	memcpy(rtr.ah_attr.grh.dgid.raw, peer->gid, 16);
	rc = rdma_v.modify_qp(q->qp, &rtr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			      IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (rc)
		return -rc;
	if (q->size.max_inflight && q->size.max_inflight > rdma_soft_inflight((uint8_t)rtr.path_mtu))
		q->size.max_inflight = rdma_soft_inflight((uint8_t)rtr.path_mtu);
	return -rdma_v.modify_qp(q->qp, &rts, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				 IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

int rdma_qp_fd(const struct rdma_qp *q)
{
	return q->watch;
}

int rdma_qp_chan_fd(const struct rdma_qp *q)
{
	return q->ch->fd;
}

int rdma_qp_lend(struct rdma_qp *q, bool lend)
{
	if (q->lent == lend)
		return 0;
	if (watch_ctl(q, lend ? EPOLL_CTL_DEL : EPOLL_CTL_ADD))
		return -errno;
	q->lent = lend;
	return 0;
}

/*
 * Whether the send queue has room for a post of len bytes (ctl: a control
 * message, which may take the reserve and is not held to max_inflight).
 */
static bool room(const struct rdma_qp *q, bool ctl, size_t len)
{
	uint64_t inflight = q->bytes_seq - q->bytes_done;

	if (q->seq - q->done >= q->size.send_wr - (ctl ? 0 : CTL_RESERVE))
		return false;
	return ctl || !q->size.max_inflight || !inflight || inflight + len <= q->size.max_inflight;
}

/*
 * Posts wr of len bytes as sequence number q->seq; signaled when the
 * caller asks, or the queue needs its slots or its bytes in flight back.
 */
int rdma_qp_flush(struct rdma_qp *q)
{
	struct ibv_send_wr *first = q->held_first, *bad;

	q->holding = false;
	if (!first)
		return 0;
	q->held_first = q->held_last = NULL;
	return -ibv_post_send(q->qp, first, &bad);
}

void rdma_qp_hold(struct rdma_qp *q)
{
	q->holding = true;
}

/*
 * Posts wr (its one sge: sge) of len bytes as sequence number q->seq, or
 * holds it until the next flush; signaled when the caller asks, or the
 * queue needs its slots or its bytes in flight back.
 */
static int post(struct rdma_qp *q, const struct ibv_send_wr *wr, const struct ibv_sge *sge, size_t len,
		uint64_t wr_id, bool report, bool ctl)
{
	uint32_t i = (uint32_t)(q->seq % q->size.send_wr);
	struct ibv_send_wr *w = &q->wrs[i];
	struct posted *p;

	if (!room(q, ctl, len))
		return -ENOBUFS;
	*w = *wr;
	q->sges[i] = *sge;
	w->sg_list = &q->sges[i];
	w->next = NULL;
	if (report || q->unsignaled + 1 >= q->size.send_wr / 2 ||
	    (q->size.max_inflight && q->unsig_bytes + len >= q->size.max_inflight / 2))
		w->send_flags |= IBV_SEND_SIGNALED;
	w->wr_id = q->seq;
	p = &q->posts[i];
	p->wr_id = wr_id;
	p->reported = report;
	p->bytes_end = q->bytes_seq + len;
	if (q->held_last)
		q->held_last->next = w;
	else
		q->held_first = w;
	q->held_last = w;
	if (w->send_flags & IBV_SEND_SIGNALED) {
		q->unsignaled = 0;
		q->unsig_bytes = 0;
	} else {
		q->unsignaled++;
		q->unsig_bytes += len;
	}
	q->bytes_seq += len;
	q->seq++;
	/* a control message goes at once, and what was held before it */
	return q->holding && !ctl ? 0 : rdma_qp_flush(q);
}

int rdma_post_write(struct rdma_qp *q, const struct rdma_mr *src, size_t off, size_t len,
		    uint64_t raddr, uint32_t rkey, uint64_t wr_id, bool signaled)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)src->addr + off,
		.length = (uint32_t)len,
		.lkey = src->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	};

	if (off > src->len || len > src->len - off || len > UINT32_MAX)
		return -EINVAL;
	return post(q, &wr, &sge, len, wr_id, signaled, false);
}

static int post_msg(struct rdma_qp *q, const void *msg, size_t len, uint64_t wr_id, bool ctl)
{
	struct ibv_sge sge = { .addr = (uintptr_t)msg, .length = (uint32_t)len };
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
	};

	/* the send slot of this post's sequence number (free again once it completed): a held post outlives msg */
	uint8_t *slot = q->slots + ((size_t)q->size.recv_slots + q->seq % q->size.send_wr) * q->slot;

	if (len > q->size.msg_size)
		return -EMSGSIZE;
	if (!room(q, ctl, len))
		return -ENOBUFS;
	if (len > q->slot) {
		unsigned i = 0;

		/* a long message's buffer is free once its post's completion was taken */
		while (i < RDMA_QP_BIGS && q->big_seq[i] > q->done)
			i++;
		if (i == RDMA_QP_BIGS)
			return -ENOBUFS;
		q->big_seq[i] = q->seq + 1;
		slot = big_at(q, i);
	}
	memcpy(slot, msg, len);
	sge.addr = (uintptr_t)slot;
	sge.lkey = q->slots_mr.lkey;
	if (len <= q->max_inline)
		wr.send_flags = IBV_SEND_INLINE;
	return post(q, &wr, &sge, len, wr_id, true, ctl);
}

int rdma_post_msg(struct rdma_qp *q, const void *msg, size_t len, uint64_t wr_id)
{
	return post_msg(q, msg, len, wr_id, false);
}

int rdma_post_ctl(struct rdma_qp *q, const void *msg, size_t len, uint64_t wr_id)
{
	return post_msg(q, msg, len, wr_id, true);
}

/* Never the last control slot: that one stays for an LLC reply. */
int rdma_post_probe(struct rdma_qp *q)
{
	struct ibv_sge sge = { .length = 0 };
	struct ibv_send_wr wr = { .num_sge = 0, .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED };

	if (q->seq - q->done + 1 >= q->size.send_wr)
		return -ENOBUFS;
	return post(q, &wr, &sge, 0, 0, false, true);
}

void rdma_qp_counts(const struct rdma_qp *q, uint64_t *posted, uint64_t *completed)
{
	*posted = q->seq;
	*completed = q->done;
}

uint32_t rdma_qp_inflight(const struct rdma_qp *q)
{
	return q->size.max_inflight;
}

/* One completion as an event; false: nothing for the caller. */
static bool take(struct rdma_qp *q, const struct ibv_wc *wc, struct rdma_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->status = wc->status;
	if (wc->wr_id & RECV_TAG) {
		uint32_t slot = (uint32_t)wc->wr_id;
		unsigned spill = (unsigned)(wc->wr_id >> 32 & 0xff);

		if (slot >= q->size.recv_slots)
			return false;
		if (wc->status != IBV_WC_SUCCESS) {
			ev->kind = RDMA_EV_ERROR;
			return true;
		}
		ev->kind = RDMA_EV_MSG;
		ev->len = wc->byte_len < q->size.msg_size ? wc->byte_len : q->size.msg_size;
		memcpy(ev->msg, q->slots + (size_t)slot * q->slot, ev->len < q->slot ? ev->len : q->slot);
		if (ev->len > q->slot)
			memcpy(ev->msg + q->slot, spill_at(q, spill), ev->len - q->slot);
		if (post_recv(q, slot))
			ev->kind = RDMA_EV_ERROR;
		return true;
	}
	if (wc->wr_id < q->done || wc->wr_id >= q->seq)
		return false;
	q->done = wc->wr_id + 1;
	q->bytes_done = q->posts[wc->wr_id % q->size.send_wr].bytes_end;
	ev->wr_id = q->posts[wc->wr_id % q->size.send_wr].wr_id;
	if (wc->status != IBV_WC_SUCCESS) {
		ev->kind = RDMA_EV_ERROR;
		return true;
	}
	if (!q->posts[wc->wr_id % q->size.send_wr].reported)
		return false;
	ev->kind = wc->opcode == IBV_WC_RDMA_WRITE ? RDMA_EV_WRITTEN : RDMA_EV_SENT;
	return true;
}

int rdma_qp_poll(struct rdma_qp *q, struct rdma_event *ev, int max)
{
	int n = 0;

	while (n < max) {
		struct ibv_wc wc;

		if (q->stash_pos < q->nstash) {
			wc = q->stash[q->stash_pos++];
		} else {
			int got = ibv_poll_cq(q->cq, 1, &wc);

			if (!got)
				got = ibv_poll_cq(q->scq, 1, &wc);
			if (got < 0)
				return n ? n : -EIO;
			if (!got)
				break;
		}
		if (take(q, &wc, &ev[n]))
			n++;
	}
	return n;
}

/* Asks cq for its next completion's event; what completed before raises none: into the stash. */
static int arm_one(struct rdma_qp *q, struct ibv_cq *cq, bool *armed)
{
	int rc = ibv_req_notify_cq(cq, 0), got;

	if (rc)
		return -rc;
	*armed = true;
	if (q->stash_pos == q->nstash)
		q->stash_pos = q->nstash = 0;
	got = ibv_poll_cq(cq, STASH - q->nstash, q->stash + q->nstash);
	if (got < 0)
		return -EIO;
	q->nstash += got;
	return 0;
}

int rdma_qp_arm(struct rdma_qp *q, bool sent)
{
	int rc = 0;

	if (q->stash_pos < q->nstash)
		return 1;
	if (!q->armed)
		rc = arm_one(q, q->cq, &q->armed);
	if (!rc && sent && !q->sarmed)
		rc = arm_one(q, q->scq, &q->sarmed);
	if (rc)
		return rc;
	return q->stash_pos < q->nstash;
}

int rdma_qp_woken(struct rdma_qp *q)
{
	struct ibv_cq *cq;
	void *cq_ctx;

	if (rdma_v.get_cq_event(q->ch, &cq, &cq_ctx)) {
		if (errno == EAGAIN)
			return -EAGAIN;
		/* whose event it was is unknown: both are asked for again */
		q->armed = q->sarmed = false;
		return -EIO;
	}
	if (cq == q->scq)
		q->sarmed = false;
	else
		q->armed = false;
	rdma_v.ack_cq_events(cq, 1);
	return 0;
}

int rdma_qp_describe(const struct rdma_qp *q, char *buf, size_t size)
{
	return snprintf(buf, size, "qpn %u, %llu posted, %llu completed, %d stashed", q->qp->qp_num,
			(unsigned long long)q->seq, (unsigned long long)q->done, q->nstash - q->stash_pos);
}
