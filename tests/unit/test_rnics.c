/* smc_rnics: FID syntax, EBCDIC util_string, classification, table formatting. */
#include "unit.h"

#include <stdlib.h>

#include "rnics/rnics.h"

TEST(rnics_t_fid_parse)
{
	unsigned long fid = 0;

	CHECK_INT(rnics_parse_fid("212", &fid), 0);
	CHECK_INT(fid, 0x212);
	CHECK_INT(rnics_parse_fid("0x1F", &fid), 0);
	CHECK_INT(fid, 0x1f);
	CHECK_INT(rnics_parse_fid("00000011", &fid), 0);
	CHECK_INT(fid, 0x11);
	CHECK_INT(rnics_parse_fid("ffffffff", &fid), 0);
	CHECK_INT(fid, 0xffffffffUL);
	CHECK_INT(rnics_parse_fid("000000001", &fid), 0);
	CHECK_INT(rnics_parse_fid("100000000", &fid), -1);
	CHECK_INT(rnics_parse_fid("0x", &fid), -1);
	CHECK_INT(rnics_parse_fid("", &fid), -1);
	CHECK_INT(rnics_parse_fid("12g", &fid), -1);
	CHECK_INT(rnics_parse_fid("-1", &fid), -1);
	CHECK_INT(rnics_parse_fid("0X12", &fid), -1);
	CHECK_STR(rnics_fid_text("0xzz"), "zz");
	CHECK_STR(rnics_fid_text("zz"), "zz");
}

TEST(rnics_t_ebcdic_decode)
{
	static const unsigned char in[] = {
		0xd5, 0xc5, 0xe3, 0xf1, 0x40, 0x00,     /* NET1, blank, NUL */
		0xc1, 0xc9, 0xd1, 0xd9, 0xe2, 0xe9,     /* A I J R S Z */
		0xf0, 0xf9, 0x81, 0xa9, 0x4b,           /* 0 9 a z, '.' unmapped */
	};
	char out[sizeof(in) + 1];

	rnics_ebcdic_decode(in, sizeof(in), out);
	CHECK_STR(out, "NET1  AIJRSZ09az?");
	rnics_ebcdic_decode(in, 0, out);
	CHECK_STR(out, "");
}

TEST(rnics_t_util_pnet_slots)
{
	const char *u = "NET1            " "  NET B         " "                " "0123456789ABCDEF";
	char id[32];

	rnics_util_pnet(u, strlen(u), 0, id, sizeof(id));
	CHECK_STR(id, "NET1");
	rnics_util_pnet(u, strlen(u), 1, id, sizeof(id));
	CHECK_STR(id, "NETB");
	rnics_util_pnet(u, strlen(u), 2, id, sizeof(id));
	CHECK_STR(id, "");
	rnics_util_pnet(u, strlen(u), 3, id, sizeof(id));
	CHECK_STR(id, "0123456789ABCDEF");
	rnics_util_pnet(u, 20, 3, id, sizeof(id));      /* short util_string */
	CHECK_STR(id, "");
}

TEST(rnics_t_classify_by_pft)
{
	struct rnics_class c;

	rnics_classify(0x05, -1, &c);
	CHECK_STR(c.type, "ISM");
	CHECK_STR(c.pft, "ISM");
	CHECK(!c.vf_from_vfn && c.known && !c.port_attr);
	rnics_classify(0x02, -1, &c);
	CHECK_STR(c.type, "RoCE_Express");
	CHECK_STR(c.pft, "ROC");
	rnics_classify(0x0a, 14, &c);
	CHECK_STR(c.type, "RoCE_Express2");
	CHECK_STR(c.pft, "ROC2");
	CHECK(c.port_attr);
	rnics_classify(0x0a, 22, &c);
	CHECK_STR(c.type, "RoCE_Express3");
	rnics_classify(0x0a, -1, &c);
	CHECK_STR(c.type, "RoCE_Express2/3");
	rnics_classify(0x0a, 16, &c);
	CHECK_STR(c.type, "RoCE_Express2/3");
	rnics_classify(0x0c, -1, &c);
	CHECK_STR(c.type, "Network_Express");
	CHECK_STR(c.pft, "NETH");
	CHECK(!c.vf_from_vfn);
	rnics_classify(0x0f, -1, &c);
	CHECK_STR(c.pft, "NETD");
	CHECK(c.vf_from_vfn && c.port_attr);
	rnics_classify(0x03, -1, &c);
	CHECK(!c.known && !c.type && !c.pft && c.vf_from_vfn);
}

TEST(rnics_t_pnet_lookup_last_match)
{
	struct rnics_pnet t = { 0 };
	struct rnics_pnet_entry a = { "NETA", "eth0", "", 255 };
	struct rnics_pnet_entry b = { "NETB", "", "0000:00:00.0", 2 };
	struct rnics_pnet_entry c = { "NETC", "eth0", "", 255 };
	char out[32];

	CHECK(!rnics_pnet_lookup(&t, "eth0", NULL, 1, out, sizeof(out)));
	rnics_pnet_add(&t, &a);
	rnics_pnet_add(&t, &b);
	CHECK(rnics_pnet_lookup(&t, "eth0", "n/a", 1, out, sizeof(out)));
	CHECK_STR(out, "NETA*");
	CHECK(!rnics_pnet_lookup(&t, "n/a", "0000:00:00.0", 1, out, sizeof(out)));
	CHECK(rnics_pnet_lookup(&t, "n/a", "0000:00:00.0", 2, out, sizeof(out)));
	CHECK_STR(out, "NETB*");
	CHECK(!rnics_pnet_lookup(&t, "", "", 1, out, sizeof(out)));
	rnics_pnet_add(&t, &c);
	CHECK(rnics_pnet_lookup(&t, "eth0", NULL, 2, out, sizeof(out)));
	CHECK_STR(out, "NETC*");
	rnics_pnet_free(&t);
}

static void row(struct rnics_table *t, unsigned long fid, const char *const *cells)
{
	struct rnics_row *r = rnics_table_add(t, fid);

	for (int i = 0; cells[i]; i++)
		snprintf(r->cell[i], RNICS_CELL, "%s", cells[i]);
}

TEST(rnics_t_table_text_sorted_by_fid)
{
	static const char *const r1004[] = { "1004", "1", "0003:00:00.0", "07c0", "ISM", "ISM",
					     "y", "n/a", "NET1", "n/a", NULL };
	static const char *const r11[] = { "11", "1", "0000:00:00.0", "01c4", "RoCE_Express2",
					   "ROC2", "y", "0", "NET1", "ens1160", NULL };
	static const char *const r1f[] = { "1f", "0", NULL };
	static const char *const rbig[] = { "12345678", "1", "0004:00:00.0", "0110",
					    "Network_Express", "NETD", "n", "0", "NETX", "enc1", NULL };
	struct rnics_table t;
	struct capture cap;
	char dash[102];

	memset(dash, '-', 100);
	dash[100] = '\n';
	dash[101] = '\0';
	rnics_table_init(&t, &rnics_s390_net);
	row(&t, 0x12345678, rbig);
	row(&t, 0x1004, r1004);
	row(&t, 0x1f, r1f);
	row(&t, 0x11, r11);
	cap_open(&cap);
	rnics_table_print(&t, cap.f, false);
	char want[2048];
	snprintf(want, sizeof(want), "%s\n%s%s",
		 "FID   Power  PCI_ID        PCHID  Type             PFT   VF   PPrt  PNET_ID            Net-Dev",
		 dash,
		 "  11  1      0000:00:00.0  01c4   RoCE_Express2    ROC2  y    0     NET1               ens1160\n"
		 "  1f  0                                                                                \n"
		 "1004  1      0003:00:00.0  07c0   ISM              ISM   y    n/a   NET1               n/a\n"
		 "12345678  1      0004:00:00.0  0110   Network_Express  NETD  n    0     NETX               enc1\n");
	CHECK_STR(cap_text(&cap), want);
	cap_free(&cap);
	rnics_table_free(&t);
}

TEST(rnics_t_table_equal_fids_keep_order)
{
	static const char *const a[] = { "212", "1", "p", "c", "t", "f", "y", "1", "NETB", "eno4", NULL };
	static const char *const b[] = { "212", "1", "p", "c", "t", "f", "y", "0", "NETA", "eno3", NULL };
	struct rnics_table t;
	struct capture cap;

	rnics_table_init(&t, &rnics_s390_ib_raw);
	row(&t, 0x212, a);
	row(&t, 0x212, b);
	cap_open(&cap);
	rnics_table_print(&t, cap.f, true);
	CHECK_STR(cap_text(&cap),
		  "{\"rnics\":[{\"fid\":530,\"power\":1,\"pci_id\":\"p\",\"pchid\":12,"
		  "\"type\":\"t\",\"pft\":0,\"vfn\":null,\"ib_port\":1,"
		  "\"pnet_id\":\"NETB\",\"pnet_user\":false,\"ib_dev\":\"eno4\"},"
		  "{\"fid\":530,\"power\":1,\"pci_id\":\"p\",\"pchid\":12,"
		  "\"type\":\"t\",\"pft\":0,\"vfn\":null,\"ib_port\":0,"
		  "\"pnet_id\":\"NETA\",\"pnet_user\":false,\"ib_dev\":\"eno3\"}]}\n");
	cap_free(&cap);
	rnics_table_free(&t);
}

TEST(rnics_t_table_headers)
{
	CHECK_STR(rnics_s390_net_raw.header,
		  "FID   Power  PCI_ID        PCHID  Type             PFT   VFN  PPrt  PNET_ID            Net-Dev");
	CHECK_STR(rnics_s390_ib.header,
		  "FID   Power  PCI_ID        PCHID  Type             PFT   VF   IPrt  PNET_ID            IB-Dev");
	CHECK_STR(rnics_s390_ib_raw.header,
		  "FID   Power  PCI_ID        PCHID  Type             PFT   VFN  IPrt  PNET_ID            IB-Dev");
}

TEST(rnics_t_table_empty_json)
{
	struct rnics_table t;
	struct capture cap;

	rnics_table_init(&t, &rnics_rdma);
	cap_open(&cap);
	rnics_table_print(&t, cap.f, true);
	CHECK_STR(cap_text(&cap), "{\"rnics\":[]}\n");
	cap_free(&cap);
	rnics_table_free(&t);
}

TEST(rnics_t_sysfs_fixture_rows)
{
	struct rnics_opts o = { .all = true };
	struct rnics_pnet pnet = { 0 };
	struct rnics_table t;
	struct capture err;

	setenv("SMC_SYSFS_ROOT", "tests/fixtures/sysfs/s390-nodev", 1);
	rnics_table_init(&t, &rnics_s390_net);
	cap_open(&err);
	CHECK_INT(rnics_s390_rows(&t, &o, &pnet, err.f), 0);
	CHECK_STR(cap_text(&err), "Error: No matching device found for FID 00000030\n");
	CHECK_INT(t.n, 1);
	if (t.n) {
		CHECK_STR(t.rows[0].cell[4], "RoCE_Express2");
		CHECK_STR(t.rows[0].cell[8], "NET1");
	}
	cap_free(&err);
	rnics_table_free(&t);
	unsetenv("SMC_SYSFS_ROOT");
}

/* -D: class/dibs of the s390 fixture (an ISM function's ism1004, the loopback lo). */
TEST(rnics_t_dibs_fixture_rows)
{
	struct rnics_opts o = { .dibs = true };
	struct rnics_table t;

	setenv("SMC_SYSFS_ROOT", "tests/fixtures/sysfs/s390", 1);
	rnics_table_init(&t, &rnics_dibs);
	CHECK_INT(rnics_dibs_rows(&t, &o), 0);
	CHECK_INT(t.n, 2);
	if (t.n == 2) {
		CHECK_STR(t.rows[0].cell[0], "ism1004");
		CHECK_STR(t.rows[0].cell[1], "ISM");
		CHECK_STR(t.rows[0].cell[2], "0003:00:00.0");
		CHECK_STR(t.rows[0].cell[3], "1004");
		CHECK_STR(t.rows[0].cell[4], "0x0abc");
		CHECK_STR(t.rows[0].cell[5], "0123abcd-ef01-2345-0000-000000000000");
		CHECK_STR(t.rows[1].cell[0], "lo");
		CHECK_STR(t.rows[1].cell[1], "loopback");
		CHECK_STR(t.rows[1].cell[2], "n/a");
		CHECK_STR(t.rows[1].cell[3], "n/a");
		CHECK_STR(t.rows[1].cell[4], "0xffff");
	}
	rnics_table_free(&t);

	o.have_fid = true;                      /* a FID: its PCI function's device only */
	o.fid = 0x1004;
	rnics_table_init(&t, &rnics_dibs);
	CHECK_INT(rnics_dibs_rows(&t, &o), 0);
	CHECK_INT(t.n, 1);
	rnics_table_free(&t);

	setenv("SMC_SYSFS_ROOT", "tests/fixtures/sysfs/s390-nodev", 1);  /* no class/dibs */
	rnics_table_init(&t, &rnics_dibs);
	CHECK_INT(rnics_dibs_rows(&t, &o), 0);
	CHECK_INT(t.n, 0);
	rnics_table_free(&t);
	unsetenv("SMC_SYSFS_ROOT");
}
