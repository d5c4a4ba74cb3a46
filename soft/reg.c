/* SCAFFOLD: replaced by the SMC_SOFT registration family and sock_diag. */
#include "softd.h"
#include "state.h"
const struct soft_family soft_reg_family = { SMC_SOFT_FAMILY_NAME, SOFT_ID_SOFT, 1, 1, NULL, 0 };
int soft_diag_dump(struct soft_req *r) { (void)r; return 0; }
void soft_socks_free(struct soft_ns *ns) { (void)ns; }
void soft_conn_gone(struct soft_state *st, uint64_t conn_id) { (void)st; (void)conn_id; }
