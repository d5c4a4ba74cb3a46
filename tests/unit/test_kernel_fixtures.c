/*
 * Real kernel bytes on every make check: the raw netlink replies that
 * tests/vm/nldump recorded in a 6.12 guest (tests/fixtures/kernel-6.12/, see
 * its README) go through our parsers and formatters, the same code paths and
 * options the tools use, and must print exactly what the real tools printed
 * in the guest at the same moment (<name>.txt beside the dumps).
 *
 * Paths are relative to the repository top (tests run from there); $SMC_TOP
 * names it otherwise.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "fixture.h"
#include "genl.h"
#include "diag.h"
#include "pnet.h"
#include "smcss_print.h"
#include "smc/info.h"
#include "smc/stats.h"
#include "smc_uapi.h"

/*
 * Netlink is in the host's byte order, so a recording serves only hosts of
 * its own: kernel-6.12 is x86_64's (little-endian); a big-endian host (IBM Z)
 * reads kernel-6.12-s390x, recorded in s390x guests (the README beside
 * them).  Swapping one into the other would need every attribute's type
 * and every sock_diag structure, the parsers' own assumptions: a real
 * big-endian kernel's bytes test those instead.
 */
static const char *fixdir(void)
{
	const uint16_t one = 1;

	return *(const uint8_t *)&one ? "tests/fixtures/kernel-6.12" : "tests/fixtures/kernel-6.12-s390x";
}

static const char *const scenarios[] = { "s1", "s2-server", "s2-client" };
#define NSCEN (sizeof(scenarios) / sizeof(scenarios[0]))

/* The dumps nldump writes (genl ones by command; "diag" is sock_diag). */
static const char *const dumps[] = {
	"pnet", "sys_info", "lgr_smcr", "link_smcr", "lgr_smcd", "dev_smcd",
	"dev_smcr", "stats", "fback_stats", "ueid", "seid", "diag",
};
#define NDUMPS (sizeof(dumps) / sizeof(dumps[0]))

struct blob {
	unsigned char *buf;
	size_t len;
};

/* Read a fixture file whole (NUL-terminated); false when it cannot be read. */
static bool load(const char *scen, const char *name, struct blob *b)
{
	const char *top = getenv("SMC_TOP");
	char path[4096];
	FILE *f;
	long n;

	memset(b, 0, sizeof(*b));
	snprintf(path, sizeof(path), "%s/%s/%s", fixdir(), scen, name);
	f = fopen(path, "rb");
	if (!f && top && *top) {
		snprintf(path, sizeof(path), "%s/%s/%s/%s", top, fixdir(), scen, name);
		f = fopen(path, "rb");
	}
	if (!f) {
		unit_fail(__FILE__, __LINE__, "cannot open fixture %s/%s/%s (run from the top or set SMC_TOP; "
			  "tests/fixtures/kernel-6.12/README.md says how to record one)", fixdir(), scen, name);
		return false;
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	b->buf = malloc((size_t)(n > 0 ? n : 0) + 1);
	b->len = fread(b->buf, 1, (size_t)(n > 0 ? n : 0), f);
	b->buf[b->len] = '\0';
	fclose(f);
	return true;
}

static void blob_free(struct blob *b)
{
	free(b->buf);
	b->buf = NULL;
}

/*
 * Call fn for each message of the concatenated reply datagrams, DONE and
 * ERROR included.  Returns 0 when the framing is intact and the reply ends
 * with NLMSG_DONE or an ack; -EBADMSG or the error of an NLMSG_ERROR.
 */
static int each_msg(const struct blob *b, void (*fn)(const struct nlmsghdr *h, void *arg), void *arg)
{
	size_t off = 0;
	int end = 0;

	while (off < b->len) {
		const struct nlmsghdr *h = (const struct nlmsghdr *)(b->buf + off);

		if (end || b->len - off < NLMSG_HDRLEN || h->nlmsg_len < NLMSG_HDRLEN ||
		    h->nlmsg_len > b->len - off)
			return -EBADMSG;
		if (fn)
			fn(h, arg);
		if (h->nlmsg_type == NLMSG_DONE) {
			end = 1;
		} else if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(h);

			if (h->nlmsg_len < NLMSG_LENGTH(sizeof(int)))
				return -EBADMSG;
			if (e->error)
				return e->error;
			end = 1;
		}
		off += NLMSG_ALIGN(h->nlmsg_len);
	}
	return end ? 0 : -EBADMSG;
}

struct to_reply {
	struct smc_reply *rep;
	int rc;
};

static void append_cb(const struct nlmsghdr *h, void *arg)
{
	struct to_reply *t = arg;

	/* As the transport does: DONE and acks are not part of the reply. */
	if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR)
		return;
	if (smc_reply_append(t->rep, h, h->nlmsg_len))
		t->rc = -EBADMSG;
}

/* The reply of dump name in scen, as smc_nl_transact would collect it. */
static bool load_reply(const char *scen, const char *name, struct smc_reply *rep)
{
	struct to_reply t = { rep, 0 };
	char file[64];
	struct blob b;
	int rc;

	snprintf(file, sizeof(file), "%s.bin", name);
	if (!load(scen, file, &b))
		return false;
	rc = each_msg(&b, append_cb, &t);
	blob_free(&b);
	if (rc || t.rc) {
		unit_fail(__FILE__, __LINE__, "%s/%s: bad reply (%d, %d)", scen, file, rc, t.rc);
		return false;
	}
	return true;
}

struct queue {
	struct peer *p;
	int n;
};

static void queue_cb(const struct nlmsghdr *h, void *arg)
{
	struct queue *q = arg;
	unsigned char buf[65536];
	struct nlmsghdr *m = (struct nlmsghdr *)buf;

	if (h->nlmsg_len > sizeof(buf))
		return;
	memcpy(buf, h, h->nlmsg_len);
	m->nlmsg_seq = q->p->g.nl.seq + (uint32_t)q->n;
	send(q->p->fd, buf, m->nlmsg_len, 0);
}

/* Queue the recorded reply of dump name (DONE included) for the n-th next request. */
static bool queue_reply(struct fx *f, const char *scen, const char *name, int n)
{
	struct queue q = { &f->p, n };
	char file[64];
	struct blob b;
	int rc;

	snprintf(file, sizeof(file), "%s.bin", name);
	if (!load(scen, file, &b))
		return false;
	rc = each_msg(&b, queue_cb, &q);
	blob_free(&b);
	CHECK_INT(rc, 0);
	return rc == 0;
}

/* What the tool printed (stdout and stderr) must be what the guest's tool printed. */
static void expect_text(const char *scen, const char *txt, const char *out, const char *err)
{
	struct blob want;
	char *got;

	if (!load(scen, txt, &want))
		return;
	got = malloc(strlen(out) + strlen(err) + 1);
	strcpy(got, out);
	strcat(got, err);
	if (strcmp(got, (char *)want.buf))
		unit_fail(__FILE__, __LINE__, "%s/%s:\n--- got ---\n%s--- expected ---\n%s",
			  scen, txt, got, (char *)want.buf);
	free(got);
	blob_free(&want);
}

/* Guest interfaces: lo is 1, eth0 2 (the only ones the VMs have). */
static char *guest_ifname(unsigned int ifindex, char *name)
{
	if (ifindex == 1)
		snprintf(name, IF_NAMESIZE, "lo");
	else if (ifindex == 2)
		snprintf(name, IF_NAMESIZE, "eth0");
	else
		return NULL;
	return name;
}

static void fx_guest(struct fx *f, bool smcd, int level, bool peer)
{
	if (peer)
		fx_init_peer(f, smcd);
	else
		fx_init(f, smcd, 0);
	f->ctx.level = level;
	smc_set_ifname_fn(guest_ifname);
}

static void fx_expect(struct fx *f, const char *scen, const char *txt)
{
	const char *out = cap_text(&f->out);
	char *o = strdup(out ? out : "");

	expect_text(scen, txt, o, cap_text(&f->err));
	free(o);
}

/* ---- every fixture parses ------------------------------------------------ */

static int count_cb(const struct nlmsghdr *nlh, void *arg)
{
	(void)nlh;
	(*(int *)arg)++;
	return 0;
}

static int diag_cb(const struct smc_diag_sock *s, void *arg)
{
	(void)s;
	(*(int *)arg)++;
	return 0;
}

TEST(kernel_fixture_parse_all)
{
	for (size_t s = 0; s < NSCEN; s++) {
		const char *scen = scenarios[s];
		struct blob b;

		if (load(scen, "families.txt", &b)) {
			CHECK(strstr((char *)b.buf, "SMC_PNETID ") != NULL);
			CHECK(strstr((char *)b.buf, "SMC_GEN_NETLINK ") != NULL);
			blob_free(&b);
		}
		if (load(scen, "uname.txt", &b)) {
			CHECK(strncmp((char *)b.buf, "6.12.", 5) == 0);
			CHECK(strstr((char *)b.buf, strstr(fixdir(), "s390x") ? "-s390x" : "-amd64") != NULL);
			blob_free(&b);
		}
		for (size_t d = 0; d < NDUMPS; d++) {
			struct smc_reply rep;
			int n = 0;

			smc_reply_init(&rep);
			if (!load_reply(scen, dumps[d], &rep)) {
				smc_reply_free(&rep);
				continue;
			}
			if (!strcmp(dumps[d], "diag")) {
				CHECK_INT(smc_diag_walk(&rep, diag_cb, &n), 0);
			} else {
				CHECK_INT(smc_genl_walk(&rep, count_cb, &n), 0);
			}
			for (struct nlmsghdr *h = smc_reply_next(&rep, NULL); h; h = smc_reply_next(&rep, h)) {
				if (!strcmp(dumps[d], "pnet")) {
					struct pnet_entry e;

					CHECK_INT(pnet_parse(h, &e), 0);
				} else if (!strcmp(dumps[d], "sys_info")) {
					struct sys_info si = { 0 };

					CHECK_INT(smc_info_parse(h, &si), 1);
				} else if (!strcmp(dumps[d], "diag")) {
					struct smc_diag_sock sk;

					CHECK_INT(smc_diag_parse(h, &sk), 0);
				}
			}
			smc_reply_free(&rep);
		}
	}
}

/* ---- smcss --------------------------------------------------------------- */

static void smcss_case(const char *scen, const struct smcss_opts *o, const char *txt)
{
	struct smc_reply rep;
	struct capture c;

	smc_reply_init(&rep);
	if (load_reply(scen, "diag", &rep)) {
		cap_open(&c);
		CHECK_INT(smcss_print_reply(&rep, o, c.f), 0);
		expect_text(scen, txt, cap_text(&c), "");
		cap_free(&c);
	}
	smc_reply_free(&rep);
}

TEST(kernel_fixture_smcss)
{
	for (size_t s = 0; s < NSCEN; s++) {
		smcss_case(scenarios[s], &(struct smcss_opts){ .all = true, .debug = true }, "smcss_a_d.txt");
		smcss_case(scenarios[s], &(struct smcss_opts){ .all = true, .smcr = true }, "smcss_a_R.txt");
	}
}

/* ---- smc_pnet ------------------------------------------------------------- */

TEST(kernel_fixture_pnet)
{
	for (size_t s = 0; s < NSCEN; s++) {
		struct smc_reply rep;
		struct capture c;

		smc_reply_init(&rep);
		if (load_reply(scenarios[s], "pnet", &rep)) {
			struct smc_out o;

			cap_open(&c);
			o = (struct smc_out){ .f = c.f, .j = NULL };
			for (struct nlmsghdr *h = smc_reply_next(&rep, NULL); h; h = smc_reply_next(&rep, h)) {
				struct pnet_entry e;

				CHECK_INT(pnet_parse(h, &e), 0);
				pnet_print(&o, &e);
			}
			expect_text(scenarios[s], "smc_pnet.txt", cap_text(&c), "");
			cap_free(&c);
		}
		smc_reply_free(&rep);
	}
}

/* ---- smcd|smcr info, ueid, seid: the commands, replies from the recording -- */

TEST(kernel_fixture_info)
{
	for (size_t s = 0; s < NSCEN; s++) {
		for (int smcd = 0; smcd < 2; smcd++) {
			struct fx f;

			fx_guest(&f, smcd, 0, true);
			/* The order smc_info_cmd asks in. */
			if (queue_reply(&f, scenarios[s], "dev_smcd", 1) &&
			    queue_reply(&f, scenarios[s], "dev_smcr", 2) &&
			    queue_reply(&f, scenarios[s], "sys_info", 3)) {
				CHECK_INT(smc_info_cmd(&f.ctx, 0, NULL), 0);
				fx_expect(&f, scenarios[s], smcd ? "smcd_info.txt" : "smcr_info.txt");
			}
			fx_free(&f);
		}
	}
}

TEST(kernel_fixture_ueid)
{
	for (size_t s = 0; s < NSCEN; s++) {
		struct fx f;

		fx_guest(&f, false, 0, true);
		if (queue_reply(&f, scenarios[s], "ueid", 1)) {
			CHECK_INT(fx_call(&f, smc_ueid_cmd, 1, "show"), 0);
			fx_expect(&f, scenarios[s], "smcr_ueid_show.txt");
		}
		fx_free(&f);
	}
}

TEST(kernel_fixture_seid)
{
	for (size_t s = 0; s < NSCEN; s++) {
		struct fx f;

		fx_guest(&f, true, 0, true);
		if (queue_reply(&f, scenarios[s], "seid", 1)) {
			CHECK_INT(fx_call(&f, smc_seid_cmd, 0), 0);
			fx_expect(&f, scenarios[s], "smcd_seid.txt");
		}
		fx_free(&f);
	}
}

/* ---- linkgroup, device: the print steps, on the dump the command asks for -- */

static const char *dump_of(uint8_t cmd)
{
	switch (cmd) {
	case SMC_NETLINK_GET_LGR_SMCR: return "lgr_smcr";
	case SMC_NETLINK_GET_LINK_SMCR: return "link_smcr";
	case SMC_NETLINK_GET_LGR_SMCD: return "lgr_smcd";
	default: return "?";
	}
}

static void linkgroup_case(const char *scen, bool smcd, int level, int argc, char **argv,
			   const char *txt)
{
	struct fx f;

	fx_guest(&f, smcd, level, false);
	CHECK_INT(smc_linkgroup_parse(&f.ctx, argc, argv, &f.lg), 0);
	if (load_reply(scen, dump_of(smc_linkgroup_request(&f.ctx, &f.lg)), &f.rep)) {
		CHECK_INT(smc_linkgroup_print(&f.ctx, &f.lg, &f.rep), 0);
		fx_expect(&f, scen, txt);
	}
	fx_free(&f);
}

TEST(kernel_fixture_linkgroup)
{
	for (size_t s = 0; s < NSCEN; s++) {
		linkgroup_case(scenarios[s], false, SMC_LVL_NONE, 0, NULL, "smcr_linkgroup.txt");
		linkgroup_case(scenarios[s], false, SMC_LVL_DETAILS, 1, (char *[]){ "link-show" },
			       "smcr_d_linkgroup_link-show.txt");
		linkgroup_case(scenarios[s], true, SMC_LVL_NONE, 0, NULL, "smcd_linkgroup.txt");
	}
}

/*
 * No smcr -d linkgroup text was recorded; the 6.12 kernel's link group (s2)
 * carries the SMC-Rv2.1 limits in its LGR_R_V2 nest: 255 connections, 2 links.
 */
TEST(kernel_fixture_linkgroup_v2_1_limits)
{
	static const char *const s2[] = { "s2-server", "s2-client" };

	for (size_t s = 0; s < 2; s++) {
		struct fx f;

		fx_guest(&f, false, SMC_LVL_DETAILS, false);
		CHECK_INT(smc_linkgroup_parse(&f.ctx, 0, NULL, &f.lg), 0);
		if (load_reply(s2[s], "lgr_smcr", &f.rep)) {
			CHECK_INT(smc_linkgroup_print(&f.ctx, &f.lg, &f.rep), 0);
			CHECK(strstr(cap_text(&f.out), "Direct   : Yes\n") != NULL);
			CHECK(strstr(cap_text(&f.out), "Max-Conns: 255\nMax-Links: 2\n#Conns   : 1\n") != NULL);
		}
		fx_free(&f);
	}
}

static void device_case(const char *scen, bool smcd, int level, const char *txt)
{
	struct fx f;

	fx_guest(&f, smcd, level, false);
	CHECK_INT(smc_device_parse(&f.ctx, 0, NULL, &f.dev), 0);
	if (load_reply(scen, smcd ? "dev_smcd" : "dev_smcr", &f.rep)) {
		CHECK_INT(smc_device_print(&f.ctx, &f.dev, &f.rep), 0);
		fx_expect(&f, scen, txt);
	}
	fx_free(&f);
}

TEST(kernel_fixture_device)
{
	for (size_t s = 0; s < NSCEN; s++) {
		device_case(scenarios[s], false, SMC_LVL_DETAILS, "smcr_d_device.txt");
		device_case(scenarios[s], true, SMC_LVL_NONE, "smcd_device.txt");
	}
}

/* ---- stats: smc_stats_run with the dumps from memory ----------------------- */

struct stats_src {
	struct smc_reply stats, fback;
};

static int mem_dump(void *src, uint8_t cmd, smc_msg_cb cb, void *arg)
{
	struct stats_src *s = src;

	if (cmd == SMC_NETLINK_GET_STATS)
		return smc_genl_walk(&s->stats, cb, arg);
	if (cmd == SMC_NETLINK_GET_FBACK_STATS)
		return smc_genl_walk(&s->fback, cb, arg);
	return -EOPNOTSUPP;
}

TEST(kernel_fixture_stats)
{
	static const struct { bool smcd; int level; const char *txt; } cases[] = {
		{ false, SMC_LVL_ABSOLUTE, "smcr_a_stats.txt" },
		{ false, SMC_LVL_DETAILS_ABS, "smcr_a_d_stats.txt" },
		{ true, SMC_LVL_ABSOLUTE, "smcd_a_stats.txt" },
	};

	for (size_t s = 0; s < NSCEN; s++) {
		struct stats_src src;

		smc_reply_init(&src.stats);
		smc_reply_init(&src.fback);
		if (load_reply(scenarios[s], "stats", &src.stats) &&
		    load_reply(scenarios[s], "fback_stats", &src.fback)) {
			for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
				struct fx f;

				fx_guest(&f, cases[i].smcd, cases[i].level, false);
				CHECK_INT(smc_stats_run(&f.ctx, SMC_STATS_SHOW, mem_dump, &src), 0);
				fx_expect(&f, scenarios[s], cases[i].txt);
				fx_free(&f);
			}
		}
		smc_reply_free(&src.stats);
		smc_reply_free(&src.fback);
	}
}

/* ---- JSON of every command on the recorded replies ------------------------
 *
 * The -j outputs of the cases above, rendered by the same code the tools
 * run.  Each must be one JSON document (checked here for its outer shape);
 * with $SMC_JSON_DIR set they are written there as <schema>.<scenario>.<case>.json
 * for tests/cli/json_schema.bats, which validates each against
 * doc/json-schema/<schema>.schema.json.
 */

static void json_keep(const char *schema, const char *scen, const char *name, const char *out)
{
	const char *dir = getenv("SMC_JSON_DIR");
	size_t n = strlen(out);
	char path[4096];
	FILE *f;

	CHECK(n > 2 && out[0] == '{' && out[n - 2] == '}' && out[n - 1] == '\n');
	CHECK(strchr(out, '\n') == out + n - 1);
	if (!dir || !*dir)
		return;
	snprintf(path, sizeof(path), "%s/%s.%s.%s.json", dir, schema, scen, name);
	f = fopen(path, "w");
	if (!f) {
		unit_fail(__FILE__, __LINE__, "cannot write %s", path);
		return;
	}
	fputs(out, f);
	fclose(f);
}

static void json_fx_keep(struct fx *f, const char *schema, const char *scen, const char *name)
{
	const char *out = cap_text(&f->out);

	CHECK_STR(cap_text(&f->err), "");
	json_keep(schema, scen, name, out ? out : "");
}

static void json_smcss(const char *scen, struct smcss_opts o, const char *name)
{
	struct smc_reply rep;
	struct capture c;

	o.json = true;
	smc_reply_init(&rep);
	if (load_reply(scen, "diag", &rep)) {
		cap_open(&c);
		CHECK_INT(smcss_print_reply(&rep, &o, c.f), 0);
		json_keep("smcss", scen, name, cap_text(&c));
		cap_free(&c);
	}
	smc_reply_free(&rep);
}

static void json_pnet(const char *scen)
{
	struct smc_reply rep;
	struct capture c;
	struct smc_json j;

	smc_reply_init(&rep);
	if (load_reply(scen, "pnet", &rep)) {
		struct smc_out o;

		cap_open(&c);
		json_init(&j, c.f);
		o = (struct smc_out){ .f = c.f, .j = &j };
		json_open_object(&j, NULL);
		json_open_array(&j, "pnet");
		for (struct nlmsghdr *h = smc_reply_next(&rep, NULL); h; h = smc_reply_next(&rep, h)) {
			struct pnet_entry e;

			CHECK_INT(pnet_parse(h, &e), 0);
			pnet_print(&o, &e);
		}
		json_close_array(&j);
		json_close_object(&j);
		json_finish(&j);
		json_keep("smc_pnet", scen, "show", cap_text(&c));
		cap_free(&c);
	}
	smc_reply_free(&rep);
}

static void json_info(const char *scen, bool smcd)
{
	struct fx f;

	fx_guest(&f, smcd, 0, true);
	f.ctx.json = true;
	if (queue_reply(&f, scen, "dev_smcd", 1) && queue_reply(&f, scen, "dev_smcr", 2) &&
	    queue_reply(&f, scen, "sys_info", 3)) {
		CHECK_INT(smc_info_cmd(&f.ctx, 0, NULL), 0);
		json_fx_keep(&f, "smc_info", scen, smcd ? "smcd" : "smcr");
	}
	fx_free(&f);
}

static void json_eids(const char *scen)
{
	struct fx f;

	fx_guest(&f, false, 0, true);
	f.ctx.json = true;
	if (queue_reply(&f, scen, "ueid", 1)) {
		CHECK_INT(fx_call(&f, smc_ueid_cmd, 1, "show"), 0);
		json_fx_keep(&f, "smc_ueid", scen, "show");
	}
	fx_free(&f);
	fx_guest(&f, true, 0, true);
	f.ctx.json = true;
	if (queue_reply(&f, scen, "seid", 1)) {
		CHECK_INT(fx_call(&f, smc_seid_cmd, 0), 0);
		json_fx_keep(&f, "smcd_seid", scen, "show");
	}
	fx_free(&f);
}

static void json_linkgroup(const char *scen, bool smcd, int argc, char **argv, const char *name)
{
	struct fx f;

	fx_guest(&f, smcd, SMC_LVL_DETAILS, false);
	f.ctx.json = true;
	CHECK_INT(smc_linkgroup_parse(&f.ctx, argc, argv, &f.lg), 0);
	if (load_reply(scen, dump_of(smc_linkgroup_request(&f.ctx, &f.lg)), &f.rep)) {
		CHECK_INT(smc_linkgroup_print(&f.ctx, &f.lg, &f.rep), 0);
		json_fx_keep(&f, smcd ? "smcd_linkgroup" : "smcr_linkgroup", scen, name);
	}
	fx_free(&f);
}

static void json_device(const char *scen, bool smcd)
{
	struct fx f;

	fx_guest(&f, smcd, SMC_LVL_DETAILS, false);
	f.ctx.json = true;
	CHECK_INT(smc_device_parse(&f.ctx, 0, NULL, &f.dev), 0);
	if (load_reply(scen, smcd ? "dev_smcd" : "dev_smcr", &f.rep)) {
		CHECK_INT(smc_device_print(&f.ctx, &f.dev, &f.rep), 0);
		json_fx_keep(&f, smcd ? "smcd_device" : "smcr_device", scen, "show");
	}
	fx_free(&f);
}

static void json_stats(const char *scen)
{
	static const struct {
		bool smcd;
		enum smc_stats_mode mode;
		const char *schema, *name;
	} cases[] = {
		{ false, SMC_STATS_SHOW, "smc_stats", "smcr" },
		{ true, SMC_STATS_SHOW, "smc_stats", "smcd" },
		{ false, SMC_STATS_JSON, "smc_stats_upstream", "smcr" },
		{ true, SMC_STATS_JSON, "smc_stats_upstream", "smcd" },
	};
	struct stats_src src;

	smc_reply_init(&src.stats);
	smc_reply_init(&src.fback);
	if (load_reply(scen, "stats", &src.stats) && load_reply(scen, "fback_stats", &src.fback)) {
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			struct fx f;

			fx_guest(&f, cases[i].smcd, SMC_LVL_ABSOLUTE, false);
			f.ctx.json = cases[i].mode == SMC_STATS_SHOW;
			CHECK_INT(smc_stats_run(&f.ctx, cases[i].mode, mem_dump, &src), 0);
			json_fx_keep(&f, cases[i].schema, scen, cases[i].name);
			fx_free(&f);
		}
	}
	smc_reply_free(&src.stats);
	smc_reply_free(&src.fback);
}

TEST(kernel_fixture_json)
{
	for (size_t s = 0; s < NSCEN; s++) {
		const char *scen = scenarios[s];

		json_smcss(scen, (struct smcss_opts){ .json = true }, "plain");
		json_smcss(scen, (struct smcss_opts){ .all = true }, "a");
		json_smcss(scen, (struct smcss_opts){ .listening = true }, "l");
		json_smcss(scen, (struct smcss_opts){ .all = true, .debug = true }, "a_d");
		json_smcss(scen, (struct smcss_opts){ .all = true, .smcr = true }, "a_R");
		json_smcss(scen, (struct smcss_opts){ .all = true, .smcd = true }, "a_D");
		json_pnet(scen);
		json_info(scen, false);
		json_info(scen, true);
		json_eids(scen);
		json_linkgroup(scen, false, 0, NULL, "show");
		json_linkgroup(scen, false, 1, (char *[]){ "link-show" }, "link-show");
		json_linkgroup(scen, true, 0, NULL, "show");
		json_device(scen, false);
		json_device(scen, true);
		json_stats(scen);
	}
}
