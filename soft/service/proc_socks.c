/* The TCP sockets of preloaded processes, read from /proc (proc_socks.h). */
#include "proc_socks.h"
#include "regidx.h"
#include "service.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <netinet/tcp.h>

#define PS_CHUNK 16384

/* A connection whose process is scanned (the registry of proc_socks_attach). */
struct ps_proc {
	struct ps_proc *next;
	const struct soft_state *st;
	uint64_t conn_id;
	pid_t pid;
	/*
	 * The socket inodes among its fds at the last look, good while the
	 * process's sock_gen (pstats.h) and network namespace stay the same:
	 * reading 10 000 fd links costs more than the rest of a listing.
	 */
	uint64_t *inodes;
	bool *not_tcp;               /* inodes[i] was not in the TCP table (unix, ...) */
	size_t n_inodes;
	uint64_t gen;
	dev_t ns_dev;
	ino_t ns_ino;
	bool cached;
};

static struct ps_proc *procs;

/* A canonical 4-tuple: local address, remote address, local port, remote port. */
struct ps_key {
	uint8_t b[36];
};

/* A network namespace of the scanned processes and the socket inodes they hold there. */
struct ps_ns {
	dev_t dev;
	ino_t ino;
	pid_t pid;                   /* a process in it: its /proc/PID/net is read */
	uint64_t *inodes;
	bool *seen;                  /* inodes[i] was listed already */
	size_t n, cap, n_seen;
};

struct ps_scan {
	const struct soft_state *st;
	struct ps_ns *ns;
	size_t n_ns, n_inodes;
};

/* ---- parsing ---- */

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Exactly len (1..8) hex digits. */
static bool parse_hex(const char *s, size_t len, uint32_t *v)
{
	*v = 0;
	if (!len || len > 8)
		return false;
	for (size_t i = 0; i < len; i++) {
		int d = hexval(s[i]);

		if (d < 0)
			return false;
		*v = *v << 4 | (uint32_t)d;
	}
	return true;
}

static bool parse_dec(const char *s, size_t len, uint64_t max, uint64_t *v)
{
	*v = 0;
	if (!len || len > 20)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (d > 9 || *v > (max - d) / 10)
			return false;
		*v = *v * 10 + d;
	}
	return true;
}

/*
 * "ADDR:PORT": the address as the kernel's %08X of each 32-bit word as it
 * lies in memory, so the word's bytes in host order are the address's.
 */
static bool parse_end(const char *s, size_t len, int family, uint8_t a[16], uint16_t *port)
{
	size_t alen = family == AF_INET ? 8 : 32;
	uint32_t w;

	if (len != alen + 5 || s[alen] != ':')
		return false;
	memset(a, 0, 16);
	for (size_t i = 0; i < alen / 8; i++) {
		if (!parse_hex(s + 8 * i, 8, &w))
			return false;
		memcpy(a + 4 * i, &w, 4);
	}
	if (!parse_hex(s + alen + 1, 4, &w))
		return false;
	*port = (uint16_t)w;
	return true;
}

/* The next blank-separated token of [*p, end), NULL when none is left. */
static const char *next_tok(const char **p, const char *end, size_t *len)
{
	const char *s = *p, *e;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	for (e = s; e < end && *e != ' ' && *e != '\t'; e++)
		;
	*p = e;
	*len = (size_t)(e - s);
	return *len ? s : NULL;
}

enum { T_SL, T_LOCAL, T_REMOTE, T_STATE, T_UID = 7, T_INODE = 9, T_COUNT };

int proc_sock_parse(const char *line, size_t len, int family, struct proc_sock *ps)
{
	const char *p = line, *end = line + len, *t[T_COUNT];
	size_t l[T_COUNT];
	uint32_t state;
	uint64_t uid, inode;
	int n;

	if (family != AF_INET && family != AF_INET6)
		return -EINVAL;
	for (n = 0; n < T_COUNT && (t[n] = next_tok(&p, end, &l[n])); n++)
		;
	if (n == 0 || (l[T_SL] == 2 && !memcmp(t[T_SL], "sl", 2)))
		return 0;
	memset(ps, 0, sizeof(*ps));
	ps->family = family;
	if (n < T_COUNT || t[T_SL][l[T_SL] - 1] != ':' ||
	    !parse_end(t[T_LOCAL], l[T_LOCAL], family, ps->src, &ps->sport) ||
	    !parse_end(t[T_REMOTE], l[T_REMOTE], family, ps->dst, &ps->dport) ||
	    l[T_STATE] != 2 || !parse_hex(t[T_STATE], 2, &state) ||
	    state < TCP_ESTABLISHED || state > TCP_CLOSING ||
	    !parse_dec(t[T_UID], l[T_UID], UINT32_MAX, &uid) ||
	    !parse_dec(t[T_INODE], l[T_INODE], UINT64_MAX, &inode))
		return -EINVAL;
	ps->tcp_state = (uint8_t)state;
	ps->uid = (uint32_t)uid;
	ps->inode = inode;
	return 1;
}

/* ---- the processes ---- */

int proc_socks_attach(const struct soft_state *st, uint64_t conn_id, pid_t pid)
{
	struct ps_proc *p;

	/*
	 * Again on one connection (STATS_ATTACH of the image after execve(),
	 * which keeps the connection): one mark per connection, its fd list
	 * read anew.  A second entry would outlive the connection, as
	 * proc_socks_gone() takes one.
	 */
	for (p = procs; p; p = p->next)
		if (p->st == st && p->conn_id == conn_id) {
			p->pid = pid;
			p->cached = false;
			return 0;
		}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->st = st;
	p->conn_id = conn_id;
	p->pid = pid;
	p->next = procs;
	procs = p;
	return 0;
}

void proc_socks_gone(const struct soft_state *st, uint64_t conn_id)
{
	for (struct ps_proc **pp = &procs; *pp; pp = &(*pp)->next) {
		struct ps_proc *p = *pp;

		if (p->st == st && p->conn_id == conn_id) {
			*pp = p->next;
			free(p->inodes);
			free(p->not_tcp);
			free(p);
			return;
		}
	}
}

/* ---- scanning ---- */

static bool ns_of(pid_t pid, struct stat *sb)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	return pid > 0 && stat(path, sb) == 0;
}

static struct ps_ns *ns_get(struct ps_scan *sc, const struct stat *sb, pid_t pid)
{
	struct ps_ns *ns;

	for (size_t i = 0; i < sc->n_ns; i++)
		if (sc->ns[i].dev == sb->st_dev && sc->ns[i].ino == sb->st_ino)
			return &sc->ns[i];
	ns = realloc(sc->ns, (sc->n_ns + 1) * sizeof(*ns));
	if (!ns)
		return NULL;
	sc->ns = ns;
	ns = &sc->ns[sc->n_ns++];
	*ns = (struct ps_ns){ .dev = sb->st_dev, .ino = sb->st_ino, .pid = pid };
	return ns;
}

static bool push_inode(struct ps_scan *sc, struct ps_ns *ns, uint64_t inode)
{
	if (sc->n_inodes >= PS_MAX_INODES)
		return false;
	if (ns->n == ns->cap) {
		size_t cap = ns->cap ? ns->cap * 2 : 64;
		uint64_t *v = realloc(ns->inodes, cap * sizeof(*v));

		if (!v)
			return false;
		ns->inodes = v;
		ns->cap = cap;
	}
	ns->inodes[ns->n++] = inode;
	sc->n_inodes++;
	return true;
}

/* The inode of a "socket:[N]" link, 0 for anything else. */
static uint64_t link_inode(int dfd, const char *name)
{
	char buf[64];
	ssize_t n = readlinkat(dfd, name, buf, sizeof(buf) - 1);
	uint64_t inode;

	if (n < 10 || memcmp(buf, "socket:[", 8) || buf[n - 1] != ']')
		return 0;
	return parse_dec(buf + 8, (size_t)n - 9, UINT64_MAX, &inode) ? inode : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The socket inodes among p's fds, into p's cache. */
static void scan_fds(struct ps_proc *p)
{
	char path[64];
	struct dirent *de;
	size_t cap = 0;
	DIR *d;

	p->n_inodes = 0;
	p->cached = false;
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)p->pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		uint64_t inode = de->d_name[0] == '.' ? 0 : link_inode(dirfd(d), de->d_name);

		if (!inode)
			continue;
		if (p->n_inodes == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			uint64_t *v = realloc(p->inodes, ncap * sizeof(*v));
			bool *t = v ? realloc(p->not_tcp, ncap * sizeof(*t)) : NULL;

			if (v)
				p->inodes = v;
			if (!t)
				break;
			p->not_tcp = t;
			cap = ncap;
		}
		p->not_tcp[p->n_inodes] = false;
		p->inodes[p->n_inodes++] = inode;
	}
	closedir(d);
	p->cached = true;
}

/*
 * After a whole read of its namespace's tables: p's unregistered inodes
 * that were not there are no TCP sockets (until its sock_gen moves), so the
 * next read can stop once the others are found.
 */
static void mark_not_tcp(const struct soft_state *st, struct ps_proc *p, const struct ps_ns *ns)
{
	for (size_t i = 0; i < p->n_inodes; i++) {
		const uint64_t *at;

		if (p->not_tcp[i] || soft_idx_has_inode(st, p->inodes[i]))
			continue;
		at = bsearch(&p->inodes[i], ns->inodes, ns->n, sizeof(uint64_t), cmp_u64);
		if (at && !ns->seen[at - ns->inodes])
			p->not_tcp[i] = true;
	}
}

static void scan_proc(struct ps_scan *sc, struct ps_proc *p)
{
	struct stat sb;
	struct ps_ns *ns;
	uint64_t gen;
	bool have_gen = soft_pstats_sock_gen(sc->st, p->conn_id, &gen);

	if (!ns_of(p->pid, &sb) || !(ns = ns_get(sc, &sb, p->pid)))
		return;
	if (!p->cached || !have_gen || gen != p->gen || sb.st_dev != p->ns_dev ||
	    sb.st_ino != p->ns_ino) {
		scan_fds(p);
		p->gen = gen;
		p->ns_dev = sb.st_dev;
		p->ns_ino = sb.st_ino;
		/* without its counter, no way to know the list is still good */
		p->cached = p->cached && have_gen;
	}
	for (size_t i = 0; i < p->n_inodes; i++) {
		/* a registration says all about its socket already */
		if (p->not_tcp[i] || soft_idx_has_inode(sc->st, p->inodes[i]))
			continue;
		if (!push_inode(sc, ns, p->inodes[i]))
			break;
	}
}

static void sort_unique(struct ps_ns *ns)
{
	size_t k = 0;

	if (!ns->n)
		return;
	qsort(ns->inodes, ns->n, sizeof(*ns->inodes), cmp_u64);
	for (size_t i = 1; i < ns->n; i++)
		if (ns->inodes[i] != ns->inodes[k])
			ns->inodes[++k] = ns->inodes[i];
	ns->n = k + 1;
}

static bool push_sock(struct proc_socks *ps, const struct proc_sock *s)
{
	if (ps->n == ps->cap) {
		size_t cap = ps->cap ? ps->cap * 2 : 64;
		struct proc_sock *v = realloc(ps->v, cap * sizeof(*v));

		if (!v)
			return false;
		ps->v = v;
		ps->cap = cap;
	}
	ps->v[ps->n++] = *s;
	return true;
}

struct table_ctx {
	struct proc_socks *ps;
	struct ps_ns *ns;
	int family;
	bool here;
};

/*
 * The kernel resumes each read of the table at a position in a hash bucket,
 * so a socket that moved meanwhile may come twice: it is listed once.
 */
static void table_line(const char *line, size_t len, struct table_ctx *c)
{
	struct proc_sock s;
	const uint64_t *at;

	if (proc_sock_parse(line, len, c->family, &s) != 1 || !s.inode)
		return;
	at = bsearch(&s.inode, c->ns->inodes, c->ns->n, sizeof(uint64_t), cmp_u64);
	if (!at || c->ns->seen[at - c->ns->inodes])
		return;
	s.here = c->here;
	if (push_sock(c->ps, &s)) {
		c->ns->seen[at - c->ns->inodes] = true;
		c->ns->n_seen++;
	}
}

/* Each complete line of fd; a line longer than PS_LINE_MAX is skipped. */
static void read_lines(int fd, struct table_ctx *c)
{
	char buf[PS_CHUNK];
	size_t have = 0;
	bool overlong = false;
	ssize_t n;

	/* listeners come first in the table: often all are found early */
	while (c->ns->n_seen < c->ns->n &&
	       ((n = read(fd, buf + have, sizeof(buf) - have)) > 0 || (n < 0 && errno == EINTR))) {
		size_t start = 0;
		char *nl;

		have += n > 0 ? (size_t)n : 0;
		while ((nl = memchr(buf + start, '\n', have - start))) {
			size_t len = (size_t)(nl - (buf + start));

			if (!overlong && len <= PS_LINE_MAX)
				table_line(buf + start, len, c);
			overlong = false;
			start += len + 1;
		}
		memmove(buf, buf + start, have - start);
		have -= start;
		if (have > PS_LINE_MAX) {
			overlong = true;
			have = 0;
		}
	}
}

static void read_table(struct proc_socks *ps, struct ps_ns *ns, int family, bool here)
{
	struct table_ctx c = { .ps = ps, .ns = ns, .family = family, .here = here };
	char path[64];
	int fd;

	if (ns->n_seen == ns->n)
		return;
	snprintf(path, sizeof(path), "/proc/%d/net/%s", (int)ns->pid,
		 family == AF_INET ? "tcp" : "tcp6");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	read_lines(fd, &c);
	close(fd);
}

static void make_key(struct ps_key *k, int family, const uint8_t *la, uint16_t lp,
		     const uint8_t *ra, uint16_t rp)
{
	soft_addr_canon(family, la, k->b);
	soft_addr_canon(family, ra, k->b + 16);
	k->b[32] = (uint8_t)(lp >> 8);
	k->b[33] = (uint8_t)lp;
	k->b[34] = (uint8_t)(rp >> 8);
	k->b[35] = (uint8_t)rp;
}

static int cmp_key(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct ps_key));
}

static void make_keys(struct proc_socks *ps)
{
	if (!ps->n || !(ps->keys = calloc(ps->n, sizeof(*ps->keys))))
		return;
	for (size_t i = 0; i < ps->n; i++) {
		const struct proc_sock *s = &ps->v[i];

		if (s->dport)
			make_key(&ps->keys[ps->nkeys++], s->family, s->src, s->sport,
				 s->dst, s->dport);
	}
	qsort(ps->keys, ps->nkeys, sizeof(*ps->keys), cmp_key);
}

void proc_socks_scan(const struct soft_state *st, pid_t req_pid, struct proc_socks *ps)
{
	struct ps_scan sc = { .st = st };
	struct stat req;
	bool have_req = ns_of(req_pid, &req);
	size_t nproc = 0;

	memset(ps, 0, sizeof(*ps));
	for (struct ps_proc *p = procs; p && nproc < PS_MAX_PROCS; p = p->next)
		if (p->st == st) {
			scan_proc(&sc, p);
			nproc++;
		}
	for (size_t i = 0; i < sc.n_ns; i++) {
		struct ps_ns *ns = &sc.ns[i];
		bool here = have_req && ns->dev == req.st_dev && ns->ino == req.st_ino;

		sort_unique(ns);
		ns->seen = ns->n ? calloc(ns->n, sizeof(*ns->seen)) : NULL;
		if (ns->seen) {
			read_table(ps, ns, AF_INET, here);
			read_table(ps, ns, AF_INET6, here);
			for (struct ps_proc *p = procs; p && ns->n_seen < ns->n; p = p->next)
				if (p->st == st && p->cached && p->ns_dev == ns->dev &&
				    p->ns_ino == ns->ino)
					mark_not_tcp(st, p, ns);
		}
		free(ns->seen);
		free(ns->inodes);
	}
	free(sc.ns);
	make_keys(ps);
}

bool proc_socks_peer(const struct proc_socks *ps, int family, const uint8_t src[16],
		     uint16_t sport, const uint8_t dst[16], uint16_t dport)
{
	struct ps_key k;

	if (!ps->nkeys)
		return false;
	make_key(&k, family, dst, dport, src, sport);
	return bsearch(&k, ps->keys, ps->nkeys, sizeof(k), cmp_key) != NULL;
}

void proc_socks_free(struct proc_socks *ps)
{
	free(ps->v);
	free(ps->keys);
	memset(ps, 0, sizeof(*ps));
}
