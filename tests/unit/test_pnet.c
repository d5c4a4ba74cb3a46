/* smc_pnet: client-side validation and the GET reply as the kernel sends it. */
#include "unit.h"
#include "msgbuild.h"
#include "pnet.h"

#include <errno.h>
#include <linux/smc.h>

TEST(pnet_id_validation)
{
	char id[PNET_ID_MAX + 1];
	const char *why;

	CHECK_INT(pnet_check_id("net1", id, &why), 0);
	CHECK_STR(id, "NET1");
	CHECK_INT(pnet_check_id("  Abc09  ", id, &why), 0);
	CHECK_STR(id, "ABC09");
	CHECK_INT(pnet_check_id("ABCDEFGHIJKLMNOP", id, &why), 0);
	CHECK_STR(id, "ABCDEFGHIJKLMNOP");
	CHECK_INT(pnet_check_id("ABCDEFGHIJKLMNOPQ", id, &why), -1);
	CHECK_STR(why, "longer than 16 characters");
	CHECK_INT(pnet_check_id("net-1", id, &why), -1);
	CHECK_STR(why, "only letters A-Z, a-z and digits 0-9 are allowed");
	CHECK_INT(pnet_check_id("ne t", id, &why), -1);
	CHECK_INT(pnet_check_id("n\xc3\xa4t", id, &why), -1);
	CHECK_INT(pnet_check_id("   ", id, &why), -1);
	CHECK_STR(why, "empty");
}

TEST(pnet_name_and_port_validation)
{
	const char *why;
	unsigned int port = 0;

	CHECK_INT(pnet_check_ifname("eth0", &why), 0);
	CHECK_INT(pnet_check_ifname("abcdefghijklmno", &why), 0);
	CHECK_INT(pnet_check_ifname("abcdefghijklmnop", &why), -1);
	CHECK_STR(why, "longer than 15 characters");
	CHECK_INT(pnet_check_ifname("eth/0", &why), -1);
	CHECK_INT(pnet_check_ifname("eth 0", &why), -1);
	CHECK_INT(pnet_check_ifname("..", &why), -1);
	CHECK_INT(pnet_check_ifname("", &why), -1);
	CHECK_INT(pnet_check_ibname("0001:00:00.0", &why), 0);
	CHECK_INT(pnet_check_ibname("mlx5_0", &why), 0);
	CHECK_INT(pnet_parse_port("1", &port), 0);
	CHECK_INT(port, 1);
	CHECK_INT(pnet_parse_port("0x2", &port), 0);
	CHECK_INT(port, 2);
	CHECK_INT(pnet_parse_port("3", &port), -1);
	CHECK_INT(pnet_parse_port("0", &port), -1);
	CHECK_INT(pnet_parse_port("", &port), -1);
	CHECK_INT(pnet_parse_port("1x", &port), -1);
}

/* One GET message laid out as the kernel's smc_pnet_set_nla() does. */
static void entry(struct smc_reply *rep, const char *id, const char *eth, const char *ib, uint8_t port)
{
	struct mb m;

	mb_start(&m, 0x1c, NLM_F_MULTI);
	mb_genl(&m, SMC_PNETID_GET);
	mb_str(&m, SMC_PNETID_NAME, id);
	mb_str(&m, SMC_PNETID_ETHNAME, eth);
	mb_str(&m, SMC_PNETID_IBNAME, ib);
	mb_u8(&m, SMC_PNETID_IBPORT, port);
	mb_finish(&m, rep);
}

static void print_all(struct smc_reply *rep, struct smc_out *o)
{
	const struct nlmsghdr *nlh = NULL;
	struct pnet_entry e;

	while ((nlh = smc_reply_next(rep, nlh))) {
		CHECK_INT(pnet_parse(nlh, &e), 0);
		pnet_print(o, &e);
	}
}

TEST(pnet_show_table_text_and_json)
{
	struct smc_reply rep;
	struct capture c;
	struct smc_json j;
	struct smc_out o;

	smc_reply_init(&rep);
	entry(&rep, "ABC", "encf500", "n/a", 0xff);
	entry(&rep, "ABC", "n/a", "0001:00:00.0", 2);
	entry(&rep, "ABC", "n/a", "0004:00:00.0", 1);
	cap_open(&c);
	o.f = c.f;
	o.j = NULL;
	print_all(&rep, &o);
	CHECK_STR(cap_text(&c), "ABC encf500 n/a 255\n"
		  "ABC n/a 0001:00:00.0 2\n"
		  "ABC n/a 0004:00:00.0 1\n");
	cap_free(&c);

	cap_open(&c);
	json_init(&j, c.f);
	o.f = c.f;
	o.j = &j;
	json_open_array(&j, NULL);
	print_all(&rep, &o);
	json_close_array(&j);
	CHECK_STR(cap_text(&c), "[{\"pnet_id\":\"ABC\",\"net_dev\":\"encf500\",\"ib_dev\":null,\"ib_port\":null},"
		  "{\"pnet_id\":\"ABC\",\"net_dev\":null,\"ib_dev\":\"0001:00:00.0\",\"ib_port\":2},"
		  "{\"pnet_id\":\"ABC\",\"net_dev\":null,\"ib_dev\":\"0004:00:00.0\",\"ib_port\":1}]");
	cap_free(&c);
	smc_reply_free(&rep);
}

TEST(pnet_reply_policy_violations)
{
	struct smc_reply rep;
	struct pnet_entry e;
	struct mb m;

	smc_reply_init(&rep);
	entry(&rep, "ABCDEFGHIJKLMNOPQ", "eth0", "n/a", 0xff);  /* NAME over 17 bytes */
	CHECK_INT(pnet_parse(smc_reply_next(&rep, NULL), &e), -EBADMSG);
	smc_reply_free(&rep);

	mb_start(&m, 0x1c, NLM_F_MULTI);
	mb_genl(&m, SMC_PNETID_GET);
	mb_attr(&m, SMC_PNETID_NAME, "NET1", 4);                /* no NUL */
	mb_finish(&m, &rep);
	CHECK_INT(pnet_parse(smc_reply_next(&rep, NULL), &e), -EBADMSG);
	smc_reply_free(&rep);

	mb_start(&m, 0x1c, NLM_F_MULTI);
	mb_genl(&m, SMC_PNETID_GET);
	mb_str(&m, SMC_PNETID_ETHNAME, "eth0");                 /* no NAME at all */
	mb_finish(&m, &rep);
	CHECK_INT(pnet_parse(smc_reply_next(&rep, NULL), &e), -EBADMSG);
	smc_reply_free(&rep);

	mb_start(&m, 0x1c, NLM_F_MULTI);
	mb_genl(&m, SMC_PNETID_GET);
	mb_str(&m, SMC_PNETID_NAME, "NET1");
	mb_attr(&m, SMC_PNETID_IBPORT, NULL, 0);                /* empty u8 */
	mb_finish(&m, &rep);
	CHECK_INT(pnet_parse(smc_reply_next(&rep, NULL), &e), -EBADMSG);
	smc_reply_free(&rep);

	mb_start(&m, 0x1c, NLM_F_MULTI);
	mb_genl(&m, SMC_PNETID_GET);
	mb_str(&m, SMC_PNETID_NAME, "NET1");                    /* ETH entry, nothing else */
	mb_finish(&m, &rep);
	CHECK_INT(pnet_parse(smc_reply_next(&rep, NULL), &e), 0);
	CHECK_STR(e.eth, "n/a");
	CHECK_STR(e.ib, "n/a");
	CHECK_INT(e.port, 255);
	smc_reply_free(&rep);
}
