/*
 * stats: the text report (smcd(8) "stats", byte-compatible with upstream) and
 * the -j document, both from one printer: the summary and each section come
 * from a row table, one row (one out_* call) per value for both outputs.  A
 * row without a key is text only, one without a text format JSON only.
 *
 * The -j document (one line; all numbers are the values shown, i.e. after
 * subtracting the baseline unless "absolute"):
 *
 *   technology        "SMC-D" | "SMC-R"
 *   absolute          true with -a/-ad (no baseline subtracted)
 *   connections       total (smc + handshake errors + fallbacks), smc,
 *                     client, server (successful SMC handshakes), v1, v2
 *   handshake_errors  client, server   (global, not per technology)
 *   fallback          client, server   (global totals),
 *                     reasons: [{side "server"|"client", code, code_hex
 *                     "0x%08x", name (as the text report), count}], every
 *                     recorded reason, server first, each side by count
 *                     descending (stable)
 *   rx, tx            bytes, requests, buffer_usage (bytes in use),
 *                     buffer_full, buffer_full_remote, buffer_too_small,
 *                     buffer_too_small_remote, buffer_downgrades,
 *                     buffer_reuses, buffer_allocs,
 *                     buffer_sizes {8K 16K 32K 64K 128K 256K 512K 1024K G_1024K}
 *                     (buffers allocated or reused, by size),
 *                     request_sizes {same keys} (send/receive calls by size)
 *   extras            special_socket_calls (the sum of the five below),
 *                     cork, nodelay, sendpage, splice, urgent_data
 */
#include "stats.h"
#include "names.h"
#include "output.h"

#include <string.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Values of a technology block plus the derived ones the rows refer to; the
 * sums wrap like upstream's u64 arithmetic.
 */
enum {
	X_SPECIAL = SMC_ST_TECH_CNT,
	X_TOTAL, X_SMC, X_CLIENT, X_SERVER, X_V1, X_V2,
	X_HS, X_HS_CLNT, X_HS_SRV,
	X_FB, X_FB_CLNT, X_FB_SRV,
	X_CNT
};

enum row_kind {
	ROW_PLAIN,               /* fmt takes the value */
	ROW_ABBREV,              /* "%llu (%s)": value and its abbreviation */
	ROW_PCT,                 /* "%llu (%.2f%%)": share of the requests in .base */
	ROW_AVG,                 /* text only: requests per SMC connection, a float */
	ROW_TEXT,                /* text only: fmt as it is */
	ROW_OPEN,                /* JSON only: object .key */
	ROW_CLOSE,               /* JSON only: its end */
	ROW_REASONS,             /* the fallback reasons */
};

struct row {
	const char *key;         /* JSON key, NULL: text only */
	const char *fmt;         /* text, NULL: JSON only */
	int off;                 /* index into the values */
	enum row_kind kind;
	int base;                /* ROW_PCT */
	bool details;            /* text only with -d (JSON always) */
};

/* What one report shows. */
struct view {
	const struct smc_stats_data *d;
	uint64_t v[X_CNT];
	float avg;               /* a C float, as upstream prints it */
	bool details;
};

/*
 * Text: " (client N, server N)" with -d, then the line end; JSON: the
 * members "client" and "server".
 */
#define CLIENT_SERVER(c, s) \
	{ "client", " (client %llu", c, ROW_PLAIN, 0, true }, \
	{ "server", ", server %llu)", s, ROW_PLAIN, 0, true }, \
	{ NULL, "\n", 0, ROW_TEXT, 0, false }
#define OPEN(key) { key, NULL, 0, ROW_OPEN, 0, false }
#define CLOSE { NULL, NULL, 0, ROW_CLOSE, 0, false }

static const struct row summary_rows[] = {
	OPEN("connections"),
	{ "total", "  Total connections handled  %12llu\n", X_TOTAL, ROW_PLAIN, 0, false },
	{ "smc", "  SMC connections            %12llu", X_SMC, ROW_PLAIN, 0, false },
	CLIENT_SERVER(X_CLIENT, X_SERVER),
	{ "v1", "    v1                       %12llu\n", X_V1, ROW_PLAIN, 0, true },
	{ "v2", "    v2                       %12llu\n", X_V2, ROW_PLAIN, 0, true },
	CLOSE,
	OPEN("handshake_errors"),
	{ NULL, "  Handshake errors           %12llu", X_HS, ROW_PLAIN, 0, false },
	CLIENT_SERVER(X_HS_CLNT, X_HS_SRV),
	CLOSE,
	{ NULL, "  Avg requests per SMC conn  %14.1f\n", 0, ROW_AVG, 0, false },
	OPEN("fallback"),
	{ NULL, "  TCP fallback               %12llu", X_FB, ROW_PLAIN, 0, false },
	CLIENT_SERVER(X_FB_CLNT, X_FB_SRV),
	{ "reasons", NULL, 0, ROW_REASONS, 0, true },
	CLOSE,
};

#define RMB_RX(c) (SMC_ST_RMB_RX + SMC_RMB_##c)
#define RMB_TX(c) (SMC_ST_RMB_TX + SMC_RMB_##c)

static const struct row rx_rows[] = {
	{ "bytes", "  Data transmitted (Bytes) %14llu (%s)\n", SMC_ST_RX_BYTES, ROW_ABBREV, 0, false },
	{ "requests", "  Total requests             %12llu\n", SMC_ST_RX_CNT, ROW_PLAIN, 0, false },
	{ "buffer_usage", "  Buffer usage (Bytes)       %12llu (%s)\n", SMC_ST_RX_RMBUSE, ROW_ABBREV, 0, false },
	{ "buffer_full", "  Buffer full                %12llu (%.2f%%)\n", RMB_RX(FULL), ROW_PCT, SMC_ST_RX_CNT, false },
	/* JSON only, in the order of the TX rows */
	{ "buffer_full_remote", NULL, RMB_RX(FULL_PEER), ROW_PLAIN, 0, false },
	{ "buffer_too_small", NULL, RMB_RX(SIZE_SM), ROW_PLAIN, 0, false },
	{ "buffer_too_small_remote", NULL, RMB_RX(SIZE_SM_PEER), ROW_PLAIN, 0, false },
	{ "buffer_downgrades", "  Buffer downgrades          %12llu\n", RMB_RX(DGRADE), ROW_PLAIN, 0, true },
	{ "buffer_reuses", "  Buffer reuses              %12llu\n", RMB_RX(REUSE), ROW_PLAIN, 0, true },
	{ "buffer_allocs", NULL, RMB_RX(ALLOC), ROW_PLAIN, 0, false },
};

static const struct row tx_rows[] = {
	{ "bytes", "  Data transmitted (Bytes) %14llu (%s)\n", SMC_ST_TX_BYTES, ROW_ABBREV, 0, false },
	{ "requests", "  Total requests             %12llu\n", SMC_ST_TX_CNT, ROW_PLAIN, 0, false },
	{ "buffer_usage", "  Buffer usage (Bytes)       %12llu (%s)\n", SMC_ST_TX_RMBUSE, ROW_ABBREV, 0, false },
	{ "buffer_full", "  Buffer full                %12llu (%.2f%%)\n", RMB_TX(FULL), ROW_PCT, SMC_ST_TX_CNT, false },
	/* always printed, although the man page says details only */
	{ "buffer_full_remote", "  Buffer full (remote)       %12llu (%.2f%%)\n", RMB_TX(FULL_PEER), ROW_PCT, SMC_ST_TX_CNT, false },
	{ "buffer_too_small", "  Buffer too small           %12llu (%.2f%%)\n", RMB_TX(SIZE_SM), ROW_PCT, SMC_ST_TX_CNT, false },
	{ "buffer_too_small_remote", "  Buffer too small (remote)  %12llu (%.2f%%)\n", RMB_TX(SIZE_SM_PEER), ROW_PCT, SMC_ST_TX_CNT, false },
	{ "buffer_downgrades", "  Buffer downgrades          %12llu\n", RMB_TX(DGRADE), ROW_PLAIN, 0, true },
	{ "buffer_reuses", "  Buffer reuses              %12llu\n", RMB_TX(REUSE), ROW_PLAIN, 0, true },
	{ "buffer_allocs", NULL, RMB_TX(ALLOC), ROW_PLAIN, 0, false },
};

static const struct row extra_rows[] = {
	{ "special_socket_calls", "  Special socket calls       %12llu\n", X_SPECIAL, ROW_PLAIN, 0, false },
	{ "cork", "    cork                     %12llu\n", SMC_ST_CORK, ROW_PLAIN, 0, true },
	{ "nodelay", "    nodelay                  %12llu\n", SMC_ST_NDLY, ROW_PLAIN, 0, true },
	{ "sendpage", "    sendpage                 %12llu\n", SMC_ST_SENDPAGE, ROW_PLAIN, 0, true },
	{ "splice", "    splice                   %12llu\n", SMC_ST_SPLICE, ROW_PLAIN, 0, true },
	{ "urgent_data", "    urgent data              %12llu\n", SMC_ST_URG_DATA, ROW_PLAIN, 0, true },
};

struct section {
	const char *title;       /* text */
	const char *key;         /* JSON */
	const struct row *rows;
	size_t nrows;
	int bufs, reqs;          /* histograms, -1: none */
};

static const struct section sections[] = {
	{ "RX Stats", "rx", rx_rows, ARRAY_SIZE(rx_rows), SMC_ST_RX_RMBSIZE, SMC_ST_RX_PD },
	{ "TX Stats", "tx", tx_rows, ARRAY_SIZE(tx_rows), SMC_ST_TX_RMBSIZE, SMC_ST_TX_PD },
	{ "Extras", "extras", extra_rows, ARRAY_SIZE(extra_rows), -1, -1 },
};

static const char *const bucket_keys[SMC_STATS_BUCKETS] = {
	"8K", "16K", "32K", "64K", "128K", "256K", "512K", "1024K", "G_1024K",
};

static void fill_values(const struct smc_stats_data *d, bool smcd, struct view *w)
{
	const uint64_t *t = smc_stats_tech(d, smcd);
	uint64_t *v = w->v;

	memcpy(v, t, SMC_ST_TECH_CNT * sizeof(*v));
	v[X_SPECIAL] = v[SMC_ST_CORK] + v[SMC_ST_NDLY] + v[SMC_ST_SENDPAGE] +
		       v[SMC_ST_SPLICE] + v[SMC_ST_URG_DATA];
	v[X_CLIENT] = t[SMC_ST_CLNT_V1] + t[SMC_ST_CLNT_V2];
	v[X_SERVER] = t[SMC_ST_SRV_V1] + t[SMC_ST_SRV_V2];
	v[X_V1] = t[SMC_ST_CLNT_V1] + t[SMC_ST_SRV_V1];
	v[X_V2] = t[SMC_ST_CLNT_V2] + t[SMC_ST_SRV_V2];
	v[X_SMC] = v[X_CLIENT] + v[X_SERVER];
	v[X_HS_CLNT] = d->cnt[SMC_STATS_HS_CLNT];
	v[X_HS_SRV] = d->cnt[SMC_STATS_HS_SRV];
	v[X_HS] = v[X_HS_CLNT] + v[X_HS_SRV];
	v[X_FB_CLNT] = d->clnt_fback;
	v[X_FB_SRV] = d->srv_fback;
	v[X_FB] = v[X_FB_CLNT] + v[X_FB_SRV];
	v[X_TOTAL] = v[X_SMC] + v[X_HS] + v[X_FB];
	w->avg = 0;
	if (v[X_SMC])
		w->avg = (float)((t[SMC_ST_RX_CNT] + t[SMC_ST_TX_CNT]) / (double)v[X_SMC]);
}

/* The recorded reasons of one side, by count descending, stable; returns how many. */
static int sorted_reasons(const struct smc_stats_rsn *table, struct smc_stats_rsn *out)
{
	int n = 0;

	for (int k = 0; k < SMC_STATS_RSN_SLOTS; k++) {
		int i;

		if (table[k].code == 0)
			continue;
		i = n++;
		while (i > 0 && out[i - 1].count < table[k].count) {
			out[i] = out[i - 1];
			i--;
		}
		out[i] = table[k];
	}
	return n;
}

/* out_u64 for a signed int (lib/output.h has no signed variant). */
static void out_int(struct smc_out *o, const char *key, const char *text_fmt, int val)
{
	if (out_is_json(o))
		json_i64(o->j, key, val);
	else
		fprintf(o->f, text_fmt, val);
}

static void put_reason(struct smc_out *o, const char *side, const struct smc_stats_rsn *r)
{
	uint32_t code = (uint32_t)r->code;
	char hex[16];

	snprintf(hex, sizeof(hex), "0x%08x", code);
	out_open_object(o, NULL);
	out_json_str(o, "side", side);
	out_json_u64(o, "code", code);
	out_json_str(o, "code_hex", hex);
	out_str(o, "name", "     %-12s            ", smc_reason_name(code));
	out_int(o, "count", "%12d\n", r->count);
	out_close_object(o);
}

/* One side's reasons: the text has a caption and the three most frequent, JSON all. */
static void put_side(struct smc_out *o, const char *side, const char *caption,
		     const struct smc_stats_rsn *table)
{
	struct smc_stats_rsn r[SMC_STATS_RSN_SLOTS];
	int n = sorted_reasons(table, r);

	if (n > 0)
		out_text(o, "    %s\n", caption);
	for (int i = 0; i < n && (i < 3 || out_is_json(o)); i++)
		put_reason(o, side, &r[i]);
}

static void put_reasons(struct smc_out *o, const struct row *r, const struct smc_stats_data *d)
{
	out_open_array(o, r->key);
	put_side(o, "server", "Server", d->srv);
	put_side(o, "client", "Client", d->clnt);
	out_close_array(o);
}

static float share(uint64_t part, uint64_t whole)
{
	return whole ? (float)(part / (double)whole * 100) : 0;
}

/* A counter: text line (or part of one) and JSON member, either may be absent. */
static void put_value(struct smc_out *o, const struct row *r, const uint64_t *v)
{
	unsigned long long val = v[r->off];
	char abbr[SMC_ABBREV_LEN];

	if (!r->key || !r->fmt) {
		if (r->fmt)
			out_text(o, r->fmt, val);
		else
			out_json_u64(o, r->key, val);
		return;
	}
	switch (r->kind) {
	case ROW_ABBREV:
		smc_stats_abbrev(val, abbr);
		out_text(o, r->fmt, val, abbr);
		break;
	case ROW_PCT:
		out_text(o, r->fmt, val, share(val, v[r->base]));
		break;
	default:
		out_u64(o, r->key, r->fmt, val);
		return;
	}
	out_json_u64(o, r->key, val);
}

static void put_row(struct smc_out *o, const struct row *r, const struct view *w)
{
	switch (r->kind) {
	case ROW_AVG:
		out_text(o, r->fmt, w->avg);
		break;
	case ROW_TEXT:
		out_text(o, "%s", r->fmt);
		break;
	case ROW_OPEN:
		out_open_object(o, r->key);
		break;
	case ROW_CLOSE:
		out_close_object(o);
		break;
	case ROW_REASONS:
		put_reasons(o, r, w->d);
		break;
	default:
		put_value(o, r, w->v);
	}
}

static void put_rows(struct smc_out *o, const struct row *rows, size_t n, const struct view *w)
{
	for (size_t i = 0; i < n; i++)
		if (out_is_json(o) || w->details || !rows[i].details)
			put_row(o, &rows[i], w);
}

/*
 * One histogram: a text line whose last cell is the 1024K and >1024K buckets
 * together; in JSON an object with every bucket.
 */
static void put_histogram(struct smc_out *o, const char *key, const char *label, const uint64_t *b)
{
	char cell[SMC_ABBREV_LEN];

	out_text(o, "  %s ", label);
	for (int i = 0; i < 7; i++) {
		smc_stats_abbrev(b[i], cell);
		out_text(o, "  %6s", cell);
	}
	smc_stats_abbrev(b[7] + b[8], cell);
	out_text(o, "  %6s\n", cell);
	out_open_object(o, key);
	for (int i = 0; i < SMC_STATS_BUCKETS; i++)
		out_json_u64(o, bucket_keys[i], b[i]);
	out_close_object(o);
}

static void put_section(struct smc_out *o, const struct section *sec, const struct view *w)
{
	out_text(o, "\n%s\n", sec->title);
	out_open_object(o, sec->key);
	put_rows(o, sec->rows, sec->nrows, w);
	if (sec->bufs >= 0) {
		out_text(o, "            8KB    16KB    32KB    64KB   128KB   256KB   512KB  >512KB\n");
		put_histogram(o, "buffer_sizes", "Bufs", w->v + sec->bufs);
		put_histogram(o, "request_sizes", "Reqs", w->v + sec->reqs);
	}
	out_close_object(o);
}

/* The whole report, text or JSON after o; absolute is JSON only. */
static void put_report(struct smc_out *o, const struct smc_stats_data *d, bool smcd,
		       bool details, bool absolute)
{
	struct view w = { .d = d, .details = details };

	fill_values(d, smcd, &w);
	out_open_object(o, NULL);
	out_str(o, "technology", "%s Connections Summary\n", smcd ? "SMC-D" : "SMC-R");
	out_json_bool(o, "absolute", absolute);
	put_rows(o, summary_rows, ARRAY_SIZE(summary_rows), &w);
	for (size_t i = 0; i < ARRAY_SIZE(sections); i++)
		put_section(o, &sections[i], &w);
	out_close_object(o);
	out_finish(o);
}

void smc_stats_print_text(FILE *f, const struct smc_stats_data *d, bool smcd, bool details)
{
	struct smc_out o = { .f = f, .j = NULL };

	put_report(&o, d, smcd, details, false);
}

void smc_stats_print_json(FILE *f, const struct smc_stats_data *d, bool smcd, bool absolute)
{
	struct smc_json j;
	struct smc_out o = { .f = f, .j = &j };

	json_init(&j, f);
	put_report(&o, d, smcd, true, absolute);
}
