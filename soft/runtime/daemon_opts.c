/* Command line of smc_softd. */
#include "daemon.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer_msg.h"
#include "version.h"

enum { OPT_ROCE = 0x100, OPT_SYSLOG, OPT_SYSFS, OPT_PEER_PORT, OPT_SETTINGS };

static const struct option long_opts[] = {
	{ "foreground", no_argument, NULL, 'f' },
	{ "socket", required_argument, NULL, 's' },
	{ "pidfile", required_argument, NULL, 'p' },
	{ "roce", required_argument, NULL, OPT_ROCE },
	{ "sysfs", required_argument, NULL, OPT_SYSFS },
	{ "peer-port", required_argument, NULL, OPT_PEER_PORT },
	{ "syslog", no_argument, NULL, OPT_SYSLOG },
	{ "settings", no_argument, NULL, OPT_SETTINGS },
	{ "version", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [ OPTIONS ]\n"
		"\t-h, --help            this message\n"
		"\t-v, --version         show version information\n"
		"\t-f, --foreground      do not detach; log to stderr\n"
		"\t-s, --socket PATH     control socket (default: %s for root,\n"
		"\t                      $XDG_RUNTIME_DIR/smc_soft/control for other users)\n"
		"\t-p, --pidfile PATH    pid file of the detached daemon\n"
		"\t                      (default: %s next to the socket)\n"
		"\t    --roce NAME=IFACE an emulated RoCE device NAME on interface IFACE,\n"
		"\t                      for tests: it carries no data (repeatable)\n"
		"\t    --sysfs DIR       where sysfs is, for the host's RDMA devices\n"
		"\t                      (default: $SMC_SYSFS_ROOT, else /sys)\n"
		"\t    --peer-port PORT  UDP port where the daemons of connections'\n"
		"\t                      peer hosts are asked (default: %u, 0: off)\n"
		"\t    --syslog          log to syslog also in the foreground\n"
		"\t    --settings        print the settings these options give and exit\n",
		SOFTD_PROG, SOFTD_SOCKET_ROOT, SOFTD_PIDFILE_NAME, SOFT_PEER_PORT);
}

static enum softd_parse usage_error(struct softd_opts *o)
{
	usage(stderr);
	softd_opts_free(o);
	return SOFTD_EXIT_USAGE;
}

enum softd_parse softd_opts_parse(int argc, char **argv, struct softd_opts *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	o->roce = calloc((size_t)argc + 1, sizeof(*o->roce));
	if (!o->roce) {
		fprintf(stderr, "%s: out of memory\n", SOFTD_PROG);
		return SOFTD_EXIT_USAGE;
	}
	argv[0] = (char *)SOFTD_PROG;   /* getopt's messages name the daemon */
	while ((c = getopt_long(argc, argv, "fs:p:vh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			o->foreground = true;
			break;
		case 's':
			o->socket = optarg;
			break;
		case 'p':
			o->pidfile = optarg;
			break;
		case OPT_ROCE:
			o->roce[o->n_roce++] = optarg;
			break;
		case OPT_SYSFS:
			o->sysfs = optarg;
			break;
		case OPT_PEER_PORT:
			o->peer_port = optarg;
			break;
		case OPT_SYSLOG:
			o->syslog = true;
			break;
		case OPT_SETTINGS:
			o->settings = true;
			break;
		case 'v':
			printf("%s utility, smc-tools-%s\n", SOFTD_PROG, SMC_TOOLS_RELEASE);
			softd_opts_free(o);
			return SOFTD_EXIT_OK;
		case 'h':
			usage(stdout);
			softd_opts_free(o);
			return SOFTD_EXIT_OK;
		default:
			return usage_error(o);
		}
	}
	if (!o->sysfs)
		o->sysfs = getenv("SMC_SYSFS_ROOT");
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", SOFTD_PROG, argv[optind]);
		return usage_error(o);
	}
	return SOFTD_RUN;
}

void softd_opts_free(struct softd_opts *o)
{
	free(o->roce);
	o->roce = NULL;
	o->n_roce = 0;
}
