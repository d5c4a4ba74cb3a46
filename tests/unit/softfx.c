#include "softfx.h"
#include "soft/fabric/devices.h"
#include "soft/runtime/teardown.h"
#include "soft/families/families.h"

#include <stdlib.h>
#include <string.h>

void sfx_init(struct sfx *f, bool roce)
{
	char *specs[] = { "sr_test=lo" };
	char err[256] = "";

	memset(f, 0, sizeof(*f));
	soft_state_init(&f->st);
	soft_out_init(&f->out);
	if (soft_devs_init(&f->st, specs, roce ? 1 : 0, err, sizeof(err)))
		unit_fail(__FILE__, __LINE__, "soft_devs_init: %s", err);
	if (!roce) {
		/* only the ISM: drop what the default scan found */
		struct soft_dev *ism = f->st.devs, *d, *next;

		for (d = ism->next; d; d = next) {
			next = d->next;
			free(d);
		}
		ism->next = NULL;
	}
	f->admin = (struct soft_peer){ .pid = 1, .netns = f->st.init_netns, .net_admin = true,
				       .conn_id = 1 };
	f->user = f->admin;
	f->user.net_admin = false;
	f->other = f->admin;
	f->other.netns = SFX_OTHERNS;
	f->other_user = f->other;
	f->other_user.net_admin = false;
}

void sfx_free(struct sfx *f)
{
	soft_out_free(&f->out);
	soft_state_free(&f->st);
}

void sfx_req(struct mb *m, uint16_t family, uint8_t cmd, uint16_t flags, uint32_t seq)
{
	struct nlmsghdr *h = (struct nlmsghdr *)m->buf;

	mb_start(m, family, NLM_F_REQUEST | NLM_F_ACK | flags);
	h->nlmsg_seq = seq;
	h->nlmsg_pid = SFX_PID;
	mb_genl(m, cmd);
}

void sfx_send(struct sfx *f, const struct soft_peer *p, struct mb *m)
{
	struct nlmsghdr *h = (struct nlmsghdr *)m->buf;

	h->nlmsg_len = (uint32_t)m->len;
	soft_out_trim(&f->out, 0);
	soft_handle(&f->st, p, m->buf, m->len, -1, &f->out);
}

int sfx_simple(struct sfx *f, const struct soft_peer *p, uint16_t family, uint8_t cmd,
	       uint16_t flags)
{
	struct mb m;

	sfx_req(&m, family, cmd, flags, 7);
	sfx_send(f, p, &m);
	return sfx_error(f);
}

void sfx_exp_genl(struct mb *m, uint16_t family, uint8_t cmd, uint16_t flags, uint32_t seq)
{
	struct nlmsghdr *h = (struct nlmsghdr *)m->buf;

	mb_start(m, family, flags);
	h->nlmsg_seq = seq;
	h->nlmsg_pid = SFX_PID;
	mb_genl(m, cmd);
}

void sfx_exp_done(struct smc_reply *e, uint32_t seq)
{
	struct nlmsghdr *h;
	struct mb m;
	int zero = 0;

	mb_start(&m, NLMSG_DONE, NLM_F_MULTI);
	h = (struct nlmsghdr *)m.buf;
	h->nlmsg_seq = seq;
	h->nlmsg_pid = SFX_PID;
	mb_raw(&m, &zero, sizeof(zero));
	mb_finish(&m, e);
}

void sfx_exp_ack(struct smc_reply *e, const struct mb *req, int error, const char *text)
{
	const struct nlmsghdr *rh = (const struct nlmsghdr *)req->buf;
	struct nlmsghdr *h;
	struct mb m;

	mb_start(&m, NLMSG_ERROR, NLM_F_CAPPED | (text ? NLM_F_ACK_TLVS : 0));
	h = (struct nlmsghdr *)m.buf;
	h->nlmsg_seq = rh->nlmsg_seq;
	h->nlmsg_pid = rh->nlmsg_pid;
	mb_raw(&m, &error, sizeof(error));
	mb_raw(&m, rh, sizeof(*rh));             /* capped: the request's header only */
	if (text)
		mb_str(&m, NLMSGERR_ATTR_MSG, text);
	mb_finish(&m, e);
}

static void dump(const char *what, const unsigned char *p, size_t len)
{
	printf("    %s (%zu bytes):", what, len);
	for (size_t i = 0; i < len; i++)
		printf("%s%02x", i % 16 ? " " : "\n      ", p[i]);
	printf("\n");
}

bool sfx_same(const char *file, int line, const struct sfx *f, const struct smc_reply *e)
{
	size_t n = f->out.len < e->len ? f->out.len : e->len, i;

	if (f->out.len == e->len && !memcmp(f->out.buf, e->buf, n))
		return true;
	for (i = 0; i < n && f->out.buf[i] == e->buf[i]; i++)
		;
	unit_fail(file, line, "reply differs at byte %zu (got %zu bytes, expected %zu)",
		  i, f->out.len, e->len);
	dump("got", f->out.buf, f->out.len);
	dump("expected", e->buf, e->len);
	return false;
}

int sfx_count(const struct sfx *f)
{
	size_t off = 0;
	int n = 0;

	while (off + sizeof(struct nlmsghdr) <= f->out.len) {
		const struct nlmsghdr *h = (const struct nlmsghdr *)(f->out.buf + off);

		if (h->nlmsg_len < sizeof(*h))
			break;
		off += NLMSG_ALIGN(h->nlmsg_len);
		n++;
	}
	return n;
}

const struct nlmsghdr *sfx_msg(const struct sfx *f, int n)
{
	size_t off = 0;

	while (off + sizeof(struct nlmsghdr) <= f->out.len) {
		const struct nlmsghdr *h = (const struct nlmsghdr *)(f->out.buf + off);

		if (h->nlmsg_len < sizeof(*h))
			break;
		if (n-- == 0)
			return h;
		off += NLMSG_ALIGN(h->nlmsg_len);
	}
	return NULL;
}

int sfx_error(const struct sfx *f)
{
	const struct nlmsghdr *h = sfx_msg(f, 0);

	if (sfx_count(f) != 1 || !h || h->nlmsg_type != NLMSG_ERROR ||
	    h->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr)))
		return 1;
	return ((const struct nlmsgerr *)NLMSG_DATA(h))->error;
}
