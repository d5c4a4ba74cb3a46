#include "output.h"

#include <stdarg.h>
#include <stdlib.h>

void json_init(struct smc_json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->has_items[0] = false;
}

static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

static void begin_value(struct smc_json *j, const char *key)
{
	if (j->has_items[j->depth])
		fputc(',', j->f);
	j->has_items[j->depth] = true;
	if (key) {
		put_string(j->f, key);
		fputc(':', j->f);
	}
}

static void open_level(struct smc_json *j, const char *key, char c)
{
	begin_value(j, key);
	fputc(c, j->f);
	if (j->depth < SMC_JSON_MAX_DEPTH - 1)
		j->depth++;
	j->has_items[j->depth] = false;
}

static void close_level(struct smc_json *j, char c)
{
	fputc(c, j->f);
	if (j->depth > 0)
		j->depth--;
}

void json_open_object(struct smc_json *j, const char *key) { open_level(j, key, '{'); }
void json_close_object(struct smc_json *j) { close_level(j, '}'); }
void json_open_array(struct smc_json *j, const char *key) { open_level(j, key, '['); }
void json_close_array(struct smc_json *j) { close_level(j, ']'); }

void json_str(struct smc_json *j, const char *key, const char *val)
{
	begin_value(j, key);
	put_string(j->f, val ? val : "");
}

void json_u64(struct smc_json *j, const char *key, unsigned long long val)
{
	begin_value(j, key);
	fprintf(j->f, "%llu", val);
}

void json_i64(struct smc_json *j, const char *key, long long val)
{
	begin_value(j, key);
	fprintf(j->f, "%lld", val);
}

void json_bool(struct smc_json *j, const char *key, bool val)
{
	begin_value(j, key);
	fputs(val ? "true" : "false", j->f);
}

void json_null(struct smc_json *j, const char *key)
{
	begin_value(j, key);
	fputs("null", j->f);
}

void json_double(struct smc_json *j, const char *key, double val, int decimals)
{
	begin_value(j, key);
	fprintf(j->f, "%.*f", decimals, val);
}

void json_finish(struct smc_json *j)
{
	fputc('\n', j->f);
	fflush(j->f);
}

void out_str(struct smc_out *o, const char *key, const char *text_fmt, const char *val)
{
	if (o->j)
		json_str(o->j, key, val);
	else
		fprintf(o->f, text_fmt, val);
}

void out_u64(struct smc_out *o, const char *key, const char *text_fmt, unsigned long long val)
{
	if (o->j)
		json_u64(o->j, key, val);
	else
		fprintf(o->f, text_fmt, val);
}

void out_bool(struct smc_out *o, const char *key, const char *text_fmt, bool val,
	      const char *yes, const char *no)
{
	if (o->j)
		json_bool(o->j, key, val);
	else
		fprintf(o->f, text_fmt, val ? yes : no);
}

void out_none(struct smc_out *o, const char *key, const char *text_fmt, const char *text)
{
	if (o->j)
		json_null(o->j, key);
	else
		fprintf(o->f, text_fmt, text);
}

void out_str_or_none(struct smc_out *o, const char *key, const char *text_fmt,
		     const char *val, const char *text)
{
	if (val && *val)
		out_str(o, key, text_fmt, val);
	else
		out_none(o, key, text_fmt, text);
}

void out_json_u64(struct smc_out *o, const char *key, unsigned long long val)
{
	if (o->j)
		json_u64(o->j, key, val);
}

void out_json_str(struct smc_out *o, const char *key, const char *val)
{
	if (o->j)
		json_str(o->j, key, val);
}

void out_json_bool(struct smc_out *o, const char *key, bool val)
{
	if (o->j)
		json_bool(o->j, key, val);
}

void out_finish(struct smc_out *o)
{
	if (o->j)
		json_finish(o->j);
}

void out_open_object(struct smc_out *o, const char *key)
{
	if (o->j)
		json_open_object(o->j, key);
}

void out_close_object(struct smc_out *o)
{
	if (o->j)
		json_close_object(o->j);
}

void out_open_array(struct smc_out *o, const char *key)
{
	if (o->j)
		json_open_array(o->j, key);
}

void out_close_array(struct smc_out *o)
{
	if (o->j)
		json_close_array(o->j);
}

void out_doc_begin(struct smc_out *o, const char *array_key)
{
	out_open_object(o, NULL);
	out_open_array(o, array_key);
}

void out_doc_end(struct smc_out *o)
{
	out_close_array(o);
	out_close_object(o);
	out_finish(o);
}

void out_text(struct smc_out *o, const char *fmt, ...)
{
	va_list ap;

	if (o->j)
		return;
	va_start(ap, fmt);
	vfprintf(o->f, fmt, ap);
	va_end(ap);
}

FILE *held_open(struct smc_held *h)
{
	h->buf = NULL;
	h->len = 0;
	h->f = open_memstream(&h->buf, &h->len);
	return h->f;
}

void held_close(struct smc_held *h, FILE *out, bool ok)
{
	if (h->f)
		fclose(h->f);
	if (ok && h->buf)
		fwrite(h->buf, 1, h->len, out);
	free(h->buf);
	h->f = NULL;
	h->buf = NULL;
}
