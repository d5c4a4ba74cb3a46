/* Generic netlink over the shared transport, with libnl-genl message buffers. */
#ifndef SMC_GENL_H
#define SMC_GENL_H

#include <stdbool.h>
#include <stdint.h>
#include <netlink/msg.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>

#include "nl.h"

struct smc_genl {
	struct smc_nl nl;
	uint16_t family;
	uint8_t version;
	struct smc_nlerr err;        /* details of the last failed request */
	/*
	 * Opens the session on its first request, so that a tool validates
	 * its input before it talks to a backend; returns 0 or -errno.
	 */
	int (*open_hook)(struct smc_genl *g);
};

/* Called for each reply message; return 0 to go on, > 0 to stop, < 0 to fail. */
typedef int (*smc_msg_cb)(const struct nlmsghdr *nlh, void *arg);

/* Resolve a family id through CTRL_CMD_GETFAMILY; 0, -ENOENT if unknown, or -errno. */
int smc_genl_resolve(struct smc_genl *g, const char *name, uint16_t *id);

/*
 * Open the transport and resolve the family.  Returns 0; a negative
 * smc_open_error code (see smc_nl_open_strerror) when no backend is usable;
 * or -ENOENT/-errno from resolving the family (*open_failed false).
 */
int smc_genl_open(struct smc_genl *g, const char *family, bool *open_failed);
void smc_genl_close(struct smc_genl *g);

/* A request message (NLM_F_REQUEST|NLM_F_ACK plus flags) for attributes to be added. */
struct nl_msg *smc_genl_msg(struct smc_genl *g, uint8_t cmd, int flags);

/*
 * Send msg (consumed), collect the whole reply, then hand each message to cb.
 * Returns 0, the callback's negative value, or -errno (kernel's or transport's).
 */
int smc_genl_request(struct smc_genl *g, struct nl_msg *msg, smc_msg_cb cb, void *arg);

/* Shorthands for a request without attributes. */
int smc_genl_dump(struct smc_genl *g, uint8_t cmd, smc_msg_cb cb, void *arg);
int smc_genl_do(struct smc_genl *g, uint8_t cmd);

/* Iterate the messages of a reply that is already in memory (tests, fuzzers). */
int smc_genl_walk(const struct smc_reply *rep, smc_msg_cb cb, void *arg);

/* Read an attribute that the kernel sends as u32 or u64 depending on the value. */
uint64_t smc_nla_get_uint(const struct nlattr *nla);

/* Copy a string attribute into buf (always terminated, cut to len-1 bytes). */
void smc_nla_strcpy(char *buf, size_t len, const struct nlattr *nla);

#endif
