/*
 * The PNET table of a network namespace (family SMC_PNETID) and the PNET IDs
 * it applies to the soft devices: the rules of the kernel's smc_pnet.c.
 */
#ifndef SOFT_PNETTAB_H
#define SOFT_PNETTAB_H

#include <stdbool.h>
#include <stdint.h>

#include "devices.h"
#include "state.h"

struct soft_pnet_entry {
	struct soft_pnet_entry *next;
	bool ib;                               /* IB/ISM entry, else an ETH entry */
	char pnetid[SOFT_PNETID_LEN + 1];
	char eth_name[IF_NAMESIZE];
	char ib_name[SOFT_IBNAME_MAX];
	uint8_t ib_port;
};

/*
 * smc_pnetid_valid(): blanks around it skipped, 1..16 alphanumeric
 * characters, stored upper-cased in out.
 */
bool soft_pnetid_valid(const char *in, char out[SOFT_PNETID_LEN + 1]);
/* smc_pnet_match(): up to 16 bytes; a NUL or blank in both ends the compare. */
bool soft_pnet_match(const char *a, const char *b);

/* Add an ETH entry (pnetid already valid): 0, -EEXIST or -ENOMEM. */
int soft_pnet_add_eth(struct soft_ns *ns, const char *eth, const char *pnetid);
/*
 * Apply pnetid to the soft devices named ib (port 1..2), then add an IB
 * entry: 0, -EEXIST (a device already has a PNET ID, or an entry for ib
 * exists) or -ENOMEM.
 */
int soft_pnet_add_ib(struct soft_state *st, struct soft_ns *ns, const char *ib,
		     uint8_t port, const char *pnetid);
/*
 * smc_pnetid_by_table_ib() for each port of a device that came: the initial
 * namespace's IB entries naming it set its ports' PNET IDs.
 */
void soft_pnet_apply_table_ib(struct soft_state *st, struct soft_dev *d);
/*
 * Remove the entries matching pnetid (all when NULL) and, in the initial
 * namespace, user-set device PNET IDs: 0, or -ENOENT when nothing matched.
 */
int soft_pnet_remove(struct soft_state *st, struct soft_ns *ns, const char *pnetid);

/* The PNET ID the table gives interface ifname in ns (for the data path), or NULL. */
const char *soft_pnet_of_eth(const struct soft_ns *ns, const char *ifname);

/* The namespace's PNET table freed (soft_state_free). */
void soft_pnet_free(struct soft_ns *ns);

#endif
