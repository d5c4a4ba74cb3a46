/*
 * Column tables: one row per value holds its header cell, its text format
 * and its JSON key, so a listing's text and its -j output come from one
 * table and one call per value (iproute2's print_*(PRINT_ANY, ...) idea).
 * The text columns stay byte-compatible with upstream; JSON gets numbers as
 * numbers and null for a value that is absent.
 */
#ifndef SMC_COLS_H
#define SMC_COLS_H

#include <stdbool.h>
#include <stddef.h>

#include "output.h"

/*
 * A value as printed: a number, a string, a flag ("Yes"/"No" in text, a
 * JSON bool) or none (absent: the column's placeholder in text, null in JSON).
 */
enum smc_val_kind { SMC_VAL_NUM, SMC_VAL_STR, SMC_VAL_BOOL, SMC_VAL_NONE };

struct smc_val {
	enum smc_val_kind kind;
	const char *s;              /* STR: the string; others: their text, if not the default */
	unsigned long long n;
};

static inline struct smc_val smc_num(unsigned long long n)
{
	return (struct smc_val){ .kind = SMC_VAL_NUM, .n = n };
}

static inline struct smc_val smc_str(const char *s)
{
	return (struct smc_val){ .kind = SMC_VAL_STR, .s = s };
}

static inline struct smc_val smc_bool(bool b)
{
	return (struct smc_val){ .kind = SMC_VAL_BOOL, .n = b };
}

static inline struct smc_val smc_none(void)
{
	return (struct smc_val){ .kind = SMC_VAL_NONE };
}

/* A number whose text is this string (printed through the column's %s format). */
static inline struct smc_val smc_num_as(unsigned long long n, const char *text)
{
	return (struct smc_val){ .kind = SMC_VAL_NUM, .n = n, .s = text };
}

/* A flag whose text is this string rather than Yes/No. */
static inline struct smc_val smc_bool_as(bool b, const char *text)
{
	return (struct smc_val){ .kind = SMC_VAL_BOOL, .n = b, .s = text };
}

/* None whose text is this rather than the column's placeholder. */
static inline struct smc_val smc_none_as(const char *text)
{
	return (struct smc_val){ .kind = SMC_VAL_NONE, .s = text };
}

/* A string, or none when it is NULL or empty. */
static inline struct smc_val smc_str_or_none(const char *s)
{
	return s && *s ? smc_str(s) : smc_none();
}

#define SMC_COL_TEXT 1u             /* text only (no JSON key) */
#define SMC_COL_JSON 2u             /* JSON only (no text format) */
#define SMC_COL_V2   4u             /* linkgroup: only with the V2_COMMON nest */
#define SMC_COL_OPT1 8u             /* a listing's own: only when a value was sent */
#define SMC_COL_OPT2 16u            /* ... a second one */
#define SMC_COL_OPT3 32u            /* ... a third one */
#define SMC_COL_OPT4 64u            /* ... a fourth one */

/* One column: value vals[field] printed with fmt (text) or under key (JSON). */
struct smc_col {
	const char *key;            /* JSON key */
	const char *head;           /* header cell of a table, NULL in blocks */
	const char *fmt;            /* text format: one string or unsigned long long */
	int field;                  /* index into the entry's values */
	int level;                  /* text: shown from this -d level on */
	unsigned int flags;
	/*
	 * Text of a none value, printed through fmt (which must then take a
	 * string): upstream's placeholder, "" (blanks of the cell) when NULL.
	 */
	const char *none;
};

struct smc_listing {
	const struct smc_col *cols;
	size_t n;
};
#define SMC_LISTING(c) { (c), sizeof(c) / sizeof((c)[0]) }

/* One value of column c, in text or JSON. */
void smc_col_put(struct smc_out *o, const struct smc_col *c, const struct smc_val *v);
/*
 * Print the columns of one entry: those with field >= first, none with a
 * flag in hide; text shows those up to level, JSON all of them.
 */
void smc_cols_put(struct smc_out *o, const struct smc_listing *l, const struct smc_val *vals,
		  int level, unsigned int hide, int first);
/* The header cells up to level, then a newline (text only). */
void smc_cols_header(struct smc_out *o, const struct smc_listing *l, int level);

#endif
