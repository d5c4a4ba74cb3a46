/* The host-wide link group list and the counts the device listings show. */
#include "lgr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#define LGR_NUM_INCR 256                 /* SMC_LGR_NUM_INCR */

struct soft_lgr *soft_lgr_first(const struct soft_state *st)
{
	return st->lgrs;
}

struct soft_lgr *soft_lgr_of_owner(const struct soft_state *st, uint64_t owner, uint32_t key)
{
	for (struct soft_lgr *g = st->lgrs; g; g = g->next)
		if (!g->smcd && g->owner == owner && g->key == key)
			return g;
	return NULL;
}

uint32_t soft_lgr_id(const struct soft_lgr *lgr)
{
	uint32_t id;

	memcpy(&id, lgr->id, sizeof(id));
	return id;
}

struct soft_lgr *soft_lgr_new(struct soft_state *st, bool smcd)
{
	struct soft_lgr *lgr, **pp;

	if (smcd && !soft_dev_ism(st))
		return NULL;
	lgr = calloc(1, sizeof(*lgr));
	if (!lgr)
		return NULL;
	st->lgr_num += LGR_NUM_INCR;
	memcpy(lgr->id, &st->lgr_num, sizeof(lgr->id));
	lgr->smcd = smcd;
	lgr->version = 2;
	if (smcd)
		lgr->dev = soft_dev_ism(st);
	for (pp = &st->lgrs; *pp; pp = &(*pp)->next)
		;
	*pp = lgr;
	return lgr;
}

void soft_lgr_del(struct soft_state *st, struct soft_lgr *lgr)
{
	struct soft_lgr **pp;

	for (pp = &st->lgrs; *pp; pp = &(*pp)->next) {
		if (*pp == lgr) {
			*pp = lgr->next;
			free(lgr);
			return;
		}
	}
}

bool soft_link_usable(const struct soft_link *l)
{
	return l->state != SOFT_LNK_UNUSED && l->state != SOFT_LNK_INACTIVE;
}

/* smcr_next_link_id(): never 0, never the id of a usable link. */
static uint8_t next_link_id(struct soft_lgr *lgr)
{
	for (;;) {
		bool taken = false;
		uint8_t id = ++lgr->next_link_id;

		if (!id)
			id = ++lgr->next_link_id;
		for (int i = 0; i < SOFT_LINKS_PER_LGR; i++)
			if (soft_link_usable(&lgr->lnk[i]) && lgr->lnk[i].link_id == id)
				taken = true;
		if (!taken)
			return id;
	}
}

struct soft_link *soft_lgr_link_add(struct soft_lgr *lgr, struct soft_dev *dev, uint8_t port)
{
	for (int i = 0; i < SOFT_LINKS_PER_LGR; i++) {
		struct soft_link *l = &lgr->lnk[i];
		uint32_t uid;

		if (l->state != SOFT_LNK_UNUSED)
			continue;
		memset(l, 0, sizeof(*l));
		l->link_id = next_link_id(lgr);
		l->state = SOFT_LNK_ACTIVATING;
		l->dev = dev;
		l->ib_port = port;
		if (dev && port >= 1 && port <= dev->n_ports)
			l->ndev_ifindex = dev->ifindex[port - 1];
		/* smc_llc_link_set_uid(): htonl(lgr id + link id) */
		uid = htonl(soft_lgr_id(lgr) + l->link_id);
		memcpy(l->uid, &uid, sizeof(l->uid));
		return l;
	}
	return NULL;
}

uint32_t soft_lgr_count_on(const struct soft_state *st, const struct soft_dev *dev)
{
	uint32_t n = 0;

	for (const struct soft_lgr *lgr = soft_lgr_first(st); lgr; lgr = lgr->next)
		if (lgr->smcd && lgr->dev == dev)
			n++;
	return n;
}

uint32_t soft_lgr_links_on(const struct soft_state *st, const struct soft_dev *dev, int port)
{
	uint32_t n = 0;

	for (const struct soft_lgr *lgr = soft_lgr_first(st); lgr; lgr = lgr->next) {
		if (lgr->smcd)
			continue;
		for (int i = 0; i < SOFT_LINKS_PER_LGR; i++)
			if (lgr->lnk[i].state != SOFT_LNK_UNUSED && lgr->lnk[i].dev == dev &&
			    lgr->lnk[i].ib_port == port)
				n++;
	}
	return n;
}

bool soft_lgr_dev_critical(const struct soft_state *st, const struct soft_dev *dev)
{
	for (const struct soft_lgr *lgr = soft_lgr_first(st); lgr; lgr = lgr->next) {
		if (lgr->smcd)
			continue;
		for (int i = 0; i < SOFT_LINKS_PER_LGR; i++) {
			if (lgr->lnk[i].state == SOFT_LNK_UNUSED || lgr->lnk[i].dev != dev)
				continue;
			if (lgr->type == SOFT_LGR_SINGLE || lgr->type == SOFT_LGR_ASYMMETRIC_LOCAL)
				return true;
		}
	}
	return false;
}

void soft_lgrs_free(struct soft_state *st)
{
	struct soft_lgr *lgr, *next;

	for (lgr = st->lgrs; lgr; lgr = next) {
		next = lgr->next;
		free(lgr);
	}
	st->lgrs = NULL;
}

void soft_gid_text(char out[40], const uint8_t gid[SOFT_GID_SIZE])
{
	for (int i = 0; i < 8; i++)
		snprintf(out + 5 * i, 6, i < 7 ? "%04x:" : "%04x", (unsigned int)(gid[2 * i] << 8 | gid[2 * i + 1]));
}
