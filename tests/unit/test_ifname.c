/* lib/ifname.c: the kernel's rules for interface and device names, escaping. */
#include "unit.h"

#include <stdlib.h>

#include "ifname.h"

#define IS_OK(x) CHECK((x) == NULL)

TEST(ifname_kernel_rules)
{
	IS_OK(smc_ifname_invalid("eth0"));
	IS_OK(smc_ifname_invalid("abcdefghijklmno"));          /* 15 bytes */
	IS_OK(smc_ifname_invalid("\xc3\xa9t\xc3\xa9"));         /* "été": any byte but a few */
	IS_OK(smc_ifname_invalid("t\x01x"));                    /* control bytes too */
	IS_OK(smc_ifname_invalid("..."));
	IS_OK(smc_ifname_invalid("a=b"));
	CHECK_STR(smc_ifname_invalid(""), "empty");
	CHECK_STR(smc_ifname_invalid("abcdefghijklmnop"), "longer than 15 characters");
	CHECK_STR(smc_ifname_invalid("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"),
		  "longer than 15 bytes");                      /* 8 characters, 16 bytes */
	CHECK_STR(smc_ifname_invalid("."), "not an interface name");
	CHECK_STR(smc_ifname_invalid(".."), "not an interface name");
	CHECK_STR(smc_ifname_invalid("eth/0"), "contains '/'");
	CHECK_STR(smc_ifname_invalid("eth0:1"), "contains ':'");
	CHECK_STR(smc_ifname_invalid("eth 0"), "contains white space");
	CHECK_STR(smc_ifname_invalid("eth\t0"), "contains white space");
	CHECK_STR(smc_ifname_invalid("eth\v"), "contains white space");
	/* "voilà" in UTF-8 ends in c3 a0: the kernel refuses it (EINVAL) */
	CHECK_STR(smc_ifname_invalid("voil\xc3\xa0"), "contains byte 0xa0, white space to the kernel");
}

TEST(ifname_device_rules)
{
	char name[80];

	IS_OK(smc_ibname_invalid("mlx5_0"));
	IS_OK(smc_ibname_invalid("0004:00:00.0"));              /* ISM: a PCI name */
	IS_OK(smc_ibname_invalid("r\xc3\xa9seau"));
	memset(name, 'd', 63);
	name[63] = '\0';
	IS_OK(smc_ibname_invalid(name));
	name[63] = 'd';
	name[64] = '\0';
	CHECK_STR(smc_ibname_invalid(name), "longer than 63 characters");
	name[0] = (char)0xc3;
	name[1] = (char)0xa9;
	CHECK_STR(smc_ibname_invalid(name), "longer than 63 bytes");
	CHECK_STR(smc_ibname_invalid(""), "empty");
	CHECK_STR(smc_ibname_invalid(".."), "not a device name");
	CHECK_STR(smc_ibname_invalid("a/b"), "contains '/'");
	CHECK_STR(smc_ibname_invalid("mlx5 0"), "contains white space");
	CHECK_STR(smc_ibname_invalid("mlx5_0\n"), "contains white space");
}

static void check_escape(const char *in, const char *want)
{
	char *got = smc_name_escape(in);

	CHECK_STR(got, want);
	free(got);
}

TEST(ifname_escape)
{
	check_escape("eth0", "eth0");
	check_escape("", "");
	check_escape("\xc3\xa9t\xc3\xa9", "\xc3\xa9t\xc3\xa9");        /* UTF-8 stays */
	check_escape("\xe2\x82\xac\xf0\x9f\x98\x80", "\xe2\x82\xac\xf0\x9f\x98\x80");
	check_escape("a\x01/b", "a\\x01/b");
	check_escape("\x1b[31m", "\\x1b[31m");                         /* no terminal escapes */
	check_escape("\t\n\x7f", "\\x09\\x0a\\x7f");
	check_escape("a\\b", "a\\\\b");
	check_escape("\xff\xfe", "\\xff\\xfe");                         /* not UTF-8 */
	check_escape("\xc3", "\\xc3");                                  /* cut sequence */
	check_escape("\xc3(", "\\xc3(");
	check_escape("\xc0\xaf", "\\xc0\\xaf");                         /* overlong '/' */
	check_escape("\xed\xa0\x80", "\\xed\\xa0\\x80");                /* surrogate */
	check_escape("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80");       /* above U+10FFFF */
	check_escape("\xc2\x9b" "1m", "\\xc2\\x9b" "1m");               /* C1 control (CSI) */
	check_escape("\xc2\xa0", "\xc2\xa0");                           /* U+00A0 is printable */
}
