/* Column tables: see cols.h. */
#include "cols.h"

static bool col_shown(const struct smc_out *o, const struct smc_col *c, int level,
		      unsigned int hide)
{
	if (c->flags & hide)
		return false;
	if (out_is_json(o))
		return !(c->flags & SMC_COL_TEXT);
	return !(c->flags & SMC_COL_JSON) && level >= c->level;
}

void smc_col_put(struct smc_out *o, const struct smc_col *c, const struct smc_val *v)
{
	switch (v->kind) {
	case SMC_VAL_NUM:
		if (v->s && !out_is_json(o))
			out_str(o, c->key, c->fmt, v->s);
		else
			out_u64(o, c->key, c->fmt, v->n);
		break;
	case SMC_VAL_STR:
		out_str(o, c->key, c->fmt, v->s ? v->s : "");
		break;
	case SMC_VAL_BOOL:
		out_bool(o, c->key, c->fmt, v->n != 0, v->s ? v->s : "Yes", v->s ? v->s : "No");
		break;
	case SMC_VAL_NONE:
		out_none(o, c->key, c->fmt, v->s ? v->s : c->none ? c->none : "");
		break;
	}
}

void smc_cols_put(struct smc_out *o, const struct smc_listing *l, const struct smc_val *vals,
		  int level, unsigned int hide, int first)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct smc_col *c = &l->cols[i];

		if (c->field >= first && col_shown(o, c, level, hide))
			smc_col_put(o, c, &vals[c->field]);
	}
}

void smc_cols_header(struct smc_out *o, const struct smc_listing *l, int level)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->cols[i].head && level >= l->cols[i].level)
			out_text(o, "%s", l->cols[i].head);
	out_text(o, "\n");
}
