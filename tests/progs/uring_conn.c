/*
 * A server that has an io_uring instance made with liburing (a shared
 * library), as MariaDB's InnoDB does for its data files, and a client, for
 * soft_uring.bats.  Run under smc_run, each end prints one line.
 *
 *   uring_conn server MODE          prints "port N", serves one connection
 *   uring_conn client PORT MODE
 *
 * MODE, what the server does with its instance:
 *   files       reads each reply from a file with io_uring, sends it with
 *               send(): the connection is not the instance's business
 *   raw         the same with read(), and a second instance made with a raw
 *               io_uring_setup that the library cannot watch
 *   recv_early  receives the client's request with IORING_OP_RECV at once
 *   registered  registers the connection as a fixed file, then uses send()
 *               and recv() only
 *   recv_late   once both directions are on shared memory (when the library
 *               gives them), receives with IORING_OP_RECV
 *   second      recv_early, then a second connection served as in files
 *   close_late  once both directions are on shared memory, sends 1 MiB with
 *               send() and closes the connection with IORING_OP_CLOSE
 *
 * The client runs $UC_PROBE (smcss) while the connection is open, and in
 * the first three modes says whether it mapped a region of the library.
 * Where the server serves files, both ends first exchange pings until the
 * client has mapped a region (or for 2000 rounds; after recv_early's reply
 * too): the exchange alone may end within the library's pairing delay,
 * before either end is offered, and smcss would list both as INIT.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ROUNDS 20
#define REPLY (64 * 1024)
#define BULK (1024 * 1024)

static const char *g_role = "?";

static int die(const char *what)
{
	fprintf(stderr, "uring_conn %s: %s: %s\n", g_role, what, strerror(errno));
	exit(1);
}

static unsigned char pat(size_t i, int seed)
{
	return (unsigned char)((i * 31 + (size_t)seed * 7 + (i >> 12)) & 0xff);
}

static void fill(unsigned char *b, size_t off, size_t n, int seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = pat(off + i, seed);
}

static int intact(const unsigned char *b, size_t off, size_t n, int seed)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != pat(off + i, seed))
			return 0;
	return 1;
}

/* 0 when all n bytes went, else the errno. */
static int try_send_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void send_all(int fd, const void *buf, size_t n)
{
	if ((errno = try_send_all(fd, buf, n)))
		die("send");
}

/* 0 when all n bytes came, else the errno (-1 for an end of stream). */
static int recv_all(int fd, void *buf, size_t n)
{
	char *p = buf;

	while (n) {
		ssize_t r = recv(fd, p, n, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? errno : -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static int on_shared_memory(void)
{
	char line[512];
	int found = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, "smc-dmb") != NULL;
	if (f)
		fclose(f);
	return found;
}

/*
 * One request, one reply, until the client has mapped the region (with
 * both, the server too), and five more: both directions have gone through
 * the ring.  The client's mapping alone does not say the server took its
 * pairing: until it does, neither direction cuts over.  0, or the errno of
 * a failed receive.
 */
static int ping_until_mapped(int fd, int server, int both)
{
	unsigned char b[1024];
	int after = 0, e;

	for (int i = 0; i < 2000 && after < 5; i++) {
		if (!server)
			memset(b, on_shared_memory() ? 'm' : 'p', sizeof(b));
		if (!server && (e = try_send_all(fd, b, sizeof(b))))
			return e;
		if ((e = recv_all(fd, b, sizeof(b))))
			return e > 0 ? e : EPIPE;
		if (server) {
			b[1] = on_shared_memory() ? 'm' : 'p';
			send_all(fd, b, sizeof(b));
		}
		if (b[0] == 'm' && (!both || b[1] == 'm'))
			after++;
		else if (!server)
			usleep(2000);
	}
	return 0;
}

/* ---- server ---- */

static struct io_uring g_ring;

static ssize_t uring_do(struct io_uring_sqe *sqe)
{
	struct io_uring_cqe *cqe;
	int r;

	(void)sqe;
	if (io_uring_submit_and_wait(&g_ring, 1) < 0)
		die("io_uring_submit_and_wait");
	if ((r = io_uring_wait_cqe(&g_ring, &cqe)) < 0) {
		errno = -r;
		die("io_uring_wait_cqe");
	}
	r = cqe->res;
	io_uring_cqe_seen(&g_ring, cqe);
	return r;
}

static ssize_t uring_read(int fd, void *buf, size_t n, off_t off)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&g_ring);

	io_uring_prep_read(sqe, fd, buf, (unsigned)n, (__u64)off);
	return uring_do(sqe);
}

static ssize_t uring_close(int fd)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&g_ring);

	io_uring_prep_close(sqe, fd);
	return uring_do(sqe);
}

static ssize_t uring_recv(int fd, void *buf, size_t n)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&g_ring);

	io_uring_prep_recv(sqe, fd, buf, n, 0);
	return uring_do(sqe);
}

static int data_file(void)
{
	static unsigned char b[REPLY];
	char path[] = "/tmp/uring_conn.XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0)
		die("mkstemp");
	unlink(path);
	for (int i = 0; i < ROUNDS; i++) {
		fill(b, (size_t)i * REPLY, REPLY, 1);
		if (write(fd, b, REPLY) != REPLY)
			die("write of the data file");
	}
	return fd;
}

/* Each request answered with its part of the file, read as mode says. */
static void serve_files(int c, int file, int raw)
{
	static unsigned char b[REPLY];
	char req[16];

	if ((errno = ping_until_mapped(c, 1, 0)))
		die("ping");
	for (int i = 0; i < ROUNDS; i++) {
		ssize_t r;

		if (recv_all(c, req, sizeof(req)))
			die("recv of a request");
		r = raw ? pread(file, b, REPLY, (off_t)i * REPLY)
			: uring_read(file, b, REPLY, (off_t)i * REPLY);
		if (r != REPLY) {
			errno = r < 0 ? (int)-r : EIO;
			die("read of the data file");
		}
		send_all(c, b, REPLY);
	}
}

static void serve_bulk(int c, int late)
{
	static unsigned char b[BULK];
	size_t got = 0;

	if (late) {
		if ((errno = ping_until_mapped(c, 1, 1)))
			die("ping");
		send_all(c, "u", 1);
	}
	while (got < BULK) {
		ssize_t r = uring_recv(c, b + got, BULK - got);

		if (r <= 0) {
			printf("server: IORING_OP_RECV: %s after %zu bytes\n",
			       r ? strerror((int)-r) : "end of stream", got);
			return;
		}
		got += (size_t)r;
	}
	if (!intact(b, 0, BULK, 2)) {
		printf("server: the request came wrong\n");
		exit(1);
	}
	fill(b, 0, BULK, 3);
	send_all(c, b, BULK);
	if (!late && (errno = ping_until_mapped(c, 1, 0)))
		die("ping");
	printf("server: request intact\n");
}

static int server(const char *mode)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int l, c, file = data_file(), r;

	if ((r = io_uring_queue_init(8, &g_ring, 0)) < 0) {
		errno = -r;
		die("io_uring_queue_init");
	}
	if (!strcmp(mode, "raw")) {
		struct io_uring_params p = { 0 };

		if (syscall(SYS_io_uring_setup, 4, &p) < 0)
			die("io_uring_setup");
	}
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &alen))
		die("listen");
	printf("port %d\n", ntohs(a.sin_port));
	fflush(stdout);
	if ((c = accept(l, NULL, NULL)) < 0)
		die("accept");
	if (!strcmp(mode, "files") || !strcmp(mode, "raw")) {
		serve_files(c, file, !strcmp(mode, "raw"));
		printf("server: %d replies sent\n", ROUNDS);
	} else if (!strcmp(mode, "registered")) {
		int files[2] = { file, c };

		if ((r = io_uring_register_files(&g_ring, files, 2)) < 0) {
			errno = -r;
			die("io_uring_register_files");
		}
		serve_files(c, file, 1);
		printf("server: %d replies sent\n", ROUNDS);
	} else if (!strcmp(mode, "recv_early") || !strcmp(mode, "recv_late")) {
		serve_bulk(c, !strcmp(mode, "recv_late"));
	} else if (!strcmp(mode, "close_late")) {
		static unsigned char b[BULK];

		if ((errno = ping_until_mapped(c, 1, 1)))
			die("ping");
		fill(b, 0, BULK, 4);
		send_all(c, b, BULK);
		if ((r = (int)uring_close(c)) < 0) {
			errno = -r;
			die("IORING_OP_CLOSE");
		}
		printf("server: sent and closed with io_uring\n");
		return 0;
	} else if (!strcmp(mode, "second")) {
		serve_bulk(c, 0);
		recv_all(c, &r, 1);
		close(c);
		if ((c = accept(l, NULL, NULL)) < 0)
			die("accept of the second connection");
		serve_files(c, file, 0);
		printf("server: %d replies sent\n", ROUNDS);
	} else {
		fprintf(stderr, "uring_conn: unknown mode %s\n", mode);
		return 2;
	}
	fflush(stdout);
	/* the client's probe and checks come before the end */
	recv_all(c, &r, 1);
	close(c);
	return 0;
}

/* ---- client ---- */

static void probe(int fd)
{
	const char *cmd = getenv("UC_PROBE");

	if (!cmd)
		return;
	/* the probe must not get the connection: a program without the library would keep it TCP */
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	if (system(cmd) != 0)
		die("UC_PROBE");
}

static int client(const char *port, const char *mode)
{
	static unsigned char b[BULK];
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int c, e;

	if (!strcmp(mode, "second")) {
		/* the second connection comes once the first has ended */
		if (client(port, "recv_early"))
			return 1;
		mode = "files";
	}
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)))
		die("connect");
	if (!strcmp(mode, "close_late")) {
		size_t got = 0;
		ssize_t n = 1;
		char more;

		if ((e = ping_until_mapped(c, 0, 1))) {
			printf("client: ping: %s\n", strerror(e));
			return 0;
		}
		while (got < BULK && (n = recv(c, b + got, BULK - got, 0)) > 0)
			got += (size_t)n;
		if (got == BULK)
			n = recv(c, &more, 1, 0);
		printf("client: %zu bytes%s, then %s\n", got,
		       got == BULK && !intact(b, 0, BULK, 4) ? " (wrong)" : "",
		       n == 0 ? "end of stream" : n < 0 ? strerror(errno) : "more bytes");
		close(c);
		return 0;
	}
	if (!strcmp(mode, "recv_early") || !strcmp(mode, "recv_late")) {
		/* the server's end is reset once it asks io_uring: anywhere from here */
		if (!strcmp(mode, "recv_late") &&
		    ((e = ping_until_mapped(c, 0, 1)) || (e = recv_all(c, b, 1)))) {
			printf("client: before the request: %s\n", e > 0 ? strerror(e) : "end of stream");
			return 0;
		}
		fill(b, 0, BULK, 2);
		if ((e = try_send_all(c, b, BULK))) {
			printf("client: request: %s\n", strerror(e));
			return 0;
		}
		e = recv_all(c, b, BULK);
		if (e) {
			printf("client: reply: %s\n", e > 0 ? strerror(e) : "end of stream");
			return 0;
		}
		if (!intact(b, 0, BULK, 3)) {
			printf("client: the reply came wrong\n");
			return 1;
		}
		if (!strcmp(mode, "recv_early") && (e = ping_until_mapped(c, 0, 0))) {
			printf("client: ping: %s\n", strerror(e));
			return 0;
		}
		probe(c);
		printf("client: reply intact\n");
	} else {
		if ((e = ping_until_mapped(c, 0, 0))) {
			printf("client: ping: %s\n", strerror(e));
			return 0;
		}
		for (int i = 0; i < ROUNDS; i++) {
			char req[16] = "next";

			send_all(c, req, sizeof(req));
			if ((e = recv_all(c, b, REPLY)))
				die("recv of a reply");
			if (!intact(b, (size_t)i * REPLY, REPLY, 1)) {
				printf("client: reply %d came wrong\n", i);
				return 1;
			}
		}
		probe(c);
		printf("client: %d replies intact, %s\n", ROUNDS,
		       on_shared_memory() ? "region mapped" : "no region");
	}
	send_all(c, "e", 1);
	close(c);
	return 0;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "server")) {
		g_role = "server";
		return server(argv[2]);
	}
	if (argc == 4 && !strcmp(argv[1], "client")) {
		g_role = "client";
		return client(argv[2], argv[3]);
	}
	fprintf(stderr, "usage: uring_conn server MODE | client PORT MODE\n");
	return 2;
}
