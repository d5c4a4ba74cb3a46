/* Family SMC_PNETID: GET, ADD, DEL, FLUSH as the kernel's smc_pnet.c answers them. */
#include "families.h"
#include "state.h"
#include "pnettab.h"
#include "policy.h"
#include "kctype.h"

#include <errno.h>
#include <string.h>
#include <libmnl/libmnl.h>
#include <linux/smc.h>

#define ETHNAME_MAX (IF_NAMESIZE - 1)
#define IBNAME_MAX  (SOFT_IBNAME_MAX - 1)

/* smc_pnet_policy, applied to every doit (liberal: other types ignored). */
static int parse(struct soft_req *r, const struct nlattr **tb)
{
	static const size_t max[] = {
		[SMC_PNETID_NAME] = SOFT_PNETID_LEN,
		[SMC_PNETID_ETHNAME] = ETHNAME_MAX,
		[SMC_PNETID_IBNAME] = IBNAME_MAX,
	};
	int rc;

	if (soft_genl_attrs(r, tb, SMC_PNETID_MAX))
		return -EINVAL;
	for (int t = SMC_PNETID_NAME; t <= SMC_PNETID_MAX; t++) {
		if (!tb[t])
			continue;
		rc = t == SMC_PNETID_IBPORT ? soft_policy_u8(tb[t]) :
		     soft_policy_str(tb[t], max[t], true);
		if (rc) {
			r->ext_ack = SOFT_POLICY_MSG;
			return rc;
		}
	}
	return 0;
}

/* A policy-checked NUL_STRING into buf (the policy guarantees a NUL within max + 1). */
static void get_str(char *buf, size_t size, const struct nlattr *a)
{
	size_t n = strnlen(mnl_attr_get_payload(a), mnl_attr_get_payload_len(a));

	if (n > size - 1)
		n = size - 1;
	memcpy(buf, mnl_attr_get_payload(a), n);
	buf[n] = '\0';
}

/* smc_pnet_set_nla(): unused names are "n/a", an ETH entry's port 0xff. */
static int put_entry(struct soft_req *r, const struct soft_pnet_entry *e)
{
	struct nlmsghdr *nlh = soft_genl_msg(r->out, r->nlh, SOFT_ID_PNETID, SMC_PNETID_GET,
					     NLM_F_MULTI);

	if (!nlh)
		return -ENOMEM;
	mnl_attr_put_strz(nlh, SMC_PNETID_NAME, e->pnetid);
	mnl_attr_put_strz(nlh, SMC_PNETID_ETHNAME, e->ib ? "n/a" : e->eth_name);
	mnl_attr_put_strz(nlh, SMC_PNETID_IBNAME, e->ib ? e->ib_name : "n/a");
	mnl_attr_put_u8(nlh, SMC_PNETID_IBPORT, e->ib ? e->ib_port : 0xff);
	soft_msg_end(r->out, nlh);
	return 0;
}

/* The entries matching pnetid (all when NULL); outside the initial namespace ETH only. */
static int put_entries(struct soft_req *r, const char *pnetid)
{
	for (const struct soft_pnet_entry *e = r->ns->pnet; e; e = e->next) {
		if (pnetid && !soft_pnet_match(e->pnetid, pnetid))
			continue;
		if (!r->ns->init && e->ib)
			continue;
		if (put_entry(r, e))
			return -ENOMEM;
	}
	return 0;
}

static int pnet_dump(struct soft_req *r)
{
	return put_entries(r, NULL);
}

/* The doit answers like a dump: multi-part messages and a DONE without payload. */
static int pnet_get(struct soft_req *r)
{
	const struct nlattr *tb[SMC_PNETID_MAX + 1];
	char name[SOFT_PNETID_LEN + 1];
	struct nlmsghdr *done;
	int rc = parse(r, tb);

	if (rc)
		return rc;
	if (!tb[SMC_PNETID_NAME])
		return -EINVAL;
	get_str(name, sizeof(name), tb[SMC_PNETID_NAME]);
	if (put_entries(r, name))
		return -ENOMEM;
	done = soft_msg(r->out, r->nlh, NLMSG_DONE, NLM_F_MULTI);
	if (!done)
		return -ENOMEM;
	soft_msg_end(r->out, done);
	return 0;
}

/* strim(): the IB name without surrounding whitespace. */
static char *trim(char *s)
{
	size_t n = strlen(s);

	while (n && k_isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	while (k_isspace((unsigned char)*s))
		s++;
	return s;
}

/* smc_pnet_enter() */
static int pnet_add(struct soft_req *r)
{
	const struct nlattr *tb[SMC_PNETID_MAX + 1];
	char raw[SOFT_PNETID_LEN + 1], pnetid[SOFT_PNETID_LEN + 1];
	char eth[IF_NAMESIZE], ib[SOFT_IBNAME_MAX];
	bool new_eth = false, new_ib = false;
	uint8_t port = 1;
	int rc = parse(r, tb);

	if (rc)
		return rc;
	if (!tb[SMC_PNETID_NAME])
		return -EINVAL;
	get_str(raw, sizeof(raw), tb[SMC_PNETID_NAME]);
	if (!soft_pnetid_valid(raw, pnetid))
		return -EINVAL;
	if (tb[SMC_PNETID_ETHNAME]) {
		get_str(eth, sizeof(eth), tb[SMC_PNETID_ETHNAME]);
		rc = soft_pnet_add_eth(r->ns, eth, pnetid);
		if (!rc)
			new_eth = true;
		else if (rc != -EEXIST)
			return rc;
	}
	if (!r->ns->init)
		return new_eth ? 0 : -EEXIST;
	if (tb[SMC_PNETID_IBNAME]) {
		get_str(ib, sizeof(ib), tb[SMC_PNETID_IBNAME]);
		if (tb[SMC_PNETID_IBPORT]) {
			port = mnl_attr_get_u8(tb[SMC_PNETID_IBPORT]);
			if (port < 1 || port > SOFT_PORTS)
				return -EINVAL;
		}
		rc = soft_pnet_add_ib(r->st, r->ns, trim(ib), port, pnetid);
		if (!rc)
			new_ib = true;
		else if (rc != -EEXIST)
			return rc;
	}
	return new_eth || new_ib ? 0 : -EEXIST;
}

/* The name of DEL is compared as sent: neither trimmed nor upper-cased. */
static int pnet_del(struct soft_req *r)
{
	const struct nlattr *tb[SMC_PNETID_MAX + 1];
	char name[SOFT_PNETID_LEN + 1];
	int rc = parse(r, tb);

	if (rc)
		return rc;
	if (!tb[SMC_PNETID_NAME])
		return -EINVAL;
	get_str(name, sizeof(name), tb[SMC_PNETID_NAME]);
	return soft_pnet_remove(r->st, r->ns, name);
}

static int pnet_flush(struct soft_req *r)
{
	const struct nlattr *tb[SMC_PNETID_MAX + 1];
	int rc = parse(r, tb);

	if (rc)
		return rc;
	soft_pnet_remove(r->st, r->ns, NULL);
	return 0;
}

static const struct soft_op pnet_ops[] = {
	{ SMC_PNETID_GET, pnet_get, pnet_dump, false },
	{ SMC_PNETID_ADD, pnet_add, NULL, true },
	{ SMC_PNETID_DEL, pnet_del, NULL, true },
	{ SMC_PNETID_FLUSH, pnet_flush, NULL, true },
};

const struct soft_family soft_pnet_family = {
	.name = SMCR_GENL_FAMILY_NAME,
	.id = SOFT_ID_PNETID,
	.version = SMCR_GENL_FAMILY_VERSION,
	.maxattr = SMC_PNETID_MAX,
	.ops = pnet_ops,
	.n_ops = sizeof(pnet_ops) / sizeof(pnet_ops[0]),
};
