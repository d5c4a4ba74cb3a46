/* smc_rnics: the listings' layouts, one table of text formats and JSON keys each. */
#include "rnics.h"

#include <stdlib.h>
#include <string.h>

#define S390_HEAD "FID   Power  PCI_ID        PCHID  Type             PFT   "
#define S390_COLS(vf, prt, dev)                                              \
	{ { "fid", "%4s  " }, { "power", "%-5s  " }, { "pci_id", "%-12s  " }, \
	  { "pchid", "%-4s   " }, { "type", "%-15s  " }, { "pft", "%-4s  " },  \
	  { vf, "%-3s  " }, { prt, "%-4s  " }, { "pnet_id", "%-17s  " },       \
	  { dev, "%s" } }

const struct rnics_layout rnics_s390_net = {
	S390_HEAD "VF   PPrt  PNET_ID            Net-Dev", 10,
	S390_COLS("vf", "pport", "net_dev"),
};
const struct rnics_layout rnics_s390_net_raw = {
	S390_HEAD "VFN  PPrt  PNET_ID            Net-Dev", 10,
	S390_COLS("vfn", "pport", "net_dev"),
};
const struct rnics_layout rnics_s390_ib = {
	S390_HEAD "VF   IPrt  PNET_ID            IB-Dev", 10,
	S390_COLS("vf", "iport", "ib_dev"),
};
const struct rnics_layout rnics_s390_ib_raw = {
	S390_HEAD "VFN  IPrt  PNET_ID            IB-Dev", 10,
	S390_COLS("vfn", "iport", "ib_dev"),
};

/* Other architectures: one row per port of each RDMA device. */
const struct rnics_layout rnics_rdma = {
	"IB-Dev          PCI_ID        Type         IPrt  State         PNET_ID            Net-Dev", 7,
	{ { "ib_dev", "%-14s  " }, { "pci_id", "%-12s  " }, { "type", "%-11s  " },
	  { "iport", "%-4s  " }, { "state", "%-12s  " }, { "pnet_id", "%-17s  " },
	  { "net_dev", "%s" } },
};

void rnics_table_init(struct rnics_table *t, const struct rnics_layout *lay)
{
	memset(t, 0, sizeof(*t));
	t->lay = lay;
}

struct rnics_row *rnics_table_add(struct rnics_table *t, unsigned long key)
{
	struct rnics_row *r;

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		struct rnics_row *nr = realloc(t->rows, cap * sizeof(*nr));

		if (!nr)
			return NULL;
		t->rows = nr;
		t->cap = cap;
	}
	r = &t->rows[t->n];
	memset(r, 0, sizeof(*r));
	r->fid = key;
	r->seq = t->n++;
	return r;
}

void rnics_table_free(struct rnics_table *t)
{
	free(t->rows);
	t->rows = NULL;
	t->n = t->cap = 0;
}

/* Numerically by FID (upstream's `sort -k 1` depended on the locale). */
static int by_key(const void *a, const void *b)
{
	const struct rnics_row *x = a, *y = b;

	if (x->fid != y->fid)
		return x->fid < y->fid ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void print_row(const struct rnics_layout *lay, const struct rnics_row *r, FILE *f)
{
	for (int c = 0; c < lay->ncols; c++)
		fprintf(f, lay->cols[c].fmt, r->cell[c]);
	fputc('\n', f);
}

static void json_row(const struct rnics_layout *lay, const struct rnics_row *r,
		     struct smc_json *j)
{
	json_open_object(j, NULL);
	for (int c = 0; c < lay->ncols; c++)
		if (r->cell[c][0])      /* a powered-off slot has FID and power only */
			json_str(j, lay->cols[c].key, r->cell[c]);
	json_close_object(j);
}

void rnics_table_print(struct rnics_table *t, FILE *f, bool json)
{
	struct smc_json j;

	if (t->n)
		qsort(t->rows, t->n, sizeof(*t->rows), by_key);
	if (json) {
		json_init(&j, f);
		json_open_object(&j, NULL);
		json_open_array(&j, "rnics");
		for (size_t i = 0; i < t->n; i++)
			json_row(t->lay, &t->rows[i], &j);
		json_close_array(&j);
		json_close_object(&j);
		json_finish(&j);
		return;
	}
	fprintf(f, "%s\n", t->lay->header);
	for (int i = 0; i < 100; i++)
		fputc('-', f);
	fputc('\n', f);
	for (size_t i = 0; i < t->n; i++)
		print_row(t->lay, &t->rows[i], f);
}
