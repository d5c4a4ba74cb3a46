/* PNET table entries and device PNET IDs, with the kernel's rules (smc_pnet.c). */
#include "pnettab.h"
#include "kctype.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool soft_pnetid_valid(const char *in, char out[SOFT_PNETID_LEN + 1])
{
	const char *bf = in, *end;
	size_t n = 0;

	while (k_isspace((unsigned char)*bf))
		bf++;
	if (!*bf)
		return false;
	end = bf + strlen(bf) - 1;
	while (end >= bf && k_isspace((unsigned char)*end))
		end--;
	if (end - bf >= SOFT_PNETID_LEN)
		return false;
	for (; bf <= end; bf++) {
		if (!k_isalnum((unsigned char)*bf))
			return false;
		out[n++] = (char)k_toupper((unsigned char)*bf);
	}
	out[n] = '\0';
	return true;
}

bool soft_pnet_match(const char *a, const char *b)
{
	for (int i = 0; i < SOFT_PNETID_LEN; i++) {
		if ((a[i] == '\0' || a[i] == ' ') && (b[i] == '\0' || b[i] == ' '))
			break;
		if (a[i] != b[i])
			return false;
	}
	return true;
}

/* The kernel copies 16 bytes; the table keeps them NUL-terminated. */
static void set_id(char dst[SOFT_PNETID_LEN + 1], const char *src)
{
	memset(dst, 0, SOFT_PNETID_LEN + 1);
	memcpy(dst, src, strnlen(src, SOFT_PNETID_LEN));
}

static void append(struct soft_ns *ns, struct soft_pnet_entry *e)
{
	struct soft_pnet_entry **pp = &ns->pnet;

	while (*pp)
		pp = &(*pp)->next;
	*pp = e;
}

int soft_pnet_add_eth(struct soft_ns *ns, const char *eth, const char *pnetid)
{
	struct soft_pnet_entry *e;

	/* the interface's name alone decides; its PNET ID is not compared */
	for (e = ns->pnet; e; e = e->next)
		if (!e->ib && !strncmp(e->eth_name, eth, IF_NAMESIZE))
			return -EEXIST;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	set_id(e->pnetid, pnetid);
	strncpy(e->eth_name, eth, IF_NAMESIZE - 1);
	append(ns, e);
	return 0;
}

/* smc_pnet_apply_ib() / smc_pnet_apply_smcd(): only a port without a PNET ID. */
static bool apply(struct soft_dev *d, int idx, const char *pnetid)
{
	if (soft_pnetid_is_set(d->pnetid[idx]))
		return false;
	set_id(d->pnetid[idx], pnetid);
	d->pnet_user[idx] = true;
	return true;
}

int soft_pnet_add_ib(struct soft_state *st, struct soft_ns *ns, const char *ib,
		     uint8_t port, const char *pnetid)
{
	struct soft_dev *roce = soft_dev_find_roce(st, ib);
	struct soft_dev *ism = soft_dev_find_ism(st, ib);
	bool roce_ok = true, ism_ok = true;
	struct soft_pnet_entry *e;

	/* As the kernel: devices first; the entry check comes after them. */
	if (roce)
		roce_ok = apply(roce, port - 1, pnetid);
	if (ism)
		ism_ok = apply(ism, 0, pnetid);
	if (!roce_ok || !ism_ok)
		return -EEXIST;
	for (e = ns->pnet; e; e = e->next)
		if (e->ib && !strncmp(e->ib_name, ib, SOFT_IBNAME_MAX))
			return -EEXIST;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->ib = true;
	set_id(e->pnetid, pnetid);
	strncpy(e->ib_name, ib, SOFT_IBNAME_MAX - 1);
	e->ib_port = port;
	append(ns, e);
	return 0;
}

void soft_pnet_apply_table_ib(struct soft_state *st, struct soft_dev *d)
{
	const struct soft_ns *init = NULL;

	for (const struct soft_ns *ns = st->ns; ns && !init; ns = ns->next)
		if (ns->init)
			init = ns;
	for (const struct soft_pnet_entry *e = init ? init->pnet : NULL; e; e = e->next)
		if (e->ib && !strncmp(e->ib_name, d->name, SOFT_IBNAME_MAX) &&
		    e->ib_port >= 1 && e->ib_port <= d->n_ports && e->ib_port <= SOFT_PORTS)
			apply(d, e->ib_port - 1, e->pnetid);
}

static bool clear_dev(struct soft_dev *d, int idx, const char *pnetid)
{
	if (!d->pnet_user[idx] || (pnetid && !soft_pnet_match(pnetid, d->pnetid[idx])))
		return false;
	memset(d->pnetid[idx], 0, sizeof(d->pnetid[idx]));
	d->pnet_user[idx] = false;
	return true;
}

int soft_pnet_remove(struct soft_state *st, struct soft_ns *ns, const char *pnetid)
{
	struct soft_pnet_entry **pp = &ns->pnet, *e;
	int rc = -ENOENT;

	while ((e = *pp)) {
		if (!pnetid || soft_pnet_match(e->pnetid, pnetid)) {
			*pp = e->next;
			free(e);
			rc = 0;
		} else {
			pp = &e->next;
		}
	}
	if (!ns->init)
		return rc;
	for (struct soft_dev *d = st->devs; d; d = d->next) {
		int ports = d->kind == SOFT_DEV_ISM ? 1 : SOFT_PORTS;

		for (int i = 0; i < ports; i++)
			if (clear_dev(d, i, pnetid))
				rc = 0;
	}
	return rc;
}

const char *soft_pnet_of_eth(const struct soft_ns *ns, const char *ifname)
{
	for (const struct soft_pnet_entry *e = ns->pnet; e; e = e->next)
		if (!e->ib && !strncmp(e->eth_name, ifname, IF_NAMESIZE))
			return e->pnetid;
	return NULL;
}

void soft_pnet_free(struct soft_ns *ns)
{
	struct soft_pnet_entry *e, *next;

	for (e = ns->pnet; e; e = next) {
		next = e->next;
		free(e);
	}
	ns->pnet = NULL;
}
