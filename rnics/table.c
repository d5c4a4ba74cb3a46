/* smc_rnics: the listings' layouts, one column table (lib/cols.h) each, and their printing. */
#include "rnics.h"

#include <stdlib.h>
#include <string.h>

#define DASHES "----------------------------------------------------------------------------------------------------"

/* Values a row has besides its cells (field numbers after the cells'). */
enum { X_PFT = RNICS_MAX_COLS, X_PFT_NAME, X_PNET_ID, X_PNET_USR, X_COUNT };

#define TEXT SMC_COL_TEXT
#define JSON SMC_COL_JSON

/* Text format and JSON key of each cell of a row, side by side. */
#define COL(key, fmt, cell) { key, NULL, fmt, cell, 0, 0, NULL }
#define PFT_COLS(fmt, cell)                                                      \
	{ NULL, NULL, fmt, cell, 0, TEXT, NULL }, { "pft", NULL, NULL, X_PFT, 0, JSON, NULL }
#define PNET_COLS(fmt, cell)                                                     \
	{ NULL, NULL, fmt, cell, 0, TEXT, NULL },                                \
	{ "pnet_id", NULL, NULL, X_PNET_ID, 0, JSON, NULL },                      \
	{ "pnet_user", NULL, NULL, X_PNET_USR, 0, JSON, NULL }
#define PFT_NAME { "pft_name", NULL, NULL, X_PFT_NAME, 0, JSON, NULL }

#define S390_HEAD "FID   Power  PCI_ID        PCHID  Type             PFT   "
#define S390_KINDS(vf) { RK_HEX, RK_DEC, RK_STR, RK_HEX, RK_STR, RK_PFT, vf, RK_DEC, RK_PNET, RK_STR }
#define S390_FIRST COL("fid", "%4s  ", 0), COL("power", "%-5s  ", 1),           \
	COL("pci_id", "%-12s  ", 2), COL("pchid", "%-4s   ", 3), COL("type", "%-15s  ", 4)

static const struct smc_col s390_net[] = {
	S390_FIRST, PFT_COLS("%-4s  ", 5), PFT_NAME, COL("vf", "%-3s  ", 6),
	COL("pport", "%-4s  ", 7), PNET_COLS("%-17s  ", 8), COL("net_dev", "%s", 9),
};
static const struct smc_col s390_net_raw[] = {
	S390_FIRST, PFT_COLS("%-4s  ", 5), COL("vfn", "%-3s  ", 6),
	COL("pport", "%-4s  ", 7), PNET_COLS("%-17s  ", 8), COL("net_dev", "%s", 9),
};
static const struct smc_col s390_ib[] = {
	S390_FIRST, PFT_COLS("%-4s  ", 5), PFT_NAME, COL("vf", "%-3s  ", 6),
	COL("ib_port", "%-4s  ", 7), PNET_COLS("%-17s  ", 8), COL("ib_dev", "%s", 9),
};
static const struct smc_col s390_ib_raw[] = {
	S390_FIRST, PFT_COLS("%-4s  ", 5), COL("vfn", "%-3s  ", 6),
	COL("ib_port", "%-4s  ", 7), PNET_COLS("%-17s  ", 8), COL("ib_dev", "%s", 9),
};

const struct rnics_layout rnics_s390_net = {
	S390_HEAD "VF   PPrt  PNET_ID            Net-Dev", 10, S390_KINDS(RK_YN),
	SMC_LISTING(s390_net),
};
const struct rnics_layout rnics_s390_net_raw = {
	S390_HEAD "VFN  PPrt  PNET_ID            Net-Dev", 10, S390_KINDS(RK_DEC),
	SMC_LISTING(s390_net_raw),
};
const struct rnics_layout rnics_s390_ib = {
	S390_HEAD "VF   IPrt  PNET_ID            IB-Dev", 10, S390_KINDS(RK_YN),
	SMC_LISTING(s390_ib),
};
const struct rnics_layout rnics_s390_ib_raw = {
	S390_HEAD "VFN  IPrt  PNET_ID            IB-Dev", 10, S390_KINDS(RK_DEC),
	SMC_LISTING(s390_ib_raw),
};

/* Other architectures: one row per port of each RDMA device. */
static const struct smc_col rdma[] = {
	COL("ib_dev", "%-14s  ", 0), COL("pci_id", "%-12s  ", 1), COL("type", "%-11s  ", 2),
	COL("ib_port", "%-4s  ", 3), COL("port_state", "%-12s  ", 4), PNET_COLS("%-17s  ", 5),
	COL("net_dev", "%s", 6),
};

const struct rnics_layout rnics_rdma = {
	"IB-Dev          PCI_ID        Type         IPrt  State         PNET_ID            Net-Dev", 7,
	{ RK_STR, RK_STR, RK_STR, RK_DEC, RK_STR, RK_PNET, RK_STR },
	SMC_LISTING(rdma),
};

/* -D: the DIBS devices of class/dibs, on every architecture. */
static const struct smc_col dibs[] = {
	COL("dibs_dev", "%-14s  ", 0), COL("type", "%-8s  ", 1), COL("pci_id", "%-12s  ", 2),
	COL("fid", "%-8s  ", 3), COL("fabric_id", "%-6s  ", 4), COL("gid", "%s", 5),
};

const struct rnics_layout rnics_dibs = {
	"DIBS-Dev        Type      PCI_ID        FID       Fabric  GID", 6,
	{ RK_STR, RK_STR, RK_STR, RK_HEX, RK_HEX, RK_STR },
	SMC_LISTING(dibs),
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

/* The values of a row: a number whose text is the cell, or the cell itself. */
struct row_vals {
	struct smc_val v[X_COUNT];
	char pnet[RNICS_CELL];
};

static struct smc_val num_val(const char *cell, int base)
{
	char *end;
	unsigned long long n = strtoull(cell, &end, base);

	return *cell && !*end ? smc_num_as(n, cell) : smc_none_as(cell);
}

/* "NET1*" (from the software PNET table) or "NET1" (hardware), else none. */
static void pnet_vals(struct row_vals *w, const char *cell)
{
	size_t n = strlen(cell);
	bool user = n && cell[n - 1] == '*';

	w->v[X_PNET_USR] = smc_bool(user);
	if (!n || !strcmp(cell, "n/a")) {
		w->v[X_PNET_ID] = smc_none();
		return;
	}
	snprintf(w->pnet, sizeof(w->pnet), "%.*s", (int)(user ? n - 1 : n), cell);
	w->v[X_PNET_ID] = smc_str(w->pnet);
}

/* Raw mode shows the number ("0x0a"), else the name when it is known. */
static void pft_vals(struct row_vals *w, const struct rnics_row *r, const char *cell)
{
	if (!strcmp(cell, "n/a")) {             /* no PCI function: a soft device */
		w->v[X_PFT] = smc_none();
		w->v[X_PFT_NAME] = smc_none();
		return;
	}
	w->v[X_PFT] = smc_num(r->pft);
	w->v[X_PFT_NAME] = strncmp(cell, "0x", 2) ? smc_str(cell) : smc_none();
}

static struct smc_val cell_val(enum rnics_kind k, const char *cell)
{
	switch (k) {
	case RK_HEX:
		return num_val(cell, 16);
	case RK_DEC:
		return num_val(cell, 10);
	case RK_YN:
		return *cell && strcmp(cell, "n/a") ? smc_bool_as(!strcmp(cell, "y"), cell) : smc_none_as(cell);
	default:
		return *cell && strcmp(cell, "n/a") ? smc_str(cell) : smc_none_as(cell);
	}
}

static void row_vals(const struct rnics_layout *lay, const struct rnics_row *r,
		     struct row_vals *w)
{
	for (int c = 0; c < X_COUNT; c++)
		w->v[c] = smc_none();
	for (int c = 0; c < lay->ncells; c++) {
		const char *cell = r->cell[c];

		w->v[c] = cell_val(lay->kinds[c], cell);
		if (lay->kinds[c] == RK_PFT && *cell)
			pft_vals(w, r, cell);
		else if (lay->kinds[c] == RK_PNET && *cell)
			pnet_vals(w, cell);
	}
}

/* One row: its cells in text, one object in JSON (a powered-off slot: all but fid and power null). */
static void put_row(struct smc_out *o, const struct rnics_layout *lay, const struct rnics_row *r)
{
	struct row_vals w;

	row_vals(lay, r, &w);
	out_open_object(o, NULL);
	smc_cols_put(o, &lay->cols, w.v, 0, 0, 0);
	out_close_object(o);
	out_text(o, "\n");
}

void rnics_table_print(struct rnics_table *t, FILE *f, bool json)
{
	struct smc_json j;
	struct smc_out o = { .f = f, .j = NULL };

	if (t->n)
		qsort(t->rows, t->n, sizeof(*t->rows), by_key);
	if (json) {
		json_init(&j, f);
		o.j = &j;
	}
	out_doc_begin(&o, "rnics");
	out_text(&o, "%s\n%.100s\n", t->lay->header, DASHES);
	for (size_t i = 0; i < t->n; i++)
		put_row(&o, t->lay, &t->rows[i]);
	out_doc_end(&o);
}
