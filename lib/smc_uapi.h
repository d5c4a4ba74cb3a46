/*
 * The kernel's SMC uapi as the tools need it.  The system headers come first;
 * what they lack (attributes newer than this machine's uapi, and constants that
 * never were uapi) is defined afterwards under the uapi's own names.  Because
 * the system headers are included before these macros, a newer header that
 * declares the same names as enumerators is already parsed and cannot clash;
 * the macros carry the same values as the kernel.
 */
#ifndef SMC_UAPI_H
#define SMC_UAPI_H

#include <linux/smc.h>
#include <linux/smc_diag.h>

#ifndef AF_SMC
#define AF_SMC 43
#endif
#define SMCPROTO_SMC  0
#define SMCPROTO_SMC6 1

#define SMC_MAX_PNETID_LEN 16
#define SMC_MAX_EID_LEN_   32
#define SMC_LGR_ID_SIZE    4
#define SMC_MAX_PORTS      2

/* SMC_GEN_LGR_SMCR nest: added around v6.12 */
#define SMC_NLA_LGR_R_SNDBUF_ALLOC 12
#define SMC_NLA_LGR_R_RMB_ALLOC    13
#define SMCT_LGR_R_MAX             13

/* SMC_GEN_LGR_SMCD nest: extended GIDs (v6.8), buffer totals (~v6.12) */
#define SMC_NLA_LGR_D_EXT_GID      10
#define SMC_NLA_LGR_D_PEER_EXT_GID 11
#define SMC_NLA_LGR_D_SNDBUF_ALLOC 12
#define SMC_NLA_LGR_D_DMB_ALLOC    13
#define SMCT_LGR_D_MAX             13

/* SMC_GEN_STATS technology nest: buffer usage (~v6.12) */
#define SMC_NLA_STATS_T_RX_RMB_USAGE 20
#define SMC_NLA_STATS_T_TX_RMB_USAGE 21
#define SMCT_STATS_T_MAX             21

/* LGR_R_V2 nest: v2.1 negotiation results (v6.6) */
#define SMC_NLA_LGR_R_V2_MAX_CONNS 2
#define SMC_NLA_LGR_R_V2_MAX_LINKS 3
#define SMCT_LGR_R_V2_MAX          3

/* Sizes of the diag structures as the kernel sends them (x86-64 and s390x alike). */
#define SMC_DIAG_MSG_LEN       64
#define SMC_DIAG_REQ_LEN       52
#define SMC_DIAG_CONNINFO_LEN  76
#define SMC_DIAG_LGRINFO_LEN   147
#define SMC_DIAG_DMBINFO_LEN   40  /* 56 since v6.8: two extended GIDs appended */
#define SMC_DIAG_DMBINFO_EXT_LEN 56
#define SMC_DIAG_FALLBACK_LEN  8

/* sock_diag request sequence number used by smcss (kept for byte compatibility) */
#define SMC_DIAG_MAGIC_SEQ 123456

#endif
