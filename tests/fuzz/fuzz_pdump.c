/*
 * Fuzz target for the daemon's drain of a process's dump ring
 * (soft/pdump_drain.c): the bytes are what a hostile process could leave in
 * the ring of its stats memfd.  Every slot must be refused or turned into a
 * record within bounds, and the drain must always end.
 *
 * Byte 0: bit 0 marks every slot the input reaches as published (seq =
 * index + 1), which reaches the record checks far more often than raw
 * bytes do; bit 1 gives those slots the token of the one registration
 * when their own token's low byte is even; bit 2 asks for v1 headers; bits
 * 3-4 pick the session's CDC and DATA types; bit 5 makes the registration
 * IPv6; bit 6 makes the process a soft SMC-R user (a link group of key
 * TOKEN, a host RDMA device with the GID ::ffff:127.0.0.1) and asks for
 * LLC records too.  Bytes 1-16: the ring's prod and drops.  The rest
 * overlays the slots from slot 0 on.
 */
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "soft/capture/dump.h"
#include "soft/capture/pdump.h"
#include "soft/fabric/devices.h"
#include "soft/fabric/lgr.h"
#include "wire/pstats.h"
#include "soft/registry/regidx.h"
#include "soft/base/state.h"
#include "soft/runtime/teardown.h"

void fuzz_pdump(const uint8_t *data, size_t size);

#define NETNS 0x1234
#define TOKEN 77

static struct soft_sock *registration(struct soft_state *st, bool v6)
{
	struct soft_ns *ns = soft_ns_get(st, NETNS);
	struct soft_sock *s = calloc(1, sizeof(*s));

	if (!ns || !s) {
		free(s);
		return NULL;
	}
	s->token = TOKEN;
	s->conn_id = 1;
	s->id.family = v6 ? AF_INET6 : AF_INET;
	s->id.src[0] = 127;
	s->id.dst[0] = 127;
	s->id.src[15] = 1;
	s->id.sport = 5201;
	s->id.dport = 40000;
	s->id.netns = NETNS;
	if (soft_idx_add(st, s)) {
		free(s);
		return NULL;
	}
	s->next = ns->socks;
	s->pprev = &ns->socks;
	if (ns->socks)
		ns->socks->pprev = &s->next;
	ns->socks = s;
	return s;
}

static struct soft_pstats_att *attach(struct soft_state *st)
{
	struct soft_pstats_att *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->map = mmap(NULL, SOFT_PSTATS_MAP_LEN, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (a->map == MAP_FAILED) {
		free(a);
		return NULL;
	}
	a->conn_id = 2;
	a->netns = NETNS;
	a->pid = 1;
	a->next = st->pstats;
	st->pstats = a;
	return a;
}

/* A soft SMC-R process: its link group, and an RDMA port of the host's with a GID. */
static bool smcr_user(struct soft_state *st)
{
	struct soft_lgr *g = soft_lgr_new(st, false);
	struct soft_dev *d = calloc(1, sizeof(*d));

	if (!g || !d) {
		free(d);
		return false;
	}
	g->owner = 2;
	g->key = TOKEN;
	d->kind = SOFT_DEV_ROCE;
	d->host = d->present = true;
	d->n_ports = 1;
	d->gid_v2[0][10] = d->gid_v2[0][11] = 0xff;
	d->gid_v2[0][12] = 127;
	d->gid_v2[0][15] = 1;
	d->gid_v1_index[0] = -1;
	d->next = st->devs;
	st->devs = d;
	return true;
}

static void overlay(void *map, uint8_t mode, const uint8_t *data, size_t size)
{
	struct soft_pdump_ring *r = soft_pdump_ring_of(map);
	uint8_t *slots = (uint8_t *)soft_pdump_slot_of(map, 0);
	size_t max = (size_t)SOFT_PDUMP_SLOTS * SOFT_PDUMP_SLOT_LEN;
	uint64_t v;

	if (size < 16)
		return;
	memcpy(&v, data, sizeof(v));
	atomic_store(&r->prod, v);
	memcpy(&v, data + 8, sizeof(v));
	atomic_store(&r->drops, v);
	data += 16;
	size -= 16;
	if (size > max)
		size = max;
	memcpy(slots, data, size);
	for (uint64_t i = 0; i * SOFT_PDUMP_SLOT_LEN < size; i++) {
		struct soft_pdump_slot *s = soft_pdump_slot_of(map, i);

		if ((mode & 2) && !(s->token & 1))
			s->token = TOKEN;
		if (mode & 1)
			atomic_store(&s->seq, i + 1);
	}
}

void fuzz_pdump(const uint8_t *data, size_t size)
{
	struct soft_state st;
	struct soft_pstats_att *a;
	uint8_t mode;
	int fd;

	if (size < 1)
		return;
	mode = data[0];
	soft_state_init(&st);
	if (!registration(&st, mode & 32) || !(a = attach(&st)) ||
	    ((mode & 64) && !smcr_user(&st)) ||
	    (fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0 ||
	    soft_dump_session_add(&st, 3, NETNS, fd, 1,
				  (uint8_t)(SOFT_DUMP_MODE_SMCD | ((mode & 64) ? SOFT_DUMP_MODE_SMCR : 0)),
				  (uint8_t)(SOFT_DUMP_TYPE_CLC | ((mode >> 2) & 6) |
					    ((mode & 64) ? SOFT_DUMP_TYPE_LLC : 0)), mode & 4)) {
		soft_state_free(&st);
		return;
	}
	soft_pdump_attached(&st, a);
	overlay(a->map, mode, data + 1, size - 1);
	soft_pdump_tick(&st, 1000);
	soft_pdump_tick(&st, 1000 + SOFT_PDUMP_STALL_NS);
	soft_pdump_tick(&st, 1000 + 3 * SOFT_PDUMP_STALL_NS);
	soft_dump_conn_gone(&st, 3);
	soft_state_free(&st);
}
