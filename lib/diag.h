/* sock_diag for AF_SMC (libmnl on the shared transport). */
#ifndef SMC_DIAG_H
#define SMC_DIAG_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <linux/netlink.h>

#include "nl.h"
#include "smc_uapi.h"

#define SMC_DIAG_EXT(ext) (1u << ((ext) - 1))

struct smc_diag_cur {
	uint16_t wrap;
	uint32_t count;
};

struct smc_diag_conn {
	uint32_t token, sndbuf_size, rmbe_size, peer_rmbe_size;
	struct smc_diag_cur rx_prod, rx_cons, tx_prod, tx_cons;
	uint8_t rx_prod_flags, rx_conn_state_flags, tx_prod_flags, tx_conn_state_flags;
	struct smc_diag_cur tx_prep, tx_sent, tx_fin;
};

struct smc_diag_lgr {
	uint8_t link_id;
	char ibname[65];
	uint8_t ibport;
	char gid[41];
	char peer_gid[41];
	uint8_t role;
};

struct smc_diag_dmb {
	uint32_t linkid;
	uint64_t peer_gid, my_gid, token, peer_token;
	bool has_ext;
	uint64_t peer_gid_ext, my_gid_ext;
};

/* One socket of a diag reply, all in host order. */
struct smc_diag_sock {
	uint8_t family, state, mode;
	uint16_t sport, dport;
	uint8_t src[16], dst[16];
	uint32_t ifindex;
	uint64_t cookie;
	uint32_t uid;
	uint64_t inode;
	bool has_shutdown, has_fallback, has_conn, has_lgr, has_dmb;
	uint8_t shutdown;
	uint32_t fallback_reason, peer_diagnosis;
	struct smc_diag_conn conn;
	struct smc_diag_lgr lgr;
	struct smc_diag_dmb dmb;
};

/* Build the request (68 bytes) into buf of at least SMC_DIAG_REQ_BUF bytes. */
#define SMC_DIAG_REQ_BUF 128
struct nlmsghdr *smc_diag_build_req(void *buf, uint8_t ext_mask);

/* Parse one SOCK_DIAG_BY_FAMILY reply message; 0 or -EBADMSG. */
int smc_diag_parse(const struct nlmsghdr *nlh, struct smc_diag_sock *s);

typedef int (*smc_diag_cb)(const struct smc_diag_sock *s, void *arg);

/*
 * Dump all SMC sockets: each parsed socket goes to cb (return non-zero to
 * stop).  Returns 0, -errno (kernel's, with details in *err, or transport's),
 * or -EBADMSG for a malformed reply.
 */
int smc_diag_dump(struct smc_nl *nl, uint8_t ext_mask, smc_diag_cb cb, void *arg,
		  struct smc_nlerr *err);
/* The same over a reply already in memory (tests, fuzzers). */
int smc_diag_walk(const struct smc_reply *rep, smc_diag_cb cb, void *arg);

#endif
