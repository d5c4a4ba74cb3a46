/* smc_pnet: input validation and the PNET table reply, separate from main() for tests. */
#ifndef SMC_PNET_H
#define SMC_PNET_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/netlink.h>

#include "output.h"

#define PNET_ID_MAX 16          /* SMC_MAX_PNETID_LEN */
#define PNET_ETH_MAX 15         /* IFNAMSIZ - 1 */
#define PNET_IB_MAX 63

struct pnet_entry {
	char pnetid[PNET_ID_MAX + 1];
	char eth[PNET_ETH_MAX + 1];
	char ib[PNET_IB_MAX + 1];
	unsigned int port;
};

/*
 * Check a PNET ID as the kernel does (blanks around it ignored, 1..16 letters
 * or digits) and store it upper-cased in out.  0, or -1 with the reason in why.
 */
int pnet_check_id(const char *in, char out[PNET_ID_MAX + 1], const char **why);
int pnet_check_ifname(const char *in, const char **why);
int pnet_check_ibname(const char *in, const char **why);
/* -P value: strtoul base 0, 1..2; 0 or -1 when invalid. */
int pnet_parse_port(const char *in, unsigned int *port);

/* One GET reply message; 0 or -EBADMSG when it breaks the reply policy. */
int pnet_parse(const struct nlmsghdr *nlh, struct pnet_entry *e);
/* "<pnetid> <ethname> <ibname> <ibport>" or one JSON object. */
void pnet_print(struct smc_out *o, const struct pnet_entry *e);

#endif
