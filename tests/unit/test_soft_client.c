/*
 * The SMC_SOFT client library (wire/reg_client.c) against the daemon's
 * request core: a thread serves one control connection on a private UNIX
 * socket with soft_handle(), as the daemon's server loop does.
 */
#include "unit.h"
#include "regfx.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wire/reg_client.h"
#include "soft/runtime/teardown.h"
#include "soft/families/families.h"
#include "soft/service/service.h"

struct mini {
	char dir[64];
	char path[100];
	int lfd;
	bool silent;                 /* read requests, answer nothing */
	pthread_t th;
	struct soft_state st;
};

static int recv_req(int fd, void *buf, size_t len, int *passed)
{
	union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } u;
	struct iovec iov = { buf, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = u.b, .msg_controllen = sizeof(u.b) };
	struct cmsghdr *cm;
	ssize_t n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);

	*passed = -1;
	cm = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
	if (cm && cm->cmsg_type == SCM_RIGHTS)
		memcpy(passed, CMSG_DATA(cm), sizeof(int));
	return (int)n;
}

static void *serve(void *arg)
{
	struct mini *m = arg;
	struct soft_peer peer = { .conn_id = 1 };
	struct ucred cred;
	socklen_t len = sizeof(cred);
	_Alignas(struct nlmsghdr) unsigned char buf[4096];
	int cfd = accept(m->lfd, NULL, NULL), fd, n;

	if (cfd < 0)
		return NULL;
	getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len);
	peer.pid = cred.pid;
	peer.uid = cred.uid;
	peer.netns = soft_netns_key(cfd, cred.pid);
	while ((n = recv_req(cfd, buf, sizeof(buf), &fd)) > 0) {
		struct soft_out out;

		if (m->silent) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		soft_out_init(&out);
		soft_handle(&m->st, &peer, buf, (size_t)n, fd, &out);
		if (out.len)
			send(cfd, out.buf, out.len, MSG_NOSIGNAL);
		soft_out_free(&out);
	}
	close(cfd);
	return NULL;
}

static void mini_start(struct mini *m, bool silent)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	memset(m, 0, sizeof(*m));
	m->silent = silent;
	soft_state_init(&m->st);
	snprintf(m->dir, sizeof(m->dir), "/tmp/softcli.XXXXXX");
	if (!mkdtemp(m->dir))
		unit_fail(__FILE__, __LINE__, "mkdtemp: %s", strerror(errno));
	snprintf(m->path, sizeof(m->path), "%s/control", m->dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", m->path);
	m->lfd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (bind(m->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(m->lfd, 4) < 0)
		unit_fail(__FILE__, __LINE__, "mini server: %s", strerror(errno));
	pthread_create(&m->th, NULL, serve, m);
}

/* After the client closed: the thread is done, the state is the test's. */
static void mini_join(struct mini *m)
{
	pthread_join(m->th, NULL);
	close(m->lfd);
	unlink(m->path);
	rmdir(m->dir);
}

static int mini_socks(const struct mini *m)
{
	int n = 0;

	for (const struct soft_ns *ns = m->st.ns; ns; ns = ns->next)
		for (const struct soft_sock *s = ns->socks; s; s = s->next)
			n++;
	return n;
}

TEST(soft_client_register_and_deregister)
{
	struct soft_reg_conn c;
	struct regfx_tcp t;
	struct mini m;
	uint64_t a = 0, b = 0, i = 0;
	int fresh = socket(AF_INET, SOCK_STREAM, 0);

	mini_start(&m, false);
	regfx_tcp_open(&t, AF_INET);
	CHECK_INT(soft_reg_open(&c, m.path, 0), 0);
	CHECK_INT(c.family, SOFT_ID_SOFT);
	CHECK_INT(soft_reg_add(&c, t.lst, SMC_SOFT_STATE_LISTEN, &a), 0);
	CHECK_INT(soft_reg_add(&c, t.srv, SMC_SOFT_STATE_ACTIVE, &b), 0);
	CHECK_INT(soft_reg_add(&c, fresh, SMC_SOFT_STATE_INIT, &i), 0);
	CHECK(a && b && i && a != b && b != i);
	CHECK_INT(soft_reg_state(&c, i, SMC_SOFT_STATE_INIT, -1), 0);
	CHECK_INT(soft_reg_state(&c, i, SMC_SOFT_STATE_LISTEN, fresh), -EINVAL);
	CHECK_INT(soft_reg_del(&c, b), 0);
	CHECK_INT(soft_reg_del(&c, b), -ENOENT);
	CHECK_INT(soft_reg_state(&c, b, SMC_SOFT_STATE_ACTIVE, -1), -ENOENT);
	soft_reg_close(&c);
	CHECK_INT(c.fd, -1);
	CHECK_INT(soft_reg_del(&c, a), -EBADF);
	mini_join(&m);
	CHECK_INT(mini_socks(&m), 2);               /* the server did not drop them itself */
	soft_conn_gone(&m.st, 1);
	CHECK_INT(mini_socks(&m), 0);
	soft_state_free(&m.st);
	close(fresh);
	regfx_tcp_close(&t);
}

TEST(soft_client_daemon_errors)
{
	struct soft_reg_conn c;
	struct mini m;
	uint64_t tok = 0;
	int udp = socket(AF_INET, SOCK_DGRAM, 0);
	int fresh = socket(AF_INET, SOCK_STREAM, 0);

	mini_start(&m, false);
	CHECK_INT(soft_reg_open(&c, m.path, 0), 0);
	CHECK_INT(soft_reg_add(&c, udp, SMC_SOFT_STATE_INIT, &tok), -EINVAL);
	CHECK_INT(soft_reg_add(&c, -1, SMC_SOFT_STATE_INIT, &tok), -EINVAL);
	CHECK_INT(soft_reg_add(&c, fresh, 99, &tok), -EINVAL);
	CHECK_INT(soft_reg_add(&c, fresh, SMC_SOFT_STATE_LISTEN, &tok), -EINVAL);
	CHECK_INT(tok, 0);
	CHECK_INT(soft_reg_add(&c, fresh, SMC_SOFT_STATE_INIT, &tok), 0);
	CHECK_INT(soft_reg_add(&c, fresh, SMC_SOFT_STATE_INIT, &tok), -EEXIST);
	soft_reg_close(&c);
	mini_join(&m);
	soft_state_free(&m.st);
	close(udp);
	close(fresh);
}

TEST(soft_client_no_daemon)
{
	struct soft_reg_conn c;

	CHECK_INT(soft_reg_open(&c, "/nonexistent/smc_soft/control", 0), -ENOENT);
	CHECK_INT(c.fd, -1);
	CHECK_INT(soft_reg_open(&c, "/tmp/"
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 0), -ENAMETOOLONG);
}

TEST(soft_client_bounded_wait)
{
	struct soft_reg_conn c;
	struct mini m;

	mini_start(&m, true);
	CHECK_INT(soft_reg_open(&c, m.path, 200), -ETIMEDOUT);
	CHECK_INT(c.fd, -1);
	mini_join(&m);
	soft_state_free(&m.st);
}

/* A daemon of another user (not root) is not trusted. */
TEST(soft_client_refuses_foreign_daemon)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct soft_reg_conn c;
	char dir[] = "/tmp/softcli.XXXXXX";
	int ready[2], status;
	pid_t pid;

	if (geteuid() != 0) {
		printf("    (skipped: needs root to run a daemon as another user)\n");
		return;
	}
	CHECK(mkdtemp(dir) != NULL);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/control", dir);
	CHECK_INT(pipe(ready), 0);
	pid = fork();
	if (pid == 0) {
		int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
		char x = 0;

		/* SO_PEERCRED reports the credentials of listen() */
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
		    setresuid(65534, 65534, 65534) < 0 || listen(fd, 4) < 0)
			_exit(1);
		if (write(ready[1], &x, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	{
		char x;

		CHECK_INT(read(ready[0], &x, 1), 1);
	}
	CHECK_INT(soft_reg_open(&c, sa.sun_path, 0), -EACCES);
	CHECK_INT(c.fd, -1);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(ready[0]);
	unlink(sa.sun_path);
	rmdir(dir);
}

TEST(soft_client_socket_path)
{
	char buf[256];
	const char *old = getenv("SMC_SOFT_SOCKET");
	char *saved = old ? strdup(old) : NULL;

	setenv("SMC_SOFT_SOCKET", "/tmp/x/control", 1);
	CHECK_STR(soft_reg_socket_path(buf, sizeof(buf)), "/tmp/x/control");
	setenv("SMC_SOFT_SOCKET", "", 1);
	if (geteuid() == 0)
		CHECK_STR(soft_reg_socket_path(buf, sizeof(buf)), "/run/smc_soft/control");
	if (saved)
		setenv("SMC_SOFT_SOCKET", saved, 1);
	else
		unsetenv("SMC_SOFT_SOCKET");
	free(saved);
}
