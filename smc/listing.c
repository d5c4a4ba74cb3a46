/*
 * What linkgroup.c and device.c do the same way: the attribute getters, the
 * ifindex-to-name lookup and the run of the command.  Their column tables
 * are lib/cols.c.
 */
#include "listing.h"

#include <netlink/attr.h>

#include <ctype.h>
#include <errno.h>
#include <string.h>

static char *(*ifname_fn)(unsigned int ifindex, char *name) = if_indextoname;

void smc_set_ifname_fn(char *(*fn)(unsigned int ifindex, char *name))
{
	ifname_fn = fn ? fn : if_indextoname;
}

void smc_nla_ifname(char name[IF_NAMESIZE], const struct nlattr *a)
{
	uint32_t ifindex = smc_attr_u32(a);

	memset(name, 0, IF_NAMESIZE);
	if (ifindex && !ifname_fn(ifindex, name))
		name[0] = '\0';
	name[IF_NAMESIZE - 1] = '\0';
}

char *smc_trim(char *s)
{
	size_t n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

void smc_copy_cut(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/*
 * The policies reject short attributes already; the lengths are checked
 * again because libnl versions differ in validating attribute type 0.
 */
bool smc_attr_has(const struct nlattr *a, int len) { return a && nla_len(a) >= len; }
uint8_t smc_attr_u8(const struct nlattr *a) { return smc_attr_has(a, 1) ? nla_get_u8(a) : 0; }
uint16_t smc_attr_u16(const struct nlattr *a) { return smc_attr_has(a, 2) ? nla_get_u16(a) : 0; }
uint32_t smc_attr_u32(const struct nlattr *a) { return smc_attr_has(a, 4) ? nla_get_u32(a) : 0; }
uint64_t smc_attr_uint(const struct nlattr *a) { return a ? smc_nla_get_uint(a) : 0; }

void smc_attr_str(char *buf, size_t len, const struct nlattr *a)
{
	buf[0] = '\0';
	if (a)
		smc_nla_strcpy(buf, len, a);
}

/* ---- one run of a listing command ------------------------------------- */

static const struct nla_policy gen_policy[SMC_RUN_GEN_MAX + 1] = {
	[SMC_GEN_SYS_INFO] = { .type = NLA_NESTED },
	[SMC_GEN_LGR_SMCR] = { .type = NLA_NESTED },
	[SMC_GEN_LINK_SMCR] = { .type = NLA_NESTED },
	[SMC_GEN_LGR_SMCD] = { .type = NLA_NESTED },
	[SMC_GEN_DEV_SMCD] = { .type = NLA_NESTED },
	[SMC_GEN_DEV_SMCR] = { .type = NLA_NESTED },
	[SMC_GEN_STATS] = { .type = NLA_NESTED },
	[SMC_GEN_FBACK_STATS] = { .type = NLA_NESTED },
};

void smc_run_init(struct smc_run *r, struct smc_ctx *ctx, const char *key,
		  const struct smc_listing *header)
{
	*r = (struct smc_run){ .ctx = ctx, .key = key, .header = header };
	smc_out_init(ctx, &r->out, &r->json);
	r->level = ctx->level > 0 ? ctx->level : 0;
}

/* Upstream prints the header when the first reply message arrives. */
static void run_begin(struct smc_run *r)
{
	if (r->started)
		return;
	r->started = true;
	out_doc_begin(&r->out, r->key);
	if (r->header)
		smc_cols_header(&r->out, r->header, r->level);
}

/* Without any reply message the text is empty, JSON an empty list. */
static void run_end(struct smc_run *r)
{
	if (out_is_json(&r->out))
		run_begin(r);
	out_doc_end(&r->out);
}

int smc_run_msg(struct smc_run *r, const struct nlmsghdr *nlh, struct nlattr **tb)
{
	run_begin(r);
	if (genlmsg_parse((struct nlmsghdr *)nlh, 0, tb, SMC_RUN_GEN_MAX, gen_policy) < 0) {
		fprintf(r->ctx->err, "Error: Invalid data returned: smc_gen_net_policy\n");
		r->failed = true;
		return -EBADMSG;
	}
	return 0;
}

int smc_run_nest_error(struct smc_run *r, const char *policy)
{
	fprintf(r->ctx->err, "Error: Failed to parse nested attributes: %s\n", policy);
	r->failed = true;
	return -EBADMSG;
}

int smc_run_exec(struct smc_run *r, const struct smc_reply *rep, uint8_t cmd,
		 smc_msg_cb cb, void *arg)
{
	int rc = rep ? smc_genl_walk(rep, cb, arg) : smc_genl_dump(r->ctx->g, cmd, cb, arg);

	if (rc < 0 && !r->failed)
		smc_print_nl_error(r->ctx, rc);
	if (r->started || rc >= 0)
		run_end(r);
	fflush(r->ctx->out);
	return rc < 0 ? SMC_EXIT_FAIL : 0;
}
