/* smcss: list SMC sockets (sock_diag for AF_SMC). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "nl.h"
#include "smcss_print.h"
#include "util.h"
#include "version.h"

static const char *prog = "smcss";

static const struct option long_opts[] = {
	{ "all",       no_argument, NULL, 'a' },
	{ "listening", no_argument, NULL, 'l' },
	{ "debug",     no_argument, NULL, 'd' },
	{ "smcd",      no_argument, NULL, 'D' },
	{ "smcr",      no_argument, NULL, 'R' },
	{ "wide",      no_argument, NULL, 'W' },
	{ "json",      no_argument, NULL, 'j' },
	{ "version",   no_argument, NULL, 'v' },
	{ "help",      no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [ OPTIONS ]\n"
		"\t-h, --help          this message\n"
		"\t-v, --version       show version information\n"
		"\t-a, --all           show all sockets\n"
		"\t-l, --listening     show listening sockets\n"
		"\t-d, --debug         show debug socket information\n"
		"\t-W, --wide          do not truncate IP addresses\n"
		"\t-D, --smcd          show detailed SMC-D information (shows only SMC-D sockets)\n"
		"\t-R, --smcr          show detailed SMC-R information (shows only SMC-R sockets)\n"
		"\t-j, --json          print one JSON document instead of the table\n"
		"\tno OPTIONS          show all connected sockets\n",
		prog);
}

static void __attribute__((noreturn)) usage_error(const char *msg)
{
	if (msg)
		fprintf(stderr, "%s\n", msg);
	usage(stderr);
	exit(EXIT_FAILURE);
}

/* Upstream's combination checks, in upstream's order. */
static void check_combinations(const struct smcss_opts *o)
{
	if (o->smcd && o->smcr)
		usage_error("--smcd together with --smcr is not supported");
	if (o->listening && o->debug)
		usage_error("--listening together with --debug is not supported");
	if (o->listening && o->all)
		usage_error("--listening together with --all is not supported");
	if (o->listening && o->smcr)
		usage_error("--listening together with --smcr is not supported");
	if (o->listening && o->smcd)
		usage_error("--listening together with --smcd is not supported");
}

static void parse_args(int argc, char **argv, struct smcss_opts *o)
{
	int ch;

	while ((ch = getopt_long(argc, argv, "aldDRhvWj", long_opts, NULL)) != -1) {
		switch (ch) {
		case 'a': o->all = true; break;
		case 'l': o->listening = true; break;
		case 'd': o->debug = true; break;
		case 'D': o->smcd = true; break;
		case 'R': o->smcr = true; break;
		case 'W': o->wide = true; break;
		case 'j': o->json = true; break;
		case 'v':
			printf("smcss utility, smc-tools-%s\n", SMC_TOOLS_RELEASE);
			exit(EXIT_SUCCESS);
		case 'h':
			usage(stdout);
			exit(EXIT_SUCCESS);
		default:
			usage_error(NULL);
		}
	}
	check_combinations(o);
}

static void print_dump_error(int rc, const struct smc_nlerr *err)
{
	const char *why;

	if (err->error)
		why = strerror(err->error);
	else if (rc == -EBADMSG)
		why = "invalid data returned";
	else
		why = strerror(-rc);
	fprintf(stderr, "%s: cannot dump SMC sockets: %s\n", prog, why);
}

/*
 * The header goes out before the dump, as upstream does.  A JSON document is
 * held back until the dump has succeeded, so a failure never leaves half of
 * one on stdout.
 */
static int list_sockets(struct smc_nl *nl, const struct smcss_opts *o)
{
	struct smcss_printer p;
	struct smc_nlerr err;
	char *doc = NULL;
	size_t len = 0;
	FILE *f = stdout;
	int rc;

	if (o->json && !(f = open_memstream(&doc, &len))) {
		fprintf(stderr, "%s: %s\n", prog, strerror(errno));
		return -ENOMEM;
	}
	smcss_print_header(o, stdout);
	smcss_begin(&p, o, f);
	rc = smc_diag_dump(nl, smcss_ext_mask(o), smcss_print_sock, &p, &err);
	smcss_end(&p);
	if (o->json) {
		fclose(f);
		if (!rc)
			fwrite(doc, 1, len, stdout);
		free(doc);
	}
	if (rc)
		print_dump_error(rc, &err);
	return rc;
}

int main(int argc, char **argv)
{
	struct smcss_opts o = { 0 };
	struct smc_nl nl;
	char line[512];
	int rc;

	if (argc > 0 && argv[0])
		prog = smc_basename(argv[0]);
	parse_args(argc, argv, &o);
	rc = smc_nl_open(&nl, NETLINK_SOCK_DIAG);
	if (rc) {
		smc_nl_open_strerror(&nl, rc, line, sizeof(line));
		fprintf(stderr, "%s: %s\n", prog, line);
		return EXIT_FAILURE;
	}
	rc = list_sockets(&nl, &o);
	smc_nl_close(&nl);
	return rc ? EXIT_FAILURE : EXIT_SUCCESS;
}
