/* The JSON writer and the text/JSON output helpers. */
#include "unit.h"
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
