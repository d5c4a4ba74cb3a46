/*
 * SMC-R LLC (Link Layer Control) messages (RFC 7609 and IBM's "SMC Version
 * 2" for SMC-Rv2; doc/smcr-wire.md), laid out byte for byte as Linux sends
 * them (net/smc/smc_llc.c).
 *
 * LLC messages share a link's receive path with CDC (smcr_cdc.h).  Byte 0
 * holds the message type in its low nibble and the LLC version in its high
 * nibble: 0 for an SMC-Rv1 link group, 2 for SMC-Rv2 (so CONFIRM_LINK is 0x01
 * or 0x21).  The header, bytes 0-3:
 *
 *   v1: type, length (44), add-link reject reason (low nibble), flags
 *   v2: type, length (u16, >= 44, up to SMCR_WR_BUF_V2_SIZE), flags
 *
 * Linux declares the v2 length (and the rkey count of the ADD_LINK v2
 * extension) as a plain u16 and so writes it in its CPU's byte order: little
 * endian from x86, big endian from s390x.  Those two fields take an
 * enum smcr_llc_ho; every other number is big-endian.  A v2 header has no
 * reject reason: its length covers that byte.
 *
 * Types, and the lengths Linux sends:
 *
 *   v1 (44 bytes each)          v2 (SMC-Rv2 link groups)
 *   0x01 CONFIRM_LINK           0x21  44
 *   0x02 ADD_LINK               0x22  44, or 44 + 28 + 16 per rkey (extension)
 *   0x03 ADD_LINK_CONT          -     (v2 sends the rkeys in the extension)
 *   0x04 DELETE_LINK            0x24  44
 *   0x05 REQ_ADD_LINK           0x25  28 + 16 per GID (request); 44 (response)
 *   0x06 CONFIRM_RKEY           0x26  44
 *   0x07 TEST_LINK              0x27  44
 *   0x08 CONFIRM_RKEY_CONT      -     (never sent by Linux)
 *   0x09 DELETE_RKEY            0x29  44 (8 + 4 per rkey could follow)
 *
 * Linux receives neither 0x05 (it has no handler for it: only SMC-Rv2 asks
 * for links) nor 0x23/0x28; it takes 0x08 and ignores it.  0x05 decodes
 * here with the 0x25 layout cut to 44 bytes (one GID at most).
 *
 * Decoding follows Linux's receiver (smc_llc_rx_handler): fewer than
 * SMCR_LLC_LEN bytes is -EMSGSIZE; a v1 length byte other than 44, a v2
 * length below 44, a version other than 0 and 2, or a type without a layout
 * here is -EPROTO.  Stricter than Linux: a v2 length above 8192 (no buffer
 * of Linux holds more) and a count above the most Linux sends are -EPROTO,
 * and a v2 variable part (the ADD_LINK extension, present when the length
 * field is above 44; the GIDs; the DELETE_RKEY rkeys) that does not fit in
 * len is -EMSGSIZE, where Linux would read what its buffer held before.
 * Reserved bytes and bits are ignored, as Linux does; flags are kept whole.
 */
#ifndef WIRE_SMCR_LLC_H
#define WIRE_SMCR_LLC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SMCR_LLC_LEN          44u    /* a v1 message; the fixed part of a v2 one */
#define SMCR_LLC_V2_MAX_LEN   8192u  /* SMCR_WR_BUF_V2_SIZE */
#define SMCR_LLC_VERSION_V2   2u

enum smcr_llc_type {                 /* the low nibble of byte 0 */
	SMCR_LLC_CONFIRM_LINK = 0x01,
	SMCR_LLC_ADD_LINK = 0x02,
	SMCR_LLC_ADD_LINK_CONT = 0x03,
	SMCR_LLC_DELETE_LINK = 0x04,
	SMCR_LLC_REQ_ADD_LINK = 0x05,
	SMCR_LLC_CONFIRM_RKEY = 0x06,
	SMCR_LLC_TEST_LINK = 0x07,
	SMCR_LLC_CONFIRM_RKEY_CONT = 0x08,
	SMCR_LLC_DELETE_RKEY = 0x09,
};

/* Header flags (byte 3). */
#define SMCR_LLC_FLAG_RESP            0x80u /* a response */
#define SMCR_LLC_FLAG_NO_RMBE_EYEC    0x03u /* CONFIRM_LINK: Linux sets it and needs it */
#define SMCR_LLC_FLAG_ADD_LNK_REJ     0x40u /* ADD_LINK response: rejected */
#define SMCR_LLC_FLAG_DEL_LINK_ALL    0x40u /* DELETE_LINK: the whole link group */
#define SMCR_LLC_FLAG_DEL_LINK_ORDERLY 0x20u
#define SMCR_LLC_FLAG_RKEY_NEG        0x20u /* CONFIRM/DELETE_RKEY response: failed */
#define SMCR_LLC_FLAG_RKEY_RETRY      0x10u /* CONFIRM_RKEY response: try again */

#define SMCR_LLC_REJ_RSN_NO_ALT_PATH  1u    /* ADD_LINK v1 reject reason */

/* DELETE_LINK reasons: requests, then responses. */
#define SMCR_LLC_DEL_LOST_PATH        0x00010000u
#define SMCR_LLC_DEL_OP_INIT_TERM     0x00020000u
#define SMCR_LLC_DEL_PROG_INIT_TERM   0x00030000u
#define SMCR_LLC_DEL_PROT_VIOL        0x00040000u
#define SMCR_LLC_DEL_NO_ASYM_NEEDED   0x00050000u
#define SMCR_LLC_DEL_NOLNK            0x00100000u
#define SMCR_LLC_DEL_NOLGR            0x00200000u

#define SMCR_GID_SIZE                 16u
#define SMCR_MAC_SIZE                 6u
#define SMCR_LGR_ID_SIZE              4u
#define SMCR_LLC_RKEYS_PER_MSG        3u    /* CONFIRM_RKEY(_CONT) rtokens */
#define SMCR_LLC_RKEYS_PER_CONT_MSG   2u    /* ADD_LINK_CONT */
#define SMCR_LLC_DEL_RKEY_MAX         8u    /* DELETE_RKEY v1 */
#define SMCR_LLC_RKEYS_V2_MAX         255u  /* ADD_LINK v2 extension, DELETE_RKEY v2 */
/* the longest message encoding writes: ADD_LINK v2 with SMCR_LLC_RKEYS_V2_MAX rkeys of 16 bytes from byte 72 */
#define SMCR_LLC_ENC_MAX_LEN          (72u + 16u * SMCR_LLC_RKEYS_V2_MAX)
#define SMCR_LLC_GIDS_MAX             8u    /* REQ_ADD_LINK v2 (SMC_GIDS_PER_PEER_MAX) */

/* Byte order of the fields Linux writes in its CPU's order (see above). */
enum smcr_llc_ho {
	SMCR_LLC_HO_LE = 0,             /* an x86, arm64, ... peer */
	SMCR_LLC_HO_BE = 1,             /* an s390x peer */
};

struct smcr_llc_hdr {
	uint8_t type;           /* enum smcr_llc_type */
	uint8_t version;        /* 0 or SMCR_LLC_VERSION_V2 */
	uint16_t length;        /* 44 for v1 (and what encoding writes); v2: 44.. */
	uint8_t rej_rsn;        /* v1 ADD_LINK reject reason, 4 bits; 0 in v2 */
	uint8_t flags;          /* SMCR_LLC_FLAG_* */
};

struct smcr_llc_confirm_link {  /* 0x01, 0x21 */
	uint8_t sender_mac[SMCR_MAC_SIZE];
	uint8_t sender_gid[SMCR_GID_SIZE];
	uint32_t sender_qp_num;         /* 24 bits */
	uint8_t link_num;
	uint8_t link_uid[SMCR_LGR_ID_SIZE];
	uint8_t max_links;
	uint8_t max_conns;              /* SMC v2.1; 0 before */
};

struct smcr_llc_add_link_rt {   /* an RMB's rkey on the new link */
	uint32_t rmb_key;               /* on the link the message travels */
	uint32_t rmb_key_new;
	uint64_t rmb_vaddr_new;
};

struct smcr_llc_add_link {      /* 0x02, 0x22 */
	uint8_t sender_mac[SMCR_MAC_SIZE];
	uint8_t sender_gid[SMCR_GID_SIZE];
	uint32_t sender_qp_num;         /* 24 bits */
	uint8_t link_num;
	uint8_t qp_mtu;                 /* 4 bits, IB MTU enum */
	uint32_t initial_psn;           /* 24 bits */
	/* v2 only: the extension after byte 44 */
	bool has_ext;
	bool v2_direct;                 /* no gateway between the hosts */
	uint8_t client_target_gid[SMCR_GID_SIZE];
	uint16_t num_rkeys;             /* <= SMCR_LLC_RKEYS_V2_MAX; CPU order on the wire */
	struct smcr_llc_add_link_rt rt[SMCR_LLC_RKEYS_V2_MAX];
};

struct smcr_llc_add_link_cont { /* 0x03 */
	uint8_t link_num;
	uint8_t num_rkeys;              /* rkeys still to come, this message's included */
	struct smcr_llc_add_link_rt rt[SMCR_LLC_RKEYS_PER_CONT_MSG];
};

struct smcr_llc_delete_link {   /* 0x04, 0x24 */
	uint8_t link_num;               /* 0 with SMCR_LLC_FLAG_DEL_LINK_ALL */
	uint32_t reason;                /* SMCR_LLC_DEL_* */
};

struct smcr_llc_req_add_link {  /* 0x05 (one GID at most), 0x25 */
	uint8_t gid_cnt;                /* <= SMCR_LLC_GIDS_MAX */
	uint8_t gid[SMCR_LLC_GIDS_MAX][SMCR_GID_SIZE];
};

struct smcr_llc_rtoken {
	uint8_t link_id;                /* rt[0]: how many of rt[1..2] are meant */
	uint32_t rmb_key;
	uint64_t rmb_vaddr;
};

struct smcr_llc_confirm_rkey {  /* 0x06, 0x26 */
	struct smcr_llc_rtoken rt[SMCR_LLC_RKEYS_PER_MSG];
};

struct smcr_llc_confirm_rkey_cont { /* 0x08 */
	uint8_t num_rkeys;
	struct smcr_llc_rtoken rt[SMCR_LLC_RKEYS_PER_MSG];
};

struct smcr_llc_test_link {     /* 0x07, 0x27 */
	uint8_t user_data[16];
};

struct smcr_llc_delete_rkey {   /* 0x09, 0x29 */
	uint8_t num_rkeys;              /* v1: up to 8 of rkey[] are meant */
	uint8_t err_mask;               /* v1 response: bit 7 - i for rkey[i]; v2: invalid count */
	/*
	 * v1: always 8 slots.  v2: num_rkeys of them, at most 9 in 44 bytes,
	 * up to 255 in a longer message.
	 */
	uint32_t rkey[SMCR_LLC_RKEYS_V2_MAX];
};

struct smcr_llc_msg {
	struct smcr_llc_hdr hd;         /* hd.type selects the member */
	union {
		struct smcr_llc_confirm_link confirm_link;
		struct smcr_llc_add_link add_link;
		struct smcr_llc_add_link_cont add_link_cont;
		struct smcr_llc_delete_link delete_link;
		struct smcr_llc_req_add_link req_add_link;
		struct smcr_llc_confirm_rkey confirm_rkey;
		struct smcr_llc_confirm_rkey_cont confirm_rkey_cont;
		struct smcr_llc_test_link test_link;
		struct smcr_llc_delete_rkey delete_rkey;
	};
};

/*
 * Decode one received message of len bytes; ho: the byte order of the
 * peer's CPU-order fields (only read for v2).  0, -EMSGSIZE or -EPROTO (see
 * above).  m is fully written on success, the union member of hd.type zeroed
 * first.
 */
int smcr_llc_decode(const uint8_t *buf, size_t len, enum smcr_llc_ho ho, struct smcr_llc_msg *m);
/*
 * Encode m into buf of size bytes: the message's bytes (44 for v1; for v2
 * 44 or what its variable part needs), reserved ones zero; returns how many.
 * The length field: 44 for v1; for v2 m->hd.length (44..8192, as Linux does
 * not always count the variable part), or when it is 0 the bytes written.
 * -EMSGSIZE if size is too small, -EINVAL for a field or count that has no
 * encoding.
 */
int smcr_llc_encode(const struct smcr_llc_msg *m, enum smcr_llc_ho ho, uint8_t *buf, size_t size);
/*
 * The byte order of a Linux peer, from a v2 message whose length is 44 (the
 * first one of a link group is a CONFIRM_LINK): SMCR_LLC_HO_LE or _BE, or
 * -EPROTO if buf is not such a message.
 */
int smcr_llc_v2_peer_ho(const uint8_t *buf, size_t len);

#endif
