/*
 * For transports whose ends never go back to TCP (transport.h, back_say):
 * the ring, whose holders share its memory, and another process's RDMA end.
 */
#include <errno.h>

#include "transport.h"

bool tp_no_back_offer(struct transport *t)
{
	(void)t;
	return false;
}

int tp_no_back_say(struct transport *t)
{
	(void)t;
	return -EOPNOTSUPP;
}

unsigned tp_no_back_state(struct transport *t)
{
	(void)t;
	return 0;
}

ssize_t tp_no_back_pending(struct transport *t, void *buf, size_t size)
{
	(void)t;
	(void)buf;
	(void)size;
	return -EAGAIN;
}

void tp_no_back_sent(struct transport *t, size_t n)
{
	(void)t;
	(void)n;
}
