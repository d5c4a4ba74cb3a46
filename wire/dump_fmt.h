/*
 * The SMC dump's record format (doc/smc-dump-header.md): the header's magic,
 * versions, record types and flags, DUMP_SET's masks and the bodies' lengths.
 * The daemon encodes the records (soft/capture/dump.h, soft/capture/dump_enc.c); the preload
 * puts CDC, DATA and LLC slots of these types and flags into its dump ring
 * (pstats.h, pdump_put.h).
 */
#ifndef WIRE_DUMP_FMT_H
#define WIRE_DUMP_FMT_H

#define SOFT_DUMP_MAGIC      0x534d4448u   /* "SMDH" */
#define SOFT_DUMP_V1         1             /* legacy header */
#define SOFT_DUMP_V2         2             /* current header */
#define SOFT_DUMP_V1_HDR_LEN 32
#define SOFT_DUMP_V2_HDR_LEN 64

/* Record types (header byte 5). */
#define SOFT_DUMP_T_PROPOSAL 1
#define SOFT_DUMP_T_ACCEPT   2
#define SOFT_DUMP_T_CONFIRM  3
#define SOFT_DUMP_T_DECLINE  4
#define SOFT_DUMP_T_LLC      8    /* an SMC-R LLC message of a link group */
#define SOFT_DUMP_T_CDC      16
#define SOFT_DUMP_T_DATA     32
#define SOFT_DUMP_T_LOST     64   /* records of a process the capture missed */

/* Header flags. */
#define SOFT_DUMP_F_RX       0x01   /* toward the local end (else from it) */
#define SOFT_DUMP_F_SMCD     0x02   /* SMC-D (else SMC-R) */
#define SOFT_DUMP_F_IPV6     0x04   /* addresses are IPv6 */
#define SOFT_DUMP_F_TRUNC    0x08   /* a data record carries fewer bytes than moved */

/* DUMP_SET masks (reg.h). */
#define SOFT_DUMP_MODE_SMCD  0x01
#define SOFT_DUMP_MODE_SMCR  0x02
#define SOFT_DUMP_TYPE_CLC   0x01
#define SOFT_DUMP_TYPE_CDC   0x02
#define SOFT_DUMP_TYPE_DATA  0x04
#define SOFT_DUMP_TYPE_LLC   0x08

#define SOFT_DUMP_CLC_LEN    56
#define SOFT_DUMP_CLC_R_LEN  112    /* an SMC-R CLC record: the CLC body, then its SMC-R part */
#define SOFT_DUMP_CDC_LEN    16
#define SOFT_DUMP_DATA_LEN   16     /* before the bytes */
#define SOFT_DUMP_LOST_LEN   32
#define SOFT_DUMP_LLC_LEN    8      /* before the message */
#define SOFT_DUMP_LLC_MSG_MAX 256   /* message bytes an LLC record carries at most */
#define SOFT_DUMP_MAX_PKT    1500   /* IP packet, the capture device's MTU */

#endif
