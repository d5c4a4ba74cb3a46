/*
 * nldump OUTDIR: record the raw netlink replies of every query the tools
 * make, for the kernel fixtures of the unit tests (tests/fixtures/).
 * Each request is sent as the tools send it; every reply datagram up to and
 * including NLMSG_DONE or NLMSG_ERROR is written, concatenated, to
 * OUTDIR/<name>.bin.  The family ids go to OUTDIR/families.txt.
 * Raw AF_NETLINK, no libraries: built static for the test guest.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/smc.h>
#include <linux/smc_diag.h>
#include <linux/sock_diag.h>

#ifndef AF_SMC
#define AF_SMC 43
#endif
#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

static const char *outdir;
static uint32_t seq = 0x4e4c0000;
static unsigned char rbuf[1 << 17];

static int nl_open(int protocol)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int one = 1;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol);

	if (fd < 0) {
		perror("nldump: socket");
		exit(1);
	}
	/* As lib/nl.c does: extended acks, capped. */
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("nldump: bind");
		exit(1);
	}
	return fd;
}

static void nl_send(int fd, struct nlmsghdr *nlh)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	nlh->nlmsg_seq = ++seq;
	if (sendto(fd, nlh, nlh->nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("nldump: sendto");
		exit(1);
	}
}

/*
 * Receive the datagrams of the reply to the last request into out (or only
 * inspect them when out is NULL), up to the one holding DONE or ERROR.
 * Calls cb for each message when set.  Returns the error of an NLMSG_ERROR
 * (0 for an ack or DONE).
 */
static int nl_recv(int fd, FILE *out, void (*cb)(struct nlmsghdr *nlh, void *arg), void *arg)
{
	for (;;) {
		ssize_t n = recv(fd, rbuf, sizeof(rbuf), 0);
		int end = 0, err = 0;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			perror("nldump: recv");
			exit(1);
		}
		if (out && fwrite(rbuf, 1, (size_t)n, out) != (size_t)n) {
			perror("nldump: write");
			exit(1);
		}
		for (struct nlmsghdr *nlh = (struct nlmsghdr *)rbuf; NLMSG_OK(nlh, (size_t)n);
		     nlh = NLMSG_NEXT(nlh, n)) {
			if (nlh->nlmsg_type == NLMSG_DONE) {
				end = 1;
			} else if (nlh->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(nlh);

				end = 1;
				err = e->error;
			} else if (cb) {
				cb(nlh, arg);
			}
		}
		if (end)
			return err;
	}
}

static FILE *open_out(const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.bin", outdir, name);
	f = fopen(path, "wb");
	if (!f) {
		perror(path);
		exit(1);
	}
	return f;
}

struct req {
	struct nlmsghdr nlh;
	struct genlmsghdr g;
	unsigned char attrs[256];
};

static void family_cb(struct nlmsghdr *nlh, void *arg)
{
	struct genlmsghdr *g = NLMSG_DATA(nlh);
	struct nlattr *a = (struct nlattr *)((char *)g + GENL_HDRLEN);
	int len = (int)nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;

	while (len >= (int)NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len) {
		if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_FAMILY_ID)
			memcpy(arg, (char *)a + NLA_HDRLEN, sizeof(uint16_t));
		len -= NLA_ALIGN(a->nla_len);
		a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
	}
}

static uint16_t resolve(int fd, const char *name)
{
	struct req r;
	struct nlattr *a = (struct nlattr *)r.attrs;
	size_t nlen = strlen(name) + 1;
	uint16_t id = 0;
	int err;

	memset(&r, 0, sizeof(r));
	r.nlh.nlmsg_type = GENL_ID_CTRL;
	r.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	r.g.cmd = CTRL_CMD_GETFAMILY;
	r.g.version = 1;
	a->nla_type = CTRL_ATTR_FAMILY_NAME;
	a->nla_len = NLA_HDRLEN + nlen;
	memcpy(r.attrs + NLA_HDRLEN, name, nlen);
	r.nlh.nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN + NLA_ALIGN(a->nla_len);
	nl_send(fd, &r.nlh);
	err = nl_recv(fd, NULL, family_cb, &id);
	if (err || !id) {
		fprintf(stderr, "nldump: family %s: %s\n", name, strerror(-err));
		exit(1);
	}
	return id;
}

/* A genl dump without attributes, as smc_genl_dump() sends it. */
static void genl_dump(int fd, uint16_t family, uint8_t cmd, const char *name)
{
	struct req r;
	FILE *f = open_out(name);
	int err;

	memset(&r, 0, sizeof(r));
	r.nlh.nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN;
	r.nlh.nlmsg_type = family;
	r.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP;
	r.g.cmd = cmd;
	r.g.version = 1;
	nl_send(fd, &r.nlh);
	err = nl_recv(fd, f, NULL, NULL);
	fclose(f);
	if (err)
		fprintf(stderr, "nldump: %s: %s\n", name, strerror(-err));
}

/* The sock_diag dump of AF_SMC sockets, as lib/diag.c builds it. */
static void diag_dump(uint8_t ext, const char *name)
{
	struct {
		struct nlmsghdr nlh;
		struct smc_diag_req req;
	} r;
	int fd = nl_open(NETLINK_SOCK_DIAG);
	FILE *f = open_out(name);
	int err;

	memset(&r, 0, sizeof(r));
	r.nlh.nlmsg_len = NLMSG_LENGTH(sizeof(r.req));
	r.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	r.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ROOT;
	r.req.diag_family = AF_SMC;
	r.req.diag_ext = ext;
	nl_send(fd, &r.nlh);
	err = nl_recv(fd, f, NULL, NULL);
	fclose(f);
	close(fd);
	if (err)
		fprintf(stderr, "nldump: %s: %s\n", name, strerror(-err));
}

int main(int argc, char **argv)
{
	static const struct { uint8_t cmd; const char *name; } gen[] = {
		{ SMC_NETLINK_GET_SYS_INFO, "sys_info" },
		{ SMC_NETLINK_GET_LGR_SMCR, "lgr_smcr" },
		{ SMC_NETLINK_GET_LINK_SMCR, "link_smcr" },
		{ SMC_NETLINK_GET_LGR_SMCD, "lgr_smcd" },
		{ SMC_NETLINK_GET_DEV_SMCD, "dev_smcd" },
		{ SMC_NETLINK_GET_DEV_SMCR, "dev_smcr" },
		{ SMC_NETLINK_GET_STATS, "stats" },
		{ SMC_NETLINK_GET_FBACK_STATS, "fback_stats" },
		{ SMC_NETLINK_DUMP_UEID, "ueid" },
		{ SMC_NETLINK_DUMP_SEID, "seid" },
	};
	uint16_t pnet_id, gen_id;
	char path[4096];
	FILE *f;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: nldump OUTDIR\n");
		return 2;
	}
	outdir = argv[1];
	fd = nl_open(NETLINK_GENERIC);
	pnet_id = resolve(fd, "SMC_PNETID");
	gen_id = resolve(fd, SMC_GENL_FAMILY_NAME);
	snprintf(path, sizeof(path), "%s/families.txt", outdir);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		return 1;
	}
	fprintf(f, "%s %u\n%s %u\n", "SMC_PNETID", pnet_id, SMC_GENL_FAMILY_NAME, gen_id);
	fclose(f);

	genl_dump(fd, pnet_id, SMC_PNETID_GET, "pnet");
	for (size_t i = 0; i < sizeof(gen) / sizeof(gen[0]); i++)
		genl_dump(fd, gen_id, gen[i].cmd, gen[i].name);
	close(fd);
	diag_dump(0x1f, "diag");
	return 0;
}
