/*
 * Soft SMC-R's set-up of one connection from its CLC messages
 * (doc/soft-roce.md sections 2.2 and 4): the client's PROPOSAL, the
 * server's ACCEPT, the client's CONFIRM, as wire/clc.h encodes them and
 * Linux's SMC-Rv2 sends them, and what each end makes of them: a link group
 * with the peer process (the first contact) or the one it has already, a
 * connection with its RMB on it, the link confirmed, the connection bound
 * to a transport.  The messages travel through the daemons; nothing here
 * knows how.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "clc.h"
#include "reg.h"
#include "smc_size.h"
#include "smcr.h"
#include "transport.h"

/*
 * Each connection's RMB, and its send buffer: our end offers BACK_OK
 * (doc/soft-roce.md section 4), so a byte stays there until the peer
 * consumed it, not only until it was delivered; twice the RMB keeps the
 * room a writer had before.
 */
#define RDMA_BUF_SIZE SMC_SOFT_SMCR_BUF
#define RDMA_BUF_MIN SMC_SOFT_SMCR_BUF_MIN
_Static_assert(SMC_SOFT_SMCR_SNDBUF == 2 * SMC_SOFT_SMCR_BUF, "the send buffer is twice the RMB");

/* Both ends are soft SMC-R: the EID they share (the kernel's servers require one in common). */
static const uint8_t soft_eid[CLC_EID_LEN] = "SMC-TOOLS-SOFT-SMCR-V1          ";

/* Link groups of this process, one per peer process and role. */
struct peer_group {
	struct peer_group *next;
	uint8_t peer_id[CLC_SYSTEMID_LEN];
	bool server;
	struct smcr_lgr *g;      /* the registry's reference */
};

static pthread_mutex_t groups_mu = PTHREAD_MUTEX_INITIALIZER;
static struct peer_group *groups;
/*
 * First contacts under way (groups_mu): until one's group is added, a
 * second connection with the same peer process and role waits for it
 * (-EAGAIN) rather than make a group of its own or miss the one named.
 */
static struct rdma_neg *firsts;
static uint8_t our_id[CLC_SYSTEMID_LEN];
static pid_t our_id_pid;

struct rdma_neg {
	bool server;
	struct rdma_ports ports;
	uint8_t gid[16];
	int alt_li;              /* the first contact's second link, opened: -1 none */
	char peer_host[CLC_HOSTNAME_LEN + 1];
	bool peer_alt;           /* the client's CONFIRM named a second GID */
	uint8_t peer_alt_gid[16];
	struct smcr_lgr *g;      /* our reference, from the first contact or the registry */
	bool first_contact;
	struct smcr_sock *s;
	struct smcr_sock_peer peer;
	struct rdma_qp_addr peer_qp;
	uint8_t peer_id[CLC_SYSTEMID_LEN];
	bool bound;
	bool in_firsts;          /* listed in firsts */
	struct rdma_neg *next_first;
};

/* The peer id of this process: random, new in a child (its parent's groups are not its own). */
static const uint8_t *process_id(void)
{
	pthread_mutex_lock(&groups_mu);
	if (our_id_pid != getpid()) {
		if (getrandom(our_id, sizeof(our_id), GRND_NONBLOCK) != (ssize_t)sizeof(our_id)) {
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			memcpy(our_id, &ts, sizeof(our_id) < sizeof(ts) ? sizeof(our_id) : sizeof(ts));
		}
		our_id[0] = 0x53;        /* never all zero */
		our_id_pid = getpid();
	}
	pthread_mutex_unlock(&groups_mu);
	return our_id;
}

void rdma_clc_after_fork_child(void)
{
	/* the parent's groups are not ours: their queue pairs stay with it (smcr_after_fork_child()) */
	pthread_mutex_init(&groups_mu, NULL);
	for (struct rdma_neg *n = firsts; n; n = n->next_first)
		n->in_firsts = false;
	firsts = NULL;
	while (groups) {
		struct peer_group *e = groups;

		groups = e->next;
		free(e);
	}
}

static bool group_takes(struct smcr_lgr *g, bool server, const struct rdma_qp_addr *via)
{
	return server ? !smcr_lgr_full(g) : smcr_lgr_links_to(g, via);
}

/* With groups_mu held: group_find()'s search, without the reference. */
static struct smcr_lgr *group_find_locked(const uint8_t peer_id[CLC_SYSTEMID_LEN], bool server,
					  const struct rdma_qp_addr *via)
{
	struct smcr_lgr *found = NULL;

	for (struct peer_group **p = &groups; *p;) {
		struct peer_group *e = *p;

		if (!smcr_lgr_links_up(e->g)) {
			/* no link left: a new connection makes a new group */
			*p = e->next;
			smcr_lgr_put(e->g);
			free(e);
			continue;
		}
		if (!found && e->server == server && !memcmp(e->peer_id, peer_id, CLC_SYSTEMID_LEN) &&
		    group_takes(e->g, server, via))
			found = e->g;
		p = &e->next;
	}
	return found;
}

/* With groups_mu held: a first contact of ours with the peer process in that role is under way. */
static bool first_pending(const uint8_t peer_id[CLC_SYSTEMID_LEN], bool server)
{
	for (const struct rdma_neg *f = firsts; f; f = f->next_first)
		if (f->server == server && !memcmp(f->peer_id, peer_id, CLC_SYSTEMID_LEN))
			return true;
	return false;
}

/* With groups_mu held: n is a first contact under way until first_end(). */
static void first_begin(struct rdma_neg *n)
{
	if (n->in_firsts)
		return;
	n->next_first = firsts;
	firsts = n;
	n->in_firsts = true;
}

static void first_end(struct rdma_neg *n)
{
	pthread_mutex_lock(&groups_mu);
	for (struct rdma_neg **p = &firsts; n->in_firsts && *p; p = &(*p)->next_first) {
		if (*p == n) {
			*p = n->next_first;
			break;
		}
	}
	n->in_firsts = false;
	pthread_mutex_unlock(&groups_mu);
}

/*
 * The group with the peer process that takes one more connection, with a
 * link up, into n->g (a reference): on the server, one not full; on the
 * client, the one with a link to the queue pair via the server's ACCEPT
 * named.  None: 0 and n->g NULL, or -EAGAIN while a first contact with the
 * peer is under way here (its group may be the one: ask again).  With
 * begin, when there is none and no first contact, n is one from now on.
 */
static int group_find(struct rdma_neg *n, const struct rdma_qp_addr *via, bool begin)
{
	int rc = 0;

	pthread_mutex_lock(&groups_mu);
	n->g = group_find_locked(n->peer_id, n->server, via);
	if (n->g)
		smcr_lgr_hold(n->g);
	else if (first_pending(n->peer_id, n->server))
		rc = -EAGAIN;
	else if (begin)
		first_begin(n);
	pthread_mutex_unlock(&groups_mu);
	return rc;
}

void rdma_clc_groups_prune(void)
{
	static unsigned looked;
	unsigned gen = smcr_lgr_changes();

	if (gen == looked)
		return;
	looked = gen;
	pthread_mutex_lock(&groups_mu);
	for (struct peer_group **p = &groups; *p;) {
		struct peer_group *e = *p;

		if (!smcr_lgr_ended(e->g)) {
			p = &e->next;
			continue;
		}
		*p = e->next;
		smcr_lgr_put(e->g);
		free(e);
	}
	pthread_mutex_unlock(&groups_mu);
}

static int group_add(const uint8_t peer_id[CLC_SYSTEMID_LEN], bool server, struct smcr_lgr *g)
{
	struct peer_group *e = calloc(1, sizeof(*e));

	if (!e)
		return -ENOMEM;
	memcpy(e->peer_id, peer_id, CLC_SYSTEMID_LEN);
	e->server = server;
	e->g = g;
	smcr_lgr_hold(g);
	pthread_mutex_lock(&groups_mu);
	e->next = groups;
	groups = e;
	pthread_mutex_unlock(&groups_mu);
	return 0;
}

/*
 * Memory for a link's registrations and queue pair is short (a user's
 * RLIMIT_MEMLOCK): this process's server groups without a connection go,
 * as the kernel's link groups do once unused for long, and the progress
 * thread frees them (their queue pairs and registrations, a link's message
 * slots some 40 KiB), waited for 2 s at most.  A client process
 * that ended leaves its server's group until a TEST LINK goes unanswered,
 * 30 s later; the next client would not fit meanwhile.  Only the server's:
 * a client's next connection names the server's group, which a client
 * without its own half of it would have to refuse (SYNCERR).  Whether any
 * went; then a first contact's own new group (first->g) goes too, and the
 * wait counts it.
 */
#define UNUSED_FREE_WAIT_MS 2000

static bool unused_groups_freed(struct rdma_neg *first)
{
	unsigned before = smcr_lgrs_freed(), n = 0;

	pthread_mutex_lock(&groups_mu);
	for (struct peer_group **p = &groups; *p;) {
		struct peer_group *e = *p;

		if (!e->server || !smcr_lgr_unused(e->g)) {
			p = &e->next;
			continue;
		}
		*p = e->next;
		smcr_lgr_put(e->g);
		free(e);
		n++;
	}
	pthread_mutex_unlock(&groups_mu);
	if (!n)
		return false;
	smcr_log("libsmc-preload: soft SMC-R: short of memory: %u link group(s) without connections let go\n", n);
	/* a first contact's own new group, its link's slots registered: it goes too, before the next try */
	if (first && first->g) {
		smcr_lgr_put(first->g);
		first->g = NULL;
		n++;
	}
	for (int ms = 0; smcr_lgrs_freed() - before < n && ms < UNUSED_FREE_WAIT_MS; ms += 5)
		smcr_nap_ms(5);
	return true;
}

static bool short_of_memory(int rc)
{
	return rc == -ENOMEM || rc == -EKEYREJECTED;
}

static struct rdma_neg *neg_new(bool server, const struct rdma_ports *ports, struct in_addr local)
{
	struct rdma_neg *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->server = server;
	n->ports = *ports;
	n->alt_li = -1;
	/* SMC-Rv2 over RoCE v2: the GID of the connection's own IPv4 address */
	n->gid[10] = n->gid[11] = 0xff;
	memcpy(n->gid + 12, &local, 4);
	return n;
}

/* A DECLINE with reason into msg: its length. */
static int decline_msg(uint32_t reason, uint8_t *msg, size_t size)
{
	struct clc_decline d = { .version = CLC_V2, .peer_diagnosis = reason, .os_type = CLC_OS_LINUX };

	memcpy(d.system_id, process_id(), CLC_SYSTEMID_LEN);
	return clc_decline_encode(&d, msg, size);
}

int rdma_clc_decline(uint32_t reason, uint8_t *msg, size_t size)
{
	return decline_msg(reason, msg, size);
}

int rdma_clc_declined(const uint8_t *msg, size_t len, uint32_t *reason)
{
	struct clc_hdr h;
	struct clc_decline d;

	if (clc_hdr_peek(msg, len, &h) || h.type != CLC_DECLINE)
		return 0;
	if (clc_decline_decode(msg, len, &d) < 0)
		return -EPROTO;
	*reason = d.peer_diagnosis;
	return 1;
}

/*
 * Whether our device port has the connection's GID: a client proposes only
 * what it can carry, as the kernel's proposes only with a device.  A device
 * that worked is remembered.
 */
static bool device_usable(const char *ibdev, uint8_t port, const uint8_t gid[16])
{
	static struct { char name[64]; uint8_t port; uint8_t gid[16]; } ok[8];
	static unsigned nok;
	struct rdma_dev *d;
	bool found = false;

	pthread_mutex_lock(&groups_mu);
	for (unsigned i = 0; i < nok && !found; i++)
		found = ok[i].port == port && !strcmp(ok[i].name, ibdev) && !memcmp(ok[i].gid, gid, 16);
	pthread_mutex_unlock(&groups_mu);
	if (found)
		return true;
	if (rdma_dev_open(ibdev, port, gid, &d))
		return false;
	rdma_dev_close(d);
	pthread_mutex_lock(&groups_mu);
	snprintf(ok[nok % 8].name, sizeof(ok[0].name), "%s", ibdev);
	ok[nok % 8].port = port;
	memcpy(ok[nok % 8].gid, gid, 16);
	nok++;
	pthread_mutex_unlock(&groups_mu);
	return true;
}

int rdma_neg_propose(const struct rdma_ports *ports, struct in_addr local, struct rdma_neg **out,
		     uint8_t *msg, size_t size)
{
	struct clc_proposal p = {
		.version = CLC_V2, .typev1 = CLC_SMC_N, .typev2 = CLC_SMC_R,
		.eid_cnt = 1, .release = 1, .max_conns = 255, .max_links = SMCR_LINKS_MAX,
	};
	struct rdma_neg *n;
	int len;

	if (rdma_lib_load())
		return -ENODEV;
	n = neg_new(false, ports, local);
	if (!n)
		return -ENOMEM;
	if (!device_usable(ports->dev, ports->port, n->gid)) {
		free(n);
		return -ENODEV;
	}
	memcpy(p.system_id, process_id(), CLC_SYSTEMID_LEN);
	memcpy(p.gid, n->gid, CLC_GID_LEN);
	memcpy(p.roce_gid, n->gid, CLC_GID_LEN);
	memcpy(p.eid[0], soft_eid, CLC_EID_LEN);
	len = clc_proposal_encode(&p, msg, size);
	if (len < 0) {
		free(n);
		return len;
	}
	*out = n;
	return len;
}

/* Our ACCEPT or CONFIRM: our connection's link and RMB. */
static int accept_msg(struct rdma_neg *n, uint8_t type, uint8_t mtu, uint8_t *msg, size_t size)
{
	struct smcr_sock_local l;
	struct clc_smcr_accept a;

	smcr_sock_local(n->s, &l);
	memset(&a, 0, sizeof(a));
	a.type = type;
	a.version = CLC_V2;
	a.first_contact = n->first_contact;
	memcpy(a.system_id, process_id(), CLC_SYSTEMID_LEN);
	memcpy(a.gid, l.qp.gid, CLC_GID_LEN);
	a.qpn = l.qp.qpn;
	a.psn = l.qp.psn;
	a.qp_mtu = mtu;
	a.rmb_rkey = l.rkey;
	a.rmbe_idx = 1;
	a.rmbe_alert_token = l.token;
	a.rmbe_size = smc_size_code(l.rmb_size, SMC_SIZE_CODE_SMCR);
	a.rmb_addr = l.rmb_addr;
	memcpy(a.eid, soft_eid, CLC_EID_LEN);
	a.fce.v2_direct = true;
	a.fce.os_type = CLC_OS_LINUX;
	a.fce.release = 1;
	memset(a.fce.hostname, ' ', CLC_HOSTNAME_LEN);
	if (!gethostname((char *)a.fce.hostname, CLC_HOSTNAME_LEN - 1))
		a.fce.hostname[strnlen((char *)a.fce.hostname, CLC_HOSTNAME_LEN)] = ' ';
	a.fce.max_conns = 255;
	a.fce.max_links = SMCR_LINKS_MAX;
	if (type == CLC_CONFIRM && n->first_contact) {
		/* our GIDs, as the kernel's client lists them: the link's, then a second link's */
		memcpy(a.gids[a.gid_cnt++], l.qp.gid, CLC_GID_LEN);
		if (n->alt_li >= 0)
			memcpy(a.gids[a.gid_cnt++], n->ports.alt_gid, CLC_GID_LEN);
	}
	return clc_smcr_accept_encode(&a, msg, size);
}

/* The peer's ACCEPT or CONFIRM: its link and RMB. */
static int take_accept(struct rdma_neg *n, const uint8_t *msg, size_t len, uint8_t type)
{
	struct clc_smcr_accept a;

	if (clc_smcr_accept_decode(msg, len, &a) < 0 || a.type != type || a.version < CLC_V2 ||
	    memcmp(a.eid, soft_eid, CLC_EID_LEN))
		return -EPROTO;
	n->peer_qp.qpn = a.qpn;
	n->peer_qp.psn = a.psn;
	n->peer_qp.mtu = a.qp_mtu;
	memcpy(n->peer_qp.gid, a.gid, 16);
	n->peer = (struct smcr_sock_peer){ .rkey = a.rmb_rkey, .rmb_addr = a.rmb_addr,
					   .rmb_size = smc_code_size(a.rmbe_size),
					   .token = a.rmbe_alert_token };
	memcpy(n->peer_id, a.system_id, CLC_SYSTEMID_LEN);
	memcpy(n->peer_host, a.fce.hostname, CLC_HOSTNAME_LEN);
	n->peer_host[CLC_HOSTNAME_LEN] = 0;
	/* blank-padded on the wire */
	for (int i = CLC_HOSTNAME_LEN - 1; i >= 0 && (n->peer_host[i] == ' ' || !n->peer_host[i]); i--)
		n->peer_host[i] = 0;
	n->first_contact = a.first_contact;
	for (unsigned i = 0; type == CLC_CONFIRM && i < a.gid_cnt && !n->peer_alt; i++) {
		if (memcmp(a.gids[i], a.gid, CLC_GID_LEN)) {
			n->peer_alt = true;
			memcpy(n->peer_alt_gid, a.gids[i], CLC_GID_LEN);
		}
	}
	return 0;
}

/*
 * Connections of this size that must still fit in the locked memory left
 * before one starts with it: a process under RLIMIT_MEMLOCK takes smaller
 * buffers as its room runs low, so that more of its connections get SMC-R.
 */
#define RDMA_BUF_ROOM_CONNS 8

/*
 * The RMB size a new connection of n starts with: its RMB and send buffer
 * (twice) are registered on each of the group's links (two with a second
 * port), with room for more.
 */
static uint32_t start_size(const struct rdma_neg *n)
{
	size_t room = rdma_mr_room(n->ports.dev), links = n->ports.alt_port ? 2 : 1;
	uint32_t rmb = RDMA_BUF_SIZE;

	while (rmb > RDMA_BUF_MIN && room / RDMA_BUF_ROOM_CONNS / links < 3 * (size_t)rmb)
		rmb /= 2;
	return rmb;
}

/*
 * The layers below may say -EAGAIN (a device's errno): not the wait for a
 * first contact that rdma_neg_answer() and rdma_neg_accepted() say with it.
 */
static int not_again(int rc)
{
	return rc == -EAGAIN ? -EIO : rc;
}

/*
 * The connection's buffers on n's group: from start_size(), halved down to
 * RDMA_BUF_MIN while the device does not register them (a user's
 * RLIMIT_MEMLOCK), as the kernel's smc_buf_create() downgrades a buffer
 * that cannot be had.
 */
static int sock_new(struct rdma_neg *n, const struct rdma_qp_addr *peer)
{
	for (uint32_t rmb = start_size(n);; rmb /= 2) {
		int rc = smcr_sock_new(n->g, peer, rmb, 2 * rmb, &n->s);

		if (rc != -EKEYREJECTED || rmb / 2 < RDMA_BUF_MIN)
			return rc;
	}
}

/* A new group of ours with one link on our device: the first contact. */
static int first_link(struct rdma_neg *n)
{
	int rc = smcr_lgr_new(n->server, &n->g);

	if (rc)
		return rc;
	rc = smcr_link_open(n->g, n->ports.dev, n->ports.port, n->gid);
	smcr_log("libsmc-preload: soft SMC-R: a new link group (%s) on %s port %u%s%s%s%s\n",
		 n->server ? "server" : "client", n->ports.dev, n->ports.port,
		 n->ports.alt_port ? ", a second port " : "", n->ports.alt_port ? n->ports.alt_dev : "",
		 rc < 0 ? ": its link not opened: " : "", rc < 0 ? strerror(-rc) : "");
	return rc < 0 ? rc : 0;
}

/* The first contact's second link on the daemon's other port, if it names one and it opens. */
static void second_link_open(struct rdma_neg *n)
{
	int li;

	if (!n->ports.alt_port)
		return;
	/* a port that does not open leaves the group one link, as a server without one does */
	li = smcr_link_open(n->g, n->ports.alt_dev, n->ports.alt_port, n->ports.alt_gid);
	if (li < 0)
		smcr_log("libsmc-preload: soft SMC-R: a second link on %s port %u: %s\n", n->ports.alt_dev,
			 n->ports.alt_port, strerror(-li));
	n->alt_li = li < 0 ? -1 : li;
}

uint32_t rdma_neg_reason(int rc)
{
	switch (rc) {
	case -ENODEV:
	case -ENOSYS:
		return 0x03030000;      /* NOSMCDEV: no RDMA device or library we can use */
	case -ETIMEDOUT:
		return 0x02010000;      /* TIMEOUT_CL: no CONFIRM LINK */
	case -EPROTO:
		return 0x03000000;      /* CNFERR: the peer's message is not one we can take */
	case -ENOLINK:
		return 0x04000000;      /* SYNCERR: it names a link group we do not have */
	case -ENOMEM:
		return 0x01010000;      /* MEM: no buffers, or no link group (smc_lgr_create()) */
	case -EKEYREJECTED:
		return 0x09990003;      /* ERR_REGBUF: the device did not register the buffers */
	}
	return 0x09990000;              /* INTERR */
}

int rdma_neg_answer(const struct rdma_ports *ports, struct in_addr local, const uint8_t *proposal,
		    size_t len, struct rdma_neg **out, uint8_t *msg, size_t size)
{
	struct clc_proposal p;
	struct rdma_neg *n;
	struct rdma_qp_addr me;
	bool retried = false;
	int rc;

	if (clc_proposal_decode(proposal, len, &p) < 0)
		return -EPROTO;
	if (p.typev2 != CLC_SMC_R && p.typev2 != CLC_SMC_B)
		return -EPROTO;
	if (!p.eid_cnt || memcmp(p.eid[0], soft_eid, CLC_EID_LEN))
		return -EPROTO;
	if (rdma_lib_load())
		return -ENODEV;
	n = neg_new(true, ports, local);
	if (!n)
		return -ENOMEM;
	memcpy(n->peer_id, p.system_id, CLC_SYSTEMID_LEN);
	rc = group_find(n, NULL, true);
	while (!rc) {
		n->first_contact = !n->g;
		rc = n->first_contact ? not_again(first_link(n)) : 0;
		if (!rc)
			rc = not_again(sock_new(n, NULL));
		if (short_of_memory(rc) && !retried) {
			retried = true;
			/* once more: a first contact with a new group, another connection on its own */
			if (unused_groups_freed(n->first_contact ? n : NULL)) {
				rc = 0;
				continue;
			}
		}
		if (rc != -ENOSPC || n->first_contact)
			break;
		/* filled since it was found: a new group */
		smcr_lgr_put(n->g);
		n->g = NULL;
		pthread_mutex_lock(&groups_mu);
		first_begin(n);
		pthread_mutex_unlock(&groups_mu);
		rc = 0;
	}
	if (!rc) {
		smcr_link_local(n->g, 0, &me);
		rc = accept_msg(n, CLC_ACCEPT, me.mtu, msg, size);
	}
	if (rc < 0) {
		rdma_neg_free(n);
		return rc;
	}
	*out = n;
	return rc;
}

int rdma_neg_accepted(struct rdma_neg *n, const uint8_t *accept, size_t len, uint8_t *msg, size_t size)
{
	struct rdma_qp_addr me;
	int rc = take_accept(n, accept, len, CLC_ACCEPT);

	if (rc)
		return rc;
	if (!n->first_contact) {
		rc = group_find(n, &n->peer_qp, false);
		if (rc)
			return rc;
		/* the server says it has a group with us that we do not have: out of sync */
		if (!n->g)
			return -ENOLINK;
	}
	if (n->first_contact) {
		/* the server made a new group: ours, whatever else is under way */
		pthread_mutex_lock(&groups_mu);
		first_begin(n);
		pthread_mutex_unlock(&groups_mu);
		rc = first_link(n);
		if (!rc)
			rc = smcr_link_connect(n->g, 0, &n->peer_qp);
		if (!rc)
			second_link_open(n);
	}
	if (!rc)
		rc = sock_new(n, &n->peer_qp);
	if (rc)
		return not_again(rc);
	smcr_link_local(n->g, 0, &me);
	return accept_msg(n, CLC_CONFIRM, me.mtu < n->peer_qp.mtu ? me.mtu : n->peer_qp.mtu, msg, size);
}

/* The group's second link in the background; the connection runs on the first meanwhile. */
static void grow(struct rdma_neg *n, const uint8_t *peer_gid)
{
	int rc = smcr_lgr_grow(n->g, n->alt_li, peer_gid);

	if (rc)
		smcr_log("libsmc-preload: soft SMC-R: the link group's second link: %s\n", strerror(-rc));
}

int rdma_neg_confirmed(struct rdma_neg *n, const uint8_t *confirm, size_t len)
{
	bool first = n->first_contact;
	int rc = take_accept(n, confirm, len, CLC_CONFIRM);

	if (rc)
		return rc;
	n->first_contact = first;       /* ours decides, not the client's echo of it */
	if (n->first_contact) {
		rc = smcr_link_connect(n->g, 0, &n->peer_qp);
		if (!rc)
			rc = smcr_link_confirm(n->g, 0, 1);
		if (!rc)
			rc = group_add(n->peer_id, true, n->g);
		first_end(n);
		if (!rc)
			smcr_lgr_set_peer_host(n->g, n->peer_host);
	}
	if (!rc)
		rc = smcr_sock_connect(n->s, &n->peer);
	if (!rc && n->first_contact && n->peer_alt) {
		/* a port of ours for the client's second GID, or a refusal: it waits for either */
		second_link_open(n);
		grow(n, n->peer_alt_gid);
	}
	return rc;
}

int rdma_neg_confirm_link(struct rdma_neg *n)
{
	int rc = 0;

	if (n->first_contact) {
		rc = smcr_link_confirm(n->g, 0, 1);
		if (!rc)
			rc = group_add(n->peer_id, false, n->g);
		first_end(n);
		if (!rc)
			smcr_lgr_set_peer_host(n->g, n->peer_host);
	}
	if (!rc)
		rc = smcr_sock_connect(n->s, &n->peer);
	if (!rc && n->first_contact)
		grow(n, NULL);
	return rc;
}

void rdma_neg_bufs(struct rdma_neg *n, uint32_t *rmb_size, uint32_t *snd_size)
{
	struct smcr_sock_local l;

	smcr_sock_local(n->s, &l);
	*rmb_size = l.rmb_size;
	*snd_size = l.snd_size;
}

int rdma_neg_bind(struct rdma_neg *n, struct transport *t)
{
	int rc = transport_rdma_bind(t, n->s, n->peer.rmb_size);

	if (!rc)
		n->bound = true;        /* the transport owns the connection now */
	return rc;
}

void rdma_neg_free(struct rdma_neg *n)
{
	if (!n)
		return;
	first_end(n);
	/* the peer may know its rkey already: freed once it cannot write */
	if (n->s && !n->bound)
		smcr_sock_release(n->s);
	if (n->g)
		smcr_lgr_put(n->g);
	free(n);
}
