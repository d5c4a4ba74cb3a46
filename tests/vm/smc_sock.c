/* smc_sock: hold AF_SMC sockets in known states for smcss in the guest.
 *
 *   smc_sock PORT     a LISTEN socket on PORT, an INIT socket (never
 *                     connected) and a connection to 127.0.0.1:PORT that falls
 *                     back to TCP (both ends ACTIVE). Prints READY, then waits
 *                     until killed.
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

static int smc_socket(void)
{
	int fd = socket(AF_SMC, SOCK_STREAM, SMCPROTO_SMC);

	if (fd < 0) {
		perror("smc_sock: socket(AF_SMC)");
		exit(1);
	}
	return fd;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa;
	int lfd, ifd, cfd, afd, one = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: smc_sock PORT\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(atoi(argv[1]));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

	lfd = smc_socket();
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 8)) {
		perror("smc_sock: bind/listen");
		return 1;
	}
	ifd = smc_socket();
	cfd = smc_socket();
	if (connect(cfd, (struct sockaddr *)&sa, sizeof(sa))) {
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
