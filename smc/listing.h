/*
 * What linkgroup and device share: the attribute getters, the ifindex-to-name
 * lookup and the run of a listing command, from the dump to the exit status.
 * Their column tables (header cell, text format and JSON key side by side)
 * are lib/cols.h.
 */
#ifndef SMC_LISTING_H
#define SMC_LISTING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <net/if.h>

#include "cols.h"
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
