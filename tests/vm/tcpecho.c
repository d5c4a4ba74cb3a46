/* tcpecho: a plain TCP echo server and client, unaware of SMC; run under
 * smc_run so that the preload library moves it onto AF_SMC.
 *
 *   tcpecho server PORT           accept one connection, echo until EOF
 *   tcpecho client IP PORT HOLD [BYTES [PAUSE]]
 *                                 send BYTES (256 KiB) of a pattern, check
 *                                 the echo, print "ECHO OK <n>", keep the
 *                                 connection HOLD seconds, close; with
 *                                 PAUSE, the first 4 KiB echoed, then PAUSE
 *                                 seconds asleep before the rest.
 *   tcpecho server-many PORT N    accept N connections, echo each until
 *                                 its EOF: "ACCEPTED N", "SERVER EOF N"
 *   tcpecho client-many IP PORT N HOLD
 *                                 N connections at once, 4 KiB echoed on
 *                                 each, HOLD seconds, 4 KiB more on each
 *                                 (over SMC now, where negotiated), then
 *                                 "MANY OK N" and all closed.
 * Built dynamically: LD_PRELOAD only works for dynamic programs. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BYTES (256 * 1024)
#define WINDOW 65536    /* sent and not echoed yet, at most */

static unsigned char pat(size_t i) { return (unsigned char)(i * 7 + i / 251); }

/*
 * All of n bytes: a blocking socket may take fewer at once (the kernel's
 * SMC returns what fit in its send buffer, where TCP waits for room).
 */
static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);

		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

#define MANY_MAX 64

/* Each connection of server-many echoed until its EOF, all in one poll loop. */
static int serve_many(int lfd, int n)
{
	struct pollfd p[MANY_MAX];
	static unsigned char buf[65536];
	int open = n;

	for (int i = 0; i < n; i++) {
		p[i].fd = accept(lfd, NULL, NULL);
		p[i].events = POLLIN;
		if (p[i].fd < 0) {
			perror("tcpecho: accept");
			return 1;
		}
	}
	printf("ACCEPTED %d\n", n);
	fflush(stdout);
	while (open) {
		if (poll(p, (nfds_t)n, -1) < 0) {
			perror("tcpecho: poll");
			return 1;
		}
		for (int i = 0; i < n; i++) {
			ssize_t k;

			if (p[i].fd < 0 || !p[i].revents)
				continue;
			k = read(p[i].fd, buf, sizeof(buf));
			if (k > 0 && !write_all(p[i].fd, buf, (size_t)k))
				continue;
			close(p[i].fd);
			p[i].fd = -1;
			open--;
		}
	}
	printf("SERVER EOF %d\n", n);
	return 0;
}

/* 4 KiB of the pattern from offset at, and its echo checked: 0, or -1. */
static int echo_4k(int fd, size_t at)
{
	unsigned char out[4096], in[4096];
	size_t got = 0;

	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = pat(at + i);
	if (write_all(fd, out, sizeof(out)))
		return -1;
	while (got < sizeof(in)) {
		ssize_t k = read(fd, in + got, sizeof(in) - got);

		if (k <= 0)
			return -1;
		got += (size_t)k;
	}
	return memcmp(in, out, sizeof(in)) ? -1 : 0;
}

static int client_many(const struct sockaddr_in *sa, int n, unsigned hold)
{
	int fd[MANY_MAX];

	for (int i = 0; i < n; i++) {
		fd[i] = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(fd[i], (const struct sockaddr *)sa, sizeof(*sa))) {
			perror("tcpecho: connect");
			return 1;
		}
	}
	printf("CONNECTED %d\n", n);
	fflush(stdout);
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < n; i++) {
			if (echo_4k(fd[i], (size_t)round * 4096)) {
				printf("ECHO BAD on connection %d\n", i);
				return 1;
			}
		}
		if (!round)
			sleep(hold);
	}
	printf("MANY OK %d\n", n);
	fflush(stdout);
	for (int i = 0; i < n; i++)
		close(fd[i]);
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa;
	static unsigned char buf[65536];
	int fd, one = 1;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	if (argc == 3 && !strcmp(argv[1], "server")) {
		int lfd = socket(AF_INET, SOCK_STREAM, 0);
		ssize_t n;

		sa.sin_port = htons(atoi(argv[2]));
		setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1)) {
			perror("tcpecho: bind/listen");
			return 1;
		}
		printf("LISTENING\n");
		fflush(stdout);
		fd = accept(lfd, NULL, NULL);
		if (fd < 0) {
			perror("tcpecho: accept");
			return 1;
		}
		printf("ACCEPTED\n");
		fflush(stdout);
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			if (write_all(fd, buf, (size_t)n)) {
				perror("tcpecho: write");
				return 1;
			}
		printf("SERVER EOF\n");
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "server-many")) {
		int lfd = socket(AF_INET, SOCK_STREAM, 0), n = atoi(argv[3]);

		sa.sin_port = htons(atoi(argv[2]));
		setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (n < 1 || n > MANY_MAX || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, MANY_MAX)) {
			perror("tcpecho: bind/listen");
			return 1;
		}
		printf("LISTENING\n");
		fflush(stdout);
		return serve_many(lfd, n);
	}
	if (argc == 6 && !strcmp(argv[1], "client-many")) {
		int n = atoi(argv[4]);

		if (n < 1 || n > MANY_MAX)
			return 2;
		sa.sin_port = htons(atoi(argv[3]));
		inet_pton(AF_INET, argv[2], &sa.sin_addr);
		return client_many(&sa, n, (unsigned)atoi(argv[5]));
	}
	if (argc >= 5 && argc <= 7 && !strcmp(argv[1], "client")) {
		size_t sent = 0, got = 0, total = argc >= 6 ? strtoul(argv[5], NULL, 0) : BYTES;
		unsigned pause = argc == 7 ? (unsigned)atoi(argv[6]) : 0;
		int bad = 0;

		sa.sin_port = htons(atoi(argv[3]));
		inet_pton(AF_INET, argv[2], &sa.sin_addr);
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			perror("tcpecho: connect");
			return 1;
		}
		printf("CONNECTED\n");
		fflush(stdout);
		while (got < total) {
			if (pause && got >= 4096) {
				sleep(pause);
				pause = 0;
			}
			if (sent < total && sent - got < WINDOW && (!pause || sent < 4096)) {
				size_t k = total - sent < 4096 ? total - sent : 4096;
				unsigned char out[4096];

				for (size_t i = 0; i < k; i++)
					out[i] = pat(sent + i);
				if (write_all(fd, out, k)) {
					perror("tcpecho: write");
					return 1;
				}
				sent += k;
			}
			if (sent - got >= WINDOW || sent == total || (pause && sent >= 4096)) {
				ssize_t n = read(fd, buf, sizeof(buf));

				if (n <= 0) {
					perror("tcpecho: read");
					return 1;
				}
				for (ssize_t i = 0; i < n; i++)
					if (buf[i] != pat(got + i))
						bad++;
				got += n;
			}
		}
		if (bad) {
			printf("ECHO BAD %d\n", bad);
			return 1;
		}
		printf("ECHO OK %zu\n", got);
		fflush(stdout);
		sleep(atoi(argv[4]));
		close(fd);
		return 0;
	}
	fprintf(stderr, "usage: tcpecho server PORT | client IP PORT HOLD [BYTES [PAUSE]] | server-many PORT N |"
			" client-many IP PORT N HOLD\n");
	return 2;
}
