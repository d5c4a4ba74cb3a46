/* smc_sock: hold AF_SMC sockets in known states for smcss in the guest.
 *
 *   smc_sock PORT     a LISTEN socket on PORT, an INIT socket (never
 *                     connected) and a connection to 127.0.0.1:PORT that falls
 *                     back to TCP (both ends ACTIVE). Prints READY, then waits
 *                     until killed.
 *   smc_sock PORT 6   the same over IPv6 (SMCPROTO_SMC6, ::1).
 * Built statically (cc -static) so it needs nothing in the initramfs. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef AF_SMC
#define AF_SMC 43
#endif
#define SMCPROTO_SMC 0
#define SMCPROTO_SMC6 1

static int proto = SMCPROTO_SMC;

static int smc_socket(void)
{
	int fd = socket(AF_SMC, SOCK_STREAM, proto);

	if (fd < 0) {
		perror("smc_sock: socket(AF_SMC)");
		exit(1);
	}
	return fd;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sa = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sa6 = (struct sockaddr_in6 *)&ss;
	socklen_t len = sizeof(*sa);
	int lfd, ifd, cfd, afd, one = 1;

	if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "6"))) {
		fprintf(stderr, "usage: smc_sock PORT [6]\n");
		return 2;
	}
	memset(&ss, 0, sizeof(ss));
	if (argc == 3) {
		proto = SMCPROTO_SMC6;
		sa6->sin6_family = AF_INET6;
		sa6->sin6_port = htons(atoi(argv[1]));
		sa6->sin6_addr = in6addr_loopback;
		len = sizeof(*sa6);
	} else {
		sa->sin_family = AF_INET;
		sa->sin_port = htons(atoi(argv[1]));
		sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	}

	lfd = smc_socket();
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&ss, len) || listen(lfd, 8)) {
		perror("smc_sock: bind/listen");
		return 1;
	}
	ifd = smc_socket();
	cfd = smc_socket();
	if (connect(cfd, (struct sockaddr *)&ss, len)) {
		perror("smc_sock: connect");
		return 1;
	}
	afd = accept(lfd, NULL, NULL);
	if (afd < 0) {
		perror("smc_sock: accept");
		return 1;
	}
	if (write(cfd, "x", 1) != 1 || read(afd, &one, 1) != 1) {
		perror("smc_sock: data");
		return 1;
	}
	printf("READY\n");
	fflush(stdout);
	for (;;)
		pause();
	(void)ifd;
	return 0;
}
