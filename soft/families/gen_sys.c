/* GET_SYS_INFO: what smc_nl_get_sys_info() reports, for an ISMv2-capable x86 host. */
#include "gen.h"
#include "lgr.h"

#include <errno.h>
#include <string.h>
#include <sys/utsname.h>
#include <libmnl/libmnl.h>

#define SMC_V2      2
#define SMC_RELEASE 1

/* The CLC host name: nodename cut to 32 bytes and blank-padded to 32 (smc_clc_init). */
static void clc_hostname(char out[SOFT_HOSTNAME_LEN + 1])
{
	struct utsname u;
	size_t n = 0;

	memset(out, ' ', SOFT_HOSTNAME_LEN);
	out[SOFT_HOSTNAME_LEN] = '\0';
	if (uname(&u) == 0)
		n = strnlen(u.nodename, SOFT_HOSTNAME_LEN);
	if (n)
		memcpy(out, u.nodename, n);
}

int soft_gen_sys_info(struct soft_req *r)
{
	struct nlmsghdr *nlh = soft_gen_msg(r, SMC_NETLINK_GET_SYS_INFO);
	char host[SOFT_HOSTNAME_LEN + 1];
	struct nlattr *nest;
	/* the SEID of a non-s390 host is 32 NULs: an empty string */
	bool ism_v2 = soft_ism_v2_capable(r->st);

	if (!nlh)
		return -ENOMEM;
	clc_hostname(host);
	nest = mnl_attr_nest_start(nlh, SMC_GEN_SYS_INFO);
	mnl_attr_put_u8(nlh, SMC_NLA_SYS_VER, SMC_V2);
	mnl_attr_put_u8(nlh, SMC_NLA_SYS_REL, SMC_RELEASE);
	mnl_attr_put_u8(nlh, SMC_NLA_SYS_IS_ISM_V2, ism_v2);
	mnl_attr_put_u8(nlh, SMC_NLA_SYS_IS_SMCR_V2, 1);
	mnl_attr_put_strz(nlh, SMC_NLA_SYS_LOCAL_HOST, host);
	if (ism_v2)
		mnl_attr_put_strz(nlh, SMC_NLA_SYS_SEID, "");
	mnl_attr_nest_end(nlh, nest);
	soft_msg_end(r->out, nlh);
	return 0;
}
