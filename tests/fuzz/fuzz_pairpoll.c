/*
 * Fuzz target for the client's reply parser (soft_reg_pair_poll: PAIR,
 * SOCK_INFO and BELL replies): one datagram as a daemon could send it on
 * the control socket.  Byte 0: bit 0 a descriptor rides on it.  Whatever comes, no descriptor may stay open
 * but the one handed out, which is closed here.
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wire/reg_client.h"

void fuzz_pairpoll(const uint8_t *data, size_t size);

static void send_fd(int sock, const uint8_t *data, size_t size, int fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl = { 0 };
	struct iovec iov = { .iov_base = (void *)data, .iov_len = size };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (fd >= 0) {
		struct cmsghdr *cm;

		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		*(int *)(void *)CMSG_DATA(cm) = fd;
	}
	sendmsg(sock, &mh, MSG_DONTWAIT);
}

void fuzz_pairpoll(const uint8_t *data, size_t size)
{
	struct soft_reg_conn c = { .family = 0x1c, .seq = 1 };
	struct soft_pair_reply r;
	int sv[2], fd = -1;

	if (size < 1 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return;
	if (data[0] & 1)
		fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	/* an empty datagram reads as the daemon's end */
	if (size > 1)
		send_fd(sv[1], data + 1, size - 1, fd);
	if (fd >= 0)
		close(fd);
	c.fd = sv[0];
	for (int i = 0; i < 4 && soft_reg_pair_poll(&c, &r) == 1; i++) {
		if (r.shm_fd >= 0)
			close(r.shm_fd);
		if (r.bell_fd >= 0)
			close(r.bell_fd);
	}
	close(sv[0]);
	close(sv[1]);
}
