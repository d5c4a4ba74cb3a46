/*
 * Fuzz target for the control port (soft/service/peer_ask.c, clc_relay.c):
 * two datagrams from the peer host's address (the input: a big-endian u16,
 * the first's length in its low 14 bits, then the two), given to a daemon
 * with one end asking (the server's of 10.99.0.2:80 <-> 10.99.0.1:40000,
 * or the client's with the u16's top bit, able to negotiate, its nonce
 * FUZZ_NONCE); between them, when the first made the ends negotiate, the
 * end's message goes out (and, with the u16's next bit, its 2 s pass
 * unkept); then its timers run out.
 * Whatever the daemon sends back must decode.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "soft/fabric/devices.h"
#include "soft/fabric/peer_msg.h"
#include "soft/registry/regidx.h"
#include "soft/runtime/teardown.h"
#include "soft/service/service.h"

void fuzz_peer(const uint8_t *data, size_t size);

#define FUZZ_NONCE 0x0102030405060708ull

static int check_sent(void *ctx, const uint8_t *msg, size_t len, int family, const uint8_t from[16],
		      const uint8_t to[16], uint16_t port, uint32_t ifindex)
{
	struct soft_peer_msg m;

	(void)ctx, (void)family, (void)from, (void)to, (void)port, (void)ifindex;
	if (soft_peer_msg_decode(msg, len, &m))
		abort();
	return 0;
}

static char sysfs[] = "/tmp/smc-fuzz-peer.XXXXXX";

static void sysfs_gone(void)
{
	static const char *const paths[] = {
		"class/infiniband/rxe0", "class/infiniband", "class",
		"devices/virtual/infiniband/rxe0/ports/1/gid_attrs/ndevs/0",
		"devices/virtual/infiniband/rxe0/ports/1/gid_attrs/ndevs",
		"devices/virtual/infiniband/rxe0/ports/1/gid_attrs",
		"devices/virtual/infiniband/rxe0/ports/1/state", "devices/virtual/infiniband/rxe0/ports/1",
		"devices/virtual/infiniband/rxe0/ports", "devices/virtual/infiniband/rxe0/node_type",
		"devices/virtual/infiniband/rxe0", "devices/virtual/infiniband", "devices/virtual",
		"devices", "",
	};
	char path[256];

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", sysfs, paths[i]);
		remove(path);
	}
}

/* rxe0 on lo, once: the end below has an SMC-R device and asks. */
static const char *sysfs_once(void)
{
	static const char *const dirs[] = {
		"devices", "devices/virtual", "devices/virtual/infiniband",
		"devices/virtual/infiniband/rxe0", "devices/virtual/infiniband/rxe0/ports",
		"devices/virtual/infiniband/rxe0/ports/1",
		"devices/virtual/infiniband/rxe0/ports/1/gid_attrs",
		"devices/virtual/infiniband/rxe0/ports/1/gid_attrs/ndevs", "class", "class/infiniband",
	};
	static const char *const files[][2] = {
		{ "devices/virtual/infiniband/rxe0/node_type", "1: CA\n" },
		{ "devices/virtual/infiniband/rxe0/ports/1/state", "4: ACTIVE\n" },
		{ "devices/virtual/infiniband/rxe0/ports/1/gid_attrs/ndevs/0", "lo\n" },
	};
	char path[256];
	FILE *f;

	if (sysfs[sizeof(sysfs) - 2] != 'X')
		return sysfs;
	if (!mkdtemp(sysfs))
		return NULL;
	atexit(sysfs_gone);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", sysfs, dirs[i]);
		mkdir(path, 0755);
	}
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", sysfs, files[i][0]);
		if ((f = fopen(path, "w"))) {
			fputs(files[i][1], f);
			fclose(f);
		}
	}
	snprintf(path, sizeof(path), "%s/class/infiniband/rxe0", sysfs);
	if (symlink("../../devices/virtual/infiniband/rxe0", path))
		return NULL;
	return sysfs;
}

void fuzz_peer(const uint8_t *data, size_t size)
{
	char err[256];
	uint8_t from[16] = { 10, 99, 0, 1 };
	struct soft_state st;
	struct soft_sock *s;
	size_t first;
	uint8_t role, late;

	if (size < 2)
		return;
	/* the first byte's top bit: the client's end, not the server's; the next: our message given up on */
	role = data[0] & 0x80 ? 0 : 1;
	late = data[0] >> 6 & 1;
	first = (size_t)(data[0] & 0x3f) << 8 | data[1];
	data += 2;
	size -= 2;
	if (first > size)
		first = size;
	soft_state_init(&st);
	st.sysfs = sysfs_once();
	if (soft_devs_init(&st, NULL, 0, err, sizeof(err)) < 0) {
		soft_state_free(&st);
		return;
	}
	st.peer_send = check_sent;
	s = calloc(1, sizeof(*s));
	if (!s)
		return;
	s->id.family = AF_INET;
	memcpy(s->id.src, (uint8_t[]){ 10, 99, 0, 2 }, 4);
	memcpy(s->id.dst, from, 4);
	s->id.sport = 80;
	s->id.dport = 40000;
	s->id.netns = st.init_netns;
	s->token = 1;
	s->role = role;
	if (!soft_idx_add(&st, s) && !soft_idx_tuple_add(&st, s) &&
	    !soft_peer_ask_begin(&st, NULL, s, 0, "lo", 0)) {
		size_t len = 0;

		s->ask.nonce = FUZZ_NONCE;
		soft_peer_input(&st, data, first, AF_INET, from, SOFT_PEER_PORT, 1);
		/* the ends negotiate: our message goes out (the daemon does not read its bytes) */
		soft_clc_give(&st, s, "ACCEPT", 6, 0, 2);
		if (late)
			soft_peer_tick(&st, 2003);
		soft_peer_input(&st, data + first, size - first, AF_INET, from, SOFT_PEER_PORT, 3);
		if (soft_clc_peer_msg(s, 1, &len) && (!len || len > SOFT_PEER_CLC_MAX))
			abort();
		soft_peer_tick(&st, 10000);
	}
	soft_reg_drop(&st, s);
	soft_state_free(&st);
}
