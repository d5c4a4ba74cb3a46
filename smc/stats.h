/*
 * smcd/smcr stats: the counters, and the steps that fill, merge, store and
 * print them (one file each: stats_parse.c, stats_delta.c, stats_cache.c,
 * stats_abbrev.c, stats_format.c, stats_legacy.c; the command is stats.c).
 */
#ifndef SMC_STATS_H
#define SMC_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "genl.h"
#include "smc.h"

#define SMC_STATS_BUCKETS   9    /* 8K 16K 32K 64K 128K 256K 512K 1024K >1024K */
#define SMC_STATS_RMB_CNT   7
#define SMC_STATS_RSN_SLOTS 30   /* reason slots per side, as upstream keeps them */

/*
 * Offsets of the u64 counters inside one technology block.  This is the
 * order of the cache file (smcd(8) FILES) and of `stats json` (smcd(8)).
 */
enum smc_stats_off {
	SMC_ST_TX_RMBSIZE = 0,       /* 9 buckets: send buffer sizes */
	SMC_ST_RX_RMBSIZE = 9,       /* 9 buckets: receive buffer sizes */
	SMC_ST_TX_PD = 18,           /* 9 buckets: send request sizes */
	SMC_ST_RX_PD = 27,           /* 9 buckets: receive request sizes */
	SMC_ST_RMB_TX = 36,          /* 7 counters, enum smc_stats_rmb */
	SMC_ST_RMB_RX = 43,          /* 7 counters */
	SMC_ST_CLNT_V1 = 50,
	SMC_ST_CLNT_V2,
	SMC_ST_SRV_V1,
	SMC_ST_SRV_V2,
	SMC_ST_SENDPAGE,
	SMC_ST_URG_DATA,
	SMC_ST_SPLICE,
	SMC_ST_CORK,
	SMC_ST_NDLY,
	SMC_ST_RX_BYTES,
	SMC_ST_TX_BYTES,
	SMC_ST_RX_CNT,
	SMC_ST_TX_CNT,
	SMC_ST_RX_RMBUSE,
	SMC_ST_TX_RMBUSE,
	SMC_ST_TECH_CNT              /* 65 */
};

/* A buffer counter group, in the order of SMC_NLA_STATS_RMB_* minus one. */
enum smc_stats_rmb {
	SMC_RMB_SIZE_SM_PEER,
	SMC_RMB_SIZE_SM,
	SMC_RMB_FULL_PEER,
	SMC_RMB_FULL,
	SMC_RMB_REUSE,
	SMC_RMB_ALLOC,
	SMC_RMB_DGRADE,
};

/* The whole counter array: SMC-R block, SMC-D block, handshake errors. */
#define SMC_STATS_TECH_R  0
#define SMC_STATS_TECH_D  SMC_ST_TECH_CNT
#define SMC_STATS_HS_CLNT (2 * SMC_ST_TECH_CNT)       /* 130 */
#define SMC_STATS_HS_SRV  (2 * SMC_ST_TECH_CNT + 1)   /* 131 */
#define SMC_STATS_CNT     (2 * SMC_ST_TECH_CNT + 2)   /* 132 */

struct smc_stats_rsn {
	int code;                /* fallback reason, 0: free slot */
	int count;
};

struct smc_stats_data {
	uint64_t cnt[SMC_STATS_CNT];
	struct smc_stats_rsn srv[SMC_STATS_RSN_SLOTS];
	struct smc_stats_rsn clnt[SMC_STATS_RSN_SLOTS];
	uint64_t srv_fback;      /* fallback totals */
	uint64_t clnt_fback;
};

/* The technology block shown by smcd (SMC-D) or smcr (SMC-R). */
static inline const uint64_t *smc_stats_tech(const struct smc_stats_data *d, bool smcd)
{
	return d->cnt + (smcd ? SMC_STATS_TECH_D : SMC_STATS_TECH_R);
}

/* ---- stats_parse.c: reply messages -> smc_stats_data ------------------- */

struct smc_stats_parse {
	struct smc_stats_data *d;
	FILE *err;               /* where parse errors go */
};

/* smc_msg_cb for SMC_NETLINK_GET_FBACK_STATS / _GET_STATS; arg: smc_stats_parse. */
int smc_stats_fback_cb(const struct nlmsghdr *nlh, void *arg);
int smc_stats_cb(const struct nlmsghdr *nlh, void *arg);

/* ---- stats_delta.c: the baseline arithmetic ---------------------------- */

/* Every kernel value is >= its baseline (no wrap, no reload since the reset). */
bool smc_stats_consistent(const struct smc_stats_data *kern, const struct smc_stats_data *base);
/* kern -= base: counters, reason counts by code, totals. */
void smc_stats_subtract(struct smc_stats_data *kern, const struct smc_stats_data *base);

/* ---- stats_cache.c: the per-user baseline file ------------------------- */

struct smc_stats_cache {
	FILE *fp;                /* NULL when not open */
	char path[4096];
};

/* $SMC_STATS_CACHE if set and not empty, else /tmp/.smcstats.u<real uid>. */
void smc_stats_cache_path(char *buf, size_t len);
/* Open (create) and lock; 0, or -1 after "Error: ...: <strerror>" on err. */
int smc_stats_cache_open(struct smc_stats_cache *c, FILE *err);
void smc_stats_cache_close(struct smc_stats_cache *c);
/* Read a baseline; *found tells whether the file had any line.  0 or -1 after a message. */
int smc_stats_cache_read(FILE *fp, struct smc_stats_data *base, bool *found, FILE *err);
/* Truncate and write the 194 lines of org.  0 or -1 after a message. */
int smc_stats_cache_write(FILE *fp, const struct smc_stats_data *org, FILE *err);

/* ---- stats_abbrev.c ----------------------------------------------------- */

#define SMC_ABBREV_LEN 7         /* 6 characters and the terminator */
/* Upstream's 6-character abbreviation ("1.234K", "987.7M"), quirks included. */
void smc_stats_abbrev(uint64_t num, char res[SMC_ABBREV_LEN]);

/* ---- stats_format.c / stats_legacy.c: output ----------------------------- */

/* The text report of smcd(8) `stats`. */
void smc_stats_print_text(FILE *f, const struct smc_stats_data *d, bool smcd, bool details);
/* The -j document (keys documented in stats_format.c). */
void smc_stats_print_json(FILE *f, const struct smc_stats_data *d, bool smcd, bool absolute);
/* `stats json`: upstream's one line of 65 keys. */
void smc_stats_print_legacy_json(FILE *f, const struct smc_stats_data *d, bool smcd);

/* ---- stats.c: the command ------------------------------------------------ */

enum smc_stats_mode { SMC_STATS_SHOW, SMC_STATS_RESET, SMC_STATS_JSON };

/* The words after "stats": 0 and the mode, or -1 for the usage text. */
int smc_stats_parse_args(int argc, char **argv, enum smc_stats_mode *mode);

/* Fetch one dump (cmd) and hand each message to cb: netlink, or memory in tests. */
typedef int (*smc_stats_dump_fn)(void *src, uint8_t cmd, smc_msg_cb cb, void *arg);

/* The sequence of smcd(8) `stats` (baseline, dumps, delta, print, reset)
 * for an already parsed command line. */
int smc_stats_run(struct smc_ctx *ctx, enum smc_stats_mode mode,
		  smc_stats_dump_fn dump, void *src);

#endif
