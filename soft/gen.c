/* SCAFFOLD: replaced by the SMC_GEN_NETLINK implementation. */
#include "softd.h"
#include "state.h"
#include <linux/smc.h>
const struct soft_family soft_gen_family = { SMC_GENL_FAMILY_NAME, SOFT_ID_GEN, 1, 1, NULL, 0 };
void soft_stats_free(struct soft_ns *ns) { (void)ns; }
void soft_devs_free(struct soft_state *st) { (void)st; }
