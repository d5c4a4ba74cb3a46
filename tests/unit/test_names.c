/* The shared name tables (lib/names.c) and the error texts the man pages quote. */
#include "unit.h"
#include "names.h"

#include <errno.h>

TEST(names_states)
{
	char b[SMC_NAME_BUF];

	CHECK_STR(smc_state_name(1, b), "ACTIVE");
	CHECK_STR(smc_state_name(2, b), "INIT");
	CHECK_STR(smc_state_name(7, b), "CLOSED");
	CHECK_STR(smc_state_name(10, b), "LISTEN");
	CHECK_STR(smc_state_name(20, b), "PEERCLOSEWAIT1");
	CHECK_STR(smc_state_name(21, b), "PEERCLOSEWAIT2");
	CHECK_STR(smc_state_name(22, b), "APPCLOSEWAIT1");
	CHECK_STR(smc_state_name(23, b), "APPCLOSEWAIT2");
	CHECK_STR(smc_state_name(24, b), "APPFINCLOSEWAIT");
	CHECK_STR(smc_state_name(25, b), "PEERFINCLOSEWAIT");
	CHECK_STR(smc_state_name(26, b), "PEERABORTWAIT");
	CHECK_STR(smc_state_name(27, b), "PROCESSABORT");
	CHECK_STR(smc_state_name(0x63, b), "0x63?");
}

TEST(names_modes_roles_types)
{
	char b[SMC_NAME_BUF];

	CHECK_STR(smc_mode_name(0), "SMCR");
	CHECK_STR(smc_mode_name(1), "TCP");
	CHECK_STR(smc_mode_name(2), "SMCD");
	CHECK_STR(smc_mode_name(9), "SMCR");
	CHECK_STR(smc_role_name(0), "CLNT");
	CHECK_STR(smc_role_name(1), "SERV");
	CHECK_STR(smc_lgr_type_name(0, b), "NONE");
	CHECK_STR(smc_lgr_type_name(1, b), "SINGLE");
	CHECK_STR(smc_lgr_type_name(2, b), "SYM");
	CHECK_STR(smc_lgr_type_name(3, b), "ASYMP");
	CHECK_STR(smc_lgr_type_name(4, b), "ASYML");
	CHECK_STR(smc_lgr_type_name(9, b), "0x9?");
	CHECK_STR(smc_link_state_name(0, b), "LINK_UNUSED");
	CHECK_STR(smc_link_state_name(1, b), "LINK_INACTIVE");
	CHECK_STR(smc_link_state_name(2, b), "LINK_ACTIVATING");
	CHECK_STR(smc_link_state_name(3, b), "LINK_ACTIVE");
	CHECK_STR(smc_link_state_name(4, b), "0x4?");
	CHECK_STR(smc_peer_os_name(1, b), "ZOS");
	CHECK_STR(smc_peer_os_name(2, b), "LINUX");
	CHECK_STR(smc_peer_os_name(3, b), "AIX");
	CHECK_STR(smc_peer_os_name(15, b), "Unknown (0xf)");
	CHECK_STR(smc_dev_type_name(0x1004, b), "RoCE_Express");
	CHECK_STR(smc_dev_type_name(0x1016, b), "RoCE_Express2");
	CHECK_STR(smc_dev_type_name(0x101e, b), "RoCE_Express3");
	CHECK_STR(smc_dev_type_name(0x04ed, b), "ISM");
	CHECK_STR(smc_dev_type_name(0x1017, b), "0x1017");
	CHECK_STR(smc_dev_type_name(0, b), "0");
	CHECK_STR(smc_port_state_name(0, b), "INACTIVE");
	CHECK_STR(smc_port_state_name(1, b), "ACTIVE");
	CHECK_STR(smc_port_state_name(5, b), "0x5?");
	CHECK_INT(smc_roce_generation(0x1016), 2);
	CHECK_INT(smc_roce_generation(0x1017), 0);
}

TEST(names_reason_codes)
{
	static const struct { uint32_t code; const char *name; } t[] = {
		{ 0x01010000, "MEMORY" }, { 0x02010000, "TIMEOUT_CL" }, { 0x02020000, "TIMEOUT_AL" },
		{ 0x03000000, "CNF_ERR" }, { 0x03010000, "PEER_NO_SMC" }, { 0x03020000, "IPSEC" },
		{ 0x03030000, "NOSMCDEV" }, { 0x03030001, "NOSMCDDEV" }, { 0x03030002, "NOSMCRDEV" },
		{ 0x03030003, "NOISM2SUPP" }, { 0x03030004, "NOV2EXT" }, { 0x03030005, "NOV2DEXT" },
		{ 0x03030006, "NOSEID" }, { 0x03030007, "NOSMCD2DEV" }, { 0x03040000, "MODEUNSUPP" },
		{ 0x03050000, "RMBE_EC" }, { 0x03060000, "OPTUNSUPP" }, { 0x03070000, "DIFFPREFIX" },
		{ 0x03080000, "GETVLANERR" }, { 0x03090000, "ISMVLANERR" }, { 0x030a0000, "NOACTLINK" },
		{ 0x030b0000, "NOSRVLINK" }, { 0x030c0000, "VERSMISMAT" }, { 0x030d0000, "MAX_DMB" },
		{ 0x04000000, "SYNCERR" }, { 0x05000000, "PEERDECL" },
		{ 0x03060001, "URING" }, { 0x03060002, "ZEROCOPY" }, { 0x03060003, "SHARED" },
		{ 0x03060004, "UNSEEN" }, { 0x03060005, "STDIO" }, { 0x03060006, "BACK" },
		{ 0x03060007, "CREDS" }, { 0x03060008, "[unknown]" },
		{ 0x03030008, "[unknown]" }, { 0x030e0000, "[unknown]" }, { 0x09990000, "[unknown]" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		CHECK_STR(smc_reason_name(t[i].code), t[i].name);
	CHECK_STR(smc_reason_symbol(0x03030008), "NOUEID");
	CHECK_STR(smc_reason_symbol(0x03060005), "SOFT_DECL_STDIO");
	CHECK_STR(smc_reason_text(0x03010000), "peer did not indicate SMC");
	CHECK(smc_reason_text(0x12345678) == NULL);
}

/*
 * Codes kernels gained after smc-tools 1.8.5 (net/smc/smc_clc.h): a kernel
 * name and a meaning for smcss -j, "[unknown]" in stats as upstream prints
 * them.  0x0303000c (FEATUNSUPP) was proposed with SMCv2.1 but never merged:
 * no kernel defines it, so it stays unknown.
 */
TEST(names_reason_codes_after_1_8_5)
{
	static const struct { uint32_t code; const char *symbol; } t[] = {
		{ 0x03030008, "NOUEID" }, { 0x03030009, "RELEASEERR" },
		{ 0x0303000a, "MAXCONNERR" }, { 0x0303000b, "MAXLINKERR" },
		{ 0x030e0000, "NOROUTE" }, { 0x030f0000, "NOINDIRECT" },
		{ 0x09990000, "INTERR" }, { 0x09990001, "ERR_RTOK" },
		{ 0x09990002, "ERR_RDYLNK" }, { 0x09990003, "ERR_REGBUF" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		CHECK_STR(smc_reason_symbol(t[i].code), t[i].symbol);
		CHECK(smc_reason_text(t[i].code) != NULL);
		CHECK_STR(smc_reason_name(t[i].code), "[unknown]");
	}
	CHECK_STR(smc_reason_text(0x0303000b), "max links negotiation failed");
	CHECK_STR(smc_reason_text(0x09990002), "making the IB link ready failed");
	CHECK(smc_reason_symbol(0x0303000c) == NULL);
	CHECK(smc_reason_text(0x0303000c) == NULL);
	CHECK(smc_reason_symbol(0x09990004) == NULL);
}

TEST(names_kernel_error_texts)
{
	static const struct { int err; const char *text; } t[] = {
		{ EPERM, "Operation not permitted" }, { ENOENT, "Object not found" },
		{ ESRCH, "Object not found" }, { EAGAIN, "Try again" },
		{ EINVAL, "Invalid input data or parameter" }, { EFAULT, "Invalid input data or parameter" },
		{ ENOPROTOOPT, "Invalid input data or parameter" }, { ENOMEM, "Out of memory" },
		{ ENOBUFS, "Out of memory" }, { ERANGE, "Input data out of range" },
		{ EEXIST, "Object exists" }, { EADDRINUSE, "Object exists" },
		{ EOPNOTSUPP, "Operation not supported" }, { EACCES, "No Access" },
		{ ENODEV, "No such device" }, { EBUSY, "Object busy" },
		{ EAFNOSUPPORT, "Address family not supported" }, { EPROTONOSUPPORT, "Protocol mismatch" },
		{ EADDRNOTAVAIL, "Invalid address for specified address family" },
		{ EBADF, "Bad socket" }, { ENOTSOCK, "Bad socket" }, { EINTR, "Interrupted system call" },
		{ EIO, "Unspecific failure" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		CHECK_STR(smc_nl_errtext(t[i].err), t[i].text);
		CHECK_STR(smc_nl_errtext(-t[i].err), t[i].text);
	}
}
