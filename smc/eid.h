/* User EID checks of smcd/smcr ueid, shared with the tests. */
#ifndef SMC_EID_H
#define SMC_EID_H

#define SMC_EID_LEN 32

/*
 * Validate an EID as upstream does and blank-pad it to 32 characters in out.
 * Returns 0, or -1 with the complete error text (one or two lines) in *msg.
 */
int smc_eid_check(const char *in, char out[SMC_EID_LEN + 1], const char **msg);

#endif
