/* smc_pnet: show, add, delete and flush the PNET table (family SMC_PNETID). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genl.h"
#include "ifname.h"
#include "names.h"
#include "output.h"
#include "pnet.h"
#include "smc_uapi.h"
#include "util.h"
#include "version.h"

enum pnet_cmd { CMD_NONE, CMD_ADD = SMC_PNETID_ADD, CMD_DEL = SMC_PNETID_DEL,
		CMD_GET = SMC_PNETID_GET, CMD_FLUSH = SMC_PNETID_FLUSH };

struct pnet_args {
	enum pnet_cmd cmd;
	const char *pnetid;      /* as typed */
	char id[PNET_ID_MAX + 1];/* validated, upper case */
	const char *eth;
	const char *ib;
	const char *port_text;
	unsigned int port;
	bool json;
};

static const char *prog;

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [ OPTIONS ] [pnetid]\n"
		"\t-h, --help            this message\n"
		"\t-v, --version         show version information\n"
		"\t-a, --add             add a pnetid entry, requires interface or ib/ism device\n"
		"\t-d, --delete          delete a pnetid entry\n"
		"\t-s, --show            show a pnetid entry\n"
		"\t-f, --flush           flush the complete pnet table\n"
		"\t-I, --interface       Ethernet interface name of a pnetid entry\n"
		"\t-D, --ibdevice        Infiniband/ISM device name of a pnetid entry\n"
		"\t-P, --ibport          Infiniband device port (default: 1)\n"
		"\t-j, --json            show the table as one JSON document\n"
		"\t\n"
		"\tno OPTIONS            show complete pnet table\n", prog);
}

static void usage_error(const char *fmt, const char *arg)
{
	if (fmt) {
		fprintf(stderr, fmt, prog, arg);
		fputc('\n', stderr);
	}
	usage(stderr);
	exit(1);
}

static void set_cmd(struct pnet_args *a, enum pnet_cmd cmd)
{
	if (a->cmd != CMD_NONE)
		usage_error(NULL, NULL);
	a->cmd = cmd;
}

static void parse_options(int argc, char **argv, struct pnet_args *a)
{
	static const struct option opts[] = {
		{ "add", no_argument, NULL, 'a' },
		{ "delete", no_argument, NULL, 'd' },
		{ "show", no_argument, NULL, 's' },
		{ "flush", no_argument, NULL, 'f' },
		{ "interface", required_argument, NULL, 'I' },
		{ "ibdevice", required_argument, NULL, 'D' },
		{ "ibport", required_argument, NULL, 'P' },
		{ "json", no_argument, NULL, 'j' },
		{ "version", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "I:D:P:fasdhvj", opts, NULL)) != -1) {
		switch (c) {
		case 'a': set_cmd(a, CMD_ADD); break;
		case 'd': set_cmd(a, CMD_DEL); break;
		case 's': set_cmd(a, CMD_GET); break;
		case 'f': set_cmd(a, CMD_FLUSH); break;
		case 'I': a->eth = optarg; break;
		case 'D': a->ib = optarg; break;
		case 'j': a->json = true; break;
		case 'P':
			a->port_text = optarg;
			if (pnet_parse_port(optarg, &a->port))
				usage_error("%s invalid ib port:%s", optarg);
			break;
		case 'v':
			printf("%s utility, smc-tools-%s\n", prog, SMC_TOOLS_RELEASE);
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage_error(NULL, NULL);
		}
	}
}

/* The value escaped: a control byte in it must not reach the terminal raw. */
static void invalid(const char *what, const char *value, const char *why)
{
	char *esc = smc_name_escape(value);

	fprintf(stderr, "%s: invalid %s '%s': %s\n", prog, what, esc ? esc : value, why);
	free(esc);
	exit(1);
}

/* Checks after option scanning, in upstream's order, plus our own validation. */
static void check_args(int argc, char **argv, struct pnet_args *a)
{
	const char *why;

	if (argc - optind > 1)
		usage_error("%s too many parameters", NULL);
	if (argc - optind == 1)
		a->pnetid = argv[optind];
	if (a->pnetid && a->cmd == CMD_NONE)
		usage_error("%s: parameters without option", NULL);
	if (a->cmd == CMD_NONE)
		a->cmd = CMD_GET;
	if (a->cmd == CMD_FLUSH && a->pnetid)
		usage_error("%s: -f takes no parameters", NULL);
	if (a->cmd == CMD_ADD && !a->eth && !a->ib)
		usage_error("%s: interface or device missing", NULL);
	if ((a->cmd == CMD_ADD || a->cmd == CMD_DEL) && !a->pnetid)
		usage_error("%s: pnetid missing", NULL);
	if (a->pnetid && pnet_check_id(a->pnetid, a->id, &why))
		invalid("PNET ID", a->pnetid, why);
	if (a->cmd == CMD_ADD) {
		if (a->eth && pnet_check_ifname(a->eth, &why))
			invalid("interface name", a->eth, why);
		if (a->ib && pnet_check_ibname(a->ib, &why))
			invalid("device name", a->ib, why);
		if (!a->port)
			a->port = 1;
		return;
	}
	if (a->cmd == CMD_GET || a->cmd == CMD_DEL) {
		if (a->eth)
			fprintf(stderr, "%s: interface %s ignored\n", prog, a->eth);
		if (a->ib)
			fprintf(stderr, "%s: device %s ignored\n", prog, a->ib);
		if (a->port)
			fprintf(stderr, "%s: ibport %u ignored\n", prog, a->port);
	}
}

struct show_state {
	struct smc_out out;
	bool bad;
};

static int show_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct show_state *st = arg;
	struct pnet_entry e;

	if (pnet_parse(nlh, &e)) {
		st->bad = true;
		return 1;
	}
	pnet_print(&st->out, &e);
	return 0;
}

static struct nl_msg *build_request(struct smc_genl *g, const struct pnet_args *a)
{
	int flags = (a->cmd == CMD_GET && !a->pnetid) ? NLM_F_DUMP : 0;
	struct nl_msg *msg = smc_genl_msg(g, (uint8_t)a->cmd, flags);
	int rc = 0;

	if (!msg)
		return NULL;
	if (a->cmd == CMD_ADD) {
		if (a->eth)
			rc |= nla_put_string(msg, SMC_PNETID_ETHNAME, a->eth);
		if (a->ib) {
			rc |= nla_put_string(msg, SMC_PNETID_IBNAME, a->ib);
			rc |= nla_put_u8(msg, SMC_PNETID_IBPORT, (uint8_t)a->port);
		}
	}
	if (a->pnetid && a->cmd != CMD_FLUSH)
		rc |= nla_put_string(msg, SMC_PNETID_NAME, a->id);
	if (rc) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

static int run(struct smc_genl *g, const struct pnet_args *a)
{
	struct show_state st = { .out = { .f = stdout } };
	struct smc_held held = { 0 };
	struct smc_json json;
	int rc;

	if (a->cmd == CMD_GET && a->json) {
		/* the document goes out once the request succeeded */
		json_init(&json, held_open(&held) ? held.f : stdout);
		st.out.j = &json;
		out_doc_begin(&st.out, "pnet");
	}
	rc = smc_genl_request(g, build_request(g, a), a->cmd == CMD_GET ? show_cb : NULL, &st);
	if (st.out.j) {
		out_doc_end(&st.out);
		held_close(&held, stdout, !rc && !st.bad);
	}
	/* Old kernels answer ENOENT when flushing an empty table: not an error. */
	if (a->cmd == CMD_FLUSH && rc == -ENOENT)
		rc = 0;
	if (st.bad) {
		fprintf(stderr, "%s: invalid data returned\n", prog);
		return 1;
	}
	if (rc) {
		fprintf(stderr, "%s: %s\n", prog, smc_nl_errtext(rc));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct pnet_args a = { .cmd = CMD_NONE };
	struct smc_genl g;
	bool open_failed;
	int rc;

	prog = smc_basename(argv[0]);
	parse_options(argc, argv, &a);
	check_args(argc, argv, &a);
	rc = smc_genl_open(&g, SMCR_GENL_FAMILY_NAME, &open_failed);
	if (rc) {
		char line[512];

		if (open_failed)
			smc_nl_open_strerror(&g.nl, rc, line, sizeof(line));
		else if (rc == -ENOENT)
			snprintf(line, sizeof(line), "SMC module not loaded");
		else
			snprintf(line, sizeof(line), "%s", smc_nl_errtext(rc));
		fprintf(stderr, "%s: %s\n", prog, line);
		smc_genl_close(&g);
		return 1;
	}
	rc = run(&g, &a);
	smc_genl_close(&g);
	return rc;
}
