/*
 * Every table of names the tools print, in one place.  Functions that take a
 * buffer fall back to a numeric form ("%#x?" and the like) for unknown values,
 * exactly as the upstream tools print them.
 */
#ifndef SMC_NAMES_H
#define SMC_NAMES_H

#include <stddef.h>
#include <stdint.h>

#define SMC_NAME_BUF 24

/* smcss: socket state (enum smc_state), "%#x?" when unknown */
const char *smc_state_name(unsigned int state, char buf[SMC_NAME_BUF]);
/* smcss: diag_mode -> "SMCR", "TCP", "SMCD" (SMCR for unknown values) */
const char *smc_mode_name(unsigned int mode);
/* linkgroup: role 0 CLNT, other SERV */
const char *smc_role_name(unsigned int role);
/* linkgroup: link-group type, "%#x?" when unknown */
const char *smc_lgr_type_name(unsigned int type, char buf[SMC_NAME_BUF]);
/* linkgroup: link state, "%#x?" when unknown */
const char *smc_link_state_name(unsigned int state, char buf[SMC_NAME_BUF]);
/* linkgroup: peer OS, "Unknown (%#x)" when unknown */
const char *smc_peer_os_name(unsigned int os, char buf[SMC_NAME_BUF]);
/* device: PCI device id -> RoCE_Express.., ISM, else "%#x" */
const char *smc_dev_type_name(unsigned int pci_device, char buf[SMC_NAME_BUF]);
/* device: port state 0 INACTIVE, 1 ACTIVE, else "%#x?" */
const char *smc_port_state_name(unsigned int state, char buf[SMC_NAME_BUF]);
/* RoCE generation by PCI device id: 1, 2, 3, or 0 when not a RoCE Express */
int smc_roce_generation(unsigned int pci_device);
#define SMC_PCI_DEVICE_ISM 0x04ed

/* Fallback/decline reason: short name as smcd/smcr stats print it, "[unknown]". */
const char *smc_reason_name(uint32_t code);
/* Fallback/decline reason: what it means, NULL when the code is not known. */
const char *smc_reason_text(uint32_t code);
/* The kernel's symbolic name (SMC_CLC_DECL_ minus the prefix; the soft backend's: SMC_ minus it), NULL if unknown. */
const char *smc_reason_symbol(uint32_t code);

/* Kernel errno -> the libnl message text the upstream tools print. */
const char *smc_nl_errtext(int err);

#endif
