/*
 * What the soft backend's registration and diag tests share: a daemon state
 * fed requests through soft_handle() (the same entry the server uses), real
 * TCP sockets to register, and the dump as smcss would print it.
 */
#ifndef REGFX_H
#define REGFX_H

#include <stdbool.h>
#include <stdint.h>

#include "msgbuild.h"
#include "soft/nl/soft_nl.h"
#include "soft/base/state.h"
#include "soft/registry/sock.h"
#include "wire/reg.h"
#include "smcss_print.h"

struct regfx {
	struct soft_state st;
	struct soft_peer peer;           /* conn_id 1, this process's netns, no CAP_NET_ADMIN */
	struct soft_out out;             /* replies of the last request */
	struct smc_reply rep;            /* the socket messages of the last dump */
	uint32_t seq;
};

void regfx_init(struct regfx *f);
void regfx_free(struct regfx *f);

/* Run request m (length and seq set here) as p; fd (or -1) is consumed. */
void regfx_run(struct regfx *f, const struct soft_peer *p, struct mb *m, int fd);
/* The error of the NLMSG_ERROR among the replies (0: ack), 1 when there is none. */
int regfx_error(const struct regfx *f);
/* The first reply of that type, NULL if none. */
const struct nlmsghdr *regfx_find(const struct regfx *f, uint16_t type);
/* Number of reply messages. */
int regfx_count(const struct regfx *f);

/* An SMC_SOFT request: cmd, then attributes with mb_*. */
void regfx_req(struct mb *m, uint8_t cmd, uint16_t flags);

/*
 * SOCK_ADD of a copy of fd (fd < 0: none): 0 and *token, or the -errno the
 * daemon answered.  SOCK_STATE (fd copied likewise) and SOCK_DEL as acked.
 */
int regfx_add(struct regfx *f, const struct soft_peer *p, int fd, uint8_t state,
	      uint64_t *token);
int regfx_state(struct regfx *f, const struct soft_peer *p, uint64_t token,
		uint8_t state, int fd);
int regfx_del(struct regfx *f, const struct soft_peer *p, uint64_t token);

/* A diag dump as p with ext: socket messages into f->rep; 0, or the error. */
int regfx_dump(struct regfx *f, const struct soft_peer *p, uint8_t ext);
/* What smcss prints for f->rep with o (malloc'ed; the caller frees). */
char *regfx_smcss(const struct regfx *f, const struct smcss_opts *o);

/* Loopback TCP sockets of family AF_INET or AF_INET6. */
struct regfx_tcp {
	int lst, cli, srv;               /* listener, client end, accepted end (-1: none) */
	uint16_t lport, cport;           /* the listener's port, the client's port */
};
/* A listener on the loopback address, port chosen by the kernel. */
int regfx_listener(int family, uint16_t *port);
/* Listener, connected client and accepted socket. */
void regfx_tcp_open(struct regfx_tcp *t, int family);
void regfx_tcp_close(struct regfx_tcp *t);
uint64_t regfx_inode(int fd);
uint64_t regfx_cookie(int fd);
/* The key of the socket's network namespace, as the daemon files it. */
uint64_t regfx_netns(int fd);
/* A TCP socket made by a child process after prep() succeeded, or -1. */
int regfx_child_socket(int (*prep)(void));

#endif
