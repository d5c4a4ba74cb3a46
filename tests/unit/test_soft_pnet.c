/*
 * smc_softd, family SMC_PNETID: requests as smc_pnet sends them, replies
 * checked byte by byte against the kernel's layout (smc_pnet.c, <linux/smc.h>).
 */
#include "softfx.h"
#include "pnet.h"
#include "soft/fabric/devices.h"
#include "soft/fabric/pnettab.h"

#include <errno.h>
#include <stdlib.h>
#include <linux/smc.h>

#define NO_PORT -1

/* ADD as smc_pnet builds it: ETHNAME, IBNAME, IBPORT, then NAME. */
static void add_req(struct mb *m, uint32_t seq, const char *name, const char *eth,
		    const char *ib, int port)
{
	sfx_req(m, SOFT_ID_PNETID, SMC_PNETID_ADD, 0, seq);
	if (eth)
		mb_str(m, SMC_PNETID_ETHNAME, eth);
	if (ib)
		mb_str(m, SMC_PNETID_IBNAME, ib);
	if (ib && port != NO_PORT)
		mb_u8(m, SMC_PNETID_IBPORT, (uint8_t)port);
	if (name)
		mb_str(m, SMC_PNETID_NAME, name);
}

static int add(struct sfx *f, const struct soft_peer *p, const char *name, const char *eth,
	       const char *ib, int port)
{
	struct mb m;

	add_req(&m, 11, name, eth, ib, port);
	sfx_send(f, p, &m);
	return sfx_error(f);
}

static int name_req(struct sfx *f, const struct soft_peer *p, uint8_t cmd, const char *name)
{
	struct mb m;

	sfx_req(&m, SOFT_ID_PNETID, cmd, 0, 12);
	if (name)
		mb_str(&m, SMC_PNETID_NAME, name);
	sfx_send(f, p, &m);
	return cmd == SMC_PNETID_GET ? 0 : sfx_error(f);
}

/* The table as smc_pnet prints it, through the tool's own parser. */
static const char *table(struct sfx *f, const struct soft_peer *p)
{
	static char text[4096];
	struct mb m;
	size_t len = 0;

	text[0] = '\0';
	sfx_req(&m, SOFT_ID_PNETID, SMC_PNETID_GET, NLM_F_DUMP, 13);
	sfx_send(f, p, &m);
	for (int i = 0; i < sfx_count(f); i++) {
		const struct nlmsghdr *h = sfx_msg(f, i);
		struct pnet_entry e;

		if (h->nlmsg_type == NLMSG_DONE)
			break;
		CHECK_INT(pnet_parse(h, &e), 0);
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s %s %s %u\n",
					e.pnetid, e.eth, e.ib, e.port);
	}
	return text;
}

static void exp_entry(struct smc_reply *e, uint32_t seq, const char *id, const char *eth,
		      const char *ib, uint8_t port)
{
	struct mb m;

	sfx_exp_genl(&m, SOFT_ID_PNETID, SMC_PNETID_GET, NLM_F_MULTI, seq);
	mb_str(&m, SMC_PNETID_NAME, id);
	mb_str(&m, SMC_PNETID_ETHNAME, eth);
	mb_str(&m, SMC_PNETID_IBNAME, ib);
	mb_u8(&m, SMC_PNETID_IBPORT, port);
	mb_finish(&m, e);
}

TEST(soft_pnet_dump_empty_is_done_only)
{
	struct smc_reply e;
	struct sfx f;
	struct mb m;

	sfx_init(&f, true);
	smc_reply_init(&e);
	sfx_req(&m, SOFT_ID_PNETID, SMC_PNETID_GET, NLM_F_DUMP, 77);
	sfx_send(&f, &f.user, &m);
	sfx_exp_done(&e, 77);
	CHECK_REPLY(&f, &e);
	smc_reply_free(&e);
	sfx_free(&f);
}

TEST(soft_pnet_add_acks_and_dump_bytes)
{
	struct smc_reply e;
	struct sfx f;
	struct mb m;

	sfx_init(&f, true);
	smc_reply_init(&e);
	add_req(&m, 5, "net1", "eth0", NULL, NO_PORT);
	sfx_send(&f, &f.admin, &m);
	sfx_exp_ack(&e, &m, 0, NULL);
	CHECK_REPLY(&f, &e);

	add_req(&m, 6, "NET2", NULL, "sr_test", 2);
	sfx_send(&f, &f.admin, &m);
	CHECK_INT(sfx_error(&f), 0);
	add_req(&m, 7, "ism", NULL, "soft-ism", NO_PORT);
	sfx_send(&f, &f.admin, &m);
	CHECK_INT(sfx_error(&f), 0);

	sfx_req(&m, SOFT_ID_PNETID, SMC_PNETID_GET, NLM_F_DUMP, 8);
	sfx_send(&f, &f.user, &m);
	smc_reply_free(&e);
	smc_reply_init(&e);
	exp_entry(&e, 8, "NET1", "eth0", "n/a", 0xff);
	exp_entry(&e, 8, "NET2", "n/a", "sr_test", 2);
	exp_entry(&e, 8, "ISM", "n/a", "soft-ism", 1);
	sfx_exp_done(&e, 8);
	CHECK_REPLY(&f, &e);
	CHECK_STR(table(&f, &f.user), "NET1 eth0 n/a 255\nNET2 n/a sr_test 2\nISM n/a soft-ism 1\n");
	smc_reply_free(&e);
	sfx_free(&f);
}

TEST(soft_pnet_add_applies_user_pnetid_to_devices)
{
	struct soft_dev *roce, *ism;
	struct sfx f;

	sfx_init(&f, true);
	roce = soft_dev_find_roce(&f.st, "sr_test");
	ism = soft_dev_ism(&f.st);
	CHECK_INT(add(&f, &f.admin, "NET1", NULL, "sr_test", NO_PORT), 0);
	CHECK_STR(roce->pnetid[0], "NET1");
	CHECK(roce->pnet_user[0]);
	CHECK_STR(roce->pnetid[1], "");
	/* the ISM by its PCI-ID-like name */
	CHECK_INT(add(&f, &f.admin, "NETD", NULL, "ffff:00:00.0", NO_PORT), 0);
	CHECK_STR(ism->pnetid[0], "NETD");
	CHECK(ism->pnet_user[0]);
	/* a device port that has a PNET ID refuses another, and no entry is stored */
	CHECK_INT(add(&f, &f.admin, "NET9", NULL, "sr_test", 1), -EEXIST);
	CHECK_INT(add(&f, &f.admin, "NET9", NULL, "soft-ism", 1), -EEXIST);
	CHECK_STR(roce->pnetid[0], "NET1");
	CHECK_STR(ism->pnetid[0], "NETD");
	CHECK_STR(table(&f, &f.admin), "NET1 n/a sr_test 1\nNETD n/a ffff:00:00.0 1\n");
	sfx_free(&f);
}

TEST(soft_pnet_add_both_names_makes_two_entries)
{
	struct sfx f;

	sfx_init(&f, true);
	CHECK_INT(add(&f, &f.admin, "NET1", "eth0", "sr_test", 1), 0);
	CHECK_STR(table(&f, &f.user), "NET1 eth0 n/a 255\nNET1 n/a sr_test 1\n");
	/* the ETH part exists already, the IB part is new: still 0 */
	CHECK_INT(add(&f, &f.admin, "NET1", "eth0", "mlx5_0", 1), 0);
	/* both parts exist already */
	CHECK_INT(add(&f, &f.admin, "NET1", "eth0", "mlx5_0", 1), -EEXIST);
	sfx_free(&f);
}

TEST(soft_pnet_add_validation)
{
	struct sfx f;

	sfx_init(&f, true);
	CHECK_INT(add(&f, &f.admin, NULL, "eth0", NULL, NO_PORT), -EINVAL);
	CHECK_INT(add(&f, &f.admin, "", "eth0", NULL, NO_PORT), -EINVAL);
	CHECK_INT(add(&f, &f.admin, "   ", "eth0", NULL, NO_PORT), -EINVAL);
	CHECK_INT(add(&f, &f.admin, "NET-1", "eth0", NULL, NO_PORT), -EINVAL);
	CHECK_INT(add(&f, &f.admin, "NE T", "eth0", NULL, NO_PORT), -EINVAL);
	CHECK_INT(add(&f, &f.admin, "n\xc3\xa4t", "eth0", NULL, NO_PORT), -EINVAL);
	/* 17 characters: no NUL within the policy's 16 + 1 bytes */
	CHECK_INT(add(&f, &f.admin, "ABCDEFGHIJKLMNOPQ", "eth0", NULL, NO_PORT), -EINVAL);
	/* an interface name of 16 characters breaks the policy (IFNAMSIZ - 1) */
	CHECK_INT(add(&f, &f.admin, "NET1", "abcdefghijklmnop", NULL, NO_PORT), -EINVAL);
	CHECK_INT(add(&f, &f.admin, "NET1", NULL, "sr_test", 0), -EINVAL);
	CHECK_INT(add(&f, &f.admin, "NET1", NULL, "sr_test", 3), -EINVAL);
	/* neither interface nor device: nothing added is "exists" */
	CHECK_INT(add(&f, &f.admin, "NET1", NULL, NULL, NO_PORT), -EEXIST);
	CHECK_STR(table(&f, &f.admin), "");
	/* blanks around the PNET ID go, lower case goes up; 16 characters fit */
	CHECK_INT(add(&f, &f.admin, "  net1 ", "eth0", NULL, NO_PORT), 0);
	CHECK_INT(add(&f, &f.admin, "abcdefghijklmnop", "eth1", NULL, NO_PORT), 0);
	/* blanks around the device name go too */
	CHECK_INT(add(&f, &f.admin, "NET3", NULL, " sr_test  ", 1), 0);
	CHECK_STR(table(&f, &f.admin), "NET1 eth0 n/a 255\nABCDEFGHIJKLMNOP eth1 n/a 255\n"
		  "NET3 n/a sr_test 1\n");
	sfx_free(&f);
}

TEST(soft_pnet_add_policy_errors)
{
	struct sfx f;
	struct mb m;
	uint8_t none = 0;

	sfx_init(&f, true);
	/* NAME without a NUL */
	sfx_req(&m, SOFT_ID_PNETID, SMC_PNETID_ADD, 0, 3);
	mb_str(&m, SMC_PNETID_ETHNAME, "eth0");
	mb_attr(&m, SMC_PNETID_NAME, "NET1", 4);
	sfx_send(&f, &f.admin, &m);
	CHECK_INT(sfx_error(&f), -EINVAL);
	/* an empty IBPORT */
	sfx_req(&m, SOFT_ID_PNETID, SMC_PNETID_ADD, 0, 3);
	mb_str(&m, SMC_PNETID_IBNAME, "sr_test");
	mb_attr(&m, SMC_PNETID_IBPORT, &none, 0);
	mb_str(&m, SMC_PNETID_NAME, "NET1");
	sfx_send(&f, &f.admin, &m);
	CHECK_INT(sfx_error(&f), -ERANGE);
	/* a NUL early, then more than 16 bytes: too long */
	sfx_req(&m, SOFT_ID_PNETID, SMC_PNETID_ADD, 0, 3);
	mb_str(&m, SMC_PNETID_ETHNAME, "eth0");
	mb_attr(&m, SMC_PNETID_NAME, "AB\0CDEFGHIJKLMNOPQRS", 20);
	sfx_send(&f, &f.admin, &m);
	CHECK_INT(sfx_error(&f), -ERANGE);
	/* attributes above the family's maximum are ignored */
	sfx_req(&m, SOFT_ID_PNETID, SMC_PNETID_ADD, 0, 3);
	mb_str(&m, 9, "whatever");
	mb_str(&m, SMC_PNETID_ETHNAME, "eth0");
	mb_str(&m, SMC_PNETID_NAME, "NET1");
	sfx_send(&f, &f.admin, &m);
	CHECK_INT(sfx_error(&f), 0);
	CHECK_STR(table(&f, &f.admin), "NET1 eth0 n/a 255\n");
	sfx_free(&f);
}

TEST(soft_pnet_duplicates_and_unknown_devices)
{
	struct soft_dev *roce;
	struct sfx f;

	sfx_init(&f, true);
	roce = soft_dev_find_roce(&f.st, "sr_test");
	/* unknown interface and device names are accepted (bound when they appear) */
	CHECK_INT(add(&f, &f.admin, "NET1", "nosuchif0", NULL, NO_PORT), 0);
	CHECK_INT(add(&f, &f.admin, "NET1", NULL, "mlx5_0", 2), 0);
	/* the same interface under another PNET ID */
	CHECK_INT(add(&f, &f.admin, "NET2", "nosuchif0", NULL, NO_PORT), -EEXIST);
	CHECK_INT(add(&f, &f.admin, "NET2", NULL, "mlx5_0", 1), -EEXIST);
	/*
	 * The kernel applies the PNET ID to the device port before it finds
	 * the existing entry: port 2 keeps NET2 although the answer is EEXIST.
	 */
	CHECK_INT(add(&f, &f.admin, "NET1", NULL, "sr_test", 1), 0);
	CHECK_INT(add(&f, &f.admin, "NET2", NULL, "sr_test", 2), -EEXIST);
	CHECK_STR(roce->pnetid[1], "NET2");
	CHECK_STR(table(&f, &f.admin), "NET1 nosuchif0 n/a 255\nNET1 n/a mlx5_0 2\n"
		  "NET1 n/a sr_test 1\n");
	/* deleting NET2 clears that port: a match on a device alone counts */
	CHECK_INT(name_req(&f, &f.admin, SMC_PNETID_DEL, "NET2"), 0);
	CHECK_STR(roce->pnetid[1], "");
	CHECK(!roce->pnet_user[1]);
	sfx_free(&f);
}

TEST(soft_pnet_unprivileged_changes_refused)
{
	struct sfx f;

	sfx_init(&f, true);
	CHECK_INT(add(&f, &f.admin, "NET1", "eth0", "sr_test", 1), 0);
	CHECK_INT(add(&f, &f.user, "NET2", "eth1", NULL, NO_PORT), -EPERM);
	CHECK_INT(name_req(&f, &f.user, SMC_PNETID_DEL, "NET1"), -EPERM);
	CHECK_INT(name_req(&f, &f.user, SMC_PNETID_FLUSH, NULL), -EPERM);
	CHECK_INT(add(&f, &f.other_user, "NET2", "eth1", NULL, NO_PORT), -EPERM);
	CHECK_STR(table(&f, &f.user), "NET1 eth0 n/a 255\nNET1 n/a sr_test 1\n");
	CHECK_STR(soft_dev_find_roce(&f.st, "sr_test")->pnetid[0], "NET1");
	/* GET is unprivileged, doit and dump */
	CHECK_INT(name_req(&f, &f.user, SMC_PNETID_GET, "NET1"), 0);
	CHECK_INT(sfx_count(&f), 4);
	sfx_free(&f);
}

TEST(soft_pnet_delete)
{
	struct soft_dev *roce, *ism;
	struct smc_reply e;
	struct sfx f;
	struct mb m;

	sfx_init(&f, true);
	smc_reply_init(&e);
	roce = soft_dev_find_roce(&f.st, "sr_test");
	ism = soft_dev_ism(&f.st);
	CHECK_INT(add(&f, &f.admin, "NET1", "eth0", "sr_test", 1), 0);
	CHECK_INT(add(&f, &f.admin, "NET2", "eth1", "soft-ism", 1), 0);
	CHECK_INT(name_req(&f, &f.admin, SMC_PNETID_DEL, NULL), -EINVAL);
	CHECK_INT(name_req(&f, &f.admin, SMC_PNETID_DEL, "NET3"), -ENOENT);
	/* the name is compared as sent: no upper-casing, no trimming */
	CHECK_INT(name_req(&f, &f.admin, SMC_PNETID_DEL, "net1"), -ENOENT);
	CHECK_INT(name_req(&f, &f.admin, SMC_PNETID_DEL, " NET1"), -ENOENT);
	/* a blank ends the compare like a NUL */
	sfx_req(&m, SOFT_ID_PNETID, SMC_PNETID_DEL, 0, 21);
	mb_str(&m, SMC_PNETID_NAME, "NET1 ");
	sfx_send(&f, &f.admin, &m);
	sfx_exp_ack(&e, &m, 0, NULL);
	CHECK_REPLY(&f, &e);
	CHECK_STR(table(&f, &f.admin), "NET2 eth1 n/a 255\nNET2 n/a soft-ism 1\n");
	CHECK_STR(roce->pnetid[0], "");
	CHECK(!roce->pnet_user[0]);
	CHECK_STR(ism->pnetid[0], "NET2");
	/* without the name, DEL is sent as a dump: no such handler */
	CHECK_INT(sfx_simple(&f, &f.admin, SOFT_ID_PNETID, SMC_PNETID_DEL, NLM_F_DUMP), -EOPNOTSUPP);
	CHECK_INT(name_req(&f, &f.admin, SMC_PNETID_DEL, "NET2"), 0);
	CHECK_STR(ism->pnetid[0], "");
	CHECK_STR(table(&f, &f.admin), "");
	smc_reply_free(&e);
	sfx_free(&f);
}

TEST(soft_pnet_flush)
{
	struct soft_dev *roce;
	struct sfx f;

	sfx_init(&f, true);
	roce = soft_dev_find_roce(&f.st, "sr_test");
	CHECK_INT(name_req(&f, &f.admin, SMC_PNETID_FLUSH, NULL), 0);
	CHECK_INT(add(&f, &f.admin, "NET1", "eth0", "sr_test", 1), 0);
	CHECK_INT(add(&f, &f.other, "NETX", "veth1", NULL, NO_PORT), 0);
	/* another namespace's flush leaves the initial one's table and devices */
	CHECK_INT(name_req(&f, &f.other, SMC_PNETID_FLUSH, NULL), 0);
	CHECK_STR(table(&f, &f.other), "");
	CHECK_STR(roce->pnetid[0], "NET1");
	CHECK_INT(name_req(&f, &f.admin, SMC_PNETID_FLUSH, NULL), 0);
	CHECK_STR(table(&f, &f.admin), "");
	CHECK_STR(roce->pnetid[0], "");
	CHECK_INT(sfx_simple(&f, &f.admin, SOFT_ID_PNETID, SMC_PNETID_FLUSH, NLM_F_DUMP),
		  -EOPNOTSUPP);
	sfx_free(&f);
}

TEST(soft_pnet_get_doit_answers_like_a_dump)
{
	struct smc_reply e;
	struct nlmsghdr *h;
	struct sfx f;
	struct mb m, done;

	sfx_init(&f, true);
	smc_reply_init(&e);
	CHECK_INT(add(&f, &f.admin, "NET1", "eth0", "sr_test", 1), 0);
	CHECK_INT(add(&f, &f.admin, "NET2", "eth1", NULL, NO_PORT), 0);
	sfx_req(&m, SOFT_ID_PNETID, SMC_PNETID_GET, 0, 31);
	mb_str(&m, SMC_PNETID_NAME, "NET1");
	sfx_send(&f, &f.user, &m);
	exp_entry(&e, 31, "NET1", "eth0", "n/a", 0xff);
	exp_entry(&e, 31, "NET1", "n/a", "sr_test", 1);
	/* smc_pnet_get(): NLMSG_DONE without payload, then the ack */
	mb_start(&done, NLMSG_DONE, NLM_F_MULTI);
	h = (struct nlmsghdr *)done.buf;
	h->nlmsg_seq = 31;
	h->nlmsg_pid = SFX_PID;
	mb_finish(&done, &e);
	sfx_exp_ack(&e, &m, 0, NULL);
	CHECK_REPLY(&f, &e);

	/* no match: DONE and ack only */
	CHECK_INT(name_req(&f, &f.user, SMC_PNETID_GET, "net1"), 0);
	CHECK_INT(sfx_count(&f), 2);
	CHECK_INT(sfx_msg(&f, 0)->nlmsg_type, NLMSG_DONE);
	CHECK_INT(sfx_msg(&f, 0)->nlmsg_len, 16);
	/* the name is required */
	sfx_req(&m, SOFT_ID_PNETID, SMC_PNETID_GET, 0, 32);
	sfx_send(&f, &f.user, &m);
	CHECK_INT(sfx_error(&f), -EINVAL);
	smc_reply_free(&e);
	sfx_free(&f);
}

TEST(soft_pnet_namespaces_have_their_own_tables)
{
	struct soft_dev *roce;
	struct sfx f;

	sfx_init(&f, true);
	roce = soft_dev_find_roce(&f.st, "sr_test");
	CHECK_INT(add(&f, &f.admin, "NET1", "eth0", NULL, NO_PORT), 0);
	CHECK_INT(add(&f, &f.other, "NET2", "eth0", NULL, NO_PORT), 0);
	CHECK_STR(table(&f, &f.user), "NET1 eth0 n/a 255\n");
	CHECK_STR(table(&f, &f.other_user), "NET2 eth0 n/a 255\n");
	/* IB entries only in the initial namespace: 0 if an ETH entry came with it */
	CHECK_INT(add(&f, &f.other, "NET3", NULL, "sr_test", 1), -EEXIST);
	CHECK_INT(add(&f, &f.other, "NET3", "eth1", "sr_test", 1), 0);
	/* ... the IB part is ignored there, even with a bad port */
	CHECK_INT(add(&f, &f.other, "NET4", "eth2", "sr_test", 7), 0);
	CHECK_STR(roce->pnetid[0], "");
	CHECK_STR(table(&f, &f.other), "NET2 eth0 n/a 255\nNET3 eth1 n/a 255\nNET4 eth2 n/a 255\n");
	CHECK_INT(name_req(&f, &f.other, SMC_PNETID_DEL, "NET1"), -ENOENT);
	CHECK_INT(name_req(&f, &f.admin, SMC_PNETID_DEL, "NET2"), -ENOENT);
	CHECK_INT(name_req(&f, &f.other, SMC_PNETID_DEL, "NET2"), 0);
	CHECK_STR(table(&f, &f.user), "NET1 eth0 n/a 255\n");
	sfx_free(&f);
}

TEST(soft_pnet_dispatch_errors)
{
	struct sfx f;

	sfx_init(&f, true);
	/* ADD is a doit: with the dump flag, EOPNOTSUPP before the privilege check */
	CHECK_INT(sfx_simple(&f, &f.admin, SOFT_ID_PNETID, SMC_PNETID_ADD, NLM_F_DUMP), -EOPNOTSUPP);
	CHECK_INT(sfx_simple(&f, &f.user, SOFT_ID_PNETID, SMC_PNETID_ADD, NLM_F_DUMP), -EOPNOTSUPP);
	CHECK_INT(sfx_simple(&f, &f.admin, SOFT_ID_PNETID, 5, 0), -EOPNOTSUPP);
	CHECK_INT(sfx_simple(&f, &f.admin, SOFT_ID_PNETID, 0, NLM_F_DUMP), -EOPNOTSUPP);
	sfx_free(&f);
}

TEST(soft_pnet_kernel_ctype)
{
	char out[SOFT_PNETID_LEN + 1];

	/* the kernel's ctype knows Latin-1 letters: 0xe4 is lower case, 0xc4 its upper */
	CHECK(soft_pnetid_valid("n\xe4t", out));
	CHECK_STR(out, "N\xc4T");
	CHECK(!soft_pnetid_valid("n\xc3\xa4t", out));    /* UTF-8: 0xa4 is punctuation */
	CHECK(soft_pnetid_valid("\t net1\n", out));
	CHECK_STR(out, "NET1");
	CHECK(!soft_pnetid_valid("", out));
	CHECK(soft_pnet_match("NET1", "NET1 "));
	CHECK(soft_pnet_match("NET1\0X", "NET1"));
	CHECK(!soft_pnet_match("NET1", "NET"));
	CHECK(!soft_pnet_match("NET1", "net1"));
	CHECK(soft_pnet_match("ABCDEFGHIJKLMNOPQ", "ABCDEFGHIJKLMNOPZ"));  /* 16 bytes only */
}
