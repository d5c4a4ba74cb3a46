#include "genl.h"

#include <errno.h>
#include <string.h>
#include <linux/genetlink.h>
#include <netlink/genl/ctrl.h>

void smc_genl_close(struct smc_genl *g)
{
	smc_nl_close(&g->nl);
}

struct nl_msg *smc_genl_msg(struct smc_genl *g, uint8_t cmd, int flags)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, 0, 0, g->family, 0, NLM_F_REQUEST | NLM_F_ACK | flags,
			 cmd, g->version)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

int smc_genl_walk(const struct smc_reply *rep, smc_msg_cb cb, void *arg)
{
	const struct nlmsghdr *nlh = NULL;
	int rc;

	while ((nlh = smc_reply_next(rep, nlh))) {
		rc = cb(nlh, arg);
		if (rc)
			return rc < 0 ? rc : 0;
	}
	return 0;
}

int smc_genl_request(struct smc_genl *g, struct nl_msg *msg, smc_msg_cb cb, void *arg)
{
	struct smc_reply rep;
	int rc;

	if (!msg)
		return -ENOMEM;
	if (g->nl.fd < 0 && g->open_hook) {
		rc = g->open_hook(g);
		if (rc) {
			nlmsg_free(msg);
			return rc;
		}
		/* the message was built before the family id was known */
		nlmsg_hdr(msg)->nlmsg_type = g->family;
	}
	smc_reply_init(&rep);
	rc = smc_nl_transact(&g->nl, nlmsg_hdr(msg), &rep, &g->err);
	nlmsg_free(msg);
	if (!rc && cb)
		rc = smc_genl_walk(&rep, cb, arg);
	smc_reply_free(&rep);
	return rc;
}

int smc_genl_dump(struct smc_genl *g, uint8_t cmd, smc_msg_cb cb, void *arg)
{
	return smc_genl_request(g, smc_genl_msg(g, cmd, NLM_F_DUMP), cb, arg);
}

int smc_genl_do(struct smc_genl *g, uint8_t cmd)
{
	return smc_genl_request(g, smc_genl_msg(g, cmd, 0), NULL, NULL);
}

static int family_id_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct nlattr *tb[CTRL_ATTR_MAX + 1];
	uint16_t *id = arg;

	if (genlmsg_parse((struct nlmsghdr *)nlh, 0, tb, CTRL_ATTR_MAX, NULL) < 0)
		return -EBADMSG;
	if (!tb[CTRL_ATTR_FAMILY_ID] || nla_len(tb[CTRL_ATTR_FAMILY_ID]) < 2)
		return -EBADMSG;
	*id = nla_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
	return 1;
}

int smc_genl_resolve(struct smc_genl *g, const char *name, uint16_t *id)
{
	struct nl_msg *msg;
	uint16_t fam = 0;
	int rc;

	g->family = GENL_ID_CTRL;
	g->version = 1;
	msg = smc_genl_msg(g, CTRL_CMD_GETFAMILY, 0);
	if (!msg)
		return -ENOMEM;
	if (nla_put_string(msg, CTRL_ATTR_FAMILY_NAME, name) < 0) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	rc = smc_genl_request(g, msg, family_id_cb, &fam);
	if (rc)
		return rc;
	if (!fam)
		return -ENOENT;
	*id = fam;
	return 0;
}

int smc_genl_open(struct smc_genl *g, const char *family, bool *open_failed)
{
	int rc;

	memset(g, 0, sizeof(*g));
	*open_failed = false;
	rc = smc_nl_open(&g->nl, NETLINK_GENERIC);
	if (rc) {
		*open_failed = true;
		return rc;
	}
	rc = smc_genl_resolve(g, family, &g->family);
	g->version = 1;
	return rc;
}

uint64_t smc_nla_get_uint(const struct nlattr *nla)
{
	if (nla_len(nla) >= 8)
		return nla_get_u64((struct nlattr *)nla);
	if (nla_len(nla) >= 4)
		return nla_get_u32((struct nlattr *)nla);
	return 0;
}

void smc_nla_strcpy(char *buf, size_t len, const struct nlattr *nla)
{
	size_t n = (size_t)nla_len(nla);
	const char *s = nla_data(nla);

	if (!len)
		return;
	if (n > len - 1)
		n = len - 1;
	n = strnlen(s, n);
	memcpy(buf, s, n);
	buf[n] = '\0';
}
