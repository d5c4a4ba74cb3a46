/*
 * The soft backend's SMC devices, host-wide as in the kernel:
 *
 * - one soft ISM device for SMC-D, first in the list.  Device name
 *   "soft-ism", PCI-ID-like parent name "ffff:00:00.0" (either names it in
 *   smc_pnet -D), PCI vendor 0x1014 / device 0x04ed (so the tools print type
 *   ISM), FID 0, CHID 0xff01 (the emulated-ISM range 0xff00-0xfffe; 0xffff is
 *   loopback-ism's), ISMv2-capable.  Its 128-bit GID is stable across
 *   restarts: GID = FNV-1a-64 of "smc_softd-ism-gid:" + the contents of
 *   /etc/machine-id, extended GID = FNV-1a-64 of "smc_softd-ism-gid-ext:" +
 *   the same; without a machine id the host name (uname nodename) is hashed
 *   instead.  The machine id itself is never shown.
 *
 * - the host's RDMA devices for SMC-R, under their own names (rxe0, mlx5_0),
 *   as sysfs shows them (<sysfs>/class/infiniband, rdma_sysfs.c): their
 *   ports (at most 2), each port's state, network interface and RoCE GID,
 *   and the PCI parent where there is one.  They are looked at again before
 *   every request of the kernel's families, so that a device added or
 *   deleted (rdma link add/delete) shows as it does in the kernel.  No RDMA
 *   device: no SMC-R device.
 *
 * - emulated RoCE devices of --roce NAME=IFACE, each with one port bound to
 *   a network interface of the daemon's namespace and no PCI parent (like
 *   rxe), for tests of the PNET table and the tools: they carry no data.
 *
 * PNET IDs are kept per device port with the flag "set by the user"; the
 * PNET table (pnet.c) sets and clears them.
 */
#ifndef SOFT_DEVICES_H
#define SOFT_DEVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <net/if.h>

#include "state.h"

#define SOFT_PNETID_LEN   16      /* SMC_MAX_PNETID_LEN */
#define SOFT_IBNAME_MAX   64      /* IB_DEVICE_NAME_MAX, with the NUL */
#define SOFT_PORTS        2       /* SMC_MAX_PORTS */

#define SOFT_ISM_NAME     "soft-ism"
#define SOFT_ISM_PCI_ID   "ffff:00:00.0"
#define SOFT_ISM_VENDOR   0x1014
#define SOFT_ISM_DEVICE   0x04ed
#define SOFT_ISM_FID      0
#define SOFT_ISM_CHID     0xff01
#define SOFT_GID_SIZE     16      /* SMC_GID_SIZE */
#define SOFT_SYSFS_ROOT   "/sys"
#define SOFT_IB_PORT_ACTIVE 4     /* enum ib_port_state */

enum soft_dev_kind { SOFT_DEV_ISM, SOFT_DEV_ROCE };

struct soft_lgr;

struct soft_dev {
	struct soft_dev *next;
	enum soft_dev_kind kind;
	char name[SOFT_IBNAME_MAX];
	/* ISM */
	char pci_id[16];
	uint32_t fid;
	uint16_t chid, vendor, device;
	uint64_t gid, gid_ext;
	/* RoCE: ports 1..n_ports, each on a network interface (0: none) */
	int n_ports;
	unsigned int ifindex[SOFT_PORTS];
	char ifname[SOFT_PORTS][IF_NAMESIZE];
	/* a host RDMA device (sysfs), else an emulated one (--roce) */
	bool host;
	bool present;                    /* host: there at the last look */
	bool gone_mark;                  /* host: not seen yet in this look (rdma_sysfs.c) */
	bool pci;                        /* host: a PCI parent (pci_id, vendor, device, fid, chid) */
	uint8_t port_state[SOFT_PORTS];  /* host: enum ib_port_state */
	/*
	 * host: the port's GIDs on its interface as smc_ib_determine_gid()
	 * takes them: RoCE v1 for SMC-Rv1, an IPv4-mapped RoCE v2 one for
	 * SMC-Rv2 (rxe has only RoCE v2 GIDs)
	 */
	uint8_t gid_v1[SOFT_PORTS][SOFT_GID_SIZE], gid_v2[SOFT_PORTS][SOFT_GID_SIZE];
	int gid_v1_index[SOFT_PORTS], gid_v2_index[SOFT_PORTS];   /* -1: none */
	/* PNET ID per port (the ISM uses port 0): "" when unset */
	char pnetid[SOFT_PORTS][SOFT_PNETID_LEN + 1];
	bool pnet_user[SOFT_PORTS];
};

/*
 * Create the devices (once, at start): the soft ISM, one emulated RoCE
 * device per "NAME=IFACE" of roce_specs, then the host's RDMA devices under
 * st->sysfs (none when NULL).  0, or -1 with a one-line reason in err.
 */
int soft_devs_init(struct soft_state *st, char *const *roce_specs, int n_roce,
		   char *err, size_t errlen);

/*
 * Look at the host's RDMA devices again (<st->sysfs>/class/infiniband): a
 * new one is appended and takes its ports' PNET IDs from the initial
 * namespace's table, as smc_ib_add_dev does; one that went is kept as not
 * present (link groups may point at it), its user PNET IDs cleared; one that
 * came back is read again.  0, or -ENOMEM (the list is then as before or
 * partly refreshed, never inconsistent); a directory that could not be
 * read (no descriptor left) changes nothing.
 */
int soft_rdma_refresh(struct soft_state *st);

/* The soft ISM device (NULL before soft_devs_init). */
struct soft_dev *soft_dev_ism(const struct soft_state *st);
/* An ISMv2-capable device exists (SYS_INFO IS_ISM_V2, SEID shown). */
bool soft_ism_v2_capable(const struct soft_state *st);
/* A RoCE device that is there (not a host device that went). */
bool soft_dev_roce_usable(const struct soft_dev *d);
/* A present RoCE device by its name, as the kernel's PNET code finds RDMA devices. */
struct soft_dev *soft_dev_find_roce(const struct soft_state *st, const char *name);
/* gid is a RoCE v1 or v2 GID of a port of a present host RDMA device (as last read). */
bool soft_dev_roce_has_gid(const struct soft_state *st, const uint8_t gid[SOFT_GID_SIZE]);
/* The soft ISM when name is its device name or its PCI-ID-like name. */
struct soft_dev *soft_dev_find_ism(const struct soft_state *st, const char *name);
/* The soft RoCE device whose port uses interface ifindex; *port is 1-based. */
struct soft_dev *soft_dev_roce_by_ifindex(const struct soft_state *st, unsigned int ifindex,
					  int *port);

/*
 * The host RDMA device (and its 1-based *port, active) a connection on
 * interface ifname could use for SMC-R, as smc_pnet_find_roce_resource()
 * picks it: the port's PNET ID is the interface's (ns's table), or, when
 * the interface has none, the port sits on it with no PNET ID of its own.
 * Emulated devices (--roce) carry no data and are never picked.  NULL: none.
 */
struct soft_ns;
const struct soft_dev *soft_dev_roce_for_if(const struct soft_state *st, const struct soft_ns *ns,
					    const char *ifname, int *port);
/*
 * Another port for a second link of a link group that runs over device
 * known's port known_port on interface ifname, as smc_pnet_find_alt_roce()
 * finds one: a host device port other than that one, in the interface's
 * PNET (an interface without a PNET ID has none), active, with a RoCE v2
 * GID (SMC-Rv2).  NULL: none.
 */
const struct soft_dev *soft_dev_roce_alt(const struct soft_state *st, const struct soft_ns *ns,
					 const char *ifname, const struct soft_dev *known, int known_port,
					 int *port);
/*
 * Port state as GET_DEV_SMCR reports it (smc_ib_port_active): 1 when a host
 * device's port is ACTIVE, or an emulated device's interface is up.
 */
uint8_t soft_dev_port_active(const struct soft_dev *d, int port);

/* A PNET ID counts as set unless it starts with NUL or a blank (smc_pnet_is_pnetid_set). */
bool soft_pnetid_is_set(const char *pnetid);

/* The device name check of --roce and of sysfs names: "" or a reason. */
const char *soft_dev_name_invalid(const char *name);

/* Append a device to the list (used by init and tests). */
void soft_dev_append(struct soft_state *st, struct soft_dev *d);

/* Every device and link group freed (soft_state_free). */
void soft_devs_free(struct soft_state *st);

#endif
