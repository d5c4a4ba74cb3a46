#include "diag.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <libmnl/libmnl.h>
#include <linux/sock_diag.h>

_Static_assert(sizeof(struct smc_diag_req) == SMC_DIAG_REQ_LEN, "smc_diag_req");
_Static_assert(sizeof(struct smc_diag_msg) == SMC_DIAG_MSG_LEN, "smc_diag_msg");
_Static_assert(sizeof(struct smc_diag_conninfo) == SMC_DIAG_CONNINFO_LEN, "conninfo");
_Static_assert(sizeof(struct smc_diag_lgrinfo) == SMC_DIAG_LGRINFO_LEN, "lgrinfo");

struct nlmsghdr *smc_diag_build_req(void *buf, uint8_t ext_mask)
{
	struct nlmsghdr *nlh;
	struct smc_diag_req *req;

	memset(buf, 0, SMC_DIAG_REQ_BUF);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ROOT;
	nlh->nlmsg_seq = SMC_DIAG_MAGIC_SEQ;
	req = mnl_nlmsg_put_extra_header(nlh, sizeof(*req));
	req->diag_family = AF_SMC;
	req->diag_ext = ext_mask;
	return nlh;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static struct smc_diag_cur rdcur(const uint8_t *p)
{
	struct smc_diag_cur c;

	memcpy(&c.wrap, p + 2, 2);
	c.count = rd32(p + 4);
	return c;
}

static void fixed_str(char *dst, size_t dlen, const uint8_t *src, size_t slen)
{
	size_t n = strnlen((const char *)src, slen < dlen - 1 ? slen : dlen - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

static void parse_conninfo(const uint8_t *p, struct smc_diag_conn *c)
{
	c->token = rd32(p);
	c->sndbuf_size = rd32(p + 4);
	c->rmbe_size = rd32(p + 8);
	c->peer_rmbe_size = rd32(p + 12);
	c->rx_prod = rdcur(p + 16);
	c->rx_cons = rdcur(p + 24);
	c->tx_prod = rdcur(p + 32);
	c->tx_cons = rdcur(p + 40);
	c->rx_prod_flags = p[48];
	c->rx_conn_state_flags = p[49];
	c->tx_prod_flags = p[50];
	c->tx_conn_state_flags = p[51];
	c->tx_prep = rdcur(p + 52);
	c->tx_sent = rdcur(p + 60);
	c->tx_fin = rdcur(p + 68);
}

static void parse_lgrinfo(const uint8_t *p, struct smc_diag_lgr *l)
{
	l->link_id = p[0];
	fixed_str(l->ibname, sizeof(l->ibname), p + 1, 64);
	l->ibport = p[65];
	fixed_str(l->gid, sizeof(l->gid), p + 66, 40);
	fixed_str(l->peer_gid, sizeof(l->peer_gid), p + 106, 40);
	l->role = p[146];
}

static void parse_dmbinfo(const uint8_t *p, size_t len, struct smc_diag_dmb *d)
{
	d->linkid = rd32(p);
	d->peer_gid = rd64(p + 8);
	d->my_gid = rd64(p + 16);
	d->token = rd64(p + 24);
	d->peer_token = rd64(p + 32);
	d->has_ext = len >= SMC_DIAG_DMBINFO_EXT_LEN;
	if (d->has_ext) {
		d->peer_gid_ext = rd64(p + 40);
		d->my_gid_ext = rd64(p + 48);
	}
}

/* An attribute shorter than its structure is ignored, as the upstream tool does. */
static int attr_cb(const struct nlattr *a, void *data)
{
	struct smc_diag_sock *s = data;
	const uint8_t *p = mnl_attr_get_payload(a);
	size_t len = mnl_attr_get_payload_len(a);

	switch (mnl_attr_get_type(a)) {
	case SMC_DIAG_CONNINFO:
		if (len >= SMC_DIAG_CONNINFO_LEN) {
			parse_conninfo(p, &s->conn);
			s->has_conn = true;
		}
		break;
	case SMC_DIAG_LGRINFO:
		if (len >= SMC_DIAG_LGRINFO_LEN) {
			parse_lgrinfo(p, &s->lgr);
			s->has_lgr = true;
		}
		break;
	case SMC_DIAG_SHUTDOWN:
		if (len >= 1) {
			s->shutdown = p[0];
			s->has_shutdown = true;
		}
		break;
	case SMC_DIAG_DMBINFO:
		if (len >= SMC_DIAG_DMBINFO_LEN) {
			parse_dmbinfo(p, len, &s->dmb);
			s->has_dmb = true;
		}
		break;
	case SMC_DIAG_FALLBACK:
		if (len >= SMC_DIAG_FALLBACK_LEN) {
			s->fallback_reason = rd32(p);
			s->peer_diagnosis = rd32(p + 4);
			s->has_fallback = true;
		}
		break;
	}
	return MNL_CB_OK;
}

int smc_diag_parse(const struct nlmsghdr *nlh, struct smc_diag_sock *s)
{
	const uint8_t *m;

	memset(s, 0, sizeof(*s));
	if (nlh->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
	    nlh->nlmsg_len < NLMSG_LENGTH(SMC_DIAG_MSG_LEN))
		return -EBADMSG;
	m = mnl_nlmsg_get_payload(nlh);
	s->family = m[0];
	s->state = m[1];
	s->mode = m[2];
	s->sport = (uint16_t)(m[4] << 8 | m[5]);
	s->dport = (uint16_t)(m[6] << 8 | m[7]);
	memcpy(s->src, m + 8, 16);
	memcpy(s->dst, m + 24, 16);
	s->ifindex = rd32(m + 40);
	s->cookie = rd64(m + 44);
	s->uid = rd32(m + 52);
	s->inode = rd64(m + 56);
	if (mnl_attr_parse(nlh, SMC_DIAG_MSG_LEN, attr_cb, s) < 0)
		return -EBADMSG;
	return 0;
}

int smc_diag_walk(const struct smc_reply *rep, smc_diag_cb cb, void *arg)
{
	const struct nlmsghdr *nlh = NULL;
	struct smc_diag_sock s;
	int rc;

	while ((nlh = smc_reply_next(rep, nlh))) {
		rc = smc_diag_parse(nlh, &s);
		if (rc)
			return rc;
		rc = cb(&s, arg);
		if (rc)
			return rc < 0 ? rc : 0;
	}
	return 0;
}

int smc_diag_dump(struct smc_nl *nl, uint8_t ext_mask, smc_diag_cb cb, void *arg,
		  struct smc_nlerr *err)
{
	unsigned char buf[SMC_DIAG_REQ_BUF];
	struct smc_reply rep;
	int rc;

	smc_reply_init(&rep);
	rc = smc_nl_transact(nl, smc_diag_build_req(buf, ext_mask), &rep, err);
	if (!rc)
		rc = smc_diag_walk(&rep, cb, arg);
	smc_reply_free(&rep);
	return rc;
}
