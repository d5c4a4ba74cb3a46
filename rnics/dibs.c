/*
 * smc_rnics -D: the DIBS devices (Direct Internal Buffer Sharing, Linux 6.18
 * and later) of class/dibs, one row each: the ISM functions of IBM Z, which
 * the kernel names ism<uid or fid> below their PCI function, and the loopback
 * device "lo" (a virtual device, fabric ID 0xffff).  Each has the attributes
 * gid (the 128-bit GID as a UUID) and fabric_id ("0x%04x").
 */
#include "rnics.h"

#include <stdlib.h>
#include <string.h>

#include "ifname.h"
#include "names.h"

#define DIBS_LOOPBACK_FABRIC 0xffff     /* the kernel's DIBS_LOOPBACK_FABRIC */
#define PCI_VENDOR_IBM       0x1014

enum { C_DEV, C_TYPE, C_PCI, C_FID, C_FABRIC, C_GID };

#define CELL(r, c, ...) snprintf((r)[c], RNICS_CELL, __VA_ARGS__)

/* A sysfs number ("0x1014", "0x00001004"); false when absent or not a number. */
static bool read_num(unsigned long *v, const char *dev, const char *attr)
{
	char buf[RNICS_CELL], *end;

	if (rnics_read(buf, sizeof(buf), "class/dibs/%s/%s", dev, attr) <= 0)
		return false;
	*v = strtoul(buf, &end, 16);
	return end != buf && !*end;
}

/* loopback by its fabric, ISM by its PCI IDs, else the parent's driver; n/a without. */
static void dibs_type(const char *dev, bool pci, char *out)
{
	unsigned long fabric, vendor, device;

	if (read_num(&fabric, dev, "fabric_id") && fabric == DIBS_LOOPBACK_FABRIC)
		snprintf(out, RNICS_CELL, "loopback");
	else if (pci && read_num(&vendor, dev, "device/vendor") && vendor == PCI_VENDOR_IBM &&
		 read_num(&device, dev, "device/device") && device == SMC_PCI_DEVICE_ISM)
		snprintf(out, RNICS_CELL, "ISM");
	else if (rnics_link_base(out, RNICS_CELL, "class/dibs/%s/device/driver", dev))
		snprintf(out, RNICS_CELL, "n/a");
}

/* One device; *fid the FID of its PCI function (IBM Z), or -1. */
static void dibs_row(struct rnics_row *r, const char *dev, long *fid)
{
	unsigned long f;
	bool pci;

	*fid = -1;
	CELL(r->cell, C_DEV, "%s", dev);
	pci = !rnics_link_base(r->cell[C_PCI], RNICS_CELL, "class/dibs/%s/device", dev) &&
	      smc_is_pci_name(r->cell[C_PCI]);
	if (!pci)
		CELL(r->cell, C_PCI, "n/a");
	dibs_type(dev, pci, r->cell[C_TYPE]);
	if (pci && read_num(&f, dev, "device/function_id")) {
		*fid = (long)f;
		CELL(r->cell, C_FID, "%lx", f);
	} else {
		CELL(r->cell, C_FID, "n/a");
	}
	if (rnics_read(r->cell[C_FABRIC], RNICS_CELL, "class/dibs/%s/fabric_id", dev) <= 0)
		CELL(r->cell, C_FABRIC, "n/a");
	if (rnics_read(r->cell[C_GID], RNICS_CELL, "class/dibs/%s/gid", dev) <= 0)
		CELL(r->cell, C_GID, "n/a");
}

int rnics_dibs_rows(struct rnics_table *t, const struct rnics_opts *o)
{
	char **dev;
	int n = rnics_list(&dev, "class/dibs"), rc = 0;

	for (int i = 0; i < n; i++) {
		struct rnics_row *r = rnics_table_add(t, 0);
		long fid;

		if (!r) {
			rc = -1;
			break;
		}
		dibs_row(r, dev[i], &fid);
		if (o->have_fid && (fid < 0 || (unsigned long)fid != o->fid))
			t->n--;         /* not the FID asked for: drop the row again */
	}
	rnics_list_free(dev, n);
	return rc;
}
