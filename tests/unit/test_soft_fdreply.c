/*
 * Replies that carry a descriptor: the daemon sends each as a datagram of
 * its own with SCM_RIGHTS, also from its queue, and never leaks one; the
 * client's soft_reg_pair_poll() takes the region's memfd from a PAIR reply
 * and nothing from anything else, whatever the bytes say.
 */
#include "unit.h"
#include "msgbuild.h"
#include "soft/runtime/daemon_client.h"
#include "wire/reg_client.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
#include <libmnl/libmnl.h>

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* A small message of seq into o, with a descriptor when fd >= 0. */
static void put_msg(struct soft_out *o, uint32_t seq, int fd)
{
	struct nlmsghdr req = { .nlmsg_seq = seq };
	struct nlmsghdr *nlh = soft_genl_msg(o, &req, 0x1c, 4, 0);

	mnl_attr_put_u32(nlh, 1, seq);
	soft_msg_end(o, nlh);
	if (fd >= 0)
		CHECK_INT(soft_msg_fd(o, nlh, fd), 0);
}

/* One datagram: how many messages, the seq of the first, its descriptor. */
static ssize_t recv_one(int sock, int *n_msgs, uint32_t *seq, int *fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(4 * sizeof(int))];
	} ctl;
	static uint32_t buf[16384];
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *cm;
	ssize_t n = recvmsg(sock, &mh, MSG_DONTWAIT);
	int left = (int)n;

	*fd = -1;
	*n_msgs = 0;
	if (n <= 0)
		return n;
	cm = CMSG_FIRSTHDR(&mh);
	if (cm && cm->cmsg_type == SCM_RIGHTS)
		memcpy(fd, CMSG_DATA(cm), sizeof(*fd));
	*seq = ((struct nlmsghdr *)buf)->nlmsg_seq;
	for (const struct nlmsghdr *h = (void *)buf; mnl_nlmsg_ok(h, left);
	     h = mnl_nlmsg_next(h, &left))
		(*n_msgs)++;
	return 1;
}

TEST(soft_fdreply_own_datagram)
{
	struct softd_client *c = calloc(1, sizeof(*c));
	struct soft_out o;
	uint32_t seq;
	int sv[2], n, fd, before = open_fds();

	CHECK_INT(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, sv), 0);
	c->fd = sv[0];
	soft_out_init(&o);
	put_msg(&o, 1, -1);
	put_msg(&o, 2, -1);
	put_msg(&o, 3, open("/dev/null", O_RDONLY | O_CLOEXEC));
	put_msg(&o, 4, -1);
	CHECK_INT(softd_client_send_out(c, &o), SOFTD_IO_OK);
	CHECK_INT(o.n_fds, 0);
	CHECK_INT(recv_one(sv[1], &n, &seq, &fd), 1);
	CHECK(n == 2 && seq == 1 && fd < 0);
	CHECK_INT(recv_one(sv[1], &n, &seq, &fd), 1);
	CHECK(n == 1 && seq == 3 && fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK_INT(recv_one(sv[1], &n, &seq, &fd), 1);
	CHECK(n == 1 && seq == 4 && fd < 0);
	soft_out_free(&o);
	softd_client_free(c);
	close(sv[1]);
	CHECK_INT(open_fds(), before);
}

/* Fill the client's socket so that replies queue. */
static int fill(int sock)
{
	static char junk[4096];
	int n = 0;

	while (send(sock, junk, sizeof(junk), MSG_DONTWAIT) > 0)
		n++;
	return n;
}

static void drain(int sock, int n)
{
	static char junk[4096];

	for (int i = 0; i < n; i++)
		CHECK(recv(sock, junk, sizeof(junk), 0) > 0);
}

TEST(soft_fdreply_queued)
{
	struct softd_client *c = calloc(1, sizeof(*c));
	struct soft_out o;
	uint32_t seq;
	int sv[2], n, fd, filled, before = open_fds();

	CHECK_INT(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, sv), 0);
	c->fd = sv[0];
	soft_out_init(&o);
	filled = fill(sv[0]);
	/* two answers queued: each starts a datagram, the fd goes with its message */
	put_msg(&o, 1, -1);
	CHECK_INT(softd_client_send_out(c, &o), SOFTD_IO_OK);
	soft_out_trim(&o, 0);
	put_msg(&o, 2, -1);
	put_msg(&o, 3, open("/dev/null", O_RDONLY | O_CLOEXEC));
	CHECK_INT(softd_client_send_out(c, &o), SOFTD_IO_OK);
	CHECK(softd_client_blocked(c));
	CHECK_INT(c->n_qfds, 3);
	drain(sv[1], filled);
	CHECK_INT(softd_client_flush(c), SOFTD_IO_OK);
	CHECK(!softd_client_blocked(c));
	CHECK_INT(recv_one(sv[1], &n, &seq, &fd), 1);
	CHECK(n == 1 && seq == 1 && fd < 0);
	CHECK_INT(recv_one(sv[1], &n, &seq, &fd), 1);
	CHECK(n == 1 && seq == 2 && fd < 0);
	CHECK_INT(recv_one(sv[1], &n, &seq, &fd), 1);
	CHECK(n == 1 && seq == 3 && fd >= 0);
	if (fd >= 0)
		close(fd);
	soft_out_free(&o);
	softd_client_free(c);
	close(sv[1]);
	CHECK_INT(open_fds(), before);
}

TEST(soft_fdreply_dropped_client_closes_queued_fds)
{
	struct softd_client *c = calloc(1, sizeof(*c));
	struct soft_out o;
	int sv[2], before = open_fds();

	CHECK_INT(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, sv), 0);
	c->fd = sv[0];
	soft_out_init(&o);
	fill(sv[0]);
	put_msg(&o, 1, open("/dev/null", O_RDONLY | O_CLOEXEC));
	CHECK_INT(softd_client_send_out(c, &o), SOFTD_IO_OK);
	put_msg(&o, 2, open("/dev/null", O_RDONLY | O_CLOEXEC));
	soft_out_trim(&o, 0);                       /* an answer dropped before sending */
	soft_out_free(&o);
	softd_client_free(c);
	close(sv[1]);
	CHECK_INT(open_fds(), before);
}

/* ---- the client's side ---------------------------------------------------- */

struct poller {
	struct soft_reg_conn c;
	int peer;                                   /* the daemon's end */
};

static void poller_open(struct poller *p)
{
	int sv[2];

	CHECK_INT(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	p->c = (struct soft_reg_conn){ .fd = sv[0], .family = 0x1c, .seq = 1 };
	p->peer = sv[1];
}

static void poller_close(struct poller *p)
{
	soft_reg_close(&p->c);
	close(p->peer);
}

static void send_raw(int sock, const void *buf, size_t len, int fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (fd >= 0) {
		struct cmsghdr *cm;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	}
	CHECK(sendmsg(sock, &mh, 0) == (ssize_t)len);
	if (fd >= 0)
		close(fd);
}

/*
 * A PAIR reply of seq with status; region attributes unless declined, and
 * SMC_SOFT_A_TRANSPORT transport unless 0.
 */
static void pair_reply_of(struct mb *m, uint32_t seq, uint8_t status, uint8_t transport)
{
	mb_start(m, 0x1c, 0);
	mb_genl(m, SMC_SOFT_CMD_PAIR);
	mb_u64(m, SMC_SOFT_A_TOKEN, 7);
	mb_u8(m, SMC_SOFT_A_PAIR_STATUS, status);
	if (status == SMC_SOFT_PAIR_DECLINED) {
		mb_u32(m, SMC_SOFT_A_REASON, 0x03030001);
		mb_u32(m, SMC_SOFT_A_PEER_DIAGNOSIS, 0);
	} else {
		if (transport)
			mb_u8(m, SMC_SOFT_A_TRANSPORT, transport);
		mb_u8(m, SMC_SOFT_A_SIDE, status == SMC_SOFT_PAIR_PAIRED);
		mb_u32(m, SMC_SOFT_A_LGR_ID, 0x100);
		mb_u64(m, SMC_SOFT_A_DMB_TOKEN, 2);
		mb_u64(m, SMC_SOFT_A_SHM_SIZE, 4096 + 2 * 16384);
		mb_u32(m, SMC_SOFT_A_RING_SIZE, 16384);
		mb_u32(m, SMC_SOFT_A_RING_SIZE, 32768);
	}
	((struct nlmsghdr *)m->buf)->nlmsg_seq = seq;
	((struct nlmsghdr *)m->buf)->nlmsg_len = (uint32_t)m->len;
}

static void pair_reply(struct mb *m, uint32_t seq, uint8_t status)
{
	pair_reply_of(m, seq, status, SMC_SOFT_TRANSPORT_RING);
}

static void error_msg(struct mb *m, uint32_t seq, int error, uint32_t req_pid)
{
	struct nlmsgerr e = { .error = error };

	e.msg.nlmsg_seq = seq;
	e.msg.nlmsg_pid = req_pid;
	mb_start(m, NLMSG_ERROR, 0);
	mb_raw(m, &e, sizeof(e));
	((struct nlmsghdr *)m->buf)->nlmsg_seq = seq;
	((struct nlmsghdr *)m->buf)->nlmsg_len = (uint32_t)m->len;
}

static int devnull(void)
{
	return open("/dev/null", O_RDONLY | O_CLOEXEC);
}

TEST(soft_reg_pair_poll_replies)
{
	struct poller p;
	struct soft_pair_reply r;
	struct mb m;
	int before = open_fds();

	poller_open(&p);
	CHECK_INT(soft_reg_pair_poll(&p.c, &r), 0);
	pair_reply(&m, 5, SMC_SOFT_PAIR_PENDING);
	send_raw(p.peer, m.buf, m.len, devnull());
	CHECK_INT(soft_reg_pair_poll(&p.c, &r), 1);
	CHECK(r.seq == 5 && r.error == 0 && r.status == SMC_SOFT_PAIR_PENDING && r.side == 0);
	CHECK(r.token == 7 && r.lgr_id == 0x100 && r.dmb_token == 2);
	CHECK(r.ring_size[0] == 16384 && r.ring_size[1] == 32768 && r.shm_fd >= 0);
	CHECK_INT(r.transport, SMC_SOFT_TRANSPORT_RING);
	CHECK(fcntl(r.shm_fd, F_GETFD) == FD_CLOEXEC);
	close(r.shm_fd);
	/* a daemon that names no transport offers the ring; a kind unknown here is passed on */
	pair_reply_of(&m, 3, SMC_SOFT_PAIR_PAIRED, 0);
	send_raw(p.peer, m.buf, m.len, devnull());
	CHECK_INT(soft_reg_pair_poll(&p.c, &r), 1);
	CHECK(r.seq == 3 && r.error == 0 && r.transport == SMC_SOFT_TRANSPORT_RING);
	close(r.shm_fd);
	pair_reply_of(&m, 4, SMC_SOFT_PAIR_PAIRED, 0x7f);
	send_raw(p.peer, m.buf, m.len, devnull());
	CHECK_INT(soft_reg_pair_poll(&p.c, &r), 1);
	CHECK(r.seq == 4 && r.error == 0 && r.transport == 0x7f);
	close(r.shm_fd);
	pair_reply(&m, 6, SMC_SOFT_PAIR_DECLINED);
	send_raw(p.peer, m.buf, m.len, -1);
	CHECK_INT(soft_reg_pair_poll(&p.c, &r), 1);
	CHECK(r.seq == 6 && r.status == SMC_SOFT_PAIR_DECLINED && r.reason == 0x03030001);
	CHECK_INT(r.shm_fd, -1);
	/* a SOCK_DEL's error is skipped, a PAIR's is the answer */
	error_msg(&m, 8, -ENOENT, 0x736f6466u);
	send_raw(p.peer, m.buf, m.len, devnull());
	error_msg(&m, 9, -EEXIST, 0);
	send_raw(p.peer, m.buf, m.len, -1);
	CHECK_INT(soft_reg_pair_poll(&p.c, &r), 1);
	CHECK(r.seq == 9 && r.error == -EEXIST && r.shm_fd == -1);
	CHECK_INT(soft_reg_pair_poll(&p.c, &r), 0);
	poller_close(&p);
	CHECK_INT(soft_reg_pair_poll(&p.c, &r), -EBADF);
	CHECK_INT(open_fds(), before);
}

TEST(soft_reg_pair_poll_malformed)
{
	struct poller p;
	struct soft_pair_reply r;
	struct mb m;
	int before = open_fds();

	poller_open(&p);
	/* PAIRED without its memfd: unusable, an error for its seq */
	pair_reply(&m, 11, SMC_SOFT_PAIR_PAIRED);
	send_raw(p.peer, m.buf, m.len, -1);
	CHECK_INT(soft_reg_pair_poll(&p.c, &r), 1);
	CHECK(r.seq == 11 && r.error == -EBADMSG && r.shm_fd == -1);
	/* an attribute overrunning its message: error, and the fd is closed */
	pair_reply(&m, 12, SMC_SOFT_PAIR_PENDING);
	((struct nlattr *)(m.buf + NLMSG_HDRLEN + GENL_HDRLEN))->nla_len = 0xfff0;
	send_raw(p.peer, m.buf, m.len, devnull());
	CHECK_INT(soft_reg_pair_poll(&p.c, &r), 1);
	CHECK(r.seq == 12 && r.error == -EBADMSG && r.shm_fd == -1);
	/* a wrong-sized attribute */
	mb_start(&m, 0x1c, 0);
	mb_genl(&m, SMC_SOFT_CMD_PAIR);
	mb_u32(&m, SMC_SOFT_A_TOKEN, 7);
	((struct nlmsghdr *)m.buf)->nlmsg_seq = 13;
	((struct nlmsghdr *)m.buf)->nlmsg_len = (uint32_t)m.len;
	send_raw(p.peer, m.buf, m.len, -1);
	CHECK_INT(soft_reg_pair_poll(&p.c, &r), 1);
	CHECK(r.seq == 13 && r.error == -EBADMSG);
	/* a message longer than its datagram, other families, short errors: skipped */
	pair_reply(&m, 14, SMC_SOFT_PAIR_PENDING);
	((struct nlmsghdr *)m.buf)->nlmsg_len = (uint32_t)m.len + 64;
	send_raw(p.peer, m.buf, m.len, devnull());
	pair_reply(&m, 15, SMC_SOFT_PAIR_PENDING);
	((struct nlmsghdr *)m.buf)->nlmsg_type = 0x1b;
	send_raw(p.peer, m.buf, m.len, devnull());
	send_raw(p.peer, "xyz", 3, devnull());
	error_msg(&m, 16, -EINVAL, 0);
	((struct nlmsghdr *)m.buf)->nlmsg_len = NLMSG_HDRLEN + 4;
	send_raw(p.peer, m.buf, NLMSG_HDRLEN + 4, -1);
	CHECK_INT(soft_reg_pair_poll(&p.c, &r), 0);
	/* the daemon gone */
	close(p.peer);
	p.peer = -1;
	CHECK_INT(soft_reg_pair_poll(&p.c, &r), -ECONNRESET);
	soft_reg_close(&p.c);
	CHECK_INT(open_fds(), before);
}
