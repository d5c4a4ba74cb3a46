/*
 * The two flag bytes of a CDC message (RFC 7609; Linux's struct
 * smc_cdc_producer_flags and smc_cdc_conn_state_flags, in these raw bit
 * positions also in struct smc_diag_conninfo of <linux/smc_diag.h>).  SMC-R
 * carries them in CDC bytes 24 and 25 (smcr_cdc.h), the soft SMC-D ring in
 * its cursor words (dmb.h).
 */
#ifndef WIRE_CDC_FLAGS_H
#define WIRE_CDC_FLAGS_H

/* Producer flags. */
#define CDC_PF_WRITE_BLOCKED     0x80u
#define CDC_PF_URG_PENDING       0x40u
#define CDC_PF_URG_PRESENT       0x20u
#define CDC_PF_CONS_UPD_REQ      0x10u
#define CDC_PF_FAILOVER_VALID    0x08u /* SMC-R only: a failover validation CDC */
#define CDC_PF_RESERVED          0x07u

/* Connection-state flags; once set, repeated in every later CDC. */
#define CDC_CF_DONE_WRITING      0x80u /* the sender did shutdown(SHUT_WR) */
#define CDC_CF_CLOSED            0x40u /* orderly close */
#define CDC_CF_ABORT             0x20u /* abnormal close */
#define CDC_CF_RESERVED          0x1fu

#endif
