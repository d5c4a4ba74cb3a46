/* smc_softd devices: --roce specs, the host's RDMA devices from sysfs, the soft ISM's identity. */
#include "unit.h"
#include "soft/fabric/devices.h"
#include "soft/fabric/pnettab.h"
#include "soft/runtime/teardown.h"
#include "treefx.h"

#include <ftw.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>

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

/*
 * A sysfs tree: rxe0 on lo with a RoCE v2 GID without an IPv4 address, a
 * RoCE v1 one and an IPv4-mapped RoCE v2 one; mlx5_0
 * on a PCI function (s390's FID and PCHID files too), an iWARP device, and
 * a name longer than the kernel's.
 */
static void make_sysfs(const char *root)
{
	const char *rxe = "devices/virtual/infiniband/rxe0";
	const char *pci = "devices/pci0000:00/0000:03:00.0";

	put(root, "1: CA\n", "%s/node_type", rxe);
	put(root, "4: ACTIVE\n", "%s/ports/1/state", rxe);
	put(root, "RoCE v2\n", "%s/ports/1/gid_attrs/types/0", rxe);
	put(root, "lo\n", "%s/ports/1/gid_attrs/ndevs/0", rxe);
	put(root, "fe80:0000:0000:0000:0000:0000:0000:0002\n", "%s/ports/1/gids/0", rxe);
	put(root, "IB/RoCE v1\n", "%s/ports/1/gid_attrs/types/1", rxe);
	put(root, "lo\n", "%s/ports/1/gid_attrs/ndevs/1", rxe);
	put(root, "fe80:0000:0000:0000:0000:0000:0000:0001\n", "%s/ports/1/gids/1", rxe);
	put(root, "RoCE v2\n", "%s/ports/1/gid_attrs/types/2", rxe);
	put(root, "lo\n", "%s/ports/1/gid_attrs/ndevs/2", rxe);
	put(root, "0000:0000:0000:0000:0000:ffff:0a00:0001\n", "%s/ports/1/gids/2", rxe);
	put(root, "0x15b3\n", "%s/vendor", pci);
	put(root, "0x101d\n", "%s/device", pci);
	put(root, "0x00000012\n", "%s/function_id", pci);
	put(root, "0x01c4\n", "%s/pchid", pci);
	put(root, "1: CA\n", "%s/infiniband/mlx5_0/node_type", pci);
	put(root, "1: DOWN\n", "%s/infiniband/mlx5_0/ports/1/state", pci);
	put(root, "4: ACTIVE\n", "%s/infiniband/mlx5_0/ports/2/state", pci);
	link_at(root, "../../../0000:03:00.0", "devices/pci0000:00/0000:03:00.0/infiniband/mlx5_0/device");
	put(root, "4: RNIC\n", "devices/virtual/infiniband/iw0/node_type");
	put(root, "4: ACTIVE\n", "devices/virtual/infiniband/iw0/ports/1/state");
	put(root, "", "class/infiniband/.keep");
	link_at(root, "../../devices/virtual/infiniband/rxe0", "class/infiniband/rxe0");
	link_at(root, "../../devices/pci0000:00/0000:03:00.0/infiniband/mlx5_0",
		"class/infiniband/mlx5_0");
	link_at(root, "../../devices/virtual/infiniband/iw0", "class/infiniband/iw0");
	link_at(root, "../../devices/virtual/infiniband/rxe0",
		"class/infiniband/a_name_longer_than_the_kernel_allows_for_an_rdma_device_name_0123");
}

/* The devices of a state whose sysfs is a new make_sysfs() tree at root. */
static void init_on_sysfs(struct soft_state *st, char *root)
{
	char err[256] = "";

	CHECK(mkdtemp(root) != NULL);
	make_sysfs(root);
	soft_state_init(st);
	st->sysfs = root;
	CHECK_INT(soft_devs_init(st, NULL, 0, err, sizeof(err)), 0);
	CHECK_STR(err, "");
}

TEST(soft_devices_host_rdma_from_sysfs)
{
	char root[] = "/tmp/smc-unit-sysfs.XXXXXX";
	static const uint8_t v1[16] = { 0xfe, 0x80, [15] = 1 };
	static const uint8_t v2[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 };
	struct soft_dev *rxe, *mlx;
	struct soft_state st;

	init_on_sysfs(&st, root);
	rxe = soft_dev_find_roce(&st, "rxe0");
	mlx = soft_dev_find_roce(&st, "mlx5_0");
	CHECK(rxe && mlx);
	CHECK(soft_dev_find_roce(&st, "iw0") == NULL);
	CHECK(soft_dev_find_roce(&st, "sr_lo") == NULL);
	if (rxe) {
		CHECK(rxe->host && rxe->present && !rxe->pci);
		CHECK_INT(rxe->n_ports, 1);
		CHECK_STR(rxe->ifname[0], "lo");
		CHECK_INT(rxe->ifindex[0], if_nametoindex("lo"));
		CHECK_INT(soft_dev_port_active(rxe, 1), 1);
		/* GID 0 is RoCE v2 but no IPv4 address: not SMC-Rv2's */
		CHECK_INT(rxe->gid_v1_index[0], 1);
		CHECK(!memcmp(rxe->gid_v1[0], v1, sizeof(v1)));
		CHECK_INT(rxe->gid_v2_index[0], 2);
		CHECK(!memcmp(rxe->gid_v2[0], v2, sizeof(v2)));
	}
	if (mlx) {
		CHECK(mlx->pci);
		CHECK_STR(mlx->pci_id, "0000:03:00.0");
		CHECK_INT(mlx->vendor, 0x15b3);
		CHECK_INT(mlx->device, 0x101d);
		CHECK_INT(mlx->fid, 0x12);
		CHECK_INT(mlx->chid, 0x1c4);
		CHECK_INT(mlx->n_ports, 2);
		CHECK_INT(soft_dev_port_active(mlx, 1), 0);
		CHECK_INT(soft_dev_port_active(mlx, 2), 1);
		CHECK_INT(mlx->gid_v1_index[0], -1);
		CHECK_INT(mlx->gid_v2_index[0], -1);
	}
	soft_state_free(&st);
	rm_tree(root);
}

TEST(soft_devices_host_rdma_come_and_go)
{
	char root[] = "/tmp/smc-unit-sysfs.XXXXXX", path[1024], moved[1024];
	struct soft_ns *init;
	struct soft_state st;
	struct soft_dev *rxe;

	init_on_sysfs(&st, root);
	init = soft_ns_get(&st, st.init_netns);
	CHECK(init != NULL);
	rxe = soft_dev_find_roce(&st, "rxe0");
	CHECK(rxe != NULL);
	if (!init || !rxe)
		goto out;
	CHECK_INT(soft_pnet_add_ib(&st, init, "rxe0", 1, "NET1"), 0);
	CHECK_STR(rxe->pnetid[0], "NET1");
	/* rdma link delete rxe0 */
	snprintf(path, sizeof(path), "%s/class/infiniband/rxe0", root);
	snprintf(moved, sizeof(moved), "%s/rxe0.gone", root);
	CHECK_INT(rename(path, moved), 0);
	CHECK_INT(soft_rdma_refresh(&st), 0);
	CHECK(soft_dev_find_roce(&st, "rxe0") == NULL);
	CHECK(!rxe->present);
	CHECK_INT(soft_dev_port_active(rxe, 1), 0);
	/* back, as a new device: its PNET ID from the table, again at the end */
	CHECK_INT(rename(moved, path), 0);
	CHECK_INT(soft_rdma_refresh(&st), 0);
	CHECK(soft_dev_find_roce(&st, "rxe0") == rxe);
	CHECK_STR(rxe->pnetid[0], "NET1");
	CHECK(rxe->pnet_user[0]);
	CHECK(rxe->next == NULL);
	/* without the table's entry it comes back without one */
	CHECK_INT(soft_pnet_remove(&st, init, "NET1"), 0);
	CHECK_INT(rename(path, moved), 0);
	CHECK_INT(soft_rdma_refresh(&st), 0);
	CHECK_INT(rename(moved, path), 0);
	CHECK_INT(soft_rdma_refresh(&st), 0);
	CHECK_STR(rxe->pnetid[0], "");
	/* a process out of descriptors cannot look: its devices are not gone for that */
	{
		struct rlimit old, none;
		int lowest = dup(0);

		CHECK(lowest >= 0);
		close(lowest);
		CHECK_INT(getrlimit(RLIMIT_NOFILE, &old), 0);
		none = (struct rlimit){ (rlim_t)lowest, old.rlim_max };
		CHECK_INT(setrlimit(RLIMIT_NOFILE, &none), 0);
		CHECK_INT(soft_rdma_refresh(&st), 0);
		CHECK_INT(setrlimit(RLIMIT_NOFILE, &old), 0);
		CHECK(rxe->present);
		CHECK(soft_dev_find_roce(&st, "rxe0") == rxe);
	}
out:
	soft_state_free(&st);
	rm_tree(root);
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
