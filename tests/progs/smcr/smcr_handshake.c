/* The blocking SMC-R CLC handshake and LLC exchanges of the smcr test programs (smcr_handshake.h). */
#include "smcr_handshake.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clc.h"
#include "smcr_llc.h"

#define WAIT_MS 6000    /* the kernel's CLC wait */

static const uint8_t test_eid[CLC_EID_LEN] = "SMC-TOOLS-SMCR-STREAM-TEST      ";
static const uint8_t link_uid[SMCR_LGR_ID_SIZE] = { 0x53, 0x4d, 0x43, 0x31 };

void smcr_gid_of(struct in_addr a, uint8_t gid[16])
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	memcpy(gid + 12, &a, 4);
}

static int read_all(int fd, uint8_t *b, size_t n)
{
	while (n) {
		ssize_t r = recv(fd, b, n, 0);

		if (r == 0)
			return -ECONNRESET;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r > 0) {
			b += r;
			n -= (size_t)r;
		}
	}
	return 0;
}

static int write_all(int fd, const uint8_t *b, size_t n)
{
	while (n) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);

		if (w < 0 && errno != EINTR)
			return -errno;
		if (w > 0) {
			b += w;
			n -= (size_t)w;
		}
	}
	return 0;
}

/* One CLC message of the type wanted into buf: its length or -errno. */
static int read_clc(int fd, uint8_t *buf, size_t size, uint8_t want)
{
	struct clc_hdr h;
	int rc = read_all(fd, buf, CLC_HDR_LEN);

	if (!rc)
		rc = clc_hdr_peek(buf, CLC_HDR_LEN, &h);
	if (rc)
		return rc;
	if (h.type != want || h.length > size)
		return -EPROTO;
	rc = read_all(fd, buf + CLC_HDR_LEN, h.length - CLC_HDR_LEN);
	return rc ? rc : h.length;
}

static void from_accept(const struct clc_smcr_accept *a, struct smcr_link_end *peer)
{
	peer->qp.qpn = a->qpn;
	peer->qp.psn = a->psn;
	memcpy(peer->qp.gid, a->gid, 16);
	peer->qp.mtu = a->qp_mtu;
	peer->rkey = a->rmb_rkey;
	peer->rmb_addr = a->rmb_addr;
	peer->rmb_size = smc_code_size(a->rmbe_size);
	peer->token = a->rmbe_alert_token;
	peer->has_gid2 = a->gid_cnt > 0;
	if (peer->has_gid2)
		memcpy(peer->gid2, a->gids[0], 16);
}

static void to_accept(const struct smcr_link_end *me, uint8_t type, uint8_t mtu, struct clc_smcr_accept *a)
{
	memset(a, 0, sizeof(*a));
	a->type = type;
	a->version = CLC_V2;
	a->first_contact = me->first_contact;
	memcpy(a->gid, me->qp.gid, 16);
	a->qpn = me->qp.qpn;
	a->rmb_rkey = me->rkey;
	a->rmbe_idx = 1;
	a->rmbe_alert_token = me->token;
	a->rmbe_size = smc_size_code(me->rmb_size, SMC_SIZE_CODE_SMCR);
	a->qp_mtu = mtu;
	a->rmb_addr = me->rmb_addr;
	a->psn = me->qp.psn;
	memcpy(a->eid, test_eid, CLC_EID_LEN);
	a->fce.v2_direct = true;
	a->fce.os_type = CLC_OS_LINUX;
	a->fce.release = 1;
	memset(a->fce.hostname, ' ', CLC_HOSTNAME_LEN);
	gethostname((char *)a->fce.hostname, CLC_HOSTNAME_LEN - 1);
	a->fce.hostname[strnlen((char *)a->fce.hostname, CLC_HOSTNAME_LEN)] = ' ';
	a->fce.max_conns = 255;
	a->fce.max_links = 2;
	/* the client's GIDs for more links go in its first-contact CONFIRM */
	if (type == CLC_CONFIRM && me->has_gid2) {
		a->gid_cnt = 1;
		memcpy(a->gids[0], me->gid2, 16);
	}
}

static int send_accept(int fd, const struct clc_smcr_accept *a)
{
	uint8_t buf[CLC_SMCR_CONFIRM_FC_LEN(CLC_MAX_GIDLIST)];
	int n = clc_smcr_accept_encode(a, buf, sizeof(buf));

	return n < 0 ? n : write_all(fd, buf, (size_t)n);
}

int smcr_handshake_server(int fd, const struct smcr_link_end *me, struct smcr_link_end *peer)
{
	uint8_t buf[CLC_PROPOSAL_MAX];
	struct clc_proposal p;
	struct clc_smcr_accept a;
	int n = read_clc(fd, buf, sizeof(buf), CLC_PROPOSAL);

	if (n < 0)
		return n;
	if (clc_proposal_decode(buf, (size_t)n, &p) < 0)
		return -EPROTO;
	/* SMC-Rv2 with the EID both ends have, as the kernel's server requires */
	if ((p.typev2 != CLC_SMC_R && p.typev2 != CLC_SMC_B) || !p.eid_cnt ||
	    memcmp(p.eid[0], test_eid, CLC_EID_LEN))
		return -EPROTO;
	to_accept(me, CLC_ACCEPT, me->qp.mtu, &a);
	n = send_accept(fd, &a);
	if (n)
		return n;
	n = read_clc(fd, buf, sizeof(buf), CLC_CONFIRM);
	if (n < 0)
		return n;
	if (clc_smcr_accept_decode(buf, (size_t)n, &a) < 0 || a.type != CLC_CONFIRM)
		return -EPROTO;
	from_accept(&a, peer);
	return 0;
}

int smcr_handshake_client(int fd, struct smcr_link_end *me, struct smcr_link_end *peer,
			  smcr_accepted_fn accepted, void *arg)
{
	uint8_t buf[CLC_PROPOSAL_MAX];
	struct clc_proposal p = {
		.version = CLC_V2,
		.typev1 = CLC_SMC_N,
		.typev2 = CLC_SMC_R,
		.eid_cnt = 1,
		.release = 1,
		.max_conns = 255,
		.max_links = 2,
	};
	struct clc_smcr_accept a;
	int n;

	memcpy(p.eid[0], test_eid, CLC_EID_LEN);
	memcpy(p.roce_gid, me->qp.gid, 16);
	n = clc_proposal_encode(&p, buf, sizeof(buf));
	if (n < 0)
		return n;
	n = write_all(fd, buf, (size_t)n);
	if (n)
		return n;
	n = read_clc(fd, buf, sizeof(buf), CLC_ACCEPT);
	if (n < 0)
		return n;
	if (clc_smcr_accept_decode(buf, (size_t)n, &a) < 0 || a.type != CLC_ACCEPT)
		return -EPROTO;
	from_accept(&a, peer);
	n = accepted(arg, peer, me);
	if (n)
		return n;
	to_accept(me, CLC_CONFIRM, peer->qp.mtu < me->qp.mtu ? peer->qp.mtu : me->qp.mtu, &a);
	return send_accept(fd, &a);
}

int smcr_qp_wait(struct rdma_qp *qp, int ms)
{
	struct pollfd pfd = { .fd = rdma_qp_fd(qp), .events = POLLIN };
	int rc = rdma_qp_arm(qp, true);

	if (rc)
		return rc;
	rc = poll(&pfd, 1, ms);
	if (rc <= 0)
		return rc < 0 ? -errno : 0;
	rc = rdma_qp_woken(qp);
	return rc ? rc : 1;
}

static enum smcr_llc_ho own_ho(void)
{
	return __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? SMCR_LLC_HO_BE : SMCR_LLC_HO_LE;
}

static int send_llc(struct rdma_qp *qp, const struct smcr_llc_msg *m)
{
	uint8_t buf[RDMA_MSG_MAX];
	int n = smcr_llc_encode(m, own_ho(), buf, sizeof(buf));

	return n < 0 ? n : rdma_post_ctl(qp, buf, (size_t)n, 0);
}

/* The next LLC message of the peer; completions of our sends are skipped. */
static int wait_llc(struct rdma_qp *qp, struct smcr_llc_msg *m)
{
	for (;;) {
		struct rdma_event ev;
		int n = rdma_qp_poll(qp, &ev, 1);

		if (n < 0)
			return n;
		if (n == 0) {
			n = smcr_qp_wait(qp, WAIT_MS);
			if (n <= 0)
				return n ? n : -ETIMEDOUT;
			continue;
		}
		if (ev.kind == RDMA_EV_ERROR)
			return -EIO;
		if (ev.kind == RDMA_EV_MSG)
			return smcr_llc_decode(ev.msg, ev.len, own_ho(), m);
	}
}

static void confirm_link(struct smcr_llc_msg *m, const struct smcr_link_end *me, uint8_t link_num,
			 bool resp)
{
	memset(m, 0, sizeof(*m));
	m->hd.type = SMCR_LLC_CONFIRM_LINK;
	m->hd.version = SMCR_LLC_VERSION_V2;
	m->hd.flags = SMCR_LLC_FLAG_NO_RMBE_EYEC | (resp ? SMCR_LLC_FLAG_RESP : 0);
	memcpy(m->confirm_link.sender_gid, me->qp.gid, 16);
	m->confirm_link.sender_qp_num = me->qp.qpn;
	m->confirm_link.link_num = link_num;
	memcpy(m->confirm_link.link_uid, link_uid, sizeof(link_uid));
	m->confirm_link.max_links = 2;
	m->confirm_link.max_conns = 255;
}

static bool is_confirm_link(const struct smcr_llc_msg *m, bool resp)
{
	return m->hd.type == SMCR_LLC_CONFIRM_LINK &&
	       (m->hd.flags & SMCR_LLC_FLAG_NO_RMBE_EYEC) &&
	       !(m->hd.flags & SMCR_LLC_FLAG_RESP) == !resp;
}

int smcr_confirm_link_server(struct rdma_qp *qp, const struct smcr_link_end *me, uint8_t link_num)
{
	struct smcr_llc_msg m;
	int rc;

	confirm_link(&m, me, link_num, false);
	rc = send_llc(qp, &m);
	if (!rc)
		rc = wait_llc(qp, &m);
	if (!rc && !is_confirm_link(&m, true))
		rc = -EPROTO;
	return rc;
}

int smcr_confirm_link_client(struct rdma_qp *qp, const struct smcr_link_end *me, uint8_t link_num)
{
	struct smcr_llc_msg m;
	int rc = wait_llc(qp, &m);

	if (!rc && (!is_confirm_link(&m, false) || m.confirm_link.link_num != link_num))
		rc = -EPROTO;
	if (!rc) {
		confirm_link(&m, me, link_num, true);
		rc = send_llc(qp, &m);
	}
	return rc;
}

static void add_link(struct smcr_llc_msg *m, const struct smcr_link_end *me2, uint32_t rkey1,
		     const uint8_t target_gid[16], bool resp)
{
	memset(m, 0, sizeof(*m));
	m->hd.type = SMCR_LLC_ADD_LINK;
	m->hd.version = SMCR_LLC_VERSION_V2;
	m->hd.flags = resp ? SMCR_LLC_FLAG_RESP : 0;
	memcpy(m->add_link.sender_gid, me2->qp.gid, 16);
	m->add_link.sender_qp_num = me2->qp.qpn;
	m->add_link.link_num = 2;
	m->add_link.qp_mtu = me2->qp.mtu;
	m->add_link.initial_psn = me2->qp.psn;
	m->add_link.has_ext = true;
	m->add_link.v2_direct = true;
	memcpy(m->add_link.client_target_gid, target_gid, 16);
	m->add_link.num_rkeys = 1;
	m->add_link.rt[0].rmb_key = rkey1;
	m->add_link.rt[0].rmb_key_new = me2->rkey;
	m->add_link.rt[0].rmb_vaddr_new = me2->rmb_addr;
}

/* The other end's second link from its ADD LINK; its rkey on the first link must be the one known. */
static int from_add_link(const struct smcr_llc_msg *m, bool resp, uint32_t peer_rkey1,
			 struct smcr_link_end *peer2)
{
	const struct smcr_llc_add_link *a = &m->add_link;

	if (m->hd.type != SMCR_LLC_ADD_LINK || !(m->hd.flags & SMCR_LLC_FLAG_RESP) != !resp ||
	    (m->hd.flags & SMCR_LLC_FLAG_ADD_LNK_REJ) || !a->has_ext || a->num_rkeys != 1 ||
	    a->rt[0].rmb_key != peer_rkey1 || a->link_num != 2)
		return -EPROTO;
	memset(peer2, 0, sizeof(*peer2));
	peer2->qp.qpn = a->sender_qp_num;
	peer2->qp.psn = a->initial_psn;
	memcpy(peer2->qp.gid, a->sender_gid, 16);
	peer2->qp.mtu = a->qp_mtu;
	peer2->rkey = a->rt[0].rmb_key_new;
	peer2->rmb_addr = a->rt[0].rmb_vaddr_new;
	return 0;
}

int smcr_add_link_server(struct rdma_qp *qp1, struct rdma_qp *qp2, const struct smcr_link_end *me2,
			 uint32_t rkey1, uint32_t peer_rkey1, const uint8_t client_gid2[16],
			 struct smcr_link_end *peer2)
{
	struct smcr_llc_msg m;
	int rc;

	add_link(&m, me2, rkey1, client_gid2, false);
	rc = send_llc(qp1, &m);
	if (!rc)
		rc = wait_llc(qp1, &m);
	if (!rc)
		rc = from_add_link(&m, true, peer_rkey1, peer2);
	if (!rc && memcmp(peer2->qp.gid, client_gid2, 16))
		rc = -EPROTO;
	if (!rc)
		rc = rdma_qp_connect(qp2, &peer2->qp);
	return rc;
}

int smcr_add_link_client(struct rdma_qp *qp1, struct rdma_qp *qp2, const struct smcr_link_end *me2,
			 uint32_t rkey1, uint32_t peer_rkey1, struct smcr_link_end *peer2)
{
	struct smcr_llc_msg m;
	int rc = wait_llc(qp1, &m);

	if (!rc)
		rc = from_add_link(&m, false, peer_rkey1, peer2);
	if (!rc && memcmp(m.add_link.client_target_gid, me2->qp.gid, 16))
		rc = -EPROTO;
	if (!rc)
		rc = rdma_qp_connect(qp2, &peer2->qp);
	if (!rc) {
		add_link(&m, me2, rkey1, peer2->qp.gid, true);
		rc = send_llc(qp1, &m);
	}
	return rc;
}

int smcr_delete_link_send(struct rdma_qp *qp, uint8_t link_num, bool resp)
{
	struct smcr_llc_msg m;

	memset(&m, 0, sizeof(m));
	m.hd.type = SMCR_LLC_DELETE_LINK;
	m.hd.version = SMCR_LLC_VERSION_V2;
	m.hd.flags = resp ? SMCR_LLC_FLAG_RESP : 0;
	m.delete_link.link_num = link_num;
	m.delete_link.reason = SMCR_LLC_DEL_LOST_PATH;
	return send_llc(qp, &m);
}

int smcr_delete_link_of(const uint8_t *msg, size_t len, uint8_t *link_num, bool *resp)
{
	struct smcr_llc_msg m;

	if (smcr_llc_decode(msg, len, own_ho(), &m))
		return -EPROTO;
	if (m.hd.type != SMCR_LLC_DELETE_LINK)
		return 0;
	*link_num = m.delete_link.link_num;
	*resp = m.hd.flags & SMCR_LLC_FLAG_RESP;
	return 1;
}
