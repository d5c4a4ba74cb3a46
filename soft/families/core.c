/*
 * Dispatch of request datagrams to the families, with the checks the kernel's
 * netlink and genetlink cores make before a handler runs.
 */
#include "devices.h"
#include "families.h"
#include "service.h"
#include "state.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <libmnl/libmnl.h>
#include <linux/sock_diag.h>

#include "smc_uapi.h"

static const struct soft_family *const families[] = {
	&soft_pnet_family, &soft_gen_family, &soft_reg_family,
};

#define N_FAMILIES (sizeof(families) / sizeof(families[0]))

static const struct soft_family *family_by_id(uint16_t id)
{
	for (size_t i = 0; i < N_FAMILIES; i++)
		if (families[i]->id == id)
			return families[i];
	return NULL;
}

static const struct soft_family *family_by_name(const char *name)
{
	for (size_t i = 0; i < N_FAMILIES; i++)
		if (!strcmp(families[i]->name, name))
			return families[i];
	return NULL;
}

static const struct soft_op *find_op(const struct soft_family *f, uint8_t cmd)
{
	for (size_t i = 0; i < f->n_ops; i++)
		if (f->ops[i].cmd == cmd)
			return &f->ops[i];
	return NULL;
}

/* CTRL_CMD_GETFAMILY by name, answered like the kernel's nlctrl (no ops list). */
static int ctrl_getfamily(struct soft_req *r)
{
	const struct nlattr *tb[CTRL_ATTR_MAX + 1];
	const struct soft_family *f;
	struct nlmsghdr *nlh;
	char name[GENL_NAMSIZ];
	size_t n;

	if (r->genl->cmd != CTRL_CMD_GETFAMILY)
		return -EOPNOTSUPP;
	if (r->nlh->nlmsg_flags & NLM_F_DUMP)
		return -EOPNOTSUPP;
	if (soft_genl_attrs(r, tb, CTRL_ATTR_MAX))
		return -EINVAL;
	if (!tb[CTRL_ATTR_FAMILY_NAME])
		return -EINVAL;
	n = mnl_attr_get_payload_len(tb[CTRL_ATTR_FAMILY_NAME]);
	if (n < 1 || n > GENL_NAMSIZ ||
	    ((const char *)mnl_attr_get_payload(tb[CTRL_ATTR_FAMILY_NAME]))[n - 1])
		return -EINVAL;
	memcpy(name, mnl_attr_get_payload(tb[CTRL_ATTR_FAMILY_NAME]), n);
	f = family_by_name(name);
	if (!f)
		return -ENOENT;
	nlh = soft_genl_msg(r->out, r->nlh, GENL_ID_CTRL, CTRL_CMD_NEWFAMILY, 0);
	if (!nlh)
		return -ENOMEM;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, f->name);
	mnl_attr_put_u16(nlh, CTRL_ATTR_FAMILY_ID, f->id);
	mnl_attr_put_u32(nlh, CTRL_ATTR_VERSION, f->version);
	mnl_attr_put_u32(nlh, CTRL_ATTR_HDRSIZE, 0);
	mnl_attr_put_u32(nlh, CTRL_ATTR_MAXATTR, f->maxattr);
	soft_msg_end(r->out, nlh);
	return 0;
}

/* Reply to a genl doit/dump the way genetlink does: data, then DONE or ack/error. */
static void run_op(struct soft_req *r, int (*doit)(struct soft_req *), int (*dumpit)(struct soft_req *))
{
	bool dump = (r->nlh->nlmsg_flags & NLM_F_DUMP) != 0;
	size_t mark = r->out->len;
	int rc;

	rc = dump ? dumpit(r) : doit(r);
	if (rc) {
		soft_out_trim(r->out, mark);    /* no partial answer before an error */
		soft_error(r->out, r->nlh, rc < 0 ? rc : -EINVAL, r->ext_ack);
		return;
	}
	if (dump)
		soft_done(r->out, r->nlh);
	else if (r->nlh->nlmsg_flags & NLM_F_ACK)
		soft_error(r->out, r->nlh, 0, NULL);
}

static void handle_genl(struct soft_req *r)
{
	bool dump = (r->nlh->nlmsg_flags & NLM_F_DUMP) != 0;
	const struct soft_family *f;
	const struct soft_op *op;

	if (r->nlh->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN)) {
		soft_error(r->out, r->nlh, -EINVAL, NULL);
		return;
	}
	r->genl = mnl_nlmsg_get_payload(r->nlh);
	r->data = (const unsigned char *)r->genl + GENL_HDRLEN;
	r->data_len = r->nlh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
	if (r->nlh->nlmsg_type == GENL_ID_CTRL) {
		run_op(r, ctrl_getfamily, ctrl_getfamily);
		return;
	}
	f = family_by_id(r->nlh->nlmsg_type);
	op = f ? find_op(f, r->genl->cmd) : NULL;
	if (!f) {
		soft_error(r->out, r->nlh, -ENOENT, NULL);
		return;
	}
	if (!op || (dump && !op->dumpit) || (!dump && !op->doit)) {
		soft_error(r->out, r->nlh, -EOPNOTSUPP, NULL);
		return;
	}
	if (op->admin && !r->peer->net_admin) {
		soft_error(r->out, r->nlh, -EPERM, NULL);
		return;
	}
	/* the kernel learns of RDMA devices as they come and go; we look when asked */
	if (f != &soft_reg_family && soft_rdma_refresh(r->st)) {
		soft_error(r->out, r->nlh, -ENOMEM, NULL);
		return;
	}
	run_op(r, op->doit, op->dumpit);
}

static void handle_diag(struct soft_req *r)
{
	r->data = mnl_nlmsg_get_payload(r->nlh);
	r->data_len = r->nlh->nlmsg_len - NLMSG_HDRLEN;
	if (r->data_len < 1 || ((const uint8_t *)r->data)[0] != AF_SMC) {
		/* no handler for that family here: what sock_diag answers */
		soft_error(r->out, r->nlh, -ENOENT, NULL);
		return;
	}
	if (!(r->nlh->nlmsg_flags & NLM_F_DUMP))
		return;                         /* the kernel ignores it silently */
	if (r->data_len < SMC_DIAG_REQ_LEN) {
		soft_error(r->out, r->nlh, -EINVAL, NULL);
		return;
	}
	run_op(r, NULL, soft_diag_dump);
}

static void handle_msg(struct soft_req *r)
{
	if (!(r->nlh->nlmsg_flags & NLM_F_REQUEST))
		return;                         /* the kernel ignores non-requests */
	if (r->nlh->nlmsg_type < NLMSG_MIN_TYPE)
		return;                         /* control messages carry no request */
	if (r->nlh->nlmsg_type == SOCK_DIAG_BY_FAMILY)
		handle_diag(r);
	else
		handle_genl(r);
}

int soft_handle_keep(struct soft_state *st, const struct soft_peer *peer,
		     const void *data, size_t len, int fd, struct soft_out *out)
{
	const unsigned char *p = data;
	size_t off = 0;

	if (len > 0 && len < sizeof(struct nlmsghdr)) {
		struct nlmsghdr none = { 0 };   /* too short to answer by its seq */

		soft_error(out, &none, -EINVAL, "message shorter than a netlink header");
	}
	while (off + sizeof(struct nlmsghdr) <= len) {
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)(p + off);
		struct soft_req r = { .st = st, .peer = peer, .nlh = nlh, .out = out, .fd = fd };

		if (nlh->nlmsg_len < sizeof(*nlh) || nlh->nlmsg_len > len - off) {
			soft_error(out, nlh, -EINVAL, "malformed netlink message");
			break;
		}
		r.ns = soft_ns_get(st, peer->netns);
		if (!r.ns) {
			soft_error(out, nlh, -ENOMEM, NULL);
			break;
		}
		handle_msg(&r);
		fd = r.fd;                      /* a handler may have taken it */
		off += NLMSG_ALIGN(nlh->nlmsg_len);
	}
	return fd;
}

void soft_handle(struct soft_state *st, const struct soft_peer *peer,
		 const void *data, size_t len, int fd, struct soft_out *out)
{
	fd = soft_handle_keep(st, peer, data, len, fd, out);
	if (fd >= 0)
		close(fd);
}
