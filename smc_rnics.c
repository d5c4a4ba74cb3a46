/* smc_rnics: list RDMA NICs and ISM devices, enable or disable PCI functions by FID. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "rnics/rnics.h"
#include "util.h"
#include "version.h"

static const char *prog = "smc_rnics";

static void usage(void)
{
	printf("\n"
	       "Usage: %s [ OPTIONS ] [ FID ]\n"
	       "\n"
	       "List RNICs\n"
	       "\n"
	       "   -a, --all            include disabled devices in output\n"
	       "   -d, --disable <FID>  disable the specified FID\n"
	       "   -D, --dibs           display the DIBS devices (ISM, loopback)\n"
	       "   -e, --enable <FID>   enable the specified FID\n"
	       "   -h, --help           display this message\n"
	       "   -I, --IB-dev         display IB-dev instead of netdev attributes\n"
	       "   -j, --json           display the list as one JSON document\n"
	       "   -r, --rawids         display 'type' as raw vendor/device IDs\n"
	       "   -v, --version        display version info\n"
	       "\n", prog);
}

struct args {
	struct rnics_opts o;
	char first;             /* the first of -h/-v */
	char power;             /* 'e', 'd' or 0: the last of them */
	const char *power_fid;
	const char *fid;        /* the first positional FID */
	const char *extra;      /* a second positional word: an error */
};

static void parse(int argc, char **argv, struct args *a)
{
	static const struct option lopts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "enable", required_argument, NULL, 'e' },
		{ "disable", required_argument, NULL, 'd' },
		{ "dibs", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ "IB-dev", no_argument, NULL, 'I' },
		{ "json", no_argument, NULL, 'j' },
		{ "rawids", no_argument, NULL, 'r' },
		{ "version", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "hIrvae:d:jD", lopts, NULL)) != -1) {
		switch (c) {
		case 'a': a->o.all = true; break;
		case 'I': a->o.ib = true; break;
		case 'r': a->o.raw = true; break;
		case 'j': a->o.json = true; break;
		case 'D': a->o.dibs = true; break;
		case 'e':
		case 'd':
			a->power = (char)c;
			a->power_fid = optarg;
			break;
		case 'h':
		case 'v':
			if (!a->first)
				a->first = (char)c;
			break;
		default:
			exit(2);
		}
	}
	if (optind < argc)
		a->fid = argv[optind++];
	if (optind < argc)
		a->extra = argv[optind];
}

static unsigned long check_fid(const char *s)
{
	unsigned long fid;

	if (rnics_parse_fid(s, &fid)) {
		fprintf(stderr, "Error: '%s' is not a valid FID\n", rnics_fid_text(s));
		exit(3);
	}
	return fid;
}

static int hotplug(const struct args *a)
{
	unsigned long fid = check_fid(a->power_fid);
	bool on = a->power == 'e';

	switch (rnics_set_power(fid, on)) {
	case RNICS_POWER_OK:
		return 0;
	case RNICS_POWER_NOFID:
		fprintf(stderr, "Error: FID %lx does not exist\n", fid);
		return 5;
	case RNICS_POWER_SAME:
		fprintf(stderr, "Error: FID %lx is already %s\n", fid, on ? "enabled" : "disabled");
		return 6;
	default:
		fprintf(stderr, "Error: Failed to %s FID %lx\n", on ? "enable" : "disable", fid);
		return 7;
	}
}

/* s390 lists PCI functions by FID; elsewhere (or SMC_RNICS_ARCH=x86_64) RDMA devices. */
static bool is_s390(void)
{
	const char *arch = getenv("SMC_RNICS_ARCH");
	struct utsname u;

	if (!arch || !*arch)
		arch = uname(&u) ? "" : u.machine;
	return !strcmp(arch, "s390x") || !strcmp(arch, "s390");
}

/* The table's rows (rc: 0, or nonzero when they could not all be made), then its exit status. */
static int print_rows(struct rnics_table *t, const struct args *a, int rc)
{
	if (rc) {
		fprintf(stderr, "%s: out of memory\n", prog);
		rnics_table_free(t);
		return 1;
	}
	rnics_table_print(t, stdout, a->o.json);
	/* Upstream exits 8 for every FID filter; only an unmatched one is an error. */
	rc = a->o.have_fid && !t->n ? 8 : 0;
	rnics_table_free(t);
	return rc;
}

/* -D: the DIBS devices, on any architecture; not the soft backend's (it has none). */
static int list_dibs(const struct args *a)
{
	struct rnics_table t;

	rnics_table_init(&t, &rnics_dibs);
	return print_rows(&t, a, rnics_dibs_rows(&t, &a->o));
}

static int list(const struct args *a)
{
	const struct rnics_layout *lay;
	struct rnics_table t;
	struct rnics_pnet pnet;
	bool s390 = is_s390();
	int rc;

	if (!s390)
		lay = &rnics_rdma;
	else if (a->o.ib)
		lay = a->o.raw ? &rnics_s390_ib_raw : &rnics_s390_ib;
	else
		lay = a->o.raw ? &rnics_s390_net_raw : &rnics_s390_net;
	rnics_table_init(&t, lay);
	rnics_pnet_load(&pnet);
	rc = s390 ? rnics_s390_rows(&t, &a->o, &pnet, stderr) : rnics_rdma_rows(&t, &a->o, &pnet);
	if (!rc)
		rc = rnics_soft_rows(&t, &a->o);
	rnics_pnet_free(&pnet);
	return print_rows(&t, a, rc);
}

int main(int argc, char **argv)
{
	struct args a = { .first = 0 };

	prog = smc_basename(argv[0]);
	parse(argc, argv, &a);
	if (a.first == 'h') {
		usage();
		return 0;
	}
	if (a.first == 'v') {
		printf("%s utility, smc-tools-%s\n", prog, SMC_TOOLS_RELEASE);
		return 0;
	}
	if (a.power) {
		if (a.fid) {
			usage();
			return 4;
		}
		return hotplug(&a);
	}
	if (a.extra) {
		fprintf(stderr, "%s: listing FID %s: extra argument '%s' (at most one FID)\n",
			prog, a.fid, a.extra);
		return 2;
	}
	if (a.fid) {
		a.o.have_fid = true;
		a.o.fid = check_fid(a.fid);
	}
	return a.o.dibs ? list_dibs(&a) : list(&a);
}
