/*
 * The host's RDMA devices as SMC-R devices, read from sysfs the way the
 * kernel's smc_ib.c sees them (doc/soft-roce.md, "Devices"):
 *
 *   class/infiniband/NAME/node_type            "1: CA" (others are skipped)
 *   class/infiniband/NAME/ports/N/state        "4: ACTIVE"
 *   class/infiniband/NAME/ports/N/gids/K       "fe80:0000:...:0001"
 *   class/infiniband/NAME/ports/N/gid_attrs/types/K   "IB/RoCE v1"
 *   class/infiniband/NAME/ports/N/gid_attrs/ndevs/K   "eth0"
 *   class/infiniband/NAME/parent               rxe's interface
 *   class/infiniband/NAME/device -> PCI function, with vendor, device and,
 *                                   on s390, function_id and pchid
 *
 * Every value is read bounded and checked; anything missing or malformed
 * leaves that field empty rather than the device out.
 */
#include "devices.h"
#include "ifname.h"
#include "log.h"
#include "pnettab.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <arpa/inet.h>

#define GIDS_LOOKED_AT 64      /* the first entries of a port's GID table */

/* One line of <root>/class/infiniband/<dev>/<fmt...>, without its newline: length or -1. */
static int read_attr(const struct soft_state *st, const char *dev, char *buf, size_t len,
		     const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int read_attr(const struct soft_state *st, const char *dev, char *buf, size_t len,
		     const char *fmt, ...)
{
	char path[PATH_MAX], rel[PATH_MAX / 2];
	va_list ap;
	ssize_t n;
	int fd;

	va_start(ap, fmt);
	n = vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(rel) ||
	    (size_t)snprintf(path, sizeof(path), "%s/class/infiniband/%s/%s", st->sysfs, dev,
			     rel) >= sizeof(path))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return (int)strlen(buf);
}

/* The number before ':' of "4: ACTIVE" or "1: CA"; -1 when there is none. */
static int leading_number(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	return end != s && *end == ':' && v >= 0 && v < 256 ? (int)v : -1;
}

static bool hex_u32(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 16);
	if (end == s || *end || errno || v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* smc_set_pci_values(): vendor, device, the PCI name and, on s390, FID and PCHID. */
static void read_pci(const struct soft_state *st, struct soft_dev *d)
{
	char path[PATH_MAX], real[PATH_MAX], buf[32];
	const char *base;
	uint32_t v;

	d->pci = false;
	if ((size_t)snprintf(path, sizeof(path), "%s/class/infiniband/%s/device", st->sysfs,
			     d->name) >= sizeof(path) || !realpath(path, real))
		return;
	base = strrchr(real, '/');
	base = base ? base + 1 : real;
	if (!smc_is_pci_name(base) || strlen(base) >= sizeof(d->pci_id))
		return;
	d->pci = true;
	snprintf(d->pci_id, sizeof(d->pci_id), "%s", base);
	d->vendor = read_attr(st, d->name, buf, sizeof(buf), "device/vendor") > 0 &&
		    hex_u32(buf, &v) ? (uint16_t)v : 0;
	d->device = read_attr(st, d->name, buf, sizeof(buf), "device/device") > 0 &&
		    hex_u32(buf, &v) ? (uint16_t)v : 0;
	d->fid = read_attr(st, d->name, buf, sizeof(buf), "device/function_id") > 0 &&
		 hex_u32(buf, &v) ? v : 0;
	d->chid = read_attr(st, d->name, buf, sizeof(buf), "device/pchid") > 0 &&
		  hex_u32(buf, &v) ? (uint16_t)v : 0;
}

/* The interface a port sits on: its first GID's, else rxe's parent, else the PCI function's. */
static void read_netdev(const struct soft_state *st, struct soft_dev *d, int port)
{
	char name[IF_NAMESIZE + 2] = "";
	char path[PATH_MAX];
	struct dirent *e;
	DIR *dir;

	if (read_attr(st, d->name, name, sizeof(name), "ports/%d/gid_attrs/ndevs/0", port) <= 0 &&
	    read_attr(st, d->name, name, sizeof(name), "parent") <= 0 &&
	    (size_t)snprintf(path, sizeof(path), "%s/class/infiniband/%s/device/net", st->sysfs,
			     d->name) < sizeof(path) && (dir = opendir(path))) {
		while ((e = readdir(dir)))
			if (e->d_name[0] != '.' && strlen(e->d_name) < IF_NAMESIZE) {
				snprintf(name, sizeof(name), "%s", e->d_name);
				break;
			}
		closedir(dir);
	}
	if (strlen(name) >= IF_NAMESIZE)
		name[0] = '\0';
	snprintf(d->ifname[port - 1], IF_NAMESIZE, "%s", name);
	d->ifindex[port - 1] = name[0] ? if_nametoindex(name) : 0;
}

static bool ipv4_mapped(const uint8_t gid[SOFT_GID_SIZE])
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(gid, prefix, sizeof(prefix));
}

/*
 * smc_ib_determine_gid() without a VLAN, for both versions: the first GID
 * on the port's interface of type RoCE v1 (SMC-Rv1), and the first of type
 * RoCE v2 holding an IPv4 address (SMC-Rv2).
 */
static void read_gids(const struct soft_state *st, struct soft_dev *d, int port)
{
	char type[32], ndev[IF_NAMESIZE + 2], text[64];
	uint8_t gid[SOFT_GID_SIZE];
	int idx = port - 1;

	d->gid_v1_index[idx] = d->gid_v2_index[idx] = -1;
	memset(d->gid_v1[idx], 0, SOFT_GID_SIZE);
	memset(d->gid_v2[idx], 0, SOFT_GID_SIZE);
	for (int k = 0; k < GIDS_LOOKED_AT; k++) {
		bool v1, v2;

		if (read_attr(st, d->name, type, sizeof(type), "ports/%d/gid_attrs/types/%d", port, k) < 0)
			continue;
		v1 = !strcmp(type, "IB/RoCE v1") && d->gid_v1_index[idx] < 0;
		v2 = !strcmp(type, "RoCE v2") && d->gid_v2_index[idx] < 0;
		if ((!v1 && !v2) ||
		    read_attr(st, d->name, ndev, sizeof(ndev), "ports/%d/gid_attrs/ndevs/%d", port, k) <= 0 ||
		    strcmp(ndev, d->ifname[idx]) ||
		    read_attr(st, d->name, text, sizeof(text), "ports/%d/gids/%d", port, k) <= 0 ||
		    inet_pton(AF_INET6, text, gid) != 1)
			continue;
		if (v1) {
			memcpy(d->gid_v1[idx], gid, SOFT_GID_SIZE);
			d->gid_v1_index[idx] = k;
		} else if (ipv4_mapped(gid)) {
			memcpy(d->gid_v2[idx], gid, SOFT_GID_SIZE);
			d->gid_v2_index[idx] = k;
		}
	}
}

/* What the kernel reads of a device when it comes, and of its ports on events. */
static void read_dev(const struct soft_state *st, struct soft_dev *d)
{
	char buf[32];

	read_pci(st, d);
	d->n_ports = 0;
	for (int port = 1; port <= SOFT_PORTS; port++) {
		if (read_attr(st, d->name, buf, sizeof(buf), "ports/%d/state", port) < 0)
			break;
		d->n_ports = port;
		d->port_state[port - 1] = (uint8_t)(leading_number(buf) < 0 ? 0 : leading_number(buf));
		read_netdev(st, d, port);
		read_gids(st, d, port);
	}
}

/* A name sysfs lists that the kernel's SMC would take: an RDMA channel adapter. */
static bool wanted(const struct soft_state *st, const char *name)
{
	char buf[32];

	if (name[0] == '.' || *soft_dev_name_invalid(name))
		return false;
	return read_attr(st, name, buf, sizeof(buf), "node_type") < 0 || leading_number(buf) == 1;
}

static struct soft_dev *find_host(const struct soft_state *st, const char *name)
{
	for (struct soft_dev *d = st->devs; d; d = d->next)
		if (d->kind == SOFT_DEV_ROCE && d->host && !strcmp(d->name, name))
			return d;
	return NULL;
}

/* Out of the list, to be appended again. */
static void unlink_dev(struct soft_state *st, struct soft_dev *d)
{
	for (struct soft_dev **pp = &st->devs; *pp; pp = &(*pp)->next)
		if (*pp == d) {
			*pp = d->next;
			return;
		}
}

/* One line per port of a device that came: what SMC-R will use of it. */
static void log_came(const struct soft_dev *d)
{
	for (int i = 0; i < d->n_ports; i++) {
		char v1[INET6_ADDRSTRLEN] = "none", v2[INET6_ADDRSTRLEN] = "none";

		if (d->gid_v1_index[i] >= 0)
			inet_ntop(AF_INET6, d->gid_v1[i], v1, sizeof(v1));
		if (d->gid_v2_index[i] >= 0)
			inet_ntop(AF_INET6, d->gid_v2[i], v2, sizeof(v2));
		softd_log(LOG_INFO, "RDMA device %s port %d: interface %s, %s, RoCE v1 GID %s, RoCE v2 GID %s",
			  d->name, i + 1, d->ifname[i][0] ? d->ifname[i] : "none",
			  d->port_state[i] == SOFT_IB_PORT_ACTIVE ? "active" : "not active", v1, v2);
	}
}

/* A device that came (again): read, its user PNET IDs from the table as smc_ib_add_dev. */
static void came(struct soft_state *st, struct soft_dev *d)
{
	memset(d->pnetid, 0, sizeof(d->pnetid));
	memset(d->pnet_user, 0, sizeof(d->pnet_user));
	d->present = true;
	read_dev(st, d);
	soft_pnet_apply_table_ib(st, d);
	log_came(d);
}

int soft_rdma_refresh(struct soft_state *st)
{
	struct dirent **names = NULL;
	char path[PATH_MAX];
	int n = 0, rc = 0;

	/* in name order: the order in which a booting kernel found them is not known */
	if (st->sysfs && (size_t)snprintf(path, sizeof(path), "%s/class/infiniband", st->sysfs) <
			 sizeof(path)) {
		n = scandir(path, &names, NULL, alphasort);
		/* no directory is no device; a look that failed (EMFILE) says nothing */
		if (n < 0 && errno == ENOMEM)
			return -ENOMEM;
		if (n < 0 && errno != ENOENT && errno != ENOTDIR)
			return 0;
	}
	for (struct soft_dev *d = st->devs; d; d = d->next)
		if (d->host)
			d->gone_mark = true;
	for (int i = 0; i < n && !rc; i++) {
		const char *name = names[i]->d_name;
		struct soft_dev *d;

		if (!wanted(st, name))
			continue;
		d = find_host(st, name);
		if (d) {
			d->gone_mark = false;
			if (d->present) {
				read_dev(st, d);
			} else {
				/* a device that comes again is the kernel's newest */
				unlink_dev(st, d);
				soft_dev_append(st, d);
				came(st, d);
			}
			continue;
		}
		/* an emulated device of that name hides the host's */
		if (soft_dev_find_roce(st, name) || soft_dev_find_ism(st, name))
			continue;
		d = calloc(1, sizeof(*d));
		if (!d) {
			rc = -ENOMEM;
			break;
		}
		d->kind = SOFT_DEV_ROCE;
		d->host = true;
		/* wanted() took only names of at most IB_DEVICE_NAME_MAX - 1 bytes */
		memcpy(d->name, name, strnlen(name, sizeof(d->name) - 1));
		soft_dev_append(st, d);
		came(st, d);
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	for (struct soft_dev *d = st->devs; d; d = d->next) {
		if (!d->host || !d->gone_mark)
			continue;
		d->gone_mark = false;
		/* out of memory: what was not looked at stays as it was */
		if (rc)
			continue;
		d->present = false;
		memset(d->port_state, 0, sizeof(d->port_state));
		softd_log(LOG_INFO, "RDMA device %s is gone", d->name);
	}
	return rc;
}
