/*
 * sockprobe: create sockets through the C library's socket() and report what
 * the kernel made of them.  Run under smc_run or with LD_PRELOAD to check
 * libsmc-preload.so.
 *
 *   sockprobe [-b] SPEC...
 *
 *   SPEC  FAMILY:TYPE[+FLAG...]:PROTOCOL   one socket, e.g. inet6:stream+nonblock:6
 *         FAMILY inet | inet6 | unix | smc,
 *         TYPE stream | dgram | seqpacket | raw,
 *         FLAG nonblock | cloexec,  PROTOCOL a number
 *         exchange | exchange6   TCP listener on 127.0.0.1 (::1), connect,
 *                                send, accept, echo back
 *   -b    also print SO_SNDBUF and SO_RCVBUF of each socket
 *
 * One line per SPEC on stdout:
 *   SPEC domain=D protocol=P nonblock=0|1 cloexec=0|1 [sndbuf=N rcvbuf=N]
 *   SPEC errno=E                   when socket() fails
 *   exchange ok                    or exchange failed: STEP: errno=E
 * Exit status 1 when anything failed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static bool show_bufs;

static int parse_family(const char *s, int *family)
{
	static const struct { const char *name; int family; } tab[] = {
		{ "inet", AF_INET }, { "inet6", AF_INET6 },
		{ "unix", AF_UNIX }, { "smc", 43 },
	};

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (!strcmp(s, tab[i].name)) {
			*family = tab[i].family;
			return 0;
		}
	return -1;
}

static int parse_type(char *s, int *type)
{
	char *save, *word = strtok_r(s, "+", &save);

	if (!word)
		return -1;
	if (!strcmp(word, "stream"))
		*type = SOCK_STREAM;
	else if (!strcmp(word, "dgram"))
		*type = SOCK_DGRAM;
	else if (!strcmp(word, "seqpacket"))
		*type = SOCK_SEQPACKET;
	else if (!strcmp(word, "raw"))
		*type = SOCK_RAW;
	else
		return -1;
	while ((word = strtok_r(NULL, "+", &save))) {
		if (!strcmp(word, "nonblock"))
			*type |= SOCK_NONBLOCK;
		else if (!strcmp(word, "cloexec"))
			*type |= SOCK_CLOEXEC;
		else
			return -1;
	}
	return 0;
}

static int getint(int fd, int opt)
{
	int v = -1;
	socklen_t len = sizeof(v);

	if (getsockopt(fd, SOL_SOCKET, opt, &v, &len) < 0)
		return -errno;
	return v;
}

static void report(const char *spec, int fd)
{
	int fl = fcntl(fd, F_GETFL), fdfl = fcntl(fd, F_GETFD);

	printf("%s domain=%d protocol=%d nonblock=%d cloexec=%d", spec,
	       getint(fd, SO_DOMAIN), getint(fd, SO_PROTOCOL),
	       fl >= 0 && (fl & O_NONBLOCK) ? 1 : 0,
	       fdfl >= 0 && (fdfl & FD_CLOEXEC) ? 1 : 0);
	if (show_bufs)
		printf(" sndbuf=%d rcvbuf=%d", getint(fd, SO_SNDBUF),
		       getint(fd, SO_RCVBUF));
	printf("\n");
}

static int probe(const char *spec)
{
	char buf[128], *fam, *type_s, *proto_s, *end;
	int family, type, protocol, fd;

	snprintf(buf, sizeof(buf), "%s", spec);
	fam = strtok(buf, ":");
	type_s = strtok(NULL, ":");
	proto_s = strtok(NULL, ":");
	if (!fam || !type_s || !proto_s || strtok(NULL, ":"))
		goto bad;
	protocol = (int)strtol(proto_s, &end, 10);
	if (*end || parse_family(fam, &family) < 0 || parse_type(type_s, &type) < 0)
		goto bad;
	fd = socket(family, type, protocol);
	if (fd < 0) {
		printf("%s errno=%d\n", spec, errno);
		return 1;
	}
	report(spec, fd);
	close(fd);
	return 0;
bad:
	fprintf(stderr, "sockprobe: bad socket spec '%s'\n", spec);
	exit(2);
}

static int fail(const char *step)
{
	printf("exchange failed: %s: errno=%d\n", step, errno);
	return 1;
}

/* A TCP round trip over loopback, both ends created by socket(). */
static int exchange(int family)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len = sizeof(ss);
	char msg[] = "smc-probe", back[sizeof(msg)] = "", got[sizeof(msg)] = "";
	int lfd, cfd, afd;

	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = in6addr_loopback;
		len = sizeof(*sin6);
	}
	lfd = socket(family, SOCK_STREAM, 0);
	if (lfd < 0)
		return fail("socket");
	if (bind(lfd, (struct sockaddr *)&ss, len) < 0)
		return fail("bind");
	if (listen(lfd, 1) < 0)
		return fail("listen");
	if (getsockname(lfd, (struct sockaddr *)&ss, &len) < 0)
		return fail("getsockname");
	cfd = socket(family, SOCK_STREAM, IPPROTO_TCP);
	if (cfd < 0)
		return fail("socket");
	if (connect(cfd, (struct sockaddr *)&ss, len) < 0)
		return fail("connect");
	if (send(cfd, msg, sizeof(msg), 0) != (ssize_t)sizeof(msg))
		return fail("send");
	afd = accept(lfd, NULL, NULL);
	if (afd < 0)
		return fail("accept");
	if (recv(afd, got, sizeof(got), MSG_WAITALL) != (ssize_t)sizeof(got))
		return fail("recv");
	if (send(afd, got, sizeof(got), 0) != (ssize_t)sizeof(got))
		return fail("send back");
	if (recv(cfd, back, sizeof(back), MSG_WAITALL) != (ssize_t)sizeof(back))
		return fail("recv back");
	if (memcmp(msg, got, sizeof(msg)) || memcmp(msg, back, sizeof(msg))) {
		printf("exchange failed: data differ\n");
		return 1;
	}
	printf("%s ok\n", family == AF_INET ? "exchange" : "exchange6");
	close(afd);
	close(cfd);
	close(lfd);
	return 0;
}

int main(int argc, char **argv)
{
	int i = 1, rc = 0;

	if (i < argc && !strcmp(argv[i], "-b")) {
		show_bufs = true;
		i++;
	}
	if (i == argc) {
		fprintf(stderr, "usage: sockprobe [-b] FAMILY:TYPE[+FLAG...]:PROTOCOL|exchange|exchange6...\n");
		return 2;
	}
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "exchange"))
			rc |= exchange(AF_INET);
		else if (!strcmp(argv[i], "exchange6"))
			rc |= exchange(AF_INET6);
		else
			rc |= probe(argv[i]);
		fflush(stdout);
	}
	return rc;
}
