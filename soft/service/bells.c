/*
 * BELL (reg.h): the doorbell of each preloaded process, an eventfd its poll
 * and epoll waits watch beside its TCP sockets (doc/soft-ring.md section 4).
 * A process sets its own and learns the id it writes into its rings'
 * sleeper flags; a peer that reads such an id asks for that bell, and gets a
 * duplicate when it could pair with the bell's process.
 */
#include "service.h"
#include "reg.h"
#include "dmb.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <libmnl/libmnl.h>

struct soft_bell {
	struct soft_bell *next;
	uint64_t conn_id;
	uint64_t netns;
	uid_t uid;
	uint32_t id;
	uint8_t slot;              /* one of the process's waiting threads' */
	int fd;
};

static bool is_eventfd(int fd)
{
	char path[64], target[32];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = '\0';
	return strcmp(target, "anon_inode:[eventfd]") == 0;
}

/* slot < 0: any of the connection's bells */
static struct soft_bell **find_conn(struct soft_state *st, uint64_t conn_id, int slot)
{
	for (struct soft_bell **pp = &st->bells; *pp; pp = &(*pp)->next)
		if ((*pp)->conn_id == conn_id && (slot < 0 || (*pp)->slot == slot))
			return pp;
	return NULL;
}

static void drop_conn(struct soft_state *st, uint64_t conn_id, int slot)
{
	struct soft_bell **pp, *b;

	while ((pp = find_conn(st, conn_id, slot))) {
		b = *pp;
		*pp = b->next;
		close(b->fd);
		free(b);
	}
}

static struct soft_bell *find_id(struct soft_state *st, uint32_t id)
{
	for (struct soft_bell *b = st->bells; b; b = b->next)
		if (b->id == id)
			return b;
	return NULL;
}

static uint32_t new_id(struct soft_state *st)
{
	/* a daemon's ids differ from its predecessor's (not that it matters:
	 * a process that lost the daemon rings over TCP from then on) */
	if (!st->next_bell_id && getrandom(&st->next_bell_id, sizeof(st->next_bell_id), 0) < 0)
		st->next_bell_id = (uint32_t)time(NULL);
	do {
		if (++st->next_bell_id < DMB_BELL_TCP + 1)
			st->next_bell_id = DMB_BELL_TCP + 1;
	} while (find_id(st, st->next_bell_id));
	return st->next_bell_id;
}

static int reply(struct soft_req *r, uint32_t id, int fd)
{
	struct nlmsghdr *nlh = soft_genl_msg(r->out, r->nlh, SOFT_ID_SOFT, SMC_SOFT_CMD_BELL, 0);
	int dup = -1;

	if (!nlh)
		return -ENOMEM;
	mnl_attr_put_u32(nlh, SMC_SOFT_A_BELL_ID, id);
	if (fd >= 0) {
		dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (dup < 0)
			return -errno;
	}
	soft_msg_end(r->out, nlh);
	if (dup >= 0 && soft_msg_fd(r->out, nlh, dup))
		return -ENOMEM;
	return r->out->failed ? -ENOMEM : 0;
}

static int set_bell(struct soft_req *r, int fd, const struct nlattr *slot_attr)
{
	unsigned slot = 0;
	struct soft_bell *b;

	if (slot_attr && mnl_attr_get_payload_len(slot_attr) == sizeof(uint8_t))
		slot = mnl_attr_get_u8(slot_attr);
	else if (slot_attr)
		slot = SOFT_BELL_SLOTS;
	if (slot >= SOFT_BELL_SLOTS || !is_eventfd(fd)) {
		r->ext_ack = slot >= SOFT_BELL_SLOTS ? "BELL_SLOT (u8) below 8" : "not an eventfd";
		close(fd);
		return -EINVAL;
	}
	/* slot 0 is an image's first (after execve too): the older ones go */
	drop_conn(r->st, r->peer->conn_id, slot ? (int)slot : -1);
	b = calloc(1, sizeof(*b));
	if (!b) {
		close(fd);
		return -ENOMEM;
	}
	b->conn_id = r->peer->conn_id;
	b->slot = (uint8_t)slot;
	b->next = r->st->bells;
	r->st->bells = b;
	b->fd = fd;
	b->netns = r->peer->netns;
	b->uid = r->peer->uid;
	b->id = new_id(r->st);
	return reply(r, b->id, -1);
}

static int get_bell(struct soft_req *r, const struct nlattr *a)
{
	struct soft_bell *b;

	if (!a || mnl_attr_get_payload_len(a) != sizeof(uint32_t)) {
		r->ext_ack = "BELL_ID (u32) or an eventfd required";
		return -EINVAL;
	}
	b = find_id(r->st, mnl_attr_get_u32(a));
	/* whom the caller could pair with (pair.c's may_pair) */
	if (!b || (b->netns != r->peer->netns && b->uid != r->peer->uid))
		return -ENOENT;
	return reply(r, b->id, b->fd);
}

int soft_bell(struct soft_req *r)
{
	const struct nlattr *tb[SMC_SOFT_A_MAX + 1];
	int fd = r->fd;

	r->fd = -1;
	if (soft_genl_attrs(r, tb, SMC_SOFT_A_MAX)) {
		if (fd >= 0)
			close(fd);
		return -EINVAL;
	}
	if (fd >= 0)
		return set_bell(r, fd, tb[SMC_SOFT_A_BELL_SLOT]);
	return get_bell(r, tb[SMC_SOFT_A_BELL_ID]);
}

void soft_bells_conn_gone(struct soft_state *st, uint64_t conn_id)
{
	drop_conn(st, conn_id, -1);
}

void soft_bells_free(struct soft_state *st)
{
	while (st->bells)
		soft_bells_conn_gone(st, st->bells->conn_id);
}
