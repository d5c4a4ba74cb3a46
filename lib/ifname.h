/*
 * Network interface and RDMA/ISM device names: checked as the kernel checks
 * them, and quoted for error messages.
 */
#ifndef SMC_IFNAME_H
#define SMC_IFNAME_H

#include <stdbool.h>
#include <stddef.h>

#define SMC_IFNAME_MAX 15       /* IFNAMSIZ - 1 */
#define SMC_IBNAME_MAX 63       /* IB_DEVICE_NAME_MAX - 1 */

/*
 * NULL when the kernel takes name as an interface name (dev_valid_name() in
 * net/core/dev.c: 1 to 15 bytes, not "." or "..", no '/', ':' or white space
 * in the kernel's sense, which includes byte 0xa0), else the reason.  Any
 * other byte is allowed, UTF-8 and control bytes included.
 */
const char *smc_ifname_invalid(const char *name);

/*
 * NULL when name can name an RDMA or ISM device (SMC_PNETID_IBNAME): 1 to 63
 * bytes, not "." or "..", no '/' (a sysfs directory name) and no white space
 * (the kernel's SMC strips it); ':' is allowed, ISM devices have PCI names.
 */
const char *smc_ibname_invalid(const char *name);

/* Whether name is a PCI function's name ("0000:03:00.0": domain:bus:slot.function in hex). */
bool smc_is_pci_name(const char *name);

/*
 * name for a message, in a new string (free() it; NULL when out of memory):
 * control bytes, bytes outside valid UTF-8 and the C1 controls become \xNN,
 * a backslash becomes \\; everything else, UTF-8 included, is copied.
 */
char *smc_name_escape(const char *name);

#endif
