/*
 * User EIDs (host-wide table of at most four) and the system EID of a
 * non-s390 host: empty, disabled, and not switchable (smc_clc.c).
 */
#include "gen.h"
#include "state.h"
#include "devices.h"
#include "kctype.h"
#include "policy.h"

#include <errno.h>
#include <string.h>
#include <libmnl/libmnl.h>

int soft_gen_ueid_dump(struct soft_req *r)
{
	for (int i = 0; i < r->st->n_ueid; i++) {
		struct nlmsghdr *nlh = soft_gen_msg(r, SMC_NETLINK_DUMP_UEID);
		char eid[SOFT_EID_LEN + 1];

		if (!nlh)
			return -ENOMEM;
		memcpy(eid, r->st->ueid[i], SOFT_EID_LEN);
		eid[SOFT_EID_LEN] = '\0';
		mnl_attr_put_strz(nlh, SMC_NLA_EID_TABLE_ENTRY, eid);
		soft_msg_end(r->out, nlh);
	}
	return 0;
}

/*
 * smc_gen_ueid_policy (NLA_STRING of at most 32), then exactly 32 characters
 * and a NUL: the blank-padded EID.
 */
static int ueid_attr(struct soft_req *r, const char **eid)
{
	const struct nlattr *tb[SMC_NLA_EID_TABLE_MAX + 1];
	const struct nlattr *a;
	int rc;

	if (soft_genl_attrs(r, tb, SMC_NLA_EID_TABLE_MAX))
		return -EINVAL;
	a = tb[SMC_NLA_EID_TABLE_ENTRY];
	if (a && (rc = soft_policy_str(a, SOFT_EID_LEN, false))) {
		r->ext_ack = SOFT_POLICY_MSG;
		return rc;
	}
	if (!a || mnl_attr_get_payload_len(a) != SOFT_EID_LEN + 1)
		return -EINVAL;
	*eid = mnl_attr_get_payload(a);
	return 0;
}

/* smc_clc_ueid_valid(): trailing blanks ignored, [A-Z0-9] first, then [A-Z0-9.-]. */
static bool ueid_valid(const char *eid)
{
	const unsigned char *s = (const unsigned char *)eid;
	int end = SOFT_EID_LEN - 1;

	while (end >= 0 && k_isspace(s[end]))
		end--;
	if (end < 0 || !k_isalnum(s[0]) || k_islower(s[0]))
		return false;
	for (int i = 0; i <= end; i++)
		if ((!k_isalnum(s[i]) || k_islower(s[i])) && s[i] != '.' && s[i] != '-')
			return false;
	return true;
}

int soft_gen_ueid_add(struct soft_req *r)
{
	struct soft_state *st = r->st;
	const char *eid;
	int rc = ueid_attr(r, &eid);

	if (rc)
		return rc;
	if (!ueid_valid(eid))
		return -EINVAL;
	if (st->n_ueid >= SOFT_MAX_UEID)
		return -ERANGE;
	for (int i = 0; i < st->n_ueid; i++)
		if (!memcmp(st->ueid[i], eid, SOFT_EID_LEN))
			return -EEXIST;
	memcpy(st->ueid[st->n_ueid], eid, SOFT_EID_LEN);
	st->ueid[st->n_ueid][SOFT_EID_LEN] = '\0';
	st->n_ueid++;
	return 0;
}

/* smc_clc_ueid_remove(): every match (all when eid is NULL); -ENOENT if none. */
static int ueid_remove(struct soft_state *st, const char *eid)
{
	int rc = -ENOENT, n = 0;

	for (int i = 0; i < st->n_ueid; i++) {
		if (!eid || !memcmp(st->ueid[i], eid, SOFT_EID_LEN)) {
			rc = 0;
			continue;
		}
		if (n != i)
			memcpy(st->ueid[n], st->ueid[i], sizeof(st->ueid[n]));
		n++;
	}
	for (int i = n; i < st->n_ueid; i++)
		memset(st->ueid[i], 0, sizeof(st->ueid[i]));
	st->n_ueid = n;
	return rc;
}

int soft_gen_ueid_remove(struct soft_req *r)
{
	const char *eid;
	int rc = ueid_attr(r, &eid);

	return rc ? rc : ueid_remove(r->st, eid);
}

int soft_gen_ueid_flush(struct soft_req *r)
{
	int rc = soft_gen_check_attrs(r);

	if (!rc)
		ueid_remove(r->st, NULL);
	return rc;
}

/* One message; without an ISMv2-capable device it carries no attribute. */
int soft_gen_seid_dump(struct soft_req *r)
{
	struct nlmsghdr *nlh = soft_gen_msg(r, SMC_NETLINK_DUMP_SEID);

	if (!nlh)
		return -ENOMEM;
	if (soft_ism_v2_capable(r->st)) {
		mnl_attr_put_strz(nlh, SMC_NLA_SEID_ENTRY, "");
		mnl_attr_put_u8(nlh, SMC_NLA_SEID_ENABLED, r->st->seid_enabled);
	}
	soft_msg_end(r->out, nlh);
	return 0;
}

/* Only s390 has a system EID to switch. */
int soft_gen_seid_enable(struct soft_req *r)
{
	int rc = soft_gen_check_attrs(r);

	return rc ? rc : -EOPNOTSUPP;
}

int soft_gen_seid_disable(struct soft_req *r)
{
	return soft_gen_seid_enable(r);
}
