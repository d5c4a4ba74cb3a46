/* Building reply messages for one request datagram. */
#include "soft_nl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libmnl/libmnl.h>

void soft_out_init(struct soft_out *o)
{
	memset(o, 0, sizeof(*o));
}

void soft_out_free(struct soft_out *o)
{
	soft_out_trim(o, 0);
	free(o->fds);
	free(o->buf);
	soft_out_init(o);
}

void soft_out_trim(struct soft_out *o, size_t len)
{
	while (o->n_fds && o->fds[o->n_fds - 1].off >= len)
		if (o->fds[--o->n_fds].fd >= 0)
			close(o->fds[o->n_fds].fd);
	if (len < o->len)
		o->len = len;
}

int soft_msg_fd(struct soft_out *o, const struct nlmsghdr *nlh, int fd)
{
	size_t off = (size_t)((const unsigned char *)nlh - o->buf);

	if (o->n_fds == o->fds_cap) {
		size_t cap = o->fds_cap ? 2 * o->fds_cap : 4;
		struct soft_out_fd *v = realloc(o->fds, cap * sizeof(*v));

		if (!v) {
			close(fd);
			o->failed = true;
			return -ENOMEM;
		}
		o->fds = v;
		o->fds_cap = cap;
	}
	o->fds[o->n_fds++] = (struct soft_out_fd){ .off = off, .fd = fd };
	return 0;
}

static bool reserve(struct soft_out *o, size_t more)
{
	size_t cap = o->cap ? o->cap : 4 * SOFT_MSG_ROOM;
	unsigned char *p;

	if (o->failed)
		return false;
	while (cap < o->len + more)
		cap *= 2;
	if (cap != o->cap) {
		p = realloc(o->buf, cap);
		if (!p) {
			o->failed = true;
			return false;
		}
		o->buf = p;
		o->cap = cap;
	}
	return true;
}

struct nlmsghdr *soft_msg(struct soft_out *o, const struct nlmsghdr *req,
			  uint16_t type, uint16_t flags)
{
	struct nlmsghdr *nlh;

	if (!reserve(o, SOFT_MSG_ROOM))
		return NULL;
	memset(o->buf + o->len, 0, SOFT_MSG_ROOM);
	nlh = mnl_nlmsg_put_header(o->buf + o->len);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = flags;
	nlh->nlmsg_seq = req->nlmsg_seq;
	nlh->nlmsg_pid = req->nlmsg_pid;
	return nlh;
}

struct nlmsghdr *soft_genl_msg(struct soft_out *o, const struct nlmsghdr *req,
			       uint16_t family, uint8_t cmd, uint16_t flags)
{
	struct nlmsghdr *nlh = soft_msg(o, req, family, flags);
	struct genlmsghdr *g;

	if (!nlh)
		return NULL;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = 1;
	return nlh;
}

void soft_msg_end(struct soft_out *o, struct nlmsghdr *nlh)
{
	if (nlh && !o->failed)
		o->len += NLMSG_ALIGN(nlh->nlmsg_len);
}

void soft_error(struct soft_out *o, const struct nlmsghdr *req, int error, const char *text)
{
	uint16_t flags = NLM_F_CAPPED | (text ? NLM_F_ACK_TLVS : 0);
	struct nlmsghdr *nlh = soft_msg(o, req, NLMSG_ERROR, flags);
	struct nlmsgerr *e;

	if (!nlh)
		return;
	e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));
	e->error = error;
	memcpy(&e->msg, req, sizeof(e->msg));
	if (text)
		mnl_attr_put_strz(nlh, NLMSGERR_ATTR_MSG, text);
	soft_msg_end(o, nlh);
}

void soft_done(struct soft_out *o, const struct nlmsghdr *req)
{
	struct nlmsghdr *nlh = soft_msg(o, req, NLMSG_DONE, NLM_F_MULTI);
	int *zero;

	if (!nlh)
		return;
	zero = mnl_nlmsg_put_extra_header(nlh, sizeof(*zero));
	*zero = 0;
	soft_msg_end(o, nlh);
}
