/*
 * Column listings shared by linkgroup.c and device.c: one table per listing
 * holds each value's header cell, text format and JSON key, so -j cannot
 * drift from the text columns.  Also the ifindex-to-name lookup both use.
 */
#include "listing.h"

#include <netlink/attr.h>

#include <ctype.h>
#include <string.h>

static char *(*ifname_fn)(unsigned int ifindex, char *name) = if_indextoname;

void smc_set_ifname_fn(char *(*fn)(unsigned int ifindex, char *name))
{
	ifname_fn = fn ? fn : if_indextoname;
}

void smc_nla_ifname(char name[IF_NAMESIZE], const struct nlattr *a)
{
	uint32_t ifindex = a && nla_len(a) >= 4 ? nla_get_u32(a) : 0;

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

static bool col_shown(const struct smc_out *o, const struct smc_col *c, int level,
		      unsigned int hide)
{
	if (c->flags & hide)
		return false;
	if (out_is_json(o))
		return !(c->flags & SMC_COL_TEXT);
	return !(c->flags & SMC_COL_JSON) && level >= c->level;
}

static void put_val(struct smc_out *o, const struct smc_col *c, const struct smc_val *v)
{
	switch (v->kind) {
	case SMC_VAL_NUM:
		out_u64(o, c->key, c->fmt, v->n);
		break;
	case SMC_VAL_STR:
		out_str(o, c->key, c->fmt, v->s ? v->s : "");
		break;
	case SMC_VAL_BOOL:
		if (out_is_json(o))
			json_bool(o->j, c->key, v->n != 0);
		else
			fprintf(o->f, c->fmt, v->n ? "Yes" : "No");
		break;
	}
}

void smc_cols_put(struct smc_out *o, const struct smc_listing *l, const struct smc_val *vals,
		  int level, unsigned int hide, int first)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct smc_col *c = &l->cols[i];

		if (c->field >= first && col_shown(o, c, level, hide))
			put_val(o, c, &vals[c->field]);
	}
}

void smc_cols_header(struct smc_out *o, const struct smc_listing *l, int level)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->cols[i].head && level >= l->cols[i].level)
			out_text(o, "%s", l->cols[i].head);
	out_text(o, "\n");
}
