/* SCAFFOLD: replaced by the SMC_PNETID implementation. */
#include "softd.h"
#include "state.h"
#include <linux/smc.h>
const struct soft_family soft_pnet_family = { SMCR_GENL_FAMILY_NAME, SOFT_ID_PNETID, 1, 4, NULL, 0 };
void soft_pnet_free(struct soft_ns *ns) { (void)ns; }
