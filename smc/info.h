/* smcd|smcr info: parsed system information, for the command and its tests. */
#ifndef SMC_INFO_H
#define SMC_INFO_H

#include "smc.h"
#include "smc_uapi.h"

struct sys_info {
	bool present;               /* the SYS_INFO nest was received */
	bool has_ver, has_rel;
	unsigned int ver, rel;
	char host[SMC_MAX_HOSTNAME_LEN + 1];
	size_t host_len;            /* without the kernel's blank padding */
	char seid[SMC_MAX_EID_LEN + 1];
	bool ism_v2, smcr_v2;
};

struct hw_count {
	unsigned int ism;
	unsigned int roce[4];       /* by generation 1..3 */
};

/* The SYS_INFO reply message: 1 parsed, 0 no SYS_INFO nest, -EBADMSG. */
int smc_info_parse(const struct nlmsghdr *nlh, struct sys_info *si);
void smc_info_print(struct smc_out *o, const struct sys_info *si, const struct hw_count *c);

#endif
