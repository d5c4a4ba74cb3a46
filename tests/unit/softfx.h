/*
 * The soft backend's request core under test: a state with the soft ISM and
 * one soft RoCE device on lo, callers in and out of the initial namespace,
 * requests written byte by byte as the tools send them, and expected replies
 * written byte by byte as the kernel lays them out.
 */
#ifndef SOFTFX_H
#define SOFTFX_H

#include <stdbool.h>
#include <stdint.h>

#include "unit.h"
#include "msgbuild.h"
#include "soft/nl/soft_nl.h"
#include "soft/base/state.h"

#define SFX_PID     0x4242           /* port id of the test's requests */
#define SFX_OTHERNS 0x7ffffff0ULL    /* a network namespace that is not the initial one */

struct sfx {
	struct soft_state st;
	struct soft_out out;
	struct soft_peer admin;          /* initial namespace, CAP_NET_ADMIN */
	struct soft_peer user;           /* initial namespace, unprivileged */
	struct soft_peer other;          /* another namespace, CAP_NET_ADMIN */
	struct soft_peer other_user;     /* another namespace, unprivileged */
};

/* Devices: soft-ism, and sr_test on lo (ifindex 1) when roce is true. */
void sfx_init(struct sfx *f, bool roce);
void sfx_free(struct sfx *f);

/* A tool's request: NLM_F_REQUEST|NLM_F_ACK|flags, seq, port id SFX_PID, genl cmd v1. */
void sfx_req(struct mb *m, uint16_t family, uint8_t cmd, uint16_t flags, uint32_t seq);
/* Set nlmsg_len and hand the request to soft_handle() as peer p (out emptied first). */
void sfx_send(struct sfx *f, const struct soft_peer *p, struct mb *m);
/* Send a request without attributes: the error code of the one-message reply. */
int sfx_simple(struct sfx *f, const struct soft_peer *p, uint16_t family, uint8_t cmd,
	       uint16_t flags);

/* Expected reply messages, appended to e. */
void sfx_exp_genl(struct mb *m, uint16_t family, uint8_t cmd, uint16_t flags, uint32_t seq);
void sfx_exp_done(struct smc_reply *e, uint32_t seq);           /* 20 bytes, payload 0 */
void sfx_exp_ack(struct smc_reply *e, const struct mb *req, int error, const char *text);

/* The reply is exactly e; on a mismatch the first differing offset and both dumps. */
bool sfx_same(const char *file, int line, const struct sfx *f, const struct smc_reply *e);
#define CHECK_REPLY(f, e) sfx_same(__FILE__, __LINE__, (f), (e))

/* The reply is a single NLMSG_ERROR: its error (1 when it is something else). */
int sfx_error(const struct sfx *f);
/* Number of messages in the reply, and the n-th (0-based) one. */
int sfx_count(const struct sfx *f);
const struct nlmsghdr *sfx_msg(const struct sfx *f, int n);

#endif
