/*
 * Connections between hosts negotiate soft SMC-R (doc/soft-roce.md section
 * 2.2): once both daemons found both ends able to (a PAIR reply of ASKING),
 * the two libraries exchange the CLC messages through their daemons
 * (SMC_SOFT_CMD_CLC) and set the connection up over RDMA
 * (transport/rdma_clc.c).  One thread per process (the control thread,
 * started by the process's first PAIR) reads the daemon's replies while
 * any are due and does it for every such connection, so that a program
 * that is asleep in a call, or makes none, is not needed:
 * the connection goes on over TCP meanwhile, and cuts over like a ring once
 * its transport is attached.  Anything that fails leaves it on TCP with the
 * kernel's codes, told to the daemon and, when it is ours, to the peer in a
 * DECLINE.
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "ctl_int.h"
#include "smcr.h"

#define NEG_POLL_NS      (3 * 1000 * 1000)      /* a CLC question again */
#define LGR_LOOK_NS      (1000 * 1000 * 1000)   /* told link groups looked at again */
#define NEG_AGAIN_NS     (20 * 1000 * 1000)     /* a message that waits for a first contact, again */
#define DECL_NOSMCDEV    0x03030000u
#define DECL_PEERNOSMC   0x03010000u
#define DECL_PEERDECL    0x05000000u
#define DECL_INTERR      0x09990000u

enum neg_step {
	NEG_WAIT,        /* for the daemons, or the peer's next message */
	NEG_LINK,        /* the client's CONFIRM is kept: confirm the link (may wait) */
	NEG_DECLINING,   /* our DECLINE goes out: then TCP with our reason */
	NEG_DONE,        /* attached, or given up */
};

struct neg {
	struct neg *next;
	struct sconn *sc;        /* a reference */
	int role;
	uint64_t token;
	enum neg_step step;
	int64_t next_ns, until_ns;
	int64_t again_ns;        /* the peer's message waits for a first contact until then */
	int64_t alone_by_ns;     /* the other copies of a claimed end are to close by then, 0 not asked */
	/* replies (written under ctl_mu by whoever reads them) */
	uint32_t seq;            /* CLC question out, 0 none */
	bool out_in_seq;         /* that question carries our message */
	bool negotiating;
	struct rdma_ports ports;
	uint8_t taken, seen, given;
	uint8_t in[SMC_SOFT_CLC_MAX];
	uint16_t in_len;         /* the peer's message number taken, not acted on yet */
	bool failed;             /* the daemon said DECLINED, or went */
	uint32_t reason, diag;
	/* our next message, until the daemon took it */
	uint8_t out[SMC_SOFT_CLC_MAX];
	uint16_t out_len;
	/* the set-up, the negotiator's own */
	struct rdma_neg *rn;
	uint32_t our_reason;     /* NEG_DECLINING: the code we fall back with */
};

static struct neg *negs;                 /* ctl_mu */
static _Atomic unsigned nnegs_hint;        /* how many */
static unsigned attaches_held;             /* ctl_mu: attaches wait (ctl_attaches_hold()) */
static pthread_cond_t attach_cv = PTHREAD_COND_INITIALIZER;

void ctl_neg_release_attaches(void)
{
	if (attaches_held && !--attaches_held)
		pthread_cond_broadcast(&attach_cv);
}

void ctl_attaches_hold(void)
{
	pthread_mutex_lock(&ctl_mu);
	attaches_held++;
	pthread_mutex_unlock(&ctl_mu);
}

void ctl_attaches_release(void)
{
	pthread_mutex_lock(&ctl_mu);
	ctl_neg_release_attaches();
	pthread_mutex_unlock(&ctl_mu);
}

bool ctl_neg_running(void)
{
	return atomic_load_explicit(&nnegs_hint, memory_order_relaxed) != 0;
}
static _Atomic size_t nclc_hint;         /* CLC questions out */
static size_t nclc;

/* An end's PAIRED for the daemon (paired_tell()). */
struct paired {
	uint64_t token;
	uint32_t key, rmb, snd;
	uint8_t link;
};

#define PAIRED_BACKLOG 64
static struct paired paired_due[PAIRED_BACKLOG];   /* ctl_mu: not taken by a full queue yet */
static unsigned npaired;
static pthread_cond_t neg_cv = PTHREAD_COND_INITIALIZER;
static bool started;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

bool ctl_neg_due(void)
{
	return atomic_load_explicit(&nclc_hint, memory_order_relaxed) != 0;
}

static void clc_out(size_t delta_in, size_t delta_out)
{
	nclc = nclc + delta_in - delta_out;
	atomic_store(&nclc_hint, nclc);
}

static void *negotiator(void *arg);

void ctl_neg_start(struct sconn *sc, const struct soft_pair_reply *r)
{
	struct neg *n = calloc(1, sizeof(*n));

	if (!n) {
		conn_stay_tcp(sc);
		sconn_put(sc);
		return;
	}
	n->sc = sc;
	n->role = sc->role == 1 ? 1 : 0;
	n->token = r->token;
	n->until_ns = now_ns() + (int64_t)CTL_NEG_MS * 1000000;
	/* the daemon lists it until it is decided: a fallback is told as for a pair */
	sc->daemon_epoch = ctl_epoch();
	n->next = negs;
	negs = n;
	atomic_fetch_add(&nnegs_hint, 1);
	if (!ctl_thread_wake()) {
		n->failed = true;
		n->reason = DECL_PEERNOSMC;
	}
}

bool ctl_thread_wake(void)
{
	/* a vfork() child shares its parent's memory: no thread of its own */
	if (soft_vfork_child())
		return false;
	if (!started) {
		/* the RDMA layer's way out: the process's real calls, and our bells */
		struct smcr_env env = { .poll = next.poll, .syscall = next.syscall, .ring = bell_ring_own,
					.drive = soft_cfg.drive, .log = preload_dbg, .llc = dump_llc,
					.rebuild = ctl_rebuild_out };

		smcr_env_set(&env);
		started = !lib_thread_start(negotiator, NULL);
	}
	pthread_cond_signal(&neg_cv);
	return started;
}

void ctl_neg_after_fork_child(void)
{
	/* the parent's negotiations, and its thread, stay the parent's */
	negs = NULL;
	atomic_store(&nnegs_hint, 0);
	attaches_held = 0;
	pthread_cond_init(&attach_cv, NULL);
	ctl_pend_after_fork_child();
	nclc = 0;
	atomic_store(&nclc_hint, 0);
	started = false;
	pthread_cond_init(&neg_cv, NULL);
	smcr_after_fork_child();
	rdma_clc_after_fork_child();
	conn_creds_after_fork_child();
	ctl_lgr_forget();
	ctl_rebuild_drop();
}

void ctl_neg_reply(const struct soft_pair_reply *r)
{
	struct neg *n;

	for (n = negs; n && n->seq != r->seq; n = n->next) {
	}
	if (!n) {
		/* a PAIRED's (or a question's of a negotiation that ended): let go */
		if (nclc)
			clc_out(0, 1);
		if (r->error)
			preload_dbg("libsmc-preload: soft SMC-R: the daemon refused request %u: %s\n", r->seq,
				    strerror(-r->error));
		return;
	}
	n->seq = 0;
	clc_out(0, 1);
	if (r->error == -EBUSY)
		return;                 /* our last message is not kept yet: the same again */
	if (r->error || r->token != n->token) {
		n->failed = true;
		n->reason = DECL_PEERNOSMC;
		return;
	}
	if (n->out_in_seq) {
		n->out_in_seq = false;
		n->out_len = 0;
		n->given++;
	}
	n->seen = r->clc_seen;
	if (r->status == SMC_SOFT_PAIR_DECLINED) {
		n->failed = true;
		n->reason = r->reason;
		n->diag = r->peer_diagnosis;
		return;
	}
	if (r->status != SMC_SOFT_PAIR_NEGOTIATE)
		return;
	if (!n->negotiating) {
		n->negotiating = true;
		memcpy(n->ports.dev, r->ibdev, sizeof(n->ports.dev));
		n->ports.port = r->ibport;
		if (r->ibport2) {
			memcpy(n->ports.alt_dev, r->ibdev2, sizeof(n->ports.alt_dev));
			n->ports.alt_port = r->ibport2;
			memcpy(n->ports.alt_gid, r->gid2, sizeof(n->ports.alt_gid));
		}
	}
	if (r->clc_len && r->clc_index == n->taken + 1 && !n->in_len) {
		memcpy(n->in, r->clc, r->clc_len);
		n->in_len = r->clc_len;
		n->taken++;
		n->next_ns = 0;         /* act on it at once */
	}
}

void ctl_neg_drop_all(void)
{
	for (struct neg *n = negs; n; n = n->next) {
		n->failed = true;
		n->reason = DECL_PEERNOSMC;
		n->seq = 0;
	}
	clc_out(0, nclc);
	npaired = 0;
	ctl_rebuild_drop();
}

/* With ctl_mu held: the question to the daemon, carrying our message if one waits. */
static void ask(struct neg *n)
{
	bool carry = n->out_len && n->seen == n->given;
	/* our DECLINE with its code: listed with it even if the peer's daemon does not keep it */
	uint32_t reason = carry && n->step == NEG_DECLINING ? n->our_reason : 0;
	long seq = soft_reg_clc_send(&chan, n->token, carry ? n->out : NULL, carry ? n->out_len : 0,
				     n->taken, reason);

	if (seq <= 0) {
		if (seq != -EAGAIN) {
			n->failed = true;
			n->reason = DECL_PEERNOSMC;
		}
		return;
	}
	n->seq = (uint32_t)seq;
	n->out_in_seq = carry;
	clc_out(1, 0);
}

/* The sockets' local address of sc: IPv4 (or IPv4-mapped) only, for now. */
struct find_local {
	struct sconn *sc;
	bool found;
	struct in_addr a;
};

static void local_of(int fd, struct sconn *sc, void *arg)
{
	struct find_local *f = arg;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (sc != f->sc || f->found || getsockname(fd, (struct sockaddr *)&ss, &len))
		return;
	if (ss.ss_family == AF_INET) {
		f->a = ((struct sockaddr_in *)&ss)->sin_addr;
		f->found = true;
	} else if (ss.ss_family == AF_INET6 &&
		   IN6_IS_ADDR_V4MAPPED(&((struct sockaddr_in6 *)&ss)->sin6_addr)) {
		memcpy(&f->a, ((struct sockaddr_in6 *)&ss)->sin6_addr.s6_addr + 12, 4);
		f->found = true;
	}
}

/*
 * What the negotiator works on without ctl_mu: a copy of n's state taken
 * under it, and what comes out, applied under it again (apply()).
 */
struct act {
	int role;
	struct rdma_ports ports;
	enum neg_step step;
	uint8_t taken, given;
	uint8_t in[SMC_SOFT_CLC_MAX];
	uint16_t in_len;
	struct rdma_neg *rn;
	struct sconn *sc;
	/* out */
	uint8_t out[SMC_SOFT_CLC_MAX];
	int out_len;
	uint32_t our_reason;     /* we decline (with a DECLINE when we still may) */
	bool again;              /* the message waits: a first contact, or the end's other copies */
	int64_t alone_by_ns;     /* in and out: neg's */
	bool peer_declined;
	uint32_t diag;
};

static void act_fail(struct act *a, int rc)
{
	a->our_reason = rdma_neg_reason(rc);
}

/*
 * A reason to stay TCP that came while the connection negotiates (a fork,
 * stdio, a credential change, another process holding the copy a fork at
 * accept() left it: fork_claim.c) is said in a DECLINE before our next
 * message, not found only once the peer attached.  A server that got the
 * CONFIRM goes on: the client waits for its link by then.
 */
static uint32_t reason_now(struct act *a)
{
	uint32_t r = ctl_decline_reason(a->sc);
	enum claim_others others;
	int64_t now;

	if (a->role == 1 && a->taken == 2)
		return 0;
	/*
	 * None goes on after a credential change (creds.c), which waits for
	 * it: what it set up on the old device is undone before the change.
	 */
	if (!r && soft_creds_stale())
		r = SMC_SOFT_DECL_CREDS;
	if (!r && (others = conn_claim_others(a->sc)) != CLAIM_ALONE) {
		now = now_ns();
		if (others == CLAIM_WAIT && !a->alone_by_ns)
			a->alone_by_ns = now + (int64_t)CLAIM_ALONE_WAIT_MS * 1000000;
		/* the same step again a moment later, the negotiator free for the others */
		if (others == CLAIM_WAIT && now < a->alone_by_ns) {
			a->again = true;
			return 0;
		}
		r = SMC_SOFT_DECL_SHARED;
	}
	return r;
}

/*
 * Without ctl_mu: what the peer's message (or the daemons' agreement) asks
 * of us.  The set-up's steps may wait for the peer (CONFIRM LINK).
 */
static void act(struct act *a)
{
	struct find_local f = { .sc = a->sc };
	uint32_t peer_reason;
	bool may_wait = false;  /* the step that waits for a first contact with -EAGAIN */
	int rc;

	if (a->step == NEG_LINK) {
		rc = rdma_neg_confirm_link(a->rn);
		a->step = NEG_DONE;
		if (rc)
			act_fail(a, rc);
		return;
	}
	if (a->in_len) {
		rc = rdma_clc_declined(a->in, a->in_len, &peer_reason);
		if (rc) {
			/* the peer's DECLINE: TCP, listed with its code */
			a->peer_declined = true;
			a->diag = rc > 0 ? peer_reason : DECL_INTERR;
			return;
		}
	}
	if ((a->our_reason = reason_now(a)) || a->again)
		return;
	fd_for_each(local_of, &f);
	if (!f.found) {
		a->our_reason = DECL_NOSMCDEV;
		return;
	}
	if (a->role == 0 && !a->rn) {
		rc = rdma_neg_propose(&a->ports, f.a, &a->rn, a->out, sizeof(a->out));
	} else if (a->role == 0 && a->taken == 1) {
		rc = rdma_neg_accepted(a->rn, a->in, a->in_len, a->out, sizeof(a->out));
		may_wait = true;
		if (rc != -EAGAIN)
			a->step = NEG_LINK;     /* once the CONFIRM is kept */
	} else if (a->role == 1 && a->taken == 1) {
		rc = rdma_neg_answer(&a->ports, f.a, a->in, a->in_len, &a->rn, a->out,
				     sizeof(a->out));
		may_wait = true;
	} else if (a->role == 1 && a->taken == 2) {
		rc = rdma_neg_confirmed(a->rn, a->in, a->in_len);
		a->step = NEG_DONE;
	} else {
		rc = -EPROTO;           /* a message we did not expect */
	}
	if (rc == -EAGAIN && may_wait)
		a->again = true;
	else if (rc < 0)
		act_fail(a, rc);
	else
		a->out_len = rc;
}

static void act_begin(const struct neg *n, struct act *a)
{
	memset(a, 0, offsetof(struct act, out));
	a->role = n->role;
	a->ports = n->ports;
	a->step = n->step;
	a->taken = n->taken;
	a->given = n->given;
	a->in_len = n->in_len;
	memcpy(a->in, n->in, n->in_len);
	a->rn = n->rn;
	a->sc = n->sc;
	a->alone_by_ns = n->alone_by_ns;
	a->out_len = 0;
	a->our_reason = 0;
	a->again = false;
	a->peer_declined = false;
}

/* With ctl_mu held again: what act() found. */
static void apply(struct neg *n, const struct act *a)
{
	n->rn = a->rn;
	n->step = a->step;
	n->alone_by_ns = a->alone_by_ns;
	if (a->again) {
		/* the same message again once the first contact's group is there (or is not), or the copies closed */
		n->again_ns = now_ns() + NEG_AGAIN_NS;
		return;
	}
	n->in_len = 0;
	if (a->peer_declined) {
		n->failed = true;
		n->reason = DECL_PEERDECL;
		n->diag = a->diag;
		return;
	}
	if (a->our_reason) {
		uint8_t m[64];
		int len = rdma_clc_decline(a->our_reason, m, sizeof(m));

		/* the peer hears it, if we may still send, then TCP */
		n->our_reason = a->our_reason;
		n->step = NEG_DECLINING;
		n->out_len = 0;
		if (len > 0 && n->given < SMC_SOFT_CLC_MSGS) {
			memcpy(n->out, m, (size_t)len);
			n->out_len = (uint16_t)len;
			n->until_ns = now_ns() + (int64_t)CTL_NEG_DECLINE_MS * 1000000;
		} else {
			n->step = NEG_DONE;
		}
		return;
	}
	if (a->out_len > 0) {
		memcpy(n->out, a->out, (size_t)a->out_len);
		n->out_len = (uint16_t)a->out_len;
		n->next_ns = 0;
	}
}

/* Whether act() has something to do for n now (with ctl_mu held). */
static bool work_for(const struct neg *n, int64_t now)
{
	if (n->failed || n->step == NEG_DONE || n->step == NEG_DECLINING)
		return false;
	if (n->step == NEG_LINK)
		return n->seen == n->given && !n->out_len;
	if (!n->negotiating || n->out_len || now < n->again_ns)
		return false;
	return n->in_len || (n->role == 0 && !n->rn);
}

static void paired_lost(long err)
{
	preload_dbg("libsmc-preload: soft SMC-R: the daemon was not told the end is paired: %s\n",
		    strerror((int)err));
}

/* With ctl_mu held: one PAIRED to the daemon, its reply counted as due (read and let go). */
static long paired_send(const struct paired *p)
{
	long rc = soft_reg_clc_connected_send(&chan, p->token, p->key, p->link, p->rmb, p->snd);

	if (rc > 0)
		clc_out(1, 0);
	else if (rc != -EAGAIN)
		paired_lost(-rc);
	return rc;
}

/* With ctl_mu held: the PAIREDs a full queue did not take, in order, as far as it takes them. */
static void paired_flush(void)
{
	unsigned i = 0;

	while (i < npaired && chan.fd >= 0 && paired_send(&paired_due[i]) != -EAGAIN)
		i++;
	/* a daemon gone forgot the ends with it */
	if (chan.fd < 0)
		i = npaired;
	memmove(paired_due, paired_due + i, (npaired - i) * sizeof(paired_due[0]));
	npaired -= i;
}

/*
 * With ctl_mu held: the daemon hears that an end runs over RDMA, or it
 * would list it as negotiating, never SMC-R.  A full queue (a server with
 * many negotiations in a busy guest) keeps it for the negotiator's next
 * turn, not waited for here: ctl_mu is the accepts' and connects' too.
 */
static void paired_tell(const struct paired *p)
{
	paired_flush();
	if (!npaired && paired_send(p) != -EAGAIN)
		return;
	if (npaired < PAIRED_BACKLOG)
		paired_due[npaired++] = *p;
	else
		paired_lost(EAGAIN);
}

/* Without ctl_mu: n is over; its connection attached, or on TCP with its code told. */
static void finish(struct neg *n)
{
	struct transport t;
	int fd = -1;

	if (!n->failed && !n->our_reason && n->step == NEG_DONE) {
		uint32_t rmb, snd;

		rdma_neg_bufs(n->rn, &rmb, &snd);
		if (!rdma_neg_bind(n->rn, &t)) {
			uint32_t key;
			uint8_t link;
			bool attached;

			transport_rdma_where(&t, &key, &link);
			/*
			 * Not while a fork() is prepared (settle.c): one attached
			 * after it took every attached end back to TCP would reach
			 * the child on RDMA, which only this process can use.
			 */
			pthread_mutex_lock(&ctl_mu);
			while (attaches_held)
				pthread_cond_wait(&attach_cv, &ctl_mu);
			attached = sconn_attach_transport(n->sc, &t);
			if (attached) {
				/* the daemon lists it as SMC-R from now on, its group first */
				ctl_lgr_report();
				if (chan.fd >= 0)
					paired_tell(&(struct paired){ n->token, key, rmb, snd, link });
			}
			pthread_mutex_unlock(&ctl_mu);
			if (attached) {
				rdma_neg_free(n->rn);
				return;
			}
			/* the program made it TCP meanwhile (stdio, sharing): both ends stay */
			t.ops->stay_tcp(&t);
			t.ops->close(&t);
			t.ops->unmap(&t);
			n->our_reason = ctl_decline_reason(n->sc);
			if (!n->our_reason)
				n->our_reason = DECL_PEERNOSMC;
		} else {
			n->our_reason = DECL_INTERR;
		}
	}
	rdma_neg_free(n->rn);
	n->rn = NULL;
	conn_stay_tcp(n->sc);
	if (n->our_reason || n->failed)
		preload_dbg("libsmc-preload: soft SMC-R: stays TCP: %s 0x%08x\n",
			    n->our_reason ? "our reason" : "the peer's or its daemon's reason",
			    n->our_reason ? n->our_reason : n->reason == DECL_PEERDECL ? n->diag : n->reason);
	/* a decline the daemon made itself is listed already */
	if (n->our_reason)
		ctl_fall_back(fd, n->sc, n->our_reason);
	else if (n->failed && n->reason == DECL_PEERDECL)
		ctl_fall_back_diag(fd, n->sc, n->reason, n->diag);
}

void ctl_fall_back_peer(int fd, struct sconn *sc, uint32_t diag)
{
	ctl_fall_back_diag(fd, sc, DECL_PEERDECL, diag);
}

/* With ctl_mu held: the next negotiation with something to do, taken out of the list when over. */
static struct neg *next_work(int64_t now, int64_t *wake)
{
	for (struct neg **p = &negs; *p; p = &(*p)->next) {
		struct neg *n = *p;
		bool over = n->failed || n->step == NEG_DONE ||
			    (n->step == NEG_DECLINING && (n->seen == n->given && !n->out_len)) ||
			    now >= n->until_ns;

		if (over && !n->seq) {
			if (now >= n->until_ns && !n->failed && n->step != NEG_DONE && !n->our_reason)
				n->our_reason = DECL_PEERNOSMC;
			if (n->step == NEG_DECLINING && !n->failed)
				n->step = NEG_DONE;
			/* still counted (ctl_neg_running()) until finish() attached it or gave up */
			*p = n->next;
			return n;
		}
		if (over)
			continue;
		if (work_for(n, now))
			return n;
		if (!n->seq && now >= n->next_ns && chan.fd >= 0) {
			ask(n);
			n->next_ns = now + NEG_POLL_NS;
		}
		if (!*wake || n->next_ns < *wake)
			*wake = n->next_ns;
		if (n->again_ns > now && n->again_ns < *wake)
			*wake = n->again_ns;
	}
	return NULL;
}

/* On neg_cv (ctl_mu held) for at most ns. */
static void timed_wait(int64_t ns)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ns += ts.tv_nsec;
	ts.tv_sec += ns / 1000000000;
	ts.tv_nsec = ns % 1000000000;
	pthread_cond_timedwait(&neg_cv, &ctl_mu, &ts);
}

static void *negotiator(void *arg)
{
	static struct act work;

	(void)arg;
	pthread_mutex_lock(&ctl_mu);
	for (;;) {
		int64_t now = now_ns(), wake = 0;
		struct neg *n;

		/* a seccomp sandbox may kill the process for the calls below: wait only */
		if (soft_sandboxed()) {
			pthread_cond_wait(&neg_cv, &ctl_mu);
			continue;
		}
		ctl_lgr_report();
		rdma_clc_groups_prune();
		ctl_rebuild_work();
		if (ctl_rebuild_deliver())
			continue;
		paired_flush();
		if (!negs && !ctl_replies_due() && !npaired) {
			/* told link groups change without a call: look again now and then */
			if (ctl_lgr_told())
				timed_wait(LGR_LOOK_NS);
			else
				pthread_cond_wait(&neg_cv, &ctl_mu);
			continue;
		}
		if (chan.fd >= 0)
			ctl_replies_locked();
		if (ctl_rebuild_deliver())
			continue;
		n = next_work(now, &wake);
		if (n) {
			bool in_list = false;

			for (struct neg *m = negs; m; m = m->next)
				in_list |= m == n;
			if (in_list) {
				act_begin(n, &work);
				pthread_mutex_unlock(&ctl_mu);
				act(&work);
				pthread_mutex_lock(&ctl_mu);
				apply(n, &work);
			} else {
				pthread_mutex_unlock(&ctl_mu);
				finish(n);
				atomic_fetch_sub(&nnegs_hint, 1);
				sconn_put(n->sc);
				free(n);
				pthread_mutex_lock(&ctl_mu);
			}
			continue;
		}
		if (!negs) {
			/* only replies due (PAIR): sleep until one comes, as a call would find it */
			struct pollfd p = { .fd = chan.fd, .events = POLLIN };

			pthread_mutex_unlock(&ctl_mu);
			if (p.fd < 0 || next.poll(&p, 1, 50) < 0)
				next.poll(NULL, 0, 20);    /* not nanosleep(): its hook is ours */
			pthread_mutex_lock(&ctl_mu);
			continue;
		}
		/* nothing due: sleep until the next question, or a new negotiation */
		timed_wait(wake > now ? wake - now : NEG_POLL_NS);
	}
	return NULL;
}
