/*
 * smc_rnics: the testable parts.  sysfs is read below a root directory
 * (SMC_SYSFS_ROOT, default /sys) so a copied tree can be listed offline.
 */
#ifndef SMC_RNICS_H
#define SMC_RNICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cols.h"
#include "output.h"

/* ---- FID ---------------------------------------------------------------- */

/* Optional 0x, then hex digits only (at most 8).  0, or -1 when invalid. */
int rnics_parse_fid(const char *s, unsigned long *fid);
/* The FID text for error messages: s without a leading 0x. */
const char *rnics_fid_text(const char *s);

/* ---- util_string -------------------------------------------------------- */

#define RNICS_PNET_SLOTS 4
#define RNICS_PNET_LEN 16

/*
 * Decode n bytes of EBCDIC (IBM-1047) into out (n + 1 bytes): NUL becomes a
 * blank, A-Z, a-z, 0-9 and blank are mapped, anything else becomes '?'.
 */
void rnics_ebcdic_decode(const unsigned char *in, size_t n, char *out);
/* PNET ID of slot idx (0..3) of a decoded util_string, blanks removed. */
void rnics_util_pnet(const char *decoded, size_t len, int idx, char *out, size_t outlen);

/* ---- classification (s390) ---------------------------------------------- */

struct rnics_class {
	const char *type;       /* NULL: "<vendor>:<device>" */
	const char *pft;        /* NULL: raw pft text */
	bool vf_from_vfn;       /* VF cell y/n by VFN, else always y */
	bool port_attr;         /* the port attribute is read while classifying */
	bool known;             /* unknown types are listed only with -a */
};

/*
 * Classify a PCI function by its function type; fw_major is the firmware
 * major version of a pft 0x0a function (-1 unknown).
 */
void rnics_classify(unsigned int pft, int fw_major, struct rnics_class *c);

/* ---- software PNET table ------------------------------------------------- */

struct rnics_pnet_entry {
	char id[RNICS_PNET_LEN + 1];
	char eth[16];
	char ib[64];
	unsigned int port;      /* 255: any */
};

struct rnics_pnet {
	struct rnics_pnet_entry *e;
	size_t n;
};

/* Dump the table through the SMC_PNETID family; empty when no backend answers. */
void rnics_pnet_load(struct rnics_pnet *t);
int rnics_pnet_add(struct rnics_pnet *t, const struct rnics_pnet_entry *e);
void rnics_pnet_free(struct rnics_pnet *t);
/*
 * The software PNET ID for a net device or an RDMA device/PCI ID and a port
 * (1-based): last matching entry, written as "<id>*"; false when none.
 */
bool rnics_pnet_lookup(const struct rnics_pnet *t, const char *netdev, const char *dev,
		       unsigned int port, char *out, size_t outlen);

/* ---- table -------------------------------------------------------------- */

#define RNICS_MAX_COLS 10
#define RNICS_CELL 72

/*
 * What a cell is in JSON: the text cell is what upstream prints; "n/a" (and
 * the empty cells of a powered-off slot) are null in every kind.
 */
enum rnics_kind {
	RK_STR,                 /* string */
	RK_HEX,                 /* hex digits: a number */
	RK_DEC,                 /* decimal digits: a number */
	RK_YN,                  /* "y"/"n": a bool */
	RK_PFT,                 /* the function type: "pft" number, "pft_name" when named */
	RK_PNET,                /* "NET1*": "pnet_id":"NET1", "pnet_user":true */
};

/*
 * A listing: its header line, and the cells of a row as a column table
 * (lib/cols.h) whose text columns take cell c as field c.
 */
struct rnics_layout {
	const char *header;
	int ncells;
	enum rnics_kind kinds[RNICS_MAX_COLS];
	struct smc_listing cols;
};

struct rnics_row {
	unsigned long fid;      /* sort key */
	unsigned int pft;       /* s390: the function type (RK_PFT) */
	size_t seq;             /* production order among equal keys */
	char cell[RNICS_MAX_COLS][RNICS_CELL];
};

struct rnics_table {
	const struct rnics_layout *lay;
	struct rnics_row *rows;
	size_t n, cap;
};

extern const struct rnics_layout rnics_s390_net, rnics_s390_net_raw;
extern const struct rnics_layout rnics_s390_ib, rnics_s390_ib_raw;
extern const struct rnics_layout rnics_rdma;
extern const struct rnics_layout rnics_dibs;
/* An RDMA device's type (RNICS_CELL bytes): its parent's driver, else the name up to '_' or a digit (rxe0, siw_eth0). */
void rnics_driver(const char *ib, char *out);

void rnics_table_init(struct rnics_table *t, const struct rnics_layout *lay);
/* A new zeroed row, or NULL when out of memory. */
struct rnics_row *rnics_table_add(struct rnics_table *t, unsigned long key);
void rnics_table_free(struct rnics_table *t);
/* Sort numerically by key, stable; print the header and rows or one JSON document. */
void rnics_table_print(struct rnics_table *t, FILE *f, bool json);

/* ---- sysfs --------------------------------------------------------------- */

struct rnics_opts {
	bool all, raw, ib, json, dibs;
	bool have_fid;
	unsigned long fid;      /* filter */
};

/* The sysfs root: SMC_SYSFS_ROOT or /sys. */
const char *rnics_root(void);
/* Read a small text file below the root (path printf-style), trailing newline cut. */
int rnics_read(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Read up to len raw bytes; the count or -1. */
int rnics_read_bin(unsigned char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The last component of a symbolic link's target below the root. */
int rnics_link_base(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Whether a path below the root (printf-style) exists. */
bool rnics_exists(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Sorted names of a directory below the root (without . and ..); -1 if missing. */
int rnics_list(char ***names, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rnics_list_free(char **names, int n);

/* s390 listing (smc_rnics(8)) into t; "No matching device" lines go to err. */
int rnics_s390_rows(struct rnics_table *t, const struct rnics_opts *o,
		    const struct rnics_pnet *pnet, FILE *err);
/* RDMA devices of class/infiniband (other architectures). */
int rnics_rdma_rows(struct rnics_table *t, const struct rnics_opts *o,
		    const struct rnics_pnet *pnet);

/*
 * DIBS devices of class/dibs (-D; Linux 6.18 and later): name, type
 * (loopback, ISM, else the parent's driver), PCI function, FID, fabric ID,
 * GID.  With a FID only the device of that PCI function.  0, or -1 when out
 * of memory.
 */
int rnics_dibs_rows(struct rnics_table *t, const struct rnics_opts *o);

/*
 * The soft backend's devices (soft RoCE ports and the soft ISM), when the
 * tools use smc_softd; nothing otherwise.  0, or -1 when out of memory.
 */
int rnics_soft_rows(struct rnics_table *t, const struct rnics_opts *o);

/* ---- hot-plug ----------------------------------------------------------- */

enum rnics_power_rc {
	RNICS_POWER_OK = 0,
	RNICS_POWER_NOFID = 5,
	RNICS_POWER_SAME = 6,
	RNICS_POWER_FAILED = 7,
};

/* Set the slot's power file to on (1) or off (0). */
enum rnics_power_rc rnics_set_power(unsigned long fid, bool on);

#endif
