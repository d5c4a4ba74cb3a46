/*
 * Family SMC_GEN_NETLINK (<linux/smc.h>, lib/smc_uapi.h): the handlers of
 * gen_*.c and the helpers they share.
 */
#ifndef SOFT_GEN_H
#define SOFT_GEN_H

#include <stdint.h>
#include <linux/netlink.h>

#include "soft_nl.h"
#include "smc_uapi.h"

/* A dump message: genl cmd, version 1, NLM_F_MULTI; NULL when out of memory. */
struct nlmsghdr *soft_gen_msg(struct soft_req *r, uint8_t cmd);
/* nla_put_uint(): 4 bytes when the value fits, else 8. */
void soft_put_uint(struct nlmsghdr *nlh, uint16_t type, uint64_t v);
/* The family policy for a doit: attribute type 1 is rejected (NLA_REJECT). */
int soft_gen_check_attrs(struct soft_req *r);

/* gen_sys.c */
int soft_gen_sys_info(struct soft_req *r);
/* gen_lgr.c */
int soft_gen_lgr_smcr(struct soft_req *r);
int soft_gen_link_smcr(struct soft_req *r);
int soft_gen_lgr_smcd(struct soft_req *r);
/* gen_dev.c */
int soft_gen_dev_smcd(struct soft_req *r);
int soft_gen_dev_smcr(struct soft_req *r);
/* gen_stats.c */
int soft_gen_stats(struct soft_req *r);
int soft_gen_fback_stats(struct soft_req *r);
/* gen_eid.c */
int soft_gen_ueid_dump(struct soft_req *r);
int soft_gen_ueid_add(struct soft_req *r);
int soft_gen_ueid_remove(struct soft_req *r);
int soft_gen_ueid_flush(struct soft_req *r);
int soft_gen_seid_dump(struct soft_req *r);
int soft_gen_seid_enable(struct soft_req *r);
int soft_gen_seid_disable(struct soft_req *r);
/* gen.c */
int soft_gen_hs_dump(struct soft_req *r);
int soft_gen_hs_enable(struct soft_req *r);
int soft_gen_hs_disable(struct soft_req *r);

#endif
