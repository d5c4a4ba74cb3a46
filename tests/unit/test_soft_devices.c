/* smc_softd devices: --roce specs, the default RoCE devices, the soft ISM's identity. */
#include "unit.h"
#include "soft/fabric/devices.h"
#include "soft/runtime/teardown.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

/* soft_devs_init with the given specs: its result, and err. */
static int init(struct soft_state *st, char *err, int n, ...)
{
	char *specs[8];
	va_list ap;

	va_start(ap, n);
	for (int i = 0; i < n; i++)
		specs[i] = va_arg(ap, char *);
	va_end(ap);
	soft_state_init(st);
	err[0] = '\0';
	return soft_devs_init(st, specs, n, err, 256);
}

static bool if_up(const char *name, bool *loopback)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM, 0), rc;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	rc = ioctl(fd, SIOCGIFFLAGS, &ifr);
	close(fd);
	*loopback = rc == 0 && (ifr.ifr_flags & IFF_LOOPBACK);
	return rc == 0 && (ifr.ifr_flags & IFF_UP);
}

TEST(soft_devices_roce_specs)
{
	struct soft_state st;
	struct soft_dev *d;
	char err[256];
	int port = 0;
	bool lo_loop;

	CHECK_INT(init(&st, err, 2, "sr_a=lo", "second.dev-1=lo"), 0);
	CHECK_STR(err, "");
	d = st.devs;
	CHECK(d && d->kind == SOFT_DEV_ISM);
	CHECK_STR(d->name, "soft-ism");
	CHECK_STR(d->pci_id, "ffff:00:00.0");
	CHECK_INT(d->chid, 0xff01);
	CHECK_INT(d->vendor, 0x1014);
	CHECK_INT(d->device, 0x04ed);
	CHECK_INT(d->fid, 0);
	d = d->next;
	CHECK(d && d->kind == SOFT_DEV_ROCE);
	CHECK_STR(d->name, "sr_a");
	CHECK_INT(d->n_ports, 1);
	CHECK_INT(d->ifindex[0], if_nametoindex("lo"));
	CHECK_STR(d->ifname[0], "lo");
	CHECK_STR(d->pnetid[0], "");
	CHECK(d->next && !strcmp(d->next->name, "second.dev-1") && !d->next->next);
	CHECK(soft_dev_find_roce(&st, "second.dev-1") == d->next);
	CHECK(soft_dev_find_roce(&st, "soft-ism") == NULL);
	CHECK(soft_dev_find_ism(&st, "soft-ism") == st.devs);
	CHECK(soft_dev_find_ism(&st, "ffff:00:00.0") == st.devs);
	CHECK(soft_dev_find_ism(&st, "sr_a") == NULL);
	CHECK(soft_dev_roce_by_ifindex(&st, if_nametoindex("lo"), &port) == d);
	CHECK_INT(port, 1);
	CHECK(soft_dev_roce_by_ifindex(&st, 0, &port) == NULL);
	CHECK_INT(soft_dev_port_active(d, 1), if_up("lo", &lo_loop));
	CHECK_INT(soft_dev_port_active(d, 2), 0);
	soft_state_free(&st);
	CHECK(st.devs == NULL);
}

TEST(soft_devices_roce_spec_errors)
{
	char name64[80];
	struct soft_state st;
	char err[256];

	CHECK_INT(init(&st, err, 1, "sr_a"), -1);
	CHECK_STR(err, "--roce sr_a: expected NAME=IFACE");
	CHECK(st.devs == NULL);
	CHECK_INT(init(&st, err, 1, "=lo"), -1);
	CHECK_STR(err, "--roce =lo: invalid device name '': empty");
	CHECK_INT(init(&st, err, 1, "a/b=lo"), -1);
	CHECK_STR(err, "--roce a/b=lo: invalid device name 'a/b': contains '/'");
	CHECK_INT(init(&st, err, 1, "a b=lo"), -1);
	CHECK_STR(err, "--roce a b=lo: invalid device name 'a b': contains white space");
	CHECK_INT(init(&st, err, 1, "..=lo"), -1);
	CHECK_STR(err, "--roce ..=lo: invalid device name '..': not a device name");
	memset(name64, 'x', 64);
	strcpy(name64 + 64, "=lo");
	CHECK_INT(init(&st, err, 1, name64), -1);
	CHECK(strstr(err, "invalid device name 'xxx") != NULL);
	CHECK(strstr(err, "x': longer than 63 characters") != NULL);
	strcpy(name64 + 63, "=lo");
	CHECK_INT(init(&st, err, 1, name64), 0);             /* 63 characters are fine */
	soft_state_free(&st);
	CHECK_INT(init(&st, err, 1, "sr_a=nosuchif0"), -1);
	CHECK_STR(err, "--roce sr_a=nosuchif0: no network interface 'nosuchif0'");
	CHECK_INT(init(&st, err, 1, "sr_a="), -1);
	CHECK_STR(err, "--roce sr_a=: invalid interface name '': empty");
	CHECK_INT(init(&st, err, 1, "sr_a=lo:1"), -1);
	CHECK_STR(err, "--roce sr_a=lo:1: invalid interface name 'lo:1': contains ':'");
	CHECK_INT(init(&st, err, 1, "sr_a=abcdefghijklmnop"), -1);
	CHECK_STR(err, "--roce sr_a=abcdefghijklmnop: invalid interface name 'abcdefghijklmnop': "
		  "longer than 15 characters");
	CHECK_INT(init(&st, err, 2, "sr_a=lo", "sr_a=lo"), -1);
	CHECK_STR(err, "--roce sr_a=lo: device name 'sr_a' is already in use");
	CHECK(st.devs == NULL);
	CHECK_INT(init(&st, err, 1, "soft-ism=lo"), -1);
	CHECK_INT(init(&st, err, 1, "ffff:00:00.0=lo"), -1);
	CHECK_STR(err, "--roce ffff:00:00.0=lo: device name 'ffff:00:00.0' is already in use");
	soft_state_free(&st);
}

TEST(soft_devices_default_roce_per_up_interface)
{
	struct soft_state st;
	char err[256];
	int n = 0;

	CHECK_INT(init(&st, err, 0), 0);
	for (struct soft_dev *d = st.devs->next; d; d = d->next, n++) {
		char want[80];
		bool loopback;

		snprintf(want, sizeof(want), "sr_%s", d->ifname[0]);
		CHECK_STR(d->name, want);
		CHECK(if_up(d->ifname[0], &loopback));
		CHECK(!loopback);
		CHECK_INT(d->ifindex[0], if_nametoindex(d->ifname[0]));
	}
	/* lo is up here but never gets a default device */
	CHECK(soft_dev_find_roce(&st, "sr_lo") == NULL);
	soft_state_free(&st);
	(void)n;
}

TEST(soft_devices_ism_gid_is_stable)
{
	struct soft_state a, b;
	char err[256];

	CHECK_INT(init(&a, err, 1, "x=lo"), 0);
	CHECK_INT(init(&b, err, 1, "y=lo"), 0);
	CHECK(a.devs->gid != 0);
	CHECK(a.devs->gid != a.devs->gid_ext);
	CHECK(a.devs->gid == b.devs->gid);
	CHECK(a.devs->gid_ext == b.devs->gid_ext);
	soft_state_free(&a);
	soft_state_free(&b);
}

TEST(soft_devices_pnetid_set_rule)
{
	CHECK(!soft_pnetid_is_set(""));
	CHECK(!soft_pnetid_is_set(" NET"));
	CHECK(soft_pnetid_is_set("NET"));
	CHECK_STR(soft_dev_name_invalid("mlx5_0"), "");
	CHECK_STR(soft_dev_name_invalid("a=b"), "contains '='");
	CHECK_STR(soft_dev_name_invalid("0004:00:00.0"), "");
}

/*
 * Names are checked by the kernel's rules and quoted escaped: UTF-8 is a name
 * like any other, a control byte never reaches the terminal raw.
 */
TEST(soft_devices_roce_names_escaped)
{
	struct soft_state st;
	char err[256];

	CHECK_INT(init(&st, err, 1, "r\xc3\xa9seau=nosuchif0"), -1);
	CHECK_STR(err, "--roce r\xc3\xa9seau=nosuchif0: no network interface 'nosuchif0'");
	CHECK_INT(init(&st, err, 1, "sr_a=\xc3\xa9t\xc3\xa9"), -1);
	CHECK_STR(err, "--roce sr_a=\xc3\xa9t\xc3\xa9: no network interface '\xc3\xa9t\xc3\xa9'");
	CHECK_INT(init(&st, err, 1, "a\x01/b=lo"), -1);
	CHECK_STR(err, "--roce a\\x01/b=lo: invalid device name 'a\\x01/b': contains '/'");
	CHECK_INT(init(&st, err, 1, "sr_a=\x1b[2J"), -1);
	CHECK_STR(err, "--roce sr_a=\\x1b[2J: no network interface '\\x1b[2J'");
	CHECK_INT(init(&st, err, 1, "sr\x01"), -1);
	CHECK_STR(err, "--roce sr\\x01: expected NAME=IFACE");
	CHECK_INT(init(&st, err, 1, "r\xc3\xa9seau=lo"), 0);
	CHECK(soft_dev_find_roce(&st, "r\xc3\xa9seau") != NULL);
	soft_state_free(&st);
}
