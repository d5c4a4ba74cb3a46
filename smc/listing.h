/*
 * Column listings shared by linkgroup and device: a header cell, a text format
 * and a JSON key per value, so text and JSON come from one table; and the run
 * of such a command, from the dump to the exit status.
 */
#ifndef SMC_LISTING_H
#define SMC_LISTING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <net/if.h>

#include "output.h"
#include "smc.h"
#include "smc_uapi.h"

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
/* src cut to len - 1 bytes, as upstream keeps filter values. */
void smc_copy_cut(char *dst, size_t len, const char *src);

/* Attribute values; 0 or "" for an attribute not sent or too short. */
bool smc_attr_has(const struct nlattr *a, int len);
uint8_t smc_attr_u8(const struct nlattr *a);
uint16_t smc_attr_u16(const struct nlattr *a);
uint32_t smc_attr_u32(const struct nlattr *a);
uint64_t smc_attr_uint(const struct nlattr *a);     /* "uint": 4 or 8 bytes */
void smc_attr_str(char *buf, size_t len, const struct nlattr *a);

/* ---- one run of a listing command ------------------------------------- */

/* Highest top-level attribute the listings know (never the system header's MAX). */
#define SMC_RUN_GEN_MAX SMC_GEN_FBACK_STATS

struct smc_run {
	struct smc_ctx *ctx;
	struct smc_out out;
	struct smc_json json;
	int level;                          /* -d level; -a and -ad count as 0 */
	const char *key;                    /* JSON: the array holding the entries */
	const struct smc_listing *header;   /* text: the header cells, NULL for none */
	bool started;                       /* first message seen: header/document printed */
	bool failed;                        /* an error line was printed */
};

/* Output set up for ctx: a document {key:[...]} (JSON) or a table with header. */
void smc_run_init(struct smc_run *r, struct smc_ctx *ctx, const char *key,
		  const struct smc_listing *header);
/*
 * Start of each reply message: the header or document once, then the
 * top-level attributes into tb[SMC_RUN_GEN_MAX + 1]; 0, or -EBADMSG after
 * the error line.
 */
int smc_run_msg(struct smc_run *r, const struct nlmsghdr *nlh, struct nlattr **tb);
/* The error line for a nest its policy rejects; -EBADMSG. */
int smc_run_nest_error(struct smc_run *r, const char *policy);
/*
 * Dump cmd (rep NULL) or walk rep, cb printing as the messages come, then
 * the error line and the end of the document; the exit status.
 */
int smc_run_exec(struct smc_run *r, const struct smc_reply *rep, uint8_t cmd,
		 smc_msg_cb cb, void *arg);

#endif
