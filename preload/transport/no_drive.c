/* For transports whose sleepers have no completions of their own to take (transport.h, drive_begin). */
#include "transport.h"

bool tp_no_drive_begin(struct transport *t, bool rx, uint32_t bell, struct tp_drive *d)
{
	(void)t;
	(void)rx;
	(void)bell;
	d->fd = -1;
	return false;
}

void tp_no_drive_take(struct transport *t, const struct tp_drive *d, bool woken)
{
	(void)t;
	(void)d;
	(void)woken;
}

void tp_no_drive_end(struct transport *t, const struct tp_drive *d)
{
	(void)t;
	(void)d;
}
