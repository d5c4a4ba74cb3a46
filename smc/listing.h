/*
 * Column listings shared by linkgroup and device: a header cell, a text format
 * and a JSON key per value, so text and JSON come from one table.
 */
#ifndef SMC_LISTING_H
#define SMC_LISTING_H

#include <stddef.h>
#include <net/if.h>

#include "output.h"

struct nlattr;

/*
 * How NET_DEV / PORT_NETDEV ifindexes become names: if_indextoname in the
 * caller's namespace unless a test or fuzzer sets another (NULL: default).
 */
void smc_set_ifname_fn(char *(*fn)(unsigned int ifindex, char *name));
/* The name of the ifindex in attribute a (u32); "" for none, 0 or unknown. */
void smc_nla_ifname(char name[IF_NAMESIZE], const struct nlattr *a);

/* A value as printed: a number, a string, or a flag ("Yes"/"No", JSON bool). */
enum smc_val_kind { SMC_VAL_NUM, SMC_VAL_STR, SMC_VAL_BOOL };

struct smc_val {
	enum smc_val_kind kind;
	const char *s;
	unsigned long long n;
};

#define SMC_COL_TEXT 1u             /* text only (no JSON key) */
#define SMC_COL_JSON 2u             /* JSON only (no text format) */
#define SMC_COL_V2   4u             /* linkgroup: only with the V2_COMMON nest */

/* One column: value vals[field] printed with fmt (text) or under key (JSON). */
struct smc_col {
	const char *key;            /* JSON key */
	const char *head;           /* header cell of a table, NULL in blocks */
	const char *fmt;            /* text format: one string or unsigned long long */
	int field;                  /* index into the entry's values */
	int level;                  /* text: shown from this -d level on */
	unsigned int flags;
};

struct smc_listing {
	const struct smc_col *cols;
	size_t n;
};
#define SMC_LISTING(c) { (c), sizeof(c) / sizeof((c)[0]) }

/*
 * Print the columns of one entry: those with field >= first, none with a
 * flag in hide; text shows those up to level, JSON all of them.
 */
void smc_cols_put(struct smc_out *o, const struct smc_listing *l, const struct smc_val *vals,
		  int level, unsigned int hide, int first);
/* The header cells up to level, then a newline (text only). */
void smc_cols_header(struct smc_out *o, const struct smc_listing *l, int level);

/* Leading and trailing blanks removed, in place (upstream's trim_space). */
char *smc_trim(char *s);

#endif
