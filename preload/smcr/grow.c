/*
 * A link group's second link, added in the background once the first
 * contact's connection runs (doc/soft-roce.md section 5): the client named
 * a second GID in its CLC CONFIRM; the server offers a link from a port of
 * its own to it with LLC ADD LINK, or rejects it when it has none, so that
 * the client never waits in vain.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "smcr_int.h"

#define SECOND_LINK_NUM 2

struct grow {
	struct smcr_lgr *g;
	int li;                 /* the link to add, -1: refuse */
	bool offer;             /* the server, with the client's GID */
	uint8_t peer_gid[16];
};

static void *grow_run(void *arg)
{
	struct grow *w = arg;
	struct smcr_lgr *g = w->g;
	int rc;

	if (w->li < 0)
		rc = smcr_link_refuse(g, SECOND_LINK_NUM);
	else
		rc = smcr_link_add(g, w->li, SECOND_LINK_NUM, w->offer ? w->peer_gid : NULL);
	if (rc)
		smcr_log("libsmc-preload: soft SMC-R: the link group's second link: %s: it has one link\n",
			 rc == -ECONNREFUSED ? "the server has no port for it" : strerror(-rc));
	else if (w->li >= 0)
		smcr_log("libsmc-preload: soft SMC-R: the link group's second link is up\n");
	pthread_mutex_lock(&g->mu);
	/* a link not confirmed carries nothing: no connection moves to it */
	if (rc && w->li >= 0 && !g->link[w->li].up)
		g->link[w->li].dead = true;
	g->adding = false;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
	smcr_engine_kick();
	smcr_lgr_put(g);
	free(w);
	return NULL;
}

int smcr_lgr_grow(struct smcr_lgr *g, int li, const uint8_t peer_gid[16])
{
	struct grow *w;
	int rc;

	if (g->server ? !peer_gid : li < 0)
		return 0;               /* nothing offered, nothing to wait for */
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->g = g;
	w->li = li;
	w->offer = g->server;
	if (peer_gid)
		memcpy(w->peer_gid, peer_gid, sizeof(w->peer_gid));
	smcr_lgr_hold(g);
	pthread_mutex_lock(&g->mu);
	g->adding = true;
	pthread_mutex_unlock(&g->mu);
	rc = smcr_thread_start(grow_run, w);
	if (rc) {
		pthread_mutex_lock(&g->mu);
		g->adding = false;
		if (li >= 0)
			g->link[li].dead = true;
		pthread_cond_broadcast(&g->cv);
		pthread_mutex_unlock(&g->mu);
		smcr_lgr_put(g);
		free(w);
	}
	return rc;
}
