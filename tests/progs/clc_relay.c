/*
 * clc_relay: one end of a TCP connection between two hosts negotiating as
 * a library with soft SMC-R would (doc/soft-roce.md section 2.2), through
 * its daemon's SMC_SOFT_CMD_CLC, with text in place of CLC messages; for
 * tests/cli/soft_hosts.bats.
 *
 *   clc_relay server PORT [MSG...]       accept one connection on PORT
 *   clc_relay client ADDR PORT [MSG...]  connect to ADDR:PORT
 *
 * Registers its end with PAIR as able to carry SMC-R (SMC_SOFT_A_TRANSPORTS)
 * and prints what it learns, one line each: "pair ASKING", "negotiate DEV
 * PORT role R", "got N: TEXT" for the peer's messages ("got N: CLC type T"
 * for a real CLC message, a library's DECLINE), "seen N" once the
 * peer's daemon keeps N of ours, "declined 0xREASON 0xDIAG".  The client
 * sends its first message at once, each next one after one more of the
 * peer's; the server each of its messages after one more of the client's.
 * Ends with "done" once its messages are kept and it has the peer's (the
 * client one fewer than its own, the server one more: PROPOSAL, ACCEPT,
 * CONFIRM), or after 10 s with "timeout".  An argument @FILE is no message:
 * the next one waits until FILE exists.  The arguments =proposal, =accept
 * and =confirm are real SMC-R CLC messages (version 1) with the values of
 * test_clc() below, for smcdump-ex's records of them; =decline is a
 * DECLINE with 0x02010000 (TIMEOUT_CL), given with that code as the one
 * its end falls back with.  An argument +TEXT
 * is no message either: once done, the end says PAIRED in link group
 * 100 + its role, gives TEXT as that group's rebuild message
 * (SMC_SOFT_CMD_REBUILD: "rebuild given", or "rebuild error E") and asks
 * for the peer's for up to 5 s: "rebuild got TEXT for group K", or
 * "rebuild: none came"; +!TEXT gives it for group 999 instead, which
 * has no end.  An argument ^exit:FILE: once done, the end says PAIRED in
 * group 100 + its role, prints "paired", and once FILE exists exits at
 * once, as a killed process (no close of its own); ^gone: once done,
 * PAIRED likewise ("paired"), then it asks (REBUILD) for up to 30 s
 * whether the peer's end is gone: "peer gone for group K", or "peer
 * gone: not told".  With CLC_RELAY_BUFS=RMB,SNDBUF in the environment, the end
 * reports its group first (one link, rxe0 port 1, one connection) and
 * PAIRED says those buffer sizes (bytes), as a library whose buffers were
 * downgraded does.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clc.h"
#include "reg_client.h"

#define DECLINE_CODE 0x02010000u /* =decline's: SMC_CLC_DECL_TIMEOUT_CL */

/*
 * A real SMC-R CLC message for the arguments =proposal, =accept, =confirm:
 * the sender's system id 0x0102030405060708 (+ role), GID ::ffff:10.9.0.1
 * (+ role), MAC 02:00:00:00:00:01 (+ role), and in ACCEPT/CONFIRM queue
 * pair 0x123 (+ role), rkey 0x1234abcd, RMB 0x7f0000001000, 64 KiB, MTU
 * 1024, PSN 0x777, first contact.  Else the text itself: its length, 0.
 */
static size_t test_clc(const char *arg, int role, uint8_t *buf, size_t size)
{
	uint8_t id[CLC_SYSTEMID_LEN] = { 1, 2, 3, 4, 5, 6, 7, (uint8_t)(8 + role) };
	uint8_t gid[CLC_GID_LEN] = { [10] = 0xff, [11] = 0xff, 10, 9, 0, (uint8_t)(1 + role) };
	uint8_t mac[CLC_MAC_LEN] = { 2, 0, 0, 0, 0, (uint8_t)(1 + role) };
	int n = -1;

	if (!strcmp(arg, "=proposal")) {
		struct clc_proposal p = { .version = CLC_V1, .typev1 = CLC_SMC_R, .typev2 = CLC_SMC_N };

		memcpy(p.system_id, id, sizeof(id));
		memcpy(p.gid, gid, sizeof(gid));
		memcpy(p.mac, mac, sizeof(mac));
		p.ipv4_subnet[0] = 10;
		p.ipv4_prefix_len = 8;
		n = clc_proposal_encode(&p, buf, size);
	} else if (!strcmp(arg, "=accept") || !strcmp(arg, "=confirm")) {
		struct clc_smcr_accept a = {
			.type = arg[1] == 'a' ? CLC_ACCEPT : CLC_CONFIRM, .version = CLC_V1,
			.first_contact = true, .qpn = 0x123u + (uint32_t)role, .rmb_rkey = 0x1234abcd,
			.rmbe_idx = 1, .rmbe_size = 2, .qp_mtu = 3, .rmb_addr = 0x7f0000001000ull,
			.psn = 0x777,
		};

		memcpy(a.system_id, id, sizeof(id));
		memcpy(a.gid, gid, sizeof(gid));
		memcpy(a.mac, mac, sizeof(mac));
		n = clc_smcr_accept_encode(&a, buf, size);
	} else if (!strcmp(arg, "=decline")) {
		struct clc_decline d = { .version = CLC_V1, .peer_diagnosis = DECLINE_CODE };

		memcpy(d.system_id, id, sizeof(id));
		n = clc_decline_encode(&d, buf, size);
	}
	return n > 0 ? (size_t)n : 0;
}

static const char *status_name(uint8_t s)
{
	switch (s) {
	case SMC_SOFT_PAIR_ASKING:    return "ASKING";
	case SMC_SOFT_PAIR_NEGOTIATE: return "NEGOTIATE";
	case SMC_SOFT_PAIR_DECLINED:  return "DECLINED";
	case SMC_SOFT_PAIR_PENDING:   return "PENDING";
	case SMC_SOFT_PAIR_PAIRED:    return "PAIRED";
	}
	return "?";
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The reply to request seq, waiting up to 2 s; 0 or -errno. */
static int reply_of(struct soft_reg_conn *c, long seq, struct soft_pair_reply *r)
{
	double until = now_s() + 2;

	while (now_s() < until) {
		int rc = soft_reg_pair_poll(c, r);

		if (rc < 0)
			return rc;
		if (rc && r->seq == (uint32_t)seq)
			return 0;
		usleep(2000);
	}
	return -ETIMEDOUT;
}

/* Our end over RDMA in group 100 + role (PAIRED): true, else false and said. */
static bool paired(struct soft_reg_conn *c, uint64_t token, int role)
{
	uint32_t key = 100u + (uint32_t)role;
	struct soft_pair_reply r;
	long seq;
	const char *bufs = getenv("CLC_RELAY_BUFS");
	unsigned rmb = 0, snd = 0;

	if (bufs && sscanf(bufs, "%u,%u", &rmb, &snd) != 2)
		rmb = snd = 0;
	if (rmb) {
		struct smc_soft_link l = { .link_id = 1, .ibport = 1, .conns = 1, .ibdev = "rxe0" };

		soft_reg_lgr_send(c, key, (uint8_t)role, "peer", 1, &l, 1);
	}
	seq = soft_reg_clc_connected_send(c, token, key, 1, rmb, snd);
	if (seq < 0 || reply_of(c, seq, &r) || r.error || r.status != SMC_SOFT_PAIR_PAIRED) {
		printf("rebuild: not PAIRED\n");
		return false;
	}
	return true;
}

/* ^gone: whether the peer's daemon says the peer's end is gone. */
static void wait_gone(struct soft_reg_conn *c)
{
	struct soft_pair_reply r;
	double until;
	long seq;

	/* the peer's exit, its daemon and ours: long enough for a starved host */
	for (until = now_s() + 30; now_s() < until; usleep(20000)) {
		seq = soft_reg_rebuild_send(c, 0, NULL, 0);
		if (seq < 0 || reply_of(c, seq, &r) || r.error) {
			printf("peer gone: take failed\n");
			return;
		}
		if (r.peer_gone) {
			printf("peer gone for group %u\n", r.lgr_key);
			return;
		}
	}
	printf("peer gone: not told\n");
}

/* +TEXT: our end over RDMA in group 100 + role, TEXT to the peer, the peer's taken. */
static void rebuild_both_ways(struct soft_reg_conn *c, uint64_t token, int role, const char *text)
{
	uint32_t key = 100u + (uint32_t)role;
	struct soft_pair_reply r;
	double until;
	long seq;

	if (!paired(c, token, role))
		return;
	seq = text[0] == '!' ? soft_reg_rebuild_send(c, 999, text + 1, strlen(text + 1))
			     : soft_reg_rebuild_send(c, key, text, strlen(text));
	if (seq < 0 || reply_of(c, seq, &r)) {
		printf("rebuild: no reply\n");
		return;
	}
	if (r.error)
		printf("rebuild error %d\n", r.error);
	else
		printf("rebuild given\n");
	for (until = now_s() + 5; now_s() < until; usleep(20000)) {
		seq = soft_reg_rebuild_send(c, 0, NULL, 0);
		if (seq < 0 || reply_of(c, seq, &r) || r.error) {
			printf("rebuild: take failed\n");
			return;
		}
		if (r.rebuild_len) {
			printf("rebuild got %.*s for group %u\n", (int)r.rebuild_len, (const char *)r.rebuild,
			       r.lgr_key);
			return;
		}
	}
	printf("rebuild: none came\n");
}

static int connected_socket(int argc, char **argv, int *role, int *first_msg)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		return -1;
	if (!strcmp(argv[1], "server") && argc >= 3) {
		int l = fd;

		*role = 1;
		*first_msg = 3;
		a.sin_port = htons((uint16_t)atoi(argv[2]));
		setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1))
			return -1;
		printf("listening\n");
		fflush(stdout);
		fd = accept(l, NULL, NULL);
		close(l);
		return fd;
	}
	if (!strcmp(argv[1], "client") && argc >= 4) {
		*role = 0;
		*first_msg = 4;
		a.sin_port = htons((uint16_t)atoi(argv[3]));
		if (inet_pton(AF_INET, argv[2], &a.sin_addr) != 1 ||
		    connect(fd, (struct sockaddr *)&a, sizeof(a)))
			return -1;
		return fd;
	}
	fprintf(stderr, "usage: clc_relay server PORT [MSG...] | client ADDR PORT [MSG...]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct soft_pair_req q = { .transports = 1u << SMC_SOFT_TRANSPORT_RDMA };
	struct soft_reg_conn c;
	struct soft_pair_reply r;
	int role = 0, first = 0, fd, nmsg = 0, sent = 0, taken = 0, seen = 0;
	const char *msgs[8], *wait_for[8] = { NULL }, *rebuild = NULL, *gone = NULL;
	uint64_t token;
	bool negotiating = false;
	double until;
	long seq;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: clc_relay server PORT [MSG...] | client ADDR PORT [MSG...]\n");
		return 2;
	}
	fd = connected_socket(argc, argv, &role, &first);
	if (fd < 0) {
		perror("clc_relay: connection");
		return 1;
	}
	for (int i = first; i < argc && nmsg < 8; i++) {
		if (argv[i][0] == '@')
			wait_for[nmsg] = argv[i] + 1;
		else if (argv[i][0] == '+')
			rebuild = argv[i] + 1;
		else if (argv[i][0] == '^')
			gone = argv[i] + 1;
		else
			msgs[nmsg++] = argv[i];
	}
	if (soft_reg_open(&c, NULL, 0)) {
		fprintf(stderr, "clc_relay: no daemon\n");
		return 1;
	}
	q.role = (uint8_t)role;
	seq = soft_reg_pair_send(&c, fd, &q);
	if (seq < 0 || reply_of(&c, seq, &r) || r.error) {
		fprintf(stderr, "clc_relay: PAIR failed\n");
		return 1;
	}
	printf("pair %s\n", status_name(r.status));
	if (r.status == SMC_SOFT_PAIR_DECLINED) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		printf("declined 0x%08x 0x%08x\n", r.reason, r.peer_diagnosis);
		/* on TCP, as a program goes on: the end stays until the peer closes (its daemon may ask) */
		poll(&p, 1, 10000);
		return 0;
	}
	if (r.status != SMC_SOFT_PAIR_ASKING)
		return 0;
	token = r.token;
	for (until = now_s() + 10; now_s() < until; usleep(5000)) {
		const char *msg = NULL;
		uint8_t clc[SMC_SOFT_CLC_MAX];
		size_t len = 0;

		/* our turn: the client before each of the server's, the server after each of the client's */
		if (negotiating && sent < nmsg && seen == sent && taken >= sent + role &&
		    (!wait_for[sent] || !access(wait_for[sent], F_OK)))
			msg = msgs[sent];
		if (msg && !(len = test_clc(msg, role, clc, sizeof(clc))))
			len = strlen(msg);
		seq = soft_reg_clc_send(&c, token, msg && msg[0] == '=' ? (const void *)clc : msg,
					msg ? len : 0, (uint8_t)taken,
					msg && !strcmp(msg, "=decline") ? DECLINE_CODE : 0);
		if (seq < 0 || reply_of(&c, seq, &r)) {
			fprintf(stderr, "clc_relay: CLC failed\n");
			return 1;
		}
		if (r.error == -EBUSY)
			continue;
		if (r.error) {
			printf("error %d\n", r.error);
			return 1;
		}
		if (msg)
			sent++;
		if (r.status == SMC_SOFT_PAIR_DECLINED) {
			printf("declined 0x%08x 0x%08x\n", r.reason, r.peer_diagnosis);
			return 0;
		}
		if (r.status == SMC_SOFT_PAIR_NEGOTIATE && !negotiating) {
			negotiating = true;
			char gid[INET6_ADDRSTRLEN] = "";

			printf("negotiate %s %u role %u", r.ibdev, r.ibport, r.role);
			if (r.ibport2 && inet_ntop(AF_INET6, r.gid2, gid, sizeof(gid)))
				printf(" second %s %u %s", r.ibdev2, r.ibport2, gid);
			printf("\n");
		}
		if (r.clc_len && r.clc_index == taken + 1) {
			static const uint8_t eyecatcher[4] = { 0xe2, 0xd4, 0xc3, 0xd9 };

			taken++;
			/* a real CLC message (a library's DECLINE): its type */
			if (r.clc_len > 4 && !memcmp(r.clc, eyecatcher, 4))
				printf("got %d: CLC type %u\n", taken, r.clc[4]);
			else
				printf("got %d: %.*s\n", taken, (int)r.clc_len, (const char *)r.clc);
		}
		if (r.clc_seen > seen) {
			seen = r.clc_seen;
			printf("seen %d\n", seen);
		}
		if (negotiating && sent == nmsg && seen == nmsg && taken >= nmsg + (role ? 1 : -1))
			break;
	}
	printf(now_s() < until ? "done\n" : "timeout\n");
	if (rebuild && now_s() < until)
		rebuild_both_ways(&c, token, role, rebuild);
	if (gone && now_s() < until && paired(&c, token, role)) {
		printf("paired\n");
		if (!strncmp(gone, "exit:", 5)) {
			while (access(gone + 5, F_OK))
				usleep(20000);
			_exit(0);
		}
		wait_gone(&c);
	}
	/* the peer may still ask for our last message: hold the connection a little */
	sleep(1);
	soft_reg_close(&c);
	close(fd);
	return 0;
}
