/*
 * Output that feeds text and JSON from one call: each value is printed with
 * its text format in text mode, or as "key": value in JSON mode.
 */
#ifndef SMC_OUTPUT_H
#define SMC_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define SMC_JSON_MAX_DEPTH 16

struct smc_json {
	FILE *f;
	int depth;
	bool has_items[SMC_JSON_MAX_DEPTH];
};

void json_init(struct smc_json *j, FILE *f);
/* key is NULL inside arrays and for the outermost value. */
void json_open_object(struct smc_json *j, const char *key);
void json_close_object(struct smc_json *j);
void json_open_array(struct smc_json *j, const char *key);
void json_close_array(struct smc_json *j);
void json_str(struct smc_json *j, const char *key, const char *val);
void json_u64(struct smc_json *j, const char *key, unsigned long long val);
void json_i64(struct smc_json *j, const char *key, long long val);
void json_bool(struct smc_json *j, const char *key, bool val);
void json_null(struct smc_json *j, const char *key);
void json_double(struct smc_json *j, const char *key, double val, int decimals);
/* Close all levels and end the document with a newline. */
void json_finish(struct smc_json *j);

/*
 * A document held in memory until the request behind it succeeded, so that a
 * failure never leaves half a JSON document on stdout.
 */
struct smc_held {
	FILE *f;
	char *buf;
	size_t len;
};

FILE *held_open(struct smc_held *h);
/* Write what was held to out (when ok) and free it. */
void held_close(struct smc_held *h, FILE *out, bool ok);

struct smc_out {
	FILE *f;
	struct smc_json *j;      /* NULL: text mode */
};

static inline bool out_is_json(const struct smc_out *o) { return o->j != NULL; }
/* text_fmt takes one string; in JSON mode val is emitted under key. */
void out_str(struct smc_out *o, const char *key, const char *text_fmt, const char *val);
/* text_fmt takes one unsigned long long. */
void out_u64(struct smc_out *o, const char *key, const char *text_fmt, unsigned long long val);
/* text_fmt takes one string: yes or no; JSON has true or false. */
void out_bool(struct smc_out *o, const char *key, const char *text_fmt, bool val,
	      const char *yes, const char *no);
/* An absent value: text_fmt prints the placeholder text; JSON has null. */
void out_none(struct smc_out *o, const char *key, const char *text_fmt, const char *text);
/* val, or none (placeholder text, null) when val is NULL or empty. */
void out_str_or_none(struct smc_out *o, const char *key, const char *text_fmt,
		     const char *val, const char *text);
/* JSON only: a member that the text does not show. */
void out_json_u64(struct smc_out *o, const char *key, unsigned long long val);
void out_json_str(struct smc_out *o, const char *key, const char *val);
void out_json_bool(struct smc_out *o, const char *key, bool val);
/* JSON only: end the document (json_finish). */
void out_finish(struct smc_out *o);
/* JSON only: open or close an object or array (key NULL inside arrays). */
void out_open_object(struct smc_out *o, const char *key);
void out_close_object(struct smc_out *o);
void out_open_array(struct smc_out *o, const char *key);
void out_close_array(struct smc_out *o);
/*
 * JSON only: the frame of a listing document, {"array_key":[ ... ]}, and its
 * end (with the newline); the entries go in between.
 */
void out_doc_begin(struct smc_out *o, const char *array_key);
void out_doc_end(struct smc_out *o);
/* Text only: separators, labels, line ends; nothing in JSON mode. */
void out_text(struct smc_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
