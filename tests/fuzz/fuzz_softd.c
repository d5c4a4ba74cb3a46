/*
 * Fuzz target for smc_softd's request core: one request datagram as a
 * client could send it, handled on a fresh state (so that a crash replays
 * from its input alone), the replies discarded.
 *
 * Byte 0 picks who asks: bit 0 CAP_NET_ADMIN, bit 1 a namespace other than
 * the initial one, bit 2 a TCP socket passed along (SCM_RIGHTS): listening,
 * or with bit 3 the client end of a connection (for PAIR); bit 4: a second
 * control connection then sends the same datagram with the other end, so
 * that PAIR meets its peer.  The rest is the datagram.
 */
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "soft/fabric/devices.h"
#include "soft/nl/soft_nl.h"
#include "soft/base/state.h"
#include "soft/runtime/teardown.h"
#include "soft/families/families.h"
#include "soft/service/service.h"

void fuzz_softd(const uint8_t *data, size_t size);

/* A listening TCP socket on the loopback, the kind the preload registers. */
static int tcp_socket(void)
{
	static int fd = -2;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

	if (fd == -2) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(fd, 1) < 0)) {
			close(fd);
			fd = -1;
		}
	}
	return fd >= 0 ? dup(fd) : -1;
}

/* A loopback connection, made once: [0] the client end, [1] the accepted one. */
static int conn_end(int which)
{
	static int ends[2] = { -2, -2 };
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);
	int lst;

	if (ends[0] == -2) {
		ends[0] = ends[1] = -1;
		lst = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (lst >= 0 && bind(lst, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
		    listen(lst, 1) == 0 && getsockname(lst, (struct sockaddr *)&sin, &len) == 0) {
			ends[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (connect(ends[0], (struct sockaddr *)&sin, sizeof(sin)) == 0)
				ends[1] = accept4(lst, NULL, NULL, SOCK_CLOEXEC);
		}
		if (lst >= 0)
			close(lst);
	}
	return ends[which] >= 0 ? dup(ends[which]) : -1;
}

static int passed_fd(uint8_t who, int end)
{
	if (!(who & 4))
		return -1;
	return (who & 8) ? conn_end(end) : tcp_socket();
}

void fuzz_softd(const uint8_t *data, size_t size)
{
	char *const roce[] = { "sr_fuzz=lo" };
	struct soft_state st;
	struct soft_peer peer;
	struct soft_out out;
	unsigned char *req;
	char err[256];
	uint8_t who;

	if (size < 1)
		return;
	who = data[0];
	data++;
	size--;
	req = malloc(size ? size : 1);           /* aligned, and exactly as long as the input */
	if (!req)
		return;
	memcpy(req, data, size);
	soft_state_init(&st);
	soft_devs_init(&st, roce, 1, err, sizeof(err));
	memset(&peer, 0, sizeof(peer));
	peer.pid = getpid();
	peer.uid = getuid();
	peer.gid = getgid();
	peer.netns = (who & 2) ? st.init_netns + 1 : st.init_netns;
	peer.net_admin = (who & 1) != 0;
	peer.conn_id = 1;
	soft_out_init(&out);
	soft_handle(&st, &peer, req, size, passed_fd(who, 0), &out);
	soft_out_free(&out);
	if (who & 16) {
		struct soft_peer second = peer;

		second.conn_id = 2;
		soft_out_init(&out);
		soft_handle(&st, &second, req, size, passed_fd(who, 1), &out);
		soft_out_free(&out);
		soft_conn_gone(&st, second.conn_id);
	}
	soft_conn_gone(&st, peer.conn_id);
	soft_state_free(&st);
	free(req);
}
