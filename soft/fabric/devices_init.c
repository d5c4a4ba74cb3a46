/* Creating the devices at start: the soft ISM, the RoCE devices of --roce, the host's. */
#include "devices.h"
#include "ifname.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

static uint64_t fnv1a64(const char *salt, const char *text)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (const char *p = salt; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	for (const char *p = text; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	return h ? h : 1;
}

/* /etc/machine-id without its newline, else the host name. */
static void machine_identity(char *buf, size_t len)
{
	FILE *f = fopen("/etc/machine-id", "re");
	struct utsname u;
	size_t n = 0;

	buf[0] = '\0';
	if (f) {
		if (fgets(buf, (int)len, f))
			n = strlen(buf);
		fclose(f);
	}
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	if (n)
		return;
	if (uname(&u) == 0)
		snprintf(buf, len, "%s", u.nodename);
}

static struct soft_dev *new_ism(void)
{
	struct soft_dev *d = calloc(1, sizeof(*d));
	char id[256];

	if (!d)
		return NULL;
	d->kind = SOFT_DEV_ISM;
	snprintf(d->name, sizeof(d->name), "%s", SOFT_ISM_NAME);
	snprintf(d->pci_id, sizeof(d->pci_id), "%s", SOFT_ISM_PCI_ID);
	d->fid = SOFT_ISM_FID;
	d->chid = SOFT_ISM_CHID;
	d->vendor = SOFT_ISM_VENDOR;
	d->device = SOFT_ISM_DEVICE;
	machine_identity(id, sizeof(id));
	d->gid = fnv1a64("smc_softd-ism-gid:", id);
	d->gid_ext = fnv1a64("smc_softd-ism-gid-ext:", id);
	return d;
}

/* The rules of smc_pnet -D (lib/ifname.c); '=' would end NAME in --roce NAME=IFACE. */
const char *soft_dev_name_invalid(const char *name)
{
	const char *why = smc_ibname_invalid(name);

	if (why)
		return why;
	return strchr(name, '=') ? "contains '='" : "";
}

static bool name_taken(const struct soft_state *st, const char *name)
{
	return soft_dev_find_roce(st, name) || soft_dev_find_ism(st, name);
}

static int add_roce(struct soft_state *st, const char *name, const char *ifname,
		    unsigned int ifindex)
{
	struct soft_dev *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	d->kind = SOFT_DEV_ROCE;
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->n_ports = 1;
	d->ifindex[0] = ifindex;
	snprintf(d->ifname[0], sizeof(d->ifname[0]), "%s", ifname);
	soft_dev_append(st, d);
	return 0;
}

/* One --roce NAME=IFACE checked and added; err quotes them escaped. */
static int roce_add_spec(struct soft_state *st, const char *spec, const char *name,
			 const char *ifname, char *err, size_t errlen)
{
	char *s = smc_name_escape(spec), *n = smc_name_escape(name), *i = smc_name_escape(ifname);
	unsigned int ifindex = 0;
	const char *why;
	int rc = -1;

	if (!s || !n || !i)
		snprintf(err, errlen, "--roce: out of memory");
	else if (*(why = soft_dev_name_invalid(name)))
		snprintf(err, errlen, "--roce %s: invalid device name '%s': %s", s, n, why);
	else if (name_taken(st, name))
		snprintf(err, errlen, "--roce %s: device name '%s' is already in use", s, n);
	else if ((why = smc_ifname_invalid(ifname)))
		snprintf(err, errlen, "--roce %s: invalid interface name '%s': %s", s, i, why);
	else if (!(ifindex = if_nametoindex(ifname)))
		snprintf(err, errlen, "--roce %s: no network interface '%s'", s, i);
	else if (add_roce(st, name, ifname, ifindex))
		snprintf(err, errlen, "--roce %s: out of memory", s);
	else
		rc = 0;
	free(s);
	free(n);
	free(i);
	return rc;
}

/* One --roce NAME=IFACE: NAME ends at the first '='. */
static int roce_spec(struct soft_state *st, const char *spec, char *err, size_t errlen)
{
	const char *eq = strchr(spec, '=');
	char *name, *s;
	int rc;

	if (!eq) {
		s = smc_name_escape(spec);
		snprintf(err, errlen, "--roce %s: expected NAME=IFACE", s ? s : "");
		free(s);
		return -1;
	}
	name = strndup(spec, (size_t)(eq - spec));
	if (!name) {
		snprintf(err, errlen, "--roce: out of memory");
		return -1;
	}
	rc = roce_add_spec(st, spec, name, eq + 1, err, errlen);
	free(name);
	return rc;
}

int soft_devs_init(struct soft_state *st, char *const *roce_specs, int n_roce,
		   char *err, size_t errlen)
{
	struct soft_dev *ism = new_ism();

	if (!ism) {
		snprintf(err, errlen, "creating the soft ISM device: out of memory");
		return -1;
	}
	soft_dev_append(st, ism);
	for (int i = 0; i < n_roce; i++) {
		if (roce_spec(st, roce_specs[i], err, errlen)) {
			soft_devs_free(st);
			return -1;
		}
	}
	if (soft_rdma_refresh(st)) {
		snprintf(err, errlen, "reading the RDMA devices of %s: out of memory", st->sysfs);
		soft_devs_free(st);
		return -1;
	}
	return 0;
}
