/* The transport and generic netlink layer: framing, acks, errors, retries. */
#include "unit.h"
#include "peer.h"
#include "names.h"
#include "diag.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/genetlink.h>

static int count_cb(const struct nlmsghdr *nlh, void *arg)
{
	(void)nlh;
	(*(int *)arg)++;
	return 0;
}

static void data_msg(struct mb *m, uint32_t v)
{
	mb_start(m, 0x20, NLM_F_MULTI);
	mb_genl(m, 1);
	mb_u32(m, 1, v);
}

/* A data message carrying v, queued as a reply to the n-th next request. */
static void queue_data(struct peer *p, int n, uint32_t v)
{
	struct mb m;

	data_msg(&m, v);
	peer_queue(p, n, &m);
}

TEST(nl_reply_append_rejects_bad_framing)
{
	struct smc_reply rep;
	struct nlmsghdr h = { .nlmsg_len = 100 };

	smc_reply_init(&rep);
	CHECK_INT(smc_reply_append(&rep, &h, 8), -EBADMSG);          /* shorter than a header */
	CHECK_INT(smc_reply_append(&rep, &h, sizeof(h)), -EBADMSG);  /* length beyond the data */
	h.nlmsg_len = 4;
	CHECK_INT(smc_reply_append(&rep, &h, sizeof(h)), -EBADMSG);  /* length below a header */
	h.nlmsg_len = sizeof(h);
	CHECK_INT(smc_reply_append(&rep, &h, sizeof(h)), 0);
	CHECK(smc_reply_next(&rep, NULL) != NULL);
	CHECK(smc_reply_next(&rep, smc_reply_next(&rep, NULL)) == NULL);
	smc_reply_free(&rep);
}

TEST(nl_dump_collects_multipart_until_done)
{
	struct peer p;
	struct mb m;
	int n = 0;

	peer_init(&p);
	queue_data(&p, 1, 1);
	queue_data(&p, 1, 2);
	peer_done(&p, 1);
	CHECK_INT(smc_genl_dump(&p.g, 7, count_cb, &n), 0);
	CHECK_INT(n, 2);
	/* the request went out as a dump of command 7 with an ack request */
	CHECK(peer_request(&p, &m) == NLMSG_HDRLEN + GENL_HDRLEN);
	CHECK_INT(((struct nlmsghdr *)m.buf)->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP);
	CHECK_INT(((struct nlmsghdr *)m.buf)->nlmsg_type, 0x20);
	CHECK_INT(((struct genlmsghdr *)(m.buf + NLMSG_HDRLEN))->cmd, 7);
	peer_close(&p);
}

TEST(nl_stale_replies_are_skipped)
{
	struct peer p;
	int n = 0;

	peer_init(&p);
	queue_data(&p, 0, 9);          /* answer to an earlier request */
	queue_data(&p, 1, 1);
	peer_done(&p, 1);
	CHECK_INT(smc_genl_dump(&p.g, 1, count_cb, &n), 0);
	CHECK_INT(n, 1);
	peer_close(&p);
}

TEST(nl_error_carries_errno_and_ext_ack)
{
	struct peer p;

	peer_init(&p);
	peer_error(&p, 1, -EPERM, "caller lacks CAP_NET_ADMIN");
	CHECK_INT(smc_genl_do(&p.g, 10), -EPERM);
	CHECK_INT(p.g.err.error, EPERM);
	CHECK_STR(p.g.err.msg, "caller lacks CAP_NET_ADMIN");
	peer_error(&p, 1, 0, NULL);
	CHECK_INT(smc_genl_do(&p.g, 12), 0);
	peer_error(&p, 1, INT32_MIN, NULL);     /* no errno: a broken answer */
	CHECK_INT(smc_genl_do(&p.g, 12), -EBADMSG);
	peer_error(&p, 1, 5, NULL);
	CHECK_INT(smc_genl_do(&p.g, 12), -EBADMSG);
	peer_close(&p);
}

TEST(nl_doit_with_multipart_answer_then_ack)
{
	struct peer p;
	int n = 0;

	peer_init(&p);
	queue_data(&p, 1, 1);
	peer_done(&p, 1);
	peer_error(&p, 1, 0, NULL);
	CHECK_INT(smc_genl_request(&p.g, smc_genl_msg(&p.g, 1, 0), count_cb, &n), 0);
	CHECK_INT(n, 1);
	peer_close(&p);
}

TEST(nl_interrupted_dump_is_asked_again)
{
	struct peer p;
	struct mb m;
	int n = 0;

	peer_init(&p);
	data_msg(&m, 1);
	((struct nlmsghdr *)m.buf)->nlmsg_flags |= NLM_F_DUMP_INTR;
	peer_queue(&p, 1, &m);
	queue_data(&p, 2, 1);
	queue_data(&p, 2, 2);
	peer_done(&p, 2);
	CHECK_INT(smc_genl_dump(&p.g, 1, count_cb, &n), 0);
	CHECK_INT(n, 2);
	peer_close(&p);
}

TEST(nl_peer_hangup_is_an_error)
{
	struct peer p;
	int n = 0;

	peer_init(&p);
	close(p.fd);
	p.fd = -1;
	CHECK(smc_genl_dump(&p.g, 1, count_cb, &n) < 0);
	smc_genl_close(&p.g);
}

TEST(nl_malformed_datagram_is_rejected)
{
	struct peer p;
	struct mb m;
	int n = 0;

	peer_init(&p);
	data_msg(&m, 1);
	((struct nlmsghdr *)m.buf)->nlmsg_len = (uint32_t)m.len + 64;   /* claims more than sent */
	((struct nlmsghdr *)m.buf)->nlmsg_seq = p.g.nl.seq + 1;
	send(p.fd, m.buf, m.len, 0);
	CHECK_INT(smc_genl_dump(&p.g, 1, count_cb, &n), -EBADMSG);
	CHECK_INT(n, 0);
	peer_close(&p);
}

TEST(nl_silent_peer_times_out)
{
	struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };
	struct peer p;
	int n = 0;

	peer_init(&p);
	setsockopt(p.g.nl.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	CHECK_INT(smc_genl_dump(&p.g, 1, count_cb, &n), -ETIMEDOUT);
	peer_close(&p);
}

static void ctrl_reply(struct mb *m, uint16_t id)
{
	mb_start(m, GENL_ID_CTRL, 0);
	mb_genl(m, CTRL_CMD_NEWFAMILY);
	mb_str(m, CTRL_ATTR_FAMILY_NAME, "SMC_GEN_NETLINK");
	mb_u16(m, CTRL_ATTR_FAMILY_ID, id);
}

TEST(nl_family_resolution)
{
	struct peer p;
	struct mb m;
	uint16_t id = 0;

	peer_init(&p);
	ctrl_reply(&m, 0x1234);
	peer_queue(&p, 1, &m);
	peer_error(&p, 1, 0, NULL);
	CHECK_INT(smc_genl_resolve(&p.g, "SMC_GEN_NETLINK", &id), 0);
	CHECK_INT(id, 0x1234);
	/* the request names the family in CTRL_ATTR_FAMILY_NAME */
	peer_request(&p, &m);
	CHECK(m.len > NLMSG_HDRLEN + GENL_HDRLEN + 4);
	CHECK_STR((char *)m.buf + NLMSG_HDRLEN + GENL_HDRLEN + 4, "SMC_GEN_NETLINK");
	peer_error(&p, 1, -ENOENT, NULL);
	CHECK_INT(smc_genl_resolve(&p.g, "SMC_PNETID", &id), -ENOENT);
	peer_close(&p);
}

static void with_env(const char *backend, const char *sock)
{
	if (backend)
		setenv("SMC_BACKEND", backend, 1);
	else
		unsetenv("SMC_BACKEND");
	setenv("SMC_SOFT_SOCKET", sock, 1);
}

TEST(nl_backend_selection_errors)
{
	struct smc_nl nl;
	char line[512];
	int rc;

	with_env("bogus", "/nonexistent/smc.sock");
	rc = smc_nl_open(&nl, NETLINK_GENERIC);
	CHECK_INT(rc, -SMC_OPEN_BAD_ENV);
	smc_nl_open_strerror(&nl, rc, line, sizeof(line));
	CHECK_STR(line, "SMC_BACKEND: invalid value 'bogus' (use auto, kernel or soft)");

	with_env("soft", "/nonexistent/smc.sock");
	rc = smc_nl_open(&nl, NETLINK_GENERIC);
	CHECK_INT(rc, -SMC_OPEN_NO_SOFT);
	smc_nl_open_strerror(&nl, rc, line, sizeof(line));
	CHECK_STR(line, "SMC_BACKEND=soft: no soft backend answers on /nonexistent/smc.sock: "
		  "No such file or directory (start 'smc_softd')");

	with_env(NULL, "/nonexistent/smc.sock");
	rc = smc_nl_open(&nl, NETLINK_GENERIC);
	if (rc == -SMC_OPEN_NO_BACKEND) {       /* a kernel without SMC, as in CI */
		struct utsname u;
		char dir[sizeof(u.release) + 16], why[256], want[512];

		CHECK_INT(uname(&u), 0);
		snprintf(dir, sizeof(dir), "/lib/modules/%s", u.release);
		smc_kernel_no_smc_text(dir, u.release, why, sizeof(why));
		snprintf(want, sizeof(want), "no SMC backend: %s and no soft backend answers on "
			 "/nonexistent/smc.sock (start 'smc_softd')", why);
		smc_nl_open_strerror(&nl, rc, line, sizeof(line));
		CHECK_STR(line, want);
	} else {
		CHECK_INT(rc, 0);
		CHECK_INT(nl.backend, SMC_BACKEND_KERNEL);
		smc_nl_close(&nl);
	}
	unsetenv("SMC_BACKEND");
	unsetenv("SMC_SOFT_SOCKET");
}

/* put_file DIR NAME TEXT: write TEXT to DIR/NAME. */
static void put_file(const char *dir, const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

TEST(nl_kernel_module_tree_tells_why_there_is_no_smc)
{
	char dir[] = "/tmp/smc-unit-XXXXXX", path[256], why[256];

	CHECK(mkdtemp(dir) != NULL);
	CHECK_INT(smc_kernel_module_state(dir), SMC_KMOD_UNKNOWN);
	smc_kernel_no_smc_text(dir, "6.18.44", why, sizeof(why));
	CHECK_STR(why, "the kernel has no SMC support (load it with 'modprobe smc')");

	/* Debian's 7.3: rxe and its kin, smc_diag's name alike, but no smc.ko */
	put_file(dir, "modules.dep", "kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko.xz: "
		 "kernel/drivers/infiniband/core/ib_core.ko.xz\n"
		 "kernel/net/smc/smc_diag.ko.xz:\nkernel/net/smc/smc.kobj.ko:\n");
	put_file(dir, "modules.builtin", "kernel/lib/crc32.ko\n");
	CHECK_INT(smc_kernel_module_state(dir), SMC_KMOD_ABSENT);
	smc_kernel_no_smc_text(dir, "7.3.4+deb13-amd64", why, sizeof(why));
	CHECK_STR(why, "this kernel has no SMC (7.3.4+deb13-amd64 has no smc module; "
		  "the soft backend, smc_softd, needs none)");

	put_file(dir, "modules.builtin", "kernel/net/smc/smc.ko\n");
	CHECK_INT(smc_kernel_module_state(dir), SMC_KMOD_PRESENT);
	put_file(dir, "modules.builtin", "");
	put_file(dir, "modules.dep", "kernel/net/smc/smc.ko.zst: kernel/drivers/infiniband/core/ib_core.ko.zst\n");
	CHECK_INT(smc_kernel_module_state(dir), SMC_KMOD_PRESENT);
	smc_kernel_no_smc_text(dir, "6.12.95+deb12-amd64", why, sizeof(why));
	if (access("/sys/module/smc", F_OK) == 0)       /* a guest of tests/vm with SMC loaded */
		CHECK_STR(why, "AF_SMC sockets are refused although the smc module is loaded "
			  "(a seccomp or security policy?)");
	else
		CHECK_STR(why, "the kernel's smc module is not loaded ('modprobe smc' says why)");

	/* uncompressed, without dependencies */
	put_file(dir, "modules.dep", "kernel/net/smc/smc.ko:\n");
	CHECK_INT(smc_kernel_module_state(dir), SMC_KMOD_PRESENT);

	snprintf(path, sizeof(path), "%s/modules.dep", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/modules.builtin", dir);
	unlink(path);
	rmdir(dir);
}

TEST(nl_soft_backend_of_own_user_is_trusted)
{
	char dir[] = "/tmp/smc-unit-XXXXXX", path[128];
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct smc_nl nl;
	int lfd;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/control", dir);
	strcpy(sun.sun_path, path);
	lfd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	CHECK_INT(bind(lfd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	CHECK_INT(listen(lfd, 4), 0);
	with_env("soft", path);
	CHECK_INT(smc_nl_open(&nl, NETLINK_SOCK_DIAG), 0);
	CHECK_INT(nl.backend, SMC_BACKEND_SOFT);
	smc_nl_close(&nl);
	close(lfd);
	unlink(path);
	rmdir(dir);
	unsetenv("SMC_BACKEND");
	unsetenv("SMC_SOFT_SOCKET");
}

static bool socket_has_smc(void)
{
	int fd = socket(43, SOCK_STREAM, 0);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* The kernel path of the transport, against this machine's real netlink. */
TEST(nl_kernel_generic_netlink_resolves_and_reports_unknown_families)
{
	struct smc_genl g;
	uint16_t id = 0;

	memset(&g, 0, sizeof(g));
	CHECK_INT(smc_nl_open_backend(&g.nl, NETLINK_GENERIC, SMC_BACKEND_KERNEL), 0);
	CHECK_INT(smc_genl_resolve(&g, "nlctrl", &id), 0);
	CHECK_INT(id, GENL_ID_CTRL);
	CHECK_INT(smc_genl_resolve(&g, "NO_SUCH_FAMILY", &id), -ENOENT);
	if (!socket_has_smc())
		CHECK_INT(smc_genl_resolve(&g, "SMC_GEN_NETLINK", &id), -ENOENT);
	CHECK_INT(g.err.error, ENOENT);
	smc_genl_close(&g);
}

static int no_sock_cb(const struct smc_diag_sock *s, void *arg)
{
	(void)s;
	(*(int *)arg)++;
	return 0;
}

TEST(nl_kernel_sock_diag_answers_for_af_smc)
{
	struct smc_nlerr err;
	struct smc_nl nl;
	int n = 0, rc;

	CHECK_INT(smc_nl_open_backend(&nl, NETLINK_SOCK_DIAG, SMC_BACKEND_KERNEL), 0);
	rc = smc_diag_dump(&nl, SMC_DIAG_EXT(SMC_DIAG_CONNINFO), no_sock_cb, &n, &err);
	/* without smc_diag the kernel refuses the family; with it, a (maybe empty) dump */
	CHECK(rc == 0 || rc == -ENOENT);
	if (rc)
		CHECK_INT(err.error, ENOENT);
	(void)n;
	smc_nl_close(&nl);
}
