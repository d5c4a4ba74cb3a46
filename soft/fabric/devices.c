/* The device list: lookups the PNET table, netlink and the data path use. */
#include "devices.h"
#include "lgr.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

void soft_dev_append(struct soft_state *st, struct soft_dev *d)
{
	struct soft_dev **pp = &st->devs;

	while (*pp)
		pp = &(*pp)->next;
	d->next = NULL;
	*pp = d;
}

struct soft_dev *soft_dev_ism(const struct soft_state *st)
{
	struct soft_dev *d;

	for (d = st->devs; d; d = d->next)
		if (d->kind == SOFT_DEV_ISM)
			return d;
	return NULL;
}

bool soft_ism_v2_capable(const struct soft_state *st)
{
	return soft_dev_ism(st) != NULL;
}

bool soft_dev_roce_usable(const struct soft_dev *d)
{
	return d->kind == SOFT_DEV_ROCE && (!d->host || d->present);
}

struct soft_dev *soft_dev_find_roce(const struct soft_state *st, const char *name)
{
	struct soft_dev *d;

	/* strncmp over the kernel's 64-byte device name (smc_pnet_find_ib) */
	for (d = st->devs; d; d = d->next)
		if (soft_dev_roce_usable(d) && !strncmp(d->name, name, SOFT_IBNAME_MAX))
			return d;
	return NULL;
}

bool soft_dev_roce_has_gid(const struct soft_state *st, const uint8_t gid[SOFT_GID_SIZE])
{
	for (const struct soft_dev *d = st->devs; d; d = d->next)
		for (int p = 0; d->host && soft_dev_roce_usable(d) && p < d->n_ports; p++)
			if ((d->gid_v2_index[p] >= 0 && !memcmp(d->gid_v2[p], gid, SOFT_GID_SIZE)) ||
			    (d->gid_v1_index[p] >= 0 && !memcmp(d->gid_v1[p], gid, SOFT_GID_SIZE)))
				return true;
	return false;
}

struct soft_dev *soft_dev_find_ism(const struct soft_state *st, const char *name)
{
	struct soft_dev *d;

	/* device name or parent name, IB_DEVICE_NAME_MAX - 1 bytes (smc_pnet_find_smcd) */
	for (d = st->devs; d; d = d->next)
		if (d->kind == SOFT_DEV_ISM &&
		    (!strncmp(d->name, name, SOFT_IBNAME_MAX - 1) ||
		     !strncmp(d->pci_id, name, SOFT_IBNAME_MAX - 1)))
			return d;
	return NULL;
}

struct soft_dev *soft_dev_roce_by_ifindex(const struct soft_state *st, unsigned int ifindex,
					  int *port)
{
	struct soft_dev *d;

	for (d = st->devs; d; d = d->next) {
		if (!soft_dev_roce_usable(d))
			continue;
		for (int i = 0; i < d->n_ports; i++) {
			if (ifindex && d->ifindex[i] == ifindex) {
				if (port)
					*port = i + 1;
				return d;
			}
		}
	}
	return NULL;
}

uint8_t soft_dev_port_active(const struct soft_dev *d, int port)
{
	struct ifreq ifr;
	int fd, rc;

	if (port < 1 || port > d->n_ports || !soft_dev_roce_usable(d))
		return 0;
	if (d->host)
		return d->port_state[port - 1] == SOFT_IB_PORT_ACTIVE;
	if (!d->ifindex[port - 1])
		return 0;
	memset(&ifr, 0, sizeof(ifr));
	/* by index: the interface may have been renamed since */
	if (!if_indextoname(d->ifindex[port - 1], ifr.ifr_name))
		return 0;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	rc = ioctl(fd, SIOCGIFFLAGS, &ifr);
	close(fd);
	return rc == 0 && (ifr.ifr_flags & IFF_UP) ? 1 : 0;
}

bool soft_pnetid_is_set(const char *pnetid)
{
	return pnetid[0] != '\0' && pnetid[0] != ' ';
}

void soft_devs_free(struct soft_state *st)
{
	struct soft_dev *d, *next;

	soft_lgrs_free(st);
	for (d = st->devs; d; d = next) {
		next = d->next;
		free(d);
	}
	st->devs = NULL;
}
