/*
 * A fake of preload/rdma/ (rdma.h) for the link-group tests
 * (test_smcr_lgr.c): devices, queue pairs and memory registrations in this
 * process.  A write lands in the peer's registration at once (checked
 * against its bounds and rkey), a message is queued to the peer's queue
 * pair, and each completion or message raises the eventfd that stands for
 * the completion channel.  A device taken down (fake_rdma_port_down())
 * raises a port event and puts its queue pairs in error: their posts, and
 * their peers' posts to them, complete with an error, as RC does once its
 * retries ran out; a device deleted (fake_rdma_delete()) raises a fatal
 * event instead and cannot be opened until it is added again.  Queue pairs
 * are numbered from 17, once for all devices (tests reuse each other's
 * GIDs, and connect by GID and number: a per-device count, as rxe's,
 * reached an earlier test's leftover queue pair).  Posts
 * from another process than the device's opener (a vfork() child) fail
 * with EACCES, as the kernel's uverbs write refuses other credentials.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "rdma.h"
#include "fake_rdma.h"

#define EVQ 512
#define MAX_OBJS 256

struct rdma_dev {
	int holds;
	char name[16];
	struct rdma_port port;
	int evfd;
	bool down;
	bool gone;                      /* deleted: posts fail with EIO, as on a disassociated context */
	enum rdma_dev_event due;        /* the event its descriptor announced */
	pid_t opener;
};

struct rdma_qp {
	struct rdma_dev *d;
	struct rdma_qp *peer;
	uint32_t qpn;
	struct rdma_qp_size size;
	size_t slot_bytes;      /* its message slots, registered as verbs_qp.c does */
	int fd;
	int watch;              /* an epoll set of fd, unless lent */
	bool lent;
	bool error;
	bool parked;            /* takes posts, carries and completes none, as a queue pair rxe parked */
	uint64_t seq, done;
	struct rdma_event ev[EVQ];
	int head, n;
};

struct mr_rec {
	struct rdma_dev *d;
	uint8_t *addr;
	size_t len;
	uint32_t rkey;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
/*
 * Queue pair numbers, one count for every device: tests reuse GIDs (a
 * group of an earlier test may still hold a queue pair with one), and a
 * GID with its queue pair number must name one queue pair to connect to.
 */
static uint32_t next_qpn = 17;
static struct rdma_dev *devs[MAX_OBJS];
static struct rdma_qp *qps[MAX_OBJS];
static struct mr_rec mrs[32 * MAX_OBJS];   /* a full link group: 255 connections, two buffers each */
static uint32_t next_key = 0x100;
long fake_rdma_writes, fake_rdma_msgs, fake_rdma_lends, fake_rdma_unlends, fake_rdma_stops;
_Atomic bool fake_rdma_destroy_held;

int rdma_lib_load(void)
{
	return 0;
}

const char *rdma_lib_error(void)
{
	return "fake";
}

static void add_obj(void **tab, void *o)
{
	for (int i = 0; i < MAX_OBJS; i++)
		if (!tab[i]) {
			tab[i] = o;
			return;
		}
	abort();
}

static void del_obj(void **tab, void *o)
{
	for (int i = 0; i < MAX_OBJS; i++)
		if (tab[i] == o)
			tab[i] = NULL;
}

/* Devices deleted (fake_rdma_delete()), not to be opened until added again. */
static char deleted[4][16];

static bool is_deleted(const char *name)
{
	for (int i = 0; i < 4; i++)
		if (!strcmp(deleted[i], name))
			return true;
	return false;
}

/* Devices whose port has an MTU other than 1024 (IB enum 3), and theirs. */
static struct {
	char name[16];
	uint8_t mtu;
} mtus[8];

void fake_rdma_mtu(const char *name, uint8_t mtu)
{
	for (size_t i = 0; i < sizeof(mtus) / sizeof(mtus[0]); i++)
		if (!mtus[i].name[0]) {
			snprintf(mtus[i].name, sizeof(mtus[i].name), "%s", name);
			mtus[i].mtu = mtu;
			return;
		}
}

static uint8_t mtu_of(const char *name)
{
	for (size_t i = 0; i < sizeof(mtus) / sizeof(mtus[0]); i++)
		if (mtus[i].name[0] && !strcmp(mtus[i].name, name))
			return mtus[i].mtu;
	return 3;
}

int rdma_dev_open(const char *name, uint8_t port, const uint8_t gid[16], struct rdma_dev **out)
{
	struct rdma_dev *d;

	(void)port;
	pthread_mutex_lock(&mu);
	if (is_deleted(name)) {
		pthread_mutex_unlock(&mu);
		return -ENODEV;
	}
	pthread_mutex_unlock(&mu);
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	snprintf(d->name, sizeof(d->name), "%s", name);
	memcpy(d->port.gid, gid, 16);
	d->port.mtu = mtu_of(name);
	d->port.soft = !strncmp(name, "soft", 4);
	d->opener = getpid();
	d->holds = 1;
	d->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_mutex_lock(&mu);
	add_obj((void **)devs, d);
	pthread_mutex_unlock(&mu);
	*out = d;
	return 0;
}

void rdma_dev_hold(struct rdma_dev *d)
{
	pthread_mutex_lock(&mu);
	d->holds++;
	pthread_mutex_unlock(&mu);
}

void rdma_dev_close(struct rdma_dev *d)
{
	pthread_mutex_lock(&mu);
	if (--d->holds > 0) {
		pthread_mutex_unlock(&mu);
		return;
	}
	del_obj((void **)devs, d);
	pthread_mutex_unlock(&mu);
	close(d->evfd);
	free(d);
}

const struct rdma_port *rdma_dev_port(const struct rdma_dev *d)
{
	return &d->port;
}

int rdma_dev_port_active(struct rdma_dev *d)
{
	int rc;

	pthread_mutex_lock(&mu);
	rc = d->gone ? -ENODEV : !d->down;
	pthread_mutex_unlock(&mu);
	return rc;
}

int rdma_dev_event_fd(const struct rdma_dev *d)
{
	return d->evfd;
}

enum rdma_dev_event rdma_dev_event(struct rdma_dev *d)
{
	eventfd_t v;
	enum rdma_dev_event due;

	if (eventfd_read(d->evfd, &v) < 0)
		return RDMA_DEV_NONE;
	pthread_mutex_lock(&mu);
	due = d->due;
	d->due = RDMA_DEV_NONE;
	pthread_mutex_unlock(&mu);
	return due;
}

/* mu */
static struct fail_on {
	char name[64];
	int err;
} mr_fail, qp_fail;

static void fail_set(struct fail_on *f, const char *name, int err)
{
	pthread_mutex_lock(&mu);
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->err = err;
	pthread_mutex_unlock(&mu);
}

void fake_rdma_fail_mr(const char *name, int err)
{
	fail_set(&mr_fail, name, err);
}

void fake_rdma_fail_qp(const char *name, int err)
{
	fail_set(&qp_fail, name, err);
}

static int fails(const struct fail_on *f, const struct rdma_dev *d)
{
	return f->err && !strcmp(f->name, d->name) ? f->err : 0;
}

/* mu: what registrations on a device so named may hold, 0 no limit */
static struct {
	char name[64];
	size_t bytes;
} mr_budget;

void fake_rdma_mr_budget(const char *name, size_t bytes)
{
	pthread_mutex_lock(&mu);
	snprintf(mr_budget.name, sizeof(mr_budget.name), "%s", name);
	mr_budget.bytes = bytes;
	pthread_mutex_unlock(&mu);
}

/* mu held: registrations and queue pairs' message slots */
static size_t mr_bytes_locked(const char *name)
{
	size_t sum = 0;

	for (size_t i = 0; i < sizeof(mrs) / sizeof(mrs[0]); i++)
		if (mrs[i].addr && !strcmp(mrs[i].d->name, name))
			sum += mrs[i].len;
	for (int i = 0; i < MAX_OBJS; i++)
		if (qps[i] && !strcmp(qps[i]->d->name, name))
			sum += qps[i]->slot_bytes;
	return sum;
}

_Atomic bool fake_rdma_room_hidden;

size_t rdma_mr_room(const char *dev)
{
	size_t room = SIZE_MAX;

	pthread_mutex_lock(&mu);
	if (mr_budget.bytes && !strcmp(mr_budget.name, dev) && !fake_rdma_room_hidden) {
		size_t used = mr_bytes_locked(dev);

		room = used < mr_budget.bytes ? mr_budget.bytes - used : 0;
	}
	pthread_mutex_unlock(&mu);
	return room;
}

size_t fake_rdma_mr_bytes(const char *name)
{
	size_t sum;

	pthread_mutex_lock(&mu);
	sum = mr_bytes_locked(name);
	pthread_mutex_unlock(&mu);
	return sum;
}

int rdma_mr_reg(struct rdma_dev *d, void *addr, size_t len, bool remote_write, struct rdma_mr *mr)
{
	int err;

	pthread_mutex_lock(&mu);
	if ((err = fails(&mr_fail, d))) {
		pthread_mutex_unlock(&mu);
		return err;
	}
	if (mr_budget.bytes && !strcmp(mr_budget.name, d->name) &&
	    mr_bytes_locked(d->name) + len > mr_budget.bytes) {
		pthread_mutex_unlock(&mu);
		return -ENOMEM;         /* as RLIMIT_MEMLOCK says */
	}
	for (size_t i = 0; i < sizeof(mrs) / sizeof(mrs[0]); i++) {
		if (mrs[i].addr)
			continue;
		mrs[i] = (struct mr_rec){ d, addr, len, remote_write ? next_key : 0 };
		*mr = (struct rdma_mr){ .addr = addr, .len = len, .lkey = next_key, .rkey = next_key,
					.handle = &mrs[i] };
		next_key += 0x11;
		pthread_mutex_unlock(&mu);
		return 0;
	}
	pthread_mutex_unlock(&mu);
	return -ENOMEM;
}

void rdma_mr_dereg(struct rdma_mr *mr)
{
	pthread_mutex_lock(&mu);
	if (mr->handle)
		memset(mr->handle, 0, sizeof(struct mr_rec));
	pthread_mutex_unlock(&mu);
	mr->handle = NULL;
}

int rdma_qp_create(struct rdma_dev *d, const struct rdma_qp_size *size, struct rdma_qp **out)
{
	struct rdma_qp *q;
	size_t slot_bytes = rdma_qp_reg_bytes(size);
	int err;

	pthread_mutex_lock(&mu);
	err = fails(&qp_fail, d);
	if (!err && mr_budget.bytes && !strcmp(mr_budget.name, d->name) &&
	    mr_bytes_locked(d->name) + slot_bytes > mr_budget.bytes)
		err = -ENOMEM;          /* its slots' registration, as RLIMIT_MEMLOCK says */
	pthread_mutex_unlock(&mu);
	if (err)
		return err;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->d = d;
	q->size = *size;
	q->slot_bytes = slot_bytes;
	q->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	q->watch = epoll_create1(EPOLL_CLOEXEC);
	epoll_ctl(q->watch, EPOLL_CTL_ADD, q->fd, &(struct epoll_event){ .events = EPOLLIN });
	pthread_mutex_lock(&mu);
	q->qpn = next_qpn++;
	add_obj((void **)qps, q);
	pthread_mutex_unlock(&mu);
	*out = q;
	return 0;
}

void rdma_qp_destroy(struct rdma_qp *q)
{
	/* 60 s at most: a caller that waits for it is late, not stuck; a slow (TCG) guest's test takes seconds */
	for (int i = 0; i < 60000 && atomic_load(&fake_rdma_destroy_held); i++)
		usleep(1000);
	pthread_mutex_lock(&mu);
	del_obj((void **)qps, q);
	for (int i = 0; i < MAX_OBJS; i++)
		if (qps[i] && qps[i]->peer == q)
			qps[i]->peer = NULL;
	pthread_mutex_unlock(&mu);
	close(q->watch);
	close(q->fd);
	free(q);
}

int fake_rdma_qps_live(void)
{
	int n = 0;

	pthread_mutex_lock(&mu);
	for (int i = 0; i < MAX_OBJS; i++)
		n += qps[i] != NULL;
	pthread_mutex_unlock(&mu);
	return n;
}

int fake_rdma_dev_qps_live(const char *name)
{
	int n = 0;

	pthread_mutex_lock(&mu);
	for (int i = 0; i < MAX_OBJS; i++)
		n += qps[i] && !strcmp(qps[i]->d->name, name);
	pthread_mutex_unlock(&mu);
	return n;
}

struct rdma_dev *rdma_qp_dev(const struct rdma_qp *q)
{
	return q->d;
}

void rdma_qp_stop(struct rdma_qp *q)
{
	pthread_mutex_lock(&mu);
	q->error = true;
	fake_rdma_stops++;
	pthread_mutex_unlock(&mu);
}

void rdma_qp_local(const struct rdma_qp *q, struct rdma_qp_addr *a)
{
	*a = (struct rdma_qp_addr){ .qpn = q->qpn, .psn = q->qpn * 7, .mtu = q->d->port.mtu };
	memcpy(a->gid, q->d->port.gid, 16);
}

int rdma_qp_connect(struct rdma_qp *q, const struct rdma_qp_addr *peer)
{
	uint8_t mtu = peer->mtu < q->d->port.mtu ? peer->mtu : q->d->port.mtu;
	int rc = -EHOSTUNREACH;

	pthread_mutex_lock(&mu);
	for (int i = 0; i < MAX_OBJS; i++)
		if (qps[i] && qps[i]->qpn == peer->qpn && !memcmp(qps[i]->d->port.gid, peer->gid, 16)) {
			q->peer = qps[i];
			rc = 0;
		}
	pthread_mutex_unlock(&mu);
	/* as verbs_qp.c: a soft device's limit at the path MTU */
	if (!rc && q->size.max_inflight > rdma_soft_inflight(mtu))
		q->size.max_inflight = rdma_soft_inflight(mtu);
	return rc;
}

uint32_t rdma_qp_inflight(const struct rdma_qp *q)
{
	return q->size.max_inflight;
}

int rdma_qp_fd(const struct rdma_qp *q)
{
	return q->watch;
}

int rdma_qp_chan_fd(const struct rdma_qp *q)
{
	return q->fd;
}

int rdma_qp_lend(struct rdma_qp *q, bool lend)
{
	if (q->lent == lend)
		return 0;
	if (epoll_ctl(q->watch, lend ? EPOLL_CTL_DEL : EPOLL_CTL_ADD, q->fd,
		      &(struct epoll_event){ .events = EPOLLIN }))
		return -errno;
	q->lent = lend;
	fake_rdma_lends += lend;
	fake_rdma_unlends += !lend;
	return 0;
}

/* With mu held. */
static void push(struct rdma_qp *q, const struct rdma_event *ev)
{
	if (q->n == EVQ)
		abort();        /* the layer must take its completions */
	q->ev[(q->head + q->n) % EVQ] = *ev;
	q->n++;
	eventfd_write(q->fd, 1);
}

static bool foreign(const struct rdma_qp *q)
{
	return getpid() != q->d->opener;
}

static bool broken(const struct rdma_qp *q)
{
	return q->error || q->d->down || !q->peer || q->peer->error || q->peer->d->down;
}

/* A post completes at once: with an error when either end is broken. */
static int complete(struct rdma_qp *q, uint64_t wr_id, enum rdma_ev_kind kind, bool report)
{
	if (q->seq - q->done >= q->size.send_wr)
		return -ENOBUFS;
	q->seq++;
	if (q->parked)
		return 0;
	q->done++;
	if (broken(q)) {
		q->error = true;
		push(q, &(struct rdma_event){ .kind = RDMA_EV_ERROR, .wr_id = wr_id, .status = 12 });
	} else if (report) {
		push(q, &(struct rdma_event){ .kind = kind, .wr_id = wr_id });
	}
	return 0;
}

int rdma_post_write(struct rdma_qp *q, const struct rdma_mr *src, size_t off, size_t len, uint64_t raddr,
		    uint32_t rkey, uint64_t wr_id, bool signaled)
{
	int rc;

	if (off > src->len || len > src->len - off)
		return -EINVAL;
	if (foreign(q))
		return -EACCES;
	pthread_mutex_lock(&mu);
	if (q->d->gone) {
		pthread_mutex_unlock(&mu);
		return -EIO;
	}
	if (!broken(q) && !q->parked) {
		struct mr_rec *m = NULL;

		for (size_t i = 0; i < sizeof(mrs) / sizeof(mrs[0]) && !m; i++)
			if (mrs[i].addr && mrs[i].rkey == rkey && mrs[i].d == q->peer->d)
				m = &mrs[i];
		/* a remote access error breaks the queue pair, as RC does */
		if (!m || raddr < (uintptr_t)m->addr || raddr + len > (uintptr_t)m->addr + m->len)
			q->error = true;
		else
			memcpy((void *)(uintptr_t)raddr, (uint8_t *)src->addr + off, len);
		fake_rdma_writes++;
	}
	rc = complete(q, wr_id, RDMA_EV_WRITTEN, signaled);
	pthread_mutex_unlock(&mu);
	return rc;
}

/* Devices whose host writes Linux's host-order LLC fields in the other byte order. */
static char other_order[4][16];

void fake_rdma_other_byte_order(const char *name)
{
	for (size_t i = 0; i < sizeof(other_order) / sizeof(other_order[0]); i++)
		if (!other_order[i][0]) {
			snprintf(other_order[i], sizeof(other_order[i]), "%s", name);
			return;
		}
}

static bool of_other_order(const struct rdma_dev *d)
{
	for (size_t i = 0; i < sizeof(other_order) / sizeof(other_order[0]); i++)
		if (other_order[i][0] && !strcmp(other_order[i], d->name))
			return true;
	return false;
}

/*
 * Between a device of the other byte order and one of ours: the host-order
 * fields of an LLC v2 message (its length, ADD LINK's rkey count; see
 * wire/smcr_llc.h) as the other host writes, or would read, them.
 */
static void swap_host_order(uint8_t *m, size_t len)
{
	uint8_t t;

	if (len < 44 || m[0] >> 4 != 2)
		return;
	t = m[1], m[1] = m[2], m[2] = t;
	if ((m[0] & 0x0f) == 2 && len >= 72)
		t = m[70], m[70] = m[71], m[71] = t;
}

static int post_msg(struct rdma_qp *q, const void *msg, size_t len, uint64_t wr_id)
{
	int rc;

	if (len > (q->size.msg_size ? q->size.msg_size : RDMA_MSG_SIZE))
		return -EMSGSIZE;
	if (foreign(q))
		return -EACCES;
	pthread_mutex_lock(&mu);
	if (!broken(q) && !q->parked) {
		struct rdma_event in = { .kind = RDMA_EV_MSG, .len = (uint32_t)len };

		memcpy(in.msg, msg, len);
		if (of_other_order(q->d) != of_other_order(q->peer->d))
			swap_host_order(in.msg, len);
		push(q->peer, &in);
		fake_rdma_msgs++;
	}
	rc = complete(q, wr_id, RDMA_EV_SENT, true);
	pthread_mutex_unlock(&mu);
	return rc;
}

int rdma_post_msg(struct rdma_qp *q, const void *msg, size_t len, uint64_t wr_id)
{
	bool gone;

	pthread_mutex_lock(&mu);
	gone = q->d->gone;
	pthread_mutex_unlock(&mu);
	return gone ? -EIO : post_msg(q, msg, len, wr_id);
}

int rdma_post_ctl(struct rdma_qp *q, const void *msg, size_t len, uint64_t wr_id)
{
	return post_msg(q, msg, len, wr_id);
}

int rdma_post_probe(struct rdma_qp *q)
{
	int rc = -EIO;

	if (foreign(q))
		return -EACCES;
	pthread_mutex_lock(&mu);
	if (!q->d->gone)
		rc = complete(q, 0, RDMA_EV_WRITTEN, false);
	pthread_mutex_unlock(&mu);
	return rc;
}

/* Posts complete at once here: nothing is held. */
void rdma_qp_hold(struct rdma_qp *q)
{
	(void)q;
}

int rdma_qp_flush(struct rdma_qp *q)
{
	return foreign(q) ? -EACCES : 0;
}

void rdma_qp_counts(const struct rdma_qp *q, uint64_t *posted, uint64_t *completed)
{
	pthread_mutex_lock(&mu);
	*posted = q->seq;
	*completed = q->done;
	pthread_mutex_unlock(&mu);
}

int rdma_qp_poll(struct rdma_qp *q, struct rdma_event *ev, int max)
{
	int n = 0;

	pthread_mutex_lock(&mu);
	while (n < max && q->n) {
		ev[n++] = q->ev[q->head];
		q->head = (q->head + 1) % EVQ;
		q->n--;
	}
	pthread_mutex_unlock(&mu);
	return n;
}

int rdma_qp_arm(struct rdma_qp *q, bool sent)
{
	(void)sent;   /* every completion wakes here */
	int n;

	pthread_mutex_lock(&mu);
	n = q->n;
	pthread_mutex_unlock(&mu);
	return n > 0;
}

int rdma_qp_woken(struct rdma_qp *q)
{
	eventfd_t v;

	eventfd_read(q->fd, &v);
	return 0;
}

int rdma_qp_describe(const struct rdma_qp *q, char *buf, size_t size)
{
	return snprintf(buf, size, "qpn %u, %llu posted, %llu completed", q->qpn, (unsigned long long)q->seq,
			(unsigned long long)q->done);
}

void fake_rdma_gid(uint8_t gid[16], uint8_t net, uint8_t host)
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	gid[12] = 10;
	gid[13] = net;
	gid[15] = host;
}

static void take_down(const char *name, enum rdma_dev_event why)
{
	pthread_mutex_lock(&mu);
	for (int i = 0; i < MAX_OBJS; i++)
		if (devs[i] && !strcmp(devs[i]->name, name)) {
			devs[i]->down = true;
			devs[i]->due = why;
			eventfd_write(devs[i]->evfd, 1);
		}
	/* the queue pairs talking to it give up, as RC does once its retries ran out */
	for (int i = 0; i < MAX_OBJS; i++)
		if (qps[i] && qps[i]->peer && qps[i]->peer->d->down && !qps[i]->error) {
			qps[i]->error = true;
			push(qps[i], &(struct rdma_event){ .kind = RDMA_EV_ERROR, .status = 12 });
		}
	pthread_mutex_unlock(&mu);
}

void fake_rdma_port_down(const char *name)
{
	take_down(name, RDMA_DEV_PORT_DOWN);
}

void fake_rdma_delete(const char *name)
{
	pthread_mutex_lock(&mu);
	for (int i = 0; i < 4; i++)
		if (!deleted[i][0]) {
			snprintf(deleted[i], sizeof(deleted[i]), "%s", name);
			break;
		}
	for (int i = 0; i < MAX_OBJS; i++)
		if (devs[i] && !strcmp(devs[i]->name, name))
			devs[i]->gone = true;
	pthread_mutex_unlock(&mu);
	take_down(name, RDMA_DEV_FATAL);
}

void fake_rdma_add(const char *name)
{
	pthread_mutex_lock(&mu);
	for (int i = 0; i < 4; i++)
		if (!strcmp(deleted[i], name))
			deleted[i][0] = 0;
	pthread_mutex_unlock(&mu);
}

void fake_rdma_park(const char *name)
{
	pthread_mutex_lock(&mu);
	for (int i = 0; i < MAX_OBJS; i++)
		if (qps[i] && !strcmp(qps[i]->d->name, name))
			qps[i]->parked = true;
	pthread_mutex_unlock(&mu);
}

void fake_rdma_port_up(const char *name)
{
	pthread_mutex_lock(&mu);
	for (int i = 0; i < MAX_OBJS; i++)
		if (devs[i] && !strcmp(devs[i]->name, name)) {
			devs[i]->down = false;
			devs[i]->due = RDMA_DEV_PORT_UP;
			eventfd_write(devs[i]->evfd, 1);
		}
	pthread_mutex_unlock(&mu);
}
