/*
 * Link groups and links, host-wide as the kernel's smc_lgr_list and the ISM
 * device's lgr_list: what GET_LGR_SMCR, GET_LINK_SMCR and GET_LGR_SMCD show,
 * and what the device listings count (USE_CNT, LNK_CNT, IS_CRIT).  The data
 * path creates and fills them; nothing else does.
 */
#ifndef SOFT_LGR_H
#define SOFT_LGR_H

#include <stdbool.h>
#include <stdint.h>

#include "devices.h"

#define SOFT_LINKS_PER_LGR 3          /* SMC_LINKS_PER_LGR_MAX */
#define SOFT_HOSTNAME_LEN  32         /* SMC_MAX_HOSTNAME_LEN */

/* enum smc_link_state */
enum { SOFT_LNK_UNUSED, SOFT_LNK_INACTIVE, SOFT_LNK_ACTIVATING, SOFT_LNK_ACTIVE };
/* enum smc_lgr_type */
enum { SOFT_LGR_NONE, SOFT_LGR_SINGLE, SOFT_LGR_SYMMETRIC, SOFT_LGR_ASYMMETRIC_PEER,
       SOFT_LGR_ASYMMETRIC_LOCAL };
/* peer OS in CLC */
enum { SOFT_OS_ZOS = 1, SOFT_OS_LINUX = 2, SOFT_OS_AIX = 3 };

struct soft_link {
	uint8_t link_id;                 /* never 0 once added */
	uint32_t state;                  /* SOFT_LNK_* */
	uint32_t conn_cnt;
	struct soft_dev *dev;            /* soft RoCE device */
	uint8_t ib_port;                 /* 1..2 */
	uint32_t ndev_ifindex;           /* netdev of the port, 0 if unknown */
	uint8_t uid[4], peer_uid[4];     /* raw link user ids */
	uint8_t gid[SOFT_GID_SIZE], peer_gid[SOFT_GID_SIZE];
};

struct soft_lgr {
	struct soft_lgr *next;
	bool smcd;
	uint8_t id[4];                   /* raw, as the kernel keeps it */
	uint32_t conns;
	uint8_t vlan_id;
	uint64_t sndbuf_alloc, rmb_alloc;    /* bytes (DMBs for SMC-D) */
	/* SMCv2: version > 1 adds the V2_COMMON nest */
	uint8_t version;                 /* 1 or 2 */
	uint8_t peer_rel, peer_os;
	char peer_host[SOFT_HOSTNAME_LEN + 1];   /* blank-padded to 32 */
	char neg_eid[SOFT_EID_LEN + 1];          /* blank-padded to 32 */
	/* SMC-R */
	uint8_t role;                    /* 0 client, 1 server */
	uint8_t type;                    /* SOFT_LGR_* */
	uint8_t buf_type;                /* 0 physically contiguous */
	uint64_t net_cookie;
	char pnetid[SOFT_PNETID_LEN + 1];
	uint8_t direct, max_conns, max_links;    /* R_V2 nest */
	uint8_t next_link_id;
	struct soft_link lnk[SOFT_LINKS_PER_LGR];
	/* SMC-D: on the soft ISM; the PNET ID shown is the device's */
	struct soft_dev *dev;
	uint64_t peer_gid, peer_gid_ext;
	uint64_t netns[2];               /* the namespaces of its paired sockets (pair.c) */
	/* soft SMC-R: a process's group as it told it (service/lgr_report.c) */
	uint64_t owner;                  /* its control connection */
	uint32_t key;
};

/*
 * A new link group at the end of the list, with the kernel's id scheme
 * (multiples of 256 from one counter), version 2, and for SMC-D on the soft
 * ISM.  NULL when out of memory or before soft_devs_init.
 */
struct soft_lgr *soft_lgr_new(struct soft_state *st, bool smcd);
/* Unlink and free. */
void soft_lgr_del(struct soft_state *st, struct soft_lgr *lgr);
/* The list, in creation order (NULL when empty). */
struct soft_lgr *soft_lgr_first(const struct soft_state *st);
/* The soft SMC-R group a process's control connection owner told as key (lgr_report.c); NULL: none. */
struct soft_lgr *soft_lgr_of_owner(const struct soft_state *st, uint64_t owner, uint32_t key);
/* The lgr id as the kernel puts it into netlink (its raw bytes as a u32). */
uint32_t soft_lgr_id(const struct soft_lgr *lgr);

/*
 * Add a link on dev/port in the first free slot: link id as the kernel picks
 * it, link uid = big-endian (lgr id + link id), state ACTIVATING, the
 * port's ifindex.  NULL when all slots are taken.
 */
struct soft_link *soft_lgr_link_add(struct soft_lgr *lgr, struct soft_dev *dev, uint8_t port);
/* A link the listings show (ACTIVATING or ACTIVE), as smc_link_usable(). */
bool soft_link_usable(const struct soft_link *l);

/* SMC-D link groups on dev (the ISM's USE_CNT). */
uint32_t soft_lgr_count_on(const struct soft_state *st, const struct soft_dev *dev);
/* Links (not UNUSED) on dev/port (1-based): the port's LNK_CNT. */
uint32_t soft_lgr_links_on(const struct soft_state *st, const struct soft_dev *dev, int port);
/* A link of a SINGLE or ASYMMETRIC_LOCAL link group uses dev (IS_CRIT of SMC-R). */
bool soft_lgr_dev_critical(const struct soft_state *st, const struct soft_dev *dev);

/* smc_gid_be16_convert(): a GID as 8 groups of 4 lower-case hex digits, NUL-terminated. */
void soft_gid_text(char out[40], const uint8_t gid[SOFT_GID_SIZE]);

/* Free every link group (soft_devs_free calls it). */
void soft_lgrs_free(struct soft_state *st);

#endif
