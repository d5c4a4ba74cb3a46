/*
 * preload/rdma/verbs_qp.c over a fake verbs device: two queue pairs joined
 * back to back, whose sends land in the other's posted receives, scattered
 * over their SGEs as a device does, when the test lets the device run.
 * Its names are renamed here, since the other unit tests link
 * tests/unit/fake_rdma.c in its place.
 */
#define rdma_post_ctl      vq_post_ctl
#define rdma_post_msg      vq_post_msg
#define rdma_post_probe    vq_post_probe
#define rdma_post_write    vq_post_write
#define rdma_qp_arm        vq_qp_arm
#define rdma_qp_chan_fd    vq_qp_chan_fd
#define rdma_qp_connect    vq_qp_connect
#define rdma_qp_counts     vq_qp_counts
#define rdma_qp_create     vq_qp_create
#define rdma_qp_describe   vq_qp_describe
#define rdma_qp_destroy    vq_qp_destroy
#define rdma_qp_dev        vq_qp_dev
#define rdma_qp_fd         vq_qp_fd
#define rdma_qp_flush      vq_qp_flush
#define rdma_qp_hold       vq_qp_hold
#define rdma_qp_inflight   vq_qp_inflight
#define rdma_qp_lend       vq_qp_lend
#define rdma_qp_local      vq_qp_local
#define rdma_qp_poll       vq_qp_poll
#define rdma_qp_stop       vq_qp_stop
#define rdma_qp_woken      vq_qp_woken
#define rdma_dev_ctx       vq_dev_ctx
#define rdma_dev_pd        vq_dev_pd
#define rdma_dev_port      vq_dev_port
#define rdma_dev_port_num  vq_dev_port_num
#define rdma_mr_reg        vq_mr_reg
#define rdma_mr_dereg      vq_mr_dereg
#define rdma_v             vq_v
#include "../../preload/rdma/verbs_qp.c"

#include <sys/eventfd.h>
#include <unistd.h>

#include "unit.h"

#define FAKE_WRS 64

/* A fake device: what it lets queue pairs ask for, and what they registered. */
static struct {
	uint32_t max_recv_sge;
	uint32_t max_inline;
	size_t reg_len;         /* the last registration */
	uint32_t next_qpn;
} dev = { .max_recv_sge = 32 };

struct fake_cq {
	struct ibv_cq cq;
	struct ibv_wc wc[2 * FAKE_WRS];
	unsigned head, n;
};

struct fake_qp {
	struct ibv_qp qp;
	struct fake_qp *peer;
	uint32_t max_recv_sge;
	struct ibv_recv_wr recv[FAKE_WRS];     /* posted receives, in order, and their SGEs */
	struct ibv_sge recv_sge[FAKE_WRS][32];
	unsigned recv_head, nrecv;
	struct ibv_send_wr send[FAKE_WRS];     /* posted sends the device has not run yet */
	struct ibv_sge send_sge[FAKE_WRS];
	uint8_t inline_data[FAKE_WRS][RDMA_MSG_MAX];
	unsigned send_head, nsend;
};

static struct ibv_context ctx;

static void cq_put(struct ibv_cq *c, const struct ibv_wc *wc)
{
	struct fake_cq *f = (struct fake_cq *)c;

	f->wc[(f->head + f->n++) % (2 * FAKE_WRS)] = *wc;
}

static int fake_poll_cq(struct ibv_cq *c, int num, struct ibv_wc *wc)
{
	struct fake_cq *f = (struct fake_cq *)c;
	int n = 0;

	while (n < num && f->n) {
		wc[n++] = f->wc[f->head];
		f->head = (f->head + 1) % (2 * FAKE_WRS);
		f->n--;
	}
	return n;
}

static int fake_req_notify_cq(struct ibv_cq *c, int solicited_only)
{
	(void)c;
	(void)solicited_only;
	return 0;
}

static int fake_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct fake_qp *f = (struct fake_qp *)qp;

	for (; wr; wr = wr->next) {
		unsigned i = (f->recv_head + f->nrecv) % FAKE_WRS;

		if (f->nrecv == FAKE_WRS || wr->num_sge > (int)f->max_recv_sge) {
			*bad = wr;
			return ENOMEM;
		}
		f->recv[i] = *wr;
		memcpy(f->recv_sge[i], wr->sg_list, sizeof(wr->sg_list[0]) * (size_t)wr->num_sge);
		f->recv[i].sg_list = f->recv_sge[i];
		f->nrecv++;
	}
	return 0;
}

static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct fake_qp *f = (struct fake_qp *)qp;

	for (; wr; wr = wr->next) {
		unsigned i = (f->send_head + f->nsend) % FAKE_WRS;

		if (f->nsend == FAKE_WRS || wr->num_sge > 1) {
			*bad = wr;
			return ENOMEM;
		}
		f->send[i] = *wr;
		f->send[i].next = NULL;
		if (wr->num_sge)
			f->send_sge[i] = wr->sg_list[0];
		f->send[i].sg_list = &f->send_sge[i];
		/* an inline send's bytes are taken at the post; others' when the device runs it */
		if ((wr->send_flags & IBV_SEND_INLINE) && wr->num_sge) {
			memcpy(f->inline_data[i], (void *)(uintptr_t)wr->sg_list[0].addr, wr->sg_list[0].length);
			f->send_sge[i].addr = (uintptr_t)f->inline_data[i];
		}
		f->nsend++;
	}
	return 0;
}

/* The device runs what qp posted: a SEND lands in the peer's next receive, scattered. */
static void device_run(struct fake_qp *f)
{
	for (; f->nsend; f->nsend--, f->send_head = (f->send_head + 1) % FAKE_WRS) {
		struct ibv_send_wr *w = &f->send[f->send_head];
		struct ibv_wc wc = { .wr_id = w->wr_id, .status = IBV_WC_SUCCESS, .opcode = IBV_WC_SEND };

		if (w->opcode == IBV_WR_SEND) {
			struct fake_qp *p = f->peer;
			struct ibv_recv_wr *r = &p->recv[p->recv_head];
			const uint8_t *src = (const uint8_t *)(uintptr_t)w->sg_list[0].addr;
			uint32_t left = w->sg_list[0].length;
			struct ibv_wc rwc = { .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV, .byte_len = left };

			CHECK(p->nrecv > 0);
			if (!p->nrecv)
				return;
			rwc.wr_id = r->wr_id;
			for (int s = 0; s < r->num_sge && left; s++) {
				uint32_t n = left < r->sg_list[s].length ? left : r->sg_list[s].length;

				memcpy((void *)(uintptr_t)r->sg_list[s].addr, src, n);
				src += n;
				left -= n;
			}
			CHECK_INT(left, 0);
			p->recv_head = (p->recv_head + 1) % FAKE_WRS;
			p->nrecv--;
			cq_put(p->qp.recv_cq, &rwc);
		} else {
			wc.opcode = IBV_WC_RDMA_WRITE;
		}
		if (w->send_flags & IBV_SEND_SIGNALED)
			cq_put(f->qp.send_cq, &wc);
	}
}

static struct ibv_comp_channel *fake_create_comp_channel(struct ibv_context *c)
{
	struct ibv_comp_channel *ch = calloc(1, sizeof(*ch));

	ch->context = c;
	ch->fd = eventfd(0, EFD_CLOEXEC);
	return ch;
}

static int fake_destroy_comp_channel(struct ibv_comp_channel *ch)
{
	close(ch->fd);
	free(ch);
	return 0;
}

static struct ibv_cq *fake_create_cq(struct ibv_context *c, int cqe, void *cq_context, struct ibv_comp_channel *ch,
				     int comp_vector)
{
	struct fake_cq *f = calloc(1, sizeof(*f));

	(void)cqe;
	(void)comp_vector;
	f->cq.context = c;
	f->cq.channel = ch;
	f->cq.cq_context = cq_context;
	return &f->cq;
}

static int fake_destroy_cq(struct ibv_cq *cq)
{
	free(cq);
	return 0;
}

static struct ibv_qp *fake_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *ia)
{
	struct fake_qp *f;

	(void)pd;
	if (ia->cap.max_recv_sge > dev.max_recv_sge || ia->cap.max_inline_data > dev.max_inline) {
		errno = EINVAL;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	f->qp.context = &ctx;
	f->qp.send_cq = ia->send_cq;
	f->qp.recv_cq = ia->recv_cq;
	f->qp.qp_num = ++dev.next_qpn;
	f->max_recv_sge = ia->cap.max_recv_sge;
	return &f->qp;
}

static int fake_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	(void)qp;
	(void)a;
	(void)mask;
	return 0;
}

static int fake_destroy_qp(struct ibv_qp *qp)
{
	free(qp);
	return 0;
}

struct rdma_verbs vq_v = {
	.create_comp_channel = fake_create_comp_channel,
	.destroy_comp_channel = fake_destroy_comp_channel,
	.create_cq = fake_create_cq,
	.destroy_cq = fake_destroy_cq,
	.create_qp = fake_create_qp,
	.modify_qp = fake_modify_qp,
	.destroy_qp = fake_destroy_qp,
	.syscall = syscall,
};

struct ibv_context *vq_dev_ctx(const struct rdma_dev *d)
{
	(void)d;
	ctx.ops.poll_cq = fake_poll_cq;
	ctx.ops.req_notify_cq = fake_req_notify_cq;
	ctx.ops.post_send = fake_post_send;
	ctx.ops.post_recv = fake_post_recv;
	return &ctx;
}

struct ibv_pd *vq_dev_pd(const struct rdma_dev *d)
{
	(void)d;
	return NULL;
}

static const struct rdma_port port = { .mtu = IBV_MTU_1024 };

const struct rdma_port *vq_dev_port(const struct rdma_dev *d)
{
	(void)d;
	return &port;
}

uint8_t vq_dev_port_num(const struct rdma_dev *d)
{
	(void)d;
	return 1;
}

int vq_mr_reg(struct rdma_dev *d, void *addr, size_t len, bool remote_write, struct rdma_mr *mr)
{
	(void)d;
	(void)remote_write;
	memset(mr, 0, sizeof(*mr));
	mr->addr = addr;
	mr->len = len;
	mr->lkey = 7;
	dev.reg_len = len;
	return 0;
}

void vq_mr_dereg(struct rdma_mr *mr)
{
	memset(mr, 0, sizeof(*mr));
}

/* A link's sizes, as preload/smcr/lgr.c asks for them. */
static const struct rdma_qp_size link_size = { .send_wr = 64, .recv_slots = 64, .msg_size = 4152, .slot_size = 128 };

static void pair(const struct rdma_qp_size *size, struct rdma_qp **a, struct rdma_qp **b)
{
	CHECK_INT(vq_qp_create(NULL, size, a), 0);
	CHECK_INT(vq_qp_create(NULL, size, b), 0);
	((struct fake_qp *)(*a)->qp)->peer = (struct fake_qp *)(*b)->qp;
	((struct fake_qp *)(*b)->qp)->peer = (struct fake_qp *)(*a)->qp;
}

/* The device carries what a posted (it runs a's sends). */
static void run(struct rdma_qp *a)
{
	device_run((struct fake_qp *)a->qp);
}

static void unpair(struct rdma_qp *a, struct rdma_qp *b)
{
	vq_qp_destroy(a);
	vq_qp_destroy(b);
}

static void fill(uint8_t *m, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		m[i] = (uint8_t)(seed * 31 + i * 7);
}

/* The next message a takes: it is len bytes of fill(seed). */
static void expect_msg(struct rdma_qp *q, size_t len, unsigned seed)
{
	static struct rdma_event ev;
	static uint8_t want[RDMA_MSG_MAX];
	int n;

	do
		n = vq_qp_poll(q, &ev, 1);
	while (n == 1 && ev.kind != RDMA_EV_MSG);
	CHECK_INT(n, 1);
	CHECK_INT(ev.kind, RDMA_EV_MSG);
	CHECK_INT(ev.len, len);
	fill(want, len, seed);
	CHECK(!memcmp(ev.msg, want, len));
}

static void sends_done(struct rdma_qp *q)
{
	static struct rdma_event ev[8];

	while (vq_qp_poll(q, ev, 8) > 0)
		;
}

TEST(verbs_qp_a_link_registers_small_slots_and_a_few_long_buffers)
{
	struct rdma_qp *a, *b;

	dev.max_recv_sge = 32;
	dev.max_inline = 0;
	CHECK_INT(vq_qp_create(NULL, &link_size, &a), 0);
	/* 128 slots of 128 bytes, four spills of the rest of 4152, two long send buffers */
	CHECK_INT(dev.reg_len, 128 * 128 + 4 * (4152 - 128) + 2 * 4152);
	CHECK_INT(dev.reg_len, rdma_qp_reg_bytes(&link_size));
	CHECK(dev.reg_len < 48 * 1024);
	vq_qp_destroy(a);
	/* a device that cannot scatter a receive: full slots, as before */
	dev.max_recv_sge = 1;
	pair(&link_size, &a, &b);
	CHECK_INT(dev.reg_len, 128 * 4152);
	{
		static uint8_t m[4152];

		fill(m, 4152, 1);
		CHECK_INT(vq_post_ctl(a, m, 4152, 0), 0);
		fill(m, 100, 2);
		CHECK_INT(vq_post_msg(a, m, 100, 0), 0);
		run(a);
		expect_msg(b, 4152, 1);
		expect_msg(b, 100, 2);
	}
	unpair(a, b);
	dev.max_recv_sge = 32;
}

TEST(verbs_qp_long_messages_arrive_whole_short_ones_in_their_slots)
{
	static uint8_t m[4152];
	struct rdma_qp *a, *b;
	const size_t lens[] = { 44, 128, 129, 136, 4152, 60, 2000 };

	for (int inl = 0; inl < 2; inl++) {
		dev.max_inline = inl ? 4152 : 0;
		pair(&link_size, &a, &b);
		for (unsigned round = 0; round < 40; round++) {
			for (unsigned i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
				fill(m, lens[i], round * 10 + i);
				/* a long send waits for one of the two long buffers */
				if (vq_post_msg(a, m, lens[i], 0) == -ENOBUFS) {
					run(a);
					sends_done(a);
					CHECK_INT(vq_post_msg(a, m, lens[i], 0), 0);
				}
				/* the peer's taking falls behind by a message */
				if (i)
					expect_msg(b, lens[i - 1], round * 10 + i - 1);
				run(a);
			}
			expect_msg(b, lens[6], round * 10 + 6);
			sends_done(a);
		}
		unpair(a, b);
	}
	dev.max_inline = 0;
}

TEST(verbs_qp_four_long_messages_taken_late_arrive_whole)
{
	static uint8_t m[4152];
	struct rdma_qp *a, *b;

	dev.max_inline = 4152;
	pair(&link_size, &a, &b);
	for (unsigned i = 0; i < RDMA_QP_SPILLS; i++) {
		fill(m, 200 + i, i);
		CHECK_INT(vq_post_msg(a, m, 200 + i, 0), 0);
		run(a);
		sends_done(a);
	}
	for (unsigned i = 0; i < RDMA_QP_SPILLS; i++)
		expect_msg(b, 200 + i, i);
	unpair(a, b);
	dev.max_inline = 0;
}

TEST(verbs_qp_a_long_send_keeps_its_buffer_until_it_completed)
{
	static uint8_t m[4152];
	struct rdma_qp *a, *b;

	/* no inline sends: the device reads the buffer when it runs the post */
	dev.max_inline = 0;
	pair(&link_size, &a, &b);
	fill(m, 3000, 1);
	CHECK_INT(vq_post_ctl(a, m, 3000, 0), 0);
	fill(m, 3001, 2);
	CHECK_INT(vq_post_ctl(a, m, 3001, 0), 0);
	fill(m, 3002, 3);
	CHECK_INT(vq_post_ctl(a, m, 3002, 0), -ENOBUFS);
	/* short ones still go */
	fill(m, 128, 4);
	CHECK_INT(vq_post_msg(a, m, 128, 0), 0);
	run(a);
	expect_msg(b, 3000, 1);
	expect_msg(b, 3001, 2);
	expect_msg(b, 128, 4);
	/* free once their completions were taken */
	CHECK_INT(vq_post_ctl(a, m, 3002, 0), -ENOBUFS);
	sends_done(a);
	fill(m, 3002, 3);
	CHECK_INT(vq_post_ctl(a, m, 3002, 0), 0);
	run(a);
	expect_msg(b, 3002, 3);
	unpair(a, b);
}
