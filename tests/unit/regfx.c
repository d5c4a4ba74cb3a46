#include "regfx.h"
#include "soft/base/state.h"
#include "soft/runtime/teardown.h"
#include "soft/families/families.h"
#include "unit.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <libmnl/libmnl.h>
#include <linux/sock_diag.h>

#include "diag.h"

void regfx_init(struct regfx *f)
{
	memset(f, 0, sizeof(*f));
	soft_state_init(&f->st);
	f->peer.pid = getpid();
	f->peer.uid = getuid();
	f->peer.gid = getgid();
	f->peer.netns = f->st.init_netns;
	f->peer.conn_id = 1;
	soft_out_init(&f->out);
	smc_reply_init(&f->rep);
	f->seq = 100;
}

void regfx_free(struct regfx *f)
{
	soft_out_free(&f->out);
	smc_reply_free(&f->rep);
	soft_state_free(&f->st);
}

void regfx_run(struct regfx *f, const struct soft_peer *p, struct mb *m, int fd)
{
	struct nlmsghdr *h = (struct nlmsghdr *)m->buf;

	h->nlmsg_len = (uint32_t)m->len;
	h->nlmsg_seq = ++f->seq;
	soft_out_trim(&f->out, 0);
	soft_handle(&f->st, p, m->buf, m->len, fd, &f->out);
}

static const struct nlmsghdr *next_msg(const struct regfx *f, const struct nlmsghdr *prev)
{
	size_t off = prev ? (size_t)((const unsigned char *)prev - f->out.buf) +
			    NLMSG_ALIGN(prev->nlmsg_len) : 0;
	const struct nlmsghdr *nlh;

	if (off + sizeof(*nlh) > f->out.len)
		return NULL;
	nlh = (const struct nlmsghdr *)(f->out.buf + off);
	if (nlh->nlmsg_len < sizeof(*nlh) || nlh->nlmsg_len > f->out.len - off)
		return NULL;
	return nlh;
}

const struct nlmsghdr *regfx_find(const struct regfx *f, uint16_t type)
{
	for (const struct nlmsghdr *nlh = next_msg(f, NULL); nlh; nlh = next_msg(f, nlh))
		if (nlh->nlmsg_type == type)
			return nlh;
	return NULL;
}

int regfx_count(const struct regfx *f)
{
	int n = 0;

	for (const struct nlmsghdr *nlh = next_msg(f, NULL); nlh; nlh = next_msg(f, nlh))
		n++;
	return n;
}

int regfx_error(const struct regfx *f)
{
	const struct nlmsghdr *nlh = regfx_find(f, NLMSG_ERROR);

	return nlh ? ((const struct nlmsgerr *)NLMSG_DATA(nlh))->error : 1;
}

void regfx_req(struct mb *m, uint8_t cmd, uint16_t flags)
{
	mb_start(m, SOFT_ID_SOFT, NLM_F_REQUEST | flags);
	mb_genl(m, cmd);
}

static int copy_fd(int fd)
{
	return fd < 0 ? -1 : dup(fd);
}

static int token_attr(const struct nlattr *a, void *data)
{
	if (mnl_attr_get_type(a) == SMC_SOFT_A_TOKEN && mnl_attr_get_payload_len(a) == 8)
		*(uint64_t *)data = mnl_attr_get_u64(a);
	return MNL_CB_OK;
}

int regfx_add(struct regfx *f, const struct soft_peer *p, int fd, uint8_t state,
	      uint64_t *token)
{
	const struct nlmsghdr *nlh;
	struct mb m;
	int err;

	regfx_req(&m, SMC_SOFT_CMD_SOCK_ADD, 0);
	mb_u8(&m, SMC_SOFT_A_STATE, state);
	regfx_run(f, p, &m, copy_fd(fd));
	err = regfx_error(f);
	if (err != 1)
		return err ? err : -EPROTO;   /* an ack where the reply was due */
	nlh = regfx_find(f, SOFT_ID_SOFT);
	if (!nlh)
		return -EPROTO;
	*token = 0;
	mnl_attr_parse(nlh, GENL_HDRLEN, token_attr, token);
	return *token ? 0 : -EPROTO;
}

int regfx_state(struct regfx *f, const struct soft_peer *p, uint64_t token,
		uint8_t state, int fd)
{
	struct mb m;

	regfx_req(&m, SMC_SOFT_CMD_SOCK_STATE, NLM_F_ACK);
	mb_u64(&m, SMC_SOFT_A_TOKEN, token);
	mb_u8(&m, SMC_SOFT_A_STATE, state);
	regfx_run(f, p, &m, copy_fd(fd));
	return regfx_error(f);
}

int regfx_del(struct regfx *f, const struct soft_peer *p, uint64_t token)
{
	struct mb m;

	regfx_req(&m, SMC_SOFT_CMD_SOCK_DEL, NLM_F_ACK);
	mb_u64(&m, SMC_SOFT_A_TOKEN, token);
	regfx_run(f, p, &m, -1);
	return regfx_error(f);
}

int regfx_dump(struct regfx *f, const struct soft_peer *p, uint8_t ext)
{
	unsigned char buf[SMC_DIAG_REQ_BUF];
	const struct nlmsghdr *nlh, *last = NULL;
	struct mb m;

	smc_diag_build_req(buf, ext);
	memset(&m, 0, sizeof(m));
	mb_raw(&m, buf, ((struct nlmsghdr *)buf)->nlmsg_len);   /* smcss's own request */
	regfx_run(f, p, &m, -1);
	smc_reply_free(&f->rep);
	smc_reply_init(&f->rep);
	for (nlh = next_msg(f, NULL); nlh; nlh = next_msg(f, nlh)) {
		last = nlh;
		if (nlh->nlmsg_type == NLMSG_ERROR)
			return ((const struct nlmsgerr *)NLMSG_DATA(nlh))->error;
		if (nlh->nlmsg_type == SOCK_DIAG_BY_FAMILY)
			smc_reply_append(&f->rep, nlh, nlh->nlmsg_len);
	}
	return last && last->nlmsg_type == NLMSG_DONE ? 0 : -EPROTO;
}

char *regfx_smcss(const struct regfx *f, const struct smcss_opts *o)
{
	struct capture c;

	cap_open(&c);
	if (smcss_print_reply(&f->rep, o, c.f))
		fputs("(smcss_print_reply failed)", c.f);
	cap_text(&c);
	return c.buf;
}

/* ---- sockets ------------------------------------------------------------ */

static socklen_t loopback(int family, uint16_t port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return sizeof(*sin);
	}
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(port);
	sin6->sin6_addr = in6addr_loopback;
	return sizeof(*sin6);
}

static uint16_t local_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return 0;
	return ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
					     : ((struct sockaddr_in6 *)&ss)->sin6_port);
}

int regfx_listener(int family, uint16_t *port)
{
	struct sockaddr_storage ss;
	socklen_t len = loopback(family, 0, &ss);
	int fd = socket(family, SOCK_STREAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 8) < 0) {
		unit_fail(__FILE__, __LINE__, "listener: %s", strerror(errno));
		return fd;
	}
	*port = local_port(fd);
	return fd;
}

void regfx_tcp_open(struct regfx_tcp *t, int family)
{
	struct sockaddr_storage ss;
	socklen_t len;

	t->lst = regfx_listener(family, &t->lport);
	len = loopback(family, t->lport, &ss);
	t->cli = socket(family, SOCK_STREAM, 0);
	if (connect(t->cli, (struct sockaddr *)&ss, len) < 0)
		unit_fail(__FILE__, __LINE__, "connect: %s", strerror(errno));
	t->srv = accept(t->lst, NULL, NULL);
	if (t->srv < 0)
		unit_fail(__FILE__, __LINE__, "accept: %s", strerror(errno));
	t->cport = local_port(t->cli);
}

void regfx_tcp_close(struct regfx_tcp *t)
{
	int *fds[] = { &t->lst, &t->cli, &t->srv };

	for (size_t i = 0; i < 3; i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

uint64_t regfx_inode(int fd)
{
	struct stat sb;

	return fstat(fd, &sb) ? 0 : (uint64_t)sb.st_ino;
}

uint64_t regfx_cookie(int fd)
{
	uint64_t c = 0;
	socklen_t len = sizeof(c);

	getsockopt(fd, SOL_SOCKET, SO_COOKIE, &c, &len);
	return c;
}

uint64_t regfx_netns(int fd)
{
	return soft_netns_key(fd, -1);
}

union fd_ctl {
	struct cmsghdr h;
	char b[CMSG_SPACE(sizeof(int))];
};

static void child_send(int sv, int (*prep)(void))
{
	union fd_ctl u;
	char c = 0;
	struct iovec iov = { &c, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = u.b, .msg_controllen = sizeof(u.b) };
	struct cmsghdr *cm;
	int s;

	if (prep() < 0)
		_exit(2);
	s = socket(AF_INET, SOCK_STREAM, 0);
	memset(&u, 0, sizeof(u));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &s, sizeof(s));
	_exit(sendmsg(sv, &mh, 0) == 1 ? 0 : 3);
}

int regfx_child_socket(int (*prep)(void))
{
	union fd_ctl u;
	char c;
	struct iovec iov = { &c, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = u.b, .msg_controllen = sizeof(u.b) };
	int sv[2], fd = -1, status = 0;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) < 0)
		return -1;
	pid = fork();
	if (pid == 0)
		child_send(sv[1], prep);
	close(sv[1]);
	if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 0 && recvmsg(sv[0], &mh, 0) == 1 && CMSG_FIRSTHDR(&mh))
		memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&mh)), sizeof(fd));
	close(sv[0]);
	return fd;
}
