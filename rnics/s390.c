/* smc_rnics: the s390 listing (PCI slots by FID), as smc_rnics(8) describes it. */
#include "rnics.h"

#include <stdlib.h>
#include <string.h>

enum { C_FID, C_POWER, C_PCI, C_PCHID, C_TYPE, C_PFT, C_VF, C_PORT, C_PNET, C_DEV };

/* What one PCI function contributes to each of its rows. */
struct func {
	const char *pci;
	const struct rnics_opts *o;
	const struct rnics_pnet *pnet;
	struct rnics_class cls;
	unsigned int pft;
	char proto[RNICS_MAX_COLS][RNICS_CELL];
	char util[RNICS_PNET_SLOTS * RNICS_PNET_LEN + 1];
};

#define CELL(r, c, ...) snprintf((r)[c], RNICS_CELL, __VA_ARGS__)

/* Port from the device's port attribute: 0 or missing -> n/a. */
static void port_attr(const struct func *f, char *out)
{
	char buf[32];

	if (rnics_read(buf, sizeof(buf), "bus/pci/devices/%s/port", f->pci) < 0 || !atoi(buf))
		snprintf(out, RNICS_CELL, "n/a");
	else if (f->o->ib)
		snprintf(out, RNICS_CELL, "1");
	else
		snprintf(out, RNICS_CELL, "%d", atoi(buf) - 1);
}

static int fw_major(const char *pci)
{
	char **ib, buf[64];
	int n = rnics_list(&ib, "bus/pci/devices/%s/infiniband", pci), major = -1;

	if (n > 0 && rnics_read(buf, sizeof(buf), "bus/pci/devices/%s/infiniband/%s/fw_ver",
				pci, ib[0]) > 0)
		major = atoi(buf);
	rnics_list_free(ib, n);
	return major;
}

static void pnet_cell(const struct func *f, struct rnics_row *r)
{
	const char *port = r->cell[C_PORT];
	int l = 0;

	if (!strcmp(r->cell[C_TYPE], "RoCE_Express") && strcmp(port, "n/a"))
		l = atoi(port) - (f->o->ib ? 1 : 0);
	if (l < 0 || l >= RNICS_PNET_SLOTS)
		l = 0;
	rnics_util_pnet(f->util, strlen(f->util), l, r->cell[C_PNET], RNICS_CELL);
	if (!r->cell[C_PNET][0] &&
	    !rnics_pnet_lookup(f->pnet, f->o->ib ? NULL : r->cell[C_DEV], f->pci,
			       (unsigned int)l + 1, r->cell[C_PNET], RNICS_CELL))
		CELL(r->cell, C_PNET, "n/a");
}

static int emit(struct rnics_table *t, const struct func *f, unsigned long fid,
		const char *port, const char *dev)
{
	struct rnics_row *r = rnics_table_add(t, fid);

	if (!r)
		return -1;
	memcpy(r->cell, f->proto, sizeof(r->cell));
	r->pft = f->pft;
	CELL(r->cell, C_PORT, "%s", port);
	CELL(r->cell, C_DEV, "%s", dev);
	pnet_cell(f, r);
	return 0;
}

static int net_rows(struct rnics_table *t, const struct func *f, unsigned long fid,
		    const char *port0)
{
	char **net, port[RNICS_CELL], buf[32];
	int n = rnics_list(&net, "bus/pci/devices/%s/net", f->pci), rc = 0;

	if (n <= 0 || f->pft == 0x05) {
		rnics_list_free(net, n);
		return emit(t, f, fid, port0, "n/a");
	}
	for (int i = 0; i < n && !rc; i++) {
		port_attr(f, port);
		if (f->pft == 0x02 && rnics_read(buf, sizeof(buf), "bus/pci/devices/%s/net/%s/dev_port",
						 f->pci, net[i]) > 0)
			snprintf(port, sizeof(port), "%d", atoi(buf));
		rc = emit(t, f, fid, port, net[i]);
	}
	rnics_list_free(net, n);
	return rc;
}

static int ib_rows(struct rnics_table *t, const struct func *f, unsigned long fid,
		   const char *port0)
{
	char **ib, **ports = NULL;
	int n = rnics_list(&ib, "bus/pci/devices/%s/infiniband", f->pci), np = -1, rc = 0;

	if (n > 0)
		np = rnics_list(&ports, "bus/pci/devices/%s/infiniband/%s/ports", f->pci, ib[0]);
	if (np <= 0)
		rc = emit(t, f, fid, port0, n > 0 ? ib[0] : "n/a");
	for (int i = 0; i < np && !rc; i++)
		rc = emit(t, f, fid, ports[i], ib[0]);
	rnics_list_free(ports, np);
	rnics_list_free(ib, n);
	return rc;
}

static void util_string(struct func *f)
{
	unsigned char raw[RNICS_PNET_SLOTS * RNICS_PNET_LEN];
	int n = rnics_read_bin(raw, sizeof(raw), "bus/pci/devices/%s/util_string", f->pci);

	rnics_ebcdic_decode(raw, n > 0 ? (size_t)n : 0, f->util);
}

/* The cells every row of a function shares; false when the row is skipped. */
static bool classify(struct func *f)
{
	char vendor[32], device[32], pft[32], vfn[32], pchid[32];
	const char *ven, *dev;
	unsigned long vf;

	rnics_read(vendor, sizeof(vendor), "bus/pci/devices/%s/vendor", f->pci);
	rnics_read(device, sizeof(device), "bus/pci/devices/%s/device", f->pci);
	rnics_read(pft, sizeof(pft), "bus/pci/devices/%s/pft", f->pci);
	rnics_read(vfn, sizeof(vfn), "bus/pci/devices/%s/vfn", f->pci);
	rnics_read(pchid, sizeof(pchid), "bus/pci/devices/%s/pchid", f->pci);
	ven = rnics_fid_text(vendor);
	dev = rnics_fid_text(device);
	vf = strtoul(vfn, NULL, 16);
	f->pft = (unsigned int)strtoul(pft, NULL, 16);
	CELL(f->proto, C_PCI, "%s", f->pci);
	CELL(f->proto, C_PCHID, "%s", rnics_fid_text(pchid));
	if (f->o->raw) {
		CELL(f->proto, C_TYPE, "%s:%s", ven, dev);
		CELL(f->proto, C_PFT, "%s", pft);
		CELL(f->proto, C_VF, "%lu", vf);
		return true;
	}
	rnics_classify(f->pft, f->pft == 0x0a ? fw_major(f->pci) : -1, &f->cls);
	if (!f->cls.known && !f->o->all)
		return false;
	if (f->cls.type)
		CELL(f->proto, C_TYPE, "%s", f->cls.type);
	else
		CELL(f->proto, C_TYPE, "%s:%s", ven, dev);
	CELL(f->proto, C_PFT, "%s", f->cls.pft ? f->cls.pft : pft);
	CELL(f->proto, C_VF, "%s", !f->cls.vf_from_vfn || vf ? "y" : "n");
	return true;
}

static char *find_device(unsigned long fid)
{
	char **dev, want[16], buf[32], *hit = NULL;
	int n = rnics_list(&dev, "bus/pci/devices");

	snprintf(want, sizeof(want), "0x%08lx", fid);
	for (int i = 0; i < n && !hit; i++)
		if (rnics_read(buf, sizeof(buf), "bus/pci/devices/%s/function_id", dev[i]) > 0 &&
		    !strcmp(buf, want))
			hit = strdup(dev[i]);
	rnics_list_free(dev, n);
	return hit;
}

static int slot_rows(struct rnics_table *t, const struct rnics_opts *o,
		     const struct rnics_pnet *pnet, unsigned long fid, FILE *err)
{
	struct func f = { .o = o, .pnet = pnet };
	char power[16], port0[RNICS_CELL] = "n/a";
	struct rnics_row *r;
	char *pci;
	int rc;

	rnics_read(power, sizeof(power), "bus/pci/slots/%08lx/power", fid);
	if (!strcmp(power, "0")) {
		if (!o->all)
			return 0;
		if (!(r = rnics_table_add(t, fid)))
			return -1;
		CELL(r->cell, C_FID, "%lx", fid);
		CELL(r->cell, C_POWER, "%s", power);
		return 0;
	}
	pci = find_device(fid);
	if (!pci) {
		fprintf(err, "Error: No matching device found for FID %08lx\n", fid);
		return 0;
	}
	f.pci = pci;
	CELL(f.proto, C_FID, "%lx", fid);
	CELL(f.proto, C_POWER, "%s", power);
	util_string(&f);
	rc = 0;
	if (classify(&f)) {
		if (!o->raw && f.cls.port_attr)
			port_attr(&f, port0);
		rc = o->ib ? ib_rows(t, &f, fid, port0) : net_rows(t, &f, fid, port0);
	}
	free(pci);
	return rc;
}

int rnics_s390_rows(struct rnics_table *t, const struct rnics_opts *o,
		    const struct rnics_pnet *pnet, FILE *err)
{
	char **slot;
	int n = rnics_list(&slot, "bus/pci/slots"), rc = 0;

	for (int i = 0; i < n && !rc; i++) {
		unsigned long fid;

		if (rnics_parse_fid(slot[i], &fid) || (o->have_fid && fid != o->fid))
			continue;
		rc = slot_rows(t, o, pnet, fid, err);
	}
	rnics_list_free(slot, n);
	return rc;
}
