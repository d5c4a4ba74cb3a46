/*
 * stats: the text report (smcd(8) "stats", byte-compatible with upstream) and
 * the -j document; the sections come from one row table each, printed by
 * one function for both (text line and JSON member per row).
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

/* Values of a technology block plus the derived ones the rows refer to. */
enum { X_SPECIAL = SMC_ST_TECH_CNT, X_CNT };

enum row_kind {
	ROW_PLAIN,               /* "%12llu" */
	ROW_ABBREV,              /* "%llu (%s)": value and its abbreviation */
	ROW_PCT,                 /* "%llu (%.2f%%)": share of the requests in .base */
};

struct row {
	const char *key;         /* JSON key */
	const char *fmt;         /* text line, NULL: JSON only */
	int off;                 /* index into the values */
	enum row_kind kind;
	int base;                /* ROW_PCT */
	bool details;            /* text only with -d */
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

/* What the summary lines show; sums wrap like upstream's u64 arithmetic. */
struct summary {
	uint64_t client, server, v1, v2, conn;
	uint64_t hs_clnt, hs_srv, hs;
	uint64_t fb_clnt, fb_srv, fb;
	uint64_t total;
	float avg;               /* a C float, as upstream prints it */
};

static void summarize(const struct smc_stats_data *d, const uint64_t *t, struct summary *s)
{
	s->client = t[SMC_ST_CLNT_V1] + t[SMC_ST_CLNT_V2];
	s->server = t[SMC_ST_SRV_V1] + t[SMC_ST_SRV_V2];
	s->v1 = t[SMC_ST_CLNT_V1] + t[SMC_ST_SRV_V1];
	s->v2 = t[SMC_ST_CLNT_V2] + t[SMC_ST_SRV_V2];
	s->conn = s->client + s->server;
	s->hs_clnt = d->cnt[SMC_STATS_HS_CLNT];
	s->hs_srv = d->cnt[SMC_STATS_HS_SRV];
	s->hs = s->hs_clnt + s->hs_srv;
	s->fb_clnt = d->clnt_fback;
	s->fb_srv = d->srv_fback;
	s->fb = s->fb_clnt + s->fb_srv;
	s->total = s->conn + s->hs + s->fb;
	s->avg = 0;
	if (s->conn)
		s->avg = (float)((t[SMC_ST_RX_CNT] + t[SMC_ST_TX_CNT]) / (double)s->conn);
}

static void fill_values(const struct smc_stats_data *d, bool smcd, uint64_t *v)
{
	memcpy(v, smc_stats_tech(d, smcd), SMC_ST_TECH_CNT * sizeof(*v));
	v[X_SPECIAL] = v[SMC_ST_CORK] + v[SMC_ST_NDLY] + v[SMC_ST_SENDPAGE] +
		       v[SMC_ST_SPLICE] + v[SMC_ST_URG_DATA];
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

/* ---- text ------------------------------------------------------------------ */

static void text_reasons(FILE *f, const char *caption, const struct smc_stats_rsn *table)
{
	struct smc_stats_rsn r[SMC_STATS_RSN_SLOTS];
	int n = sorted_reasons(table, r);

	if (n > 0)
		fprintf(f, "    %s\n", caption);
	for (int i = 0; i < n && i < 3; i++)
		fprintf(f, "     %-12s            %12d\n", smc_reason_name((uint32_t)r[i].code), r[i].count);
}

static void text_summary(FILE *f, const struct smc_stats_data *d, const struct summary *s,
			 bool smcd, bool details)
{
	fprintf(f, "%s Connections Summary\n", smcd ? "SMC-D" : "SMC-R");
	fprintf(f, "  Total connections handled  %12llu\n", (unsigned long long)s->total);
	if (details) {
		fprintf(f, "  SMC connections            %12llu (client %llu, server %llu)\n",
			(unsigned long long)s->conn, (unsigned long long)s->client,
			(unsigned long long)s->server);
		fprintf(f, "    v1                       %12llu\n", (unsigned long long)s->v1);
		fprintf(f, "    v2                       %12llu\n", (unsigned long long)s->v2);
		fprintf(f, "  Handshake errors           %12llu (client %llu, server %llu)\n",
			(unsigned long long)s->hs, (unsigned long long)s->hs_clnt,
			(unsigned long long)s->hs_srv);
	} else {
		fprintf(f, "  SMC connections            %12llu\n", (unsigned long long)s->conn);
		fprintf(f, "  Handshake errors           %12llu\n", (unsigned long long)s->hs);
	}
	fprintf(f, "  Avg requests per SMC conn  %14.1f\n", s->avg);
	if (details) {
		fprintf(f, "  TCP fallback               %12llu (client %llu, server %llu)\n",
			(unsigned long long)s->fb, (unsigned long long)s->fb_clnt,
			(unsigned long long)s->fb_srv);
		text_reasons(f, "Server", d->srv);
		text_reasons(f, "Client", d->clnt);
	} else {
		fprintf(f, "  TCP fallback               %12llu\n", (unsigned long long)s->fb);
	}
}

static float share(uint64_t part, uint64_t whole)
{
	return whole ? (float)(part / (double)whole * 100) : 0;
}

static void text_row(struct smc_out *o, const struct row *r, const uint64_t *v)
{
	unsigned long long val = v[r->off];
	char abbr[SMC_ABBREV_LEN];

	switch (r->kind) {
	case ROW_ABBREV:
		smc_stats_abbrev(val, abbr);
		out_text(o, r->fmt, val, abbr);
		break;
	case ROW_PCT:
		out_text(o, r->fmt, val, share(val, v[r->base]));
		break;
	default:
		out_text(o, r->fmt, val);
	}
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

/* A section from its row table: text lines (some with -d only), JSON every row. */
static void put_section(struct smc_out *o, const struct section *sec, const uint64_t *v,
			bool details)
{
	out_text(o, "\n%s\n", sec->title);
	out_open_object(o, sec->key);
	for (size_t i = 0; i < sec->nrows; i++) {
		const struct row *r = &sec->rows[i];

		out_json_u64(o, r->key, v[r->off]);
		if (r->fmt && (details || !r->details))
			text_row(o, r, v);
	}
	if (sec->bufs >= 0) {
		out_text(o, "            8KB    16KB    32KB    64KB   128KB   256KB   512KB  >512KB\n");
		put_histogram(o, "buffer_sizes", "Bufs", v + sec->bufs);
		put_histogram(o, "request_sizes", "Reqs", v + sec->reqs);
	}
	out_close_object(o);
}

void smc_stats_print_text(FILE *f, const struct smc_stats_data *d, bool smcd, bool details)
{
	struct smc_out o = { .f = f, .j = NULL };
	uint64_t v[X_CNT];
	struct summary s;

	fill_values(d, smcd, v);
	summarize(d, v, &s);
	text_summary(f, d, &s, smcd, details);
	for (size_t i = 0; i < ARRAY_SIZE(sections); i++)
		put_section(&o, &sections[i], v, details);
}

/* ---- JSON ------------------------------------------------------------------ */

static void json_reasons(struct smc_json *j, const char *side, const struct smc_stats_rsn *table)
{
	struct smc_stats_rsn r[SMC_STATS_RSN_SLOTS];
	int n = sorted_reasons(table, r);
	char hex[16];

	for (int i = 0; i < n; i++) {
		uint32_t code = (uint32_t)r[i].code;

		snprintf(hex, sizeof(hex), "0x%08x", code);
		json_open_object(j, NULL);
		json_str(j, "side", side);
		json_u64(j, "code", code);
		json_str(j, "code_hex", hex);
		json_str(j, "name", smc_reason_name(code));
		json_i64(j, "count", r[i].count);
		json_close_object(j);
	}
}

static void json_summary(struct smc_json *j, const struct smc_stats_data *d, const struct summary *s)
{
	json_open_object(j, "connections");
	json_u64(j, "total", s->total);
	json_u64(j, "smc", s->conn);
	json_u64(j, "client", s->client);
	json_u64(j, "server", s->server);
	json_u64(j, "v1", s->v1);
	json_u64(j, "v2", s->v2);
	json_close_object(j);
	json_open_object(j, "handshake_errors");
	json_u64(j, "client", s->hs_clnt);
	json_u64(j, "server", s->hs_srv);
	json_close_object(j);
	json_open_object(j, "fallback");
	json_u64(j, "client", s->fb_clnt);
	json_u64(j, "server", s->fb_srv);
	json_open_array(j, "reasons");
	json_reasons(j, "server", d->srv);
	json_reasons(j, "client", d->clnt);
	json_close_array(j);
	json_close_object(j);
}

void smc_stats_print_json(FILE *f, const struct smc_stats_data *d, bool smcd, bool absolute)
{
	struct smc_json j;
	struct smc_out o = { .f = f, .j = &j };
	uint64_t v[X_CNT];
	struct summary s;

	fill_values(d, smcd, v);
	summarize(d, v, &s);
	json_init(&j, f);
	json_open_object(&j, NULL);
	json_str(&j, "technology", smcd ? "SMC-D" : "SMC-R");
	json_bool(&j, "absolute", absolute);
	json_summary(&j, d, &s);
	for (size_t i = 0; i < ARRAY_SIZE(sections); i++)
		put_section(&o, &sections[i], v, true);
	json_close_object(&j);
	json_finish(&j);
}
