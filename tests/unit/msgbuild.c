#include "msgbuild.h"

#include <string.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

static void pad(struct mb *m)
{
	while (m->len % 4)
		m->buf[m->len++] = 0;
}

void mb_start(struct mb *m, uint16_t type, uint16_t flags)
{
	struct nlmsghdr h = { .nlmsg_type = type, .nlmsg_flags = flags };

	memset(m, 0, sizeof(*m));
	memcpy(m->buf, &h, sizeof(h));
	m->len = sizeof(h);
}

void mb_genl(struct mb *m, uint8_t cmd)
{
	struct genlmsghdr g = { .cmd = cmd, .version = 1 };

	mb_raw(m, &g, sizeof(g));
}

void mb_raw(struct mb *m, const void *p, size_t len)
{
	memcpy(m->buf + m->len, p, len);
	m->len += len;
}

void mb_attr(struct mb *m, uint16_t type, const void *p, size_t len)
{
	struct nlattr a = { .nla_len = (uint16_t)(NLA_HDRLEN + len), .nla_type = type };

	pad(m);
	mb_raw(m, &a, sizeof(a));
	if (len)
		mb_raw(m, p, len);
	pad(m);
}

void mb_u8(struct mb *m, uint16_t type, uint8_t v) { mb_attr(m, type, &v, 1); }
void mb_u16(struct mb *m, uint16_t type, uint16_t v) { mb_attr(m, type, &v, 2); }
void mb_u32(struct mb *m, uint16_t type, uint32_t v) { mb_attr(m, type, &v, 4); }
void mb_u64(struct mb *m, uint16_t type, uint64_t v) { mb_attr(m, type, &v, 8); }
void mb_str(struct mb *m, uint16_t type, const char *s) { mb_attr(m, type, s, strlen(s) + 1); }

void mb_nest(struct mb *m, uint16_t type)
{
	struct nlattr a = { .nla_type = type | NLA_F_NESTED };

	pad(m);
	m->nest[m->depth++] = m->len;
	mb_raw(m, &a, sizeof(a));
}

void mb_end(struct mb *m)
{
	size_t off = m->nest[--m->depth];
	uint16_t len = (uint16_t)(m->len - off);

	memcpy(m->buf + off, &len, sizeof(len));
}

void mb_finish(struct mb *m, struct smc_reply *rep)
{
	uint32_t len = (uint32_t)m->len;

	memcpy(m->buf, &len, sizeof(len));
	smc_reply_append(rep, m->buf, m->len);
}
