/*
 * A link group's links added after its first link, in the background so
 * that no connection waits for them (doc/soft-roce.md section 5):
 *
 * - the second link, once the first contact's connection runs: the client
 *   named a second GID in its CLC CONFIRM; the server offers a link from a
 *   port of its own to it with LLC ADD LINK, or rejects it when it has
 *   none, so that the client never waits in vain;
 * - a link that failed, once its device is back: the server adds it again
 *   when its own port comes back or when the client asks with REQ ADD LINK
 *   (its port came back), on a new queue pair, under a new link number.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "smcr_int.h"

#define SECOND_LINK_NUM 2

struct grow {
	struct smcr_lgr *g;
	int li;                 /* the link to add, -1: refuse */
	bool offer;             /* the server, with the client's GID */
	bool again;             /* a link that failed: a new queue pair first */
	uint8_t num;
	uint8_t peer_gid[16];
};

static void *grow_run(void *arg)
{
	struct grow *w = arg;
	struct smcr_lgr *g = w->g;
	int rc = 0;

	if (w->again)
		rc = smcr_link_reopen(g, w->li, false);
	if (!rc)
		rc = w->li < 0 ? smcr_link_refuse(g, w->num)
			       : smcr_link_add(g, w->li, w->num, w->offer ? w->peer_gid : NULL);
	if (rc && w->again)
		smcr_log("libsmc-preload: soft SMC-R: a failed link added again: %s: not yet\n",
			 rc == -ECONNREFUSED ? "the peer's port is not back" : strerror(-rc));
	else if (rc)
		smcr_log("libsmc-preload: soft SMC-R: the link group's second link: %s: it has one link\n",
			 rc == -ECONNREFUSED ? "the server has no port for it" : strerror(-rc));
	else if (w->li >= 0)
		smcr_log("libsmc-preload: soft SMC-R: the link group's %s link is up (number %u)\n",
			 w->again ? "failed" : "second", w->num);
	pthread_mutex_lock(&g->mu);
	/* a link not confirmed carries nothing: no connection moves to it */
	if (rc && w->li >= 0 && !g->link[w->li].up)
		smcr_link_die(g, w->li);
	g->adding = false;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
	smcr_engine_kick();
	smcr_lgr_put(g);
	free(w);
	return NULL;
}

/* Starts w (g->mu held by the caller when locked). 0 or -errno, with w freed. */
static int start(struct grow *w, bool locked)
{
	struct smcr_lgr *g = w->g;
	int rc;

	if (!locked)
		pthread_mutex_lock(&g->mu);
	g->refs++;
	g->adding = true;
	if (!locked)
		pthread_mutex_unlock(&g->mu);
	rc = lib_thread_start(grow_run, w);
	if (rc) {
		if (!locked)
			pthread_mutex_lock(&g->mu);
		g->adding = false;
		if (w->li >= 0 && !w->again)
			smcr_link_die(g, w->li);
		g->refs--;
		pthread_cond_broadcast(&g->cv);
		if (!locked)
			pthread_mutex_unlock(&g->mu);
		free(w);
	}
	return rc;
}

int smcr_lgr_grow(struct smcr_lgr *g, int li, const uint8_t peer_gid[16])
{
	struct grow *w;

	if (g->server ? !peer_gid : li < 0)
		return 0;               /* nothing offered, nothing to wait for */
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->g = g;
	w->li = li;
	w->offer = g->server;
	w->num = SECOND_LINK_NUM;
	if (peer_gid)
		memcpy(w->peer_gid, peer_gid, sizeof(w->peer_gid));
	return start(w, false);
}

void smcr_lgr_relink(struct smcr_lgr *g, int li, uint8_t num)
{
	struct grow *w;

	if (g->adding || !g->link[li].dead || g->link[li].dev_gone)
		return;
	w = calloc(1, sizeof(*w));
	if (!w)
		return;
	w->g = g;
	w->li = li;
	w->again = true;
	w->offer = g->server;
	/* a number no link of the group had: a late message of the old link names nothing */
	w->num = g->server ? (uint8_t)(g->last_num == 255 ? 1 : g->last_num + 1) : num;
	memcpy(w->peer_gid, g->link[li].peer.gid, sizeof(w->peer_gid));
	start(w, true);
}
