/*
 * The netlink transport shared by every tool: an AF_NETLINK socket to the
 * kernel or a SOCK_SEQPACKET UNIX socket to the soft backend (smc_softd),
 * carrying the same message bytes.  Nothing outside lib/ opens one.
 */
#ifndef SMC_NL_H
#define SMC_NL_H

#include <stddef.h>
#include <stdint.h>
#include <linux/netlink.h>

#include "soft_socket.h"

enum smc_backend { SMC_BACKEND_KERNEL = 1, SMC_BACKEND_SOFT = 2 };

/* Why smc_nl_open() failed (returned as the negative value). */
enum smc_open_error {
	SMC_OPEN_NO_BACKEND = 1, /* auto: no kernel SMC and no soft backend */
	SMC_OPEN_NO_KERNEL,      /* SMC_BACKEND=kernel but the kernel has no SMC */
	SMC_OPEN_NO_SOFT,        /* SMC_BACKEND=soft but the daemon does not answer */
	SMC_OPEN_UNTRUSTED,      /* the daemon runs as neither root nor the caller */
	SMC_OPEN_BAD_ENV,        /* SMC_BACKEND has an unknown value */
	SMC_OPEN_SOCKET,         /* socket()/bind() on the chosen backend failed */
};

/* What a kernel's module tree (/lib/modules/RELEASE) says of SMC. */
enum smc_kmod {
	SMC_KMOD_UNKNOWN,        /* no modules.dep or modules.builtin to read */
	SMC_KMOD_ABSENT,         /* neither names smc.ko: the kernel has no SMC */
	SMC_KMOD_PRESENT,        /* smc.ko is built in or a module */
};
enum smc_kmod smc_kernel_module_state(const char *moddir);
/* Why a kernel of module tree MODDIR offers no AF_SMC, for the tools' messages. */
void smc_kernel_no_smc_text(const char *moddir, const char *release, char *buf, size_t len);

struct smc_nl {
	int fd;
	int protocol;            /* NETLINK_GENERIC or NETLINK_SOCK_DIAG */
	enum smc_backend backend;
	uint32_t seq;
	int open_errno;          /* errno behind a failed open, for the message */
	char soft_path[108];
};

/* The messages of one reply, back to back, without NLMSG_DONE and acks. */
struct smc_reply {
	unsigned char *buf;
	size_t len;
	size_t cap;
};

/* An error reported by the other side in NLMSG_ERROR. */
struct smc_nlerr {
	int error;               /* positive errno, 0 for none */
	char msg[256];           /* extended ack text, "" when none was sent */
};

/* Which backend the environment asks for or detects; 0 on success. */
int smc_backend_choose(enum smc_backend *out, int *soft_errno);
const char *smc_soft_socket_path(void);

int smc_nl_open(struct smc_nl *nl, int protocol);
/* Open the given backend without choosing (tests, and tools that know). */
int smc_nl_open_backend(struct smc_nl *nl, int protocol, enum smc_backend backend);
void smc_nl_close(struct smc_nl *nl);
/* One line (no newline) describing a failed open, for "<tool>: <line>". */
void smc_nl_open_strerror(const struct smc_nl *nl, int rc, char *buf, size_t len);

/*
 * Send one request (its nlmsg_seq is set here) and collect the reply.  A dump
 * ends with NLMSG_DONE, anything else with its ack.  Returns 0, the negative
 * errno of an NLMSG_ERROR (details in *err), or a negative errno of the
 * transport.  A dump that the other side reports as interrupted or overran
 * the receive buffer is asked again, up to three times.
 */
int smc_nl_transact(struct smc_nl *nl, struct nlmsghdr *req,
		    struct smc_reply *rep, struct smc_nlerr *err);

void smc_reply_init(struct smc_reply *rep);
void smc_reply_free(struct smc_reply *rep);
/* Append raw netlink messages; validates the framing. 0 or -EBADMSG. */
int smc_reply_append(struct smc_reply *rep, const void *data, size_t len);

/* The first message of a reply (prev NULL) or the one after prev; NULL at the end. */
struct nlmsghdr *smc_reply_next(const struct smc_reply *rep, const struct nlmsghdr *prev);

#endif
