#include "nl.h"
#include "smc_uapi.h"
#include "soft_socket.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <unistd.h>

#define SMC_NL_RCVBUF (1024 * 1024)
#define SMC_NL_SNDBUF 32768
#define SMC_NL_RETRIES 3
#define SMC_SOFT_TIMEOUT_SEC 30  /* a hung daemon must not hang the tools */

const char *smc_soft_socket_path(void)
{
	static char path[108];

	return smc_soft_socket_find(path, sizeof(path));
}

static bool kernel_has_smc(void)
{
	int fd = socket(AF_SMC, SOCK_STREAM | SOCK_CLOEXEC, SMCPROTO_SMC);

	if (fd < 0)
		return errno != EAFNOSUPPORT && errno != EPROTONOSUPPORT &&
		       errno != ESOCKTNOSUPPORT;
	close(fd);
	return true;
}

/* Whether a modules.dep or modules.builtin line names smc.ko (any compression). */
static bool names_smc_module(const char *line)
{
	size_t n = strcspn(line, ":\n");
	const char *base = line;

	for (size_t i = 0; i < n; i++)
		if (line[i] == '/')
			base = line + i + 1;
	return (size_t)(line + n - base) >= 6 && !strncmp(base, "smc.ko", 6) &&
	       (base + 6 == line + n || base[6] == '.');
}

enum smc_kmod smc_kernel_module_state(const char *moddir)
{
	static const char *const lists[] = { "modules.dep", "modules.builtin" };
	enum smc_kmod st = SMC_KMOD_UNKNOWN;
	char path[512], line[1024];

	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", moddir, lists[i]);
		f = fopen(path, "re");
		if (!f)
			continue;
		st = SMC_KMOD_ABSENT;
		while (fgets(line, sizeof(line), f))
			if (names_smc_module(line)) {
				st = SMC_KMOD_PRESENT;
				break;
			}
		fclose(f);
		if (st == SMC_KMOD_PRESENT)
			break;
	}
	return st;
}

void smc_kernel_no_smc_text(const char *moddir, const char *release, char *buf, size_t len)
{
	switch (smc_kernel_module_state(moddir)) {
	case SMC_KMOD_ABSENT:
		snprintf(buf, len, "this kernel has no SMC (%s has no smc module; "
			 "the soft backend, smc_softd, needs none)", release);
		break;
	case SMC_KMOD_PRESENT:
		if (access("/sys/module/smc", F_OK) == 0)
			snprintf(buf, len, "AF_SMC sockets are refused although the smc "
				 "module is loaded (a seccomp or security policy?)");
		else
			snprintf(buf, len, "the kernel's smc module is not loaded "
				 "('modprobe smc' says why)");
		break;
	default:
		snprintf(buf, len, "the kernel has no SMC support "
			 "(load it with 'modprobe smc')");
		break;
	}
}

/* The running kernel's smc_kernel_no_smc_text(). */
static void no_smc_text(char *buf, size_t len)
{
	struct utsname u;
	char dir[sizeof(u.release) + 16];

	if (uname(&u) < 0)
		snprintf(u.release, sizeof(u.release), "?");
	snprintf(dir, sizeof(dir), "/lib/modules/%s", u.release);
	smc_kernel_no_smc_text(dir, u.release, buf, len);
}

/* Connect to the soft backend; the fd, or -errno. */
static int soft_connect(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* bounds connect() to a daemon with a full backlog, and every send */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO,
		   &(struct timeval){ .tv_sec = SMC_SOFT_TIMEOUT_SEC }, sizeof(struct timeval));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

int smc_backend_choose(enum smc_backend *out, int *soft_errno)
{
	const char *env = getenv("SMC_BACKEND");
	int fd;

	*soft_errno = 0;
	if (env && *env && strcmp(env, "auto")) {
		if (!strcmp(env, "kernel")) {
			*out = SMC_BACKEND_KERNEL;
			return kernel_has_smc() ? 0 : -SMC_OPEN_NO_KERNEL;
		}
		if (!strcmp(env, "soft")) {
			*out = SMC_BACKEND_SOFT;
			return 0;
		}
		return -SMC_OPEN_BAD_ENV;
	}
	if (kernel_has_smc()) {
		*out = SMC_BACKEND_KERNEL;
		return 0;
	}
	fd = soft_connect(smc_soft_socket_path());
	if (fd < 0) {
		*soft_errno = -fd;
		return -SMC_OPEN_NO_BACKEND;
	}
	close(fd);
	*out = SMC_BACKEND_SOFT;
	return 0;
}

static int open_kernel(struct smc_nl *nl)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int one = 1, sz;

	nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, nl->protocol);
	if (nl->fd < 0)
		return -errno;
	sz = SMC_NL_SNDBUF;
	setsockopt(nl->fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	sz = SMC_NL_RCVBUF;
	setsockopt(nl->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	/* Best effort: older kernels lack these and still work. */
	setsockopt(nl->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(nl->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	if (bind(nl->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	return 0;
}

static int open_soft(struct smc_nl *nl)
{
	int rc;

	nl->fd = soft_connect(nl->soft_path);
	if (nl->fd < 0) {
		nl->open_errno = -nl->fd;
		return -SMC_OPEN_NO_SOFT;
	}
	rc = smc_soft_peer_trusted(nl->fd);
	if (rc) {
		nl->open_errno = -rc;
		return -SMC_OPEN_UNTRUSTED;
	}
	setsockopt(nl->fd, SOL_SOCKET, SO_RCVTIMEO,
		   &(struct timeval){ .tv_sec = SMC_SOFT_TIMEOUT_SEC }, sizeof(struct timeval));
	return 0;
}

int smc_nl_open_backend(struct smc_nl *nl, int protocol, enum smc_backend backend)
{
	int rc;

	memset(nl, 0, sizeof(*nl));
	nl->fd = -1;
	nl->protocol = protocol;
	nl->backend = backend;
	nl->seq = (uint32_t)getpid() << 8;
	snprintf(nl->soft_path, sizeof(nl->soft_path), "%s", smc_soft_socket_path());
	if (backend == SMC_BACKEND_SOFT)
		rc = open_soft(nl);
	else if ((rc = open_kernel(nl)) < 0) {
		nl->open_errno = -rc;
		rc = -SMC_OPEN_SOCKET;
	}
	if (rc)
		smc_nl_close(nl);
	return rc;
}

int smc_nl_open(struct smc_nl *nl, int protocol)
{
	enum smc_backend backend;
	int soft_errno, rc;

	rc = smc_backend_choose(&backend, &soft_errno);
	if (rc) {
		memset(nl, 0, sizeof(*nl));
		nl->fd = -1;
		nl->open_errno = soft_errno;
		snprintf(nl->soft_path, sizeof(nl->soft_path), "%s", smc_soft_socket_path());
		return rc;
	}
	return smc_nl_open_backend(nl, protocol, backend);
}

void smc_nl_close(struct smc_nl *nl)
{
	if (nl->fd >= 0)
		close(nl->fd);
	nl->fd = -1;
}

void smc_nl_open_strerror(const struct smc_nl *nl, int rc, char *buf, size_t len)
{
	const char *path = nl->soft_path[0] ? nl->soft_path : smc_soft_socket_path();
	char why[256];

	switch (-rc) {
	case SMC_OPEN_NO_BACKEND:
		no_smc_text(why, sizeof(why));
		snprintf(buf, len, "no SMC backend: %s and no soft backend answers "
			 "on %s (start 'smc_softd')", why, path);
		break;
	case SMC_OPEN_NO_KERNEL:
		no_smc_text(why, sizeof(why));
		snprintf(buf, len, "SMC_BACKEND=kernel: %s", why);
		break;
	case SMC_OPEN_NO_SOFT:
		snprintf(buf, len, "SMC_BACKEND=soft: no soft backend answers on %s: "
			 "%s (start 'smc_softd')", path, strerror(nl->open_errno));
		break;
	case SMC_OPEN_UNTRUSTED:
		snprintf(buf, len, "soft backend on %s: refused: it runs as neither "
			 "root nor the calling user", path);
		break;
	case SMC_OPEN_BAD_ENV:
		snprintf(buf, len, "SMC_BACKEND: invalid value '%s' "
			 "(use auto, kernel or soft)", getenv("SMC_BACKEND"));
		break;
	default:
		snprintf(buf, len, "cannot open netlink socket: %s",
			 strerror(nl->open_errno));
		break;
	}
}

void smc_reply_init(struct smc_reply *rep)
{
	memset(rep, 0, sizeof(*rep));
}

void smc_reply_free(struct smc_reply *rep)
{
	free(rep->buf);
	smc_reply_init(rep);
}

static int reply_reserve(struct smc_reply *rep, size_t more)
{
	size_t cap = rep->cap ? rep->cap : 4096;
	unsigned char *p;

	if (more > SIZE_MAX / 2 - rep->len)
		return -ENOMEM;
	while (cap < rep->len + more)
		cap *= 2;
	if (cap == rep->cap)
		return 0;
	p = realloc(rep->buf, cap);
	if (!p)
		return -ENOMEM;
	rep->buf = p;
	rep->cap = cap;
	return 0;
}

int smc_reply_append(struct smc_reply *rep, const void *data, size_t len)
{
	struct nlmsghdr nlh;
	size_t alen;

	if (len < sizeof(nlh))
		return -EBADMSG;
	memcpy(&nlh, data, sizeof(nlh));        /* data may be unaligned */
	if (nlh.nlmsg_len < sizeof(nlh) || nlh.nlmsg_len > len)
		return -EBADMSG;
	alen = NLMSG_ALIGN(nlh.nlmsg_len);
	if (reply_reserve(rep, alen))
		return -ENOMEM;
	memcpy(rep->buf + rep->len, data, nlh.nlmsg_len);
	memset(rep->buf + rep->len + nlh.nlmsg_len, 0, alen - nlh.nlmsg_len);
	rep->len += alen;
	return 0;
}

struct nlmsghdr *smc_reply_next(const struct smc_reply *rep, const struct nlmsghdr *prev)
{
	size_t off = 0;
	struct nlmsghdr *nlh;

	if (prev)
		off = (size_t)((const unsigned char *)prev - rep->buf) +
		      NLMSG_ALIGN(prev->nlmsg_len);
	if (off + sizeof(*nlh) > rep->len)
		return NULL;
	nlh = (struct nlmsghdr *)(rep->buf + off);
	if (nlh->nlmsg_len < sizeof(*nlh) || nlh->nlmsg_len > rep->len - off)
		return NULL;
	return nlh;
}

/* Extended ack text of an NLMSG_ERROR, if the sender attached one. */
static void parse_ext_ack(const struct nlmsghdr *nlh, struct smc_nlerr *err)
{
	const struct nlmsgerr *e = NLMSG_DATA(nlh);
	size_t off = NLMSG_HDRLEN + sizeof(*e);
	const struct nlattr *nla;

	err->msg[0] = '\0';
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len >= sizeof(struct nlmsghdr) ?
			NLMSG_ALIGN(e->msg.nlmsg_len) - sizeof(struct nlmsghdr) : 0;
	while (off + NLA_HDRLEN <= nlh->nlmsg_len) {
		nla = (const struct nlattr *)((const char *)nlh + off);
		if (nla->nla_len < NLA_HDRLEN || nla->nla_len > nlh->nlmsg_len - off)
			return;
		if ((nla->nla_type & NLA_TYPE_MASK) == NLMSGERR_ATTR_MSG &&
		    nla->nla_len > NLA_HDRLEN) {
			size_t n = nla->nla_len - NLA_HDRLEN;

			if (n >= sizeof(err->msg))
				n = sizeof(err->msg) - 1;
			memcpy(err->msg, (const char *)nla + NLA_HDRLEN, n);
			err->msg[n] = '\0';
			return;
		}
		off += NLA_ALIGN(nla->nla_len);
	}
}

static int send_request(struct smc_nl *nl, const struct nlmsghdr *req)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	ssize_t n;

	do {
		if (nl->backend == SMC_BACKEND_KERNEL)
			n = sendto(nl->fd, req, req->nlmsg_len, 0,
				   (struct sockaddr *)&sa, sizeof(sa));
		else
			n = send(nl->fd, req, req->nlmsg_len, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return (errno == EAGAIN || errno == EWOULDBLOCK) ? -ETIMEDOUT : -errno;
	return n == (ssize_t)req->nlmsg_len ? 0 : -EIO;
}

/* Receive one datagram into a buffer of its size; its length, 0 at EOF, or -errno. */
static ssize_t recv_datagram(struct smc_nl *nl, unsigned char **buf, size_t *cap)
{
	ssize_t n;

	do
		n = recv(nl->fd, NULL, 0, MSG_PEEK | MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return -ETIMEDOUT;
	if (n <= 0)
		return n < 0 ? -errno : 0;
	if ((size_t)n > *cap) {
		unsigned char *p = realloc(*buf, (size_t)n);

		if (!p)
			return -ENOMEM;
		*buf = p;
		*cap = (size_t)n;
	}
	do
		n = recv(nl->fd, *buf, *cap, 0);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

enum batch_state { BATCH_MORE, BATCH_DONE, BATCH_RESTART };

/* Sort the messages of one datagram into the reply; sets *rc on NLMSG_ERROR. */
static enum batch_state take_batch(struct smc_nl *nl, const unsigned char *buf, size_t len,
				   bool dump, struct smc_reply *rep,
				   struct smc_nlerr *err, int *rc)
{
	const struct nlmsghdr *nlh;
	size_t off;

	for (off = 0; off + sizeof(*nlh) <= len; off += NLMSG_ALIGN(nlh->nlmsg_len)) {
		nlh = (const struct nlmsghdr *)(buf + off);
		if (nlh->nlmsg_len < sizeof(*nlh) || nlh->nlmsg_len > len - off) {
			*rc = -EBADMSG;
			return BATCH_DONE;
		}
		if (nlh->nlmsg_seq != nl->seq)
			continue;               /* stale reply of an earlier request */
		if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
			return BATCH_RESTART;
		if (nlh->nlmsg_type == NLMSG_NOOP)
			continue;
		if (nlh->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(nlh);

			if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(int))) {
				*rc = -EBADMSG;
				return BATCH_DONE;
			}
			/* an errno is 1..4095; anything else is not a valid answer */
			*rc = (e->error > 0 || e->error < -4095) ? -EBADMSG : e->error;
			err->error = -*rc;
			if (nlh->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)))
				parse_ext_ack(nlh, err);
			return BATCH_DONE;
		}
		if (nlh->nlmsg_type == NLMSG_DONE) {
			if (dump)
				return BATCH_DONE;
			continue;               /* a doit may answer like a dump, then ack */
		}
		*rc = smc_reply_append(rep, nlh, nlh->nlmsg_len);
		if (*rc)
			return BATCH_DONE;
	}
	return BATCH_MORE;
}

static int transact_once(struct smc_nl *nl, struct nlmsghdr *req,
			 struct smc_reply *rep, struct smc_nlerr *err)
{
	bool dump = (req->nlmsg_flags & NLM_F_DUMP) != 0;
	unsigned char *buf = NULL;
	size_t cap = 0;
	int rc;

	req->nlmsg_seq = ++nl->seq;
	rc = send_request(nl, req);
	if (rc)
		return rc;
	for (;;) {
		ssize_t n = recv_datagram(nl, &buf, &cap);
		enum batch_state st;

		if (n == 0) {
			rc = -ECONNRESET;
			break;
		}
		if (n < 0) {
			rc = (int)n;
			if (rc == -ENOBUFS && dump)
				rc = -EAGAIN;   /* lost messages: ask again */
			break;
		}
		rc = 0;
		st = take_batch(nl, buf, (size_t)n, dump, rep, err, &rc);
		if (st == BATCH_RESTART) {
			rc = -EAGAIN;
			break;
		}
		if (st == BATCH_DONE)
			break;
		if (!dump && !(req->nlmsg_flags & NLM_F_ACK))
			break;                  /* a doit without ack: one batch */
	}
	free(buf);
	return rc;
}

int smc_nl_transact(struct smc_nl *nl, struct nlmsghdr *req,
		    struct smc_reply *rep, struct smc_nlerr *err)
{
	int rc = 0;

	for (int i = 0; i < SMC_NL_RETRIES; i++) {
		memset(err, 0, sizeof(*err));
		rep->len = 0;
		rc = transact_once(nl, req, rep, err);
		if (rc != -EAGAIN || err->error)
			return rc;
	}
	return rc;
}
