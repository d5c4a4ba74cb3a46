#include "names.h"

#include <errno.h>
#include <stdio.h>

struct name {
	unsigned int val;
	const char *name;
};

static const char *lookup(const struct name *t, size_t n, unsigned int v)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].val == v)
			return t[i].name;
	return NULL;
}

#define LOOKUP(t, v) lookup(t, sizeof(t) / sizeof((t)[0]), v)

static const char *or_hexq(const char *name, unsigned int v, char *buf)
{
	if (name)
		return name;
	snprintf(buf, SMC_NAME_BUF, "%#x?", v);
	return buf;
}

static const struct name states[] = {
	{ 1, "ACTIVE" },          { 2, "INIT" },
	{ 7, "CLOSED" },          { 10, "LISTEN" },
	{ 20, "PEERCLOSEWAIT1" }, { 21, "PEERCLOSEWAIT2" },
	{ 22, "APPCLOSEWAIT1" },  { 23, "APPCLOSEWAIT2" },
	{ 24, "APPFINCLOSEWAIT" }, { 25, "PEERFINCLOSEWAIT" },
	{ 26, "PEERABORTWAIT" },  { 27, "PROCESSABORT" },
};

const char *smc_state_name(unsigned int state, char buf[SMC_NAME_BUF])
{
	return or_hexq(LOOKUP(states, state), state, buf);
}

const char *smc_mode_name(unsigned int mode)
{
	switch (mode) {
	case 1: return "TCP";
	case 2: return "SMCD";
	default: return "SMCR";
	}
}

const char *smc_role_name(unsigned int role)
{
	return role ? "SERV" : "CLNT";
}

static const struct name lgr_types[] = {
	{ 0, "NONE" }, { 1, "SINGLE" }, { 2, "SYM" }, { 3, "ASYMP" }, { 4, "ASYML" },
};

const char *smc_lgr_type_name(unsigned int type, char buf[SMC_NAME_BUF])
{
	return or_hexq(LOOKUP(lgr_types, type), type, buf);
}

static const struct name link_states[] = {
	{ 0, "LINK_UNUSED" }, { 1, "LINK_INACTIVE" },
	{ 2, "LINK_ACTIVATING" }, { 3, "LINK_ACTIVE" },
};

const char *smc_link_state_name(unsigned int state, char buf[SMC_NAME_BUF])
{
	return or_hexq(LOOKUP(link_states, state), state, buf);
}

static const struct name peer_os[] = { { 1, "ZOS" }, { 2, "LINUX" }, { 3, "AIX" } };

const char *smc_peer_os_name(unsigned int os, char buf[SMC_NAME_BUF])
{
	const char *n = LOOKUP(peer_os, os);

	if (n)
		return n;
	snprintf(buf, SMC_NAME_BUF, "Unknown (%#x)", os);
	return buf;
}

static const struct name dev_types[] = {
	{ 0x1004, "RoCE_Express" }, { 0x1016, "RoCE_Express2" },
	{ 0x101e, "RoCE_Express3" }, { SMC_PCI_DEVICE_ISM, "ISM" },
};

const char *smc_dev_type_name(unsigned int pci_device, char buf[SMC_NAME_BUF])
{
	const char *n = LOOKUP(dev_types, pci_device);

	if (n)
		return n;
	snprintf(buf, SMC_NAME_BUF, "%#x", pci_device);
	return buf;
}

int smc_roce_generation(unsigned int pci_device)
{
	switch (pci_device) {
	case 0x1004: return 1;
	case 0x1016: return 2;
	case 0x101e: return 3;
	default: return 0;
	}
}

static const struct name port_states[] = { { 0, "INACTIVE" }, { 1, "ACTIVE" } };

const char *smc_port_state_name(unsigned int state, char buf[SMC_NAME_BUF])
{
	return or_hexq(LOOKUP(port_states, state), state, buf);
}

struct reason {
	uint32_t code;
	const char *stats_name;  /* as smcd/smcr stats print it, NULL: "[unknown]" */
	const char *symbol;      /* SMC_CLC_DECL_<symbol>; the soft backend's: SMC_<symbol> */
	const char *text;
};

static const struct reason reasons[] = {
	{ 0x01010000, "MEMORY", "MEM", "insufficient memory for buffers" },
	{ 0x02010000, "TIMEOUT_CL", "TIMEOUT_CL", "timeout waiting for CONFIRM LINK" },
	{ 0x02020000, "TIMEOUT_AL", "TIMEOUT_AL", "timeout waiting for ADD LINK" },
	{ 0x03000000, "CNF_ERR", "CNFERR", "configuration error" },
	{ 0x03010000, "PEER_NO_SMC", "PEERNOSMC", "peer did not indicate SMC" },
	{ 0x03020000, "IPSEC", "IPSEC", "IPsec in use on the connection" },
	{ 0x03030000, "NOSMCDEV", "NOSMCDEV", "no SMC device found (R or D)" },
	{ 0x03030001, "NOSMCDDEV", "NOSMCDDEV", "no SMC-D device found" },
	{ 0x03030002, "NOSMCRDEV", "NOSMCRDEV", "no SMC-R device found" },
	{ 0x03030003, "NOISM2SUPP", "NOISM2SUPP", "no ISMv2 support" },
	{ 0x03030004, "NOV2EXT", "NOV2EXT", "peer sent no SMCv2 extension" },
	{ 0x03030005, "NOV2DEXT", "NOV2DEXT", "peer sent no SMC-Dv2 extension" },
	{ 0x03030006, "NOSEID", "NOSEID", "peer sent no SEID" },
	{ 0x03030007, "NOSMCD2DEV", "NOSMCD2DEV", "no matching SMC-Dv2 device" },
	{ 0x03030008, NULL, "NOUEID", "no common UEID (and no SEID)" },
	{ 0x03030009, NULL, "RELEASEERR", "release negotiation failed" },
	{ 0x0303000a, NULL, "MAXCONNERR", "max connections negotiation failed" },
	{ 0x0303000b, NULL, "MAXLINKERR", "max links negotiation failed" },
	{ 0x03040000, "MODEUNSUPP", "MODEUNSUPP", "accepted mode was not proposed" },
	{ 0x03050000, "RMBE_EC", "RMBE_EC", "peer uses RMBE eyecatchers" },
	{ 0x03060000, "OPTUNSUPP", "OPTUNSUPP", "TCP Fast Open requested" },
	/* the soft backend's (wire/reg.h SMC_SOFT_DECL_*), no kernel's */
	{ 0x03060001, "URING", "SOFT_DECL_URING", "an io_uring instance may reach the connection" },
	{ 0x03060002, "ZEROCOPY", "SOFT_DECL_ZEROCOPY", "SO_ZEROCOPY set before pairing" },
	{ 0x03060003, "SHARED", "SOFT_DECL_SHARED", "another process got it before pairing" },
	{ 0x03060004, "UNSEEN", "SOFT_DECL_UNSEEN", "an end went to a program without the preload" },
	{ 0x03060005, "STDIO", "SOFT_DECL_STDIO", "stdio may read or write it (fds 0-2, fdopen)" },
	{ 0x03060006, "BACK", "SOFT_DECL_BACK", "its RDMA end went back to TCP (another process, stdio, io_uring)" },
	{ 0x03060007, "CREDS", "SOFT_DECL_CREDS", "its process changed credentials (setuid, setgroups) with an RDMA device open" },
	{ 0x03070000, "DIFFPREFIX", "DIFFPREFIX", "IP prefix / subnet mismatch" },
	{ 0x03080000, "GETVLANERR", "GETVLANERR", "VLAN of the route device unknown" },
	{ 0x03090000, "ISMVLANERR", "ISMVLANERR", "VLAN registration on ISM device failed" },
	{ 0x030a0000, "NOACTLINK", "NOACTLINK", "no active SMC-R link in link group" },
	{ 0x030b0000, "NOSRVLINK", "NOSRVLINK", "server's link not found" },
	{ 0x030c0000, "VERSMISMAT", "VERSMISMAT", "SMC version mismatch" },
	{ 0x030d0000, "MAX_DMB", "MAX_DMB", "SMC-D DMB limit exceeded" },
	{ 0x030e0000, NULL, "NOROUTE", "SMC-Rv2: no route to peer" },
	{ 0x030f0000, NULL, "NOINDIRECT", "SMC-Rv2: indirect claimed, route is direct" },
	{ 0x04000000, "SYNCERR", "SYNCERR", "link group out of sync" },
	{ 0x05000000, "PEERDECL", "PEERDECL", "peer declined" },
	{ 0x09990000, NULL, "INTERR", "internal error" },
	{ 0x09990001, NULL, "ERR_RTOK", "rtoken handling failed" },
	{ 0x09990002, NULL, "ERR_RDYLNK", "making the IB link ready failed" },
	{ 0x09990003, NULL, "ERR_REGBUF", "RDMA buffer registration failed" },
};

static const struct reason *find_reason(uint32_t code)
{
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		if (reasons[i].code == code)
			return &reasons[i];
	return NULL;
}

const char *smc_reason_name(uint32_t code)
{
	const struct reason *r = find_reason(code);

	return r && r->stats_name ? r->stats_name : "[unknown]";
}

const char *smc_reason_text(uint32_t code)
{
	const struct reason *r = find_reason(code);

	return r ? r->text : NULL;
}

const char *smc_reason_symbol(uint32_t code)
{
	const struct reason *r = find_reason(code);

	return r ? r->symbol : NULL;
}

const char *smc_nl_errtext(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case EPERM: return "Operation not permitted";
	case ENOENT: case ESRCH: return "Object not found";
	case EAGAIN: return "Try again";
	case EINVAL: case EFAULT: case ENOPROTOOPT:
		return "Invalid input data or parameter";
	case ENOMEM: case ENOBUFS: return "Out of memory";
	case ERANGE: return "Input data out of range";
	case EEXIST: case EADDRINUSE: return "Object exists";
	case EOPNOTSUPP: return "Operation not supported";
	case EACCES: return "No Access";
	case ENODEV: return "No such device";
	case EBUSY: return "Object busy";
	case EAFNOSUPPORT: return "Address family not supported";
	case EPROTONOSUPPORT: return "Protocol mismatch";
	case EADDRNOTAVAIL: return "Invalid address for specified address family";
	case EBADF: case ENOTSOCK: return "Bad socket";
	case EINTR: return "Interrupted system call";
	case ETIMEDOUT: return "Timed out";
	default: return "Unspecific failure";
	}
}
