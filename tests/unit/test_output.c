/* The JSON writer and the text/JSON output helpers. */
#include "unit.h"
#include "cols.h"
#include "output.h"

TEST(output_json_document)
{
	struct capture c;
	struct smc_json j;

	cap_open(&c);
	json_init(&j, c.f);
	json_open_object(&j, NULL);
	json_str(&j, "s", "a\"b\\c\n\x01");
	json_u64(&j, "u", 18446744073709551615ull);
	json_i64(&j, "i", -5);
	json_bool(&j, "t", true);
	json_null(&j, "n");
	json_double(&j, "d", 2.25, 1);
	json_open_array(&j, "a");
	json_u64(&j, NULL, 1);
	json_open_object(&j, NULL);
	json_close_object(&j);
	json_close_array(&j);
	json_close_object(&j);
	json_finish(&j);
	CHECK_STR(cap_text(&c), "{\"s\":\"a\\\"b\\\\c\\n\\u0001\",\"u\":18446744073709551615,"
		  "\"i\":-5,\"t\":true,\"n\":null,\"d\":2.2,\"a\":[1,{}]}\n");
	cap_free(&c);
}

TEST(output_one_call_feeds_text_and_json)
{
	struct capture c;
	struct smc_json j;
	struct smc_out o;

	cap_open(&c);
	o.f = c.f;
	o.j = NULL;
	out_str(&o, "name", "%-6s|", "eth0");
	out_u64(&o, "id", "%08llx", 0x100);
	out_text(&o, "\n");
	CHECK_STR(cap_text(&c), "eth0  |00000100\n");
	cap_free(&c);

	cap_open(&c);
	json_init(&j, c.f);
	o.f = c.f;
	o.j = &j;
	json_open_object(&j, NULL);
	out_str(&o, "name", "%-6s|", "eth0");
	out_u64(&o, "id", "%08llx", 0x100);
	out_text(&o, "\n");
	json_close_object(&j);
	CHECK_STR(cap_text(&c), "{\"name\":\"eth0\",\"id\":256}");
	cap_free(&c);
}

/* One listing through the column table: the text cells and the JSON object. */
static void cols_run(bool json, struct capture *c)
{
	enum { V_ID, V_NAME, V_PORT, V_FLAG, V_HEX, V_COUNT };
	static const struct smc_col cols[] = {
		{ "id", "ID    ", "%04llx  ", V_ID, 0, 0, NULL },
		{ "name", "Name  ", "%-6s", V_NAME, 0, 0, "n/a" },
		{ "port", "Port  ", "%-4s  ", V_PORT, 0, 0, NULL },
		{ "flag", "Flag ", "%s ", V_FLAG, 0, 0, NULL },
		{ "hex", "Hex", "%s", V_HEX, 1, 0, NULL },
	};
	static const struct smc_listing l = SMC_LISTING(cols);
	struct smc_val v[V_COUNT] = {
		[V_ID] = smc_num(0x1f), [V_NAME] = smc_str_or_none(""),
		[V_PORT] = smc_none_as("none"), [V_FLAG] = smc_bool_as(true, "y"),
		[V_HEX] = smc_num_as(0x7c0, "07c0"),
	};
	struct smc_json j;
	struct smc_out o = { .f = c->f, .j = NULL };

	if (json) {
		json_init(&j, c->f);
		o.j = &j;
	}
	out_doc_begin(&o, "rows");
	smc_cols_header(&o, &l, 1);
	out_open_object(&o, NULL);
	smc_cols_put(&o, &l, v, 1, 0, 0);
	out_close_object(&o);
	out_text(&o, "\n");
	out_doc_end(&o);
}

TEST(output_cols_none_num_as_bool_as)
{
	struct capture c;

	cap_open(&c);
	cols_run(false, &c);
	CHECK_STR(cap_text(&c), "ID    Name  Port  Flag Hex\n"
		  "001f  n/a   none  y 07c0\n");
	cap_free(&c);
	cap_open(&c);
	cols_run(true, &c);
	CHECK_STR(cap_text(&c), "{\"rows\":[{\"id\":31,\"name\":null,\"port\":null,\"flag\":true,"
		  "\"hex\":1984}]}\n");
	cap_free(&c);
}

TEST(output_none_and_json_only)
{
	struct capture c;
	struct smc_json j;
	struct smc_out o;

	cap_open(&c);
	o = (struct smc_out){ .f = c.f, .j = NULL };
	out_str_or_none(&o, "a", "[%s]", NULL, "n/a");
	out_str_or_none(&o, "b", "[%s]", "x", "n/a");
	out_bool(&o, "c", "[%s]", false, "on", "off");
	out_json_u64(&o, "d", 1);
	out_json_str(&o, "e", "t");
	out_json_bool(&o, "f", true);
	out_finish(&o);
	CHECK_STR(cap_text(&c), "[n/a][x][off]");
	cap_free(&c);

	cap_open(&c);
	json_init(&j, c.f);
	o = (struct smc_out){ .f = c.f, .j = &j };
	out_open_object(&o, NULL);
	out_str_or_none(&o, "a", "[%s]", NULL, "n/a");
	out_str_or_none(&o, "b", "[%s]", "x", "n/a");
	out_bool(&o, "c", "[%s]", false, "on", "off");
	out_json_u64(&o, "d", 1);
	out_json_str(&o, "e", "t");
	out_json_bool(&o, "f", true);
	out_text(&o, "text only");
	out_close_object(&o);
	out_finish(&o);
	CHECK_STR(cap_text(&c), "{\"a\":null,\"b\":\"x\",\"c\":false,\"d\":1,\"e\":\"t\",\"f\":true}\n");
	cap_free(&c);
}
