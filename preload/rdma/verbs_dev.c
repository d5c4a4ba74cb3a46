/* A device port opened for soft SMC-R links: its context, protection domain and RoCE v2 GID. */
#include "rdma.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct rdma_dev {
	_Atomic int holds;              /* its opener's, and one per queue pair retired on it */
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	uint8_t port_num;
	struct rdma_port port;
};

/* The index of gid among the port's RoCE v2 GIDs, as the kernel's smc_ib_determine_gid() picks one. */
static int find_gid(struct ibv_context *ctx, uint8_t port, uint32_t tbl_len, const uint8_t gid[16],
		    struct rdma_port *out)
{
	for (uint32_t i = 0; i < tbl_len; i++) {
		struct ibv_gid_entry e;

		if (rdma_v.query_gid_ex(ctx, port, i, &e, 0, sizeof(e)))
			continue;
		if (e.gid_type != IBV_GID_TYPE_ROCE_V2 || memcmp(e.gid.raw, gid, 16))
			continue;
		memcpy(out->gid, gid, 16);
		out->gid_index = i;
		out->ifindex = e.ndev_ifindex;
		return 0;
	}
	return -EADDRNOTAVAIL;
}

static int open_port(struct rdma_dev *d, uint8_t port, const uint8_t gid[16])
{
	struct ibv_port_attr pa;
	struct ibv_device_attr da;
	int rc;

	memset(&pa, 0, sizeof(pa));
	rc = rdma_v.query_port(d->ctx, port, &pa);
	if (rc)
		return rc > 0 ? -rc : -EINVAL;
	if (pa.state != IBV_PORT_ACTIVE)
		return -ENETDOWN;
	if (pa.link_layer != IBV_LINK_LAYER_ETHERNET)
		return -EPROTONOSUPPORT;
	d->port_num = port;
	d->port.mtu = (uint8_t)pa.active_mtu;
	memset(&da, 0, sizeof(da));
	/* rxe's vendor id (RXE_VENDOR_ID) */
	d->port.soft = !rdma_v.query_device(d->ctx, &da) && da.vendor_id == 0xffffff;
	return find_gid(d->ctx, port, (uint32_t)pa.gid_tbl_len, gid, &d->port);
}

static struct ibv_context *open_by_name(const char *name)
{
	struct ibv_context *ctx = NULL;
	struct ibv_device **list;
	int n = 0;

	list = rdma_v.get_device_list(&n);
	if (!list)
		return NULL;
	for (int i = 0; i < n && !ctx; i++)
		if (!strcmp(rdma_v.get_device_name(list[i]), name))
			ctx = rdma_v.open_device(list[i]);
	rdma_v.free_device_list(list);
	return ctx;
}

int rdma_dev_open(const char *name, uint8_t port, const uint8_t gid[16], struct rdma_dev **out)
{
	struct rdma_dev *d;
	int rc = rdma_lib_load();

	if (rc)
		return rc;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->ctx = open_by_name(name);
	if (!d->ctx) {
		free(d);
		return -ENODEV;
	}
	rc = open_port(d, port, gid);
	if (!rc) {
		d->pd = rdma_v.alloc_pd(d->ctx);
		if (!d->pd)
			rc = -ENOMEM;
	}
	if (rc) {
		rdma_v.close_device(d->ctx);
		free(d);
		return rc;
	}
	rdma_fd_keep(d->ctx->cmd_fd);
	rdma_fd_keep(d->ctx->async_fd);
	atomic_init(&d->holds, 1);
	*out = d;
	return 0;
}

void rdma_dev_hold(struct rdma_dev *d)
{
	atomic_fetch_add(&d->holds, 1);
}

void rdma_dev_close(struct rdma_dev *d)
{
	if (!d || atomic_fetch_sub(&d->holds, 1) > 1)
		return;
	rdma_v.dealloc_pd(d->pd);
	rdma_fd_drop(d->ctx->cmd_fd);
	rdma_fd_drop(d->ctx->async_fd);
	rdma_v.close_device(d->ctx);
	free(d);
}

const struct rdma_port *rdma_dev_port(const struct rdma_dev *d)
{
	return &d->port;
}

int rdma_dev_port_active(struct rdma_dev *d)
{
	struct ibv_port_attr pa;
	int rc;

	memset(&pa, 0, sizeof(pa));
	rc = rdma_v.query_port(d->ctx, d->port_num, &pa);
	if (rc)
		return rc > 0 ? -rc : -EIO;
	return pa.state == IBV_PORT_ACTIVE;
}

int rdma_dev_event_fd(const struct rdma_dev *d)
{
	return d->ctx->async_fd;
}

enum rdma_dev_event rdma_dev_event(struct rdma_dev *d)
{
	struct ibv_async_event ev;
	enum rdma_dev_event what = RDMA_DEV_NONE;

	if (rdma_v.get_async_event(d->ctx, &ev))
		return RDMA_DEV_NONE;
	switch (ev.event_type) {
	case IBV_EVENT_PORT_ERR:
		if (ev.element.port_num == d->port_num)
			what = RDMA_DEV_PORT_DOWN;
		break;
	case IBV_EVENT_PORT_ACTIVE:
		if (ev.element.port_num == d->port_num)
			what = RDMA_DEV_PORT_UP;
		break;
	case IBV_EVENT_DEVICE_FATAL:
		what = RDMA_DEV_FATAL;
		break;
	default:
		break;
	}
	rdma_v.ack_async_event(&ev);
	return what;
}

/* For verbs_qp.c. */
struct ibv_context *rdma_dev_ctx(const struct rdma_dev *d)
{
	return d->ctx;
}

struct ibv_pd *rdma_dev_pd(const struct rdma_dev *d)
{
	return d->pd;
}

uint8_t rdma_dev_port_num(const struct rdma_dev *d)
{
	return d->port_num;
}

int rdma_mr_reg(struct rdma_dev *d, void *addr, size_t len, bool remote_write, struct rdma_mr *mr)
{
	int access = IBV_ACCESS_LOCAL_WRITE | (remote_write ? IBV_ACCESS_REMOTE_WRITE : 0);
	struct ibv_mr *m = rdma_v.reg_mr(d->pd, addr, len, access);

	if (!m)
		return errno ? -errno : -ENOMEM;
	mr->addr = addr;
	mr->len = len;
	mr->lkey = m->lkey;
	mr->rkey = m->rkey;
	mr->handle = m;
	return 0;
}

void rdma_mr_dereg(struct rdma_mr *mr)
{
	if (mr->handle)
		rdma_v.dereg_mr(mr->handle);
	mr->handle = NULL;
}
