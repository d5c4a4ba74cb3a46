/*
 * SMC's CLC handshake messages (Connection Layer Control, RFC 7609 and IBM's
 * "SMC Version 2" documents; the kernel's net/smc/smc_clc.h): PROPOSAL,
 * ACCEPT, CONFIRM and DECLINE as they travel in the TCP stream before the
 * connection moves to RDMA or ISM (doc/soft-roce.md section 2: soft SMC-R
 * writes them in the stream as the kernel does).
 *
 * A pure codec: no I/O, no allocation.  Every number is big-endian on the
 * wire and written byte by byte, so the code holds on s390x as well.
 *
 * Reading a stream: clc_hdr_peek() the first CLC_HDR_LEN bytes, read
 * hdr.length bytes in all, hand them to the decoder of hdr.type.
 *
 * Decoders take (buf, len), read nothing at or past buf + len, and validate
 * as Linux's receiver does (smc_clc_wait_msg, smc_clc_msg_hdr_valid and the
 * checks it calls).  They return the message's length (bytes after it are
 * not looked at) or:
 *   -EMSGSIZE  len is shorter than CLC_HDR_LEN or than the header's length:
 *              read more of the stream
 *   -EPROTO    not a well-formed message of this kind (Linux fails the
 *              connection with -EPROTO too)
 * The struct is zeroed first; fields a message does not carry stay 0.
 *
 * Encoders write what Linux (6.8 and later) writes for the same values and
 * return the length written, or:
 *   -EINVAL    a field out of its range (a count above its maximum, a 24-bit
 *              number above 0xffffff, a 4-bit one above 15, an unknown type)
 *   -ENOSPC    size is shorter than the message
 */
#ifndef SOFT_CLC_H
#define SOFT_CLC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "smc_size.h"

/* Eyecatchers, "SMCR" and "SMCD" in EBCDIC, at the start and the end of a message. */
extern const uint8_t clc_eye_smcr[4]; /* E2 D4 C3 D9 */
extern const uint8_t clc_eye_smcd[4]; /* E2 D4 C3 C4 */

enum clc_type {
	CLC_PROPOSAL = 1,
	CLC_ACCEPT = 2,
	CLC_CONFIRM = 3,
	CLC_DECLINE = 4,
};

/* The 2-bit SMC types of the header (typev1, typev2). */
enum clc_smc_type {
	CLC_SMC_R = 0,
	CLC_SMC_D = 1,
	CLC_SMC_N = 2,          /* none */
	CLC_SMC_B = 3,          /* both */
};

#define CLC_V1 1
#define CLC_V2 2
/* ACCEPT/CONFIRM: first contact (a new link group); DECLINE: out of sync. Within typev2. */
#define CLC_FIRST_CONTACT 0x2
#define CLC_OUT_OF_SYNC   CLC_FIRST_CONTACT

#define CLC_OS_ZOS   1
#define CLC_OS_LINUX 2
#define CLC_OS_AIX   3

#define CLC_HDR_LEN      8
#define CLC_TRL_LEN      4
#define CLC_SYSTEMID_LEN 8
#define CLC_GID_LEN      16
#define CLC_MAC_LEN      6
#define CLC_EID_LEN      32
#define CLC_HOSTNAME_LEN 32

#define CLC_MAX_V6_PREFIX 8
#define CLC_MAX_UEID      8     /* EIDs a proposal may carry */
#define CLC_MAX_ISM_GIDS  8     /* SMC-Dv2 GID/CHID entries of a proposal */
#define CLC_MAX_GIDLIST   2     /* GIDs of a first-contact SMC-R CONFIRM */

/* Lengths of whole messages, header and trailer included. */
#define CLC_PROPOSAL_MIN_V1    52   /* 40 + prefix area 8 + trailer */
#define CLC_PROPOSAL_MIN_V2    84   /* 40 + SMC-D area 40 + trailer */
#define CLC_PROPOSAL_MAX_V1    228  /* 40 + 40 + 8 + 8 prefixes + trailer */
#define CLC_PROPOSAL_MAX       652  /* everything at its maximum count */
#define CLC_SMCR_ACCEPT_LEN_V1 68
#define CLC_SMCR_ACCEPT_LEN_V2 108  /* no first contact */
#define CLC_SMCR_ACCEPT_FC_LEN 160  /* ACCEPT, v2, first contact */
#define CLC_SMCR_CONFIRM_FC_LEN(k) (164 + 16 * (k)) /* CONFIRM, v2, first contact, k GIDs */
#define CLC_SMCD_ACCEPT_LEN_V1 48
#define CLC_SMCD_ACCEPT_LEN_V2 78   /* no first contact */
#define CLC_SMCD_ACCEPT_FC_LEN_R0 114 /* first contact, release 0 */
#define CLC_SMCD_ACCEPT_FC_LEN 130  /* first contact, release 1 and up */
#define CLC_DECLINE_LEN_V1     28
#define CLC_DECLINE_LEN_V2     44
#define CLC_FCE_LEN            52   /* first-contact extension ("v2x") */
#define CLC_FCE_LEN_R0         36   /* its first part, all release 0 SMC-D sends */

/* The 8-byte header. */
struct clc_hdr {
	uint8_t type;           /* enum clc_type */
	uint16_t length;        /* the whole message */
	uint8_t version;        /* 1..15; 2 and up use the v2 layouts */
	uint8_t typev1;         /* enum clc_smc_type */
	uint8_t typev2;         /* PROPOSAL: enum clc_smc_type; else flags (CLC_FIRST_CONTACT) */
	bool smcd_eye;          /* the eyecatcher is SMCD, not SMCR */
};

/*
 * The header of the message at buf, checked as far as the header alone
 * allows: eyecatcher, version >= 1, a known type, typev1 R or D where an
 * ACCEPT/CONFIRM/DECLINE needs it, a length the type can have.  0, or
 * -EMSGSIZE (len < CLC_HDR_LEN) or -EPROTO.
 */
int clc_hdr_peek(const uint8_t *buf, size_t len, struct clc_hdr *h);

struct clc_ipv6_prefix {
	uint8_t prefix[16];
	uint8_t len;            /* bits */
};

struct clc_ism_gid {
	uint64_t gid;
	uint16_t chid;
};

/* A PROPOSAL (client to server): what the client offers. */
struct clc_proposal {
	uint8_t version;        /* Linux sends 2; 1 from old peers */
	uint8_t typev1, typev2; /* offered for v1, for v2 (enum clc_smc_type) */
	/* SMC-R v1: the client's RoCE port */
	uint8_t system_id[CLC_SYSTEMID_LEN];
	uint8_t gid[CLC_GID_LEN];
	uint8_t mac[CLC_MAC_LEN];
	/* SMC-D v1: the native ISM device (read only when typev1 offers D) */
	uint64_t ism_gid;
	uint16_t ism_chid;
	/* prefix area: typev1 != none */
	uint8_t ipv4_subnet[4]; /* network order, address AND mask */
	uint8_t ipv4_prefix_len;
	uint8_t ipv6_cnt;
	struct clc_ipv6_prefix ipv6[CLC_MAX_V6_PREFIX];
	/* v2 extension: version >= 2 and typev2 != none */
	uint8_t eid_cnt;
	uint8_t eid[CLC_MAX_UEID][CLC_EID_LEN];
	bool seid;              /* the SMC-Dv2 extension carries the system EID */
	uint8_t release;        /* 0 = v2.0, 1 = v2.1 */
	uint8_t roce_gid[CLC_GID_LEN]; /* SMC-Rv2 */
	uint8_t max_conns, max_links;  /* SMC-Rv2, release 1 */
	uint16_t feature_mask;
	/* SMC-Dv2 extension: typev2 offers D */
	bool smcd_ext;          /* present (Linux declines NOV2DEXT without it) */
	uint8_t system_eid[CLC_EID_LEN];
	uint8_t ism_gid_cnt;    /* counted in the v2 extension */
	struct clc_ism_gid ism_gids[CLC_MAX_ISM_GIDS]; /* read only with smcd_ext */
};

/*
 * Decode: besides the header's checks, the prefix area within the first 40
 * bytes after the SMC-D area's start (iparea_offset <= 40) with at most 8
 * IPv6 prefixes; version 1: typev1 != none and length = 40 + iparea_offset
 * + 8 + 17n + 4; version >= 2: when typev2 != none a v2 extension at an
 * offset within the message with eid_cnt <= 8, when typev2 offers D
 * ism_gid_cnt <= 8 (and the SMC-Dv2 extension, if its offset is not 0,
 * within the message), and length = 84 + (typev1 != none ? 8 + 17n : 0)
 * + (typev2 != none ? 40 + 32e : 0) + (typev2 offers D ? 48 + 10g : 0);
 * a trailer eyecatcher.  With typev1 offering D, the ISM GID is taken only
 * if iparea_offset is 40 (Linux ignores it otherwise), and version >= 2 with
 * typev2 != none then needs it to be 40.
 * Encode: Linux's layout (the SMC-D area always, offsets where Linux puts
 * them); a version 1 proposal has the SMC-D area only when typev1 offers D.
 */
int clc_proposal_encode(const struct clc_proposal *p, uint8_t *buf, size_t size);
int clc_proposal_decode(const uint8_t *buf, size_t len, struct clc_proposal *p);

/* First-contact extension of a v2 ACCEPT/CONFIRM. */
struct clc_fce {
	bool v2_direct;         /* SMC-R: the peer is on the same subnet */
	uint8_t os_type;        /* CLC_OS_*, 4 bits */
	uint8_t release;        /* 4 bits */
	uint8_t hostname[CLC_HOSTNAME_LEN]; /* blank padded */
	/* release 1 and up only (0 in a release 0 message) */
	uint8_t max_conns, max_links;       /* SMC-R */
	uint16_t feature_mask;
	uint32_t vendor_opts;
};

/* An SMC-R ACCEPT (server) or CONFIRM (client): the sender's own resources. */
struct clc_smcr_accept {
	uint8_t type;           /* CLC_ACCEPT or CLC_CONFIRM */
	uint8_t version;        /* 1, or 2 and up */
	bool first_contact;     /* the sender made a new link group */
	uint8_t system_id[CLC_SYSTEMID_LEN];
	uint8_t gid[CLC_GID_LEN];
	uint8_t mac[CLC_MAC_LEN];
	uint32_t qpn;           /* 24 bits */
	uint32_t rmb_rkey;
	uint8_t rmbe_idx;       /* Linux: 1 */
	uint32_t rmbe_alert_token;
	uint8_t rmbe_size;      /* compressed (smc_size.h), 4 bits */
	uint8_t qp_mtu;         /* IB MTU enum, 4 bits */
	uint64_t rmb_addr;
	uint32_t psn;           /* 24 bits */
	/* version >= 2 */
	uint8_t eid[CLC_EID_LEN];
	struct clc_fce fce;     /* with first_contact */
	uint8_t gid_cnt;        /* CONFIRM with first_contact: <= CLC_MAX_GIDLIST */
	uint8_t gids[CLC_MAX_GIDLIST][CLC_GID_LEN];
};

/*
 * Decode: typev1 R; version 1 exactly 68 bytes; version >= 2 at least 108
 * (bytes past the parts below are ignored, as Linux does); with first
 * contact an FCE of at least 36 bytes, of 52 when its release is 1 or more,
 * and for a CONFIRM the GID list after it (count <= 2); a trailer.
 * Encode: 68, 108, 160 (ACCEPT) or 164 + 16k (CONFIRM) bytes.
 */
int clc_smcr_accept_encode(const struct clc_smcr_accept *a, uint8_t *buf, size_t size);
int clc_smcr_accept_decode(const uint8_t *buf, size_t len, struct clc_smcr_accept *a);

/* An SMC-D ACCEPT or CONFIRM (for the capture tool; the soft backend sends none). */
struct clc_smcd_accept {
	uint8_t type;           /* CLC_ACCEPT or CLC_CONFIRM */
	uint8_t version;
	bool first_contact;
	uint64_t gid;           /* the sender's ISM GID */
	uint64_t token;         /* the DMB the peer writes into */
	uint8_t dmbe_idx;
	uint8_t dmbe_size;      /* compressed, 4 bits */
	uint32_t linkid;
	/* version >= 2 */
	uint16_t chid;
	uint8_t eid[CLC_EID_LEN];
	uint64_t gid_ext;       /* Emulated-ISM's extended GID */
	struct clc_fce fce;     /* with first_contact; max_conns/max_links unused */
};

/*
 * Decode: typev1 D; version 1 exactly 48 bytes, version >= 2 at least 78;
 * with first contact an FCE of 36 bytes, of 52 when its release is 1 or
 * more; a trailer.  Encode: 48, 78, 114 (release 0) or 130 bytes.
 */
int clc_smcd_accept_encode(const struct clc_smcd_accept *a, uint8_t *buf, size_t size);
int clc_smcd_accept_decode(const uint8_t *buf, size_t len, struct clc_smcd_accept *a);

#define CLC_DECL_DIAG_V2 4

/* A DECLINE, from either side. */
struct clc_decline {
	uint8_t version;        /* 1: 28 bytes, 2 and up: 44 */
	bool out_of_sync;       /* with SMC_CLC_DECL_SYNCERR: drop the link group */
	uint8_t system_id[CLC_SYSTEMID_LEN]; /* zeros for SMC-D */
	uint32_t peer_diagnosis; /* SMC_CLC_DECL_* */
	uint8_t os_type;        /* 4 bits; Linux: 0 in v1, CLC_OS_LINUX in v2 */
	uint32_t diag_v2[CLC_DECL_DIAG_V2]; /* version >= 2; Linux sends 0 */
};

/* Decode: typev1 R or D, exactly 28 (version 1) or 44 bytes; the trailer is not checked. */
int clc_decline_encode(const struct clc_decline *d, uint8_t *buf, size_t size);
int clc_decline_decode(const uint8_t *buf, size_t len, struct clc_decline *d);

#endif
