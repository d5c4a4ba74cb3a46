/*
 * A link group's only link rebuilt through the daemons (doc/soft-roce.md
 * section 5, "The only link"): the layer of link groups hands its message
 * for the peer's library to ctl_rebuild_out() (its env.rebuild); the
 * control thread gives it to the daemon (SMC_SOFT_CMD_REBUILD), which
 * relays it through one of the group's connections.  While the process
 * holds link groups, the control thread asks the daemon about once a
 * second whether a peer's message came, and hands each to the layer
 * (smcr_rebuild_in()) without ctl_mu.  The same question tells of a peer
 * whose process ended without closing its connections (killed): its
 * group's links are probed (smcr_lgr_peer_gone()).
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "ctl_int.h"
#include "smcr.h"
#include "smcr_rebuild.h"

#define TAKE_EVERY_NS (1000 * 1000 * 1000LL)
#define BOX 4

struct out_msg {
	uint32_t key;
	uint8_t bytes[SMCR_REBUILD_LEN];
};

struct in_msg {
	uint32_t key;
	struct smcr_rebuild_msg m;
};

/* ctl_mu */
static struct out_msg outbox[BOX];
static unsigned nout;
static struct in_msg inbox[BOX];
static unsigned nin;
static uint32_t gone[BOX];              /* groups whose peer's process is gone, to be probed */
static unsigned ngone;
static unsigned asked;                  /* REBUILD requests whose replies are due */
static int64_t take_ns;                 /* the next question for the peer's messages */
static _Atomic unsigned asked_hint;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void set_asked(unsigned n)
{
	asked = n;
	atomic_store(&asked_hint, n);
}

void ctl_rebuild_out(uint32_t key, const struct smcr_rebuild_msg *m)
{
	uint8_t b[SMCR_REBUILD_LEN];
	unsigned i;

	if (smcr_rebuild_msg_encode(m, b, sizeof(b)) < 0) {
		preload_dbg("libsmc-preload: soft SMC-R: link group %u: no rebuild message for its queue pair\n", key);
		return;
	}
	pthread_mutex_lock(&ctl_mu);
	/* a newer message of the group replaces one not given yet */
	for (i = 0; i < nout && outbox[i].key != key; i++) {
	}
	if (i < BOX) {
		outbox[i].key = key;
		memcpy(outbox[i].bytes, b, sizeof(b));
		if (i == nout)
			nout++;
	}
	if (!ctl_thread_wake())
		nout = 0;
	pthread_mutex_unlock(&ctl_mu);
}

void ctl_rebuild_work(void)
{
	int64_t now = now_ns();

	while (nout && chan.fd >= 0) {
		long seq = soft_reg_rebuild_send(&chan, outbox[0].key, outbox[0].bytes, SMCR_REBUILD_LEN);

		if (seq == -EAGAIN)
			break;          /* the daemon's queue is full: at the next look */
		if (seq > 0)
			set_asked(asked + 1);
		else
			preload_dbg("libsmc-preload: soft SMC-R: link group %u: rebuild message not given: %s\n",
				    outbox[0].key, strerror((int)-seq));
		memmove(&outbox[0], &outbox[1], sizeof(outbox[0]) * --nout);
	}
	if (chan.fd < 0 || !ctl_lgr_told() || now < take_ns)
		return;
	take_ns = now + TAKE_EVERY_NS;
	if (soft_reg_rebuild_send(&chan, 0, NULL, 0) > 0)
		set_asked(asked + 1);
}

bool ctl_rebuild_due(void)
{
	return atomic_load_explicit(&asked_hint, memory_order_relaxed) > 0;
}

void ctl_rebuild_reply(const struct soft_pair_reply *r)
{
	if (asked)
		set_asked(asked - 1);
	if (r->error) {
		preload_dbg("libsmc-preload: soft SMC-R: a rebuild message: %s\n", strerror(-r->error));
		return;
	}
	if (r->peer_gone) {
		unsigned i;

		take_ns = 0;
		/* a group's connections each bring it: probed once */
		for (i = 0; i < ngone && gone[i] != r->lgr_key; i++) {
		}
		if (i == ngone && ngone < BOX)
			gone[ngone++] = r->lgr_key;
		ctl_thread_wake();
		return;
	}
	if (!r->rebuild_len)
		return;
	take_ns = 0;            /* another may wait */
	if (nin == BOX || smcr_rebuild_msg_decode(r->rebuild, r->rebuild_len, &inbox[nin].m)) {
		preload_dbg("libsmc-preload: soft SMC-R: link group %u: the peer's rebuild message dropped\n",
			    r->lgr_key);
		return;
	}
	inbox[nin].key = r->lgr_key;
	nin++;
	/* read by another thread: the control thread hands it on */
	ctl_thread_wake();
}

bool ctl_rebuild_deliver(void)
{
	struct in_msg in[BOX];
	uint32_t gone_keys[BOX];
	unsigned n = nin, ng = ngone;

	if (!n && !ng)
		return false;
	memcpy(in, inbox, sizeof(in[0]) * n);
	memcpy(gone_keys, gone, sizeof(gone[0]) * ng);
	nin = ngone = 0;
	pthread_mutex_unlock(&ctl_mu);
	for (unsigned i = 0; i < n; i++) {
		int rc = smcr_rebuild_in(in[i].key, &in[i].m);

		if (rc)
			preload_dbg("libsmc-preload: soft SMC-R: link group %u: the peer's rebuild message: %s\n",
				    in[i].key, strerror(-rc));
	}
	for (unsigned i = 0; i < ng; i++)
		smcr_lgr_peer_gone(gone_keys[i]);
	pthread_mutex_lock(&ctl_mu);
	return true;
}

void ctl_rebuild_drop(void)
{
	nout = nin = ngone = 0;
	set_asked(0);
	take_ns = 0;
}
