/* The daemon's per-connection request path (daemon_client.c) on a socket pair. */
#include "softfx.h"
#include "soft/runtime/daemon_client.h"
#include "soft/fabric/pnettab.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/smc.h>

#include "smc_uapi.h"

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

/* One datagram (with an fd or not) into the daemon's end of sv. */
static void send_dgram(int sock, const void *p, size_t len, int fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = (void *)p, .iov_len = len };
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
}

/*
 * A datagram packed with dumps whose replies pass the queue limit stops
 * there, also when a descriptor rides along: the requests after the limit
 * are not carried out, and the descriptor is not leaked.
 */
static void queue_limit(bool with_fd)
{
	static struct softd_io io;
	struct softd_client *c = calloc(1, sizeof(*c));
	unsigned char dgram[4096];
	size_t len = 0;
	struct soft_ns *ns;
	struct sfx f;
	struct mb m;
	int sv[2], fd = -1, before;

	sfx_init(&f, false);
	ns = soft_ns_get(&f.st, f.admin.netns);
	CHECK(ns != NULL);
	for (int i = 0; i < 1000; i++) {
		char eth[16];

		snprintf(eth, sizeof(eth), "e%d", i);
		CHECK_INT(soft_pnet_add_eth(ns, eth, "NET1"), 0);
	}
	CHECK_INT(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, sv), 0);
	c->fd = sv[0];
	c->peer = f.admin;
	/* 80 dumps of 1000 entries (some 70 bytes each): over SOFTD_QUEUE_MAX */
	for (int i = 0; i < 80; i++) {
		sfx_req(&m, SOFT_ID_PNETID, SMC_PNETID_GET, NLM_F_DUMP, (uint32_t)i + 1);
		((struct nlmsghdr *)m.buf)->nlmsg_len = (uint32_t)m.len;
		memcpy(dgram + len, m.buf, m.len);
		len += NLMSG_ALIGN(m.len);
	}
	sfx_req(&m, SOFT_ID_GEN, SMC_NETLINK_ENABLE_HS_LIMITATION, 0, 100);
	((struct nlmsghdr *)m.buf)->nlmsg_len = (uint32_t)m.len;
	memcpy(dgram + len, m.buf, m.len);
	len += NLMSG_ALIGN(m.len);
	if (with_fd)
		fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	send_dgram(sv[1], dgram, len, fd);
	if (fd >= 0)
		close(fd);
	before = open_fds();
	CHECK_INT(softd_client_read(c, false, &f.st, &io), SOFTD_IO_DROP);
	CHECK_INT(open_fds(), before);
	CHECK(!ns->hs_limit);
	soft_out_free(&io.out);
	softd_client_free(c);
	close(sv[1]);
	sfx_free(&f);
}

TEST(soft_daemon_queue_limit)
{
	queue_limit(false);
}

TEST(soft_daemon_queue_limit_with_fd)
{
	queue_limit(true);
}
