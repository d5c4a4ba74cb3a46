/*
 * connclose: connection setup and teardown rate, for bench/run.sh.
 *
 *   connclose server PORT        accept; read 1 byte; write 1 byte; close
 *                                (one connection at a time, forever)
 *   connclose client HOST PORT SECONDS
 *                                connect; write 1 byte; read 1 byte; close;
 *                                in a loop for SECONDS, then print the
 *                                number of connections per second
 *
 * The server closes first, so TIME_WAIT stays on its side and the client's
 * ephemeral ports do not run out.  Built by bench/run.sh with cc.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int server(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1, l = socket(AF_INET, SOCK_STREAM, 0);
	char c;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1024)) {
		perror("connclose server");
		return 1;
	}
	for (;;) {
		int s = accept(l, NULL, NULL);

		if (s < 0)
			continue;
		if (read(s, &c, 1) == 1 && write(s, &c, 1) != 1)
			perror("connclose server: write");
		close(s);
	}
}

static int client(const char *host, int port, double secs)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	double start, end;
	long n = 0;
	char c = 'x';

	if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
		fprintf(stderr, "connclose: bad address %s\n", host);
		return 1;
	}
	start = now();
	end = start + secs;
	do {
		int s = socket(AF_INET, SOCK_STREAM, 0);

		if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) ||
		    write(s, &c, 1) != 1 || read(s, &c, 1) != 1) {
			perror("connclose client");
			return 1;
		}
		close(s);
		n++;
	} while (now() < end);
	printf("%.1f\n", n / (now() - start));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "server"))
		return server(atoi(argv[2]));
	if (argc == 5 && !strcmp(argv[1], "client"))
		return client(argv[2], atoi(argv[3]), atof(argv[4]));
	fprintf(stderr, "usage: connclose server PORT | client HOST PORT SECONDS\n");
	return 2;
}
